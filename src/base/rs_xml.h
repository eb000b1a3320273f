/* SPDX-License-Identifier: Apache-2.0 */
/* rs_xml.h - streaming writer for Sitemap/ResourceSync documents.
 *
 * A thin layer over libxml2's xmlTextWriter that knows the two document
 * shapes (<urlset>, <sitemapindex>) and the ResourceSync extension elements
 * (<rs:md>, <rs:ln>).  Output goes to a sink callback in chunks, so memory
 * stays bounded whatever the number of entries: the watcher writes snapshot
 * files, the handler writes small documents into a buffer.
 */
#ifndef RS_XML_H
#define RS_XML_H

#include <apr_pools.h>
#include <apr_file_io.h>

#define RS_XML_NS_SITEMAP "http://www.sitemaps.org/schemas/sitemap/0.9"
#define RS_XML_NS_RS      "http://www.openarchives.org/rs/terms/"

/* The community limits every document keeps (ResourceSync 1.1 section 7:
 * "At time of publication of this specification, the limit is 50,000
 * items per document and a document size of 50 MB"; the Sitemap
 * protocol's 50 MB are 52,428,800 bytes, uncompressed).  Indexes count:
 * an index is a document too. */
#define RS_XML_MAX_ENTRIES 50000
#define RS_XML_MAX_BYTES   (50 * 1024 * 1024)

typedef struct rs_xml_t rs_xml_t;

/* Receives output; returns 0 on success, -1 on error. */
typedef int rs_xml_sink_fn(void *baton, const char *buf, apr_size_t len);

/* One attribute of <rs:md> or <rs:ln>; a NULL value is left out. */
typedef struct rs_xml_attr_t {
    const char *name;
    const char *value;
} rs_xml_attr_t;

/* Open a writer that sends output to sink.  Cleaned up with pool p. */
rs_xml_t *rs_xml_open(apr_pool_t *p, rs_xml_sink_fn *sink, void *baton);

/* An in-memory document (a dump manifest: it is written into the package
 * and copied beside it): rs_xml_membuf_sink appends to buf, which grows
 * by doubling in p.  Start from { p, NULL, 0, 0 }. */
typedef struct rs_xml_membuf_t {
    apr_pool_t *p;
    char *buf;
    apr_size_t len, cap;
} rs_xml_membuf_t;
int rs_xml_membuf_sink(void *baton, const char *data, apr_size_t len);

/* Open a writer on an (ideally buffered) APR file. */
rs_xml_t *rs_xml_open_file(apr_pool_t *p, apr_file_t *f);

/* Why a call of a writer on a file failed: the cause of its first failed
 * write (e.g. APR_ENOSPC), or APR_EGENERAL when no write failed (an
 * error of libxml2 itself, or a writer on another sink). */
apr_status_t rs_xml_error(const rs_xml_t *w);

/* Start the document: XML declaration and root element ("urlset" or
 * "sitemapindex") with both namespace declarations. */
int rs_xml_begin(rs_xml_t *w, const char *root);

/* <rs:ln rel=".." href=".." [extra attributes]/> */
int rs_xml_ln(rs_xml_t *w, const char *rel, const char *href, const rs_xml_attr_t *attrs,
              int nattrs);

/* <rs:md a=".." .../> with the given attributes (NULL values skipped). */
int rs_xml_md(rs_xml_t *w, const rs_xml_attr_t *attrs, int nattrs);

/* The bytes s takes once XML-escaped by the writer, in an attribute value
 * (attr) or in text. */
apr_int64_t rs_xml_escaped_len(const char *s, int attr);

/* The head of a capability document (ResourceSync 1.1 section 7): the
 * root element ("urlset" or "sitemapindex"), <rs:ln rel="up"> to up and
 * <rs:ln rel="index"> to index (each left out when NULL), then the
 * document's <rs:md capability=".." n1="v1" n2="v2"/> (a NULL value left
 * out), e.g. "at" and "completed", or "from" and "until". */
int rs_xml_head(rs_xml_t *w, const char *root, const char *up, const char *index,
                const char *capability, const char *n1, const char *v1, const char *n2,
                const char *v2);

/* Open <url> (or <sitemap> in an index) with <loc>, and <lastmod> when
 * lastmod is not NULL.  Follow with rs_xml_md / rs_xml_ln, then
 * rs_xml_entry_end. */
int rs_xml_entry_begin(rs_xml_t *w, const char *loc, const char *lastmod);
int rs_xml_entry_end(rs_xml_t *w);

/* Close the root element and flush.  Returns 0 on success. */
int rs_xml_end(rs_xml_t *w);

/* Bytes written as they are, e.g. an entry rendered before by a fragment
 * writer (below).  They must be the bytes this writer would have written
 * for the same entry; rs_xml_end then closes the document as usual. */
int rs_xml_raw(rs_xml_t *w, const char *buf, apr_size_t len);

/* A fragment writer renders entries of a `root` document one at a time,
 * exactly as they stand in such a document written by rs_xml_begin (same
 * indentation, same escaping): after rs_xml_fragment_begin, every entry
 * (rs_xml_entry_begin .. rs_xml_entry_end) followed by rs_xml_flush sends
 * exactly that entry's bytes to the sink.  The writer is primed with one
 * entry whose output goes to the sink before rs_xml_fragment_begin
 * returns: the caller discards what the sink got so far. */
int rs_xml_fragment_begin(rs_xml_t *w, const char *root);

/* Send what is buffered to the sink.  Returns 0 on success. */
int rs_xml_flush(rs_xml_t *w);

#endif
