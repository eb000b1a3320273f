/* SPDX-License-Identifier: Apache-2.0 */
/* test_hubflow.c - how the built-in hub's intake copes with floods:
 * rs_hubgate (spool bounds, full episodes, rates per client),
 * rs_hubsched (fair order of verifications) and rs_hubspool (new
 * requests from inotify, not from listings). */
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <apr_file_io.h>
#include <apr_strings.h>
#include <apr_thread_proc.h>
#include "unit.h"
#include "rs_hubgate.h"
#include "rs_hubreq.h"
#include "rs_hubsched.h"
#include "rs_hubspool.h"

/* ---- rs_hubgate ------------------------------------------------------ */

static rs_hubgate_t *gate(void)
{
    rs_hubgate_t *g = apr_palloc(ut_pool, sizeof(*g));
    rs_hubgate_init(g, 42);
    return g;
}

/* The count and the bytes each bound the spool; a refused reservation
 * counts nothing; releases never go below zero. */
START_TEST(gate_bounds)
{
    rs_hubgate_t *g = gate();

    ck_assert_int_eq(rs_hubgate_reserve(g, 100, 3, 1000), 1);
    ck_assert_int_eq(rs_hubgate_reserve(g, 100, 3, 1000), 1);
    ck_assert_int_eq(rs_hubgate_reserve(g, 100, 3, 1000), 1);
    ck_assert_int_eq(rs_hubgate_reserve(g, 100, 3, 1000), 0); /* count */
    ck_assert_uint_eq(g->count, 3);
    ck_assert_uint_eq(g->bytes, 300);
    rs_hubgate_release(g, 1, 100);
    ck_assert_int_eq(rs_hubgate_reserve(g, 801, 10, 1000), 0); /* bytes */
    ck_assert_int_eq(rs_hubgate_reserve(g, 800, 10, 1000), 1); /* exactly full */
    ck_assert_uint_eq(g->bytes, 1000);
    ck_assert_int_eq(rs_hubgate_reserve(g, 0xffffffffu, 10, 1000), 0); /* no wrap */
    ck_assert_uint_eq(g->bytes, 1000);
    rs_hubgate_set(g, 1, 50);
    rs_hubgate_release(g, 1, 100);
    rs_hubgate_release(g, 1, 100);
    ck_assert_uint_eq(g->count, 0);
    ck_assert_uint_eq(g->bytes, 0);
}
END_TEST

/* One "full" line per episode: the first refusal starts it, the first
 * success at three quarters of the bounds or below ends it. */
START_TEST(gate_episodes)
{
    rs_hubgate_t *g = gate();
    int i;

    for (i = 0; i < 8; i++) {
        ck_assert_int_eq(rs_hubgate_reserve(g, 1, 8, 1000), 1);
    }
    ck_assert_int_eq(rs_hubgate_reserve(g, 1, 8, 1000), 0);
    ck_assert_int_eq(rs_hubgate_full(g), 1);
    ck_assert_int_eq(rs_hubgate_full(g), 0);
    ck_assert_int_eq(rs_hubgate_full(g), 0);
    rs_hubgate_release(g, 1, 1); /* 7 of 8: hovering */
    ck_assert_int_eq(rs_hubgate_reserve(g, 1, 8, 1000), 1);
    ck_assert_int_eq(rs_hubgate_eased(g, 1, 8, 1000), 0);
    for (i = 0; i < 2; i++) {
        rs_hubgate_release(g, 1, 1);
    }
    ck_assert_int_eq(rs_hubgate_reserve(g, 1, 8, 1000), 1); /* made at 6 of 8 */
    ck_assert_int_eq(rs_hubgate_eased(g, 1, 8, 1000), 1);
    ck_assert_int_eq(rs_hubgate_eased(g, 1, 8, 1000), 0);
    ck_assert_int_eq(rs_hubgate_full(g), 1); /* a new episode */
    /* A bound of one request: the first reservation after the episode
     * ends it. */
    rs_hubgate_set(g, 0, 0);
    ck_assert_int_eq(rs_hubgate_reserve(g, 10, 1, 1000), 1);
    ck_assert_int_eq(rs_hubgate_eased(g, 10, 1, 1000), 1);
}
END_TEST

/* n requests at once per client, then one per per/n; clients apart. */
START_TEST(gate_rates)
{
    rs_hubgate_t *g = gate();
    apr_time_t t = apr_time_from_sec(1000000);
    apr_interval_time_t min = apr_time_from_sec(60);
    int i;

    for (i = 0; i < 3; i++) {
        ck_assert_int_eq(rs_hubgate_rate(g, "192.0.2.1", t, 3, min), 0);
    }
    ck_assert_int_eq(rs_hubgate_rate(g, "192.0.2.1", t, 3, min), 20);
    ck_assert_int_eq(rs_hubgate_rate(g, "192.0.2.1", t + apr_time_from_sec(19), 3, min), 1);
    ck_assert_int_eq(rs_hubgate_rate(g, "192.0.2.2", t, 3, min), 0);
    ck_assert_int_eq(rs_hubgate_rate(g, "2001:db8:1:2::/64", t, 3, min), 0);
    /* A refusal takes nothing: one token back 20 s later. */
    ck_assert_int_eq(rs_hubgate_rate(g, "192.0.2.1", t + apr_time_from_sec(20), 3, min), 0);
    ck_assert_int_eq(rs_hubgate_rate(g, "192.0.2.1", t + apr_time_from_sec(20), 3, min), 20);
    /* A full bucket again after a minute: three at once. */
    for (i = 0; i < 3; i++) {
        ck_assert_int_eq(rs_hubgate_rate(g, "192.0.2.1", t + apr_time_from_sec(80), 3, min), 0);
    }
}
END_TEST

/* Many clients: the table forgets (a forgotten client starts with a full
 * bucket), it never refuses a client that has not sent. */
START_TEST(gate_rates_many_clients)
{
    rs_hubgate_t *g = gate();
    apr_time_t t = apr_time_from_sec(1000000);
    int i;

    for (i = 0; i < 3 * RS_HUBGATE_SLOTS; i++) {
        const char *c = apr_psprintf(ut_pool, "10.%d.%d.%d", i >> 16, (i >> 8) & 255, i & 255);
        ck_assert_int_eq(rs_hubgate_rate(g, c, t, 1, apr_time_from_sec(3600)), 0);
    }
}
END_TEST

/* ---- rs_hubsched ----------------------------------------------------- */

static rs_hubsched_t *sched(int total, int per_host, int per_client)
{
    rs_hubsched_limits_t l;
    l.total = total;
    l.per_host = per_host;
    l.per_client = per_client;
    return rs_hubsched_create(ut_pool, &l);
}

static rs_hubsched_entry_t *add(rs_hubsched_t *s, const char *client, const char *host,
                                const char *tag)
{
    return rs_hubsched_add(s, client, host, (void *)tag);
}

static const char *next_tag(rs_hubsched_t *s, rs_hubsched_entry_t **e)
{
    *e = rs_hubsched_next(s);
    return *e ? rs_hubsched_item(*e) : "-";
}

/* A hundred requests for a hanging callback host, then one for another
 * host from the same client: the other starts while the hundred wait. */
START_TEST(sched_hanging_host)
{
    rs_hubsched_t *s = sched(32, 2, 8);
    rs_hubsched_entry_t *e;
    int i;

    for (i = 0; i < 100; i++) {
        add(s, "127.0.0.1", "127.0.0.3", "hang");
    }
    add(s, "127.0.0.1", "127.0.0.1", "good");
    ck_assert_str_eq(next_tag(s, &e), "hang");
    ck_assert_str_eq(next_tag(s, &e), "good");
    ck_assert_str_eq(next_tag(s, &e), "hang");
    ck_assert_str_eq(next_tag(s, &e), "-"); /* the host at its limit */
    ck_assert_int_eq(rs_hubsched_running(s), 3);
    ck_assert_int_eq(rs_hubsched_queued(s), 98);
}
END_TEST

/* Hosts take turns within a client, each host's requests in arrival
 * order; clients take turns; the limits per client and in total. */
START_TEST(sched_turns)
{
    rs_hubsched_t *s = sched(5, 10, 2);
    rs_hubsched_entry_t *e, *first;

    add(s, "a", "x", "ax1");
    add(s, "a", "x", "ax2");
    add(s, "a", "y", "ay1");
    add(s, "b", "x", "bx1");
    add(s, "c", "z", "cz1");
    add(s, "c", "z", "cz2");
    add(s, "c", "z", "cz3");
    ck_assert_str_eq(next_tag(s, &first), "ax1");
    ck_assert_str_eq(next_tag(s, &e), "bx1");
    ck_assert_str_eq(next_tag(s, &e), "cz1");
    ck_assert_str_eq(next_tag(s, &e), "ay1"); /* a's next host */
    ck_assert_str_eq(next_tag(s, &e), "cz2"); /* a at its limit of 2 */
    ck_assert_str_eq(next_tag(s, &e), "-");   /* 5 in total */
    rs_hubsched_done(s, first);
    ck_assert_str_eq(next_tag(s, &e), "ax2");
    ck_assert_int_eq(rs_hubsched_queued(s), 1);
}
END_TEST

/* Every entry is started once and freed when done; nothing is left. */
START_TEST(sched_drains)
{
    rs_hubsched_t *s = sched(3, 1, 2);
    rs_hubsched_entry_t *run[3];
    int i, n = 0, started = 0;

    for (i = 0; i < 60; i++) {
        add(s, i % 3 ? "a" : "b", apr_psprintf(ut_pool, "h%d", i % 5), "x");
    }
    while (rs_hubsched_queued(s) || n) {
        rs_hubsched_entry_t *e;
        while (n < 3 && (e = rs_hubsched_next(s))) {
            run[n++] = e;
            started++;
        }
        ck_assert_int_gt(n, 0);
        rs_hubsched_done(s, run[--n]);
    }
    ck_assert_int_eq(started, 60);
    ck_assert_int_eq(rs_hubsched_running(s), 0);
    ck_assert_ptr_null(rs_hubsched_next(s));
}
END_TEST

/* ---- rs_hubspool ----------------------------------------------------- */

static void touch(const char *path, const char *text)
{
    apr_file_t *f;
    ck_assert_int_eq(apr_file_open(&f, path,
                                   APR_FOPEN_CREATE | APR_FOPEN_WRITE | APR_FOPEN_TRUNCATE,
                                   APR_FPROT_OS_DEFAULT, ut_pool),
                     APR_SUCCESS);
    apr_file_puts(text, f);
    apr_file_close(f);
}

static apr_array_header_t *take(rs_hubspool_t *s, rs_hubspool_census_t *c)
{
    apr_array_header_t *names = apr_array_make(ut_pool, 4, sizeof(const char *));
    ck_assert_int_eq(rs_hubspool_take(s, ut_pool, names, c), APR_SUCCESS);
    return names;
}

#define NAME(a, i) APR_ARRAY_IDX(a, i, const char *)

/* A follower of a new spool directory dir below the test's directory,
 * after its first take (an empty listing). */
static rs_hubspool_t *follow(const char *dir)
{
    rs_hubspool_census_t c;
    rs_hubspool_t *s;
    ck_assert_int_eq(rs_hubspool_open(&s, ut_pool, dir, APR_FPROT_OS_DEFAULT), APR_SUCCESS);
    take(s, &c);
    ck_assert_int_eq(c.listed, 1);
    return s;
}

/* The first take lists (sorted, with a census); later ones report only
 * what events bring, also when the directory can no longer be listed. */
START_TEST(spool_follows_events)
{
    const char *dir = ut_path(ut_tempdir("spool"), "hub/spool");
    rs_hubspool_census_t c;
    apr_array_header_t *n;
    rs_hubspool_t *s;

    ck_assert_int_eq(rs_hubspool_open(&s, ut_pool, dir, APR_FPROT_OS_DEFAULT), APR_SUCCESS);
    touch(ut_path(dir, "00000000000000000002-b.req"), "22");
    touch(ut_path(dir, "00000000000000000001-a.req"), "1");
    touch(ut_path(dir, "tmp-abc"), "333");
    n = take(s, &c);
    ck_assert_int_eq(c.listed, 1);
    ck_assert_uint_eq(c.files, 3);
    ck_assert_uint_eq(c.bytes, 6);
    ck_assert_int_eq(n->nelts, 2);
    ck_assert_str_eq(NAME(n, 0), "00000000000000000001-a.req");
    ck_assert_str_eq(NAME(n, 1), "00000000000000000002-b.req");
    n = take(s, &c);
    ck_assert_int_eq(c.listed, 0);
    ck_assert_int_eq(n->nelts, 0);
    /* Not listable any more (as if its mode changed under the watcher):
     * requests still arrive through events.  Root reads any directory,
     * so the proof that no listing happens is the census. */
    chmod(dir, 0300);
    touch(ut_path(dir, "tmp-def"), "x");
    ck_assert_int_eq(rename(ut_path(dir, "tmp-def"), ut_path(dir, "00000000000000000003-c.req")),
                     0);
    touch(ut_path(dir, "00000000000000000004-d.req"), "y"); /* written in place */
    touch(ut_path(dir, "notes.txt"), "z");
    n = take(s, &c);
    ck_assert_int_eq(c.listed, 0);
    ck_assert_int_eq(n->nelts, 2);
    ck_assert_str_eq(NAME(n, 0), "00000000000000000003-c.req");
    ck_assert_str_eq(NAME(n, 1), "00000000000000000004-d.req");
    chmod(dir, 0700);
}
END_TEST

/* Writes in progress left behind are swept after their age, those
 * renamed or removed are not. */
START_TEST(spool_sweeps_abandoned_writes)
{
    const char *dir = ut_path(ut_tempdir("spool2"), "spool");
    rs_hubspool_t *s = follow(dir);
    rs_hubspool_census_t c;
    apr_uint32_t files;
    apr_uint64_t bytes;

    touch(ut_path(dir, "tmp-left"), "12345");
    touch(ut_path(dir, "tmp-done"), "1");
    ck_assert_int_eq(rename(ut_path(dir, "tmp-done"), ut_path(dir, "1-x.req")), 0);
    touch(ut_path(dir, "tmp-gone"), "1");
    ck_assert_int_eq(unlink(ut_path(dir, "tmp-gone")), 0);
    take(s, &c);
    rs_hubspool_sweep(s, apr_time_now(), apr_time_from_sec(60), &files, &bytes);
    ck_assert_uint_eq(files, 0);
    ck_assert_int_eq(access(ut_path(dir, "tmp-left"), F_OK), 0);
    rs_hubspool_sweep(s, apr_time_now() + apr_time_from_sec(61), apr_time_from_sec(60), &files,
                      &bytes);
    ck_assert_uint_eq(files, 1);
    ck_assert_uint_eq(bytes, 5);
    ck_assert_int_ne(access(ut_path(dir, "tmp-left"), F_OK), 0);
    ck_assert_int_eq(access(ut_path(dir, "1-x.req"), F_OK), 0);
    rs_hubspool_sweep(s, apr_time_now() + apr_time_from_sec(61), apr_time_from_sec(60), &files,
                      &bytes);
    ck_assert_uint_eq(files, 0);
}
END_TEST

/* The directory removed under the follower: created again and listed. */
START_TEST(spool_recreated)
{
    const char *dir = ut_path(ut_tempdir("spool3"), "spool");
    rs_hubspool_t *s = follow(dir);
    rs_hubspool_census_t c;
    apr_array_header_t *n;

    ck_assert_int_eq(rmdir(dir), 0);
    take(s, &c); /* the loss seen, the directory back */
    touch(ut_path(dir, "5-e.req"), "e");
    n = take(s, &c);
    ck_assert_int_eq(n->nelts, 1);
    ck_assert_str_eq(NAME(n, 0), "5-e.req");
}
END_TEST

Suite *hubflow_suite(void)
{
    Suite *s = suite_create("hubflow");
    TCase *tc = ut_tcase("gate", 10);
    tcase_add_test(tc, gate_bounds);
    tcase_add_test(tc, gate_episodes);
    tcase_add_test(tc, gate_rates);
    tcase_add_test(tc, gate_rates_many_clients);
    suite_add_tcase(s, tc);
    tc = ut_tcase("sched", 10);
    tcase_add_test(tc, sched_hanging_host);
    tcase_add_test(tc, sched_turns);
    tcase_add_test(tc, sched_drains);
    suite_add_tcase(s, tc);
    tc = ut_tcase("spool", 10);
    tcase_add_test(tc, spool_follows_events);
    tcase_add_test(tc, spool_sweeps_abandoned_writes);
    tcase_add_test(tc, spool_recreated);
    suite_add_tcase(s, tc);
    return s;
}
