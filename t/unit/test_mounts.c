/* SPDX-License-Identifier: Apache-2.0 */
/* test_mounts.c - rs_mounts: parsing mountinfo lines, the mount points
 * that changed between two reads, which trees a mount point affects. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_mounts.h"

#define L_ROOT  "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
#define L_DATA  "31 22 0:40 / /srv/www/data rw shared:20 - tmpfs tmpfs rw,size=1024k\n"
#define L_SPACE "32 22 0:41 / /srv/my\\040dir rw - tmpfs tmpfs rw\n"

START_TEST(parse_line)
{
    long id = 0;

    ck_assert_str_eq(rs_mounts_parse_line(ut_pool, L_DATA, &id), "/srv/www/data");
    ck_assert_int_eq(id, 31);
    ck_assert_str_eq(rs_mounts_parse_line(ut_pool, L_SPACE, &id), "/srv/my dir");
    ck_assert_str_eq(rs_mounts_parse_line(ut_pool, "33 22 0:41 / /a\\134b\\011c rw - x y rw", &id),
                     "/a\\b\tc");
    ck_assert_ptr_null(rs_mounts_parse_line(ut_pool, "1 2 3", &id));
    ck_assert_ptr_null(rs_mounts_parse_line(ut_pool, "", &id));
}
END_TEST

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *changed(rs_mounts_t *m)
{
    apr_array_header_t *c;
    ck_assert_int_eq(rs_mounts_changed(m, ut_pool, &c), APR_SUCCESS);
    qsort(c->elts, (size_t)c->nelts, sizeof(char *), cmp_str);
    return apr_array_pstrcat(ut_pool, c, '|');
}

START_TEST(changes)
{
    const char *f = ut_path(ut_tempdir("mounts"), "mountinfo");
    rs_mounts_t *m;

    ut_write_str(f, L_ROOT L_DATA);
    ck_assert_int_eq(rs_mounts_open(&m, ut_pool, f), APR_SUCCESS);
    ck_assert_int_ge(rs_mounts_fd(m), 0);
    ck_assert_str_eq(changed(m), "");
    /* Unmounted; another one mounted. */
    ut_write_str(f, L_ROOT L_SPACE);
    ck_assert_str_eq(changed(m), "/srv/my dir|/srv/www/data");
    ck_assert_str_eq(changed(m), "");
    /* Mounted again at the same place: a new id. */
    ut_write_str(f, L_ROOT "40 22 0:41 / /srv/my\\040dir rw - tmpfs tmpfs rw\n");
    ck_assert_str_eq(changed(m), "/srv/my dir|/srv/my dir");
    ck_assert_int_eq(rs_mounts_open(&m, ut_pool, ut_path(f, "none")), ENOTDIR);
}
END_TEST

START_TEST(affects)
{
    ck_assert_int_eq(rs_mounts_affects("/srv/www/data", "/srv/www/data"), 1);
    ck_assert_int_eq(rs_mounts_affects("/srv/www/data/sub", "/srv/www/data"), 1);
    ck_assert_int_eq(rs_mounts_affects("/srv", "/srv/www/data"), 1);
    ck_assert_int_eq(rs_mounts_affects("/", "/srv/www/data"), 1);
    ck_assert_int_eq(rs_mounts_affects("/srv/www/database", "/srv/www/data"), 0);
    ck_assert_int_eq(rs_mounts_affects("/srv/www/dat", "/srv/www/data"), 0);
    ck_assert_int_eq(rs_mounts_affects("/proc/sys", "/srv/www/data"), 0);
}
END_TEST

Suite *mounts_suite(void)
{
    Suite *s = suite_create("rs_mounts");
    TCase *tc = ut_tcase("core", 10);
    tcase_add_test(tc, parse_line);
    tcase_add_test(tc, changes);
    tcase_add_test(tc, affects);
    suite_add_tcase(s, tc);
    return s;
}
