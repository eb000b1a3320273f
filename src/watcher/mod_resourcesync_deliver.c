/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_deliver.c - the delivery thread: sends the sealed
 * notifications of the outbox to every destination row (notify_dests):
 * hubs the sets publish to (ResourceSyncNotifyHub, kinds "fat" and
 * "ping") and the built-in hub's subscribers (kind "sub").
 *
 * Lifecycle.  rs_deliver_start (driver thread, at watcher start) creates
 * the sender (rs_websub: libcurl's global initialisation happens there,
 * before any other thread could use libcurl) and starts the thread; it
 * then owns the sender, a store connection and a pool of its own (own
 * allocator) until the watcher ends (_exit).  The thread first reconciles
 * the hub rows with the configuration (rs_deliverpolicy_reconcile: rows
 * of a configured hub that are missing are added with their cursor at the
 * topic's newest sealed notification: a new hub gets what is sealed from
 * now on, not the past; rows of a hub no longer configured are deleted),
 * then loops:
 *
 *   refresh   every second, or at once after rs_deliver_wakeup (the
 *             driver sealed or stored a notification): the rows are read
 *             again into a new table (pool), carrying over what is only
 *             in memory (a request in flight, state not yet written);
 *   step      a row that is idle and due gets the next sealed
 *             notification after its cursor submitted under its own key
 *             ("<kind>|<set>|<topic>|<url>"): one request in flight per
 *             row, rows independent of each other (rs_websub);
 *   run       rs_websub_run waits for completions (done()).
 *
 * Cursors (decided by rs_deliverpolicy).  A row's cursor moves (and is
 * written to the store) only after a 2xx, or when a notification is given
 * up (retried for longer than ResourceSyncNotifyRetry at a hub; refused
 * permanently by a hub): it is
 * never ahead of what the destination acknowledged, so a restart or a
 * kill -9 loses nothing; a notification acknowledged but whose cursor was
 * not yet written is sent again (at least once).  Notifications of a row
 * go out in id order, so they arrive in order and contiguous.
 *
 * Store writes.  This thread is a second writer of the watcher process
 * (the driver is the first): its connection has busy timeout 0, so a
 * write that meets the driver's open transaction fails at once (APR_EBUSY)
 * instead of holding the driver mutex.  Every write is one statement (a
 * transaction spanning statements would hold SQLite's lock while letting
 * go of that mutex: see flush_dirty).  Rows whose state changed are
 * marked `dirty` and written once per turn of the loop; what fails stays
 * dirty and is tried again at the next turn, while deliveries go on from the state in memory (which a
 * refresh keeps over the store's).  A cursor not yet written when the
 * watcher dies only means a notification sent again (at least once).
 *
 * Payloads.  The rows of a topic mostly wait for the same notification:
 * within a turn, the next notification and the backlog after a cursor are
 * read once per (set, topic, cursor) (rs_deliverlook), and every request
 * carries a reference to one shared copy of the payload (borrowed by
 * rs_websub, released at the completion): memory grows with the
 * notifications in flight, not with the subscribers.
 */
#include <stdlib.h>
#include <string.h>
#include <apr_atomic.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include <apr_thread_proc.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_hubconf.h"
#include "mod_resourcesync_jobs.h"
#include "mod_resourcesync_notifyconf.h"
#include "mod_resourcesync_drive.h"
#include "rs_deliverlook.h"
#include "rs_deliverpolicy.h"
#include "rs_deliverstat.h"
#include "rs_notify.h"
#include "rs_notifydest.h"
#include "rs_schema.h"
#include "rs_statedir.h"
#include "rs_websub.h"

#define REFRESH          apr_time_from_sec(1)
#define STATUS           apr_time_from_sec(2) /* how often the status file is renewed */
#define DELIVER_PARALLEL 256                  /* requests in flight at most, in all */
#define DELIVER_MAX_FREE (4 * 1024 * 1024)    /* bytes of freed memory the thread keeps */

typedef rs_deliverlook_payload_t payload_t;
typedef rs_deliverlook_t look_t;

/* One destination row and what only the thread knows of it. */
typedef struct dest_t {
    rs_notifydest_t row;
    const rs_set_t *set;
    const char *key;
    int ping, sub;
    rs_notify_hub_t *hub; /* fat, ping: the hub as configured */
    int inflight;         /* a request is in flight */
    int dirty;            /* row state not yet written */
    int again;            /* step it in the next round */
    apr_int64_t sending;  /* id of the notification in flight */
    payload_t *payload;   /* its payload (a reference), or NULL */
    apr_time_t sending_until;
    apr_time_t last_at; /* of the last completion, 0: none yet */
} dest_t;

static struct {
    server_rec *s;
    rs_logger_t log;
    apr_pool_t *pool; /* the thread's, own allocator */
    rs_websub_t *ws;
    rs_db_t *db;
    apr_pool_t *db_pool;
    rs_notify_t *box;
    apr_pool_t *tbl;   /* of dests, replaced at every refresh */
    apr_hash_t *dests; /* key -> dest_t */
    apr_pool_t *iter;
    char *status; /* the status file's text (malloc), NULL: none */
    volatile apr_uint32_t woken;
    volatile apr_uint32_t started;
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

/* ------------------------------------------------------------ the store */

static apr_status_t store_open(void)
{
    apr_status_t rv;

    if (dl.db) {
        return APR_SUCCESS;
    }
    rv = rs_jobs_store_open(&dl.db, &dl.db_pool, &dl.log);
    if (rv == APR_SUCCESS) {
        rs_db_busy_timeout(dl.db, 0);
        if ((rv = rs_notify_open(&dl.box, dl.db, NULL, dl.db_pool)) != APR_SUCCESS) {
            dl.db = NULL;
            apr_pool_destroy(dl.db_pool);
        }
    }
    if (rv != APR_SUCCESS) {
        rs_log_emit(&dl.log, RS_LOG_ERR, rv, "delivery: cannot open the state store");
    }
    return rv;
}

/* The hub (url, ping) as the set publishes to it, or NULL when not
 * configured (any more). */
static rs_notify_hub_t *configured(const rs_set_t *set, const char *url, int ping)
{
    int i;
    for (i = 0; set && set->notify && set->notify_pub && i < set->notify_pub->nelts; i++) {
        rs_notify_hub_t *h = &APR_ARRAY_IDX(set->notify_pub, i, rs_notify_hub_t);
        if (!strcmp(h->url, url) && h->ping == ping) {
            return h;
        }
    }
    return NULL;
}

/* The hub rows (fat, ping) made to match the configuration
 * (rs_deliverpolicy_reconcile). */
static apr_status_t reconcile(apr_pool_t *p)
{
    apr_array_header_t *hubs = apr_array_make(p, 4, sizeof(rs_deliverpolicy_hub_t));
    int i, j;

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
    return rs_deliverpolicy_reconcile(dl.db, hubs, &dl.log, p);
}

/* Write the delivery state of every dirty row, one statement each (no
 * transaction around them: between its statements this thread would let
 * go of apr_dbd's process-wide mutex while holding SQLite's write lock,
 * and the driver, waiting for that lock with the mutex held, would stall
 * both for its whole busy timeout).  The first failure (the store busy)
 * leaves the rest dirty for the next turn. */
static void flush_dirty(apr_pool_t *p)
{
    apr_hash_index_t *hi;

    for (hi = dl.dests ? apr_hash_first(p, dl.dests) : NULL; hi; hi = apr_hash_next(hi)) {
        dest_t *d = apr_hash_this_val(hi);
        int found = 1;
        if (!d->dirty) {
            continue;
        }
        if (rs_notifydest_update(dl.db, &d->row, &found) != APR_SUCCESS) {
            return;
        }
        d->dirty = 0;
    }
}

/* End a destination: its row is deleted (tried again at the next refresh
 * when the store is busy: the row is then still listed). */
static void drop(dest_t *d)
{
    rs_notifydest_delete(dl.db, &d->row);
    apr_hash_set(dl.dests, d->key, APR_HASH_KEY_STRING, NULL);
}

/* ------------------------------------------------------------- the table */

static const char *dup0(apr_pool_t *p, const char *s)
{
    return s ? apr_pstrdup(p, s) : NULL;
}

/* Read the rows again into a new table; what only memory knows (a request
 * in flight, a state not yet written) is carried over from the old one. */
static void refresh(apr_pool_t *p)
{
    apr_array_header_t *rows;
    apr_pool_t *np;
    apr_hash_t *h;
    int i;

    if (rs_notifydest_list(dl.db, p, &rows) != APR_SUCCESS) {
        return;
    }
    apr_pool_create(&np, dl.pool);
    h = apr_hash_make(np);
    for (i = 0; i < rows->nelts; i++) {
        const rs_notifydest_t *r = &APR_ARRAY_IDX(rows, i, rs_notifydest_t);
        const rs_set_t *set = rs_config_find_set(r->set);
        dest_t *d, *old;
        const char *key;

        if (!set || !set->notify) {
            continue;
        }
        key = apr_pstrcat(np, r->kind, "|", r->set, "|", r->topic, "|", r->url, NULL);
        d = apr_pcalloc(np, sizeof(*d));
        d->key = key;
        d->set = set;
        d->row = *r;
        old = dl.dests ? apr_hash_get(dl.dests, key, APR_HASH_KEY_STRING) : NULL;
        if (old && (old->inflight || old->dirty)) {
            d->row.cursor = old->row.cursor;
            d->row.attempts = old->row.attempts;
            d->row.next_try = old->row.next_try;
            d->row.last_status = old->row.last_status;
            d->row.last_error = old->row.last_error;
        }
        d->row.set = apr_pstrdup(np, r->set);
        d->row.topic = apr_pstrdup(np, r->topic);
        d->row.kind = apr_pstrdup(np, r->kind);
        d->row.url = apr_pstrdup(np, r->url);
        d->row.secret = dup0(np, r->secret);
        d->row.last_error = dup0(np, d->row.last_error);
        d->ping = !strcmp(r->kind, RS_NOTIFYDEST_PING);
        d->sub = !strcmp(r->kind, RS_NOTIFYDEST_SUB);
        d->hub = d->sub ? NULL : configured(set, r->url, d->ping);
        if (!d->sub && !d->hub) {
            continue; /* no longer configured: reconcile() deletes it */
        }
        if (old) {
            d->inflight = old->inflight;
            d->dirty = old->dirty;
            d->sending = old->sending;
            d->payload = old->payload;
            d->sending_until = old->sending_until;
            d->last_at = old->last_at;
        }
        d->again = 1;
        apr_hash_set(h, key, APR_HASH_KEY_STRING, d);
    }
    if (dl.tbl) {
        apr_pool_destroy(dl.tbl);
    }
    dl.tbl = np;
    dl.dests = h;
}

/* ------------------------------------------------------------- sending */

static const char *topic_url(apr_pool_t *p, const dest_t *d)
{
    return apr_pstrcat(p, d->set->doc_base, "notify/", d->row.topic, NULL);
}

/* Submit notification x to d. */
static void submit(dest_t *d, apr_pool_t *p, payload_t *x)
{
    rs_srv_conf *sc = ap_get_module_config(d->set->s->module_config, &resourcesync_module);
    const char *headers[2];
    rs_websub_req_t req;
    apr_status_t rv;

    memset(&req, 0, sizeof(req));
    headers[0] = apr_pstrcat(p, "Link: ", rs_notifyconf_link_header(p, d->set, d->row.topic), NULL);
    headers[1] = NULL;
    req.url = d->row.url;
    if (d->ping) {
        req.kind = RS_WEBSUB_PING;
        req.topic = req.ping_url = topic_url(p, d);
    }
    else {
        req.kind = d->sub ? RS_WEBSUB_DELIVER : RS_WEBSUB_FAT;
        req.body = x->buf;
        req.body_len = x->len;
        req.body_borrowed = 1;
        req.headers = headers;
        req.secret = d->sub ? d->row.secret : NULL;
        req.sig_algo = rs_notifyconf_sig(sc);
    }
    /* The rebinding guard: every address a request connects to (or is
     * sent on) passes the policy at that moment, after DNS.  Subscribers:
     * their server's callback policy (as the intake's verification had
     * it); hubs: that policy or the address their URL names. */
    if (d->sub && !rs_hubconf_host_allowed(p, sc, d->row.url)) {
        req.addr_filter = rs_hubconf_filter;
        req.filter_baton = sc;
    }
    else if (!d->sub && d->hub && !d->hub->trusted) {
        req.addr_filter = rs_notifyconf_filter;
        req.filter_baton = d->hub;
    }
    req.baton = x; /* released at the completion */
    if ((rv = rs_websub_submit(dl.ws, d->key, &req)) != APR_SUCCESS) {
        rs_log_emit(&dl.log, RS_LOG_ERR, rv,
                    "set %s: cannot send to %s (%s); the "
                    "destination is dropped",
                    d->row.set, d->row.url, d->row.kind);
        drop(d);
        return;
    }
    x->refs++;
    d->inflight = 1;
    d->sending = x->id;
    d->payload = x;
    d->sending_until = x->until;
}

/* Send d the next notification if it is idle, due and behind
 * (rs_deliverpolicy); end a subscription whose lease expired or whose
 * backlog is over the limit. */
static void step(dest_t *d, apr_pool_t *p, apr_hash_t *looks, apr_time_t now)
{
    rs_srv_conf *sc;
    const look_t *l;
    int act;

    d->again = 0;
    act = rs_deliverpolicy_ready(&d->row, d->sub, d->inflight, now, &dl.log);
    if (act == RS_DELIVERPOLICY_GO) {
        l = rs_deliverlook_get(dl.db, dl.box, p, looks, d->row.set, d->row.topic, d->row.cursor);
        sc = ap_get_module_config(d->set->s->module_config, &resourcesync_module);
        act = rs_deliverpolicy_backlog(&d->row, d->sub, l->count, rs_hubconf_backlog(sc), &dl.log);
        if (act == RS_DELIVERPOLICY_GO && l->next) {
            submit(d, p, l->next);
        }
    }
    if (act == RS_DELIVERPOLICY_DROP) {
        drop(d);
    }
}

/* A completion (on the thread, inside rs_websub_run): what it does to the
 * row is rs_deliverpolicy's. */
static void done(void *baton, const rs_websub_result_t *r)
{
    dest_t *d = apr_hash_get(dl.dests, r->key, APR_HASH_KEY_STRING);
    (void)baton;

    /* The request's reference to its payload (also when its row has gone
     * meanwhile). */
    rs_deliverlook_unref(r->baton);
    if (!d) {
        return;
    }
    d->payload = NULL;
    d->inflight = 0;
    d->again = 1;
    d->last_at = apr_time_now();
    if (rs_deliverpolicy_done(&d->row, d->sub, d->sending, d->sending_until, d->set->notify_retry,
                              r, d->last_at, &dl.log, dl.tbl)
        == RS_DELIVERPOLICY_DROP) {
        drop(d);
        return;
    }
    d->dirty = 1;
}

/* Step the rows that asked for it, as long as fewer than
 * DELIVER_PARALLEL requests are queued or in flight: so at most that
 * many payloads are held, however many destinations wait.  The rows are
 * taken from a rotating start, so none waits behind the others turn after
 * turn. */
static void step_some(apr_hash_t *looks, apr_time_t now)
{
    static unsigned turn;
    apr_array_header_t *rows = apr_array_make(dl.iter, 64, sizeof(dest_t *));
    apr_hash_index_t *hi;
    int i, n;

    for (hi = dl.dests ? apr_hash_first(dl.iter, dl.dests) : NULL; hi; hi = apr_hash_next(hi)) {
        dest_t *d = apr_hash_this_val(hi);
        if (d->again) {
            APR_ARRAY_PUSH(rows, dest_t *) = d;
        }
    }
    n = rows->nelts;
    for (i = 0; i < n && rs_websub_pending(dl.ws, NULL) < DELIVER_PARALLEL; i++) {
        step(APR_ARRAY_IDX(rows, (i + turn) % n, dest_t *), dl.iter, looks, now);
    }
    turn++;
}

/* ------------------------------------------------------------ status file */

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Renew the status file (rs_deliverstat) with a line per topic and per
 * row, in key order.  Rows of a topic at the same cursor share one backlog
 * query, and the lines are joined once (the file has a line per
 * subscriber: thousands). */
static void write_status(apr_pool_t *p)
{
    apr_array_header_t *keys = apr_array_make(p, 16, sizeof(const char *));
    apr_array_header_t *lines = apr_array_make(p, 16, sizeof(const char *));
    apr_hash_t *backlogs = apr_hash_make(p);
    const char *text;
    apr_hash_index_t *hi;
    int i;

    for (i = 0; i < rs_global.sets->nelts; i++) {
        const rs_set_t *set = APR_ARRAY_IDX(rs_global.sets, i, const rs_set_t *);
        if (set->notify) {
            APR_ARRAY_PUSH(lines, const char *) =
                rs_deliverstat_topic(p, dl.box, set->name, RS_NOTIFY_CHANGE);
            APR_ARRAY_PUSH(lines, const char *) =
                rs_deliverstat_topic(p, dl.box, set->name, RS_NOTIFY_FRAMEWORK);
        }
    }
    for (hi = dl.dests ? apr_hash_first(p, dl.dests) : NULL; hi; hi = apr_hash_next(hi)) {
        APR_ARRAY_PUSH(keys, const char *) = apr_hash_this_key(hi);
    }
    qsort(keys->elts, keys->nelts, sizeof(const char *), cmp_keys);
    for (i = 0; i < keys->nelts; i++) {
        const dest_t *d =
            apr_hash_get(dl.dests, APR_ARRAY_IDX(keys, i, const char *), APR_HASH_KEY_STRING);
        const char *k =
            apr_psprintf(p, "%s|%s|%" APR_INT64_T_FMT, d->row.set, d->row.topic, d->row.cursor);
        apr_int64_t *count = apr_hash_get(backlogs, k, APR_HASH_KEY_STRING);
        if (!count) {
            apr_int64_t newest = 0;
            count = apr_pcalloc(p, sizeof(*count));
            rs_notifydest_backlog(dl.db, d->row.set, d->row.topic, d->row.cursor, count, &newest);
            apr_hash_set(backlogs, k, APR_HASH_KEY_STRING, count);
        }
        APR_ARRAY_PUSH(lines, const char *) = rs_deliverstat_line(p, &d->row, d->last_at, *count);
    }
    text = apr_array_pstrcat(p, lines, 0);
    rs_deliverstat_write(p, rs_global.state_dir, text, &dl.status);
}

/* ------------------------------------------------------------- the thread */


static void *APR_THREAD_FUNC deliver_thread(apr_thread_t *t, void *data)
{
    apr_time_t next_refresh = 0, next_status = 0;
    (void)t;
    (void)data;

    apr_pool_create(&dl.iter, dl.pool);
    while (store_open() != APR_SUCCESS || reconcile(dl.iter) != APR_SUCCESS) {
        apr_pool_clear(dl.iter);
        rs_websub_run(dl.ws, 1000); /* the store busy or failing: again */
    }
    for (;;) {
        apr_time_t now = apr_time_now();
        apr_hash_t *looks;
        long left;

        if (apr_atomic_xchg32(&dl.woken, 0) || now >= next_refresh) {
            refresh(dl.iter);
            next_refresh = now + REFRESH;
        }
        if (now >= next_status) {
            write_status(dl.iter);
            next_status = now + STATUS;
        }
        looks = apr_hash_make(dl.iter);
        step_some(looks, now);
        rs_deliverlook_release(dl.iter, looks);
        flush_dirty(dl.iter);
        apr_pool_clear(dl.iter);
        left = (long)apr_time_as_msec(next_refresh - apr_time_now());
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

    if (dl.started || !needed()) {
        return;
    }
    memset(&o, 0, sizeof(o));
    /* Every destination has its own key and at most one request in
     * flight; the total is bounded high enough that slow destinations
     * (up to the transfer timeout each) do not hold the others back. */
    o.max_parallel = DELIVER_PARALLEL;
    dl.s = s;
    dl.log.fn = thread_log;
    dl.log.baton = s;
    apr_allocator_create(&alloc);
    apr_pool_create_ex(&dl.pool, NULL, NULL, alloc);
    apr_allocator_owner_set(alloc, dl.pool);
    /* Bursts (payloads, rows, requests) are given back to the system
     * once they are over, so the thread's memory follows what is in
     * flight, not the highest it ever was. */
    apr_allocator_max_free_set(alloc, DELIVER_MAX_FREE);
    if ((rv = rs_websub_create(&dl.ws, dl.pool, &o, done, NULL, &dl.log)) != APR_SUCCESS
        || (rv = apr_thread_create(&t, NULL, deliver_thread, NULL, dl.pool)) != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s,
                     RS_TAG "watcher: cannot start the "
                            "delivery of notifications");
        return;
    }
    apr_atomic_set32(&dl.started, 1);
}

void rs_deliver_wakeup(void)
{
    if (apr_atomic_read32(&dl.started)) {
        apr_atomic_set32(&dl.woken, 1);
        rs_websub_wakeup(dl.ws);
    }
}
