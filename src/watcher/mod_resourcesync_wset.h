/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_wset.h - the watcher's state: the driver's
 * (rs_drive_t) and each set's (wset_t), made by the driver
 * (mod_resourcesync_drive.c) at watcher start and worked on from the
 * driver's thread by the watcher's files, each concern in a member of its
 * own (its engine unit's state: rs_massdel_t, rs_storeretry_t, ...).
 * The two steps every file of the watcher may take on a set's state are
 * here too, so that none of them calls back into the driver.
 */
#ifndef MOD_RESOURCESYNC_WSET_H
#define MOD_RESOURCESYNC_WSET_H

#include "mod_resourcesync.h"
#include "mod_resourcesync_access.h"
#include "mod_resourcesync_changes.h"
#include "mod_resourcesync_jobs.h"
#include "mod_resourcesync_status.h"
#include "rs_aboveroot.h"
#include "rs_journal.h"
#include "rs_linkkeep.h"
#include "rs_linkpass.h"
#include "rs_inventory.h"
#include "rs_listclose.h"
#include "rs_massdel.h"
#include "rs_dumpsched.h"
#include "rs_mounts.h"
#include "rs_notifyseal.h"
#include "rs_reconcile.h"
#include "rs_scan.h"
#include "rs_snapsched.h"
#include "rs_lease.h"
#include "rs_statecheck.h"
#include "rs_storeretry.h"
#include "rs_verifypass.h"
#include "rs_watch.h"

/* What the driver works with, for the watcher's lifetime. */
typedef struct rs_drive_t {
    server_rec *s;
    rs_logger_t log; /* the once-only log (rs_logonce) */
    rs_db_t *store;  /* the driver's connection */
    rs_journal_t *journal;
    apr_pool_t *pool;    /* the watcher's */
    apr_pool_t *iter;    /* cleared after each piece of work */
    int workers;         /* scan threads (scan_workers) */
    int hash_workers;    /* threads that only read and hash (hash_workers) */
    rs_mounts_t *mounts; /* the mount table, NULL if it cannot be followed */
    struct wset_t *ws;
    int nsets;
    apr_pool_t *store_pool; /* of store and journal (replaced on a retry) */
    /* The store failing (rs_storeretry): the watcher-wide episode, whose
     * lines go to episode_log (mod_resourcesync_storefail.c). */
    rs_storeretry_episode_t episode;
    rs_logger_t episode_log;
    /* The store's history and file (rs_statecheck.h,
     * mod_resourcesync_history.c). */
    rs_statecheck_t statecheck;
} rs_drive_t;

/* The watcher's view of one set.  Lifecycle: created at watcher start;
 * `w` is the set's inotify instance (NULL when none could be made), fed by
 * the scans' on_dir callback.  `degraded` says that some directory could
 * not be watched: the set then relies on full rescans every
 * ResourceSyncRescanInterval until a full scan manages to watch
 * everything again.
 *
 * `status` is the driver's own copy of the set's entry in the status
 * segment: adopted once at start (post_config seeded it from disk), then
 * changed here and written to the segment (rs_status_write_set) after
 * each change; the driver never reads the segment back to decide. */
typedef struct wset_t {
    rs_drive_t *d;
    const rs_set_t *set;
    rs_access_t **acc;    /* one per scan worker */
    rs_access_t *job_acc; /* the dump jobs' (on the job thread) */
    rs_watch_t *w;
    rs_status_set_t status;
    rs_listclose_t listclose; /* closing its Change Lists (rs_changes_update) */
    int degraded;             /* errno of the failed watch, 0: none */
    int degraded_logged;      /* the error log was told (once per episode) */
    /* Fresh Resource Lists (rs_snapsched.h, mod_resourcesync_snapjob.c):
     * snap.dirty, the inventory changed since the last snapshot. */
    rs_snapsched_t snap;
    int overflows;        /* inotify queue overflows in this watcher's life */
    apr_time_t next_tick; /* on the monotonic clock (rs_time_mono) */
    const rs_logger_t *log;
    /* The mass-deletion guard (rs_massdel.h, mod_resourcesync_massdel.c):
     * publishes status.unavailable, why and held. */
    rs_massdel_t massdel;
    rs_verifypass_t verify; /* the verification pass (rs_verifypass.h) */
    /* Its reconciliation (rs_reconcile.h, mod_resourcesync_reconcile.c):
     * rec.root_lost, the root is gone: retry at every tick. */
    rs_reconcile_t rec;
    /* The store failing (rs_storeretry, mod_resourcesync_storefail.c):
     * retry.err is the cause of the set's last failed transaction until a
     * full scan succeeds (APR_SUCCESS: none), retry.at the next retry;
     * retry.resync: committed records of a failed scan are not in the
     * ring yet. */
    rs_storeretry_t retry;
    /* One writer per set (mod_resourcesync_writer.c): elsewhere, another
     * node holds the set's lease (or this node's was lost) and this
     * watcher does not touch the set; writer_at, when it tries to take it
     * again (monotonic).  lease: this watcher's lease of the set (epoch 0:
     * not held), read by the fence on any thread under the writer's
     * mutex; lease_at, its last take or renewal (monotonic). */
    int elsewhere;
    apr_time_t writer_at;
    rs_lease_t lease;
    apr_time_t lease_at;
    int lease_lost; /* a fence refused (rs_storefail_note): rs_writer_lost due */
    /* Its options differ from those the writing node recorded
     * (mod_resourcesync_setconf.c): unavailable while they do. */
    int setconf_differs;
    /* Resource and Change Dumps: when their jobs are due (rs_dumpsched.h,
     * mod_resourcesync_dumpjob.c, mod_resourcesync_cdumpjob.c). */
    rs_dumpsched_t dump;
    rs_cdumpsched_t cdump;
    /* Notifications (mod_resourcesync_notify.c): sealing, sweep and
     * pruning (rs_notifyseal), the framework check of this start. */
    rs_notifyseal_t notify;
    /* Its topic files through the store (mod_resourcesync_followtopic.c):
     * a follower's next look (monotonic) and a failing copy, a writer's
     * failing store (each logged once per episode). */
    struct {
        apr_time_t next;
        apr_uint64_t seen; /* rs_follow_look */
        apr_status_t copy_err, store_err;
    } topics;
    /* Its Change Dump directory through the store
     * (mod_resourcesync_followcdump.c): a follower's next look
     * (monotonic), the generation this node replayed or stored last, a
     * failing copy or store (each logged once per episode), and whether
     * the writer's next job stores the directory even unchanged. */
    struct rs_cdfollow {
        apr_time_t next;
        apr_uint64_t seen; /* rs_follow_look */
        apr_uint64_t have;
        apr_status_t copy_err, store_err;
        int pending;
    } cdfollow;
    /* Access files above the root (rs_aboveroot.h,
     * mod_resourcesync_above.c). */
    rs_aboveroot_t above;
    /* The links of its rows (rs_linkkeep.h, called by its scans; NULL: a
     * set without ResourceSyncLink rules: mirrors are not stored). */
    rs_linkkeep_t *links;
} wset_t;

/* Write ws->status to the set's entry in the status segment (with the
 * set's number of watches). */
void rs_wset_status_put(wset_t *ws);

/* A watch of the set could not be added (err: ENOSPC, ENOMEM - the
 * limits), for directory dir (as logged): the set is degraded to full
 * rescans at every tick, logged once per episode. */
void rs_wset_watch_failed(wset_t *ws, const char *dir, int err);

#endif
