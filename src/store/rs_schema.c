/* SPDX-License-Identifier: Apache-2.0 */
/* rs_schema.c - see rs_schema.h */
#include <apr_strings.h>
#include "rs_schema.h"
#include "rs_blob.h"
#include "rs_hubqueue.h"
#include "rs_hubsub.h"
#include "rs_inventory.h"
#include "rs_journal.h"
#include "rs_journal_sql.h"
#include "rs_lease.h"
#include "rs_linkdep.h"
#include "rs_notify.h"

/* The units with tables, in the order their tables are created: the DDL
 * of each version, and the tables (none: columns in another unit's). */
typedef struct {
    const char *const *(*schema)(int version);
    const char *const *(*tables)(void);
} unit_t;

static const unit_t units[] = { { rs_inventory_schema, rs_inventory_tables },
                                { rs_journal_schema, rs_journal_tables },
                                { rs_notify_schema, rs_notify_tables },
                                { rs_hubsub_schema, NULL },
                                { rs_linkdep_schema, rs_linkdep_tables },
                                { rs_lease_schema, rs_lease_tables },
                                { rs_blob_schema, rs_blob_tables },
                                { rs_hubqueue_schema, rs_hubqueue_tables },
                                { NULL, NULL } };

apr_array_header_t *rs_schema_steps(apr_pool_t *p, int version)
{
    apr_array_header_t *out = apr_array_make(p, 8, sizeof(const char *));
    int u, i;

    for (u = 0; units[u].schema; u++) {
        const char *const *sql = units[u].schema(version);
        for (i = 0; sql && sql[i]; i++) {
            APR_ARRAY_PUSH(out, const char *) = sql[i];
        }
    }
    return out;
}

static const rs_db_schema_t schema = { RS_SCHEMA_VERSION, rs_schema_steps };

apr_status_t rs_schema_open(rs_db_t **out, apr_pool_t *p, const char *driver, const char *dsn,
                            const rs_logger_t *log)
{
    return rs_db_open(out, p, driver, dsn, &schema, log);
}

apr_status_t rs_schema_open_ex(rs_db_t **out, apr_pool_t *p, const char *driver, const char *dsn,
                               int mode, const rs_logger_t *log, const char **error)
{
    return rs_db_open_ex(out, p, driver, dsn, &schema, mode, log, error);
}

apr_array_header_t *rs_schema_tables(apr_pool_t *p)
{
    apr_array_header_t *out = apr_array_make(p, 8, sizeof(const char *));
    int u, i;

    for (u = 0; units[u].schema; u++) {
        const char *const *t = units[u].tables ? units[u].tables() : NULL;
        for (i = 0; t && t[i]; i++) {
            APR_ARRAY_PUSH(out, const char *) = t[i];
        }
    }
    return out;
}

/* The tables of the store that db has (an older schema lacks some). */
static apr_status_t present(rs_db_t *db, apr_pool_t *p, apr_array_header_t **out)
{
    apr_array_header_t *all = rs_schema_tables(p);
    apr_status_t rv = APR_SUCCESS;
    int i, has;

    *out = apr_array_make(p, all->nelts, sizeof(const char *));
    for (i = 0; rv == APR_SUCCESS && i < all->nelts; i++) {
        const char *t = APR_ARRAY_IDX(all, i, const char *);
        if ((rv = rs_db_has_table(db, t, &has)) == APR_SUCCESS && has) {
            APR_ARRAY_PUSH(*out, const char *) = t;
        }
    }
    return rv;
}

static void get_any(void *baton, apr_pool_t *p, const char *const *cols, int n)
{
    (void)p;
    (void)cols;
    *(int *)baton = n > 0;
}

/* The statements below are made of a table name of the units' lists
 * (no quoting needed) and prepared once per call: for a tool's few
 * calls, not for a loop (each stays with the connection). */

apr_status_t rs_schema_set_exists(rs_db_t *db, apr_pool_t *p, const char *set, int *exists)
{
    const void *args[] = { set };
    apr_array_header_t *tables;
    rs_db_stmt_t *s;
    apr_status_t rv = present(db, p, &tables);
    int i;

    *exists = 0;
    for (i = 0; rv == APR_SUCCESS && !*exists && i < tables->nelts; i++) {
        const char *sql = apr_pstrcat(p, "SELECT 1 FROM ", APR_ARRAY_IDX(tables, i, const char *),
                                      " WHERE setname = %s LIMIT 1", NULL);
        if ((rv = rs_db_prepare(db, sql, &s)) == APR_SUCCESS) {
            rv = rs_db_query(db, NULL, s, args, get_any, exists);
        }
    }
    return rv;
}

apr_status_t rs_schema_forget_set(rs_db_t *db, apr_pool_t *p, const char *set, apr_int64_t *rows)
{
    const void *args[] = { set };
    apr_array_header_t *tables;
    rs_db_stmt_t *s;
    apr_status_t rv = present(db, p, &tables);
    int i, n = 0;

    *rows = 0;
    for (i = 0; rv == APR_SUCCESS && i < tables->nelts; i++) {
        const char *sql = apr_pstrcat(p, "DELETE FROM ", APR_ARRAY_IDX(tables, i, const char *),
                                      " WHERE setname = %s", NULL);
        if ((rv = rs_db_prepare(db, sql, &s)) == APR_SUCCESS
            && (rv = rs_db_exec(db, s, args, &n)) == APR_SUCCESS) {
            *rows += n;
        }
    }
    if (rv == APR_SUCCESS && (rv = rs_db_meta_forget_set(db, set, &n)) == APR_SUCCESS) {
        *rows += n;
    }
    return rv;
}
