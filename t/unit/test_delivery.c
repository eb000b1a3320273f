/* SPDX-License-Identifier: Apache-2.0 */
/* test_delivery.c - rs_delivery: the delivery thread's table and its
 * turns, on a real SQLite outbox (rs_notify, rs_notifydest, rs_hubsub),
 * the real rs_websub sender and a real HTTP peer (websub_server.py), with
 * explicit times: a notification delivered and its cursor written after
 * the 2xx, a failure keeping the cursor and retried later, a refresh
 * keeping what only memory knows, rows of a hub no longer configured
 * skipped and deleted, a destination the sender refuses dropped, the
 * status file. */
#include <string.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_deliverpolicy.h"
#include "rs_deliverstat.h"
#include "rs_delivery.h"
#include "rs_hubsub.h"
#include "rs_lease.h"
#include "rs_notify.h"
#include "rs_notifydest.h"
#include "rs_schema.h"

#define SEC(s) apr_time_from_sec(s)
#define NOW    (apr_time_from_sec(1700000000)) /* a wall-clock "now" */

typedef struct {
    rs_db_t *db;
    rs_websub_t *ws;
    rs_delivery_t *dv;
    rs_delivery_hooks_t hooks;
    const char *statedir;
    const char *hub;   /* the configured hub's URL, NULL: none */
    int ping;          /* the hub is pinged (else fat POSTs) */
    apr_int64_t shown; /* hooks.shown: what the topic serves (-1: no limit) */
    apr_time_t clock;  /* hooks.now */
    int requests;      /* hooks.request calls */
    int lost;          /* the fence refuses (RS_LEASE_LOST) */
    int writes;        /* hooks.writes: the driver says this node writes the set */
    ut_log_t sl;       /* the store's */
    ut_log_t ul;       /* the table's */
} tf_t;

static char *peer, *peer_log;

static void peer_start(void)
{
    ut_setup();
    peer = ut_peer_start(&peer_log);
}

static void peer_stop(void)
{
    ut_peer_stop();
    ut_teardown();
}

/* ---- the configuration's hooks: one set "s" ---- */

static apr_time_t h_now(void *baton)
{
    return ((tf_t *)baton)->clock;
}

static const void *h_set(void *baton, const char *name)
{
    return strcmp(name, "s") ? NULL : baton;
}

static const void *h_hub(void *baton, const void *set, const char *url, int ping)
{
    tf_t *f = baton;
    (void)set;
    return f->hub && ping == f->ping && !strcmp(url, f->hub) ? f->hub : NULL;
}

static apr_array_header_t *h_sets(void *baton, apr_pool_t *p)
{
    apr_array_header_t *a = apr_array_make(p, 1, sizeof(const char *));
    (void)baton;
    APR_ARRAY_PUSH(a, const char *) = "s";
    return a;
}

static apr_array_header_t *h_hubs(void *baton, apr_pool_t *p)
{
    tf_t *f = baton;
    apr_array_header_t *a = apr_array_make(p, 1, sizeof(rs_deliverpolicy_hub_t));
    if (f->hub) {
        rs_deliverpolicy_hub_t *h = apr_array_push(a);
        h->set = "s";
        h->url = f->hub;
        h->ping = f->ping;
    }
    return a;
}

static apr_time_t h_retry(void *baton, const void *set)
{
    (void)baton;
    (void)set;
    return SEC(600);
}

static apr_int64_t h_max_backlog(void *baton, const void *set)
{
    (void)baton;
    (void)set;
    return 1000;
}

static void h_request(void *baton, apr_pool_t *p, const void *set, const void *hub,
                      const rs_notifydest_t *row, rs_websub_req_t *req)
{
    const char **headers = apr_pcalloc(p, 2 * sizeof(*headers));
    (void)set;
    (void)hub;
    ((tf_t *)baton)->requests++;
    headers[0] =
        apr_pstrcat(p, "Link: <http://example.org/s/notify/", row->topic, ">; rel=\"self\"", NULL);
    req->headers = headers;
    if (req->kind == RS_WEBSUB_PING) {
        req->topic = apr_pstrcat(p, "http://example.org/s/notify/", row->topic, NULL);
    }
}

static apr_int64_t h_shown(void *baton, const void *set, const char *topic)
{
    tf_t *f = baton;
    (void)set;
    (void)topic;
    return f->shown < 0 ? APR_INT64_MAX : f->shown;
}

/* ---- the fixture ---- */

/* A store with 2 sealed framework notifications of set "s" (ids 1, 2),
 * a subscriber at peer path cb (lease a day on) at cursor 0, the table
 * opened on it with the real sender, max_parallel requests at once. */
static void tf_init_n(tf_t *f, const char *cb, int max_parallel)
{
    rs_notify_t *n;
    rs_notify_opts_t o;
    rs_hubsub_t x;
    rs_websub_opts_t wo;
    apr_array_header_t *e = apr_array_make(ut_pool, 1, sizeof(rs_notify_fw_entry_t));
    rs_notify_fw_entry_t *fe = apr_array_push(e);
    int i;

    memset(f, 0, sizeof(*f));
    f->statedir = ut_tempdir("delivery");
    f->clock = NOW;
    f->shown = -1;
    ck_assert_int_eq(rs_schema_open(&f->db, ut_pool, ut_driver,
                                    ut_store(ut_path(f->statedir, "state.db")),
                                    ut_log_init(&f->sl)),
                     APR_SUCCESS);
    ut_log_init(&f->ul);
    ck_assert_int_eq(rs_notify_open(&n, f->db, NULL, ut_pool), APR_SUCCESS);
    memset(&o, 0, sizeof(o));
    o.set = "s";
    o.capability_url = "http://example.org/s/capabilitylist.xml";
    o.max_entries = 10;
    fe->loc = o.capability_url;
    fe->change = "updated";
    fe->capability = "capabilitylist";
    for (i = 0; i < 2; i++) {
        ck_assert_int_eq(rs_notify_add_framework(n, ut_pool, &o, e, NOW - SEC(60 - i), NULL),
                         APR_SUCCESS);
    }
    if (cb) {
        memset(&x, 0, sizeof(x));
        x.set = "s";
        x.topic = RS_NOTIFY_FRAMEWORK;
        x.url = strstr(cb, "://") ? cb : apr_pstrcat(ut_pool, peer, cb, NULL);
        x.lease_until = NOW + SEC(86400);
        ck_assert_int_eq(rs_hubsub_put(f->db, &x, NULL), APR_SUCCESS);
        ck_assert_int_eq(rs_db_run(f->db, "UPDATE notify_dests SET cursor = 0"), APR_SUCCESS);
    }
    f->hooks = (rs_delivery_hooks_t){ f,      h_now,   h_set,         h_hub,     h_sets,
                                      h_hubs, h_retry, h_max_backlog, h_request, h_shown };
    f->dv = rs_delivery_create(ut_pool, f->statedir, max_parallel, &f->hooks, &f->ul.logger);
    memset(&wo, 0, sizeof(wo));
    ck_assert_int_eq(rs_websub_create(&f->ws, ut_pool, &wo, rs_delivery_done, f->dv, &f->ul.logger),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_delivery_open(f->dv, f->ws, f->db), APR_SUCCESS);
}

static void tf_init(tf_t *f, const char *cb)
{
    tf_init_n(f, cb, 8);
}

/* Run the sender until nothing is queued or in flight. */
static void pump(tf_t *f)
{
    apr_time_t deadline = apr_time_now() + SEC(15);
    while (rs_websub_run(f->ws, 100) > 0) {
        ck_assert_msg(apr_time_now() < deadline, "requests still pending");
    }
}

/* The rows of kind as the store holds them (copies in ut_pool). */
static int rows(tf_t *f, const char *kind, rs_notifydest_t **first)
{
    apr_array_header_t *a;
    int i, n = 0;
    *first = NULL;
    ck_assert_int_eq(rs_notifydest_list(f->db, ut_pool, &a), APR_SUCCESS);
    for (i = 0; i < a->nelts; i++) {
        rs_notifydest_t *d = &APR_ARRAY_IDX(a, i, rs_notifydest_t);
        if (!strcmp(d->kind, kind) && !n++) {
            *first = apr_pmemdup(ut_pool, d, sizeof(*d));
        }
    }
    return n;
}

static rs_notifydest_t *sub_row(tf_t *f)
{
    rs_notifydest_t *d;
    ck_assert_int_eq(rows(f, RS_NOTIFYDEST_SUB, &d), 1);
    return d;
}

/* Requests the peer logged whose line contains needle; a needle
 * " POST /path " is matched as the peer logs it (percent-encoded). */
static int peer_count(const char *needle)
{
    char *text = ut_exists(peer_log) ? ut_read(peer_log, NULL) : "";
    char *n = apr_pstrdup(ut_pool, ""), *c;
    int count = 0;

    for (c = (char *)needle; *c; c++) {
        n = apr_pstrcat(ut_pool, n, *c == '/' ? "%2F" : apr_pstrndup(ut_pool, c, 1), NULL);
    }
    for (; (text = strstr(text, n)); text++) {
        count++;
    }
    return count;
}

/* Delivered in order; the cursor is written at the turn after the 2xx,
 * never before; the status file has the topics and the row. */
START_TEST(delivered_then_cursor_written)
{
    tf_t f;
    const char *st;

    tf_init(&f, "/ok/cb");
    ck_assert(rs_delivery_turn(f.dv, NOW, 0) == NOW + RS_DELIVERY_REFRESH);
    ck_assert_int_eq(rs_websub_pending(f.ws, NULL), 1);
    st = rs_deliverstat_read(ut_pool, f.statedir);
    ck_assert_ptr_nonnull(st);
    ck_assert_ptr_nonnull(strstr(st, "notify-subscriber: s framework "));
    ck_assert_ptr_nonnull(strstr(st, "/ok/cb pending=2 failures=0 last-status=-"));
    pump(&f);
    ck_assert_int_eq(peer_count(" POST /ok/cb "), 1);
    ck_assert_int_eq(sub_row(&f)->cursor, 0); /* in memory only */
    rs_delivery_turn(f.dv, NOW, 0);           /* writes it, sends id 2 */
    ck_assert_int_eq(sub_row(&f)->cursor, 1);
    ck_assert_int_eq(sub_row(&f)->last_status, 200);
    pump(&f);
    rs_delivery_turn(f.dv, NOW, 0);
    ck_assert_int_eq(sub_row(&f)->cursor, 2);
    ck_assert_int_eq(peer_count(" POST /ok/cb "), 2);
    ck_assert_int_eq(peer_count("rel%3D%22self%22"), 2); /* the hook's header */
    ck_assert_int_eq(rs_websub_pending(f.ws, NULL), 0);  /* nothing more */
    rs_delivery_turn(f.dv, NOW + SEC(2), 0);             /* the status renewed */
    st = rs_deliverstat_read(ut_pool, f.statedir);
    ck_assert_ptr_nonnull(strstr(st, "/ok/cb pending=0 failures=0 last-status=200"));
}
END_TEST

static int h_writes(void *baton, const void *set)
{
    (void)set;
    return ((tf_t *)baton)->writes;
}

/* The process's fence: refuses while f->lost. */
static apr_status_t fence_fn(void *baton, rs_db_t *db, const char *set)
{
    (void)db;
    (void)set;
    return ((tf_t *)baton)->lost ? RS_LEASE_LOST : APR_SUCCESS;
}

/* A cursor the set's fence refuses stays dirty while the driver says
 * this node writes the set (a start, before its lease is taken), is
 * written once the fence passes, and is dropped once the driver says
 * another node writes it. */
START_TEST(refused_cursor_kept_then_dropped)
{
    rs_notify_opts_t o = { 0 };
    apr_array_header_t *e = apr_array_make(ut_pool, 1, sizeof(rs_notify_fw_entry_t));
    rs_notify_fw_entry_t *fe = apr_array_push(e);
    rs_notify_t *n;
    tf_t f;

    tf_init(&f, "/ok/cb");
    f.hooks.writes = h_writes;
    f.writes = 1;
    f.lost = 1;
    rs_db_fence_install(fence_fn, &f);
    rs_delivery_turn(f.dv, NOW, 0);
    pump(&f);
    rs_delivery_turn(f.dv, NOW, 0); /* refused: id 1 not written; id 2 sent */
    ck_assert_int_eq(sub_row(&f)->cursor, 0);
    f.lost = 0;
    rs_delivery_turn(f.dv, NOW, 0); /* kept dirty: written now */
    ck_assert_int_eq(sub_row(&f)->cursor, 1);
    pump(&f);
    rs_delivery_turn(f.dv, NOW, 0);
    ck_assert_int_eq(sub_row(&f)->cursor, 2);
    ck_assert_int_eq(peer_count(" POST /ok/cb "), 2); /* each once */
    /* A third one delivered, its cursor refused after the driver says
     * another node writes the set: dropped, never written. */
    memset(fe, 0, sizeof(*fe));
    o.set = "s";
    o.capability_url = "http://example.org/s/capabilitylist.xml";
    fe->loc = o.capability_url;
    fe->change = "updated";
    fe->capability = "capabilitylist";
    ck_assert_int_eq(rs_notify_open(&n, f.db, NULL, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_notify_add_framework(n, ut_pool, &o, e, NOW, NULL), APR_SUCCESS);
    rs_delivery_turn(f.dv, NOW + SEC(2), 0);
    pump(&f);
    ck_assert_int_eq(peer_count(" POST /ok/cb "), 3);
    f.lost = 1;
    f.writes = 0;
    rs_delivery_turn(f.dv, NOW + SEC(2), 0);
    f.lost = 0;
    f.writes = 1;
    rs_delivery_turn(f.dv, NOW + SEC(2), 0);
    ck_assert_int_eq(sub_row(&f)->cursor, 2);
    rs_db_fence_install(NULL, NULL);
}
END_TEST

/* A 503 (Retry-After: 7) keeps the cursor; the row is not tried before
 * its next_try and is tried again after it. */
START_TEST(failure_keeps_cursor_and_retries_later)
{
    tf_t f;
    rs_notifydest_t *d;

    tf_init(&f, "/status/503/cb");
    rs_delivery_turn(f.dv, NOW, 0);
    pump(&f);
    rs_delivery_turn(f.dv, NOW, 0);
    d = sub_row(&f);
    ck_assert_int_eq(d->cursor, 0);
    ck_assert_int_eq(d->attempts, 1);
    ck_assert_int_eq(d->last_status, 503);
    ck_assert(d->next_try == NOW + SEC(7));
    ck_assert_int_eq(rs_websub_pending(f.ws, NULL), 0);
    rs_delivery_turn(f.dv, NOW + SEC(6), 0); /* not yet */
    ck_assert_int_eq(rs_websub_pending(f.ws, NULL), 0);
    ck_assert_int_eq(peer_count(" POST /status/503/cb "), 1);
    rs_delivery_turn(f.dv, NOW + SEC(7), 0); /* due */
    ck_assert_int_eq(rs_websub_pending(f.ws, NULL), 1);
    pump(&f);
    rs_delivery_turn(f.dv, NOW + SEC(7), 0);
    ck_assert_int_eq(peer_count(" POST /status/503/cb "), 2);
    d = sub_row(&f);
    ck_assert_int_eq(d->cursor, 0);
    ck_assert_int_eq(d->attempts, 2);
}
END_TEST

/* A refresh while a request is in flight keeps it (not sent twice), and
 * one after the completion keeps the cursor not yet written. */
START_TEST(refresh_keeps_memory_state)
{
    tf_t f;

    tf_init(&f, "/slow/600/cb");
    rs_delivery_turn(f.dv, NOW, 0);
    ck_assert_int_eq(rs_websub_pending(f.ws, NULL), 1);
    rs_delivery_turn(f.dv, NOW, 1); /* refreshed: still in flight */
    ck_assert_int_eq(rs_websub_pending(f.ws, NULL), 1);
    pump(&f);
    ck_assert_int_eq(peer_count(" POST /slow/600/cb "), 1);
    rs_delivery_turn(f.dv, NOW, 1); /* refreshed from a store at 0 */
    ck_assert_int_eq(sub_row(&f)->cursor, 1);
    pump(&f);
    rs_delivery_turn(f.dv, NOW, 1);
    ck_assert_int_eq(sub_row(&f)->cursor, 2);
    ck_assert_int_eq(peer_count(" POST /slow/600/cb "), 2); /* each once */
    ck_assert_int_eq(f.requests, 2);
}
END_TEST

/* A hub row no longer configured is not sent to, and reconciling deletes
 * it; a configured hub gets a row from the newest notification on. */
START_TEST(unconfigured_hub_skipped_and_deleted)
{
    tf_t f;
    rs_notifydest_t *d;
    const char *old, *cur;
    int i;

    tf_init(&f, NULL);
    old = apr_pstrcat(ut_pool, peer, "/ok/old", NULL);
    cur = apr_pstrcat(ut_pool, peer, "/ok/new", NULL);
    for (i = 0; i < 2; i++) {
        ck_assert_int_eq(rs_notifydest_ensure(f.db, "s", i ? RS_NOTIFY_CHANGE : RS_NOTIFY_FRAMEWORK,
                                              RS_NOTIFYDEST_FAT, old, 0, NULL),
                         APR_SUCCESS);
    }
    f.hub = cur;
    rs_delivery_turn(f.dv, NOW, 0);
    ck_assert_int_eq(rs_websub_pending(f.ws, NULL), 0);
    ck_assert_int_eq(rows(&f, RS_NOTIFYDEST_FAT, &d), 2);
    ck_assert_int_eq(rs_delivery_reconcile(f.dv), APR_SUCCESS);
    ck_assert_int_eq(rows(&f, RS_NOTIFYDEST_FAT, &d), 2); /* the new hub's two topics */
    ck_assert_str_eq(d->url, cur);
    ck_assert_int_eq(ut_log_count(&f.ul, old), 2);
    rs_delivery_turn(f.dv, NOW, 1);
    ck_assert_int_eq(rs_websub_pending(f.ws, NULL), 0); /* nothing of the past */
    ck_assert_int_eq(peer_count(" POST /ok/"), 0);
    f.hub = old; /* the old one configured again: its rows come back */
    ck_assert_int_eq(rs_delivery_reconcile(f.dv), APR_SUCCESS);
    ck_assert_int_eq(rows(&f, RS_NOTIFYDEST_FAT, &d), 2);
    ck_assert_str_eq(d->url, old);
}
END_TEST

/* A destination the sender refuses (not http) is dropped, logged. */
START_TEST(refused_destination_dropped)
{
    tf_t f;
    rs_notifydest_t *d;

    tf_init(&f, "ftp://127.0.0.1/cb");
    rs_delivery_turn(f.dv, NOW, 0);
    ck_assert_int_eq(rs_websub_pending(f.ws, NULL), 0);
    ck_assert_int_eq(rows(&f, RS_NOTIFYDEST_SUB, &d), 0);
    ck_assert_int_eq(ut_log_count(&f.ul, "set s: cannot send to ftp://127.0.0.1/cb (sub); the "
                                         "destination is dropped"),
                     1);
}
END_TEST

/* A configured hub's row gets the notifications as fat POSTs, unsigned,
 * its cursor written after each 2xx. */
START_TEST(hub_row_delivered)
{
    tf_t f;
    rs_notifydest_t *d;

    tf_init(&f, NULL);
    f.hub = apr_pstrcat(ut_pool, peer, "/ok/hub", NULL);
    ck_assert_int_eq(
        rs_notifydest_ensure(f.db, "s", RS_NOTIFY_FRAMEWORK, RS_NOTIFYDEST_FAT, f.hub, 0, NULL),
        APR_SUCCESS);
    rs_delivery_turn(f.dv, NOW, 0);
    pump(&f);
    rs_delivery_turn(f.dv, NOW, 0);
    pump(&f);
    rs_delivery_turn(f.dv, NOW, 0);
    ck_assert_int_eq(rows(&f, RS_NOTIFYDEST_FAT, &d), 1);
    ck_assert_int_eq(d->cursor, 2);
    ck_assert_int_eq(peer_count(" POST /ok/hub application%2Fxml "), 2);
    ck_assert_int_eq(peer_count("rel%3D%22self%22 - "), 2); /* no signature */
}
END_TEST

/* A ping hub fetches the topic when pinged: it is pinged once for every
 * notification the topic serves that it was not pinged for (its cursor
 * then the newest of them), never for one the topic does not serve yet
 * (hooks.shown), and the ping carries the topic's Link header. */
START_TEST(ping_once_per_topic_version)
{
    tf_t f;
    rs_notifydest_t *d;
    rs_notify_t *n;
    rs_notify_opts_t o;
    apr_array_header_t *e = apr_array_make(ut_pool, 1, sizeof(rs_notify_fw_entry_t));
    rs_notify_fw_entry_t *fe = apr_array_push(e);

    tf_init(&f, NULL);
    f.hub = apr_pstrcat(ut_pool, peer, "/ok/ping", NULL);
    f.ping = 1;
    f.shown = 0; /* the topic file not written yet */
    ck_assert_int_eq(
        rs_notifydest_ensure(f.db, "s", RS_NOTIFY_FRAMEWORK, RS_NOTIFYDEST_PING, f.hub, 0, NULL),
        APR_SUCCESS);
    rs_delivery_turn(f.dv, NOW, 0);
    ck_assert_int_eq(rs_websub_pending(f.ws, NULL), 0);
    f.shown = 1; /* the topic serves notification 1 (2 is sealed too) */
    rs_delivery_turn(f.dv, NOW, 1);
    ck_assert_int_eq(rs_websub_pending(f.ws, NULL), 1);
    pump(&f);
    rs_delivery_turn(f.dv, NOW, 0);
    ck_assert_int_eq(rows(&f, RS_NOTIFYDEST_PING, &d), 1);
    ck_assert_int_eq(d->cursor, 1);
    ck_assert_int_eq(rs_websub_pending(f.ws, NULL), 0); /* 2 is not served yet */
    ck_assert_int_eq(rs_notify_open(&n, f.db, NULL, ut_pool), APR_SUCCESS);
    memset(&o, 0, sizeof(o));
    o.set = "s";
    o.capability_url = "http://example.org/s/capabilitylist.xml";
    o.max_entries = 10;
    fe->loc = o.capability_url;
    fe->change = "updated";
    fe->capability = "capabilitylist";
    ck_assert_int_eq(rs_notify_add_framework(n, ut_pool, &o, e, NOW, NULL), APR_SUCCESS);
    f.shown = 3; /* the topic serves 2 and 3 (one document) */
    rs_delivery_turn(f.dv, NOW, 1);
    pump(&f);
    rs_delivery_turn(f.dv, NOW, 0);
    ck_assert_int_eq(rows(&f, RS_NOTIFYDEST_PING, &d), 1);
    ck_assert_int_eq(d->cursor, 3);
    ck_assert_int_eq(rs_websub_pending(f.ws, NULL), 0);
    ck_assert_int_eq(peer_count(" POST /ok/ping application%2Fx-www-form-urlencoded "), 2);
    ck_assert_int_eq(peer_count("notify%2Fframework%3E%3B%20rel%3D%22self%22 "), 2);
}
END_TEST

/* At most max_parallel requests at once, and no row waits behind
 * another turn after turn: two subscribers, one request at a time, both
 * get both notifications. */
START_TEST(parallel_bounded_and_fair)
{
    tf_t f;
    rs_hubsub_t x;
    apr_array_header_t *a;
    int i;

    tf_init_n(&f, "/slow/100/a", 1);
    memset(&x, 0, sizeof(x));
    x.set = "s";
    x.topic = RS_NOTIFY_FRAMEWORK;
    x.url = apr_pstrcat(ut_pool, peer, "/slow/100/b", NULL);
    x.lease_until = NOW + SEC(86400);
    ck_assert_int_eq(rs_hubsub_put(f.db, &x, NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_db_run(f.db, "UPDATE notify_dests SET cursor = 0"), APR_SUCCESS);
    for (i = 0; i < 5; i++) {
        rs_delivery_turn(f.dv, NOW, 0);
        ck_assert_int_le(rs_websub_pending(f.ws, NULL), 1);
        pump(&f);
        if (i == 1) { /* in turn: one each, not one twice */
            ck_assert_int_eq(peer_count(" POST /slow/100/a "), 1);
            ck_assert_int_eq(peer_count(" POST /slow/100/b "), 1);
        }
    }
    rs_delivery_turn(f.dv, NOW, 0);
    ck_assert_int_eq(peer_count(" POST /slow/100/a "), 2);
    ck_assert_int_eq(peer_count(" POST /slow/100/b "), 2);
    ck_assert_int_eq(rs_notifydest_list(f.db, ut_pool, &a), APR_SUCCESS);
    ck_assert_int_eq(a->nelts, 2);
    for (i = 0; i < 2; i++) {
        ck_assert_int_eq(APR_ARRAY_IDX(a, i, rs_notifydest_t).cursor, 2);
    }
}
END_TEST

Suite *delivery_suite(void)
{
    Suite *s = suite_create("delivery");
    TCase *tc = tcase_create("table");

    tcase_add_checked_fixture(tc, peer_start, peer_stop);
    tcase_set_timeout(tc, 40);
    tcase_add_test(tc, delivered_then_cursor_written);
    tcase_add_test(tc, refused_cursor_kept_then_dropped);
    tcase_add_test(tc, failure_keeps_cursor_and_retries_later);
    tcase_add_test(tc, refresh_keeps_memory_state);
    tcase_add_test(tc, unconfigured_hub_skipped_and_deleted);
    tcase_add_test(tc, refused_destination_dropped);
    tcase_add_test(tc, hub_row_delivered);
    tcase_add_test(tc, ping_once_per_topic_version);
    tcase_add_test(tc, parallel_bounded_and_fair);
    suite_add_tcase(s, tc);
    return s;
}
