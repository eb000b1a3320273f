/* SPDX-License-Identifier: Apache-2.0 */
/* rs_changelist.c - see rs_changelist.h */
#include <string.h>
#include <apr_strings.h>
#include "rs_changelist.h"
#include "rs_time.h"

#define PAGE 2000

static int head(rs_xml_t *w, const rs_changelist_opts_t *o, const char *root,
                const rs_changelist_t *cl, int with_index)
{
    char from[RS_TIME_BUFSIZE], until[RS_TIME_BUFSIZE];

    return rs_xml_head(w, root, o->capability_url, with_index ? o->index_url : NULL, "changelist",
                       "from", rs_time_format(from, cl->from), "until",
                       cl->until ? rs_time_format(until, cl->until) : NULL);
}

/* ------------------------------------------------------------ documents */

typedef struct {
    rs_journal_t *j;
    const char *set;
} jsource_t;

static apr_status_t from_journal(void *baton, apr_pool_t *p, apr_int64_t next, apr_int64_t last,
                                 int limit, apr_array_header_t **out)
{
    jsource_t *js = baton;
    return rs_journal_records(js->j, p, js->set, next, last, limit, out);
}

apr_status_t rs_changelist_write(rs_journal_t *j, const rs_changelist_opts_t *o,
                                 const rs_changelist_t *cl, rs_xml_t *w, apr_pool_t *p)
{
    jsource_t js;
    js.j = j;
    js.set = o->set;
    return rs_changelist_write_from(from_journal, &js, o, cl, w, p);
}

apr_status_t rs_changelist_write_entries(rs_changelist_source_fn *src, void *baton,
                                         const rs_changelist_opts_t *o, apr_int64_t first,
                                         apr_int64_t last, rs_changelist_emit_fn *emit,
                                         void *ebaton, apr_pool_t *p)
{
    apr_pool_t *pp, *rp;
    rs_entry_renderer_t *rr = NULL;
    apr_int64_t next = first;
    apr_status_t rv = APR_SUCCESS;
    int i, done = 0;

    apr_pool_create(&pp, p);
    apr_pool_create(&rp, p);
    while (!done && next <= last) {
        apr_array_header_t *recs;
        apr_pool_clear(pp);
        rv = src(baton, pp, next, last, PAGE, &recs);
        if (rv != APR_SUCCESS) {
            break;
        }
        for (i = 0; i < recs->nelts && !done; i++) {
            const rs_record_t *r = &APR_ARRAY_IDX(recs, i, rs_record_t);
            const char *xml = r->xml;
            apr_size_t len = r->xml_len;
            int e;
            /* Every entry goes through the renderer's bytes (or bytes it
             * rendered before, e.g. in the ring): one rendering, whatever
             * the source. */
            if (!xml) {
                if (!rr && !(rr = rs_entry_renderer_create(rp, &o->entry))) {
                    rv = APR_EGENERAL;
                    break;
                }
                xml = rs_entry_render(rr, r, &len);
            }
            if (!xml) {
                rv = APR_EGENERAL;
                break;
            }
            if ((e = emit(ebaton, xml, len)) < 0) {
                rv = APR_EGENERAL;
                break;
            }
            done = e > 0;
            next = r->seq + 1;
        }
        if (rv != APR_SUCCESS || recs->nelts < PAGE) {
            break;
        }
    }
    apr_pool_destroy(rp);
    apr_pool_destroy(pp);
    return rv;
}

typedef struct {
    rs_xml_t *w;
    int failed;
} raw_t;

static int to_writer(void *baton, const char *buf, apr_size_t len)
{
    raw_t *x = baton;
    if (rs_xml_raw(x->w, buf, len) < 0) {
        x->failed = 1;
        return -1;
    }
    return 0;
}

apr_status_t rs_changelist_write_from(rs_changelist_source_fn *src, void *baton,
                                      const rs_changelist_opts_t *o, const rs_changelist_t *cl,
                                      rs_xml_t *w, apr_pool_t *p)
{
    raw_t x;
    apr_status_t rv;

    if (head(w, o, "urlset", cl, 1) < 0) {
        return rs_xml_error(w);
    }
    x.w = w;
    x.failed = 0;
    rv = rs_changelist_write_entries(src, baton, o, cl->first_seq, cl->last_seq, to_writer, &x, p);
    if (x.failed) {
        return rs_xml_error(w);
    }
    if (rv == APR_SUCCESS && rs_xml_end(w) < 0) {
        rv = rs_xml_error(w);
    }
    return rv;
}

apr_status_t rs_changelist_frame(const rs_changelist_opts_t *o, const rs_changelist_t *cl,
                                 apr_pool_t *p, rs_changelist_frame_t *fr)
{
    rs_xml_membuf_t mb = { p, NULL, 0, 0 };
    rs_xml_t *w = rs_xml_open(p, rs_xml_membuf_sink, &mb);

    /* The head is what the writer has sent once the head is written and
     * flushed: entries are raw bytes after it, and the writer's state
     * (inside the root, after an element) is the same with or without
     * them, so what rs_xml_end sends then is the tail of every list. */
    if (!w || head(w, o, "urlset", cl, 1) < 0 || rs_xml_flush(w) < 0) {
        return APR_EGENERAL;
    }
    fr->head_len = mb.len;
    if (rs_xml_end(w) < 0) {
        return APR_EGENERAL;
    }
    fr->head = mb.buf;
    fr->tail = mb.buf + fr->head_len;
    fr->tail_len = mb.len - fr->head_len;
    return APR_SUCCESS;
}

apr_status_t rs_changelist_write_index(const rs_changelist_opts_t *o,
                                       const apr_array_header_t *closed,
                                       const rs_changelist_t *open, rs_xml_t *w, apr_pool_t *p)
{
    rs_changelist_t whole;
    int i;

    /* The index covers from its first list's from on, and is open. */
    memset(&whole, 0, sizeof(whole));
    whole.from = closed->nelts ? APR_ARRAY_IDX(closed, 0, rs_changelist_t).from : open->from;
    if (head(w, o, "sitemapindex", &whole, 0) < 0) {
        return rs_xml_error(w);
    }
    for (i = 0; i <= closed->nelts; i++) {
        const rs_changelist_t *cl = i < closed->nelts ? &APR_ARRAY_IDX(closed, i, rs_changelist_t)
                                                      : open;
        char from[RS_TIME_BUFSIZE], until[RS_TIME_BUFSIZE];
        rs_xml_attr_t md[2];
        md[0].name = "from";
        md[0].value = rs_time_format(from, cl->from);
        md[1].name = "until";
        md[1].value = cl->until ? rs_time_format(until, cl->until) : NULL;
        if (rs_xml_entry_begin(
                w, apr_psprintf(p, "%s%" APR_INT64_T_FMT ".xml", o->list_url_prefix, cl->id), NULL)
                < 0
            || rs_xml_md(w, md, 2) < 0 || rs_xml_entry_end(w) < 0) {
            return rs_xml_error(w);
        }
    }
    return rs_xml_end(w) < 0 ? rs_xml_error(w) : APR_SUCCESS;
}
