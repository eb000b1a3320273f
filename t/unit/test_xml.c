/* SPDX-License-Identifier: Apache-2.0 */
/* test_xml.c - rs_xml: the Sitemap/ResourceSync document writer */
#include <string.h>
#include <apr_file_io.h>
#include <apr_strings.h>
#include <libxml/xmlerror.h>
#include "unit.h"
#include "rs_xml.h"

static const char *const nasty = "a&b<c>d\"e'f";

/* libxml2 reports a failing sink on stderr; the tests expect it. */
static void quiet(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

START_TEST(urlset)
{
    ut_buf_t b = { 0 };
    rs_xml_t *w = rs_xml_open(ut_pool, ut_buf_sink, &b);
    rs_xml_attr_t md[4] = {
        { "capability", "resourcelist" },
        { "at", "2023-11-14T22:13:20Z" },
        { "skipped", NULL },
        { "completed", "2023-11-14T22:13:21Z" },
    };
    rs_xml_attr_t lnx[2] = { { "type", "application/xml" }, { "none", NULL } };
    xmlDocPtr doc;
    xmlNodePtr root, url, n;

    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(rs_xml_begin(w, "urlset"), 0);
    ck_assert_int_eq(rs_xml_ln(w, "up", "http://example.org/capabilitylist.xml", lnx, 2), 0);
    ck_assert_int_eq(rs_xml_md(w, md, 4), 0);

    ck_assert_int_eq(rs_xml_entry_begin(w, "http://example.org/a.txt", "2023-01-02T03:04:05Z"), 0);
    {
        rs_xml_attr_t m[3] = { { "hash", "md5:abc" }, { "length", "12" }, { "type", NULL } };
        ck_assert_int_eq(rs_xml_md(w, m, 3), 0);
    }
    ck_assert_int_eq(rs_xml_entry_end(w), 0);

    ck_assert_int_eq(rs_xml_entry_begin(w, "http://example.org/q?x=1&y=<2>\"3\"", NULL), 0);
    {
        rs_xml_attr_t m[1] = { { "type", nasty } };
        ck_assert_int_eq(rs_xml_md(w, m, 1), 0);
        ck_assert_int_eq(rs_xml_ln(w, "alternate", nasty, NULL, 0), 0);
    }
    ck_assert_int_eq(rs_xml_entry_end(w), 0);
    ck_assert_int_eq(rs_xml_end(w), 0);

    ck_assert_uint_gt(b.len, 0);
    /* Raw text: declaration, escaped values, both namespaces. */
    ck_assert_msg(!strncmp(b.data, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 38), "%s", b.data);
    ck_assert_ptr_nonnull(strstr(b.data, "xmlns=\"" RS_XML_NS_SITEMAP "\""));
    ck_assert_ptr_nonnull(strstr(b.data, "xmlns:rs=\"" RS_XML_NS_RS "\""));
    ck_assert_ptr_nonnull(strstr(b.data, "a&amp;b&lt;c&gt;d&quot;e'f"));
    ck_assert_ptr_nonnull(strstr(b.data, "q?x=1&amp;y=&lt;2&gt;"));
    ck_assert_ptr_null(strstr(b.data, "<2>"));
    ck_assert_ptr_null(strstr(b.data, "skipped"));
    ck_assert_ptr_null(strstr(b.data, "none="));

    doc = ut_xml_parse(b.data, b.len);
    root = xmlDocGetRootElement(doc);
    ck_assert_str_eq((const char *)root->name, "urlset");
    ck_assert_ptr_nonnull(root->ns);
    ck_assert_str_eq((const char *)root->ns->href, UT_NS_SM);

    n = ut_xml_ln(root, "up");
    ck_assert_ptr_nonnull(n);
    ck_assert_str_eq(ut_xml_attr(n, "href"), "http://example.org/capabilitylist.xml");
    ck_assert_str_eq(ut_xml_attr(n, "type"), "application/xml");
    ck_assert_ptr_null(ut_xml_attr(n, "none"));
    ck_assert_int_eq(ut_xml_count(root, UT_NS_RS, "ln"), 1);

    ck_assert_int_eq(ut_xml_count(root, UT_NS_RS, "md"), 1);
    n = ut_xml_child(root, UT_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(n, "capability"), "resourcelist");
    ck_assert_str_eq(ut_xml_attr(n, "at"), "2023-11-14T22:13:20Z");
    ck_assert_str_eq(ut_xml_attr(n, "completed"), "2023-11-14T22:13:21Z");
    ck_assert_ptr_null(ut_xml_attr(n, "skipped"));

    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), 2);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "sitemap"), 0);
    url = ut_xml_child(root, UT_NS_SM, "url", 0);
    ck_assert_str_eq(ut_xml_child_text(url, UT_NS_SM, "loc"), "http://example.org/a.txt");
    ck_assert_str_eq(ut_xml_child_text(url, UT_NS_SM, "lastmod"), "2023-01-02T03:04:05Z");
    n = ut_xml_child(url, UT_NS_RS, "md", 0);
    ck_assert_ptr_nonnull(n);
    ck_assert_str_eq(ut_xml_attr(n, "hash"), "md5:abc");
    ck_assert_str_eq(ut_xml_attr(n, "length"), "12");
    ck_assert_ptr_null(ut_xml_attr(n, "type"));

    url = ut_xml_child(root, UT_NS_SM, "url", 1);
    ck_assert_str_eq(ut_xml_child_text(url, UT_NS_SM, "loc"),
                     "http://example.org/q?x=1&y=<2>\"3\"");
    ck_assert_ptr_null(ut_xml_child(url, UT_NS_SM, "lastmod", 0));
    ck_assert_str_eq(ut_xml_attr(ut_xml_child(url, UT_NS_RS, "md", 0), "type"), nasty);
    n = ut_xml_ln(url, "alternate");
    ck_assert_ptr_nonnull(n);
    ck_assert_str_eq(ut_xml_attr(n, "href"), nasty);
    /* <loc> comes first in an entry. */
    n = url->children;
    while (n && n->type != XML_ELEMENT_NODE) {
        n = n->next;
    }
    ck_assert_str_eq((const char *)n->name, "loc");
}
END_TEST

START_TEST(sitemapindex)
{
    ut_buf_t b = { 0 };
    rs_xml_t *w = rs_xml_open(ut_pool, ut_buf_sink, &b);
    rs_xml_attr_t md[1] = { { "capability", "resourcelist" } };
    rs_xml_attr_t at[1] = { { "at", "2023-11-14T22:13:20Z" } };
    xmlDocPtr doc;
    xmlNodePtr root, sm;
    int i;

    ck_assert_int_eq(rs_xml_begin(w, "sitemapindex"), 0);
    ck_assert_int_eq(rs_xml_ln(w, "up", "http://example.org/cap.xml?a=1&b=2", NULL, 0), 0);
    ck_assert_int_eq(rs_xml_md(w, md, 1), 0);
    for (i = 1; i <= 3; i++) {
        const char *loc = apr_psprintf(ut_pool, "http://example.org/rl/7-%d.xml", i);
        ck_assert_int_eq(rs_xml_entry_begin(w, loc, NULL), 0);
        ck_assert_int_eq(rs_xml_md(w, at, 1), 0);
        ck_assert_int_eq(rs_xml_entry_end(w), 0);
    }
    ck_assert_int_eq(rs_xml_end(w), 0);
    ck_assert_ptr_nonnull(strstr(b.data, "cap.xml?a=1&amp;b=2"));

    doc = ut_xml_parse(b.data, b.len);
    root = xmlDocGetRootElement(doc);
    ck_assert_str_eq((const char *)root->name, "sitemapindex");
    ck_assert_str_eq((const char *)root->ns->href, UT_NS_SM);
    ck_assert_str_eq(ut_xml_attr(ut_xml_ln(root, "up"), "href"),
                     "http://example.org/cap.xml?a=1&b=2");
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "sitemap"), 3);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), 0);
    for (i = 0; i < 3; i++) {
        sm = ut_xml_child(root, UT_NS_SM, "sitemap", i);
        ck_assert_str_eq(ut_xml_child_text(sm, UT_NS_SM, "loc"),
                         apr_psprintf(ut_pool, "http://example.org/rl/7-%d.xml", i + 1));
        ck_assert_str_eq(ut_xml_attr(ut_xml_child(sm, UT_NS_RS, "md", 0), "at"),
                         "2023-11-14T22:13:20Z");
    }
}
END_TEST

START_TEST(non_ascii_and_many_entries)
{
    /* Enough output for several sink calls; memory use must not matter. */
    ut_buf_t b = { 0 };
    rs_xml_t *w = rs_xml_open(ut_pool, ut_buf_sink, &b);
    xmlDocPtr doc;
    xmlNodePtr root;
    const int n = 5000;
    int i;

    ck_assert_int_eq(rs_xml_begin(w, "urlset"), 0);
    for (i = 0; i < n; i++) {
        const char *loc = apr_psprintf(ut_pool, "http://example.org/caf%%C3%%A9/%d&x", i);
        ck_assert_int_eq(rs_xml_entry_begin(w, loc, "2023-11-14T22:13:20Z"), 0);
        ck_assert_int_eq(rs_xml_entry_end(w), 0);
    }
    ck_assert_int_eq(rs_xml_end(w), 0);
    ck_assert_int_gt(b.calls, 1);
    doc = ut_xml_parse(b.data, b.len);
    root = xmlDocGetRootElement(doc);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), n);
    ck_assert_str_eq(ut_xml_child_text(ut_xml_child(root, UT_NS_SM, "url", n - 1), UT_NS_SM, "loc"),
                     apr_psprintf(ut_pool, "http://example.org/caf%%C3%%A9/%d&x", n - 1));
}
END_TEST

START_TEST(utf8_text)
{
    ut_buf_t b = { 0 };
    rs_xml_t *w = rs_xml_open(ut_pool, ut_buf_sink, &b);
    rs_xml_attr_t m[1] = { { "type", "text/plain; title=\xC3\xA9t\xC3\xA9" } };
    xmlNodePtr root;

    ck_assert_int_eq(rs_xml_begin(w, "urlset"), 0);
    ck_assert_int_eq(rs_xml_entry_begin(w, "http://example.org/\xC3\xA9", NULL), 0);
    ck_assert_int_eq(rs_xml_md(w, m, 1), 0);
    ck_assert_int_eq(rs_xml_entry_end(w), 0);
    ck_assert_int_eq(rs_xml_end(w), 0);
    root = xmlDocGetRootElement(ut_xml_parse(b.data, b.len));
    ck_assert_str_eq(ut_xml_child_text(ut_xml_child(root, UT_NS_SM, "url", 0), UT_NS_SM, "loc"),
                     "http://example.org/\xC3\xA9");
    ck_assert_str_eq(
        ut_xml_attr(ut_xml_child(ut_xml_child(root, UT_NS_SM, "url", 0), UT_NS_RS, "md", 0),
                    "type"),
        "text/plain; title=\xC3\xA9t\xC3\xA9");
}
END_TEST

START_TEST(sink_failure)
{
    ut_buf_t b = { 0 };
    rs_xml_t *w = rs_xml_open(ut_pool, ut_buf_sink, &b);
    int i, rc = 0;

    xmlSetGenericErrorFunc(NULL, quiet);
    b.fail = 1;
    rc |= rs_xml_begin(w, "urlset");
    for (i = 0; i < 2000 && rc == 0; i++) {
        rc |= rs_xml_entry_begin(w, "http://example.org/some/long/enough/path/name.txt", NULL);
        rc |= rs_xml_entry_end(w);
    }
    if (rc == 0) {
        rc = rs_xml_end(w);
    }
    xmlSetGenericErrorFunc(NULL, NULL);
    ck_assert_int_eq(rc, -1);
    ck_assert_int_ge(b.calls, 1);
    ck_assert_uint_eq(b.len, 0);
}
END_TEST

START_TEST(sink_failure_at_flush)
{
    /* A failure of the final flush is reported by rs_xml_end. */
    ut_buf_t b = { 0 };
    rs_xml_t *w = rs_xml_open(ut_pool, ut_buf_sink, &b);
    ck_assert_int_eq(rs_xml_begin(w, "urlset"), 0);
    ck_assert_int_eq(rs_xml_entry_begin(w, "http://example.org/", NULL), 0);
    ck_assert_int_eq(rs_xml_entry_end(w), 0);
    ck_assert_int_eq(b.calls, 0); /* still buffered */
    xmlSetGenericErrorFunc(NULL, quiet);
    b.fail = 1;
    ck_assert_int_eq(rs_xml_end(w), -1);
    xmlSetGenericErrorFunc(NULL, NULL);
    ck_assert_int_ge(b.calls, 1);
}
END_TEST

START_TEST(to_file)
{
    const char *path = ut_path(ut_tempdir("xml"), "out.xml");
    apr_file_t *f;
    rs_xml_t *w;
    xmlNodePtr root;

    ck_assert_int_eq(apr_file_open(&f, path,
                                   APR_FOPEN_WRITE | APR_FOPEN_CREATE | APR_FOPEN_BUFFERED,
                                   APR_FPROT_OS_DEFAULT, ut_pool),
                     APR_SUCCESS);
    w = rs_xml_open_file(ut_pool, f);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(rs_xml_begin(w, "urlset"), 0);
    ck_assert_int_eq(rs_xml_entry_begin(w, "http://example.org/a%20b", "1970-01-01T00:00:00Z"), 0);
    ck_assert_int_eq(rs_xml_entry_end(w), 0);
    ck_assert_int_eq(rs_xml_end(w), 0);
    ck_assert_int_eq(apr_file_close(f), APR_SUCCESS);

    root = xmlDocGetRootElement(ut_xml_parse_file(path));
    ck_assert_str_eq((const char *)root->name, "urlset");
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), 1);
    ck_assert_str_eq(ut_xml_child_text(ut_xml_child(root, UT_NS_SM, "url", 0), UT_NS_SM, "loc"),
                     "http://example.org/a%20b");
}
END_TEST

START_TEST(empty_document)
{
    ut_buf_t b = { 0 };
    rs_xml_t *w = rs_xml_open(ut_pool, ut_buf_sink, &b);
    xmlNodePtr root;
    ck_assert_int_eq(rs_xml_begin(w, "urlset"), 0);
    ck_assert_int_eq(rs_xml_end(w), 0);
    root = xmlDocGetRootElement(ut_xml_parse(b.data, b.len));
    ck_assert_str_eq((const char *)root->name, "urlset");
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), 0);
}
END_TEST

/* A write that fails on a file reports its cause: /dev/full answers every
 * write with ENOSPC, as a full disk does. */
START_TEST(file_error_cause)
{
    apr_file_t *f;
    rs_xml_t *w;
    int i, rc = 0;

    ck_assert_int_eq(apr_file_open(&f, "/dev/full", APR_FOPEN_WRITE | APR_FOPEN_BUFFERED,
                                   APR_FPROT_OS_DEFAULT, ut_pool),
                     APR_SUCCESS);
    w = rs_xml_open_file(ut_pool, f);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(rs_xml_error(w), APR_EGENERAL); /* nothing failed yet */
    rc |= rs_xml_begin(w, "urlset");
    for (i = 0; i < 2000 && rc == 0; i++) {
        rc |= rs_xml_entry_begin(w, "http://example.org/a-resource-with-a-long-name", NULL);
        rc |= rs_xml_entry_end(w);
    }
    /* 2,000 entries are far more than libxml2's and APR's buffers hold: a
     * write reached the file and failed. */
    ck_assert_int_ne(rc, 0);
    ck_assert(APR_STATUS_IS_ENOSPC(rs_xml_error(w)));
    apr_file_close(f);
}
END_TEST

Suite *xml_suite(void)
{
    Suite *s = suite_create("rs_xml");
    TCase *tc = ut_tcase("writer", 20);
    tcase_add_test(tc, urlset);
    tcase_add_test(tc, sitemapindex);
    tcase_add_test(tc, non_ascii_and_many_entries);
    tcase_add_test(tc, utf8_text);
    tcase_add_test(tc, empty_document);
    tcase_add_test(tc, to_file);
    tcase_add_test(tc, sink_failure);
    tcase_add_test(tc, sink_failure_at_flush);
    tcase_add_test(tc, file_error_cause);
    suite_add_tcase(s, tc);
    return s;
}
