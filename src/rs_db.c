/* rs_db.c - see rs_db.h */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <apr_strings.h>
#include <apr_hash.h>
#include <apr_dbd.h>
#include <sqlite3.h>
#include "rs_db.h"
#include "rs_db_priv.h"

#define VERSION_KEY "schema-version"

static const char *const meta_sql[] = {
    "SELECT v FROM meta WHERE k = %s",
    "INSERT INTO meta (k, v) VALUES (%s, %s) ON CONFLICT (k) DO UPDATE SET v = excluded.v",
};

/* ------------------------------------------------ driver differences */

/* Why a SQLite connection is read-only when SQLite does not say: it
 * opened the database read-only because it could not open a file for
 * writing.  The first of the files that the connection cannot write
 * gives the cause: EPERM (immutable), EROFS, EACCES; 0 if none. */
static int readonly_cause(const rs_db_t *db)
{
    static const char *const ext[] = { "", "-wal", "-shm" };
    char path[4096];
    int i;

    for (i = 0; db->dsn && i < 3; i++) {
        apr_snprintf(path, sizeof(path), "%s%s", db->dsn, ext[i]);
        if (access(path, W_OK) != 0 && errno != ENOENT) {
            return errno;
        }
    }
    return 0;
}

#ifndef APR_EIO
#define APR_EIO APR_FROM_OS_ERROR(EIO)
#endif
#ifndef APR_EROFS
#define APR_EROFS APR_FROM_OS_ERROR(EROFS)
#endif

/* The apr_status_t for a driver's failure.  apr_dbd's SQLite driver
 * returns SQLITE_ERROR for most failures of a (legacy) prepared
 * statement, so the connection's own error code is asked first. */
static apr_status_t status_of(rs_db_t *db, int rc)
{
    if (db->kind == DB_SQLITE) {
        sqlite3 *conn = apr_dbd_native_handle(db->drv, db->h);
        int code = conn ? sqlite3_errcode(conn) : SQLITE_OK;
        int sys = 0;
        if (code == SQLITE_OK || code == SQLITE_ERROR) {
            code = rc;
        }
        switch (code & 0xff) {
        case SQLITE_FULL:
        case SQLITE_READONLY:
        case SQLITE_PERM:
        case SQLITE_CANTOPEN:
        case SQLITE_IOERR:
            /* The system's own cause where SQLite knows it: ENOSPC,
             * EROFS, EPERM (an immutable file), EDQUOT, EISDIR ... */
            sys = conn ? sqlite3_system_errno(conn) : 0;
            break;
        default:
            break;
        }
        if (sys <= 0 && (code & 0xff) == SQLITE_READONLY) {
            sys = readonly_cause(db);
        }
        if (sys > 0) {
            return APR_FROM_OS_ERROR(sys);
        }
        switch (code & 0xff) {
        case SQLITE_FULL:     return APR_ENOSPC;
        case SQLITE_READONLY: return APR_EROFS;
        case SQLITE_PERM:
        case SQLITE_CANTOPEN: return APR_EACCES;
        case SQLITE_BUSY:
        case SQLITE_LOCKED:   return APR_EBUSY;
        case SQLITE_IOERR:    return APR_EIO;
        default:              return APR_EGENERAL;
        }
    }
    /* PostgreSQL: map the driver's codes here when it is wired up. */
    return APR_EGENERAL;
}

/* Did a statement fail only because another connection changed the
 * schema between its preparation and its execution?  apr_dbd's SQLite
 * driver prepares with the legacy API, which leaves the retry to us: a
 * statement prepared for one call (not a kept one) is simply run again. */
static int schema_changed(rs_db_t *db, int rc)
{
    if (db->kind == DB_SQLITE && rc && !db->txn) {
        sqlite3 *conn = apr_dbd_native_handle(db->drv, db->h);
        return rc == SQLITE_SCHEMA || (conn && sqlite3_errcode(conn) == SQLITE_SCHEMA);
    }
    return 0;
}

#define SCHEMA_RETRIES 10

/* Settings a connection needs before anything else runs. */
static apr_status_t configure(rs_db_t *db, apr_pool_t *p)
{
    if (db->kind == DB_SQLITE) {
        apr_dbd_results_t *res = NULL;
        apr_dbd_row_t *row = NULL;
        int n;
        /* WAL lets other connections read while the watcher writes;
         * NORMAL syncs at checkpoints, which keeps a committed transaction
         * across a crash of any process (not necessarily across a power
         * loss).  journal_mode answers with a row, hence the select.  The
         * busy timeout comes first: switching a new file to WAL waits for
         * another connection doing the same. */
        apr_dbd_query(db->drv, db->h, &n, "PRAGMA busy_timeout=10000");
        apr_dbd_select(db->drv, p, db->h, &res, "PRAGMA journal_mode=WAL", 0);
        while (res && apr_dbd_get_row(db->drv, p, res, &row, -1) == 0) {
        }
        apr_dbd_query(db->drv, db->h, &n, "PRAGMA synchronous=NORMAL");
        /* No memory-mapped I/O of the database file: a write to a mapped
         * page that the file system cannot back (a full disk) or a file
         * that shrank under the mapping raises SIGBUS instead of
         * returning an error.  The -shm index stays mapped (WAL needs
         * it); SQLite allocates its pages with write() first, so a full
         * disk is an error there too. */
        apr_dbd_query(db->drv, db->h, &n, "PRAGMA mmap_size=0");
    }
    /* PostgreSQL settings (search_path, statement_timeout, ...) go here. */
    return APR_SUCCESS;
}

apr_status_t rs_db_busy_timeout(rs_db_t *db, int ms)
{
    if (db->kind == DB_SQLITE) {
        sqlite3 *h = apr_dbd_native_handle(db->drv, db->h);
        return h && sqlite3_busy_timeout(h, ms) == SQLITE_OK ? APR_SUCCESS : APR_EGENERAL;
    }
    return APR_ENOTIMPL;
}

/* ------------------------------------------------ failures */

apr_status_t rs_db_fail(rs_db_t *db, int rc, const char *what)
{
    apr_status_t rv = status_of(db, rc);
    if (db->txn && db->txn_rv == APR_SUCCESS) {
        db->txn_rv = rv;   /* the driver will roll back at the end */
    }
    rs_log_emit(db->log, RS_LOG_ERR, rv, "state store: %s failed: %s",
                what, apr_dbd_error(db->drv, db->h, rc));
    return rv;
}

static apr_status_t db_close(void *data)
{
    rs_db_t *db = data;
    int i;
    for (i = 0; db->natives && i < db->natives->nelts; i++) {
        sqlite3_finalize(APR_ARRAY_IDX(db->natives, i, sqlite3_stmt *));
    }
    db->natives = NULL;
    if (db->h) {
        apr_dbd_close(db->drv, db->h);
        db->h = NULL;
    }
    return APR_SUCCESS;
}

/* ------------------------------------------------ schema version */

/* The recorded version (0: none), read without a prepared statement. */
static apr_status_t read_version(rs_db_t *db, apr_pool_t *p, int *version)
{
    apr_dbd_results_t *res = NULL;
    apr_dbd_row_t *row = NULL;
    int rc, tries = 0;

    do {
        res = NULL;
        rc = apr_dbd_select(db->drv, p, db->h, &res,
                            "SELECT v FROM meta WHERE k = '" VERSION_KEY "'", 0);
    } while (schema_changed(db, rc) && ++tries < SCHEMA_RETRIES);
    *version = 0;
    if (rc) {
        return rs_db_fail(db, rc, "reading the schema version");
    }
    while ((rc = apr_dbd_get_row(db->drv, p, res, &row, -1)) == 0) {
        const char *v = apr_dbd_get_entry(db->drv, row, 0);
        *version = v ? atoi(v) : 0;
    }
    return rc == -1 ? APR_SUCCESS : rs_db_fail(db, rc, "reading the schema version");
}

/* The statement that opens a migration's transaction: it takes the write
 * lock at once, so that of two connections opening a database together,
 * one migrates and the other waits and then finds the version done. */
static const char *begin_migration(const rs_db_t *db)
{
    if (db->kind == DB_SQLITE) {
        return "BEGIN IMMEDIATE";   /* waits up to busy_timeout for the lock */
    }
    /* PostgreSQL: BEGIN, then LOCK TABLE meta IN EXCLUSIVE MODE. */
    return "BEGIN";
}

/* Bring the database from version - 1 to version in one transaction (not
 * an apr_dbd one: the version is read again once the lock is held, and a
 * failure must not be hidden by the driver's silent rollback). */
static apr_status_t migrate_to(rs_db_t *db, apr_pool_t *p, int version)
{
    apr_array_header_t *steps = db->schema->steps(p, version);
    apr_status_t rv;
    int i, cur = 0;

    if ((rv = rs_db_run(db, begin_migration(db))) != APR_SUCCESS) {
        return rv;
    }
    rv = read_version(db, p, &cur);
    for (i = 0; rv == APR_SUCCESS && cur < version && i < steps->nelts; i++) {
        rv = rs_db_run(db, APR_ARRAY_IDX(steps, i, const char *));
    }
    if (rv == APR_SUCCESS && cur < version) {
        rv = rs_db_run(db, apr_psprintf(p, "INSERT INTO meta (k, v) VALUES ('" VERSION_KEY
                                        "', '%d') ON CONFLICT (k) DO UPDATE SET v = excluded.v",
                                        version));
    }
    if (rv != APR_SUCCESS) {
        int n;
        apr_dbd_query(db->drv, db->h, &n, "ROLLBACK");
        return rv;
    }
    if ((rv = rs_db_run(db, "COMMIT")) == APR_SUCCESS && cur < version) {
        rs_log_emit(db->log, RS_LOG_INFO, APR_SUCCESS, "state store: schema version %d "
                    "(from %d%s)", version, cur, cur ? "" : ": a new database, or one "
                    "written before versions were recorded");
    }
    return rv;
}

static apr_status_t migrate(rs_db_t *db, apr_pool_t *p, const char *dsn)
{
    apr_status_t rv;
    int v;

    /* meta holds the version; it is part of every layout, versioned or not. */
    if ((rv = rs_db_run(db, "CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)"))
        != APR_SUCCESS || (rv = read_version(db, p, &v)) != APR_SUCCESS) {
        return rv;
    }
    if (v > db->schema->version) {
        rs_log_emit(db->log, RS_LOG_ERR, APR_EGENERAL, "state store: '%s' has schema version "
                    "%d, newer than version %d that this module knows: refusing to use it "
                    "(was it written by a newer mod_resourcesync?)", dsn, v, db->schema->version);
        return APR_EGENERAL;
    }
    for (; v < db->schema->version; v++) {
        if ((rv = migrate_to(db, p, v + 1)) != APR_SUCCESS) {
            return rv;
        }
    }
    db->version = v;
    return APR_SUCCESS;
}

/* ------------------------------------------------ connection */

void rs_db_one_thread_per_connection(void)
{
    (void)sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
}

apr_status_t rs_db_open(rs_db_t **out, apr_pool_t *p, const char *driver, const char *dsn,
                        const rs_db_schema_t *schema, const rs_logger_t *log)
{
    rs_db_t *db = apr_pcalloc(p, sizeof(*db));
    const char *err = NULL;
    apr_pool_t *tp;
    apr_status_t rv;

    db->pool = p;
    db->dsn = apr_pstrdup(p, dsn);
    db->log = log;
    db->schema = schema;
    db->stmts = apr_hash_make(p);
    /* No memory statistics: they take a global mutex around every
     * allocation of SQLite's.  Only possible before SQLite initializes
     * (the first open in the process); later calls fail harmlessly. */
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    db->natives = apr_array_make(p, 4, sizeof(sqlite3_stmt *));
    apr_dbd_init(p);
    rv = apr_dbd_get_driver(p, driver, &db->drv);
    if (rv != APR_SUCCESS) {
        rs_log_emit(log, RS_LOG_ERR, rv, "state store: no apr_dbd driver '%s'", driver);
        return rv;
    }
    rv = apr_dbd_open_ex(db->drv, p, dsn, &db->h, &err);
    if (rv != APR_SUCCESS) {
        rs_log_emit(log, RS_LOG_ERR, rv, "state store: cannot open '%s': %s",
                    dsn, err ? err : "unknown error");
        return rv;
    }
    apr_pool_cleanup_register(p, db, db_close, apr_pool_cleanup_null);
    db->kind = !strcmp(apr_dbd_name(db->drv), "sqlite3") ? DB_SQLITE : DB_OTHER;
    apr_pool_create(&tp, p);
    rv = configure(db, tp);
    if (rv == APR_SUCCESS) {
        rv = migrate(db, tp, dsn);
    }
    apr_pool_destroy(tp);
    if (rv == APR_SUCCESS) {
        *out = db;
    }
    return rv;
}

int rs_db_transient(apr_status_t rv)
{
    switch (rv) {
    case APR_ENOSPC:
    case APR_EROFS:
    case APR_EACCES:
    case APR_EBUSY:
    case APR_EIO:
    case APR_FROM_OS_ERROR(EPERM):
    case APR_FROM_OS_ERROR(EDQUOT):
    case APR_FROM_OS_ERROR(EFBIG):
    case APR_FROM_OS_ERROR(EAGAIN):
    case APR_FROM_OS_ERROR(ENOMEM):
        return 1;
    default:
        return 0;
    }
}

int rs_db_schema_version(const rs_db_t *db)
{
    return db->version;
}

apr_pool_t *rs_db_pool(const rs_db_t *db)
{
    return db->pool;
}

/* ------------------------------------------------ transactions */

/* Forget the transaction after its end (rolled back or committed). */
static void txn_done(rs_db_t *db)
{
    db->txn = NULL;
    db->txn_rv = APR_SUCCESS;
    apr_pool_destroy(db->txn_pool);
    db->txn_pool = NULL;
}

apr_status_t rs_db_begin(rs_db_t *db)
{
    int rc;
    if (db->txn) {
        rs_log_emit(db->log, RS_LOG_ERR, APR_EINVAL, "state store: BEGIN inside a transaction");
        return APR_EINVAL;
    }
    apr_pool_create(&db->txn_pool, db->pool);
    db->txn_rv = APR_SUCCESS;
    rc = apr_dbd_transaction_start(db->drv, db->txn_pool, db->h, &db->txn);
    if (rc) {
        apr_status_t rv = rs_db_fail(db, rc, "BEGIN");
        if (db->txn) {
            /* The driver keeps a failed BEGIN's transaction: end it. */
            apr_dbd_transaction_mode_set(db->drv, db->txn, APR_DBD_TRANSACTION_ROLLBACK);
            apr_dbd_transaction_end(db->drv, db->txn_pool, db->txn);
        }
        txn_done(db);
        return rv;
    }
    db->txn_serial++;
    return APR_SUCCESS;
}

apr_status_t rs_db_commit(rs_db_t *db)
{
    apr_status_t failed;
    int rc;

    if (!db->txn) {
        return APR_SUCCESS;
    }
    failed = db->txn_rv;
    rc = apr_dbd_transaction_end(db->drv, db->txn_pool, db->txn);
    txn_done(db);
    if (failed != APR_SUCCESS) {
        /* apr_dbd rolled the transaction back and reports success. */
        rs_log_emit(db->log, RS_LOG_ERR, failed, "state store: a transaction was "
                    "rolled back after a failed statement");
        return failed;
    }
    return rc ? rs_db_fail(db, rc, "COMMIT") : APR_SUCCESS;
}

apr_status_t rs_db_rollback(rs_db_t *db)
{
    int rc;
    if (!db->txn) {
        return APR_SUCCESS;
    }
    apr_dbd_transaction_mode_set(db->drv, db->txn, APR_DBD_TRANSACTION_ROLLBACK);
    rc = apr_dbd_transaction_end(db->drv, db->txn_pool, db->txn);
    txn_done(db);
    return rc ? rs_db_fail(db, rc, "ROLLBACK") : APR_SUCCESS;
}

apr_uint64_t rs_db_txn_serial(const rs_db_t *db)
{
    return db->txn ? db->txn_serial : 0;
}

/* ------------------------------------------------ statements */

apr_status_t rs_db_run(rs_db_t *db, const char *sql)
{
    int n, rc, tries = 0;
    do {
        rc = apr_dbd_query(db->drv, db->h, &n, sql);
    } while (schema_changed(db, rc) && ++tries < SCHEMA_RETRIES);
    return rc ? rs_db_fail(db, rc, sql) : APR_SUCCESS;
}

apr_status_t rs_db_prepare(rs_db_t *db, const char *sql, rs_db_stmt_t **out)
{
    rs_db_stmt_t *s = apr_pcalloc(db->pool, sizeof(*s));
    int rc = apr_dbd_prepare(db->drv, db->pool, db->h, sql, NULL, &s->prep);
    if (rc) {
        /* Not from db->pool: a store that keeps failing must not grow it. */
        char what[512];
        apr_snprintf(what, sizeof(what), "preparing \"%s\"", sql);
        return rs_db_fail(db, rc, what);
    }
    s->sql = sql;
    *out = s;
    return APR_SUCCESS;
}

apr_status_t rs_db_stmt(rs_db_t *db, const char *sql, rs_db_stmt_t **out)
{
    apr_status_t rv;
    *out = apr_hash_get(db->stmts, &sql, sizeof(sql));
    if (*out) {
        return APR_SUCCESS;
    }
    rv = rs_db_prepare(db, sql, out);
    if (rv == APR_SUCCESS) {
        const char **key = apr_palloc(db->pool, sizeof(*key));
        *key = sql;
        apr_hash_set(db->stmts, key, sizeof(*key), *out);
    }
    return rv;
}

apr_status_t rs_db_exec(rs_db_t *db, rs_db_stmt_t *s, const void **args, int *nrows)
{
    apr_pool_t *cp;
    apr_status_t rv = APR_SUCCESS;
    int n = 0, rc;

    apr_pool_create(&cp, db->pool);
    rc = apr_dbd_pbquery(db->drv, cp, db->h, &n, s->prep, args);
    if (rc) {
        rv = rs_db_fail(db, rc, s->sql);
    }
    else if (nrows) {
        *nrows = n;
    }
    apr_pool_destroy(cp);
    return rv;
}

apr_status_t rs_db_query(rs_db_t *db, apr_pool_t *p, rs_db_stmt_t *s, const void **args,
                         rs_db_row_fn *fn, void *baton)
{
    apr_dbd_results_t *res = NULL;
    apr_dbd_row_t *row = NULL;
    apr_pool_t *cp, *rp;
    const char **cols;
    apr_status_t rv = APR_SUCCESS;
    int rc, n, i;

    apr_pool_create(&cp, db->pool);
    rc = apr_dbd_pbselect(db->drv, cp, db->h, &res, s->prep, 0, args);
    if (rc) {
        rv = rs_db_fail(db, rc, s->sql);
        apr_pool_destroy(cp);
        return rv;
    }
    n = apr_dbd_num_cols(db->drv, res);
    cols = apr_pcalloc(cp, sizeof(*cols) * (n > 0 ? n : 1));
    /* Drivers that fetch row by row allocate each row: a pool per row. */
    apr_pool_create(&rp, cp);
    while ((rc = apr_dbd_get_row(db->drv, rp, res, &row, -1)) == 0) {
        for (i = 0; i < n; i++) {
            cols[i] = apr_dbd_get_entry(db->drv, row, i);
        }
        fn(baton, p, cols, n);
        apr_pool_clear(rp);
    }
    if (rc != -1) {
        rv = rs_db_fail(db, rc, s->sql);
    }
    apr_pool_destroy(cp);
    return rv;
}

/* ------------------------------------------------ meta */

static void get_str(void *baton, apr_pool_t *p, const char *const *cols, int n)
{
    *(const char **)baton = (n > 0 && cols[0] && *cols[0]) ? apr_pstrdup(p, cols[0]) : NULL;
}

apr_status_t rs_db_meta_get(rs_db_t *db, apr_pool_t *p, const char *key, const char **value)
{
    const void *args[] = { key };
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, meta_sql[0], &s);
    *value = NULL;
    return rv == APR_SUCCESS ? rs_db_query(db, p, s, args, get_str, value) : rv;
}

apr_status_t rs_db_meta_put(rs_db_t *db, const char *key, const char *value)
{
    const void *args[] = { key, value };
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, meta_sql[1], &s);
    return rv == APR_SUCCESS ? rs_db_exec(db, s, args, NULL) : rv;
}
