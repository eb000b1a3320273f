/* SPDX-License-Identifier: Apache-2.0 */
/* test_scan.c - rs_scan: reconciling a real directory tree with the store */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <apr_allocator.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include <apr_thread_mutex.h>
#include "unit.h"
#include "rs_hash.h"
#include "rs_scan.h"
#include "rs_scan_priv.h"
#include "rs_scanpipe.h"
#include "rs_inventory.h"
#include "rs_schema.h"

#define MD5_SHA256 (RS_HASH_MD5 | RS_HASH_SHA256)

/* A test fixture: temp base dir with root/ inside, a store, options. */
typedef struct {
    const char *base, *root;
    rs_db_t *st;
    ut_log_t ul;
    rs_scan_opts_t o;
    rs_scan_stats_t s;
    apr_array_header_t *ex;
} fx_t;

static void fx_init(fx_t *f)
{
    memset(f, 0, sizeof(*f));
    f->base = ut_tempdir("scan");
    f->root = ut_path(f->base, "root");
    ut_mkdir(f->root);
    ck_assert_int_eq(rs_schema_open(&f->st, ut_pool, "sqlite3", ut_path(f->base, "state.db"),
                                    ut_log_init(&f->ul)),
                     APR_SUCCESS);
    f->ex = apr_array_make(ut_pool, 4, sizeof(const char *));
    f->o.set = "s";
    f->o.root = f->root;
    f->o.hashes = MD5_SHA256;
    f->o.excludes = f->ex;
    f->o.cfg = "cfg1";
    f->o.log = &f->ul.logger;
}

static void fx_scan(fx_t *f)
{
    memset(&f->s, 0x55, sizeof(f->s));
    ck_assert_int_eq(rs_scan_set(f->st, &f->o, ut_pool, &f->s), APR_SUCCESS);
}

static void put_file(fx_t *f, const char *rel, const char *content)
{
    ut_write_str(ut_path(f->root, rel), content);
}

static void put_dir(fx_t *f, const char *rel)
{
    ut_mkdir(ut_path(f->root, rel));
}

static void put_link(fx_t *f, const char *rel, const char *target)
{
    ck_assert_int_eq(symlink(target, ut_path(f->root, rel)), 0);
}

static rs_item_t *row(fx_t *f, const char *dir, const char *name)
{
    apr_hash_t *h = NULL;
    ck_assert_int_eq(rs_inventory_dir_load(f->st, ut_pool, f->o.set, dir, &h), APR_SUCCESS);
    return apr_hash_get(h, name, APR_HASH_KEY_STRING);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Names of a directory's rows, sorted, joined with "|". */
static const char *names(fx_t *f, const char *dir)
{
    apr_hash_t *h = NULL;
    apr_hash_index_t *hi;
    apr_array_header_t *a = apr_array_make(ut_pool, 8, sizeof(const char *));
    ck_assert_int_eq(rs_inventory_dir_load(f->st, ut_pool, f->o.set, dir, &h), APR_SUCCESS);
    for (hi = apr_hash_first(ut_pool, h); hi; hi = apr_hash_next(hi)) {
        const void *k;
        apr_hash_this(hi, &k, NULL, NULL);
        APR_ARRAY_PUSH(a, const char *) = k;
    }
    qsort(a->elts, (size_t)a->nelts, sizeof(char *), cmp_str);
    return apr_array_pstrcat(ut_pool, a, '|');
}

static const char *dirs(fx_t *f)
{
    apr_array_header_t *d = NULL;
    ck_assert_int_eq(rs_inventory_dirs(f->st, ut_pool, f->o.set, &d), APR_SUCCESS);
    qsort(d->elts, (size_t)d->nelts, sizeof(char *), cmp_str);
    return apr_array_pstrcat(ut_pool, d, '|');
}

static apr_int64_t count(fx_t *f)
{
    apr_int64_t n = -1;
    ck_assert_int_eq(rs_inventory_count(f->st, f->o.set, &n), APR_SUCCESS);
    return n;
}

static void assert_hashes(const rs_item_t *r, unsigned mask, const char *content)
{
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    int i;
    rs_hash_buf(content, strlen(content), mask, hex);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        if (mask & (1u << i)) {
            ck_assert_ptr_nonnull(r->hash[i]);
            ck_assert_str_eq(r->hash[i], hex[i]);
        }
        else {
            ck_assert_ptr_null(r->hash[i]);
        }
    }
}

static void assert_stat(fx_t *f, const rs_item_t *r, const char *rel)
{
    struct stat sb;
    ck_assert_int_eq(stat(ut_path(f->root, rel), &sb), 0);
    ck_assert_int_eq(r->size, (apr_int64_t)sb.st_size);
    ck_assert_int_eq(r->mtime_ns, (apr_int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec);
    ck_assert_int_eq(r->ctime_ns, (apr_int64_t)sb.st_ctim.tv_sec * 1000000000 + sb.st_ctim.tv_nsec);
    ck_assert_int_eq(r->dev, (apr_int64_t)sb.st_dev);
    ck_assert_int_eq(r->ino, (apr_int64_t)sb.st_ino);
}

static void pause_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* The reference tree. */
static void build_tree(fx_t *f)
{
    ut_write_str(ut_path(f->base, "outside.txt"), "outside");
    put_file(f, "a.txt", "hello\n");
    put_file(f, "b.txt", "abc");
    put_file(f, "empty.txt", "");
    put_file(f, "sp ace caf\xC3\xA9.txt", "x");
    put_file(f, "latin\xE9.txt", "y");
    put_dir(f, "sub");
    put_file(f, "sub/c.txt", "c content");
    put_dir(f, "sub/deep");
    put_file(f, "sub/deep/d.txt", "dd");
    put_file(f, "sub/deep/e.txt", "eee");
    put_file(f, ".hidden", "h");
    put_file(f, ".htaccess", "Require all granted\n");
    put_file(f, "sub/.htpasswd", "u:p");
    put_file(f, "x.tmp", "tmp");
    put_file(f, "sub/y.tmp", "tmp");
    put_dir(f, "cache");
    put_file(f, "cache/f.txt", "cached");
    put_link(f, "link-in", "a.txt");
    put_link(f, "sub/link-up", "../b.txt");
    put_link(f, "link-out", "../outside.txt");
    put_link(f, "link-abs-out", ut_path(f->base, "outside.txt"));
    put_link(f, "link-dir", "sub");
    put_link(f, "link-dangling", "no-such-file");
    put_link(f, "link-hidden", ".hidden");
    /* A sibling of the root whose name starts with the root's name. */
    ut_mkdir(apr_pstrcat(ut_pool, f->root, "x", NULL));
    ut_write_str(apr_pstrcat(ut_pool, f->root, "x/f.txt", NULL), "sibling");
    put_link(f, "link-sibling", "../rootx/f.txt");
    put_link(f, "sub/link-root", "..");
    ck_assert_int_eq(mkfifo(ut_path(f->root, "fifo"), 0644), 0);
    APR_ARRAY_PUSH(f->ex, const char *) = "*.tmp";
    APR_ARRAY_PUSH(f->ex, const char *) = "cache";
}

START_TEST(first_scan)
{
    fx_t f;
    rs_item_t *r;

    fx_init(&f);
    build_tree(&f);
    fx_scan(&f);

    /* link-hidden points at a regular file inside the root: listed. */
    ck_assert_int_eq(f.s.files, 11);
    ck_assert_int_eq(f.s.dirs, 3);
    ck_assert_int_eq(f.s.listed, 11);
    ck_assert_int_eq(f.s.written, 11);
    ck_assert_int_eq(f.s.removed, 0);
    ck_assert_int_eq(f.s.hashed, 6 + 3 + 0 + 1 + 1 + 9 + 2 + 3 + 6 + 3 + 1);
    ck_assert_int_eq(count(&f), 11);

    ck_assert_str_eq(dirs(&f), "|sub|sub/deep");
    ck_assert_str_eq(names(&f, ""), "a.txt|b.txt|empty.txt|latin\xE9.txt|link-hidden|link-in|"
                                    "sp ace caf\xC3\xA9.txt");
    ck_assert_str_eq(names(&f, "sub"), "c.txt|link-up");
    ck_assert_str_eq(names(&f, "sub/deep"), "d.txt|e.txt");
    ck_assert_str_eq(names(&f, "cache"), "");

    r = row(&f, "", "b.txt");
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(r->dir, "");
    ck_assert_str_eq(r->name, "b.txt");
    ck_assert_str_eq(r->hash[0], "900150983cd24fb0d6963f7d28e17f72");
    ck_assert_str_eq(r->hash[2],
                     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ck_assert_ptr_null(r->hash[1]);
    ck_assert_ptr_null(r->hash[3]);
    ck_assert_int_eq(r->listed, 1);
    ck_assert_str_eq(r->cfg, "cfg1");
    ck_assert_ptr_null(r->type);
    assert_stat(&f, r, "b.txt");

    r = row(&f, "", "empty.txt");
    ck_assert_str_eq(r->hash[0], "d41d8cd98f00b204e9800998ecf8427e");
    ck_assert_str_eq(r->hash[2],
                     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    ck_assert_int_eq(r->size, 0);

    assert_hashes(row(&f, "", "a.txt"), MD5_SHA256, "hello\n");
    assert_hashes(row(&f, "sub/deep", "e.txt"), MD5_SHA256, "eee");
    assert_hashes(row(&f, "", "latin\xE9.txt"), MD5_SHA256, "y");
    assert_stat(&f, row(&f, "sub/deep", "e.txt"), "sub/deep/e.txt");

    /* Symlinks inside the root carry their target's data. */
    r = row(&f, "", "link-in");
    assert_hashes(r, MD5_SHA256, "hello\n");
    assert_stat(&f, r, "a.txt");
    r = row(&f, "sub", "link-up");
    assert_hashes(r, MD5_SHA256, "abc");
    ck_assert_int_eq(r->ino, row(&f, "", "b.txt")->ino);
    ck_assert_int_eq(f.ul.nerr, 0);
}
END_TEST

/* A first scan that hashes takes the metadata of plain files from the
 * descriptor it hashes (no row to compare with): its rows and counts
 * are exactly those of a scan of the same tree into a set that already
 * has a row (the path that stats every entry first). */
START_TEST(first_scan_same_as_full_path)
{
    fx_t f;
    rs_db_t *st2;
    rs_scan_stats_t s2;
    rs_item_t dummy;
    static const char *const ds[] = { "", "sub", "sub/deep", NULL };
    int d;

    fx_init(&f);
    build_tree(&f);
    fx_scan(&f);
    ck_assert_int_eq(
        rs_schema_open(&st2, ut_pool, "sqlite3", ut_path(f.base, "other.db"), &f.ul.logger),
        APR_SUCCESS);
    memset(&dummy, 0, sizeof(dummy));
    dummy.dir = "gone";
    dummy.name = "old.txt";
    dummy.cfg = "cfg1";
    ck_assert_int_eq(rs_inventory_put(st2, "s", &dummy), APR_SUCCESS);
    ck_assert_int_eq(rs_scan_set(st2, &f.o, ut_pool, &s2), APR_SUCCESS);
    ck_assert_int_eq(s2.files, f.s.files);
    ck_assert_int_eq(s2.listed, f.s.listed);
    ck_assert_int_eq(s2.written, f.s.written);
    ck_assert_int_eq(s2.hashed, f.s.hashed);
    ck_assert_int_eq(s2.removed, 1);
    for (d = 0; ds[d]; d++) {
        apr_hash_t *a = NULL, *b = NULL;
        apr_hash_index_t *hi;
        ck_assert_int_eq(rs_inventory_dir_load(f.st, ut_pool, "s", ds[d], &a), APR_SUCCESS);
        ck_assert_int_eq(rs_inventory_dir_load(st2, ut_pool, "s", ds[d], &b), APR_SUCCESS);
        ck_assert_int_eq(apr_hash_count(a), apr_hash_count(b));
        for (hi = apr_hash_first(ut_pool, a); hi; hi = apr_hash_next(hi)) {
            const void *k;
            void *v;
            const rs_item_t *x, *y;
            int i;
            apr_hash_this(hi, &k, NULL, &v);
            x = v;
            y = apr_hash_get(b, k, APR_HASH_KEY_STRING);
            ck_assert_ptr_nonnull(y);
            ck_assert_int_eq(x->size, y->size);
            ck_assert_int_eq(x->mtime_ns, y->mtime_ns);
            ck_assert_int_eq(x->ctime_ns, y->ctime_ns);
            ck_assert_int_eq(x->dev, y->dev);
            ck_assert_int_eq(x->ino, y->ino);
            ck_assert_int_eq(x->listed, y->listed);
            ck_assert_pstr_eq(x->type, y->type);
            for (i = 0; i < RS_HASH_COUNT; i++) {
                ck_assert_pstr_eq(x->hash[i], y->hash[i]);
            }
        }
    }
    ck_assert_int_eq(f.ul.nerr, 0);
}
END_TEST

/* A full scan's store writer runs beside the walk, on a thread of its
 * own, only when the allocators of the caller's pool and of the store's
 * have a mutex (APR's global one has; a process with an allocator of its
 * own must set one); otherwise the walk writes the store itself, with
 * the same result.  Where the writes ran shows in the thread that calls
 * on_change. */
typedef struct {
    pthread_t walker;
    int calls, off_walker;
} where_t;

static apr_status_t note_thread(void *baton, int change, const rs_item_t *it)
{
    where_t *w = baton;
    (void)change;
    (void)it;
    w->calls++;
    w->off_walker += !pthread_equal(pthread_self(), w->walker);
    return APR_SUCCESS;
}

START_TEST(pipe_needs_thread_safe_allocators)
{
    fx_t f;
    apr_allocator_t *alloc;
    apr_pool_t *np;
    apr_thread_mutex_t *m;
    rs_db_t *st2;
    rs_scan_stats_t s2;
    where_t w;
    int round;

    ck_assert_int_eq(rs_scanpipe_allowed(ut_pool, ut_pool), 1);
    fx_init(&f);
    build_tree(&f);
    fx_scan(&f);
    f.o.on_change = note_thread;
    f.o.change_baton = &w;
    /* Round 0: no mutex (no pipe); 1: a mutex (a pipe); 2: a mutex, but
     * the caller's pool is mutex-less (no pipe). */
    for (round = 0; round < 3; round++) {
        ck_assert_int_eq(apr_allocator_create(&alloc), APR_SUCCESS);
        ck_assert_int_eq(apr_pool_create_ex(&np, NULL, NULL, alloc), APR_SUCCESS);
        apr_allocator_owner_set(alloc, np);
        if (round >= 1) {
            ck_assert_int_eq(apr_thread_mutex_create(&m, APR_THREAD_MUTEX_DEFAULT, np),
                             APR_SUCCESS);
            apr_allocator_mutex_set(alloc, m);
        }
        ck_assert_int_eq(rs_scanpipe_allowed(np, ut_pool), round >= 1);
        ck_assert_int_eq(rs_scanpipe_allowed(ut_pool, np), round >= 1);
        ck_assert_int_eq(rs_schema_open(&st2, np, "sqlite3",
                                        ut_path(f.base, apr_psprintf(ut_pool, "r%d.db", round)),
                                        &f.ul.logger),
                         APR_SUCCESS);
        memset(&w, 0, sizeof(w));
        w.walker = pthread_self();
        memset(&s2, 0x55, sizeof(s2));
        if (round == 2) {
            apr_allocator_t *a2;
            apr_pool_t *cp;
            ck_assert_int_eq(apr_allocator_create(&a2), APR_SUCCESS);
            ck_assert_int_eq(apr_pool_create_ex(&cp, NULL, NULL, a2), APR_SUCCESS);
            apr_allocator_owner_set(a2, cp);
            ck_assert_int_eq(rs_scanpipe_allowed(cp, np), 0);
            ck_assert_int_eq(rs_scan_set(st2, &f.o, cp, &s2), APR_SUCCESS);
            apr_pool_destroy(cp);
        }
        else {
            ck_assert_int_eq(rs_scan_set(st2, &f.o, np, &s2), APR_SUCCESS);
        }
        ck_assert_int_eq(w.calls, f.s.listed);
        ck_assert_int_eq(w.off_walker, round == 1 ? w.calls : 0);
        ck_assert_int_eq(s2.files, f.s.files);
        ck_assert_int_eq(s2.listed, f.s.listed);
        ck_assert_int_eq(s2.written, f.s.written);
        ck_assert_int_eq(s2.hashed, f.s.hashed);
        {
            apr_hash_t *h = NULL;
            ck_assert_int_eq(rs_inventory_dir_load(st2, ut_pool, "s", "sub/deep", &h), APR_SUCCESS);
            ck_assert_int_eq(apr_hash_count(h), 2);
            assert_hashes(apr_hash_get(h, "e.txt", APR_HASH_KEY_STRING), MD5_SHA256, "eee");
        }
        apr_pool_destroy(np);
    }
    ck_assert_int_eq(f.ul.nerr, 0);
}
END_TEST

/* Reading ahead of the walk (forced, as on a cold cache) changes
 * nothing the scan finds; none is done when turned off or for a scan
 * that hashes. */
START_TEST(readahead_same_result)
{
    fx_t f;
    rs_db_t *st2;
    rs_scan_stats_t s2;
    static const char *const ds[] = { "", "sub", "sub/deep", NULL };
    int d;

    fx_init(&f);
    build_tree(&f);
    f.o.hashes = 0;
    f.o.readahead = -1;
    fx_scan(&f);
    ck_assert_int_eq(f.s.ahead_dirs, 0);
    f.o.readahead = 1;
    ck_assert_int_eq(
        rs_schema_open(&st2, ut_pool, "sqlite3", ut_path(f.base, "ahead.db"), &f.ul.logger),
        APR_SUCCESS);
    ck_assert_int_eq(rs_scan_set(st2, &f.o, ut_pool, &s2), APR_SUCCESS);
    /* Forced, the whole tree is read before the scan ends: the root,
     * sub, sub/deep and cache, not link-dir (a link). */
    ck_assert_int_eq(s2.ahead_dirs, 4);
    ck_assert_int_eq(s2.files, f.s.files);
    ck_assert_int_eq(s2.dirs, f.s.dirs);
    ck_assert_int_eq(s2.listed, f.s.listed);
    ck_assert_int_eq(s2.written, f.s.written);
    for (d = 0; ds[d]; d++) {
        fx_t g = f;
        g.st = st2;
        ck_assert_str_eq(names(&f, ds[d]), names(&g, ds[d]));
    }
    /* A scan that hashes reads its files on threads of its own. */
    f.o.hashes = MD5_SHA256;
    ck_assert_int_eq(rs_scan_set(st2, &f.o, ut_pool, &s2), APR_SUCCESS);
    ck_assert_int_eq(s2.ahead_dirs, 0);
    ck_assert_int_eq(f.ul.nerr, 0);
}
END_TEST

START_TEST(rescan_unchanged)
{
    fx_t f;
    rs_item_t before;

    fx_init(&f);
    build_tree(&f);
    fx_scan(&f);
    before = *row(&f, "sub", "c.txt");
    fx_scan(&f);
    ck_assert_int_eq(f.s.files, 11);
    ck_assert_int_eq(f.s.dirs, 3);
    ck_assert_int_eq(f.s.listed, 11);
    ck_assert_int_eq(f.s.written, 0);
    ck_assert_int_eq(f.s.removed, 0);
    ck_assert_int_eq(f.s.hashed, 0);
    ck_assert_int_eq(count(&f), 11);
    ck_assert_str_eq(row(&f, "sub", "c.txt")->hash[0], before.hash[0]);
    ck_assert_int_eq(row(&f, "sub", "c.txt")->mtime_ns, before.mtime_ns);
}
END_TEST

START_TEST(rescan_changes)
{
    fx_t f;
    rs_item_t *r;
    const char *anew = "hello world, this is longer\n";

    fx_init(&f);
    build_tree(&f);
    fx_scan(&f);

    put_file(&f, "a.txt", anew);                                 /* modified */
    ck_assert_int_eq(unlink(ut_path(f.root, "empty.txt")), 0);   /* deleted */
    put_file(&f, "sub/new.txt", "new");                          /* added */
    ck_assert_int_eq(ut_rmtree(ut_path(f.root, "sub/deep")), 0); /* subtree gone */
    fx_scan(&f);

    ck_assert_int_eq(f.s.files, 9);
    ck_assert_int_eq(f.s.dirs, 2);
    ck_assert_int_eq(f.s.listed, 9);
    /* a.txt, link-in (its target changed) and sub/new.txt */
    ck_assert_int_eq(f.s.written, 3);
    ck_assert_int_eq(f.s.hashed, 2 * (apr_int64_t)strlen(anew) + 3);
    /* Three rows went: empty.txt and the two of sub/deep. */
    ck_assert_int_eq(f.s.removed, 3);
    ck_assert_int_eq(count(&f), 9);

    r = row(&f, "", "a.txt");
    ck_assert_int_eq(r->size, (apr_int64_t)strlen(anew));
    assert_hashes(r, MD5_SHA256, anew);
    assert_stat(&f, r, "a.txt");
    assert_hashes(row(&f, "", "link-in"), MD5_SHA256, anew);
    ck_assert_ptr_null(row(&f, "", "empty.txt"));
    r = row(&f, "sub", "new.txt");
    ck_assert_ptr_nonnull(r);
    assert_hashes(r, MD5_SHA256, "new");
    ck_assert_str_eq(names(&f, "sub/deep"), "");
    ck_assert_str_eq(dirs(&f), "|sub");

    /* And quiet again. */
    fx_scan(&f);
    ck_assert_int_eq(f.s.written, 0);
    ck_assert_int_eq(f.s.removed, 0);
    ck_assert_int_eq(f.s.hashed, 0);
}
END_TEST

START_TEST(same_size_same_mtime_new_inode)
{
    /* Replacing a file by another one (rename over it) with the same size
     * and mtime is still seen: the inode differs. */
    fx_t f;
    struct timespec ts[2] = { { 1600000000, 0 }, { 1600000000, 0 } };

    fx_init(&f);
    put_file(&f, "a.txt", "one");
    ck_assert_int_eq(utimensat(AT_FDCWD, ut_path(f.root, "a.txt"), ts, 0), 0);
    fx_scan(&f);
    assert_hashes(row(&f, "", "a.txt"), MD5_SHA256, "one");

    ut_write_str(ut_path(f.base, "tmp"), "two");
    ck_assert_int_eq(utimensat(AT_FDCWD, ut_path(f.base, "tmp"), ts, 0), 0);
    ck_assert_int_eq(rename(ut_path(f.base, "tmp"), ut_path(f.root, "a.txt")), 0);
    fx_scan(&f);
    ck_assert_int_eq(f.s.written, 1);
    ck_assert_int_eq(f.s.hashed, 3);
    assert_hashes(row(&f, "", "a.txt"), MD5_SHA256, "two");
    ck_assert_int_eq(row(&f, "", "a.txt")->mtime_ns, 1600000000LL * 1000000000);
}
END_TEST

START_TEST(metadata_change_keeps_hashes)
{
    /* chmod changes only the ctime: the row is rewritten, the content is
     * not read again. */
    fx_t f;
    rs_item_t before;

    fx_init(&f);
    put_file(&f, "a.txt", "content");
    fx_scan(&f);
    before = *row(&f, "", "a.txt");
    pause_ms(20);
    ck_assert_int_eq(chmod(ut_path(f.root, "a.txt"), 0600), 0);
    fx_scan(&f);
    ck_assert_int_eq(f.s.written, 1);
    ck_assert_int_eq(f.s.hashed, 0);
    ck_assert_int_eq(f.s.listed, 1);
    ck_assert_str_eq(row(&f, "", "a.txt")->hash[2], before.hash[2]);
    ck_assert_int_ne(row(&f, "", "a.txt")->ctime_ns, before.ctime_ns);
    assert_stat(&f, row(&f, "", "a.txt"), "a.txt");
}
END_TEST

typedef struct {
    int file_calls, dir_calls;
} check_t;

static int check_cb(void *baton, apr_pool_t *p, const char *relpath, int flags,
                    rs_scan_media_t *media)
{
    int is_dir = flags & RS_SCAN_CHECK_DIR;
    check_t *c = baton;
    apr_size_t n = strlen(relpath);
    if (is_dir) {
        ck_assert_ptr_null(media);
        c->dir_calls++;
        return strcmp(relpath, "private") != 0;
    }
    c->file_calls++;
    ck_assert_ptr_nonnull(media);
    if (!strcmp(relpath, "sub/c.txt")) {
        return 0;
    }
    media->type = (n > 4 && !strcmp(relpath + n - 4, ".txt")) ? apr_pstrdup(p, "text/plain") : NULL;
    return 1;
}

START_TEST(check_callback)
{
    fx_t f;
    check_t c = { 0, 0 };
    rs_item_t *r;

    fx_init(&f);
    put_file(&f, "a.txt", "aaaa");
    put_file(&f, "data.bin", "\x01\x02");
    put_dir(&f, "sub");
    put_file(&f, "sub/c.txt", "denied");
    put_dir(&f, "private");
    put_file(&f, "private/p.txt", "secret");
    f.o.check = check_cb;
    f.o.check_baton = &c;
    fx_scan(&f);

    ck_assert_int_eq(f.s.files, 3);
    ck_assert_int_eq(f.s.listed, 2);
    ck_assert_int_eq(f.s.dirs, 2);
    ck_assert_int_eq(f.s.hashed, 4 + 2); /* a denied file is not read */
    ck_assert_int_eq(c.file_calls, 3);
    ck_assert_int_eq(c.dir_calls, 2);
    ck_assert_int_eq(count(&f), 2);
    ck_assert_str_eq(dirs(&f), "|sub");
    ck_assert_str_eq(names(&f, "private"), "");

    r = row(&f, "", "a.txt");
    ck_assert_str_eq(r->type, "text/plain");
    ck_assert_int_eq(r->listed, 1);
    r = row(&f, "", "data.bin");
    ck_assert_ptr_null(r->type);
    ck_assert_int_eq(r->listed, 1);
    /* Known but not listed, no digests. */
    r = row(&f, "sub", "c.txt");
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->listed, 0);
    ck_assert_ptr_null(r->hash[0]);
    ck_assert_ptr_null(r->hash[2]);
    assert_stat(&f, r, "sub/c.txt");

    /* Unchanged files are not checked again under the same fingerprint. */
    c.file_calls = c.dir_calls = 0;
    fx_scan(&f);
    ck_assert_int_eq(c.file_calls, 0);
    ck_assert_int_eq(c.dir_calls, 2);
    ck_assert_int_eq(f.s.written, 0);
    ck_assert_int_eq(f.s.listed, 2);
    ck_assert_int_eq(row(&f, "sub", "c.txt")->listed, 0);

    /* A new fingerprint re-checks everything but reads nothing again. */
    c.file_calls = 0;
    f.o.cfg = "cfg2";
    fx_scan(&f);
    ck_assert_int_eq(c.file_calls, 3);
    ck_assert_int_eq(f.s.written, 3);
    ck_assert_int_eq(f.s.hashed, 0);
    ck_assert_str_eq(row(&f, "", "a.txt")->cfg, "cfg2");
    assert_hashes(row(&f, "", "a.txt"), MD5_SHA256, "aaaa");
    ck_assert_int_eq(count(&f), 2);
}
END_TEST

START_TEST(dotfiles)
{
    fx_t f;

    fx_init(&f);
    put_file(&f, ".hidden", "h");
    put_file(&f, ".htaccess", "x");
    put_dir(&f, ".dir");
    put_file(&f, ".dir/inner.txt", "i");
    put_dir(&f, ".htdir");
    put_file(&f, ".htdir/x.txt", "x");
    put_file(&f, "visible", "v");
    fx_scan(&f);
    ck_assert_int_eq(f.s.files, 1);
    ck_assert_int_eq(count(&f), 1);
    ck_assert_str_eq(names(&f, ""), "visible");
    ck_assert_str_eq(dirs(&f), "");

    f.o.dotfiles = 1;
    fx_scan(&f);
    ck_assert_int_eq(f.s.files, 3);
    ck_assert_int_eq(f.s.written, 2);
    ck_assert_int_eq(count(&f), 3);
    ck_assert_str_eq(names(&f, ""), ".hidden|visible");
    ck_assert_str_eq(names(&f, ".dir"), "inner.txt");
    ck_assert_str_eq(dirs(&f), "|.dir");

    /* Back off: the dotfile rows go. */
    f.o.dotfiles = 0;
    fx_scan(&f);
    ck_assert_int_eq(count(&f), 1);
    ck_assert_int_eq(f.s.removed, 2);
    ck_assert_str_eq(dirs(&f), "");
}
END_TEST

START_TEST(excludes)
{
    fx_t f;

    fx_init(&f);
    put_file(&f, "a.txt", "a");
    put_file(&f, "a.tmp", "t");
    put_dir(&f, "sub");
    put_file(&f, "sub/b.txt", "b");
    put_dir(&f, "sub/deep");
    put_file(&f, "sub/deep/c.txt", "c");
    put_dir(&f, "deep");
    put_file(&f, "deep/d.txt", "d");
    fx_scan(&f);
    ck_assert_int_eq(count(&f), 5);

    /* Newly excluded files and directories lose their rows. */
    APR_ARRAY_PUSH(f.ex, const char *) = "*.tmp";
    APR_ARRAY_PUSH(f.ex, const char *) = "/sub/deep";
    fx_scan(&f);
    ck_assert_int_eq(count(&f), 3);
    ck_assert_int_eq(f.s.files, 3);
    /* a.tmp and sub/deep/c.txt */
    ck_assert_int_eq(f.s.removed, 2);
    ck_assert_str_eq(names(&f, ""), "a.txt");
    ck_assert_str_eq(names(&f, "sub/deep"), "");
    ck_assert_str_eq(names(&f, "deep"), "d.txt"); /* anchored pattern */
    ck_assert_str_eq(dirs(&f), "|deep|sub");
}
END_TEST

START_TEST(symlink_retarget)
{
    fx_t f;

    fx_init(&f);
    ut_write_str(ut_path(f.base, "outside.txt"), "outside");
    put_file(&f, "a.txt", "a");
    put_link(&f, "l", "a.txt");
    fx_scan(&f);
    ck_assert_str_eq(names(&f, ""), "a.txt|l");

    /* Now pointing outside the root: the row goes. */
    ck_assert_int_eq(unlink(ut_path(f.root, "l")), 0);
    put_link(&f, "l", "../outside.txt");
    fx_scan(&f);
    ck_assert_str_eq(names(&f, ""), "a.txt");
    ck_assert_int_eq(f.s.removed, 1);

    /* A symlinked root is fine: paths are resolved against its target. */
    ck_assert_int_eq(symlink(f.root, ut_path(f.base, "root-link")), 0);
    f.o.root = ut_path(f.base, "root-link");
    ck_assert_int_eq(unlink(ut_path(f.root, "l")), 0);
    put_link(&f, "l", "a.txt");
    fx_scan(&f);
    ck_assert_str_eq(names(&f, ""), "a.txt|l");
    assert_hashes(row(&f, "", "l"), MD5_SHA256, "a");
}
END_TEST

START_TEST(dir_replaced_by_file)
{
    fx_t f;

    fx_init(&f);
    put_dir(&f, "x");
    put_file(&f, "x/a.txt", "a");
    put_dir(&f, "x/y");
    put_file(&f, "x/y/b.txt", "b");
    put_file(&f, "z", "z");
    fx_scan(&f);
    ck_assert_str_eq(dirs(&f), "|x|x/y");

    ck_assert_int_eq(ut_rmtree(ut_path(f.root, "x")), 0);
    put_file(&f, "x", "now a file");
    ck_assert_int_eq(unlink(ut_path(f.root, "z")), 0);
    put_dir(&f, "z");
    put_file(&f, "z/in.txt", "in");
    fx_scan(&f);
    ck_assert_str_eq(dirs(&f), "|z");
    ck_assert_str_eq(names(&f, ""), "x");
    ck_assert_str_eq(names(&f, "z"), "in.txt");
    ck_assert_int_eq(count(&f), 2);
    assert_hashes(row(&f, "", "x"), MD5_SHA256, "now a file");
}
END_TEST

START_TEST(hash_mask)
{
    fx_t f;
    rs_item_t *r;

    fx_init(&f);
    put_file(&f, "a.txt", "abc");
    f.o.hashes = 0;
    fx_scan(&f);
    ck_assert_int_eq(f.s.hashed, 0);
    ck_assert_int_eq(f.s.listed, 1);
    r = row(&f, "", "a.txt");
    assert_hashes(r, 0, "abc");
    assert_stat(&f, r, "a.txt");
    fx_scan(&f);
    ck_assert_int_eq(f.s.written, 0);

    /* More digests wanted: the file is read again. */
    f.o.hashes = RS_HASH_SHA1 | RS_HASH_SHA512;
    fx_scan(&f);
    ck_assert_int_eq(f.s.written, 1);
    ck_assert_int_eq(f.s.hashed, 3);
    assert_hashes(row(&f, "", "a.txt"), RS_HASH_SHA1 | RS_HASH_SHA512, "abc");
    fx_scan(&f);
    ck_assert_int_eq(f.s.written, 0);
    ck_assert_int_eq(f.s.hashed, 0);
}
END_TEST

START_TEST(missing_root)
{
    fx_t f;

    fx_init(&f);
    put_file(&f, "a.txt", "a");
    fx_scan(&f);
    ck_assert_int_eq(count(&f), 1);
    f.o.root = ut_path(f.base, "no-such-root");
    /* Nothing is emptied: the scan fails with the cause. */
    ck_assert_int_eq(rs_scan_set(f.st, &f.o, ut_pool, &f.s), ENOENT);
    ck_assert_int_eq(count(&f), 1);
    ck_assert_int_ge(f.ul.nerr, 1);
    ck_assert_int_ge(ut_log_count(&f.ul, "no-such-root"), 1);
}
END_TEST

START_TEST(sets_are_separate)
{
    fx_t f;
    const char *other;

    fx_init(&f);
    put_file(&f, "a.txt", "a");
    fx_scan(&f);
    other = ut_path(f.base, "other");
    ut_mkdir(other);
    ut_write_str(ut_path(other, "b.txt"), "b");
    ut_write_str(ut_path(other, "c.txt"), "c");
    f.o.set = "t";
    f.o.root = other;
    fx_scan(&f);
    ck_assert_int_eq(count(&f), 2);
    ck_assert_int_eq(f.s.removed, 0);
    f.o.set = "s";
    ck_assert_int_eq(count(&f), 1);
    ck_assert_str_eq(names(&f, ""), "a.txt");
}
END_TEST

typedef struct {
    int calls;
    apr_int64_t last;
} progress_t;

static void progress_cb(void *baton, apr_int64_t files)
{
    progress_t *pr = baton;
    pr->calls++;
    ck_assert_int_ge(files, pr->last);
    pr->last = files;
}

START_TEST(progress)
{
    fx_t f;
    progress_t pr = { 0, 0 };
    int i;

    fx_init(&f);
    for (i = 0; i < 30; i++) {
        put_file(&f, apr_psprintf(ut_pool, "f%02d", i), "x");
    }
    f.o.progress = progress_cb;
    f.o.progress_baton = &pr;
    fx_scan(&f);
    ck_assert_int_ge(pr.calls, 1);
    ck_assert_int_eq(pr.last, 30);
    ck_assert_int_eq(f.s.files, 30);
}
END_TEST

/* Read errors can only be tested without root's privileges: as root, drop
 * to "nobody" inside the (forked) test process. */
static int unprivileged(const char *dir)
{
    if (geteuid() != 0) {
        return 1;
    }
    if (!ut_forking) {
        return 0;
    }
    ck_assert_int_eq(chown(dir, 65534, 65534), 0);
    ck_assert_int_eq(setgroups(0, NULL), 0);
    ck_assert_int_eq(setgid(65534), 0);
    ck_assert_int_eq(setuid(65534), 0);
    ck_assert_int_ne(geteuid(), 0);
    /* Keep the process traceable (AddressSanitizer's leak check). */
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    return 1;
}

START_TEST(unreadable)
{
    fx_t f;
    const char *base = ut_tempdir("unreadable");
    rs_item_t *r;
    int warned;

    if (!unprivileged(base)) {
        /* Running as root without CK_FORK: root reads every file. */
        return;
    }
    memset(&f, 0, sizeof(f));
    f.base = base;
    f.root = ut_path(base, "root");
    ut_mkdir(f.root);
    ck_assert_int_eq(
        rs_schema_open(&f.st, ut_pool, "sqlite3", ut_path(base, "state.db"), ut_log_init(&f.ul)),
        APR_SUCCESS);
    f.o.set = "s";
    f.o.root = f.root;
    f.o.hashes = MD5_SHA256;
    f.o.cfg = "cfg1";
    f.o.log = &f.ul.logger;

    put_file(&f, "ok.txt", "ok");
    put_file(&f, "secret.txt", "secret");
    ck_assert_int_eq(chmod(ut_path(f.root, "secret.txt"), 0), 0);
    put_dir(&f, "locked");
    put_file(&f, "locked/x.txt", "x");
    ck_assert_int_eq(chmod(ut_path(f.root, "locked"), 0), 0);
    fx_scan(&f);

    ck_assert_int_eq(f.s.files, 2);
    ck_assert_int_eq(f.s.listed, 1);
    ck_assert_int_eq(count(&f), 1);
    r = row(&f, "", "secret.txt");
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->listed, 0);
    ck_assert_ptr_null(r->hash[0]);
    ck_assert_ptr_null(r->hash[2]);
    warned = ut_log_count(&f.ul, "secret.txt");
    ck_assert_int_eq(warned, 1);
    ck_assert_int_ge(ut_log_count(&f.ul, "locked"), 1);
    ck_assert_str_eq(names(&f, "locked"), "");

    /* Logged once per version: an unchanged unreadable file is quiet. */
    fx_scan(&f);
    ck_assert_int_eq(f.s.written, 0);
    ck_assert_int_eq(ut_log_count(&f.ul, "secret.txt"), 1);

    /* Readable again (ctime changes): listed with digests. */
    pause_ms(20);
    ck_assert_int_eq(chmod(ut_path(f.root, "secret.txt"), 0644), 0);
    fx_scan(&f);
    ck_assert_int_eq(f.s.written, 1);
    ck_assert_int_eq(f.s.listed, 2);
    ck_assert_int_eq(count(&f), 2);
    assert_hashes(row(&f, "", "secret.txt"), MD5_SHA256, "secret");

    /* Unreadable after having been listed. */
    pause_ms(20);
    ck_assert_int_eq(chmod(ut_path(f.root, "ok.txt"), 0), 0);
    fx_scan(&f);
    ck_assert_int_eq(count(&f), 1);
    ck_assert_int_eq(row(&f, "", "ok.txt")->listed, 0);
    ck_assert_ptr_null(row(&f, "", "ok.txt")->hash[0]);
    ck_assert_int_eq(ut_log_count(&f.ul, "ok.txt"), 1);
}
END_TEST

/* A defer callback: mode 0 "not ready", 1 digests for the version it was
 * told to expect, 2 a failed read. */
typedef struct {
    int mode, calls;
    const char *expect_path;
    off_t expect_size;
    int rc;
} defer_t;

static int defer_cb(void *baton, const char *relpath, const char *path, const struct stat *sb,
                    rs_scan_digest_t *out)
{
    defer_t *d = baton;
    d->calls++;
    ck_assert_str_eq(relpath, "big");
    ck_assert_str_eq(path, d->expect_path);
    ck_assert_int_eq(sb->st_size, d->expect_size);
    if (d->mode == 0) {
        return 0;
    }
    if (d->mode == 2) {
        out->rc = EACCES;
        return 1;
    }
    strcpy(out->hex[0], "00112233445566778899aabbccddeeff");
    return 1; /* hex[2] (sha-256) left "": no digest */
}

/* Large files are left to the defer callback: not written while it is
 * not ready (a changed file keeps its previous row), written with its
 * digests once it is. */
START_TEST(defer_large)
{
    fx_t f;
    defer_t d;
    char big[2000];
    rs_item_t *r;

    fx_init(&f);
    memset(&d, 0, sizeof(d));
    memset(big, 'x', sizeof(big));
    put_file(&f, "small", "tiny");
    ut_write(ut_path(f.root, "big"), big, sizeof(big));
    d.expect_path = ut_path(f.root, "big");
    d.expect_size = sizeof(big);
    f.o.defer = defer_cb;
    f.o.defer_baton = &d;
    f.o.defer_size = 1000;
    fx_scan(&f);
    ck_assert_int_eq(d.calls, 1);
    ck_assert_int_eq(f.s.deferred, 1);
    ck_assert_int_eq(f.s.files, 2);
    ck_assert_ptr_nonnull(row(&f, "", "small"));
    ck_assert_ptr_null(row(&f, "", "big"));

    d.mode = 1;
    fx_scan(&f);
    ck_assert_int_eq(f.s.deferred, 0);
    ck_assert_int_eq(f.s.hashed, 0);
    r = row(&f, "", "big");
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->listed, 1);
    ck_assert_str_eq(r->hash[0], "00112233445566778899aabbccddeeff");
    ck_assert_ptr_null(r->hash[2]);

    /* Changed: the previous row stays while the new digests are not ready. */
    big[0] = 'y';
    ut_write(ut_path(f.root, "big"), big, sizeof(big));
    {
        struct timespec ts[2] = { { 0, UTIME_OMIT }, { 1000000, 0 } };
        ck_assert_int_eq(utimensat(AT_FDCWD, ut_path(f.root, "big"), ts, 0), 0);
    }
    d.mode = 0;
    fx_scan(&f);
    ck_assert_int_eq(f.s.deferred, 1);
    ck_assert_int_eq(row(&f, "", "big")->mtime_ns, r->mtime_ns);

    /* A failed read: kept unlisted, like a file that cannot be read here. */
    d.mode = 2;
    fx_scan(&f);
    ck_assert_int_eq(row(&f, "", "big")->listed, 0);
    ck_assert_int_eq(row(&f, "", "big")->mtime_ns, (apr_int64_t)1000000 * 1000000000);

    /* Below the size, or without a callback: hashed in the scan. */
    f.o.defer_size = 4000;
    big[0] = 'z';
    ut_write(ut_path(f.root, "big"), big, sizeof(big));
    d.calls = 0;
    fx_scan(&f);
    ck_assert_int_eq(d.calls, 0);
    ck_assert_int_eq(f.s.hashed, 2000);
    ck_assert_int_eq(row(&f, "", "big")->listed, 1);
}
END_TEST

Suite *scan_suite(void)
{
    Suite *s = suite_create("rs_scan");
    TCase *tc = ut_tcase("scan", 60);
    tcase_add_test(tc, first_scan);
    tcase_add_test(tc, first_scan_same_as_full_path);
    tcase_add_test(tc, rescan_unchanged);
    tcase_add_test(tc, rescan_changes);
    tcase_add_test(tc, same_size_same_mtime_new_inode);
    tcase_add_test(tc, metadata_change_keeps_hashes);
    tcase_add_test(tc, check_callback);
    tcase_add_test(tc, dotfiles);
    tcase_add_test(tc, excludes);
    tcase_add_test(tc, symlink_retarget);
    tcase_add_test(tc, dir_replaced_by_file);
    tcase_add_test(tc, hash_mask);
    tcase_add_test(tc, missing_root);
    tcase_add_test(tc, sets_are_separate);
    tcase_add_test(tc, progress);
    tcase_add_test(tc, unreadable);
    tcase_add_test(tc, defer_large);
    tcase_add_test(tc, pipe_needs_thread_safe_allocators);
    tcase_add_test(tc, readahead_same_result);
    suite_add_tcase(s, tc);
    return s;
}
