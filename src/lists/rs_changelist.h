/* SPDX-License-Identifier: Apache-2.0 */
/* rs_changelist.h - Change List and Change List Index documents.
 *
 * Written from the journal (rs_journal) with bounded memory: records are
 * read a page at a time and streamed through an rs_xml writer.  The same
 * code writes closed lists into files (watcher) and streams the open
 * list and the index to clients (handler).
 *
 * Entries are written by rs_entry (ResourceSync 1.1 by default, 1.0 with
 * entry.spec10: see rs_entry.h); this file writes the documents around
 * them.
 */
#ifndef RS_CHANGELIST_H
#define RS_CHANGELIST_H

#include "rs_entry.h"
#include "rs_journal.h"
#include "rs_xml.h"

typedef struct rs_changelist_opts_t {
    const char *set;
    rs_entry_opts_t entry;       /* URL base, hashes, 1.0 mode (spec10) */
    const char *capability_url;  /* rel="up" */
    const char *index_url;       /* changelist.xml (rel="index") */
    const char *list_url_prefix; /* lists are <prefix><id>.xml */
} rs_changelist_opts_t;

/* Where a list's records come from: records of o->set with
 * next <= seq <= last, at most limit, in sequence order, into *out (an
 * array of rs_record_t allocated from p).  Fewer than limit: no more. */
typedef apr_status_t rs_changelist_source_fn(void *baton, apr_pool_t *p, apr_int64_t next,
                                             apr_int64_t last, int limit, apr_array_header_t **out);

/* Write the Change List cl: records cl->first_seq .. cl->last_seq, read
 * from the journal.  The open list (cl->until == 0) has no `until`. */
apr_status_t rs_changelist_write(rs_journal_t *j, const rs_changelist_opts_t *o,
                                 const rs_changelist_t *cl, rs_xml_t *w, apr_pool_t *p);

/* The same with records from any source.  A record's entry is its `xml`
 * when it has one (rendered before by rs_entry_render with o->entry, e.g.
 * in the ring), and is rendered otherwise, so a list is the same bytes
 * whichever source its records came from. */
apr_status_t rs_changelist_write_from(rs_changelist_source_fn *src, void *baton,
                                      const rs_changelist_opts_t *o, const rs_changelist_t *cl,
                                      rs_xml_t *w, apr_pool_t *p);

/* Receives an entry's bytes; returns 0 to go on, 1 when it needs no more
 * entries, -1 on error. */
typedef int rs_changelist_emit_fn(void *baton, const char *buf, apr_size_t len);

/* The entries of records first .. last from src, as they stand in the
 * list (the bytes rs_changelist_write_from inserts), each passed to emit
 * in sequence order until emit asks for no more.  APR_EGENERAL when emit
 * fails or an entry cannot be rendered; src's status when it fails. */
apr_status_t rs_changelist_write_entries(rs_changelist_source_fn *src, void *baton,
                                         const rs_changelist_opts_t *o, apr_int64_t first,
                                         apr_int64_t last, rs_changelist_emit_fn *emit,
                                         void *ebaton, apr_pool_t *p);

/* The frame of a Change List: its bytes before the first entry (head) and
 * after the last (tail).  A list is exactly head, then its entries' bytes
 * (rs_changelist_write_entries), then tail.
 *
 * Invariant relied on by byte ranges of the open list: the head of the
 * open list (cl->until == 0) depends only on cl->from and o (root and
 * namespaces, rs:ln up and index, rs:md with capability and from): no
 * count, no `at`, no sequence.  While the list stays open and grows, its
 * head never changes, its entries only gain entries at the end, and so
 * its bytes before the tail only grow.  Closing adds `until` to the head:
 * a closed list's bytes differ from the open one's from the head on. */
typedef struct rs_changelist_frame_t {
    const char *head, *tail;
    apr_size_t head_len, tail_len;
} rs_changelist_frame_t;

apr_status_t rs_changelist_frame(const rs_changelist_opts_t *o, const rs_changelist_t *cl,
                                 apr_pool_t *p, rs_changelist_frame_t *fr);

/* Write the Change List Index: closed lists (array of rs_changelist_t),
 * then the open one. */
apr_status_t rs_changelist_write_index(const rs_changelist_opts_t *o,
                                       const apr_array_header_t *closed,
                                       const rs_changelist_t *open, rs_xml_t *w, apr_pool_t *p);

#endif
