/* SPDX-License-Identifier: Apache-2.0 */
/* rs_entry.h - the one renderer of <url> entries.
 *
 * Every document that lists resources - Resource Lists (rs_snapshot) and
 * Change Lists (rs_changelist) today, manifests and notification payloads
 * next - writes its entries here, so that an entry has the same bytes
 * whichever document, and whichever source (the store, the ring), it
 * comes from.  An entry is described by an rs_record_t:
 *   change == 0       a resource (Resource List): <loc>, <lastmod> = the
 *                     resource's modification time, rs:md hash, length,
 *                     type, encoding (the Content-Type and
 *                     Content-Encoding a GET returns; each left out
 *                     when there is none);
 *   RS_CHANGE_*       a change (Change List): ResourceSync 1.1 has
 *                     <lastmod> = the resource's modification time and
 *                     rs:md change, datetime (when the change was
 *                     observed); 1.0 mode has <lastmod> = the change time
 *                     and no datetime.  A deletion has no hash, length,
 *                     type or encoding.
 * The location is the options' URL base followed by the record's dir and
 * name, percent-encoded here (rs_uri) and nowhere else.
 * After rs:md come the record's rs:ln relations (rs_links.h, ResourceSync
 * 1.1 section 14), one element each: first those decoded from the
 * record's encoded links (forward links in rule order, then inverse
 * links), then the set's mirrors in the order given (the options' rules:
 * rel="duplicate", href = the mirror's prefix followed by the path as
 * <loc> has it, pri; made here, never stored).  Attributes in the order
 * rel, href, pri, modified, hash, length, type, encoding (absent values
 * left out; hash lists the options' hashes as rs:md does, modified is
 * formatted as lastmod).  A deletion carries none; stored links that do
 * not decode are left out.
 */
#ifndef RS_ENTRY_H
#define RS_ENTRY_H

#include <apr_pools.h>
#include "rs_journal.h"
#include "rs_inventory.h"
#include "rs_links.h"
#include "rs_xml.h"

/* How the entries of one resource set are written; document-level
 * options (rs_snapshot_opts_t, rs_changelist_opts_t) embed it. */
typedef struct rs_entry_opts_t {
    const char *url_base;    /* absolute URL of the set's root, ends with "/" */
    unsigned hashes;         /* RS_HASH_* mask: which hashes to list */
    int spec10;              /* 1: ResourceSync 1.0 change entries */
    const rs_links_t *links; /* the set's rules: their mirrors are written
                              * in every entry but a deletion; NULL: none */
} rs_entry_opts_t;

/* The resource entry of an inventory row: fills *r (change 0) with
 * pointers into it (it must outlive r). */
void rs_entry_from_item(rs_record_t *r, const rs_item_t *it);

/* Write the entry of r (see above) to w; temporary memory from p.
 * Returns 0 on success, -1 when the writer failed. */
int rs_entry_write(rs_xml_t *w, apr_pool_t *p, const rs_entry_opts_t *o, const rs_record_t *r);

/* Write the <rs:ln> elements of an entry opened on w (see above): those
 * of links (encoded, rs_links.h; NULL or "": none), hashes by the mask
 * hashes, then the mirrors of rules (NULL: none), whose hrefs end with
 * epath, the entry's path percent-encoded (rs_uri: its <loc> after the
 * URL base).  For every document that lists resources, Resource and
 * Change Dump manifests included, so that their links are the same
 * bytes.  Temporary memory from p.  Returns 0 (also for links that do
 * not decode: they are left out), -1 when the writer failed. */
int rs_entry_links_write(rs_xml_t *w, apr_pool_t *p, unsigned hashes, const rs_links_t *rules,
                         const char *links, const char *epath);

/* An upper bound of the bytes the <rs:ln> elements of an entry add to it
 * (see rs_entry_links_write; path: its set-relative path, not encoded):
 * for the limits that measure entries without rendering them.  Exact
 * for values that need no escaping. */
apr_int64_t rs_entry_links_len(unsigned hashes, const rs_links_t *rules, const char *links,
                               const char *path);

/* Renders entries once: the bytes of an entry exactly as they stand in a
 * <urlset> document written with options o (which must outlive the
 * renderer).  Rendered bytes travel with a record (rs_record_t.xml: the
 * ring keeps them) and are written as they are by rs_xml_raw, so that no
 * reader renders the entry again. */
typedef struct rs_entry_renderer_t rs_entry_renderer_t;

/* A renderer allocated from p (NULL on failure). */
rs_entry_renderer_t *rs_entry_renderer_create(apr_pool_t *p, const rs_entry_opts_t *o);

/* The entry bytes of r, in a buffer valid until the next call on rr;
 * NULL on failure. */
const char *rs_entry_render(rs_entry_renderer_t *rr, const rs_record_t *r, apr_size_t *len);

#endif
