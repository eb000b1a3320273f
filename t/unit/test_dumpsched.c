/* SPDX-License-Identifier: Apache-2.0 */
/* test_dumpsched.c - rs_dumpsched: when a set's Resource Dump is due (at
 * start, after a snapshot, its interval, pruning once a second), when its
 * Change Dump job is due (a list closed, the period, the collection's
 * pacing after deletions), and the disk-full episodes said once; all with
 * explicit times. */
#include <errno.h>
#include "unit.h"
#include "rs_dumpsched.h"

#define SEC(n)  apr_time_from_sec(n)
#define MSEC(n) apr_time_from_msec(n)

START_TEST(no_space_causes)
{
    ck_assert(rs_dumpsched_no_space(APR_FROM_OS_ERROR(ENOSPC)));
#ifdef EDQUOT
    ck_assert(rs_dumpsched_no_space(APR_FROM_OS_ERROR(EDQUOT)));
#endif
    ck_assert(!rs_dumpsched_no_space(APR_FROM_OS_ERROR(EIO)));
    ck_assert(!rs_dumpsched_no_space(APR_SUCCESS));
}
END_TEST

/* The first build at start, then one after every snapshot (section 9:
 * the dump covers what the Resource List does), the next waiting as long
 * as the last took, at most the interval; none while the job thread or
 * the set cannot. */
START_TEST(dump_interval)
{
    rs_dumpsched_t d = { 0 };

    ck_assert(!rs_dumpsched_due(&d, SEC(10), 0));
    ck_assert(rs_dumpsched_due(&d, SEC(10), 1)); /* never tried */
    rs_dumpsched_started(&d, SEC(10));
    ck_assert(d.tried);
    rs_dumpsched_built(&d, SEC(12), SEC(60)); /* took 2 s */
    ck_assert_int_eq(d.next, SEC(14));
    ck_assert(!rs_dumpsched_due(&d, SEC(100), 1)); /* no snapshot since */
    d.due = 1;                                     /* a snapshot was published */
    ck_assert(rs_dumpsched_due(&d, SEC(100), 1));
    ck_assert(!rs_dumpsched_due(&d, SEC(100), 0));
    rs_dumpsched_started(&d, SEC(100));
    ck_assert(!d.due);
    /* A long build (a whole one: most packages changed) waits as long,
     * at most the interval. */
    rs_dumpsched_built(&d, SEC(130), SEC(60));
    ck_assert_int_eq(d.next, SEC(160));
    d.due = 1;
    ck_assert(!rs_dumpsched_due(&d, SEC(159), 1));
    ck_assert(rs_dumpsched_due(&d, SEC(160), 1));
    rs_dumpsched_started(&d, SEC(160));
    rs_dumpsched_built(&d, SEC(400), SEC(60));
    ck_assert_int_eq(d.next, SEC(460));
    /* A build that took no time (the clock did not move) follows its
     * snapshot at once. */
    d.due = 1;
    rs_dumpsched_started(&d, SEC(460));
    rs_dumpsched_built(&d, SEC(460), SEC(60));
    d.due = 1;
    ck_assert(rs_dumpsched_due(&d, SEC(460), 1));
    /* Another failure: the next snapshot tries again, not the interval. */
    rs_dumpsched_started(&d, SEC(460));
    rs_dumpsched_failed(&d);
    ck_assert(!rs_dumpsched_due(&d, SEC(461), 1));
    d.due = 1;
    ck_assert(rs_dumpsched_due(&d, SEC(461), 1));
}
END_TEST

/* No space: warned once per episode, retried after the interval (at
 * least a second) without a change; the end of the episode said once. */
START_TEST(dump_nospace_once)
{
    rs_dumpsched_t d = { 0 };

    rs_dumpsched_started(&d, SEC(10));
    ck_assert_int_eq(rs_dumpsched_nospace(&d, SEC(20), SEC(60)), RS_LOG_WARN);
    ck_assert_int_eq(d.next, SEC(80));
    ck_assert(!rs_dumpsched_due(&d, SEC(79), 1));
    ck_assert(rs_dumpsched_due(&d, SEC(80), 1));
    rs_dumpsched_started(&d, SEC(80));
    ck_assert_int_eq(rs_dumpsched_nospace(&d, SEC(81), 0), RS_LOG_DEBUG);
    ck_assert_int_eq(d.next, SEC(82)); /* at least a second */
    ck_assert(rs_dumpsched_due(&d, SEC(82), 1));
    ck_assert_int_eq(rs_dumpsched_published(&d), 1);
    ck_assert_int_eq(rs_dumpsched_published(&d), 0);
    ck_assert_int_eq(rs_dumpsched_nospace(&d, SEC(90), SEC(5)), RS_LOG_WARN);
}
END_TEST

START_TEST(dump_prune_pacing)
{
    rs_dumpsched_t d = { 0 };

    ck_assert(!rs_dumpsched_prune(&d, SEC(5), 0, 0)); /* no dump yet */
    ck_assert(!rs_dumpsched_prune(&d, SEC(5), 1, 3)); /* a build runs */
    ck_assert(rs_dumpsched_prune(&d, SEC(5), 0, 3));
    ck_assert(!rs_dumpsched_prune(&d, SEC(5) + MSEC(999), 0, 3));
    ck_assert(rs_dumpsched_prune(&d, SEC(6), 0, 3));
}
END_TEST

/* A Change Dump job: at start, when a list closed, once per period (at
 * most an hour). */
START_TEST(cdump_lists_and_period)
{
    rs_cdumpsched_t c = { 0 };
    int collect = -1, first = -1;

    ck_assert(!rs_cdumpsched_due(&c, SEC(1), 0, 4));
    ck_assert(rs_cdumpsched_due(&c, SEC(1), 1, 4));
    rs_cdumpsched_started(&c, SEC(1), 4, SEC(600), &collect, &first);
    ck_assert_int_eq(collect, 0);
    ck_assert_int_eq(first, 1);
    ck_assert_int_eq(c.seen, 4);
    ck_assert(!rs_cdumpsched_due(&c, SEC(600), 1, 4));
    ck_assert(rs_cdumpsched_due(&c, SEC(2), 1, 5)); /* a list closed */
    ck_assert(rs_cdumpsched_due(&c, SEC(601), 1, 4));
    c.written = 1;
    rs_cdumpsched_started(&c, SEC(601), 4, SEC(86400), &collect, &first);
    ck_assert_int_eq(first, 0);
    ck_assert_int_eq(c.next, SEC(601) + SEC(3600));
}
END_TEST

/* Deletions make a collection due, paced by ten times the last one's
 * duration, at least two seconds. */
START_TEST(cdump_gc_pacing)
{
    rs_cdumpsched_t c = { 0 };
    int collect = -1, first = -1;

    rs_cdumpsched_started(&c, SEC(1), 4, SEC(600), &collect, &first);
    rs_cdumpsched_collected(&c, SEC(2), MSEC(10));
    ck_assert_int_eq(c.gc_next, SEC(4));
    c.deleted = 1;
    ck_assert(!rs_cdumpsched_due(&c, SEC(3), 1, 4));
    ck_assert(rs_cdumpsched_due(&c, SEC(4), 1, 4));
    ck_assert(!rs_cdumpsched_due(&c, SEC(4), 0, 4));
    rs_cdumpsched_started(&c, SEC(4), 4, SEC(600), &collect, &first);
    ck_assert_int_eq(collect, 1);
    ck_assert(!c.deleted);
    rs_cdumpsched_collected(&c, SEC(10), SEC(3)); /* took 3 s */
    ck_assert_int_eq(c.gc_next, SEC(40));
    c.deleted = 1;
    ck_assert(!rs_cdumpsched_due(&c, SEC(39), 1, 4));
    ck_assert(rs_cdumpsched_due(&c, SEC(40), 1, 4));
}
END_TEST

START_TEST(cdump_nospace_once)
{
    rs_cdumpsched_t c = { 0 };
    int collect, first;

    rs_cdumpsched_started(&c, SEC(1), 4, SEC(600), &collect, &first);
    ck_assert_int_eq(rs_cdumpsched_nospace(&c, SEC(5)), RS_LOG_WARN);
    ck_assert_int_eq(c.next, SEC(15));
    ck_assert(!rs_cdumpsched_due(&c, SEC(14), 1, 4));
    ck_assert(rs_cdumpsched_due(&c, SEC(15), 1, 4));
    ck_assert_int_eq(rs_cdumpsched_nospace(&c, SEC(15)), RS_LOG_DEBUG);
    ck_assert_int_eq(rs_cdumpsched_ok(&c), 1);
    ck_assert_int_eq(rs_cdumpsched_ok(&c), 0);
    ck_assert_int_eq(rs_cdumpsched_nospace(&c, SEC(30)), RS_LOG_WARN);
}
END_TEST

Suite *dumpsched_suite(void)
{
    Suite *s = suite_create("dumpsched");
    TCase *tc = ut_tcase("resourcedump", 10);

    tcase_add_test(tc, no_space_causes);
    tcase_add_test(tc, dump_interval);
    tcase_add_test(tc, dump_nospace_once);
    tcase_add_test(tc, dump_prune_pacing);
    suite_add_tcase(s, tc);
    tc = ut_tcase("changedump", 10);
    tcase_add_test(tc, cdump_lists_and_period);
    tcase_add_test(tc, cdump_gc_pacing);
    tcase_add_test(tc, cdump_nospace_once);
    suite_add_tcase(s, tc);
    return s;
}
