/* mod_resourcesync_dumpjob.c - Resource Dumps as background jobs.
 *
 * A set with ResourceSyncResourceDump gets a dump built from its
 * inventory after a Resource List snapshot is published: the first one
 * as soon as the set has a snapshot and no dump (at watcher start too),
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
 * Store keys per set: dump-gen (the newest dump generation published), so
 * that numbers, and with them package URLs, are never used twice; and
 * dump-snap (the snapshot generation that dump reflects).  A watcher
 * killed while building a dump (kill -9, a crash) leaves the previous,
 * older dump published and nothing due in the next watcher: at its start
 * the watcher compares dump-snap with the current snapshot and builds
 * once when the dump is behind.
 */
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "rs_dump.h"
#include "rs_generation.h"
#include "rs_history.h"
#include "rs_time.h"
#include "rs_zip.h"

/* How long a dump stays downloadable after a newer one replaced it. */
#define RS_DUMP_KEEP apr_time_from_sec(86400)

typedef struct dumpjob_t {
    wset_t *ws;
    rs_dump_opts_t o;
    rs_generation_t g;
    rs_dump_info_t info;
    const char *history;           /* of the driver's store when prepared */
    apr_uint64_t snap;             /* the snapshot generation it reflects */
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

static const char *snap_key(apr_pool_t *p, const rs_set_t *set)
{
    return apr_pstrcat(p, "dump-snap:", set->name, NULL);
}

/* Whether the published dump (if any) reflects an older snapshot than
 * the current one: a build was lost with a previous watcher. */
static int dump_behind(wset_t *ws, apr_pool_t *p)
{
    const char *s = NULL;

    if (!ws->status.dump_gen) {
        return 1;
    }
    rs_db_meta_get(ws->d->store, p, snap_key(p, ws->set), &s);
    return !s || (apr_uint64_t)apr_atoi64(s) != ws->status.gen;
}

/* Due once at the watcher's start: the set has no dump, or one that is
 * behind.  Checked (the store read) until a build starts or the dump is
 * found current; later dumps follow snapshots (dump_due). */
static int due_at_start(wset_t *ws, apr_pool_t *p)
{
    if (ws->dump_tried) {
        return 0;
    }
    if (dump_behind(ws, p)) {
        return 1;
    }
    ws->dump_tried = 1;
    return 0;
}

/* Job (any thread). */
static apr_status_t dump_run(void *baton, rs_db_t *store, apr_pool_t *p)
{
    dumpjob_t *j = baton;
    const char *h = NULL;
    apr_status_t rv = rs_db_meta_get(store, p, RS_HISTORY_META, &h);

    /* As for snapshots: a store replaced meanwhile holds another
     * inventory; nothing of it is published. */
    if (rv != APR_SUCCESS || !h || strcmp(h, j->history)) {
        return rv != APR_SUCCESS ? rv : APR_ENOENT;
    }
    return rs_dump_write(store, &j->o, j->g.tmp, j->g.gen, p, &j->info);
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
    if (rv != APR_SUCCESS) {
        rs_log_emit(ws->log, rv == RS_ZIP_ECHANGED ? RS_LOG_DEBUG : RS_LOG_ERR, rv,
                    "set %s: cannot build Resource Dump %" APR_UINT64_T_FMT "%s%s; "
                    "trying again after the next snapshot", set->name, j->g.gen,
                    j->info.failed ? ": " : "", j->info.failed ? j->info.failed : "");
        rs_generation_abandon(p, &j->g);
        ws->dump_next = 0;     /* the next snapshot tries again */
        return;
    }
    rs_db_meta_put(ws->d->store, gen_key(p, set),
                   apr_psprintf(p, "%" APR_UINT64_T_FMT, j->g.gen));
    rs_db_meta_put(ws->d->store, snap_key(p, set),
                   apr_psprintf(p, "%" APR_UINT64_T_FMT, j->snap));
    ws->status.dump_gen = j->g.gen;
    rs_drive_status_put(ws);
    rs_log_emit(ws->log, RS_LOG_INFO, 0, "set %s: published Resource Dump %" APR_UINT64_T_FMT
                " (%" APR_INT64_T_FMT " files, %d packages, %" APR_INT64_T_FMT " bytes)",
                set->name, j->g.gen, j->info.entries, j->info.packages, j->info.bytes);
    rs_generation_prune(p, set->rdump_dir, j->g.gen, RS_DUMP_KEEP, apr_time_now());
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

    /* Due: a snapshot was published since the last build, or none was
     * tried in this watcher's life and the set has no dump or one of an
     * older snapshot. */
    if (!set->rdump || rs_jobs_busy() || !ws->status.gen || ws->status.unavailable || ws->store_err
        || !(ws->dump_due || due_at_start(ws, p))
        || now < ws->dump_next) {
        return;
    }
    job = rs_jobs_create(&jp);
    j = apr_pcalloc(jp, sizeof(*j));
    j->ws = ws;
    j->history = apr_pstrdup(jp, ws->d->history);
    j->snap = ws->status.gen;
    j->o.set = set->name;
    j->o.root = set->dir;
    j->o.url_base = set->root_url;
    j->o.capability_url = set->capability_url;
    j->o.dump_url = apr_pstrcat(jp, set->doc_base, "resourcedump.xml", NULL);
    j->o.pkg_url_prefix = apr_pstrcat(jp, set->doc_base, "resourcedump/", ws->status.history,
                                      "-", NULL);
    j->o.hashes = set->hashes;
    j->o.max_entries = RS_DUMP_MAX_ENTRIES;
    j->o.max_bytes = RS_DUMP_MAX_BYTES;
    j->o.at = ws->status.at;
    j->o.completed = ws->status.completed;
    rs_db_meta_get(ws->d->store, jp, gen_key(jp, set), &g);
    rv = rs_generation_begin(jp, set->rdump_dir, g ? (apr_uint64_t)apr_atoi64(g) : 0,
                             ws->status.dump_gen, &j->g);
    ws->dump_next = now + set->rdump;
    ws->dump_due = 0;
    ws->dump_tried = 1;
    if (rv != APR_SUCCESS) {
        rs_jobs_drop(job, dump_finish, j, rv);
        return;
    }
    running = 1;
    rs_jobs_submit(job, dump_run, dump_finish, j, 1);
    (void)p;
}
