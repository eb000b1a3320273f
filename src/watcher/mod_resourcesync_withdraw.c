/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_withdraw.c - the watcher's side of withdrawals
 * (rs_withdrawq.h decides; here: the sets of the driver, the targeted
 * scan, the dumps' options and making them due). */
#include <string.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_jobs.h"
#include "rs_withdrawq.h"

static rs_withdrawq_t queue;

static void wq_find(void *baton, const char *name, rs_withdrawq_set_t *out)
{
    rs_drive_t *d = baton;
    int i;

    for (i = 0; i < d->nsets; i++) {
        wset_t *ws = &d->ws[i];
        if (!strcmp(ws->set->name, name)) {
            out->set = ws;
            out->log = ws->log;
            out->ready = !ws->retry.err && !ws->status.unavailable;
            return;
        }
    }
}

static int wq_reconcile(void *baton, void *set, apr_pool_t *p, const char *dir, const char *name)
{
    wset_t *ws = set;
    rs_scan_target_t t;
    apr_array_header_t *names = apr_array_make(p, 1, sizeof(const char *));

    (void)baton;
    t.dir = dir;
    APR_ARRAY_PUSH(names, const char *) = name;
    t.names = names;
    rs_reconcile_targets(p, ws, &t, 1);
    return !ws->retry.err;
}

static void wq_prepare(void *baton, void *set, apr_pool_t *jp, rs_cdump_opts_t *o,
                       const char **rdump_dir)
{
    wset_t *ws = set;

    (void)baton;
    if (ws->set->cdump && *ws->status.history) {
        rs_cdumpjob_opts(ws, jp, o);
    }
    *rdump_dir = ws->set->rdump ? ws->set->rdump_dir : NULL;
}

/* The Change Dump job runs next (it builds the withdrawn lists' packages
 * again under their new names and collects the path's captures), and a
 * Resource Dump build is due at once (its packages that held the file
 * get other keys, so other names). */
static void wq_withdrawn(void *baton, void *set, int cdump_n, int rdump_n)
{
    wset_t *ws = set;

    (void)baton;
    if (cdump_n) {
        ws->cdump.next = 0;
    }
    ws->cdump.deleted = 1;
    ws->cdump.gc_next = 0;
    if (rdump_n) {
        ws->dump.due = 1;
        ws->dump.next = 0;
    }
}

void rs_withdraw_poll(rs_drive_t *d, apr_time_t now)
{
    static rs_withdrawq_cb_t cb = { wq_find, wq_reconcile, wq_prepare, wq_withdrawn, NULL };

    if (!queue.cb) {
        rs_withdrawq_init(&queue, rs_global.state_dir, rs_jobs_thread(), &cb);
    }
    cb.baton = d;
    rs_withdrawq_poll(&queue, d->store, d->statecheck.history, &d->log, d->iter, now);
    apr_pool_clear(d->iter);
}
