/* SPDX-License-Identifier: Apache-2.0 */
/* rs_massdel.h - never publish a set emptied by mistake.
 *
 * The watcher's guard of one set against mass deletions, on the driver's
 * thread.  Three parts, all deciding on an rs_massdel_t:
 *
 * Availability.  Before every full scan (startup, ticks, a lost event
 * queue, a changed root, a mount table change) the driver asks
 * rs_massdel_check whether the set can be listed at all: its root opens,
 * it is not an empty directory on another device than the one it had
 * when last listed (a file system that is no longer mounted leaves the
 * empty directory below it), and its URL-path maps to it (asked of the
 * caller: hooks->verify_root).  If not, the set is "unavailable": nothing
 * is scanned or journaled, `why` says why (published), and children
 * answer 503 with Retry-After for its documents.  The check runs again at
 * every tick and mount table change; when it passes, the full scan that
 * follows reconciles the inventory - untouched meanwhile - with the tree.
 * The device is remembered in the store (meta "root-dev:<set>"), so an
 * unmount while httpd was stopped is noticed at the next start.
 *
 * Mass deletions.  Every scan runs with a limit (rs_massdel_limit, from
 * ResourceSyncMassDeletion and the set's listed files): a scan or an
 * event batch that would delete more is rolled back by rs_scan
 * (RS_SCAN_EMASSDEL).  rs_massdel_scanned then logs one warning and
 * schedules a confirming full scan RS_MASSDEL_CONFIRM later, which runs
 * without the limit (rs_massdel_recheck_begin sets `confirming`): it
 * deletes what is still gone then, and nothing if the files are back.
 * Until it runs (rs_massdel_waiting), the set's events are left to it.
 *
 * Mounts.  inotify reports no mount or unmount; the driver polls the mount
 * table (rs_mounts) and rs_massdel_mounts_changed marks a set that a mount
 * point that appeared or went is in, at or above (`remount`) for a full
 * scan - which checks availability first, then walks into mounted file
 * systems (scans cross mount points: httpd serves the files there).
 *
 * Time is always the caller's (`now`, monotonic: rs_time_mono), so every
 * deadline can be tested.  What the caller must do besides is asked
 * through rs_massdel_hooks_t.
 */
#ifndef RS_MASSDEL_H
#define RS_MASSDEL_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>
#include "rs_db.h"
#include "rs_log.h"
#include "rs_mounts.h"

#define RS_MASSDEL_CONFIRM apr_time_from_sec(5) /* delay of a confirming scan */
#define RS_MASSDEL_WHY_MAX 256                  /* `why` kept, with its NUL */

typedef struct rs_massdel_t rs_massdel_t;

/* What the guard asks of its caller (the httpd glue); lives as long as
 * the rs_massdel_t that points to it. */
typedef struct rs_massdel_hooks_t {
    /* Why the set's URL-path does not map to its root (from p), or NULL
     * when it does.  Asked after the root itself passed its checks. */
    const char *(*verify_root)(void *baton, apr_pool_t *p);
    /* The published fields (unavailable, why, held) may have changed:
     * publish them (the set's status entry). */
    void (*publish)(void *baton, const rs_massdel_t *md);
    void *baton;
    /* The watcher's log of things that repeat (once per watcher life):
     * the device not recorded, mount points that changed. */
    const rs_logger_t *log;
    /* Every line, every time: the start and end of an unavailable
     * episode, a held mass deletion and its confirmation. */
    const rs_logger_t *episodes;
} rs_massdel_hooks_t;

/* One set's guard.  Lifecycle: made by rs_massdel_init at watcher start,
 * then rs_massdel_adopt once the store is open; lives as long as the
 * watcher.  Read its fields, change them only through the functions. */
struct rs_massdel_t {
    const rs_massdel_hooks_t *h;
    const char *name; /* the set's (log lines, the store's key) */
    const char *dir;  /* its root */
    int share;        /* ResourceSyncMassDeletion share (%), 0: off */
    apr_int64_t min;  /* and its least number of files */
    /* Published (hooks->publish): the set cannot be listed, and why; the
     * deletions held until the confirming scan. */
    int unavailable;
    char why[RS_MASSDEL_WHY_MAX];
    apr_int64_t held;
    /* The root's device when last listable (0: unknown). */
    apr_uint64_t root_dev;
    /* A held mass deletion waits for the confirming full scan at
     * confirm_at (monotonic, 0: none), which runs with confirming set. */
    apr_time_t confirm_at;
    int confirming;
    apr_int64_t listed; /* listed files when the last limit was taken */
    int remount;        /* the mount table changed below or above the root */
};

/* Make the guard of set `name` rooted at dir (both kept, not copied):
 * nothing known, nothing held, available.  share and min: the limit of
 * ResourceSyncMassDeletion (share 0: off). */
void rs_massdel_init(rs_massdel_t *md, const rs_massdel_hooks_t *h, const char *name,
                     const char *dir, int share, apr_int64_t min);

/* At watcher start, after the store is open: the root's device as last
 * recorded in store, and the published state a previous watcher of this
 * server generation left (unavailable, why, held).  An unavailable set
 * stays so until the first check decides again (and logs the end of the
 * episode); deletions it held are judged anew by this watcher's first
 * scan (held is dropped, and published). */
void rs_massdel_adopt(rs_massdel_t *md, rs_db_t *store, apr_pool_t *p, int unavailable,
                      const char *why, apr_int64_t held);

/* Whether the set can be listed now (1) or not (0: `why` says why, logged
 * at error and published once per episode, or when the cause changes);
 * the end of an episode is logged and published too.  A listable root's
 * device is recorded in store when it differs from the known one (a
 * failure is warned about, through hooks->log).  Called before every
 * full scan. */
int rs_massdel_check(rs_massdel_t *md, rs_db_t *store, apr_pool_t *p);

/* The set cannot be listed: whatever was held is forgotten (the scan
 * that ends the episode is guarded again); published. */
void rs_massdel_unlisted(rs_massdel_t *md);

/* The mass-deletion limit of a scan of the set now (rs_scan_opts_t
 * max_deleted), with `listed` files in the Resource List in service: 0
 * (none) when ResourceSyncMassDeletion is off or for the confirming scan;
 * otherwise share % of listed, at least min. */
apr_int64_t rs_massdel_limit(rs_massdel_t *md, apr_int64_t listed);

/* A scan or batch of the set ended with rv, having found `deleted` files
 * gone.  After the confirming scan: says what it found and ends the hold
 * (rv APR_SUCCESS), or tries again RS_MASSDEL_CONFIRM after now (a
 * failure, logged by the caller).  rv RS_SCAN_EMASSDEL: the deletions are
 * held (published); the first hold logs one warning and schedules the
 * confirming scan RS_MASSDEL_CONFIRM after now.  Returns 1 when the scan
 * was held (its changes were rolled back), else 0. */
int rs_massdel_scanned(rs_massdel_t *md, apr_status_t rv, apr_int64_t deleted, apr_time_t now);

/* Whether a held mass deletion waits for its confirming scan (the set's
 * events are left to it). */
int rs_massdel_waiting(const rs_massdel_t *md);

/* When the event loop must wake for the set (monotonic; 0: no need). */
apr_time_t rs_massdel_next(const rs_massdel_t *md);

/* Whether a full scan out of turn is due at now: the confirming scan, or
 * the mount table changed. */
int rs_massdel_due(const rs_massdel_t *md, apr_time_t now);

/* Around that full scan: begin (now) makes it the confirming scan when
 * that is due, and clears `remount`; end (now, after the scan) schedules
 * the confirming scan again RS_MASSDEL_CONFIRM later when it did not run
 * (the journal could not be read: the deadline is still past), and ends
 * `confirming`. */
void rs_massdel_recheck_begin(rs_massdel_t *md, apr_time_t now);
void rs_massdel_recheck_end(rs_massdel_t *md, apr_time_t now);

/* At watcher start: follow the mount table at path
 * ("/proc/self/mountinfo"); *out is NULL, with a warning to log, when it
 * cannot be read. */
apr_status_t rs_massdel_mounts_open(rs_mounts_t **out, apr_pool_t *p, const char *path,
                                    const rs_logger_t *log);

/* m polled POLLPRI: the mount points that appeared or went (rs_mounts_
 * changed, from p), or NULL, with a warning to log, when the table cannot
 * be read (the next full scan finds them). */
apr_array_header_t *rs_massdel_mounts_read(rs_mounts_t *m, apr_pool_t *p, const rs_logger_t *log);

/* Mark the set (remount, logged through hooks->log) when one of the
 * mount points mps (const char *) is in, at or above its root; returns
 * remount. */
int rs_massdel_mounts_changed(rs_massdel_t *md, const apr_array_header_t *mps);

#endif
