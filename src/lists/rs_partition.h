/* SPDX-License-Identifier: Apache-2.0 */
/* rs_partition.h - stable partitioning of a sorted listing into packages.
 *
 * A dump's resources, in the listing's sorted order, are cut into packages
 * of at most max_entries entries and max_bytes bytes; a file larger than
 * max_bytes gets a package of its own.  Where the limits allow, boundaries
 * are content-defined: a package ends after a path whose hash (FNV-1a,
 * 64 bit, of the path bytes) is 0 modulo the cut interval K, a power of
 * two.  After such a cut the partitioning no longer depends on anything
 * before it, so one new, removed or changed file changes the package that
 * holds it (two when it is itself a cut point) and the packages after it
 * stay the same, up to the next content-defined cut at the latest.  Limit
 * cuts do shift later boundaries until that next content-defined cut:
 * choose K well below max_entries (rs_partition_interval) so that limit
 * cuts are rare.
 *
 * Streaming: the caller feeds entries one by one, in order, and starts a
 * new package where rs_partition_add says so; memory is constant.
 */
#ifndef RS_PARTITION_H
#define RS_PARTITION_H

#include <apr.h>

#define RS_PARTITION_CUT_BEFORE 0x1 /* the entry starts a new package */
#define RS_PARTITION_CUT_AFTER  0x2 /* the package ends with the entry */

typedef struct rs_partition_t {
    apr_int64_t max_entries, max_bytes;
    apr_uint64_t interval;      /* K, a power of two */
    apr_int64_t entries, bytes; /* of the package being filled */
    apr_int64_t max_doc, doc;   /* a bound of its manifest's bytes (0: none) */
} rs_partition_t;

/* The cut interval for a limit of max_entries: the largest power of two
 * at most max_entries / 4 (at least 1), so packages average a quarter of
 * the limit and limit cuts are rare. */
apr_uint64_t rs_partition_interval(apr_int64_t max_entries);

/* Start a partitioning (max_entries >= 1, max_bytes >= 1; interval a power
 * of two, 0: rs_partition_interval(max_entries)). */
void rs_partition_init(rs_partition_t *pt, apr_int64_t max_entries, apr_int64_t max_bytes,
                       apr_uint64_t interval);

/* The next entry of the listing (path bytes of len, its size): returns a
 * mask of RS_PARTITION_CUT_*.  CUT_BEFORE is never set on the first entry. */
unsigned rs_partition_add(rs_partition_t *pt, const char *path, apr_size_t len, apr_int64_t size);

/* Also cut a package before the manifest bytes that rs_partition_add_doc
 * is given pass max_doc (> 0; 0, the default, sets no such limit). */
void rs_partition_limit_doc(rs_partition_t *pt, apr_int64_t max_doc);

/* rs_partition_add for an entry whose manifest entry takes at most doc
 * bytes.  An entry over max_doc by itself gets a package of its own. */
unsigned rs_partition_add_doc(rs_partition_t *pt, const char *path, apr_size_t len,
                              apr_int64_t size, apr_int64_t doc);

/* FNV-1a 64 of len bytes (the boundary hash). */
apr_uint64_t rs_partition_hash(const char *path, apr_size_t len);

#endif
