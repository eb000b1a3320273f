/* SPDX-License-Identifier: Apache-2.0 */
/* rs_xml.c - see rs_xml.h */
#include <string.h>
#include <libxml/xmlwriter.h>
#include <apr_strings.h>
#include "rs_xml.h"

struct rs_xml_t {
    xmlTextWriterPtr tw;
    rs_xml_sink_fn *sink;
    void *baton;
    const char *entry; /* "url" or "sitemap" */
    int failed;
    apr_file_t *file; /* rs_xml_open_file: the file written */
    apr_status_t err; /* the cause of the first failed write to it */
};

static int io_write(void *ctx, const char *buf, int len)
{
    rs_xml_t *w = ctx;
    if (len > 0 && w->sink(w->baton, buf, (apr_size_t)len) != 0) {
        w->failed = 1;
        return -1;
    }
    return len;
}

static int io_close(void *ctx)
{
    (void)ctx;
    return 0;
}

static apr_status_t xml_cleanup(void *data)
{
    rs_xml_t *w = data;
    if (w->tw) {
        xmlFreeTextWriter(w->tw); /* also frees the output buffer */
        w->tw = NULL;
    }
    return APR_SUCCESS;
}

rs_xml_t *rs_xml_open(apr_pool_t *p, rs_xml_sink_fn *sink, void *baton)
{
    rs_xml_t *w = apr_pcalloc(p, sizeof(*w));
    xmlOutputBufferPtr out;

    w->sink = sink;
    w->baton = baton;
    out = xmlOutputBufferCreateIO(io_write, io_close, w, NULL);
    if (!out) {
        return NULL;
    }
    w->tw = xmlNewTextWriter(out);
    if (!w->tw) {
        xmlOutputBufferClose(out);
        return NULL;
    }
    apr_pool_cleanup_register(p, w, xml_cleanup, apr_pool_cleanup_null);
    return w;
}

static int file_sink(void *baton, const char *buf, apr_size_t len)
{
    rs_xml_t *w = baton;
    apr_status_t rv = apr_file_write_full(w->file, buf, len, NULL);
    if (rv != APR_SUCCESS) {
        if (w->err == APR_SUCCESS) {
            w->err = rv;
        }
        return -1;
    }
    return 0;
}

rs_xml_t *rs_xml_open_file(apr_pool_t *p, apr_file_t *f)
{
    rs_xml_t *w = rs_xml_open(p, file_sink, NULL);
    if (w) {
        w->file = f;
        w->baton = w;
    }
    return w;
}

apr_status_t rs_xml_error(const rs_xml_t *w)
{
    return w && w->err != APR_SUCCESS ? w->err : APR_EGENERAL;
}

#define CHK(x)         \
    do {               \
        if ((x) < 0) { \
            return -1; \
        }              \
    } while (0)

int rs_xml_begin(rs_xml_t *w, const char *root)
{
    w->entry = strcmp(root, "sitemapindex") ? "url" : "sitemap";
    CHK(xmlTextWriterSetIndent(w->tw, 1));
    CHK(xmlTextWriterSetIndentString(w->tw, BAD_CAST "  "));
    CHK(xmlTextWriterStartDocument(w->tw, "1.0", "UTF-8", NULL));
    CHK(xmlTextWriterStartElement(w->tw, BAD_CAST root));
    CHK(xmlTextWriterWriteAttribute(w->tw, BAD_CAST "xmlns", BAD_CAST RS_XML_NS_SITEMAP));
    CHK(xmlTextWriterWriteAttribute(w->tw, BAD_CAST "xmlns:rs", BAD_CAST RS_XML_NS_RS));
    return 0;
}

static int empty_elem(rs_xml_t *w, const char *name, const rs_xml_attr_t *attrs, int n)
{
    int i;
    CHK(xmlTextWriterStartElement(w->tw, BAD_CAST name));
    for (i = 0; i < n; i++) {
        if (attrs[i].value) {
            CHK(xmlTextWriterWriteAttribute(w->tw, BAD_CAST attrs[i].name,
                                            BAD_CAST attrs[i].value));
        }
    }
    CHK(xmlTextWriterEndElement(w->tw));
    return 0;
}

int rs_xml_ln(rs_xml_t *w, const char *rel, const char *href, const rs_xml_attr_t *attrs,
              int nattrs)
{
    rs_xml_attr_t a[8];
    int i, n = 0;
    a[n].name = "rel";
    a[n++].value = rel;
    a[n].name = "href";
    a[n++].value = href;
    for (i = 0; i < nattrs && n < 8; i++) {
        a[n++] = attrs[i];
    }
    return empty_elem(w, "rs:ln", a, n);
}

int rs_xml_md(rs_xml_t *w, const rs_xml_attr_t *attrs, int nattrs)
{
    return empty_elem(w, "rs:md", attrs, nattrs);
}

apr_int64_t rs_xml_escaped_len(const char *s, int attr)
{
    apr_int64_t n = 0;

    for (; s && *s; s++) {
        switch (*s) {
        case '&':
        case '\r':
            n += 5;
            break;
        case '<':
        case '>':
            n += 4;
            break;
        case '"':
            n += attr ? 6 : 1;
            break;
        case '\n':
        case '\t':
            n += attr ? 5 : 1;
            break;
        default:
            n += 1;
        }
    }
    return n;
}

int rs_xml_head(rs_xml_t *w, const char *root, const char *up, const char *index,
                const char *capability, const char *n1, const char *v1, const char *n2,
                const char *v2)
{
    const rs_xml_attr_t md[3] = { { "capability", capability }, { n1, v1 }, { n2, v2 } };

    return rs_xml_begin(w, root) < 0 || (up && rs_xml_ln(w, "up", up, NULL, 0) < 0)
                   || (index && rs_xml_ln(w, "index", index, NULL, 0) < 0)
                   || rs_xml_md(w, md, 3) < 0
               ? -1
               : 0;
}

int rs_xml_entry_begin(rs_xml_t *w, const char *loc, const char *lastmod)
{
    CHK(xmlTextWriterStartElement(w->tw, BAD_CAST w->entry));
    CHK(xmlTextWriterWriteElement(w->tw, BAD_CAST "loc", BAD_CAST loc));
    if (lastmod) {
        CHK(xmlTextWriterWriteElement(w->tw, BAD_CAST "lastmod", BAD_CAST lastmod));
    }
    return 0;
}

int rs_xml_entry_end(rs_xml_t *w)
{
    CHK(xmlTextWriterEndElement(w->tw));
    return 0;
}

int rs_xml_end(rs_xml_t *w)
{
    CHK(xmlTextWriterEndDocument(w->tw));
    CHK(xmlTextWriterFlush(w->tw));
    return w->failed ? -1 : 0;
}

int rs_xml_raw(rs_xml_t *w, const char *buf, apr_size_t len)
{
    if (len > (apr_size_t)0x7fffffff) {
        return -1;
    }
    CHK(xmlTextWriterWriteRawLen(w->tw, BAD_CAST buf, (int)len));
    return w->failed ? -1 : 0;
}

int rs_xml_fragment_begin(rs_xml_t *w, const char *root)
{
    /* The root's start tag and a first, empty entry put the writer in the
     * state it is in between two entries of a document: the next entry is
     * preceded by a newline and one level of indentation, and ends with a
     * newline, as in the document.  The document's declaration comes
     * first, as in rs_xml_begin: it makes the writer's document UTF-8,
     * so attribute values keep their non-ASCII characters as they are
     * (without it libxml2 writes them as character references, and an
     * entry rendered here would differ from the same entry written into
     * a document). */
    w->entry = strcmp(root, "sitemapindex") ? "url" : "sitemap";
    CHK(xmlTextWriterSetIndent(w->tw, 1));
    CHK(xmlTextWriterSetIndentString(w->tw, BAD_CAST "  "));
    CHK(xmlTextWriterStartDocument(w->tw, "1.0", "UTF-8", NULL));
    CHK(xmlTextWriterStartElement(w->tw, BAD_CAST root));
    CHK(xmlTextWriterStartElement(w->tw, BAD_CAST w->entry));
    CHK(xmlTextWriterEndElement(w->tw));
    return rs_xml_flush(w);
}

int rs_xml_flush(rs_xml_t *w)
{
    CHK(xmlTextWriterFlush(w->tw));
    return w->failed ? -1 : 0;
}

int rs_xml_membuf_sink(void *baton, const char *data, apr_size_t len)
{
    rs_xml_membuf_t *m = baton;
    if (m->len + len > m->cap) {
        apr_size_t cap = m->cap ? m->cap * 2 : 65536;
        char *nb;
        while (cap < m->len + len) {
            cap *= 2;
        }
        nb = apr_palloc(m->p, cap);
        if (m->len) {
            memcpy(nb, m->buf, m->len);
        }
        m->buf = nb;
        m->cap = cap;
    }
    memcpy(m->buf + m->len, data, len);
    m->len += len;
    return 0;
}
