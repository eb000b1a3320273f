/* SPDX-License-Identifier: Apache-2.0 */
/* test_path.c - rs_path: one path at or below another, trailing slashes */
#include "unit.h"
#include "rs_path.h"

START_TEST(within)
{
    ck_assert(rs_path_within("/srv/www", "/srv/www"));
    ck_assert(rs_path_within("/srv/www/data", "/srv/www"));
    ck_assert(rs_path_within("/srv/www/data/x", "/srv/www"));
    ck_assert(rs_path_within("/srv", "/"));
    ck_assert(rs_path_within("/", "/"));
    /* Component by component, not by prefix. */
    ck_assert(!rs_path_within("/srv/wwwdata", "/srv/www"));
    ck_assert(!rs_path_within("/srv/ww", "/srv/www"));
    ck_assert(!rs_path_within("/srv", "/srv/www"));
    ck_assert(!rs_path_within("/", "/srv"));
    ck_assert(!rs_path_within("/other/www", "/srv/www"));
}
END_TEST

START_TEST(strip_slash)
{
    ck_assert_str_eq(rs_path_strip_slash(ut_pool, "/srv/www/"), "/srv/www");
    ck_assert_str_eq(rs_path_strip_slash(ut_pool, "/srv/www///"), "/srv/www");
    ck_assert_str_eq(rs_path_strip_slash(ut_pool, "/srv/www"), "/srv/www");
    ck_assert_str_eq(rs_path_strip_slash(ut_pool, "/"), "/");
    ck_assert_str_eq(rs_path_strip_slash(ut_pool, "///"), "/");
    ck_assert_str_eq(rs_path_strip_slash(ut_pool, "a//b/"), "a//b");
    ck_assert_str_eq(rs_path_strip_slash(ut_pool, ""), "");
}
END_TEST

/* A root-relative path: the root's entries have no leading "/". */
START_TEST(join)
{
    const char *name = "a b.txt";

    ck_assert_str_eq(rs_path_join(ut_pool, "d/e", name), "d/e/a b.txt");
    ck_assert_ptr_eq(rs_path_join(ut_pool, "", name), name);
}
END_TEST

Suite *path_suite(void)
{
    Suite *s = suite_create("rs_path");
    TCase *tc = ut_tcase("path", 10);
    tcase_add_test(tc, within);
    tcase_add_test(tc, strip_slash);
    tcase_add_test(tc, join);
    suite_add_tcase(s, tc);
    return s;
}
