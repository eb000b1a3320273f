/* SPDX-License-Identifier: Apache-2.0 */
/* rs_aboveroot.h - the access files above a set's root, followed by the
 * watcher like those inside it: their state compared, the decision that
 * every file of the set must be decided again.
 *
 * httpd reads the access files (AccessFileName) of every directory from
 * "/" down, so an .htaccess above a set changes what is served in all of
 * it.  Which directories those are is the caller's (asked of httpd once
 * per watcher life: the configuration cannot change during it).
 *
 * Lifecycle, per set, on the driver's thread:
 *
 *   - rs_aboveroot_init at watcher start: the directories followed
 *     (logged), the state stored when every file was last decided
 *     (rs_above_load);
 *   - every full scan begins with rs_aboveroot_begin: the directories are
 *     watched (rs_watch_above) - before their files are looked at, so a
 *     change made after that look is an event - and the state of their
 *     access files is read (rs_above_state); when it differs from the
 *     stored one, the scan decides every file again (1: rs_scan_opts_t.
 *     recheck) and the caller's checkers forget what they share
 *     (hooks->forget).  Only a scan that succeeded stores the new state
 *     (rs_aboveroot_end): one that failed, was held or killed leaves the
 *     old one, and the next full scan decides everything again;
 *   - an event above the root, and every tick: rs_aboveroot_changed
 *     watches the directories again and compares (1: a full scan is due).
 *
 * The two states are malloc'd strings owned here, freed by a cleanup of
 * the pool given to rs_aboveroot_init (the watcher's), once per state.
 */
#ifndef RS_ABOVEROOT_H
#define RS_ABOVEROOT_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>
#include "rs_db.h"
#include "rs_log.h"
#include "rs_watch.h"

/* What the state asks of its caller; lives as long as the state. */
typedef struct rs_aboveroot_hooks_t {
    /* dir could not be watched for lack of watches (err ENOSPC, ENOMEM):
     * the set is degraded like for a directory of its tree. */
    void (*watch_failed)(void *baton, const char *dir, int err);
    /* The access checkers drop the answers they share between
     * directories (every file is decided again). */
    void (*forget)(void *baton);
    void *baton;
} rs_aboveroot_hooks_t;

/* One set's access files above its root.  Read its fields; change them
 * only through the functions. */
typedef struct rs_aboveroot_t {
    const rs_aboveroot_hooks_t *h;
    const char *name;                /* the set's */
    const apr_array_header_t *dirs;  /* followed (const char *) */
    const apr_array_header_t *names; /* access file names (const char *) */
    int rescan;                      /* ResourceSyncRescanInterval, s (logged) */
    const rs_logger_t *log;
    char *state; /* stored when every file was last decided (NULL: never) */
    char *next;  /* read by the full scan in progress (NULL: none) */
} rs_aboveroot_t;

/* At watcher start, once the store is open: ab for set `name` rooted at
 * root, following dirs (complete 0: httpd's walk did not reach the root,
 * logged) with the access files `names`; kept, not copied.  Logs the
 * directories at info; the stored state is read from store (a failure
 * is logged at debug and taken as never stored).  pool: the watcher's
 * (the states are freed with it); p: temporary. */
void rs_aboveroot_init(rs_aboveroot_t *ab, apr_pool_t *pool, const rs_aboveroot_hooks_t *h,
                       const char *name, const char *root, const apr_array_header_t *dirs,
                       int complete, const apr_array_header_t *names, int rescan,
                       const rs_logger_t *log, rs_db_t *store, apr_pool_t *p);

/* Before a full scan: watch the directories in w (NULL: none), read the
 * state; 1 when it differs from the stored one (a change of a stored
 * state logged at notice, naming the first file that differs). */
int rs_aboveroot_begin(rs_aboveroot_t *ab, rs_watch_t *w, apr_pool_t *p);

/* After a successful full scan: store the state begin read (a failure is
 * logged at debug: the next watcher decides everything again). */
void rs_aboveroot_end(rs_aboveroot_t *ab, rs_db_t *store, apr_pool_t *p);

/* After an event above the root, or at a tick: watch the directories
 * again, read the state; 1 when it differs from the stored one. */
int rs_aboveroot_changed(rs_aboveroot_t *ab, rs_watch_t *w, apr_pool_t *p);

#endif
