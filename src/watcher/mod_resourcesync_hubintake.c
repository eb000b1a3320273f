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
#include "mod_resourcesync_hubconf.h"
#include "mod_resourcesync_status.h"
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_hubintake.h"
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

#define WAIT_MS         1000                  /* longest wait for events */
#define MAX_RUNNING     32                    /* verifications at once */
#define PER_HOST        2                     /* ... for one callback host */
#define PER_CLIENT      8                     /* ... for one client */
#define TMP_AGE         apr_time_from_sec(60) /* "tmp-*" older: abandoned */
#define SWEEP_EVERY     apr_time_from_sec(1)
#define INTAKE_MAX_FREE (1024 * 1024) /* bytes of freed memory the thread keeps */

/* A busy store (the driver's write in progress) is retried, not an error:
 * its messages, rs_db's included, go to the debug level. */
static void thread_log(void *baton, int level, apr_status_t rv, const char *msg)
{
    if (APR_STATUS_IS_EBUSY(rv) && level < APLOG_DEBUG) {
        level = APLOG_DEBUG;
    }
    ap_log_error(APLOG_MARK, level, rv, (server_rec *)baton, RS_TAG "%s", msg);
}

/* A request that arrived: read for its keys and queued, or removed when
 * nothing may come of it. */
static void arrive(apr_pool_t *p, const char *name)
{
    const char *path = apr_pstrcat(p, rs_hi.spool, "/", name, NULL), *why, *client;
    apr_size_t size = 0, n = strlen(name);
    const rs_set_t *set = NULL;
    const char *host = NULL;
    pending_t *pend;
    apr_port_t port;
    rs_hubreq_t req;
    apr_status_t rv;

    if (apr_hash_get(rs_hi.known, name, APR_HASH_KEY_STRING)
        || apr_hash_get(rs_hi.stuck, name, APR_HASH_KEY_STRING)) {
        return; /* reported twice */
    }
    rv = rs_hubreq_spool_read(p, path, &req, &why, &size);
    if (rv != APR_SUCCESS && !why) {
        if (!APR_STATUS_IS_ENOENT(rv)) {
            rs_log_emit(&rs_hi.log, RS_LOG_ERR, rv, "hub: cannot read the spool file '%s'", path);
        }
        return;
    }
    if (why) {
        rs_log_emit(&rs_hi.log, RS_LOG_WARN, APR_SUCCESS,
                    "hub: removed the malformed spool "
                    "file '%s': %s",
                    path, why);
    }
    else if (req.deny || !(set = rs_config_find_set(req.set))) {
        /* Nothing goes out: an unknown topic of an older child, or a set
         * no longer configured. */
        rs_log_emit(&rs_hi.log, RS_LOG_INFO, APR_SUCCESS,
                    "hub: %s %s of '%s' for '%s': "
                    "dropped (%s)",
                    rs_hubreq_mode_name(req.mode), name, req.callback, req.topic,
                    req.deny ? "not a topic of this hub"
                             : "its set is not "
                               "configured any more");
    }
    if (!set || rs_hubreq_callback_syntax(p, req.callback, &host, &port)) {
        rs_hubstate_drop_file(p, name, size);
        return;
    }
    client = rs_hubaddr_key_text(p, req.client);
    pend = malloc(sizeof(*pend) + n);
    if (!pend) {
        return; /* found again at the next listing */
    }
    memcpy(pend->name, name, n + 1);
    pend->size = size;
    pend->entry = rs_hubsched_add(rs_hi.sched, client ? client : "(unknown)",
                                  rs_hubaddr_host_key(p, host), pend);
    apr_hash_set(rs_hi.known, pend->name, APR_HASH_KEY_STRING, pend);
}

/* New requests from the spool, then whatever the scheduler lets start. */
static void drain(apr_pool_t *p)
{
    apr_array_header_t *names = apr_array_make(p, 16, sizeof(const char *));
    rs_hubspool_census_t census;
    rs_hubsched_entry_t *e;
    apr_status_t rv;
    int i;

    if ((rv = rs_hubspool_take(rs_hi.follow, p, names, &census)) != APR_SUCCESS) {
        rs_log_emit(&rs_hi.log, RS_LOG_ERR, rv, "hub: cannot list the spool '%s'", rs_hi.spool);
    }
    if (census.listed) {
        /* What the spool holds, reserved or not: the segment is new in
         * every generation, and a process killed between its two steps
         * leaves a count behind. */
        rs_hubgate_set(rs_hi.gate, census.files,
                       census.bytes > 0xffffffffu ? 0xffffffffu : (apr_uint32_t)census.bytes);
    }
    for (i = 0; i < names->nelts; i++) {
        arrive(p, APR_ARRAY_IDX(names, i, const char *));
    }
    while ((e = rs_hubsched_next(rs_hi.sched))) {
        rs_hubverify_start(rs_hubsched_item(e));
    }
}

/* Writes in progress left by children killed mid-write: removed, their
 * reservations given back. */
static void sweep_tmp(void)
{
    apr_uint32_t files;
    apr_uint64_t bytes;

    rs_hubspool_sweep(rs_hi.follow, apr_time_now(), TMP_AGE, &files, &bytes);
    if (files) {
        rs_hubgate_release(rs_hi.gate, files,
                           bytes > 0xffffffffu ? 0xffffffffu : (apr_uint32_t)bytes);
    }
}

/* Subscriptions whose lease ended: deleted. */
static void expire(apr_pool_t *p)
{
    apr_array_header_t *gone;
    rs_db_t *db = rs_hubstate_store();
    apr_status_t rv;
    int i;

    if (!db) {
        return;
    }
    if ((rv = rs_hubsub_expire(db, p, apr_time_now(), &gone)) != APR_SUCCESS) {
        rs_log_emit(&rs_hi.log, RS_LOG_ERR, rv, "hub: cannot remove expired subscriptions");
        rs_hubstate_store_failed(rv);
        return;
    }
    for (i = 0; i < gone->nelts; i++) {
        const rs_hubsub_t *x = &APR_ARRAY_IDX(gone, i, rs_hubsub_t);
        rs_log_emit(&rs_hi.log, RS_LOG_INFO, APR_SUCCESS,
                    "hub: the lease of '%s' on set %s, "
                    "topic %s ended; subscription removed",
                    x->url, x->set, x->topic);
        rs_hi.changed = 1;
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
    apr_file_printf(f, "hub-last-intake: %s\n", rs_hi.last[0] ? rs_hi.last : "-");
    (void)p;
    return APR_SUCCESS;
}

static void status(apr_pool_t *p)
{
    apr_array_header_t *subs;
    rs_db_t *db = rs_hubstate_store();
    apr_status_t rv;

    if (!rs_hi.changed || !db || rs_hubsub_list(db, p, &subs) != APR_SUCCESS) {
        return;
    }
    if ((rv = rs_file_replace(p, rs_hi.status_path, write_status, subs)) != APR_SUCCESS) {
        rs_log_emit(&rs_hi.log, RS_LOG_ERR, rv, "hub: cannot write '%s'", rs_hi.status_path);
        return;
    }
    rs_hi.changed = 0;
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
    if (rs_websub_create(&rs_hi.ws, rs_hi.pool, &o, rs_hubverify_done, NULL, &rs_hi.log)
        != APR_SUCCESS) {
        return NULL; /* logged; requests stay spooled */
    }
    if ((rv = rs_hubspool_open(&rs_hi.follow, rs_hi.pool, rs_hi.spool, RS_HUBREQ_DIR_PERMS))
        != APR_SUCCESS) {
        rs_log_emit(&rs_hi.log, RS_LOG_ERR, rv,
                    "hub: cannot follow the spool '%s'; "
                    "subscription requests stay there until the watcher restarts",
                    rs_hi.spool);
        return NULL;
    }
    rs_websub_poll_fd(rs_hi.ws, rs_hubspool_fd(rs_hi.follow));
    lim.total = MAX_RUNNING;
    lim.per_host = PER_HOST;
    lim.per_client = PER_CLIENT;
    rs_hi.sched = rs_hubsched_create(rs_hi.pool, &lim);
    apr_pool_create(&iter, rs_hi.pool);
    rs_hubstate_store(); /* early: before the driver is busy */
    /* The status file's directory, as the children make the spool's. */
    apr_dir_make_recursive(rs_statedir_hub(iter, rs_global.state_dir),
                           APR_FPROT_UREAD | APR_FPROT_UWRITE | APR_FPROT_UEXECUTE, iter);
    rs_hi.changed = 1;
    for (;;) {
        apr_time_t now = rs_time_mono();
        if (now >= next_sweep) {
            expire(iter);
            if (rs_hi.unstored->nelts) {
                rs_hubverify_retry();
            }
            sweep_tmp();
            status(iter);
            next_sweep = now + SWEEP_EVERY;
        }
        drain(iter);
        apr_pool_clear(iter);
        /* Until a GET completes, a request arrives (the spool's inotify
         * descriptor) or the next sweep. */
        rs_websub_run(rs_hi.ws, WAIT_MS);
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

    if (!hub_on(s) || !(rs_hi.gate = rs_status_hub_gate())) {
        return;
    }
    rs_hi.s = s;
    rs_hi.log.fn = thread_log;
    rs_hi.log.baton = s;
    apr_allocator_create(&alloc);
    apr_pool_create_ex(&rs_hi.pool, NULL, NULL, alloc);
    apr_allocator_owner_set(alloc, rs_hi.pool);
    apr_allocator_max_free_set(alloc, INTAKE_MAX_FREE);
    rs_hi.known = apr_hash_make(rs_hi.pool);
    rs_hi.stuck = apr_hash_make(rs_hi.pool);
    rs_hi.unstored = apr_array_make(rs_hi.pool, 4, sizeof(intake_req_t *));
    rs_hi.spool = rs_statedir_hubspool(rs_hi.pool, rs_global.state_dir);
    rs_hi.status_path = rs_statedir_hubintake(rs_hi.pool, rs_global.state_dir);
    apr_threadattr_create(&attr, pool);
    apr_threadattr_detach_set(attr, 1);
    if ((rv = apr_thread_create(&thread, attr, intake_thread, NULL, pool)) != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s,
                     RS_TAG "watcher: cannot start the hub's "
                            "intake thread; subscription requests stay in '%s'",
                     rs_hi.spool);
    }
}
