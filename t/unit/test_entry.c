/* SPDX-License-Identifier: Apache-2.0 */
/* test_entry.c - rs_entry: the <url> entries of every document */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <apr_md5.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_entry.h"
#include "rs_hash.h"
#include "rs_journal.h"
#include "rs_links.h"
#include "rs_inventory.h"
#include "rs_xml.h"

#define BASE   "http://example.org/files/"
#define MD5    "900150983cd24fb0d6963f7d28e17f72"
#define SHA1   "a9993e364706816aba3e25717850c26c9cd0d89d"
#define SHA256 "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/* 2020-09-13T12:26:40.123456789Z */
#define LASTMOD_NS (1600000000LL * 1000000000 + 123456789)
/* 2020-09-13T12:26:41.000005Z */
#define DATETIME (1600000001LL * APR_USEC_PER_SEC + 5)

static void opts(rs_entry_opts_t *o, int spec10)
{
    memset(o, 0, sizeof(*o));
    o->url_base = BASE;
    o->hashes = RS_HASH_MD5 | RS_HASH_SHA256;
    o->spec10 = spec10;
}

static void record(rs_record_t *r, int change, const char *dir, const char *name)
{
    memset(r, 0, sizeof(*r));
    r->seq = 7;
    r->dir = dir;
    r->name = name;
    r->change = change;
    r->datetime = DATETIME;
    r->lastmod_ns = LASTMOD_NS;
    r->size = 3;
    r->type = "text/plain";
    r->hash[0] = MD5;
    r->hash[1] = SHA1;
    r->hash[2] = SHA256;
}

/* s = "x", the byte c, "y". */
static void xcy(char s[4], int c)
{
    s[0] = 'x';
    s[1] = (char)c;
    s[2] = 'y';
    s[3] = '\0';
}

/* The bytes of one entry, rendered once. */
static const char *render(const rs_entry_opts_t *o, const rs_record_t *r)
{
    rs_entry_renderer_t *rr = rs_entry_renderer_create(ut_pool, o);
    const char *b;
    apr_size_t len = 0;
    ck_assert_ptr_nonnull(rr);
    b = rs_entry_render(rr, r, &len);
    ck_assert_ptr_nonnull(b);
    return apr_pstrmemdup(ut_pool, b, len);
}

/* A whole document with the entry written by rs_entry_write. */
static const char *document(const rs_entry_opts_t *o, const rs_record_t *r)
{
    ut_buf_t b;
    rs_xml_t *w;
    memset(&b, 0, sizeof(b));
    w = rs_xml_open(ut_pool, ut_buf_sink, &b);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(rs_xml_begin(w, "urlset"), 0);
    ck_assert_int_eq(rs_entry_write(w, ut_pool, o, r), 0);
    ck_assert_int_eq(rs_xml_end(w), 0);
    return apr_pstrmemdup(ut_pool, b.data, b.len);
}

#define DOC_HEAD                                                     \
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"                   \
    "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" " \
    "xmlns:rs=\"http://www.openarchives.org/rs/terms/\">\n"

/* The rendered bytes are the entry as it stands in a document. */
static void assert_entry(const rs_entry_opts_t *o, const rs_record_t *r, const char *expected)
{
    ck_assert_str_eq(render(o, r), expected);
    ck_assert_str_eq(document(o, r), apr_pstrcat(ut_pool, DOC_HEAD, expected, "</urlset>\n", NULL));
}

/* An inventory row of 3 bytes with three digests. */
static void item(rs_item_t *it, const char *dir, const char *name, const char *type)
{
    memset(it, 0, sizeof(*it));
    it->dir = dir;
    it->name = name;
    it->size = 3;
    it->mtime_ns = LASTMOD_NS;
    it->type = type;
    it->hash[0] = MD5;
    it->hash[1] = SHA1;
    it->hash[2] = SHA256;
}

START_TEST(resource_entry)
{
    rs_entry_opts_t o;
    rs_item_t it;
    rs_record_t r;

    opts(&o, 0);
    item(&it, "sub/dir", "a.txt", "text/plain");
    rs_entry_from_item(&r, &it);
    ck_assert_int_eq(r.change, 0);
    assert_entry(&o, &r,
                 "  <url>\n"
                 "    <loc>" BASE "sub/dir/a.txt</loc>\n"
                 "    <lastmod>2020-09-13T12:26:40.123456Z</lastmod>\n"
                 "    <rs:md hash=\"md5:" MD5 " sha-256:" SHA256
                 "\" length=\"3\" type=\"text/plain\"/>\n"
                 "  </url>\n");
    /* 1.0 mode changes nothing in a resource entry; no type, no hashes. */
    o.spec10 = 1;
    o.hashes = 0;
    it.type = NULL;
    it.dir = "";
    rs_entry_from_item(&r, &it);
    assert_entry(&o, &r,
                 "  <url>\n"
                 "    <loc>" BASE "a.txt</loc>\n"
                 "    <lastmod>2020-09-13T12:26:40.123456Z</lastmod>\n"
                 "    <rs:md length=\"3\"/>\n"
                 "  </url>\n");
}
END_TEST

START_TEST(change_entries)
{
    rs_entry_opts_t o;
    rs_record_t r;

    opts(&o, 0);
    record(&r, RS_CHANGE_CREATED, "", "new.txt");
    assert_entry(&o, &r,
                 "  <url>\n"
                 "    <loc>" BASE "new.txt</loc>\n"
                 "    <lastmod>2020-09-13T12:26:40.123456Z</lastmod>\n"
                 "    <rs:md change=\"created\" datetime=\"2020-09-13T12:26:41.000005Z\" "
                 "hash=\"md5:" MD5 " sha-256:" SHA256 "\" length=\"3\" type=\"text/plain\"/>\n"
                 "  </url>\n");
    record(&r, RS_CHANGE_UPDATED, "d", "u.txt");
    o.hashes = RS_HASH_SHA1;
    assert_entry(&o, &r,
                 "  <url>\n"
                 "    <loc>" BASE "d/u.txt</loc>\n"
                 "    <lastmod>2020-09-13T12:26:40.123456Z</lastmod>\n"
                 "    <rs:md change=\"updated\" datetime=\"2020-09-13T12:26:41.000005Z\" "
                 "hash=\"sha-1:" SHA1 "\" length=\"3\" type=\"text/plain\"/>\n"
                 "  </url>\n");
    /* A deletion: no hash, length or type. */
    record(&r, RS_CHANGE_DELETED, "d", "gone");
    assert_entry(&o, &r,
                 "  <url>\n"
                 "    <loc>" BASE "d/gone</loc>\n"
                 "    <lastmod>2020-09-13T12:26:40.123456Z</lastmod>\n"
                 "    <rs:md change=\"deleted\" datetime=\"2020-09-13T12:26:41.000005Z\"/>\n"
                 "  </url>\n");
}
END_TEST

/* The expected bytes of an entry of BASE name with LASTMOD_NS and the
 * rs:md attributes md. */
static const char *expect(const char *name, const char *md)
{
    return apr_pstrcat(ut_pool, "  <url>\n    <loc>" BASE, name,
                       "</loc>\n    <lastmod>2020-09-13T12:26:40.123456Z</lastmod>\n    <rs:md ",
                       md, "/>\n  </url>\n", NULL);
}

/* A content coding (httpd's Content-Encoding, e.g. for AddEncoding gzip
 * .gz) is listed as rs:md encoding after the type, in resource and change
 * entries, both ways of rendering; a deletion has none. */
START_TEST(encoding_listed)
{
    rs_entry_opts_t o;
    rs_item_t it;
    rs_record_t r;

    opts(&o, 0);
    o.hashes = RS_HASH_MD5;
    item(&it, "", "a.tar.gz", "application/x-tar");
    it.encoding = "gzip";
    rs_entry_from_item(&r, &it);
    ck_assert_str_eq(r.encoding, "gzip");
    assert_entry(&o, &r,
                 expect("a.tar.gz",
                        "hash=\"md5:" MD5
                        "\" length=\"3\" type=\"application/x-tar\" encoding=\"gzip\""));
    /* an encoding without a type */
    it.type = NULL;
    rs_entry_from_item(&r, &it);
    assert_entry(&o, &r, expect("a.tar.gz", "hash=\"md5:" MD5 "\" length=\"3\" encoding=\"gzip\""));
    record(&r, RS_CHANGE_UPDATED, "", "b.gz");
    r.encoding = "x-gzip";
    assert_entry(&o, &r,
                 expect("b.gz", "change=\"updated\" datetime=\"2020-09-13T12:26:41.000005Z\" "
                                "hash=\"md5:" MD5
                                "\" length=\"3\" type=\"text/plain\" encoding=\"x-gzip\""));
    record(&r, RS_CHANGE_DELETED, "", "b.gz");
    r.encoding = "gzip";
    assert_entry(&o, &r,
                 expect("b.gz", "change=\"deleted\" datetime=\"2020-09-13T12:26:41.000005Z\""));
}
END_TEST

/* ResourceSync 1.0: <lastmod> is the change time, no datetime. */
START_TEST(spec10_entries)
{
    rs_entry_opts_t o;
    rs_record_t r;

    opts(&o, 1);
    record(&r, RS_CHANGE_UPDATED, "", "u.txt");
    assert_entry(&o, &r,
                 "  <url>\n"
                 "    <loc>" BASE "u.txt</loc>\n"
                 "    <lastmod>2020-09-13T12:26:41.000005Z</lastmod>\n"
                 "    <rs:md change=\"updated\" hash=\"md5:" MD5 " sha-256:" SHA256 "\" "
                 "length=\"3\" type=\"text/plain\"/>\n"
                 "  </url>\n");
    record(&r, RS_CHANGE_DELETED, "", "gone");
    assert_entry(&o, &r,
                 "  <url>\n"
                 "    <loc>" BASE "gone</loc>\n"
                 "    <lastmod>2020-09-13T12:26:41.000005Z</lastmod>\n"
                 "    <rs:md change=\"deleted\"/>\n"
                 "  </url>\n");
}
END_TEST

/* Names are bytes: everything but unreserved characters is
 * percent-encoded in the location, and "/" only separates dir and name. */
START_TEST(odd_bytes_in_names)
{
    rs_entry_opts_t o;
    rs_record_t r;
    rs_entry_renderer_t *rr;
    const char *b;
    apr_size_t len;
    char *longname;

    opts(&o, 0);
    record(&r, RS_CHANGE_CREATED, "a&b/\xC3\xA9t\xE9", "<x> \"q\"%#?.txt");
    o.hashes = 0;
    assert_entry(&o, &r,
                 "  <url>\n"
                 "    <loc>" BASE "a%26b/%C3%A9t%E9/%3Cx%3E%20%22q%22%25%23%3F.txt</loc>\n"
                 "    <lastmod>2020-09-13T12:26:40.123456Z</lastmod>\n"
                 "    <rs:md change=\"created\" datetime=\"2020-09-13T12:26:41.000005Z\" "
                 "length=\"3\" type=\"text/plain\"/>\n"
                 "  </url>\n");

    /* A name longer than PATH_MAX, every byte escaped, then a short one
     * from the same renderer: the buffer grows and is reused. */
    longname = apr_palloc(ut_pool, 6001);
    memset(longname, ' ', 6000);
    longname[6000] = '\0';
    rr = rs_entry_renderer_create(ut_pool, &o);
    record(&r, RS_CHANGE_CREATED, "", longname);
    b = rs_entry_render(rr, &r, &len);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_gt(len, 18000);
    ck_assert_ptr_nonnull(strstr(apr_pstrmemdup(ut_pool, b, len), "%20%20</loc>"));
    record(&r, RS_CHANGE_DELETED, "", "x");
    b = rs_entry_render(rr, &r, &len);
    ck_assert_str_eq(apr_pstrmemdup(ut_pool, b, len),
                     "  <url>\n"
                     "    <loc>" BASE "x</loc>\n"
                     "    <lastmod>2020-09-13T12:26:40.123456Z</lastmod>\n"
                     "    <rs:md change=\"deleted\" datetime=\"2020-09-13T12:26:41.000005Z\"/>\n"
                     "  </url>\n");
}
END_TEST

/* The bytes of r as the writer puts them into a document (rs_entry_write
 * after rs_xml_begin), whatever path the renderer would take. */
static const char *written(const rs_entry_opts_t *o, const rs_record_t *r)
{
    const char *doc = document(o, r);
    apr_size_t head = strlen(DOC_HEAD), n = strlen(doc), tail = strlen("</urlset>\n");
    ck_assert_uint_gt(n, head + tail);
    ck_assert(!strncmp(doc, DOC_HEAD, head));
    ck_assert_str_eq(doc + n - tail, "</urlset>\n");
    return apr_pstrndup(ut_pool, doc + head, n - head - tail);
}

/* The renderer's bytes equal the writer's, for one renderer reused
 * across entries (its buffer and writer state carry over). */
static void assert_same(rs_entry_renderer_t *rr, const rs_entry_opts_t *o, const rs_record_t *r)
{
    apr_size_t len = 0;
    const char *b = rs_entry_render(rr, r, &len);
    ck_assert_ptr_nonnull(b);
    ck_assert_str_eq(apr_pstrmemdup(ut_pool, b, len), written(o, r));
}

/* Resource entries are put together without the writer when nothing in
 * them needs escaping: every byte value in every string, every hash
 * choice, missing and empty values, odd sizes and times must give the
 * writer's bytes. */
START_TEST(render_matches_writer)
{
    static const apr_int64_t sizes[] = { 0, 7, 1234567890123LL, -1, APR_INT64_MAX };
    static const apr_int64_t times[] = { LASTMOD_NS, 0, 1600000000LL * 1000000000, -1,
                                         -1600000000LL * 1000000000 - 5000 };
    static const char *const types[] = {
        NULL,           "",          "text/plain",        "text/html; charset=utf-8",
        "a/b; q=\"x\"", "a/<b>&'c'", "a/\xc3\xa9\tb\nc\r"
    };
    rs_entry_opts_t o;
    rs_entry_renderer_t *rr;
    rs_record_t r;
    char s[4];
    unsigned mask;
    int c, i;

    for (mask = 0; mask < 16; mask++) {
        opts(&o, 0);
        o.hashes = mask;
        rr = rs_entry_renderer_create(ut_pool, &o);
        ck_assert_ptr_nonnull(rr);
        record(&r, 0, "a/b c", "n");
        r.hash[3] = "0123";
        r.hash[1] = mask & 2 ? "" : SHA1;
        assert_same(rr, &o, &r);
        for (i = 0; i < 5; i++) {
            r.size = sizes[i];
            r.lastmod_ns = times[i];
            assert_same(rr, &o, &r);
        }
        for (i = 0; i < 7; i++) {
            r.type = types[i];
            assert_same(rr, &o, &r);
            r.encoding = types[i];
            assert_same(rr, &o, &r);
            r.encoding = NULL;
        }
    }
    opts(&o, 0);
    rr = rs_entry_renderer_create(ut_pool, &o);
    for (c = 1; c < 256; c++) {
        xcy(s, c);
        record(&r, 0, "", s);
        assert_same(rr, &o, &r);
        record(&r, 0, s, "n");
        assert_same(rr, &o, &r);
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c > 0x7f) {
            continue; /* not XML characters (alone): the writer refuses them */
        }
        record(&r, 0, "d", "n");
        r.type = s;
        assert_same(rr, &o, &r);
        r.type = NULL;
        r.encoding = s;
        assert_same(rr, &o, &r);
        r.encoding = NULL;
        r.hash[0] = s;
        assert_same(rr, &o, &r);
        record(&r, RS_CHANGE_UPDATED, "d", s);
        assert_same(rr, &o, &r);
    }
    /* A URL base that the writer escapes (and one it does not). */
    opts(&o, 0);
    o.url_base = "http://example.org/a&b/";
    rr = rs_entry_renderer_create(ut_pool, &o);
    record(&r, 0, "d", "n");
    assert_same(rr, &o, &r);
    opts(&o, 0);
    o.url_base = "http://example.org/a'b~c;d=e/";
    rr = rs_entry_renderer_create(ut_pool, &o);
    assert_same(rr, &o, &r);
}
END_TEST

/* ------------------------------------------------------------ rs:ln */

/* A describedby link to a listed file, a mirror, a URL with a type. */
static const char *three_links(void)
{
    apr_array_header_t *a = apr_array_make(ut_pool, 3, sizeof(rs_link_t));
    rs_link_t *k = rs_links_push(a, "describedby", BASE "meta/a.xml");
    k->length = 120;
    k->modified_ns = LASTMOD_NS + 1000;
    k->type = "application/xml";
    k->hash[0] = MD5;
    k->hash[2] = SHA256;
    k->pri = 3;
    rs_links_push(a, "duplicate", "https://mirror.example.org/sub/dir/a.txt")->pri = 1;
    rs_links_push(a, "collection", "https://example.org/c?x=1")->type = "text/html";
    return rs_links_encode(ut_pool, a);
}

#define THREE_LINKS(md5sha256)                                                        \
    "    <rs:ln rel=\"describedby\" href=\"" BASE "meta/a.xml\" pri=\"3\" "           \
    "modified=\"2020-09-13T12:26:40.123457Z\"" md5sha256 " length=\"120\" "           \
    "type=\"application/xml\"/>\n"                                                    \
    "    <rs:ln rel=\"duplicate\" href=\"https://mirror.example.org/sub/dir/a.txt\" " \
    "pri=\"1\"/>\n"                                                                   \
    "    <rs:ln rel=\"collection\" href=\"https://example.org/c?x=1\" type=\"text/html\"/>\n"

/* The entry of sub/dir/a.txt up to its rs:md. */
#define A_HEAD                               \
    "  <url>\n"                              \
    "    <loc>" BASE "sub/dir/a.txt</loc>\n" \
    "    <lastmod>2020-09-13T12:26:40.123456Z</lastmod>\n"

START_TEST(links_entries)
{
    rs_entry_opts_t o;
    rs_item_t it;
    rs_record_t r;

    opts(&o, 0);
    item(&it, "sub/dir", "a.txt", "text/plain");
    it.links = three_links();
    rs_entry_from_item(&r, &it);
    ck_assert_str_eq(r.links, it.links);
    /* After rs:md, in the one attribute order, hashes by the mask. */
    assert_entry(&o, &r,
                 A_HEAD "    <rs:md hash=\"md5:" MD5 " sha-256:" SHA256
                        "\" length=\"3\" type=\"text/plain\"/>\n" THREE_LINKS(
                            " hash=\"md5:" MD5 " sha-256:" SHA256 "\"") "  </url>\n");
    o.hashes = RS_HASH_SHA1;
    assert_entry(&o, &r,
                 A_HEAD "    <rs:md hash=\"sha-1:" SHA1
                        "\" length=\"3\" type=\"text/plain\"/>\n" THREE_LINKS("") "  </url>\n");
    /* A change carries the links it was journaled with; a deletion none. */
    opts(&o, 0);
    record(&r, RS_CHANGE_UPDATED, "sub/dir", "a.txt");
    r.links = it.links;
    assert_entry(&o, &r,
                 A_HEAD "    <rs:md change=\"updated\" datetime=\"2020-09-13T12:26:41.000005Z\" "
                        "hash=\"md5:" MD5 " sha-256:" SHA256
                        "\" length=\"3\" type=\"text/plain\"/>\n" THREE_LINKS(
                            " hash=\"md5:" MD5 " sha-256:" SHA256 "\"") "  </url>\n");
    record(&r, RS_CHANGE_DELETED, "", "a.txt");
    r.links = it.links;
    assert_entry(&o, &r,
                 "  <url>\n"
                 "    <loc>" BASE "a.txt</loc>\n"
                 "    <lastmod>2020-09-13T12:26:40.123456Z</lastmod>\n"
                 "    <rs:md change=\"deleted\" datetime=\"2020-09-13T12:26:41.000005Z\"/>\n"
                 "  </url>\n");
    /* Links that do not decode are left out, by both paths. */
    record(&r, 0, "", "a.txt");
    r.links = "describedby\x1fhttp://x/\x1f"
              "0";
    assert_entry(&o, &r,
                 "  <url>\n"
                 "    <loc>" BASE "a.txt</loc>\n"
                 "    <lastmod>2020-09-13T12:26:40.123456Z</lastmod>\n"
                 "    <rs:md hash=\"md5:" MD5 " sha-256:" SHA256
                 "\" length=\"3\" type=\"text/plain\"/>\n"
                 "  </url>\n");
}
END_TEST

/* The bytes the links of r (stored, and the mirrors of o) add to its
 * entry, by both paths, within rs_entry_links_len (exactly it when
 * plain). */
static void assert_links_same(rs_entry_renderer_t *rr, const rs_entry_opts_t *o, rs_record_t *r,
                              int plain)
{
    const char *links = r->links, *with, *without;
    const char *path = *r->dir ? apr_pstrcat(ut_pool, r->dir, "/", r->name, NULL) : r->name;
    apr_int64_t bound = rs_entry_links_len(o->hashes, o->links, links, path);
    rs_entry_opts_t bare = *o;

    assert_same(rr, o, r);
    with = written(o, r);
    r->links = NULL;
    bare.links = NULL;
    without = written(&bare, r);
    r->links = links;
    ck_assert_int_ge(bound, (apr_int64_t)(strlen(with) - strlen(without)));
    if (plain) {
        ck_assert_int_eq(bound, (apr_int64_t)(strlen(with) - strlen(without)));
    }
}

/* Entries with links: the fast path gives the writer's bytes for every
 * byte value in every link string, every hash choice, odd numbers. */
START_TEST(links_render_matches_writer)
{
    static const apr_int64_t nums[] = { -1, 0, 7, 1234567890123LL, APR_INT64_MAX };
    static const apr_int64_t times[] = { -1, LASTMOD_NS, 0, -1600000000LL * 1000000000 - 5000,
                                         APR_INT64_MAX };
    apr_array_header_t *a;
    rs_entry_opts_t o;
    rs_entry_renderer_t *rr;
    rs_record_t r;
    rs_link_t *k;
    unsigned mask;
    char s[4];
    int c, i;

    for (mask = 0; mask < 16; mask++) {
        opts(&o, 0);
        o.hashes = mask;
        rr = rs_entry_renderer_create(ut_pool, &o);
        ck_assert_ptr_nonnull(rr);
        record(&r, 0, "a/b c", "n");
        r.links = three_links();
        assert_links_same(rr, &o, &r, 1);
        for (i = 0; i < 5; i++) {
            a = apr_array_make(ut_pool, 2, sizeof(rs_link_t));
            k = rs_links_push(a, "alternate", BASE "x");
            k->length = nums[i];
            k->modified_ns = times[i];
            k->pri = (int)(nums[i] % 1000000);
            k->pri = k->pri < 0 ? 0 : k->pri;
            k->hash[1] = SHA1;
            k->hash[3] = "0123";
            rs_links_push(a, "http://www.openarchives.org/rs/terms/patch", "https://m.example.org/")
                ->encoding = "gzip";
            r.links = rs_links_encode(ut_pool, a);
            assert_links_same(rr, &o, &r, 1);
        }
    }
    opts(&o, 0);
    rr = rs_entry_renderer_create(ut_pool, &o);
    for (c = 1; c < 256; c++) {
        int xmlchar = !((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c > 0x7f);
        int plain = c >= 0x20 && c < 0x7f && c != '<' && c != '>' && c != '&' && c != '"';
        if (!xmlchar) {
            continue; /* not XML characters (alone): the writer refuses them */
        }
        xcy(s, c);
        record(&r, 0, "d", "n");
        a = apr_array_make(ut_pool, 2, sizeof(rs_link_t));
        k = rs_links_push(a, s, s);
        k->type = s;
        k->encoding = s;
        k->hash[0] = MD5;
        r.links = rs_links_encode(ut_pool, a);
        assert_links_same(rr, &o, &r, plain);
        k->rel = "via";
        k->type = k->encoding = k->hash[0] = NULL;
        r.links = rs_links_encode(ut_pool, a);
        assert_links_same(rr, &o, &r, plain);
    }
    /* Many links, long ones, and then few again (the renderer's memory
     * for them is used and given back). */
    for (c = 0; c < 3; c++) {
        a = apr_array_make(ut_pool, 2, sizeof(rs_link_t));
        for (i = 0; i < (c == 1 ? 3 : 20); i++) {
            char *href = apr_palloc(ut_pool, 1200);
            memset(href, 'a' + i % 26, 1199);
            href[1199] = '\0';
            rs_links_push(a, "related", c == 0 ? href : BASE "x")->pri = i + 1;
        }
        record(&r, 0, "d", "n");
        r.links = rs_links_encode(ut_pool, a);
        assert_links_same(rr, &o, &r, 1);
        r.links = three_links();
        assert_links_same(rr, &o, &r, 1);
    }
    /* A URL base that the writer escapes. */
    opts(&o, 0);
    o.url_base = "http://example.org/a&b/";
    rr = rs_entry_renderer_create(ut_pool, &o);
    record(&r, 0, "d", "n");
    r.links = three_links();
    assert_links_same(rr, &o, &r, 1);
}
END_TEST

/* ------------------------------------------------------------ mirrors */

/* Rules with no ResourceSyncLink rule and the mirrors given: prefix and
 * pri pairs, up to a NULL prefix. */
static rs_links_t *mirrors(const char *prefix, int pri, ...)
{
    rs_links_t *l = ut_links();
    va_list ap;

    va_start(ap, pri);
    while (prefix) {
        ck_assert_ptr_null(rs_links_add_mirror(l, ut_pool, prefix, pri));
        prefix = va_arg(ap, const char *);
        pri = prefix ? va_arg(ap, int) : 0;
    }
    va_end(ap);
    return l;
}

#define MIRROR_1(path) \
    "    <rs:ln rel=\"duplicate\" href=\"https://m1.example.org/" path "\" pri=\"2\"/>\n"
#define MIRROR_2(path) "    <rs:ln rel=\"duplicate\" href=\"ftp://m2.example.org/pub/" path "\"/>\n"

/* The resource entry at BASE epath of a record() without sha-1, with the
 * <rs:ln> elements ln. */
static const char *entry_at(const char *epath, const char *ln)
{
    return apr_pstrcat(ut_pool,
                       "  <url>\n"
                       "    <loc>" BASE,
                       epath,
                       "</loc>\n"
                       "    <lastmod>2020-09-13T12:26:40.123456Z</lastmod>\n"
                       "    <rs:md hash=\"md5:" MD5 " sha-256:" SHA256
                       "\" length=\"3\" type=\"text/plain\"/>\n",
                       ln, "  </url>\n", NULL);
}

/* The mirrors come after the stored links, in the order given, with the
 * path as <loc> has it; a deletion has none. */
START_TEST(mirrors_entries)
{
    rs_entry_opts_t o;
    rs_record_t r;

    opts(&o, 0);
    o.links = mirrors("https://m1.example.org", 2, "ftp://m2.example.org/pub/", 0, NULL);
    record(&r, 0, "sub/dir", "a.txt");
    r.hash[1] = NULL;
    r.links = three_links();
    assert_entry(&o, &r,
                 A_HEAD "    <rs:md hash=\"md5:" MD5 " sha-256:" SHA256
                        "\" length=\"3\" type=\"text/plain\"/>\n" THREE_LINKS(
                            " hash=\"md5:" MD5 " sha-256:" SHA256 "\"") MIRROR_1("sub/dir/a.txt")
                            MIRROR_2("sub/dir/a.txt") "  </url>\n");
    /* Without stored links, and a path that is escaped. */
    record(&r, 0, "", "a b&\xc3\xa9.txt");
    r.hash[1] = NULL;
    assert_entry(&o, &r,
                 entry_at("a%20b%26%C3%A9.txt",
                          MIRROR_1("a%20b%26%C3%A9.txt") MIRROR_2("a%20b%26%C3%A9.txt")));
    /* A change has them too; a deletion none. */
    record(&r, RS_CHANGE_CREATED, "sub/dir", "a.txt");
    r.hash[1] = NULL;
    assert_entry(&o, &r,
                 A_HEAD "    <rs:md change=\"created\" datetime=\"2020-09-13T12:26:41.000005Z\" "
                        "hash=\"md5:" MD5 " sha-256:" SHA256
                        "\" length=\"3\" type=\"text/plain\"/>\n" MIRROR_1("sub/dir/a.txt")
                            MIRROR_2("sub/dir/a.txt") "  </url>\n");
    record(&r, RS_CHANGE_DELETED, "sub/dir", "a.txt");
    assert_entry(&o, &r,
                 A_HEAD "    <rs:md change=\"deleted\" datetime=\"2020-09-13T12:26:41.000005Z\"/>\n"
                        "  </url>\n");
    /* A prefix the writer escapes ("&" may stand in a URL). */
    o.links = mirrors("https://m.example.org/a&b/", 999999, NULL);
    record(&r, 0, "", "x");
    r.hash[1] = NULL;
    assert_entry(&o, &r,
                 entry_at("x",
                          "    <rs:ln rel=\"duplicate\" href=\"https://m.example.org/a&amp;b/x\" "
                          "pri=\"999999\"/>\n"));
}
END_TEST

/* Entries with mirrors: the fast path gives the writer's bytes for every
 * byte value in a path and in a prefix (those a mirror may hold), with
 * and without stored links, and rs_entry_links_len is their length. */
START_TEST(mirrors_render_matches_writer)
{
    rs_entry_opts_t o;
    rs_entry_renderer_t *rr;
    rs_record_t r;
    char s[4], *prefix;
    int c, pri, accepted = 0;

    opts(&o, 0);
    o.links = mirrors("https://m1.example.org/", 2, "ftp://m2.example.org/pub/", 0, NULL);
    rr = rs_entry_renderer_create(ut_pool, &o);
    for (c = 1; c < 256; c++) {
        xcy(s, c);
        record(&r, 0, "", s);
        assert_links_same(rr, &o, &r, 1);
        record(&r, 0, s, "n");
        r.links = three_links();
        assert_links_same(rr, &o, &r, 1);
        record(&r, RS_CHANGE_UPDATED, s, "n");
        assert_same(rr, &o, &r);
    }
    for (c = 1; c < 256; c++) {
        rs_links_t *l = ut_links();
        prefix = apr_psprintf(ut_pool, "http://m.example.org/a%cb/", c);
        pri = c % 3 ? c : 0;
        if (rs_links_add_mirror(l, ut_pool, prefix, pri)) {
            continue;
        }
        accepted++;
        ck_assert_ptr_null(rs_links_add_mirror(l, ut_pool, "https://m2.example.org/", 1));
        opts(&o, 0);
        o.links = l;
        rr = rs_entry_renderer_create(ut_pool, &o);
        record(&r, 0, "d", "n");
        assert_links_same(rr, &o, &r, c != '&');
        record(&r, 0, "d", "n");
        r.links = three_links();
        assert_links_same(rr, &o, &r, c != '&');
    }
    /* The printable ASCII a URL may hold without escaping but "?" and
     * "#" (no query or fragment). */
    ck_assert_int_eq(accepted, 82);
    /* A URL base the writer escapes, with mirrors. */
    opts(&o, 0);
    o.url_base = "http://example.org/a&b/";
    o.links = mirrors("https://m1.example.org/", 2, NULL);
    rr = rs_entry_renderer_create(ut_pool, &o);
    record(&r, 0, "d", "n");
    assert_links_same(rr, &o, &r, 1);
}
END_TEST

/* Timing (no assertion on time): RS_ENTRY_TIMING=N renders N resource
 * entries records/K.pdf (md5, a type) three ways: without links, with a
 * describedby link to a listed file, and with that link and a mirror;
 * best of RS_ENTRY_RUNS runs (3), in ns per entry, and a digest of the
 * bytes of the last way, which two versions of the renderer must both
 * give.  Skipped without the variable. */
#define TIMING_MIRROR "https://mirror.example.org/s/"

/* The describedby link of records/K.pdf to meta/K.xml, encoded. */
static const char *timing_link(int k)
{
    apr_array_header_t *a = apr_array_make(ut_pool, 2, sizeof(rs_link_t));
    rs_link_t *l = rs_links_push(a, "describedby", apr_psprintf(ut_pool, BASE "meta/%d.xml", k));
    l->length = 120 + k % 1000;
    l->modified_ns = LASTMOD_NS + k;
    l->type = "application/xml";
    l->hash[0] = MD5;
    return rs_links_encode(ut_pool, a);
}

/* Render n entries records/K.pdf (K < n) with rr, each with links[K]
 * (links NULL: none); their bytes into ctx (NULL: not digested).
 * Returns the bytes rendered. */
static apr_size_t render_all(rs_entry_renderer_t *rr, const char *const *names,
                             const char *const *links, int n, apr_md5_ctx_t *ctx)
{
    apr_size_t total = 0;
    rs_record_t r;
    int i;

    for (i = 0; i < n; i++) {
        const char *b;
        apr_size_t len;
        record(&r, 0, "records", names[i]);
        r.hash[1] = r.hash[2] = NULL;
        r.links = links ? links[i] : NULL;
        b = rs_entry_render(rr, &r, &len);
        ck_assert_ptr_nonnull(b);
        if (ctx) {
            apr_md5_update(ctx, b, len);
        }
        total += len;
    }
    return total;
}

START_TEST(timing)
{
    const char *env = getenv("RS_ENTRY_TIMING");
    int n = env ? atoi(env) : 0, runs, way, i;
    const char **names, **link1;
    double best[3] = { 0, 0, 0 };
    unsigned char d[APR_MD5_DIGESTSIZE];
    rs_entry_opts_t o, om;
    apr_md5_ctx_t ctx;

    if (n <= 0) {
        return; /* timing only when asked */
    }
    runs = getenv("RS_ENTRY_RUNS") ? atoi(getenv("RS_ENTRY_RUNS")) : 3;
    names = apr_palloc(ut_pool, sizeof(*names) * (apr_size_t)n);
    link1 = apr_palloc(ut_pool, sizeof(*link1) * (apr_size_t)n);
    for (i = 0; i < n; i++) {
        names[i] = apr_psprintf(ut_pool, "%d.pdf", i);
        link1[i] = timing_link(i);
    }
    opts(&o, 0);
    o.hashes = RS_HASH_MD5;
    om = o;
    om.links = mirrors(TIMING_MIRROR, 1, NULL);
    for (; runs > 0; runs--) {
        for (way = 0; way < 3; way++) {
            rs_entry_renderer_t *rr = rs_entry_renderer_create(ut_pool, way == 2 ? &om : &o);
            apr_time_t t0 = apr_time_now();
            double ns;
            ck_assert_uint_gt(render_all(rr, names, way ? link1 : NULL, n, NULL), 0);
            ns = (double)(apr_time_now() - t0) * 1000 / n;
            best[way] = best[way] == 0 || ns < best[way] ? ns : best[way];
        }
    }
    apr_md5_init(&ctx);
    render_all(rs_entry_renderer_create(ut_pool, &om), names, link1, n, &ctx);
    apr_md5_final(d, &ctx);
    printf("rs_entry timing: %d entries: %.0f ns/entry without links, %.0f with a describedby "
           "link, %.0f with the link and a mirror; digest %02x%02x%02x%02x\n",
           n, best[0], best[1], best[2], d[0], d[1], d[2], d[3]);
}
END_TEST

Suite *entry_suite(void)
{
    Suite *s = suite_create("rs_entry");
    TCase *tc = ut_tcase("entry", 30);
    tcase_add_test(tc, resource_entry);
    tcase_add_test(tc, change_entries);
    tcase_add_test(tc, encoding_listed);
    tcase_add_test(tc, spec10_entries);
    tcase_add_test(tc, odd_bytes_in_names);
    tcase_add_test(tc, render_matches_writer);
    tcase_add_test(tc, links_entries);
    tcase_add_test(tc, links_render_matches_writer);
    tcase_add_test(tc, mirrors_entries);
    tcase_add_test(tc, mirrors_render_matches_writer);
    suite_add_tcase(s, tc);
    tc = ut_tcase("entry_timing", 600);
    tcase_add_test(tc, timing);
    suite_add_tcase(s, tc);
    return s;
}
