/* SPDX-License-Identifier: Apache-2.0 */
/* test_json.c - rs_json: JSON string literals and numbers */
#include <string.h>
#include "unit.h"
#include "rs_json.h"

START_TEST(str_plain)
{
    ck_assert_str_eq(rs_json_str(ut_pool, ""), "\"\"");
    ck_assert_str_eq(rs_json_str(ut_pool, "main"), "\"main\"");
    ck_assert_str_eq(rs_json_str(ut_pool, "a/b c.txt</script>"), "\"a/b c.txt</script>\"");
}
END_TEST

START_TEST(str_escapes)
{
    ck_assert_str_eq(rs_json_str(ut_pool, "say \"hi\"\\"), "\"say \\\"hi\\\"\\\\\"");
    ck_assert_str_eq(rs_json_str(ut_pool, "\b\f\n\r\t"), "\"\\b\\f\\n\\r\\t\"");
    ck_assert_str_eq(rs_json_str(ut_pool, "\x01\x1f\x7f"), "\"\\u0001\\u001f\\u007f\"");
}
END_TEST

START_TEST(str_utf8)
{
    /* Valid UTF-8 (2, 3 and 4 bytes) passes through. */
    ck_assert_str_eq(rs_json_str(ut_pool, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
                     "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    /* Stray continuation, Latin-1 byte, truncated, overlong, surrogate:
     * each offending byte becomes U+FFFD. */
    ck_assert_str_eq(rs_json_str(ut_pool, "a\x80z"), "\"a\xef\xbf\xbdz\"");
    ck_assert_str_eq(rs_json_str(ut_pool, "caf\xe9"), "\"caf\xef\xbf\xbd\"");
    ck_assert_str_eq(rs_json_str(ut_pool, "\xe2\x82"), "\"\xef\xbf\xbd\xef\xbf\xbd\"");
    ck_assert_str_eq(rs_json_str(ut_pool, "\xc0\xaf"), "\"\xef\xbf\xbd\xef\xbf\xbd\"");
    ck_assert_str_eq(rs_json_str(ut_pool, "\xed\xa0\x80"),
                     "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
}
END_TEST

START_TEST(str_every_byte)
{
    /* Every byte alone: the result is quoted, has no raw control byte and
     * no unescaped quote or backslash inside. */
    int c;
    for (c = 1; c < 256; c++) {
        char in[2] = { (char)c, 0 };
        const char *out = rs_json_str(ut_pool, in);
        size_t n = strlen(out), i;
        ck_assert_uint_ge(n, 3);
        ck_assert_int_eq(out[0], '"');
        ck_assert_int_eq(out[n - 1], '"');
        for (i = 1; i + 1 < n; i++) {
            ck_assert_int_ge((unsigned char)out[i], 0x20);
            ck_assert_int_ne((unsigned char)out[i], 0x7f);
            if (out[i] == '\\') {
                i++; /* the escaped character */
            }
            else {
                ck_assert_int_ne(out[i], '"');
            }
        }
    }
}
END_TEST

START_TEST(numbers)
{
    ck_assert(rs_json_is_number("0"));
    ck_assert(rs_json_is_number("15"));
    ck_assert(rs_json_is_number("-3"));
    ck_assert(rs_json_is_number("12.5"));
    ck_assert(!rs_json_is_number(""));
    ck_assert(!rs_json_is_number("-"));
    ck_assert(!rs_json_is_number("01"));
    ck_assert(!rs_json_is_number("1."));
    ck_assert(!rs_json_is_number(".5"));
    ck_assert(!rs_json_is_number("1e3"));
    ck_assert(!rs_json_is_number("12 files"));
    ck_assert(!rs_json_is_number("nan"));
}
END_TEST

Suite *json_suite(void)
{
    Suite *s = suite_create("rs_json");
    TCase *tc = ut_tcase("json", 10);
    tcase_add_test(tc, str_plain);
    tcase_add_test(tc, str_escapes);
    tcase_add_test(tc, str_utf8);
    tcase_add_test(tc, str_every_byte);
    tcase_add_test(tc, numbers);
    suite_add_tcase(s, tc);
    return s;
}
