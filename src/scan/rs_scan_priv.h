/* SPDX-License-Identifier: Apache-2.0 */
/* rs_scan_priv.h - what the two kinds of scan share (rs_scan's own helper,
 * not part of its API: only rs_scan.c and rs_scantargets.c include it).
 *
 * rs_scan.c holds the full reconciliation walk (rs_scan_set) and the
 * pieces it is made of: entry classification, the per-directory walk, the
 * writing of the per-file results, the dropping of rows of what is gone.
 * rs_scantargets.c reconciles the parts of a tree that change
 * notifications name (rs_scan_targets) with the same pieces.
 */
#ifndef RS_SCAN_PRIV_H
#define RS_SCAN_PRIV_H

#include <sys/stat.h>
#include <apr_hash.h>
#include <apr_pools.h>
#include <apr_tables.h>
#include "rs_scan.h"
#include "rs_scanctx.h"

/* What a directory entry is to a scan (rs_scan_classify). */
#define RS_SCAN_ENT_NONE  0 /* hidden, excluded, gone, or a link that leads out */
#define RS_SCAN_ENT_FILE  1 /* a regular file, or a link to one inside the root */
#define RS_SCAN_ENT_DIR   2 /* a directory (not a link to one) */
#define RS_SCAN_ENT_OTHER 3 /* anything else: never listed */

/* End the scan's transaction: rolled back when the mass-deletion guard
 * (rs_scan_opts_t.max_deleted) holds its deletions - sc->err becomes
 * RS_SCAN_EMASSDEL - otherwise committed.  Returns sc->err. */
apr_status_t rs_scan_end(rs_scan_ctx_t *sc);

/* Start a scan's context: stats zeroed, the set of visited directories
 * in vpool (which lives as long as the scan). */
void rs_scan_ctx_init(rs_scan_ctx_t *sc, rs_db_t *st, const rs_scan_opts_t *o,
                      rs_scan_stats_t *stats, apr_pool_t *vpool);

/* Pass 2 and 3 of a directory: the expensive per-file work of jobs
 * (rs_scanfile_job_t, for entries of dir, open as dfd), possibly on
 * several threads, then the results - rows written, changes notified,
 * stats counted - by the calling thread only. */
void rs_scan_finish_jobs(rs_scan_ctx_t *sc, apr_pool_t *p, int dfd, const char *dir,
                         apr_array_header_t *jobs);

/* Classify entry `name` of the directory open as dfd (relpath: its path
 * from the root) as one of RS_SCAN_ENT_*.  For RS_SCAN_ENT_FILE, *sb
 * describes the file (a link's target) and *target is the resolved target
 * of a link (NULL for a plain file), from p. */
int rs_scan_classify(rs_scan_ctx_t *sc, apr_pool_t *p, int dfd, const char *name,
                     const char *relpath, struct stat *sb, const char **target);

/* 1 if the caller would serve directory relpath (the check callback; no
 * callback: everything is served), else 0. */
int rs_scan_dir_checked(rs_scan_ctx_t *sc, apr_pool_t *p, const char *relpath);

/* A regular file seen (sb, target: as from rs_scan_classify; row: its
 * stored row or NULL): count it, and queue the per-file work in jobs
 * unless its stored row still describes it.  name and relpath must live
 * as long as jobs. */
void rs_scan_file_seen(rs_scan_ctx_t *sc, apr_array_header_t *jobs, const char *name,
                       const char *relpath, const char *target, const struct stat *sb,
                       const rs_item_t *row);

/* Reconcile directory dir (open as dfd) and everything below it: read its
 * entries, classify them against its stored rows, do the per-file work,
 * descend, then drop the rows of what is gone.  Every directory walked is
 * noted in sc->visited; its own pools come from parent and are gone when
 * it returns. */
void rs_scan_walk(rs_scan_ctx_t *sc, int dfd, const char *dir, apr_pool_t *parent);

/* Drop the rows directly in directory d, reporting listed ones as
 * deleted. */
void rs_scan_drop_dir_rows(rs_scan_ctx_t *sc, apr_pool_t *p, const char *d);

/* Drop the rows in directories strictly below dir ("" = the whole set)
 * that the walk did not visit (sc->visited): the directory is gone or no
 * longer served. */
void rs_scan_drop_unvisited(rs_scan_ctx_t *sc, apr_pool_t *p, const char *dir);

#endif
