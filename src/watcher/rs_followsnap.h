/* SPDX-License-Identifier: Apache-2.0 */
/* rs_followsnap.h - Resource List snapshots on the nodes that do not
 * write a set: the writer's generation directories through the store.
 *
 * With a store several nodes share, the writer (the node holding the
 * set's lease) puts every file of each generation it publishes
 * (snapshots/<set>/<gen>/: resourcelist.xml, part-<n>.xml, the kept
 * parts part-<g>-<n>.xml, parts, info) into the store with rs_blob (kind
 * "snap"), in the fenced transaction that records snapshot-gen:<set>; a
 * follower copies the current generation into its own state directory
 * and publishes it as its own, so its children serve the writer's bytes
 * under the same URLs with the same mtimes, hence the same ETags.
 *
 * A kept part is stored as a reference to the part-<n>.xml of the
 * generation g that wrote it (rs_snapparts' naming), so a generation
 * costs the store the bytes of its new files only; a follower links its
 * own copy of the part when it has one (from that generation, or the
 * same name in the generation it serves), else copies the bytes.
 *
 * Lifecycle of a followed generation: written into tmp-<gen>/ (the
 * writer's protocol, rs_generation), each file with the writer's mtime
 * and fsynced, the directory fsynced, renamed to <gen>/, the parent
 * fsynced; then published by the caller from its info file.  A failure
 * removes tmp-<gen>/ and leaves the generation in service alone.
 */
#ifndef RS_FOLLOWSNAP_H
#define RS_FOLLOWSNAP_H

#include <apr_pools.h>
#include "rs_blob.h"
#include "rs_db.h"
#include "rs_snapshot.h"

/* rs_blob's kind of Resource List snapshots. */
#define RS_FOLLOWSNAP_KIND "snap"

/* Writer: store the files of generation gen (published at gendir) for
 * set, inside the caller's fenced transaction.  st (may be NULL): what
 * was stored. */
apr_status_t rs_followsnap_store(rs_db_t *db, apr_pool_t *p, const char *set, apr_uint64_t gen,
                                 const char *gendir, rs_blob_stats_t *st);

/* Writer, after pruning its directories: every stored generation other
 * than current whose directory below snapset is gone has its rows
 * dropped (rs_blob_drop), each in a transaction of its own that begins
 * with the set's fence.  Returns the first failure (RS_LEASE_LOST: another
 * node writes the set now; nothing dropped); *dropped (may be NULL) gets
 * how many generations went. */
apr_status_t rs_followsnap_prune(rs_db_t *db, apr_pool_t *p, const char *set, const char *snapset,
                                 apr_uint64_t current, int *dropped);

/* Follower: make generation gen of set, whose files the store holds,
 * this node's: when snapset/<gen>/ is already complete (its info names
 * gen), nothing is copied; else it is written as described above, have
 * (0: none) being the generation this node serves, whose kept parts are
 * linked.  *info gets the generation's info file.  APR_ENOENT when the
 * store holds no file of gen (a number raised without a snapshot, or a
 * writer whose store is SQLite's); another failure's cause otherwise,
 * tmp-<gen>/ then removed.  st (may be NULL): what was copied. */
apr_status_t rs_followsnap_copy(rs_db_t *db, apr_pool_t *p, const char *set, const char *snapset,
                                apr_uint64_t gen, apr_uint64_t have, rs_snapshot_info_t *info,
                                rs_blob_stats_t *st);

/* How rs_followsnap_gen follows one kind of generation directory. */
typedef struct rs_followsnap_how_t {
    const char *kind; /* rs_blob's */
    const char *dir;  /* the generations' directory: <dir>/<gen>/ */
    const char *mark; /* the file whose size and mtime tell a copy complete */
    /* A directory's files are the generation's (may be NULL: they are):
     * asked of a complete copy found in place and of a new one before it
     * is renamed into place; a failure's cause refuses it. */
    apr_status_t (*check)(void *baton, apr_pool_t *p, const char *gendir);
    rs_blob_local_fn *local; /* this node's copy of a kept file (may be NULL) */
    void *baton;             /* check's and local's */
} rs_followsnap_how_t;

/* Follower, any kind of generation directory: make generation gen of
 * set, whose files the store holds, this node's, by the lifecycle above
 * (nothing copied when <dir>/<gen>/ is complete already: its mark the
 * store's, check content).  APR_ENOENT when the store holds no file of
 * gen; another failure's cause otherwise, tmp-<gen>/ then removed. */
apr_status_t rs_followsnap_gen(rs_db_t *db, apr_pool_t *p, const char *set, apr_uint64_t gen,
                               const rs_followsnap_how_t *how, rs_blob_stats_t *st);

#endif
