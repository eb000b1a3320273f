/* SPDX-License-Identifier: Apache-2.0 */
/* rs_storecfg.c - see rs_storecfg.h */
#include <string.h>
#include <apr_dbd.h>
#include <apr_strings.h>
#include "rs_schema.h"
#include "rs_statedir.h"
#include "rs_storecfg.h"

void rs_storecfg_sqlite(rs_storecfg_t *c, apr_pool_t *p, const char *statedir)
{
    c->kind = RS_STORECFG_SQLITE;
    c->driver = RS_STATEDIR_DB_DRIVER;
    c->dsn = rs_statedir_db(p, statedir);
}

void rs_storecfg_pgsql(rs_storecfg_t *c, const char *dsn)
{
    c->kind = RS_STORECFG_PGSQL;
    c->driver = "pgsql";
    c->dsn = dsn;
}

int rs_storecfg_is_pgsql(const rs_storecfg_t *c)
{
    return c && !strcmp(c->kind, RS_STORECFG_PGSQL);
}

const char *rs_storecfg_parse(rs_storecfg_t *c, apr_pool_t *p, const char *spec,
                              const char *statedir)
{
    static const char pg[] = RS_STORECFG_PGSQL ":";

    if (!strcmp(spec, RS_STORECFG_SQLITE)) {
        rs_storecfg_sqlite(c, p, statedir);
        return NULL;
    }
    if (!strncmp(spec, pg, sizeof(pg) - 1)) {
        if (!spec[sizeof(pg) - 1]) {
            return "pgsql: needs a connection string (pgsql:DSN)";
        }
        rs_storecfg_pgsql(c, spec + sizeof(pg) - 1);
        return NULL;
    }
    return apr_psprintf(p, "'%s' is not sqlite or pgsql:DSN", spec);
}

const char *rs_storecfg_describe(const rs_storecfg_t *c, apr_pool_t *p, const char *statedir)
{
    if (!rs_storecfg_is_pgsql(c)) {
        return apr_psprintf(p, "SQLite in ResourceSyncStateDir '%s'", statedir);
    }
    return apr_psprintf(p, "PostgreSQL store '%s'", rs_db_dsn_display(p, c->driver, c->dsn));
}

const char *rs_storecfg_check_driver(const rs_storecfg_t *c, apr_pool_t *p)
{
    const apr_dbd_driver_t *drv;
    apr_status_t rv;
    char buf[120];

    apr_dbd_init(p);
    rv = apr_dbd_get_driver(p, c->driver, &drv);
    if (rv == APR_SUCCESS) {
        return NULL;
    }
    return apr_psprintf(p, "the apr_dbd driver '%s' cannot be loaded (%s): install %s", c->driver,
                        rv == APR_ENOTIMPL ? "not installed" : apr_strerror(rv, buf, sizeof(buf)),
                        rs_storecfg_is_pgsql(c) ? "libaprutil1-dbd-pgsql (Debian) or APR-util's "
                                                  "pgsql DBD driver"
                                                : "libaprutil1-dbd-sqlite3 (Debian) or APR-util's "
                                                  "sqlite3 DBD driver");
}

const char *rs_storecfg_driver(const rs_storecfg_t *c)
{
    return c ? c->driver : RS_STATEDIR_DB_DRIVER;
}

const char *rs_storecfg_dsn(const rs_storecfg_t *c, apr_pool_t *p, const char *statedir)
{
    return c ? c->dsn : rs_statedir_db(p, statedir);
}

apr_status_t rs_storecfg_open(rs_db_t **out, apr_pool_t *p, const rs_storecfg_t *c,
                              const char *statedir, const rs_logger_t *log)
{
    apr_status_t rv =
        rs_schema_open(out, p, rs_storecfg_driver(c), rs_storecfg_dsn(c, p, statedir), log);
    /* A writer frozen or cut off inside a transaction holds its set's
     * lease row: the server ends such a session after the failover time,
     * so that the lease can be taken over (rs_db_idle_limit). */
    if (rv == APR_SUCCESS && c && c->failover > 0
        && (rv = rs_db_idle_limit(*out, (int)apr_time_as_msec(c->failover))) != APR_SUCCESS) {
        *out = NULL; /* (closed with p) */
    }
    return rv;
}
