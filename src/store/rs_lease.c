/* SPDX-License-Identifier: Apache-2.0 */
/* rs_lease.c - see rs_lease.h */
#include <string.h>
#include <apr_strings.h>
#include <apr_general.h>
#include "rs_lease.h"

/* Version 9: one row per set. */
static const char *const schema_v9[] = {
    "CREATE TABLE IF NOT EXISTS leases (setname TEXT NOT NULL, holder TEXT NOT NULL,"
    " token TEXT NOT NULL, epoch INTEGER NOT NULL, expires INTEGER NOT NULL,"
    " PRIMARY KEY (setname))",
    NULL
};

const char *const *rs_lease_schema(int version)
{
    return version == 9 ? schema_v9 : NULL;
}

const char *const *rs_lease_tables(void)
{
    static const char *const tables[] = { "leases", NULL };
    return tables;
}

/* Arguments: set, holder, token, expiry, the taker's epoch, live_after,
 * ended_before (see when()).  RETURNING gives the epoch held; no row: the
 * WHERE refused (another token holds it live). */
static const char *const take_sql =
    "INSERT INTO leases (setname, holder, token, epoch, expires) VALUES (%s, %s, %s, 1, %lld)"
    " ON CONFLICT (setname) DO UPDATE SET epoch = CASE WHEN leases.token = excluded.token"
    " AND leases.epoch = CAST(%lld AS BIGINT) AND leases.expires > CAST(%lld AS BIGINT)"
    " THEN leases.epoch ELSE leases.epoch + 1 END,"
    " holder = excluded.holder, token = excluded.token, expires = excluded.expires"
    " WHERE leases.token = excluded.token OR leases.expires <= CAST(%lld AS BIGINT)"
    " RETURNING epoch";
/* Arguments: expiry, set, token, epoch, live_after. */
static const char *const fence_sql =
    "UPDATE leases SET expires = CAST(%lld AS BIGINT) WHERE setname = %s AND token = %s"
    " AND epoch = CAST(%lld AS BIGINT) AND expires > CAST(%lld AS BIGINT)";
/* The fence on a shared store: the server's clock read where the row is
 * written, so a write transaction's fence is one round trip.  Arguments:
 * ttl, set, token, epoch. */
static const char *const fence_pg_sql =
    "UPDATE leases SET expires = " RS_DB_PG_NOW " + CAST(%lld AS BIGINT) WHERE setname = %s"
    " AND token = %s AND epoch = CAST(%lld AS BIGINT) AND expires > " RS_DB_PG_NOW;
/* One node's fence outside a transaction (SQLite's second writers,
 * rs_db_begin_set): a read.  Arguments: set, token, epoch. */
static const char *const check_sql =
    "SELECT COUNT(*) FROM leases WHERE setname = %s AND token = %s AND epoch = CAST(%lld AS BIGINT)";
/* Arguments: now, set, token, epoch. */
static const char *const release_sql =
    "UPDATE leases SET expires = CAST(%lld AS BIGINT) WHERE setname = %s AND token = %s"
    " AND epoch = CAST(%lld AS BIGINT) AND expires > CAST(%lld AS BIGINT)";
static const char *const peek_sql =
    "SELECT holder, token, epoch, expires FROM leases WHERE setname = %s";

/* The store's time, and the bounds a lease is judged by: live when its
 * expiry is after live_after, ended (another may take it) when its expiry
 * is at or before ended_before.  A shared store: both are now.  One node
 * (rs_db_one_node): a lease never ends by time, and a take always wins. */
static apr_status_t when(rs_db_t *db, apr_time_t *now, apr_time_t *live_after,
                         apr_time_t *ended_before)
{
    apr_status_t rv = rs_db_clock(db, now);

    if (rs_db_one_node(db)) {
        *live_after = 0;
        *ended_before = APR_INT64_MAX;
    }
    else {
        *live_after = *now;
        *ended_before = *now;
    }
    return rv;
}

const char *rs_lease_token(apr_pool_t *p)
{
    unsigned char b[16];
    char *out = apr_palloc(p, 2 * sizeof(b) + 1);
    apr_size_t i;

    if (apr_generate_random_bytes(b, sizeof(b)) != APR_SUCCESS) {
        /* No entropy source: the time and the process still tell apart
         * two watchers (a restarted one included). */
        apr_time_t t = apr_time_now();
        for (i = 0; i < sizeof(b); i++) {
            b[i] = (unsigned char)((apr_uint64_t)t >> (8 * (i % 8)) ^ (apr_uint64_t)(i * 31));
        }
    }
    for (i = 0; i < sizeof(b); i++) {
        apr_snprintf(out + 2 * i, 3, "%02x", b[i]);
    }
    return out;
}

/* The first column as a number (the epoch a take returns, a count). */
static void get_int64(void *baton, apr_pool_t *p, const char *const *cols, int n)
{
    (void)p;
    if (n > 0 && cols[0]) {
        *(apr_int64_t *)baton = apr_atoi64(cols[0]);
    }
}

apr_status_t rs_lease_take(rs_db_t *db, rs_lease_t *l, int *held)
{
    apr_time_t now, live_after, ended_before, expires;
    apr_int64_t epoch = 0;
    const void *args[7];
    rs_db_stmt_t *s;
    apr_status_t rv;

    *held = 0;
    if ((rv = when(db, &now, &live_after, &ended_before)) != APR_SUCCESS
        || (rv = rs_db_stmt(db, take_sql, &s)) != APR_SUCCESS) {
        return rv;
    }
    expires = now + l->ttl;
    args[0] = l->set;
    args[1] = l->node;
    args[2] = l->token;
    args[3] = &expires;
    args[4] = &l->epoch;
    args[5] = &live_after;
    args[6] = &ended_before;
    rv = rs_db_query(db, NULL, s, args, get_int64, &epoch);
    l->epoch = rv == APR_SUCCESS ? epoch : 0;
    *held = l->epoch > 0;
    /* The row is locked by the holder's open transaction (it writes):
     * held there, try again later. */
    return rv == APR_EBUSY ? APR_SUCCESS : rv;
}

apr_status_t rs_lease_fence(rs_db_t *db, const rs_lease_t *l)
{
    apr_time_t now, live_after, ended_before, expires;
    const void *args[5];
    rs_db_stmt_t *s;
    apr_status_t rv;
    int n = 0;

    if (l->epoch <= 0) {
        return RS_LEASE_LOST;
    }
    if (rs_db_one_node(db) && !rs_db_txn_serial(db)) {
        /* One node, no transaction (a connection that may not hold
         * SQLite's lock across statements): the lease never ends by time
         * there and only this node's watchers take it, so whether this
         * token still holds this epoch is a read, which needs no lock;
         * an UPDATE would wait for the lock as often as the write it
         * guards. */
        apr_int64_t count = 0;
        if ((rv = rs_db_stmt(db, check_sql, &s)) != APR_SUCCESS) {
            return rv;
        }
        args[0] = l->set;
        args[1] = l->token;
        args[2] = &l->epoch;
        if ((rv = rs_db_query(db, NULL, s, args, get_int64, &count)) != APR_SUCCESS) {
            return rv;
        }
        return count == 1 ? APR_SUCCESS : RS_LEASE_LOST;
    }
    if (!rs_db_one_node(db)) {
        if ((rv = rs_db_stmt(db, fence_pg_sql, &s)) != APR_SUCCESS) {
            return rv;
        }
        args[0] = &l->ttl;
        args[1] = l->set;
        args[2] = l->token;
        args[3] = &l->epoch;
        if ((rv = rs_db_exec(db, s, args, &n)) != APR_SUCCESS) {
            return rv;
        }
        return n == 1 ? APR_SUCCESS : RS_LEASE_LOST;
    }
    if ((rv = when(db, &now, &live_after, &ended_before)) != APR_SUCCESS
        || (rv = rs_db_stmt(db, fence_sql, &s)) != APR_SUCCESS) {
        return rv;
    }
    expires = now + l->ttl;
    args[0] = &expires;
    args[1] = l->set;
    args[2] = l->token;
    args[3] = &l->epoch;
    args[4] = &live_after;
    if ((rv = rs_db_exec(db, s, args, &n)) != APR_SUCCESS) {
        return rv;
    }
    return n == 1 ? APR_SUCCESS : RS_LEASE_LOST;
}

apr_status_t rs_lease_release(rs_db_t *db, rs_lease_t *l)
{
    apr_time_t now, live_after, ended_before;
    const void *args[5];
    rs_db_stmt_t *s;
    apr_status_t rv;

    if (l->epoch <= 0) {
        return APR_SUCCESS;
    }
    if ((rv = when(db, &now, &live_after, &ended_before)) != APR_SUCCESS
        || (rv = rs_db_stmt(db, release_sql, &s)) != APR_SUCCESS) {
        return rv;
    }
    args[0] = &now;
    args[1] = l->set;
    args[2] = l->token;
    args[3] = &l->epoch;
    args[4] = &now;
    rv = rs_db_exec(db, s, args, NULL);
    l->epoch = 0;
    return rv;
}

typedef struct {
    apr_pool_t *p;
    rs_lease_info_t *out;
    apr_time_t live_after;
} peek_t;

static void get_info(void *baton, apr_pool_t *p, const char *const *cols, int n)
{
    peek_t *k = baton;

    (void)p;
    if (n < 4) {
        return;
    }
    k->out->exists = 1;
    k->out->node = apr_pstrdup(k->p, cols[0] ? cols[0] : "");
    k->out->token = apr_pstrdup(k->p, cols[1] ? cols[1] : "");
    k->out->epoch = cols[2] ? apr_atoi64(cols[2]) : 0;
    k->out->live = cols[3] && apr_atoi64(cols[3]) > k->live_after;
}

apr_status_t rs_lease_peek(rs_db_t *db, apr_pool_t *p, const char *set, rs_lease_info_t *out)
{
    apr_time_t now, ended_before;
    const void *args[] = { set };
    peek_t k = { p, out, 0 };
    rs_db_stmt_t *s;
    apr_status_t rv;

    memset(out, 0, sizeof(*out));
    if ((rv = when(db, &now, &k.live_after, &ended_before)) != APR_SUCCESS
        || (rv = rs_db_stmt(db, peek_sql, &s)) != APR_SUCCESS) {
        return rv;
    }
    return rs_db_query(db, NULL, s, args, get_info, &k);
}
