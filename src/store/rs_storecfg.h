/* SPDX-License-Identifier: Apache-2.0 */
/* rs_storecfg.h - which state store a process opens: the apr_dbd driver
 * and its connection string, in one place.
 *
 * ResourceSyncStore names the store once (server config); the glue fills
 * one rs_storecfg_t from it at post_config and every opener of the store
 * (the watcher's connection and its retry, the job thread's, the
 * children's read connection, rs-tool) opens it through
 * rs_storecfg_open, so that no opener spells a driver or a path.  The
 * default is SQLite in the state directory (rs_statedir_db), opened
 * exactly as before the directive existed.  An opener handed no
 * configuration (NULL) opens that default: engine units that know only
 * the state directory (and their unit tests) keep doing so.
 *
 * A PostgreSQL DSN may carry a password: it is never logged nor shown;
 * messages name the store by rs_storecfg_describe.
 *
 * The struct is filled once and read-only afterwards (shared by every
 * process forked after post_config); its strings live as long as it.
 */
#ifndef RS_STORECFG_H
#define RS_STORECFG_H

#include <apr_pools.h>
#include <apr_time.h>
#include "rs_db.h"
#include "rs_log.h"

/* The kinds of store (ResourceSyncStore's first word). */
#define RS_STORECFG_SQLITE "sqlite"
#define RS_STORECFG_PGSQL  "pgsql"

typedef struct rs_storecfg_t {
    const char *kind;   /* RS_STORECFG_SQLITE or RS_STORECFG_PGSQL */
    const char *driver; /* its apr_dbd driver: "sqlite3" or "pgsql" */
    const char *dsn;    /* the connection string (a file for SQLite) */
    /* ResourceSyncFailover: how long a set's lease (rs_lease) lasts
     * without a renewal; 0 until resolved. */
    apr_interval_time_t failover;
} rs_storecfg_t;

/* ResourceSyncFailover's default and bounds. */
#define RS_STORECFG_FAILOVER     apr_time_from_sec(10)
#define RS_STORECFG_FAILOVER_MIN apr_time_from_sec(2)
#define RS_STORECFG_FAILOVER_MAX apr_time_from_sec(3600)

/* c: SQLite in statedir (<statedir>/state.db), strings from p. */
void rs_storecfg_sqlite(rs_storecfg_t *c, apr_pool_t *p, const char *statedir);

/* c: PostgreSQL at dsn, a libpq connection string (kept, not copied). */
void rs_storecfg_pgsql(rs_storecfg_t *c, const char *dsn);

/* Whether c is a PostgreSQL store (NULL: the default, SQLite). */
int rs_storecfg_is_pgsql(const rs_storecfg_t *c);

/* The store as a tool's option gives it: "sqlite" (the state directory's,
 * statedir) or "pgsql:DSN".  NULL on success, else the reason (from p). */
const char *rs_storecfg_parse(rs_storecfg_t *c, apr_pool_t *p, const char *spec,
                              const char *statedir);

/* The store for messages and the status page, never with a password:
 * "SQLite in ResourceSyncStateDir '<statedir>'" when c is NULL or
 * SQLite, else "PostgreSQL store '<dsn as rs_db_dsn_display shows it>'" (from p). */
const char *rs_storecfg_describe(const rs_storecfg_t *c, apr_pool_t *p, const char *statedir);

/* Whether the apr_dbd driver of kind is installed (apr_dbd_get_driver);
 * NULL if so, else what to install (from p).  Loads the driver, so call
 * it while the configuration is read, never in a request. */
const char *rs_storecfg_check_driver(const rs_storecfg_t *c, apr_pool_t *p);

/* The driver and connection string of c, or of the default when c is
 * NULL (SQLite in statedir; the string from p). */
const char *rs_storecfg_driver(const rs_storecfg_t *c);
const char *rs_storecfg_dsn(const rs_storecfg_t *c, apr_pool_t *p, const char *statedir);

/* Open the store c names (NULL: SQLite in statedir) with the module's
 * schema (rs_schema_open; its result), and with c's failover time as the
 * limit of an idle transaction (rs_db_idle_limit). */
apr_status_t rs_storecfg_open(rs_db_t **out, apr_pool_t *p, const rs_storecfg_t *c,
                              const char *statedir, const rs_logger_t *log);

#endif
