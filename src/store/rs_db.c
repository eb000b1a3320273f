/* SPDX-License-Identifier: Apache-2.0 */
/* rs_db.c - see rs_db.h */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <apr_strings.h>
#include <apr_hash.h>
#include <apr_dbd.h>
#include "rs_db.h"
#include "rs_db_priv.h"

#define VERSION_KEY "schema-version"

static const char *const meta_sql[] = {
    "SELECT v FROM meta WHERE k = %s",
    "INSERT INTO meta (k, v) VALUES (%s, %s) ON CONFLICT (k) DO UPDATE SET v = excluded.v",
    /* The key's last length(set) + 1 characters are ':' and the set. */
    "DELETE FROM meta WHERE substr(k, length(k) - length(%s)) = ':' || %s",
};

#define SCHEMA_RETRIES 10
#define META_DDL       "CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)"

/* ------------------------------------------------ failures */

const char *rs_db_last_error(const rs_db_t *db)
{
    return db->errmsg;
}

static apr_status_t db_close(void *data)
{
    rs_db_t *db = data;
    /* The native statements of rs_db_each are finalized before this runs:
     * their cleanup (rs_dbrows.c) is registered later on the same pool. */
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
        /* PostgreSQL: the whole (one-row) result at once; apr_dbd's
         * pgsql driver stalls for 100 ms on an empty sequential one. */
        rc = apr_dbd_select(db->drv, p, db->h, &res,
                            "SELECT v FROM meta WHERE k = '" VERSION_KEY "'", db->kind == DB_PGSQL);
    } while (rs_db_drv_schema_changed(db, rc) && ++tries < SCHEMA_RETRIES);
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

/* Bring the database from version - 1 to version in one transaction (not
 * an apr_dbd one: the version is read again once the lock is held, and a
 * failure must not be hidden by the driver's silent rollback). */
static apr_status_t migrate_to(rs_db_t *db, apr_pool_t *p, int version)
{
    apr_array_header_t *steps = db->schema->steps(p, version);
    apr_status_t rv;
    int i, cur = 0;

    if ((rv = rs_db_run(db, rs_db_drv_begin_migration(db))) != APR_SUCCESS) {
        return rv;
    }
    rv = read_version(db, p, &cur);
    for (i = 0; rv == APR_SUCCESS && cur < version && i < steps->nelts; i++) {
        rv = rs_db_run(db, rs_db_drv_ddl(db, p, APR_ARRAY_IDX(steps, i, const char *)));
    }
    if (rv == APR_SUCCESS && cur < version) {
        rv = rs_db_run(db, apr_psprintf(p,
                                        "INSERT INTO meta (k, v) VALUES ('" VERSION_KEY
                                        "', '%d') ON CONFLICT (k) DO UPDATE SET v = excluded.v",
                                        version));
    }
    if (rv != APR_SUCCESS) {
        int n;
        apr_dbd_query(db->drv, db->h, &n, "ROLLBACK");
        return rv;
    }
    if ((rv = rs_db_run(db, "COMMIT")) == APR_SUCCESS && cur < version) {
        rs_log_emit(db->log, RS_LOG_INFO, APR_SUCCESS,
                    "state store: schema version %d "
                    "(from %d%s)",
                    version, cur,
                    cur ? ""
                        : ": a new database, or one "
                          "written before versions were recorded");
    }
    return rv;
}

static apr_status_t migrate(rs_db_t *db, apr_pool_t *p, const char *dsn)
{
    apr_status_t rv;
    int v;

    /* meta holds the version; it is part of every layout, versioned or not. */
    if ((rv = rs_db_run(db, rs_db_drv_meta_ddl(db, p, META_DDL))) != APR_SUCCESS
        || (rv = read_version(db, p, &v)) != APR_SUCCESS) {
        return rv;
    }
    if (v > db->schema->version) {
        rs_log_emit(db->log, RS_LOG_ERR, APR_EGENERAL,
                    "state store: '%s' has schema version "
                    "%d, newer than version %d that this module knows: refusing to use it "
                    "(was it written by a newer mod_resourcesync?)",
                    rs_db_dsn_display(p, db->drv ? apr_dbd_name(db->drv) : "", dsn), v,
                    db->schema->version);
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

/* RS_DB_AS_IS, RS_DB_READONLY: the version recorded, nothing changed
 * (0 when the database has no meta table, a new or foreign file). */
static apr_status_t read_as_is(rs_db_t *db, apr_pool_t *p)
{
    int has = 0;
    apr_status_t rv = rs_db_has_table(db, "meta", &has);
    db->version = 0;
    return rv != APR_SUCCESS || !has ? rv : read_version(db, p, &db->version);
}

/* ------------------------------------------------ connection */

apr_status_t rs_db_open(rs_db_t **out, apr_pool_t *p, const char *driver, const char *dsn,
                        const rs_db_schema_t *schema, const rs_logger_t *log)
{
    return rs_db_open_ex(out, p, driver, dsn, schema, RS_DB_MIGRATE, log, NULL);
}

/* The connection itself: driver, DSN for the mode, checks. */
static apr_status_t db_connect(rs_db_t *db, apr_pool_t *p, const char *driver, const char *dsn,
                               const char **error)
{
    const char *err = NULL, *open_dsn;
    apr_status_t rv;

    apr_dbd_init(p);
    rv = apr_dbd_get_driver(p, driver, &db->drv);
    if (rv != APR_SUCCESS) {
        rs_log_emit(db->log, RS_LOG_ERR, rv, "state store: no apr_dbd driver '%s'", driver);
        return rv;
    }
    db->kind = rs_db_drv_kind(db->drv);
    if (!(open_dsn = rs_db_drv_dsn(db, p, dsn, db->mode))) {
        *error = "the driver cannot open the database read-only";
        rs_log_emit(db->log, RS_LOG_ERR, APR_ENOTIMPL, "state store: cannot open '%s': %s",
                    rs_db_dsn_display(p, driver, dsn), *error);
        return APR_ENOTIMPL;
    }
    rv = apr_dbd_open_ex(db->drv, p, open_dsn, &db->h, &err);
    if (rv != APR_SUCCESS) {
        rv = rs_db_drv_open_status(db, dsn, rv);
        *error = err ? err : "unknown error";
        rs_log_emit(db->log, RS_LOG_ERR, rv, "state store: cannot open '%s': %s",
                    rs_db_dsn_display(p, driver, dsn), *error);
        return rv;
    }
    apr_pool_cleanup_register(p, db, db_close, apr_pool_cleanup_null);
    return rs_db_drv_opened(db, db->mode);
}

apr_status_t rs_db_open_ex(rs_db_t **out, apr_pool_t *p, const char *driver, const char *dsn,
                           const rs_db_schema_t *schema, int mode, const rs_logger_t *log,
                           const char **error)
{
    rs_db_t *db = apr_pcalloc(p, sizeof(*db));
    const char *err = NULL;
    apr_pool_t *tp;
    apr_status_t rv;

    db->pool = p;
    db->dsn = apr_pstrdup(p, dsn);
    db->log = log;
    db->schema = schema;
    db->mode = mode;
    db->stmts = apr_hash_make(p);
    rs_db_drv_init();
    rv = db_connect(db, p, driver, dsn, &err);
    if (rv == APR_SUCCESS) {
        apr_pool_create(&tp, p);
        rv = rs_db_drv_configure(db, tp, mode);
        if (rv == APR_SUCCESS) {
            rv = mode == RS_DB_MIGRATE ? migrate(db, tp, dsn) : read_as_is(db, tp);
        }
        apr_pool_destroy(tp);
    }
    if (!err && db->errmsg[0]) {
        err = db->errmsg;
    }
    if (error) {
        *error = rv == APR_SUCCESS || !err ? NULL : apr_pstrdup(p, err);
    }
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
    case APR_ECONNREFUSED:
    case APR_ECONNRESET:
        return 1;
    default:
        return 0;
    }
}

const char *rs_db_driver(const rs_db_t *db)
{
    return apr_dbd_name(db->drv);
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
    db->fence_set = NULL;
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
    db->txn_end_pool = db->txn_pool;
    if (db->kind == DB_PGSQL) {
        /* (See rs_db_priv.h.)  apr_dbd registers the transaction's end on
         * the pool it starts with and unregisters it from the pool it
         * ends with: the same one.  The first record is made in the
         * connection's pool, to outlive its transaction. */
        db->txn_end_pool = db->txn_kept ? db->txn_pool : db->pool;
        db->txn = db->txn_kept;
        rc = apr_dbd_transaction_start(db->drv, db->txn_end_pool, db->h, &db->txn);
        db->txn_kept = db->txn;
        if (!rc) { /* a kept record may still say "roll back" */
            apr_dbd_transaction_mode_set(db->drv, db->txn, APR_DBD_TRANSACTION_COMMIT);
        }
    }
    else {
        rc = apr_dbd_transaction_start(db->drv, db->txn_pool, db->h, &db->txn);
    }
    if (rc) {
        apr_status_t rv = rs_db_fail(db, rc, "BEGIN");
        if (db->txn) {
            /* The driver keeps a failed BEGIN's transaction: end it. */
            apr_dbd_transaction_mode_set(db->drv, db->txn, APR_DBD_TRANSACTION_ROLLBACK);
            apr_dbd_transaction_end(db->drv, db->txn_end_pool, db->txn);
        }
        txn_done(db);
        return rv;
    }
    db->txn_serial++;
    return APR_SUCCESS;
}

apr_status_t rs_db_end(rs_db_t *db, apr_status_t rv)
{
    if (rv == APR_SUCCESS) {
        return rs_db_commit(db);
    }
    rs_db_rollback(db);
    return rv;
}

static void get_time(void *baton, apr_pool_t *p, const char *const *cols, int n)
{
    (void)p;
    if (n > 0 && cols[0]) {
        *(apr_time_t *)baton = apr_atoi64(cols[0]);
    }
}

apr_status_t rs_db_clock(rs_db_t *db, apr_time_t *now)
{
    const char *sql = rs_db_drv_clock_sql(db);
    rs_db_stmt_t *s;
    apr_status_t rv;

    *now = 0;
    if (!sql) {
        *now = apr_time_now();
        return APR_SUCCESS;
    }
    if ((rv = rs_db_stmt(db, sql, &s)) != APR_SUCCESS) {
        return rv;
    }
    return rs_db_query(db, NULL, s, NULL, get_time, now);
}

/* The process's fence: set once by the watcher before its threads
 * start, read by every thread afterwards. */
static rs_db_fence_fn *fence_fn;
static void *fence_baton;

void rs_db_fence_install(rs_db_fence_fn *fn, void *baton)
{
    fence_fn = fn;
    fence_baton = baton;
}

apr_status_t rs_db_begin_set(rs_db_t *db, const char *set)
{
    apr_status_t rv;

    if (db->no_span) {
        /* SQLite's second writer: no transaction may span statements
         * (rs_db_busy_timeout); the fence is a statement of its own, and
         * each write after it holds the lock only while it runs. */
        return fence_fn ? fence_fn(fence_baton, db, set) : APR_SUCCESS;
    }
    rv = rs_db_begin(db);
    if (rv == APR_SUCCESS && fence_fn && (rv = fence_fn(fence_baton, db, set)) != APR_SUCCESS) {
        rs_db_rollback(db);
    }
    db->fence_set = rv == APR_SUCCESS ? set : NULL;
    db->fence_at = apr_time_now();
    return rv;
}

apr_status_t rs_db_fence_again(rs_db_t *db)
{
    apr_time_t now = apr_time_now();

    if (!db->txn || !db->fence_set || !fence_fn || now - db->fence_at < RS_DB_FENCE_AGAIN) {
        return APR_SUCCESS;
    }
    db->fence_at = now;
    return fence_fn(fence_baton, db, db->fence_set);
}

apr_status_t rs_db_exec_set(rs_db_t *db, const char *set, rs_db_stmt_t *s, const void **args,
                            int *nrows)
{
    apr_status_t rv = rs_db_begin_set(db, set);

    if (nrows) {
        *nrows = 0;
    }
    return rv == APR_SUCCESS ? rs_db_end(db, rs_db_exec(db, s, args, nrows)) : rv;
}

apr_status_t rs_db_commit(rs_db_t *db)
{
    apr_status_t failed;
    int rc;

    if (!db->txn) {
        return APR_SUCCESS;
    }
    failed = db->txn_rv;
    rc = apr_dbd_transaction_end(db->drv, db->txn_end_pool, db->txn);
    txn_done(db);
    if (failed != APR_SUCCESS) {
        /* apr_dbd rolled the transaction back and reports success. */
        rs_log_emit(db->log, RS_LOG_ERR, failed,
                    "state store: a transaction was "
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
    rc = apr_dbd_transaction_end(db->drv, db->txn_end_pool, db->txn);
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
    } while (rs_db_drv_schema_changed(db, rc) && ++tries < SCHEMA_RETRIES);
    return rc ? rs_db_fail(db, rc, sql) : APR_SUCCESS;
}

apr_status_t rs_db_prepare(rs_db_t *db, const char *sql, rs_db_stmt_t **out)
{
    rs_db_stmt_t *s = apr_pcalloc(db->pool, sizeof(*s));
    int rc;

    if (db->kind == DB_PGSQL) {
        apr_status_t rv;
        s->sql = sql;
        if ((rv = rs_db_pg_prepare(db, s)) == APR_SUCCESS) {
            *out = s;
        }
        return rv;
    }
    rc = apr_dbd_prepare(db->drv, db->pool, db->h, sql, NULL, &s->prep);
    if (rc) {
        /* Not from db->pool: a store that keeps failing must not grow it. */
        char what[512];
        apr_snprintf(what, sizeof(what), "preparing \"%s\"", sql);
        return rs_db_fail(db, rc, what);
    }
    s->sql = sql;
    /* Bytes are bound on the native connection (rs_db_exec). */
    s->blobs = strstr(sql, "%pDb") != NULL;
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

void rs_db_stmt_binary(rs_db_stmt_t *s)
{
    s->binary = 1;
}

apr_status_t rs_db_exec(rs_db_t *db, rs_db_stmt_t *s, const void **args, int *nrows)
{
    apr_pool_t *cp;
    apr_status_t rv = APR_SUCCESS;
    int n = 0, rc;

    if (db->kind == DB_PGSQL) {
        return rs_db_pg_run(db, s, args, NULL, NULL, nrows);
    }
    if (s->blobs && db->kind == DB_SQLITE) {
        return rs_db_native_exec(db, s, args, nrows);
    }
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

apr_status_t rs_db_meta_put_set(rs_db_t *db, const char *set, const char *key, const char *value)
{
    const void *args[] = { key, value };
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, meta_sql[1], &s);
    return rv == APR_SUCCESS ? rs_db_exec_set(db, set, s, args, NULL) : rv;
}

apr_status_t rs_db_meta_forget_set(rs_db_t *db, const char *set, int *nrows)
{
    const void *args[] = { set, set };
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, meta_sql[2], &s);
    return rv == APR_SUCCESS ? rs_db_exec(db, s, args, nrows) : rv;
}

static void get_count(void *baton, apr_pool_t *p, const char *const *cols, int n)
{
    (void)p;
    *(int *)baton = n > 0 && cols[0] && atoi(cols[0]) > 0;
}

apr_status_t rs_db_has_table(rs_db_t *db, const char *name, int *exists)
{
    const char *sql = rs_db_drv_table_sql(db);
    const void *args[] = { name };
    rs_db_stmt_t *s;
    apr_status_t rv;

    *exists = 0;
    if (!sql) {
        return APR_ENOTIMPL;
    }
    rv = rs_db_stmt(db, sql, &s);
    return rv == APR_SUCCESS ? rs_db_query(db, NULL, s, args, get_count, exists) : rv;
}
