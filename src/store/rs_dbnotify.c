/* SPDX-License-Identifier: Apache-2.0 */
/* rs_dbnotify.c - rs_db_notify (see rs_db.h): a notification to the other
 * nodes of a shared store, sent at most once per channel and payload in a
 * transaction (PostgreSQL delivers it at commit, never for a rollback);
 * nothing on SQLite. */
#include <string.h>
#include <apr_strings.h>
#include "rs_db.h"
#include "rs_db_priv.h"

/* rs_db_row_fn of a select whose row says nothing (pg_notify's void). */
static void ignore_row(void *baton, apr_pool_t *p, const char *const *cols, int n)
{
    (void)baton, (void)p, (void)cols, (void)n;
}

apr_status_t rs_db_notify(rs_db_t *db, const char *channel, const char *payload)
{
    const char *sql = rs_db_drv_notify_sql(db);
    const void *args[2];
    rs_db_stmt_t *s;
    apr_status_t rv;
    const char *key = NULL;

    if (!sql) {
        return APR_SUCCESS;
    }
    if (db->txn) {
        key = apr_pstrcat(db->txn_pool, channel, " ", payload, NULL);
    }
    if (key && db->notify_serial == db->txn_serial && !strcmp(db->notified, key)) {
        return APR_SUCCESS; /* sent in this transaction already */
    }
    if ((rv = rs_db_stmt(db, sql, &s)) != APR_SUCCESS) {
        return rv;
    }
    args[0] = channel;
    args[1] = payload;
    if ((rv = rs_db_query(db, NULL, s, args, ignore_row, NULL)) == APR_SUCCESS && key) {
        db->notify_serial = db->txn_serial;
        db->notified = key;
    }
    return rv;
}
