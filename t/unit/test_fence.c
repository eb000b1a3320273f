/* SPDX-License-Identifier: Apache-2.0 */
/* test_fence.c - the writes of a set made outside the scan's and the
 * journal's transactions, each fenced (rs_db_begin_set): the meta keys
 * of snapshots and dumps (rs_db_meta_put_set), framework notifications and
 * the outbox's pruning (rs_notify), the delivery rows (rs_notifydest) and
 * the hub's subscription rows (rs_hubsub), on both drivers.  Node a holds
 * the set's lease and writes; then node b takes it over, and every write
 * a makes afterwards is refused (RS_LEASE_LOST) and leaves the rows as
 * they were, also on a second writer's connection (busy timeout 0). */
#include <string.h>
#include <apr_strings.h>
#include <apr_time.h>
#include "unit.h"
#include "rs_deliverpolicy.h"
#include "rs_hubsub.h"
#include "rs_journal.h"
#include "rs_lease.h"
#include "rs_notify.h"
#include "rs_notifydest.h"

#define CAP "http://example.org/rs/s/capabilitylist.xml"
#define SEC apr_time_from_sec

/* Two nodes' connections to one store, and their leases of set "s". */
typedef struct {
    rs_db_t *a, *b;
    rs_lease_t la, lb;
    rs_notify_t *na, *nb;
} fx_t;

/* The process's fence as the watcher's: the lease of the connection's
 * node (a's or b's). */
static apr_status_t fence_fn(void *baton, rs_db_t *db, const char *set)
{
    fx_t *f = baton;
    rs_lease_t *l = db == f->a ? &f->la : &f->lb;
    return strcmp(set, l->set) ? RS_LEASE_LOST : rs_lease_fence(db, l);
}

static void fx_init(fx_t *f, int second_writer)
{
    const char *path = ut_path(ut_tempdir("fence"), "state.db");
    rs_journal_t *j;
    int held = 0;

    memset(f, 0, sizeof(*f));
    f->a = ut_store_open(path);
    f->b = ut_store_open(path);
    if (second_writer) { /* the delivery and hub threads' connections */
        ck_assert_int_eq(rs_db_busy_timeout(f->a, 0), APR_SUCCESS);
    }
    ck_assert_int_eq(rs_journal_open(&j, f->a, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_notify_open(&f->na, f->a, j, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_open(&j, f->b, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_notify_open(&f->nb, f->b, j, ut_pool), APR_SUCCESS);
    f->la.set = f->lb.set = "s";
    f->la.node = "a";
    f->lb.node = "b";
    f->la.token = rs_lease_token(ut_pool);
    f->lb.token = rs_lease_token(ut_pool);
    f->la.ttl = f->lb.ttl = SEC(60);
    ck_assert_int_eq(rs_lease_take(f->a, &f->la, &held), APR_SUCCESS);
    ck_assert_int_eq(held, 1);
    rs_db_fence_install(fence_fn, f);
}

/* b takes the set over: a's lease ends (a copy released, so that a still
 * believes it holds epoch 1), b takes it at a new epoch. */
static void takeover(fx_t *f)
{
    rs_lease_t ended = f->la;
    int held = 0;

    ck_assert_int_eq(rs_lease_release(f->a, &ended), APR_SUCCESS);
    ck_assert_int_eq(rs_lease_take(f->b, &f->lb, &held), APR_SUCCESS);
    ck_assert_int_eq(held, 1);
    ck_assert_int_gt(f->lb.epoch, f->la.epoch);
}

static void fx_done(fx_t *f)
{
    /* Nothing left open on a's connection by a refused write. */
    ck_assert_int_eq(rs_db_txn_serial(f->a), 0);
    rs_db_fence_install(NULL, NULL);
}

static const char *meta(rs_db_t *db, const char *key)
{
    const char *v = NULL;
    ck_assert_int_eq(rs_db_meta_get(db, ut_pool, key, &v), APR_SUCCESS);
    return v;
}

/* The snapshot's and the dump's keys (rs_snapsched_record, rs_dumprun,
 * rs_massdel, rs_above: rs_db_meta_put_set). */
START_TEST(meta_keys)
{
    fx_t f;

    fx_init(&f, 0);
    ck_assert_int_eq(rs_db_meta_put_set(f.a, "s", "dump-gen:s", "1"), APR_SUCCESS);
    ck_assert_str_eq(meta(f.b, "dump-gen:s"), "1");
    takeover(&f);
    ck_assert_int_eq(rs_db_meta_put_set(f.a, "s", "dump-gen:s", "2"), RS_LEASE_LOST);
    ck_assert_int_eq(rs_db_meta_put_set(f.a, "s", "root-dev:s", "7"), RS_LEASE_LOST);
    ck_assert_str_eq(meta(f.b, "dump-gen:s"), "1");
    ck_assert_ptr_null(meta(f.b, "root-dev:s"));
    /* The new holder's write passes. */
    ck_assert_int_eq(rs_db_meta_put_set(f.b, "s", "dump-gen:s", "3"), APR_SUCCESS);
    ck_assert_str_eq(meta(f.a, "dump-gen:s"), "3");
    fx_done(&f);
}
END_TEST

static apr_array_header_t *fw_entries(void)
{
    apr_array_header_t *e = apr_array_make(ut_pool, 1, sizeof(rs_notify_fw_entry_t));
    rs_notify_fw_entry_t *x = apr_array_push(e);
    memset(x, 0, sizeof(*x));
    x->loc = CAP;
    x->change = "updated";
    x->capability = "capabilitylist";
    x->datetime = apr_time_now();
    return e;
}

static int framework_count(rs_notify_t *n)
{
    apr_array_header_t *all = NULL;
    ck_assert_int_eq(rs_notify_after(n, ut_pool, "s", RS_NOTIFY_FRAMEWORK, 0, 100, &all),
                     APR_SUCCESS);
    return all->nelts;
}

/* Framework notifications stored, and the outbox pruned. */
START_TEST(notifications)
{
    rs_notify_opts_t o;
    apr_time_t now = apr_time_now();
    int deleted = -1;
    fx_t f;

    memset(&o, 0, sizeof(o));
    o.set = "s";
    o.capability_url = CAP;
    o.description_url = "http://example.org/.well-known/resourcesync";
    fx_init(&f, 0);
    ck_assert_int_eq(rs_notify_add_framework(f.na, ut_pool, &o, fw_entries(), now - SEC(100), NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_notify_add_framework(f.na, ut_pool, &o, fw_entries(), now - SEC(50), NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(framework_count(f.nb), 2);
    takeover(&f);
    ck_assert_int_eq(rs_notify_add_framework(f.na, ut_pool, &o, fw_entries(), now, NULL),
                     RS_LEASE_LOST);
    ck_assert_int_eq(rs_notify_prune(f.na, "s", RS_NOTIFY_FRAMEWORK, now, &deleted), RS_LEASE_LOST);
    ck_assert_int_eq(deleted, 0);
    ck_assert_int_eq(framework_count(f.nb), 2);
    /* The new holder prunes (all but the newest sealed one). */
    ck_assert_int_eq(rs_notify_prune(f.nb, "s", RS_NOTIFY_FRAMEWORK, now, &deleted), APR_SUCCESS);
    ck_assert_int_eq(deleted, 1);
    fx_done(&f);
}
END_TEST

static rs_notifydest_t *dest_row(rs_db_t *db, const char *url)
{
    apr_array_header_t *rows = NULL;
    int i;
    ck_assert_int_eq(rs_notifydest_list(db, ut_pool, &rows), APR_SUCCESS);
    for (i = 0; i < rows->nelts; i++) {
        rs_notifydest_t *d = &APR_ARRAY_IDX(rows, i, rs_notifydest_t);
        if (!strcmp(d->url, url)) {
            return d;
        }
    }
    return NULL;
}

/* The delivery thread's rows: added, cursors and state, deleted; a then
 * a second writer (its rs_db_begin_set opens no transaction on SQLite). */
static void delivery_rows(int second_writer)
{
    rs_notifydest_t d = { "s", RS_NOTIFY_CHANGE, "ping", "http://hub.example/", NULL, 0, 0 };
    int added = -1, found = -1;
    fx_t f;

    fx_init(&f, second_writer);
    ck_assert_int_eq(rs_notifydest_ensure(f.a, "s", d.topic, d.kind, d.url, 3, &added),
                     APR_SUCCESS);
    ck_assert_int_eq(added, 1);
    d.cursor = 5;
    ck_assert_int_eq(rs_notifydest_update(f.a, &d, &found), APR_SUCCESS);
    ck_assert_int_eq(found, 1);
    takeover(&f);
    ck_assert_int_eq(
        rs_notifydest_ensure(f.a, "s", d.topic, d.kind, "http://other.example/", 0, &added),
        RS_LEASE_LOST);
    ck_assert_int_eq(added, 0);
    d.cursor = 9;
    d.attempts = 2;
    ck_assert_int_eq(rs_notifydest_update(f.a, &d, &found), RS_LEASE_LOST);
    ck_assert_int_eq(rs_notifydest_delete(f.a, &d), RS_LEASE_LOST);
    ck_assert_ptr_null(dest_row(f.b, "http://other.example/"));
    ck_assert_ptr_nonnull(dest_row(f.b, d.url));
    ck_assert_int_eq(dest_row(f.b, d.url)->cursor, 5);
    ck_assert_int_eq(dest_row(f.b, d.url)->attempts, 0);
    ck_assert_int_eq(rs_notifydest_delete(f.b, &d), APR_SUCCESS);
    ck_assert_ptr_null(dest_row(f.b, d.url));
    fx_done(&f);
}

START_TEST(delivery)
{
    delivery_rows(0);
}
END_TEST

START_TEST(delivery_second_writer)
{
    delivery_rows(1);
}
END_TEST

static rs_deliverpolicy_hub_t *hub_of(apr_array_header_t *hubs, const char *set, const char *url)
{
    rs_deliverpolicy_hub_t *h = apr_array_push(hubs);
    h->set = set;
    h->url = url;
    h->ping = 0;
    return h;
}

/* The delivery thread's reconciliation of the hub rows with the
 * configuration: the rows of a set this node writes are made to match;
 * those of a set it does not write (the fence refuses) are left to that
 * set's writer, which is no failure. */
START_TEST(delivery_reconcile)
{
    apr_array_header_t *hubs = apr_array_make(ut_pool, 2, sizeof(rs_deliverpolicy_hub_t));
    rs_notifydest_t gone = { "t", RS_NOTIFY_CHANGE, RS_NOTIFYDEST_FAT, "http://old.example/", 0 };
    ut_log_t ul;
    int held = 0;
    fx_t f;

    fx_init(&f, 1);
    ut_log_init(&ul);
    /* A row of set t (written by b) whose hub is no longer configured. */
    f.lb.set = "t";
    ck_assert_int_eq(rs_lease_take(f.b, &f.lb, &held), APR_SUCCESS);
    ck_assert_int_eq(held, 1);
    ck_assert_int_eq(rs_notifydest_ensure(f.b, "t", gone.topic, gone.kind, gone.url, 0, NULL),
                     APR_SUCCESS);
    hub_of(hubs, "s", "http://hub.example/");
    hub_of(hubs, "t", "http://hub.example/");
    ck_assert_int_eq(rs_deliverpolicy_reconcile(f.a, hubs, &ul.logger, ut_pool), APR_SUCCESS);
    ck_assert_ptr_nonnull(dest_row(f.b, "http://hub.example/"));
    ck_assert_str_eq(dest_row(f.b, "http://hub.example/")->set, "s");
    ck_assert_ptr_nonnull(dest_row(f.b, gone.url));
    ck_assert_int_eq(ut_log_count(&ul, "set s: publishing its change topic"), 1);
    ck_assert_int_eq(ut_log_count(&ul, "set t:"), 0);
    fx_done(&f);
}
END_TEST

static rs_hubsub_t *sub_row(rs_db_t *db, const char *url)
{
    apr_array_header_t *subs = NULL;
    int i;
    ck_assert_int_eq(rs_hubsub_list(db, ut_pool, &subs), APR_SUCCESS);
    for (i = 0; i < subs->nelts; i++) {
        rs_hubsub_t *x = &APR_ARRAY_IDX(subs, i, rs_hubsub_t);
        if (!strcmp(x->url, url)) {
            return x;
        }
    }
    return NULL;
}

/* The hub's intake: subscribe, renew, unsubscribe, expire. */
static void hub_rows(int second_writer)
{
    rs_hubsub_t x = { "s", RS_NOTIFY_CHANGE, "http://sub.example/cb", "k", 0, 0, NULL, NULL };
    rs_hubsub_t y = x;
    apr_array_header_t *gone = NULL;
    apr_time_t now = apr_time_now();
    int created = -1, removed = -1;
    fx_t f;

    fx_init(&f, second_writer);
    x.lease_until = now + SEC(1);
    ck_assert_int_eq(rs_hubsub_put(f.a, &x, &created), APR_SUCCESS);
    ck_assert_int_eq(created, 1);
    takeover(&f);
    y.url = "http://sub.example/other";
    ck_assert_int_eq(rs_hubsub_put(f.a, &y, &created), RS_LEASE_LOST);
    x.lease_until = now + SEC(3600); /* a renewal */
    ck_assert_int_eq(rs_hubsub_put(f.a, &x, &created), RS_LEASE_LOST);
    ck_assert_int_eq(rs_hubsub_remove(f.a, "s", x.topic, x.url, &removed), RS_LEASE_LOST);
    ck_assert_int_eq(removed, 0);
    /* Expiry leaves the rows of a set another node writes to that node. */
    ck_assert_int_eq(rs_hubsub_expire(f.a, ut_pool, now + SEC(2), &gone), APR_SUCCESS);
    ck_assert_int_eq(gone->nelts, 0);
    ck_assert_ptr_null(sub_row(f.b, y.url));
    ck_assert_ptr_nonnull(sub_row(f.b, x.url));
    ck_assert_int_eq(sub_row(f.b, x.url)->lease_until, now + SEC(1));
    /* The new holder expires it. */
    ck_assert_int_eq(rs_hubsub_expire(f.b, ut_pool, now + SEC(2), &gone), APR_SUCCESS);
    ck_assert_int_eq(gone->nelts, 1);
    ck_assert_ptr_null(sub_row(f.b, x.url));
    fx_done(&f);
}

START_TEST(hub)
{
    hub_rows(0);
}
END_TEST

START_TEST(hub_second_writer)
{
    hub_rows(1);
}
END_TEST

Suite *fence_suite(void)
{
    Suite *s = suite_create("fence");
    TCase *tc = ut_tcase("fence", 30);
    tcase_add_test(tc, meta_keys);
    tcase_add_test(tc, notifications);
    tcase_add_test(tc, delivery);
    tcase_add_test(tc, delivery_second_writer);
    tcase_add_test(tc, delivery_reconcile);
    tcase_add_test(tc, hub);
    tcase_add_test(tc, hub_second_writer);
    suite_add_tcase(s, tc);
    return s;
}
