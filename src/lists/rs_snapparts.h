/* SPDX-License-Identifier: Apache-2.0 */
/* rs_snapparts.h - the stable parts of a Resource List Index.
 *
 * A snapshot with an index cuts its entries into parts with rs_partition
 * (content-defined cuts, ResourceSyncMaxEntries as the limit), so one
 * change moves one or two part boundaries, not every later one.  Each
 * generation directory records its parts in the file `parts` (written
 * before `info`): the journal sequence and the identity (history and
 * options) the snapshot was written under, then one line per part in
 * index order: the generation and number it was written under, its `at`
 * and `completed`, its entries, their bytes and its last entry.
 *
 * Lifecycle of a part: written once, as part-<n>.xml of generation g;
 * every later generation whose index still lists it holds a hard link
 * part-<g>-<n>.xml to the same inode (same bytes, same ETag: inode, size
 * and mtime), so pruning an old generation never removes a part the
 * current index names, and a superseded index's parts stay as long as
 * its directory does.  A part is reused only when no journal record
 * since the previous snapshot's sequence names a path in its range, and
 * no path in it was relinked since (rs_journal_relink).
 */
#ifndef RS_SNAPPARTS_H
#define RS_SNAPPARTS_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>
#include "rs_journal.h"

/* One part of an index. */
typedef struct rs_snappart_t {
    apr_uint64_t gen;         /* the generation it was written in */
    int n;                    /* its number there */
    apr_time_t at, completed; /* of that generation (in its header) */
    apr_int64_t entries, bytes;
    const char *last_dir; /* its last entry, in listing order */
    const char *last_name;
} rs_snappart_t;

/* The part table of a generation. */
typedef struct rs_snapparts_t {
    apr_int64_t seq;           /* journal sequence the snapshot reflects */
    apr_time_t at;             /* its `at` */
    const char *ident;         /* history and options it was written under */
    apr_array_header_t *parts; /* rs_snappart_t, in index order */
} rs_snapparts_t;

/* A changed path (dir, name), in listing order. */
typedef struct rs_snapkey_t {
    const char *dir, *name;
} rs_snapkey_t;

/* Listing order of (dir, name): byte order of dir, then of name (the
 * inventory's ORDER BY dir, name). */
int rs_snapparts_cmp(const char *adir, const char *aname, const char *bdir, const char *bname);

/* Sync every part of parts (rs_snappart_t) written in generation gen
 * as gendir/part-<n>.xml, closed with rs_file_finish_later; the others
 * are links to parts synced by their own generation.  The first failure
 * is returned. */
apr_status_t rs_snapparts_sync(apr_pool_t *p, const char *gendir, const apr_array_header_t *parts,
                               apr_uint64_t gen);

/* The identity a part table is written under: the writer's (history and
 * options; NULL: none) and the cut interval. */
const char *rs_snapparts_ident(apr_pool_t *p, const char *ident, apr_uint64_t interval);

/* The cut interval of a part table written under identity prev, when it
 * was written under identity ident (0: it was not).  A table of a version
 * that did not record the interval used rs_partition_interval(max). */
apr_uint64_t rs_snapparts_interval(const char *ident, const char *prev, apr_int64_t max);

/* Write the part table t into gendir/parts (finished on disk). */
apr_status_t rs_snapparts_write(apr_pool_t *p, const char *gendir, const rs_snapparts_t *t);

/* Read gendir/parts.  APR_ENOENT when missing (a generation without an
 * index, or written before parts were recorded), APR_EINVAL when
 * malformed. */
apr_status_t rs_snapparts_read(apr_pool_t *p, const char *gendir, rs_snapparts_t *t);

/* The paths of set named by journal records after seq `after` up to
 * `upto`, and those relinked at `after` or later (rs_journal_relink:
 * their links changed without a record), sorted in listing order without
 * repeats (array of
 * rs_snapkey_t in *out).  APR_ENOSPC when there are more than max (the
 * caller then writes every part), APR_ENOENT when the journal may no
 * longer hold every record after `after` (retention dropped lists that
 * began after at, the previous snapshot's `at`). */
apr_status_t rs_snapparts_changes(rs_journal_t *j, apr_pool_t *p, const char *set,
                                  apr_int64_t after, apr_int64_t upto, apr_time_t at, int max,
                                  apr_array_header_t **out);

/* The file of part (gen, n) for a reader whose current generation is
 * cur, in the set's generations directory snapset: part-<n>.xml of cur
 * when gen is cur; else the link part-<gen>-<n>.xml in cur, the original
 * in generation gen, or a link in a generation between them still on
 * disk.  NULL when none exists. */
const char *rs_snapparts_find(apr_pool_t *p, const char *snapset, apr_uint64_t cur,
                              apr_uint64_t gen, int n);

#endif
