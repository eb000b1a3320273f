/* SPDX-License-Identifier: Apache-2.0 */
/* rs_verifypass.h - the verification pass of a set
 * (ResourceSyncVerifyInterval).
 *
 * inotify reports changes made through a watched directory entry only.
 * Some content changes without an event for the name that is listed:
 * writes through a hard link whose other name is outside the set (or in
 * another set), changes of the target of an in-tree symbolic link (the
 * event names the target, not the link), writes made through another
 * mount of the same file system or by another host (NFS), and events lost
 * to a full queue before the overflow was noticed.  The verification pass
 * catches them: every interval it stats every listed file of the set
 * (following a symbolic link, as the scan stores its target's metadata)
 * and hands the files whose size, mtime, ctime, device or inode differ
 * from the stored row, or that are gone, to the caller as scan targets
 * (rs_scan_targets): only those are re-hashed and journaled.
 *
 * Lifecycle: rs_verifypass_init schedules the first pass one interval
 * after `now`.  A pass starts when that time is reached and goes through
 * the inventory in listing order, RS_VERIFYPASS_SLICE rows per call of
 * rs_verifypass_slice; the caller comes back soon while one is in
 * progress (rs_verifypass_wake), so events are still handled between
 * slices and the caller is never blocked for long.  The cursor is the
 * (dir, name) of the last row looked at; rows written in between (by the
 * reconciliations of what a slice found, or of events) do not move it.
 * When a slice reads fewer rows than a slice holds, or the inventory
 * cannot be read, the pass ends (logged) and the next one is scheduled
 * one interval later.  An interval of 0 turns the pass off.
 *
 * The cursor's strings are malloc'ed (they outlive the callers'
 * per-slice pools, and a long-lived pool would grow by a copy per slice)
 * and freed in one place: when the cursor moves, when a pass ends or
 * starts, and by the cleanup rs_verifypass_init registers on its pool.
 *
 * Every time is on the monotonic clock (rs_time_mono) and an argument, so
 * the caller (and the tests) decide what "now" is.  Not thread-safe: one
 * caller (the driver's thread) per state, with its own store connection,
 * outside any transaction.
 */
#ifndef RS_VERIFYPASS_H
#define RS_VERIFYPASS_H

#include <apr_pools.h>
#include <apr_time.h>
#include "rs_db.h"
#include "rs_log.h"
#include "rs_scan.h"

/* Rows looked at per slice. */
#define RS_VERIFYPASS_SLICE 256
/* How soon the caller comes back for the next slice of a pass. */
#define RS_VERIFYPASS_PAUSE apr_time_from_msec(10)

/* A set's verification pass. */
typedef struct rs_verifypass_t {
    apr_interval_time_t interval; /* between passes; 0: off */
    apr_time_t next;              /* when the next pass starts */
    int active;                   /* a pass is in progress */
    char *dir;                    /* its cursor: the last row looked at */
    char *name;                   /* (malloc; NULL: from the first) */
    apr_int64_t seen;             /* rows looked at in this pass */
    apr_int64_t differ;           /* of which differ (handed out) */
} rs_verifypass_t;

/* Set vp up (any earlier content is dropped without being freed): no
 * pass in progress, the first one due at now + interval (0: never).
 * pool: its cleanup frees the cursor; it must not outlive vp. */
void rs_verifypass_init(rs_verifypass_t *vp, apr_pool_t *pool, apr_interval_time_t interval,
                        apr_time_t now);

/* The next slice of the pass of set `set` (its root directory: root),
 * when one is in progress or due at now: the listed rows of db after the
 * cursor, at most RS_VERIFYPASS_SLICE, compared with the files; those
 * that differ, or whose file is gone, are returned as scan targets in p
 * (*out; one name each).  Returns their number; *more is set while the
 * pass goes on.  The end of a pass is logged to log (INFO when something
 * differed, else DEBUG), as is an inventory that cannot be read (ERR; the
 * pass then ends).  Nothing is done (0, *more 0) when the pass is off or
 * not due. */
int rs_verifypass_slice(rs_verifypass_t *vp, rs_db_t *db, apr_pool_t *p, const char *set,
                        const char *root, const rs_logger_t *log, apr_time_t now,
                        rs_scan_target_t **out, int *more);

/* When the caller should call rs_verifypass_slice again for a pass in
 * progress (now + RS_VERIFYPASS_PAUSE), or 0 when none is. */
apr_time_t rs_verifypass_wake(const rs_verifypass_t *vp, apr_time_t now);

#endif
