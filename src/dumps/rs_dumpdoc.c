/* SPDX-License-Identifier: Apache-2.0 */
/* rs_dumpdoc.c - see rs_dumpdoc.h */
#include <apr_strings.h>
#include "rs_dumpdoc.h"
#include "rs_file.h"
#include "rs_statedir.h"
#include "rs_time.h"
#include "rs_xml.h"

/* The documents being written: their options, packages and pool. */
typedef struct {
    const rs_dump_opts_t *o;
    const apr_array_header_t *pkgs; /* rs_dumpdoc_pkg_t */
    apr_pool_t *kp;
} ddoc_t;

/* A document of the dump at path: root and its rs:ln/rs:md head, or an
 * error.  `index` is the URL of the index this document is a part of. */
static rs_xml_t *doc_begin(ddoc_t *dw, rs_xml_t *w, const char *root, const char *index)
{
    const rs_dump_opts_t *o = dw->o;
    char at[RS_TIME_BUFSIZE], done[RS_TIME_BUFSIZE];

    return w
                   && rs_xml_head(w, root, o->capability_url, index, "resourcedump", "at",
                                  rs_time_format(at, o->at), "completed",
                                  rs_time_format(done, o->completed))
                          == 0
               ? w
               : NULL;
}

/* One <url> per package from..to-1. */
static int doc_packages(ddoc_t *dw, rs_xml_t *w, int from, int to)
{
    char at[RS_TIME_BUFSIZE], done[RS_TIME_BUFSIZE], len[32];
    rs_xml_attr_t md[5], ln[1];
    int i, bad = 0;

    for (i = from; !bad && i < to; i++) {
        const rs_dumpdoc_pkg_t *pk = &APR_ARRAY_IDX(dw->pkgs, i, rs_dumpdoc_pkg_t);
        const char *base = apr_pstrcat(dw->kp, dw->o->pkg_url_prefix, pk->key, NULL);
        apr_snprintf(len, sizeof(len), "%" APR_OFF_T_FMT, pk->rec.length);
        md[0].name = "type";
        md[0].value = "application/zip";
        md[1].name = "length";
        md[1].value = len;
        md[2].name = "hash";
        md[2].value = pk->rec.hash;
        md[3].name = "at";
        md[3].value = rs_time_format(at, pk->rec.at);
        md[4].name = "completed";
        md[4].value = rs_time_format(done, pk->rec.completed);
        ln[0].name = "type";
        ln[0].value = "application/xml";
        bad = rs_xml_entry_begin(w, apr_pstrcat(dw->kp, base, ".zip", NULL), NULL) < 0
              || rs_xml_md(w, md, 5) < 0
              || rs_xml_ln(w, "contents", apr_pstrcat(dw->kp, base, ".xml", NULL), ln, 1) < 0
              || rs_xml_entry_end(w) < 0;
    }
    return bad;
}

/* One <sitemap> per part of the index. */
static int doc_parts(ddoc_t *dw, rs_xml_t *w, int nparts)
{
    char at[RS_TIME_BUFSIZE], done[RS_TIME_BUFSIZE];
    rs_xml_attr_t md[2];
    int i, bad = 0;

    md[0].name = "at";
    md[0].value = rs_time_format(at, dw->o->at);
    md[1].name = "completed";
    md[1].value = rs_time_format(done, dw->o->completed);
    for (i = 1; !bad && i <= nparts; i++) {
        bad =
            rs_xml_entry_begin(w, apr_psprintf(dw->kp, "%s%d.xml", dw->o->part_url_prefix, i), NULL)
                < 0
            || rs_xml_md(w, md, 2) < 0 || rs_xml_entry_end(w) < 0;
    }
    return bad;
}

/* Write one document: the packages from..to-1 (a <urlset>, part of the
 * index when in_index), or, with nparts > 0, the index itself. */
static apr_status_t doc_write(ddoc_t *dw, const char *path, int from, int to, int in_index,
                              int nparts)
{
    apr_file_t *f;
    rs_xml_t *w;
    apr_status_t rv, xe = APR_SUCCESS;
    int bad;

    if ((rv = rs_file_create(&f, path, 0, dw->kp)) != APR_SUCCESS) {
        return rv;
    }
    w = doc_begin(dw, rs_xml_open_file(dw->kp, f), nparts ? "sitemapindex" : "urlset",
                  in_index ? dw->o->dump_url : NULL);
    bad = !w || (nparts ? doc_parts(dw, w, nparts) : doc_packages(dw, w, from, to));
    if (bad || rs_xml_end(w) < 0) {
        xe = w ? rs_xml_error(w) : APR_ENOMEM;
    }
    rv = rs_file_finish(f);
    return xe != APR_SUCCESS ? xe : rv;
}

/* The bytes of a part of the index holding packages from..to-1 (none:
 * its frame), -1 when it cannot be rendered. */
static apr_int64_t doc_bytes(ddoc_t *dw, int from, int to)
{
    rs_xml_membuf_t mb = { dw->kp, NULL, 0, 0 };
    rs_xml_t *w =
        doc_begin(dw, rs_xml_open(dw->kp, rs_xml_membuf_sink, &mb), "urlset", dw->o->dump_url);

    if (!w || doc_packages(dw, w, from, to) || rs_xml_end(w) < 0) {
        return -1;
    }
    return (apr_int64_t)mb.len;
}

/* Where the documents listing the packages begin (array of int, the
 * first package of each; one element: a single document): at most
 * list_max packages a document, and only as many as keep it within
 * RS_XML_MAX_BYTES (ResourceSync 1.1 section 7, "the limit is 50,000
 * items per document and a document size of 50 MB"; each package's
 * entry is measured).  Every document but the last is as full as the
 * limits allow, so there are as few as can be: ceil(packages /
 * list_max) while the entries are small. */
static apr_array_header_t *doc_cuts(ddoc_t *dw, apr_status_t *rv)
{
    int n = dw->pkgs->nelts, max = dw->o->list_max > 0 ? dw->o->list_max : n, i, count = 0;
    apr_array_header_t *cuts = apr_array_make(dw->kp, 4, sizeof(int));
    apr_int64_t frame = doc_bytes(dw, 0, 0), bytes = 0;
    apr_int64_t doc_max = dw->o->doc_max_bytes > 0 && dw->o->doc_max_bytes < RS_XML_MAX_BYTES
                              ? dw->o->doc_max_bytes
                              : RS_XML_MAX_BYTES;

    *rv = APR_SUCCESS;
    APR_ARRAY_PUSH(cuts, int) = 0;
    if (max > RS_XML_MAX_ENTRIES) {
        max = RS_XML_MAX_ENTRIES;
    }
    for (i = 0; i < n; i++) {
        apr_int64_t e = doc_bytes(dw, i, i + 1);
        if (frame < 0 || e < 0) {
            *rv = APR_ENOMEM;
            return NULL;
        }
        e -= frame;
        if (count == max || (count && frame + bytes + e > doc_max)) {
            APR_ARRAY_PUSH(cuts, int) = i;
            count = 0;
            bytes = 0;
        }
        count++;
        bytes += e;
    }
    return cuts;
}

apr_status_t rs_dumpdoc_write(const rs_dump_opts_t *o, const char *dir,
                              const apr_array_header_t *pkgs, apr_pool_t *p, int *parts)
{
    ddoc_t d = { o, pkgs, p }, *dw = &d;
    int n = dw->pkgs->nelts, k;
    apr_status_t rv;
    apr_array_header_t *cuts = doc_cuts(dw, &rv);

    if (!cuts) {
        return rv;
    }
    if (cuts->nelts == 1 || !dw->o->part_url_prefix) {
        return doc_write(dw, rs_statedir_dump_file(dw->kp, dir), 0, n, 0, 0);
    }
    *parts = cuts->nelts;
    for (k = 0; k < *parts; k++) {
        int from = APR_ARRAY_IDX(cuts, k, int);
        int to = k + 1 < cuts->nelts ? APR_ARRAY_IDX(cuts, k + 1, int) : n;
        if ((rv = doc_write(dw, rs_statedir_gen_file(dw->kp, dir, k + 1), from, to, 1, 0))
            != APR_SUCCESS) {
            return rv;
        }
    }
    return doc_write(dw, rs_statedir_dump_file(dw->kp, dir), 0, 0, 0, *parts);
}
