/* test_watch.c - rs_watch: settling deadlines are on the monotonic clock */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "unit.h"
#include "rs_time.h"
#include "rs_watch.h"

START_TEST(mono_follows_clock_monotonic)
{
    struct timespec a, b;
    apr_time_t m;
    clock_gettime(CLOCK_MONOTONIC, &a);
    m = rs_time_mono();
    clock_gettime(CLOCK_MONOTONIC, &b);
    ck_assert_int_ge(m, (apr_time_t)a.tv_sec * APR_USEC_PER_SEC + a.tv_nsec / 1000);
    ck_assert_int_le(m, (apr_time_t)b.tv_sec * APR_USEC_PER_SEC + b.tv_nsec / 1000);
    ck_assert_int_le(m, rs_time_mono());
}
END_TEST

/* A symlink is created and never closed: it settles, and is due
 * RS_WATCH_SETTLE after it was read on the monotonic clock - not on the
 * wall clock, which may be stepped back meanwhile (the watcher passes
 * rs_time_mono() to rs_watch_take). */
START_TEST(settling_due_on_monotonic_clock)
{
    const char *dir = ut_tempdir("watch");
    rs_watch_t *w;
    rs_scan_target_t *t;
    apr_time_t m0, m1, due;
    int dfd, n;

    ck_assert_int_eq(rs_watch_create(&w, ut_pool, dir, 0), APR_SUCCESS);
    dfd = open(dir, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge(dfd, 0);
    ck_assert_int_eq(rs_watch_add(w, "", dfd), 0);
    close(dfd);
    ck_assert_int_eq(symlink("nowhere", ut_path(dir, "link")), 0);

    m0 = rs_time_mono();
    ck_assert_int_eq(rs_watch_read(w), APR_SUCCESS);
    m1 = rs_time_mono();
    due = rs_watch_next_due(w);
    ck_assert_int_ge(due, m0 + RS_WATCH_SETTLE);
    ck_assert_int_le(due, m1 + RS_WATCH_SETTLE);

    /* Not before it is due, then exactly once. */
    ck_assert_int_eq(rs_watch_take(w, ut_pool, due - 1, &t), 0);
    n = rs_watch_take(w, ut_pool, due, &t);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(t[0].dir, "");
    ck_assert_int_eq(t[0].names->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(t[0].names, 0, const char *), "link");
    ck_assert_int_eq(rs_watch_next_due(w), 0);
    ck_assert_int_eq(rs_watch_take(w, ut_pool, due + RS_WATCH_SETTLE, &t), 0);
}
END_TEST

Suite *watch_suite(void)
{
    Suite *s = suite_create("rs_watch");
    TCase *tc = ut_tcase("clock", 10);
    tcase_add_test(tc, mono_follows_clock_monotonic);
    tcase_add_test(tc, settling_due_on_monotonic_clock);
    suite_add_tcase(s, tc);
    return s;
}
