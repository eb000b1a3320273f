/* SPDX-License-Identifier: Apache-2.0 */
/* rs_followdump.h - Resource Dumps on the nodes that do not write a set:
 * the writer's dump generations through the store.
 *
 * With a store several nodes share, the writer puts every file of each
 * dump generation it publishes (dumps/<set>/<gen>/: resourcedump.xml,
 * the index parts, each package's <key>.zip, <key>.xml and <key>.rec,
 * history) into the store with rs_blob (kind "dump"), in the fenced
 * transaction that records dump-gen:<set> (rs_followdump_record, from
 * the dump job's thread once the generation is written), so a reader
 * never sees a generation number without its files.  A follower
 * copies the newest generation into its own dump directory
 * (rs_followdump_copy, the lifecycle of rs_followsnap_gen: tmp-<gen>/,
 * each file with the writer's mtime and fsynced, renamed into place) and
 * publishes it as its own: the same bytes under the same URLs with the
 * same mtimes, hence the same ETags.
 *
 * Kept packages: a package a rebuild kept is a hard link to the file of
 * an earlier generation (rs_dumppkg_reuse), its name the same (a key
 * names its bytes).  The writer stores it as a reference to the source
 * of that earlier generation's row (found by the inode on disk, the row
 * by the store), so a generation costs the store the bytes of its new
 * packages only, even when they are hundreds of MB: rs_blob reads and
 * sends those in chunks of RS_BLOB_CHUNK, renewing the fence as it goes.
 * A follower links its own copy of a kept file (the same name in any of
 * its generations, with the row's size and mtime) and copies the rest.
 *
 * When the follower takes the set over, the generations it followed are
 * on its disk: its next dump keeps their packages by key.
 */
#ifndef RS_FOLLOWDUMP_H
#define RS_FOLLOWDUMP_H

#include <apr_pools.h>
#include "rs_blob.h"
#include "rs_db.h"

/* rs_blob's kind of Resource Dump generations. */
#define RS_FOLLOWDUMP_KIND "dump"

/* The newest dump generation the store knows for set (0: none). */
apr_uint64_t rs_followdump_stored_gen(rs_db_t *db, apr_pool_t *p, const char *set);

/* Writer: record generation gen of set, of the dump directory dumpset,
 * whose files are in dir (its tmp-<gen>/ before the rename, or <gen>/):
 * its number (dump-gen:<set>) and, on a store several nodes share (not
 * rs_db_one_node), every file of dir, in one transaction that begins
 * with the set's fence; a kept package is found by its inode in
 * dumpset's published generations.  Returns its outcome (RS_LEASE_LOST:
 * another node writes the set now, nothing recorded).  st (may be
 * NULL): what was stored. */
apr_status_t rs_followdump_record(rs_db_t *db, apr_pool_t *p, const char *set, const char *dumpset,
                                  const char *dir, apr_uint64_t gen, rs_blob_stats_t *st);

/* Writer, after pruning its directories: the stored generations other
 * than current whose directory is gone are dropped (rs_blob_prune). */
apr_status_t rs_followdump_prune(rs_db_t *db, apr_pool_t *p, const char *set, const char *dumpset,
                                 apr_uint64_t current, int *dropped);

/* Follower: make generation gen of set, whose files the store holds,
 * this node's in dumpset (nothing copied when dumpset/<gen>/ is complete
 * already: its resourcedump.xml the store's).  APR_ENOENT when the store
 * holds no file of gen (a number recorded by a writer whose store was
 * SQLite's, or before dumps were stored); another failure's cause
 * otherwise, tmp-<gen>/ then removed.  st (may be NULL): what was
 * copied. */
apr_status_t rs_followdump_copy(rs_db_t *db, apr_pool_t *p, const char *set, const char *dumpset,
                                apr_uint64_t gen, rs_blob_stats_t *st);

#endif
