/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_cdumpjob.c - Change Dumps as background jobs.
 *
 * A set with ResourceSyncChangeDump gets one package per closed Change
 * List (rs_cdump).  The driver starts a job when the open list's id
 * changed since the last job (a list closed), at watcher start, and once
 * per ResourceSyncChangeListPeriod (at most an hour) otherwise, since
 * retention drops lists without closing one.  Only one job runs at a time
 * (rs_jobs); the job, on the job thread with its own store connection:
 *
 *   1. removes the files of lists no longer retained (or of another
 *      history) and temporary files a crash left (rs_cdump_prune);
 *   2. builds the package of every retained closed list that has none
 *      (so a package lost to a crash or kill, or withdrawn, is rebuilt at
 *      the next start); a list whose captured bytes are gone gets a .skip
 *      marker and no package, logged once (the Change List still has
 *      it); versions whose path stopped being listed, or that httpd
 *      would not serve now (the job's own access checker), are written
 *      as deletions without bytes (rs_cdump.h);
 *   3. when lists went (step 1), in the first job of a watcher, and when
 *      deletions were journaled since the last collection, collects the
 *      captures no kept version names (rs_cdump_gc, which reads every
 *      retained record's digest; files changed in the last hour are
 *      kept: the hashing lane and the scans write captures whose records
 *      are not committed yet -- except the captures of versions withheld
 *      since, which go at once).  A collection after deletions waits at
 *      least RS_CDUMPSCHED_GC_MIN, and ten times as long as the last one took,
 *      after the last: a set that deletes all the time does not spend
 *      its job thread reading its journal;
 *   4. when anything changed (or in the first job), rewrites
 *      changedump.xml, then (driver's thread) publishes its readiness and
 *      the disk use in the set's status entry.
 *
 * A failure other than missing captures (disk full...) publishes no
 * package and leaves changedump.xml as it was; the next job tries again.
 */
#include <string.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_access.h"
#include "mod_resourcesync_jobs.h"
#include "rs_notify.h"
#include "rs_capture.h"
#include "rs_cdump.h"
#include "rs_dumpsched.h"
#include "rs_time.h"

#define CAPTURE_YOUNG apr_time_from_sec(3600)

typedef struct cdjob_t {
    wset_t *ws;
    rs_cdump_opts_t o;
    const char *store_history;   /* of the driver's store when prepared */
    int first;                   /* the first job of this watcher for the set */
    int written;                 /* changedump.xml was written */
    int collect;                 /* collect captures (deletions were journaled) */
    apr_interval_time_t gc_took; /* the collection's time, 0: none ran */
    int built, skipped, withheld;
    const char *skip_what; /* the first skipped list's cause */
    apr_int64_t skip_id;
    apr_int64_t pkg_bytes, cap_bytes;
} cdjob_t;

static int running;

int rs_cdumpjob_busy(void)
{
    return running;
}

/* Step 2: the missing packages. */
static apr_status_t build_missing(cdjob_t *c, rs_journal_t *j, const apr_array_header_t *closed,
                                  apr_pool_t *p)
{
    apr_pool_t *kp;
    apr_status_t rv = APR_SUCCESS;
    int i;

    apr_pool_create(&kp, p);
    for (i = 0; i < closed->nelts && rv == APR_SUCCESS; i++) {
        const rs_changelist_t *cl = &APR_ARRAY_IDX(closed, i, rs_changelist_t);
        rs_cdump_result_t res;
        apr_pool_clear(kp);
        if (rs_cdump_done(&c->o, cl->id, kp)) {
            continue;
        }
        rv = rs_cdump_package(j, &c->o, cl, kp, &res);
        if (rv == RS_CDUMP_EMISSING) {
            if (!c->skipped++) {
                c->skip_id = cl->id;
                c->skip_what = apr_pstrdup(p, res.missing);
            }
            rv = APR_SUCCESS;
        }
        else if (rv == APR_SUCCESS) {
            c->built++;
            c->withheld += res.withheld;
        }
    }
    apr_pool_destroy(kp);
    return rv;
}

/* Job (job thread). */
static apr_status_t cd_run(void *baton, rs_db_t *store, apr_pool_t *p)
{
    cdjob_t *c = baton;
    rs_journal_t *j;
    apr_array_header_t *closed;
    rs_changelist_t openl;
    int pruned;
    apr_status_t rv;

    /* As for snapshots: a store replaced meanwhile is another journal. */
    if ((rv = rs_jobs_same_store(store, p, c->store_history)) != APR_SUCCESS
        || (rv = rs_journal_open(&j, store, p)) != APR_SUCCESS
        || (rv = rs_journal_lists(j, p, c->o.set, &closed, &openl)) != APR_SUCCESS) {
        return rv;
    }
    pruned = rs_cdump_prune(&c->o, closed, p);
    if ((rv = build_missing(c, j, closed, p)) != APR_SUCCESS) {
        return rv;
    }
    if (pruned || c->first || c->collect) {
        apr_time_t t0 = rs_time_mono();
        rs_cdump_gc(j, &c->o, apr_time_now() - CAPTURE_YOUNG, p, NULL, NULL);
        c->gc_took = rs_time_mono() - t0 + 1;
    }
    c->cap_bytes = rs_capture_bytes(c->o.capture_dir, p);
    if (!pruned && !c->first && !c->built && !c->skipped) {
        return APR_SUCCESS;
    }
    c->written = 1;
    return rs_cdump_index(&c->o, closed, openl.from, p, &c->pkg_bytes);
}

/* Framework notification: the Change Dump got new packages (created:
 * the first of this history). */
static void cd_notify(wset_t *ws, apr_pool_t *p, int first)
{
    apr_array_header_t *e = apr_array_make(p, 1, sizeof(rs_notify_fw_entry_t));
    rs_notifyw_fw_add(e, apr_pstrcat(p, ws->set->doc_base, "changedump.xml", NULL),
                      first ? "created" : "updated", "changedump", apr_time_now(), NULL);
    rs_notifyw_framework(ws, p, e);
}

/* Driver's thread. */
static void cd_finish(void *baton, apr_status_t rv, apr_pool_t *p)
{
    cdjob_t *c = baton;
    wset_t *ws = c->ws;
    const char *name = ws->set->name;

    running = 0;
    if (c->skipped) {
        rs_log_emit(ws->log, RS_LOG_WARN, 0,
                    "set %s: no Change Dump package for %d Change "
                    "List(s), first %" APR_INT64_T_FMT ": the captured bytes of %s are gone",
                    name, c->skipped, c->skip_id, c->skip_what);
    }
    if (rv != APR_SUCCESS && rs_dumpsched_no_space(rv)) {
        /* Once per episode, then at debug level; nothing partial was
         * published, changedump.xml still lists what is complete, and the
         * job runs again within RS_CDUMPSCHED_NOSPACE_RETRY, so it resumes
         * by itself. */
        rs_log_emit(ws->log, rs_cdumpsched_nospace(&ws->cdump, rs_time_mono()), rv,
                    "set %s: no space left to build its Change Dump in %s; the packages "
                    "built stay served, building resumes when there is space",
                    name, ws->set->cdump_dir);
        return;
    }
    if (rv != APR_SUCCESS) {
        rs_log_emit(ws->log, RS_LOG_ERR, rv,
                    "set %s: cannot build its Change Dump; trying "
                    "again when the next Change List closes",
                    name);
        return;
    }
    if (rs_cdumpsched_ok(&ws->cdump)) {
        rs_log_emit(ws->log, RS_LOG_INFO, 0, "set %s: space again for the Change Dump", name);
    }
    if (c->gc_took) {
        /* The next collection after deletions, not before (see the top). */
        rs_cdumpsched_collected(&ws->cdump, rs_time_mono(), c->gc_took);
    }
    if (c->built) {
        rs_log_emit(ws->log, RS_LOG_INFO, 0, "set %s: published %d Change Dump package(s)%s%s",
                    name, c->built,
                    c->withheld ? "; versions of paths no longer listed, "
                                  "written as deletions without bytes: "
                                : "",
                    c->withheld ? apr_itoa(p, c->withheld) : "");
    }
    if (!c->written) {
        if (c->gc_took && ws->status.cdump_ready) {
            ws->status.capture_bytes = c->cap_bytes;
            rs_wset_status_put(ws);
        }
        return;
    }
    ws->cdump.written = 1;
    if (c->built) {
        cd_notify(ws, p, !ws->status.cdump_ready);
    }
    ws->status.cdump_ready = 1;
    ws->status.cdump_bytes = c->pkg_bytes;
    ws->status.capture_bytes = c->cap_bytes;
    rs_wset_status_put(ws);
}

void rs_cdumpjob_opts(const wset_t *ws, apr_pool_t *p, rs_cdump_opts_t *o)
{
    const rs_set_t *set = ws->set;

    memset(o, 0, sizeof(*o));
    o->set = set->name;
    o->dir = set->cdump_dir;
    o->capture_dir = set->capture_dir;
    o->history = apr_pstrdup(p, ws->status.history);
    o->url_base = set->root_url;
    o->capability_url = set->capability_url;
    o->pkg_url_prefix = apr_pstrcat(p, set->doc_base, "changedump/", ws->status.history, "-", NULL);
    o->hashes = set->hashes;
    /* Versions denied since the last scan are withheld (rs_cdump.h). */
    o->root = set->dir;
    o->check = rs_access_check;
    o->check_baton = ws->job_acc;
}

void rs_cdumpjob_poll(wset_t *ws, apr_pool_t *p)
{
    const rs_set_t *set = ws->set;
    apr_time_t now = rs_time_mono();
    apr_pool_t *jp;
    rs_job_t *job;
    cdjob_t *c;

    if (!set->cdump
        || !rs_cdumpsched_due(&ws->cdump, now,
                              !rs_jobs_busy() && *ws->status.history && ws->status.cl_ready
                                  && !ws->retry.err,
                              ws->status.cl_open_id)) {
        return;
    }
    job = rs_jobs_create(&jp);
    c = apr_pcalloc(jp, sizeof(*c));
    c->ws = ws;
    c->store_history = apr_pstrdup(jp, ws->d->statecheck.history);
    rs_cdumpjob_opts(ws, jp, &c->o);
    rs_cdumpsched_started(&ws->cdump, now, ws->status.cl_open_id, set->cl_period, &c->collect,
                          &c->first);
    running = 1;
    rs_jobs_submit(job, cd_run, cd_finish, c, 1);
    (void)p;
}
