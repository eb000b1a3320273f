/* test_hubsub.c - rs_hubsub: the built-in hub's subscription rows
 * (insert, renewal, removal, lease expiry, limits). */
#include <string.h>
#include <apr_strings.h>
#include <apr_time.h>
#include "unit.h"
#include "rs_hubsub.h"
#include "rs_schema.h"

static rs_db_t *db;
static ut_log_t ul;

static void open_db(void)
{
    const char *base = ut_tempdir("hubsub");
    ck_assert_int_eq(rs_schema_open(&db, ut_pool, "sqlite3", ut_path(base, "state.db"),
                                    ut_log_init(&ul)), APR_SUCCESS);
}

static void run(const char *stmt)
{
    ck_assert_int_eq(rs_db_run(db, stmt), APR_SUCCESS);
}

static apr_array_header_t *subs(void)
{
    apr_array_header_t *a;
    ck_assert_int_eq(rs_hubsub_list(db, ut_pool, &a), APR_SUCCESS);
    return a;
}

#define SUB(a, i) APR_ARRAY_IDX(a, i, rs_hubsub_t)

/* A new row starts after the topic's newest sealed notification; a
 * renewal replaces lease and secret and keeps the cursor. */
START_TEST(put_and_renew)
{
    apr_array_header_t *a;
    int created = -1;

    open_db();
    run("INSERT INTO notifications (setname, topic, from_dt, until_dt, first_seq, last_seq,"
        " count, sealed) VALUES ('s', 'change', 1, 2, 1, 1, 1, 1)");
    run("INSERT INTO notifications (setname, topic, from_dt, until_dt, first_seq, last_seq,"
        " count, sealed) VALUES ('s', 'change', 2, 3, 2, 2, 1, 1)");
    run("INSERT INTO notifications (setname, topic, from_dt, until_dt, first_seq, last_seq,"
        " count, sealed) VALUES ('s', 'change', 3, 4, 3, 3, 1, 0)");
    run("INSERT INTO notifications (setname, topic, from_dt, until_dt, first_seq, last_seq,"
        " count, sealed) VALUES ('t', 'change', 3, 4, 3, 3, 1, 1)");
    ck_assert_int_eq(rs_hubsub_put(db, "s", "change", "http://a.example/cb?x=1", "k1", 1000,
                                   &created), APR_SUCCESS);
    ck_assert_int_eq(created, 1);
    ck_assert_int_eq(rs_hubsub_put(db, "s", "framework", "http://a.example/cb?x=1", NULL, 500,
                                   &created), APR_SUCCESS);
    ck_assert_int_eq(created, 1);
    a = subs();
    ck_assert_int_eq(a->nelts, 2);
    ck_assert_str_eq(SUB(a, 0).topic, "change");
    ck_assert_str_eq(SUB(a, 0).url, "http://a.example/cb?x=1");
    ck_assert_str_eq(SUB(a, 0).secret, "k1");
    ck_assert_int_eq(SUB(a, 0).lease_until, 1000);
    ck_assert_int_eq(SUB(a, 0).cursor, 2);          /* newest sealed of (s, change) */
    ck_assert_ptr_null(SUB(a, 1).secret);
    ck_assert_int_eq(SUB(a, 1).cursor, 0);          /* no framework notification */

    run("UPDATE notify_dests SET cursor = 7, attempts = 3 WHERE topic = 'change'");
    ck_assert_int_eq(rs_hubsub_put(db, "s", "change", "http://a.example/cb?x=1", NULL, 2000,
                                   &created), APR_SUCCESS);
    ck_assert_int_eq(created, 0);
    a = subs();
    ck_assert_int_eq(a->nelts, 2);
    ck_assert_int_eq(SUB(a, 0).lease_until, 2000);
    ck_assert_ptr_null(SUB(a, 0).secret);
    ck_assert_int_eq(SUB(a, 0).cursor, 7);
}
END_TEST

START_TEST(remove_and_expire)
{
    apr_array_header_t *a, *gone;
    int removed = -1;

    open_db();
    ck_assert_int_eq(rs_hubsub_put(db, "s", "change", "http://a/1", NULL, 100, NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_hubsub_put(db, "s", "change", "http://a/2", NULL, 200, NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_hubsub_put(db, "s", "change", "http://a/3", NULL, 300, NULL),
                     APR_SUCCESS);
    /* A publishing destination of the same URL is not a subscription. */
    run("INSERT INTO notify_dests (setname, topic, kind, url, lease_until) "
        "VALUES ('s', 'change', 'fat', 'http://a/1', 0)");
    ck_assert_int_eq(rs_hubsub_remove(db, "s", "change", "http://a/3", &removed), APR_SUCCESS);
    ck_assert_int_eq(removed, 1);
    ck_assert_int_eq(rs_hubsub_remove(db, "s", "change", "http://a/3", &removed), APR_SUCCESS);
    ck_assert_int_eq(removed, 0);
    ck_assert_int_eq(subs()->nelts, 2);

    ck_assert_int_eq(rs_hubsub_expire(db, ut_pool, 200, &gone), APR_SUCCESS);
    ck_assert_int_eq(gone->nelts, 1);
    ck_assert_str_eq(SUB(gone, 0).url, "http://a/1");
    a = subs();
    ck_assert_int_eq(a->nelts, 1);
    ck_assert_str_eq(SUB(a, 0).url, "http://a/2");
    ck_assert_int_eq(rs_hubsub_expire(db, ut_pool, 200, &gone), APR_SUCCESS);
    ck_assert_int_eq(gone->nelts, 0);
}
END_TEST

START_TEST(limits)
{
    apr_array_header_t *a;

    open_db();
    ck_assert_int_eq(rs_hubsub_put(db, "s", "change", "http://A.example/1", NULL, 1, NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_hubsub_put(db, "s", "change", "http://a.example:8080/2", NULL, 1, NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_hubsub_put(db, "s", "change", "http://b.example/1", NULL, 1, NULL),
                     APR_SUCCESS);
    a = subs();
    /* Per host: a.example has 2 (case and port do not matter). */
    ck_assert_str_eq(rs_hubsub_limit(ut_pool, a, "s", "change", "http://a.example/3", 10, 2),
                     "too many subscriptions for this callback host");
    ck_assert_ptr_null(rs_hubsub_limit(ut_pool, a, "s", "change", "http://a.example/3", 10, 3));
    ck_assert_ptr_null(rs_hubsub_limit(ut_pool, a, "s", "change", "http://c.example/", 10, 2));
    /* Total. */
    ck_assert_str_eq(rs_hubsub_limit(ut_pool, a, "s", "change", "http://c.example/", 3, 3),
                     "too many subscriptions");
    /* A renewal is never refused. */
    ck_assert_ptr_null(rs_hubsub_limit(ut_pool, a, "s", "change", "http://a.example:8080/2",
                                       1, 1));
    /* The same callback for the other topic is a new subscription. */
    ck_assert_ptr_nonnull(rs_hubsub_limit(ut_pool, a, "s", "framework", "http://b.example/1",
                                          3, 3));
}
END_TEST

Suite *hubsub_suite(void)
{
    Suite *s = suite_create("hubsub");
    TCase *tc = ut_tcase("hubsub", 30);
    tcase_add_test(tc, put_and_renew);
    tcase_add_test(tc, remove_and_expire);
    tcase_add_test(tc, limits);
    suite_add_tcase(s, tc);
    return s;
}
