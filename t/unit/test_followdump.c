/* SPDX-License-Identifier: Apache-2.0 */
/* test_followdump.c - rs_followdump: a writer's Resource Dump
 * generations stored with their number (shared stores only), a kept
 * package stored as a reference to the source of the generation it was
 * linked from, replayed by a follower with its own copies linked and
 * every mtime the writer's; pruned generations dropped; a refused fence
 * stores nothing. */
#include <string.h>
#include <unistd.h>
#include <apr_strings.h>
#include <apr_file_info.h>
#include "unit.h"
#include "rs_blob.h"
#include "rs_file.h"
#include "rs_followdump.h"
#include "rs_lease.h"
#include "rs_statedir.h"

#define MT apr_time_from_sec(1700000000)

static const char *gendir(const char *dumpset, apr_uint64_t gen)
{
    const char *d = rs_statedir_gen(ut_pool, dumpset, gen);
    ck_assert_int_eq(apr_dir_make_recursive(d, APR_FPROT_OS_DEFAULT, ut_pool), APR_SUCCESS);
    return d;
}

/* Package key's three files, new (size of its zip: n). */
static void new_pkg(const char *dir, const char *key, apr_size_t n, int seed)
{
    ut_write_seeded(dir, apr_pstrcat(ut_pool, key, ".zip", NULL), n, seed, MT + seed);
    ut_write_seeded(dir, apr_pstrcat(ut_pool, key, ".xml", NULL), 300, seed + 1, MT + seed + 1);
    ut_write_seeded(dir, apr_pstrcat(ut_pool, key, ".rec", NULL), 40, seed + 2, MT + seed + 2);
}

/* Package key kept from dir from (hard links, as rs_dumppkg_reuse). */
static void kept_pkg(const char *from, const char *dir, const char *key)
{
    static const char *const ext[] = { ".zip", ".xml", ".rec" };
    int i;
    for (i = 0; i < 3; i++) {
        const char *name = apr_pstrcat(ut_pool, key, ext[i], NULL);
        ck_assert_int_eq(link(ut_path(from, name), ut_path(dir, name)), 0);
    }
}

/* A generation's own files. */
static void gen_docs(const char *dir, int seed)
{
    ut_write_seeded(dir, "resourcedump.xml", 900 + seed, seed, MT + 100 + seed);
    ut_write_seeded(dir, "history", 17, 5, MT + 7 + seed);
}

/* Every file of the writer's w and the follower's f the same (and as
 * many). */
static void same_gen(const char *w, const char *f)
{
    apr_dir_t *d;
    apr_finfo_t fi;
    int nw = 0, nf = 0;
    ck_assert_int_eq(apr_dir_open(&d, w, ut_pool), APR_SUCCESS);
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        if (fi.filetype == APR_REG) {
            ut_same_file(ut_path(w, fi.name), ut_path(f, fi.name));
            nw++;
        }
    }
    apr_dir_close(d);
    ck_assert_int_eq(apr_dir_open(&d, f, ut_pool), APR_SUCCESS);
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        nf += fi.filetype == APR_REG;
    }
    apr_dir_close(d);
    ck_assert_int_eq(nw, nf);
}

static apr_uint64_t inode(const char *path)
{
    apr_finfo_t f;
    ck_assert_int_eq(apr_stat(&f, path, APR_FINFO_INODE, ut_pool), APR_SUCCESS);
    return (apr_uint64_t)f.inode;
}

static void record(rs_db_t *db, const char *dumpset, apr_uint64_t gen, int files, int refs)
{
    rs_blob_stats_t st;
    ck_assert_int_eq(rs_followdump_record(db, ut_pool, "s", dumpset,
                                          rs_statedir_gen(ut_pool, dumpset, gen), gen, &st),
                     APR_SUCCESS);
    ck_assert_uint_eq(rs_followdump_stored_gen(db, ut_pool, "s"), gen);
    if (ut_pg()) {
        ck_assert_int_eq(st.files, files);
        ck_assert_int_eq(st.refs, refs);
    }
}

static void copy(rs_db_t *db, const char *dumpset, apr_uint64_t gen, int files, int refs)
{
    rs_blob_stats_t st;
    ck_assert_int_eq(rs_followdump_copy(db, ut_pool, "s", dumpset, gen, &st), APR_SUCCESS);
    ck_assert_int_eq(st.files, files);
    ck_assert_int_eq(st.refs, refs);
}

/* Three generations: the second keeps a package of the first, the third
 * keeps it again after the first was pruned.  Stored as references (a
 * package's bytes go to the store once), replayed with the follower's
 * own copies linked, mtimes and bytes the writer's; a follower that
 * starts at the third gets the bytes.  One node's store (SQLite) stores
 * no file: only the number. */
START_TEST(store_replay_kept)
{
    const char *w = ut_tempdir("fdump-w"), *f = ut_tempdir("fdump-f");
    const char *late = ut_tempdir("fdump-late");
    const char *w1 = gendir(w, 1), *w2, *w3;
    rs_db_t *db = ut_store_new("fdump");
    apr_int64_t files = -1, chunks = -1;
    int dropped = -1;

    gen_docs(w1, 1);
    new_pkg(w1, "aaaaaaaaaaaaaaaa", RS_BLOB_CHUNK * 2 + 5, 10); /* three chunks */
    new_pkg(w1, "bbbbbbbbbbbbbbbb", 1000, 20);
    record(db, w, 1, 8, 0);
    if (!ut_pg()) {
        ck_assert_int_eq(rs_followdump_copy(db, ut_pool, "s", f, 1, NULL), APR_ENOENT);
        ck_assert_int_eq(rs_blob_count(db, "s", &files, &chunks), APR_SUCCESS);
        ck_assert_int_eq(files + chunks, 0);
        return;
    }
    copy(db, f, 1, 8, 0);
    same_gen(w1, rs_statedir_gen(ut_pool, f, 1));
    /* Complete in place: nothing copied again. */
    copy(db, f, 1, 0, 0);

    w2 = gendir(w, 2);
    gen_docs(w2, 2);
    kept_pkg(w1, w2, "aaaaaaaaaaaaaaaa");
    new_pkg(w2, "cccccccccccccccc", 2000, 30);
    record(db, w, 2, 8, 3);
    copy(db, f, 2, 8, 3);
    same_gen(w2, rs_statedir_gen(ut_pool, f, 2));
    ck_assert_uint_eq(inode(ut_path(rs_statedir_gen(ut_pool, f, 2), "aaaaaaaaaaaaaaaa.zip")),
                      inode(ut_path(rs_statedir_gen(ut_pool, f, 1), "aaaaaaaaaaaaaaaa.zip")));

    /* The first generation pruned by the writer: its rows go, the kept
     * package's chunks stay (the second's rows name them). */
    w3 = gendir(w, 3);
    gen_docs(w3, 3);
    kept_pkg(w2, w3, "aaaaaaaaaaaaaaaa");
    kept_pkg(w2, w3, "cccccccccccccccc");
    ck_assert_int_eq(rs_file_remove_tree(ut_pool, w1), APR_SUCCESS);
    ck_assert_int_eq(rs_followdump_prune(db, ut_pool, "s", w, 2, &dropped), APR_SUCCESS);
    ck_assert_int_eq(dropped, 1);
    record(db, w, 3, 8, 6);
    copy(db, f, 3, 8, 6);
    same_gen(w3, rs_statedir_gen(ut_pool, f, 3));
    copy(db, late, 3, 8, 0);
    same_gen(w3, rs_statedir_gen(ut_pool, late, 3));
    /* Everything pruned but the third. */
    ck_assert_int_eq(rs_file_remove_tree(ut_pool, w2), APR_SUCCESS);
    ck_assert_int_eq(rs_followdump_prune(db, ut_pool, "s", w, 3, &dropped), APR_SUCCESS);
    ck_assert_int_eq(dropped, 1);
    ck_assert_int_eq(rs_blob_count(db, "s", &files, &chunks), APR_SUCCESS);
    ck_assert_int_eq(files, 8);
    ck_assert_int_eq(chunks, 5 + 3 + 2); /* aaaa (its zip three), cccc, resourcedump.xml, history */
}
END_TEST

static apr_status_t fence_fn(void *baton, rs_db_t *db, const char *set)
{
    (void)baton;
    (void)db;
    return strcmp(set, "s") ? APR_SUCCESS : RS_LEASE_LOST;
}

/* A node that no longer holds the set's lease records nothing: neither
 * the number nor a file. */
START_TEST(fenced)
{
    const char *w = ut_tempdir("fdump-fence"), *w1 = gendir(w, 1);
    rs_db_t *db = ut_store_new("fdump");
    apr_int64_t files = -1, chunks = -1;

    gen_docs(w1, 1);
    new_pkg(w1, "aaaaaaaaaaaaaaaa", 100, 10);
    rs_db_fence_install(fence_fn, NULL);
    ck_assert_int_eq(rs_followdump_record(db, ut_pool, "s", w, w1, 1, NULL), RS_LEASE_LOST);
    rs_db_fence_install(NULL, NULL);
    ck_assert_uint_eq(rs_followdump_stored_gen(db, ut_pool, "s"), 0);
    ck_assert_int_eq(rs_blob_count(db, "s", &files, &chunks), APR_SUCCESS);
    ck_assert_int_eq(files + chunks, 0);
}
END_TEST

Suite *followdump_suite(void)
{
    Suite *s = suite_create("followdump");
    TCase *tc = ut_tcase("followdump", 60);
    tcase_add_test(tc, store_replay_kept);
    tcase_add_test(tc, fenced);
    suite_add_tcase(s, tc);
    return s;
}
