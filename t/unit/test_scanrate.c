/* SPDX-License-Identifier: Apache-2.0 */
/* test_scanrate.c - a scan's rate and time left, and the names of where
 * its expected total comes from. */
#include "unit.h"
#include "rs_scanrate.h"

START_TEST(rate_and_time_left)
{
    double rate, left;

    /* 500 files in 2 s of 2,000: 250 files/s, 6 s left. */
    rs_scanrate_estimate(500, 2000, apr_time_from_sec(2), &rate, &left);
    ck_assert_double_eq_tol(rate, 250.0, 1e-9);
    ck_assert_double_eq_tol(left, 6.0, 1e-9);
    /* Past the expected total: nothing left, not a negative time. */
    rs_scanrate_estimate(3000, 2000, apr_time_from_sec(3), &rate, &left);
    ck_assert_double_eq_tol(rate, 1000.0, 1e-9);
    ck_assert_double_eq_tol(left, 0.0, 1e-9);
    /* No total, or no time elapsed yet: the time left is unknown. */
    rs_scanrate_estimate(500, -1, apr_time_from_sec(2), &rate, &left);
    ck_assert_double_eq_tol(left, -1.0, 1e-9);
    rs_scanrate_estimate(0, 2000, 0, &rate, &left);
    ck_assert_double_eq_tol(rate, 0.0, 1e-9);
    ck_assert_double_eq_tol(left, -1.0, 1e-9);
}
END_TEST

START_TEST(source_names)
{
    ck_assert_str_eq(rs_scanrate_source(RS_SCAN_TOTAL_PREVIOUS), "previous-scan");
    ck_assert_str_eq(rs_scanrate_source(RS_SCAN_TOTAL_COUNTED), "name-count");
    ck_assert_str_eq(rs_scanrate_source(RS_SCAN_TOTAL_UNKNOWN), "unknown");
    ck_assert_str_eq(rs_scanrate_source(77), "unknown");
}
END_TEST

Suite *scanrate_suite(void)
{
    Suite *s = suite_create("rs_scanrate");
    TCase *tc = ut_tcase("scanrate", 10);
    tcase_add_test(tc, rate_and_time_left);
    tcase_add_test(tc, source_names);
    suite_add_tcase(s, tc);
    return s;
}
