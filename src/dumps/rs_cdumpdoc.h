/* SPDX-License-Identifier: Apache-2.0 */
/* rs_cdumpdoc.h - changedump.xml: the Change Dump, or a Change Dump Index
 * and its parts, over the packages rs_cdump built.  Files in the set's
 * Change Dump directory (rs_statedir):
 *
 *   changedump.xml          the Change Dump (<urlset>, capability
 *                           changedump): one <url> per complete package
 *                           (its .sum), oldest first; when they do not fit
 *                           in one document (o->list_max entries, or fewer
 *                           when that many could pass 50 MB) a Change Dump
 *                           Index (<sitemapindex>) instead, one <sitemap>
 *                           per part, and
 *   <history>-part-<n>.xml  part n of the index: a Change Dump of the
 *                           packages of list ids (n-1)*k+1 .. n*k, k the
 *                           packages one document may list (so a package
 *                           keeps its part whatever retention or a hole
 *                           drops before it), with rs:ln index to
 *                           changedump.xml, and until on every part but
 *                           the newest.
 *
 * Lifecycle: every write renders everything again from the lists and
 * their .sum files (a withdrawal renames a package, retention drops the
 * oldest): the parts first, each by rename of a synced temporary file
 * (rs_file_replace), then changedump.xml, then the part files it no
 * longer names are removed -- so a reader that follows the index finds
 * every part it names.  rs_cdump_prune leaves the parts alone.
 */
#ifndef RS_CDUMPDOC_H
#define RS_CDUMPDOC_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "rs_cdump.h"

/* The most bytes of one Change Dump document: the Sitemap protocol's
 * 50 MB (52,428,800 bytes) per document, which ResourceSync adopts. */
#define RS_CDUMPDOC_MAX_BYTES (50 * 1024 * 1024)

/* What rs_cdumpdoc_write wrote. */
typedef struct rs_cdumpdoc_t {
    apr_int64_t bytes;           /* the total length of the listed packages */
    int packages;                /* listed */
    apr_time_t from;             /* the Change Dump's from */
    apr_int64_t gap;             /* the newest closed list without a complete
                                  * package (0: none): the coverage starts
                                  * at its until */
    apr_int64_t first_id;        /* the first listed package's list (0: none) */
    apr_int64_t per_part;        /* packages one document may list */
    int parts;                   /* of the Change Dump Index, 0: no index */
    apr_array_header_t *created; /* numbers (int) of the parts new in this write */
} rs_cdumpdoc_t;

/* Write changedump.xml for the retained closed lists `closed` (array of
 * rs_changelist_t, oldest first).  It never claims an interval it does
 * not carry: it lists the complete packages of the lists after the
 * newest one that has none (lost captures: .skip; withdrawn and not
 * built again yet), oldest first, and `from` is the first listed
 * package's from; with none listed, that list's until, or open_from
 * when every closed list has its package (there is none yet: coverage
 * starts with the open list).  No until (packages are still added).
 * When they are more than one document may list (o->list_max entries,
 * or fewer when that many could pass o->max_bytes, 0: the 50 MB),
 * changedump.xml is a Change Dump Index of parts instead (see the top;
 * not without o->part_url_prefix and o->index_url).  *out gets what was
 * written (out->created from p). */
apr_status_t rs_cdumpdoc_write(const rs_cdump_opts_t *o, const apr_array_header_t *closed,
                               apr_time_t open_from, apr_pool_t *p, rs_cdumpdoc_t *out);

/* The part of the index d that lists the package of list id (0: d has no
 * index). */
int rs_cdumpdoc_part_of(const rs_cdumpdoc_t *d, apr_int64_t id);

#endif
