/* SPDX-License-Identifier: Apache-2.0 */
/* rs_scanctx.h - the state of one scan (rs_scan_ctx_t), shared by the
 * units a scan is made of: the walk (rs_scan.c, rs_scantargets.c), the
 * store's writes (rs_scanwrite.c), the writer thread (rs_scanpipe.c) and
 * the access files' rows (rs_scanaccess.c).
 *
 * Lifecycle: one rs_scan_ctx_t per call of rs_scan_set or
 * rs_scan_targets, on that call's stack, set up after the store's
 * transaction is begun and gone when the call returns.  It is used from
 * the calling thread only (the per-file workers of rs_scanfile never see
 * it), so nothing in it is locked.
 *
 * Errors: the first failure of a store call or of the on_change callback
 * is kept in err (with its cause); the loops of the walk stop at it, and
 * rs_scan_set / rs_scan_targets return it after their commit (which the
 * store turns into a rollback of what the failed transaction held).
 */
#ifndef RS_SCANCTX_H
#define RS_SCANCTX_H

#include <apr_hash.h>
#include <apr_pools.h>
#include "rs_scanopts.h"

/* The state of one scan. */
typedef struct rs_scan_ctx_t {
    rs_db_t *st;
    const rs_scan_opts_t *o;
    rs_scan_stats_t *stats;
    apr_hash_t *visited;  /* dirs walked (relpath -> "") */
    apr_pool_t *vpool;    /* for visited */
    const char *realroot; /* the root with links resolved (realpath) */
    apr_size_t realroot_len;
    apr_int64_t pending; /* writes in the open transaction */
    apr_status_t err;    /* first failure; APR_SUCCESS while none */
    /* While walking a directory whose access file (or one of an
     * ancestor's, within this walk) appeared, changed or vanished: every
     * file gets its access check again, even if its row describes it.
     * Set and restored by rs_scan_walk around a directory's subtree; set
     * for the whole scan by rs_scan_opts_t.recheck. */
    int recheck;
    /* The store writer of a full scan (rs_scanpipe.c), NULL when the
     * store is written from this thread.  While it is set, this thread
     * never uses st: rows are loaded through rs_scanpipe_load and every
     * write goes through rs_scanpipe_row / _access / _drop. */
    struct rs_scanpipe_t *pipe;
    /* The set had no row at all when the scan began (a first scan):
     * every directory's stored rows are then known to be none, so no
     * directory is loaded and nothing is left unvisited.  Exact because
     * only this scan writes the set's rows while it runs (the caller
     * holds the store's transaction). */
    int fresh;
    /* The threads that read and hash files (and check them, when the
     * checks may run on several threads) for the rest of the scan,
     * started by the first directory with enough work for them
     * (rs_scan_finish_jobs; crew_tried: not again after NULL) and
     * stopped when the scan ends; NULL: none (rs_scanfile.h). */
    struct rs_scanfile_crew_t *crew;
    int crew_tried;
    /* The threads reading ahead of the walk (rs_scanahead.c), NULL: none. */
    struct rs_scanahead_t *ahead;
    /* A full scan's rows waiting to be written several to a statement
     * (rs_invbatch.h), NULL: each row written at once (a scan of
     * targets).  It goes with st: the thread that holds the store (the
     * walk's, or the pipe's writer) uses it, and writes it out before
     * anything else reads or writes the set's rows, and before a commit
     * (rs_scanwrite_flush). */
    struct rs_invbatch_t *batch;
} rs_scan_ctx_t;

#endif
