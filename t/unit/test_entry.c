/* SPDX-License-Identifier: Apache-2.0 */
/* test_entry.c - rs_entry: the <url> entries of every document */
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
        s[0] = 'x';
        s[1] = (char)c;
        s[2] = 'y';
        s[3] = '\0';
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

/* The bytes the links of r add to its entry, by both paths, within
 * rs_entry_links_len (exactly it when plain). */
static void assert_links_same(rs_entry_renderer_t *rr, const rs_entry_opts_t *o, rs_record_t *r,
                              int plain)
{
    const char *links = r->links, *with, *without;
    apr_int64_t bound = rs_entry_links_len(o->hashes, links);

    assert_same(rr, o, r);
    with = written(o, r);
    r->links = NULL;
    without = written(o, r);
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
        s[0] = 'x';
        s[1] = (char)c;
        s[2] = 'y';
        s[3] = '\0';
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

/* The same with a mirror after it, as rows stored it before mirrors were
 * rendered from the rules. */
static const char *timing_link_mirror(int k)
{
    apr_array_header_t *a = rs_links_decode(ut_pool, timing_link(k));
    rs_links_push(a, "duplicate", apr_psprintf(ut_pool, TIMING_MIRROR "records/%d.pdf", k))->pri =
        1;
    return rs_links_encode(ut_pool, a);
}

START_TEST(timing)
{
    const char *env = getenv("RS_ENTRY_TIMING");
    int n = env ? atoi(env) : 0, runs, way, i;
    const char **names, **link1, **link2;
    double best[3] = { 0, 0, 0 };
    unsigned char d[APR_MD5_DIGESTSIZE];
    rs_entry_opts_t o;

    if (n <= 0) {
        return; /* timing only when asked */
    }
    runs = getenv("RS_ENTRY_RUNS") ? atoi(getenv("RS_ENTRY_RUNS")) : 3;
    names = apr_palloc(ut_pool, sizeof(*names) * (apr_size_t)n);
    link1 = apr_palloc(ut_pool, sizeof(*link1) * (apr_size_t)n);
    link2 = apr_palloc(ut_pool, sizeof(*link2) * (apr_size_t)n);
    for (i = 0; i < n; i++) {
        names[i] = apr_psprintf(ut_pool, "%d.pdf", i);
        link1[i] = timing_link(i);
        link2[i] = timing_link_mirror(i);
    }
    opts(&o, 0);
    o.hashes = RS_HASH_MD5;
    for (; runs > 0; runs--) {
        for (way = 0; way < 3; way++) {
            rs_entry_renderer_t *rr = rs_entry_renderer_create(ut_pool, &o);
            apr_md5_ctx_t ctx;
            apr_time_t t0 = apr_time_now();
            double ns;
            rs_record_t r;
            apr_md5_init(&ctx);
            for (i = 0; i < n; i++) {
                const char *b;
                apr_size_t len;
                record(&r, 0, "records", names[i]);
                r.hash[1] = r.hash[2] = NULL;
                r.links = way == 0 ? NULL : way == 1 ? link1[i] : link2[i];
                b = rs_entry_render(rr, &r, &len);
                ck_assert_ptr_nonnull(b);
                apr_md5_update(&ctx, b, len);
            }
            ns = (double)(apr_time_now() - t0) * 1000 / n;
            best[way] = best[way] == 0 || ns < best[way] ? ns : best[way];
            apr_md5_final(d, &ctx);
        }
    }
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
    suite_add_tcase(s, tc);
    tc = ut_tcase("entry_timing", 600);
    tcase_add_test(tc, timing);
    suite_add_tcase(s, tc);
    return s;
}
