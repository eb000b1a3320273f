/* SPDX-License-Identifier: Apache-2.0 */
/* test_blob.c - rs_blob: a generation's files in the store and out again,
 * on both drivers: chunk boundaries, every byte value, references to an
 * earlier generation's file, dropping that keeps referenced bytes, rows
 * that stay bounded, and the fence. */
#include <string.h>
#include <sys/stat.h>
#include <apr_strings.h>
#include <apr_file_info.h>
#include "unit.h"
#include "rs_blob.h"
#include "rs_lease.h"

#define CH RS_BLOB_CHUNK

static apr_uint64_t inode(const char *path)
{
    apr_finfo_t f;
    ck_assert_int_eq(apr_stat(&f, path, APR_FINFO_INODE, ut_pool), APR_SUCCESS);
    return (apr_uint64_t)f.inode;
}

static void put(rs_db_t *db, apr_uint64_t gen, const char *dir, rs_blob_origin_fn *origin,
                rs_blob_stats_t *st)
{
    ck_assert_int_eq(rs_db_begin(db), APR_SUCCESS);
    ck_assert_int_eq(rs_blob_put(db, ut_pool, "s", "snap", gen, dir, origin, NULL, st),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(db), APR_SUCCESS);
}

static void drop(rs_db_t *db, apr_uint64_t gen)
{
    ck_assert_int_eq(rs_db_begin(db), APR_SUCCESS);
    ck_assert_int_eq(rs_blob_drop(db, "s", "snap", gen), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(db), APR_SUCCESS);
}

static void counts(rs_db_t *db, apr_int64_t files, apr_int64_t chunks)
{
    apr_int64_t f = -1, c = -1;
    ck_assert_int_eq(rs_blob_count(db, "s", &f, &c), APR_SUCCESS);
    ck_assert_int_eq(f, files);
    ck_assert_int_eq(c, chunks);
}

/* "part-<g>-<n>.xml" is generation g's "part-<n>.xml" (as rs_snapparts
 * names a kept part). */
static const char *part_origin(void *baton, apr_pool_t *p, const char *name, apr_uint64_t *gen)
{
    unsigned g, n;
    char end;
    (void)baton;
    if (sscanf(name, "part-%u-%u.xm%c", &g, &n, &end) == 3 && end == 'l') {
        *gen = g;
        return apr_psprintf(p, "part-%u.xml", n);
    }
    return NULL;
}

/* The chunk boundaries: 0, 1 MiB - 1, 1 MiB, 1 MiB + 1 bytes, and a
 * small file; stored, listed, replayed byte for byte with their mtimes;
 * dropped to nothing. */
START_TEST(store_read_drop)
{
    static const apr_size_t sizes[] = { 0, CH - 1, CH, CH + 1, 3 };
    const char *src = ut_tempdir("blob-src"), *out = ut_tempdir("blob-out");
    apr_time_t mt = apr_time_from_sec(1700000000) + 123457;
    apr_array_header_t *files;
    rs_blob_stats_t st;
    rs_db_t *db = ut_store_new("blob");
    int i;

    for (i = 0; i < 5; i++) {
        ut_write_seeded(src, apr_psprintf(ut_pool, "f%d", i), sizes[i], i, mt + i);
    }
    ut_write_str(ut_path(src, ".hidden"), "not stored");
    put(db, 7, src, NULL, &st);
    ck_assert_int_eq(st.files, 5);
    ck_assert_int_eq(st.refs, 0);
    ck_assert_int_eq(st.bytes, (apr_off_t)(3 * CH + 3));
    /* 0 + 1 + 1 + 2 + 1 chunks */
    counts(db, 5, 5);
    ck_assert_int_eq(rs_blob_files(db, ut_pool, "s", "snap", 7, &files), APR_SUCCESS);
    ck_assert_int_eq(files->nelts, 5);
    for (i = 0; i < 5; i++) {
        const rs_blob_file_t *f = &APR_ARRAY_IDX(files, i, rs_blob_file_t);
        ck_assert_str_eq(f->name, apr_psprintf(ut_pool, "f%d", i));
        ck_assert_int_eq(f->size, (apr_off_t)sizes[i]);
        ck_assert_int_eq(f->mtime, mt + i);
        ck_assert_int_eq(f->src_gen, 7);
        ck_assert_str_eq(f->src_name, f->name);
    }
    ck_assert_int_eq(rs_blob_replay(db, ut_pool, "s", "snap", 7, out, NULL, NULL, &st),
                     APR_SUCCESS);
    ck_assert_int_eq(st.files, 5);
    for (i = 0; i < 5; i++) {
        const char *n = apr_psprintf(ut_pool, "f%d", i);
        ut_same_file(ut_path(src, n), ut_path(out, n));
    }
    ck_assert(!ut_exists(ut_path(out, ".hidden")));
    /* By name, in any generation of the set and kind (rs_blob_named). */
    {
        int found = -1;
        ck_assert_int_eq(rs_blob_named(db, "s", "snap", "f3", &found), APR_SUCCESS);
        ck_assert_int_eq(found, 1);
        ck_assert_int_eq(rs_blob_named(db, "s", "snap", ".hidden", &found), APR_SUCCESS);
        ck_assert_int_eq(found, 0);
        ck_assert_int_eq(rs_blob_named(db, "s", "dump", "f3", &found), APR_SUCCESS);
        ck_assert_int_eq(found, 0);
        ck_assert_int_eq(rs_blob_named(db, "t", "snap", "f3", &found), APR_SUCCESS);
        ck_assert_int_eq(found, 0);
    }
    /* Another generation, set or kind has none. */
    ck_assert_int_eq(
        rs_blob_replay(db, ut_pool, "s", "snap", 8, ut_tempdir("blob-none"), NULL, NULL, NULL),
        APR_ENOENT);
    ck_assert_int_eq(rs_blob_files(db, ut_pool, "t", "snap", 7, &files), APR_SUCCESS);
    ck_assert_int_eq(files->nelts, 0);
    drop(db, 7);
    counts(db, 0, 0);
}
END_TEST

/* This node's copy of a file: its own earlier replay of the source. */
static const char *local_copy(void *baton, apr_pool_t *p, const rs_blob_file_t *f)
{
    return apr_psprintf(p, "%s/%" APR_UINT64_T_FMT "/%s", (const char *)baton, f->src_gen,
                        f->src_name);
}

/* A kept part is a reference, not bytes again; dropping its generation
 * keeps the bytes a later one names; a replay links this node's copy
 * (same inode) or, without one, copies the source's bytes. */
START_TEST(reference_and_prune)
{
    const char *root = ut_tempdir("blob-ref"), *node = ut_tempdir("blob-node");
    const char *g1 = ut_path(root, "1"), *g2 = ut_path(root, "2");
    const char *n1 = ut_path(node, "1"), *n2 = ut_path(node, "2"), *bare = ut_tempdir("blob-bare");
    apr_time_t mt = apr_time_from_sec(1700000000);
    rs_blob_stats_t st;
    rs_db_t *db = ut_store_new("blob");

    ck_assert_int_eq(mkdir(g1, 0700), 0);
    ck_assert_int_eq(mkdir(g2, 0700), 0);
    ck_assert_int_eq(mkdir(n1, 0700), 0);
    ck_assert_int_eq(mkdir(n2, 0700), 0);
    ut_write_seeded(g1, "part-1.xml", CH + 5, 1, mt);
    ut_write_seeded(g1, "part-2.xml", 100, 2, mt);
    ut_write_seeded(g1, "resourcelist.xml", 50, 3, mt);
    put(db, 1, g1, part_origin, &st);
    counts(db, 3, 4);
    /* Generation 2 keeps part 1 (a hard link), writes part 2 anew. */
    ck_assert_int_eq(apr_file_link(ut_path(g1, "part-1.xml"), ut_path(g2, "part-1-1.xml")),
                     APR_SUCCESS);
    ut_write_seeded(g2, "part-2.xml", 120, 4, mt + 1);
    ut_write_seeded(g2, "resourcelist.xml", 60, 5, mt + 1);
    /* A name that looks kept but whose source the store lacks: bytes. */
    ut_write_seeded(g2, "part-1-9.xml", 10, 6, mt + 1);
    put(db, 2, g2, part_origin, &st);
    ck_assert_int_eq(st.files, 4);
    ck_assert_int_eq(st.refs, 1);
    ck_assert_int_eq(st.bytes, 120 + 60 + 10);
    counts(db, 7, 4 + 3);
    /* Generation 1 goes: its part 1's bytes stay (generation 2 names them). */
    drop(db, 1);
    counts(db, 4, 2 + 3);
    /* A node without a copy gets the bytes; one with its copy links it. */
    ck_assert_int_eq(rs_blob_replay(db, ut_pool, "s", "snap", 2, bare, NULL, NULL, &st),
                     APR_SUCCESS);
    ck_assert_int_eq(st.refs, 0);
    ut_same_file(ut_path(g2, "part-1-1.xml"), ut_path(bare, "part-1-1.xml"));
    ut_same_file(ut_path(g2, "part-1-9.xml"), ut_path(bare, "part-1-9.xml"));
    ut_write_seeded(n1, "part-1.xml", CH + 5, 1, mt);
    ck_assert_int_eq(rs_blob_replay(db, ut_pool, "s", "snap", 2, n2, local_copy, (void *)node, &st),
                     APR_SUCCESS);
    ck_assert_int_eq(st.refs, 1);
    ck_assert_int_eq(st.bytes, 120 + 60 + 10);
    ck_assert_uint_eq(inode(ut_path(n2, "part-1-1.xml")), inode(ut_path(n1, "part-1.xml")));
    ut_same_file(ut_path(g2, "part-1-1.xml"), ut_path(n2, "part-1-1.xml"));
    ut_same_file(ut_path(g2, "resourcelist.xml"), ut_path(n2, "resourcelist.xml"));
    drop(db, 2);
    counts(db, 0, 0);
}
END_TEST

/* A writer that publishes generation after generation, each keeping the
 * previous one's first part and dropping the one before it: the rows
 * stay bounded by the two generations kept and the part they name. */
START_TEST(rows_bounded)
{
    const char *root = ut_tempdir("blob-bound");
    apr_time_t mt = apr_time_from_sec(1700000000);
    apr_int64_t f = 0, c = 0, fmax = 0, cmax = 0;
    rs_db_t *db = ut_store_new("blob");
    apr_uint64_t g;

    for (g = 1; g <= 30; g++) {
        const char *dir = ut_path(root, apr_psprintf(ut_pool, "%" APR_UINT64_T_FMT, g));
        ck_assert_int_eq(mkdir(dir, 0700), 0);
        if (g == 1) {
            ut_write_seeded(dir, "part-1.xml", 2000, 1, mt);
        }
        else {
            const char *prev = ut_path(root, apr_psprintf(ut_pool, "%" APR_UINT64_T_FMT, g - 1));
            ck_assert_int_eq(apr_file_link(ut_path(prev, g == 2 ? "part-1.xml" : "part-1-1.xml"),
                                           ut_path(dir, "part-1-1.xml")),
                             APR_SUCCESS);
        }
        ut_write_seeded(dir, "part-2.xml", 500 + g, (int)g, mt + (apr_time_t)g);
        ut_write_seeded(dir, "resourcelist.xml", 300, (int)g, mt + (apr_time_t)g);
        put(db, g, dir, part_origin, NULL);
        if (g > 2) {
            drop(db, g - 2);
        }
        ck_assert_int_eq(rs_blob_count(db, "s", &f, &c), APR_SUCCESS);
        fmax = f > fmax ? f : fmax;
        cmax = c > cmax ? c : cmax;
    }
    /* Two generations of three files; the first part's chunk and two
     * chunks per generation. */
    ck_assert_int_le(fmax, 6);
    ck_assert_int_le(cmax, 5);
    ck_assert_int_eq(
        rs_blob_replay(db, ut_pool, "s", "snap", 30, ut_tempdir("blob-b30"), NULL, NULL, NULL),
        APR_SUCCESS);
}
END_TEST

/* The fence: b took the set over, so a's put (begun with the set's
 * fence) is refused and leaves nothing; b's goes in. */
typedef struct {
    rs_db_t *a, *b;
    rs_lease_t la, lb;
} fx_t;

static apr_status_t fence_fn(void *baton, rs_db_t *db, const char *set)
{
    fx_t *f = baton;
    rs_lease_t *l = db == f->a ? &f->la : &f->lb;
    return strcmp(set, l->set) ? RS_LEASE_LOST : rs_lease_fence(db, l);
}

START_TEST(fenced)
{
    const char *path = ut_path(ut_tempdir("blob-fence"), "state.db");
    const char *src = ut_tempdir("blob-fsrc");
    rs_lease_t ended;
    fx_t f;
    int held = 0;

    memset(&f, 0, sizeof(f));
    f.a = ut_store_open(path);
    f.b = ut_store_open(path);
    f.la.set = f.lb.set = "s";
    f.la.node = "a";
    f.lb.node = "b";
    f.la.token = rs_lease_token(ut_pool);
    f.lb.token = rs_lease_token(ut_pool);
    f.la.ttl = f.lb.ttl = apr_time_from_sec(60);
    ck_assert_int_eq(rs_lease_take(f.a, &f.la, &held), APR_SUCCESS);
    ck_assert_int_eq(held, 1);
    rs_db_fence_install(fence_fn, &f);
    ended = f.la;
    ck_assert_int_eq(rs_lease_release(f.a, &ended), APR_SUCCESS);
    ck_assert_int_eq(rs_lease_take(f.b, &f.lb, &held), APR_SUCCESS);
    ck_assert_int_eq(held, 1);
    ut_write_seeded(src, "resourcelist.xml", CH + 1, 1, apr_time_from_sec(1700000000));
    ck_assert_int_eq(rs_db_begin_set(f.a, "s"), RS_LEASE_LOST);
    ck_assert_int_eq(rs_db_txn_serial(f.a), 0);
    counts(f.b, 0, 0);
    ck_assert_int_eq(rs_db_begin_set(f.b, "s"), APR_SUCCESS);
    ck_assert_int_eq(rs_blob_put(f.b, ut_pool, "s", "snap", 1, src, NULL, NULL, NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(f.b), APR_SUCCESS);
    counts(f.a, 1, 2);
    /* a's drop is refused too: b's rows stay. */
    ck_assert_int_eq(rs_db_begin_set(f.a, "s"), RS_LEASE_LOST);
    counts(f.a, 1, 2);
    rs_db_fence_install(NULL, NULL);
}
END_TEST

/* A row of the store that names a path, not a file: refused. */
START_TEST(names_refused)
{
    const char *src = ut_tempdir("blob-nsrc");
    rs_db_t *db = ut_store_new("blob");
    rs_db_stmt_t *s;

    ut_write_seeded(src, "ok", 4, 1, apr_time_from_sec(1700000000));
    put(db, 1, src, NULL, NULL);
    ck_assert_int_eq(rs_db_prepare(db, "UPDATE blobfiles SET name = '../evil'", &s), APR_SUCCESS);
    ck_assert_int_eq(rs_db_exec(db, s, NULL, NULL), APR_SUCCESS);
    ck_assert_int_eq(
        rs_blob_replay(db, ut_pool, "s", "snap", 1, ut_tempdir("blob-nout"), NULL, NULL, NULL),
        APR_EINVAL);
}
END_TEST

Suite *blob_suite(void)
{
    Suite *s = suite_create("blob");
    TCase *tc = ut_tcase("blob", 60);
    tcase_add_test(tc, store_read_drop);
    tcase_add_test(tc, reference_and_prune);
    tcase_add_test(tc, rows_bounded);
    tcase_add_test(tc, fenced);
    tcase_add_test(tc, names_refused);
    suite_add_tcase(s, tc);
    return s;
}
