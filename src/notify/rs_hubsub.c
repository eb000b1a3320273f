/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubsub.c - see rs_hubsub.h */
#include <string.h>
#include <apr_strings.h>
#include "rs_hubsub.h"
#include "rs_lease.h"

enum { S_GET, S_PUT, S_DELETE, S_LIST, S_EXPIRED, S_DELETE_EXPIRED, S_COUNTS, S_MAX };

#define COLS  "setname, topic, url, secret, lease_until, cursor, cb_addr, client"
#define NCOLS 8

static const char *const sql[S_MAX] = {
    "SELECT " COLS " FROM notify_dests WHERE setname = %s AND topic = %s AND kind = 'sub' "
    "AND url = %s",
    /* A new subscriber starts after the newest sealed notification; a
     * renewal keeps its cursor and delivery state. */
    "INSERT INTO notify_dests (setname, topic, kind, url, secret, lease_until, cb_addr, client,"
    " cursor) VALUES (%s, %s, 'sub', %s, %s, %lld, %s, %s, (SELECT COALESCE(MAX(id), 0) "
    "FROM notifications WHERE setname = %s AND topic = %s AND sealed = 1)) "
    "ON CONFLICT (setname, topic, kind, url) DO UPDATE SET secret = excluded.secret, "
    "lease_until = excluded.lease_until, cb_addr = excluded.cb_addr, "
    "client = excluded.client",
    "DELETE FROM notify_dests WHERE setname = %s AND topic = %s AND kind = 'sub' AND url = %s",
    "SELECT " COLS " FROM notify_dests WHERE kind = 'sub' ORDER BY setname, topic, url",
    "SELECT " COLS " FROM notify_dests WHERE kind = 'sub' AND lease_until < %lld "
    "ORDER BY setname, topic, url",
    /* Not if renewed since it was listed. */
    ("DELETE FROM notify_dests WHERE setname = %s AND topic = %s AND kind = 'sub' AND url = %s "
     "AND lease_until < %lld"),
    "SELECT setname, topic, COUNT(*) FROM notify_dests WHERE kind = 'sub' "
    "GROUP BY setname, topic ORDER BY setname, topic",
};

static const char *const schema_v4[] = { "ALTER TABLE notify_dests ADD COLUMN cb_addr TEXT",
                                         "ALTER TABLE notify_dests ADD COLUMN client TEXT", NULL };

const char *const *rs_hubsub_schema(int version)
{
    return version == 4 ? schema_v4 : NULL;
}

/* A write of set's rows, in the caller's transaction (set NULL) or in
 * one of its own that begins with the set's fence (rs_db_exec_set). */
static apr_status_t exec(rs_db_t *db, const char *set, int which, const void **args, int *nrows)
{
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, sql[which], &s);

    if (rv != APR_SUCCESS) {
        return rv;
    }
    return set ? rs_db_exec_set(db, set, s, args, nrows) : rs_db_exec(db, s, args, nrows);
}

static void get_row(void *baton, apr_pool_t *p, const char *const *c, int nc)
{
    rs_hubsub_t *x = apr_array_push(baton);
    memset(x, 0, sizeof(*x));
    if (nc < NCOLS) {
        return;
    }
    x->set = apr_pstrdup(p, c[0]);
    x->topic = apr_pstrdup(p, c[1]);
    x->url = apr_pstrdup(p, c[2]);
    x->secret = c[3] && *c[3] ? apr_pstrdup(p, c[3]) : NULL;
    x->lease_until = c[4] ? apr_atoi64(c[4]) : 0;
    x->cursor = c[5] ? apr_atoi64(c[5]) : 0;
    x->addr = c[6] && *c[6] ? apr_pstrdup(p, c[6]) : NULL;
    x->client = c[7] && *c[7] ? apr_pstrdup(p, c[7]) : NULL;
}

static apr_status_t query(rs_db_t *db, apr_pool_t *p, int which, const void **args,
                          apr_array_header_t **out)
{
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, sql[which], &s);
    *out = apr_array_make(p, 8, sizeof(rs_hubsub_t));
    return rv == APR_SUCCESS ? rs_db_query(db, p, s, args, get_row, *out) : rv;
}

/* The caller's work after a write, in its transaction. */
static apr_status_t then(rs_db_t *db, apr_status_t rv, const rs_hubsub_also_t *also)
{
    return rv == APR_SUCCESS && also ? also->fn(also->baton, db) : rv;
}

apr_status_t rs_hubsub_put_also(rs_db_t *db, const rs_hubsub_t *x, int *created,
                                const rs_hubsub_also_t *also)
{
    const void *key[] = { x->set, x->topic, x->url };
    const void *put[] = { x->set,  x->topic,  x->url, x->secret, &x->lease_until,
                          x->addr, x->client, x->set, x->topic };
    apr_array_header_t *have;
    apr_pool_t *p;
    apr_status_t rv;

    if (created) {
        *created = 0;
    }
    /* Whether it exists, and the row, in one transaction that begins
     * with the set's fence (on SQLite's second writer each statement
     * alone: it holds the write lock only while it runs). */
    if ((rv = rs_db_begin_set(db, x->set)) != APR_SUCCESS) {
        return rv;
    }
    apr_pool_create(&p, NULL);
    rv = query(db, p, S_GET, key, &have);
    if (created) {
        *created = have->nelts == 0;
    }
    apr_pool_destroy(p);
    if (rv == APR_SUCCESS) {
        rv = then(db, exec(db, NULL, S_PUT, put, NULL), also);
    }
    return rs_db_end(db, rv);
}

apr_status_t rs_hubsub_put(rs_db_t *db, const rs_hubsub_t *x, int *created)
{
    return rs_hubsub_put_also(db, x, created, NULL);
}

apr_status_t rs_hubsub_remove_also(rs_db_t *db, const char *set, const char *topic, const char *url,
                                   int *removed, const rs_hubsub_also_t *also)
{
    const void *key[] = { set, topic, url };
    int n = 0;
    apr_status_t rv;

    if (!also) {
        rv = exec(db, set, S_DELETE, key, &n);
    }
    else if ((rv = rs_db_begin_set(db, set)) == APR_SUCCESS) {
        rv = rs_db_end(db, then(db, exec(db, NULL, S_DELETE, key, &n), also));
    }
    if (removed) {
        *removed = rv == APR_SUCCESS && n > 0;
    }
    return rv;
}

apr_status_t rs_hubsub_remove(rs_db_t *db, const char *set, const char *topic, const char *url,
                              int *removed)
{
    return rs_hubsub_remove_also(db, set, topic, url, removed, NULL);
}

apr_status_t rs_hubsub_list(rs_db_t *db, apr_pool_t *p, apr_array_header_t **out)
{
    return query(db, p, S_LIST, NULL, out);
}

static void get_count(void *baton, apr_pool_t *p, const char *const *c, int nc)
{
    rs_hubsub_count_t *x = apr_array_push(baton);
    memset(x, 0, sizeof(*x));
    if (nc < 3) {
        return;
    }
    x->set = apr_pstrdup(p, c[0]);
    x->topic = apr_pstrdup(p, c[1]);
    x->n = c[2] ? apr_atoi64(c[2]) : 0;
}

apr_status_t rs_hubsub_counts(rs_db_t *db, apr_pool_t *p, apr_array_header_t **out)
{
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, sql[S_COUNTS], &s);
    *out = apr_array_make(p, 4, sizeof(rs_hubsub_count_t));
    return rv == APR_SUCCESS ? rs_db_query(db, p, s, NULL, get_count, *out) : rv;
}

apr_status_t rs_hubsub_expire(rs_db_t *db, apr_pool_t *p, apr_time_t now, apr_array_header_t **gone)
{
    const void *args[] = { &now };
    apr_array_header_t *due;
    apr_status_t rv = query(db, p, S_EXPIRED, args, &due);
    int i, n;

    *gone = apr_array_make(p, due->nelts ? due->nelts : 1, sizeof(rs_hubsub_t));
    for (i = 0; rv == APR_SUCCESS && i < due->nelts; i++) {
        const rs_hubsub_t *x = &APR_ARRAY_IDX(due, i, rs_hubsub_t);
        const void *key[] = { x->set, x->topic, x->url, &now };
        n = 0;
        if ((rv = exec(db, x->set, S_DELETE_EXPIRED, key, &n)) == APR_SUCCESS && n > 0) {
            APR_ARRAY_PUSH(*gone, rs_hubsub_t) = *x;
        }
        else if (rv == RS_LEASE_LOST) {
            rv = APR_SUCCESS; /* a set another node writes: its rows are that node's */
        }
    }
    return rv;
}

/* Whether a and b are both known and equal. */
static int same_key(const char *a, const char *b)
{
    return a && b && !strcmp(a, b);
}

const char *rs_hubsub_limit(const apr_array_header_t *subs, const rs_hubsub_t *x,
                            const rs_hubsub_quota_t *q)
{
    apr_int64_t same_addr = 0, same_client = 0;
    int i;

    for (i = 0; i < subs->nelts; i++) {
        const rs_hubsub_t *y = &APR_ARRAY_IDX(subs, i, rs_hubsub_t);
        if (!strcmp(y->set, x->set) && !strcmp(y->topic, x->topic) && !strcmp(y->url, x->url)) {
            return NULL; /* a renewal */
        }
        same_addr += same_key(y->addr, x->addr);
        same_client += same_key(y->client, x->client);
    }
    if (subs->nelts >= q->total) {
        return "too many subscriptions";
    }
    if (x->addr && same_addr >= q->per_addr) {
        return "too many subscriptions for this callback address";
    }
    if (x->client && same_client >= q->per_client) {
        return "too many subscriptions from this client";
    }
    return NULL;
}
