/* SPDX-License-Identifier: Apache-2.0 */
/* rs_snapdoc.c - see rs_snapdoc.h */
#include <string.h>
#include <apr_strings.h>
#include "rs_partition.h"
#include "rs_snapdoc.h"
#include "rs_time.h"

int rs_snapdoc_head(rs_xml_t *w, const rs_snapshot_opts_t *o, int with_index)
{
    char at[RS_TIME_BUFSIZE], done[RS_TIME_BUFSIZE];

    return rs_xml_head(w, "urlset", o->capability_url, with_index ? o->list_url : NULL,
                       "resourcelist", "at", rs_time_format(at, o->at), "completed",
                       rs_time_format(done, o->completed));
}

int rs_snapdoc_index(const rs_snapshot_opts_t *o, rs_xml_t *w, const apr_array_header_t *parts,
                     apr_pool_t *ep)
{
    char at[RS_TIME_BUFSIZE], done[RS_TIME_BUFSIZE];
    rs_xml_attr_t md[2];
    int i;

    if (rs_xml_head(w, "sitemapindex", o->capability_url, NULL, "resourcelist", "at",
                    rs_time_format(at, o->at), "completed", rs_time_format(done, o->completed))
        < 0) {
        return -1;
    }
    md[0].name = "at";
    md[1].name = "completed";
    for (i = 0; i < parts->nelts; i++) {
        const rs_snappart_t *s = &APR_ARRAY_IDX(parts, i, rs_snappart_t);
        const char *loc =
            apr_psprintf(ep, "%s%" APR_UINT64_T_FMT "-%d.xml", o->part_url_prefix, s->gen, s->n);
        int rc;
        md[0].value = rs_time_format(at, s->at);
        md[1].value = rs_time_format(done, s->completed);
        rc = rs_xml_entry_begin(w, loc, NULL) < 0 || rs_xml_md(w, md, 2) < 0
             || rs_xml_entry_end(w) < 0;
        apr_pool_clear(ep);
        if (rc) {
            return -1;
        }
    }
    return rs_xml_end(w);
}

apr_int64_t rs_snapdoc_max_bytes(const rs_snapshot_opts_t *o)
{
    return o->max_bytes > 0 && o->max_bytes < RS_XML_MAX_BYTES ? o->max_bytes : RS_XML_MAX_BYTES;
}

/* Longest times: six fractional digits. */
#define LONG_TIME (APR_INT64_C(1700000000000001))

/* The bytes of the index with n parts of the longest numbers and times
 * (n 0 or 1), -1 when it cannot be rendered. */
static apr_int64_t index_bytes(const rs_snapshot_opts_t *o, int n, apr_pool_t *p)
{
    rs_xml_membuf_t mb = { p, NULL, 0, 0 };
    rs_xml_t *w = rs_xml_open(p, rs_xml_membuf_sink, &mb);
    apr_array_header_t *parts = apr_array_make(p, 1, sizeof(rs_snappart_t));
    apr_pool_t *ep;
    int rc;

    if (n) {
        rs_snappart_t *s = apr_array_push(parts);
        memset(s, 0, sizeof(*s));
        s->gen = APR_UINT64_MAX;
        s->n = RS_XML_MAX_ENTRIES * 10; /* more digits than any part number */
        s->at = s->completed = LONG_TIME;
    }
    apr_pool_create(&ep, p);
    rc = w ? rs_snapdoc_index(o, w, parts, ep) : -1;
    apr_pool_destroy(ep);
    return rc < 0 ? -1 : (apr_int64_t)mb.len;
}

apr_int64_t rs_snapdoc_index_cap(const rs_snapshot_opts_t *o, apr_pool_t *p)
{
    apr_int64_t max = o->max_entries > 0 ? o->max_entries : RS_XML_MAX_ENTRIES;
    apr_int64_t zero = index_bytes(o, 0, p), one = index_bytes(o, 1, p), fit;

    if (max > RS_XML_MAX_ENTRIES) {
        max = RS_XML_MAX_ENTRIES;
    }
    if (zero < 0 || one <= zero) {
        return max;
    }
    fit = (rs_snapdoc_max_bytes(o) - zero) / (one - zero);
    return fit < max ? (fit > 1 ? fit : 1) : max;
}

apr_int64_t rs_snapdoc_entry_budget(const rs_snapshot_opts_t *o, apr_pool_t *p)
{
    rs_xml_membuf_t mb = { p, NULL, 0, 0 };
    rs_xml_t *w = rs_xml_open(p, rs_xml_membuf_sink, &mb);
    rs_snapshot_opts_t lo = *o;

    /* A part's frame (its head has the index link too), with the
     * longest times. */
    lo.at = lo.completed = LONG_TIME;
    if (!w || rs_snapdoc_head(w, &lo, 1) < 0 || rs_xml_end(w) < 0
        || (apr_int64_t)mb.len >= rs_snapdoc_max_bytes(o)) {
        return 0;
    }
    return rs_snapdoc_max_bytes(o) - (apr_int64_t)mb.len;
}

apr_uint64_t rs_snapdoc_interval(apr_int64_t max_entries, apr_int64_t max_parts, apr_int64_t total)
{
    apr_uint64_t k = rs_partition_interval(max_entries);

    while ((apr_int64_t)k < max_entries && total / (apr_int64_t)k > max_parts / 2) {
        k *= 2;
    }
    return k;
}
