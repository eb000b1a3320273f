/* rs_schema.c - see rs_schema.h */
#include "rs_schema.h"
#include "rs_hubsub.h"
#include "rs_inventory.h"
#include "rs_journal.h"
#include "rs_notify.h"

/* The units with tables, in the order their tables are created. */
typedef const char *const *schema_fn(int version);
static schema_fn *const units[] = { rs_inventory_schema, rs_journal_schema, rs_notify_schema,
                                   rs_hubsub_schema, NULL };

apr_array_header_t *rs_schema_steps(apr_pool_t *p, int version)
{
    apr_array_header_t *out = apr_array_make(p, 8, sizeof(const char *));
    int u, i;

    for (u = 0; units[u]; u++) {
        const char *const *sql = units[u](version);
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

apr_status_t rs_schema_open_ex(rs_db_t **out, apr_pool_t *p, const char *driver,
                               const char *dsn, int mode, const rs_logger_t *log,
                               const char **error)
{
    return rs_db_open_ex(out, p, driver, dsn, &schema, mode, log, error);
}
