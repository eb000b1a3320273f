/* SPDX-License-Identifier: Apache-2.0 */
/* rs_snapdoc.h - the documents of a Resource List snapshot around its
 * entries, and the limits they keep.
 *
 * The head of a Resource List or part, the Resource List Index, and what
 * the community limits leave for them (ResourceSync 1.1 section 7: "the
 * limit is 50,000 items per document and a document size of 50 MB",
 * RS_XML_MAX_*): the bytes a part's entries may take, the parts an index
 * may name, and the cut interval that keeps the parts of a set within
 * that.  rs_snapshot writes the documents with them.  Engine unit: APR,
 * libxml2 through rs_xml.
 */
#ifndef RS_SNAPDOC_H
#define RS_SNAPDOC_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "rs_snapparts.h"
#include "rs_snapshot.h"
#include "rs_xml.h"

/* The head of a Resource List or part into w: the root, rs:ln up
 * [, rs:ln index to o->list_url], rs:md with o->at and o->completed.
 * Returns -1 when the writer failed. */
int rs_snapdoc_head(rs_xml_t *w, const rs_snapshot_opts_t *o, int with_index);

/* The Resource List Index of parts (rs_snappart_t) into w, whole: one
 * entry per part, each with the `at` and `completed` of the generation
 * that wrote it (ep: cleared per entry).  Returns -1 when the writer
 * failed. */
int rs_snapdoc_index(const rs_snapshot_opts_t *o, rs_xml_t *w, const apr_array_header_t *parts,
                     apr_pool_t *ep);

/* The bytes a document of o may take: o->max_bytes, RS_XML_MAX_BYTES
 * when 0 or more. */
apr_int64_t rs_snapdoc_max_bytes(const rs_snapshot_opts_t *o);

/* The cut interval of parts for a set of total listed resources: the
 * interval rs_partition_interval(max_entries) gives (parts average about
 * that many entries), doubled while total resources would make more than
 * max_parts / 2 parts of that size (so the index is expected to stay at
 * half its limit at most) and it is below max_entries. */
apr_uint64_t rs_snapdoc_interval(apr_int64_t max_entries, apr_int64_t max_parts, apr_int64_t total);

/* The bytes the entries of one list or part with options o may take:
 * o->max_bytes (RS_XML_MAX_BYTES when 0, never more) less its head and tail (with the longest times); 0
 * when they cannot be rendered. */
apr_int64_t rs_snapdoc_entry_budget(const rs_snapshot_opts_t *o, apr_pool_t *p);

/* The parts the Resource List Index with options o may name: max_entries
 * (RS_XML_MAX_ENTRIES when 0, never more), fewer when so many entries of
 * the longest part URLs and times would pass o->max_bytes (as above). */
apr_int64_t rs_snapdoc_index_cap(const rs_snapshot_opts_t *o, apr_pool_t *p);

#endif
