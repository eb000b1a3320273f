/* SPDX-License-Identifier: Apache-2.0 */
/* test_partition.c - rs_partition: limits, and boundaries that stay put. */
#include <stdio.h>
#include <string.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_partition.h"

#define N 20000

typedef struct listing_t {
    char *path[N + 64];
    apr_int64_t size[N + 64];
    int n;
} listing_t;

/* Sorted names f0000000, f0000002, ... (even numbers: room to insert). */
static listing_t *listing(void)
{
    listing_t *l = apr_pcalloc(ut_pool, sizeof(*l));
    int i;
    for (i = 0; i < N; i++) {
        l->path[i] = apr_psprintf(ut_pool, "d/f%07d", 2 * i);
        l->size[i] = 100 + (i * 7919) % 1000;
    }
    l->n = N;
    return l;
}

static void insert(listing_t *l, int at, const char *path, apr_int64_t size)
{
    memmove(l->path + at + 1, l->path + at, sizeof(char *) * (size_t)(l->n - at));
    memmove(l->size + at + 1, l->size + at, sizeof(apr_int64_t) * (size_t)(l->n - at));
    l->path[at] = apr_pstrdup(ut_pool, path);
    l->size[at] = size;
    l->n++;
}

/* Packages as strings "first..last:count" (one per package), NULL-ended. */
static char **packages(const listing_t *l, apr_int64_t max_entries, apr_int64_t max_bytes,
                       int *npkg)
{
    rs_partition_t pt;
    char **out = apr_pcalloc(ut_pool, sizeof(char *) * (size_t)(l->n + 1));
    int i, start = 0, k = 0;
    apr_int64_t bytes = 0;

    rs_partition_init(&pt, max_entries, max_bytes, 0);
    for (i = 0; i < l->n; i++) {
        unsigned cut = rs_partition_add(&pt, l->path[i], strlen(l->path[i]), l->size[i]);
        if (cut & RS_PARTITION_CUT_BEFORE) {
            ck_assert_int_gt(i, start);
            out[k++] =
                apr_psprintf(ut_pool, "%s..%s:%d", l->path[start], l->path[i - 1], i - start);
            start = i;
            bytes = 0;
        }
        bytes += l->size[i];
        /* Limits: entries, and bytes unless the package is one file. */
        ck_assert_int_le(i - start + 1, max_entries);
        ck_assert(bytes <= max_bytes || i == start);
        if (cut & RS_PARTITION_CUT_AFTER) {
            out[k++] =
                apr_psprintf(ut_pool, "%s..%s:%d", l->path[start], l->path[i], i - start + 1);
            start = i + 1;
            bytes = 0;
        }
    }
    if (start < l->n) {
        out[k++] =
            apr_psprintf(ut_pool, "%s..%s:%d", l->path[start], l->path[l->n - 1], l->n - start);
    }
    *npkg = k;
    return out;
}

/* Packages of a that are not in b. */
static int differing(char **a, int na, char **b, int nb)
{
    int i, j, d = 0;
    for (i = 0; i < na; i++) {
        for (j = 0; j < nb && strcmp(a[i], b[j]) != 0; j++) {
        }
        d += j == nb;
    }
    return d;
}

START_TEST(insert_changes_one_or_two_packages)
{
    listing_t *l = listing();
    int n0, n1, at;
    char **p0 = packages(l, 1000, 1 << 30, &n0), **p1;

    ck_assert_int_gt(n0, 20); /* interval 128 on 20,000 entries */
    for (at = 1; at < N; at += 1777) {
        char name[32];
        snprintf(name, sizeof(name), "d/f%07d", 2 * at - 1);
        insert(l, at, name, 500);
        p1 = packages(l, 1000, 1 << 30, &n1);
        ck_assert_int_ge(differing(p0, n0, p1, n1), 1);
        ck_assert_int_le(differing(p0, n0, p1, n1), 1);
        ck_assert_int_le(differing(p1, n1, p0, n0), 2);
        ck_assert_int_le(n1 - n0, 1);
        p0 = p1;
        n0 = n1;
    }
}
END_TEST

START_TEST(limits_and_large_files)
{
    listing_t *l = listing();
    int n;
    char **p;

    /* Tight limits: every package respects them (checked in packages()). */
    p = packages(l, 10, 4000, &n);
    ck_assert_int_ge(n, N / 10);
    /* A file over the size limit is alone, between cuts. */
    l->size[5000] = 5000;
    p = packages(l, 1000, 4000, &n);
    {
        int i, found = 0;
        const char *want = apr_psprintf(ut_pool, "%s..%s:1", l->path[5000], l->path[5000]);
        for (i = 0; i < n; i++) {
            found |= strcmp(p[i], want) == 0;
        }
        ck_assert(found);
    }
    ck_assert_uint_eq(rs_partition_interval(50000), 8192);
    ck_assert_uint_eq(rs_partition_interval(1), 1);
    ck_assert_uint_eq(rs_partition_interval(1000), 128);
    ck_assert_uint_eq(rs_partition_hash("", 0), APR_UINT64_C(0xcbf29ce484222325));
    ck_assert_uint_eq(rs_partition_hash("a", 1), APR_UINT64_C(0xaf63dc4c8601ec8c));
}
END_TEST

/* A bound of the manifest's bytes cuts too: before an entry that would
 * pass it, and around one over it by itself; no bound, no such cut. */
START_TEST(manifest_bytes_cut)
{
    static const apr_int64_t doc[] = { 30, 30, 30, 30, 150, 30 };
    static const unsigned want[] = {
        0, 0, 0, RS_PARTITION_CUT_BEFORE, RS_PARTITION_CUT_BEFORE | RS_PARTITION_CUT_AFTER, 0
    };
    rs_partition_t pt;
    int i;

    rs_partition_init(&pt, 1000, APR_INT64_MAX, (apr_uint64_t)1 << 62);
    for (i = 0; i < 6; i++) {
        ck_assert_uint_eq(rs_partition_add_doc(&pt, "p", 1, 1, doc[i]), 0);
    }
    rs_partition_init(&pt, 1000, APR_INT64_MAX, (apr_uint64_t)1 << 62);
    rs_partition_limit_doc(&pt, 100);
    for (i = 0; i < 6; i++) {
        ck_assert_msg(rs_partition_add_doc(&pt, "p", 1, 1, doc[i]) == want[i], "entry %d", i);
    }
}
END_TEST

Suite *partition_suite(void)
{
    Suite *s = suite_create("rs_partition");
    TCase *tc = ut_tcase("partition", 30);
    tcase_add_test(tc, insert_changes_one_or_two_packages);
    tcase_add_test(tc, limits_and_large_files);
    tcase_add_test(tc, manifest_bytes_cut);
    suite_add_tcase(s, tc);
    return s;
}
