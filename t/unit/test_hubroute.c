/* SPDX-License-Identifier: Apache-2.0 */
/* test_hubroute.c - the built-in hub on two nodes of one PostgreSQL store
 * (rs_hubintake, rs_hubverify, rs_hubstate with rs_hubqueue): two intakes,
 * each with its own spool and store connection, the leases and the
 * process's fence as the watcher has them; a real HTTP peer
 * (t/unit/websub_server.py).  A request spooled at the node that does
 * not write its set is queued without any GET, and verified and applied
 * by the writer's intake, its row deleted with the outcome; a writer that
 * lost the set meanwhile deletes nothing, and the next writer applies it.
 * PostgreSQL only (one node's store has no queue). */
#include <string.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_hubintake.h"
#include "rs_hubqueue.h"
#include "rs_hubsub.h"
#include "rs_lease.h"
#include "rs_schema.h"
#include "rs_statedir.h"

#define NOW ((apr_time_t)1700000000 * APR_USEC_PER_SEC)

/* One node: its intake, its lease of set "s", its intake's connection. */
typedef struct node_t {
    const char *name;
    const char *statedir;
    rs_hubintake_t *hi;
    rs_lease_t lease;
    rs_db_t *conn; /* the intake's, seen by store_open */
    ut_log_t ul;
} node_t;

static node_t na, nb;
static const char *store_path;
static char *peer, *peer_log;
static rs_hubgate_t gate_a, gate_b;
static rs_db_t *db; /* the test's own connection */
static int server;  /* the one server's handle */

static void *server_of(void *baton, const char *set)
{
    (void)baton;
    return !strcmp(set, "s") ? &server : NULL;
}

static void quota(void *baton, void *srv, rs_hubsub_quota_t *q)
{
    (void)baton;
    (void)srv;
    q->total = q->per_addr = q->per_client = 10;
}

static int host_allowed(void *baton, apr_pool_t *p, void *srv, const char *url)
{
    (void)baton;
    (void)p;
    (void)srv;
    (void)url;
    return 1;
}

static apr_status_t store_open(void *baton, rs_db_t **out, apr_pool_t **pool,
                               const rs_logger_t *log)
{
    node_t *n = baton;
    apr_status_t rv;
    apr_pool_create(pool, NULL);
    if ((rv = rs_schema_open(out, *pool, ut_driver, ut_store(store_path), log)) != APR_SUCCESS) {
        apr_pool_destroy(*pool);
        return rv;
    }
    n->conn = *out;
    return APR_SUCCESS;
}

static apr_time_t clock_now(void *baton)
{
    (void)baton;
    return NOW;
}

/* The process's fence, as the watcher's: the lease of the node whose
 * intake runs the transaction. */
static apr_status_t fence_fn(void *baton, rs_db_t *c, const char *set)
{
    node_t *n = c == na.conn ? &na : c == nb.conn ? &nb : NULL;
    (void)baton;
    if (!n || strcmp(set, "s") || n->lease.epoch <= 0) {
        return RS_LEASE_LOST;
    }
    return rs_lease_fence(c, &n->lease);
}

static void node_init(node_t *n, const char *name, rs_hubgate_t *gate)
{
    rs_hubintake_hooks_t h = { .server_of = server_of,
                               .quota = quota,
                               .host_allowed = host_allowed,
                               .store_open = store_open,
                               .clock = clock_now };
    memset(n, 0, sizeof(*n));
    n->name = name;
    n->statedir = ut_tempdir(name);
    h.baton = n;
    h.node = name;
    h.queue_max = 1; /* a set's rows one node adds at most */
    n->lease = (rs_lease_t){ "s", name, rs_lease_token(ut_pool), apr_time_from_sec(3600), 0 };
    rs_hubgate_init(gate, 1);
    n->hi = rs_hubintake_create(n->statedir, gate, &h, ut_log_init(&n->ul));
    ck_assert_int_eq(rs_hubintake_open(n->hi, apr_time_from_sec(5)), APR_SUCCESS);
}

static void take(node_t *n)
{
    int held = 0;
    ck_assert_int_eq(rs_lease_take(db, &n->lease, &held), APR_SUCCESS);
    ck_assert_int_eq(held, 1);
}

static void setup(void)
{
    store_path = ut_path(ut_tempdir("hubroute"), "state.db");
    ck_assert_int_eq(rs_schema_open(&db, ut_pool, ut_driver, ut_store(store_path), NULL),
                     APR_SUCCESS);
    peer = ut_peer_start(&peer_log);
    rs_db_fence_install(fence_fn, NULL);
    node_init(&na, "node-a", &gate_a);
    node_init(&nb, "node-b", &gate_b);
    take(&na);
}

static void teardown(void)
{
    rs_hubintake_destroy(na.hi);
    rs_hubintake_destroy(nb.hi);
    rs_db_fence_install(NULL, NULL);
    ut_peer_stop();
}

/* A request as a child of node n spools it. */
static void spool(node_t *n, int subscribe, const char *path)
{
    rs_hubreq_t r = { 0 };
    const char *name;
    r.mode = subscribe ? RS_HUBREQ_SUBSCRIBE : RS_HUBREQ_UNSUBSCRIBE;
    r.callback = apr_pstrcat(ut_pool, peer, path, NULL);
    r.topic = "http://example.org/s/changes";
    r.lease = 3600;
    r.set = "s";
    r.kind = "change";
    r.client = "192.0.2.7";
    r.received = NOW;
    ck_assert_int_eq(rs_hubreq_spool_write(ut_pool, rs_statedir_hubspool(ut_pool, n->statedir),
                                           rs_hubreq_record_format(ut_pool, &r), &name),
                     APR_SUCCESS);
}

/* Turns of node n (a sweep, then its spool and GETs) until done() holds
 * (at most 10 s). */
static void turns(node_t *n, int (*done)(void))
{
    apr_time_t deadline = apr_time_now() + apr_time_from_sec(10);
    do {
        rs_hubintake_sweep(n->hi, NOW);
        rs_hubintake_drain(n->hi);
        rs_hubintake_wait(n->hi, 50);
    } while (!done() && apr_time_now() < deadline);
    ck_assert_msg(done(), "node %s did not get there", n->name);
}

static int queued(void)
{
    apr_array_header_t *rows;
    ck_assert_int_eq(rs_hubqueue_list(db, ut_pool, "s", 100, &rows), APR_SUCCESS);
    return rows->nelts;
}

static int subs(void)
{
    apr_array_header_t *a;
    ck_assert_int_eq(rs_hubsub_list(db, ut_pool, &a), APR_SUCCESS);
    return a->nelts;
}

static int gets(void)
{
    char *s = ut_read(peer_log, NULL);
    int n = 0;
    for (; (s = strstr(s, " GET ")); s++) {
        n++;
    }
    return n;
}

static int one_queued(void)
{
    return queued() == 1;
}
static int one_sub(void)
{
    return subs() == 1 && queued() == 0;
}
static int no_sub(void)
{
    return subs() == 0 && queued() == 0;
}

/* Spooled at b, which does not write the set: queued, no GET; a takes
 * it, verifies it once and stores it, the row deleted with it; the same
 * for an unsubscription. */
START_TEST(routed_to_writer)
{
    spool(&nb, 1, "/echo/x");
    turns(&nb, one_queued);
    ck_assert_int_eq(gets(), 0);
    ck_assert_uint_eq(gate_b.count, 0); /* its file removed, the reservation given back */
    ck_assert_int_eq(ut_log_count(&nb.ul, "queued for the node that writes set s"), 1);
    turns(&na, one_sub);
    ck_assert_int_eq(gets(), 1);
    ck_assert_int_eq(ut_log_count(&na.ul, "subscribed, lease 3600 s"), 1);
    ck_assert_int_eq(ut_log_count(&na.ul, "subscribe queued-"), 1);
    rs_hubintake_sweep(na.hi, NOW); /* the status file's queue lines */
    ck_assert_ptr_nonnull(strstr(ut_read(rs_statedir_hubintake(ut_pool, na.statedir), NULL),
                                 "hub-queued-total: 0\n"));
    spool(&nb, 0, "/echo/x");
    turns(&nb, one_queued);
    turns(&na, no_sub);
    ck_assert_int_eq(gets(), 2);
    ck_assert_int_eq(ut_log_count(&na.ul, ": unsubscribed"), 1);
    ck_assert_int_eq(ut_log_count(&nb.ul, "subscribed"), 0);
}
END_TEST

static int a_left(void)
{
    return ut_log_count(&na.ul, "is left to its writer") == 1;
}

/* a takes a queued request and sends its GET, but b takes the set over
 * before a stores it: a's fenced write is refused and the row stays; b,
 * the new writer, verifies it again and applies it. */
START_TEST(writer_lost_leaves_row)
{
    spool(&nb, 1, "/echo/y");
    turns(&nb, one_queued);
    /* a's sweep puts the row in its scheduler, its drain submits the GET
     * (sent by the next wait). */
    rs_hubintake_sweep(na.hi, NOW);
    rs_hubintake_drain(na.hi);
    ck_assert_int_eq(rs_lease_release(db, &na.lease), APR_SUCCESS);
    na.lease.epoch = 1; /* a still believes it holds the set */
    take(&nb);
    turns(&na, a_left);
    ck_assert_int_eq(gets(), 1);
    ck_assert_int_eq(queued(), 1);
    ck_assert_int_eq(subs(), 0);
    turns(&nb, one_sub);
    ck_assert_int_eq(gets(), 2);
    ck_assert_int_eq(ut_log_count(&nb.ul, "subscribed, lease 3600 s"), 1);
    ck_assert_int_eq(ut_log_count(&na.ul, "subscribed, lease 3600 s"), 0);
}
END_TEST

static int two_subs(void)
{
    return subs() == 2 && queued() == 0;
}

/* b queues at most queue_max (1) rows of the set: the second request
 * waits in its spool (its reservation kept) until the writer took the
 * first. */
START_TEST(queue_bounded)
{
    int i;

    spool(&nb, 1, "/echo/p");
    spool(&nb, 1, "/echo/q");
    turns(&nb, one_queued);
    for (i = 0; i < 3; i++) {
        rs_hubintake_sweep(nb.hi, NOW);
        rs_hubintake_drain(nb.hi);
    }
    ck_assert_int_eq(queued(), 1);
    ck_assert_uint_eq(gate_b.count, 1);
    turns(&na, one_sub);
    turns(&nb, one_queued);
    ck_assert_uint_eq(gate_b.count, 0);
    turns(&na, two_subs);
    ck_assert_int_eq(gets(), 2);
}
END_TEST

Suite *hubroute_suite(void)
{
    Suite *s = suite_create("hubroute");
    TCase *tc = ut_tcase("hubroute", 40);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, routed_to_writer);
    tcase_add_test(tc, writer_lost_leaves_row);
    tcase_add_test(tc, queue_bounded);
    suite_add_tcase(s, tc);
    return s;
}
