/* SPDX-License-Identifier: Apache-2.0 */
/* rs_scanahead.h - reading a tree's metadata ahead of a full scan's
 * walk on a cold cache (see rs_scanahead.c). */
#ifndef RS_SCANAHEAD_H
#define RS_SCANAHEAD_H

#include <apr_pools.h>

/* Reading the tree's metadata ahead of a full scan's walk on a cold
 * cache (rs_scanahead.c; see there).  start: before the walk, with the
 * root open as rootfd (duplicated); force: read from the start instead
 * of waiting for a cold directory; NULL when no thread could start.
 * mark: the calling thread's blocks read from devices, processor time
 * and the time, before a directory; note: after each directory the walk
 * read, with the mark taken before it, its entries, and the files the
 * walk has seen.  stop: after the walk; *dirs
 * (if not NULL) gets the directories read ahead. */
typedef struct rs_scanahead_t rs_scanahead_t;
typedef struct rs_scanahead_mark_t {
    long blocks;
    apr_int64_t cpu, wall; /* nanoseconds */
} rs_scanahead_mark_t;
void rs_scanahead_mark(rs_scanahead_mark_t *m);
rs_scanahead_t *rs_scanahead_start(apr_pool_t *p, int rootfd, int force);
void rs_scanahead_note(rs_scanahead_t *ra, const rs_scanahead_mark_t *from, apr_int64_t entries,
                       apr_int64_t walk_files);
void rs_scanahead_stop(rs_scanahead_t *ra, apr_int64_t *dirs);

#endif
