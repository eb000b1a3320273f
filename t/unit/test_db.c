/* SPDX-License-Identifier: Apache-2.0 */
/* test_db.c - rs_db: connection, statements, transactions, schema version,
 * error causes (SQLite through apr_dbd) */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sqlite3.h>
#include <apr_strings.h>
#include <apr_thread_proc.h>
#include "unit.h"
#include "rs_db.h"
#include "rs_schema.h"
#include "rs_inventory.h"

static rs_db_t *open_db_at(ut_log_t *ul, apr_pool_t *p, const char *path)
{
    rs_db_t *db = NULL;
    apr_status_t rv = rs_schema_open(&db, p, ut_driver, ut_store(path), ut_log_init(ul));
    ck_assert_msg(rv == APR_SUCCESS, "rs_db_open: %d", rv);
    ck_assert_ptr_nonnull(db);
    return db;
}

static rs_db_t *open_db(ut_log_t *ul)
{
    return open_db_at(ul, ut_pool, ut_path(ut_tempdir("db"), "state.db"));
}

/* Run a statement that answers rows (a PRAGMA) and ignore them. */
static void ignore_row(void *baton, apr_pool_t *p, const char *const *cols, int n)
{
    (void)baton;
    (void)p;
    (void)cols;
    (void)n;
}

static apr_status_t query_sql(rs_db_t *db, const char *sql, rs_db_row_fn *fn, void *baton)
{
    rs_db_stmt_t *s = NULL;
    apr_status_t rv = rs_db_prepare(db, sql, &s);
    return rv == APR_SUCCESS ? rs_db_query(db, ut_pool, s, NULL, fn, baton) : rv;
}

/* Run sql on a connection of SQLite's own, as an older version of the
 * module (or an operator) would have. */
static void sqlite_exec(const char *path, const char *sql)
{
    sqlite3 *conn = NULL;
    char *err = NULL;
    ck_assert_int_eq(sqlite3_open(path, &conn), SQLITE_OK);
    ck_assert_msg(sqlite3_exec(conn, sql, NULL, NULL, &err) == SQLITE_OK, "%s: %s", sql,
                  err ? err : "?");
    sqlite3_close(conn);
}

START_TEST(open_errors)
{
    ut_log_t ul;
    rs_db_t *st = NULL;
    const char *dir = ut_tempdir("db");

    ck_assert_int_ne(
        rs_schema_open(&st, ut_pool, "no-such-driver", ut_path(dir, "x.db"), ut_log_init(&ul)),
        APR_SUCCESS);
    ck_assert_int_ge(ut_log_count(&ul, "no-such-driver"), 1);
    ck_assert_int_ne(
        rs_schema_open(&st, ut_pool, "sqlite3", ut_path(dir, "missing/dir/x.db"), ut_log_init(&ul)),
        APR_SUCCESS);
    ck_assert_int_ge(ul.nerr, 1);
}
END_TEST

START_TEST(meta)
{
    ut_log_t ul;
    rs_db_t *st = open_db(&ul);
    const char *v = "sentinel";

    ck_assert_int_eq(rs_db_meta_get(st, ut_pool, "k", &v), APR_SUCCESS);
    ck_assert_ptr_null(v);
    ck_assert_int_eq(rs_db_meta_put(st, "k", "one"), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(st, "snapshot-key:s\xE9t", "a 'quoted' \"value\"; DROP"),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_get(st, ut_pool, "k", &v), APR_SUCCESS);
    ck_assert_str_eq(v, "one");
    ck_assert_int_eq(rs_db_meta_put(st, "k", "two"), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_get(st, ut_pool, "k", &v), APR_SUCCESS);
    ck_assert_str_eq(v, "two");
    ck_assert_int_eq(rs_db_meta_get(st, ut_pool, "snapshot-key:s\xE9t", &v), APR_SUCCESS);
    ck_assert_str_eq(v, "a 'quoted' \"value\"; DROP");
    ck_assert_int_eq(rs_db_meta_get(st, ut_pool, "K", &v), APR_SUCCESS);
    ck_assert_ptr_null(v);
}
END_TEST

START_TEST(fresh_database_gets_version)
{
    ut_log_t ul;
    rs_db_t *db = open_db(&ul);
    const char *v = NULL;
    apr_int64_t n = -1;

    ck_assert_int_eq(rs_db_schema_version(db), RS_SCHEMA_VERSION);
    ck_assert_int_eq(rs_db_meta_get(db, ut_pool, "schema-version", &v), APR_SUCCESS);
    ck_assert_str_eq(v, apr_itoa(ut_pool, RS_SCHEMA_VERSION));
    /* The tables of the units on top exist. */
    ck_assert_int_eq(rs_inventory_count(db, "s", &n), APR_SUCCESS);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(query_sql(db, "SELECT seq FROM journal", ignore_row, NULL), APR_SUCCESS);
    ck_assert_int_eq(ul.nerr, 0);
}
END_TEST

/* A database written before schema versions existed: the tables are
 * there, no version is recorded.  It is taken as version 1, rows kept,
 * and brought to the newest version (version 2 adds the outbox). */
START_TEST(unversioned_layout_is_migrated)
{
    ut_log_t ul;
    const char *path = ut_path(ut_tempdir("db"), "state.db");
    rs_db_t *db;
    rs_item_t *it = NULL;
    const char *v = NULL;

    sqlite_exec(
        path,
        "CREATE TABLE inventory ("
        " setname TEXT NOT NULL, dir TEXT NOT NULL, name TEXT NOT NULL,"
        " size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL, ctime_ns BIGINT NOT NULL,"
        " dev BIGINT NOT NULL, ino BIGINT NOT NULL, type TEXT, md5 TEXT, sha1 TEXT,"
        " sha256 TEXT, sha512 TEXT, listed INTEGER NOT NULL, cfg TEXT,"
        " PRIMARY KEY (setname, dir, name));"
        "CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT);"
        "CREATE TABLE journal ("
        " seq BIGINT PRIMARY KEY, setname TEXT NOT NULL, dir TEXT NOT NULL, name TEXT NOT NULL,"
        " change INTEGER NOT NULL, dt BIGINT NOT NULL, lastmod_ns BIGINT NOT NULL,"
        " size BIGINT NOT NULL, type TEXT, md5 TEXT, sha1 TEXT, sha256 TEXT, sha512 TEXT);"
        "CREATE INDEX journal_set_seq ON journal (setname, seq);"
        "CREATE TABLE changelists ("
        " setname TEXT NOT NULL, id BIGINT NOT NULL, from_dt BIGINT NOT NULL,"
        " until_dt BIGINT NOT NULL, first_seq BIGINT NOT NULL, last_seq BIGINT NOT NULL,"
        " count BIGINT NOT NULL, PRIMARY KEY (setname, id));"
        "CREATE TABLE journal_sets (setname TEXT PRIMARY KEY, started BIGINT NOT NULL,"
        " open_id BIGINT NOT NULL);"
        "INSERT INTO inventory VALUES ('s', 'd', 'a', 5, 1, 2, 3, 4, 'text/plain',"
        " NULL, NULL, NULL, NULL, 1, 'fp');"
        "INSERT INTO meta VALUES ('snapshot-gen:s', '7');");
    db = open_db_at(&ul, ut_pool, path);
    ck_assert_int_eq(rs_db_schema_version(db), RS_SCHEMA_VERSION);
    ck_assert_int_eq(rs_db_meta_get(db, ut_pool, "schema-version", &v), APR_SUCCESS);
    ck_assert_str_eq(v, apr_itoa(ut_pool, RS_SCHEMA_VERSION));
    ck_assert_int_eq(rs_db_run(db, "DELETE FROM notifications"), APR_SUCCESS);
    ck_assert_int_eq(rs_db_run(db, "DELETE FROM notify_dests"), APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_get(db, ut_pool, "s", "d", "a", &it), APR_SUCCESS);
    ck_assert_ptr_nonnull(it);
    ck_assert_int_eq(it->size, 5);
    ck_assert_str_eq(it->cfg, "fp");
    ck_assert_int_eq(rs_db_meta_get(db, ut_pool, "snapshot-gen:s", &v), APR_SUCCESS);
    ck_assert_str_eq(v, "7");
    ck_assert_int_eq(ul.nerr, 0);
}
END_TEST

static void keep_str(void *baton, apr_pool_t *p, const char *const *cols, int n)
{
    (void)p;
    *(const char **)baton = n > 0 && cols[0] ? apr_pstrdup(ut_pool, cols[0]) : NULL;
}

/* A store of version 2 (the inventory a rowid table with the key in an
 * index of its own) is brought to the newest version: at 3 every row is
 * kept, with every column, the listing order unchanged, the table
 * clustered by its key; at 4 the journal gets its index by path, at 5
 * its index by content. */
START_TEST(version2_inventory_is_clustered)
{
    ut_log_t ul;
    const char *path = ut_path(ut_tempdir("db"), "state.db");
    apr_array_header_t *steps, *rows = NULL;
    const char *sql = NULL, *v = NULL;
    rs_item_t *it = NULL;
    rs_db_t *db;
    char *ddl = "CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT);";
    int version, i;

    for (version = 1; version <= 2; version++) {
        steps = rs_schema_steps(ut_pool, version);
        for (i = 0; i < steps->nelts; i++) {
            ddl = apr_pstrcat(ut_pool, ddl, APR_ARRAY_IDX(steps, i, const char *), ";", NULL);
        }
    }
    sqlite_exec(
        path,
        apr_pstrcat(
            ut_pool, ddl,
            "INSERT INTO meta VALUES ('schema-version', '2');"
            "INSERT INTO inventory VALUES ('s', 'd', 'b', 9007199254740993, -5, 2, 3, 4,"
            " 'text/plain', 'm', NULL, 's2', NULL, 1, 'fp');"
            "INSERT INTO inventory VALUES ('s', '', 'z', 1, 1, 1, 1, 1, NULL, NULL, NULL, NULL,"
            " NULL, 1, NULL);"
            "INSERT INTO inventory VALUES ('s', 'd', 'a', 2, 2, 2, 2, 2, NULL, NULL, NULL, NULL,"
            " NULL, 0, NULL);"
            "INSERT INTO inventory VALUES ('t', 'd', 'a', 3, 3, 3, 3, 3, NULL, NULL, NULL, NULL,"
            " NULL, 1, NULL);",
            NULL));
    db = open_db_at(&ul, ut_pool, path);
    ck_assert_int_eq(rs_db_schema_version(db), RS_SCHEMA_VERSION); /* through 3 */
    ck_assert_int_eq(rs_db_meta_get(db, ut_pool, "schema-version", &v), APR_SUCCESS);
    ck_assert_str_eq(v, apr_itoa(ut_pool, RS_SCHEMA_VERSION));
    sql = NULL;
    ck_assert_int_eq(query_sql(db,
                               "SELECT name FROM sqlite_master WHERE name = "
                               "'journal_set_path'",
                               keep_str, &sql),
                     APR_SUCCESS);
    ck_assert_ptr_nonnull(sql); /* version 4 */
    sql = NULL;
    ck_assert_int_eq(query_sql(db,
                               "SELECT name FROM sqlite_master WHERE name = "
                               "'journal_set_sha256'",
                               keep_str, &sql),
                     APR_SUCCESS);
    ck_assert_ptr_nonnull(sql); /* version 5 */
    ck_assert_int_eq(
        query_sql(db, "SELECT sql FROM sqlite_master WHERE name = 'inventory'", keep_str, &sql),
        APR_SUCCESS);
    ck_assert_ptr_nonnull(sql);
    ck_assert_ptr_nonnull(strstr(sql, "WITHOUT ROWID"));
    sql = NULL;
    ck_assert_int_eq(
        query_sql(db, "SELECT name FROM sqlite_master WHERE name = 'inventory_v3'", keep_str, &sql),
        APR_SUCCESS);
    ck_assert_ptr_null(sql);

    ck_assert_int_eq(rs_inventory_page(db, ut_pool, "s", NULL, NULL, 10, &rows), APR_SUCCESS);
    ck_assert_int_eq(rows->nelts, 2);
    ck_assert_str_eq(APR_ARRAY_IDX(rows, 0, rs_item_t).name, "z");
    it = &APR_ARRAY_IDX(rows, 1, rs_item_t);
    ck_assert_str_eq(it->dir, "d");
    ck_assert_str_eq(it->name, "b");
    ck_assert(it->size == 9007199254740993LL);
    ck_assert(it->mtime_ns == -5);
    ck_assert(it->ctime_ns == 2 && it->dev == 3 && it->ino == 4);
    ck_assert_str_eq(it->type, "text/plain");
    ck_assert_str_eq(it->hash[0], "m");
    ck_assert_ptr_null(it->hash[1]);
    ck_assert_str_eq(it->hash[2], "s2");
    ck_assert_str_eq(it->cfg, "fp");
    ck_assert_int_eq(rs_inventory_get(db, ut_pool, "s", "d", "a", &it), APR_SUCCESS);
    ck_assert_ptr_nonnull(it);
    ck_assert_int_eq(it->listed, 0);
    ck_assert_int_eq(rs_inventory_get(db, ut_pool, "t", "d", "a", &it), APR_SUCCESS);
    ck_assert_ptr_nonnull(it);
    ck_assert_int_eq(ut_log_count(&ul, "schema version 3 (from 2"), 1);
    ck_assert_int_eq(ul.nerr, 0);
}
END_TEST

START_TEST(newer_version_is_refused)
{
    ut_log_t ul;
    const char *path = ut_path(ut_tempdir("db"), "state.db");
    apr_pool_t *p;
    rs_db_t *db;

    apr_pool_create(&p, ut_pool);
    db = open_db_at(&ul, p, path);
    ck_assert_int_eq(rs_db_meta_put(db, "schema-version", apr_itoa(p, RS_SCHEMA_VERSION + 1)),
                     APR_SUCCESS);
    apr_pool_destroy(p);
    db = NULL;
    ck_assert_int_ne(rs_schema_open(&db, ut_pool, "sqlite3", path, ut_log_init(&ul)), APR_SUCCESS);
    ck_assert_ptr_null(db);
    ck_assert_int_eq(ut_log_count(&ul, "newer"), 1);
    ck_assert_int_eq(ul.nerr, 1);
}
END_TEST

/* Opening twice (as the watcher's connections do) migrates once. */
START_TEST(reopen_keeps_version)
{
    ut_log_t ul;
    const char *path = ut_path(ut_tempdir("db"), "state.db");
    rs_db_t *a = open_db_at(&ul, ut_pool, path);
    rs_db_t *b = open_db_at(&ul, ut_pool, path);
    ck_assert_int_eq(rs_db_schema_version(a), RS_SCHEMA_VERSION);
    ck_assert_int_eq(rs_db_schema_version(b), RS_SCHEMA_VERSION);
}
END_TEST

/* Processes opening a new database at the same time (the watcher, its
 * job connection and children at a first start): one migrates, the
 * others wait for it and find the version done.  Processes, not threads:
 * apr_dbd's SQLite driver runs the statements of every connection of a
 * process under one mutex, which a statement waiting for another
 * connection's lock keeps (see rs_db.h). */
START_TEST(concurrent_first_open)
{
    /* A new database (PostgreSQL: its schema made here, empty): the
     * children race for its migration. */
    const char *path = ut_store(ut_path(ut_tempdir("db"), "state.db"));
    pid_t pid[4];
    int i, status;

    for (i = 0; i < 4; i++) {
        pid[i] = fork();
        ck_assert_int_ge(pid[i], 0);
        if (pid[i] == 0) {
            apr_pool_t *p;
            rs_db_t *db = NULL;
            apr_status_t rv;
            apr_pool_create(&p, NULL);
            rv = rs_schema_open(&db, p, ut_driver, path, NULL);
            _exit(rv != APR_SUCCESS ? 1 : rs_db_schema_version(db) != RS_SCHEMA_VERSION ? 2 : 0);
        }
    }
    for (i = 0; i < 4; i++) {
        ck_assert_int_eq(waitpid(pid[i], &status, 0), pid[i]);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 0);
    }
}
END_TEST

typedef struct {
    int rows, ncols;
    const char *last;
} wide_t;

static void wide_row(void *baton, apr_pool_t *p, const char *const *cols, int n)
{
    wide_t *w = baton;
    w->rows++;
    w->ncols = n;
    w->last = n > 0 ? apr_pstrdup(p, cols[n - 1]) : NULL;
}

/* Every column of a wide row reaches the callback. */
START_TEST(query_wide_rows)
{
    ut_log_t ul;
    rs_db_t *db = open_db(&ul);
    wide_t w = { 0, 0, NULL };
    char *sql = "SELECT 1";
    int i;

    for (i = 2; i <= 40; i++) {
        sql = apr_psprintf(ut_pool, "%s, %d", sql, i);
    }
    ck_assert_int_eq(query_sql(db, sql, wide_row, &w), APR_SUCCESS);
    ck_assert_int_eq(w.rows, 1);
    ck_assert_int_eq(w.ncols, 40);
    ck_assert_str_eq(w.last, "40");
}
END_TEST

/* Rows of rs_db_each, copied. */
typedef struct {
    int rows, stop_at;
    apr_int64_t ints[8];
    const char *texts[8];
} each_t;

static int each_row(void *baton, const rs_db_row_t *row)
{
    each_t *e = baton;
    const char *t = rs_db_row_text(row, 1);
    if (e->rows < 8) {
        e->ints[e->rows] = rs_db_row_int64(row, 0);
        e->texts[e->rows] = t ? apr_pstrdup(ut_pool, t) : NULL;
    }
    e->rows++;
    return e->rows == e->stop_at;
}

/* rs_db_each: every marker kind bound, integers beyond a double's
 * precision and negative ones exact, SQL NULL as NULL / 0, a stop by the
 * callback, and the statement kept and run again with other arguments. */
START_TEST(each_streams_typed_rows)
{
    static const char *const sql = "SELECT v, t FROM et WHERE k >= %s AND n >= %d AND v >= %lld "
                                   "ORDER BY v";
    ut_log_t ul;
    rs_db_t *db = open_db(&ul);
    rs_db_stmt_t *s = NULL;
    apr_int64_t min = APR_INT64_MIN;
    int zero = 0;
    const void *args[] = { "a", &zero, &min };
    each_t e;

    ck_assert_int_eq(rs_db_run(db, "CREATE TABLE et (k TEXT, n INTEGER, v BIGINT, t TEXT)"),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_run(db, "INSERT INTO et VALUES ('a', 1, 9007199254740993, 'x'), "
                                   "('b', 2, -9223372036854775807, NULL), "
                                   "('c', 3, NULL, ''), ('d', 4, 5, 'y')"),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_stmt(db, sql, &s), APR_SUCCESS);
    memset(&e, 0, sizeof(e));
    ck_assert_int_eq(rs_db_each(db, s, args, each_row, &e), APR_SUCCESS);
    ck_assert_int_eq(e.rows, 3); /* NULL >= min is not true */
    ck_assert(e.ints[0] == -9223372036854775807LL);
    ck_assert_ptr_null(e.texts[0]);
    ck_assert(e.ints[1] == 5);
    ck_assert_str_eq(e.texts[1], "y");
    ck_assert(e.ints[2] == 9007199254740993LL);
    ck_assert_str_eq(e.texts[2], "x");

    /* Stopped by the callback; then again with other arguments. */
    memset(&e, 0, sizeof(e));
    e.stop_at = 1;
    ck_assert_int_eq(rs_db_each(db, s, args, each_row, &e), APR_SUCCESS);
    ck_assert_int_eq(e.rows, 1);
    min = 6;
    args[0] = "b";
    memset(&e, 0, sizeof(e));
    ck_assert_int_eq(rs_db_each(db, s, args, each_row, &e), APR_SUCCESS);
    ck_assert_int_eq(e.rows, 0);
    args[0] = "a";
    memset(&e, 0, sizeof(e));
    ck_assert_int_eq(rs_db_each(db, s, args, each_row, &e), APR_SUCCESS);
    ck_assert_int_eq(e.rows, 1);
    ck_assert(e.ints[0] == 9007199254740993LL);

    /* A statement that fails while it runs logs the driver's message. */
    min = APR_INT64_MIN;
    args[0] = &min;
    ck_assert_int_eq(rs_db_stmt(db, "SELECT abs(CAST(%lld AS BIGINT)), 'x'", &s), APR_SUCCESS);
    memset(&e, 0, sizeof(e));
    ck_assert_int_eq(rs_db_each(db, s, args, each_row, &e), APR_EGENERAL);
    ck_assert_int_eq(e.rows, 0);
    ck_assert_int_eq(ut_log_count(&ul, ut_pg() ? "bigint out of range" : "integer overflow"), 1);
}
END_TEST

/* A logger that also keeps the status of the last error. */
typedef struct {
    ut_log_t ul;
    apr_status_t last_rv;
    rs_logger_t logger;
} rv_log_t;

static void log_rv(void *baton, int level, apr_status_t rv, const char *msg)
{
    rv_log_t *l = baton;
    if (level <= RS_LOG_ERR) {
        l->last_rv = rv;
    }
    l->ul.logger.fn(&l->ul, level, rv, msg);
}

/* A full database: the statement and the commit return APR_ENOSPC, and
 * the log line names the cause. */
START_TEST(full_database_keeps_cause)
{
    rv_log_t l;
    rs_db_t *db = NULL;
    apr_status_t rv = APR_SUCCESS;
    int i;

    ut_log_init(&l.ul);
    l.last_rv = APR_SUCCESS;
    l.logger.fn = log_rv;
    l.logger.baton = &l;
    ck_assert_int_eq(rs_schema_open(&db, ut_pool, ut_driver,
                                    ut_store(ut_path(ut_tempdir("db"), "state.db")), &l.logger),
                     APR_SUCCESS);
    /* The database cannot grow past its size now (on this connection). */
    ck_assert_int_eq(query_sql(db, "PRAGMA max_page_count = 1", ignore_row, NULL), APR_SUCCESS);
    for (i = 0; i < 1000 && rv == APR_SUCCESS; i++) {
        char *big = apr_pcalloc(ut_pool, 8193);
        memset(big, 'x', 8192);
        rv = rs_db_meta_put(db, apr_itoa(ut_pool, i), big);
    }
    ck_assert_int_eq(rv, APR_ENOSPC);
    ck_assert_int_eq(l.last_rv, APR_ENOSPC);
    ck_assert_int_ge(ut_log_count(&l.ul, "database or disk is full"), 1);

    /* In a transaction: the commit reports the same cause. */
    ck_assert_int_eq(rs_db_begin(db), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(db, "big", apr_psprintf(ut_pool, "%08192d", 0)), APR_ENOSPC);
    ck_assert_int_eq(rs_db_commit(db), APR_ENOSPC);
}
END_TEST

/* A write the system refuses (past a file size limit): the commit fails
 * with a cause that may go away without a restart, so the watcher retries
 * instead of giving up. */
START_TEST(write_failure_is_transient)
{
    ut_log_t ul;
    rs_db_t *db = open_db(&ul);
    struct rlimit old, lim;
    apr_status_t rv = APR_SUCCESS;
    int i;

    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_IGN);
    lim = old;
    lim.rlim_cur = 64 * 1024;
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    for (i = 0; i < 200 && rv == APR_SUCCESS; i++) {
        ck_assert_int_eq(rs_db_begin(db), APR_SUCCESS);
        rs_db_meta_put(db, apr_itoa(ut_pool, i), apr_psprintf(ut_pool, "%08192d", i));
        rv = rs_db_commit(db);
    }
    setrlimit(RLIMIT_FSIZE, &old);
    ck_assert_int_ne(rv, APR_SUCCESS);
    ck_assert_msg(rs_db_transient(rv), "cause %d", rv);
}
END_TEST

/* Which causes may go away without a restart. */
START_TEST(transient_causes)
{
    ck_assert(rs_db_transient(APR_ENOSPC));
    ck_assert(rs_db_transient(APR_FROM_OS_ERROR(EROFS)));
    ck_assert(rs_db_transient(APR_FROM_OS_ERROR(EPERM)));
    ck_assert(rs_db_transient(APR_EACCES));
    ck_assert(rs_db_transient(APR_FROM_OS_ERROR(EIO)));
    ck_assert(rs_db_transient(APR_EBUSY));
    ck_assert(rs_db_transient(APR_FROM_OS_ERROR(EDQUOT)));
    ck_assert(!rs_db_transient(APR_SUCCESS));
    ck_assert(!rs_db_transient(APR_EGENERAL));
    ck_assert(!rs_db_transient(APR_FROM_OS_ERROR(EISDIR)));
}
END_TEST

static void count_row(void *baton, apr_pool_t *p, const char *const *cols, int n)
{
    (void)p;
    (void)n;
    *(int *)baton = cols[0] ? atoi(cols[0]) : -1;
}

START_TEST(rollback_discards)
{
    ut_log_t ul;
    rs_db_t *db = open_db(&ul);
    const char *v = NULL;
    apr_uint64_t s1, s2;
    int n = -1;

    ck_assert_int_eq(rs_db_txn_serial(db), 0);
    ck_assert_int_eq(rs_db_begin(db), APR_SUCCESS);
    s1 = rs_db_txn_serial(db);
    ck_assert_int_ne(s1, 0);
    ck_assert_int_eq(rs_db_meta_put(db, "k", "v"), APR_SUCCESS);
    ck_assert_int_eq(rs_db_rollback(db), APR_SUCCESS);
    ck_assert_int_eq(rs_db_txn_serial(db), 0);
    ck_assert_int_eq(rs_db_meta_get(db, ut_pool, "k", &v), APR_SUCCESS);
    ck_assert_ptr_null(v);
    ck_assert_int_eq(rs_db_begin(db), APR_SUCCESS);
    s2 = rs_db_txn_serial(db);
    ck_assert_int_ne(s2, s1);
    /* Nesting is refused, the open transaction goes on. */
    ck_assert_int_ne(rs_db_begin(db), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(db, "k", "w"), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(db), APR_SUCCESS);
    ck_assert_int_eq(query_sql(db, "SELECT COUNT(*) FROM meta WHERE k = 'k'", count_row, &n),
                     APR_SUCCESS);
    ck_assert_int_eq(n, 1);
}
END_TEST

/* With busy timeout 0, a write that finds another connection's write lock
 * fails with APR_EBUSY after apr_dbd's short retries (mutex released in
 * between), instead of waiting the 10 s of the default busy timeout. */
START_TEST(busy_timeout_zero_fails_fast)
{
    ut_log_t ul1, ul2;
    const char *path = ut_path(ut_tempdir("db"), "state.db");
    rs_db_t *a = open_db_at(&ul1, ut_pool, path), *b = open_db_at(&ul2, ut_pool, path);
    apr_time_t t0;
    apr_status_t rv;

    ck_assert_int_eq(rs_db_begin(a), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(a, "k", "a"), APR_SUCCESS); /* a holds the lock */
    rs_db_busy_timeout(b, 0);
    t0 = apr_time_now();
    rv = rs_db_meta_put(b, "k", "b");
    ck_assert_int_eq(rv, APR_EBUSY);
    ck_assert_int_lt(apr_time_now() - t0, apr_time_from_sec(5));
    ck_assert_int_eq(rs_db_commit(a), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(b, "k", "b"), APR_SUCCESS); /* free again */
}
END_TEST

/* Many statements and transactions on one connection: memory stays flat
 * (every call runs in a pool of its own).  Two probes allocated from the
 * connection's pool before and after are adjacent only if nothing else
 * was allocated from it in between. */
START_TEST(statements_do_not_grow_the_pool)
{
    ut_log_t ul;
    apr_pool_t *p;
    rs_db_t *db;
    char *before, *after;
    const char *v;
    int i;

    apr_pool_create(&p, ut_pool);
    db = open_db_at(&ul, p, ut_path(ut_tempdir("db"), "state.db"));
    ck_assert_int_eq(rs_db_meta_put(db, "k", "v"), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_get(db, ut_pool, "k", &v), APR_SUCCESS);
    ck_assert_int_eq(rs_db_begin(db), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(db), APR_SUCCESS);
    before = apr_palloc(p, 8);
    for (i = 0; i < 2000; i++) {
        apr_pool_t *tp;
        apr_pool_create(&tp, ut_pool);
        ck_assert_int_eq(rs_db_begin(db), APR_SUCCESS);
        ck_assert_int_eq(rs_db_meta_put(db, "k", "v"), APR_SUCCESS);
        ck_assert_int_eq(rs_db_meta_get(db, tp, "k", &v), APR_SUCCESS);
        ck_assert_int_eq(rs_db_commit(db), APR_SUCCESS);
        apr_pool_destroy(tp);
    }
    after = apr_palloc(p, 8);
    ck_assert_msg(after == before + 8, "the connection's pool grew by %ld bytes",
                  (long)(after - before - 8));
}
END_TEST

Suite *db_suite(void)
{
    Suite *s = suite_create("rs_db");
    TCase *tc = ut_tcase("db", 30);
    tcase_add_test(tc, meta);
    tcase_add_test(tc, fresh_database_gets_version);
    tcase_add_test(tc, reopen_keeps_version);
    tcase_add_test(tc, concurrent_first_open);
    tcase_add_test(tc, query_wide_rows);
    tcase_add_test(tc, each_streams_typed_rows);
    tcase_add_test(tc, rollback_discards);
    tcase_add_test(tc, statements_do_not_grow_the_pool);
    suite_add_tcase(s, tc);
    if (ut_pg_building) {
        return s;
    }
    /* SQLite's files: older layouts, a full or read-only file, locks
     * between processes. */
    tc = ut_tcase("db-sqlite", 30);
    tcase_add_test(tc, open_errors);
    tcase_add_test(tc, unversioned_layout_is_migrated);
    tcase_add_test(tc, newer_version_is_refused);
    tcase_add_test(tc, version2_inventory_is_clustered);
    tcase_add_test(tc, full_database_keeps_cause);
    tcase_add_test(tc, write_failure_is_transient);
    tcase_add_test(tc, transient_causes);
    tcase_add_test(tc, busy_timeout_zero_fails_fast);
    suite_add_tcase(s, tc);
    return s;
}
