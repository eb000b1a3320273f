/* SPDX-License-Identifier: Apache-2.0 */
/* rs_followcdump.h - Change Dumps on the nodes that do not write a set:
 * the writer's Change Dump directory through the store.
 *
 * A set's Change Dump is one flat directory (changedumps/<set>/, see
 * rs_cdump.h): changedump.xml, the index parts <history>-part-<n>.xml,
 * and per closed Change List its package, manifest copy, .sum (and the
 * markers .skip, .rev).  Packages never change once written (a withdrawn
 * one is written again under a new name), so most of the directory stays
 * from one job to the next.
 *
 * With a store several nodes share, the writer stores the directory's
 * files after each Change Dump job that changed it, with rs_blob (kind
 * RS_FOLLOWCDUMP_KIND), as generation cdump-gen:<set> + 1 (a meta key the
 * store keeps), in one transaction that begins with the set's fence: the
 * new generation's rows, the number, and the drop of every earlier
 * generation.  A file that the previous generation held under the same
 * name with the same size and mtime is stored as a reference to that
 * row's source: only new files (a new package, the rewritten
 * changedump.xml and parts) cost bytes; the chunks of the files that
 * left go with the earlier generation (rs_blob_drop).  A package is
 * streamed in RS_BLOB_CHUNK pieces, the fence renewed as it goes.
 *
 * A follower replays the stored generation into its own directory, so
 * that its children serve the writer's bytes under the same names with
 * the same mtimes, hence the same ETags and Last-Modified:
 *
 *   1. every file other than changedump.xml and the index parts that is
 *      not already there with the row's size and mtime, written by
 *      rs_file_replace (temporary file, fsync, rename, directory fsync)
 *      with the row's mtime: a package appears complete or not at all;
 *   2. the index parts, then changedump.xml, the same way: what they list
 *      is on disk before they list it;
 *   3. the regular files that the generation does not hold removed (lists
 *      no longer retained, this node's own earlier writing): nothing
 *      lists them any more.
 *
 * A file already there with the row's size and mtime is left untouched
 * (the same file: the same ETag).  Races: a writer that stores a newer
 * generation while a follower reads the older one drops the chunks of
 * the files that left: the follower's copy of such a file fails
 * (APR_EINCOMPLETE) before its rename, steps 2 and 3 are not reached,
 * and the next look replays the newer generation.  Files starting with
 * '.' are never stored nor removed (rs_cdump's temporaries).
 */
#ifndef RS_FOLLOWCDUMP_H
#define RS_FOLLOWCDUMP_H

#include <apr_pools.h>
#include "rs_blob.h"
#include "rs_db.h"

/* rs_blob's kind of Change Dump directories. */
#define RS_FOLLOWCDUMP_KIND "cdump"

/* The generation of set's Change Dump the store holds (0: none). */
apr_status_t rs_followcdump_gen(rs_db_t *db, apr_pool_t *p, const char *set, apr_uint64_t *gen);

/* Writer: store the regular files of dir as the next generation of set
 * (*gen, may be NULL), in a transaction of its own that begins with the
 * set's fence and drops every earlier generation.  RS_LEASE_LOST
 * (nothing written) when another node writes the set now; another
 * failure's cause otherwise (rolled back: the store keeps what it had).
 * st (may be NULL): what was stored. */
apr_status_t rs_followcdump_store(rs_db_t *db, apr_pool_t *p, const char *set, const char *dir,
                                  apr_uint64_t *gen, rs_blob_stats_t *st);

/* Follower: make dir (created if missing) generation gen of set as
 * described above.  APR_ENOENT when the store holds no file of gen;
 * another failure's cause otherwise (dir then holds some of gen's new
 * files besides what it had).  st (may be NULL): files of gen, those
 * left untouched (refs) and the bytes copied; *removed (may be NULL):
 * the files removed. */
apr_status_t rs_followcdump_copy(rs_db_t *db, apr_pool_t *p, const char *set, const char *dir,
                                 apr_uint64_t gen, rs_blob_stats_t *st, int *removed);

#endif
