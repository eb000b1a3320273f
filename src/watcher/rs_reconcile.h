/* SPDX-License-Identifier: Apache-2.0 */
/* rs_reconcile.h - a set's tree reconciled with its inventory, on the
 * watcher's driver thread: the full scan and the scan of what inotify (or
 * the verification pass, or the hashing lane) named, with the steps
 * around them.
 *
 * A full scan (rs_reconcile_scan), at startup, after a lost event queue
 * or a changed root, for sets that cannot be watched, to confirm a held
 * mass deletion, as a store failure's retry:
 *
 *   1. may it run: the root must be listable (rs_massdel_check; if not,
 *      the set is "root lost" and nothing is scanned), records that a
 *      failed scan committed are published first (storeretry's resync),
 *      the journal's start is read and, when it has one, its mark taken
 *      (the scan's start); a store that fails here is noted;
 *   2. the scan, with the set's options (hooks->scan_opts), journaled
 *      (through hooks->recorder) from the set's second scan ever on, with
 *      the mass-deletion guard's limit; around it the access files above
 *      the root (above_begin / above_end) and the progress;
 *   3. its verdict: held by the guard (nothing else happens), the root
 *      gone during the scan (root lost), or a failure of the store
 *      (hooks->store_failed "a full scan": publish what committed, enter
 *      the failing state);
 *   4. the report lines, the journal begun at the scan's start (the first
 *      scan: the baseline, published as the Resource List whose `at` is
 *      the journal's start), the committed records published and the
 *      Change Lists updated (rs_reconcile_publish), the store's failing
 *      state ended, and the next snapshot scheduled - forced when the
 *      inventory changed, or when the Resource List in service is behind
 *      the journal (an earlier watcher's changes whose snapshot never
 *      came).
 *
 * A batch (rs_reconcile_batch) runs in one transaction; a failure of it
 * (the root gone, the store) is decided by a full scan, after which the
 * committed records of an earlier failed scan are published first.
 *
 * Lifecycle: the records of a scan reach the ring and the documents only
 * after they committed, so a rolled-back batch is never published.  The
 * state lives as long as the watcher; the store and journal are
 * arguments, since a store failure's retry replaces them.  What the
 * other concerns do (publish, the status segment, httpd's access checks,
 * watches, snapshots) is asked through rs_reconcile_hooks_t.  Time: the
 * clocks are hooks (a scan takes time: its end is read after it).
 */
#ifndef RS_RECONCILE_H
#define RS_RECONCILE_H

#include <apr_pools.h>
#include <apr_time.h>
#include "rs_db.h"
#include "rs_journal.h"
#include "rs_linkscan.h"
#include "rs_log.h"
#include "rs_massdel.h"
#include "rs_recorder.h"
#include "rs_scan.h"
#include "rs_storeretry.h"

/* The set's published figures the reconciliation decides on. */
typedef struct rs_reconcile_extent_t {
    apr_int64_t entries;   /* files in the Resource List in service */
    apr_int64_t open_id;   /* the open Change List's id (0: none yet) */
    int ready;             /* count is known */
    apr_int64_t count;     /* records in the open Change List */
    apr_int64_t bytes;     /* their rendered bytes (-1: unknown) */
    apr_int64_t max_bytes; /* the most a closed list's entries take (0: not known yet) */
} rs_reconcile_extent_t;

/* What the reconciliation asks of the rest of the watcher; every member
 * but the clocks is required.  Lives as long as the rs_reconcile_t. */
typedef struct rs_reconcile_hooks_t {
    /* Fill so (zeroed) with the set's configuration and the caller's
     * callbacks: set, root, hashes, excludes, dotfiles, cfg, access_files,
     * check and its batons, workers, progress, log, on_dir / on_drop,
     * defer.  The engine sets the rest (journaling, limit, recheck). */
    void (*scan_opts)(void *baton, rs_scan_opts_t *so);
    /* The recorder of a journaled scan into j, from p (with whatever else
     * the caller's records carry, e.g. notifications). */
    rs_recorder_t *(*recorder)(void *baton, apr_pool_t *p, rs_journal_t *j);
    /* After the commit of rc's records (rc may be NULL): into the ring,
     * the open list's extent, notifications. */
    void (*publish)(void *baton, apr_pool_t *p, rs_recorder_t *rc);
    /* The set's published figures, now. */
    void (*extent)(void *baton, rs_reconcile_extent_t *out);
    /* Close, expire and write the set's Change Lists (the extent
     * changes); returns the store's status. */
    apr_status_t (*update_lists)(void *baton, apr_pool_t *p, rs_journal_t *j);
    /* Change Lists old_id .. new_id - 1 were closed, new_id opened. */
    void (*lists_closed)(void *baton, apr_pool_t *p, apr_int64_t old_id, apr_int64_t new_id);
    /* A store failure with rv while doing `what`: noted (nothing
     * committed to publish), or failed (publish what committed first). */
    void (*store_note)(void *baton, apr_status_t rv, const char *what);
    void (*store_failed)(void *baton, apr_pool_t *p, apr_status_t rv, const char *what);
    /* Publish what a failed scan committed (storeretry's resync). */
    apr_status_t (*resync)(void *baton, apr_pool_t *p);
    /* Before a full scan: an inotify instance is made if the set has
     * none, its degraded state cleared; returns whether it was degraded. */
    int (*watch_begin)(void *baton);
    /* The set's watches (-1: no inotify instance); *degraded: a watch
     * could not be added since watch_begin. */
    long (*watches)(void *baton, int *degraded);
    /* Every directory is watched again: a later episode is logged. */
    void (*watch_restored)(void *baton);
    /* root_lost or the watch state changed: publish the set's mode. */
    void (*mode)(void *baton);
    /* The access files above the root: before a full scan (1: every
     * file is decided again), after a successful one. */
    int (*above_begin)(void *baton, apr_pool_t *p);
    void (*above_end)(void *baton, apr_pool_t *p);
    /* A full scan's progress begins and ends. */
    void (*progress_begin)(void *baton);
    void (*progress_end)(void *baton);
    /* A batch changed the inventory at now (monotonic). */
    void (*changed)(void *baton, apr_time_t now);
    /* After a full scan: the next snapshot, the inventory as of at (the
     * journal's mark or start), the scan completed at `completed`;
     * force: the inventory changed, or the list is behind the journal. */
    void (*snapshot)(void *baton, apr_pool_t *p, apr_time_t at, apr_time_t completed, int force);
    /* Clocks: monotonic and wall (NULL: rs_time_mono, apr_time_now). */
    apr_time_t (*mono)(void);
    apr_time_t (*wall)(void);
    void *baton;
    /* The links of a set whose link rules may name its own files (NULL:
     * none, or they are resolved as the scans write).  With it, a set's
     * first scan (its baseline: no record, no snapshot yet) resolves no
     * link through scan_opts' links_row and links_done (left out): it
     * hands its rows to the collection links_scan makes for it
     * (rs_linkscan.h, rs_scan_opts_t.links_scan), which resolves them
     * all in one pass once the scan succeeded, before the snapshot (a
     * failure is the store's, with its cause, and fails the scan).  The
     * collection is destroyed after the scan, whatever its outcome. */
    rs_linkscan_t *(*links_scan)(void *baton);
} rs_reconcile_hooks_t;

/* One set's reconciliation.  Read its fields; change them only through
 * the functions (root_lost also by the driver: an unreadable event queue
 * stands for a lost root). */
typedef struct rs_reconcile_t {
    const rs_reconcile_hooks_t *h;
    const char *name;        /* the set's */
    const char *capture_dir; /* journaled scans capture here (NULL: no) */
    int max_entries;         /* ResourceSyncMaxEntries */
    rs_massdel_t *massdel;   /* the set's guard */
    rs_storeretry_t *retry;  /* its store failing */
    rs_storeretry_episode_t *episode;
    const rs_logger_t *log;
    int root_lost; /* the root is gone: retry at every tick */
} rs_reconcile_t;

/* Make rc for set `name` (kept, as are the pointers): the other concerns'
 * states it works with, its log. */
void rs_reconcile_init(rs_reconcile_t *rc, const rs_reconcile_hooks_t *h, const char *name,
                       const char *capture_dir, int max_entries, rs_massdel_t *massdel,
                       rs_storeretry_t *retry, rs_storeretry_episode_t *episode,
                       const rs_logger_t *log);

/* The whole set, as above (first: the startup reconciliation of this
 * watcher, its report at notice). */
void rs_reconcile_scan(rs_reconcile_t *rc, apr_pool_t *p, rs_db_t *store, rs_journal_t *journal,
                       int first);

/* The n targets, journaled, in one transaction; on failure a full scan
 * decides. */
void rs_reconcile_batch(rs_reconcile_t *rc, apr_pool_t *p, rs_db_t *store, rs_journal_t *journal,
                        const rs_scan_target_t *t, int n);

/* After records were committed: the recorder's (r, may be NULL) into the
 * ring (hooks->publish), then the Change Lists; full == 0 (a batch)
 * looks at the lists only when the open one may be full
 * (rs_listclose_batch_due).  Returns the store's status (logged). */
apr_status_t rs_reconcile_publish(rs_reconcile_t *rc, apr_pool_t *p, rs_journal_t *journal,
                                  rs_recorder_t *r, int full);

/* Whether changes were journaled after the Resource List in service read
 * the inventory (the store's "snapshot-seq:<set>"). */
int rs_reconcile_list_behind(rs_reconcile_t *rc, apr_pool_t *p, rs_db_t *store,
                             rs_journal_t *journal);

#endif
