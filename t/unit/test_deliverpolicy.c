/* SPDX-License-Identifier: Apache-2.0 */
/* test_deliverpolicy.c - rs_deliverpolicy: when a destination is due,
 * when a subscription ends, what a completion does to the row (cursor,
 * back-off, giving up), with explicit times on rows of a real SQLite
 * outbox (rs_notify, rs_notifydest, rs_hubsub). */
#include <string.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_deliverlook.h"
#include "rs_deliverpolicy.h"
#include "rs_hubsub.h"
#include "rs_notify.h"
#include "rs_notifydest.h"
#include "rs_schema.h"

#define SEC(s) apr_time_from_sec(s)
#define NOW    (apr_time_from_sec(1700000000)) /* a wall-clock "now" */
#define RETRY  SEC(600)                        /* ResourceSyncNotifyRetry */
#define HUB    "http://hub.example/"
#define CB     "http://subscriber.example/cb"

typedef struct {
    rs_db_t *db;
    ut_log_t sl; /* the store's */
    ut_log_t ul; /* the policy's */
} df_t;

/* A store with 3 sealed framework notifications of set "s" (ids 1..3), a
 * fat hub's row and a subscriber's (lease until NOW), both at cursor 0. */
static void df_init(df_t *f)
{
    rs_notify_t *n;
    rs_notify_opts_t o;
    rs_hubsub_t x;
    apr_array_header_t *e = apr_array_make(ut_pool, 1, sizeof(rs_notify_fw_entry_t));
    rs_notify_fw_entry_t *fe = apr_array_push(e);
    int i;

    memset(f, 0, sizeof(*f));
    ck_assert_int_eq(rs_schema_open(&f->db, ut_pool, ut_driver,
                                    ut_store(ut_path(ut_tempdir("deliverpolicy"), "state.db")),
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
    for (i = 0; i < 3; i++) {
        ck_assert_int_eq(rs_notify_add_framework(n, ut_pool, &o, e, NOW - SEC(60 - i), NULL),
                         APR_SUCCESS);
    }
    ck_assert_int_eq(
        rs_notifydest_ensure(f->db, "s", RS_NOTIFY_FRAMEWORK, RS_NOTIFYDEST_FAT, HUB, 0, NULL),
        APR_SUCCESS);
    memset(&x, 0, sizeof(x));
    x.set = "s";
    x.topic = RS_NOTIFY_FRAMEWORK;
    x.url = CB;
    x.lease_until = NOW;
    ck_assert_int_eq(rs_hubsub_put(f->db, &x, NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_db_run(f->db, "UPDATE notify_dests SET cursor = 0"), APR_SUCCESS);
}

/* The row of kind as the store holds it (a copy in ut_pool). */
static rs_notifydest_t *row(df_t *f, const char *kind)
{
    apr_array_header_t *rows;
    int i;
    ck_assert_int_eq(rs_notifydest_list(f->db, ut_pool, &rows), APR_SUCCESS);
    for (i = 0; i < rows->nelts; i++) {
        rs_notifydest_t *d = &APR_ARRAY_IDX(rows, i, rs_notifydest_t);
        if (!strcmp(d->kind, kind)) {
            return apr_pmemdup(ut_pool, d, sizeof(*d));
        }
    }
    ck_abort_msg("no row of kind %s", kind);
    return NULL;
}

/* Write d's delivery state and read it back. */
static rs_notifydest_t *stored(df_t *f, const rs_notifydest_t *d)
{
    int found = 0;
    ck_assert_int_eq(rs_notifydest_update(f->db, d, &found), APR_SUCCESS);
    ck_assert_int_eq(found, 1);
    return row(f, d->kind);
}

static apr_int64_t backlog(df_t *f, const rs_notifydest_t *d)
{
    apr_int64_t count = -1, newest = -1;
    ck_assert_int_eq(rs_notifydest_backlog(f->db, d->set, d->topic, d->cursor, &count, &newest),
                     APR_SUCCESS);
    return count;
}

static rs_websub_result_t result(rs_websub_outcome_e outcome, long status, const char *error,
                                 apr_int64_t retry_after)
{
    rs_websub_result_t r;
    memset(&r, 0, sizeof(r));
    r.outcome = outcome;
    r.status = status;
    r.error = error;
    r.retry_after = retry_after;
    return r;
}

/* Not while in flight, not before next_try; a subscriber whose lease
 * ended is dropped (logged once per call), a hub has no lease. */
START_TEST(ready_when_idle_due_and_leased)
{
    df_t f;
    rs_notifydest_t *hub, *sub;

    df_init(&f);
    hub = row(&f, RS_NOTIFYDEST_FAT);
    sub = row(&f, RS_NOTIFYDEST_SUB);
    ck_assert_int_eq(sub->lease_until, NOW);
    ck_assert_int_eq(rs_deliverpolicy_ready(hub, 0, 0, NOW, &f.ul.logger), RS_DELIVERPOLICY_GO);
    ck_assert_int_eq(rs_deliverpolicy_ready(hub, 0, 1, NOW, &f.ul.logger), RS_DELIVERPOLICY_WAIT);
    hub->next_try = NOW + 1;
    ck_assert_int_eq(rs_deliverpolicy_ready(hub, 0, 0, NOW, &f.ul.logger), RS_DELIVERPOLICY_WAIT);
    ck_assert_int_eq(rs_deliverpolicy_ready(hub, 0, 0, NOW + 1, &f.ul.logger), RS_DELIVERPOLICY_GO);
    /* The lease lasts up to its end. */
    ck_assert_int_eq(rs_deliverpolicy_ready(sub, 1, 0, NOW, &f.ul.logger), RS_DELIVERPOLICY_GO);
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
    ck_assert_int_eq(rs_deliverpolicy_ready(sub, 1, 0, NOW + 1, &f.ul.logger),
                     RS_DELIVERPOLICY_DROP);
    ck_assert_int_eq(ut_log_count(&f.ul, "6: set s: subscription of " CB " to its framework "
                                         "topic ended: its lease expired"),
                     1);
    /* In flight or backing off: it waits, lease or not. */
    ck_assert_int_eq(rs_deliverpolicy_ready(sub, 1, 1, NOW + 1, &f.ul.logger),
                     RS_DELIVERPOLICY_WAIT);
    /* The same lease on a hub's row means nothing. */
    hub->next_try = 0;
    hub->lease_until = NOW;
    ck_assert_int_eq(rs_deliverpolicy_ready(hub, 0, 0, NOW + 1, &f.ul.logger), RS_DELIVERPOLICY_GO);
    ck_assert_int_eq(f.ul.msgs->nelts, 1);
}
END_TEST

/* Nothing after the cursor: wait; a subscriber more than the limit
 * behind is dropped (logged), at the limit it goes on; hubs have none. */
START_TEST(backlog_limit_ends_subscriptions)
{
    df_t f;
    rs_notifydest_t *hub, *sub;

    df_init(&f);
    hub = row(&f, RS_NOTIFYDEST_FAT);
    sub = row(&f, RS_NOTIFYDEST_SUB);
    ck_assert_int_eq(backlog(&f, sub), 3);
    ck_assert_int_eq(rs_deliverpolicy_backlog(sub, 1, backlog(&f, sub), 3, &f.ul.logger),
                     RS_DELIVERPOLICY_GO);
    ck_assert_int_eq(rs_deliverpolicy_backlog(hub, 0, backlog(&f, hub), 2, &f.ul.logger),
                     RS_DELIVERPOLICY_GO);
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
    ck_assert_int_eq(rs_deliverpolicy_backlog(sub, 1, backlog(&f, sub), 2, &f.ul.logger),
                     RS_DELIVERPOLICY_DROP);
    ck_assert_int_eq(ut_log_count(&f.ul, "4: set s: subscription of " CB " to its framework "
                                         "topic ended: 3 notifications undelivered, more than "
                                         "ResourceSyncHubMaxBacklog 2"),
                     1);
    sub->cursor = 3;
    ck_assert_int_eq(backlog(&f, sub), 0);
    ck_assert_int_eq(rs_deliverpolicy_backlog(sub, 1, 0, 2, &f.ul.logger), RS_DELIVERPOLICY_WAIT);
}
END_TEST

/* A 2xx moves the cursor past what was sent and clears the back-off; the
 * row as stored has it, and the backlog shrinks. */
START_TEST(acknowledged_moves_the_cursor)
{
    df_t f;
    rs_notifydest_t *hub;
    rs_websub_result_t r = result(RS_WEBSUB_OK, 202, "", -1);

    df_init(&f);
    hub = row(&f, RS_NOTIFYDEST_FAT);
    hub->attempts = 4;
    hub->next_try = NOW - 1;
    hub->last_error = "earlier";
    ck_assert_int_eq(
        rs_deliverpolicy_done(hub, 0, 1, NOW - SEC(60), RETRY, &r, NOW, &f.ul.logger, ut_pool),
        RS_DELIVERPOLICY_GO);
    hub = stored(&f, hub);
    ck_assert_int_eq(hub->cursor, 1);
    ck_assert_int_eq(hub->attempts, 0);
    ck_assert_int_eq(hub->next_try, 0);
    ck_assert_int_eq(hub->last_status, 202);
    ck_assert_ptr_null(hub->last_error);
    ck_assert_int_eq(backlog(&f, hub), 2);
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
}
END_TEST

/* A retryable failure keeps the cursor and backs off: within the doubling
 * bound, at most the cap; Retry-After is taken as given, at most the cap. */
START_TEST(retry_backs_off)
{
    df_t f;
    rs_notifydest_t *hub;
    rs_websub_result_t r = result(RS_WEBSUB_RETRY, 503, "", -1);
    int i;

    df_init(&f);
    hub = row(&f, RS_NOTIFYDEST_FAT);
    for (i = 1; i <= 20; i++) {
        apr_int64_t bound = i > 12 ? 3600 : (1 << (i - 1));
        bound = bound > 3600 ? 3600 : bound;
        ck_assert_int_eq(rs_deliverpolicy_done(hub, 0, 1, NOW - SEC(60), RETRY, &r, NOW + i,
                                               &f.ul.logger, ut_pool),
                         RS_DELIVERPOLICY_GO);
        ck_assert_int_eq(hub->attempts, i);
        ck_assert_int_ge(hub->next_try, NOW + i);
        ck_assert_int_le(hub->next_try, NOW + i + SEC(bound));
    }
    hub = stored(&f, hub);
    ck_assert_int_eq(hub->cursor, 0);
    ck_assert_int_eq(hub->attempts, 20);
    ck_assert_int_eq(hub->last_status, 503);
    r = result(RS_WEBSUB_RETRY, 0, "Connection refused", 30);
    rs_deliverpolicy_done(hub, 0, 1, NOW - SEC(60), RETRY, &r, NOW, &f.ul.logger, ut_pool);
    ck_assert_int_eq(hub->next_try, NOW + SEC(30));
    ck_assert_str_eq(stored(&f, hub)->last_error, "Connection refused");
    r.retry_after = 99999;
    rs_deliverpolicy_done(hub, 0, 1, NOW - SEC(60), RETRY, &r, NOW, &f.ul.logger, ut_pool);
    ck_assert_int_eq(hub->next_try, NOW + SEC(3600));
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
}
END_TEST

/* At a hub, a notification that waited longer than ResourceSyncNotifyRetry
 * is given up (logged, the cursor moves); a subscriber's never is. */
START_TEST(hub_gives_up_after_the_retry_window)
{
    df_t f;
    rs_notifydest_t *hub, *sub;
    rs_websub_result_t r = result(RS_WEBSUB_RETRY, 503, "", -1);

    df_init(&f);
    hub = row(&f, RS_NOTIFYDEST_FAT);
    sub = row(&f, RS_NOTIFYDEST_SUB);
    rs_deliverpolicy_done(hub, 0, 1, NOW - RETRY, RETRY, &r, NOW, &f.ul.logger, ut_pool);
    ck_assert_int_eq(hub->cursor, 0);
    ck_assert_int_eq(hub->attempts, 1);
    r = result(RS_WEBSUB_RETRY, 0, "Timeout was reached", -1);
    ck_assert_int_eq(
        rs_deliverpolicy_done(hub, 0, 1, NOW - RETRY - 1, RETRY, &r, NOW, &f.ul.logger, ut_pool),
        RS_DELIVERPOLICY_GO);
    ck_assert_int_eq(ut_log_count(&f.ul, "4: set s: hub " HUB " did not take notification 1 "
                                         "of its framework topic within ResourceSyncNotifyRetry "
                                         "(last: Timeout was reached); it is skipped"),
                     1);
    hub = stored(&f, hub);
    ck_assert_int_eq(hub->cursor, 1);
    ck_assert_int_eq(hub->attempts, 0);
    ck_assert_int_eq(hub->next_try, 0);
    r = result(RS_WEBSUB_RETRY, 502, "", -1);
    rs_deliverpolicy_done(hub, 0, 2, NOW - RETRY - 1, RETRY, &r, NOW, &f.ul.logger, ut_pool);
    ck_assert_int_eq(ut_log_count(&f.ul, "(last: 502); it is skipped"), 1);
    ck_assert_int_eq(hub->cursor, 2);
    rs_deliverpolicy_done(sub, 1, 1, NOW - SEC(86400), RETRY, &r, NOW, &f.ul.logger, ut_pool);
    ck_assert_int_eq(sub->cursor, 0);
    ck_assert_int_eq(sub->attempts, 1);
    ck_assert_int_eq(f.ul.msgs->nelts, 2);
}
END_TEST

/* 410: a subscriber's subscription ends; a hub's 410 is a refusal, the
 * notification skipped.  Other refusals: a subscriber's answer is retried
 * (WebSub 7), a subscriber refused without an answer ends, a hub's skips. */
START_TEST(refusals)
{
    df_t f;
    rs_notifydest_t *hub, *sub;
    rs_websub_result_t r = result(RS_WEBSUB_GONE, 410, "", -1);

    df_init(&f);
    hub = row(&f, RS_NOTIFYDEST_FAT);
    sub = row(&f, RS_NOTIFYDEST_SUB);
    ck_assert_int_eq(rs_deliverpolicy_done(sub, 1, 1, NOW, RETRY, &r, NOW, &f.ul.logger, ut_pool),
                     RS_DELIVERPOLICY_DROP);
    ck_assert_int_eq(ut_log_count(&f.ul, "6: set s: subscription of " CB " to its framework "
                                         "topic ended by the subscriber (410 Gone)"),
                     1);
    ck_assert_int_eq(rs_deliverpolicy_done(hub, 0, 1, NOW, RETRY, &r, NOW, &f.ul.logger, ut_pool),
                     RS_DELIVERPOLICY_GO);
    ck_assert_int_eq(ut_log_count(&f.ul, "3: set s: hub " HUB " refused notification 1 of "
                                         "its framework topic (HTTP 410); it is skipped"),
                     1);
    ck_assert_int_eq(stored(&f, hub)->cursor, 1);

    r = result(RS_WEBSUB_PERMANENT, 404, "", -1);
    ck_assert_int_eq(rs_deliverpolicy_done(sub, 1, 1, NOW, RETRY, &r, NOW, &f.ul.logger, ut_pool),
                     RS_DELIVERPOLICY_GO);
    ck_assert_int_eq(sub->cursor, 0);
    ck_assert_int_eq(sub->attempts, 1);
    ck_assert_int_gt(sub->next_try, 0);
    ck_assert_int_eq(stored(&f, sub)->last_status, 404);
    ck_assert_int_eq(rs_deliverpolicy_done(hub, 0, 2, NOW, RETRY, &r, NOW, &f.ul.logger, ut_pool),
                     RS_DELIVERPOLICY_GO);
    ck_assert_int_eq(ut_log_count(&f.ul, "refused notification 2 of its framework topic "
                                         "(HTTP 404); it is skipped"),
                     1);
    ck_assert_int_eq(hub->cursor, 2);

    r = result(RS_WEBSUB_PERMANENT, 0, "address refused: private", -1);
    ck_assert_int_eq(rs_deliverpolicy_done(sub, 1, 1, NOW, RETRY, &r, NOW, &f.ul.logger, ut_pool),
                     RS_DELIVERPOLICY_DROP);
    ck_assert_int_eq(ut_log_count(&f.ul, "4: set s: subscription of " CB " to its framework "
                                         "topic ended: the callback refused notification 1 "
                                         "(address refused: private)"),
                     1);
    ck_assert_str_eq(sub->last_error, "address refused: private");
    ck_assert_int_eq(f.ul.msgs->nelts, 4);
}
END_TEST

static int count_kind(df_t *f, const char *kind, const char *url, apr_int64_t *cursor)
{
    apr_array_header_t *rows;
    int i, n = 0;
    ck_assert_int_eq(rs_notifydest_list(f->db, ut_pool, &rows), APR_SUCCESS);
    for (i = 0; i < rows->nelts; i++) {
        const rs_notifydest_t *d = &APR_ARRAY_IDX(rows, i, rs_notifydest_t);
        if (!strcmp(d->kind, kind) && !strcmp(d->url, url)) {
            n++;
            if (cursor && !strcmp(d->topic, RS_NOTIFY_FRAMEWORK)) {
                *cursor = d->cursor;
            }
        }
    }
    return n;
}

/* The hub rows follow the configuration: a new hub's rows (both topics)
 * start at the newest sealed notification, existing ones keep their
 * cursor, a hub no longer configured (or configured in the other mode)
 * loses its rows; subscribers are left alone. */
START_TEST(reconcile_hub_rows_with_the_configuration)
{
    df_t f;
    apr_array_header_t *hubs = apr_array_make(ut_pool, 2, sizeof(rs_deliverpolicy_hub_t));
    rs_deliverpolicy_hub_t *h = apr_array_push(hubs);
    apr_int64_t cursor = -1;

    df_init(&f);
    h->set = "s";
    h->url = HUB; /* fat: its framework row exists at cursor 0 */
    h = apr_array_push(hubs);
    h->set = "s";
    h->url = "http://ping.example/";
    h->ping = 1;
    ck_assert_int_eq(rs_deliverpolicy_reconcile(f.db, hubs, &f.ul.logger, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(count_kind(&f, RS_NOTIFYDEST_PING, "http://ping.example/", &cursor), 2);
    ck_assert_int_eq(cursor, 3);
    ck_assert_int_eq(count_kind(&f, RS_NOTIFYDEST_FAT, HUB, &cursor), 2);
    ck_assert_int_eq(cursor, 0);
    ck_assert_int_eq(ut_log_count(&f.ul, "6: set s: publishing its framework topic to hub "
                                         "http://ping.example/ (ping), from notification 4 on"),
                     1);
    ck_assert_int_eq(ut_log_count(&f.ul, "6: set s: publishing its change topic to hub "
                                         "http://ping.example/ (ping), from notification 1 on"),
                     1);
    ck_assert_int_eq(ut_log_count(&f.ul, "6: set s: publishing its change topic to hub " HUB
                                         " (fat), from notification 1 on"),
                     1);
    ck_assert_int_eq(f.ul.msgs->nelts, 3);
    /* Again: nothing to do. */
    ck_assert_int_eq(rs_deliverpolicy_reconcile(f.db, hubs, &f.ul.logger, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(f.ul.msgs->nelts, 3);
    /* The fat hub goes; the ping hub becomes fat. */
    apr_array_clear(hubs);
    h = apr_array_push(hubs);
    h->set = "s";
    h->url = "http://ping.example/";
    ck_assert_int_eq(rs_deliverpolicy_reconcile(f.db, hubs, &f.ul.logger, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(count_kind(&f, RS_NOTIFYDEST_FAT, HUB, NULL), 0);
    ck_assert_int_eq(count_kind(&f, RS_NOTIFYDEST_PING, "http://ping.example/", NULL), 0);
    ck_assert_int_eq(count_kind(&f, RS_NOTIFYDEST_FAT, "http://ping.example/", NULL), 2);
    ck_assert_int_eq(ut_log_count(&f.ul, "6: set s: hub " HUB " (fat) is no longer "
                                         "configured; its framework topic is no longer published "
                                         "there"),
                     1);
    ck_assert_int_eq(ut_log_count(&f.ul, "no longer configured"), 4);
    ck_assert_int_eq(count_kind(&f, RS_NOTIFYDEST_SUB, CB, NULL), 1);
}
END_TEST

/* A turn reads once per (set, topic, cursor): the backlog and the next
 * notification's payload, shared by reference; the turn's references go
 * at its end, a request's at its completion. */
START_TEST(look_once_per_cursor)
{
    df_t f;
    rs_notify_t *box;
    apr_pool_t *turn;
    apr_hash_t *looks;
    const rs_deliverlook_t *l, *again, *none, *other;
    rs_deliverlook_payload_t *pl;

    df_init(&f);
    ck_assert_int_eq(rs_notify_open(&box, f.db, NULL, ut_pool), APR_SUCCESS);
    apr_pool_create(&turn, ut_pool);
    looks = apr_hash_make(turn);
    l = rs_deliverlook_get(f.db, box, turn, looks, "s", RS_NOTIFY_FRAMEWORK, 0);
    ck_assert_int_eq(l->count, 3);
    ck_assert_ptr_nonnull(l->next);
    ck_assert_int_eq(l->next->id, 1);
    ck_assert_int_eq(l->next->refs, 1);
    ck_assert(l->next->len > 0 && memmem(l->next->buf, l->next->len, "capabilitylist", 14));
    /* The same cursor again: the same look, nothing read again (a row
     * deleted meanwhile would change a fresh read). */
    ck_assert_int_eq(rs_db_run(f.db, "DELETE FROM notifications"), APR_SUCCESS);
    again = rs_deliverlook_get(f.db, box, turn, looks, "s", RS_NOTIFY_FRAMEWORK, 0);
    ck_assert_ptr_eq(again, l);
    none = rs_deliverlook_get(f.db, box, turn, looks, "s", RS_NOTIFY_FRAMEWORK, 1);
    ck_assert_int_eq(none->count, 0);
    ck_assert_ptr_null(none->next);
    other = rs_deliverlook_get(f.db, box, turn, looks, "s", RS_NOTIFY_CHANGE, 0);
    ck_assert_int_eq(other->count, 0);
    /* A request takes a reference; the turn ends; the payload lives on
     * until the request's completion gives its reference back. */
    pl = l->next;
    pl->refs++;
    rs_deliverlook_release(turn, looks);
    ck_assert_int_eq(pl->refs, 1);
    ck_assert_int_eq(pl->id, 1);
    rs_deliverlook_unref(pl);
    rs_deliverlook_unref(NULL);
    apr_pool_destroy(turn);
}
END_TEST

Suite *deliverpolicy_suite(void)
{
    Suite *s = suite_create("deliverpolicy");
    TCase *tc = ut_tcase("core", 30);
    tcase_add_test(tc, ready_when_idle_due_and_leased);
    tcase_add_test(tc, backlog_limit_ends_subscriptions);
    tcase_add_test(tc, acknowledged_moves_the_cursor);
    tcase_add_test(tc, retry_backs_off);
    tcase_add_test(tc, hub_gives_up_after_the_retry_window);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, reconcile_hub_rows_with_the_configuration);
    tcase_add_test(tc, look_once_per_cursor);
    suite_add_tcase(s, tc);
    return s;
}
