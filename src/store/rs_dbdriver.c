/* SPDX-License-Identifier: Apache-2.0 */
/* rs_dbdriver.c - what the state store's database layer does differently
 * for each driver (see rs_db.h and rs_db_priv.h).
 *
 * Everything of rs_db that depends on which database runs is here: the
 * process-wide setup, the DSN of a read-only open, the connection's
 * settings, the status of a failure, the retry after a schema change, the
 * statement that opens a migration, the busy timeout, whether a table
 * exists, the translation of the units' DDL, the online backup and the
 * removal of a database's files, for SQLite ("sqlite3") and PostgreSQL
 * ("pgsql", apr_dbd's driver over libpq; where apr_dbd hides what libpq
 * knows, the native PGconn is asked).  (rs_dbrows.c steps SQLite
 * statements and PostgreSQL's single-row results of its own for
 * rs_db_each, and goes through apr_dbd for any other driver.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <errno.h>
#include <unistd.h>
#include <apr_strings.h>
#include <apr_dbd.h>
#include <sqlite3.h>
#include "rs_db.h"
#include "rs_db_priv.h"
#include "rs_uri.h"

/* ------------------------------------------------ process and open */

/* Whether SQLite takes "file:" URIs (a read-only open needs them): it
 * was built to, or this process told it to before it initialized. */
static int uri_ok;

void rs_db_drv_init(void)
{
    /* No memory statistics: they take a global mutex around every
     * allocation of SQLite's.  URI file names: a read-only open says
     * "mode=ro" in its DSN (apr_dbd's driver opens with sqlite3_open,
     * which takes no flags).  Only possible before SQLite initializes
     * (the first open in the process); later calls fail harmlessly. */
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    if (sqlite3_config(SQLITE_CONFIG_URI, 1) == SQLITE_OK
        || sqlite3_compileoption_used("SQLITE_USE_URI")) {
        uri_ok = 1;
    }
}

void rs_db_one_thread_per_connection(void)
{
    (void)sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
}

int rs_db_drv_kind(const apr_dbd_driver_t *drv)
{
    const char *name = apr_dbd_name(drv);
    return !strcmp(name, "sqlite3") ? DB_SQLITE : !strcmp(name, "pgsql") ? DB_PGSQL : DB_OTHER;
}

const char *rs_db_drv_dsn(const rs_db_t *db, apr_pool_t *p, const char *dsn, int mode)
{
    if (mode != RS_DB_READONLY) {
        return dsn;
    }
    if (db->kind == DB_SQLITE) {
        /* The file's name as a URI path ('?', '#' and '%' escaped), opened
         * read-only: SQLite then never writes it, nor creates it. */
        return uri_ok ? apr_pstrcat(p, "file:", rs_uri_escape_path(p, dsn), "?mode=ro", NULL)
                      : NULL;
    }
    if (db->kind == DB_PGSQL) {
        /* The DSN as it is; the session is made read-only in
         * rs_db_drv_configure. */
        return dsn;
    }
    return NULL;
}

apr_status_t rs_db_drv_opened(rs_db_t *db, int mode)
{
    if (db->kind == DB_PGSQL) {
        return rs_db_pg_opened(db);
    }
    if (db->kind == DB_SQLITE && mode == RS_DB_READONLY) {
        sqlite3 *conn = apr_dbd_native_handle(db->drv, db->h);
        /* Never write through a connection that was meant to be read-only. */
        if (!conn || sqlite3_db_readonly(conn, "main") != 1) {
            apr_cpystrn(db->errmsg, "the database was not opened read-only", sizeof(db->errmsg));
            return APR_EGENERAL;
        }
    }
    return APR_SUCCESS;
}

/* Settings a connection needs before anything else runs. */
apr_status_t rs_db_drv_configure(rs_db_t *db, apr_pool_t *p, int mode)
{
    if (db->kind == DB_PGSQL) {
        return rs_db_pg_configure(db, mode);
    }
    if (db->kind == DB_SQLITE) {
        apr_dbd_results_t *res = NULL;
        apr_dbd_row_t *row = NULL;
        int n;
        /* The busy timeout comes first: switching a new file to WAL waits
         * for another connection doing the same. */
        apr_dbd_query(db->drv, db->h, &n, "PRAGMA busy_timeout=10000");
        if (mode == RS_DB_MIGRATE) {
            /* WAL lets other connections read while the watcher writes;
             * NORMAL syncs at checkpoints, which keeps a committed
             * transaction across a crash of any process (not necessarily
             * across a power loss).  journal_mode answers with a row,
             * hence the select.  A tool's connection (RS_DB_AS_IS,
             * RS_DB_READONLY) leaves the database's journal mode as it is
             * and syncs as SQLite does by default. */
            apr_dbd_select(db->drv, p, db->h, &res, "PRAGMA journal_mode=WAL", 0);
            while (res && apr_dbd_get_row(db->drv, p, res, &row, -1) == 0) {
            }
            apr_dbd_query(db->drv, db->h, &n, "PRAGMA synchronous=NORMAL");
        }
        /* No memory-mapped I/O of the database file: a write to a mapped
         * page that the file system cannot back (a full disk) or a file
         * that shrank under the mapping raises SIGBUS instead of
         * returning an error.  The -shm index stays mapped (WAL needs
         * it); SQLite allocates its pages with write() first, so a full
         * disk is an error there too. */
        apr_dbd_query(db->drv, db->h, &n, "PRAGMA mmap_size=0");
    }
    return APR_SUCCESS;
}

apr_status_t rs_db_busy_timeout(rs_db_t *db, int ms)
{
    if (db->kind == DB_SQLITE) {
        sqlite3 *h = apr_dbd_native_handle(db->drv, db->h);
        db->no_span = ms <= 0;
        return h && sqlite3_busy_timeout(h, ms) == SQLITE_OK ? APR_SUCCESS : APR_EGENERAL;
    }
    if (db->kind == DB_PGSQL) {
        return rs_db_pg_lock_timeout(db, ms);
    }
    return APR_ENOTIMPL;
}

apr_status_t rs_db_xact_lock(rs_db_t *db, const char *name)
{
    return db->kind == DB_PGSQL ? rs_db_pg_xact_lock(db, name) : APR_SUCCESS;
}

apr_status_t rs_db_idle_limit(rs_db_t *db, int ms)
{
    return db->kind == DB_PGSQL ? rs_db_pg_idle_limit(db, ms) : APR_SUCCESS;
}

apr_status_t rs_db_analyze(rs_db_t *db, const char *table)
{
    char sql[128];
    int n, rc;

    if (db->kind != DB_PGSQL || db->mode == RS_DB_READONLY) {
        return APR_SUCCESS;
    }
    apr_snprintf(sql, sizeof(sql), "ANALYZE %s", table);
    rc = apr_dbd_query(db->drv, db->h, &n, sql);
    return rc ? rs_db_fail(db, rc, sql) : APR_SUCCESS;
}

/* ------------------------------------------------ failures */

apr_status_t rs_db_fail(rs_db_t *db, int rc, const char *what)
{
    apr_status_t rv;
    rs_db_drv_error(db, rc);
    rv = rs_db_drv_status(db, rc);
    if (db->txn && db->txn_rv == APR_SUCCESS) {
        db->txn_rv = rv; /* the driver will roll back at the end */
    }
    rs_log_emit(db->log, RS_LOG_ERR, rv, "state store: %s failed: %s", what, db->errmsg);
    return rv;
}

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

void rs_db_drv_error(rs_db_t *db, int rc)
{
    const char *msg = apr_dbd_error(db->drv, db->h, rc);
    db->sqlstate[0] = '\0';
    if (db->kind == DB_PGSQL) {
        rs_db_pg_error(db, msg);
        return;
    }
    apr_cpystrn(db->errmsg, msg ? msg : "", sizeof(db->errmsg));
}

apr_status_t rs_db_drv_open_status(const rs_db_t *db, const char *dsn, apr_status_t rv)
{
    if (db->kind == DB_PGSQL) {
        return rs_db_pg_open_status(dsn);
    }
    return rv;
}

/* The apr_status_t for a driver's failure.  apr_dbd's SQLite driver
 * returns SQLITE_ERROR for most failures of a (legacy) prepared
 * statement, so the connection's own error code is asked first. */
apr_status_t rs_db_drv_status(rs_db_t *db, int rc)
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
        case SQLITE_FULL:
            return APR_ENOSPC;
        case SQLITE_READONLY:
            return APR_EROFS;
        case SQLITE_PERM:
        case SQLITE_CANTOPEN:
            return APR_EACCES;
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            return APR_EBUSY;
        case SQLITE_IOERR:
            return APR_EIO;
        default:
            return APR_EGENERAL;
        }
    }
    if (db->kind == DB_PGSQL) {
        return rs_db_pg_status(db);
    }
    return APR_EGENERAL;
}

/* Did a statement fail only because another connection changed the
 * schema between its preparation and its execution?  apr_dbd's SQLite
 * driver prepares with the legacy API, which leaves the retry to us: a
 * statement prepared for one call (not a kept one) is simply run again. */
int rs_db_drv_schema_changed(rs_db_t *db, int rc)
{
    if (db->kind == DB_SQLITE && rc && !db->txn) {
        sqlite3 *conn = apr_dbd_native_handle(db->drv, db->h);
        return rc == SQLITE_SCHEMA || (conn && sqlite3_errcode(conn) == SQLITE_SCHEMA);
    }
    return 0;
}

/* ------------------------------------------------ the store's clock */

const char *rs_db_drv_clock_sql(const rs_db_t *db)
{
    /* The server's clock: one clock for every node. */
    return db->kind == DB_PGSQL ? "SELECT " RS_DB_PG_NOW : NULL; /* one node: apr_time_now() */
}

int rs_db_one_node(const rs_db_t *db)
{
    return db->kind != DB_PGSQL;
}

const char *rs_db_drv_notify_sql(const rs_db_t *db)
{
    /* Delivered at commit to every session LISTENing: the followers. */
    return db->kind == DB_PGSQL ? "SELECT pg_notify(%s, %s)" : NULL;
}

/* ------------------------------------------------ statements */

char *rs_db_drv_markers(rs_db_t *db, rs_db_stmt_t *s, int dollar)
{
    apr_size_t n = strlen(s->sql);
    /* "$n" takes at most 4 bytes where its marker took at least 2. */
    char *q = apr_palloc(db->pool, 2 * n + 1), *d = q;
    const char *c;

    s->types = apr_palloc(db->pool, n / 2 + 1);
    s->nargs = 0;
    s->blobs = 0;
    for (c = s->sql; *c;) {
        int len = c[0] == '%' && (c[1] == 's' || c[1] == 'd')        ? 2
                  : !strncmp(c, "%lld", 4) || !strncmp(c, "%pDb", 4) ? 4
                                                                     : 0;
        if (len) {
            s->types[s->nargs++] = len == 2 ? c[1] : c[1] == 'p' ? 'b' : 'l';
            s->blobs += c[1] == 'p';
            d += dollar ? sprintf(d, "$%d", s->nargs) : sprintf(d, "?");
            c += len;
        }
        else if (c[0] == '%') {
            rs_log_emit(db->log, RS_LOG_ERR, APR_ENOTIMPL,
                        "state store: unsupported marker "
                        "in \"%s\"",
                        s->sql);
            return NULL;
        }
        else {
            *d++ = *c++;
        }
    }
    *d = '\0';
    return q;
}

/* ------------------------------------------------ schema */

/* PostgreSQL: a transaction holding the migration lock of the current
 * schema, a transaction-level advisory lock (released at its end, also
 * when the connection is lost).  Every connection that creates or
 * migrates the tables takes it first: two that run CREATE TABLE IF NOT
 * EXISTS together may otherwise both find the table missing, and one
 * fails on the catalog's unique index. */
#define PG_MIGRATION_LOCK                                                              \
    "BEGIN; SELECT pg_advisory_xact_lock(hashtextextended('resourcesync:migrate:' || " \
    "current_schema(), 0))"

/* The statement that opens a migration's transaction: it takes the write
 * lock at once, so that of two connections opening a database together,
 * one migrates and the other waits and then finds the version done. */
const char *rs_db_drv_begin_migration(const rs_db_t *db)
{
    if (db->kind == DB_SQLITE) {
        return "BEGIN IMMEDIATE"; /* waits up to busy_timeout for the lock */
    }
    if (db->kind == DB_PGSQL) {
        return PG_MIGRATION_LOCK; /* waits up to lock_timeout */
    }
    return "BEGIN";
}

const char *rs_db_drv_meta_ddl(const rs_db_t *db, apr_pool_t *p, const char *sql)
{
    if (db->kind == DB_PGSQL) {
        /* One string, run by PQexec as one statement after the other;
         * a failure leaves the transaction, which migrate_to's ROLLBACK
         * or the connection's end ends. */
        return apr_pstrcat(p, PG_MIGRATION_LOCK "; ", rs_db_drv_ddl(db, p, sql), "; COMMIT", NULL);
    }
    return sql;
}

const char *rs_db_drv_ddl(const rs_db_t *db, apr_pool_t *p, const char *sql)
{
    return db->kind == DB_PGSQL ? rs_db_pg_ddl(p, sql) : sql;
}

const char *rs_db_drv_table_sql(const rs_db_t *db)
{
    if (db->kind == DB_PGSQL) {
        return "SELECT COUNT(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema() "
               "AND tablename = CAST(%s AS TEXT)";
    }
    if (db->kind != DB_SQLITE) {
        return NULL;
    }
    return "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = %s";
}

/* ------------------------------------------------ files */

/* Remember a failure of SQLite's own connection conn (or code rc when
 * it has none) as the connection db's last error; its status. */
static apr_status_t native_fail(rs_db_t *db, sqlite3 *conn, int rc, const char *msg)
{
    apr_cpystrn(db->errmsg,
                msg    ? msg
                : conn ? sqlite3_errmsg(conn)
                       : sqlite3_errstr(rc),
                sizeof(db->errmsg));
    switch (rc & 0xff) {
    case SQLITE_FULL:
        return APR_ENOSPC;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return APR_EBUSY;
    case SQLITE_PERM:
    case SQLITE_CANTOPEN:
        return APR_EACCES;
    case SQLITE_IOERR:
        return APR_EIO;
    default:
        return APR_EGENERAL;
    }
}

/* The first complaint of integrity_check on conn, or NULL when it says
 * "ok" (then also *rc SQLITE_OK). */
static char *integrity(sqlite3 *conn, int *rc)
{
    sqlite3_stmt *st = NULL;
    char *bad = NULL;
    *rc = sqlite3_prepare_v2(conn, "PRAGMA integrity_check", -1, &st, NULL);
    if (*rc == SQLITE_OK && (*rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(st, 0);
        bad = v && strcmp(v, "ok") ? sqlite3_mprintf("%s", v) : NULL;
        *rc = bad ? SQLITE_CORRUPT : SQLITE_OK;
    }
    sqlite3_finalize(st);
    return bad;
}

/* The copy on SQLite's own connection to path: apr_dbd has no backup.
 * The source is the connection's native handle, used outside apr_dbd's
 * mutex as rs_db_each does (a connection is used by one thread at a
 * time). */
apr_status_t rs_db_backup(rs_db_t *db, const char *path)
{
    sqlite3 *src, *dst = NULL;
    sqlite3_backup *b;
    apr_status_t rv = APR_SUCCESS;
    char *bad = NULL;
    int rc;

    if (db->kind != DB_SQLITE) {
        /* PostgreSQL: pg_dump is the operator's tool. */
        return APR_ENOTIMPL;
    }
    src = apr_dbd_native_handle(db->drv, db->h);
    rc = sqlite3_open_v2(path, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL);
    if (rc != SQLITE_OK) {
        rv = native_fail(db, dst, rc, NULL);
    }
    else if (!(b = sqlite3_backup_init(dst, "main", src, "main"))) {
        rv = native_fail(db, dst, sqlite3_errcode(dst), NULL);
    }
    else {
        /* Pages changed by another connection during the copy make it
         * start over, which step(-1) does in one go; a lock held by a
         * writer is waited for. */
        while ((rc = sqlite3_backup_step(b, -1)) == SQLITE_BUSY || rc == SQLITE_LOCKED) {
            sqlite3_sleep(100);
        }
        sqlite3_backup_finish(b);
        if (rc != SQLITE_DONE) {
            rv = native_fail(db, NULL, rc, sqlite3_errstr(rc));
        }
        else if ((rc = sqlite3_exec(dst, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL))
                 != SQLITE_OK) {
            rv = native_fail(db, dst, rc, NULL);
        }
        else if ((bad = integrity(dst, &rc)) || rc != SQLITE_OK) {
            rv = native_fail(db, dst, rc, bad);
        }
    }
    sqlite3_free(bad);
    sqlite3_close(dst);
    return rv;
}

apr_status_t rs_db_remove(apr_pool_t *p, const char *driver, const char *dsn)
{
    static const char *const ext[] = { "-wal", "-shm", "-journal", "" };
    apr_status_t rv = APR_SUCCESS;
    int i;

    if (strcmp(driver, "sqlite3")) {
        return APR_ENOTIMPL; /* a server's database is dropped by its operator */
    }
    for (i = 0; i < 4; i++) {
        if (unlink(apr_pstrcat(p, dsn, ext[i], NULL)) != 0 && errno != ENOENT) {
            rv = APR_FROM_OS_ERROR(errno);
        }
    }
    return rv;
}
