/* SPDX-License-Identifier: Apache-2.0 */
/* rs_snapshot.h - Resource List documents generated from the inventory.
 *
 * A snapshot is the complete Resource List of a set at one moment: either
 * one <urlset> (at most max_entries entries) or a Resource List Index plus
 * its parts.  The watcher writes each snapshot once, into a fresh
 * directory, after a scan that changed the inventory; children then serve
 * the files as they are (sendfile, Range, strong ETag).  Snapshots are
 * immutable and numbered (the generation); the URL of every part carries
 * its generation, so a destination that reads an index and then its parts
 * while the tree changes reads one consistent snapshot, never a mixture of
 * two partitions.
 *
 * With an index, parts are cut by content (rs_partition at the interval
 * rs_snapdoc_interval; max_entries entries and the bytes a document may
 * take, rs_snapdoc_entry_budget, as the limits) and a new generation
 * keeps every part of the previous one that no change touched
 * (rs_snapparts.h): same file (a hard link), same URL (<prefix><g>-<n>.xml
 * of the generation g that wrote it), same `at`.  A list whose entries
 * would pass the bytes of one document is an index too, whatever its
 * number of entries.
 *
 * Limits (ResourceSync 1.1 section 7: 50,000 items and 50 MB per
 * document, RS_XML_MAX_*): every list and part holds at most max_entries
 * entries and RS_XML_MAX_BYTES bytes; the index names at most
 * rs_snapdoc_index_cap parts.  When content-defined cuts give more
 * parts, the snapshot is written again with every part full (no
 * content-defined cut); when even that gives more (more resources than
 * max_entries parts of max_entries hold), the index names more than
 * max_entries parts, up to what it may at the community limits (the
 * glue warns), and beyond that the write fails with EFBIG.
 *
 * Files in the snapshot directory:
 *   resourcelist.xml   the Resource List, or the Resource List Index
 *   part-<n>.xml       the parts written in this generation (n: their
 *                      place in the index)
 *   part-<g>-<n>.xml   a part of generation g kept (hard link)
 *   parts              the part table (rs_snapparts.h), with an index
 *   info               "gen at completed entries parts bytes" (written last;
 *                      files of older versions end after parts)
 */
#ifndef RS_SNAPSHOT_H
#define RS_SNAPSHOT_H

#include <apr_pools.h>
#include <apr_time.h>
#include "rs_entry.h"
#include "rs_inventory.h"
#include "rs_journal.h"

typedef struct rs_snapshot_opts_t {
    const char *set;
    rs_entry_opts_t entry;       /* URL base, hashes (spec10 is not used) */
    const char *capability_url;  /* rel="up" */
    const char *list_url;        /* URL of resourcelist.xml (rel="index") */
    const char *part_url_prefix; /* parts are <prefix><gen>-<n>.xml */
    apr_int64_t max_entries;     /* entries per document */
    apr_int64_t max_bytes;       /* bytes per document; 0: RS_XML_MAX_BYTES */
    apr_time_t at;               /* start of the scan the inventory reflects */
    apr_time_t completed;        /* end of that scan */
    const rs_logger_t *log;
    /* Stable parts (rs_snapparts.h).  ident: the history and options the
     * snapshot is written under (parts are only kept under the same);
     * seq: the journal's last sequence it reflects; prev_dir, prev_gen:
     * the generation to build on (NULL: none, every part is written);
     * journal: read for the paths changed since prev_dir's sequence. */
    const char *ident;
    apr_int64_t seq;
    const char *prev_dir;
    apr_uint64_t prev_gen;
    rs_journal_t *journal;
} rs_snapshot_opts_t;

typedef struct rs_snapshot_info_t {
    apr_uint64_t gen;
    apr_time_t at;
    apr_time_t completed;
    apr_int64_t entries;
    int parts;         /* 0: single list, else index + parts */
    apr_int64_t bytes; /* sum of the listed files' sizes; -1: unknown
                                   * (an info file without it) */
    /* Of the writing only (not in the info file): parts kept from the
     * previous generation, and the number of the first part written in
     * this one (0: none). */
    int reused;
    int first_new;
} rs_snapshot_info_t;

/* Write generation gen of a set's snapshot into the existing directory
 * dir, building on o->prev_dir when it can.  Memory is bounded by one
 * page of rows, the part table and the changed paths (at most 100 000,
 * else every part is written). */
apr_status_t rs_snapshot_write(rs_db_t *st, const rs_snapshot_opts_t *o, const char *dir,
                               apr_uint64_t gen, apr_pool_t *p, rs_snapshot_info_t *info);


#endif
