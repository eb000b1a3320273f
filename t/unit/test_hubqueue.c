/* SPDX-License-Identifier: Apache-2.0 */
/* test_hubqueue.c - rs_hubqueue: the built-in hub's queue in the store,
 * on both drivers: rows put by any node, listed in order, deleted under
 * the set's fence (refused, nothing deleted, once another node took the
 * set), in the outcome's transaction, and forgotten after a bound. */
#include <string.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_hubqueue.h"
#include "rs_lease.h"

static rs_db_t *a, *b;    /* two nodes' connections to one store */
static rs_lease_t la, lb; /* their leases of set "s" */

/* The process's fence, as the watcher installs it: the lease of the node
 * whose connection runs the transaction. */
static apr_status_t fence_fn(void *baton, rs_db_t *db, const char *set)
{
    (void)baton;
    ck_assert_str_eq(set, "s");
    return rs_lease_fence(db, db == a ? &la : &lb);
}

static void setup(void)
{
    const char *path;
    int held = 0;

    path = ut_path(ut_tempdir("hubqueue"), "state.db");
    a = ut_store_open(path);
    b = ut_store_open(path);
    la = (rs_lease_t){ "s", "node-a", rs_lease_token(ut_pool), apr_time_from_sec(3600), 0 };
    lb = (rs_lease_t){ "s", "node-b", rs_lease_token(ut_pool), apr_time_from_sec(3600), 0 };
    ck_assert_int_eq(rs_lease_take(a, &la, &held), APR_SUCCESS);
    ck_assert_int_eq(held, 1);
    rs_db_fence_install(fence_fn, NULL);
}

static void teardown(void)
{
    rs_db_fence_install(NULL, NULL);
}

#define ROW(arr, i) APR_ARRAY_IDX(arr, i, rs_hubqueue_row_t)

/* Any node puts (no lease needed: b holds none); rows come back in the
 * order they were put, a set's alone or all; counts per set. */
START_TEST(put_list_in_order)
{
    apr_array_header_t *rows, *sets, *counts;
    rs_hubqueue_row_t r;

    ck_assert_int_eq(rs_hubqueue_put(b, "s", "rs-hubreq 2\nfirst\n", "node-b", 10), APR_SUCCESS);
    ck_assert_int_eq(rs_hubqueue_put(b, "t", "other set", "node-b", 11), APR_SUCCESS);
    ck_assert_int_eq(rs_hubqueue_put(a, "s", "second", "node-a", 12), APR_SUCCESS);
    ck_assert_int_eq(rs_hubqueue_put(b, "s", "third", "node-b", 13), APR_SUCCESS);
    ck_assert_int_eq(rs_hubqueue_list(a, ut_pool, "s", 10, &rows), APR_SUCCESS);
    ck_assert_int_eq(rows->nelts, 3);
    ck_assert_str_eq(ROW(rows, 0).record, "rs-hubreq 2\nfirst\n");
    ck_assert_str_eq(ROW(rows, 0).node, "node-b");
    ck_assert_str_eq(ROW(rows, 0).set, "s");
    ck_assert_int_eq(ROW(rows, 0).queued, 10);
    ck_assert_str_eq(ROW(rows, 1).record, "second");
    ck_assert_str_eq(ROW(rows, 2).record, "third");
    ck_assert_int_lt(ROW(rows, 0).id, ROW(rows, 1).id);
    ck_assert_int_lt(ROW(rows, 1).id, ROW(rows, 2).id);
    ck_assert_int_eq(rs_hubqueue_list(a, ut_pool, "s", 2, &rows), APR_SUCCESS);
    ck_assert_int_eq(rows->nelts, 2); /* the limit: the first ones */
    ck_assert_str_eq(ROW(rows, 1).record, "second");
    ck_assert_int_eq(rs_hubqueue_list(a, ut_pool, NULL, 10, &rows), APR_SUCCESS);
    ck_assert_int_eq(rows->nelts, 4);
    ck_assert_str_eq(ROW(rows, 1).record, "other set");
    ck_assert_int_eq(rs_hubqueue_get(a, ut_pool, ROW(rows, 3).id, &r), APR_SUCCESS);
    ck_assert_str_eq(r.record, "third");
    ck_assert_int_eq(rs_hubqueue_get(a, ut_pool, ROW(rows, 3).id + 100, &r), APR_ENOENT);
    ck_assert_int_eq(rs_hubqueue_counts(b, ut_pool, &sets, &counts), APR_SUCCESS);
    ck_assert_int_eq(sets->nelts, 2);
    ck_assert_str_eq(APR_ARRAY_IDX(sets, 0, const char *), "s");
    ck_assert_int_eq(APR_ARRAY_IDX(counts, 0, apr_int64_t), 3);
    ck_assert_str_eq(APR_ARRAY_IDX(sets, 1, const char *), "t");
    ck_assert_int_eq(APR_ARRAY_IDX(counts, 1, apr_int64_t), 1);
}
END_TEST

static int count(rs_db_t *db)
{
    apr_array_header_t *rows;
    ck_assert_int_eq(rs_hubqueue_list(db, ut_pool, "s", 100, &rows), APR_SUCCESS);
    return rows->nelts;
}

/* A delete is the set's writer's: b, which does not hold the set, is
 * refused; a deletes; after b took the set over, a is refused and
 * nothing is deleted, and b deletes. */
START_TEST(delete_fenced)
{
    apr_array_header_t *rows;
    apr_int64_t x, y;
    int deleted = -1, held = 0;

    ck_assert_int_eq(rs_hubqueue_put(b, "s", "x", "node-b", 1), APR_SUCCESS);
    ck_assert_int_eq(rs_hubqueue_put(b, "s", "y", "node-b", 2), APR_SUCCESS);
    ck_assert_int_eq(rs_hubqueue_list(a, ut_pool, "s", 10, &rows), APR_SUCCESS);
    x = ROW(rows, 0).id;
    y = ROW(rows, 1).id;
    ck_assert_int_eq(rs_hubqueue_delete(b, "s", x, &deleted), RS_LEASE_LOST);
    ck_assert_int_eq(deleted, 0);
    ck_assert_int_eq(count(a), 2);
    ck_assert_int_eq(rs_hubqueue_delete(a, "s", x, &deleted), APR_SUCCESS);
    ck_assert_int_eq(deleted, 1);
    ck_assert_int_eq(count(b), 1);
    ck_assert_int_eq(rs_hubqueue_delete(a, "s", x, &deleted), APR_SUCCESS);
    ck_assert_int_eq(deleted, 0); /* gone already */
    /* b takes the set over (a released it, as at a stop). */
    ck_assert_int_eq(rs_lease_release(a, &la), APR_SUCCESS);
    la.epoch = 1; /* a still believes it holds epoch 1 */
    ck_assert_int_eq(rs_lease_take(b, &lb, &held), APR_SUCCESS);
    ck_assert_int_eq(held, 1);
    ck_assert_int_eq(rs_hubqueue_delete(a, "s", y, &deleted), RS_LEASE_LOST);
    ck_assert_int_eq(deleted, 0);
    ck_assert_int_eq(count(b), 1);
    ck_assert_int_eq(rs_hubqueue_delete(b, "s", y, &deleted), APR_SUCCESS);
    ck_assert_int_eq(deleted, 1);
    ck_assert_int_eq(count(a), 0);
}
END_TEST

/* In the outcome's transaction: deleted with it, or rolled back with it;
 * a second delete of the row finds nothing (an earlier tenure applied
 * it). */
START_TEST(delete_in_transaction)
{
    apr_array_header_t *rows;
    apr_int64_t x;
    int n = -1;

    ck_assert_int_eq(rs_hubqueue_put(b, "s", "x", "node-b", 1), APR_SUCCESS);
    ck_assert_int_eq(rs_hubqueue_list(a, ut_pool, "s", 10, &rows), APR_SUCCESS);
    x = ROW(rows, 0).id;
    ck_assert_int_eq(rs_db_begin_set(a, "s"), APR_SUCCESS);
    ck_assert_int_eq(rs_hubqueue_delete_in(a, x, &n), APR_SUCCESS);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(rs_db_rollback(a), APR_SUCCESS);
    ck_assert_int_eq(count(b), 1);
    ck_assert_int_eq(rs_db_begin_set(a, "s"), APR_SUCCESS);
    ck_assert_int_eq(rs_hubqueue_delete_in(a, x, &n), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(a), APR_SUCCESS);
    ck_assert_int_eq(count(b), 0);
    ck_assert_int_eq(rs_db_begin_set(a, "s"), APR_SUCCESS);
    ck_assert_int_eq(rs_hubqueue_delete_in(a, x, &n), APR_SUCCESS);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(rs_db_commit(a), APR_SUCCESS);
}
END_TEST

/* Rows of a set forgotten when older than the bound, unfenced; other
 * sets' and younger rows stay. */
START_TEST(forget_old)
{
    apr_array_header_t *rows;
    int n = -1;

    ck_assert_int_eq(rs_hubqueue_put(b, "gone", "old", "node-b", 100), APR_SUCCESS);
    ck_assert_int_eq(rs_hubqueue_put(b, "gone", "young", "node-b", 300), APR_SUCCESS);
    ck_assert_int_eq(rs_hubqueue_put(b, "s", "other", "node-b", 100), APR_SUCCESS);
    ck_assert_int_eq(rs_hubqueue_forget(b, "gone", 200, &n), APR_SUCCESS);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(rs_hubqueue_list(a, ut_pool, NULL, 10, &rows), APR_SUCCESS);
    ck_assert_int_eq(rows->nelts, 2);
    ck_assert_str_eq(ROW(rows, 0).record, "young");
    ck_assert_str_eq(ROW(rows, 1).record, "other");
}
END_TEST

Suite *hubqueue_suite(void)
{
    Suite *s = suite_create("hubqueue");
    TCase *tc = ut_tcase("hubqueue", 30);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, put_list_in_order);
    tcase_add_test(tc, delete_fenced);
    tcase_add_test(tc, delete_in_transaction);
    tcase_add_test(tc, forget_old);
    suite_add_tcase(s, tc);
    return s;
}
