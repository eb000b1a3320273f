/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_above.c - the access files above a set's root, followed
 * by the watcher like those inside it.
 *
 * httpd reads the access files (AccessFileName) of every directory from
 * "/" down to a file where AllowOverride or AllowOverrideList allows it,
 * so an .htaccess in the DocumentRoot above a set, or in any directory
 * further up, changes what is served in the whole set.  At watcher start
 * the driver asks httpd which directories above the root those are
 * (rs_access_above: a directory walk of the root, during which httpd
 * names every directory it tries an access file in); when the walk does
 * not reach the root, every directory above it is followed: reading one
 * more file costs little.  The configuration cannot change during a
 * watcher's life (a restart starts a new watcher), so neither can the
 * list.
 *
 * Lifecycle, per set, on the driver's thread:
 *
 *   - every full scan (rs_reconcile_full) begins with rs_abovew_begin:
 *     the directories are watched (rs_watch_above) - before their files
 *     are looked at, so a change made after that look is an event - and
 *     the state of their access files (rs_above_state: device, inode,
 *     size, times, or why it cannot be looked at) is read; when it
 *     differs from the state stored when every file was last decided, the
 *     scan decides every file again (rs_scan_opts_t.recheck) and the
 *     checkers drop the answers they share between directories
 *     (rs_access_forget).  Only when the scan succeeded is the new state
 *     stored (rs_abovew_end): a scan that failed, was held as a mass
 *     deletion or was killed leaves the old one, and the next full scan
 *     (the next watcher's startup scan, too) decides everything again.
 *
 *   - an inotify event for one of those files (filtered to the access
 *     file names; created or written ones after the settling delay), or
 *     for one of the directories itself, and every tick, call
 *     rs_abovew_changed: the directories are watched again (a directory
 *     replaced or made readable meanwhile), the state is read and
 *     compared; when it differs, the driver runs that full scan.  Ticks
 *     are what finds a change in a directory that cannot be watched (not
 *     readable by the run user, ENOSPC): once per tick, a few stat calls.
 *
 * Logged: the directories followed (info, at start); a directory that
 * cannot be watched (warn, once per watcher life: rs_logonce); each change
 * found by a full scan's begin (notice, naming the first file that
 * differs; not for a state never stored).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_access.h"
#include "rs_above.h"

/* Watch every directory above the root (when the set has an inotify
 * instance).  Out of watches (ENOSPC, ENOMEM), the set is degraded like
 * when a directory of its tree cannot be watched; a directory that cannot
 * be watched for a reason of its own (EACCES: the run user cannot read
 * it) is logged once per watcher life and directory, and found at the
 * ticks; one that is not there (then neither is the root: the set is
 * unavailable, which says so itself) is not logged. */
static void watch_dirs(wset_t *ws)
{
    const apr_array_header_t *names = rs_access_files(ws->acc[0]);
    int i;

    for (i = 0; ws->w && i < ws->above_dirs->nelts; i++) {
        const char *dir = APR_ARRAY_IDX(ws->above_dirs, i, const char *);
        int err = rs_watch_above(ws->w, dir, names);
        if (err == ENOSPC || err == ENOMEM) {
            rs_wset_watch_failed(ws, dir, err);
        }
        else if (err && err != ENOENT) {
            rs_log_emit(ws->log, RS_LOG_WARN, err,
                        "set %s: cannot watch directory %s "
                        "above its root for changes of its access files; they are "
                        "compared every %d s (ResourceSyncRescanInterval) instead",
                        ws->set->name, dir, (int)apr_time_sec(rs_global.rescan));
        }
    }
}

/* The state of the access files above the root now, from p. */
static const char *state_now(wset_t *ws, apr_pool_t *p)
{
    return rs_above_state(p, ws->above_dirs, rs_access_files(ws->acc[0]));
}

/* Replace *slot (malloc'd or NULL) by a copy of text (NULL: none). */
static void keep(char **slot, const char *text)
{
    free(*slot);
    *slot = text ? strdup(text) : NULL;
}

void rs_abovew_init(wset_t *ws, apr_pool_t *p)
{
    const char *stored = NULL;
    int complete = 1;
    apr_status_t rv;

    ws->above_dirs = rs_access_above(ws->acc[0], ws->d->pool, &complete);
    if (!complete) {
        rs_log_emit(ws->log, RS_LOG_INFO, 0,
                    "set %s: httpd's directory walk does not "
                    "reach its root %s; following the access files of every directory "
                    "above it",
                    ws->set->name, ws->set->dir);
    }
    rs_log_emit(ws->log, RS_LOG_INFO, 0,
                "set %s: access files above its root followed in "
                "%d director%s%s%s",
                ws->set->name, ws->above_dirs->nelts, ws->above_dirs->nelts == 1 ? "y" : "ies",
                ws->above_dirs->nelts ? ": " : "", apr_array_pstrcat(p, ws->above_dirs, ' '));
    if ((rv = rs_above_load(ws->d->store, p, ws->set->name, &stored)) != APR_SUCCESS) {
        /* Taken as never stored: the startup scan decides everything. */
        rs_log_emit(ws->log, RS_LOG_DEBUG, rv,
                    "set %s: cannot read the state of the access "
                    "files above its root",
                    ws->set->name);
    }
    keep(&ws->above_state, stored);
}

int rs_abovew_begin(wset_t *ws, apr_pool_t *p)
{
    const char *now, *path;
    int k;

    watch_dirs(ws);
    now = state_now(ws, p);
    keep(&ws->above_next, now);
    if (!(path = rs_above_diff(p, ws->above_state, now))) {
        return 0;
    }
    if (ws->above_state) {
        rs_log_emit(ws->log, RS_LOG_NOTICE, 0,
                    "set %s: access file %s above its root "
                    "changed; deciding every file of the set again",
                    ws->set->name, path);
    }
    for (k = 0; k < ws->d->workers; k++) {
        rs_access_forget(ws->acc[k]);
    }
    return 1;
}

void rs_abovew_end(wset_t *ws, apr_pool_t *p)
{
    apr_status_t rv;

    if (!ws->above_next || !rs_above_diff(p, ws->above_state, ws->above_next)) {
        return;
    }
    if ((rv = rs_above_save(ws->d->store, p, ws->set->name, ws->above_next)) != APR_SUCCESS) {
        /* The next watcher decides everything again: wasted work, never
         * a stale answer. */
        rs_log_emit(ws->log, RS_LOG_DEBUG, rv,
                    "set %s: cannot store the state of the access "
                    "files above its root",
                    ws->set->name);
    }
    keep(&ws->above_state, ws->above_next);
}

int rs_abovew_changed(wset_t *ws, apr_pool_t *p)
{
    watch_dirs(ws);
    return rs_above_diff(p, ws->above_state, state_now(ws, p)) != NULL;
}
