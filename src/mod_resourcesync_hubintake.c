/* mod_resourcesync_hubintake.c - the built-in hub's intake: the watcher's
 * side of subscription requests.
 *
 * Thread.  With ResourceSyncHub on, the watcher starts one intake thread
 * (rs_hubintake_start) with its own allocator, its own store connection
 * (opened by the thread, again after a failure) and its own rs_websub
 * sender.  It never exits; it ends with the watcher's process.  It shares
 * nothing with the driver's thread but the error log.
 *
 * Lifecycle of a spool file (see docs/ARCHITECTURE.md, "Built-in hub:
 * subscriptions"):
 *   1. Every POLL_MS the thread lists <statedir>/hub/spool/, takes the
 *      "*.req" names in name order (arrival order) that it is not already
 *      handling, at most MAX_ACTIVE at a time, and reads each one.  A
 *      malformed file is removed with one log line.
 *   2. The callback's addresses are checked again (DNS may have changed
 *      since the child checked); refused: nothing is sent.  Deny-marked
 *      (unknown topic) or over a limit: a denial GET to the callback; its
 *      outcome does not matter (WebSub 5.2).  Otherwise a verification
 *      GET; only a 2xx whose body is the challenge confirms, and then the
 *      row is stored or deleted (rs_hubsub), one statement.
 *   3. The file is removed only after its outcome is durable: a watcher
 *      killed at any point before leaves the file, and the next watcher
 *      does it again; storing and deleting are idempotent (a renewal of
 *      the same row, a delete of nothing), so a request is applied once.
 *      A store failure leaves the file for a later attempt.
 * Requests go out under the key "cb|<callback>": those for one callback
 * are sent one at a time in arrival order, those for different callbacks
 * in parallel (rs_websub's max_parallel).
 *
 * Once a second the thread also deletes subscriptions whose lease ended,
 * removes "tmp-*" files older than a minute (left by a child killed
 * mid-write) and, when something changed, rewrites <statedir>/hub/intake
 * (subscriptions per topic and the last outcome; the status page shows
 * it).
 */
#include <string.h>
#include <apr_strings.h>
#include <apr_thread_proc.h>
#include <apr_file_info.h>
#include <apr_hash.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_drive.h"
#include "rs_file.h"
#include "rs_hubreq.h"
#include "rs_hubsub.h"
#include "rs_schema.h"
#include "rs_statedir.h"
#include "rs_time.h"
#include "rs_websub.h"

#define POLL_MS     200                        /* spool listing interval */
#define MAX_ACTIVE  64                         /* spool files handled at once */
#define TMP_AGE     apr_time_from_sec(60)      /* "tmp-*" older: abandoned */
#define SWEEP_EVERY apr_time_from_sec(1)
#define INTAKE_MAX_FREE (1024 * 1024)       /* bytes of freed memory the thread keeps */

/* One spool file being handled; lives in its own pool. */
typedef struct intake_req_t {
    apr_pool_t *pool;
    const char *name;                  /* entry name in the spool */
    const char *path;
    rs_hubreq_t req;
    int denial;                        /* a denial GET was sent */
} intake_req_t;

static struct {
    server_rec *s;
    const rs_srv_conf *sc;             /* the hub's settings */
    apr_pool_t *pool;                  /* own allocator */
    rs_logger_t log;
    const char *spool;
    const char *status_path;
    rs_db_t *db;
    apr_pool_t *db_pool;
    rs_websub_t *ws;
    apr_hash_t *active;                /* name -> intake_req_t, handled now */
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
    rs_log_emit(&hi.log, RS_LOG_INFO, APR_SUCCESS, "hub: %s %s of '%s' for '%s': %s",
                rs_hubreq_mode_name(q->req.mode), q->name, q->req.callback, q->req.topic,
                what);
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

/* Done with q: remove its file (only when its outcome is durable) and
 * forget it.  A file that cannot be removed (permissions changed under
 * the watcher) stays marked as handled, so it is not done again and again
 * in this watcher's life (logged once). */
static void finish(intake_req_t *q, int remove)
{
    static const char stuck[] = "stuck";
    apr_status_t rv;
    if (remove && (rv = apr_file_remove(q->path, q->pool)) != APR_SUCCESS
        && !APR_STATUS_IS_ENOENT(rv)) {
        rs_log_emit(&hi.log, RS_LOG_ERR, rv, "hub: cannot remove the spool file '%s'; it is "
                    "not handled again until the watcher restarts", q->path);
        apr_hash_set(hi.stuck, apr_pstrdup(hi.pool, q->name), APR_HASH_KEY_STRING, stuck);
    }
    apr_hash_set(hi.active, q->name, APR_HASH_KEY_STRING, NULL);
    apr_pool_destroy(q->pool);
}

static const char *key_of(const intake_req_t *q)
{
    return apr_pstrcat(q->pool, "cb|", q->req.callback, NULL);
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
    q->denial = 1;
    outcome(q, apr_pstrcat(q->pool, "denied (", reason, ")", NULL));
    if (rs_websub_submit(hi.ws, key_of(q), &w) != APR_SUCCESS) {
        finish(q, 1);
    }
}

/* A new subscription beyond a limit: the reason, else NULL.  A store
 * failure lets it pass (the store write will fail too, and retry). */
static const char *over_limit(intake_req_t *q)
{
    apr_array_header_t *subs;
    apr_pool_t *tmp;
    const char *why = NULL;
    rs_db_t *db = store();

    if (!db) {
        return NULL;
    }
    /* The list of every subscription lives only for this check: up to
     * MAX_ACTIVE requests are handled at once, and each keeping its own
     * copy would make the thread's memory grow with their product. */
    apr_pool_create(&tmp, q->pool);
    if (rs_hubsub_list(db, tmp, &subs) == APR_SUCCESS) {
        why = rs_hubsub_limit(tmp, subs, q->req.set, q->req.kind, q->req.callback,
                              rs_hubconf_max_subs(hi.sc), rs_hubconf_max_per_host(hi.sc));
        why = why ? apr_pstrdup(q->pool, why) : NULL;
    }
    apr_pool_destroy(tmp);
    return why;
}

/* Start handling the spool file `name`. */
static void start(const char *name)
{
    apr_pool_t *p;
    intake_req_t *q;
    const char *why = NULL;
    apr_status_t rv, arv;
    rs_websub_req_t w = { 0 };

    apr_pool_create(&p, hi.pool);
    q = apr_pcalloc(p, sizeof(*q));
    q->pool = p;
    q->name = apr_pstrdup(p, name);
    q->path = apr_pstrcat(p, hi.spool, "/", name, NULL);
    apr_hash_set(hi.active, q->name, APR_HASH_KEY_STRING, q);
    rv = rs_hubreq_spool_read(p, q->path, &q->req, &why);
    if (rv != APR_SUCCESS) {
        if (why) {
            rs_log_emit(&hi.log, RS_LOG_WARN, APR_SUCCESS, "hub: removed the malformed spool "
                        "file '%s': %s", q->path, why);
        }
        else if (!APR_STATUS_IS_ENOENT(rv)) {
            rs_log_emit(&hi.log, RS_LOG_ERR, rv, "hub: cannot read the spool file '%s'",
                        q->path);
            finish(q, 0);
            return;
        }
        finish(q, why != NULL);
        return;
    }
    /* Again, at the time of the call (a denial too): DNS may have changed
     * since the child checked.  The resolver blocks this thread only. */
    if ((why = rs_hubreq_check_callback(p, q->req.callback, hi.sc->hub_allow, &arv))) {
        outcome(q, apr_pstrcat(p, "callback refused (", why, ")", NULL));
        finish(q, 1);
        return;
    }
    if (q->req.deny) {
        deny(q, "unknown topic");
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
    if ((rv = rs_websub_submit(hi.ws, key_of(q), &w)) != APR_SUCCESS) {
        outcome(q, "callback cannot be called");
        finish(q, 1);
    }
}

/* Store the confirmed request; 1 when its outcome is durable. */
static int apply(intake_req_t *q)
{
    rs_db_t *db = store();
    apr_status_t rv = APR_EGENERAL;
    int created = 0, removed = 0;
    const char *why;

    if (db && q->req.mode == RS_HUBREQ_SUBSCRIBE) {
        if ((why = over_limit(q))) {      /* others were confirmed meanwhile */
            deny(q, why);
            return -1;
        }
        rv = rs_hubsub_put(db, q->req.set, q->req.kind, q->req.callback, q->req.secret,
                           apr_time_now() + apr_time_from_sec(q->req.lease), &created);
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
        outcome(q, res->status ? apr_psprintf(q->pool, "not confirmed (HTTP %ld%s)",
                                              res->status, res->outcome == RS_WEBSUB_OK
                                              ? ", wrong challenge" : "")
                               : apr_pstrcat(q->pool, "not confirmed (", res->error, ")",
                                             NULL));
        finish(q, 1);
        return;
    }
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

/* Compare entry names (qsort). */
static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Abandoned temporary files, older than TMP_AGE: removed. */
static void old_tmp(apr_pool_t *p, const char *name, apr_time_t mtime)
{
    if (!strncmp(name, "tmp-", 4) && mtime < apr_time_now() - TMP_AGE) {
        apr_file_remove(apr_pstrcat(p, hi.spool, "/", name, NULL), p);
    }
}

/* List the spool and start what may start, in name order. */
static void drain(apr_pool_t *p, int sweep)
{
    apr_dir_t *dir;
    apr_finfo_t fi;
    apr_array_header_t *names = apr_array_make(p, 16, sizeof(const char *));
    int i, room = MAX_ACTIVE - (int)apr_hash_count(hi.active);

    if (apr_dir_open(&dir, hi.spool, p) != APR_SUCCESS) {
        return;                         /* no request was ever spooled */
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_MTIME, dir) == APR_SUCCESS) {
        if (rs_hubreq_spool_is_req(fi.name)) {
            APR_ARRAY_PUSH(names, const char *) = apr_pstrdup(p, fi.name);
        }
        else if (sweep) {
            old_tmp(p, fi.name, fi.mtime);
        }
    }
    apr_dir_close(dir);
    qsort(names->elts, names->nelts, sizeof(const char *), by_name);
    for (i = 0; i < names->nelts && room > 0; i++) {
        const char *name = APR_ARRAY_IDX(names, i, const char *);
        if (!apr_hash_get(hi.active, name, APR_HASH_KEY_STRING)
            && !apr_hash_get(hi.stuck, name, APR_HASH_KEY_STRING)) {
            start(name);
            room--;
        }
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
    apr_pool_t *iter;
    apr_time_t next_sweep = 0;
    (void)t;
    (void)data;

    o.max_parallel = 16;
    o.timeout_ms = 10000;
    if (rs_websub_create(&hi.ws, hi.pool, &o, on_done, NULL, &hi.log) != APR_SUCCESS) {
        return NULL;                      /* logged; requests stay spooled */
    }
    apr_pool_create(&iter, hi.pool);
    store();                              /* early: before the driver is busy */
    /* The status file's directory, as the children make the spool's. */
    apr_dir_make_recursive(apr_pstrcat(iter, rs_global.state_dir, "/hub", NULL),
                           APR_FPROT_UREAD | APR_FPROT_UWRITE | APR_FPROT_UEXECUTE, iter);
    hi.changed = 1;
    for (;;) {
        apr_time_t now = rs_time_mono();
        int sweep = now >= next_sweep;
        if (sweep) {
            expire(iter);
            next_sweep = now + SWEEP_EVERY;
        }
        if (hi.unstored->nelts && sweep) {
            retry_unstored();
        }
        drain(iter, sweep);
        if (sweep) {
            status(iter);
        }
        apr_pool_clear(iter);
        rs_websub_run(hi.ws, POLL_MS);
    }
    return NULL;
}

/* The first server with the hub on, or NULL. */
static const rs_srv_conf *hub_conf(server_rec *s)
{
    for (; s; s = s->next) {
        const rs_srv_conf *sc = ap_get_module_config(s->module_config, &resourcesync_module);
        if (sc && rs_hubconf_on(sc)) {
            return sc;
        }
    }
    return NULL;
}

void rs_hubintake_start(apr_pool_t *pool, server_rec *s)
{
    apr_allocator_t *alloc;
    apr_thread_t *thread;
    apr_threadattr_t *attr;
    apr_status_t rv;

    if (!(hi.sc = hub_conf(s))) {
        return;
    }
    hi.s = s;
    hi.log.fn = thread_log;
    hi.log.baton = s;
    apr_allocator_create(&alloc);
    apr_pool_create_ex(&hi.pool, NULL, NULL, alloc);
    apr_allocator_owner_set(alloc, hi.pool);
    apr_allocator_max_free_set(alloc, INTAKE_MAX_FREE);
    hi.active = apr_hash_make(hi.pool);
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
