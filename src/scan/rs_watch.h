/* SPDX-License-Identifier: Apache-2.0 */
/* rs_watch.h - follow one set's tree with inotify.
 *
 * One rs_watch_t per set, each with its own inotify instance (two sets may
 * share directories, and an instance hands out one watch per inode).
 * The owner (the watcher process) adds a watch for every directory the
 * scanner is about to read (rs_scan_opts_t.on_dir), so a directory is
 * watched first and read second: an entry created after the read shows up
 * as an event.  Events are not acted on here; they are turned into work:
 *
 *   - "now": entries of a directory to reconcile at the next batch:
 *     closed after writing, attributes changed, deleted, moved in or out,
 *     and directories created (their subtree is walked and watched);
 *   - "settling": a file created (IN_CREATE) or modified (IN_MODIFY)
 *     without a close yet.  It becomes due RS_WATCH_SETTLE later (on the
 *     monotonic clock, rs_time_mono: a step of the wall clock neither
 *     holds it back nor hurries it) unless a
 *     close (or another "now" event) takes it first.  So a write burst
 *     ending in a close is one change, a hard link or a symlink (which are
 *     never closed) is seen after the delay, and a writer that keeps a file
 *     open is seen every RS_WATCH_SETTLE at most;
 *   - flags: the queue overflowed (IN_Q_OVERFLOW), or the root itself was
 *     deleted, moved, unmounted or changed its attributes: only a full
 *     reconciliation scan can say what changed.
 *
 * Directories above the root (rs_watch_above) are watched too, for one
 * thing only: the access files (.htaccess, AccessFileName) httpd reads
 * there, which change what it serves anywhere in the tree.  Their events
 * are filtered to those names and become one piece of work of their own
 * (rs_watch_take_above), "now" or "settling" like the entries of the
 * tree; the directory itself gone, moved or changed in its attributes is
 * such work too.  They are never scan targets, and rs_watch_forget never
 * removes them.
 *
 * Watches follow inodes, not paths: a directory moved inside the tree
 * keeps its watch descriptor, and the map from descriptor to path is
 * corrected when the scanner walks the new path (rs_watch_add returns the
 * same descriptor with the new path).  A directory moved out of the tree
 * must stop reporting: the scanner drops its rows and calls
 * rs_watch_forget, which removes the watches still mapped below the old
 * path.  Deleted directories lose their watches by themselves
 * (IN_IGNORED).
 *
 * Not thread-safe; Linux only.
 */
#ifndef RS_WATCH_H
#define RS_WATCH_H

#include <apr_pools.h>
#include <apr_time.h>
#include "rs_scan.h"

#define RS_WATCH_SETTLE apr_time_from_sec(1)

/* rs_watch_take_flags bits */
#define RS_WATCH_OVERFLOW 1u /* events were lost */
#define RS_WATCH_ROOT     2u /* the root changed: deleted, moved, attributes */

typedef struct rs_watch_t rs_watch_t;

/* Create an instance for the tree at root.  max_watches > 0 caps the
 * number of watches (rs_watch_add then fails with ENOSPC, as the kernel
 * does at fs.inotify.max_user_watches); 0: no cap of our own.  Returns
 * an errno value on failure (EMFILE: max_user_instances reached). */
apr_status_t rs_watch_create(rs_watch_t **out, apr_pool_t *p, const char *root, long max_watches);

/* The descriptor to poll for input. */
int rs_watch_fd(const rs_watch_t *w);

/* Watch directory relpath ("" = the root), open as dfd.  Returns 0 or an
 * errno value (ENOSPC, ENOMEM: limits reached). */
int rs_watch_add(rs_watch_t *w, const char *relpath, int dfd);

/* Watch directory dir (absolute), above the root, for changes of the
 * access files named in names (array of char*, kept: it must live as
 * long as w) in it, by path (following symbolic links, as httpd reads
 * them).  Watching it again is cheap, and watches the directory now at
 * that path if another one was watched there before.  Returns 0 or an
 * errno value (EACCES: the directory cannot be read; ENOENT; ENOSPC,
 * ENOMEM: limits reached). */
int rs_watch_above(rs_watch_t *w, const char *dir, const apr_array_header_t *names);

/* Whether a change above the root is due at `now` (rs_time_mono()): an
 * access file of a watched directory above it was created or written
 * (due RS_WATCH_SETTLE later, unless a close or another event takes it
 * first), closed after writing, renamed, removed or changed in its
 * attributes, or such a directory was removed, moved or changed.  The
 * work is cleared when taken. */
int rs_watch_take_above(rs_watch_t *w, apr_time_t now);

/* Stop watching relpath and the directories below it (those still mapped
 * to paths below relpath).  Cheap when relpath is not a watched directory. */
void rs_watch_forget(rs_watch_t *w, const char *relpath);

/* Read every queued event (non-blocking) into work. */
apr_status_t rs_watch_read(rs_watch_t *w);

/* Take the work due at `now` (rs_time_mono()) as scan targets (one per
 * directory, with the names of its entries), allocated from p.  Returns
 * their number. */
int rs_watch_take(rs_watch_t *w, apr_pool_t *p, apr_time_t now, rs_scan_target_t **targets);

/* Return and clear the RS_WATCH_* flags. */
unsigned rs_watch_take_flags(rs_watch_t *w);

/* When the next settling entry (or change above the root) is due, on
 * rs_time_mono()'s clock (0: none).
 * Never later than that; earlier when the first one was taken by a close
 * meanwhile (the next rs_watch_take at that time finds nothing due and
 * corrects it). */
apr_time_t rs_watch_next_due(const rs_watch_t *w);

/* Number of watches. */
long rs_watch_count(const rs_watch_t *w);

/* Events read since creation. */
apr_int64_t rs_watch_events(const rs_watch_t *w);

#endif
