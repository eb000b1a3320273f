/* SPDX-License-Identifier: Apache-2.0 */
/* test_uri.c - rs_uri: percent-encoding of paths */
#include <string.h>
#include "unit.h"
#include "rs_uri.h"

static const char *esc(const char *s)
{
    char buf[1024];
    const char *r = rs_uri_escape_path(ut_pool, s);
    apr_size_t n;

    ck_assert_uint_lt(strlen(s) * 3 + 1, sizeof(buf));
    memset(buf, 'x', sizeof(buf));
    n = rs_uri_escape_path_buf(buf, s);
    ck_assert_uint_eq(n, strlen(buf));
    ck_assert_str_eq(buf, r);
    return r;
}

START_TEST(escape_plain)
{
    ck_assert_str_eq(esc(""), "");
    ck_assert_str_eq(esc("index.html"), "index.html");
    ck_assert_str_eq(esc("a/b/c.txt"), "a/b/c.txt");
    ck_assert_str_eq(esc("ABCXYZabcxyz0189-._~"), "ABCXYZabcxyz0189-._~");
    ck_assert_str_eq(esc("/"), "/");
    ck_assert_str_eq(esc("a//b/"), "a//b/");
}
END_TEST

START_TEST(escape_reserved)
{
    ck_assert_str_eq(esc("a/b c.txt"), "a/b%20c.txt");
    ck_assert_str_eq(esc("100%"), "100%25");
    ck_assert_str_eq(esc("%20"), "%2520");
    ck_assert_str_eq(esc("a#b"), "a%23b");
    ck_assert_str_eq(esc("a?b=c&d"), "a%3Fb%3Dc%26d");
    ck_assert_str_eq(esc("\"q\" 'q'"), "%22q%22%20%27q%27");
    ck_assert_str_eq(esc("<b>"), "%3Cb%3E");
    ck_assert_str_eq(esc("a+b"), "a%2Bb");
    ck_assert_str_eq(esc(":@!$()*,;="), "%3A%40%21%24%28%29%2A%2C%3B%3D");
    ck_assert_str_eq(esc("[]{}|\\^`"), "%5B%5D%7B%7D%7C%5C%5E%60");
    ck_assert_str_eq(esc("tab\there\nnl"), "tab%09here%0Anl");
    ck_assert_str_eq(esc("\x01\x1f\x7f"), "%01%1F%7F");
}
END_TEST

START_TEST(escape_non_ascii)
{
    /* UTF-8 "café/Ünïcode €.txt" */
    ck_assert_str_eq(esc("caf\xC3\xA9/\xC3\x9Cn\xC3\xAF"
                         "code \xE2\x82\xAC.txt"),
                     "caf%C3%A9/%C3%9Cn%C3%AF"
                     "code%20%E2%82%AC.txt");
    /* Latin-1 bytes that are not UTF-8 at all. */
    ck_assert_str_eq(esc("caf\xE9"), "caf%E9");
    ck_assert_str_eq(esc("\x80\xFF\xC3"), "%80%FF%C3");
}
END_TEST

START_TEST(escape_every_byte)
{
    char in[256], buf[256 * 3 + 1];
    apr_size_t n;
    int i, j;
    for (i = 1; i < 256; i++) {
        in[i - 1] = (char)i;
    }
    in[255] = '\0';
    n = rs_uri_escape_path_buf(buf, in);
    ck_assert_uint_eq(n, strlen(buf));
    /* 67 bytes kept: 26+26 letters, 10 digits, "-._~" and "/" */
    ck_assert_uint_eq(n, 67 + (255 - 67) * 3);
    ck_assert_uint_eq(rs_uri_escaped_len(in), n);
    for (i = 1; i < 255; i++) {
        ck_assert_uint_eq(rs_uri_escaped_len(in + i), strlen(rs_uri_escape_path(ut_pool, in + i)));
    }
    /* The result only holds unreserved characters, "/" and "%XX". */
    for (j = 0; buf[j]; j++) {
        char c = buf[j];
        if (c == '%') {
            ck_assert(strchr("0123456789ABCDEF", buf[j + 1]) && buf[j + 1]);
            ck_assert(strchr("0123456789ABCDEF", buf[j + 2]) && buf[j + 2]);
            j += 2;
        }
        else {
            ck_assert_msg(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                 "0123456789-._~/",
                                 c)
                              != NULL,
                          "kept byte 0x%02x", c & 0xff);
        }
    }
    ck_assert_str_eq(rs_uri_unescape(ut_pool, buf), in);
}
END_TEST

START_TEST(unescape_ok)
{
    ck_assert_str_eq(rs_uri_unescape(ut_pool, ""), "");
    ck_assert_str_eq(rs_uri_unescape(ut_pool, "abc/def"), "abc/def");
    ck_assert_str_eq(rs_uri_unescape(ut_pool, "a%20b"), "a b");
    ck_assert_str_eq(rs_uri_unescape(ut_pool, "%2520"), "%20");
    ck_assert_str_eq(rs_uri_unescape(ut_pool, "caf%C3%a9"), "caf\xC3\xA9");
    ck_assert_str_eq(rs_uri_unescape(ut_pool, "caf%E9"), "caf\xE9");
    ck_assert_str_eq(rs_uri_unescape(ut_pool, "%2F%2f"), "//");
    ck_assert_str_eq(rs_uri_unescape(ut_pool, "a+b"), "a+b"); /* no form decoding */
    ck_assert_str_eq(rs_uri_unescape(ut_pool, "%01"), "\x01");
    ck_assert_str_eq(rs_uri_unescape(ut_pool, "%FF%ff"), "\xFF\xFF");
    ck_assert_str_eq(rs_uri_unescape(ut_pool, "%10"), "\x10");
}
END_TEST

START_TEST(unescape_rejects)
{
    static const char *const bad[] = { "%",   "a%",   "%2",     "a%2", "%G0",   "%0G", "%-1",
                                       "% 1", "%%20", "abc%zz", "%00", "a%00b", "%0",  NULL };
    int i;
    for (i = 0; bad[i]; i++) {
        ck_assert_msg(rs_uri_unescape(ut_pool, bad[i]) == NULL, "accepted '%s'", bad[i]);
    }
}
END_TEST

START_TEST(round_trip)
{
    static const char *const s[] = { "a b/c%d#e?f&g\"h'i<j>k", "caf\xE9/\xC3\xA9t\xC3\xA9",
                                     "~user/.hidden/..", NULL };
    int i;
    for (i = 0; s[i]; i++) {
        ck_assert_str_eq(rs_uri_unescape(ut_pool, esc(s[i])), s[i]);
    }
}
END_TEST

Suite *uri_suite(void)
{
    Suite *s = suite_create("rs_uri");
    TCase *tc = ut_tcase("escape", 10);
    tcase_add_test(tc, escape_plain);
    tcase_add_test(tc, escape_reserved);
    tcase_add_test(tc, escape_non_ascii);
    tcase_add_test(tc, escape_every_byte);
    suite_add_tcase(s, tc);
    tc = ut_tcase("unescape", 10);
    tcase_add_test(tc, unescape_ok);
    tcase_add_test(tc, unescape_rejects);
    tcase_add_test(tc, round_trip);
    suite_add_tcase(s, tc);
    return s;
}
