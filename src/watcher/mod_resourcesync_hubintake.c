/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_hubintake.c - the built-in hub's intake thread, and
 * what it asks of httpd's configuration.
 *
 * With ResourceSyncHub on in some server, the watcher starts one intake
 * thread (rs_hubintake_start).  The intake itself is the engine's
 * (rs_hubintake.h: the lifecycle of a spool file; rs_hubverify.h: one
 * request); here are its thread, which never exits (it ends with the
 * watcher's process), and its hooks: the server that received a set's
 * requests (the set's), its limits and its callback policy
 * (rs_hubconf_filter: its ResourceSyncHubAllowCallback), the store
 * connection (rs_jobs_store_open), the clock and the node's name (the
 * requests it queues for a set another node writes: a shared store).
 */
#include <apr_thread_proc.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_hubconf.h"
#include "mod_resourcesync_status.h"
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_jobs.h"
#include "rs_hubintake.h"
#include "rs_statedir.h"
#include "rs_time.h"

#define WAIT_MS     1000 /* longest wait for events */
#define SWEEP_EVERY apr_time_from_sec(1)

/* A busy store (the driver's write in progress) is retried, not an error:
 * its messages, rs_db's included, go to the debug level. */
static void thread_log(void *baton, int level, apr_status_t rv, const char *msg)
{
    if (APR_STATUS_IS_EBUSY(rv) && level < APLOG_DEBUG) {
        level = APLOG_DEBUG;
    }
    ap_log_error(APLOG_MARK, level, rv, (server_rec *)baton, RS_TAG "%s", msg);
}

/* The server config of the server of set name, NULL when it is not
 * configured any more. */
static void *server_of(void *baton, const char *name)
{
    const rs_set_t *set = rs_config_find_set(name);
    (void)baton;
    return set ? ap_get_module_config(set->s->module_config, &resourcesync_module) : NULL;
}

static void quota(void *baton, void *server, rs_hubsub_quota_t *q)
{
    const rs_srv_conf *sc = server;
    (void)baton;
    q->total = rs_hubconf_max_subs(sc);
    q->per_addr = rs_hubconf_max_per_addr(sc);
    q->per_client = rs_hubconf_max_per_client(sc);
}

static int host_allowed(void *baton, apr_pool_t *p, void *server, const char *url)
{
    (void)baton;
    return rs_hubconf_host_allowed(p, server, url);
}

static apr_status_t store_open(void *baton, rs_db_t **db, apr_pool_t **pool, const rs_logger_t *log)
{
    (void)baton;
    return rs_jobs_store_open(db, pool, log);
}

static apr_time_t clock_now(void *baton)
{
    (void)baton;
    return apr_time_now();
}

static void *APR_THREAD_FUNC intake_thread(apr_thread_t *t, void *data)
{
    rs_hubintake_t *hi = data;
    apr_time_t next_sweep = 0;
    (void)t;

    if (rs_hubintake_open(hi, rs_hubconf_verify_timeout()) != APR_SUCCESS) {
        return NULL; /* logged; requests stay spooled */
    }
    for (;;) {
        apr_time_t now = rs_time_mono();
        if (now >= next_sweep) {
            rs_hubintake_sweep(hi, apr_time_now());
            next_sweep = now + SWEEP_EVERY;
        }
        rs_hubintake_drain(hi);
        /* Until a GET completes, a request arrives (the spool's inotify
         * descriptor) or the next sweep. */
        rs_hubintake_wait(hi, WAIT_MS);
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
    const rs_hubintake_hooks_t hooks = { .server_of = server_of,
                                         .quota = quota,
                                         .host_allowed = host_allowed,
                                         .addr_filter = rs_hubconf_filter,
                                         .store_open = store_open,
                                         .clock = clock_now,
                                         .node = rs_global.node_name,
                                         .queue_max = rs_hubconf_spool_max() };
    rs_logger_t log;
    rs_hubgate_t *gate;
    rs_hubintake_t *hi;
    apr_thread_t *thread;
    apr_threadattr_t *attr;
    apr_status_t rv;

    if (!hub_on(s) || !(gate = rs_status_hub_gate())) {
        return;
    }
    log.fn = thread_log;
    log.baton = s;
    hi = rs_hubintake_create(rs_global.state_dir, gate, &hooks, &log);
    apr_threadattr_create(&attr, pool);
    apr_threadattr_detach_set(attr, 1);
    if ((rv = apr_thread_create(&thread, attr, intake_thread, hi, pool)) != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s,
                     RS_TAG "watcher: cannot start the hub's "
                            "intake thread; subscription requests stay in '%s'",
                     rs_statedir_hubspool(pool, rs_global.state_dir));
    }
}
