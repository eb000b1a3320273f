/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_snapjob.c - Resource List snapshots as background jobs.
 *
 * A snapshot being written.  Lifecycle: prepared by the driver's thread
 * (generation, temporary directory, options, all in the job's own pool;
 * rs_generation), written by rs_snapshot_write as a job (mod_resourcesync_
 * jobs.c: on the job thread with its own store connection so the event
 * loop goes on meanwhile, or inline), then finished on the driver's thread
 * (rename into place, store bookkeeping, the set's status entry, pruning).
 * Jobs run one at a time and the driver finishes the previous one before
 * it prepares the next: the generation counter (ws->status.gen and the
 * store's snapshot-gen:<set>) is only read and advanced between jobs.
 *
 * Freshness: when a snapshot is due, and the store's bookkeeping of each,
 * are rs_snapsched's (rs_snapsched.h; the set's ws->snap).
 * Interactions:
 *   - dumps: a Resource or Change Dump holds the job thread (one job at a
 *     time) and may take long; a due snapshot then waits, polled again
 *     every RS_SNAPSHOT_RETRY, and never makes the driver wait for the
 *     dump.  Every published snapshot makes a Resource Dump due; the
 *     dump's pacing is rs_dumpsched's (mod_resourcesync_dumpjob.c).
 *   - `at` and consistency: a fresh snapshot takes its `at` from
 *     rs_journal_mark when it is prepared, on the driver's thread, with no
 *     transaction in between; it reflects every record up to the journal's
 *     sequence read then (snapshot-seq), so `at` stays honest exactly as
 *     for a tick's snapshot.  `consistent` moves to `at` when it is
 *     published.
 *   - framework notifications: each published snapshot sends one
 *     notification (snap_notify), so at most one per snapshot, and
 *     snapshots come at most about once per RS_SNAPSHOT_QUIET.
 *
 */
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_jobs.h"
#include "mod_resourcesync_logonce.h"
#include "rs_followsnap.h"
#include "rs_generation.h"
#include "rs_notify.h"
#include "rs_history.h"
#include "rs_snapshot.h"
#include "rs_snapsched.h"
#include "rs_statedir.h"
#include "rs_time.h"

#define RS_SNAPSHOT_KEEP apr_time_from_sec(3600)

typedef struct snapjob_t {
    wset_t *ws;
    rs_snapshot_opts_t sn;
    const char *key;
    rs_generation_t g;
    apr_time_t at;
    apr_time_t t0;       /* monotonic: when it was submitted */
    apr_int64_t seq;     /* the journal's last sequence when prepared */
    const char *history; /* of the driver's store when prepared */
    int other_store;     /* the job's connection found another */
    rs_snapshot_info_t info;
} snapjob_t;

/* Options of a set that shape its snapshot; a change forces a new one,
 * and keeps no part of the last (the key is in the snapshot's identity).
 * The mirrors are among them: every entry renders them, no row stores
 * them (a set without mirrors has the key it always had). */
static const char *snapshot_key(apr_pool_t *p, const rs_set_t *set)
{
    return apr_psprintf(p, "%s|%s|%s|%d|%u%s%s", set->root_url, set->capability_url, set->list_url,
                        set->max_entries, set->hashes, *set->mirrors_fp ? "|mirrors " : "",
                        set->mirrors_fp);
}

/* The writer, after pruning its directories: the store's copies of the
 * generations it removed go (a shared store only; current never).  A
 * refused fence makes the set elsewhere; another failure is a warning
 * (once: the driver's logger) and is tried at the next prune. */
static void prune_stored(wset_t *ws, apr_pool_t *p, apr_uint64_t current)
{
    apr_status_t rv;

    if (rs_db_one_node(ws->d->store)) {
        return;
    }
    rv = rs_followsnap_prune(ws->d->store, p, ws->set->name, ws->set->snap_dir, current, NULL);
    if (rv == RS_LEASE_LOST) {
        rs_storefail_note(ws, rv, "dropping the stored files of pruned Resource Lists");
    }
    else if (rv != APR_SUCCESS) {
        rs_log_emit(ws->log, RS_LOG_WARN, rv,
                    "set %s: cannot drop the stored files of pruned Resource Lists; "
                    "trying again at the next prune",
                    ws->set->name);
    }
}

/* Drop snapshots superseded more than RS_SNAPSHOT_KEEP ago, and leftovers
 * of interrupted writes; the writer drops the store's copies of the
 * generations it removed. */
void rs_snapjob_prune(wset_t *ws, apr_pool_t *p, apr_uint64_t current)
{
    rs_generation_prune(p, ws->set->snap_dir, current, RS_SNAPSHOT_KEEP, apr_time_now());
    if (!ws->elsewhere) {
        prune_stored(ws, p, current);
    }
}

void rs_snapjob_publish(wset_t *ws, const rs_snapshot_info_t *info, apr_time_t consistent)
{
    ws->status.gen = info->gen;
    ws->status.at = info->at;
    ws->status.completed = info->completed;
    ws->status.entries = info->entries;
    ws->status.parts = info->parts;
    ws->status.bytes = info->bytes;
    ws->status.consistent = consistent;
    rs_wset_status_put(ws);
}

void rs_snapjob_gen_floor(rs_db_t *store, apr_pool_t *p, const rs_set_t *set, apr_uint64_t gen)
{
    rs_snapsched_gen_floor(store, p, set->name, gen);
}

/* Job (any thread): write the snapshot into the temporary directory. */
static apr_status_t snap_run(void *baton, rs_db_t *store, apr_pool_t *p)
{
    snapjob_t *j = baton;

    return rs_snapsched_write(store, &j->sn, j->g.tmp, j->g.gen, j->history, p, &j->info,
                              &j->other_store);
}

/* Driver's thread: the store knows the new generation; the end of a
 * failure episode is logged, and a later failure deserves an error line
 * again. */
static void snap_record(snapjob_t *j, apr_pool_t *p)
{
    wset_t *ws = j->ws;
    const rs_set_t *set = ws->set;
    apr_status_t rv =
        rs_snapsched_record(ws->d->store, p, set->name, j->g.gen, j->key, j->seq, j->g.final);

    if (rv != APR_SUCCESS) {
        rs_storefail_note(ws, rv, "recording a Resource List snapshot");
    }
    if (rs_snapsched_recovered(&ws->snap)) {
        rs_log_emit(ws->log, RS_LOG_NOTICE, 0, "set %s: Resource List snapshots work again",
                    set->name);
        rs_logonce_forget();
    }
}

/* Framework notification of a new Resource List: the list itself, or
 * the first part written in this generation under the index (the
 * Framework Notification specification sends one entry per new list
 * under an index; parts kept from earlier generations are not new). */
static void snap_notify(snapjob_t *j, apr_pool_t *p)
{
    wset_t *ws = j->ws;
    const rs_set_t *set = ws->set;
    apr_array_header_t *e = apr_array_make(p, 1, sizeof(rs_notify_fw_entry_t));
    const char *change = j->info.gen <= 1 ? "created" : "updated";

    if (j->info.parts > 1 && j->info.first_new) {
        rs_notifyw_fw_add(e,
                          apr_psprintf(p, "%s%" APR_UINT64_T_FMT "-%d.xml", j->sn.part_url_prefix,
                                       j->info.gen, j->info.first_new),
                          change, "resourcelist", j->info.at, set->list_url);
    }
    else {
        rs_notifyw_fw_add(e, set->list_url, change, "resourcelist", j->info.at, NULL);
    }
    rs_notifyw_framework(ws, p, e);
}

/* Driver's thread: put a written snapshot into place and publish it. */
static void snap_finish(void *baton, apr_status_t rv, apr_pool_t *p)
{
    snapjob_t *j = baton;
    wset_t *ws = j->ws;
    const rs_set_t *set = ws->set;

    /* The next one waits at least as long as this one took. */
    rs_snapsched_ended(&ws->snap, j->t0, rs_time_mono());

    if (j->other_store) {
        rs_log_emit(ws->log, RS_LOG_NOTICE, 0,
                    "set %s: the state store changed while "
                    "Resource List %" APR_UINT64_T_FMT " was written; it is dropped",
                    set->name, j->g.gen);
        rs_generation_abandon(p, &j->g);
        ws->snap.dirty = 1;
        return;
    }
    if (rv == APR_SUCCESS) {
        rv = rs_generation_publish(p, set->snap_dir, &j->g);
    }
    if (rv != APR_SUCCESS) {
        rs_log_emit(ws->log, rs_snapsched_failed(&ws->snap), rv,
                    "set %s: cannot write Resource List snapshot "
                    "%s; keeping the previous one",
                    set->name, j->g.final);
        rs_generation_abandon(p, &j->g);
        return;
    }
    snap_record(j, p);
    /* More parts than ResourceSyncMaxEntries: only when every part is
     * full (rs_snapshot.h); said when it begins. */
    if (j->info.parts > set->max_entries && ws->status.parts <= set->max_entries) {
        rs_log_emit(ws->log, RS_LOG_WARN, 0,
                    "set %s: %" APR_INT64_T_FMT " resources do not fit in %d parts of %d "
                    "(ResourceSyncMaxEntries %d): its Resource List Index names %d parts",
                    set->name, j->info.entries, set->max_entries, set->max_entries,
                    set->max_entries, j->info.parts);
    }
    ws->dump.due = 1;
    rs_snapjob_publish(ws, &j->info, j->at);
    rs_log_emit(ws->log, RS_LOG_INFO, 0,
                "set %s: published Resource List %" APR_UINT64_T_FMT " (%" APR_INT64_T_FMT
                " entries, %d parts, %d kept)",
                set->name, j->info.gen, j->info.entries, j->info.parts, j->info.reused);
    snap_notify(j, p);
    rs_snapjob_prune(ws, p, j->info.gen);
}

/* The job's input, in its pool p. */
static snapjob_t *snap_prepare(wset_t *ws, apr_pool_t *p, const char *key, apr_time_t at,
                               apr_time_t completed, int async)
{
    const rs_set_t *set = ws->set;
    snapjob_t *j = apr_pcalloc(p, sizeof(*j));

    j->ws = ws;
    j->at = at;
    /* Every record up to this one is in the inventory the list will read
     * (the watcher is the only writer); a later one may not be. */
    j->seq = rs_journal_last_seq(ws->d->journal);
    j->key = apr_pstrdup(p, key);
    j->history = apr_pstrdup(p, ws->d->statecheck.history);
    j->sn.set = set->name;
    j->sn.entry.url_base = set->root_url;
    j->sn.capability_url = set->capability_url;
    j->sn.list_url = set->list_url;
    /* Part URLs carry the history: "resourcelist/<history>-<gen>-<n>.xml". */
    j->sn.part_url_prefix =
        apr_pstrcat(p, set->doc_base, "resourcelist/", ws->status.history, "-", NULL);
    j->sn.max_entries = set->max_entries;
    j->sn.entry.hashes = set->hashes;
    j->sn.entry.links = set->links;
    j->sn.at = at;
    j->sn.completed = completed;
    j->sn.log = async ? rs_jobs_logger() : ws->log;
    /* Parts are kept across generations of one history and one set of
     * options only. */
    j->sn.ident = apr_pstrcat(p, ws->status.history, "|", key, NULL);
    j->sn.seq = j->seq;
    if (ws->status.gen) {
        j->sn.prev_gen = ws->status.gen;
        j->sn.prev_dir = rs_statedir_gen(p, set->snap_dir, ws->status.gen);
    }
    return j;
}

void rs_snapjob_schedule(wset_t *ws, apr_pool_t *p, apr_time_t at, apr_time_t completed, int force,
                         int async)
{
    const rs_set_t *set = ws->set;
    rs_db_t *store = ws->d->store;
    const char *key = snapshot_key(p, set);
    apr_pool_t *jp;
    rs_job_t *job;
    snapjob_t *j;
    apr_status_t rv;
    /* A Resource or Change Dump being built holds the job thread (one job at a
     * time) and can take long: never wait for it here, on the driver's
     * thread.  The dump only starts when no job is pending, so no
     * snapshot job is in flight meanwhile. */
    int dumping = rs_dumpjob_busy() || rs_cdumpjob_busy();

    /* The previous job updates the generation counter: finish it first. */
    if (!dumping) {
        rs_jobs_reap(1);
    }
    if (!force && ws->status.gen && rs_snapsched_same_key(store, p, set->name, key)) {
        /* Nothing changed: the current snapshot stays valid and is now
         * known to be consistent as of `at`. */
        ws->status.consistent = at;
        rs_wset_status_put(ws);
        rs_snapsched_started(&ws->snap);
        rs_snapjob_prune(ws, p, ws->status.gen);
        return;
    }
    if (dumping) {
        /* A new snapshot is due: written as a fresh one once the dump is
         * done (rs_snapjob_poll), like after a live change - a full scan
         * out of turn (an access file above the root, the mount table)
         * must not wait for the next tick. */
        rs_snapjob_changed(ws, rs_time_mono());
        return;
    }
    if (!at) { /* the mark fenced: a node that no longer writes the set moves nothing */
        if ((rv = rs_db_begin_set(store, set->name)) == APR_SUCCESS) {
            rv = rs_db_end(store, rs_journal_mark(ws->d->journal, set->name, &at));
        }
        if (rv != APR_SUCCESS) {
            return;
        }
    }
    if (completed < at) {
        completed = apr_time_now() > at ? apr_time_now() : at;
    }
    job = rs_jobs_create(&jp);
    j = snap_prepare(ws, jp, key, at, completed, async);
    /* Generations only grow, also across restarts and the loss of the
     * status segment: the larger of the store's counter and ours. */
    rv = rs_generation_begin(jp, set->snap_dir, rs_snapsched_stored_gen(store, jp, set->name),
                             ws->status.gen, &j->g);
    if (rv != APR_SUCCESS) {
        rs_jobs_drop(job, snap_finish, j, rv);
        return;
    }
    /* Changes from here on make the set dirty again. */
    rs_snapsched_started(&ws->snap);
    j->t0 = rs_time_mono();
    rs_jobs_submit(job, snap_run, snap_finish, j, async);
}

void rs_snapjob_changed(wset_t *ws, apr_time_t now)
{
    rs_snapsched_changed(&ws->snap, now);
}

apr_time_t rs_snapjob_due(const wset_t *ws)
{
    return rs_snapsched_due(&ws->snap);
}

void rs_snapjob_poll(wset_t *ws, apr_pool_t *p, apr_time_t now)
{
    /* The job thread runs another job (a dump, or another set's
     * snapshot): never wait for it on the driver's thread. */
    if (rs_snapsched_poll(&ws->snap, now,
                          rs_jobs_busy() || rs_dumpjob_busy() || rs_cdumpjob_busy())) {
        rs_snapjob_schedule(ws, p, 0, 0, 1, 1);
    }
}
