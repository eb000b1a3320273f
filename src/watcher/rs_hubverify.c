/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubverify.c - one subscription request of the built-in hub, from its
 * turn to its durable outcome (see rs_hubverify.h). */
#include <stdlib.h>
#include <string.h>
#include <apr_strings.h>
#include "rs_hubaddr.h"
#include "rs_hubqueue.h"
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

/* How a confirmed (or routed) request ended up (apply). */
typedef enum {
    APPLIED, /* durable: the file or row goes */
    KEEP,    /* the store failed: kept, tried again at the sweep */
    DENIED,  /* a denial GET went out instead: its completion finishes */
    LEFT     /* a queued row left as it is (another writer's now, or done) */
} applied_t;

/* Queue a spool file's request for its set's writer (rs_hubqueue): the
 * row committed before the file goes.  Unfenced: any node may queue (a
 * request is no state of the set, and this node writes no set's rows
 * here); the writer's transactions are fenced. */
static applied_t route(rs_hubintake_req_t *q)
{
    rs_hubintake_t *hi = q->hi;
    rs_db_t *db = rs_hubstate_store(hi);
    apr_status_t rv = APR_EGENERAL;
    apr_int64_t n = 0;

    if (db && hi->hooks.queue_max > 0 && (rv = rs_hubqueue_count(db, q->req.set, &n)) == APR_SUCCESS
        && n >= hi->hooks.queue_max) {
        return KEEP; /* in the spool, which then fills up (503): a flood stays bounded */
    }
    if (db) {
        rv = rs_hubqueue_put(db, q->req.set, rs_hubreq_record_format(q->pool, &q->req),
                             hi->hooks.node ? hi->hooks.node : "", rs_hubstate_now(hi));
    }
    if (rv == APR_SUCCESS) {
        rs_hubstate_outcome(
            q, apr_pstrcat(q->pool, "queued for the node that writes set ", q->req.set, NULL));
        return APPLIED;
    }
    if (q->route++ == 1) { /* said once */
        rs_log_emit(&hi->log, RS_LOG_ERR, rv,
                    "hub: cannot queue the %s of '%s' for the node that writes set %s; "
                    "the request stays in the spool",
                    rs_hubreq_mode_name(q->req.mode), q->req.callback, q->req.set);
    }
    rs_hubstate_store_failed(hi, rv);
    return KEEP;
}

/* Read q's request again (only keys were kept while it waited): from its
 * spool file, or from its row of the store's queue.  0 when q is
 * finished instead (gone, malformed, of a set not configured here). */
static int reread(rs_hubintake_req_t *q)
{
    const rs_hubintake_hooks_t *h = &q->hi->hooks;
    const char *why = NULL;
    rs_hubqueue_row_t row;
    rs_db_t *db;
    apr_status_t rv;

    if (!q->pend->qid) {
        q->path = apr_pstrcat(q->pool, q->hi->spool, "/", q->name, NULL);
        rv = rs_hubreq_spool_read(q->pool, q->path, &q->req, &why, NULL);
        if (rv != APR_SUCCESS || !(q->server = h->server_of(h->baton, q->req.set))) {
            rs_hubstate_finish(q, APR_STATUS_IS_ENOENT(rv) || why || rv == APR_SUCCESS);
            return 0;
        }
        return 1;
    }
    if (!(db = rs_hubstate_store(q->hi))
        || (rv = rs_hubqueue_get(db, q->pool, q->pend->qid, &row)) != APR_SUCCESS) {
        if (db && !APR_STATUS_IS_ENOENT(rv)) {
            rs_hubstate_store_failed(q->hi, rv);
        }
        rs_hubstate_finish(q, 0); /* gone, or taken again at a later sweep */
        return 0;
    }
    q->qset = row.set;
    if ((why = rs_hubreq_record_parse(q->pool, row.record, strlen(row.record), &q->req))
        || strcmp(q->req.set, row.set)) {
        rs_log_emit(&q->hi->log, RS_LOG_WARN, 0, "hub: removed the malformed queued request %s: %s",
                    q->name, why ? why : "its set is not its record's");
        rs_hubstate_finish(q, 1);
        return 0;
    }
    if (!(q->server = h->server_of(h->baton, q->req.set))) {
        rs_hubstate_finish(q, 0); /* its set's rows are forgotten after a while */
        return 0;
    }
    return 1;
}

/* Start the request of pend (the scheduler's turn has come). */
void rs_hubverify_start(rs_hubintake_t *hi, rs_hubpending_t *pend)
{
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
    if (!reread(q)) {
        return;
    }
    q->client = rs_hubaddr_key_text(p, q->req.client);
    /* A spool file's request of a set another node writes (a shared
     * store): queued for that node before any GET goes out.  When the
     * store cannot tell, verified here as before; its store write then
     * says (the fence). */
    if (!pend->qid && !rs_hubstate_writes(hi, q->req.set)) {
        q->route = 1;
        if (route(q) == APPLIED) {
            rs_hubstate_finish(q, 1);
        }
        else {
            APR_ARRAY_PUSH(hi->unstored, rs_hubintake_req_t *) = q;
        }
        return;
    }
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

/* A queued request's row, deleted in the transaction of its outcome
 * (rs_hubsub_also_t): a row already gone was applied by an earlier
 * writer's tenure, and this outcome is rolled back (APR_ENOENT). */
static apr_status_t delete_row(void *baton, rs_db_t *db)
{
    rs_hubintake_req_t *q = baton;
    int n = 0;
    apr_status_t rv = rs_hubqueue_delete_in(db, q->pend->qid, &n);
    return rv == APR_SUCCESS && !n ? APR_ENOENT : rv;
}

/* Store the confirmed subscription (db open); its cause, or APR_SUCCESS;
 * *denied when it was denied instead. */
static apr_status_t subscribe(rs_hubintake_req_t *q, rs_db_t *db, const rs_hubsub_also_t *also,
                              int *denied)
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
    rv = rs_hubsub_put_also(db, &x, &created, also);
    if (rv == APR_SUCCESS) {
        rs_hubstate_outcome(q, apr_psprintf(q->pool, "%s, lease %" APR_INT64_T_FMT " s",
                                            created ? "subscribed" : "renewed", q->req.lease));
    }
    return rv;
}

/* A confirmed request's store write refused by the set's fence: another
 * node writes the set now (or this one does not yet).  A spool file's is
 * queued for that node (which verifies it again); a queued row is left
 * for it. */
static applied_t refused(rs_hubintake_req_t *q, rs_db_t *db)
{
    if (rs_db_one_node(db)) {
        /* One node's store has no queue: another watcher of this node
         * took the set (it does not write it yet).  Noted once; tried
         * again at each sweep. */
        if (!q->elsewhere) {
            q->elsewhere = 1;
            rs_log_emit(&q->hi->log, RS_LOG_INFO, 0,
                        "hub: set %s is not written by this node now; the %s of '%s' "
                        "stays in the spool until it is",
                        q->req.set, rs_hubreq_mode_name(q->req.mode), q->req.callback);
        }
        return KEEP;
    }
    if (!q->pend->qid) {
        q->route = 1;
        return route(q);
    }
    rs_log_emit(&q->hi->log, RS_LOG_INFO, 0,
                "hub: set %s is not written by this node now; its queued request %s is left "
                "to its writer",
                q->req.set, q->name);
    return LEFT;
}

/* Store the confirmed request (or queue a routed one). */
static applied_t apply(rs_hubintake_req_t *q)
{
    rs_db_t *db = rs_hubstate_store(q->hi);
    rs_hubsub_also_t row = { delete_row, q };
    const rs_hubsub_also_t *also = q->pend->qid ? &row : NULL;
    apr_status_t rv = APR_EGENERAL;
    int removed = 0, denied = 0;

    if (q->route) {
        return route(q);
    }
    if (db && q->req.mode == RS_HUBREQ_SUBSCRIBE) {
        rv = subscribe(q, db, also, &denied);
        if (denied) {
            return DENIED;
        }
    }
    else if (db) {
        rv = rs_hubsub_remove_also(db, q->req.set, q->req.kind, q->req.callback, &removed, also);
        if (rv == APR_SUCCESS) {
            rs_hubstate_outcome(q, removed ? "unsubscribed" : "unsubscribed (was not subscribed)");
        }
    }
    if (rv == RS_LEASE_LOST) {
        return refused(q, db);
    }
    if (rv == APR_ENOENT && also) {
        rs_hubstate_outcome(q, "already applied by an earlier writer");
        return LEFT;
    }
    if (rv != APR_SUCCESS) {
        rs_log_emit(&q->hi->log, RS_LOG_ERR, rv,
                    "hub: cannot store the %s of '%s'; the request "
                    "stays %s",
                    rs_hubreq_mode_name(q->req.mode), q->req.callback,
                    also ? "queued" : "in the spool");
        rs_hubstate_store_failed(q->hi, rv);
        return KEEP;
    }
    q->row_gone = also != NULL;
    return APPLIED;
}

/* q after apply: finished (its file or row removed when applied), kept
 * for the sweep's retry (1), or left to its denial's completion. */
static int settle(rs_hubintake_req_t *q, applied_t a)
{
    if (a == APPLIED || a == LEFT) {
        rs_hubstate_finish(q, a == APPLIED);
    }
    return a == KEEP;
}

/* A completed GET (on this thread, inside rs_websub_run). */
void rs_hubverify_done(void *baton, const rs_websub_result_t *res)
{
    rs_hubintake_req_t *q = res->baton;
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
    if (settle(q, apply(q))) {
        APR_ARRAY_PUSH(q->hi->unstored, rs_hubintake_req_t *) = q;
    }
}

/* Confirmed requests whose store write failed: again (not verified again;
 * their files stay until stored, so a new watcher would verify again). */
void rs_hubverify_retry(rs_hubintake_t *hi)
{
    int i, kept = 0, n = hi->unstored->nelts;

    for (i = 0; i < n; i++) {
        rs_hubintake_req_t *q = APR_ARRAY_IDX(hi->unstored, i, rs_hubintake_req_t *);
        if (settle(q, apply(q))) {
            APR_ARRAY_IDX(hi->unstored, kept++, rs_hubintake_req_t *) = q; /* in place */
        }
    }
    hi->unstored->nelts = kept;
}
