/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_drive.h - the watcher's files: what the driver
 * (mod_resourcesync_drive.c) runs, and the functions of the files that
 * work on its state (mod_resourcesync_wset.h) from the driver's thread.
 */
#ifndef MOD_RESOURCESYNC_DRIVE_H
#define MOD_RESOURCESYNC_DRIVE_H

#include "mod_resourcesync_wset.h"
#include "rs_hashlane.h"

/* mod_resourcesync_drive.c */
/* In the watcher process, as the run user: open the store, reconcile
 * every set, then follow changes until the parent is gone (returns
 * APR_SUCCESS).  Returns the cause, logged, when the watcher cannot start
 * (the store or the journal cannot be opened for a cause that does not go
 * away by itself; transient ones are retried): a respawn would only
 * repeat it. */
apr_status_t rs_drive_run(apr_pool_t *pool, server_rec *s);
/* What rs_drive_run returns when the state store was deleted or replaced
 * under the running watcher: a new watcher must start (a new history). */
#define RS_DRIVE_RESTART APR_EAGAIN

/* mod_resourcesync_progress.c (rs_progress.h): a full scan of ws's set
 * starts (its expected total and start into the status segment); it has
 * seen files so far (the set's entry once a second, a notice line every
 * RS_PROGRESS_INTERVAL). */
void rs_progressw_begin(wset_t *ws);
void rs_progressw_tick(wset_t *ws, apr_int64_t files);
/* After a full scan: a count of the tree still running is stopped. */
void rs_progressw_end(wset_t *ws);

/* Write a new Resource List snapshot of the set from the inventory,
 * unless the current one is still valid (force: the inventory changed).
 * at == 0: take it from the journal now; completed: when the scan the
 * inventory reflects ended (0: now).  async: as a background job, finished
 * later from the event loop (rs_jobs_reap); otherwise done on return.
 * Clears ws->snap.dirty when a snapshot is started (or not needed); sets it
 * again when writing fails. */
void rs_snapjob_schedule(wset_t *ws, apr_pool_t *p, apr_time_t at, apr_time_t completed, int force,
                         int async);
/* A live change of the set's inventory at now (monotonic): the set is
 * dirty, and a fresh snapshot becomes due (rs_snapjob_due). */
void rs_snapjob_changed(wset_t *ws, apr_time_t now);
/* When the set's next fresh snapshot is due (monotonic; 0: none): after
 * RS_SNAPSHOT_QUIET without changes, at the latest RS_SNAPSHOT_MAXWAIT
 * after the first change, never before ws->snap.next (rs_snapsched_due). */
apr_time_t rs_snapjob_due(const wset_t *ws);
/* The event loop at now: start the set's fresh snapshot if it is due and
 * the job thread is free (otherwise it is looked at again a little
 * later). */
void rs_snapjob_poll(wset_t *ws, apr_pool_t *p, apr_time_t now);
/* Publish generation info->gen in ws's status entry (children serve it
 * from then on), consistent as of consistent; and prune the set's
 * generations other than current (the writer's and a follower's rule). */
void rs_snapjob_publish(wset_t *ws, const rs_snapshot_info_t *info, apr_time_t consistent);
void rs_snapjob_prune(wset_t *ws, apr_pool_t *p, apr_uint64_t current);

/* mod_resourcesync_followsnap.c: a follower's Resource Lists. */
/* The event loop's turn of a set another node writes (from rs_writer_poll,
 * at every wake-up, at most every 200 ms): at most every
 * RS_FOLLOWSNAP_EVERY the store's snapshot-gen:<set> is read (one
 * statement); a generation newer than the one in ws's status entry is
 * copied from the store (rs_followsnap_copy) and published as this
 * node's, and the node's older generations are pruned by the writer's
 * rule.  A failure is logged once per episode, the copy removed, and
 * tried again after RS_FOLLOWSNAP_RETRY; the generation in service
 * stays.  Nothing with a store of one node's (SQLite). */
void rs_followsnap_poll(wset_t *ws, apr_pool_t *p, apr_time_t now);
/* A follower's state of one kind of generation directory of ws (rs_blob's
 * kind), made at its first use (driver's thread): when to look at the
 * store next, a generation the store holds no files of (not asked again
 * until the number changes), whether copying fails (said once). */
typedef struct rs_follow_state_t {
    apr_time_t next;   /* monotonic */
    apr_uint64_t seen; /* the set's notifications seen (rs_follow_look) */
    apr_uint64_t none;
    apr_status_t failing;
} rs_follow_state_t;
rs_follow_state_t *rs_followsnap_state(wset_t *ws, const char *kind);
/* The outcome rv of copying generation gen of what ("Resource List",
 * "Resource Dump") while generation have is served, for state f:
 * APR_ENOENT marks gen as one without files (a debug line); another
 * failure is logged once per episode and retried after 2 s; a success
 * ends an episode (a notice).  Returns whether the copy is in place, to
 * be published. */
int rs_followsnap_copied(wset_t *ws, rs_follow_state_t *f, const char *what, apr_status_t rv,
                         apr_uint64_t gen, apr_uint64_t have, apr_time_t now);

/* mod_resourcesync_followdump.c: a follower's Resource Dumps.  From
 * rs_writer_poll beside rs_followsnap_poll, at most every
 * RS_FOLLOWDUMP_EVERY: the store's dump-gen:<set> is read; a generation
 * newer than the status entry's dump_gen is copied (rs_followdump_copy),
 * published in the entry, and the node's older generations pruned by the
 * writer's rule (ResourceSyncDumpGrace).  A failure is logged once per
 * episode and tried again after 2 s (rs_followsnap_copied).  Nothing with a
 * store of one node's or without ResourceSyncResourceDump. */
void rs_followdump_poll(wset_t *ws, apr_pool_t *p, apr_time_t now);
/* Writer (mod_resourcesync_dumpjob.c's): after its generations were
 * pruned, the store's copies of those removed go (shared stores only). */
void rs_dumpjob_prune_stored(wset_t *ws, apr_pool_t *p);

/* mod_resourcesync_followtopic.c: the notification topics' files through
 * a shared store (nothing with SQLite's or without notifications).
 * Writer: after the topic's file at path was replaced by version id, it
 * is stored (rs_followtopic_store); a lost lease is a store failure of
 * the set (rs_storefail_note), another failure is logged once and the
 * next version is stored again. */
void rs_followtopicw_put(wset_t *ws, apr_pool_t *p, const char *topic, apr_uint64_t id,
                         const char *path);
/* Follower (from rs_writer_poll, at most every RS_FOLLOWTOPIC_EVERY):
 * both topics' files made the store's versions (rs_followtopic_copy),
 * then the status entry says they are followed (children serve them). */
void rs_followtopicw_poll(wset_t *ws, apr_pool_t *p, apr_time_t now);
/* A node that takes the set (rs_writer_take): what it serves until it
 * writes a new version made what the store holds (rs_followtopic_take);
 * a failure is logged. */
void rs_followtopicw_take(wset_t *ws, apr_pool_t *p);

/* mod_resourcesync_followcdump.c: the Change Dump directory through a
 * shared store (nothing with SQLite's or without Change Dumps).
 * followed: the set's is.  pending: the writer's next job stores the
 * directory even if it changes nothing (a store failed, a job failed, a
 * takeover).  stored: the Change Dump job stored it (tried) with outcome
 * rv as generation gen (st), or did not try (the job failed); a lost
 * lease is a store failure of the set (rs_storefail_note), another
 * failure is logged once.  poll: a follower's turn (from rs_writer_poll,
 * at most every RS_FOLLOWCDUMP_EVERY): the stored generation replayed
 * when newer, then cdump_ready set.  take: a node that takes the set
 * (rs_writer_take) replays the store's generation once more. */
struct rs_blob_stats_t;
int rs_followcdumpw_followed(const wset_t *ws);
int rs_followcdumpw_pending(const wset_t *ws);
void rs_followcdumpw_stored(wset_t *ws, int tried, apr_status_t rv, apr_uint64_t gen,
                            const struct rs_blob_stats_t *st);
void rs_followcdumpw_poll(wset_t *ws, apr_pool_t *p, apr_time_t now);
void rs_followcdumpw_take(wset_t *ws, apr_pool_t *p);


/* mod_resourcesync_dumpjob.c: start the set's Resource Dump build when
 * it is due and no job runs (see that file). */
void rs_dumpjob_poll(wset_t *ws, apr_pool_t *p);
/* Whether a dump build is in progress (a snapshot then waits). */
int rs_dumpjob_busy(void);
/* mod_resourcesync_cdumpjob.c: build the set's missing Change Dump
 * packages, collect its captures and rewrite changedump.xml when a list
 * closed (or hourly, and at watcher start) and no job runs. */
void rs_cdumpjob_poll(wset_t *ws, apr_pool_t *p);
/* Whether a Change Dump job is in progress (a snapshot then waits). */
int rs_cdumpjob_busy(void);
/* mod_resourcesync_withdraw.c: apply the oldest withdrawal request
 * (rs_withdraw.h) when no job runs, looking at most once a second. */
void rs_withdraw_poll(rs_drive_t *d, apr_time_t now);
/* The set's Change Dump options (rs_cdump.h), from p. */
struct rs_cdump_opts_t;
void rs_cdumpjob_opts(const wset_t *ws, apr_pool_t *p, struct rs_cdump_opts_t *o);

/* mod_resourcesync_hubintake.c: with ResourceSyncHub on (any server),
 * start the thread that takes the hub's spooled subscription requests,
 * verifies them and stores subscriptions. */
void rs_hubintake_start(apr_pool_t *pool, server_rec *s);

/* mod_resourcesync_notify.c: Change and Framework Notifications.
 * attach: a recorder of the set also carries its records in the outbox
 * (ResourceSyncNotify on).  changed: after the commit of rc's records,
 * the open notification is due after ResourceSyncNotifyDelay.  next: when
 * the event loop must wake for the set (monotonic, 0: no need).  poll:
 * seal what is due, write the topic files, sweep and prune (at the first
 * call: seal what an earlier watcher left open).  framework: store a
 * sealed framework notification of `entries` (rs_notify_fw_entry_t, added
 * with fw_add) and rewrite framework.xml; a no-op when notifications are
 * off. */
struct rs_recorder_t;
void rs_notifyw_attach(wset_t *ws, struct rs_recorder_t *rc);
void rs_notifyw_changed(wset_t *ws, struct rs_recorder_t *rc);
apr_time_t rs_notifyw_next(const wset_t *ws);
void rs_notifyw_poll(wset_t *ws, apr_pool_t *p, apr_time_t now);
void rs_notifyw_framework(wset_t *ws, apr_pool_t *p, const apr_array_header_t *entries);
/* A new history: the open notifications go with the old journal. */
apr_status_t rs_notifyw_reset(rs_drive_t *d);
/* mod_resourcesync_deliver.c: the delivery thread, started once at
 * watcher start when some set has hubs; rs_deliver_wakeup (any thread)
 * makes it look at the outbox now (a notification was sealed). */
void rs_deliver_start(server_rec *s);
void rs_deliver_wakeup(void);
/* The topic file of (set, topic) now shows notifications up to id (the
 * driver, after its rename): ping hubs are pinged up to there. */
void rs_deliver_shown(const rs_set_t *set, const char *topic, apr_int64_t id);
/* Whether this node writes set now (mod_resourcesync_writer.c): the
 * delivery thread sends the set's notifications only while it does, and
 * reconciles the hub rows again when it begins to. */
void rs_deliver_writes(const rs_set_t *set, int writes);
void rs_notifyw_fw_add(apr_array_header_t *entries, const char *loc, const char *change,
                       const char *capability, apr_time_t datetime, const char *index);

/* mod_resourcesync_massdel.c: the mass-deletion guard's glue (see that
 * file and rs_massdel.h).  init: at watcher start, after the store is
 * open and the status entry adopted: ws->massdel with its hooks.
 * mounts_open: at watcher start, follow the mount table (d->mounts; NULL,
 * with a warning, when it cannot be read).  mounts_changed: d->mounts
 * polled POLLPRI: marks (remount) the sets whose directory a mount point
 * that appeared or went is in, at, or above; the driver scans them in
 * full at once. */
void rs_massdelw_init(wset_t *ws, apr_pool_t *p);
void rs_massdelw_mounts_open(rs_drive_t *d);
void rs_massdelw_mounts_changed(rs_drive_t *d);
/* mod_resourcesync_above.c: the access files above the set's root (see
 * that file).  init: at watcher start, after the store is open and the
 * checkers are made: the directories to follow (logged) and the stored
 * state.  begin: before a full scan: watch them, read their state; 1 when
 * it differs from the stored one (logged; the scan must decide every file
 * again, rs_scan_opts_t.recheck).  end: after a successful full scan:
 * store the state begin read.  changed: after an event above the root,
 * or at a tick: watch them again, read the state; 1 when it differs from
 * the stored one (a full scan is due). */
void rs_abovew_init(wset_t *ws, apr_pool_t *p);
int rs_abovew_begin(wset_t *ws, apr_pool_t *p);
void rs_abovew_end(wset_t *ws, apr_pool_t *p);
int rs_abovew_changed(wset_t *ws, apr_pool_t *p);

/* mod_resourcesync_hashlane.c: the watcher's hashing lane (rs_hashlane.h).
 * At watcher start: the lane and a source per set; on failure large files
 * are hashed by the scans themselves. */
apr_status_t rs_hashlanew_init(apr_pool_t *pool, server_rec *s);
/* The scans' defer baton of set (for rs_hashlane_defer). */
void *rs_hashlanew_baton(const rs_set_t *set);
/* The files finished since the last call (array of rs_hashlane_file_t in
 * p, each handed out once, src->owner the rs_set_t); returns their
 * number. */
int rs_hashlanew_ready(apr_pool_t *p, apr_array_header_t **out);
/* After the reconciliation of a file handed out by rs_hashlanew_ready. */
void rs_hashlanew_forget(const rs_hashlane_file_t *f);
/* mod_resourcesync_storefail.c: the store failing (rs_storeretry.h).
 * Prepare d->episode (before rs_storefail_open). */
void rs_storefail_init(rs_drive_t *d);
/* A transaction of ws failed with cause rv while doing `what`: enter (or
 * stay in, backing off) the failing state (rs_storeretry_note); the set
 * gets a new Resource List once it works.  Leaving it: rs_storeretry_ok;
 * whether the retry is due: rs_storeretry_due.  A refused fence
 * (RS_LEASE_LOST) is no failure of the store: the set is written by
 * another node now (ws->lease_lost, for rs_writer_heartbeat). */
void rs_storefail_note(wset_t *ws, apr_status_t rv, const char *what);
/* After a failed scan of ws: records that earlier transactions of the
 * scan committed (a scan commits every 20 000 rows) are published
 * (rs_changes_resync) before anything later, so readers never take their
 * sequence numbers for unused ones; records of the rolled-back
 * transaction are not in the store, so they never are.  On failure
 * ws->retry.resync stays set, and the retry tries again first. */
apr_status_t rs_storefail_resync(apr_pool_t *p, wset_t *ws);
/* A transaction of ws failed (rv) while doing `what`: publish what was
 * committed (rs_storefail_resync), then rs_storefail_note. */
void rs_storefail_failed(apr_pool_t *p, wset_t *ws, apr_status_t rv, const char *what);
/* Replace the driver's store connection and journal by new ones (the old
 * connection may have been opened read-only), closing the job thread's
 * first.  On failure there is none: every set is then failing, and the
 * next retry opens one.  The caller then renews the sets' leases
 * (rs_writer_retake). */
apr_status_t rs_storefail_reopen(rs_drive_t *d);
/* Open the driver's store and journal at the watcher's start, retrying
 * with back-off while the cause is transient (rs_storeretry_open).
 * Returns the cause of a failure that is not, or when the parent is gone. */
apr_status_t rs_storefail_open(rs_drive_t *d);
/* Make the store's generation counter of set at least gen (the next
 * snapshot gets a larger number). */
void rs_snapjob_gen_floor(rs_db_t *store, apr_pool_t *p, const rs_set_t *set, apr_uint64_t gen);

/* mod_resourcesync_history.c (rs_statecheck_start).  At watcher start,
 * after the store is opened and before the sets are set up: adopt the
 * store's history, or start a new one when the store does not continue the
 * documents on disk (then every document of the old history is removed and
 * one warning is logged); every set's status entry is then of
 * d->statecheck.history.  Returns the cause (logged) when the history
 * cannot be read or recorded. */
apr_status_t rs_drive_history_start(rs_drive_t *d);

/* Every few seconds (now: monotonic clock), whether the store was
 * deleted or replaced since rs_drive_history_start (logged): the watcher
 * must then end so that a new one starts a new history. */
int rs_drive_history_lost(rs_drive_t *d, apr_time_t now);

/* No cap of our own on inotify watches: the kernel's
 * fs.inotify.max_user_watches is the limit (t/degraded.t reaches it). */
#define RS_DRIVE_MAX_WATCHES 0

/* mod_resourcesync_reconcile.c: a set's tree reconciled with its
 * inventory on the driver's thread (see that file). */
/* The whole set (first: the startup reconciliation of this watcher); a
 * set that cannot be listed is not scanned; a failure of the store puts
 * the set into the failing state.  Changes are journaled from the set's
 * second scan ever on (the first is the baseline). */
void rs_reconcile_full(apr_pool_t *p, wset_t *ws, int first);
/* The n targets inotify (or the verification pass, or the hashing lane)
 * named, in one transaction; on failure a full scan decides. */
void rs_reconcile_targets(apr_pool_t *p, wset_t *ws, const rs_scan_target_t *t, int n);
/* After records were committed: the recorder's (rc, may be NULL) into the
 * ring, then the Change Lists (closing, retention, files); full == 0 (an
 * event batch) looks at the lists only when the open one may be full. */
apr_status_t rs_reconcile_changes(apr_pool_t *p, wset_t *ws, rs_recorder_t *rc, int full);
/* The set's mode (watching or rescans) from its watch state, published
 * when it changed. */
void rs_reconcile_mode(wset_t *ws);
/* At watcher start, after rs_massdelw_init: ws->rec with its hooks, and
 * the keeper of the set's links (ws->links, NULL without link rules). */
void rs_reconcilew_init(wset_t *ws);
/* At watcher start, before the set's first full scan: when its link rules
 * changed since the store last resolved them (rs_linkpass_start), every
 * listed row's links are resolved again; the rows whose links changed
 * make the next snapshot due. */
void rs_reconcile_links(apr_pool_t *p, wset_t *ws);

#endif
