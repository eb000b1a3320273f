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
    /* The store's history and file (mod_resourcesync_history.c). */
    char history[RS_HISTORY_LEN + 1];
    apr_dev_t db_dev;
    apr_ino_t db_ino;
    apr_time_t next_check;     /* of the store file, monotonic clock */
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

/* Make the store's generation counter of set at least gen (the next
 * snapshot gets a larger number). */
void rs_snapjob_gen_floor(rs_db_t *store, apr_pool_t *p, const rs_set_t *set,
                          apr_uint64_t gen);

/* mod_resourcesync_history.c.  At watcher start, after the store is
 * opened and before the sets are set up: adopt the store's history, or
 * start a new one when the store does not continue the documents on disk
 * (then every document of the old history is removed and one warning is
 * logged); every set's status entry is then of d->history.  Returns the
 * cause (logged) when the history cannot be read or recorded. */
apr_status_t rs_drive_history_start(rs_drive_t *d);

/* Every few seconds (now: monotonic clock), whether the store was
 * deleted or replaced since rs_drive_history_start (logged): the watcher
 * must then end so that a new one starts a new history. */
int rs_drive_history_lost(rs_drive_t *d, apr_time_t now);

#endif
