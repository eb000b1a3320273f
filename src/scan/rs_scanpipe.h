/* SPDX-License-Identifier: Apache-2.0 */
/* rs_scanpipe.h - the writer thread of a full scan, and the one way the
 * walk writes the store: every write of a walk goes through
 * rs_scanpipe_row / _access / _drop and every read of stored rows through
 * rs_scanpipe_load, queued for the writer thread while it runs, done at
 * once otherwise (see rs_scanpipe.c).
 */
#ifndef RS_SCANPIPE_H
#define RS_SCANPIPE_H

#include <apr_hash.h>
#include <apr_pools.h>
#include "rs_scanctx.h"

/* The writer thread of a full scan (rs_scanpipe.c; see there).  start:
 * after the scan's transaction is begun; on success sc->pipe is set,
 * otherwise the scan goes on without it.  finish: every queued write is
 * done, the writer's counts and first failure are merged into sc, and
 * sc->pipe is NULL again.  The others queue one operation or load rows,
 * and without a pipe (sc->pipe NULL) do it at once
 * (rs_scanwrite.h); load: the stored rows of directory dir (name ->
 * rs_item_t*), from p (none at all in a first scan, sc->fresh). */
apr_status_t rs_scanpipe_start(rs_scan_ctx_t *sc, apr_pool_t *p);
/* Whether a pipe may run for a scan called with the pool caller and the
 * store's connection opened in store: both pools' allocators must have
 * a mutex (see rs_scanpipe.c; two threads on an allocator without one
 * corrupt it).  rs_scan_set starts no pipe otherwise. */
int rs_scanpipe_allowed(apr_pool_t *caller, apr_pool_t *store);
void rs_scanpipe_finish(rs_scan_ctx_t *sc);
void rs_scanpipe_row(rs_scan_ctx_t *sc, const rs_item_t *it, const rs_item_t *old,
                     apr_int64_t hashed);
void rs_scanpipe_access(rs_scan_ctx_t *sc, const rs_item_t *it);
void rs_scanpipe_drop(rs_scan_ctx_t *sc, const char *dir, const char *name, const rs_item_t *row);
apr_status_t rs_scanpipe_load(rs_scan_ctx_t *sc, apr_pool_t *p, const char *dir, apr_hash_t **rows);

#endif
