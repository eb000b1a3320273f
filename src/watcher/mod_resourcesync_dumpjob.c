/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_dumpjob.c - Resource Dumps as background jobs.
 *
 * A set with ResourceSyncResourceDump gets a dump built from its
 * inventory after a Resource List snapshot is published: the first one
 * as soon as the set has a snapshot (at every watcher start, reusing the
 * packages of the dump on disk),
 * then after a later snapshot, at most once per the directive's duration.
 * Lifecycle, like the snapshots (mod_resourcesync_snapjob.c): prepared
 * on the driver's thread (generation number and temporary directory in
 * <statedir>/dumps/<set>, rs_generation), written by rs_dump_write as a
 * job, then published (renamed into place), recorded and announced in
 * the set's status entry (dump_gen) on the driver's thread.
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
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_access.h"
#include "mod_resourcesync_jobs.h"
#include "mod_resourcesync_status.h"
#include "rs_notify.h"
#include "rs_dump.h"
#include "rs_dumpsched.h"
#include "rs_generation.h"
#include "rs_history.h"
#include "rs_statedir.h"
#include "rs_time.h"
#include "rs_zip.h"

typedef struct dumpjob_t {
    wset_t *ws;
    rs_dump_opts_t o;
    rs_generation_t g;
    rs_dump_info_t info;
    const char *history;     /* of the driver's store when prepared */
    const char *url_history; /* in the package URLs (the status entry's) */
} dumpjob_t;

/* The dump job in progress (driver's thread only). */
static int running;

int rs_dumpjob_busy(void)
{
    return running;
}

static const char *gen_key(apr_pool_t *p, const rs_set_t *set)
{
    return apr_pstrcat(p, "dump-gen:", set->name, NULL);
}

/* Job (any thread). */
static apr_status_t dump_run(void *baton, rs_db_t *store, apr_pool_t *p)
{
    dumpjob_t *j = baton;
    /* As for snapshots: a store replaced meanwhile holds another
     * inventory; nothing of it is published. */
    apr_status_t rv = rs_jobs_same_store(store, p, j->history);

    if (rv != APR_SUCCESS) {
        return rv;
    }
    rv = rs_dump_write(store, &j->o, j->g.tmp, p, &j->info);
    /* Written last: post_config serves a dump after a restart only when
     * its URLs belong to the history on disk (rs_status_create). */
    return rv == APR_SUCCESS
               ? rs_history_write(p, rs_statedir_dump_history(p, j->g.tmp), j->url_history)
               : rv;
}

/* A build failed for want of space (the temporary directory is already
 * removed).  Logged once per episode (rs_dumpsched_nospace, until a
 * build succeeds), then at debug level; the previous dump stays served, and
 * the build is tried again after the set's dump interval, without
 * waiting for a change, so it resumes by itself when space returns. */
static void dump_nospace(wset_t *ws, const dumpjob_t *j, apr_status_t rv)
{
    const rs_set_t *set = ws->set;
    /* (ap_log_error evaluates its level more than once) */
    int level = rs_dumpsched_nospace(&ws->dump, rs_time_mono(), set->rdump);

    ap_log_error(APLOG_MARK, level, rv, ws->d->s,
                 RS_TAG "set %s: no space left to build the Resource Dump in %s%s%s; the "
                        "previous dump stays served, building resumes when there is space",
                 set->name, set->rdump_dir, j->info.failed ? ": " : "",
                 j->info.failed ? j->info.failed : "");
}

/* Framework notification of a new Resource Dump (Framework Notification
 * 1.0.1, Table 2: a Resource Dump is only ever created). */
static void dump_notify(wset_t *ws, apr_pool_t *p)
{
    apr_array_header_t *e = apr_array_make(p, 1, sizeof(rs_notify_fw_entry_t));
    rs_notifyw_fw_add(e, apr_pstrcat(p, ws->set->doc_base, "resourcedump.xml", NULL), "created",
                      "resourcedump", apr_time_now(), NULL);
    rs_notifyw_framework(ws, p, e);
}

/* Driver's thread: publish a written dump, or drop it. */
static void dump_finish(void *baton, apr_status_t rv, apr_pool_t *p)
{
    dumpjob_t *j = baton;
    wset_t *ws = j->ws;
    const rs_set_t *set = ws->set;

    running = 0;
    if (rv == APR_SUCCESS) {
        rv = rs_generation_publish(p, set->rdump_dir, &j->g);
    }
    if (rv != APR_SUCCESS && rs_dumpsched_no_space(rv)) {
        rs_generation_abandon(p, &j->g);
        dump_nospace(ws, j, rv);
        return;
    }
    if (rv != APR_SUCCESS) {
        rs_log_emit(ws->log, rv == RS_ZIP_ECHANGED ? RS_LOG_DEBUG : RS_LOG_ERR, rv,
                    "set %s: cannot build Resource Dump %" APR_UINT64_T_FMT "%s%s; "
                    "trying again after the next snapshot",
                    set->name, j->g.gen, j->info.failed ? ": " : "",
                    j->info.failed ? j->info.failed : "");
        rs_generation_abandon(p, &j->g);
        rs_dumpsched_failed(&ws->dump); /* the next snapshot tries again */
        return;
    }
    rs_db_meta_put(ws->d->store, gen_key(p, set), apr_psprintf(p, "%" APR_UINT64_T_FMT, j->g.gen));
    ws->status.dump_gen = j->g.gen;
    rs_wset_status_put(ws);
    if (rs_dumpsched_published(&ws->dump)) {
        rs_log_emit(ws->log, RS_LOG_INFO, 0, "set %s: space again for the Resource Dump",
                    set->name);
    }
    rs_log_emit(ws->log, RS_LOG_INFO, 0,
                "set %s: published Resource Dump %" APR_UINT64_T_FMT " (%" APR_INT64_T_FMT
                " files, %d packages of which %d unchanged, %" APR_INT64_T_FMT " bytes%s%s)",
                set->name, j->g.gen, j->info.entries, j->info.packages, j->info.reused,
                j->info.bytes,
                j->info.withheld ? "; files denied since the "
                                   "last scan left out: "
                                 : "",
                j->info.withheld ? apr_itoa(p, j->info.withheld) : "");
    dump_notify(ws, p);
    rs_generation_prune(p, set->rdump_dir, j->g.gen, set->dump_grace, apr_time_now());
}

void rs_dumpjob_poll(wset_t *ws, apr_pool_t *p)
{
    const rs_set_t *set = ws->set;
    apr_time_t now = rs_time_mono();
    const char *g = NULL;
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
        rs_generation_prune(p, set->rdump_dir, ws->status.dump_gen, set->dump_grace,
                            apr_time_now());
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
    j->history = apr_pstrdup(jp, ws->d->statecheck.history);
    j->url_history = apr_pstrdup(jp, ws->status.history);
    j->o.set = set->name;
    j->o.root = set->dir;
    j->o.url_base = set->root_url;
    j->o.capability_url = set->capability_url;
    j->o.dump_url = apr_pstrcat(jp, set->doc_base, "resourcedump.xml", NULL);
    j->o.pkg_url_prefix =
        apr_pstrcat(jp, set->doc_base, "resourcedump/", ws->status.history, "-", NULL);
    j->o.dumpset = set->rdump_dir;
    j->o.hashes = set->hashes;
    j->o.max_entries = set->dump_entries;
    j->o.max_bytes = set->dump_size;
    j->o.at = ws->status.at;
    j->o.completed = ws->status.completed;
    /* Rows denied since the last scan are left out (rs_dump.h). */
    j->o.check = rs_access_check;
    j->o.check_baton = ws->job_acc;
    rs_db_meta_get(ws->d->store, jp, gen_key(jp, set), &g);
    rv = rs_generation_begin(jp, set->rdump_dir, g ? (apr_uint64_t)apr_atoi64(g) : 0,
                             ws->status.dump_gen, &j->g);
    j->o.list_max = set->max_entries;
    j->o.part_url_prefix =
        apr_psprintf(jp, "%s%" APR_UINT64_T_FMT "-", j->o.pkg_url_prefix, j->g.gen);
    rs_dumpsched_started(&ws->dump, now, set->rdump);
    if (rv != APR_SUCCESS) {
        rs_jobs_drop(job, dump_finish, j, rv);
        return;
    }
    running = 1;
    rs_jobs_submit(job, dump_run, dump_finish, j, 1);
}
