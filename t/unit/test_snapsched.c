/* SPDX-License-Identifier: Apache-2.0 */
/* test_snapsched.c - rs_snapsched: when a set's fresh Resource List is
 * due (quiet time, maximum wait, half the job thread, the retry while the
 * job thread is busy, a failing write, retention past its at), with
 * explicit times; the store's bookkeeping of each snapshot and the job's
 * body, on a real SQLite store and a temporary directory. */
#include <string.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_history.h"
#include "rs_inventory.h"
#include "rs_schema.h"
#include "rs_snapsched.h"
#include "rs_blob.h"

#define SEC(n)  apr_time_from_sec(n)
#define MSEC(n) apr_time_from_msec(n)

START_TEST(quiet_after_last_change)
{
    rs_snapsched_t s = { 0 };

    ck_assert_int_eq(rs_snapsched_due(&s), 0);
    ck_assert(!rs_snapsched_poll(&s, SEC(100), 0));
    rs_snapsched_changed(&s, SEC(100));
    ck_assert(s.dirty);
    ck_assert_int_eq(rs_snapsched_due(&s), SEC(101));
    rs_snapsched_changed(&s, SEC(100) + MSEC(300));
    ck_assert_int_eq(s.first, SEC(100));
    ck_assert_int_eq(rs_snapsched_due(&s), SEC(101) + MSEC(300));
    ck_assert(!rs_snapsched_poll(&s, SEC(101) + MSEC(299), 0));
    ck_assert(rs_snapsched_poll(&s, SEC(101) + MSEC(300), 0));
    rs_snapsched_started(&s);
    ck_assert(!s.dirty);
    ck_assert_int_eq(s.first, 0);
    ck_assert_int_eq(rs_snapsched_due(&s), 0);
}
END_TEST

/* Under continuous change the list comes at most 1.5 s after the first. */
START_TEST(max_wait_under_change)
{
    rs_snapsched_t s = { 0 };
    apr_time_t t;

    for (t = SEC(50); t <= SEC(52); t += MSEC(200)) {
        rs_snapsched_changed(&s, t);
    }
    ck_assert_int_eq(rs_snapsched_due(&s), SEC(50) + MSEC(1500));
    ck_assert(rs_snapsched_poll(&s, SEC(52), 0));
}
END_TEST

/* The next snapshot starts no earlier than the last end plus its time. */
START_TEST(half_the_job_thread)
{
    rs_snapsched_t s = { 0 };

    rs_snapsched_ended(&s, SEC(10), SEC(18)); /* took 8 s */
    ck_assert_int_eq(s.next, SEC(26));
    rs_snapsched_changed(&s, SEC(19));
    ck_assert_int_eq(rs_snapsched_due(&s), SEC(26));
    ck_assert(!rs_snapsched_poll(&s, SEC(25), 0));
    ck_assert(rs_snapsched_poll(&s, SEC(26), 0));
    /* A job whose start is unknown, or a clock that did not move: no wait. */
    rs_snapsched_ended(&s, 0, SEC(30));
    ck_assert_int_eq(s.next, SEC(30));
    rs_snapsched_ended(&s, SEC(31), SEC(30));
    ck_assert_int_eq(s.next, SEC(30));
}
END_TEST

/* The job thread busy: looked at again 200 ms later, still dirty. */
START_TEST(busy_retries)
{
    rs_snapsched_t s = { 0 };

    rs_snapsched_changed(&s, SEC(5));
    ck_assert(!rs_snapsched_poll(&s, SEC(6), 1));
    ck_assert(s.dirty);
    ck_assert_int_eq(s.next, SEC(6) + MSEC(200));
    ck_assert_int_eq(rs_snapsched_due(&s), SEC(6) + MSEC(200));
    ck_assert(!rs_snapsched_poll(&s, SEC(6) + MSEC(199), 0));
    ck_assert(rs_snapsched_poll(&s, SEC(6) + MSEC(200), 0));
    /* Not due yet: busy changes nothing. */
    rs_snapsched_started(&s);
    s.next = 0;
    rs_snapsched_changed(&s, SEC(7));
    ck_assert(!rs_snapsched_poll(&s, SEC(7), 1));
    ck_assert_int_eq(s.next, 0);
}
END_TEST

/* A failing write: error once, then debug; waits for the tick (not due);
 * a success ends the episode once. */
START_TEST(failing_write)
{
    rs_snapsched_t s = { 0 };

    rs_snapsched_changed(&s, SEC(1));
    rs_snapsched_started(&s);
    ck_assert_int_eq(rs_snapsched_failed(&s), RS_LOG_ERR);
    ck_assert(s.dirty);
    ck_assert_int_eq(rs_snapsched_failed(&s), RS_LOG_DEBUG);
    rs_snapsched_changed(&s, SEC(2));
    ck_assert_int_eq(rs_snapsched_due(&s), 0);
    ck_assert(!rs_snapsched_poll(&s, SEC(100), 0));
    ck_assert_int_eq(rs_snapsched_recovered(&s), 1);
    ck_assert_int_eq(rs_snapsched_recovered(&s), 0);
    ck_assert_int_eq(rs_snapsched_due(&s), SEC(3));
    ck_assert_int_eq(rs_snapsched_failed(&s), RS_LOG_ERR);
}
END_TEST

/* Retention moved the journal's start (the index's from) past the at of
 * the list in service: a new snapshot is due (dirty); up to and at that
 * at, or before any list, nothing. */
START_TEST(outlived_by_retention)
{
    rs_snapsched_t s = { 0 };

    ck_assert_int_eq(rs_snapsched_outlived(&s, SEC(5), 0), 0); /* no list yet */
    ck_assert(!s.dirty);
    ck_assert_int_eq(rs_snapsched_outlived(&s, SEC(5), SEC(7)), 0);
    ck_assert_int_eq(rs_snapsched_outlived(&s, SEC(7), SEC(7)), 0);
    ck_assert(!s.dirty);
    ck_assert_int_eq(rs_snapsched_outlived(&s, SEC(7) + 1, SEC(7)), 1);
    ck_assert(s.dirty);
    rs_snapsched_started(&s); /* the new one's at is past the start */
    ck_assert_int_eq(rs_snapsched_outlived(&s, SEC(7) + 1, SEC(9)), 0);
    ck_assert(!s.dirty);
}
END_TEST

static rs_db_t *open_store(const char *base, ut_log_t *ul)
{
    rs_db_t *st;

    ck_assert_int_eq(
        rs_schema_open(&st, ut_pool, "sqlite3", ut_path(base, "state.db"), ut_log_init(ul)),
        APR_SUCCESS);
    return st;
}

START_TEST(store_bookkeeping)
{
    ut_log_t ul;
    rs_db_t *st = open_store(ut_tempdir("snapsched"), &ul);
    const char *v = NULL;
    const char *gendir = ut_tempdir("snapsched-gen");
    apr_int64_t files = -1, chunks = -1;

    ck_assert_uint_eq(rs_snapsched_stored_gen(st, ut_pool, "s"), 0);
    ck_assert(!rs_snapsched_same_key(st, ut_pool, "s", "k1"));
    ut_write_str(ut_path(gendir, "info"), "7 1 1 0 1 0\n");
    ck_assert_int_eq(rs_snapsched_record(st, ut_pool, "s", 7, "k1", 42, gendir), APR_SUCCESS);
    /* One node's store (SQLite): no file of the generation is stored. */
    ck_assert_int_eq(rs_blob_count(st, "s", &files, &chunks), APR_SUCCESS);
    ck_assert_int_eq(files + chunks, 0);
    ck_assert_uint_eq(rs_snapsched_stored_gen(st, ut_pool, "s"), 7);
    ck_assert_uint_eq(rs_snapsched_stored_gen(st, ut_pool, "t"), 0);
    ck_assert(rs_snapsched_same_key(st, ut_pool, "s", "k1"));
    ck_assert(!rs_snapsched_same_key(st, ut_pool, "s", "k2"));
    ck_assert_int_eq(rs_db_meta_get(st, ut_pool, "snapshot-seq:s", &v), APR_SUCCESS);
    ck_assert_str_eq(v, "42");
    /* The floor only raises. */
    rs_snapsched_gen_floor(st, ut_pool, "s", 5);
    ck_assert_uint_eq(rs_snapsched_stored_gen(st, ut_pool, "s"), 7);
    rs_snapsched_gen_floor(st, ut_pool, "s", 9);
    ck_assert_uint_eq(rs_snapsched_stored_gen(st, ut_pool, "s"), 9);
    rs_snapsched_gen_floor(st, ut_pool, "t", 3);
    ck_assert_uint_eq(rs_snapsched_stored_gen(st, ut_pool, "t"), 3);
    rs_snapsched_gen_floor(st, ut_pool, "u", 0);
    ck_assert_int_eq(rs_db_meta_get(st, ut_pool, "snapshot-gen:u", &v), APR_SUCCESS);
    ck_assert_ptr_null(v);
}
END_TEST

static void put_file(rs_db_t *st, const char *name, apr_int64_t size)
{
    rs_item_t it;

    memset(&it, 0, sizeof(it));
    it.dir = "";
    it.name = name;
    it.size = size;
    it.mtime_ns = 1600000000LL * 1000000000 + size;
    it.ctime_ns = it.mtime_ns;
    it.dev = 1;
    it.ino = size + 1;
    it.listed = 1;
    it.cfg = "c";
    it.type = "text/plain";
    ck_assert_int_eq(rs_inventory_put(st, "s", &it), APR_SUCCESS);
}

/* The job's body writes the list from the store it reads; a store of
 * another history (replaced meanwhile) writes nothing. */
START_TEST(write_or_other_store)
{
    const char *base = ut_tempdir("snapsched");
    const char *tmp = ut_path(base, "tmp"), *tmp2 = ut_path(base, "tmp2");
    ut_log_t ul;
    rs_db_t *st = open_store(base, &ul);
    rs_snapshot_opts_t sn;
    rs_snapshot_info_t info;
    int other = 0;
    size_t len;
    char *doc;

    ut_mkdir(tmp);
    ut_mkdir(tmp2);
    ck_assert_int_eq(rs_db_meta_put(st, RS_HISTORY_META, "abcd"), APR_SUCCESS);
    put_file(st, "a.txt", 3);
    put_file(st, "b.txt", 4);
    memset(&sn, 0, sizeof(sn));
    sn.set = "s";
    sn.entry.url_base = "http://example.org/files/";
    sn.capability_url = "http://example.org/rs/s/capabilitylist.xml";
    sn.list_url = "http://example.org/rs/s/resourcelist.xml";
    sn.part_url_prefix = "http://example.org/rs/s/resourcelist/abcd-";
    sn.max_entries = 1000;
    sn.at = SEC(1700000000);
    sn.completed = SEC(1700000001);
    sn.log = &ul.logger;
    memset(&info, 0, sizeof(info));
    ck_assert_int_eq(rs_snapsched_write(st, &sn, tmp, 1, "abcd", ut_pool, &info, &other),
                     APR_SUCCESS);
    ck_assert_int_eq(other, 0);
    ck_assert_int_eq(info.entries, 2);
    doc = ut_read(ut_path(tmp, "resourcelist.xml"), &len);
    ck_assert_ptr_nonnull(strstr(doc, "http://example.org/files/a.txt"));
    ck_assert_ptr_nonnull(strstr(doc, "http://example.org/files/b.txt"));

    memset(&info, 0, sizeof(info));
    ck_assert_int_eq(rs_snapsched_write(st, &sn, tmp2, 2, "ef01", ut_pool, &info, &other),
                     APR_ENOENT);
    ck_assert_int_eq(other, 1);
    ck_assert(!ut_exists(ut_path(tmp2, "resourcelist.xml")));
}
END_TEST

Suite *snapsched_suite(void)
{
    Suite *s = suite_create("snapsched");
    TCase *tc = ut_tcase("schedule", 10);

    tcase_add_test(tc, quiet_after_last_change);
    tcase_add_test(tc, max_wait_under_change);
    tcase_add_test(tc, half_the_job_thread);
    tcase_add_test(tc, busy_retries);
    tcase_add_test(tc, failing_write);
    tcase_add_test(tc, outlived_by_retention);
    suite_add_tcase(s, tc);
    tc = ut_tcase("store", 30);
    tcase_add_test(tc, store_bookkeeping);
    tcase_add_test(tc, write_or_other_store);
    suite_add_tcase(s, tc);
    return s;
}
