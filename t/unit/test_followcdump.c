/* SPDX-License-Identifier: Apache-2.0 */
/* test_followcdump.c - rs_followcdump: a writer's Change Dump directory
 * stored generation after generation, only its new files costing bytes;
 * replayed into a follower's directory byte for byte with the writer's
 * mtimes, new files first, the listing documents last, files that left
 * removed, unchanged files untouched; a refused fence stores nothing. */
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <apr_strings.h>
#include <apr_file_info.h>
#include "unit.h"
#include "rs_blob.h"
#include "rs_followcdump.h"
#include "rs_lease.h"

static const apr_time_t T0 = APR_INT64_C(1700000000000000) + 123457;

/* The writer's file dir/name: s, with mtime mt (µs). */
static void put(const char *dir, const char *name, const char *s, apr_time_t mt)
{
    ut_write_at(ut_path(dir, name), s, mt);
}

/* dir/name holds s and has mtime mt. */
static void holds(const char *dir, const char *name, const char *s, apr_time_t mt)
{
    ut_holds_at(ut_path(dir, name), s, mt);
}

/* Files name, content, ... (NULL-terminated) written into dir, the k-th
 * with mtime t + k. */
static void put_all(const char *dir, const char *const *files, apr_time_t t)
{
    int k;
    for (k = 0; files[2 * k]; k++) {
        put(dir, files[2 * k], files[2 * k + 1], t + k);
    }
}

/* The first job's directory (and a temporary file of a job under way),
 * then what the next job adds or rewrites. */
static const char *const first[] = { "h-1.zip",
                                     "PK one",
                                     "h-1.xml",
                                     "<urlset>1</urlset>",
                                     "h-1.sum",
                                     "6 md5:x",
                                     "h-2.zip",
                                     "PK two, longer",
                                     "h-2.xml",
                                     "<urlset>2</urlset>",
                                     "h-2.sum",
                                     "14 md5:y",
                                     "h-part-1.xml",
                                     "<sitemapindex>part 1</sitemapindex>",
                                     "changedump.xml",
                                     "<sitemapindex>one</sitemapindex>",
                                     ".tmp-h-3.zip",
                                     "half",
                                     NULL };
static const char *const next[] = { "h-3.zip",
                                    "PK three",
                                    "h-3.xml",
                                    "<urlset>3</urlset>",
                                    "h-3.sum",
                                    "8 md5:z",
                                    "h-part-1.xml",
                                    "<sitemapindex>part 1 again</sitemapindex>",
                                    "changedump.xml",
                                    "<sitemapindex>two</sitemapindex>",
                                    NULL };

static ino_t inode(const char *dir, const char *name)
{
    struct stat sb;
    ck_assert_int_eq(stat(ut_path(dir, name), &sb), 0);
    return sb.st_ino;
}

#define counts ut_blob_counts

/* A directory state, the next with one new package and a list gone: the
 * store keeps one generation whose new files alone cost bytes; the
 * follower gets each state exactly, leaving what did not change. */
START_TEST(store_and_replay)
{
    const char *w = ut_tempdir("fcdump-w"), *f = ut_path(ut_tempdir("fcdump-f"), "cd");
    rs_db_t *db = ut_store_new("fcdump");
    rs_blob_stats_t st;
    apr_uint64_t gen = 99;
    ino_t pkg2;
    int removed = -1;

    ck_assert_int_eq(rs_followcdump_gen(db, ut_pool, "s", &gen), APR_SUCCESS);
    ck_assert_int_eq(gen, 0);
    put_all(w, first, T0);
    ck_assert_int_eq(rs_followcdump_store(db, ut_pool, "s", w, &gen, &st), APR_SUCCESS);
    ck_assert_int_eq(gen, 1);
    ck_assert_int_eq(st.files, 8);
    ck_assert_int_eq(st.refs, 0);
    counts(db, "s", 8, 8);

    /* The follower's own earlier writing: a package of a list gone, a
     * changedump.xml of its own; a temporary file is not its to touch. */
    ut_mkdir(f);
    put(f, "h-0.zip", "PK zero", T0 - 5);
    put(f, "changedump.xml", "<sitemapindex>mine</sitemapindex>", T0 - 4);
    put(f, ".tmp-x", "tmp", T0 - 3);
    ck_assert_int_eq(rs_followcdump_copy(db, ut_pool, "s", f, 1, &st, &removed), APR_SUCCESS);
    ck_assert_int_eq(st.files, 8);
    ck_assert_int_eq(st.refs, 0);
    ck_assert_int_eq(removed, 1);
    ck_assert(!ut_exists(ut_path(f, "h-0.zip")));
    ck_assert(ut_exists(ut_path(f, ".tmp-x")));
    holds(f, "h-1.zip", "PK one", T0);
    holds(f, "h-2.sum", "14 md5:y", T0 + 5);
    holds(f, "h-part-1.xml", "<sitemapindex>part 1</sitemapindex>", T0 + 6);
    holds(f, "changedump.xml", "<sitemapindex>one</sitemapindex>", T0 + 7);
    ck_assert(!ut_exists(ut_path(f, ".tmp-h-3.zip")));
    pkg2 = inode(f, "h-2.zip");

    /* The next job: list 1 left, list 3 has a package, the listing
     * documents rewritten.  Only the new files cost bytes. */
    unlink(ut_path(w, "h-1.zip"));
    unlink(ut_path(w, "h-1.xml"));
    unlink(ut_path(w, "h-1.sum"));
    put_all(w, next, T0 + 10);
    ck_assert_int_eq(rs_followcdump_store(db, ut_pool, "s", w, &gen, &st), APR_SUCCESS);
    ck_assert_int_eq(gen, 2);
    ck_assert_int_eq(st.files, 8);
    ck_assert_int_eq(st.refs, 3); /* h-2.* */
    ck_assert_int_eq(st.bytes, (apr_off_t)(strlen("PK three") + strlen("<urlset>3</urlset>")
                                           + strlen("8 md5:z")
                                           + strlen("<sitemapindex>part 1 again</sitemapindex>")
                                           + strlen("<sitemapindex>two</sitemapindex>")));
    /* One generation's rows; the chunks of the files of both that it
     * names (h-1.* went). */
    counts(db, "s", 8, 8);
    ck_assert_int_eq(rs_followcdump_gen(db, ut_pool, "s", &gen), APR_SUCCESS);
    ck_assert_int_eq(gen, 2);
    /* Generation 1 is gone: a follower that asks for it finds nothing. */
    ck_assert_int_eq(rs_followcdump_copy(db, ut_pool, "s", f, 1, NULL, NULL), APR_ENOENT);

    ck_assert_int_eq(rs_followcdump_copy(db, ut_pool, "s", f, 2, &st, &removed), APR_SUCCESS);
    ck_assert_int_eq(st.files, 8);
    ck_assert_int_eq(st.refs, 3);
    ck_assert_int_eq(removed, 3);
    ck_assert(!ut_exists(ut_path(f, "h-1.zip")));
    ck_assert(!ut_exists(ut_path(f, "h-1.sum")));
    holds(f, "h-2.zip", "PK two, longer", T0 + 3);
    holds(f, "h-3.zip", "PK three", T0 + 10);
    holds(f, "h-3.sum", "8 md5:z", T0 + 12);
    holds(f, "h-part-1.xml", "<sitemapindex>part 1 again</sitemapindex>", T0 + 13);
    holds(f, "changedump.xml", "<sitemapindex>two</sitemapindex>", T0 + 14);
    ck_assert_int_eq(inode(f, "h-2.zip"), pkg2); /* untouched */

    /* Again: nothing to do. */
    ck_assert_int_eq(rs_followcdump_copy(db, ut_pool, "s", f, 2, &st, &removed), APR_SUCCESS);
    ck_assert_int_eq(st.refs, 8);
    ck_assert_int_eq(st.bytes, 0);
    ck_assert_int_eq(removed, 0);
}
END_TEST

/* A file already in place with the row's size and mtime is left as it
 * is (the same inode); one with another mtime is replaced. */
START_TEST(unchanged_untouched)
{
    const char *w = ut_tempdir("fcdump-uw"), *f = ut_tempdir("fcdump-uf");
    rs_db_t *db = ut_store_new("fcdump");
    rs_blob_stats_t st;
    ino_t same, other;

    put(w, "h-1.zip", "PK one", T0);
    put(w, "changedump.xml", "<sitemapindex/>", T0 + 1);
    ck_assert_int_eq(rs_followcdump_store(db, ut_pool, "s", w, NULL, NULL), APR_SUCCESS);
    put(f, "h-1.zip", "PK one", T0);
    put(f, "changedump.xml", "<sitemapindex/>", T0 + 2);
    same = inode(f, "h-1.zip");
    other = inode(f, "changedump.xml");
    ck_assert_int_eq(rs_followcdump_copy(db, ut_pool, "s", f, 1, &st, NULL), APR_SUCCESS);
    ck_assert_int_eq(st.refs, 1);
    ck_assert_int_eq(inode(f, "h-1.zip"), same);
    ck_assert_int_ne(inode(f, "changedump.xml"), other);
    holds(f, "changedump.xml", "<sitemapindex/>", T0 + 1);
}
END_TEST

/* A name in the store that is not a plain file name (a path outside the
 * directory, a dotfile) is refused: the store is shared by every node,
 * nothing it says is written outside the follower's directory. */
START_TEST(names_refused)
{
    const char *w = ut_tempdir("fcdump-nw"), *top = ut_tempdir("fcdump-nf");
    const char *f = ut_path(top, "dir");
    static const char *const bad[] = { "../evil.zip", ".hidden.zip", "a/b.zip" };
    rs_db_t *db = ut_store_new("fcdump");
    rs_db_stmt_t *st;
    int i;

    ut_mkdir(f);
    for (i = 0; i < 3; i++) {
        put(w, "h-1.zip", "PK one", T0);
        ck_assert_int_eq(rs_followcdump_store(db, ut_pool, "s", w, NULL, NULL), APR_SUCCESS);
        ck_assert_int_eq(rs_db_prepare(db,
                                       apr_psprintf(ut_pool,
                                                    "UPDATE blobfiles SET name = '%s', src_name = "
                                                    "'%s' WHERE setname = 's' AND kind = 'cdump'",
                                                    bad[i], bad[i]),
                                       &st),
                         APR_SUCCESS);
        ck_assert_int_eq(rs_db_exec(db, st, NULL, NULL), APR_SUCCESS);
        ck_assert_int_eq(rs_db_prepare(db,
                                       apr_psprintf(ut_pool,
                                                    "UPDATE blobchunks SET name = '%s' WHERE "
                                                    "setname = 's' AND kind = 'cdump'",
                                                    bad[i]),
                                       &st),
                         APR_SUCCESS);
        ck_assert_int_eq(rs_db_exec(db, st, NULL, NULL), APR_SUCCESS);
        ck_assert_int_eq(rs_followcdump_copy(db, ut_pool, "s", f, i + 1, NULL, NULL), APR_EINVAL);
        ck_assert(!ut_exists(ut_path(top, "evil.zip")));
        ck_assert(!ut_exists(ut_path(f, ".hidden.zip")));
        ck_assert(!ut_exists(ut_path(f, "a")));
    }
}
END_TEST

/* The listing documents come last: a follower whose copy of a new
 * package fails (its chunks gone) keeps the changedump.xml it had, and
 * the files that left stay until a replay completes. */
START_TEST(listing_last)
{
    const char *w = ut_tempdir("fcdump-lw"), *f = ut_tempdir("fcdump-lf");
    rs_db_t *db = ut_store_new("fcdump");

    put(w, "h-1.zip", "PK one", T0);
    put(w, "changedump.xml", "<sitemapindex>one</sitemapindex>", T0 + 1);
    ck_assert_int_eq(rs_followcdump_store(db, ut_pool, "s", w, NULL, NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_followcdump_copy(db, ut_pool, "s", f, 1, NULL, NULL), APR_SUCCESS);
    unlink(ut_path(w, "h-1.zip"));
    put(w, "h-2.zip", "PK two", T0 + 2);
    put(w, "changedump.xml", "<sitemapindex>two</sitemapindex>", T0 + 3);
    ck_assert_int_eq(rs_followcdump_store(db, ut_pool, "s", w, NULL, NULL), APR_SUCCESS);
    /* The new package's bytes lost (a newer generation dropped them
     * while this follower read). */
    ck_assert_int_eq(rs_db_run(db, "DELETE FROM blobchunks WHERE name = 'h-2.zip'"), APR_SUCCESS);
    ck_assert_int_eq(rs_followcdump_copy(db, ut_pool, "s", f, 2, NULL, NULL), APR_EINCOMPLETE);
    holds(f, "changedump.xml", "<sitemapindex>one</sitemapindex>", T0 + 1);
    holds(f, "h-1.zip", "PK one", T0);
    ck_assert(!ut_exists(ut_path(f, "h-2.zip")));
}
END_TEST

/* Another node writes set "gone": nothing is stored there. */
START_TEST(fenced)
{
    const char *w = ut_tempdir("fcdump-fw");
    rs_db_t *db = ut_store_new("fcdump");
    apr_uint64_t gen = 0;

    put(w, "changedump.xml", "<sitemapindex/>", T0);
    ck_assert_int_eq(rs_followcdump_store(db, ut_pool, "gone", w, &gen, NULL), APR_SUCCESS);
    rs_db_fence_install(ut_fence_gone, NULL);
    put(w, "h-1.zip", "PK", T0 + 1);
    ck_assert_int_eq(rs_followcdump_store(db, ut_pool, "gone", w, NULL, NULL), RS_LEASE_LOST);
    rs_db_fence_install(NULL, NULL);
    ck_assert_int_eq(rs_followcdump_gen(db, ut_pool, "gone", &gen), APR_SUCCESS);
    ck_assert_int_eq(gen, 1);
    counts(db, "gone", 1, 1);
}
END_TEST

Suite *followcdump_suite(void)
{
    Suite *s = suite_create("followcdump");
    TCase *tc = ut_tcase("followcdump", 30);
    tcase_add_test(tc, store_and_replay);
    tcase_add_test(tc, unchanged_untouched);
    tcase_add_test(tc, listing_last);
    tcase_add_test(tc, fenced);
    tcase_add_test(tc, names_refused);
    suite_add_tcase(s, tc);
    return s;
}
