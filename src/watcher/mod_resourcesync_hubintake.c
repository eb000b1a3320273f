/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_hubintake.c - the built-in hub's intake: the watcher's
 * side of subscription requests.
 *
 * Thread.  With ResourceSyncHub on, the watcher starts one intake thread
 * (rs_hubintake_start) with its own allocator, its own store connection
 * (opened by the thread, again after a failure) and its own rs_websub
 * sender.  It never exits; it ends with the watcher's process.  It shares
 * nothing with the driver's thread but the error log and the status
 * segment's spool gate.
 *
 * Lifecycle of a spool file (see docs/ARCHITECTURE.md, "Built-in hub:
 * subscriptions"):
 *   1. Arrival.  The spool is followed by rs_hubspool: listed once at the
 *      start (the gate's counts set from that listing), then new names
 *      come from inotify, so a flood costs one event and one file read
 *      per request.  Each new file is read once to learn its server (its
 *      set's), its client and its callback's host, and queued in the
 *      scheduler (rs_hubsched) under (client, host).  A malformed file,
 *      one of a set no longer configured, and a version 1 record marked
 *      deny are removed without any request going out.
 *   2. Start.  The scheduler starts what may start (at most MAX_RUNNING,
 *      PER_HOST per callback host, PER_CLIENT per client, clients and
 *      hosts in turn): a hanging callback holds PER_HOST slots, never the
 *      intake.  The file is read again; a new subscription beyond the
 *      server's total or per-client limit gets a denial GET; otherwise
 *      the verification GET.  Every GET carries the policy of the server
 *      that received the request (rs_hubconf_filter: its
 *      ResourceSyncHubAllowCallback), judged on the address connected to,
 *      after DNS, new or reused connection (rs_websub): a name that
 *      resolves to a refused address is never called.  Each request gives
 *      up after ResourceSyncHubVerifyTimeout.
 *   3. Confirmed (a 2xx whose body is the challenge): the address the GET
 *      was sent to is the subscription's callback address; a new
 *      subscription beyond the per-address limit gets a denial GET,
 *      anything else is stored or deleted (rs_hubsub), one statement.
 *   4. The file is removed only after its outcome is durable, and its
 *      reservation given back to the gate: a watcher killed at any point
 *      before leaves the file, and the next watcher does it again;
 *      storing and deleting are idempotent (a renewal of the same row, a
 *      delete of nothing), so a request is applied once.  A store failure
 *      keeps the confirmed request for a later attempt.
 * Requests go out under the key "cb|<callback>": those for one callback
 * one at a time in the order they were started.
 *
 * Once a second the thread also deletes subscriptions whose lease ended,
 * removes "tmp-*" files older than a minute (left by a child killed
 * mid-write; their reservations given back) and, when something
 * changed, rewrites <statedir>/hub/intake (subscriptions per topic and
 * the last outcome; the status page shows it).
 */
#include <stdlib.h>
#include <string.h>
#include <apr_strings.h>
#include <apr_thread_proc.h>
#include <apr_file_info.h>
#include <apr_hash.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_drive.h"
#include "rs_file.h"
#include "rs_hubaddr.h"
#include "rs_hubgate.h"
#include "rs_hubreq.h"
#include "rs_hubsched.h"
#include "rs_hubspool.h"
#include "rs_hubsub.h"
#include "rs_schema.h"
#include "rs_statedir.h"
#include "rs_time.h"
#include "rs_websub.h"

#define WAIT_MS     1000                       /* longest wait for events */
#define MAX_RUNNING 32                         /* verifications at once */
#define PER_HOST    2                          /* ... for one callback host */
#define PER_CLIENT  8                          /* ... for one client */
#define TMP_AGE     apr_time_from_sec(60)      /* "tmp-*" older: abandoned */
#define SWEEP_EVERY apr_time_from_sec(1)
#define INTAKE_MAX_FREE (1024 * 1024)       /* bytes of freed memory the thread keeps */

/* A request waiting in the scheduler: what it needs until it starts
 * (malloc'd, name included: thousands may wait, a pool each would cost
 * more than they hold). */
typedef struct pending_t {
    rs_hubsched_entry_t *entry;
    apr_size_t size;                   /* its bytes in the gate */
    char name[1];                      /* entry name in the spool */
} pending_t;

/* A request started; lives in its own pool. */
typedef struct intake_req_t {
    apr_pool_t *pool;
    pending_t *pend;
    const char *name;
    const char *path;
    rs_hubreq_t req;
    const rs_srv_conf *sc;             /* the server that received it */
    const char *client;                /* key of the client's address */
    const char *addr;                  /* key of the address verified, NULL before */
    int denial;                        /* a denial GET was sent */
} intake_req_t;

static struct {
    server_rec *s;
    apr_pool_t *pool;                  /* own allocator */
    rs_logger_t log;
    const char *spool;
    const char *status_path;
    rs_hubspool_t *follow;
    rs_hubgate_t *gate;
    rs_hubsched_t *sched;
    rs_db_t *db;
    apr_pool_t *db_pool;
    rs_websub_t *ws;
    apr_hash_t *known;                 /* name -> pending_t, waiting or started */
    apr_hash_t *stuck;                 /* names that could not be removed */
    apr_array_header_t *unstored;      /* confirmed, store failed: retried */
    int changed;                       /* the status file is out of date */
    char last[512];                    /* last intake outcome */
} hi;

/* A busy store (the driver's write in progress) is retried, not an error:
 * its messages, rs_db's included, go to the debug level. */
static void thread_log(void *baton, int level, apr_status_t rv, const char *msg)
{
    if (APR_STATUS_IS_EBUSY(rv) && level < APLOG_DEBUG) {
        level = APLOG_DEBUG;
    }
    ap_log_error(APLOG_MARK, level, rv, (server_rec *)baton, RS_TAG "%s", msg);
}

/* The outcome of a request, logged at info (subscribers' mistakes are no
 * operator's business) and kept for the status page. */
static void outcome(const intake_req_t *q, const char *what)
{
    char t[RS_TIME_BUFSIZE];
    rs_log_emit(&hi.log, RS_LOG_INFO, APR_SUCCESS, "hub: %s %s of '%s' for '%s' from %s: %s",
                rs_hubreq_mode_name(q->req.mode), q->name, q->req.callback, q->req.topic,
                *q->req.client ? q->req.client : "(unknown)", what);
    apr_snprintf(hi.last, sizeof(hi.last), "%s %s %s %s", rs_time_format(t, apr_time_now()),
                 rs_hubreq_mode_name(q->req.mode), q->req.callback, what);
    hi.changed = 1;
}

/* The store connection, opened at first use and after a failure. */
static rs_db_t *store(void)
{
    if (hi.db) {
        return hi.db;
    }
    if (rs_jobs_store_open(&hi.db, &hi.db_pool, &hi.log) != APR_SUCCESS) {
        return NULL;
    }
    /* Never wait for the driver's lock holding apr_dbd's mutex. */
    rs_db_busy_timeout(hi.db, 0);
    return hi.db;
}

/* After a store failure (not a busy store) the connection is opened
 * again next time. */
static void store_failed(apr_status_t rv)
{
    if (hi.db && !APR_STATUS_IS_EBUSY(rv)) {
        hi.db = NULL;
        apr_pool_destroy(hi.db_pool);
    }
}

/* Remove a spool file whose outcome is durable, giving its reservation
 * back.  A file that cannot be removed (permissions changed under the
 * watcher) is remembered, so it is not done again and again in this
 * watcher's life (logged once). */
static void drop_file(apr_pool_t *p, const char *name, apr_size_t size)
{
    static const char stuck[] = "stuck";
    const char *path = apr_pstrcat(p, hi.spool, "/", name, NULL);
    apr_status_t rv = apr_file_remove(path, p);

    if (rv != APR_SUCCESS && !APR_STATUS_IS_ENOENT(rv)) {
        rs_log_emit(&hi.log, RS_LOG_ERR, rv, "hub: cannot remove the spool file '%s'; it is "
                    "not handled again until the watcher restarts", path);
        apr_hash_set(hi.stuck, apr_pstrdup(hi.pool, name), APR_HASH_KEY_STRING, stuck);
        return;
    }
    rs_hubgate_release(hi.gate, 1, (apr_uint32_t)size);
}

/* Done with q: its file removed when its outcome is durable, its slot in
 * the scheduler freed, everything of it forgotten. */
static void finish(intake_req_t *q, int remove)
{
    pending_t *pend = q->pend;
    if (remove) {
        drop_file(q->pool, pend->name, pend->size);
    }
    rs_hubsched_done(hi.sched, pend->entry);
    apr_hash_set(hi.known, pend->name, APR_HASH_KEY_STRING, NULL);
    free(pend);
    apr_pool_destroy(q->pool);
}

static const char *key_of(const intake_req_t *q)
{
    return apr_pstrcat(q->pool, "cb|", q->req.callback, NULL);
}

/* The callback policy of q's server on a GET to its callback: none when
 * the callback's host is named in ResourceSyncHubAllowCallback. */
static void policy(intake_req_t *q, rs_websub_req_t *w)
{
    if (!rs_hubconf_host_allowed(q->pool, q->sc, q->req.callback)) {
        w->addr_filter = rs_hubconf_filter;
        w->filter_baton = (void *)q->sc;
    }
}

/* A denial GET (WebSub 5.2); the file goes when it has been sent. */
static void deny(intake_req_t *q, const char *reason)
{
    rs_websub_req_t w = { 0 };
    w.kind = RS_WEBSUB_DENY;
    w.url = q->req.callback;
    w.topic = q->req.topic;
    w.reason = reason;
    w.baton = q;
    policy(q, &w);
    q->denial = 1;
    outcome(q, apr_pstrcat(q->pool, "denied (", reason, ")", NULL));
    if (rs_websub_submit(hi.ws, key_of(q), &w) != APR_SUCCESS) {
        finish(q, 1);
    }
}

/* A new subscription beyond a limit of its server: the reason, else NULL
 * (q->addr NULL: the per-address limit is not checked yet).  A store
 * failure lets it pass (the store write will fail too, and retry). */
static const char *over_limit(intake_req_t *q)
{
    apr_array_header_t *subs, *mine;
    rs_hubsub_quota_t quota;
    rs_hubsub_t x = { 0 };
    apr_pool_t *tmp;
    const char *why = NULL;
    rs_db_t *db = store();
    int i;

    if (!db) {
        return NULL;
    }
    /* The list of every subscription lives only for this check: up to
     * MAX_RUNNING requests are handled at once, and each keeping its own
     * copy would make the thread's memory grow with their product. */
    apr_pool_create(&tmp, q->pool);
    if (rs_hubsub_list(db, tmp, &subs) == APR_SUCCESS) {
        /* The server's own subscriptions: its limits count those. */
        mine = apr_array_make(tmp, subs->nelts + 1, sizeof(rs_hubsub_t));
        for (i = 0; i < subs->nelts; i++) {
            const rs_hubsub_t *y = &APR_ARRAY_IDX(subs, i, rs_hubsub_t);
            const rs_set_t *set = rs_config_find_set(y->set);
            if (set && ap_get_module_config(set->s->module_config, &resourcesync_module)
                       == q->sc) {
                APR_ARRAY_PUSH(mine, rs_hubsub_t) = *y;
            }
        }
        x.set = q->req.set;
        x.topic = q->req.kind;
        x.url = q->req.callback;
        x.addr = q->addr;
        x.client = q->client;
        quota.total = rs_hubconf_max_subs(q->sc);
        quota.per_addr = rs_hubconf_max_per_addr(q->sc);
        quota.per_client = rs_hubconf_max_per_client(q->sc);
        why = rs_hubsub_limit(mine, &x, &quota);
        why = why ? apr_pstrdup(q->pool, why) : NULL;
    }
    apr_pool_destroy(tmp);
    return why;
}

/* Start the request of pend (the scheduler's turn has come). */
static void start(pending_t *pend)
{
    apr_pool_t *p;
    intake_req_t *q;
    const rs_set_t *set;
    const char *why = NULL;
    apr_status_t rv;
    rs_websub_req_t w = { 0 };

    apr_pool_create(&p, hi.pool);
    q = apr_pcalloc(p, sizeof(*q));
    q->pool = p;
    q->pend = pend;
    q->name = pend->name;
    q->path = apr_pstrcat(p, hi.spool, "/", pend->name, NULL);
    /* Read again: only keys were kept while it waited. */
    if ((rv = rs_hubreq_spool_read(p, q->path, &q->req, &why, NULL)) != APR_SUCCESS
        || !(set = rs_config_find_set(q->req.set))) {
        finish(q, APR_STATUS_IS_ENOENT(rv) || why || rv == APR_SUCCESS);
        return;
    }
    q->sc = ap_get_module_config(set->s->module_config, &resourcesync_module);
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
    if ((rv = rs_websub_submit(hi.ws, key_of(q), &w)) != APR_SUCCESS) {
        outcome(q, "callback cannot be called");
        finish(q, 1);
    }
}

/* Store the confirmed request; 1 when its outcome is durable, 0 when the
 * store failed, -1 when it was denied instead. */
static int apply(intake_req_t *q)
{
    rs_db_t *db = store();
    apr_status_t rv = APR_EGENERAL;
    int created = 0, removed = 0;
    const char *why;

    if (db && q->req.mode == RS_HUBREQ_SUBSCRIBE) {
        rs_hubsub_t x = { 0 };
        /* Others may have been confirmed meanwhile; and the callback's
         * address is known now. */
        if ((why = over_limit(q))) {
            deny(q, why);
            return -1;
        }
        x.set = q->req.set;
        x.topic = q->req.kind;
        x.url = q->req.callback;
        x.secret = q->req.secret;
        x.lease_until = apr_time_now() + apr_time_from_sec(q->req.lease);
        x.addr = q->addr;
        x.client = q->client;
        rv = rs_hubsub_put(db, &x, &created);
        if (rv == APR_SUCCESS) {
            outcome(q, apr_psprintf(q->pool, "%s, lease %" APR_INT64_T_FMT " s",
                                    created ? "subscribed" : "renewed", q->req.lease));
        }
    }
    else if (db) {
        rv = rs_hubsub_remove(db, q->req.set, q->req.kind, q->req.callback, &removed);
        if (rv == APR_SUCCESS) {
            outcome(q, removed ? "unsubscribed" : "unsubscribed (was not subscribed)");
        }
    }
    if (rv != APR_SUCCESS) {
        rs_log_emit(&hi.log, RS_LOG_ERR, rv, "hub: cannot store the %s of '%s'; the request "
                    "stays in the spool", rs_hubreq_mode_name(q->req.mode), q->req.callback);
        store_failed(rv);
        return 0;
    }
    return 1;
}

/* A completed GET (on this thread, inside rs_websub_run). */
static void on_done(void *baton, const rs_websub_result_t *res)
{
    intake_req_t *q = res->baton;
    int durable;
    (void)baton;

    if (q->denial) {
        finish(q, 1);
        return;
    }
    if (!res->challenge_ok) {
        /* A refused address: the callback's name resolved to one its
         * server does not allow (the detail is in res->error). */
        outcome(q, res->status ? apr_psprintf(q->pool, "not confirmed (HTTP %ld%s)",
                                              res->status, res->outcome == RS_WEBSUB_OK
                                              ? ", wrong challenge" : "")
                   : !strncmp(res->error, "address refused", 15)
                   ? apr_pstrcat(q->pool, "callback address not allowed (", res->error, ")",
                                 NULL)
                   : apr_pstrcat(q->pool, "not confirmed (", res->error, ")", NULL));
        finish(q, 1);
        return;
    }
    q->addr = rs_hubaddr_key_text(q->pool, res->primary_ip);
    durable = apply(q);
    if (durable > 0) {
        finish(q, 1);
    }
    else if (durable == 0) {
        APR_ARRAY_PUSH(hi.unstored, intake_req_t *) = q;
    }
}

/* Confirmed requests whose store write failed: again (not verified again;
 * their files stay until stored, so a new watcher would verify again). */
static void retry_unstored(void)
{
    int i, kept = 0, n = hi.unstored->nelts, durable;

    for (i = 0; i < n; i++) {
        intake_req_t *q = APR_ARRAY_IDX(hi.unstored, i, intake_req_t *);
        if ((durable = apply(q)) > 0) {
            finish(q, 1);
        }
        else if (durable == 0) {
            APR_ARRAY_IDX(hi.unstored, kept++, intake_req_t *) = q;   /* in place */
        }
    }
    hi.unstored->nelts = kept;
}

/* A request that arrived: read for its keys and queued, or removed when
 * nothing may come of it. */
static void arrive(apr_pool_t *p, const char *name)
{
    const char *path = apr_pstrcat(p, hi.spool, "/", name, NULL), *why, *client;
    apr_size_t size = 0, n = strlen(name);
    const rs_set_t *set = NULL;
    const char *host = NULL;
    pending_t *pend;
    apr_port_t port;
    rs_hubreq_t req;
    apr_status_t rv;

    if (apr_hash_get(hi.known, name, APR_HASH_KEY_STRING)
        || apr_hash_get(hi.stuck, name, APR_HASH_KEY_STRING)) {
        return;                         /* reported twice */
    }
    rv = rs_hubreq_spool_read(p, path, &req, &why, &size);
    if (rv != APR_SUCCESS && !why) {
        if (!APR_STATUS_IS_ENOENT(rv)) {
            rs_log_emit(&hi.log, RS_LOG_ERR, rv, "hub: cannot read the spool file '%s'", path);
        }
        return;
    }
    if (why) {
        rs_log_emit(&hi.log, RS_LOG_WARN, APR_SUCCESS, "hub: removed the malformed spool "
                    "file '%s': %s", path, why);
    }
    else if (req.deny || !(set = rs_config_find_set(req.set))) {
        /* Nothing goes out: an unknown topic of an older child, or a set
         * no longer configured. */
        rs_log_emit(&hi.log, RS_LOG_INFO, APR_SUCCESS, "hub: %s %s of '%s' for '%s': "
                    "dropped (%s)", rs_hubreq_mode_name(req.mode), name, req.callback,
                    req.topic, req.deny ? "not a topic of this hub" : "its set is not "
                    "configured any more");
    }
    if (!set || rs_hubreq_callback_syntax(p, req.callback, &host, &port)) {
        drop_file(p, name, size);
        return;
    }
    client = rs_hubaddr_key_text(p, req.client);
    pend = malloc(sizeof(*pend) + n);
    if (!pend) {
        return;                         /* found again at the next listing */
    }
    memcpy(pend->name, name, n + 1);
    pend->size = size;
    pend->entry = rs_hubsched_add(hi.sched, client ? client : "(unknown)",
                                  rs_hubaddr_host_key(p, host), pend);
    apr_hash_set(hi.known, pend->name, APR_HASH_KEY_STRING, pend);
}

/* New requests from the spool, then whatever the scheduler lets start. */
static void drain(apr_pool_t *p)
{
    apr_array_header_t *names = apr_array_make(p, 16, sizeof(const char *));
    rs_hubspool_census_t census;
    rs_hubsched_entry_t *e;
    apr_status_t rv;
    int i;

    if ((rv = rs_hubspool_take(hi.follow, p, names, &census)) != APR_SUCCESS) {
        rs_log_emit(&hi.log, RS_LOG_ERR, rv, "hub: cannot list the spool '%s'", hi.spool);
    }
    if (census.listed) {
        /* What the spool holds, reserved or not: the segment is new in
         * every generation, and a process killed between its two steps
         * leaves a count behind. */
        rs_hubgate_set(hi.gate, census.files,
                       census.bytes > 0xffffffffu ? 0xffffffffu : (apr_uint32_t)census.bytes);
    }
    for (i = 0; i < names->nelts; i++) {
        arrive(p, APR_ARRAY_IDX(names, i, const char *));
    }
    while ((e = rs_hubsched_next(hi.sched))) {
        start(rs_hubsched_item(e));
    }
}

/* Writes in progress left by children killed mid-write: removed, their
 * reservations given back. */
static void sweep_tmp(void)
{
    apr_uint32_t files;
    apr_uint64_t bytes;

    rs_hubspool_sweep(hi.follow, apr_time_now(), TMP_AGE, &files, &bytes);
    if (files) {
        rs_hubgate_release(hi.gate, files,
                           bytes > 0xffffffffu ? 0xffffffffu : (apr_uint32_t)bytes);
    }
}

/* Subscriptions whose lease ended: deleted. */
static void expire(apr_pool_t *p)
{
    apr_array_header_t *gone;
    rs_db_t *db = store();
    apr_status_t rv;
    int i;

    if (!db) {
        return;
    }
    if ((rv = rs_hubsub_expire(db, p, apr_time_now(), &gone)) != APR_SUCCESS) {
        rs_log_emit(&hi.log, RS_LOG_ERR, rv, "hub: cannot remove expired subscriptions");
        store_failed(rv);
        return;
    }
    for (i = 0; i < gone->nelts; i++) {
        const rs_hubsub_t *x = &APR_ARRAY_IDX(gone, i, rs_hubsub_t);
        rs_log_emit(&hi.log, RS_LOG_INFO, APR_SUCCESS, "hub: the lease of '%s' on set %s, "
                    "topic %s ended; subscription removed", x->url, x->set, x->topic);
        hi.changed = 1;
    }
}

/* Writes the status file's lines (rs_file_replace). */
static apr_status_t write_status(void *baton, apr_file_t *f, apr_pool_t *p)
{
    const apr_array_header_t *subs = baton;
    const char *set = "", *topic = "";
    int i, n = 0;

    for (i = 0; i <= subs->nelts; i++) {
        const rs_hubsub_t *x = i < subs->nelts ? &APR_ARRAY_IDX(subs, i, rs_hubsub_t) : NULL;
        if (n && (!x || strcmp(x->set, set) || strcmp(x->topic, topic))) {
            apr_file_printf(f, "hub-subscriptions: %s %s %d\n", set, topic, n);
            n = 0;
        }
        if (x) {
            set = x->set;
            topic = x->topic;
            n++;
        }
    }
    apr_file_printf(f, "hub-subscriptions-total: %d\n", subs->nelts);
    apr_file_printf(f, "hub-last-intake: %s\n", hi.last[0] ? hi.last : "-");
    (void)p;
    return APR_SUCCESS;
}

static void status(apr_pool_t *p)
{
    apr_array_header_t *subs;
    rs_db_t *db = store();
    apr_status_t rv;

    if (!hi.changed || !db || rs_hubsub_list(db, p, &subs) != APR_SUCCESS) {
        return;
    }
    if ((rv = rs_file_replace(p, hi.status_path, write_status, subs)) != APR_SUCCESS) {
        rs_log_emit(&hi.log, RS_LOG_ERR, rv, "hub: cannot write '%s'", hi.status_path);
        return;
    }
    hi.changed = 0;
}

static void *APR_THREAD_FUNC intake_thread(apr_thread_t *t, void *data)
{
    rs_websub_opts_t o = { 0 };
    rs_hubsched_limits_t lim;
    apr_pool_t *iter;
    apr_time_t next_sweep = 0;
    apr_status_t rv;
    (void)t;
    (void)data;

    o.max_parallel = MAX_RUNNING;
    o.timeout_ms = (long)apr_time_as_msec(rs_hubconf_verify_timeout());
    o.connect_timeout_ms = o.timeout_ms;
    if (rs_websub_create(&hi.ws, hi.pool, &o, on_done, NULL, &hi.log) != APR_SUCCESS) {
        return NULL;                      /* logged; requests stay spooled */
    }
    if ((rv = rs_hubspool_open(&hi.follow, hi.pool, hi.spool, RS_HUBREQ_DIR_PERMS))
        != APR_SUCCESS) {
        rs_log_emit(&hi.log, RS_LOG_ERR, rv, "hub: cannot follow the spool '%s'; "
                    "subscription requests stay there until the watcher restarts", hi.spool);
        return NULL;
    }
    rs_websub_poll_fd(hi.ws, rs_hubspool_fd(hi.follow));
    lim.total = MAX_RUNNING;
    lim.per_host = PER_HOST;
    lim.per_client = PER_CLIENT;
    hi.sched = rs_hubsched_create(hi.pool, &lim);
    apr_pool_create(&iter, hi.pool);
    store();                              /* early: before the driver is busy */
    /* The status file's directory, as the children make the spool's. */
    apr_dir_make_recursive(rs_statedir_hub(iter, rs_global.state_dir),
                           APR_FPROT_UREAD | APR_FPROT_UWRITE | APR_FPROT_UEXECUTE, iter);
    hi.changed = 1;
    for (;;) {
        apr_time_t now = rs_time_mono();
        if (now >= next_sweep) {
            expire(iter);
            if (hi.unstored->nelts) {
                retry_unstored();
            }
            sweep_tmp();
            status(iter);
            next_sweep = now + SWEEP_EVERY;
        }
        drain(iter);
        apr_pool_clear(iter);
        /* Until a GET completes, a request arrives (the spool's inotify
         * descriptor) or the next sweep. */
        rs_websub_run(hi.ws, WAIT_MS);
    }
    return NULL;
}

/* Whether some server has the hub on. */
static int hub_on(server_rec *s)
{
    for (; s; s = s->next) {
        const rs_srv_conf *sc = ap_get_module_config(s->module_config, &resourcesync_module);
        if (sc && rs_hubconf_on(sc)) {
            return 1;
        }
    }
    return 0;
}

void rs_hubintake_start(apr_pool_t *pool, server_rec *s)
{
    apr_allocator_t *alloc;
    apr_thread_t *thread;
    apr_threadattr_t *attr;
    apr_status_t rv;

    if (!hub_on(s) || !(hi.gate = rs_status_hub_gate())) {
        return;
    }
    hi.s = s;
    hi.log.fn = thread_log;
    hi.log.baton = s;
    apr_allocator_create(&alloc);
    apr_pool_create_ex(&hi.pool, NULL, NULL, alloc);
    apr_allocator_owner_set(alloc, hi.pool);
    apr_allocator_max_free_set(alloc, INTAKE_MAX_FREE);
    hi.known = apr_hash_make(hi.pool);
    hi.stuck = apr_hash_make(hi.pool);
    hi.unstored = apr_array_make(hi.pool, 4, sizeof(intake_req_t *));
    hi.spool = rs_statedir_hubspool(hi.pool, rs_global.state_dir);
    hi.status_path = rs_statedir_hubintake(hi.pool, rs_global.state_dir);
    apr_threadattr_create(&attr, pool);
    apr_threadattr_detach_set(attr, 1);
    if ((rv = apr_thread_create(&thread, attr, intake_thread, NULL, pool)) != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, RS_TAG "watcher: cannot start the hub's "
                     "intake thread; subscription requests stay in '%s'", hi.spool);
    }
}
