/* SPDX-License-Identifier: Apache-2.0 */
/* test_scan_changes.c - rs_scan: the on_change notifications of a scan,
 * and rs_recorder, which turns them into journal records and entries */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_cdump.h"
#include "rs_hash.h"
#include "rs_entry.h"
#include "rs_journal.h"
#include "rs_links.h"
#include "rs_recorder.h"
#include "rs_ring.h"
#include "rs_scan.h"
#include "rs_inventory.h"
#include "rs_schema.h"

#define MD5_SHA256 (RS_HASH_MD5 | RS_HASH_SHA256)

typedef struct {
    apr_array_header_t *ev;    /* char * "C path" */
    apr_array_header_t *items; /* rs_item_t copies, same order */
    int fail_at;               /* > 0: fail the n-th call */
    int calls;
    const char *deny;   /* check callback denies this relpath */
    const char *gz_enc; /* check callback's encoding of *.gz files */
    rs_recorder_t *rec; /* non-NULL: record the change too */
} changes_t;

typedef struct {
    const char *base, *root;
    rs_db_t *st;
    ut_log_t ul;
    rs_scan_opts_t o;
    rs_scan_stats_t s;
    apr_array_header_t *ex;
    changes_t c;
} fx_t;

static apr_status_t on_change(void *baton, int change, const rs_item_t *it)
{
    changes_t *c = baton;
    rs_item_t *copy;
    int i;
    static const char letters[] = "?CUD";

    c->calls++;
    if (c->fail_at && c->calls == c->fail_at) {
        return APR_EGENERAL;
    }
    ck_assert_int_ge(change, RS_CHANGE_CREATED);
    ck_assert_int_le(change, RS_CHANGE_DELETED);
    APR_ARRAY_PUSH(c->ev, const char *) =
        apr_psprintf(ut_pool, "%c %s%s%s", letters[change], it->dir, *it->dir ? "/" : "", it->name);
    copy = apr_array_push(c->items);
    *copy = *it;
    copy->dir = apr_pstrdup(ut_pool, it->dir);
    copy->name = apr_pstrdup(ut_pool, it->name);
    copy->type = it->type ? apr_pstrdup(ut_pool, it->type) : NULL;
    copy->encoding = it->encoding ? apr_pstrdup(ut_pool, it->encoding) : NULL;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        copy->hash[i] = it->hash[i] ? apr_pstrdup(ut_pool, it->hash[i]) : NULL;
    }
    return c->rec ? rs_recorder_record(c->rec, change, it) : APR_SUCCESS;
}

static int check_cb(void *baton, apr_pool_t *p, const char *relpath, int flags,
                    rs_scan_media_t *media)
{
    int is_dir = flags & RS_SCAN_CHECK_DIR;
    const changes_t *c = baton;
    (void)p;
    if (c->deny && !strcmp(c->deny, relpath)) {
        return 0;
    }
    if (!is_dir) {
        apr_size_t n = strlen(relpath);
        media->type = "text/plain";
        media->encoding = n > 3 && !strcmp(relpath + n - 3, ".gz") ? c->gz_enc : NULL;
    }
    return 1;
}

static void fx_init(fx_t *f)
{
    memset(f, 0, sizeof(*f));
    f->base = ut_tempdir("scanchg");
    f->root = ut_path(f->base, "root");
    ut_mkdir(f->root);
    ck_assert_int_eq(rs_schema_open(&f->st, ut_pool, "sqlite3", ut_path(f->base, "state.db"),
                                    ut_log_init(&f->ul)),
                     APR_SUCCESS);
    f->ex = apr_array_make(ut_pool, 4, sizeof(const char *));
    f->c.ev = apr_array_make(ut_pool, 8, sizeof(const char *));
    f->c.items = apr_array_make(ut_pool, 8, sizeof(rs_item_t));
    f->o.set = "s";
    f->o.root = f->root;
    f->o.hashes = MD5_SHA256;
    f->o.excludes = f->ex;
    f->o.cfg = "cfg1";
    f->o.check = check_cb;
    f->o.check_baton = &f->c;
    f->o.on_change = on_change;
    f->o.change_baton = &f->c;
    f->o.log = &f->ul.logger;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Scan, and return the notifications sorted and joined with "|". */
static const char *scan(fx_t *f)
{
    apr_array_header_t *ev;
    f->c.ev->nelts = 0;
    f->c.items->nelts = 0;
    memset(&f->s, 0x55, sizeof(f->s));
    ck_assert_int_eq(rs_scan_set(f->st, &f->o, ut_pool, &f->s), APR_SUCCESS);
    ev = apr_array_copy(ut_pool, f->c.ev);
    qsort(ev->elts, (size_t)ev->nelts, sizeof(char *), cmp_str);
    return apr_array_pstrcat(ut_pool, ev, '|');
}

static const rs_item_t *item(fx_t *f, const char *name)
{
    int i;
    for (i = 0; i < f->c.items->nelts; i++) {
        const rs_item_t *it = &APR_ARRAY_IDX(f->c.items, i, rs_item_t);
        if (!strcmp(it->name, name)) {
            return it;
        }
    }
    ck_abort_msg("no notification for %s", name);
    return NULL;
}

static void put_file(fx_t *f, const char *rel, const char *content)
{
    ut_write_str(ut_path(f->root, rel), content);
}

static void assert_md5(const rs_item_t *it, const char *content)
{
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    rs_hash_buf(content, strlen(content), MD5_SHA256, hex);
    ck_assert_ptr_nonnull(it->hash[0]);
    ck_assert_str_eq(it->hash[0], hex[0]);
    ck_assert_ptr_nonnull(it->hash[2]);
    ck_assert_str_eq(it->hash[2], hex[2]);
    ck_assert_int_eq(it->size, (apr_int64_t)strlen(content));
}

static void set_mtime(fx_t *f, const char *rel, time_t sec)
{
    struct timespec ts[2] = { { sec, 0 }, { sec, 0 } };
    ck_assert_int_eq(utimensat(AT_FDCWD, ut_path(f->root, rel), ts, 0), 0);
}

START_TEST(created_then_quiet)
{
    fx_t f;
    const rs_item_t *it;

    fx_init(&f);
    put_file(&f, "a.txt", "abc");
    put_file(&f, ".hidden", "h");
    put_file(&f, "x.tmp", "t");
    ut_mkdir(ut_path(f.root, "sub"));
    put_file(&f, "sub/b.txt", "bb");
    put_file(&f, "sub/denied.txt", "no");
    APR_ARRAY_PUSH(f.ex, const char *) = "*.tmp";
    f.c.deny = "sub/denied.txt";
    ck_assert_str_eq(scan(&f), "C a.txt|C sub/b.txt");
    it = item(&f, "a.txt");
    ck_assert_str_eq(it->dir, "");
    ck_assert_int_eq(it->listed, 1);
    ck_assert_str_eq(it->type, "text/plain");
    assert_md5(it, "abc");
    ck_assert_str_eq(item(&f, "b.txt")->dir, "sub");

    /* Nothing changed: nothing reported. */
    ck_assert_str_eq(scan(&f), "");
    ck_assert_int_eq(f.s.written, 0);
}
END_TEST

/* The content coding a check gives is kept in the row and reported: a
 * new configuration (fingerprint) that changes it makes the file's next
 * decision an update carrying it, and leaves the others quiet. */
START_TEST(encoding_change_is_an_update)
{
    fx_t f;
    rs_item_t *row = NULL;

    fx_init(&f);
    put_file(&f, "a.txt.gz", "abc");
    put_file(&f, "b.txt", "b");
    ck_assert_str_eq(scan(&f), "C a.txt.gz|C b.txt");
    ck_assert_ptr_null(item(&f, "a.txt.gz")->encoding);

    /* AddEncoding gzip .gz, say: a new fingerprint, every file decided again */
    f.o.cfg = "cfg2";
    f.c.gz_enc = "gzip";
    ck_assert_str_eq(scan(&f), "U a.txt.gz");
    ck_assert_str_eq(item(&f, "a.txt.gz")->encoding, "gzip");
    ck_assert_str_eq(item(&f, "a.txt.gz")->type, "text/plain");
    assert_md5(item(&f, "a.txt.gz"), "abc");
    ck_assert_int_eq(rs_inventory_get(f.st, ut_pool, "s", "", "a.txt.gz", &row), APR_SUCCESS);
    ck_assert_ptr_nonnull(row);
    ck_assert_str_eq(row->encoding, "gzip");
    ck_assert_str_eq(row->cfg, "cfg2");
    ck_assert_str_eq(scan(&f), "");

    /* and back: the encoding goes */
    f.o.cfg = "cfg3";
    f.c.gz_enc = NULL;
    ck_assert_str_eq(scan(&f), "U a.txt.gz");
    ck_assert_ptr_null(item(&f, "a.txt.gz")->encoding);
}
END_TEST

START_TEST(chmod_only_is_quiet)
{
    fx_t f;

    fx_init(&f);
    put_file(&f, "a.txt", "abc");
    put_file(&f, "b.txt", "b");
    ck_assert_str_eq(scan(&f), "C a.txt|C b.txt");
    /* A new ctime, same content and mtime: re-examined, not reported. */
    ck_assert_int_eq(chmod(ut_path(f.root, "a.txt"), 0640), 0);
    ck_assert_str_eq(scan(&f), "");
    ck_assert_int_eq(f.s.written, 1);
    /* A new configuration fingerprint re-checks everything: still quiet. */
    f.o.cfg = "cfg2";
    ck_assert_str_eq(scan(&f), "");
    ck_assert_int_eq(f.s.written, 2);
}
END_TEST

START_TEST(updated)
{
    fx_t f;
    const rs_item_t *it;

    fx_init(&f);
    put_file(&f, "a.txt", "abc");
    put_file(&f, "b.txt", "same");
    put_file(&f, "c.txt", "c");
    set_mtime(&f, "a.txt", 1500000000);
    set_mtime(&f, "b.txt", 1500000000);
    ck_assert_str_eq(scan(&f), "C a.txt|C b.txt|C c.txt");

    /* New content (same mtime, another size), and a new mtime only. */
    put_file(&f, "a.txt", "wxyz");
    set_mtime(&f, "a.txt", 1500000000);
    set_mtime(&f, "b.txt", 1500000100);
    ck_assert_str_eq(scan(&f), "U a.txt|U b.txt");
    it = item(&f, "a.txt");
    assert_md5(it, "wxyz");
    ck_assert_int_eq(it->mtime_ns, 1500000000LL * 1000000000);
    ck_assert_int_eq(item(&f, "b.txt")->mtime_ns, 1500000100LL * 1000000000);
    ck_assert_str_eq(scan(&f), "");
}
END_TEST

START_TEST(deleted_files_and_dirs)
{
    fx_t f;
    const rs_item_t *it;

    fx_init(&f);
    put_file(&f, "a.txt", "abc");
    put_file(&f, "keep.txt", "k");
    ut_mkdir(ut_path(f.root, "sub"));
    put_file(&f, "sub/b.txt", "bb");
    put_file(&f, "sub/hidden-from-check", "n");
    ut_mkdir(ut_path(f.root, "sub/deep"));
    put_file(&f, "sub/deep/c.txt", "ccc");
    f.c.deny = "sub/hidden-from-check";
    ck_assert_str_eq(scan(&f), "C a.txt|C keep.txt|C sub/b.txt|C sub/deep/c.txt");

    /* A file goes: reported with its last stored row. */
    ck_assert_int_eq(unlink(ut_path(f.root, "a.txt")), 0);
    ck_assert_str_eq(scan(&f), "D a.txt");
    it = item(&f, "a.txt");
    assert_md5(it, "abc");
    ck_assert_int_eq(it->listed, 1);

    /* A whole tree vanishes: its listed files, not the unlisted one. */
    ck_assert_int_eq(ut_rmtree(ut_path(f.root, "sub")), 0);
    ck_assert_str_eq(scan(&f), "D sub/b.txt|D sub/deep/c.txt");
    assert_md5(item(&f, "c.txt"), "ccc");
    ck_assert_str_eq(scan(&f), "");
}
END_TEST

/* A root that cannot be opened changes nothing: the scan fails with the
 * cause, no file is reported deleted, the rows stay. */
START_TEST(missing_root)
{
    fx_t f;
    apr_int64_t n = -1;

    fx_init(&f);
    put_file(&f, "a.txt", "abc");
    ut_mkdir(ut_path(f.root, "sub"));
    put_file(&f, "sub/b.txt", "bb");
    put_file(&f, "sub/no", "n");
    f.c.deny = "sub/no";
    ck_assert_str_eq(scan(&f), "C a.txt|C sub/b.txt");
    f.o.root = ut_path(f.base, "no-such-root");
    f.c.ev->nelts = 0;
    ck_assert_int_eq(rs_scan_set(f.st, &f.o, ut_pool, &f.s), ENOENT);
    ck_assert_int_eq(f.c.ev->nelts, 0);
    ck_assert_int_eq(f.s.removed, 0);
    ck_assert_int_eq(rs_inventory_count(f.st, "s", &n), APR_SUCCESS);
    ck_assert_int_eq(n, 2);
    ck_assert_int_ge(f.ul.nerr, 1);
    /* Back: nothing changed. */
    f.o.root = f.root;
    ck_assert_str_eq(scan(&f), "");
}
END_TEST

/* Write n files f<i>.txt in dir (relative, "" = the root). */
static void put_files(fx_t *f, const char *dir, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        put_file(f, apr_psprintf(ut_pool, "%s%sf%d.txt", dir, *dir ? "/" : "", i), "x");
    }
}

static apr_int64_t journal_count(rs_journal_t *j)
{
    apr_array_header_t *recs;
    ck_assert_int_eq(rs_journal_records(j, ut_pool, "s", 1, -1, 1000, &recs), APR_SUCCESS);
    return recs->nelts;
}

/* The mass-deletion guard of a full scan: more deletions than allowed
 * commit nothing from the first deletion on (rows and journal records
 * alike), and report the full count; without the guard they go. */
START_TEST(mass_deletion_held)
{
    fx_t f;
    rs_journal_t *j;
    rs_entry_opts_t eo;
    apr_int64_t n = -1;

    fx_init(&f);
    ck_assert_int_eq(rs_journal_open(&j, f.st, ut_pool), APR_SUCCESS);
    memset(&eo, 0, sizeof(eo));
    eo.url_base = "http://example.org/";
    f.c.rec = rs_recorder_create(ut_pool, j, "s", &eo, 0);
    put_file(&f, "keep.txt", "k");
    ut_mkdir(ut_path(f.root, "sub"));
    put_files(&f, "sub", 8);
    scan(&f);
    ck_assert_int_eq(journal_count(j), 9);
    ck_assert_int_eq(ut_rmtree(ut_path(f.root, "sub")), 0);
    put_file(&f, "new.txt", "n");
    f.o.max_deleted = 5;
    ck_assert_int_eq(rs_scan_set(f.st, &f.o, ut_pool, &f.s), RS_SCAN_EMASSDEL);
    ck_assert_int_eq(f.s.deleted, 8);
    ck_assert_int_eq(rs_inventory_count(f.st, "s", &n), APR_SUCCESS);
    ck_assert_int_eq(n, 9);
    ck_assert_int_eq(journal_count(j), 9);
    /* Exactly at the limit: allowed. */
    f.o.max_deleted = 8;
    ck_assert_str_eq(scan(&f), "C new.txt|D sub/f0.txt|D sub/f1.txt|D sub/f2.txt|"
                               "D sub/f3.txt|D sub/f4.txt|D sub/f5.txt|D sub/f6.txt|D sub/f7.txt");
    ck_assert_int_eq(f.s.deleted, 8);
    ck_assert_int_eq(journal_count(j), 18);
}
END_TEST

/* The same guard on a reconciliation of targets (one inotify batch). */
START_TEST(mass_deletion_targets)
{
    fx_t f;
    rs_scan_target_t t;
    apr_int64_t n = -1;
    apr_array_header_t *names = apr_array_make(ut_pool, 1, sizeof(const char *));

    fx_init(&f);
    ut_mkdir(ut_path(f.root, "sub"));
    put_files(&f, "sub", 6);
    put_files(&f, "", 2);
    scan(&f);
    ck_assert_int_eq(ut_rmtree(ut_path(f.root, "sub")), 0);
    APR_ARRAY_PUSH(names, const char *) = "sub";
    t.dir = "";
    t.names = names;
    f.o.max_deleted = 4;
    ck_assert_int_eq(rs_scan_targets(f.st, &f.o, ut_pool, &t, 1, &f.s), RS_SCAN_EMASSDEL);
    ck_assert_int_eq(f.s.deleted, 6);
    ck_assert_int_eq(rs_inventory_count(f.st, "s", &n), APR_SUCCESS);
    ck_assert_int_eq(n, 8);
    f.o.max_deleted = 0;
    ck_assert_int_eq(rs_scan_targets(f.st, &f.o, ut_pool, &t, 1, &f.s), APR_SUCCESS);
    ck_assert_int_eq(f.s.deleted, 6);
    ck_assert_int_eq(rs_inventory_count(f.st, "s", &n), APR_SUCCESS);
    ck_assert_int_eq(n, 2);
}
END_TEST

START_TEST(listed_unlisted_transitions)
{
    fx_t f;

    fx_init(&f);
    put_file(&f, "a.txt", "abc");
    put_file(&f, "b.txt", "b");
    ut_mkdir(ut_path(f.root, "d"));
    put_file(&f, "d/x.txt", "x");
    ck_assert_str_eq(scan(&f), "C a.txt|C b.txt|C d/x.txt");

    /* The check now denies a.txt: listed -> unlisted is a deletion. */
    f.c.deny = "a.txt";
    f.o.cfg = "cfg2";
    ck_assert_str_eq(scan(&f), "D a.txt");
    assert_md5(item(&f, "a.txt"), "abc");
    ck_assert_str_eq(scan(&f), "");
    /* And back: unlisted -> listed is a creation. */
    f.c.deny = NULL;
    f.o.cfg = "cfg3";
    ck_assert_str_eq(scan(&f), "C a.txt");
    assert_md5(item(&f, "a.txt"), "abc");

    /* A directory no longer served: its files are deleted. */
    f.c.deny = "d";
    f.o.cfg = "cfg4";
    ck_assert_str_eq(scan(&f), "D d/x.txt");

    /* A new exclude pattern: deleted; removed again: created. */
    f.c.deny = NULL;
    f.o.cfg = "cfg5";
    ck_assert_str_eq(scan(&f), "C d/x.txt");
    APR_ARRAY_PUSH(f.ex, const char *) = "b.txt";
    ck_assert_str_eq(scan(&f), "D b.txt");
    f.ex->nelts = 0;
    ck_assert_str_eq(scan(&f), "C b.txt");
}
END_TEST

START_TEST(file_becomes_dir)
{
    fx_t f;

    fx_init(&f);
    put_file(&f, "a", "abc");
    ck_assert_str_eq(scan(&f), "C a");
    ck_assert_int_eq(unlink(ut_path(f.root, "a")), 0);
    ut_mkdir(ut_path(f.root, "a"));
    put_file(&f, "a/in.txt", "in");
    ck_assert_str_eq(scan(&f), "C a/in.txt|D a");
    ck_assert_int_eq(ut_rmtree(ut_path(f.root, "a")), 0);
    put_file(&f, "a", "again");
    ck_assert_str_eq(scan(&f), "C a|D a/in.txt");
    assert_md5(item(&f, "in.txt"), "in");
}
END_TEST

START_TEST(callback_error_stops_scan)
{
    fx_t f;

    fx_init(&f);
    put_file(&f, "a.txt", "abc");
    put_file(&f, "b.txt", "b");
    f.c.fail_at = 1;
    ck_assert_int_ne(rs_scan_set(f.st, &f.o, ut_pool, &f.s), APR_SUCCESS);
    ck_assert_int_eq(f.c.calls, 1);
}
END_TEST

/* A scan of more writes than the writer thread's queue holds (blocking
 * the walk while it drains): every change reported once, the counts
 * right; a failure of the callback deep into the scan stops it there,
 * with no call after it; the next scan reports the deletions that were
 * not done. */
START_TEST(many_writes_through_the_writer)
{
    fx_t f;
    apr_int64_t n = -1;
    int d;

    fx_init(&f);
    f.o.hashes = RS_HASH_MD5;
    for (d = 0; d < 3; d++) {
        const char *dir = apr_psprintf(ut_pool, "d%d", d);
        ut_mkdir(ut_path(f.root, dir));
        put_files(&f, dir, 3000);
    }
    scan(&f);
    ck_assert_int_eq(f.c.calls, 9000);
    ck_assert_int_eq(f.c.ev->nelts, 9000);
    ck_assert_int_eq(f.s.files, 9000);
    ck_assert_int_eq(f.s.written, 9000);
    ck_assert_int_eq(f.s.listed, 9000);
    ck_assert_int_eq(f.s.removed, 0);
    ck_assert_int_eq(rs_inventory_count(f.st, "s", &n), APR_SUCCESS);
    ck_assert_int_eq(n, 9000);

    /* The files go, their directories stay: the deletions are found by
     * the walk (through the writer), not after it. */
    for (d = 0; d < 3; d++) {
        int i;
        for (i = 0; i < 3000; i++) {
            ck_assert_int_eq(unlink(ut_path(f.root, apr_psprintf(ut_pool, "d%d/f%d.txt", d, i))),
                             0);
        }
    }
    f.c.calls = 0;
    f.c.fail_at = 6000;
    ck_assert_int_eq(rs_scan_set(f.st, &f.o, ut_pool, &f.s), APR_EGENERAL);
    ck_assert_int_eq(f.c.calls, 6000);
    /* A callback's own failure is not the store's: what was written
     * before it stays (the journal's failures are the store's, and roll
     * back). */
    ck_assert_int_eq(rs_inventory_count(f.st, "s", &n), APR_SUCCESS);
    ck_assert_int_eq(n, 3000);

    f.c.calls = 0;
    f.c.fail_at = 0;
    scan(&f);
    ck_assert_int_eq(f.c.calls, 3000);
    ck_assert_int_eq(f.s.deleted, 3000);
    ck_assert_int_eq(f.s.removed, 3000);
    ck_assert_int_eq(rs_inventory_count(f.st, "s", &n), APR_SUCCESS);
    ck_assert_int_eq(n, 0);
}
END_TEST

/* The links hooks of a scan: the events, in order ("R path listed",
 * "W path" / "G path" for links_done), and the links links_row gives. */
typedef struct {
    fx_t *f;
    apr_array_header_t *ev;
} links_t;

static apr_status_t links_row(void *baton, rs_item_t *it, int was_listed)
{
    links_t *l = baton;
    const char *path = apr_pstrcat(ut_pool, it->dir, *it->dir ? "/" : "", it->name, NULL);
    APR_ARRAY_PUSH(l->ev, const char *) =
        apr_psprintf(ut_pool, "R %s %d%d", path, was_listed, it->listed);
    it->links = it->listed ? apr_pstrcat(ut_pool, "links of ", path, NULL) : NULL;
    return APR_SUCCESS;
}

static apr_status_t links_done(void *baton, const char *dir, const char *name, int gone)
{
    links_t *l = baton;
    rs_item_t *row = NULL;

    /* Called once the row is in the store (or gone from it). */
    ck_assert_int_eq(rs_inventory_get(l->f->st, ut_pool, "s", dir, name, &row), APR_SUCCESS);
    ck_assert(gone ? row == NULL : row != NULL);
    APR_ARRAY_PUSH(l->ev, const char *) =
        apr_psprintf(ut_pool, "%c %s%s%s", gone ? 'G' : 'W', dir, *dir ? "/" : "", name);
    return APR_SUCCESS;
}

static const char *links_events(links_t *l)
{
    const char *s = apr_array_pstrcat(ut_pool, l->ev, '|');
    l->ev->nelts = 0;
    return s;
}

/* Every row a scan writes gets its links from links_row first (the row
 * and the journal record carry them; a deleted record has none), and
 * links_done follows every written or deleted listed row, the full
 * scan's (through its writer), a directory's rows that went, and
 * targets'. */
START_TEST(links_hooks)
{
    fx_t f;
    links_t l;
    rs_journal_t *j;
    rs_entry_opts_t eo;
    rs_item_t *row = NULL;
    rs_scan_target_t t;
    apr_array_header_t *recs, *names = apr_array_make(ut_pool, 1, sizeof(const char *));

    fx_init(&f);
    l.f = &f;
    l.ev = apr_array_make(ut_pool, 8, sizeof(const char *));
    f.o.links_row = links_row;
    f.o.links_done = links_done;
    f.o.links_baton = &l;
    ck_assert_int_eq(rs_journal_open(&j, f.st, ut_pool), APR_SUCCESS);
    memset(&eo, 0, sizeof(eo));
    eo.url_base = "http://example.org/";
    f.c.rec = rs_recorder_create(ut_pool, j, "s", &eo, 0);
    put_file(&f, "a.txt", "abc");
    ut_mkdir(ut_path(f.root, "sub"));
    put_file(&f, "sub/b.txt", "b");
    put_file(&f, "sub/no", "n");
    f.c.deny = "sub/no";
    ck_assert_str_eq(scan(&f), "C a.txt|C sub/b.txt");
    ck_assert_str_eq(links_events(&l),
                     "R a.txt 01|W a.txt|R sub/b.txt 01|W sub/b.txt|R sub/no 00|W sub/no");
    ck_assert_int_eq(rs_inventory_get(f.st, ut_pool, "s", "sub", "b.txt", &row), APR_SUCCESS);
    ck_assert_str_eq(row->links, "links of sub/b.txt");
    ck_assert_int_eq(rs_inventory_get(f.st, ut_pool, "s", "sub", "no", &row), APR_SUCCESS);
    ck_assert_ptr_null(row->links);
    ck_assert_str_eq(scan(&f), "");
    ck_assert_str_eq(links_events(&l), "");

    /* A target: the file changed. */
    put_file(&f, "a.txt", "abcd");
    APR_ARRAY_PUSH(names, const char *) = "a.txt";
    t.dir = "";
    t.names = names;
    ck_assert_int_eq(rs_scan_targets(f.st, &f.o, ut_pool, &t, 1, &f.s), APR_SUCCESS);
    ck_assert_str_eq(links_events(&l), "R a.txt 11|W a.txt");
    /* A target: the file went. */
    ck_assert_int_eq(unlink(ut_path(f.root, "a.txt")), 0);
    ck_assert_int_eq(rs_scan_targets(f.st, &f.o, ut_pool, &t, 1, &f.s), APR_SUCCESS);
    ck_assert_str_eq(links_events(&l), "G a.txt");
    /* A directory went: its listed rows only. */
    ck_assert_int_eq(ut_rmtree(ut_path(f.root, "sub")), 0);
    ck_assert_str_eq(scan(&f), "D sub/b.txt");
    ck_assert_str_eq(links_events(&l), "G sub/b.txt");

    ck_assert_int_eq(rs_journal_records(j, ut_pool, "s", 1, -1, 100, &recs), APR_SUCCESS);
    ck_assert_int_eq(recs->nelts, 5);
    ck_assert_str_eq(APR_ARRAY_IDX(recs, 0, rs_record_t).links, "links of a.txt");
    ck_assert_str_eq(APR_ARRAY_IDX(recs, 2, rs_record_t).links, "links of a.txt");
    ck_assert_int_eq(APR_ARRAY_IDX(recs, 3, rs_record_t).change, RS_CHANGE_DELETED);
    ck_assert_ptr_null(APR_ARRAY_IDX(recs, 3, rs_record_t).links);
    ck_assert_ptr_null(APR_ARRAY_IDX(recs, 4, rs_record_t).links);
}
END_TEST

/* rs_scan_opts_t.links_scan: "S path" per call, links set as links_row;
 * a file named "*.held" is held until the next directory ("E path" as it
 * is handed back, with its links then), and an "E" for the last call. */
typedef struct {
    links_t l;
    apr_array_header_t *held; /* rs_item_t */
    const char *dir;
} holder_t;

static int links_scan(void *baton, rs_item_t *it, rs_scan_emit_fn *emit, void *emit_baton)
{
    holder_t *h = baton;
    const char *path;
    rs_item_t *r;
    int i;

    if (!it || (h->held->nelts && strcmp(h->dir, it->dir))) {
        for (i = 0; i < h->held->nelts; i++) {
            r = &APR_ARRAY_IDX(h->held, i, rs_item_t);
            APR_ARRAY_PUSH(h->l.ev, const char *) = apr_pstrcat(ut_pool, "E ", r->name, NULL);
            r->links = apr_pstrcat(ut_pool, "held links of ", r->name, NULL);
            emit(emit_baton, r);
        }
        h->held->nelts = 0;
        if (!it) {
            APR_ARRAY_PUSH(h->l.ev, const char *) = "E";
            return 0;
        }
    }
    path = apr_pstrcat(ut_pool, it->dir, *it->dir ? "/" : "", it->name, NULL);
    APR_ARRAY_PUSH(h->l.ev, const char *) = apr_pstrcat(ut_pool, "S ", path, NULL);
    it->links = apr_pstrcat(ut_pool, "scanned links of ", path, NULL);
    if (!strstr(it->name, ".held")) {
        return 0;
    }
    h->dir = apr_pstrdup(ut_pool, it->dir);
    /* A copy: the scan's strings go with its call. */
    r = apr_array_push(h->held);
    *r = *it;
    r->dir = h->dir;
    r->name = apr_pstrdup(ut_pool, it->name);
    r->type = it->type ? apr_pstrdup(ut_pool, it->type) : NULL;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        r->hash[i] = it->hash[i] ? apr_pstrdup(ut_pool, it->hash[i]) : NULL;
    }
    return 1;
}

/* links_scan (a first scan's collection of links) is handed every listed
 * row before it is written, and the row carries the links it gives; a
 * row not listed goes without.  A row it holds is counted, written when
 * it hands it back (its next directory, or its last call), with the
 * links it has then.  stats.fresh says whether the set had no row when
 * the scan began; only then is the hook called. */
START_TEST(links_scan_hook)
{
    fx_t f;
    holder_t h;
    rs_item_t *row = NULL;
    const char *ev;

    fx_init(&f);
    h.l.f = &f;
    h.l.ev = apr_array_make(ut_pool, 8, sizeof(const char *));
    h.held = apr_array_make(ut_pool, 2, sizeof(rs_item_t));
    f.o.links_scan = links_scan;
    f.o.links_scan_baton = &h;
    put_file(&f, "a.txt", "abc");
    put_file(&f, "a.held", "abc");
    ut_mkdir(ut_path(f.root, "sub"));
    put_file(&f, "sub/b.txt", "b");
    put_file(&f, "sub/b.held", "b");
    put_file(&f, "sub/no", "n");
    f.c.deny = "sub/no";
    ck_assert_str_eq(scan(&f), "C a.held|C a.txt|C sub/b.held|C sub/b.txt");
    ck_assert_int_eq(f.s.fresh, 1);
    ck_assert_int_eq(f.s.written, 5);
    ck_assert_int_eq(f.s.listed, 4);
    /* Each directory's held row comes back when the next one begins. */
    ev = links_events(&h.l);
    ck_assert_msg(strstr(ev, "S sub/b.held") && strstr(ev, "|E b.held|E") && strstr(ev, "E a.held"),
                  "%s", ev);
    ck_assert_int_lt(strstr(ev, "S a.held") - ev, strstr(ev, "E a.held") - ev);
    ck_assert_int_lt(strstr(ev, "E a.held") - ev, strstr(ev, "S sub/") - ev);
    ck_assert_int_eq(rs_inventory_get(f.st, ut_pool, "s", "sub", "b.txt", &row), APR_SUCCESS);
    ck_assert_str_eq(row->links, "scanned links of sub/b.txt");
    ck_assert_str_eq(item(&f, "b.txt")->links, "scanned links of sub/b.txt");
    ck_assert_int_eq(rs_inventory_get(f.st, ut_pool, "s", "sub", "b.held", &row), APR_SUCCESS);
    ck_assert_str_eq(row->links, "held links of b.held");
    ck_assert_str_eq(item(&f, "b.held")->links, "held links of b.held");
    ck_assert_int_eq(rs_inventory_get(f.st, ut_pool, "s", "", "a.held", &row), APR_SUCCESS);
    ck_assert_str_eq(row->links, "held links of a.held");
    ck_assert_int_eq(rs_inventory_get(f.st, ut_pool, "s", "sub", "no", &row), APR_SUCCESS);
    ck_assert_ptr_null(row->links);
    /* The set has rows: no call. */
    put_file(&f, "c.txt", "c");
    ck_assert_str_eq(scan(&f), "C c.txt");
    ck_assert_int_eq(f.s.fresh, 0);
    ck_assert_str_eq(links_events(&h.l), "");
}
END_TEST

/* The recorder writes journal records in the scan's transaction. */
START_TEST(journal_in_scan_transaction)
{
    fx_t f;
    rs_journal_t *j;
    rs_entry_opts_t eo;
    apr_array_header_t *recs;
    int i;

    fx_init(&f);
    ck_assert_int_eq(rs_journal_open(&j, f.st, ut_pool), APR_SUCCESS);
    memset(&eo, 0, sizeof(eo));
    eo.url_base = "http://example.org/";
    f.c.rec = rs_recorder_create(ut_pool, j, "s", &eo, 0);
    put_file(&f, "a.txt", "abc");
    put_file(&f, "b.txt", "b");
    ck_assert_str_eq(scan(&f), "C a.txt|C b.txt");
    put_file(&f, "a.txt", "abcd");
    ck_assert_int_eq(unlink(ut_path(f.root, "b.txt")), 0);
    ck_assert_str_eq(scan(&f), "D b.txt|U a.txt");

    ck_assert_int_eq(rs_journal_records(j, ut_pool, "s", 1, -1, 100, &recs), APR_SUCCESS);
    ck_assert_int_eq(recs->nelts, 4);
    for (i = 0; i < 4; i++) {
        const rs_record_t *r = &APR_ARRAY_IDX(recs, i, rs_record_t);
        ck_assert_int_eq(r->seq, i + 1);
        if (i < 2) {
            ck_assert_int_eq(r->change, RS_CHANGE_CREATED);
        }
        else if (!strcmp(r->name, "a.txt")) {
            ck_assert_int_eq(r->change, RS_CHANGE_UPDATED);
            ck_assert_int_eq(r->size, 4);
            ck_assert_str_eq(r->type, "text/plain");
        }
        else {
            ck_assert_str_eq(r->name, "b.txt");
            ck_assert_int_eq(r->change, RS_CHANGE_DELETED);
            ck_assert_int_eq(r->size, 1);
            ck_assert_ptr_nonnull(r->hash[0]);
        }
    }
    ck_assert_int_eq(rs_recorder_appended(f.c.rec), 4);
    /* No window asked for: nothing to take. */
    ck_assert_int_eq(rs_recorder_take(f.c.rec, ut_pool, &recs), 0);
    ck_assert_ptr_null(recs);
}
END_TEST

/* The window: the newest `cap` records, oldest first, each with the bytes
 * of its entry; taking empties it; the count says how many were recorded. */
START_TEST(recorder_window)
{
    fx_t f;
    rs_journal_t *j;
    rs_entry_opts_t eo;
    rs_entry_renderer_t *rr;
    apr_array_header_t *recs, *stored;
    char name[32];
    int i;

    fx_init(&f);
    ck_assert_int_eq(rs_journal_open(&j, f.st, ut_pool), APR_SUCCESS);
    memset(&eo, 0, sizeof(eo));
    eo.url_base = "http://example.org/";
    eo.hashes = MD5_SHA256;
    f.c.rec = rs_recorder_create(ut_pool, j, "s", &eo, 20);
    rs_recorder_manifest_paths(f.c.rec); /* as for a set with Change Dumps */
    for (i = 0; i < 50; i++) {
        apr_snprintf(name, sizeof(name), "f%02d", i);
        put_file(&f, name, name);
    }
    scan(&f);
    ck_assert_int_eq(rs_recorder_appended(f.c.rec), 50);
    ck_assert_int_eq(rs_recorder_take(f.c.rec, ut_pool, &recs), 50);
    ck_assert_ptr_nonnull(recs);
    ck_assert_int_eq(recs->nelts, 20);
    ck_assert_int_eq(rs_journal_records(j, ut_pool, "s", 31, -1, 100, &stored), APR_SUCCESS);
    ck_assert_int_eq(stored->nelts, 20);
    rr = rs_entry_renderer_create(ut_pool, &eo);
    for (i = 0; i < 20; i++) {
        const rs_record_t *w = &APR_ARRAY_IDX(recs, i, rs_record_t);
        const rs_record_t *s = &APR_ARRAY_IDX(stored, i, rs_record_t);
        apr_size_t len = 0;
        const char *b = rs_entry_render(rr, s, &len);
        ck_assert_int_eq(w->seq, 31 + i);
        ck_assert_int_eq(w->seq, s->seq);
        ck_assert_int_eq(w->change, RS_CHANGE_CREATED);
        ck_assert_int_eq(w->datetime, s->datetime);
        ck_assert_int_eq(w->size, s->size);
        ck_assert_uint_eq(w->xml_len, len);
        ck_assert_int_eq(memcmp(w->xml, b, len), 0);
        ck_assert_ptr_null(w->name); /* what a ring slot keeps */
        /* ... and what its manifest entry adds, known while the path is */
        ck_assert_int_eq(w->manifest_extra, rs_cdump_path_len(ut_pool, s));
        ck_assert_int_gt(w->manifest_extra, 0);
    }
    ck_assert_int_eq(rs_recorder_take(f.c.rec, ut_pool, &recs), 0);
    ck_assert_ptr_null(recs);

    /* A few more: a window of a few; the taken one stays valid. */
    put_file(&f, "f00", "changed");
    ck_assert_int_eq(unlink(ut_path(f.root, "f01")), 0);
    scan(&f);
    ck_assert_int_eq(rs_recorder_take(f.c.rec, ut_pool, &recs), 2);
    ck_assert_int_eq(recs->nelts, 2);
    ck_assert_int_eq(APR_ARRAY_IDX(recs, 0, rs_record_t).seq, 51);
    ck_assert_int_eq(APR_ARRAY_IDX(recs, 1, rs_record_t).seq, 52);
    ck_assert_int_eq(rs_recorder_appended(f.c.rec), 52);
}
END_TEST

/* An entry longer than a ring slot is kept without bytes: readers take
 * that record from the store. */
START_TEST(recorder_overlong_entry)
{
    fx_t f;
    rs_journal_t *j;
    rs_entry_opts_t eo;
    apr_array_header_t *recs;
    char name[256];

    fx_init(&f);
    ck_assert_int_eq(rs_journal_open(&j, f.st, ut_pool), APR_SUCCESS);
    memset(&eo, 0, sizeof(eo));
    eo.url_base = "http://example.org/";
    f.c.rec = rs_recorder_create(ut_pool, j, "s", &eo, 8);
    memset(name, ' ', 250); /* 2250 bytes escaped, two directories and name */
    name[250] = '\0';
    put_file(&f, "short", "a");
    ut_mkdir(ut_path(f.root, name));
    ut_mkdir(ut_path(f.root, apr_pstrcat(ut_pool, name, "/", name, NULL)));
    put_file(&f, apr_pstrcat(ut_pool, name, "/", name, "/", name, NULL), "b");
    scan(&f);
    ck_assert_int_eq(rs_recorder_take(f.c.rec, ut_pool, &recs), 2);
    ck_assert_int_eq(recs->nelts, 2);
    {
        /* Whichever the scan found first. */
        const rs_record_t *a = &APR_ARRAY_IDX(recs, 0, rs_record_t);
        const rs_record_t *b = &APR_ARRAY_IDX(recs, 1, rs_record_t);
        const rs_record_t *shrt = a->xml ? a : b, *lng = a->xml ? b : a;
        ck_assert_ptr_nonnull(shrt->xml);
        ck_assert_uint_le(shrt->xml_len, RS_RING_SLOT_DATA);
        ck_assert_ptr_nonnull(strstr(apr_pstrmemdup(ut_pool, shrt->xml, shrt->xml_len),
                                     "<loc>http://example.org/short</loc>"));
        ck_assert_ptr_null(lng->xml);
        ck_assert_int_eq(a->seq + 1, b->seq);
    }
}
END_TEST

/* A typical linked entry fits a ring slot: a record (md5 and sha-256)
 * with a describedby link and its inverse, each with the target's
 * attributes and both digests, and a mirror, under 40-byte names and a
 * repository's URL base (1 183 bytes: more than the 980 of a 1 KiB slot). */
START_TEST(recorder_linked_entry_fits)
{
    static const char *const md5 = "0123456789abcdef0123456789abcdef";
    static const char *const sha256 =
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    const char *base = "https://repository.example.org/collections/data/";
    fx_t f;
    rs_journal_t *j;
    rs_entry_opts_t eo;
    rs_recorder_t *rc;
    rs_link_t l[3];
    rs_item_t it;
    apr_array_header_t *links = apr_array_make(ut_pool, 3, sizeof(rs_link_t)), *recs;
    int i;

    fx_init(&f);
    ck_assert_int_eq(rs_journal_open(&j, f.st, ut_pool), APR_SUCCESS);
    memset(&eo, 0, sizeof(eo));
    eo.url_base = base;
    eo.hashes = MD5_SHA256;
    rc = rs_recorder_create(ut_pool, j, "s", &eo, 4);
    memset(l, 0, sizeof(l));
    for (i = 0; i < 2; i++) {
        l[i].rel = i ? "describes" : "describedby";
        l[i].href = apr_pstrcat(ut_pool, base,
                                i ? "records/2026/thesis-of-some-author-2026-0001.pdf"
                                  : "metadata/2026/thesis-of-some-author-2026-0001.xml",
                                NULL);
        l[i].type = i ? "application/pdf" : "application/xml";
        l[i].length = 123456;
        l[i].modified_ns = 1790000000123456789LL;
        l[i].hash[0] = md5;
        l[i].hash[2] = sha256;
    }
    l[2].rel = "duplicate";
    l[2].href = "https://mirror.example.org/data/records/2026/thesis-of-some-author-2026-0001.pdf";
    l[2].length = l[2].modified_ns = -1;
    for (i = 0; i < 3; i++) {
        *(rs_link_t *)apr_array_push(links) = l[i];
    }
    memset(&it, 0, sizeof(it));
    it.dir = "records/2026";
    it.name = "thesis-of-some-author-2026-0001.pdf";
    it.size = 9876543;
    it.mtime_ns = 1790000000123456789LL;
    it.type = "application/pdf";
    it.hash[0] = md5;
    it.hash[2] = sha256;
    it.listed = 1;
    it.links = rs_links_encode(ut_pool, links);
    ck_assert_int_eq(rs_db_begin(f.st), APR_SUCCESS);
    ck_assert_int_eq(rs_recorder_record(rc, RS_CHANGE_UPDATED, &it), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(f.st), APR_SUCCESS);
    ck_assert_int_eq(rs_recorder_take(rc, ut_pool, &recs), 1);
    ck_assert_ptr_nonnull(APR_ARRAY_IDX(recs, 0, rs_record_t).xml);
    ck_assert_uint_gt(APR_ARRAY_IDX(recs, 0, rs_record_t).xml_len, 980);
    ck_assert_uint_le(APR_ARRAY_IDX(recs, 0, rs_record_t).xml_len, RS_RING_SLOT_DATA);
    ck_assert_ptr_nonnull(strstr(apr_pstrmemdup(ut_pool, APR_ARRAY_IDX(recs, 0, rs_record_t).xml,
                                                APR_ARRAY_IDX(recs, 0, rs_record_t).xml_len),
                                 "<rs:ln rel=\"duplicate\""));
}
END_TEST

Suite *scan_changes_suite(void)
{
    Suite *s = suite_create("rs_scan_changes");
    TCase *tc = ut_tcase("scan_changes", 60);
    tcase_add_test(tc, created_then_quiet);
    tcase_add_test(tc, encoding_change_is_an_update);
    tcase_add_test(tc, chmod_only_is_quiet);
    tcase_add_test(tc, updated);
    tcase_add_test(tc, deleted_files_and_dirs);
    tcase_add_test(tc, missing_root);
    tcase_add_test(tc, mass_deletion_held);
    tcase_add_test(tc, mass_deletion_targets);
    tcase_add_test(tc, listed_unlisted_transitions);
    tcase_add_test(tc, file_becomes_dir);
    tcase_add_test(tc, callback_error_stops_scan);
    tcase_add_test(tc, many_writes_through_the_writer);
    tcase_add_test(tc, journal_in_scan_transaction);
    tcase_add_test(tc, links_hooks);
    tcase_add_test(tc, links_scan_hook);
    tcase_add_test(tc, recorder_window);
    tcase_add_test(tc, recorder_overlong_entry);
    tcase_add_test(tc, recorder_linked_entry_fits);
    suite_add_tcase(s, tc);
    return s;
}
