/* SPDX-License-Identifier: Apache-2.0 */
/* test_time.c - rs_time: W3C Datetime formatting and parsing */
#include <string.h>
#include "unit.h"
#include "rs_time.h"

#define NS    1000000000LL
#define T2023 1700000000LL /* 2023-11-14T22:13:20Z */

static const char *fmt_ns(apr_int64_t ns)
{
    static char buf[RS_TIME_BUFSIZE];
    memset(buf, 'x', sizeof(buf));
    rs_time_format_ns(buf, ns);
    ck_assert_uint_lt(strlen(buf), RS_TIME_BUFSIZE);
    return buf;
}

static const char *fmt(apr_time_t t)
{
    static char buf[RS_TIME_BUFSIZE];
    char *r;
    memset(buf, 'x', sizeof(buf));
    r = rs_time_format(buf, t);
    ck_assert_ptr_eq(r, buf);
    ck_assert_uint_lt(strlen(buf), RS_TIME_BUFSIZE);
    return buf;
}

START_TEST(format_epoch)
{
    ck_assert_str_eq(fmt_ns(0), "1970-01-01T00:00:00Z");
    ck_assert_str_eq(fmt(0), "1970-01-01T00:00:00Z");
    ck_assert_str_eq(fmt_ns(T2023 * NS), "2023-11-14T22:13:20Z");
    ck_assert_str_eq(fmt(T2023 * APR_USEC_PER_SEC), "2023-11-14T22:13:20Z");
    ck_assert_str_eq(fmt_ns(951825600LL * NS), "2000-02-29T12:00:00Z");
    ck_assert_str_eq(fmt_ns(86399LL * NS), "1970-01-01T23:59:59Z");
}
END_TEST

START_TEST(format_returns_buf)
{
    char buf[RS_TIME_BUFSIZE];
    ck_assert_ptr_eq(rs_time_format_ns(buf, 0), buf);
}
END_TEST

START_TEST(format_fraction_trimmed)
{
    ck_assert_str_eq(fmt_ns(T2023 * NS + 123456000), "2023-11-14T22:13:20.123456Z");
    ck_assert_str_eq(fmt_ns(T2023 * NS + 500000000), "2023-11-14T22:13:20.5Z");
    ck_assert_str_eq(fmt_ns(T2023 * NS + 120000000), "2023-11-14T22:13:20.12Z");
    ck_assert_str_eq(fmt_ns(T2023 * NS + 1000), "2023-11-14T22:13:20.000001Z");
    /* microseconds */
    ck_assert_str_eq(fmt(T2023 * APR_USEC_PER_SEC + 250000), "2023-11-14T22:13:20.25Z");
    ck_assert_str_eq(fmt(T2023 * APR_USEC_PER_SEC + 1), "2023-11-14T22:13:20.000001Z");
    ck_assert_str_eq(fmt(T2023 * APR_USEC_PER_SEC + 999999), "2023-11-14T22:13:20.999999Z");
}
END_TEST

/* At most six fractional digits: nanoseconds are truncated to the
 * microsecond (floor), never rounded up into the next one. */
START_TEST(format_ns_truncated_to_microseconds)
{
    ck_assert_str_eq(fmt_ns(T2023 * NS + 123456789), "2023-11-14T22:13:20.123456Z");
    ck_assert_str_eq(fmt_ns(T2023 * NS + 123456001), "2023-11-14T22:13:20.123456Z");
    ck_assert_str_eq(fmt_ns(T2023 * NS + 999999999), "2023-11-14T22:13:20.999999Z");
    ck_assert_str_eq(fmt_ns(T2023 * NS + 1), "2023-11-14T22:13:20Z");
    ck_assert_str_eq(fmt_ns(T2023 * NS + 999), "2023-11-14T22:13:20Z");
    ck_assert_str_eq(fmt_ns(T2023 * NS + 1999), "2023-11-14T22:13:20.000001Z");
    ck_assert_str_eq(fmt_ns(T2023 * NS + 100000900), "2023-11-14T22:13:20.1Z");
    /* Floor before 1970 too: one nanosecond before the epoch is in the
     * microsecond that starts 1 us before it. */
    ck_assert_str_eq(fmt_ns(-1), "1969-12-31T23:59:59.999999Z");
    ck_assert_str_eq(fmt_ns(-1000), "1969-12-31T23:59:59.999999Z");
    ck_assert_str_eq(fmt_ns(-1001), "1969-12-31T23:59:59.999998Z");
    ck_assert_str_eq(fmt_ns(-NS + 1), "1969-12-31T23:59:59Z");
    /* Two mtimes in one microsecond format alike (the store keeps them
     * apart by their nanoseconds). */
    {
        char a[RS_TIME_BUFSIZE], b[RS_TIME_BUFSIZE], c[RS_TIME_BUFSIZE];
        rs_time_format_ns(a, T2023 * NS + 42000);
        rs_time_format_ns(b, T2023 * NS + 42999);
        rs_time_format_ns(c, T2023 * NS + 43000);
        ck_assert_str_eq(a, b);
        ck_assert_str_ne(b, c);
    }
}
END_TEST

START_TEST(format_pre_1970)
{
    ck_assert_str_eq(fmt_ns(-1), "1969-12-31T23:59:59.999999Z");
    ck_assert_str_eq(fmt_ns(-NS), "1969-12-31T23:59:59Z");
    ck_assert_str_eq(fmt_ns(-NS - NS / 2), "1969-12-31T23:59:58.5Z");
    ck_assert_str_eq(fmt_ns(-31536000LL * NS), "1969-01-01T00:00:00Z");
    ck_assert_str_eq(fmt_ns(-2208988800LL * NS), "1900-01-01T00:00:00Z");
    ck_assert_str_eq(fmt(-1), "1969-12-31T23:59:59.999999Z");
    ck_assert_str_eq(fmt(-2208988800LL * APR_USEC_PER_SEC + 10), "1900-01-01T00:00:00.00001Z");
}
END_TEST

START_TEST(format_apr_time_far)
{
    /* apr_time_t covers far more than the +-292 years of nanoseconds in
     * 64 bits; years stay four digits. */
    ck_assert_str_eq(fmt(253402300799LL * APR_USEC_PER_SEC + 999999),
                     "9999-12-31T23:59:59.999999Z");
    ck_assert_str_eq(fmt(-30610224001LL * APR_USEC_PER_SEC), "0999-12-31T23:59:59Z");
    ck_assert_str_eq(fmt(-62135596800LL * APR_USEC_PER_SEC), "0001-01-01T00:00:00Z");
    ck_assert_str_eq(fmt(-11644473600LL * APR_USEC_PER_SEC + 1), "1601-01-01T00:00:00.000001Z");
    ck_assert_str_eq(fmt(-62167219200LL * APR_USEC_PER_SEC), "0000-01-01T00:00:00Z");
    /* Beyond four-digit years: clamped, never a malformed datetime. */
    ck_assert_str_eq(fmt(253402300800LL * APR_USEC_PER_SEC), "9999-12-31T23:59:59Z");
    ck_assert_str_eq(fmt(APR_INT64_MAX), "9999-12-31T23:59:59Z");
    ck_assert_str_eq(fmt(-62167219201LL * APR_USEC_PER_SEC), "0000-01-01T00:00:00Z");
    ck_assert_str_eq(fmt(APR_INT64_MIN), "0000-01-01T00:00:00Z");
    /* The extremes of nanoseconds in 64 bits. */
    ck_assert_str_eq(fmt_ns(APR_INT64_MAX), "2262-04-11T23:47:16.854775Z");
    ck_assert_str_eq(fmt_ns(APR_INT64_MIN), "1677-09-21T00:12:43.145224Z");
}
END_TEST

static apr_time_t parse_ok(const char *s)
{
    apr_time_t t = -42;
    ck_assert_msg(rs_time_parse(s, &t) == APR_SUCCESS, "rejected '%s'", s);
    return t;
}

START_TEST(parse_utc)
{
    ck_assert_int_eq(parse_ok("1970-01-01T00:00:00Z"), 0);
    ck_assert_int_eq(parse_ok("2023-11-14T22:13:20Z"), T2023 * APR_USEC_PER_SEC);
    ck_assert_int_eq(parse_ok("2000-02-29T12:00:00Z"), 951825600LL * APR_USEC_PER_SEC);
    ck_assert_int_eq(parse_ok("1969-12-31T23:59:59Z"), -APR_USEC_PER_SEC);
    ck_assert_int_eq(parse_ok("1900-01-01T00:00:00Z"), -2208988800LL * APR_USEC_PER_SEC);
    ck_assert_int_eq(parse_ok("2100-03-01T00:00:00Z"), 4107542400LL * APR_USEC_PER_SEC);
}
END_TEST

START_TEST(parse_offsets)
{
    const apr_time_t t = T2023 * APR_USEC_PER_SEC;
    ck_assert_int_eq(parse_ok("2023-11-14T22:13:20+00:00"), t);
    ck_assert_int_eq(parse_ok("2023-11-14T22:13:20-00:00"), t);
    ck_assert_int_eq(parse_ok("2023-11-14T23:13:20+01:00"), t);
    ck_assert_int_eq(parse_ok("2023-11-14T17:43:20-04:30"), t);
    ck_assert_int_eq(parse_ok("2023-11-15T03:58:20+05:45"), t);
    ck_assert_int_eq(parse_ok("2023-11-14T10:13:20-12:00"), t);
    /* An offset that crosses the date line and the year. */
    ck_assert_int_eq(parse_ok("2024-01-01T01:00:00+02:00"), parse_ok("2023-12-31T23:00:00Z"));
}
END_TEST

START_TEST(parse_fractions)
{
    const apr_time_t t = T2023 * APR_USEC_PER_SEC;
    ck_assert_int_eq(parse_ok("2023-11-14T22:13:20.5Z"), t + 500000);
    ck_assert_int_eq(parse_ok("2023-11-14T22:13:20.05Z"), t + 50000);
    ck_assert_int_eq(parse_ok("2023-11-14T22:13:20.000001Z"), t + 1);
    ck_assert_int_eq(parse_ok("2023-11-14T22:13:20.123456Z"), t + 123456);
    /* Below a microsecond is truncated. */
    ck_assert_int_eq(parse_ok("2023-11-14T22:13:20.123456789Z"), t + 123456);
    ck_assert_int_eq(parse_ok("2023-11-14T22:13:20.0000009Z"), t);
    ck_assert_int_eq(parse_ok("2023-11-14T23:13:20.75+01:00"), t + 750000);
    ck_assert_int_eq(parse_ok("1969-12-31T23:59:59.5Z"), -500000);
}
END_TEST

START_TEST(parse_rejects)
{
    static const char *const bad[] = { "",
                                       "2023",
                                       "2023-11-14",
                                       "2023-11-14T22:13Z",
                                       "2023-11-14T22:13:20", /* no zone */
                                       "2023-11-14 22:13:20Z",
                                       "2023-11-14t22:13:20Z",
                                       "2023-11-14T22:13:20z",
                                       " 2023-11-14T22:13:20Z",
                                       "2023-11-14T22:13:20Z ",
                                       "2023-11-14T22:13:20Zjunk",
                                       "20231114T221320Z",
                                       "2023-1-14T22:13:20Z",
                                       "2023-11-4T22:13:20Z",
                                       "2023-11-14T2:13:20Z",
                                       "23-11-14T22:13:20Z",
                                       "2023-13-01T00:00:00Z",
                                       "2023-00-01T00:00:00Z",
                                       "2023-01-00T00:00:00Z",
                                       "2023-01-32T00:00:00Z",
                                       "2023-11-14T24:00:00Z",
                                       "2023-11-14T22:60:00Z",
                                       "2023-11-14T22:13:61Z",
                                       "2023-11-14T22:13:20.Z",
                                       "2023-11-14T22:13:20.5",
                                       "2023-11-14T22:13:20.-5Z",
                                       "2023-11-14T22:13:20+01",
                                       "2023-11-14T22:13:20+0100",
                                       "2023-11-14T22:13:20+1:00",
                                       "2023-11-14T22:13:20+01:0",
                                       "2023-11-14T22:13:20+01:00Z",
                                       "2023-11-14T22:13:20Z+01:00",
                                       "2023-11-14T22:13:20+ab:cd",
                                       "2023-11-14T22:13:20+24:00", /* offsets are at most 23:59 */
                                       "2023-11-14T22:13:20+01:60",
                                       "2023-02-29T00:00:00Z", /* not a leap year */
                                       "2023-02-30T00:00:00Z",
                                       "2023-04-31T00:00:00Z",
                                       "2100-02-29T00:00:00Z", /* century, not a leap year */
                                       "2023-11-14T22:13:20.5.5Z",
                                       "+023-11-14T22:13:20Z",
                                       "-023-11-14T22:13:20Z",
                                       "2023/11/14T22:13:20Z",
                                       NULL };
    int i;
    for (i = 0; bad[i]; i++) {
        apr_time_t t = 12345;
        ck_assert_msg(rs_time_parse(bad[i], &t) == APR_EINVAL, "accepted '%s'", bad[i]);
        ck_assert_msg(t == 12345, "'%s' wrote the output", bad[i]);
    }
}
END_TEST

START_TEST(parse_calendar_edges)
{
    ck_assert_int_eq(parse_ok("2024-02-29T00:00:00Z"), 1709164800LL * APR_USEC_PER_SEC);
    ck_assert_int_eq(parse_ok("2000-02-29T00:00:00Z"), 951782400LL * APR_USEC_PER_SEC);
    ck_assert_int_eq(parse_ok("2023-12-31T23:59:59Z"), 1704067199LL * APR_USEC_PER_SEC);
    ck_assert_int_eq(parse_ok("2023-04-30T00:00:00Z"), 1682812800LL * APR_USEC_PER_SEC);
    ck_assert_int_eq(parse_ok("2023-11-14T23:59:00+23:59"), parse_ok("2023-11-14T00:00:00Z"));
}
END_TEST

START_TEST(round_trip_strings)
{
    static const char *const s[] = { "1970-01-01T00:00:00Z",
                                     "2023-11-14T22:13:20Z",
                                     "2023-11-14T22:13:20.5Z",
                                     "2023-11-14T22:13:20.123456Z",
                                     "2023-11-14T22:13:20.000001Z",
                                     "1969-12-31T23:59:59.999999Z",
                                     "1900-01-01T00:00:00.25Z",
                                     "2000-02-29T12:00:00Z",
                                     "2262-04-11T23:47:16Z",
                                     "9999-12-31T23:59:59.999999Z",
                                     "0001-01-01T00:00:00Z",
                                     "0000-02-29T23:59:59.5Z",
                                     NULL };
    int i;
    for (i = 0; s[i]; i++) {
        ck_assert_str_eq(fmt(parse_ok(s[i])), s[i]);
    }
}
END_TEST

START_TEST(round_trip_values)
{
    static const apr_time_t v[] = { 0,
                                    1,
                                    -1,
                                    999999,
                                    1000000,
                                    -1000000,
                                    -1000001,
                                    T2023 * APR_USEC_PER_SEC + 123456,
                                    -2208988800LL * APR_USEC_PER_SEC + 7,
                                    4102444800LL * APR_USEC_PER_SEC - 1 };
    unsigned i;
    for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        const char *s = fmt(v[i]);
        ck_assert_msg(parse_ok(s) == v[i], "%s", s);
    }
    /* ns -> string -> us keeps the microseconds. */
    ck_assert_int_eq(parse_ok(fmt_ns(T2023 * NS + 123456789)), T2023 * APR_USEC_PER_SEC + 123456);
}
END_TEST

Suite *time_suite(void)
{
    Suite *s = suite_create("rs_time");
    TCase *tc = ut_tcase("format", 10);
    tcase_add_test(tc, format_epoch);
    tcase_add_test(tc, format_returns_buf);
    tcase_add_test(tc, format_fraction_trimmed);
    tcase_add_test(tc, format_ns_truncated_to_microseconds);
    tcase_add_test(tc, format_pre_1970);
    tcase_add_test(tc, format_apr_time_far);
    suite_add_tcase(s, tc);
    tc = ut_tcase("parse", 10);
    tcase_add_test(tc, parse_utc);
    tcase_add_test(tc, parse_offsets);
    tcase_add_test(tc, parse_fractions);
    tcase_add_test(tc, parse_rejects);
    tcase_add_test(tc, parse_calendar_edges);
    tcase_add_test(tc, round_trip_strings);
    tcase_add_test(tc, round_trip_values);
    suite_add_tcase(s, tc);
    return s;
}
