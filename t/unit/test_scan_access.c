/* SPDX-License-Identifier: Apache-2.0 */
/* test_scan_access.c - rs_scan: following access files (.htaccess).
 *
 * The check callback plays httpd: a path is denied when an access file
 * named ".htaccess" in its directory or an ancestor (for a directory: in
 * itself too) says "deny all", or "deny NAME" for a file's base name.  A
 * change of such a file must re-decide every file below it, in full scans
 * and in targeted ones, and after a "restart" (a new scan of the same
 * store). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_above.h"
#include "rs_scan.h"
#include "rs_inventory.h"
#include "rs_schema.h"

typedef struct {
    const char *root;
    const char *above; /* a directory above root whose access
                                   * file counts too (NULL: none) */
    rs_db_t *st;
    ut_log_t ul;
    rs_scan_opts_t o;
    rs_scan_stats_t s;
    apr_array_header_t *changes; /* "C:path", "U:path", "D:path" */
    int drops;                   /* on_drop calls */
    apr_hash_t *watched;         /* relpaths handed to on_dir */
} ax_t;

/* 1 if the access file of directory dir (relative, "" = root) denies name
 * (a base name, or "" for the directory itself). */
static int denies(const char *root, const char *dir, const char *name)
{
    const char *path = ut_path(*dir ? ut_path(root, dir) : root, ".htaccess");
    size_t len;
    char *text;

    if (!ut_exists(path)) {
        return 0;
    }
    text = ut_read(path, &len);
    return strstr(text, "deny all") != NULL
           || (*name && strstr(text, apr_pstrcat(ut_pool, "deny ", name, "\n", NULL)) != NULL);
}

static int check_cb(void *baton, apr_pool_t *p, const char *relpath, int flags,
                    rs_scan_media_t *media)
{
    int is_dir = flags & RS_SCAN_CHECK_DIR;
    ax_t *a = baton;
    char *dir = apr_pstrdup(p, relpath), *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : relpath;

    (void)media;
    if (slash) {
        *slash = '\0';
    }
    else {
        dir = "";
    }
    if (is_dir && denies(a->root, relpath, "")) {
        return 0;
    }
    if (a->above && denies(a->above, "", is_dir ? "" : base)) {
        return 0;
    }
    /* The file's (or directory's parent's) directory and its ancestors. */
    for (;;) {
        char *up;
        if (denies(a->root, dir, is_dir ? "" : base)) {
            return 0;
        }
        if (!*dir) {
            return 1;
        }
        up = strrchr(dir, '/');
        if (up) {
            *up = '\0';
        }
        else {
            dir = "";
        }
    }
}

static apr_status_t on_change(void *baton, int change, const rs_item_t *it)
{
    ax_t *a = baton;
    static const char letters[] = "?CUD";
    APR_ARRAY_PUSH(a->changes, const char *) =
        apr_psprintf(ut_pool, "%c:%s%s%s", letters[change], it->dir, *it->dir ? "/" : "", it->name);
    return APR_SUCCESS;
}

static void on_drop(void *baton, const char *relpath)
{
    (void)relpath;
    ((ax_t *)baton)->drops++;
}

static void on_dir(void *baton, const char *relpath, int dfd)
{
    ax_t *a = baton;
    ck_assert_int_ge(dfd, 0);
    apr_hash_set(a->watched, apr_pstrdup(ut_pool, relpath), APR_HASH_KEY_STRING, "");
}

static int watched(ax_t *a, const char *relpath)
{
    return apr_hash_get(a->watched, relpath, APR_HASH_KEY_STRING) != NULL;
}

static void ax_init(ax_t *a)
{
    static apr_array_header_t *names;

    memset(a, 0, sizeof(*a));
    a->root = ut_path(ut_tempdir("scanaccess"), "root");
    ut_mkdir(a->root);
    ck_assert_int_eq(rs_schema_open(&a->st, ut_pool, "sqlite3", ut_path(a->root, "../state.db"),
                                    ut_log_init(&a->ul)),
                     APR_SUCCESS);
    names = apr_array_make(ut_pool, 2, sizeof(const char *));
    APR_ARRAY_PUSH(names, const char *) = ".htaccess";
    APR_ARRAY_PUSH(names, const char *) = "acl.txt";
    a->changes = apr_array_make(ut_pool, 8, sizeof(const char *));
    a->o.set = "s";
    a->o.root = a->root;
    a->o.hashes = RS_HASH_MD5;
    a->o.cfg = "cfg1";
    a->o.access_files = names;
    a->o.check = check_cb;
    a->o.check_baton = a;
    a->o.on_change = on_change;
    a->o.change_baton = a;
    a->o.on_drop = on_drop;
    a->o.on_dir = on_dir;
    a->watched = apr_hash_make(ut_pool);
    a->o.dir_baton = a;
    a->o.dotfiles = 1; /* access files stay unlisted anyway */
    a->o.log = &a->ul.logger;
    ut_mkdir(ut_path(a->root, "a"));
    ut_mkdir(ut_path(a->root, "a/b"));
    ut_write_str(ut_path(a->root, "top.txt"), "top");
    ut_write_str(ut_path(a->root, "a/x.txt"), "x");
    ut_write_str(ut_path(a->root, "a/b/y.txt"), "y");
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The changes notified, sorted, joined with " ". */
static const char *changes(ax_t *a)
{
    qsort(a->changes->elts, (size_t)a->changes->nelts, sizeof(char *), cmp_str);
    return apr_array_pstrcat(ut_pool, a->changes, ' ');
}

static const char *scan(ax_t *a)
{
    apr_array_clear(a->changes);
    ck_assert_int_eq(rs_scan_set(a->st, &a->o, ut_pool, &a->s), APR_SUCCESS);
    return changes(a);
}

/* Reconcile what a notification about name in dir names. */
static const char *target(ax_t *a, const char *dir, const char *name)
{
    rs_scan_target_t t;
    apr_array_header_t *names = apr_array_make(ut_pool, 1, sizeof(const char *));

    APR_ARRAY_PUSH(names, const char *) = name;
    t.dir = dir;
    t.names = names;
    apr_array_clear(a->changes);
    ck_assert_int_eq(rs_scan_targets(a->st, &a->o, ut_pool, &t, 1, &a->s), APR_SUCCESS);
    return changes(a);
}

static apr_int64_t listed(ax_t *a)
{
    apr_int64_t n = -1;
    ck_assert_int_eq(rs_inventory_count(a->st, a->o.set, &n), APR_SUCCESS);
    return n;
}

static rs_item_t *row(ax_t *a, const char *dir, const char *name)
{
    rs_item_t *it = NULL;
    ck_assert_int_eq(rs_inventory_get(a->st, ut_pool, a->o.set, dir, name, &it), APR_SUCCESS);
    return it;
}

/* Rewrite an access file with new content (a new size, so a new version
 * even within the file system's time granularity). */
static void put_access(ax_t *a, const char *rel, const char *text)
{
    ut_write_str(ut_path(a->root, rel), text);
}

START_TEST(full_scan_follows_access_files)
{
    ax_t a;

    ax_init(&a);
    put_access(&a, "a/.htaccess", "# nothing\n");
    ck_assert_str_eq(scan(&a), "C:a/b/y.txt C:a/x.txt C:top.txt");
    ck_assert_int_eq(listed(&a), 3);
    /* Its row: known, never listed. */
    ck_assert_ptr_nonnull(row(&a, "a", ".htaccess"));
    ck_assert_int_eq(row(&a, "a", ".htaccess")->listed, 0);
    ck_assert_str_eq(scan(&a), "");

    /* A <Files>-like denial of one name. */
    put_access(&a, "a/.htaccess", "deny x.txt\n");
    ck_assert_str_eq(scan(&a), "D:a/x.txt");
    ck_assert_str_eq(scan(&a), "");

    /* Everything below a. */
    put_access(&a, "a/.htaccess", "deny all\n");
    ck_assert_str_eq(scan(&a), "D:a/b/y.txt");
    ck_assert_int_eq(listed(&a), 1);

    /* Gone: everything comes back, as created. */
    ck_assert_int_eq(unlink(ut_path(a.root, "a/.htaccess")), 0);
    ck_assert_str_eq(scan(&a), "C:a/b/y.txt C:a/x.txt");
    ck_assert_ptr_null(row(&a, "a", ".htaccess"));
    ck_assert_int_eq(listed(&a), 3);

    /* A second access file name, at the root; never listed itself. */
    put_access(&a, "acl.txt", "x\n");
    ck_assert_str_eq(scan(&a), "");
    ck_assert_int_eq(row(&a, "", "acl.txt")->listed, 0);
}
END_TEST

START_TEST(targets_follow_access_files)
{
    ax_t a;

    ax_init(&a);
    scan(&a);
    ck_assert_int_eq(listed(&a), 3);

    /* Created in a subdirectory: everything below it is re-decided. */
    put_access(&a, "a/b/.htaccess", "deny y.txt\n");
    ck_assert_str_eq(target(&a, "a/b", ".htaccess"), "D:a/b/y.txt");
    /* At the root: all of the set. */
    put_access(&a, ".htaccess", "deny all\n");
    ck_assert_str_eq(target(&a, "", ".htaccess"), "D:a/x.txt D:top.txt");
    ck_assert_int_eq(listed(&a), 0);
    ck_assert_int_eq(unlink(ut_path(a.root, ".htaccess")), 0);
    ck_assert_str_eq(target(&a, "", ".htaccess"), "C:a/x.txt C:top.txt");
    ck_assert_int_eq(unlink(ut_path(a.root, "a/b/.htaccess")), 0);
    ck_assert_str_eq(target(&a, "a/b", ".htaccess"), "C:a/b/y.txt");
    ck_assert_int_eq(listed(&a), 3);
    ck_assert_int_eq(a.drops, 0);
}
END_TEST

/* An access file that denies its own directory: the rows go, but the
 * directory's watch is kept (no on_drop, and a full scan hands it to
 * on_dir without reading it), so that the access file's next change is
 * seen. */
START_TEST(access_file_denies_its_directory)
{
    ax_t a;

    ax_init(&a);
    scan(&a);
    put_access(&a, "a/.htaccess", "deny all\n");
    ck_assert_str_eq(target(&a, "a", ".htaccess"), "D:a/b/y.txt D:a/x.txt");
    ck_assert_int_eq(a.drops, 0);
    ck_assert_int_eq(listed(&a), 1);
    ck_assert_int_eq(unlink(ut_path(a.root, "a/.htaccess")), 0);
    ck_assert_str_eq(target(&a, "a", ".htaccess"), "C:a/b/y.txt C:a/x.txt");
    ck_assert_int_eq(listed(&a), 3);

    /* A file event inside the denied directory keeps its watch too. */
    put_access(&a, "a/.htaccess", "deny all\n");
    target(&a, "a", ".htaccess");
    ut_write_str(ut_path(a.root, "a/x.txt"), "x2");
    ck_assert_str_eq(target(&a, "a", "x.txt"), "");
    ck_assert_int_eq(a.drops, 0);
    ck_assert_int_eq(unlink(ut_path(a.root, "a/.htaccess")), 0);
    ck_assert_str_eq(target(&a, "a", ".htaccess"), "C:a/b/y.txt C:a/x.txt");

    /* And in full scans: the denied directory is watched, not read. */
    put_access(&a, "a/.htaccess", "deny all\n");
    apr_hash_clear(a.watched);
    ck_assert_str_eq(scan(&a), "D:a/b/y.txt D:a/x.txt");
    ck_assert(watched(&a, "a"));
    ck_assert(!watched(&a, "a/b"));
    ck_assert_int_eq(unlink(ut_path(a.root, "a/.htaccess")), 0);
    ck_assert_str_eq(scan(&a), "C:a/b/y.txt C:a/x.txt");
}
END_TEST

/* A change the tree does not show (an access file above the root):
 * a scan re-decides only the directories it walks, rs_scan_opts_t.recheck
 * every file, without reading any again. */
START_TEST(recheck_decides_every_file)
{
    ax_t a;

    ax_init(&a);
    a.above = ut_path(a.root, "..");
    ck_assert_str_eq(scan(&a), "C:a/b/y.txt C:a/x.txt C:top.txt");
    ut_write_str(ut_path(a.above, ".htaccess"), "deny top.txt\ndeny y.txt\n");
    /* Rows that still describe their files are not checked again. */
    ck_assert_str_eq(scan(&a), "");
    a.o.recheck = 1;
    ck_assert_str_eq(scan(&a), "D:a/b/y.txt D:top.txt");
    ck_assert_int_eq(a.s.hashed, 0);
    ck_assert_int_eq(listed(&a), 1);
    ck_assert_int_eq(unlink(ut_path(a.above, ".htaccess")), 0);
    ck_assert_str_eq(scan(&a), "C:a/b/y.txt C:top.txt");
    ck_assert_int_eq(listed(&a), 3);
    /* Everything above, denying a directory: its rows go too. */
    ut_write_str(ut_path(a.above, ".htaccess"), "deny all\n");
    ck_assert_str_eq(scan(&a), "D:a/b/y.txt D:a/x.txt D:top.txt");
    ck_assert_int_eq(listed(&a), 0);
}
END_TEST

START_TEST(above_dirs)
{
    apr_array_header_t *d = rs_above_dirs(ut_pool, "/srv/www/data");

    ck_assert_str_eq(apr_array_pstrcat(ut_pool, d, ' '), "/ /srv /srv/www");
    ck_assert_str_eq(apr_array_pstrcat(ut_pool, rs_above_dirs(ut_pool, "/x"), ' '), "/");
    ck_assert_int_eq(rs_above_dirs(ut_pool, "/")->nelts, 0);
}
END_TEST

/* The state of the access files above: every change of one (created, in
 * place with the same size, replaced by rename, attributes, removed)
 * changes it and is named by rs_above_diff; other files do not. */
START_TEST(above_state_follows_access_files)
{
    const char *top = ut_tempdir("above"), *mid = ut_path(top, "mid"), *s0, *s1, *s2;
    apr_array_header_t *dirs = apr_array_make(ut_pool, 2, sizeof(const char *));
    apr_array_header_t *names = apr_array_make(ut_pool, 2, sizeof(const char *));
    const char *f = ut_path(mid, ".htaccess");

    ut_mkdir(mid);
    APR_ARRAY_PUSH(dirs, const char *) = top;
    APR_ARRAY_PUSH(dirs, const char *) = mid;
    APR_ARRAY_PUSH(names, const char *) = ".htaccess";
    APR_ARRAY_PUSH(names, const char *) = ".acl";
    s0 = rs_above_state(ut_pool, dirs, names);
    ck_assert_str_eq(s0, apr_pstrcat(ut_pool, top, "/.htaccess\t-\n", top, "/.acl\t-\n", f, "\t-\n",
                                     mid, "/.acl\t-\n", NULL));
    ck_assert_ptr_null(rs_above_diff(ut_pool, s0, rs_above_state(ut_pool, dirs, names)));

    ut_write_str(ut_path(top, "other.txt"), "o");
    ck_assert_ptr_null(rs_above_diff(ut_pool, s0, rs_above_state(ut_pool, dirs, names)));

    ut_write_str(f, "deny a\n");
    s1 = rs_above_state(ut_pool, dirs, names);
    ck_assert_str_eq(rs_above_diff(ut_pool, s0, s1), f);
    /* In place, same size (a later time) */
    usleep(20000);
    ut_write_str(f, "deny b\n");
    s2 = rs_above_state(ut_pool, dirs, names);
    ck_assert_str_eq(rs_above_diff(ut_pool, s1, s2), f);
    /* Replaced by rename. */
    ut_write_str(ut_path(mid, "new"), "deny b\n");
    ck_assert_int_eq(rename(ut_path(mid, "new"), f), 0);
    s1 = rs_above_state(ut_pool, dirs, names);
    ck_assert_str_eq(rs_above_diff(ut_pool, s2, s1), f);
    /* Attributes. */
    ck_assert_int_eq(chmod(f, 0600), 0);
    s2 = rs_above_state(ut_pool, dirs, names);
    ck_assert_str_eq(rs_above_diff(ut_pool, s1, s2), f);
    /* The second name, in the upper directory: named first. */
    ut_write_str(ut_path(top, ".acl"), "x");
    ck_assert_int_eq(unlink(f), 0);
    s1 = rs_above_state(ut_pool, dirs, names);
    ck_assert_str_eq(rs_above_diff(ut_pool, s2, s1), ut_path(top, ".acl"));
    ck_assert_int_eq(unlink(ut_path(top, ".acl")), 0);
    ck_assert_ptr_null(rs_above_diff(ut_pool, s0, rs_above_state(ut_pool, dirs, names)));

    /* Never stored: differs, but from nothing to follow. */
    ck_assert_str_eq(rs_above_diff(ut_pool, NULL, s0), ut_path(top, ".htaccess"));
    ck_assert_str_eq(rs_above_diff(ut_pool, s0, NULL), ut_path(top, ".htaccess"));
    ck_assert_ptr_null(rs_above_diff(ut_pool, NULL, ""));
    ck_assert_ptr_null(rs_above_diff(ut_pool, NULL, rs_above_state(ut_pool, dirs, NULL)));
}
END_TEST

START_TEST(above_state_stored)
{
    ax_t a;
    const char *v = "x";

    ax_init(&a);
    ck_assert_int_eq(rs_above_load(a.st, ut_pool, "s", &v), APR_SUCCESS);
    ck_assert_ptr_null(v);
    ck_assert_int_eq(rs_above_save(a.st, ut_pool, "s", "/a/.htaccess\t-\n"), APR_SUCCESS);
    ck_assert_int_eq(rs_above_save(a.st, ut_pool, "t", ""), APR_SUCCESS);
    ck_assert_int_eq(rs_above_load(a.st, ut_pool, "s", &v), APR_SUCCESS);
    ck_assert_str_eq(v, "/a/.htaccess\t-\n");
    /* (The store may give the empty state back as none: the same.) */
    ck_assert_int_eq(rs_above_load(a.st, ut_pool, "t", &v), APR_SUCCESS);
    ck_assert_ptr_null(rs_above_diff(ut_pool, v, ""));
}
END_TEST

Suite *scan_access_suite(void)
{
    Suite *s = suite_create("rs_scan_access");
    TCase *tc = ut_tcase("core", 30);
    tcase_add_test(tc, full_scan_follows_access_files);
    tcase_add_test(tc, targets_follow_access_files);
    tcase_add_test(tc, access_file_denies_its_directory);
    tcase_add_test(tc, recheck_decides_every_file);
    tcase_add_test(tc, above_dirs);
    tcase_add_test(tc, above_state_follows_access_files);
    tcase_add_test(tc, above_state_stored);
    suite_add_tcase(s, tc);
    return s;
}
