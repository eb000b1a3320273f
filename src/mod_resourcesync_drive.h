/* mod_resourcesync_drive.h - private to the driver's files.
 *
 * The driver (mod_resourcesync_drive.c) owns the watcher's per-set state;
 * the snapshot scheduling (mod_resourcesync_snapjob.c) works on it from
 * the driver's thread only.
 */
#ifndef MOD_RESOURCESYNC_DRIVE_H
#define MOD_RESOURCESYNC_DRIVE_H

#include "mod_resourcesync.h"
#include "rs_journal.h"
#include "rs_inventory.h"
#include "rs_watch.h"

/* What the driver works with, for the watcher's lifetime. */
typedef struct rs_drive_t {
    server_rec *s;
    rs_logger_t log;           /* the once-only log (rs_logonce) */
    rs_db_t *store;         /* the driver's connection */
    rs_journal_t *journal;
    apr_pool_t *pool;          /* the watcher's */
    apr_pool_t *iter;          /* cleared after each piece of work */
    int workers;               /* scan threads (scan_workers) */
    struct wset_t *ws;
    int nsets;
    apr_pool_t *store_pool;    /* of store and journal (replaced on a retry) */
    int nfailing;              /* sets whose store writes fail */
    apr_status_t store_err;    /* cause of the episode, APR_SUCCESS: none */
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
    rs_access_t **acc;         /* one per scan worker */
    rs_watch_t *w;
    rs_status_set_t status;
    int degraded;              /* errno of the failed watch, 0: none */
    int degraded_logged;       /* the error log was told (once per episode) */
    int dirty;                 /* inventory changed since the last snapshot */
    int root_lost;             /* the root is gone: retry at every tick */
    int failing;               /* failures since the last success */
    apr_time_t next_tick;      /* on the monotonic clock (rs_time_mono) */
    const rs_logger_t *log;
    /* The store failing (mod_resourcesync_storefail.c): the cause of the
     * set's last failed transaction until a full scan succeeds, the time
     * of the next retry and the back-off; resync: committed records of a
     * failed scan are not in the ring yet. */
    apr_status_t store_err;
    apr_time_t retry_at;
    apr_interval_time_t retry_delay;
    int resync;
} wset_t;

/* Write ws->status to the set's entry in the status segment (inline: the
 * snapshot jobs use it too, and must not call back into the driver). */
static inline void rs_drive_status_put(wset_t *ws)
{
    rs_status_write_set(ws->set->slot, &ws->status);
}

/* Write a new Resource List snapshot of the set from the inventory,
 * unless the current one is still valid (force: the inventory changed).
 * at == 0: take it from the journal now; completed: when the scan the
 * inventory reflects ended (0: now).  async: as a background job, finished
 * later from the event loop (rs_jobs_reap); otherwise done on return.
 * Clears ws->dirty when a snapshot is started (or not needed); sets it
 * again when writing fails. */
void rs_snapjob_schedule(wset_t *ws, apr_pool_t *p, apr_time_t at, apr_time_t completed,
                         int force, int async);

/* mod_resourcesync_storefail.c: the store failing (see that file).
 * A transaction of ws failed with cause rv while doing `what`: enter (or
 * stay in, backing off) the failing state; the first failing set logs the
 * episode and publishes the cause in the status segment. */
void rs_storefail_note(wset_t *ws, apr_status_t rv, const char *what);
/* After a failed scan of ws: records that earlier transactions of the
 * scan committed (a scan commits every 20 000 rows) are published
 * (rs_changes_resync) before anything later, so readers never take their
 * sequence numbers for unused ones; records of the rolled-back
 * transaction are not in the store, so they never are.  On failure
 * ws->resync stays set, and the retry tries again first. */
apr_status_t rs_storefail_resync(apr_pool_t *p, wset_t *ws);
/* A transaction of ws failed (rv) while doing `what`: publish what was
 * committed (rs_storefail_resync), then rs_storefail_note. */
void rs_storefail_failed(apr_pool_t *p, wset_t *ws, apr_status_t rv, const char *what);
/* Whether ws fails and its retry is due (now: rs_time_mono). */
int rs_storefail_due(const wset_t *ws, apr_time_t now);
/* A full scan of ws succeeded: leave the failing state (the last set
 * logs "store works again"). */
void rs_storefail_ok(wset_t *ws);
/* Replace the driver's store connection and journal by new ones (the old
 * connection may have been opened read-only).  On failure there is none:
 * every set is then failing, and the next retry opens one. */
apr_status_t rs_storefail_reopen(rs_drive_t *d);
/* Open the driver's store and journal at the watcher's start, retrying
 * with back-off while the cause is transient (rs_db_transient).  Returns
 * the cause of a failure that is not, or when the parent is gone. */
apr_status_t rs_storefail_open(rs_drive_t *d);

#endif
