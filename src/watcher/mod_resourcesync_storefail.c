/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_storefail.c - the store failing: the glue of
 * rs_storeretry.
 *
 * The decisions (when a set fails and is due to retry, the back-off, the
 * episode and its two log lines, reopening the store) are the engine's
 * (rs_storeretry.c, whose header describes the rule).  Here: the wset_t
 * and rs_drive_t side of it.  A failing set is marked dirty (a new
 * Resource List once it works), its committed records are published
 * before anything later (rs_changes_resync), the episode's cause goes to
 * the status segment's header (store_err, for the status page) and its
 * lines straight to the error log, and waiting for the store at the
 * watcher's start keeps the heartbeat while children go on serving what
 * is on disk.
 */
#include <unistd.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_changes.h"
#include "mod_resourcesync_jobs.h"
#include "mod_resourcesync_logonce.h"
#include "mod_resourcesync_status.h"
#include "rs_time.h"

static void publish_cause(void *baton, apr_status_t rv)
{
    rs_status_t *st = rs_status_get();

    (void)baton;
    if (st) {
        st->store_err = (apr_int32_t)rv;
    }
}

/* The store's own error lines are logged again in a later episode. */
static void episode_ended(void *baton)
{
    (void)baton;
    rs_logonce_forget();
}

/* Sleep for delay, keeping the heartbeat; 0 when the parent is gone. */
static int wait_retry(void *baton, apr_interval_time_t delay)
{
    apr_time_t end = rs_time_mono() + delay;
    rs_status_t *st = rs_status_get();

    (void)baton;
    while (rs_time_mono() < end) {
        if (getppid() == 1) {
            return 0;
        }
        if (st) {
            st->heartbeat = apr_time_now();
        }
        apr_sleep(apr_time_from_msec(200));
    }
    return 1;
}

static const rs_storeretry_cb_t episode_cb = { publish_cause, episode_ended, wait_retry, NULL };

/* The episode's lines go straight to the error log: not once-only, and
 * not the status page's last error. */
static void episode_log(void *baton, int level, apr_status_t rv, const char *msg)
{
    ap_log_error(APLOG_MARK, level, rv, (server_rec *)baton, RS_TAG "%s", msg);
}

void rs_storefail_init(rs_drive_t *d)
{
    d->episode_log.fn = episode_log;
    d->episode_log.baton = d->s;
    rs_storeretry_init(&d->episode, rs_global.state_dir, &d->episode_log, &episode_cb);
    rs_storeretry_use(&d->episode, &rs_global.store, rs_global.store_shown);
}

void rs_storefail_note(wset_t *ws, apr_status_t rv, const char *what)
{
    if (rv == RS_LEASE_LOST) { /* not a failure of the store: another node writes */
        ws->lease_lost = 1;    /* the loop's heartbeat makes it elsewhere */
        return;
    }
    rs_storeretry_note(&ws->retry, &ws->d->episode, rv, ws->set->name, what, rs_time_mono(),
                       ws->log);
    ws->snap.dirty = 1; /* a new Resource List once it works */
}

apr_status_t rs_storefail_resync(apr_pool_t *p, wset_t *ws)
{
    apr_status_t rv = rs_changes_resync(p, ws->d->journal, ws->set, &ws->status);
    ws->retry.resync = rv != APR_SUCCESS;
    return rv;
}

void rs_storefail_failed(apr_pool_t *p, wset_t *ws, apr_status_t rv, const char *what)
{
    ws->retry.resync = 1;
    rs_storefail_resync(p, ws);
    rs_storefail_note(ws, rv, what);
}

apr_status_t rs_storefail_reopen(rs_drive_t *d)
{
    apr_status_t rv;
    int i;

    /* Every connection of the process goes first: SQLite shares a file's
     * locks and -shm index among them, and one opened read-only would
     * keep the new one read-only. */
    rs_jobs_close_store();
    rv =
        rs_storeretry_reopen(&d->episode, d->pool, &d->log, &d->store_pool, &d->store, &d->journal);
    if (rv == APR_SUCCESS) {
        rs_jobs_init(d->pool, d->s, d->store);
        return APR_SUCCESS;
    }
    /* No connection: no set may touch the store before a retry opens
     * one. */
    for (i = 0; i < d->nsets; i++) {
        rs_storefail_note(&d->ws[i], rv, "opening the store");
    }
    return rv;
}

apr_status_t rs_storefail_open(rs_drive_t *d)
{
    return rs_storeretry_open(&d->episode, d->pool, &d->log, &d->store_pool, &d->store,
                              &d->journal);
}
