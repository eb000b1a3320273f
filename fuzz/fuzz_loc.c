/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_loc.c - file names through URI escaping and the XML writer.
 *
 * The input is a path relative to a set's root: arbitrary bytes (no NUL,
 * which no file name holds).  Its resource entry is written by the one
 * entry renderer of every document (rs_entry_write: <url_base><escaped
 * dir>/<escaped name>, a <lastmod> from the modification time) through
 * rs_xml into a <urlset>, parsed back by libxml2
 * without recovery, and the <loc> text, percent-decoded, must give the
 * input bytes exactly; the escaped form must hold only unreserved
 * characters, "/" and %XX.  Every byte is representable this way, so no
 * name is skipped; inputs that cannot be a relative path (an empty, "."
 * or ".." component) are not file names and are passed over.  The first 8 bytes, when there are 8 or more, also
 * give the modification time in nanoseconds; <lastmod> must parse back
 * (rs_time_parse) to it, to the microsecond.  The set has a mirror (whose
 * prefix the writer escapes): its rs:ln href must be the prefix followed
 * by the very path <loc> has.
 */
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include "fuzz.h"
#include "rs_entry.h"
#include "rs_links.h"
#include "rs_time.h"
#include "rs_uri.h"
#include "rs_xml.h"

#define BASE   "http://example.org/data/"
#define MIRROR "https://mirror.example.org/a&b/"

/* The set's rules: one mirror (made once, for every input). */
static const rs_links_t *rules(void)
{
    static rs_links_t *l;
    if (!l) {
        apr_pool_t *p;
        FUZZ_CHECK(apr_pool_create(&p, NULL) == APR_SUCCESS, "pool");
        l = rs_links_create(p, NULL); /* a mirror matches nothing */
        FUZZ_CHECK(!rs_links_add_mirror(l, p, MIRROR, 7), "mirror");
    }
    return l;
}

typedef struct buf_t {
    char *data;
    apr_size_t len, cap;
} buf_t;

static int sink(void *baton, const char *b, apr_size_t len)
{
    buf_t *o = baton;
    if (o->len + len > o->cap) {
        char *n;
        o->cap = (o->len + len) * 2;
        n = apr_palloc(fuzz_pool(), o->cap);
        if (o->len) {
            memcpy(n, o->data, o->len);
        }
        o->data = n;
    }
    memcpy(o->data + o->len, b, len);
    o->len += len;
    return 0;
}

static void check_escaped(const char *e)
{
    for (; *e; e++) {
        if (*e == '%') {
            FUZZ_CHECK(apr_isxdigit(e[1]) && apr_isxdigit(e[2]), "bad escape at '%s'", e);
            e += 2;
        }
        else {
            FUZZ_CHECK(apr_isalnum(*e) || strchr("-._~/", *e), "unescaped byte 0x%02x",
                       (unsigned char)*e);
        }
    }
}


/* A <urlset> with the resource entry of path (dir and name split at the
 * last "/", as the inventory keeps them), written by rs_entry. */
static char *write_doc(apr_pool_t *p, const char *path, apr_int64_t ns, apr_size_t *len)
{
    buf_t out = { NULL, 0, 0 };
    rs_entry_opts_t o = { BASE, 0, 0, rules() };
    const char *slash = strrchr(path, '/');
    rs_record_t r;
    rs_xml_t *w = rs_xml_open(p, sink, &out);

    memset(&r, 0, sizeof(r));
    r.dir = slash ? apr_pstrndup(p, path, (apr_size_t)(slash - path)) : "";
    r.name = slash ? slash + 1 : path;
    r.lastmod_ns = ns;
    FUZZ_CHECK(w != NULL, "rs_xml_open");
    FUZZ_CHECK(rs_xml_begin(w, "urlset") == 0, "begin");
    FUZZ_CHECK(rs_entry_write(w, p, &o, &r) == 0, "entry");
    FUZZ_CHECK(rs_xml_end(w) == 0, "end");
    *len = out.len;
    return out.data;
}

/* The first element named name among the children of n. */
static xmlNodePtr child(xmlNodePtr n, const char *name)
{
    for (n = n ? n->children : NULL; n; n = n->next) {
        if (n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name)) {
            return n;
        }
    }
    return NULL;
}

/* Text of the first element named name among the children of n. */
static char *child_text(apr_pool_t *p, xmlNodePtr n, const char *name)
{
    xmlChar *t;
    char *s;

    if (!(n = child(n, name))) {
        return NULL;
    }
    t = xmlNodeGetContent(n);
    s = apr_pstrdup(p, t ? (const char *)t : "");
    xmlFree(t);
    return s;
}

/* The mirror's rs:ln: rel="duplicate", href the prefix and epath. */
static void check_mirror(apr_pool_t *p, xmlNodePtr url, const char *epath)
{
    xmlNodePtr ln = child(url, "ln");
    xmlChar *rel = ln ? xmlGetProp(ln, BAD_CAST "rel") : NULL;
    xmlChar *href = ln ? xmlGetProp(ln, BAD_CAST "href") : NULL;
    const char *want = apr_pstrcat(p, MIRROR, epath, NULL);

    FUZZ_CHECK(rel && !strcmp((const char *)rel, "duplicate"), "no mirror link");
    FUZZ_CHECK(href && !strcmp((const char *)href, want), "mirror href '%s', not '%s'",
               href ? (const char *)href : "(none)", want);
    xmlFree(rel);
    xmlFree(href);
}

static void check_lastmod(const char *text, apr_int64_t ns)
{
    apr_time_t t;
    FUZZ_CHECK(rs_time_parse(text, &t) == APR_SUCCESS, "lastmod '%s' does not parse", text);
    /* Nanoseconds in 64 bits reach from 1677 to 2262: never clamped.
     * The microsecond is the floor of ns / 1000. */
    apr_int64_t us = ns / 1000 - (ns % 1000 < 0);
    FUZZ_CHECK(t == us, "lastmod '%s' for %" APR_INT64_T_FMT " ns", text, ns);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    apr_int64_t ns = 0;
    char *path, *doc, *text, *decoded;
    apr_size_t len;
    xmlDocPtr x;
    xmlNodePtr url;

    if (size >= 8) {
        memcpy(&ns, data, 8);
    }
    if (!(path = fuzz_str(data, size, 0)) || !fuzz_relative_path(path)) {
        return 0;
    }
    doc = write_doc(p, path, ns, &len);
    x = xmlReadMemory(doc, (int)len, "fuzz.xml", NULL,
                      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    FUZZ_CHECK(x != NULL, "not well-formed: %.*s", (int)len, doc);
    url = xmlDocGetRootElement(x);
    url = url ? url->children : NULL;
    while (url && url->type != XML_ELEMENT_NODE) {
        url = url->next;
    }
    text = child_text(p, url, "loc");
    FUZZ_CHECK(text && !strncmp(text, BASE, strlen(BASE)), "loc '%s'", text ? text : "(none)");
    check_escaped(text + strlen(BASE));
    decoded = rs_uri_unescape(p, text + strlen(BASE));
    FUZZ_CHECK(decoded && !strcmp(decoded, path), "'%s' came back as '%s'", path,
               decoded ? decoded : "(malformed)");
    check_mirror(p, url, text + strlen(BASE));
    text = child_text(p, url, "lastmod");
    FUZZ_CHECK(text != NULL, "no lastmod");
    check_lastmod(text, ns);
    xmlFreeDoc(x);
    fuzz_done();
    return 0;
}
