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
    rs_entry_opts_t entry;        /* URL base, hashes, 1.0 mode (spec10) */
    const char *capability_url;   /* rel="up" */
    const char *index_url;        /* changelist.xml (rel="index") */
    const char *list_url_prefix;  /* lists are <prefix><id>.xml */
} rs_changelist_opts_t;

/* Where a list's records come from: records of o->set with
 * next <= seq <= last, at most limit, in sequence order, into *out (an
 * array of rs_record_t allocated from p).  Fewer than limit: no more. */
typedef apr_status_t rs_changelist_source_fn(void *baton, apr_pool_t *p, apr_int64_t next,
                                             apr_int64_t last, int limit,
                                             apr_array_header_t **out);

/* Write the Change List cl: records cl->first_seq .. cl->last_seq, read
 * from the journal.  The open list (cl->until == 0) has no `until`. */
apr_status_t rs_changelist_write(rs_journal_t *j, const rs_changelist_opts_t *o,
                                 const rs_changelist_t *cl, rs_xml_t *w, apr_pool_t *p);

/* The same with records from any source.  A record's entry is its `xml`
 * when it has one (rendered before by rs_entry_render with o->entry, e.g.
 * in the ring), and is rendered otherwise, so a list is the same bytes
 * whichever source its records came from. */
apr_status_t rs_changelist_write_from(rs_changelist_source_fn *src, void *baton,
                                      const rs_changelist_opts_t *o,
                                      const rs_changelist_t *cl, rs_xml_t *w, apr_pool_t *p);

/* Write the Change List Index: closed lists (array of rs_changelist_t),
 * then the open one. */
apr_status_t rs_changelist_write_index(const rs_changelist_opts_t *o,
                                       const apr_array_header_t *closed,
                                       const rs_changelist_t *open, rs_xml_t *w,
                                       apr_pool_t *p);

#endif
