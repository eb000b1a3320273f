/* SPDX-License-Identifier: Apache-2.0 */
/* test_dbdriver.c - rs_db as a tool reaches the store (rs_dbdriver.c):
 * read-only and as-is opens, tables, online backup, removal of a
 * database's files, a set's meta keys, the driver's last message. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_db.h"
#include "rs_inventory.h"
#include "rs_schema.h"

/* One text value of sql on a connection of SQLite's own (read-only). */
static const char *raw_text(const char *path, const char *sql)
{
    sqlite3 *c = NULL;
    sqlite3_stmt *st = NULL;
    const char *v = NULL;

    ck_assert_int_eq(sqlite3_open_v2(path, &c, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    ck_assert_msg(sqlite3_prepare_v2(c, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql,
                  sqlite3_errmsg(c));
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
        v = apr_pstrdup(ut_pool, (const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    sqlite3_close(c);
    return v;
}

static void raw_exec(const char *path, const char *sql)
{
    sqlite3 *c = NULL;
    char *err = NULL;
    ck_assert_int_eq(sqlite3_open(path, &c), SQLITE_OK);
    ck_assert_msg(sqlite3_exec(c, sql, NULL, NULL, &err) == SQLITE_OK, "%s: %s", sql,
                  err ? err : "?");
    sqlite3_close(c);
}

static rs_item_t item(const char *name, apr_int64_t size)
{
    rs_item_t it;
    memset(&it, 0, sizeof(it));
    it.dir = "";
    it.name = name;
    it.size = size;
    it.mtime_ns = 1000;
    it.listed = 1;
    return it;
}

/* A store of the module's (migrated) at a new path with one row of set a
 * and meta k = v, closed again. */
static const char *made_store(void)
{
    const char *path = ut_path(ut_tempdir("dbdrv"), "state.db");
    rs_item_t it = item("f", 3);
    apr_pool_t *p;
    rs_db_t *db;

    apr_pool_create(&p, ut_pool);
    ck_assert_int_eq(rs_schema_open(&db, p, ut_driver, ut_store(path), NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_put(db, "a", &it), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(db, "k", "v"), APR_SUCCESS);
    apr_pool_destroy(p);
    return path;
}

static rs_db_t *open_mode(apr_pool_t *p, const char *path, int mode)
{
    rs_db_t *db = NULL;
    const char *err = "unset";
    apr_status_t rv = rs_schema_open_ex(&db, p, ut_driver, ut_store(path), mode, NULL, &err);
    ck_assert_msg(rv == APR_SUCCESS, "open %s mode %d: %d %s", path, mode, rv, err ? err : "");
    ck_assert_ptr_null(err);
    return db;
}

/* A read-only connection reads everything and writes nothing: the
 * database file keeps its bytes. */
START_TEST(readonly_reads_and_writes_nothing)
{
    const char *path = made_store(), *v = NULL;
    apr_size_t len0, len1;
    const char *before = ut_read(path, &len0), *after;
    rs_item_t it = item("g", 4);
    apr_int64_t n = 0;
    apr_pool_t *p;
    rs_db_t *db;

    apr_pool_create(&p, ut_pool);
    db = open_mode(p, path, RS_DB_READONLY);
    ck_assert_int_eq(rs_db_schema_version(db), RS_SCHEMA_VERSION);
    ck_assert_str_eq(rs_db_last_error(db), "");
    ck_assert_int_eq(rs_inventory_count(db, "a", &n), APR_SUCCESS);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(rs_db_meta_get(db, p, "k", &v), APR_SUCCESS);
    ck_assert_str_eq(v, "v");
    ck_assert_int_ne(rs_db_meta_put(db, "k", "w"), APR_SUCCESS);
    ck_assert_int_ne(rs_inventory_put(db, "a", &it), APR_SUCCESS);
    ck_assert_ptr_nonnull(strstr(rs_db_last_error(db), "readonly"));
    apr_pool_destroy(p);
    after = ut_read(path, &len1);
    ck_assert_int_eq(len0, len1);
    ck_assert(memcmp(before, after, len0) == 0);
}
END_TEST

/* A store that is not there is not created by a read-only open. */
START_TEST(readonly_creates_no_store)
{
    const char *path = ut_path(ut_tempdir("dbdrv"), "state.db"), *err = NULL;
    rs_db_t *db = NULL;
    ut_log_t ul;

    ck_assert_int_ne(
        rs_schema_open_ex(&db, ut_pool, "sqlite3", path, RS_DB_READONLY, ut_log_init(&ul), &err),
        APR_SUCCESS);
    ck_assert_ptr_null(db);
    ck_assert_ptr_nonnull(err);
    ck_assert_int_eq(ut_log_count(&ul, "cannot open"), 1);
    ck_assert(!ut_exists(path));
}
END_TEST

/* A name that means something in a URI ('?', '#', '%') is the file's
 * name, not a query. */
START_TEST(readonly_odd_file_name)
{
    const char *dir = ut_tempdir("dbdrv"), *odd = ut_path(dir, "st?a#t%e 1.db");
    apr_int64_t n = 0;
    rs_db_t *db;

    ck_assert_int_eq(rename(made_store(), odd), 0);
    db = open_mode(ut_pool, odd, RS_DB_READONLY);
    ck_assert_int_eq(rs_inventory_count(db, "a", &n), APR_SUCCESS);
    ck_assert_int_eq(n, 1);
}
END_TEST

/* While the writer's transaction is open, a read-only connection reads
 * the last committed state without waiting; the commit shows next. */
START_TEST(readonly_beside_a_writer)
{
    const char *path = made_store();
    rs_item_t it = item("g", 4);
    apr_int64_t n = 0;
    rs_db_t *w = open_mode(ut_pool, path, RS_DB_MIGRATE);
    rs_db_t *r = open_mode(ut_pool, path, RS_DB_READONLY);

    ck_assert_int_eq(rs_db_begin(w), APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_put(w, "a", &it), APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_count(r, "a", &n), APR_SUCCESS);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(rs_db_commit(w), APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_count(r, "a", &n), APR_SUCCESS);
    ck_assert_int_eq(n, 2);
}
END_TEST

/* An as-is open migrates nothing and keeps the database's settings: an
 * old layout stays version 0 without a meta table, in its journal mode;
 * a newer version is opened and reported, not refused. */
START_TEST(as_is_keeps_what_it_finds)
{
    const char *dir = ut_tempdir("dbdrv"), *old = ut_path(dir, "old.db");
    const char *newer = made_store();
    int has = -1;
    apr_pool_t *p;
    rs_db_t *db;

    raw_exec(old, "CREATE TABLE inventory (setname TEXT NOT NULL, dir TEXT NOT NULL,"
                  " name TEXT NOT NULL, PRIMARY KEY (setname, dir, name))");
    apr_pool_create(&p, ut_pool);
    db = open_mode(p, old, RS_DB_AS_IS);
    ck_assert_int_eq(rs_db_schema_version(db), 0);
    ck_assert_int_eq(rs_db_has_table(db, "meta", &has), APR_SUCCESS);
    ck_assert_int_eq(has, 0);
    ck_assert_int_eq(rs_db_has_table(db, "inventory", &has), APR_SUCCESS);
    ck_assert_int_eq(has, 1);
    ck_assert_int_eq(rs_db_has_table(db, "notifications", &has), APR_SUCCESS);
    ck_assert_int_eq(has, 0);
    apr_pool_destroy(p);
    ck_assert_str_eq(raw_text(old, "PRAGMA journal_mode"), "delete");
    ck_assert_str_eq(raw_text(old, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'meta'"), "0");

    raw_exec(newer, apr_psprintf(ut_pool,
                                 "UPDATE meta SET v = '%d' WHERE k = "
                                 "'schema-version'",
                                 RS_SCHEMA_VERSION + 1));
    db = open_mode(ut_pool, newer, RS_DB_AS_IS);
    ck_assert_int_eq(rs_db_schema_version(db), RS_SCHEMA_VERSION + 1);
    db = open_mode(ut_pool, newer, RS_DB_READONLY);
    ck_assert_int_eq(rs_db_schema_version(db), RS_SCHEMA_VERSION + 1);
}
END_TEST

/* The backup is one self-contained file that passes integrity_check and
 * holds the rows; a symbolic link at the target is not followed. */
START_TEST(backup_is_a_checked_copy)
{
    const char *path = made_store(), *dir = ut_tempdir("dbdrv");
    const char *copy = ut_path(dir, "copy.db"), *target = ut_path(dir, "target");
    const char *link = ut_path(dir, "link.db");
    apr_int64_t n = 0;
    apr_size_t len = 1;
    rs_db_t *db = open_mode(ut_pool, path, RS_DB_READONLY), *c;

    ut_write(copy, "", 0);
    ck_assert_int_eq(rs_db_backup(db, copy), APR_SUCCESS);
    ck_assert_str_eq(raw_text(copy, "PRAGMA journal_mode"), "delete");
    ck_assert_str_eq(raw_text(copy, "PRAGMA integrity_check"), "ok");
    c = open_mode(ut_pool, copy, RS_DB_READONLY);
    ck_assert_int_eq(rs_db_schema_version(c), RS_SCHEMA_VERSION);
    ck_assert_int_eq(rs_inventory_count(c, "a", &n), APR_SUCCESS);
    ck_assert_int_eq(n, 1);

    ut_write(target, "", 0);
    ck_assert_int_eq(symlink(target, link), 0);
    ck_assert_int_ne(rs_db_backup(db, link), APR_SUCCESS);
    ck_assert_str_ne(rs_db_last_error(db), "");
    ut_read(target, &len);
    ck_assert_int_eq(len, 0);
}
END_TEST

/* A database goes with its -wal and -shm; nothing left is success. */
START_TEST(remove_takes_companions)
{
    const char *path = made_store();
    rs_db_t *db = open_mode(ut_pool, path, RS_DB_MIGRATE);
    apr_int64_t n = 0;

    ck_assert_int_eq(rs_inventory_count(db, "a", &n), APR_SUCCESS);
    ck_assert(ut_exists(apr_pstrcat(ut_pool, path, "-wal", NULL)));
    ck_assert(ut_exists(apr_pstrcat(ut_pool, path, "-shm", NULL)));
    ck_assert_int_eq(rs_db_remove(ut_pool, "sqlite3", path), APR_SUCCESS);
    ck_assert(!ut_exists(path));
    ck_assert(!ut_exists(apr_pstrcat(ut_pool, path, "-wal", NULL)));
    ck_assert(!ut_exists(apr_pstrcat(ut_pool, path, "-shm", NULL)));
    ck_assert_int_eq(rs_db_remove(ut_pool, "sqlite3", path), APR_SUCCESS);
    ck_assert_int_eq(rs_db_remove(ut_pool, "pgsql", "dbname=x"), APR_ENOTIMPL);
}
END_TEST

/* A set's keys end in ":<set>"; no other key goes, whatever the name
 * holds (no pattern characters). */
START_TEST(meta_forget_set_only_its_keys)
{
    static const char *const keys[] = { "snapshot-gen:a_",  "journal-mark:a_",  "x:b:a_",
                                        "snapshot-gen:ab_", "snapshot-gen:xa_", "a_",
                                        "snapshot-gen:a%",  "snapshot-gen:b",   NULL };
    rs_db_t *db = open_mode(ut_pool, made_store(), RS_DB_MIGRATE);
    const char *v;
    int i, n = -1;

    for (i = 0; keys[i]; i++) {
        ck_assert_int_eq(rs_db_meta_put(db, keys[i], "1"), APR_SUCCESS);
    }
    ck_assert_int_eq(rs_db_meta_forget_set(db, "a_", &n), APR_SUCCESS);
    ck_assert_int_eq(n, 3);
    for (i = 0; keys[i]; i++) {
        ck_assert_int_eq(rs_db_meta_get(db, ut_pool, keys[i], &v), APR_SUCCESS);
        ck_assert_msg((v == NULL) == (i < 3), "key %s", keys[i]);
    }
    ck_assert_int_eq(rs_db_meta_get(db, ut_pool, "k", &v), APR_SUCCESS);
    ck_assert_str_eq(v, "v");
}
END_TEST

/* The driver's own message of the last failure, as it was logged. */
START_TEST(last_error_is_the_drivers)
{
    ut_log_t ul;
    rs_db_t *db = NULL;
    rs_db_stmt_t *s;

    ck_assert_int_eq(rs_schema_open(&db, ut_pool, "sqlite3", made_store(), ut_log_init(&ul)),
                     APR_SUCCESS);
    ck_assert_str_eq(rs_db_last_error(db), "");
    ck_assert_int_ne(rs_db_prepare(db, "SELECT x FROM nosuch", &s), APR_SUCCESS);
    ck_assert_str_eq(rs_db_last_error(db), "no such table: nosuch");
    ck_assert_int_eq(ut_log_count(&ul, "no such table: nosuch"), 1);
}
END_TEST


/* ------------------------------------------------ PostgreSQL */

/* A DSN's password never reaches a message; other drivers' DSNs (a
 * file) are shown as they are. */
START_TEST(dsn_display_masks_password)
{
    const char *d;

    d = rs_db_dsn_display(ut_pool, "pgsql", "host=h port=5 dbname=rs user=u password=s3cret");
    ck_assert_ptr_null(strstr(d, "s3cret"));
    ck_assert_ptr_nonnull(strstr(d, "password=***"));
    ck_assert_ptr_nonnull(strstr(d, "dbname=rs"));
    d = rs_db_dsn_display(ut_pool, "pgsql", "postgresql://u:s3cret@h:5/rs?sslmode=disable");
    ck_assert_ptr_null(strstr(d, "s3cret"));
    ck_assert_ptr_nonnull(strstr(d, "host=h"));
    d = rs_db_dsn_display(ut_pool, "pgsql", "host=h password='s3 cret' options='-c a=b'");
    ck_assert_ptr_null(strstr(d, "s3"));
    ck_assert_ptr_nonnull(strstr(d, "options='-c a=b'"));
    d = rs_db_dsn_display(ut_pool, "pgsql", "host=h password='s3cret");
    ck_assert_ptr_null(strstr(d, "s3cret"));
    ck_assert_str_eq(rs_db_dsn_display(ut_pool, "sqlite3", "/x/password=y"), "/x/password=y");
}
END_TEST

static rs_db_t *pg_store(ut_log_t *ul)
{
    rs_db_t *db = NULL;
    ck_assert_int_eq(rs_schema_open(&db, ut_pool, ut_driver,
                                    ut_store(ut_path(ut_tempdir("dbdrv"), "state.db")),
                                    ul ? ut_log_init(ul) : NULL),
                     APR_SUCCESS);
    return db;
}

/* A database that is not SQL_ASCII is refused, saying what to do, and
 * stays refused (not transient). */
START_TEST(pg_encoding_refused)
{
    const char *su = apr_pstrcat(ut_pool, ut_pg_dsn, " user=postgres dbname=postgres", NULL);
    const char *name = apr_psprintf(ut_pool, "rs_utf8_%ld", (long)getpid());
    const char *err = NULL;
    rs_db_t *db = NULL;
    ut_log_t ul;
    apr_status_t rv;

    ut_pg_exec(su, apr_psprintf(ut_pool, "DROP DATABASE IF EXISTS %s", name));
    ut_pg_exec(su, apr_psprintf(ut_pool,
                                "CREATE DATABASE %s OWNER rs ENCODING 'UTF8' LC_COLLATE 'C' "
                                "LC_CTYPE 'C' TEMPLATE template0",
                                name));
    rv = rs_schema_open_ex(&db, ut_pool, "pgsql",
                           apr_pstrcat(ut_pool, ut_pg_dsn, " dbname=", name, NULL), RS_DB_MIGRATE,
                           ut_log_init(&ul), &err);
    ck_assert_int_ne(rv, APR_SUCCESS);
    ck_assert(!rs_db_transient(rv));
    ck_assert_ptr_nonnull(err);
    ck_assert_ptr_nonnull(strstr(err, "server_encoding is UTF8, not SQL_ASCII"));
    ck_assert_int_eq(ut_log_count(&ul, "ENCODING 'SQL_ASCII'"), 1);
    /* The refused connection lives as long as its pool. */
    ut_pg_exec(su, apr_psprintf(ut_pool, "DROP DATABASE %s WITH (FORCE)", name));
}
END_TEST

/* No server: a transient cause, the DSN's password not in the log. */
START_TEST(pg_no_server_is_transient)
{
    const char *err = NULL;
    rs_db_t *db = NULL;
    ut_log_t ul;
    apr_status_t rv;

    rv = rs_schema_open_ex(&db, ut_pool, "pgsql",
                           "host=127.0.0.1 port=1 dbname=rs user=rs password=s3cret "
                           "connect_timeout=2",
                           RS_DB_MIGRATE, ut_log_init(&ul), &err);
    ck_assert_int_eq(rv, APR_ECONNREFUSED);
    ck_assert(rs_db_transient(rv));
    ck_assert_int_eq(ut_log_count(&ul, "s3cret"), 0);
    ck_assert_int_eq(ut_log_count(&ul, "password=***"), 1);
}
END_TEST

static void get_first(void *baton, apr_pool_t *p, const char *const *cols, int n)
{
    *(const char **)baton = n > 0 && cols[0] ? apr_pstrdup(p, cols[0]) : NULL;
}

/* The server ends the connection (pg_terminate_backend): the next
 * statement fails with a transient cause, and a new connection works. */
START_TEST(pg_connection_lost_is_transient)
{
    const char *path = ut_path(ut_tempdir("dbdrv"), "state.db");
    const char *pid = NULL, *v = NULL;
    apr_pool_t *p;
    rs_db_t *db = NULL;
    rs_db_stmt_t *s;
    ut_log_t ul;
    apr_status_t rv;

    apr_pool_create(&p, ut_pool);
    ck_assert_int_eq(rs_schema_open(&db, p, ut_driver, ut_store(path), ut_log_init(&ul)),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(db, "k", "v"), APR_SUCCESS);
    ck_assert_int_eq(rs_db_stmt(db, "SELECT pg_backend_pid()", &s), APR_SUCCESS);
    ck_assert_int_eq(rs_db_query(db, ut_pool, s, NULL, get_first, &pid), APR_SUCCESS);
    ck_assert_ptr_nonnull(pid);
    ut_pg_exec(ut_pg_dsn,
               apr_pstrcat(ut_pool, "SELECT pg_terminate_backend(", pid, ", 5000)", NULL));
    rv = rs_db_meta_get(db, ut_pool, "k", &v);
    ck_assert_int_eq(rv, APR_ECONNRESET);
    ck_assert(rs_db_transient(rv));
    ck_assert_int_eq(rs_db_begin(db), APR_ECONNRESET);
    apr_pool_destroy(p);
    ck_assert_int_eq(rs_schema_open(&db, ut_pool, ut_driver, ut_store(path), NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_get(db, ut_pool, "k", &v), APR_SUCCESS);
    ck_assert_str_eq(v, "v");
}
END_TEST

/* Another connection's lock makes a statement fail with APR_EBUSY after
 * the busy timeout (lock_timeout). */
START_TEST(pg_lock_timeout_is_busy)
{
    const char *path = ut_path(ut_tempdir("dbdrv"), "state.db");
    rs_db_t *a = NULL, *b = NULL;

    ck_assert_int_eq(rs_schema_open(&a, ut_pool, ut_driver, ut_store(path), NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_schema_open(&b, ut_pool, ut_driver, ut_store(path), NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(a, "k", "1"), APR_SUCCESS);
    ck_assert_int_eq(rs_db_begin(a), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(a, "k", "2"), APR_SUCCESS);
    ck_assert_int_eq(rs_db_busy_timeout(b, 0), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(b, "k", "3"), APR_EBUSY);
    ck_assert_int_eq(rs_db_commit(a), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(b, "k", "3"), APR_SUCCESS);
}
END_TEST

/* A read-only session writes nothing: APR_EROFS. */
START_TEST(pg_readonly_session)
{
    const char *dsn = ut_store(ut_path(ut_tempdir("dbdrv"), "state.db"));
    rs_db_t *w = NULL, *r = NULL;
    const char *v = NULL;

    ck_assert_int_eq(rs_schema_open(&w, ut_pool, ut_driver, dsn, NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(w, "k", "v"), APR_SUCCESS);
    ck_assert_int_eq(rs_schema_open_ex(&r, ut_pool, ut_driver, dsn, RS_DB_READONLY, NULL, NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_schema_version(r), RS_SCHEMA_VERSION);
    ck_assert_int_eq(rs_db_meta_get(r, ut_pool, "k", &v), APR_SUCCESS);
    ck_assert_str_eq(v, "v");
    ck_assert_int_eq(rs_db_meta_put(r, "k", "w"), APR_FROM_OS_ERROR(EROFS));
}
END_TEST

static void collect_first(void *baton, apr_pool_t *p, const char *const *cols, int n)
{
    APR_ARRAY_PUSH((apr_array_header_t *)baton, const char *) =
        n > 0 && cols[0] ? apr_pstrdup(p, cols[0]) : NULL;
}

/* Names are ordered as bytes ('-' < '.' < '/' < '0', bytes >= 0x80 after
 * ASCII), the range of a directory's subtree holds its subtree only, and
 * a name with every byte 1..255 comes back as it went in. */
START_TEST(pg_names_are_bytes)
{
    static const char *const dirs[] = { "A",  "a",     "a-b",   "a.b",       "a/b",   "a/b/c",
                                        "a0", "a\x7f", "a\x80", "a\xc3\xa9", "a\xff", "b" };
    ut_log_t ul;
    rs_db_t *db = pg_store(&ul);
    rs_db_stmt_t *s;
    const void *args[3];
    char all[256];
    apr_array_header_t *got = apr_array_make(ut_pool, 16, sizeof(char *));
    rs_item_t it, *back = NULL;
    int i;

    memset(&it, 0, sizeof(it));
    it.listed = 1;
    /* Inserted in reverse: the order comes from the comparison. */
    for (i = (int)(sizeof(dirs) / sizeof(dirs[0])) - 1; i >= 0; i--) {
        it.dir = dirs[i];
        it.name = "f";
        ck_assert_int_eq(rs_inventory_put(db, "s", &it), APR_SUCCESS);
    }
    for (i = 1; i < 256; i++) {
        all[i - 1] = (char)i;
    }
    all[255] = '\0';
    it.dir = "z";
    it.name = all;
    ck_assert_int_eq(rs_inventory_put(db, "s", &it), APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_get(db, ut_pool, "s", "z", all, &back), APR_SUCCESS);
    ck_assert_ptr_nonnull(back);
    ck_assert_int_eq(memcmp(back->name, all, 256), 0);

    ck_assert_int_eq(rs_db_stmt(db,
                                "SELECT dir FROM inventory WHERE setname = %s AND dir < 'z' "
                                "ORDER BY dir",
                                &s),
                     APR_SUCCESS);
    args[0] = "s";
    ck_assert_int_eq(rs_db_query(db, ut_pool, s, args, collect_first, got), APR_SUCCESS);
    ck_assert_int_eq(got->nelts, (int)(sizeof(dirs) / sizeof(dirs[0])));
    for (i = 0; i < got->nelts; i++) {
        ck_assert_str_eq(APR_ARRAY_IDX(got, i, const char *), dirs[i]);
    }
    /* below a: a/ <= dir < a0 */
    apr_array_clear(got);
    ck_assert_int_eq(rs_db_stmt(db,
                                "SELECT dir FROM inventory WHERE setname = %s AND dir >= %s "
                                "AND dir < %s ORDER BY dir",
                                &s),
                     APR_SUCCESS);
    args[1] = "a/";
    args[2] = "a0";
    ck_assert_int_eq(rs_db_query(db, ut_pool, s, args, collect_first, got), APR_SUCCESS);
    ck_assert_int_eq(got->nelts, 2);
    ck_assert_str_eq(APR_ARRAY_IDX(got, 0, const char *), "a/b");
    ck_assert_str_eq(APR_ARRAY_IDX(got, 1, const char *), "a/b/c");
    /* Every text column compares as bytes whatever the database's
     * collation (this cluster's is C: the columns' own is checked). */
    apr_array_clear(got);
    ck_assert_int_eq(rs_db_stmt(db,
                                "SELECT table_name || '.' || column_name FROM "
                                "information_schema.columns WHERE table_schema = "
                                "current_schema() AND data_type = 'text' AND "
                                "collation_name IS DISTINCT FROM 'C'",
                                &s),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_query(db, ut_pool, s, NULL, collect_first, got), APR_SUCCESS);
    ck_assert_msg(got->nelts == 0, "%s is not COLLATE \"C\"",
                  got->nelts ? APR_ARRAY_IDX(got, 0, const char *) : "");
}
END_TEST

typedef struct {
    int rows, stop_at;
} count_t;

static int count_row(void *baton, const rs_db_row_t *row)
{
    count_t *c = baton;
    ck_assert_int_eq(rs_db_row_int64(row, 0), c->rows + 1);
    return ++c->rows == c->stop_at;
}

/* rs_db_each reads row by row: a large select stopped early leaves the
 * connection usable, also inside a transaction, whose writes commit. */
START_TEST(pg_each_stops_early)
{
    rs_db_t *db = pg_store(NULL);
    rs_db_stmt_t *s;
    count_t c = { 0, 10 };
    const void *args[1];
    const char *v = NULL;
    apr_int64_t n = 200000;

    args[0] = &n;
    ck_assert_int_eq(rs_db_stmt(db, "SELECT i FROM generate_series(1, CAST(%lld AS BIGINT)) i", &s),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_each(db, s, args, count_row, &c), APR_SUCCESS);
    ck_assert_int_eq(c.rows, 10);
    ck_assert_int_eq(rs_db_meta_put(db, "k", "1"), APR_SUCCESS);
    ck_assert_int_eq(rs_db_begin(db), APR_SUCCESS);
    c.rows = 0;
    ck_assert_int_eq(rs_db_each(db, s, args, count_row, &c), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(db, "k", "2"), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(db), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_get(db, ut_pool, "k", &v), APR_SUCCESS);
    ck_assert_str_eq(v, "2");
    /* To the end. */
    c.rows = 0;
    c.stop_at = -1;
    ck_assert_int_eq(rs_db_each(db, s, args, count_row, &c), APR_SUCCESS);
    ck_assert_int_eq(c.rows, 200000);
}
END_TEST

/* A select that fails inside a transaction fails the transaction: its
 * writes are rolled back and the commit says why. */
START_TEST(pg_failure_in_each_fails_transaction)
{
    ut_log_t ul;
    rs_db_t *db = pg_store(&ul);
    rs_db_stmt_t *s;
    count_t c = { 0, -1 };
    apr_int64_t min = APR_INT64_MIN;
    const void *args[] = { &min };
    const char *v = NULL;

    ck_assert_int_eq(rs_db_stmt(db, "SELECT abs(CAST(%lld AS BIGINT))", &s), APR_SUCCESS);
    ck_assert_int_eq(rs_db_begin(db), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(db, "k", "1"), APR_SUCCESS);
    ck_assert_int_eq(rs_db_each(db, s, args, count_row, &c), APR_EGENERAL);
    ck_assert_str_eq(rs_db_last_error(db), "bigint out of range");
    ck_assert_int_ne(rs_db_meta_put(db, "k", "2"), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(db), APR_EGENERAL);
    ck_assert_int_eq(rs_db_meta_get(db, ut_pool, "k", &v), APR_SUCCESS);
    ck_assert_ptr_null(v);
    ck_assert_int_eq(ut_log_count(&ul, "bigint out of range"), 1);
}
END_TEST

Suite *dbdriver_suite(void)
{
    Suite *s = suite_create("dbdriver");
    TCase *tc = ut_tcase("dbdriver", 30);
    if (ut_pg_building) {
        tcase_add_test(tc, pg_encoding_refused);
        tcase_add_test(tc, pg_no_server_is_transient);
        tcase_add_test(tc, pg_connection_lost_is_transient);
        tcase_add_test(tc, pg_lock_timeout_is_busy);
        tcase_add_test(tc, pg_readonly_session);
        tcase_add_test(tc, pg_names_are_bytes);
        tcase_add_test(tc, pg_each_stops_early);
        tcase_add_test(tc, pg_failure_in_each_fails_transaction);
        tcase_add_test(tc, meta_forget_set_only_its_keys);
        suite_add_tcase(s, tc);
        return s;
    }
    tcase_add_test(tc, dsn_display_masks_password);
    tcase_add_test(tc, readonly_reads_and_writes_nothing);
    tcase_add_test(tc, readonly_creates_no_store);
    tcase_add_test(tc, readonly_odd_file_name);
    tcase_add_test(tc, readonly_beside_a_writer);
    tcase_add_test(tc, as_is_keeps_what_it_finds);
    tcase_add_test(tc, backup_is_a_checked_copy);
    tcase_add_test(tc, remove_takes_companions);
    tcase_add_test(tc, meta_forget_set_only_its_keys);
    tcase_add_test(tc, last_error_is_the_drivers);
    suite_add_tcase(s, tc);
    return s;
}
