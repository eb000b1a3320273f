/* SPDX-License-Identifier: Apache-2.0 */
/* test_generation.c - rs_generation (the snapshot generation protocol). */
#include <string.h>
#include <sys/stat.h>
#include <utime.h>
#include <apr_strings.h>
#include <apr_time.h>
#include "unit.h"
#include "rs_generation.h"
#include "rs_statedir.h"

#define KEEP apr_time_from_sec(3600)

/* Set path's mtime to t (apr_time_t). */
static void set_mtime(const char *path, apr_time_t t)
{
    struct utimbuf ub;
    ub.actime = ub.modtime = (time_t)apr_time_sec(t);
    ck_assert_int_eq(utime(path, &ub), 0);
}

START_TEST(begin_numbers)
{
    char *snapset = ut_path(ut_tempdir("gen-begin"), "set");
    rs_generation_t g;

    /* snapset is created; the number follows the larger counter. */
    ck_assert_int_eq(rs_generation_begin(ut_pool, snapset, 0, 0, &g), APR_SUCCESS);
    ck_assert_uint_eq(g.gen, 1);
    ck_assert(ut_exists(g.tmp));
    ck_assert_str_eq(g.tmp, rs_statedir_gen_tmp(ut_pool, snapset, 1));
    ck_assert_str_eq(g.final, rs_statedir_gen(ut_pool, snapset, 1));
    ck_assert_int_eq(rs_generation_begin(ut_pool, snapset, 7, 3, &g), APR_SUCCESS);
    ck_assert_uint_eq(g.gen, 8);
    ck_assert_int_eq(rs_generation_begin(ut_pool, snapset, 3, 9, &g), APR_SUCCESS);
    ck_assert_uint_eq(g.gen, 10);
}
END_TEST

START_TEST(begin_skips_existing)
{
    char *snapset = ut_tempdir("gen-skip");
    rs_generation_t g;

    /* Generations 5 and 6 were published but never recorded. */
    ut_mkdir(rs_statedir_gen(ut_pool, snapset, 5));
    ut_mkdir(rs_statedir_gen(ut_pool, snapset, 6));
    ut_write_str(ut_path(rs_statedir_gen(ut_pool, snapset, 5), "resourcelist.xml"), "five");
    ck_assert_int_eq(rs_generation_begin(ut_pool, snapset, 4, 4, &g), APR_SUCCESS);
    ck_assert_uint_eq(g.gen, 7);
    /* What was on disk is untouched. */
    ck_assert(ut_exists(ut_path(rs_statedir_gen(ut_pool, snapset, 5), "resourcelist.xml")));
}
END_TEST

START_TEST(begin_clears_tmp_and_publish)
{
    char *snapset = ut_tempdir("gen-publish");
    char *tmp = (char *)rs_statedir_gen_tmp(ut_pool, snapset, 1);
    rs_generation_t g;
    size_t len;

    /* A leftover of an interrupted write of the same number. */
    ut_mkdir(tmp);
    ut_write_str(ut_path(tmp, "part-1.xml"), "stale");
    ck_assert_int_eq(rs_generation_begin(ut_pool, snapset, 0, 0, &g), APR_SUCCESS);
    ck_assert(ut_exists(g.tmp));
    ck_assert(!ut_exists(ut_path(g.tmp, "part-1.xml")));
    ut_write_str(ut_path(g.tmp, "resourcelist.xml"), "list");
    ck_assert_int_eq(rs_generation_publish(ut_pool, snapset, &g), APR_SUCCESS);
    ck_assert(!ut_exists(g.tmp));
    ck_assert_str_eq(ut_read(ut_path(g.final, "resourcelist.xml"), &len), "list");
    /* Publishing twice fails with the rename's cause; abandon cleans up. */
    ck_assert_int_eq(rs_generation_begin(ut_pool, snapset, 1, 1, &g), APR_SUCCESS);
    rs_generation_abandon(ut_pool, &g);
    ck_assert(!ut_exists(g.tmp));
    ck_assert(APR_STATUS_IS_ENOENT(rs_generation_publish(ut_pool, snapset, &g)));
}
END_TEST

START_TEST(prune_marks_then_removes)
{
    char *snapset = ut_tempdir("gen-prune");
    const char *g1 = rs_statedir_gen(ut_pool, snapset, 1);
    const char *g2 = rs_statedir_gen(ut_pool, snapset, 2);
    const char *g3 = rs_statedir_gen(ut_pool, snapset, 3);
    const char *tmp = rs_statedir_gen_tmp(ut_pool, snapset, 4);
    apr_time_t now = apr_time_now();

    ut_mkdir(g1);
    ut_mkdir(g2);
    ut_mkdir(g3);
    ut_mkdir(tmp);
    ut_write_str(ut_path(tmp, "part-1.xml"), "x");
    ut_write_str(ut_path(g3, "resourcelist.xml"), "current");

    /* First prune: superseded generations are marked, tmp-* removed. */
    rs_generation_prune(ut_pool, snapset, 3, KEEP, now);
    ck_assert(!ut_exists(tmp));
    ck_assert(ut_exists(rs_statedir_gen_superseded(ut_pool, g1)));
    ck_assert(ut_exists(rs_statedir_gen_superseded(ut_pool, g2)));
    ck_assert(!ut_exists(rs_statedir_gen_superseded(ut_pool, g3)));

    /* Within the keep time nothing is removed. */
    rs_generation_prune(ut_pool, snapset, 3, KEEP, now + KEEP - apr_time_from_sec(10));
    ck_assert(ut_exists(g1));
    ck_assert(ut_exists(g2));

    /* g1 was marked long ago: it goes; g2's marker is recent: it stays. */
    set_mtime(rs_statedir_gen_superseded(ut_pool, g1), now - 2 * KEEP);
    rs_generation_prune(ut_pool, snapset, 3, KEEP, now);
    ck_assert(!ut_exists(g1));
    ck_assert(ut_exists(g2));

    /* After the keep time, every superseded one goes, never the current. */
    rs_generation_prune(ut_pool, snapset, 3, KEEP, now + 2 * KEEP);
    ck_assert(!ut_exists(g2));
    ck_assert(ut_exists(ut_path(g3, "resourcelist.xml")));
    ck_assert(!ut_exists(rs_statedir_gen_superseded(ut_pool, g3)));

    /* A missing snapset is fine. */
    rs_generation_prune(ut_pool, ut_path(snapset, "none"), 3, KEEP, now);
}
END_TEST

Suite *generation_suite(void)
{
    Suite *s = suite_create("rs_generation");
    TCase *tc = ut_tcase("generation", 10);

    tcase_add_test(tc, begin_numbers);
    tcase_add_test(tc, begin_skips_existing);
    tcase_add_test(tc, begin_clears_tmp_and_publish);
    tcase_add_test(tc, prune_marks_then_removes);
    suite_add_tcase(s, tc);
    return s;
}
