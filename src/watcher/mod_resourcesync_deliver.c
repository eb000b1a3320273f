/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_deliver.c - the delivery thread: sends the sealed
 * notifications of the outbox to every destination row (notify_dests):
 * hubs the sets publish to (ResourceSyncNotifyHub, kinds "fat" and
 * "ping") and the built-in hub's subscribers (kind "sub").  The table of
 * rows and its turns are the engine's (rs_delivery: refresh, step,
 * completions, the status file; rs_deliverpolicy decides the cursors);
 * this file keeps the thread, its logger and store connection, and the
 * hooks that read the configuration.
 *
 * Lifecycle.  rs_deliver_start (driver thread, at watcher start) creates
 * the sender (rs_websub: libcurl's global initialisation happens there,
 * before any other thread could use libcurl) and starts the thread; it
 * then owns the sender, a store connection and a pool of its own (own
 * allocator) until the watcher ends (_exit).  The thread first reconciles
 * the hub rows with the configuration (rs_delivery_reconcile: rows of a
 * configured hub that are missing are added with their cursor at the
 * topic's newest sealed notification: a new hub gets what is sealed from
 * now on, not the past; rows of a hub no longer configured are deleted),
 * then takes turns (rs_delivery_turn: at once after rs_deliver_wakeup,
 * when the driver sealed or stored a notification) and waits for
 * completions (rs_websub_run) until the next refresh, at most a second.
 *
 * Store writes.  This thread is a second writer of the watcher process
 * (the driver is the first): its connection has busy timeout 0, so a
 * write that meets the driver's open transaction fails at once (APR_EBUSY,
 * logged at debug only) and is tried again at the next turn.  Each write
 * begins with its set's fence; a set becoming this node's to write
 * (rs_deliver_writes) has the hub rows reconciled again, since the
 * fence kept the first reconciliation (which may run before the driver
 * took the leases) from writing its rows.
 */
#include <string.h>
#include <apr_atomic.h>
#include <apr_strings.h>
#include <apr_thread_proc.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_hubconf.h"
#include "mod_resourcesync_jobs.h"
#include "mod_resourcesync_notifyconf.h"
#include "mod_resourcesync_drive.h"
#include "rs_deliverpolicy.h"
#include "rs_delivery.h"
#include "rs_websub.h"

#define DELIVER_PARALLEL 256               /* requests in flight at most, in all */
#define DELIVER_MAX_FREE (4 * 1024 * 1024) /* bytes of freed memory the thread keeps */

static struct {
    rs_logger_t log;
    apr_pool_t *pool; /* the thread's, own allocator */
    rs_websub_t *ws;
    rs_delivery_t *dv;
    rs_db_t *db;
    apr_pool_t *db_pool;
    volatile apr_uint32_t woken;
    volatile apr_uint32_t started;
    /* The hub rows to be reconciled again: a set became this node's to
     * write (rs_deliver_writes), whose rows the set's fence kept this
     * thread from writing before. */
    volatile apr_uint32_t reconcile;
    /* Per set (slot) and topic (0 change, 1 framework): the newest
     * notification its topic file shows, written by the driver after the
     * file's rename (rs_deliver_shown), read by this thread (hook_shown);
     * allocated before the thread starts. */
    volatile apr_uint64_t *shown;
    /* Per set (slot): whether this node writes it (rs_deliver_writes, from
     * the driver's one-writer rule); only then are its rows sent here. */
    volatile apr_uint32_t *writes;
} dl;

/* The thread's messages go straight to the error log; a busy store (the
 * driver's transaction) is expected and retried, so it is only debug. */
static void thread_log(void *baton, int level, apr_status_t rv, const char *msg)
{
    if (rv == APR_EBUSY && level < RS_LOG_DEBUG) {
        level = RS_LOG_DEBUG;
    }
    ap_log_error(APLOG_MARK, level, rv, (server_rec *)baton, RS_TAG "%s", msg);
}

static apr_status_t store_open(void)
{
    apr_status_t rv;

    if (dl.db) {
        return APR_SUCCESS;
    }
    rv = rs_jobs_store_open(&dl.db, &dl.db_pool, &dl.log);
    if (rv == APR_SUCCESS) {
        rs_db_busy_timeout(dl.db, 0);
        if ((rv = rs_delivery_open(dl.dv, dl.ws, dl.db)) != APR_SUCCESS) {
            dl.db = NULL;
            apr_pool_destroy(dl.db_pool);
        }
    }
    if (rv != APR_SUCCESS) {
        rs_log_emit(&dl.log, RS_LOG_ERR, rv, "delivery: cannot open the state store");
    }
    return rv;
}

/* ------------------------------------------------- the configuration hooks */

static apr_time_t hook_now(void *baton)
{
    (void)baton;
    return apr_time_now();
}

static const void *hook_set(void *baton, const char *name)
{
    const rs_set_t *set = rs_config_find_set(name);
    (void)baton;
    return set && set->notify ? set : NULL;
}

/* The hub (url, ping) as the set publishes to it, or NULL when not
 * configured (any more). */
static const void *hook_hub(void *baton, const void *s, const char *url, int ping)
{
    const rs_set_t *set = s;
    int i;
    (void)baton;
    for (i = 0; set && set->notify && set->notify_pub && i < set->notify_pub->nelts; i++) {
        rs_notify_hub_t *h = &APR_ARRAY_IDX(set->notify_pub, i, rs_notify_hub_t);
        if (!strcmp(h->url, url) && h->ping == ping) {
            return h;
        }
    }
    return NULL;
}

static apr_array_header_t *hook_sets(void *baton, apr_pool_t *p)
{
    apr_array_header_t *names = apr_array_make(p, 4, sizeof(const char *));
    int i;
    (void)baton;
    for (i = 0; i < rs_global.sets->nelts; i++) {
        const rs_set_t *set = APR_ARRAY_IDX(rs_global.sets, i, const rs_set_t *);
        if (set->notify) {
            APR_ARRAY_PUSH(names, const char *) = set->name;
        }
    }
    return names;
}

static apr_array_header_t *hook_hubs(void *baton, apr_pool_t *p)
{
    apr_array_header_t *hubs = apr_array_make(p, 4, sizeof(rs_deliverpolicy_hub_t));
    int i, j;
    (void)baton;
    for (i = 0; i < rs_global.sets->nelts; i++) {
        const rs_set_t *set = APR_ARRAY_IDX(rs_global.sets, i, const rs_set_t *);
        for (j = 0; set->notify && set->notify_pub && j < set->notify_pub->nelts; j++) {
            const rs_notify_hub_t *h = &APR_ARRAY_IDX(set->notify_pub, j, rs_notify_hub_t);
            rs_deliverpolicy_hub_t *c = apr_array_push(hubs);
            c->set = set->name;
            c->url = h->url;
            c->ping = h->ping;
        }
    }
    return hubs;
}

static apr_time_t hook_retry(void *baton, const void *set)
{
    (void)baton;
    return ((const rs_set_t *)set)->notify_retry;
}

static rs_srv_conf *set_conf(const rs_set_t *set)
{
    return ap_get_module_config(set->s->module_config, &resourcesync_module);
}

static apr_int64_t hook_max_backlog(void *baton, const void *set)
{
    (void)baton;
    return rs_hubconf_backlog(set_conf(set));
}

/* What the configuration says of a request to row: its Link header, a
 * ping's topic URL, the signature algorithm, and the rebinding guard:
 * every address a request connects to (or is sent on) passes the policy
 * at that moment, after DNS.  Subscribers: their server's callback policy
 * (as the intake's verification had it); hubs: that policy or the
 * address their URL names. */
static void hook_request(void *baton, apr_pool_t *p, const void *s, const void *hub,
                         const rs_notifydest_t *row, rs_websub_req_t *req)
{
    const rs_set_t *set = s;
    const rs_notify_hub_t *h = hub;
    rs_srv_conf *sc = set_conf(set);
    const char **headers = apr_pcalloc(p, 2 * sizeof(*headers));
    int sub = !h;
    (void)baton;

    headers[0] = apr_pstrcat(p, "Link: ", rs_notifyconf_link_header(p, set, row->topic), NULL);
    req->headers = headers;
    if (req->kind == RS_WEBSUB_PING) {
        req->topic = req->ping_url = apr_pstrcat(p, set->doc_base, "notify/", row->topic, NULL);
    }
    else {
        req->sig_algo = rs_notifyconf_sig(sc);
    }
    if (sub && !rs_hubconf_host_allowed(p, sc, row->url)) {
        req->addr_filter = rs_hubconf_filter;
        req->filter_baton = sc;
    }
    else if (!sub && !h->trusted) {
        req->addr_filter = rs_notifyconf_filter;
        req->filter_baton = (void *)h;
    }
}

static int topic_index(const char *topic)
{
    return strcmp(topic, RS_NOTIFY_CHANGE) ? 1 : 0;
}

static apr_int64_t hook_shown(void *baton, const void *s, const char *topic)
{
    const rs_set_t *set = s;
    (void)baton;
    return (apr_int64_t)apr_atomic_read64(&dl.shown[2 * set->slot + topic_index(topic)]);
}

static int hook_writes(void *baton, const void *s)
{
    (void)baton;
    return (int)apr_atomic_read32(&dl.writes[((const rs_set_t *)s)->slot]);
}

static const rs_delivery_hooks_t hooks = { NULL,         hook_now,   hook_set,   hook_hub,
                                           hook_sets,    hook_hubs,  hook_retry, hook_max_backlog,
                                           hook_request, hook_shown, hook_writes };

/* ------------------------------------------------------------- the thread */

static void *APR_THREAD_FUNC deliver_thread(apr_thread_t *t, void *data)
{
    (void)t;
    (void)data;

    while (store_open() != APR_SUCCESS) {
        rs_websub_run(dl.ws, 1000); /* the store failing: again */
    }
    /* The hub rows are reconciled before the first turn and again until
     * that succeeds (the store busy: the driver's startup scan holds it),
     * while the existing rows are delivered to meanwhile. */
    apr_atomic_set32(&dl.reconcile, 1);
    for (;;) {
        apr_time_t next;
        long left;
        if (apr_atomic_xchg32(&dl.reconcile, 0) && rs_delivery_reconcile(dl.dv) != APR_SUCCESS) {
            apr_atomic_set32(&dl.reconcile, 1); /* the store busy or failing: next time */
        }
        next = rs_delivery_turn(dl.dv, apr_time_now(), (int)apr_atomic_xchg32(&dl.woken, 0));
        left = (long)apr_time_as_msec(next - apr_time_now());
        rs_websub_run(dl.ws, left < 1 ? 1 : left > 1000 ? 1000 : (int)left);
    }
    return NULL;
}

/* Whether any set has somewhere to deliver: hubs configured, or the
 * built-in hub on (its subscribers). */
static int needed(void)
{
    int i;
    for (i = 0; i < rs_global.sets->nelts; i++) {
        const rs_set_t *set = APR_ARRAY_IDX(rs_global.sets, i, const rs_set_t *);
        if (set->notify && set->notify_hubs && set->notify_hubs->nelts) {
            return 1;
        }
    }
    return 0;
}

void rs_deliver_start(server_rec *s)
{
    rs_websub_opts_t o;
    apr_allocator_t *alloc;
    apr_thread_t *t;
    apr_status_t rv;
    int i;

    if (dl.started || !needed()) {
        return;
    }
    memset(&o, 0, sizeof(o));
    /* Every destination has its own key and at most one request in
     * flight; the total is bounded high enough that slow destinations
     * (up to the transfer timeout each) do not hold the others back. */
    o.max_parallel = DELIVER_PARALLEL;
    /* ResourceSyncNotifyTimeout bounds the whole transfer; connecting
     * keeps its own 10 s bound within it. */
    o.timeout_ms = (long)apr_time_as_msec(rs_notifyconf_timeout());
    o.connect_timeout_ms = o.timeout_ms < 10000 ? o.timeout_ms : 10000;
    dl.log.fn = thread_log;
    dl.log.baton = s;
    apr_allocator_create(&alloc);
    apr_pool_create_ex(&dl.pool, NULL, NULL, alloc);
    apr_allocator_owner_set(alloc, dl.pool);
    /* Bursts (payloads, rows, requests) are given back to the system
     * once they are over, so the thread's memory follows what is in
     * flight, not the highest it ever was. */
    apr_allocator_max_free_set(alloc, DELIVER_MAX_FREE);
    dl.shown = apr_pcalloc(dl.pool, 2 * sizeof(*dl.shown) * (apr_size_t)rs_global.sets->nelts);
    /* SQLite: one node, every set its own at once.  A shared store: none
     * until the driver holds the set's lock (rs_deliver_writes). */
    dl.writes = apr_pcalloc(dl.pool, sizeof(*dl.writes) * (apr_size_t)rs_global.sets->nelts);
    for (i = 0; i < rs_global.sets->nelts; i++) {
        dl.writes[i] = !rs_storecfg_is_pgsql(&rs_global.store);
    }
    dl.dv = rs_delivery_create(dl.pool, rs_global.state_dir, DELIVER_PARALLEL, &hooks, &dl.log);
    if ((rv = rs_websub_create(&dl.ws, dl.pool, &o, rs_delivery_done, dl.dv, &dl.log))
            != APR_SUCCESS
        || (rv = apr_thread_create(&t, NULL, deliver_thread, NULL, dl.pool)) != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s,
                     RS_TAG "watcher: cannot start the "
                            "delivery of notifications");
        return;
    }
    apr_atomic_set32(&dl.started, 1);
}

void rs_deliver_shown(const rs_set_t *set, const char *topic, apr_int64_t id)
{
    if (apr_atomic_read32(&dl.started)) {
        apr_atomic_set64(&dl.shown[2 * set->slot + topic_index(topic)], (apr_uint64_t)id);
    }
}

void rs_deliver_writes(const rs_set_t *set, int writes)
{
    if (apr_atomic_read32(&dl.started)) {
        apr_atomic_set32(&dl.writes[set->slot], writes ? 1 : 0);
        if (writes) {
            apr_atomic_set32(&dl.reconcile, 1);
        }
    }
}

void rs_deliver_wakeup(void)
{
    if (apr_atomic_read32(&dl.started)) {
        apr_atomic_set32(&dl.woken, 1);
        rs_websub_wakeup(dl.ws);
    }
}
