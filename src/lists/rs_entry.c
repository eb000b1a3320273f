/* SPDX-License-Identifier: Apache-2.0 */
/* rs_entry.c - see rs_entry.h */
#include <string.h>
#include <apr_strings.h>
#include "rs_entry.h"
#include "rs_hash.h"
#include "rs_links.h"
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
    r->encoding = it->encoding;
    memcpy(r->hash, it->hash, sizeof(r->hash));
    r->links = it->links;
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

/* ------------------------------------------------------------ entries */

int rs_entry_write(rs_xml_t *w, apr_pool_t *p, const rs_entry_opts_t *o, const rs_record_t *r)
{
    char lastmod[RS_TIME_BUFSIZE], dt[RS_TIME_BUFSIZE], len[32];
    rs_xml_attr_t md[6];
    int n = 0, change = r->change != 0;
    const char *lm, *loc = location(p, o, r);

    if (change) {
        md[n].name = "change";
        md[n++].value = rs_journal_change_name(r->change);
        if (!o->spec10) {
            md[n].name = "datetime";
            md[n++].value = rs_time_format(dt, r->datetime);
        }
    }
    if (r->change != RS_CHANGE_DELETED) {
        apr_snprintf(len, sizeof(len), "%" APR_INT64_T_FMT, r->size);
        md[n].name = "hash";
        md[n++].value = rs_hash_attr(p, o->hashes, r->hash);
        md[n].name = "length";
        md[n++].value = len;
        md[n].name = "type";
        md[n++].value = r->type;
        /* ResourceSync 1.1 section 7: "The value of the encoding attribute
         * should be equal to the value of the content-encoding header in
         * the HTTP response" - what the access check's request set. */
        md[n].name = "encoding";
        md[n++].value = r->encoding;
    }
    lm = change && o->spec10 ? rs_time_format(lastmod, r->datetime)
                             : rs_time_format_ns(lastmod, r->lastmod_ns);
    /* The mirrors' hrefs take the path as <loc> has it, escaped once. */
    if (rs_xml_entry_begin(w, loc, lm) < 0 || rs_xml_md(w, md, n) < 0
        || (r->change != RS_CHANGE_DELETED
            && rs_entry_links_write(w, p, o->hashes, o->links, r->links, loc + strlen(o->url_base))
                   < 0)
        || rs_xml_entry_end(w) < 0) {
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
    apr_pool_t *pool; /* of buf */
    apr_pool_t *ep;   /* per entry */
    char *buf;
    apr_size_t len, cap;
    int plain_base; /* o->url_base needs no escaping (plain()) */
    int ep_used;    /* the fast path took memory from ep */
    /* The mirrors' elements as the fast path writes them (made once):
     * each the bytes before its escaped path and those after it; NULL
     * when a prefix needs escaping (the writer path then takes entries
     * with mirrors). */
    struct mirror_bytes_t *mirrors;
    int nmirrors;
    apr_size_t mirrors_len; /* of every head and tail */
};

/* Room for len more bytes in buf. */
static void buf_reserve(rs_entry_renderer_t *rr, apr_size_t len)
{
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
}

static int buf_sink(void *baton, const char *data, apr_size_t len)
{
    rs_entry_renderer_t *rr = baton;
    buf_reserve(rr, len);
    memcpy(rr->buf + rr->len, data, len);
    rr->len += len;
    return 0;
}

/* ------------------------------------------------------------ fast path
 *
 * A resource entry (change 0) whose strings need no escaping is put
 * together here, byte for byte as the writer (rs_entry_write through
 * libxml2) puts it into a document: same indentation, attributes in the
 * same order, NULL values left out.  Anything else - a change entry, a
 * string with a byte the writer would escape or encode - goes through the
 * writer, so both paths give the same bytes by construction; the unit
 * tests compare them on every byte value. */

/* The bytes the writer copies unchanged, in element content and in an
 * attribute value: printable ASCII without < > & ". */
static const unsigned char plain_byte[256] = {
    ['!'] = 1, ['#' ... '%'] = 1, ['\'' ... ';'] = 1, ['='] = 1, ['?' ... '~'] = 1,
};

/* Whether the writer copies s unchanged. */
static int plain(const char *s)
{
    for (; *s; s++) {
        if (!plain_byte[(unsigned char)*s]) {
            return 0;
        }
    }
    return 1;
}

/* The length of s when the writer copies it unchanged, else -1. */
static apr_ssize_t plain_len(const char *s)
{
    const char *c;
    for (c = s; *c; c++) {
        if (!plain_byte[(unsigned char)*c]) {
            return -1;
        }
    }
    return c - s;
}

/* Append the NUL-terminated s (room is reserved by the caller). */
static char *put(char *d, const char *s)
{
    apr_size_t n = strlen(s);
    memcpy(d, s, n);
    return d + n;
}

#define PUT_LIT(d, lit) (memcpy((d), (lit), sizeof(lit) - 1), (d) + sizeof(lit) - 1)

/* Decimal digits of v, as "%" APR_INT64_T_FMT writes them. */
static char *put_int(char *d, apr_int64_t v)
{
    char tmp[24];
    int n = 0;
    apr_uint64_t u = v < 0 ? (apr_uint64_t)0 - (apr_uint64_t)v : (apr_uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) {
        *d++ = '-';
    }
    while (n) {
        *d++ = tmp[--n];
    }
    return d;
}

/* The bytes link k takes on the fast path at most, or 0 when a value of
 * it needs escaping (its digests need no look: rs_links_parse takes only
 * lower-case hex). */
static apr_size_t plain_link(const rs_link_t *k)
{
    apr_ssize_t rel = plain_len(k->rel), href = plain_len(k->href);
    apr_ssize_t type = k->type ? plain_len(k->type) : 0;
    apr_ssize_t enc = k->encoding ? plain_len(k->encoding) : 0;
    apr_size_t n;
    int i;

    if (rel < 0 || href < 0 || type < 0 || enc < 0) {
        return 0;
    }
    n = 128 + RS_TIME_BUFSIZE + (apr_size_t)(rel + href + type + enc);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        n += k->hash[i] ? 16 + strlen(k->hash[i]) : 0;
    }
    return n;
}

/* ' name="value"' (room is reserved by the caller). */
static char *put_attr(char *d, const char *name, const char *value)
{
    *d++ = ' ';
    d = put(d, name);
    *d++ = '=';
    *d++ = '"';
    d = put(d, value);
    *d++ = '"';
    return d;
}

/* ' hash="alg:hex ..."' of the digests in mask hashes, as rs_hash_attr
 * writes it; nothing when there is none (room reserved by the caller). */
static char *put_hashes(char *d, unsigned hashes, const char *const *hash)
{
    int h, nh;

    for (h = 0, nh = 0; h < RS_HASH_COUNT; h++) {
        if ((hashes & (1u << h)) && hash[h] && *hash[h]) {
            d = nh++ ? PUT_LIT(d, " ") : PUT_LIT(d, " hash=\"");
            d = put(d, rs_hash_name(h));
            *d++ = ':';
            d = put(d, hash[h]);
        }
    }
    if (nh) {
        *d++ = '"';
    }
    return d;
}

/* The <rs:ln> elements of links, as rs_entry_links_write has the writer
 * put them (values checked by plain_link; room reserved by the caller). */
static char *put_links(char *d, const rs_link_t *links, int n, unsigned hashes)
{
    char mod[RS_TIME_BUFSIZE];
    int i;

    for (i = 0; i < n; i++) {
        const rs_link_t *k = &links[i];
        d = PUT_LIT(d, "    <rs:ln");
        d = put_attr(d, "rel", k->rel);
        d = put_attr(d, "href", k->href);
        if (k->pri > 0) {
            d = PUT_LIT(d, " pri=\"");
            d = put_int(d, k->pri);
            *d++ = '"';
        }
        if (k->modified_ns != -1) {
            d = put_attr(d, "modified", rs_time_format_ns(mod, k->modified_ns));
        }
        d = put_hashes(d, hashes, k->hash);
        if (k->length >= 0) {
            d = PUT_LIT(d, " length=\"");
            d = put_int(d, k->length);
            *d++ = '"';
        }
        if (k->type) {
            d = put_attr(d, "type", k->type);
        }
        if (k->encoding) {
            d = put_attr(d, "encoding", k->encoding);
        }
        d = PUT_LIT(d, "/>\n");
    }
    return d;
}

/* A mirror's element on the fast path: head, the entry's escaped path,
 * tail, as mirrors_write has the writer put it. */
typedef struct mirror_bytes_t {
    const char *head, *tail; /* '    <rs:ln rel="duplicate" href="PREFIX', '" pri="N"/>\n' */
    apr_size_t head_len, tail_len;
} mirror_bytes_t;

/* rr->mirrors from the rules of rr->o (when every prefix is plain). */
static void mirror_bytes(rs_entry_renderer_t *rr)
{
    int i, n;
    const rs_links_mirror_t *m = rs_links_mirrors(rr->o->links, &n);

    rr->nmirrors = n;
    for (i = 0; i < n; i++) {
        if (!plain(m[i].prefix)) {
            return;
        }
    }
    rr->mirrors = n ? apr_palloc(rr->pool, (apr_size_t)n * sizeof(*rr->mirrors)) : NULL;
    for (i = 0; i < n; i++) {
        mirror_bytes_t *b = &rr->mirrors[i];
        b->head = apr_pstrcat(rr->pool, "    <rs:ln rel=\"duplicate\" href=\"", m[i].prefix, NULL);
        b->tail = m[i].pri > 0 ? apr_psprintf(rr->pool, "\" pri=\"%d\"/>\n", m[i].pri) : "\"/>\n";
        b->head_len = strlen(b->head);
        b->tail_len = strlen(b->tail);
        rr->mirrors_len += b->head_len + b->tail_len;
    }
}

/* The mirrors' elements for the escaped path [ep, ep + elen) (room is
 * reserved by the caller; the path is elsewhere in the buffer). */
static char *put_mirrors(char *d, const rs_entry_renderer_t *rr, const char *ep, apr_size_t elen)
{
    int i;

    for (i = 0; i < rr->nmirrors; i++) {
        const mirror_bytes_t *b = &rr->mirrors[i];
        memcpy(d, b->head, b->head_len);
        d += b->head_len;
        memcpy(d, ep, elen);
        d += elen;
        memcpy(d, b->tail, b->tail_len);
        d += b->tail_len;
    }
    return d;
}

/* Links decoded without allocating (rs_links_parse) for the fast path:
 * this many, of encoded forms this long, on the stack; more from rr->ep. */
#define FAST_LINKS    8
#define FAST_LINKS_SZ 2048

/* Decode the links of an entry for the fast path into *links (lk, lbuf:
 * FAST_LINKS links, FAST_LINKS_SZ bytes on the caller's stack; larger
 * ones from rr->ep) and add the room they take to *need.  Returns their
 * number, or -1 when one is not plain (the writer path takes the entry).
 * Links that do not decode are left out, as the writer does. */
static int fast_links(rs_entry_renderer_t *rr, const char *enc, char *lbuf, rs_link_t **links,
                      apr_size_t *need)
{
    apr_size_t ln = strlen(enc);
    int i, n, max = rs_links_parse_count(enc);
    char *buf = lbuf;

    if (ln >= FAST_LINKS_SZ || max > FAST_LINKS) {
        buf = apr_palloc(rr->ep, ln + 1);
        *links = apr_palloc(rr->ep, (apr_size_t)max * sizeof(**links));
        rr->ep_used = 1;
    }
    memcpy(buf, enc, ln + 1);
    n = rs_links_parse(buf, *links, max);
    for (i = 0; i < n; i++) {
        apr_size_t len = plain_link(&(*links)[i]);
        if (!len) {
            return -1;
        }
        *need += len;
    }
    return n < 0 ? 0 : n;
}

/* Render r into rr->buf; 0 if it is not for the fast path.  Links that
 * do not fit the stack are decoded into rr->ep (rr->ep_used: the caller
 * clears it). */
static int render_fast(rs_entry_renderer_t *rr, const rs_record_t *r)
{
    const rs_entry_opts_t *o = rr->o;
    char lastmod[RS_TIME_BUFSIZE], *d, *ep, lbuf[FAST_LINKS_SZ];
    rs_link_t lk[FAST_LINKS], *links = lk;
    apr_size_t need, elen = 3 * (strlen(r->dir) + strlen(r->name) + 1);
    int i, nlinks = 0;

    if (r->change != 0 || !rr->plain_base || (r->type && !plain(r->type))
        || (r->encoding && !plain(r->encoding)) || (rr->nmirrors && !rr->mirrors)) {
        return 0;
    }
    /* The escaped path takes at most elen bytes, in <loc> and in every
     * mirror's href. */
    need = 128 + strlen(o->url_base) + elen + (r->type ? strlen(r->type) : 0)
           + (r->encoding ? 12 + strlen(r->encoding) : 0) + rr->mirrors_len
           + (apr_size_t)rr->nmirrors * elen;
    if (r->links && *r->links && (nlinks = fast_links(rr, r->links, lbuf, &links, &need)) < 0) {
        return 0;
    }
    for (i = 0; i < RS_HASH_COUNT; i++) {
        if ((o->hashes & (1u << i)) && r->hash[i] && *r->hash[i]) {
            if (!plain(r->hash[i])) {
                return 0;
            }
            need += 16 + strlen(r->hash[i]);
        }
    }
    rr->len = 0;
    buf_reserve(rr, need);
    d = PUT_LIT(rr->buf, "  <url>\n    <loc>");
    d = put(d, o->url_base);
    ep = d;
    if (*r->dir) {
        d += rs_uri_escape_path_buf(d, r->dir);
        *d++ = '/';
    }
    d += rs_uri_escape_path_buf(d, r->name);
    elen = (apr_size_t)(d - ep);
    d = PUT_LIT(d, "</loc>\n    <lastmod>");
    d = put(d, rs_time_format_ns(lastmod, r->lastmod_ns));
    d = PUT_LIT(d, "</lastmod>\n    <rs:md");
    d = put_hashes(d, o->hashes, r->hash);
    d = PUT_LIT(d, " length=\"");
    d = put_int(d, r->size);
    *d++ = '"';
    if (r->type) {
        d = PUT_LIT(d, " type=\"");
        d = put(d, r->type);
        *d++ = '"';
    }
    if (r->encoding) {
        d = PUT_LIT(d, " encoding=\"");
        d = put(d, r->encoding);
        *d++ = '"';
    }
    d = PUT_LIT(d, "/>\n");
    d = put_links(d, links, nlinks, o->hashes);
    d = put_mirrors(d, rr, ep, elen);
    d = PUT_LIT(d, "  </url>\n");
    rr->len = (apr_size_t)(d - rr->buf);
    return 1;
}

/* ------------------------------------------------------------ writer path */

rs_entry_renderer_t *rs_entry_renderer_create(apr_pool_t *p, const rs_entry_opts_t *o)
{
    rs_entry_renderer_t *rr = apr_pcalloc(p, sizeof(*rr));
    rr->o = o;
    rr->pool = p;
    rr->plain_base = plain(o->url_base);
    mirror_bytes(rr);
    apr_pool_create(&rr->ep, p);
    rr->w = rs_xml_open(p, buf_sink, rr);
    if (!rr->w || rs_xml_fragment_begin(rr->w, "urlset") < 0) {
        return NULL;
    }
    rr->len = 0; /* the priming output */
    return rr;
}

const char *rs_entry_render(rs_entry_renderer_t *rr, const rs_record_t *r, apr_size_t *len)
{
    int rc;
    if (render_fast(rr, r)) {
        if (rr->ep_used) {
            apr_pool_clear(rr->ep);
            rr->ep_used = 0;
        }
        *len = rr->len;
        return rr->buf;
    }
    rr->len = 0;
    rc = rs_entry_write(rr->w, rr->ep, rr->o, r);
    apr_pool_clear(rr->ep);
    rr->ep_used = 0;
    if (rc < 0 || rs_xml_flush(rr->w) < 0) {
        return NULL;
    }
    *len = rr->len;
    return rr->buf;
}
