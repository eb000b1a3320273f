/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_dumpjob.c - Resource Dumps as background jobs.
 *
 * A set with ResourceSyncResourceDump gets a dump built from its
 * inventory after a Resource List snapshot is published: the first one
 * as soon as the set has a snapshot (at every watcher start, reusing the
 * packages of the dump on disk), then after every later snapshot, so that
 * the dump covers what the Resource List does (ResourceSync 1.1, section
 * 9); the next build waits as long as the last one took, at most the
 * directive's duration (rs_dumpsched.h).
 * The job's body (prepared, written, published or dropped) is the engine
 * unit rs_dumprun; this file gives it the set, the access checker, the
 * status entry (dump_gen) and the announcement.
 *
 * A dump build can take long.  The driver never waits for it: a dump is
 * only started when no job runs, and a snapshot due while one runs waits
 * for a later tick (rs_dumpjob_busy).  A file that changes while it is
 * packaged (RS_ZIP_ECHANGED) drops the whole build, logged at debug
 * level; the next snapshot makes the dump due again.  Nothing partial is
 * ever published: the generation directory appears complete or not at all.
 *
 * Store key per set: dump-gen (the newest dump generation published), so
 * that generation numbers are never used twice.  Package URLs name their
 * contents (rs_dumppkg.h), not a generation.
 */
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_access.h"
#include "mod_resourcesync_jobs.h"
#include "mod_resourcesync_status.h"
#include "rs_notify.h"
#include "rs_dumppkg.h"
#include "rs_dumprun.h"
#include "rs_followdump.h"
#include "rs_dumpsched.h"
#include "rs_time.h"

typedef struct dumpjob_t {
    wset_t *ws;
    rs_dumprun_t run;
} dumpjob_t;

/* The dump job in progress (driver's thread only). */
static int running;

int rs_dumpjob_busy(void)
{
    return running;
}

/* The no-space line: every time, at the level rs_dumpsched decides. */
static void plain_log(void *baton, int level, apr_status_t rv, const char *msg)
{
    ap_log_error(APLOG_MARK, level, rv, (server_rec *)baton, RS_TAG "%s", msg);
}

static void dump_published(void *baton, apr_uint64_t gen, apr_status_t recorded)
{
    wset_t *ws = baton;
    ws->status.dump_gen = gen;
    rs_wset_status_put(ws);
    if (recorded == RS_LEASE_LOST) { /* (a failing store: as before, the next write notes it) */
        rs_storefail_note(ws, recorded, "recording a Resource Dump");
    }
    else if (recorded != APR_SUCCESS) {
        rs_log_emit(ws->log, RS_LOG_WARN, recorded,
                    "set %s: cannot record Resource Dump %" APR_UINT64_T_FMT
                    " in the store; other nodes serve the previous one until the next dump",
                    ws->set->name, gen);
    }
}

void rs_dumpjob_prune_stored(wset_t *ws, apr_pool_t *p)
{
    apr_status_t rv;

    if (rs_db_one_node(ws->d->store) || ws->elsewhere) {
        return;
    }
    rv = rs_followdump_prune(ws->d->store, p, ws->set->name, ws->set->rdump_dir,
                             ws->status.dump_gen, NULL);
    if (rv == RS_LEASE_LOST) {
        rs_storefail_note(ws, rv, "dropping the stored files of pruned Resource Dumps");
    }
    else if (rv != APR_SUCCESS) {
        rs_log_emit(ws->log, RS_LOG_WARN, rv,
                    "set %s: cannot drop the stored files of pruned Resource Dumps; "
                    "trying again at the next prune",
                    ws->set->name);
    }
}

/* Framework notification of a new Resource Dump (Framework Notification
 * 1.0.1, Table 2: a Resource Dump is only ever created): resourcedump.xml,
 * or under a Resource Dump Index its first part with rs:ln rel="index"
 * (rs_dumprun decides). */
static void dump_notify(void *baton, apr_pool_t *p, const char *loc, const char *index)
{
    wset_t *ws = baton;
    apr_array_header_t *e = apr_array_make(p, 1, sizeof(rs_notify_fw_entry_t));
    rs_notifyw_fw_add(e, loc, "created", "resourcedump", apr_time_now(), index);
    rs_notifyw_framework(ws, p, e);
}

static apr_status_t dump_run(void *baton, rs_db_t *store, apr_pool_t *p)
{
    return rs_dumprun_run(&((dumpjob_t *)baton)->run, store, p);
}

/* Driver's thread: publish a written dump, or drop it. */
static void dump_finish(void *baton, apr_status_t rv, apr_pool_t *p)
{
    dumpjob_t *j = baton;
    wset_t *ws = j->ws;
    rs_dumprun_hooks_t hooks = { dump_published, dump_notify, ws };
    rs_logger_t plain = { plain_log, ws->d->s };

    running = 0;
    if (rs_dumprun_finish(&j->run, rv, &ws->dump, ws->set->rdump, &hooks, ws->log, &plain, p,
                          rs_time_mono(), apr_time_now())
        == RS_DUMPRUN_PUBLISHED) {
        rs_dumpjob_prune_stored(ws, p);
    }
}

void rs_dumpjob_poll(wset_t *ws, apr_pool_t *p)
{
    const rs_set_t *set = ws->set;
    apr_time_t now = rs_time_mono();
    rs_dumprun_in_t in;
    apr_pool_t *jp;
    rs_job_t *job;
    dumpjob_t *j;
    apr_status_t rv;

    if (!set->rdump) {
        return;
    }
    /* Remove dump generations superseded more than ResourceSyncDumpGrace
     * ago, at most once a second, so a package that left the dump answers
     * 404 soon after its grace ends even when no new dump is built.  Never
     * while a build runs: it may be linking packages out of those
     * generations (rs_dumppkg_reuse). */
    if (rs_dumpsched_prune(&ws->dump, now, running, ws->status.dump_gen)) {
        int before = rs_dumppkg_gens(p, set->rdump_dir)->nelts;
        rs_generation_prune(p, set->rdump_dir, ws->status.dump_gen, set->dump_grace,
                            apr_time_now());
        if (rs_dumppkg_gens(p, set->rdump_dir)->nelts < before) {
            rs_dumpjob_prune_stored(ws, p); /* the store's copies of those removed */
        }
    }
    /* Due: a snapshot was published since the last build, or no build
     * was tried in this watcher's life.  The dump served meanwhile is the
     * one post_config found on disk (rs_status_create), perhaps of an
     * older snapshot; the build at start links every package that did not
     * change, so it reads only what changed while no watcher ran. */
    if (!rs_dumpsched_due(&ws->dump, now,
                          !rs_jobs_busy() && ws->status.gen && !ws->status.unavailable
                              && !ws->retry.err)) {
        return;
    }
    job = rs_jobs_create(&jp);
    j = apr_pcalloc(jp, sizeof(*j));
    j->ws = ws;
    in.set = set->name;
    in.root = set->dir;
    in.root_url = set->root_url;
    in.capability_url = set->capability_url;
    in.doc_base = set->doc_base;
    in.dir = set->rdump_dir;
    in.hashes = set->hashes;
    in.links = set->links;
    in.max_entries = set->dump_entries;
    in.max_bytes = set->dump_size;
    in.list_max = set->max_entries;
    in.grace = set->dump_grace;
    in.store_history = ws->d->statecheck.history;
    in.url_history = ws->status.history;
    in.at = ws->status.at;
    in.completed = ws->status.completed;
    in.current = ws->status.dump_gen;
    in.check = rs_access_check;
    in.check_baton = ws->job_acc;
    rv = rs_dumprun_prepare(&j->run, &in, ws->d->store, jp);
    rs_dumpsched_started(&ws->dump, now);
    if (rv != APR_SUCCESS) {
        rs_jobs_drop(job, dump_finish, j, rv);
        return;
    }
    running = 1;
    rs_jobs_submit(job, dump_run, dump_finish, j, 1);
}
