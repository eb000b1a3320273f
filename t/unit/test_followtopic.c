/* SPDX-License-Identifier: Apache-2.0 */
/* test_followtopic.c - rs_followtopic: a topic's versions stored by the
 * writer, one per (set, topic), and copied out by a follower byte for
 * byte with the writer's mtime; nothing (no file) for a topic never
 * written; a refused fence stores nothing; a node taking the set over
 * serves what the store holds. */
#include <string.h>
#include <apr_strings.h>
#include <apr_file_info.h>
#include "unit.h"
#include "rs_blob.h"
#include "rs_followtopic.h"
#include "rs_lease.h"

/* The writer's topic file: s, with mtime mt (µs); a copy holds s with mtime mt. */
#define write_topic ut_write_at
#define holds       ut_holds_at
#define counts      ut_blob_counts

/* A version stored is copied with its bytes and mtime, once; a newer one
 * replaces the older in the store and on the follower's disk; the other
 * topic stays apart. */
START_TEST(store_copy_replace)
{
    const char *w = ut_tempdir("ftopic-w"), *f = ut_tempdir("ftopic-f");
    const char *wc = ut_path(w, "change.xml"), *fc = ut_path(f, "change.xml");
    const char *ff = ut_path(f, "framework.xml");
    apr_time_t mt = apr_time_from_sec(1700000000) + 654321;
    rs_db_t *db = ut_store_new("ftopic");
    int changed = -1;

    write_topic(wc, "<urlset>one</urlset>", mt);
    ck_assert_int_eq(rs_followtopic_store(db, ut_pool, "s", "change", 5, wc), APR_SUCCESS);
    counts(db, "s", 1, 1);
    ck_assert_int_eq(rs_followtopic_copy(db, ut_pool, "s", "change", fc, &changed), APR_SUCCESS);
    ck_assert_int_eq(changed, 1);
    holds(fc, "<urlset>one</urlset>", mt);
    ck_assert_int_eq(rs_followtopic_copy(db, ut_pool, "s", "change", fc, &changed), APR_SUCCESS);
    ck_assert_int_eq(changed, 0);
    /* The next version: the store holds it alone. */
    write_topic(wc, "<urlset>two, longer</urlset>", mt + 1);
    ck_assert_int_eq(rs_followtopic_store(db, ut_pool, "s", "change", 9, wc), APR_SUCCESS);
    counts(db, "s", 1, 1);
    ck_assert_int_eq(rs_followtopic_copy(db, ut_pool, "s", "change", fc, &changed), APR_SUCCESS);
    ck_assert_int_eq(changed, 1);
    holds(fc, "<urlset>two, longer</urlset>", mt + 1);
    /* The same id written again (a new writer's first version): one
     * version still, the newest file's. */
    write_topic(wc, "<urlset>two, longer</urlset>", mt + 2);
    ck_assert_int_eq(rs_followtopic_store(db, ut_pool, "s", "change", 9, wc), APR_SUCCESS);
    counts(db, "s", 1, 1);
    ck_assert_int_eq(rs_followtopic_copy(db, ut_pool, "s", "change", fc, &changed), APR_SUCCESS);
    holds(fc, "<urlset>two, longer</urlset>", mt + 2);
    /* The framework topic has none; another set neither. */
    ck_assert_int_eq(rs_followtopic_copy(db, ut_pool, "s", "framework", ff, NULL), APR_ENOENT);
    ck_assert(!ut_exists(ff));
    ck_assert_int_eq(rs_followtopic_copy(db, ut_pool, "t", "change", ut_path(f, "t.xml"), &changed),
                     APR_ENOENT);
    ck_assert_int_eq(changed, 0);
    /* An empty version is a version. */
    write_topic(ut_path(w, "framework.xml"), "", mt + 3);
    ck_assert_int_eq(
        rs_followtopic_store(db, ut_pool, "s", "framework", 1, ut_path(w, "framework.xml")),
        APR_SUCCESS);
    ck_assert_int_eq(rs_followtopic_copy(db, ut_pool, "s", "framework", ff, &changed), APR_SUCCESS);
    holds(ff, "", mt + 3);
    holds(fc, "<urlset>two, longer</urlset>", mt + 2);
}
END_TEST

/* A topic the store holds no version of: a file of the follower's own
 * earlier writing is removed (an empty body is served, as the writer's). */
START_TEST(never_written)
{
    const char *f = ut_tempdir("ftopic-own"), *fc = ut_path(f, "change.xml");
    rs_db_t *db = ut_store_new("ftopic");
    int changed = -1;

    write_topic(fc, "<urlset>mine</urlset>", apr_time_from_sec(1600000000));
    ck_assert_int_eq(rs_followtopic_copy(db, ut_pool, "s", "change", fc, &changed), APR_ENOENT);
    ck_assert_int_eq(changed, 1);
    ck_assert(!ut_exists(fc));
    ck_assert_int_eq(rs_followtopic_copy(db, ut_pool, "s", "change", fc, &changed), APR_ENOENT);
    ck_assert_int_eq(changed, 0);
}
END_TEST

/* Another node writes set "gone": the store refuses its topic there. */
START_TEST(fenced)
{
    const char *w = ut_tempdir("ftopic-fence"), *wc = ut_path(w, "change.xml");
    const char *fc = ut_path(w, "copy.xml");
    apr_time_t mt = apr_time_from_sec(1700000000);
    rs_db_t *db = ut_store_new("ftopic");

    write_topic(wc, "<urlset>old</urlset>", mt);
    ck_assert_int_eq(rs_followtopic_store(db, ut_pool, "gone", "change", 1, wc), APR_SUCCESS);
    rs_db_fence_install(ut_fence_gone, NULL);
    write_topic(wc, "<urlset>new</urlset>", mt + 1);
    ck_assert_int_eq(rs_followtopic_store(db, ut_pool, "gone", "change", 2, wc), RS_LEASE_LOST);
    ck_assert_int_eq(rs_followtopic_store(db, ut_pool, "kept", "change", 2, wc), APR_SUCCESS);
    rs_db_fence_install(NULL, NULL);
    counts(db, "gone", 1, 1);
    ck_assert_int_eq(rs_followtopic_copy(db, ut_pool, "gone", "change", fc, NULL), APR_SUCCESS);
    holds(fc, "<urlset>old</urlset>", mt);
    ck_assert_int_eq(rs_followtopic_copy(db, ut_pool, "kept", "change", fc, NULL), APR_SUCCESS);
    holds(fc, "<urlset>new</urlset>", mt + 1);
}
END_TEST

/* A node taking the set over: a store without a version gets the node's
 * own file (the other nodes then serve it); one with a version has it
 * copied over the node's file. */
START_TEST(take_over)
{
    const char *d = ut_tempdir("ftopic-take"), *own = ut_path(d, "change.xml");
    const char *other = ut_path(d, "other.xml");
    apr_time_t mt = apr_time_from_sec(1700000000) + 42;
    rs_db_t *db = ut_store_new("ftopic");

    ck_assert_int_eq(rs_followtopic_take(db, ut_pool, "s", "change", own), APR_SUCCESS);
    counts(db, "s", 0, 0);
    write_topic(own, "<urlset>own</urlset>", mt);
    ck_assert_int_eq(rs_followtopic_take(db, ut_pool, "s", "change", own), APR_SUCCESS);
    holds(own, "<urlset>own</urlset>", mt);
    ck_assert_int_eq(rs_followtopic_copy(db, ut_pool, "s", "change", other, NULL), APR_SUCCESS);
    holds(other, "<urlset>own</urlset>", mt);
    /* The previous writer's newer version: copied over the node's file. */
    write_topic(other, "<urlset>newer</urlset>", mt + 5);
    ck_assert_int_eq(rs_followtopic_store(db, ut_pool, "s", "change", 7, other), APR_SUCCESS);
    ck_assert_int_eq(rs_followtopic_take(db, ut_pool, "s", "change", own), APR_SUCCESS);
    holds(own, "<urlset>newer</urlset>", mt + 5);
    counts(db, "s", 1, 1);
}
END_TEST

Suite *followtopic_suite(void)
{
    Suite *s = suite_create("followtopic");
    TCase *tc = ut_tcase("followtopic", 30);
    tcase_add_test(tc, store_copy_replace);
    tcase_add_test(tc, never_written);
    tcase_add_test(tc, fenced);
    tcase_add_test(tc, take_over);
    suite_add_tcase(s, tc);
    return s;
}
