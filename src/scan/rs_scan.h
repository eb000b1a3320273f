/* SPDX-License-Identifier: Apache-2.0 */
/* rs_scan.h - reconcile a set's directory tree with the stored inventory.
 *
 * The scan walks the tree with openat()/fdopendir() (no stat by full path),
 * compares every entry with its inventory row and writes only what differs.
 * A file whose (dev, inode, size, mtime) and check fingerprint are unchanged
 * is not opened again: hashes are computed once per file version.
 *
 * What is listed: regular files (and symlinks to regular files whose target
 * stays inside the set's root) that are not hidden (rs_glob_hidden), not
 * excluded (rs_glob_match), that the caller's check callback says an
 * anonymous GET would serve, and that the watcher can read.  Files that fail
 * the check or cannot be read are kept as unlisted rows, so they are not
 * re-checked until they change; an unreadable file is logged once per
 * version.  Symlinked directories are not descended.
 *
 * Threads: per directory, the walk (readdir, fstatat, store reads and
 * writes) stays on the calling thread; the per-file work that dominates a
 * first scan - the check callback and hashing - is spread over
 * opts->workers threads, each with its own pool and allocator.  Results are
 * written by the calling thread once the directory's batch is done, so
 * the store is only ever used from one thread.
 *
 * Races: a file may change while it is hashed.  The file is fstat()ed
 * before and after reading; on a difference the file is read again (a few
 * times), and a file that never holds still is recorded with the metadata
 * of the last read and no hash, to be picked up by the next scan.
 */
#ifndef RS_SCAN_H
#define RS_SCAN_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "rs_scanopts.h"

/* Threads a scan's parallel work may use: the processors online, at
 * least 1 and at most 4. */
int rs_scan_threads(void);

/* Scan one set.  Writes are committed in batches; the inventory is
 * consistent with the tree as of the scan's start when it returns
 * APR_SUCCESS.  A root that cannot be opened changes nothing: the scan
 * returns the cause (errno), since a set must never be listed empty
 * because its file system is missing. */
apr_status_t rs_scan_set(rs_db_t *st, const rs_scan_opts_t *o, apr_pool_t *p,
                         rs_scan_stats_t *stats);

/* One part of a set's tree to reconcile, for rs_scan_targets. */
typedef struct rs_scan_target_t {
    const char *dir; /* relative directory, "" = the root */
    /* Names of entries of dir to look at (array of char*): each may be a
     * file (reconciled alone), a directory (reconciled with everything
     * below it) or gone (its row, and rows below it, are removed).  NULL:
     * dir itself with everything below it. */
    const apr_array_header_t *names;
} rs_scan_target_t;

/* Reconcile parts of a set's tree, in one transaction: what a change
 * notification (inotify) says may have changed.  Same rules and callbacks
 * as rs_scan_set; a directory on the way to a target that is hidden,
 * excluded, not served or gone makes the target's rows go.  Fails
 * (without changing anything) if the set's root cannot be opened: the
 * caller then runs rs_scan_set. */
apr_status_t rs_scan_targets(rs_db_t *st, const rs_scan_opts_t *o, apr_pool_t *p,
                             const rs_scan_target_t *targets, int ntargets, rs_scan_stats_t *stats);

#endif
