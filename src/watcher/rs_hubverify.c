/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubverify.c - one subscription request of the built-in hub, from its
 * turn to its durable outcome (see rs_hubverify.h). */
#include <stdlib.h>
#include <string.h>
#include <apr_strings.h>
#include "rs_hubaddr.h"
#include "rs_hubsub.h"
#include "rs_hubverify.h"
#include "rs_lease.h"

static const char *key_of(const rs_hubintake_req_t *q)
{
    return apr_pstrcat(q->pool, "cb|", q->req.callback, NULL);
}

/* The callback policy of q's server on a GET to its callback: none when
 * the callback's host is named in its allowed callbacks. */
static void policy(rs_hubintake_req_t *q, rs_websub_req_t *w)
{
    const rs_hubintake_hooks_t *h = &q->hi->hooks;
    if (!h->host_allowed(h->baton, q->pool, q->server, q->req.callback)) {
        w->addr_filter = h->addr_filter;
        w->filter_baton = q->server;
    }
}

/* A denial GET (WebSub 5.2); the file goes when it has been sent. */
static void deny(rs_hubintake_req_t *q, const char *reason)
{
    rs_websub_req_t w = { 0 };
    w.kind = RS_WEBSUB_DENY;
    w.url = q->req.callback;
    w.topic = q->req.topic;
    w.reason = reason;
    w.baton = q;
    policy(q, &w);
    q->denial = 1;
    rs_hubstate_outcome(q, apr_pstrcat(q->pool, "denied (", reason, ")", NULL));
    if (rs_websub_submit(q->hi->ws, key_of(q), &w) != APR_SUCCESS) {
        rs_hubstate_finish(q, 1);
    }
}

/* The subscriptions of subs that q's server received (its limits count
 * those), from p. */
static apr_array_header_t *servers_own(rs_hubintake_req_t *q, apr_pool_t *p,
                                       const apr_array_header_t *subs)
{
    const rs_hubintake_hooks_t *h = &q->hi->hooks;
    apr_array_header_t *mine = apr_array_make(p, subs->nelts + 1, sizeof(rs_hubsub_t));
    int i;

    for (i = 0; i < subs->nelts; i++) {
        const rs_hubsub_t *y = &APR_ARRAY_IDX(subs, i, rs_hubsub_t);
        void *server = h->server_of(h->baton, y->set);
        if (server && server == q->server) {
            APR_ARRAY_PUSH(mine, rs_hubsub_t) = *y;
        }
    }
    return mine;
}

/* A new subscription beyond a limit of its server: the reason, else NULL
 * (q->addr NULL: the per-address limit is not checked yet).  A store
 * failure lets it pass (the store write will fail too, and retry). */
static const char *over_limit(rs_hubintake_req_t *q)
{
    const rs_hubintake_hooks_t *h = &q->hi->hooks;
    apr_array_header_t *subs;
    rs_hubsub_quota_t quota;
    rs_hubsub_t x = { 0 };
    apr_pool_t *tmp;
    const char *why = NULL;
    rs_db_t *db = rs_hubstate_store(q->hi);

    if (!db) {
        return NULL;
    }
    /* The list of every subscription lives only for this check: up to
     * RS_HUBINTAKE_MAX_RUNNING requests are handled at once, and each
     * keeping its own copy would make the thread's memory grow with their
     * product. */
    apr_pool_create(&tmp, q->pool);
    if (rs_hubsub_list(db, tmp, &subs) == APR_SUCCESS) {
        x.set = q->req.set;
        x.topic = q->req.kind;
        x.url = q->req.callback;
        x.addr = q->addr;
        x.client = q->client;
        h->quota(h->baton, q->server, &quota);
        why = rs_hubsub_limit(servers_own(q, tmp, subs), &x, &quota);
        why = why ? apr_pstrdup(q->pool, why) : NULL;
    }
    apr_pool_destroy(tmp);
    return why;
}

/* Start the request of pend (the scheduler's turn has come). */
void rs_hubverify_start(rs_hubintake_t *hi, rs_hubpending_t *pend)
{
    const rs_hubintake_hooks_t *h = &hi->hooks;
    apr_pool_t *p;
    rs_hubintake_req_t *q;
    const char *why = NULL;
    apr_status_t rv;
    rs_websub_req_t w = { 0 };

    apr_pool_create(&p, hi->pool);
    q = apr_pcalloc(p, sizeof(*q));
    q->pool = p;
    q->hi = hi;
    q->pend = pend;
    q->name = pend->name;
    q->path = apr_pstrcat(p, hi->spool, "/", pend->name, NULL);
    /* Read again: only keys were kept while it waited. */
    if ((rv = rs_hubreq_spool_read(p, q->path, &q->req, &why, NULL)) != APR_SUCCESS
        || !(q->server = h->server_of(h->baton, q->req.set))) {
        rs_hubstate_finish(q, APR_STATUS_IS_ENOENT(rv) || why || rv == APR_SUCCESS);
        return;
    }
    q->client = rs_hubaddr_key_text(p, q->req.client);
    if (q->req.mode == RS_HUBREQ_SUBSCRIBE && (why = over_limit(q))) {
        deny(q, why);
        return;
    }
    w.kind = RS_WEBSUB_VERIFY;
    w.url = q->req.callback;
    w.topic = q->req.topic;
    w.mode = rs_hubreq_mode_name(q->req.mode);
    w.lease_seconds = q->req.mode == RS_HUBREQ_SUBSCRIBE ? q->req.lease : -1;
    w.baton = q;
    policy(q, &w);
    if ((rv = rs_websub_submit(hi->ws, key_of(q), &w)) != APR_SUCCESS) {
        rs_hubstate_outcome(q, "callback cannot be called");
        rs_hubstate_finish(q, 1);
    }
}

/* Store the confirmed subscription (db open); its cause, or APR_SUCCESS;
 * *denied when it was denied instead. */
static apr_status_t subscribe(rs_hubintake_req_t *q, rs_db_t *db, int *denied)
{
    rs_hubsub_t x = { 0 };
    const char *why;
    int created = 0;
    apr_status_t rv;

    /* Others may have been confirmed meanwhile; and the callback's
     * address is known now. */
    if ((why = over_limit(q))) {
        deny(q, why);
        *denied = 1;
        return APR_SUCCESS;
    }
    x.set = q->req.set;
    x.topic = q->req.kind;
    x.url = q->req.callback;
    x.secret = q->req.secret;
    x.lease_until = rs_hubstate_now(q->hi) + apr_time_from_sec(q->req.lease);
    x.addr = q->addr;
    x.client = q->client;
    rv = rs_hubsub_put(db, &x, &created);
    if (rv == APR_SUCCESS) {
        rs_hubstate_outcome(q, apr_psprintf(q->pool, "%s, lease %" APR_INT64_T_FMT " s",
                                            created ? "subscribed" : "renewed", q->req.lease));
    }
    return rv;
}

/* Store the confirmed request; 1 when its outcome is durable, 0 when the
 * store failed, -1 when it was denied instead. */
static int apply(rs_hubintake_req_t *q)
{
    rs_db_t *db = rs_hubstate_store(q->hi);
    apr_status_t rv = APR_EGENERAL;
    int removed = 0, denied = 0;

    if (db && q->req.mode == RS_HUBREQ_SUBSCRIBE) {
        rv = subscribe(q, db, &denied);
        if (denied) {
            return -1;
        }
    }
    else if (db) {
        rv = rs_hubsub_remove(db, q->req.set, q->req.kind, q->req.callback, &removed);
        if (rv == APR_SUCCESS) {
            rs_hubstate_outcome(q, removed ? "unsubscribed" : "unsubscribed (was not subscribed)");
        }
    }
    if (rv == RS_LEASE_LOST) {
        /* The set's fence refused: another node writes the set (or this
         * one does not yet).  Noted once; tried again at each sweep. */
        if (!q->elsewhere) {
            q->elsewhere = 1;
            rs_log_emit(&q->hi->log, RS_LOG_INFO, 0,
                        "hub: set %s is not written by this node now; the %s of '%s' "
                        "stays in the spool until it is",
                        q->req.set, rs_hubreq_mode_name(q->req.mode), q->req.callback);
        }
        return 0;
    }
    if (rv != APR_SUCCESS) {
        rs_log_emit(&q->hi->log, RS_LOG_ERR, rv,
                    "hub: cannot store the %s of '%s'; the request "
                    "stays in the spool",
                    rs_hubreq_mode_name(q->req.mode), q->req.callback);
        rs_hubstate_store_failed(q->hi, rv);
        return 0;
    }
    return 1;
}

/* A completed GET (on this thread, inside rs_websub_run). */
void rs_hubverify_done(void *baton, const rs_websub_result_t *res)
{
    rs_hubintake_req_t *q = res->baton;
    int durable;
    (void)baton;

    if (q->denial) {
        rs_hubstate_finish(q, 1);
        return;
    }
    if (!res->challenge_ok) {
        /* A refused address: the callback's name resolved to one its
         * server does not allow (the detail is in res->error). */
        rs_hubstate_outcome(
            q, res->status ? apr_psprintf(q->pool, "not confirmed (HTTP %ld%s)", res->status,
                                          res->outcome == RS_WEBSUB_OK ? ", wrong challenge" : "")
               : !strncmp(res->error, "address refused", 15)
                   ? apr_pstrcat(q->pool, "callback address not allowed (", res->error, ")", NULL)
                   : apr_pstrcat(q->pool, "not confirmed (", res->error, ")", NULL));
        rs_hubstate_finish(q, 1);
        return;
    }
    q->addr = rs_hubaddr_key_text(q->pool, res->primary_ip);
    durable = apply(q);
    if (durable > 0) {
        rs_hubstate_finish(q, 1);
    }
    else if (durable == 0) {
        APR_ARRAY_PUSH(q->hi->unstored, rs_hubintake_req_t *) = q;
    }
}

/* Confirmed requests whose store write failed: again (not verified again;
 * their files stay until stored, so a new watcher would verify again). */
void rs_hubverify_retry(rs_hubintake_t *hi)
{
    int i, kept = 0, n = hi->unstored->nelts, durable;

    for (i = 0; i < n; i++) {
        rs_hubintake_req_t *q = APR_ARRAY_IDX(hi->unstored, i, rs_hubintake_req_t *);
        if ((durable = apply(q)) > 0) {
            rs_hubstate_finish(q, 1);
        }
        else if (durable == 0) {
            APR_ARRAY_IDX(hi->unstored, kept++, rs_hubintake_req_t *) = q; /* in place */
        }
    }
    hi->unstored->nelts = kept;
}
