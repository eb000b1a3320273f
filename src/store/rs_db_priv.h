/* SPDX-License-Identifier: Apache-2.0 */
/* rs_db_priv.h - what the files of the state store's database layer
 * share (rs_db.c: connections, statements, transactions; rs_dbrows.c:
 * streamed rows; rs_dbdriver.c: what differs between drivers).  Not for
 * other units: they see rs_db.h only. */
#ifndef RS_DB_PRIV_H
#define RS_DB_PRIV_H

#include <errno.h>
#include <apr_hash.h>
#include <apr_dbd.h>
#include <sqlite3.h>
#include <libpq-fe.h>
#include "rs_db.h"

enum { DB_SQLITE, DB_PGSQL, DB_OTHER };

#ifndef APR_EIO
#define APR_EIO APR_FROM_OS_ERROR(EIO)
#endif
#ifndef APR_EROFS
#define APR_EROFS APR_FROM_OS_ERROR(EROFS)
#endif

struct rs_db_t {
    apr_pool_t *pool; /* the connection's lifetime */
    const apr_dbd_driver_t *drv;
    apr_dbd_t *h;
    const char *dsn; /* SQLite: the database file */
    const rs_logger_t *log;
    int kind;                     /* DB_* */
    int mode;                     /* RS_DB_MIGRATE, _AS_IS, _READONLY */
    int version;                  /* schema version */
    const rs_db_schema_t *schema; /* what rs_db_open brings it to */
    apr_hash_t *stmts;            /* sql address -> rs_db_stmt_t (rs_db_stmt) */
    /* The open transaction: its pool lives from BEGIN to its end, so a
     * connection that runs many transactions does not grow. */
    apr_pool_t *txn_pool;
    apr_dbd_transaction_t *txn;
    apr_status_t txn_rv;     /* first failure inside it, or APR_SUCCESS */
    apr_uint64_t txn_serial; /* counts BEGINs */
    /* rs_db_notify's last channel and payload in transaction
     * notify_serial (in txn_pool): not sent again in it. */
    apr_uint64_t notify_serial;
    const char *notified;
    /* PostgreSQL: the driver's transaction record, made (in pool) at the
     * first BEGIN and handed to every later one: APR-util's pgsql
     * driver writes through *trans when BEGIN fails (the server gone),
     * and a NULL one crashes the process. */
    apr_dbd_transaction_t *txn_kept;
    apr_pool_t *txn_end_pool; /* the pool the open transaction started with */
    int pg_stmts;             /* PostgreSQL: statements prepared on the server */
    /* SQLite with busy timeout 0 (a second writer of its process): a
     * set's writes run without a transaction around them (rs_db_begin_set). */
    int no_span;
    /* The set whose fence began the open transaction (rs_db_begin_set;
     * NULL: none) and when it last ran (rs_db_fence_again). */
    const char *fence_set;
    apr_time_t fence_at;
    /* SQLite statements of rs_db_each (sqlite3_stmt *), finalized
     * before the connection is closed. */
    apr_array_header_t *natives;
    /* The driver's message of the last failure (rs_db_last_error). */
    char errmsg[256];
    /* PostgreSQL: the SQLSTATE of the last failure ("" when unknown),
     * which rs_db_drv_status maps. */
    char sqlstate[6];
};

/* Lifecycle: lives as long as the connection.  native (SQLite, rs_db_each
 * only) is prepared at its first use and kept; it is reset after every
 * run, so it holds no read snapshot between runs. */
struct rs_db_stmt_t {
    apr_dbd_prepared_t *prep; /* not for PostgreSQL's: see rs_db_pg_run */
    const char *pg_name;      /* PostgreSQL: the name prepared on the server, or NULL */
    const char *sql;
    sqlite3_stmt *native;
    char *types; /* per argument: 's', 'd', 'l' (%lld), 'b' (%pDb) */
    int nargs;
    int blobs;  /* arguments of type 'b' */
    int binary; /* results in binary form (rs_db_stmt_binary) */
};

/* A row of rs_db_each: SQLite's statement on its row, PostgreSQL's
 * result of one row, or else (other drivers) the row's columns as text. */
struct rs_db_row_t {
    sqlite3_stmt *native;
    PGresult *pg;
    const char *const *cols;
    int ncols;
};

/* rs_dbpg.c: PostgreSQL's own part of rs_dbdriver.c (which calls it for
 * db->kind DB_PGSQL): the database's encoding checked at open; the
 * session's settings (client_min_messages, lock_timeout, read-only);
 * lock_timeout as the busy timeout; the message of a failure (msg, the
 * driver's verbose text) into db->errmsg with its SQLSTATE into
 * db->sqlstate; the status of the last failure; the status of a failed
 * open of dsn; a DDL statement translated (in p). */
apr_status_t rs_db_pg_opened(rs_db_t *db);
apr_status_t rs_db_pg_configure(rs_db_t *db, int mode);
apr_status_t rs_db_pg_lock_timeout(rs_db_t *db, int ms);
apr_status_t rs_db_pg_idle_limit(rs_db_t *db, int ms);
apr_status_t rs_db_pg_xact_lock(rs_db_t *db, const char *name);
void rs_db_pg_error(rs_db_t *db, const char *msg);
apr_status_t rs_db_pg_status(rs_db_t *db);
apr_status_t rs_db_pg_open_status(const char *dsn);
const char *rs_db_pg_ddl(apr_pool_t *p, const char *sql);

/* s->sql with apr_dbd's markers (%s, %d, %lld) made the driver's
 * parameters ("?" for SQLite, "$n" with dollar for PostgreSQL), their
 * types kept in s for binding (from db's pool); NULL (logged) for a
 * marker apr_dbd does not have. */
char *rs_db_drv_markers(rs_db_t *db, rs_db_stmt_t *s, int dollar);

/* rs_dbrows.c: a statement of PostgreSQL's run on the native connection
 * (libpq), for rs_db_exec, rs_db_query and rs_db_each: prepared on the
 * server at its first run, its rows handed to fn one by one as libpq's
 * single-row mode reads them (fn NULL: none expected); *nrows (may be
 * NULL) gets the rows a command changed. */
apr_status_t rs_db_pg_run(rs_db_t *db, rs_db_stmt_t *s, const void **args, rs_db_each_fn *fn,
                          void *baton, int *nrows);

/* rs_dbrows.c: a statement with byte arguments (s->blobs) run on
 * SQLite's native connection (rs_db_exec); *nrows as rs_db_exec's. */
apr_status_t rs_db_native_exec(rs_db_t *db, rs_db_stmt_t *s, const void **args, int *nrows);

/* Prepare s (its sql set) on PostgreSQL's server, as rs_db_pg_run does
 * at the first run. */
apr_status_t rs_db_pg_prepare(rs_db_t *db, rs_db_stmt_t *s);

/* Log a failed statement (what) with the driver's message and return
 * the status of its cause; inside a transaction the first failure is
 * remembered for rs_db_commit. */
apr_status_t rs_db_fail(rs_db_t *db, int rc, const char *what);


/* rs_dbdriver.c: what depends on the driver (db->kind), and rs_db_fail
 * (above). */
/* The query counting the tables named %s (NULL: none for this driver). */
const char *rs_db_drv_table_sql(const rs_db_t *db);

/* DB_SQLITE, DB_PGSQL or DB_OTHER, from apr_dbd's driver. */
int rs_db_drv_kind(const apr_dbd_driver_t *drv);

/* Process-wide settings of the drivers, before the first connection. */
void rs_db_drv_init(void);

/* The DSN that opens dsn in mode (RS_DB_*), or NULL when the driver
 * cannot open it so (in p). */
const char *rs_db_drv_dsn(const rs_db_t *db, apr_pool_t *p, const char *dsn, int mode);

/* Checks of a connection just opened in mode: APR_SUCCESS, or the
 * failure (db->errmsg says why). */
apr_status_t rs_db_drv_opened(rs_db_t *db, int mode);

/* The connection's settings for mode, before anything else runs. */
apr_status_t rs_db_drv_configure(rs_db_t *db, apr_pool_t *p, int mode);

/* The driver's message of its failure rc, into db->errmsg (PostgreSQL:
 * its first line, the SQLSTATE kept in db->sqlstate). */
void rs_db_drv_error(rs_db_t *db, int rc);

/* The apr_status_t of the driver's failure code rc (after
 * rs_db_drv_error). */
apr_status_t rs_db_drv_status(rs_db_t *db, int rc);

/* The status of a failed open of dsn (rv from apr_dbd_open_ex). */
apr_status_t rs_db_drv_open_status(const rs_db_t *db, const char *dsn, apr_status_t rv);

/* A DDL statement of the units (written for SQLite) as the driver runs
 * it (in p); SQLite's is the statement itself. */
const char *rs_db_drv_ddl(const rs_db_t *db, apr_pool_t *p, const char *sql);

/* The statement(s) that create the meta table, so that connections that
 * open a new database together create it once. */
const char *rs_db_drv_meta_ddl(const rs_db_t *db, apr_pool_t *p, const char *sql);

/* Whether a statement outside a transaction failed (rc) only because
 * another connection changed the schema meanwhile: then it is run again. */
int rs_db_drv_schema_changed(rs_db_t *db, int rc);

/* The statement that opens a migration's transaction and takes the
 * write lock at once. */
const char *rs_db_drv_begin_migration(const rs_db_t *db);
/* The statement that reads the store's clock in µs (a literal), or NULL
 * when it is the process's (rs_db_clock). */
const char *rs_db_drv_clock_sql(const rs_db_t *db);
/* The statement that notifies channel %s with payload %s, or NULL when
 * no other node follows the store (rs_db_notify). */
const char *rs_db_drv_notify_sql(const rs_db_t *db);

#endif
