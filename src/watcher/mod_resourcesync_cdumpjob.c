/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_cdumpjob.c - Change Dumps as background jobs.
 *
 * A set with ResourceSyncChangeDump gets one package per closed Change
 * List.  When its job is due is rs_dumpsched's (a list closed, watcher
 * start, once per ResourceSyncChangeListPeriod, the collection's pacing);
 * the job's body (prune, build the missing packages, collect captures,
 * rewrite changedump.xml) is the engine unit rs_cdumprun.  This file
 * gives it the set and the access checker (ws->job_acc), and publishes
 * the outcome: the readiness and the disk use in the set's status entry,
 * and the framework notification.  With a shared store the job then
 * stores the directory for the other nodes when it changed it (or an
 * earlier store is pending), on the job thread: mod_resourcesync_followcdump.c.
 */
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_access.h"
#include "mod_resourcesync_jobs.h"
#include "rs_notify.h"
#include "rs_cdumprun.h"
#include "rs_dumpsched.h"
#include "rs_followcdump.h"
#include "rs_time.h"

typedef struct cdjob_t {
    wset_t *ws;
    rs_cdumprun_t run;
    /* The directory stored for the other nodes (shared store): follow,
     * the set is followed; pending, store it even unchanged; tried, a
     * store was tried with outcome stored (generation gen, st). */
    int follow, pending, tried;
    apr_status_t stored;
    apr_uint64_t gen;
    rs_blob_stats_t st;
} cdjob_t;

static int running;

int rs_cdumpjob_busy(void)
{
    return running;
}

static apr_status_t cd_run(void *baton, rs_db_t *store, apr_pool_t *p)
{
    cdjob_t *j = baton;
    apr_status_t rv = rs_cdumprun_run(&j->run, store, p);

    if (rv == APR_SUCCESS && j->follow && (j->run.written || j->pending)) {
        j->tried = 1;
        j->stored = rs_followcdump_store(store, p, j->run.o.set, j->run.o.dir, &j->gen, &j->st);
    }
    return rv;
}

/* One framework notification entry (rs_cdumprun_announce_fn). */
static void cd_announce(void *baton, apr_pool_t *p, const char *loc, const char *change,
                        const char *index)
{
    rs_notifyw_fw_add(baton, loc, change, "changedump", apr_time_now(), index);
}

/* Framework notification: the Change Dump got new packages (created:
 * the first of this history; under an index, its parts: rs_cdumprun). */
static void cd_notify(wset_t *ws, const rs_cdumprun_t *c, apr_pool_t *p, int first)
{
    apr_array_header_t *e = apr_array_make(p, 1, sizeof(rs_notify_fw_entry_t));
    rs_cdumprun_announce(c, first, cd_announce, e, p);
    rs_notifyw_framework(ws, p, e);
}

/* Driver's thread. */
static void cd_finish(void *baton, apr_status_t rv, apr_pool_t *p)
{
    cdjob_t *j = baton;
    const rs_cdumprun_t *c = &j->run;
    wset_t *ws = j->ws;
    rs_cdumprun_end_t end;

    running = 0;
    end = rs_cdumprun_finish(&j->run, rv, &ws->cdump, ws->log, p, rs_time_mono());
    if (j->tried || rv != APR_SUCCESS) {
        rs_followcdumpw_stored(ws, j->tried, j->stored, j->gen, &j->st);
    }
    if (end == RS_CDUMPRUN_KEPT && c->gc_took && ws->status.cdump_ready) {
        ws->status.capture_bytes = c->cap_bytes;
        rs_wset_status_put(ws);
    }
    if (end != RS_CDUMPRUN_WRITTEN) {
        return;
    }
    /* New packages; or, without one, parts of an index new in this write
     * (ResourceSyncMaxEntries lowered at a restart): each is created. */
    if (c->built || (c->ix.created && c->ix.created->nelts)) {
        cd_notify(ws, c, p, !ws->status.cdump_ready);
    }
    ws->status.cdump_ready = 1;
    ws->status.cdump_bytes = c->pkg_bytes;
    ws->status.capture_bytes = c->cap_bytes;
    rs_wset_status_put(ws);
}

/* The set as rs_cdumprun needs it. */
static void cd_in(const wset_t *ws, rs_cdumprun_in_t *in)
{
    const rs_set_t *set = ws->set;

    in->set = set->name;
    in->dir = set->cdump_dir;
    in->capture_dir = set->capture_dir;
    in->history = ws->status.history;
    in->root_url = set->root_url;
    in->capability_url = set->capability_url;
    in->doc_base = set->doc_base;
    in->hashes = set->hashes;
    in->links = set->links;
    in->spec10 = set->spec10;
    in->list_max = set->max_entries;
    in->root = set->dir;
    in->check = rs_access_check;
    in->check_baton = ws->job_acc;
}

void rs_cdumpjob_opts(const wset_t *ws, apr_pool_t *p, rs_cdump_opts_t *o)
{
    rs_cdumprun_in_t in;

    cd_in(ws, &in);
    rs_cdumprun_opts(o, &in, p);
}

void rs_cdumpjob_poll(wset_t *ws, apr_pool_t *p)
{
    const rs_set_t *set = ws->set;
    apr_time_t now = rs_time_mono();
    rs_cdumprun_in_t in;
    apr_pool_t *jp;
    rs_job_t *job;
    cdjob_t *j;

    if (!set->cdump
        || !rs_cdumpsched_due(&ws->cdump, now,
                              !rs_jobs_busy() && *ws->status.history && ws->status.cl_ready
                                  && !ws->retry.err,
                              ws->status.cl_open_id)) {
        return;
    }
    job = rs_jobs_create(&jp);
    j = apr_pcalloc(jp, sizeof(*j));
    j->ws = ws;
    j->follow = rs_followcdumpw_followed(ws);
    j->pending = rs_followcdumpw_pending(ws);
    cd_in(ws, &in);
    rs_cdumprun_prepare(&j->run, &in, ws->d->statecheck.history, &ws->cdump, now,
                        ws->status.cl_open_id, set->cl_period, jp);
    running = 1;
    rs_jobs_submit(job, cd_run, cd_finish, j, 1);
    (void)p;
}
