/* SPDX-License-Identifier: Apache-2.0 */
/* rs_notifydest.c - the delivery destinations (see rs_notifydest.h). */
#include <apr_strings.h>
#include "rs_notifydest.h"

static const char *const sql[] = {
#define Q_LIST 0
    "SELECT setname, topic, kind, url, secret, lease_until, cursor, attempts, next_try,"
    " last_status, last_error FROM notify_dests ORDER BY setname, topic, kind, url",
#define Q_ENSURE 1
    "INSERT INTO notify_dests (setname, topic, kind, url, cursor) VALUES (%s, %s, %s, %s, %lld)"
    " ON CONFLICT (setname, topic, kind, url) DO NOTHING",
#define Q_DELETE 2
    "DELETE FROM notify_dests WHERE setname = %s AND topic = %s AND kind = %s AND url = %s",
#define Q_UPDATE 3
    "UPDATE notify_dests SET cursor = %lld, attempts = %d, next_try = %lld, last_status = %d,"
    " last_error = %s WHERE setname = %s AND topic = %s AND kind = %s AND url = %s",
#define Q_BACKLOG 4
    "SELECT COUNT(*), COALESCE((SELECT MAX(id) FROM notifications WHERE setname = %s"
    " AND topic = %s AND sealed = 1), 0) FROM notifications WHERE setname = %s"
    " AND topic = %s AND sealed = 1 AND id > %lld",
#define Q_MIN 5
    "SELECT COUNT(*), COALESCE(MIN(cursor), 0) FROM notify_dests WHERE setname = %s"
    " AND topic = %s AND kind = %s",
};

/* A write of set's row: in a transaction of its own that begins with the
 * set's fence (rs_db_exec_set). */
static apr_status_t exec(rs_db_t *db, const char *set, int which, const void **args, int *nrows)
{
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, sql[which], &s);
    return rv == APR_SUCCESS ? rs_db_exec_set(db, set, s, args, nrows) : rv;
}

static apr_int64_t num(const char *v)
{
    return v ? apr_atoi64(v) : 0;
}

static const char *str(apr_pool_t *p, const char *v)
{
    return v && *v ? apr_pstrdup(p, v) : NULL;
}

static void row(void *baton, apr_pool_t *p, const char *const *c, int n)
{
    rs_notifydest_t *d;
    if (n < 11) {
        return;
    }
    d = apr_array_push(baton);
    d->set = apr_pstrdup(p, c[0]);
    d->topic = apr_pstrdup(p, c[1]);
    d->kind = apr_pstrdup(p, c[2]);
    d->url = apr_pstrdup(p, c[3]);
    d->secret = str(p, c[4]);
    d->lease_until = num(c[5]);
    d->cursor = num(c[6]);
    d->attempts = (int)num(c[7]);
    d->next_try = num(c[8]);
    d->last_status = (int)num(c[9]);
    d->last_error = str(p, c[10]);
}

apr_status_t rs_notifydest_list(rs_db_t *db, apr_pool_t *p, apr_array_header_t **out)
{
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, sql[Q_LIST], &s);
    *out = apr_array_make(p, 8, sizeof(rs_notifydest_t));
    return rv == APR_SUCCESS ? rs_db_query(db, p, s, NULL, row, *out) : rv;
}

apr_status_t rs_notifydest_ensure(rs_db_t *db, const char *set, const char *topic, const char *kind,
                                  const char *url, apr_int64_t cursor, int *added)
{
    const void *args[] = { set, topic, kind, url, &cursor };
    int n = 0;
    apr_status_t rv = exec(db, set, Q_ENSURE, args, &n);
    if (added) {
        *added = n > 0;
    }
    return rv;
}

apr_status_t rs_notifydest_delete(rs_db_t *db, const rs_notifydest_t *d)
{
    const void *args[] = { d->set, d->topic, d->kind, d->url };
    return exec(db, d->set, Q_DELETE, args, NULL);
}

apr_status_t rs_notifydest_update(rs_db_t *db, const rs_notifydest_t *d, int *found)
{
    const void *args[] = { &d->cursor, &d->attempts, &d->next_try, &d->last_status, d->last_error,
                           d->set,     d->topic,     d->kind,      d->url };
    int n = 0;
    apr_status_t rv = exec(db, d->set, Q_UPDATE, args, &n);
    if (found) {
        *found = n > 0;
    }
    return rv;
}

typedef struct {
    apr_int64_t count, newest;
} backlog_t;

static void backlog_row(void *baton, apr_pool_t *p, const char *const *c, int n)
{
    backlog_t *b = baton;
    (void)p;
    if (n >= 2) {
        b->count = num(c[0]);
        b->newest = num(c[1]);
    }
}

apr_status_t rs_notifydest_backlog(rs_db_t *db, const char *set, const char *topic,
                                   apr_int64_t after, apr_int64_t *count, apr_int64_t *newest)
{
    const void *args[] = { set, topic, set, topic, &after };
    backlog_t b = { 0, 0 };
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, sql[Q_BACKLOG], &s);
    if (rv == APR_SUCCESS) {
        rv = rs_db_query(db, NULL, s, args, backlog_row, &b);
    }
    *count = b.count;
    *newest = b.newest;
    return rv;
}

apr_status_t rs_notifydest_min_cursor(rs_db_t *db, const char *set, const char *topic,
                                      const char *kind, apr_int64_t *min, int *found)
{
    const void *args[] = { set, topic, kind };
    backlog_t b = { 0, 0 };
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, sql[Q_MIN], &s);
    if (rv == APR_SUCCESS) {
        rv = rs_db_query(db, NULL, s, args, backlog_row, &b);
    }
    *found = b.count > 0;
    *min = b.newest;
    return rv;
}
