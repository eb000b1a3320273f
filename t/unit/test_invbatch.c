/* SPDX-License-Identifier: Apache-2.0 */
/* test_invbatch.c - rs_invbatch: inventory rows several to a statement,
 * on each driver the suite runs on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_inventory.h"
#include "rs_invbatch.h"
#include "rs_schema.h"

static rs_db_t *open_store(ut_log_t *ul)
{
    rs_db_t *st = NULL;
    const char *db = ut_path(ut_tempdir("invbatch"), "state.db");
    ck_assert_int_eq(rs_schema_open(&st, ut_pool, ut_driver, ut_store(db), ut_log_init(ul)),
                     APR_SUCCESS);
    return st;
}

/* Row i of a test, every column set from i (NULL columns for some). */
static rs_item_t row(apr_pool_t *p, const char *dir, const char *name, int i)
{
    rs_item_t it;
    memset(&it, 0, sizeof(it));
    it.dir = dir;
    it.name = name;
    it.size = i;
    it.mtime_ns = 1700000000123456789LL + i;
    it.ctime_ns = 1700000001000000000LL + i;
    it.dev = 2049;
    it.ino = 5000 + i;
    it.type = i % 3 ? "text/plain" : NULL;
    it.encoding = i % 5 == 1 ? "gzip" : NULL;
    it.hash[0] = apr_psprintf(p, "%032x", i);
    it.hash[2] = i % 2 ? apr_psprintf(p, "%064x", i) : NULL;
    it.links = i % 7 == 2 ? apr_psprintf(p, "rel%d", i) : NULL;
    it.listed = i % 4 != 3;
    it.cfg = "fp";
    return it;
}

static int same_str(const char *a, const char *b)
{
    return a ? b && !strcmp(a, b) : !b;
}

/* Every column of a and b is the same. */
static int same_row(const rs_item_t *a, const rs_item_t *b)
{
    int i;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        if (!same_str(a->hash[i], b->hash[i])) {
            return 0;
        }
    }
    return !strcmp(a->dir, b->dir) && !strcmp(a->name, b->name) && a->size == b->size
           && a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns && a->dev == b->dev
           && a->ino == b->ino && same_str(a->type, b->type) && same_str(a->encoding, b->encoding)
           && same_str(a->links, b->links) && a->listed == b->listed && same_str(a->cfg, b->cfg);
}

/* The rows of a set, in listing order (copies in ut_pool). */
typedef struct {
    apr_array_header_t *rows;
} rows_t;

static int keep_row(void *baton, const rs_item_t *it)
{
    rows_t *r = baton;
    rs_inventory_item_copy(ut_pool, apr_array_push(r->rows), it);
    return 0;
}

static apr_array_header_t *all_rows(rs_db_t *st, const char *set)
{
    rows_t r = { apr_array_make(ut_pool, 64, sizeof(rs_item_t)) };
    ck_assert_int_eq(rs_inventory_each_all(st, set, keep_row, &r), APR_SUCCESS);
    return r.rows;
}

/* n rows through a batch, in a transaction flushed before its commit:
 * every row as written one by one, in as many statements as full
 * batches and the bits of the tail. */
static void boundary(int n)
{
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);
    rs_invbatch_t *b = rs_invbatch_create(ut_pool, st, "s");
    apr_array_header_t *got;
    rs_item_t *want = apr_pcalloc(ut_pool, sizeof(*want) * (n + 1));
    int i, tail = n % RS_INVBATCH_ROWS, expect = n / RS_INVBATCH_ROWS;

    ck_assert_int_eq(rs_db_begin(st), APR_SUCCESS);
    for (i = 0; i < n; i++) {
        want[i] = row(ut_pool, "d", apr_psprintf(ut_pool, "f%05d", i), i);
        ck_assert_int_eq(rs_invbatch_put(b, &want[i]), APR_SUCCESS);
    }
    ck_assert_int_eq(rs_invbatch_statements(b), expect); /* full batches only */
    ck_assert_int_eq(rs_invbatch_flush(b), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(st), APR_SUCCESS);
    for (; tail; tail &= tail - 1) {
        expect++;
    }
    ck_assert_int_eq(rs_invbatch_statements(b), expect);
    got = all_rows(st, "s");
    ck_assert_int_eq(got->nelts, n);
    for (i = 0; i < n; i++) {
        ck_assert_msg(same_row(&APR_ARRAY_IDX(got, i, rs_item_t), &want[i]), "row %d of %d", i, n);
    }
    /* A flush with nothing waiting writes nothing. */
    ck_assert_int_eq(rs_invbatch_flush(b), APR_SUCCESS);
    ck_assert_int_eq(rs_invbatch_statements(b), expect);
}

START_TEST(batch_boundaries)
{
    static const int sizes[] = { 0,
                                 1,
                                 RS_INVBATCH_ROWS - 1,
                                 RS_INVBATCH_ROWS,
                                 RS_INVBATCH_ROWS + 1,
                                 3 * RS_INVBATCH_ROWS + 37 };
    boundary(sizes[_i]);
}
END_TEST

/* One statement updates a stored row and inserts another; a key put
 * twice while it waits ends as its last put. */
START_TEST(update_and_insert)
{
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);
    rs_invbatch_t *b = rs_invbatch_create(ut_pool, st, "s");
    rs_item_t old = row(ut_pool, "", "a", 1), now = row(ut_pool, "", "a", 2);
    rs_item_t other = row(ut_pool, "", "b", 3), last = row(ut_pool, "", "b", 4);
    apr_array_header_t *got;

    ck_assert_int_eq(rs_inventory_put(st, "s", &old), APR_SUCCESS);
    ck_assert_int_eq(rs_invbatch_put(b, &now), APR_SUCCESS);
    ck_assert_int_eq(rs_invbatch_put(b, &other), APR_SUCCESS);
    ck_assert(rs_invbatch_holds(b, "", "b"));
    ck_assert(!rs_invbatch_holds(b, "", "c"));
    ck_assert_int_eq(rs_invbatch_flush(b), APR_SUCCESS);
    ck_assert_int_eq(rs_invbatch_statements(b), 1);
    got = all_rows(st, "s");
    ck_assert_int_eq(got->nelts, 2);
    ck_assert(same_row(&APR_ARRAY_IDX(got, 0, rs_item_t), &now));
    ck_assert(same_row(&APR_ARRAY_IDX(got, 1, rs_item_t), &other));

    ck_assert_int_eq(rs_invbatch_put(b, &other), APR_SUCCESS);
    ck_assert_int_eq(rs_invbatch_put(b, &last), APR_SUCCESS); /* writes the first */
    ck_assert_int_eq(rs_invbatch_statements(b), 2);
    ck_assert_int_eq(rs_invbatch_flush(b), APR_SUCCESS);
    got = all_rows(st, "s");
    ck_assert_int_eq(got->nelts, 2);
    ck_assert(same_row(&APR_ARRAY_IDX(got, 1, rs_item_t), &last));

    /* Rows discarded are never written. */
    ck_assert_int_eq(rs_invbatch_put(b, &old), APR_SUCCESS);
    rs_invbatch_discard(b);
    ck_assert(!rs_invbatch_holds(b, "", "a"));
    ck_assert_int_eq(rs_invbatch_flush(b), APR_SUCCESS);
    got = all_rows(st, "s");
    ck_assert(same_row(&APR_ARRAY_IDX(got, 0, rs_item_t), &now));
}
END_TEST

/* Directories and names with every byte value but NUL, several batches
 * of them: each comes back as it went in. */
START_TEST(every_byte)
{
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);
    rs_invbatch_t *b = rs_invbatch_create(ut_pool, st, "s");
    apr_array_header_t *got;
    rs_item_t want[255];
    int i, k;

    ck_assert_int_eq(rs_db_begin(st), APR_SUCCESS);
    for (i = 0; i < 255; i++) {
        char *name = apr_psprintf(ut_pool, "n%cx", i + 1);
        char *dir = apr_psprintf(ut_pool, "d%c", 255 - i);
        want[i] = row(ut_pool, dir, name, i);
        ck_assert_int_eq(rs_invbatch_put(b, &want[i]), APR_SUCCESS);
    }
    ck_assert_int_eq(rs_invbatch_flush(b), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(st), APR_SUCCESS);
    got = all_rows(st, "s");
    ck_assert_int_eq(got->nelts, 255);
    /* Listing order is byte order of (dir, name): dirs run backwards. */
    for (i = 0; i < 255; i++) {
        k = 254 - i;
        ck_assert_msg(same_row(&APR_ARRAY_IDX(got, i, rs_item_t), &want[k]), "byte %d", k + 1);
    }
}
END_TEST

/* A statement that fails in the middle of the rows (a unique index the
 * test adds refuses the 70th row's inode) fails the transaction: none of
 * its rows stay, not even those of the full batch written before. */
START_TEST(failure_fails_transaction)
{
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);
    rs_invbatch_t *b = rs_invbatch_create(ut_pool, st, "s");
    rs_item_t keep = row(ut_pool, "", "kept", 1000);
    int i, failed = 0;

    ck_assert_int_eq(rs_db_run(st, "CREATE UNIQUE INDEX test_ino ON inventory (setname, ino)"),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_put(st, "s", &keep), APR_SUCCESS);
    ck_assert_int_eq(rs_db_begin(st), APR_SUCCESS);
    for (i = 0; i < 100; i++) {
        rs_item_t it = row(ut_pool, "d", apr_psprintf(ut_pool, "f%03d", i), i);
        if (i == 70) {
            it.ino = 5000 + 69; /* row 69's */
        }
        ck_assert_int_eq(rs_invbatch_put(b, &it), APR_SUCCESS);
    }
    ck_assert_int_eq(rs_invbatch_statements(b), 1);
    failed = rs_invbatch_flush(b) != APR_SUCCESS;
    ck_assert(failed);
    ck_assert_int_ne(rs_db_commit(st), APR_SUCCESS);
    ck_assert_int_eq(all_rows(st, "s")->nelts, 1);
    ck_assert_int_eq(ut_log_count(&ul, "failed"), 1);
    /* The batch is empty and usable again. */
    ck_assert(!rs_invbatch_holds(b, "d", "f000"));
    ck_assert_int_eq(rs_db_begin(st), APR_SUCCESS);
    for (i = 0; i < 3; i++) {
        rs_item_t it = row(ut_pool, "d", apr_psprintf(ut_pool, "g%03d", i), i);
        ck_assert_int_eq(rs_invbatch_put(b, &it), APR_SUCCESS);
    }
    ck_assert_int_eq(rs_invbatch_flush(b), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(st), APR_SUCCESS);
    ck_assert_int_eq(all_rows(st, "s")->nelts, 4);
}
END_TEST

Suite *invbatch_suite(void)
{
    Suite *s = suite_create("rs_invbatch");
    TCase *tc = ut_tcase("invbatch", 60);
    tcase_add_loop_test(tc, batch_boundaries, 0, 6);
    tcase_add_test(tc, update_and_insert);
    tcase_add_test(tc, every_byte);
    tcase_add_test(tc, failure_fails_transaction);
    suite_add_tcase(s, tc);
    return s;
}
