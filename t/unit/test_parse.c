/* SPDX-License-Identifier: Apache-2.0 */
/* test_parse.c - rs_parse: request paths and directive values */
#include <string.h>
#include "unit.h"
#include "rs_hash.h"
#include "rs_parse.h"

/* ---- request paths ---- */

static rs_request_path_t path_of(const char *rest)
{
    rs_request_path_t rp;
    memset(&rp, 0, sizeof(rp));
    ck_assert_msg(rs_parse_request_path(rest, &rp) == 1, "rejected: %s", rest);
    return rp;
}

START_TEST(request_path_kinds)
{
    rs_request_path_t rp = path_of("/main/capabilitylist.xml");
    ck_assert_int_eq(rp.set_len, 4);
    ck_assert(!strncmp(rp.set, "main", 4));
    ck_assert_int_eq(rp.kind, RS_DOC_CAPABILITY);
    ck_assert_ptr_null(rp.arg);

    ck_assert_int_eq(path_of("/s/resourcelist.xml").kind, RS_DOC_RESOURCELIST);
    ck_assert_int_eq(path_of("/s/changelist.xml").kind, RS_DOC_CHANGELIST);
    rp = path_of("/s/resourcelist/3-1.xml");
    ck_assert_int_eq(rp.kind, RS_DOC_RESOURCELIST_PART);
    ck_assert_str_eq(rp.arg, "3-1.xml");
    rp = path_of("/s/changelist/17.xml");
    ck_assert_int_eq(rp.kind, RS_DOC_CHANGELIST_PART);
    ck_assert_str_eq(rp.arg, "17.xml");
    ck_assert_int_eq(path_of("/s/resourcedump.xml").kind, RS_DOC_RESOURCEDUMP);
    ck_assert_ptr_null(path_of("/s/resourcedump.xml").arg);
    rp = path_of("/s/resourcedump/0123abcd-3-1.zip");
    ck_assert_int_eq(rp.kind, RS_DOC_RESOURCEDUMP_PART);
    ck_assert_str_eq(rp.arg, "0123abcd-3-1.zip");
    ck_assert_int_eq(path_of("/s/resourcedump").kind, RS_DOC_NONE);
    ck_assert_int_eq(path_of("/s/changedump.xml").kind, RS_DOC_CHANGEDUMP);
    ck_assert_ptr_null(path_of("/s/changedump.xml").arg);
    rp = path_of("/s/changedump/0123abcd-7.zip");
    ck_assert_int_eq(rp.kind, RS_DOC_CHANGEDUMP_PART);
    ck_assert_str_eq(rp.arg, "0123abcd-7.zip");
    ck_assert_int_eq(path_of("/s/changedump").kind, RS_DOC_NONE);
    ck_assert_int_eq(path_of("/s/changedump.zip").kind, RS_DOC_NONE);
    ck_assert_int_eq(path_of("/s/resourcedump.zip").kind, RS_DOC_NONE);
    rp = path_of("/s/notify/change");
    ck_assert_int_eq(rp.kind, RS_DOC_NOTIFY);
    ck_assert_str_eq(rp.arg, "change");
    rp = path_of("/s/notify/framework");
    ck_assert_int_eq(rp.kind, RS_DOC_NOTIFY);
    ck_assert_str_eq(rp.arg, "framework");
    ck_assert_int_eq(path_of("/s/notify/").kind, RS_DOC_NONE);
    ck_assert_int_eq(path_of("/s/notify/other").kind, RS_DOC_NONE);
    ck_assert_int_eq(path_of("/s/notify/change/").kind, RS_DOC_NONE);
    ck_assert_int_eq(path_of("/s/notify").kind, RS_DOC_NONE);
    /* The rest after "resourcelist/" is the caller's to check. */
    rp = path_of("/s/resourcelist/");
    ck_assert_int_eq(rp.kind, RS_DOC_RESOURCELIST_PART);
    ck_assert_str_eq(rp.arg, "");
}
END_TEST

START_TEST(request_path_other)
{
    rs_request_path_t rp;
    /* Shapes that name no set. */
    ck_assert_int_eq(rs_parse_request_path("", &rp), 0);
    ck_assert_int_eq(rs_parse_request_path("/", &rp), 0);
    ck_assert_int_eq(rs_parse_request_path("/main", &rp), 0);
    ck_assert_int_eq(rs_parse_request_path("main/resourcelist.xml", &rp), 0);
    /* A set, but no document of a set. */
    ck_assert_int_eq(path_of("/main/").kind, RS_DOC_NONE);
    ck_assert_int_eq(path_of("/main/resourcelist.xmlx").kind, RS_DOC_NONE);
    ck_assert_int_eq(path_of("/main/Resourcelist.xml").kind, RS_DOC_NONE);
    ck_assert_int_eq(path_of("/main/x/resourcelist.xml").kind, RS_DOC_NONE);
    ck_assert_int_eq(path_of("/main/resourcelist").kind, RS_DOC_NONE);
    ck_assert_int_eq(path_of("/main/capabilitylist.xml/").kind, RS_DOC_NONE);
    /* An empty set name is split as such (no set matches it). */
    rp = path_of("//resourcelist.xml");
    ck_assert_int_eq(rp.set_len, 0);
    ck_assert_int_eq(rp.kind, RS_DOC_RESOURCELIST);
}
END_TEST

START_TEST(part_valid)
{
    apr_uint64_t gen = 0;
    int n = 0;
    ck_assert(rs_parse_part("1-1.xml", &gen, &n));
    ck_assert(gen == 1 && n == 1);
    ck_assert(rs_parse_part("42-7.xml", &gen, &n));
    ck_assert(gen == 42 && n == 7);
    /* Boundaries: 18 digits of generation, 9 of part. */
    ck_assert(rs_parse_part("999999999999999999-999999999.xml", &gen, &n));
    ck_assert(gen == APR_UINT64_C(999999999999999999) && n == 999999999);
    ck_assert(rs_parse_part("100000000000000000-100000000.xml", &gen, &n));
    ck_assert(gen == APR_UINT64_C(100000000000000000) && n == 100000000);
}
END_TEST

START_TEST(part_invalid)
{
    static const char *const bad[] = { "",
                                       ".xml",
                                       "-1.xml",
                                       "1-.xml",
                                       "1.xml",
                                       "1-1",
                                       "1-1.xm",
                                       "1-1.xml/",
                                       "1-1.xmlx",
                                       "0-1.xml",
                                       "1-0.xml",
                                       "01-1.xml",
                                       "1-01.xml",
                                       "+1-1.xml",
                                       "1-+1.xml",
                                       "-1-1.xml",
                                       " 1-1.xml",
                                       "1 -1.xml",
                                       "1- 1.xml",
                                       "1-1 .xml",
                                       "1--1.xml",
                                       "1-1-1.xml",
                                       "1-1.XML",
                                       "a-1.xml",
                                       "1-b.xml",
                                       "0x1-1.xml",
                                       "1000000000000000000-1.xml",     /* 19 digits */
                                       "99999999999999999999999-1.xml", /* beyond 64 bits */
                                       "1-1000000000.xml",              /* 10 digits */
                                       "1-4294967297.xml",              /* would wrap an int */
                                       NULL };
    apr_uint64_t gen = 77;
    int n = 77, i;
    for (i = 0; bad[i]; i++) {
        ck_assert_msg(!rs_parse_part(bad[i], &gen, &n), "accepted: '%s'", bad[i]);
    }
    ck_assert(gen == 77 && n == 77); /* untouched */
}
END_TEST

START_TEST(dump_part_parse)
{
    static const char *const bad[] = { "",
                                       ".zip",
                                       "0123456789abcdef",
                                       "0123456789abcdef.xml.zip",
                                       "0123456789abcdef.zip/",
                                       "0123456789abcdef.zipx",
                                       "0123456789abcdef.ZIP",
                                       "0123456789abcdef.tar",
                                       "0123456789ABCDEF.zip",
                                       "0123456789abcde.zip",
                                       "0123456789abcdef0.zip",
                                       "0123456789abcdeg.zip",
                                       "../0123456789abcdef.zip",
                                       "0123456789abcdef.zip\n",
                                       "12-3.zip",
                                       "-0123456789abcdef.zip",
                                       "0123456789abcdef-1.zip",
                                       NULL };
    char key[RS_PARSE_DUMP_KEY_LEN + 1] = "untouched";
    int m = 77, i;

    for (i = 0; bad[i]; i++) {
        ck_assert_msg(!rs_parse_dump_part(bad[i], key, &m), "accepted: '%s'", bad[i]);
    }
    ck_assert_str_eq(key, "untouched");
    ck_assert_int_eq(m, 77);
    ck_assert(rs_parse_dump_part("0123456789abcdef.zip", key, &m));
    ck_assert_str_eq(key, "0123456789abcdef");
    ck_assert_int_eq(m, 0);
    ck_assert(rs_parse_dump_part("ffffffffffffffff.xml", key, &m));
    ck_assert_str_eq(key, "ffffffffffffffff");
    ck_assert_int_eq(m, 1);
}
END_TEST

START_TEST(cdump_index_part_parse)
{
    static const char *const bad[] = {
        "part-0.xml",  "part-01.xml",         "part-1.zip", "part-.xml",
        "part-1.xml.", "part-1234567890.xml", "Part-1.xml", "part-1",
        "1.xml",       "part-1-2.xml",        "",           NULL
    };
    int i, n = -1;

    for (i = 0; bad[i]; i++) {
        ck_assert_msg(!rs_parse_cdump_index_part(bad[i], &n), "accepted: '%s'", bad[i]);
    }
    ck_assert_int_eq(n, -1);
    ck_assert(rs_parse_cdump_index_part("part-1.xml", &n) && n == 1);
    ck_assert(rs_parse_cdump_index_part("part-999999999.xml", &n) && n == 999999999);
    /* Never a package's name, nor a package's a part's. */
    ck_assert(!rs_parse_cdump_part("part-1.xml", &(apr_int64_t){ 0 }, &i, &n));
}
END_TEST

START_TEST(cdump_part_parse)
{
    static const char *const bad[] = { "",
                                       ".zip",
                                       "0.zip",
                                       "01.xml",
                                       "+1.zip",
                                       "-1.zip",
                                       "1",
                                       "1.ZIP",
                                       "1.zip/",
                                       "1-0.zip",
                                       "1-02.zip",
                                       "1-.zip",
                                       "1--2.zip",
                                       "1-2-3.zip",
                                       "1-2",
                                       "1-x.zip",
                                       "1-2.zip/",
                                       "1-+2.zip",
                                       "1-1234567890.zip", /* 10 digits */
                                       "1.zipx",
                                       "1.gz",
                                       "x1.zip",
                                       "1000000000000000.zip", /* 16 digits */
                                       "99999999999999999999.xml",
                                       "../1.zip",
                                       NULL };
    apr_int64_t id = 77;
    int i, m = 77, rev = 77;
    for (i = 0; bad[i]; i++) {
        ck_assert_msg(!rs_parse_cdump_part(bad[i], &id, &rev, &m), "accepted: '%s'", bad[i]);
    }
    ck_assert(id == 77 && m == 77 && rev == 77); /* untouched */
    ck_assert(rs_parse_cdump_part("12.zip", &id, &rev, &m) && id == 12 && rev == 0 && m == 0);
    ck_assert(rs_parse_cdump_part("999999999999999.xml", &id, &rev, &m)
              && id == APR_INT64_C(999999999999999) && rev == 0 && m == 1);
    ck_assert(rs_parse_cdump_part("12-3.zip", &id, &rev, &m) && id == 12 && rev == 3 && m == 0);
    ck_assert(rs_parse_cdump_part("7-999999999.xml", &id, &rev, &m) && id == 7 && rev == 999999999
              && m == 1);
}
END_TEST

START_TEST(id_parse)
{
    static const char *const bad[] = { "",
                                       ".xml",
                                       "0.xml",
                                       "00.xml",
                                       "01.xml",
                                       "+1.xml",
                                       "-1.xml",
                                       " 1.xml",
                                       "1 .xml",
                                       "1.xmlx",
                                       "1.XML",
                                       "1",
                                       "1.xml/",
                                       "x1.xml",
                                       "1x.xml",
                                       "1-1.xml",
                                       "1000000000000000.xml", /* 16 digits */
                                       "99999999999999999999.xml",
                                       NULL };
    apr_int64_t id = 0;
    int i;
    ck_assert(rs_parse_id("1.xml", ".xml", &id) && id == 1);
    ck_assert(rs_parse_id("1234.xml", ".xml", &id) && id == 1234);
    ck_assert(rs_parse_id("999999999999999.xml", ".xml", &id)
              && id == APR_INT64_C(999999999999999));
    ck_assert(rs_parse_id("5", "", &id) && id == 5);
    id = 77;
    for (i = 0; bad[i]; i++) {
        ck_assert_msg(!rs_parse_id(bad[i], ".xml", &id), "accepted: '%s'", bad[i]);
    }
    ck_assert(id == 77);
}
END_TEST

START_TEST(history_parse)
{
    static const char *const bad[] = { "",           "-",         "0a1b2c3d",  "0a1b2c3-",
                                       "0a1b2c3d4-", "0A1B2C3D-", "0a1b2c3g-", " a1b2c3d-",
                                       "0a1b2c3d_",  "0a1b2c3d/", NULL };
    char h[RS_HISTORY_LEN + 1] = "unset";
    const char *rest;
    int i;

    rest = rs_parse_history("0a1b2c3d-17.xml", h);
    ck_assert_str_eq(rest, "17.xml");
    ck_assert_str_eq(h, "0a1b2c3d");
    rest = rs_parse_history("ffffffff-", h);
    ck_assert_str_eq(rest, "");
    ck_assert_str_eq(h, "ffffffff");
    for (i = 0; bad[i]; i++) {
        ck_assert_msg(!rs_parse_history(bad[i], h), "accepted: '%s'", bad[i]);
    }
    ck_assert_str_eq(h, "ffffffff");
    ck_assert(rs_parse_history_id("0a1b2c3d"));
    ck_assert(!rs_parse_history_id("0a1b2c3d-"));
    ck_assert(!rs_parse_history_id("0a1b2c3"));
    ck_assert(!rs_parse_history_id("0a1b2c3dd"));
    ck_assert(!rs_parse_history_id("0a1b2c3D"));
}
END_TEST

/* ---- directive values ---- */

START_TEST(int_values)
{
    apr_int64_t v = 0;
    ck_assert(rs_parse_int("1", 1, 50000, &v) && v == 1);
    ck_assert(rs_parse_int("50000", 1, 50000, &v) && v == 50000);
    /* What apr_strtoi64 reads: leading zeros, one sign, leading space. */
    ck_assert(rs_parse_int("007", 1, 50000, &v) && v == 7);
    ck_assert(rs_parse_int("+9", 1, 50000, &v) && v == 9);
    ck_assert(rs_parse_int(" 10", 1, 50000, &v) && v == 10);
    ck_assert(rs_parse_int("-5", -10, 10, &v) && v == -5);
    v = 77;
    ck_assert(!rs_parse_int("0", 1, 50000, &v));
    ck_assert(!rs_parse_int("50001", 1, 50000, &v));
    ck_assert(!rs_parse_int("-1", 1, 50000, &v));
    ck_assert(!rs_parse_int("", 1, 50000, &v));
    ck_assert(!rs_parse_int(" ", 1, 50000, &v));
    ck_assert(!rs_parse_int("+", 1, 50000, &v));
    ck_assert(!rs_parse_int("10 ", 1, 50000, &v));
    ck_assert(!rs_parse_int("10s", 1, 50000, &v));
    ck_assert(!rs_parse_int("1e3", 1, 50000, &v));
    ck_assert(!rs_parse_int("0x10", 1, 50000, &v));
    ck_assert(!rs_parse_int("1.5", 1, 50000, &v));
    ck_assert(!rs_parse_int("99999999999999999999", 1, 50000, &v));
    ck_assert(!rs_parse_int("-99999999999999999999", 1, 50000, &v));
    ck_assert(!rs_parse_int("18446744073709551617", 1, 50000, &v)); /* 2^64 + 1 */
    ck_assert(v == 77);
}
END_TEST

START_TEST(delays)
{
    apr_interval_time_t d = 77;
    ck_assert(rs_parse_delay("100ms", &d) && d == apr_time_from_msec(100));
    ck_assert(rs_parse_delay("0ms", &d) && d == 0);
    ck_assert(rs_parse_delay("0", &d) && d == 0);
    ck_assert(rs_parse_delay("2s", &d) && d == apr_time_from_sec(2));
    ck_assert(rs_parse_delay("3600000ms", &d) && d == apr_time_from_sec(3600));
    ck_assert(rs_parse_delay("1h", &d) && d == apr_time_from_sec(3600));
    d = 77;
    ck_assert(!rs_parse_delay("3600001ms", &d));
    ck_assert(!rs_parse_delay("2h", &d));
    ck_assert(!rs_parse_delay("ms", &d));
    ck_assert(!rs_parse_delay("-1ms", &d));
    ck_assert(!rs_parse_delay("1.5ms", &d));
    ck_assert(!rs_parse_delay("10 ms", &d));
    ck_assert(!rs_parse_delay("", &d));
    ck_assert(d == 77);
}
END_TEST

START_TEST(durations)
{
    apr_interval_time_t d = 0;
    ck_assert(rs_parse_duration("90", &d) && d == apr_time_from_sec(90));
    ck_assert(rs_parse_duration("90s", &d) && d == apr_time_from_sec(90));
    ck_assert(rs_parse_duration("15m", &d) && d == apr_time_from_sec(900));
    ck_assert(rs_parse_duration("12h", &d) && d == apr_time_from_sec(43200));
    ck_assert(rs_parse_duration("30d", &d) && d == apr_time_from_sec(30 * 86400));
    ck_assert(rs_parse_duration("1s", &d) && d == apr_time_from_sec(1));
    ck_assert(rs_parse_duration("007m", &d) && d == apr_time_from_sec(420));
    /* The upper bound, 3650 days, in every unit. */
    ck_assert(rs_parse_duration("3650d", &d) && d == apr_time_from_sec(3650 * 86400LL));
    ck_assert(rs_parse_duration("87600h", &d));
    ck_assert(rs_parse_duration("5256000m", &d));
    ck_assert(rs_parse_duration("315360000", &d));
    d = 77;
    ck_assert(!rs_parse_duration("3651d", &d));
    ck_assert(!rs_parse_duration("87601h", &d));
    ck_assert(!rs_parse_duration("5256001m", &d));
    ck_assert(!rs_parse_duration("315360001s", &d));
    ck_assert(!rs_parse_duration("0", &d));
    ck_assert(!rs_parse_duration("0d", &d));
    ck_assert(!rs_parse_duration("-1d", &d));
    ck_assert(!rs_parse_duration("", &d));
    ck_assert(!rs_parse_duration("d", &d));
    ck_assert(!rs_parse_duration("1w", &d));
    ck_assert(!rs_parse_duration("1D", &d));
    ck_assert(!rs_parse_duration("1dd", &d));
    ck_assert(!rs_parse_duration("1d ", &d));
    ck_assert(!rs_parse_duration("1 d", &d));
    ck_assert(!rs_parse_duration("1.5h", &d));
    ck_assert(!rs_parse_duration("99999999999999999999", &d));
    ck_assert(!rs_parse_duration("9223372036854775807d", &d));
    ck_assert(!rs_parse_duration("-9223372036854775808", &d));
    ck_assert(d == 77);
}
END_TEST

START_TEST(hash_lists)
{
    const char *one[] = { "md5" };
    const char *two[] = { "SHA-256", "md5" };
    const char *all[] = { "md5", "sha-1", "sha-256", "sha-512", "md5" };
    const char *none[] = { "None" };
    const char *none_mixed[] = { "md5", "none" };
    const char *unknown[] = { "md5", "sha256", "none" };
    unsigned mask = 99;
    int bad = -1;

    ck_assert_int_eq(rs_parse_hashes(1, one, &mask, &bad), RS_PARSE_OK);
    ck_assert_uint_eq(mask, RS_HASH_MD5);
    ck_assert_int_eq(rs_parse_hashes(2, two, &mask, &bad), RS_PARSE_OK);
    ck_assert_uint_eq(mask, RS_HASH_MD5 | RS_HASH_SHA256);
    ck_assert_int_eq(rs_parse_hashes(5, all, &mask, &bad), RS_PARSE_OK);
    ck_assert_uint_eq(mask, RS_HASH_MD5 | RS_HASH_SHA1 | RS_HASH_SHA256 | RS_HASH_SHA512);
    ck_assert_int_eq(rs_parse_hashes(1, none, &mask, &bad), RS_PARSE_OK);
    ck_assert_uint_eq(mask, 0);
    mask = 99;
    ck_assert_int_eq(rs_parse_hashes(0, NULL, &mask, &bad), RS_PARSE_HASH_EMPTY);
    ck_assert_int_eq(rs_parse_hashes(2, none_mixed, &mask, &bad), RS_PARSE_HASH_NONE_MIXED);
    ck_assert_int_eq(bad, 1);
    /* The first problem in order wins. */
    ck_assert_int_eq(rs_parse_hashes(3, unknown, &mask, &bad), RS_PARSE_HASH_UNKNOWN);
    ck_assert_int_eq(bad, 1);
    ck_assert_uint_eq(mask, 99);
}
END_TEST

START_TEST(set_names)
{
    static const char *const good[] = { "a", "main", "data-1", "x_y", "v1.2", "A9", NULL };
    static const char *const bad[] = { "",     ".hidden", ".",   "..",  "a/b", "a b",
                                       "a%20", "ü",       "a\n", "a:b", NULL };
    char longest[66];
    int i;
    for (i = 0; good[i]; i++) {
        ck_assert_msg(rs_parse_set_name(good[i], 64), "rejected: '%s'", good[i]);
    }
    for (i = 0; bad[i]; i++) {
        ck_assert_msg(!rs_parse_set_name(bad[i], 64), "accepted: '%s'", bad[i]);
    }
    memset(longest, 'a', 65);
    longest[65] = '\0';
    ck_assert(!rs_parse_set_name(longest, 64));
    longest[64] = '\0';
    ck_assert(rs_parse_set_name(longest, 64));
}
END_TEST

START_TEST(url_paths)
{
    static const char *const good[] = { "/",         "/data", "/a/b",   "/a/",
                                        "/a.b/c..d", "/~x",   "/a/..b", NULL };
    static const char *const bad[] = { "",     "data", "//",     "/a//b",  "/a/../b",   "/a/./b",
                                       "/a?b", "/a#b", "/a%20b", "/a b",   "/a\tb",     "/a\"b",
                                       "/a<b", "/a>b", "/a\\b",  "/a\x7f", "/\xc3\xbc", NULL };
    int i;
    for (i = 0; good[i]; i++) {
        ck_assert_msg(rs_parse_url_path(good[i]), "rejected: '%s'", good[i]);
    }
    for (i = 0; bad[i]; i++) {
        ck_assert_msg(!rs_parse_url_path(bad[i]), "accepted: '%s'", bad[i]);
    }
}
END_TEST

START_TEST(urls)
{
    static const char *const good[] = { "http://example.org", "https://example.org/",
                                        "HTTPS://example.org:8443/about", "http://h/a%20b", NULL };
    static const char *const bad[] = { "",
                                       "example.org",
                                       "ftp://example.org",
                                       "http://",
                                       "http:///x",
                                       "http://h/?q",
                                       "http://h/#f",
                                       "http://h/a b",
                                       "http://h/<x>",
                                       "http://h/{x}",
                                       "http://h/a|b",
                                       "http:/h",
                                       NULL };
    int i;
    for (i = 0; good[i]; i++) {
        ck_assert_msg(rs_parse_url(good[i]), "rejected: '%s'", good[i]);
    }
    for (i = 0; bad[i]; i++) {
        ck_assert_msg(!rs_parse_url(bad[i]), "accepted: '%s'", bad[i]);
    }
    /* A base URL's path must also be a plain URL-path. */
    ck_assert(rs_parse_base_url("https://data.example.org"));
    ck_assert(rs_parse_base_url("https://proxy.example.org:8443/mirror/"));
    ck_assert(!rs_parse_base_url("https://h/a%20b"));
    ck_assert(!rs_parse_base_url("https://h/a//b"));
    ck_assert(!rs_parse_base_url("https://h/a/../b"));
    ck_assert(!rs_parse_base_url("https://h/?q"));
}
END_TEST

Suite *parse_suite(void)
{
    Suite *s = suite_create("rs_parse");
    TCase *tc = ut_tcase("request", 10);
    tcase_add_test(tc, request_path_kinds);
    tcase_add_test(tc, request_path_other);
    tcase_add_test(tc, part_valid);
    tcase_add_test(tc, part_invalid);
    tcase_add_test(tc, dump_part_parse);
    tcase_add_test(tc, id_parse);
    tcase_add_test(tc, cdump_part_parse);
    tcase_add_test(tc, cdump_index_part_parse);
    tcase_add_test(tc, history_parse);
    suite_add_tcase(s, tc);
    tc = ut_tcase("directive", 10);
    tcase_add_test(tc, int_values);
    tcase_add_test(tc, durations);
    tcase_add_test(tc, delays);
    tcase_add_test(tc, hash_lists);
    tcase_add_test(tc, set_names);
    tcase_add_test(tc, url_paths);
    tcase_add_test(tc, urls);
    suite_add_tcase(s, tc);
    return s;
}
