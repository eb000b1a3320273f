/* SPDX-License-Identifier: Apache-2.0 */
/* rs_delivery.c - the delivery thread's table and its turns (see
 * rs_delivery.h).
 *
 * Store writes.  The thread is a second writer of the watcher process
 * (the driver is the first): its connection has busy timeout 0, so a
 * write that meets the driver's open transaction fails at once (APR_EBUSY)
 * instead of holding the driver mutex.  Every write is one statement
 * after its set's fence (a transaction spanning statements would hold
 * SQLite's lock while letting go of that mutex: see flush_dirty; on
 * PostgreSQL fence and write are one transaction).  A write the fence
 * refuses (RS_LEASE_LOST) stays dirty until the driver says another node
 * writes the set (hooks->writes), and is dropped then: the row is that
 * node's.  Rows whose state changed are
 * marked `dirty` and written once per turn; what fails stays dirty and is
 * tried again at the next turn, while deliveries go on from the state in
 * memory (which a refresh keeps over the store's).  A cursor not yet
 * written when the watcher dies only means a notification sent again (at
 * least once).
 */
#include <stdlib.h>
#include <string.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "rs_deliverlook.h"
#include "rs_deliverpolicy.h"
#include "rs_deliverstat.h"
#include "rs_delivery.h"
#include "rs_lease.h"
#include "rs_notify.h"

typedef rs_deliverlook_payload_t payload_t;
typedef rs_deliverlook_t look_t;

/* One destination row and what only the thread knows of it. */
typedef struct dest_t {
    rs_notifydest_t row;
    const void *set; /* hooks->set's handle */
    const char *key;
    int ping, sub;
    const void *hub;     /* fat, ping: the hub as configured */
    int inflight;        /* a request is in flight */
    int dirty;           /* row state not yet written */
    int again;           /* step it in the next round */
    apr_int64_t sending; /* id of the notification in flight (a ping:
                          * the newest one it announces) */
    payload_t *payload;  /* its payload (a reference), or NULL */
    apr_time_t sending_until;
    apr_time_t last_at; /* of the last completion, 0: none yet */
} dest_t;

struct rs_delivery_t {
    apr_pool_t *pool; /* the table's */
    const char *state_dir;
    int max_parallel;
    const rs_delivery_hooks_t *hooks;
    const rs_logger_t *log;
    rs_websub_t *ws;
    rs_db_t *db;
    rs_notify_t *box;
    apr_pool_t *tbl;   /* of dests, replaced at every refresh */
    apr_hash_t *dests; /* key -> dest_t */
    apr_pool_t *iter;  /* a turn's, cleared at its end */
    char *status;      /* the status file's text (malloc), NULL: none */
    unsigned turn;     /* rotates the start of step_some */
    apr_time_t next_refresh, next_status;
};

/* The pool's pre-cleanup (before the table's subpool goes): the status
 * text (malloc) and the payload references of the requests in flight,
 * which a sender dropped without its callbacks gives back to nobody.  The
 * watcher's delivery thread never ends: only the unit tests come here. */
static apr_status_t delivery_cleanup(void *data)
{
    rs_delivery_t *dv = data;
    apr_hash_index_t *x;

    free(dv->status);
    dv->status = NULL;
    for (x = dv->dests ? apr_hash_first(NULL, dv->dests) : NULL; x; x = apr_hash_next(x)) {
        dest_t *d = apr_hash_this_val(x);
        if (d->inflight && d->payload) {
            rs_deliverlook_unref(d->payload);
            d->payload = NULL;
        }
    }
    return APR_SUCCESS;
}

rs_delivery_t *rs_delivery_create(apr_pool_t *p, const char *state_dir, int max_parallel,
                                  const rs_delivery_hooks_t *hooks, const rs_logger_t *log)
{
    apr_pool_t *pool;
    rs_delivery_t *dv;

    apr_pool_create(&pool, p);
    dv = apr_pcalloc(pool, sizeof(*dv));
    dv->pool = pool;
    dv->state_dir = apr_pstrdup(pool, state_dir);
    dv->max_parallel = max_parallel;
    dv->hooks = hooks;
    dv->log = log;
    apr_pool_create(&dv->iter, pool);
    apr_pool_pre_cleanup_register(pool, dv, delivery_cleanup);
    return dv;
}

apr_status_t rs_delivery_open(rs_delivery_t *dv, rs_websub_t *ws, rs_db_t *db)
{
    apr_status_t rv = rs_notify_open(&dv->box, db, NULL, dv->pool);

    if (rv == APR_SUCCESS) {
        dv->ws = ws;
        dv->db = db;
    }
    return rv;
}

apr_status_t rs_delivery_reconcile(rs_delivery_t *dv)
{
    apr_status_t rv = rs_deliverpolicy_reconcile(
        dv->db, dv->hooks->hubs(dv->hooks->baton, dv->iter), dv->log, dv->iter);

    apr_pool_clear(dv->iter);
    return rv;
}

/* Write the delivery state of every dirty row, one statement each (no
 * transaction around them: between its statements this thread would let
 * go of apr_dbd's process-wide mutex while holding SQLite's write lock,
 * and the driver, waiting for that lock with the mutex held, would stall
 * both for its whole busy timeout).  The first failure (the store busy)
 * leaves the rest dirty for the next turn.  Each write begins with its
 * set's fence (rs_notifydest_update), which on SQLite's second writer is
 * a statement of its own before it, never a transaction around it. */
static void flush_dirty(rs_delivery_t *dv)
{
    apr_hash_index_t *hi;
    apr_status_t rv;

    for (hi = dv->dests ? apr_hash_first(dv->iter, dv->dests) : NULL; hi; hi = apr_hash_next(hi)) {
        dest_t *d = apr_hash_this_val(hi);
        int found = 1;
        if (!d->dirty) {
            continue;
        }
        rv = rs_notifydest_update(dv->db, &d->row, &found);
        if (rv == RS_LEASE_LOST) {
            /* Refused by the set's fence.  Once the driver says another
             * node writes the set, the row is that node's: this node's
             * state of it is dropped.  Until then (the driver has not
             * taken the set yet, at a start, or not yet seen its loss) it
             * stays dirty for the next turn. */
            if (dv->hooks->writes && !dv->hooks->writes(dv->hooks->baton, d->set)) {
                d->dirty = 0;
            }
            continue;
        }
        if (rv != APR_SUCCESS) {
            return;
        }
        d->dirty = 0;
    }
}

/* End a destination: its row is deleted (tried again at the next refresh
 * when the store is busy: the row is then still listed). */
static void drop(rs_delivery_t *dv, dest_t *d)
{
    rs_notifydest_delete(dv->db, &d->row);
    apr_hash_set(dv->dests, d->key, APR_HASH_KEY_STRING, NULL);
}

/* ------------------------------------------------------------- the table */

static const char *dup0(apr_pool_t *p, const char *s)
{
    return s ? apr_pstrdup(p, s) : NULL;
}

/* The entry of row r in a new table (pool np), or NULL when its set or
 * hub is not configured (any more: rs_delivery_reconcile deletes a hub's
 * row at the next start).  What only memory knows (a request in flight, a
 * state not yet written) is carried over from old. */
static dest_t *dest_make(rs_delivery_t *dv, apr_pool_t *np, const rs_notifydest_t *r)
{
    const void *set = dv->hooks->set(dv->hooks->baton, r->set);
    const char *key;
    dest_t *d, *old;

    if (!set) {
        return NULL;
    }
    key = apr_pstrcat(np, r->kind, "|", r->set, "|", r->topic, "|", r->url, NULL);
    d = apr_pcalloc(np, sizeof(*d));
    d->key = key;
    d->set = set;
    d->row = *r;
    old = dv->dests ? apr_hash_get(dv->dests, key, APR_HASH_KEY_STRING) : NULL;
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
    d->hub = d->sub ? NULL : dv->hooks->hub(dv->hooks->baton, set, r->url, d->ping);
    if (!d->sub && !d->hub) {
        return NULL;
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
    return d;
}

/* Read the rows again into a new table. */
static void refresh(rs_delivery_t *dv)
{
    apr_array_header_t *rows;
    apr_pool_t *np;
    apr_hash_t *h;
    int i;

    if (rs_notifydest_list(dv->db, dv->iter, &rows) != APR_SUCCESS) {
        return;
    }
    apr_pool_create(&np, dv->pool);
    h = apr_hash_make(np);
    for (i = 0; i < rows->nelts; i++) {
        dest_t *d = dest_make(dv, np, &APR_ARRAY_IDX(rows, i, rs_notifydest_t));
        if (d) {
            apr_hash_set(h, d->key, APR_HASH_KEY_STRING, d);
        }
    }
    if (dv->tbl) {
        apr_pool_destroy(dv->tbl);
    }
    dv->tbl = np;
    dv->dests = h;
}

/* ------------------------------------------------------------- sending */

/* Submit notification x to d; a ping announces every notification up
 * to `upto` at once (the cursor goes there on its 2xx). */
static void submit(rs_delivery_t *dv, dest_t *d, payload_t *x, apr_int64_t upto)
{
    rs_websub_req_t req;
    apr_status_t rv;

    memset(&req, 0, sizeof(req));
    req.url = d->row.url;
    if (d->ping) {
        req.kind = RS_WEBSUB_PING;
    }
    else {
        req.kind = d->sub ? RS_WEBSUB_DELIVER : RS_WEBSUB_FAT;
        req.body = x->buf;
        req.body_len = x->len;
        req.body_borrowed = 1;
        req.secret = d->sub ? d->row.secret : NULL;
    }
    dv->hooks->request(dv->hooks->baton, dv->iter, d->set, d->hub, &d->row, &req);
    req.baton = x; /* released at the completion */
    if ((rv = rs_websub_submit(dv->ws, d->key, &req)) != APR_SUCCESS) {
        rs_log_emit(dv->log, RS_LOG_ERR, rv,
                    "set %s: cannot send to %s (%s); the "
                    "destination is dropped",
                    d->row.set, d->row.url, d->row.kind);
        drop(dv, d);
        return;
    }
    x->refs++;
    d->inflight = 1;
    d->sending = d->ping ? upto : x->id;
    d->payload = x;
    d->sending_until = x->until;
}

/* What a ping of d announces: the topic serves one document at a time,
 * which a ping hub fetches when it likes, so one ping announces every
 * sealed notification after the cursor that the topic serves (the glue
 * serves them merged when it can: rs_notify_window), never one per
 * notification, which would have the hub fetch the same document once
 * per ping.  0: nothing yet (the topic file is not written yet; the
 * driver wakes the thread once it is). */
static apr_int64_t ping_upto(rs_delivery_t *dv, const dest_t *d, const look_t *l)
{
    apr_int64_t upto = l->newest;

    if (dv->hooks->shown) {
        apr_int64_t shown = dv->hooks->shown(dv->hooks->baton, d->set, d->row.topic);
        upto = shown < upto ? shown : upto;
    }

    return d->ping && upto > d->row.cursor ? upto : 0;
}

/* Send d the next notification if it is idle, due and behind
 * (rs_deliverpolicy); end a subscription whose lease expired or whose
 * backlog is over the limit. */
static void step(rs_delivery_t *dv, dest_t *d, apr_hash_t *looks, apr_time_t now)
{
    const look_t *l;
    int act;

    d->again = 0;
    if (dv->hooks->writes && !dv->hooks->writes(dv->hooks->baton, d->set)) {
        return; /* another node's (a shared store) */
    }
    act = rs_deliverpolicy_ready(&d->row, d->sub, d->inflight, now, dv->log);
    if (act == RS_DELIVERPOLICY_GO) {
        l = rs_deliverlook_get(dv->db, dv->box, dv->iter, looks, d->row.set, d->row.topic,
                               d->row.cursor);
        act = rs_deliverpolicy_backlog(&d->row, d->sub, l->count,
                                       dv->hooks->max_backlog(dv->hooks->baton, d->set), dv->log);
        if (act == RS_DELIVERPOLICY_GO && l->next && (!d->ping || ping_upto(dv, d, l))) {
            submit(dv, d, l->next, ping_upto(dv, d, l));
        }
    }
    if (act == RS_DELIVERPOLICY_DROP) {
        drop(dv, d);
    }
}

void rs_delivery_done(void *baton, const rs_websub_result_t *r)
{
    rs_delivery_t *dv = baton;
    dest_t *d = dv->dests ? apr_hash_get(dv->dests, r->key, APR_HASH_KEY_STRING) : NULL;

    /* The request's reference to its payload (also when its row has gone
     * meanwhile). */
    rs_deliverlook_unref(r->baton);
    if (!d) {
        return;
    }
    d->payload = NULL;
    d->inflight = 0;
    d->again = 1;
    d->last_at = dv->hooks->now(dv->hooks->baton);
    if (rs_deliverpolicy_done(&d->row, d->sub, d->sending, d->sending_until,
                              dv->hooks->retry(dv->hooks->baton, d->set), r, d->last_at, dv->log,
                              dv->tbl)
        == RS_DELIVERPOLICY_DROP) {
        drop(dv, d);
        return;
    }
    d->dirty = 1;
}

/* Step the rows that asked for it, as long as fewer than max_parallel
 * requests are queued or in flight: so at most that many payloads are
 * held, however many destinations wait.  The rows are taken from a
 * rotating start, so none waits behind the others turn after turn. */
static void step_some(rs_delivery_t *dv, apr_hash_t *looks, apr_time_t now)
{
    apr_array_header_t *rows = apr_array_make(dv->iter, 64, sizeof(dest_t *));
    apr_hash_index_t *hi;
    int i, n;

    for (hi = dv->dests ? apr_hash_first(dv->iter, dv->dests) : NULL; hi; hi = apr_hash_next(hi)) {
        dest_t *d = apr_hash_this_val(hi);
        if (d->again) {
            APR_ARRAY_PUSH(rows, dest_t *) = d;
        }
    }
    n = rows->nelts;
    for (i = 0; i < n && rs_websub_pending(dv->ws, NULL) < dv->max_parallel; i++) {
        step(dv, APR_ARRAY_IDX(rows, (i + dv->turn) % n, dest_t *), looks, now);
    }
    dv->turn++;
}

/* ------------------------------------------------------------ status file */

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The line of d, rows of a topic at the same cursor sharing one backlog
 * query (backlogs: "set|topic|cursor" -> count). */
static const char *status_line(rs_delivery_t *dv, apr_pool_t *p, apr_hash_t *backlogs,
                               const dest_t *d)
{
    const char *k =
        apr_psprintf(p, "%s|%s|%" APR_INT64_T_FMT, d->row.set, d->row.topic, d->row.cursor);
    apr_int64_t *count = apr_hash_get(backlogs, k, APR_HASH_KEY_STRING);

    if (!count) {
        apr_int64_t newest = 0;
        count = apr_pcalloc(p, sizeof(*count));
        rs_notifydest_backlog(dv->db, d->row.set, d->row.topic, d->row.cursor, count, &newest);
        apr_hash_set(backlogs, k, APR_HASH_KEY_STRING, count);
    }
    return rs_deliverstat_line(p, &d->row, d->last_at, *count);
}

/* Renew the status file (rs_deliverstat) with a line per topic and per
 * row, in key order.  The lines are joined once (the file has a line per
 * subscriber: thousands). */
static void write_status(rs_delivery_t *dv)
{
    apr_pool_t *p = dv->iter;
    apr_array_header_t *sets = dv->hooks->sets(dv->hooks->baton, p);
    apr_array_header_t *keys = apr_array_make(p, 16, sizeof(const char *));
    apr_array_header_t *lines = apr_array_make(p, 16, sizeof(const char *));
    apr_hash_t *backlogs = apr_hash_make(p);
    apr_hash_index_t *hi;
    int i;

    for (i = 0; i < sets->nelts; i++) {
        const char *set = APR_ARRAY_IDX(sets, i, const char *);
        APR_ARRAY_PUSH(lines, const char *) =
            rs_deliverstat_topic(p, dv->box, set, RS_NOTIFY_CHANGE);
        APR_ARRAY_PUSH(lines, const char *) =
            rs_deliverstat_topic(p, dv->box, set, RS_NOTIFY_FRAMEWORK);
    }
    for (hi = dv->dests ? apr_hash_first(p, dv->dests) : NULL; hi; hi = apr_hash_next(hi)) {
        APR_ARRAY_PUSH(keys, const char *) = apr_hash_this_key(hi);
    }
    qsort(keys->elts, keys->nelts, sizeof(const char *), cmp_keys);
    for (i = 0; i < keys->nelts; i++) {
        const dest_t *d =
            apr_hash_get(dv->dests, APR_ARRAY_IDX(keys, i, const char *), APR_HASH_KEY_STRING);
        APR_ARRAY_PUSH(lines, const char *) = status_line(dv, p, backlogs, d);
    }
    rs_deliverstat_write(p, dv->state_dir, apr_array_pstrcat(p, lines, 0), &dv->status);
}

/* ------------------------------------------------------------- a turn */

apr_time_t rs_delivery_turn(rs_delivery_t *dv, apr_time_t now, int woken)
{
    apr_hash_t *looks;

    if (woken || now >= dv->next_refresh) {
        refresh(dv);
        dv->next_refresh = now + RS_DELIVERY_REFRESH;
    }
    if (now >= dv->next_status) {
        write_status(dv);
        dv->next_status = now + RS_DELIVERY_STATUS;
    }
    looks = apr_hash_make(dv->iter);
    step_some(dv, looks, now);
    rs_deliverlook_release(dv->iter, looks);
    flush_dirty(dv);
    apr_pool_clear(dv->iter);
    return dv->next_refresh;
}
