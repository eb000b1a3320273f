/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubqueue.c - see rs_hubqueue.h */
#include <apr_strings.h>
#include "rs_hubqueue.h"

enum { Q_PUT, Q_LIST_ALL, Q_LIST_SET, Q_GET, Q_COUNTS, Q_COUNT, Q_DELETE, Q_FORGET, Q_MAX };

#define COLS "id, setname, record, node, queued"

static const char *const sql[Q_MAX] = {
    "INSERT INTO hub_queue (setname, record, node, queued) VALUES (%s, %s, %s, %lld)",
    "SELECT " COLS " FROM hub_queue ORDER BY id LIMIT %d",
    "SELECT " COLS " FROM hub_queue WHERE setname = %s ORDER BY id LIMIT %d",
    "SELECT " COLS " FROM hub_queue WHERE id = %lld",
    "SELECT setname, COUNT(*) FROM hub_queue GROUP BY setname ORDER BY setname",
    "SELECT COUNT(*) FROM hub_queue WHERE setname = %s",
    "DELETE FROM hub_queue WHERE id = %lld",
    "DELETE FROM hub_queue WHERE setname = %s AND queued < %lld",
};

/* Version 11 (10 is the Resource List files' table): one row per queued
 * request; the index keeps a set's rows in order for its writer. */
static const char *const schema_v11[] = {
    "CREATE TABLE IF NOT EXISTS hub_queue (id INTEGER PRIMARY KEY, setname TEXT NOT NULL,"
    " record TEXT NOT NULL, node TEXT NOT NULL, queued BIGINT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS hub_queue_set ON hub_queue (setname, id)", NULL
};

const char *const *rs_hubqueue_schema(int version)
{
    return version == 11 ? schema_v11 : NULL;
}

const char *const *rs_hubqueue_tables(void)
{
    static const char *const tables[] = { "hub_queue", NULL };
    return tables;
}

static apr_status_t exec(rs_db_t *db, int which, const void **args, int *nrows)
{
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, sql[which], &s);
    return rv == APR_SUCCESS ? rs_db_exec(db, s, args, nrows) : rv;
}

apr_status_t rs_hubqueue_put(rs_db_t *db, const char *set, const char *record, const char *node,
                             apr_time_t queued)
{
    const void *args[] = { set, record, node, &queued };
    return exec(db, Q_PUT, args, NULL);
}

static void get_row(void *baton, apr_pool_t *p, const char *const *c, int nc)
{
    rs_hubqueue_row_t *x;

    if (nc < 5) {
        return;
    }
    x = apr_array_push(baton);
    x->id = c[0] ? apr_atoi64(c[0]) : 0;
    x->set = apr_pstrdup(p, c[1] ? c[1] : "");
    x->record = apr_pstrdup(p, c[2] ? c[2] : "");
    x->node = apr_pstrdup(p, c[3] ? c[3] : "");
    x->queued = c[4] ? apr_atoi64(c[4]) : 0;
}

static apr_status_t query(rs_db_t *db, apr_pool_t *p, int which, const void **args,
                          rs_db_row_fn *fn, apr_array_header_t *out)
{
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, sql[which], &s);
    return rv == APR_SUCCESS ? rs_db_query(db, p, s, args, fn, out) : rv;
}

apr_status_t rs_hubqueue_list(rs_db_t *db, apr_pool_t *p, const char *set, int limit,
                              apr_array_header_t **out)
{
    const void *all[] = { &limit };
    const void *one[] = { set, &limit };

    *out = apr_array_make(p, 8, sizeof(rs_hubqueue_row_t));
    return set ? query(db, p, Q_LIST_SET, one, get_row, *out)
               : query(db, p, Q_LIST_ALL, all, get_row, *out);
}

apr_status_t rs_hubqueue_get(rs_db_t *db, apr_pool_t *p, apr_int64_t id, rs_hubqueue_row_t *row)
{
    const void *args[] = { &id };
    apr_array_header_t *rows = apr_array_make(p, 1, sizeof(rs_hubqueue_row_t));
    apr_status_t rv = query(db, p, Q_GET, args, get_row, rows);

    if (rv != APR_SUCCESS) {
        return rv;
    }
    if (!rows->nelts) {
        return APR_ENOENT;
    }
    *row = APR_ARRAY_IDX(rows, 0, rs_hubqueue_row_t);
    return APR_SUCCESS;
}

typedef struct {
    apr_array_header_t *sets, *counts;
} counts_t;

static void get_count(void *baton, apr_pool_t *p, const char *const *c, int nc)
{
    counts_t *k = baton;
    if (nc < 2 || !c[0]) {
        return;
    }
    APR_ARRAY_PUSH(k->sets, const char *) = apr_pstrdup(p, c[0]);
    APR_ARRAY_PUSH(k->counts, apr_int64_t) = c[1] ? apr_atoi64(c[1]) : 0;
}

apr_status_t rs_hubqueue_counts(rs_db_t *db, apr_pool_t *p, apr_array_header_t **sets,
                                apr_array_header_t **counts)
{
    counts_t k;
    rs_db_stmt_t *s;
    apr_status_t rv;

    k.sets = *sets = apr_array_make(p, 4, sizeof(const char *));
    k.counts = *counts = apr_array_make(p, 4, sizeof(apr_int64_t));
    if ((rv = rs_db_stmt(db, sql[Q_COUNTS], &s)) != APR_SUCCESS) {
        return rv;
    }
    return rs_db_query(db, p, s, NULL, get_count, &k);
}

static void get_n(void *baton, apr_pool_t *p, const char *const *c, int nc)
{
    (void)p;
    if (nc > 0 && c[0]) {
        *(apr_int64_t *)baton = apr_atoi64(c[0]);
    }
}

apr_status_t rs_hubqueue_count(rs_db_t *db, const char *set, apr_int64_t *n)
{
    const void *args[] = { set };
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, sql[Q_COUNT], &s);

    *n = 0;
    return rv == APR_SUCCESS ? rs_db_query(db, NULL, s, args, get_n, n) : rv;
}

apr_status_t rs_hubqueue_delete(rs_db_t *db, const char *set, apr_int64_t id, int *deleted)
{
    const void *args[] = { &id };
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, sql[Q_DELETE], &s);
    int n = 0;

    if (rv == APR_SUCCESS) {
        rv = rs_db_exec_set(db, set, s, args, &n);
    }
    if (deleted) {
        *deleted = rv == APR_SUCCESS && n > 0;
    }
    return rv;
}

apr_status_t rs_hubqueue_delete_in(rs_db_t *db, apr_int64_t id, int *n)
{
    const void *args[] = { &id };
    return exec(db, Q_DELETE, args, n);
}

apr_status_t rs_hubqueue_forget(rs_db_t *db, const char *set, apr_time_t before, int *n)
{
    const void *args[] = { set, &before };
    return exec(db, Q_FORGET, args, n);
}
