/* SPDX-License-Identifier: Apache-2.0 */
/* test_range.c - rs_range: one byte range of a Range header */
#include "unit.h"
#include "rs_range.h"

/* "first-last", "none" or "416" for hdr against total bytes. */
static const char *rng(const char *hdr, apr_off_t total)
{
    static char buf[64];
    apr_off_t a = -7, b = -7;
    switch (rs_range_parse(hdr, total, &a, &b)) {
    case RS_RANGE_OK:
        snprintf(buf, sizeof(buf), "%" APR_OFF_T_FMT "-%" APR_OFF_T_FMT, a, b);
        return buf;
    case RS_RANGE_UNSATISFIABLE:
        return "416";
    default:
        ck_assert_int_eq(a, -7);
        return "none";
    }
}

START_TEST(range_forms)
{
    ck_assert_str_eq(rng("bytes=0-", 100), "0-99");
    ck_assert_str_eq(rng("bytes=90-", 100), "90-99");
    ck_assert_str_eq(rng("bytes=99-", 100), "99-99");
    ck_assert_str_eq(rng("bytes=10-19", 100), "10-19");
    ck_assert_str_eq(rng("bytes=10-10", 100), "10-10");
    ck_assert_str_eq(rng("bytes=10-1000", 100), "10-99"); /* cut to the end */
    ck_assert_str_eq(rng("bytes=-10", 100), "90-99");
    ck_assert_str_eq(rng("bytes=-100", 100), "0-99");
    ck_assert_str_eq(rng("bytes=-1000", 100), "0-99");
    ck_assert_str_eq(rng("Bytes=5-", 100), "5-99"); /* the unit is case-insensitive */
    ck_assert_str_eq(rng(" bytes=5-6 ", 100), "5-6");
}
END_TEST

START_TEST(range_unsatisfiable)
{
    ck_assert_str_eq(rng("bytes=100-", 100), "416");
    ck_assert_str_eq(rng("bytes=1000-2000", 100), "416");
    ck_assert_str_eq(rng("bytes=-0", 100), "416");
    ck_assert_str_eq(rng("bytes=0-", 0), "416");
    ck_assert_str_eq(rng("bytes=-5", 0), "416");
}
END_TEST

START_TEST(range_ignored)
{
    ck_assert_str_eq(rng(NULL, 100), "none");
    ck_assert_str_eq(rng("", 100), "none");
    ck_assert_str_eq(rng("bytes=0-1,5-6", 100), "none"); /* several ranges */
    ck_assert_str_eq(rng("bytes=-1,-2", 100), "none");
    ck_assert_str_eq(rng("bytes=20-10", 100), "none"); /* last < first */
    ck_assert_str_eq(rng("items=0-1", 100), "none");
    ck_assert_str_eq(rng("bytes 0-1", 100), "none");
    ck_assert_str_eq(rng("bytes=", 100), "none");
    ck_assert_str_eq(rng("bytes=-", 100), "none");
    ck_assert_str_eq(rng("bytes=a-", 100), "none");
    ck_assert_str_eq(rng("bytes=+1-", 100), "none");
    ck_assert_str_eq(rng("bytes=1-x", 100), "none");
    ck_assert_str_eq(rng("bytes=99999999999999999999-", 100), "none");
    ck_assert_str_eq(rng("bytesx=0-", 100), "none");
}
END_TEST

Suite *range_suite(void)
{
    Suite *s = suite_create("rs_range");
    TCase *tc = ut_tcase("parse", 10);
    tcase_add_test(tc, range_forms);
    tcase_add_test(tc, range_unsatisfiable);
    tcase_add_test(tc, range_ignored);
    suite_add_tcase(s, tc);
    return s;
}
