/* rs_entry.c - see rs_entry.h */
#include <string.h>
#include <apr_strings.h>
#include "rs_entry.h"
#include "rs_hash.h"
#include "rs_time.h"
#include "rs_uri.h"

void rs_entry_from_item(rs_record_t *r, const rs_item_t *it)
{
    memset(r, 0, sizeof(*r));
    r->dir = it->dir;
    r->name = it->name;
    r->lastmod_ns = it->mtime_ns;
    r->size = it->size;
    r->type = it->type;
    memcpy(r->hash, it->hash, sizeof(r->hash));
}

/* The entry's location: url_base, then dir "/" name percent-encoded, in
 * one allocation from p. */
static const char *location(apr_pool_t *p, const rs_entry_opts_t *o, const rs_record_t *r)
{
    apr_size_t base_len = strlen(o->url_base), n = base_len;
    char *loc = apr_palloc(p, base_len + 3 * (strlen(r->dir) + strlen(r->name)) + 2);

    memcpy(loc, o->url_base, base_len);
    if (*r->dir) {
        n += rs_uri_escape_path_buf(loc + n, r->dir);
        loc[n++] = '/';
    }
    rs_uri_escape_path_buf(loc + n, r->name);
    return loc;
}

int rs_entry_write(rs_xml_t *w, apr_pool_t *p, const rs_entry_opts_t *o, const rs_record_t *r)
{
    char lastmod[RS_TIME_BUFSIZE], dt[RS_TIME_BUFSIZE], len[32];
    rs_xml_attr_t md[5];
    int n = 0, change = r->change != 0;
    const char *lm;

    if (change) {
        md[n].name = "change"; md[n++].value = rs_journal_change_name(r->change);
        if (!o->spec10) {
            md[n].name = "datetime"; md[n++].value = rs_time_format(dt, r->datetime);
        }
    }
    if (r->change != RS_CHANGE_DELETED) {
        apr_snprintf(len, sizeof(len), "%" APR_INT64_T_FMT, r->size);
        md[n].name = "hash"; md[n++].value = rs_hash_attr(p, o->hashes, r->hash);
        md[n].name = "length"; md[n++].value = len;
        md[n].name = "type"; md[n++].value = r->type;
    }
    lm = change && o->spec10 ? rs_time_format(lastmod, r->datetime)
                             : rs_time_format_ns(lastmod, r->lastmod_ns);
    if (rs_xml_entry_begin(w, location(p, o, r), lm) < 0
        || rs_xml_md(w, md, n) < 0 || rs_xml_entry_end(w) < 0) {
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ renderer */

/* Lifecycle: a fragment writer (rs_xml_fragment_begin) whose sink appends
 * to buf; every render empties buf, writes one entry and flushes, so buf
 * then holds exactly that entry's bytes.  buf grows (from `pool`) to the
 * longest entry seen; per-entry memory comes from `ep`, cleared after each
 * entry. */
struct rs_entry_renderer_t {
    const rs_entry_opts_t *o;
    rs_xml_t *w;
    apr_pool_t *pool;       /* of buf */
    apr_pool_t *ep;         /* per entry */
    char *buf;
    apr_size_t len, cap;
};

static int buf_sink(void *baton, const char *data, apr_size_t len)
{
    rs_entry_renderer_t *rr = baton;
    if (rr->len + len > rr->cap) {
        apr_size_t cap = rr->cap ? rr->cap : 1024;
        char *nb;
        while (cap < rr->len + len) {
            cap *= 2;
        }
        nb = apr_palloc(rr->pool, cap);
        if (rr->len) {
            memcpy(nb, rr->buf, rr->len);
        }
        rr->buf = nb;
        rr->cap = cap;
    }
    memcpy(rr->buf + rr->len, data, len);
    rr->len += len;
    return 0;
}

rs_entry_renderer_t *rs_entry_renderer_create(apr_pool_t *p, const rs_entry_opts_t *o)
{
    rs_entry_renderer_t *rr = apr_pcalloc(p, sizeof(*rr));
    rr->o = o;
    rr->pool = p;
    apr_pool_create(&rr->ep, p);
    rr->w = rs_xml_open(p, buf_sink, rr);
    if (!rr->w || rs_xml_fragment_begin(rr->w, "urlset") < 0) {
        return NULL;
    }
    rr->len = 0;            /* the priming output */
    return rr;
}

const char *rs_entry_render(rs_entry_renderer_t *rr, const rs_record_t *r, apr_size_t *len)
{
    int rc;
    rr->len = 0;
    rc = rs_entry_write(rr->w, rr->ep, rr->o, r);
    apr_pool_clear(rr->ep);
    if (rc < 0 || rs_xml_flush(rr->w) < 0) {
        return NULL;
    }
    *len = rr->len;
    return rr->buf;
}
