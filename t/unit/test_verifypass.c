/* SPDX-License-Identifier: Apache-2.0 */
/* test_verifypass.c - rs_verifypass: the verification pass of a set, on a
 * temporary tree and a real SQLite inventory, with explicit times */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_inventory.h"
#include "rs_schema.h"
#include "rs_verifypass.h"

#define SET      "s"
#define INTERVAL apr_time_from_sec(60)
#define T0       apr_time_from_sec(1000) /* a monotonic time */

typedef struct fixture_t {
    ut_log_t ul; /* the pass's log */
    ut_log_t store_log;
    rs_logger_t *log;
    rs_db_t *db;
    char *root;
    rs_verifypass_t *vp; /* from ut_pool, which its cleanup is on */
    rs_scan_target_t *t; /* what the last slice returned */
    int more;
} fixture_t;

static void fixture(fixture_t *f)
{
    const char *dsn;
    apr_status_t rv;

    f->log = ut_log_init(&f->ul);
    f->root = ut_tempdir("tree");
    f->vp = apr_pcalloc(ut_pool, sizeof(*f->vp));
    f->t = (rs_scan_target_t *)f; /* set by every slice */
    f->more = -1;
    dsn = ut_path(ut_tempdir("store"), "state.db");
    f->db = NULL;
    rv = rs_schema_open(&f->db, ut_pool, "sqlite3", dsn, ut_log_init(&f->store_log));
    ck_assert_msg(rv == APR_SUCCESS, "rs_schema_open: %d", rv);
}

/* A file dir/name (dir "" = the root) with content (NULL: it exists
 * already), and its row as a scan stores it (the file's metadata as stat
 * says, through a symbolic link). */
static void file_and_row(fixture_t *f, const char *dir, const char *name, const char *content)
{
    const char *d = *dir ? ut_path(f->root, dir) : f->root;
    const char *path = ut_path(d, name);
    struct stat sb;
    rs_item_t it;

    if (!ut_exists(d)) {
        ut_mkdir(d);
    }
    if (content) {
        ut_write_str(path, content);
    }
    ck_assert_int_eq(stat(path, &sb), 0);
    memset(&it, 0, sizeof(it));
    it.dir = dir;
    it.name = name;
    it.size = sb.st_size;
    it.mtime_ns = (apr_int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    it.ctime_ns = (apr_int64_t)sb.st_ctim.tv_sec * 1000000000 + sb.st_ctim.tv_nsec;
    it.dev = sb.st_dev;
    it.ino = sb.st_ino;
    it.type = "text/plain";
    it.listed = 1;
    ck_assert_int_eq(rs_inventory_put(f->db, SET, &it), APR_SUCCESS);
}

/* n files f0000 ... in dir, each with its row, in one transaction. */
static void files(fixture_t *f, const char *dir, int n)
{
    int i;

    ck_assert_int_eq(rs_db_begin(f->db), APR_SUCCESS);
    for (i = 0; i < n; i++) {
        file_and_row(f, dir, apr_psprintf(ut_pool, "f%04d", i), "x");
    }
    ck_assert_int_eq(rs_db_commit(f->db), APR_SUCCESS);
}

/* A slice at now: the number of targets (f->t), f->more. */
static int slice(fixture_t *f, apr_time_t now)
{
    return rs_verifypass_slice(f->vp, f->db, ut_pool, SET, f->root, f->log, now, &f->t, &f->more);
}

/* The targets as "dir|name" lines, in order. */
static const char *targets_text(const rs_scan_target_t *t, int n)
{
    const char *s = "";
    int i;

    for (i = 0; i < n; i++) {
        ck_assert_ptr_nonnull(t[i].names);
        ck_assert_int_eq(t[i].names->nelts, 1);
        s = apr_psprintf(ut_pool, "%s%s|%s\n", s, t[i].dir,
                         APR_ARRAY_IDX(t[i].names, 0, const char *));
    }
    return s;
}

START_TEST(first_pass_one_interval_after_init)
{
    fixture_t f;

    fixture(&f);
    files(&f, "", 3);
    rs_verifypass_init(f.vp, ut_pool, INTERVAL, T0);
    ck_assert_int_eq(f.vp->next, T0 + INTERVAL);
    /* Not due yet: nothing looked at, nothing logged. */
    ck_assert_int_eq(slice(&f, T0 + INTERVAL - 1), 0);
    ck_assert_int_eq(f.more, 0);
    ck_assert_ptr_null(f.t);
    ck_assert_int_eq(f.vp->active, 0);
    ck_assert_int_eq(f.vp->seen, 0);
    ck_assert_int_eq(rs_verifypass_wake(f.vp, T0), 0);
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
    /* Due: a whole pass in one slice (3 rows), nothing differs. */
    ck_assert_int_eq(slice(&f, T0 + INTERVAL), 0);
    ck_assert_int_eq(f.more, 0);
    ck_assert_int_eq(f.vp->active, 0);
    ck_assert_int_eq(f.vp->seen, 3);
    ck_assert_int_eq(f.vp->differ, 0);
    ck_assert_int_eq(f.vp->next, T0 + 2 * INTERVAL);
    ck_assert_int_eq(ut_log_count(&f.ul, "7: set s: verified 3 files; 0 had changed without a "
                                         "change notification and were reconciled"),
                     1);
    ck_assert_int_eq(f.ul.msgs->nelts, 1);
    /* And not again before the next interval. */
    ck_assert_int_eq(slice(&f, T0 + 2 * INTERVAL - 1), 0);
    ck_assert_int_eq(f.ul.msgs->nelts, 1);
}
END_TEST

START_TEST(off_does_nothing)
{
    fixture_t f;

    fixture(&f);
    files(&f, "", 2);
    ck_assert_int_eq(unlink(ut_path(f.root, "f0000")), 0);
    rs_verifypass_init(f.vp, ut_pool, 0, T0);
    ck_assert_int_eq(slice(&f, T0), 0);
    ck_assert_int_eq(slice(&f, T0 + apr_time_from_sec(86400 * 365)), 0);
    ck_assert_int_eq(f.more, 0);
    ck_assert_int_eq(f.vp->active, 0);
    ck_assert_int_eq(f.vp->seen, 0);
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
}
END_TEST

/* 2.5 slices of rows: the cursor carries the pass from slice to slice,
 * the caller is asked back soon while it goes on, and the end is logged
 * with the total once. */
START_TEST(pass_in_slices)
{
    fixture_t f;
    int n = 2 * RS_VERIFYPASS_SLICE + RS_VERIFYPASS_SLICE / 2;
    apr_time_t now = T0 + INTERVAL;

    fixture(&f);
    files(&f, "a", n);
    rs_verifypass_init(f.vp, ut_pool, INTERVAL, T0);
    ck_assert_int_eq(slice(&f, now), 0);
    ck_assert_int_eq(f.more, 1);
    ck_assert_int_eq(f.vp->active, 1);
    ck_assert_int_eq(f.vp->seen, RS_VERIFYPASS_SLICE);
    ck_assert_str_eq(f.vp->dir, "a");
    ck_assert_str_eq(f.vp->name, apr_psprintf(ut_pool, "f%04d", RS_VERIFYPASS_SLICE - 1));
    ck_assert_int_eq(rs_verifypass_wake(f.vp, now), now + RS_VERIFYPASS_PAUSE);
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
    /* A slice in progress goes on whatever the time says. */
    now += RS_VERIFYPASS_PAUSE;
    ck_assert_int_eq(slice(&f, now), 0);
    ck_assert_int_eq(f.more, 1);
    ck_assert_int_eq(f.vp->seen, 2 * RS_VERIFYPASS_SLICE);
    ck_assert_str_eq(f.vp->name, apr_psprintf(ut_pool, "f%04d", 2 * RS_VERIFYPASS_SLICE - 1));
    now += RS_VERIFYPASS_PAUSE;
    ck_assert_int_eq(slice(&f, now), 0);
    ck_assert_int_eq(f.more, 0);
    ck_assert_int_eq(f.vp->active, 0);
    ck_assert_int_eq(f.vp->seen, n);
    ck_assert_ptr_null(f.vp->dir);
    ck_assert_ptr_null(f.vp->name);
    ck_assert_int_eq(f.vp->next, now + INTERVAL);
    ck_assert_int_eq(rs_verifypass_wake(f.vp, now), 0);
    ck_assert_int_eq(f.ul.msgs->nelts, 1);
    ck_assert_int_eq(ut_log_count(&f.ul, apr_psprintf(ut_pool,
                                                      "7: set s: verified %d files; 0 "
                                                      "had changed",
                                                      n)),
                     1);
    /* The next pass starts from the first row again, with new counts. */
    ck_assert_int_eq(slice(&f, now + INTERVAL), 0);
    ck_assert_int_eq(f.more, 1);
    ck_assert_int_eq(f.vp->seen, RS_VERIFYPASS_SLICE);
    ck_assert_str_eq(f.vp->name, apr_psprintf(ut_pool, "f%04d", RS_VERIFYPASS_SLICE - 1));
}
END_TEST

/* Exactly one slice of rows: the pass ends with the empty slice after. */
START_TEST(pass_of_whole_slices)
{
    fixture_t f;

    fixture(&f);
    files(&f, "", RS_VERIFYPASS_SLICE);
    rs_verifypass_init(f.vp, ut_pool, INTERVAL, T0);
    ck_assert_int_eq(slice(&f, T0 + INTERVAL), 0);
    ck_assert_int_eq(f.more, 1);
    ck_assert_int_eq(slice(&f, T0 + INTERVAL + 1), 0);
    ck_assert_int_eq(f.more, 0);
    ck_assert_int_eq(f.vp->seen, RS_VERIFYPASS_SLICE);
    ck_assert_int_eq(f.vp->next, T0 + 2 * INTERVAL + 1);
    ck_assert_int_eq(ut_log_count(&f.ul, "verified 256 files; 0 had"), 1);
}
END_TEST

/* Rows written between slices do not move the cursor: the row it names
 * removed, rows added before and after it. */
START_TEST(cursor_survives_writes)
{
    fixture_t f;
    const char *last;

    fixture(&f);
    files(&f, "b", RS_VERIFYPASS_SLICE + 10);
    rs_verifypass_init(f.vp, ut_pool, INTERVAL, T0);
    ck_assert_int_eq(slice(&f, T0 + INTERVAL), 0);
    ck_assert_int_eq(f.more, 1);
    last = apr_psprintf(ut_pool, "f%04d", RS_VERIFYPASS_SLICE - 1);
    ck_assert_str_eq(f.vp->name, last);
    ck_assert_int_eq(rs_inventory_delete(f.db, SET, "b", last), APR_SUCCESS);
    file_and_row(&f, "a", "before", "y"); /* before the cursor */
    file_and_row(&f, "b", "g", "y");      /* after it */
    ck_assert_int_eq(slice(&f, T0 + INTERVAL + 1), 0);
    ck_assert_int_eq(f.more, 0);
    ck_assert_int_eq(f.vp->seen, RS_VERIFYPASS_SLICE + 10 + 1);
    ck_assert_int_eq(f.vp->differ, 0);
}
END_TEST

/* Change one column of a row (by one), the file staying as it is. */
static void row_off(fixture_t *f, const char *dir, const char *name, const char *column)
{
    rs_item_t *row = NULL;

    ck_assert_int_eq(rs_inventory_get(f->db, ut_pool, SET, dir, name, &row), APR_SUCCESS);
    ck_assert_ptr_nonnull(row);
    if (!strcmp(column, "size")) {
        row->size++;
    }
    else if (!strcmp(column, "mtime")) {
        row->mtime_ns++;
    }
    else if (!strcmp(column, "ctime")) {
        row->ctime_ns++;
    }
    else if (!strcmp(column, "dev")) {
        row->dev++;
    }
    else {
        row->ino++;
    }
    ck_assert_int_eq(rs_inventory_put(f->db, SET, row), APR_SUCCESS);
}

/* Rows that no longer describe their file (each column alone), files
 * written or removed behind the inventory's back, and the target of a
 * symbolic link written from outside the tree are found, counted and
 * handed out as targets in listing order; the pass's end says so at INFO.
 * Unchanged files, and a link whose target did not change, are not. */
START_TEST(differing_rows_found)
{
    fixture_t f;
    int n;
    const char *outside = ut_tempdir("outside");

    fixture(&f);
    ut_write_str(ut_path(outside, "target"), "1");
    ut_write_str(ut_path(outside, "still"), "1");
    ck_assert_int_eq(symlink(ut_path(outside, "target"), ut_path(f.root, "link")), 0);
    ck_assert_int_eq(symlink(ut_path(outside, "still"), ut_path(f.root, "link2")), 0);
    file_and_row(&f, "", "link", NULL);
    file_and_row(&f, "", "link2", NULL);
    file_and_row(&f, "", "same", "1");
    file_and_row(&f, "", "size", "1");
    file_and_row(&f, "d", "gone", "1");
    file_and_row(&f, "d", "mtime", "1");
    file_and_row(&f, "d", "same", "1");
    file_and_row(&f, "d", "written", "1");
    file_and_row(&f, "d/e", "ctime", "1");
    file_and_row(&f, "d/e", "dev", "1");
    file_and_row(&f, "d/e", "ino", "1");
    row_off(&f, "", "size", "size");
    row_off(&f, "d", "mtime", "mtime");
    row_off(&f, "d/e", "ctime", "ctime");
    row_off(&f, "d/e", "dev", "dev");
    row_off(&f, "d/e", "ino", "ino");
    ut_write_str(ut_path(f.root, "d/written"), "22");
    ck_assert_int_eq(unlink(ut_path(f.root, "d/gone")), 0);
    ut_write_str(ut_path(outside, "target"), "22");

    rs_verifypass_init(f.vp, ut_pool, INTERVAL, T0);
    n = slice(&f, T0 + INTERVAL);
    ck_assert_int_eq(f.more, 0);
    ck_assert_str_eq(targets_text(f.t, n), "|link\n|size\nd|gone\nd|mtime\nd|written\n"
                                           "d/e|ctime\nd/e|dev\nd/e|ino\n");
    ck_assert_int_eq(n, 8);
    ck_assert_int_eq(f.vp->seen, 11);
    ck_assert_int_eq(f.vp->differ, 8);
    ck_assert_int_eq(ut_log_count(&f.ul, "6: set s: verified 11 files; 8 had changed without a "
                                         "change notification and were reconciled"),
                     1);
    ck_assert_int_eq(f.ul.msgs->nelts, 1);
}
END_TEST

/* Differences are counted over the slices of a pass. */
START_TEST(differ_counted_over_slices)
{
    fixture_t f;

    fixture(&f);
    files(&f, "c", RS_VERIFYPASS_SLICE + 1);
    ck_assert_int_eq(unlink(ut_path(f.root, "c/f0000")), 0);
    ck_assert_int_eq(unlink(ut_path(f.root, "c/f0001")), 0);
    ck_assert_int_eq(unlink(ut_path(f.root, apr_psprintf(ut_pool, "c/f%04d", RS_VERIFYPASS_SLICE))),
                     0);
    rs_verifypass_init(f.vp, ut_pool, INTERVAL, T0);
    ck_assert_int_eq(slice(&f, T0 + INTERVAL), 2);
    ck_assert_str_eq(targets_text(f.t, 2), "c|f0000\nc|f0001\n");
    ck_assert_int_eq(f.more, 1);
    ck_assert_int_eq(slice(&f, T0 + INTERVAL), 1);
    ck_assert_str_eq(targets_text(f.t, 1), apr_psprintf(ut_pool, "c|f%04d\n", RS_VERIFYPASS_SLICE));
    ck_assert_int_eq(f.more, 0);
    ck_assert_int_eq(f.vp->differ, 3);
    ck_assert_int_eq(ut_log_count(&f.ul, "6: set s: verified 257 files; 3 had changed"), 1);
}
END_TEST

/* An inventory that cannot be read ends the pass (logged as an error
 * naming the next try) and the next one comes an interval later. */
START_TEST(inventory_unreadable)
{
    fixture_t f;

    fixture(&f);
    files(&f, "", RS_VERIFYPASS_SLICE + 1);
    rs_verifypass_init(f.vp, ut_pool, INTERVAL, T0);
    ck_assert_int_eq(slice(&f, T0 + INTERVAL), 0);
    ck_assert_int_eq(f.more, 1);
    ck_assert_int_eq(rs_db_run(f.db, "DROP TABLE inventory"), APR_SUCCESS);
    ck_assert_int_eq(slice(&f, T0 + INTERVAL + 5), 0);
    ck_assert_int_eq(f.more, 0);
    ck_assert_int_eq(f.vp->active, 0);
    ck_assert_ptr_null(f.vp->dir);
    ck_assert_int_eq(f.vp->next, T0 + 2 * INTERVAL + 5);
    ck_assert_int_eq(ut_log_count(&f.ul, "3: set s: cannot read its inventory for the "
                                         "verification pass; next try in 60 s"),
                     1);
    ck_assert_int_eq(ut_log_count(&f.ul, "7: set s: verified 256 files; 0 had changed"), 1);
    ck_assert_int_eq(f.ul.msgs->nelts, 2);
}
END_TEST

/* The cursor of a pass in progress is freed by the cleanup of the pool
 * given to rs_verifypass_init. */
START_TEST(cursor_freed_with_pool)
{
    fixture_t f;
    apr_pool_t *owner;

    fixture(&f);
    files(&f, "", RS_VERIFYPASS_SLICE + 1);
    ck_assert_int_eq(apr_pool_create(&owner, ut_pool), APR_SUCCESS);
    rs_verifypass_init(f.vp, owner, INTERVAL, T0);
    ck_assert_int_eq(slice(&f, T0 + INTERVAL), 0);
    ck_assert_int_eq(f.more, 1);
    ck_assert_ptr_nonnull(f.vp->dir);
    ck_assert_ptr_nonnull(f.vp->name);
    apr_pool_destroy(owner);
    ck_assert_ptr_null(f.vp->dir);
    ck_assert_ptr_null(f.vp->name);
}
END_TEST

Suite *verifypass_suite(void)
{
    Suite *s = suite_create("rs_verifypass");
    TCase *tc = ut_tcase("verifypass", 60);
    tcase_add_test(tc, first_pass_one_interval_after_init);
    tcase_add_test(tc, off_does_nothing);
    tcase_add_test(tc, pass_in_slices);
    tcase_add_test(tc, pass_of_whole_slices);
    tcase_add_test(tc, cursor_survives_writes);
    tcase_add_test(tc, differing_rows_found);
    tcase_add_test(tc, differ_counted_over_slices);
    tcase_add_test(tc, inventory_unreadable);
    tcase_add_test(tc, cursor_freed_with_pool);
    suite_add_tcase(s, tc);
    return s;
}
