/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_above.c - the access files above a set's root, followed
 * by the watcher like those inside it: rs_aboveroot (the state compared,
 * the decision to decide every file again) given what needs httpd.
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
 * Logged (by rs_aboveroot): the directories followed (info, at start); a
 * directory that cannot be watched (warn, once per watcher life: the
 * set's log is rs_logonce); each change found by a full scan's begin
 * (notice, naming the first file that differs; not for a state never
 * stored).
 */
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_access.h"

/* rs_aboveroot_hooks_t.watch_failed: out of watches, the set is degraded
 * like when a directory of its tree cannot be watched. */
static void watch_failed(void *baton, const char *dir, int err)
{
    rs_wset_watch_failed(baton, dir, err);
}

/* rs_aboveroot_hooks_t.forget: every checker drops what it shares. */
static void forget(void *baton)
{
    wset_t *ws = baton;
    int k;

    for (k = 0; k < ws->d->workers; k++) {
        rs_access_forget(ws->acc[k]);
    }
}

void rs_abovew_init(wset_t *ws, apr_pool_t *p)
{
    rs_aboveroot_hooks_t *h = apr_pcalloc(ws->d->pool, sizeof(*h));
    const apr_array_header_t *dirs;
    int complete = 1;

    h->watch_failed = watch_failed;
    h->forget = forget;
    h->baton = ws;
    dirs = rs_access_above(ws->acc[0], ws->d->pool, &complete);
    rs_aboveroot_init(&ws->above, ws->d->pool, h, ws->set->name, ws->set->dir, dirs, complete,
                      rs_access_files(ws->acc[0]), (int)apr_time_sec(rs_global.rescan), ws->log,
                      ws->d->store, p);
}

int rs_abovew_begin(wset_t *ws, apr_pool_t *p)
{
    return rs_aboveroot_begin(&ws->above, ws->w, p);
}

void rs_abovew_end(wset_t *ws, apr_pool_t *p)
{
    rs_aboveroot_end(&ws->above, ws->d->store, p);
}

int rs_abovew_changed(wset_t *ws, apr_pool_t *p)
{
    return rs_aboveroot_changed(&ws->above, ws->w, p);
}
