/* SPDX-License-Identifier: Apache-2.0 */
/* test_progress.c - rs_progress: a full scan's expected total from a real
 * inventory, the count of a temporary tree on its own thread (started
 * only after its delay, given up after its maximum, stopped by the end of
 * the scan or the next scan's start), the refresh once a second and the
 * notice lines, with explicit times. */
#include <string.h>
#include <unistd.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_inventory.h"
#include "rs_progress.h"
#include "rs_scanrate.h"
#include "rs_schema.h"

#define SEC(n) apr_time_from_sec(n)
#define T0     SEC(1000)

/* What the callbacks saw. */
typedef struct seen_t {
    int ntotal;
    apr_int64_t total;
    apr_int32_t src;
    int refreshed;
} seen_t;

static void seen_total(void *baton, apr_int64_t total, apr_int32_t src)
{
    seen_t *s = baton;
    s->ntotal++;
    s->total = total;
    s->src = src;
}

static void seen_refresh(void *baton)
{
    ((seen_t *)baton)->refreshed++;
}

static rs_db_t *store(void)
{
    rs_db_t *db = NULL;
    ut_log_t ul;
    const char *dsn = ut_path(ut_tempdir("store"), "state.db");
    ck_assert_int_eq(rs_schema_open(&db, ut_pool, "sqlite3", dsn, ut_log_init(&ul)), APR_SUCCESS);
    return db;
}

/* n rows of set in db. */
static void rows(rs_db_t *db, const char *set, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        rs_item_t it;
        memset(&it, 0, sizeof(it));
        it.dir = "";
        it.name = apr_psprintf(ut_pool, "f%03d", i);
        it.size = i;
        it.mtime_ns = 1;
        it.type = "text/plain";
        it.listed = 1;
        ck_assert_int_eq(rs_inventory_put(db, set, &it), APR_SUCCESS);
    }
}

/* A tree of 2 files at its root and 3 directories of 5 files, one of
 * them with a subdirectory of 1 file: 18 names that are not directories. */
static char *tree(void)
{
    char *root = ut_tempdir("tree");
    int d, i;
    ut_write_str(ut_path(root, "a"), "a");
    ck_assert_int_eq(symlink("a", ut_path(root, "b")), 0);
    for (d = 0; d < 3; d++) {
        char *dir = ut_path(root, apr_psprintf(ut_pool, "d%d", d));
        ut_mkdir(dir);
        for (i = 0; i < 5; i++) {
            ut_write_str(ut_path(dir, apr_psprintf(ut_pool, "f%d", i)), "x");
        }
    }
    ut_mkdir(ut_path(root, "d1/sub"));
    ut_write_str(ut_path(root, "d1/sub/g"), "g");
    return root;
}

static void scan_init(rs_progress_scan_t *scan, const char *set, const char *root, rs_db_t *db,
                      ut_log_t *ul, seen_t *seen)
{
    memset(scan, 0, sizeof(*scan));
    memset(seen, 0, sizeof(*seen));
    scan->set = set;
    scan->root = root;
    scan->db = db;
    scan->pool = ut_pool;
    scan->log = ut_log_init(ul);
    scan->total = seen_total;
    scan->refresh = seen_refresh;
    scan->baton = seen;
}

/* Tick at now until the count is taken (10 s at most); 1 when it was. */
static int tick_until_counted(rs_progress_t *pg, apr_time_t now)
{
    apr_time_t end = apr_time_now() + SEC(10);
    while (rs_progress_counting(pg) && apr_time_now() < end) {
        apr_sleep(1000);
        rs_progress_tick(pg, 0, now);
    }
    return !rs_progress_counting(pg);
}

START_TEST(test_estimate_from_inventory)
{
    rs_progress_t pg;
    rs_progress_scan_t scan;
    seen_t seen;
    ut_log_t ul;
    rs_db_t *db = store();

    rows(db, "s", 20);
    rows(db, "other", 3);
    memset(&pg, 0, sizeof(pg));
    scan_init(&scan, "s", tree(), db, &ul, &seen);
    rs_progress_begin(&pg, &scan, T0);
    ck_assert_int_eq(seen.ntotal, 1);
    ck_assert_int_eq((int)seen.total, 20);
    ck_assert_int_eq(seen.src, RS_SCAN_TOTAL_PREVIOUS);
    /* No count with an estimate, the refresh once a second. */
    rs_progress_tick(&pg, 1, T0 + SEC(1) - 1);
    ck_assert_int_eq(seen.refreshed, 0);
    rs_progress_tick(&pg, 2, T0 + SEC(5));
    ck_assert(!rs_progress_counting(&pg));
    ck_assert_int_eq(seen.refreshed, 1);
    rs_progress_tick(&pg, 3, T0 + SEC(5) + apr_time_from_msec(500));
    ck_assert_int_eq(seen.refreshed, 1);
    rs_progress_tick(&pg, 4, T0 + SEC(6));
    ck_assert_int_eq(seen.refreshed, 2);
    /* A notice line every interval (10 s). */
    ck_assert_int_eq(ul.msgs->nelts, 0);
    rs_progress_tick(&pg, 10, T0 + SEC(10));
    ck_assert_int_eq(ul.msgs->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(ul.msgs, 0, char *),
                     "5: set s: scanning: 10 of about 20 files (estimate: previous-scan), "
                     "1 files/s, about 10 s left");
    rs_progress_tick(&pg, 15, T0 + SEC(20) - 1);
    ck_assert_int_eq(ul.msgs->nelts, 1);
    rs_progress_tick(&pg, 16, T0 + SEC(20));
    ck_assert_int_eq(ul.msgs->nelts, 2);
    rs_progress_end(&pg);
    ck_assert_int_eq(seen.ntotal, 1);
}
END_TEST

START_TEST(test_count_after_delay)
{
    rs_progress_t pg;
    rs_progress_scan_t scan;
    seen_t seen;
    ut_log_t ul;
    rs_db_t *db = store();

    rows(db, "other", 3);
    memset(&pg, 0, sizeof(pg));
    scan_init(&scan, "f", tree(), db, &ul, &seen);
    scan.interval = SEC(4);
    rs_progress_begin(&pg, &scan, T0);
    ck_assert_int_eq(seen.ntotal, 1);
    ck_assert_int_eq((int)seen.total, -1);
    ck_assert_int_eq(seen.src, RS_SCAN_TOTAL_UNKNOWN);
    /* Not before half the interval. */
    rs_progress_tick(&pg, 1, T0 + SEC(2) - 1);
    ck_assert(!rs_progress_counting(&pg));
    rs_progress_tick(&pg, 1, T0 + SEC(2));
    ck_assert(rs_progress_counting(&pg) || seen.ntotal == 2);
    ck_assert(tick_until_counted(&pg, T0 + SEC(2)));
    ck_assert_int_eq(seen.ntotal, 2);
    ck_assert_int_eq((int)seen.total, 18);
    ck_assert_int_eq(seen.src, RS_SCAN_TOTAL_COUNTED);
    rs_progress_tick(&pg, 9, T0 + SEC(4));
    ck_assert_int_eq(ul.msgs->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(ul.msgs, 0, char *),
                     "5: set f: scanning: 9 of about 18 files (estimate: name-count), "
                     "2 files/s, about 4 s left");
    /* Started once. */
    rs_progress_tick(&pg, 10, T0 + SEC(5));
    ck_assert(!rs_progress_counting(&pg));
    rs_progress_end(&pg);
    ck_assert_int_eq(seen.ntotal, 2);
}
END_TEST

START_TEST(test_count_given_up)
{
    rs_progress_t pg;
    rs_progress_scan_t scan;
    seen_t seen;
    ut_log_t ul;

    memset(&pg, 0, sizeof(pg));
    scan_init(&scan, "g", tree(), store(), &ul, &seen);
    scan.count_max = 1; /* a microsecond: past before the first directory */
    rs_progress_begin(&pg, &scan, T0);
    rs_progress_tick(&pg, 1, T0 + SEC(5));
    ck_assert(rs_progress_counting(&pg) || seen.ntotal == 1);
    ck_assert(tick_until_counted(&pg, T0 + SEC(5)));
    ck_assert_int_eq(seen.ntotal, 1); /* the unknown of the start only */
    rs_progress_tick(&pg, 30, T0 + SEC(10));
    ck_assert_int_eq(ul.msgs->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(ul.msgs, 0, char *),
                     "5: set g: scanning: 30 files so far (total unknown), 3 files/s");
    rs_progress_end(&pg);
}
END_TEST

START_TEST(test_count_stopped)
{
    rs_progress_t pg;
    rs_progress_scan_t scan;
    seen_t seen;
    ut_log_t ul;
    rs_db_t *db = store();
    char *root = tree();

    /* By the end of the scan: no count left; a total found first kept. */
    memset(&pg, 0, sizeof(pg));
    scan_init(&scan, "e", root, db, &ul, &seen);
    rs_progress_begin(&pg, &scan, T0);
    rs_progress_tick(&pg, 1, T0 + SEC(5));
    rs_progress_end(&pg);
    ck_assert(!rs_progress_counting(&pg));
    ck_assert(seen.ntotal == 1 || (seen.ntotal == 2 && seen.total == 18));
    /* Not started after the end, nor by a tick of a scan that ended. */
    rs_progress_tick(&pg, 1, T0 + SEC(6));
    ck_assert(!rs_progress_counting(&pg));
    /* By the next scan's start: its own total, no count of the last. */
    rs_progress_begin(&pg, &scan, T0 + SEC(100));
    rs_progress_tick(&pg, 1, T0 + SEC(105));
    rows(db, "e", 4);
    rs_progress_begin(&pg, &scan, T0 + SEC(200));
    ck_assert(!rs_progress_counting(&pg));
    ck_assert_int_eq((int)seen.total, 4);
    ck_assert_int_eq(seen.src, RS_SCAN_TOTAL_PREVIOUS);
    rs_progress_tick(&pg, 1, T0 + SEC(205));
    ck_assert(!rs_progress_counting(&pg));
    rs_progress_end(&pg);
    /* A root that cannot be opened: no count, the total unknown. */
    scan_init(&scan, "n", ut_path(root, "none"), store(), &ul, &seen);
    rs_progress_begin(&pg, &scan, T0);
    rs_progress_tick(&pg, 1, T0 + SEC(5));
    ck_assert(!rs_progress_counting(&pg));
    ck_assert_int_eq((int)seen.total, -1);
}
END_TEST

Suite *progress_suite(void)
{
    Suite *s = suite_create("progress");
    TCase *tc = ut_tcase("progress", 30);
    tcase_add_test(tc, test_estimate_from_inventory);
    tcase_add_test(tc, test_count_after_delay);
    tcase_add_test(tc, test_count_given_up);
    tcase_add_test(tc, test_count_stopped);
    suite_add_tcase(s, tc);
    return s;
}
