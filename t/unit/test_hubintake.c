/* SPDX-License-Identifier: Apache-2.0 */
/* test_hubintake.c - the built-in hub's intake (rs_hubintake,
 * rs_hubverify, rs_hubstate) on a real spool directory, a real SQLite
 * store and a real HTTP peer (t/unit/websub_server.py): requests written
 * as the children write them, verified or denied over real sockets,
 * stored or deleted; the server lookups are the test's hooks (two
 * servers, one set each). */
#include <string.h>
#include <apr_file_info.h>
#include <apr_file_io.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_hubaddr.h"
#include "rs_hubintake.h"
#include "rs_hubsub.h"
#include "rs_schema.h"
#include "rs_statedir.h"

#define NOW ((apr_time_t)1700000000 * APR_USEC_PER_SEC) /* the test's wall clock */

/* A server of the test: its limits and callback policy. */
typedef struct server_t {
    rs_hubsub_quota_t quota;
    int allow_host; /* its callback hosts named: no filter */
    int refuse;     /* its filter refuses every address */
    int filtered;   /* calls of its filter */
} server_t;

static server_t srv_a, srv_b; /* sets "s1" and "s2" */
static char *peer, *peer_log, *statedir;
static rs_hubgate_t gate;
static ut_log_t ul;
static rs_hubintake_t *hi;
static rs_db_t *db;     /* the test's own connection */
static int store_fails; /* the intake's store cannot be opened */

static void *server_of(void *baton, const char *set)
{
    (void)baton;
    return !strcmp(set, "s1") ? &srv_a : !strcmp(set, "s2") ? &srv_b : NULL;
}

static void quota(void *baton, void *server, rs_hubsub_quota_t *q)
{
    (void)baton;
    *q = ((server_t *)server)->quota;
}

static int host_allowed(void *baton, apr_pool_t *p, void *server, const char *url)
{
    (void)baton;
    (void)p;
    (void)url;
    return ((server_t *)server)->allow_host;
}

static const char *filter(void *server, const unsigned char *addr, int len)
{
    server_t *sv = server;
    (void)addr;
    (void)len;
    sv->filtered++;
    return sv->refuse ? "refused by the test" : NULL;
}

static apr_status_t store_open(void *baton, rs_db_t **out, apr_pool_t **pool,
                               const rs_logger_t *log)
{
    apr_status_t rv;
    (void)baton;
    if (store_fails) {
        return APR_EACCES;
    }
    apr_pool_create(pool, NULL);
    rv = rs_schema_open(out, *pool, RS_STATEDIR_DB_DRIVER, rs_statedir_db(*pool, statedir), log);
    if (rv != APR_SUCCESS) {
        apr_pool_destroy(*pool);
    }
    return rv;
}

static apr_time_t clock_now(void *baton)
{
    (void)baton;
    return NOW;
}

static const rs_hubintake_hooks_t hooks = { .server_of = server_of,
                                            .quota = quota,
                                            .host_allowed = host_allowed,
                                            .addr_filter = filter,
                                            .store_open = store_open,
                                            .clock = clock_now };

static void setup(void)
{
    rs_hubsub_quota_t q = { 10, 10, 10 };
    ut_setup();
    peer = ut_peer_start(&peer_log);
    statedir = ut_tempdir("hubintake");
    store_fails = 0;
    memset(&srv_a, 0, sizeof(srv_a));
    memset(&srv_b, 0, sizeof(srv_b));
    srv_a.quota = srv_b.quota = q;
    rs_hubgate_init(&gate, 1);
    ck_assert_int_eq(rs_schema_open(&db, ut_pool, RS_STATEDIR_DB_DRIVER,
                                    rs_statedir_db(ut_pool, statedir), ut_log_init(&ul)),
                     APR_SUCCESS);
    hi = rs_hubintake_create(statedir, &gate, &hooks, &ul.logger);
}

static void teardown(void)
{
    rs_hubintake_destroy(hi);
    ut_peer_stop();
    ut_teardown();
}

/* A request as a child spools it; its file name. */
static const char *spool(int subscribe, const char *set, const char *path, const char *client)
{
    rs_hubreq_t r = { 0 };
    const char *name;
    r.mode = subscribe ? RS_HUBREQ_SUBSCRIBE : RS_HUBREQ_UNSUBSCRIBE;
    r.callback = apr_pstrcat(ut_pool, peer, path, NULL);
    r.topic = apr_pstrcat(ut_pool, "http://example.org/", set, "/changes", NULL);
    r.lease = 3600; /* as rs_hubreq_validate leaves it, whatever the mode */
    r.set = set;
    r.kind = "change";
    r.client = client;
    r.received = NOW;
    ck_assert_int_eq(rs_hubreq_spool_write(ut_pool, rs_statedir_hubspool(ut_pool, statedir),
                                           rs_hubreq_record_format(ut_pool, &r), &name),
                     APR_SUCCESS);
    return strrchr(name, '/') + 1;
}

/* The intake's turns until the spool holds no request and no GET is in
 * flight (at most 10 s). */
static void settle(void)
{
    apr_time_t deadline = apr_time_now() + apr_time_from_sec(10);
    const char *spooldir = rs_statedir_hubspool(ut_pool, statedir);
    int left;
    do {
        apr_dir_t *d;
        apr_finfo_t fi;
        rs_hubintake_drain(hi);
        left = rs_hubintake_wait(hi, 50);
        ck_assert_int_eq(apr_dir_open(&d, spooldir, ut_pool), APR_SUCCESS);
        while (apr_dir_read(&fi, APR_FINFO_NAME, d) == APR_SUCCESS) {
            left += rs_hubreq_spool_is_req(fi.name);
        }
        apr_dir_close(d);
    } while (left && apr_time_now() < deadline);
    ck_assert_msg(!left, "the intake did not settle");
}

/* The requests the peer received (its log's lines), and whether one of
 * them holds needle. */
static int peer_requests(const char *needle, int *found)
{
    char *s = ut_read(peer_log, NULL), *line;
    int n = 0;
    *found = 0;
    for (line = s; *line; n++) {
        char *nl = strchr(line, '\n');
        if (nl) {
            *nl = '\0';
        }
        *found |= needle && strstr(line, needle) != NULL;
        line = nl ? nl + 1 : line + strlen(line);
    }
    return n;
}

static apr_array_header_t *subs(void)
{
    apr_array_header_t *a;
    ck_assert_int_eq(rs_hubsub_list(db, ut_pool, &a), APR_SUCCESS);
    return a;
}

#define SUB(a, i) APR_ARRAY_IDX(a, i, rs_hubsub_t)

/* A subscription put directly in the store (set, callback path). */
static void put(const char *set, const char *path)
{
    rs_hubsub_t x = { 0 };
    x.set = set;
    x.topic = "change";
    x.url = apr_pstrcat(ut_pool, peer, path, NULL);
    x.lease_until = NOW + apr_time_from_sec(60);
    ck_assert_int_eq(rs_hubsub_put(db, &x, NULL), APR_SUCCESS);
}

/* A subscription verified with the peer and stored, its keys, lease and
 * outcome kept; the spool file removed, its reservation given back; the
 * status file written by the next sweep. */
START_TEST(verified_and_stored)
{
    const char *name, *st;
    apr_array_header_t *a;
    int found;

    name = spool(1, "s1", "/echo/a", "192.0.2.7");
    ck_assert_int_eq(rs_hubintake_open(hi, apr_time_from_sec(5)), APR_SUCCESS);
    settle();
    a = subs();
    ck_assert_int_eq(a->nelts, 1);
    ck_assert_str_eq(SUB(a, 0).set, "s1");
    ck_assert_str_eq(SUB(a, 0).topic, "change");
    ck_assert_str_eq(SUB(a, 0).url, apr_pstrcat(ut_pool, peer, "/echo/a", NULL));
    ck_assert_str_eq(SUB(a, 0).addr, rs_hubaddr_key_text(ut_pool, "127.0.0.1"));
    ck_assert_str_eq(SUB(a, 0).client, rs_hubaddr_key_text(ut_pool, "192.0.2.7"));
    ck_assert(SUB(a, 0).lease_until == NOW + apr_time_from_sec(3600));
    ck_assert_int_eq(peer_requests("hub.mode%3Dsubscribe", &found), 1);
    ck_assert_int_eq(found, 1);
    ck_assert_int_eq(srv_a.filtered > 0, 1); /* the policy was asked */
    ck_assert_int_eq(ut_log_count(&ul, apr_psprintf(ut_pool,
                                                    "hub: subscribe %s of '%s/echo/a' for "
                                                    "'http://example.org/s1/changes' from "
                                                    "192.0.2.7: subscribed, lease 3600 s",
                                                    name, peer)),
                     1);
    ck_assert_uint_eq(gate.count, 0);
    ck_assert_uint_eq(gate.bytes, 0);
    rs_hubintake_sweep(hi, NOW);
    st = ut_read(rs_statedir_hubintake(ut_pool, statedir), NULL);
    ck_assert_ptr_nonnull(strstr(st, "hub-subscriptions: s1 change 1\n"));
    ck_assert_ptr_nonnull(strstr(st, "hub-subscriptions-total: 1\n"));
    ck_assert_ptr_nonnull(strstr(
        st, apr_pstrcat(ut_pool, " subscribe ", peer, "/echo/a subscribed, lease 3600 s\n", NULL)));
    /* Again: renewed, one row still. */
    spool(1, "s1", "/echo/a", "192.0.2.7");
    settle();
    ck_assert_int_eq(subs()->nelts, 1);
    ck_assert_int_eq(ut_log_count(&ul, "renewed, lease 3600 s"), 1);
}
END_TEST

/* A new subscription beyond its server's total gets a denial GET and no
 * row; the subscriptions of another server's set do not count. */
START_TEST(denied_beyond_limits)
{
    int found;

    srv_a.quota.total = srv_a.quota.per_addr = srv_a.quota.per_client = 1;
    put("s2", "/ok/other"); /* srv_b's */
    spool(1, "s1", "/echo/first", "192.0.2.7");
    ck_assert_int_eq(rs_hubintake_open(hi, apr_time_from_sec(5)), APR_SUCCESS);
    settle();
    ck_assert_int_eq(subs()->nelts, 2);
    ck_assert_int_eq(ut_log_count(&ul, "subscribed, lease 3600 s"), 1);
    spool(1, "s1", "/echo/second", "192.0.2.8");
    settle();
    ck_assert_int_eq(subs()->nelts, 2);
    ck_assert_int_eq(ut_log_count(&ul, "/echo/second' for 'http://example.org/s1/changes' from "
                                       "192.0.2.8: denied ("),
                     1);
    ck_assert_int_eq(peer_requests("hub.mode%3Ddenied", &found), 2);
    ck_assert_int_eq(found, 1);
    ck_assert_uint_eq(gate.count, 0);
}
END_TEST

/* An unsubscription verified with the peer deletes the row; a second one
 * finds nothing to delete. */
START_TEST(unsubscribed)
{
    int found;

    put("s1", "/echo/u");
    spool(0, "s1", "/echo/u", "192.0.2.7");
    ck_assert_int_eq(rs_hubintake_open(hi, apr_time_from_sec(5)), APR_SUCCESS);
    settle();
    ck_assert_int_eq(subs()->nelts, 0);
    ck_assert_int_eq(ut_log_count(&ul, "192.0.2.7: unsubscribed"), 1);
    ck_assert_int_eq(peer_requests("hub.mode%3Dunsubscribe", &found), 1);
    ck_assert_int_eq(found, 1);
    spool(0, "s1", "/echo/u", "192.0.2.7");
    settle();
    ck_assert_int_eq(ut_log_count(&ul, "192.0.2.7: unsubscribed (was not subscribed)"), 1);
}
END_TEST

/* A malformed spool file and a request of a set no longer configured are
 * removed without any request going out. */
START_TEST(removed_without_request)
{
    const char *spooldir = rs_statedir_hubspool(ut_pool, statedir), *bad, *gone;
    int found;

    ck_assert_int_eq(rs_hubreq_spool_write(ut_pool, spooldir, "not a record\n", &bad), APR_SUCCESS);
    gone = spool(1, "s9", "/echo/gone", "192.0.2.7");
    ck_assert_int_eq(rs_hubintake_open(hi, apr_time_from_sec(5)), APR_SUCCESS);
    settle();
    ck_assert_int_eq(ut_exists(bad), 0);
    ck_assert_int_eq(ut_exists(ut_path(spooldir, gone)), 0);

    ck_assert_int_eq(ut_log_count(&ul, "hub: removed the malformed spool file '"), 1);
    ck_assert_int_eq(
        ut_log_count(&ul, apr_psprintf(ut_pool,
                                       "hub: subscribe %s of '%s/echo/gone' for "
                                       "'http://example.org/s9/changes': dropped (its set "
                                       "is not configured any more)",
                                       gone, peer)),
        1);
    ck_assert_int_eq(peer_requests(NULL, &found), 0);
    ck_assert_int_eq(subs()->nelts, 0);
    ck_assert_uint_eq(gate.count, 0);
}
END_TEST

/* The policy of the server that received the request refuses the
 * callback's address: no request reaches the peer, nothing is stored;
 * a host named in its allowed callbacks is called without the filter. */
START_TEST(policy_refuses)
{
    int found;

    srv_a.refuse = 1;
    spool(1, "s1", "/echo/r", "192.0.2.7");
    ck_assert_int_eq(rs_hubintake_open(hi, apr_time_from_sec(5)), APR_SUCCESS);
    settle();
    ck_assert_int_gt(srv_a.filtered, 0);
    ck_assert_int_eq(peer_requests(NULL, &found), 0);
    ck_assert_int_eq(subs()->nelts, 0);
    ck_assert_int_eq(ut_log_count(&ul, "192.0.2.7: callback address not allowed (address "
                                       "refused: refused by the test)"),
                     1);
    srv_a.allow_host = 1;
    srv_a.filtered = 0;
    spool(1, "s1", "/echo/r", "192.0.2.7");
    settle();
    ck_assert_int_eq(srv_a.filtered, 0);
    ck_assert_int_eq(peer_requests(NULL, &found), 1);
    ck_assert_int_eq(subs()->nelts, 1);
}
END_TEST

/* A callback that does not confirm: nothing stored, the file removed. */
START_TEST(not_confirmed)
{
    spool(1, "s1", "/wrong/x", "192.0.2.7");
    spool(1, "s1", "/status/404/x", "192.0.2.7");
    ck_assert_int_eq(rs_hubintake_open(hi, apr_time_from_sec(5)), APR_SUCCESS);
    settle();
    ck_assert_int_eq(subs()->nelts, 0);
    ck_assert_int_eq(ut_log_count(&ul, ": not confirmed (HTTP 200, wrong challenge)"), 1);
    ck_assert_int_eq(ut_log_count(&ul, ": not confirmed (HTTP 404)"), 1);
}
END_TEST

/* The sweep at wall time now: a lease ended before now is removed (and
 * logged), one ending after is kept; a "tmp-*" write older than a minute
 * is removed, its reservation given back; a fresh one stays. */
START_TEST(sweep_leases_and_tmp)
{
    const char *spooldir = rs_statedir_hubspool(ut_pool, statedir);
    const char *old = ut_path(spooldir, "tmp-old"), *fresh = ut_path(spooldir, "tmp-fresh");
    rs_hubsub_t x = { 0 };
    apr_array_header_t *a;

    x.set = "s1";
    x.topic = "change";
    x.url = "http://192.0.2.1/ended";
    x.lease_until = NOW - 1;
    ck_assert_int_eq(rs_hubsub_put(db, &x, NULL), APR_SUCCESS);
    x.url = "http://192.0.2.1/kept";
    x.lease_until = NOW + 1;
    ck_assert_int_eq(rs_hubsub_put(db, &x, NULL), APR_SUCCESS);
    ut_mkdir(rs_statedir_hub(ut_pool, statedir));
    ut_mkdir(spooldir);
    ut_write_str(old, "x");
    ut_write_str(fresh, "y");
    ck_assert_int_eq(apr_file_mtime_set(old, NOW - apr_time_from_sec(61), ut_pool), APR_SUCCESS);
    ck_assert_int_eq(apr_file_mtime_set(fresh, NOW - apr_time_from_sec(59), ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_hubintake_open(hi, apr_time_from_sec(5)), APR_SUCCESS);
    rs_hubintake_drain(hi); /* the listing: both counted */
    ck_assert_uint_eq(gate.count, 2);
    rs_hubintake_sweep(hi, NOW);
    a = subs();
    ck_assert_int_eq(a->nelts, 1);
    ck_assert_str_eq(SUB(a, 0).url, "http://192.0.2.1/kept");
    ck_assert_int_eq(ut_log_count(&ul, "hub: the lease of 'http://192.0.2.1/ended' on set s1, "
                                       "topic change ended; subscription removed"),
                     1);
    ck_assert_int_eq(ut_exists(old), 0);
    ck_assert_int_eq(ut_exists(fresh), 1);
    ck_assert_uint_eq(gate.count, 1);
    ck_assert_ptr_nonnull(strstr(ut_read(rs_statedir_hubintake(ut_pool, statedir), NULL),
                                 "hub-subscriptions-total: 1\nhub-last-intake: -\n"));
}
END_TEST

/* Rows removed by others (the delivery ends an expired subscription,
 * another node's writer): the next sweep's status file counts what the
 * store holds, with no outcome of the intake in between. */
START_TEST(status_counts_rows_removed_elsewhere)
{
    const char *path = rs_statedir_hubintake(ut_pool, statedir);
    int removed = 0;

    put("s1", "/a");
    put("s1", "/b");
    put("s2", "/c");
    ck_assert_int_eq(rs_hubintake_open(hi, apr_time_from_sec(5)), APR_SUCCESS);
    rs_hubintake_sweep(hi, NOW);
    ck_assert_str_eq(ut_read(path, NULL), "hub-subscriptions: s1 change 2\n"
                                          "hub-subscriptions: s2 change 1\n"
                                          "hub-subscriptions-total: 3\nhub-last-intake: -\n");
    ck_assert_int_eq(
        rs_hubsub_remove(db, "s1", "change", apr_pstrcat(ut_pool, peer, "/a", NULL), &removed),
        APR_SUCCESS);
    ck_assert_int_eq(removed, 1);
    rs_hubintake_sweep(hi, NOW);
    ck_assert_str_eq(ut_read(path, NULL), "hub-subscriptions: s1 change 1\n"
                                          "hub-subscriptions: s2 change 1\n"
                                          "hub-subscriptions-total: 2\nhub-last-intake: -\n");
    ck_assert_int_eq(
        rs_hubsub_remove(db, "s2", "change", apr_pstrcat(ut_pool, peer, "/c", NULL), &removed),
        APR_SUCCESS);
    rs_hubintake_sweep(hi, NOW);
    ck_assert_str_eq(ut_read(path, NULL), "hub-subscriptions: s1 change 1\n"
                                          "hub-subscriptions-total: 1\nhub-last-intake: -\n");
}
END_TEST

/* A confirmed subscription whose store write fails stays in the spool
 * and in memory; the next sweep stores it without verifying it again,
 * and only then is its file removed. */
START_TEST(store_failure_retried)
{
    const char *name = spool(1, "s1", "/echo/later", "192.0.2.7");
    const char *path = ut_path(rs_statedir_hubspool(ut_pool, statedir), name);
    apr_time_t deadline = apr_time_now() + apr_time_from_sec(10);
    int found;

    store_fails = 1;
    ck_assert_int_eq(rs_hubintake_open(hi, apr_time_from_sec(5)), APR_SUCCESS);
    while (!ut_log_count(&ul, "hub: cannot store the subscribe of '")
           && apr_time_now() < deadline) {
        rs_hubintake_drain(hi);
        rs_hubintake_wait(hi, 50);
    }
    ck_assert_int_eq(
        ut_log_count(&ul, apr_pstrcat(ut_pool, "hub: cannot store the subscribe of '", peer,
                                      "/echo/later'; the request stays in the spool", NULL)),
        1);
    ck_assert_int_eq(ut_exists(path), 1);
    rs_hubintake_sweep(hi, NOW); /* still failing: kept */
    ck_assert_int_eq(ut_exists(path), 1);
    ck_assert_int_eq(subs()->nelts, 0);
    store_fails = 0;
    rs_hubintake_sweep(hi, NOW);
    ck_assert_int_eq(ut_exists(path), 0);
    ck_assert_int_eq(subs()->nelts, 1);
    ck_assert_int_eq(ut_log_count(&ul, "192.0.2.7: subscribed, lease 3600 s"), 1);
    ck_assert_int_eq(peer_requests(NULL, &found), 1); /* verified once */
    ck_assert_uint_eq(gate.count, 0);
}
END_TEST

Suite *hubintake_suite(void)
{
    Suite *s = suite_create("hubintake");
    TCase *tc = tcase_create("spool");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 40);
    tcase_add_test(tc, verified_and_stored);
    tcase_add_test(tc, denied_beyond_limits);
    tcase_add_test(tc, unsubscribed);
    tcase_add_test(tc, removed_without_request);
    tcase_add_test(tc, policy_refuses);
    tcase_add_test(tc, not_confirmed);
    tcase_add_test(tc, sweep_leases_and_tmp);
    tcase_add_test(tc, store_failure_retried);
    tcase_add_test(tc, status_counts_rows_removed_elsewhere);
    suite_add_tcase(s, tc);
    return s;
}
