/* SPDX-License-Identifier: Apache-2.0 */
/* test_hubsub.c - rs_hubsub: the built-in hub's subscription rows
 * (insert, renewal, removal, lease expiry, limits, the schema step of
 * their columns). */
#include <string.h>
#include <apr_strings.h>
#include <apr_time.h>
#include "unit.h"
#include "rs_hubsub.h"
#include "rs_schema.h"

static rs_db_t *db;
static ut_log_t ul;

static void open_db_path(const char *path)
{
    ck_assert_int_eq(rs_schema_open(&db, ut_pool, ut_driver, ut_store(path), ut_log_init(&ul)),
                     APR_SUCCESS);
}

static void open_db(void)
{
    open_db_path(ut_path(ut_tempdir("hubsub"), "state.db"));
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

/* rs_hubsub_put of (s, topic, url) with a secret and lease; keys unknown. */
static apr_status_t put(const char *set, const char *topic, const char *url, const char *secret,
                        apr_time_t lease, int *created)
{
    rs_hubsub_t x = { 0 };
    x.set = set;
    x.topic = topic;
    x.url = url;
    x.secret = secret;
    x.lease_until = lease;
    return rs_hubsub_put(db, &x, created);
}

/* The same with the keys the limits count by. */
static void put_keyed(const char *url, const char *addr, const char *client)
{
    rs_hubsub_t x = { 0 };
    x.set = "s";
    x.topic = "change";
    x.url = url;
    x.lease_until = 1;
    x.addr = addr;
    x.client = client;
    ck_assert_int_eq(rs_hubsub_put(db, &x, NULL), APR_SUCCESS);
}

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
    ck_assert_int_eq(put("s", "change", "http://a.example/cb?x=1", "k1", 1000, &created),
                     APR_SUCCESS);
    ck_assert_int_eq(created, 1);
    ck_assert_int_eq(put("s", "framework", "http://a.example/cb?x=1", NULL, 500, &created),
                     APR_SUCCESS);
    ck_assert_int_eq(created, 1);
    a = subs();
    ck_assert_int_eq(a->nelts, 2);
    ck_assert_str_eq(SUB(a, 0).topic, "change");
    ck_assert_str_eq(SUB(a, 0).url, "http://a.example/cb?x=1");
    ck_assert_str_eq(SUB(a, 0).secret, "k1");
    ck_assert_int_eq(SUB(a, 0).lease_until, 1000);
    ck_assert_int_eq(SUB(a, 0).cursor, 2); /* newest sealed of (s, change) */
    ck_assert_ptr_null(SUB(a, 1).secret);
    ck_assert_int_eq(SUB(a, 1).cursor, 0); /* no framework notification */

    run("UPDATE notify_dests SET cursor = 7, attempts = 3 WHERE topic = 'change'");
    ck_assert_int_eq(put("s", "change", "http://a.example/cb?x=1", NULL, 2000, &created),
                     APR_SUCCESS);
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
    ck_assert_int_eq(put("s", "change", "http://a/1", NULL, 100, NULL), APR_SUCCESS);
    ck_assert_int_eq(put("s", "change", "http://a/2", NULL, 200, NULL), APR_SUCCESS);
    ck_assert_int_eq(put("s", "change", "http://a/3", NULL, 300, NULL), APR_SUCCESS);
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

/* Limits count what one party cannot multiply for free: the callback's
 * address (however its host was written) and the client's address. */
START_TEST(limits)
{
    rs_hubsub_quota_t q = { 10, 2, 3 };
    rs_hubsub_t x = { 0 };
    apr_array_header_t *a;

    open_db();
    put_keyed("http://127.2:8080/1", "127.0.0.2", "192.0.2.1");
    put_keyed("http://0x7f000002:8080/2", "127.0.0.2", "192.0.2.1");
    put_keyed("http://b.example/1", "198.51.100.7", "2001:db8:1:2::/64");
    put_keyed("http://old.example/1", NULL, NULL); /* a row from before the keys */
    a = subs();
    ck_assert_str_eq(SUB(a, 2).addr, "198.51.100.7"); /* ordered by url */
    ck_assert_str_eq(SUB(a, 2).client, "2001:db8:1:2::/64");
    ck_assert_ptr_null(SUB(a, 3).addr);
    x.set = "s";
    x.topic = "change";
    /* Per callback address: 127.0.0.2 has 2, whatever the host text. */
    x.url = "http://[::ffff:127.0.0.2]:8080/3";
    x.addr = "127.0.0.2";
    x.client = "203.0.113.9";
    ck_assert_str_eq(rs_hubsub_limit(a, &x, &q),
                     "too many subscriptions for this callback address");
    q.per_addr = 3;
    ck_assert_ptr_null(rs_hubsub_limit(a, &x, &q));
    /* Not known yet (before the verification): not checked. */
    x.addr = NULL;
    q.per_addr = 2;
    ck_assert_ptr_null(rs_hubsub_limit(a, &x, &q));
    /* Per client. */
    x.url = "http://c.example/";
    x.addr = "198.51.100.8";
    x.client = "192.0.2.1";
    q.per_client = 2;
    ck_assert_str_eq(rs_hubsub_limit(a, &x, &q), "too many subscriptions from this client");
    x.client = "192.0.2.2";
    ck_assert_ptr_null(rs_hubsub_limit(a, &x, &q));
    /* Total (the row without keys counts here). */
    q.total = 4;
    ck_assert_str_eq(rs_hubsub_limit(a, &x, &q), "too many subscriptions");
    /* A renewal is never refused. */
    x.url = "http://0x7f000002:8080/2";
    x.addr = "127.0.0.2";
    x.client = "192.0.2.1";
    q.total = q.per_addr = q.per_client = 1;
    ck_assert_ptr_null(rs_hubsub_limit(a, &x, &q));
    /* The same callback for the other topic is a new subscription. */
    x.topic = "framework";
    ck_assert_ptr_nonnull(rs_hubsub_limit(a, &x, &q));
}
END_TEST

/* A store of schema version 3 gets the columns the limits count by; its
 * subscriptions are kept, with unknown keys. */
START_TEST(schema_v4_keeps_rows)
{
    static const rs_db_schema_t v3 = { 3, rs_schema_steps };
    const char *path = ut_path(ut_tempdir("hubsub3"), "state.db");
    apr_array_header_t *a;
    apr_pool_t *p;

    apr_pool_create(&p, ut_pool);
    ck_assert_int_eq(rs_db_open(&db, p, ut_driver, ut_store(path), &v3, ut_log_init(&ul)),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_schema_version(db), 3);
    run("INSERT INTO notify_dests (setname, topic, kind, url, secret, lease_until, cursor) "
        "VALUES ('s', 'change', 'sub', 'http://a/1', 'k', 5, 3)");
    apr_pool_destroy(p); /* closes the connection */
    open_db_path(path);
    ck_assert_int_eq(ut_log_count(&ul, "schema version 4 (from 3"), 1);
    ck_assert_int_eq(rs_db_schema_version(db), RS_SCHEMA_VERSION);
    a = subs();
    ck_assert_int_eq(a->nelts, 1);
    ck_assert_str_eq(SUB(a, 0).url, "http://a/1");
    ck_assert_str_eq(SUB(a, 0).secret, "k");
    ck_assert_int_eq(SUB(a, 0).cursor, 3);
    ck_assert_ptr_null(SUB(a, 0).addr);
    ck_assert_ptr_null(SUB(a, 0).client);
    put_keyed("http://a/1", "192.0.2.5", "192.0.2.6"); /* a renewal sets them */
    a = subs();
    ck_assert_str_eq(SUB(a, 0).addr, "192.0.2.5");
    ck_assert_int_eq(SUB(a, 0).cursor, 3);
}
END_TEST

Suite *hubsub_suite(void)
{
    Suite *s = suite_create("hubsub");
    TCase *tc = ut_tcase("hubsub", 30);
    tcase_add_test(tc, put_and_renew);
    tcase_add_test(tc, remove_and_expire);
    tcase_add_test(tc, limits);
    tcase_add_test(tc, schema_v4_keeps_rows);
    suite_add_tcase(s, tc);
    return s;
}
