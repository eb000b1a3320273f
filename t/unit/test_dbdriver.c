/* SPDX-License-Identifier: Apache-2.0 */
/* test_dbdriver.c - rs_db as a tool reaches the store (rs_dbdriver.c):
 * read-only and as-is opens, tables, online backup, removal of a
 * database's files, a set's meta keys, the driver's last message. */
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
    ck_assert_int_eq(rs_schema_open(&db, p, "sqlite3", path, NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_put(db, "a", &it), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(db, "k", "v"), APR_SUCCESS);
    apr_pool_destroy(p);
    return path;
}

static rs_db_t *open_mode(apr_pool_t *p, const char *path, int mode)
{
    rs_db_t *db = NULL;
    const char *err = "unset";
    apr_status_t rv = rs_schema_open_ex(&db, p, "sqlite3", path, mode, NULL, &err);
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

Suite *dbdriver_suite(void)
{
    Suite *s = suite_create("dbdriver");
    TCase *tc = ut_tcase("dbdriver", 30);
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
