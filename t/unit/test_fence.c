/* SPDX-License-Identifier: Apache-2.0 */
/* test_fence.c - the writes of a set made outside the scan's and the
 * journal's transactions, each fenced (rs_db_begin_set): the meta keys
 * of snapshots and dumps (rs_db_meta_put_set), on both drivers.  Node a holds
 * the set's lease and writes; then node b takes it over, and every write
 * a makes afterwards is refused (RS_LEASE_LOST) and leaves the rows as
 * they were, also on a second writer's connection (busy timeout 0). */
#include <string.h>
#include <apr_strings.h>
#include <apr_time.h>
#include "unit.h"
#include "rs_journal.h"
#include "rs_lease.h"
#include "rs_notify.h"
#include "rs_schema.h"

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

static rs_db_t *open_in(const char *path)
{
    rs_db_t *db = NULL;
    ck_assert_int_eq(rs_schema_open(&db, ut_pool, ut_driver, ut_store(path), NULL), APR_SUCCESS);
    return db;
}

static void fx_init(fx_t *f, int second_writer)
{
    const char *path = ut_path(ut_tempdir("fence"), "state.db");
    rs_journal_t *j;
    int held = 0;

    memset(f, 0, sizeof(*f));
    f->a = open_in(path);
    f->b = open_in(path);
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

Suite *fence_suite(void)
{
    Suite *s = suite_create("fence");
    TCase *tc = ut_tcase("fence", 30);
    tcase_add_test(tc, meta_keys);
    suite_add_tcase(s, tc);
    return s;
}
