/* SPDX-License-Identifier: Apache-2.0 */
/* test_hashlane.c - rs_hashlane: large files hashed on the lane's own
 * thread, for real: a file deferred then ready with its digests, a file
 * changed while queued read in its new version, a file done for another
 * version queued again, forget, a missing file, captures, many files of
 * two sets, and no lane. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <apr_strings.h>
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include "unit.h"
#include "rs_capture.h"
#include "rs_hash.h"
#include "rs_hashlane.h"

#define MASK (RS_HASH_MD5 | RS_HASH_SHA256)

/* What the callbacks saw (they run on the lane's thread or a test's, with
 * the lane's lock held); `hold` makes the lane's thread wait before it
 * reads a file of that name until it is cleared (in the logger: the
 * lane's debug line comes between its lock and its read). */
typedef struct seen_t {
    apr_thread_mutex_t *lock;
    apr_thread_cond_t *cond;
    int queue;   /* the last number of files waiting */
    int started; /* files the thread started to read */
    int ended;   /* ... and was done with */
    char last[256];
    const char *hold; /* relpath to hold the thread at (NULL: none) */
    int holding;      /* the thread waits at hold */
    volatile apr_int64_t done;
    int nlog;
    char logged[512];
} seen_t;

static void seen_queue(void *baton, int nqueued)
{
    seen_t *s = baton;
    apr_thread_mutex_lock(s->lock);
    s->queue = nqueued;
    apr_thread_mutex_unlock(s->lock);
}

static volatile apr_int64_t *seen_hashing(void *baton, const char *set, const char *relpath,
                                          apr_int64_t size)
{
    seen_t *s = baton;
    (void)size;
    apr_thread_mutex_lock(s->lock);
    if (set) {
        s->started++;
        apr_snprintf(s->last, sizeof(s->last), "%s: %s", set, relpath);
    }
    else {
        s->ended++;
    }
    apr_thread_mutex_unlock(s->lock);
    return &s->done;
}

static void seen_log(void *baton, int level, apr_status_t rv, const char *msg)
{
    seen_t *s = baton;
    (void)rv;
    apr_thread_mutex_lock(s->lock);
    s->nlog++;
    apr_snprintf(s->logged, sizeof(s->logged), "%d: %s", level, msg);
    while (s->hold && strstr(msg, s->hold)) {
        s->holding = 1;
        apr_thread_cond_broadcast(s->cond);
        apr_thread_cond_wait(s->cond, s->lock);
    }
    s->holding = 0;
    apr_thread_mutex_unlock(s->lock);
}

static seen_t seen;
static rs_hashlane_cb_t cb = { seen_queue, seen_hashing, &seen };
static rs_logger_t lg = { seen_log, &seen };

static rs_hashlane_t *lane_new(void)
{
    rs_hashlane_t *lane;
    memset(&seen, 0, sizeof(seen));
    ck_assert_int_eq(apr_thread_mutex_create(&seen.lock, APR_THREAD_MUTEX_DEFAULT, ut_pool), 0);
    ck_assert_int_eq(apr_thread_cond_create(&seen.cond, ut_pool), 0);
    ck_assert_int_eq(rs_hashlane_create(&lane, ut_pool, &cb, &lg), APR_SUCCESS);
    ck_assert_ptr_nonnull(lane);
    return lane;
}

static void src_init(rs_hashlane_src_t *src, rs_hashlane_t *lane, int slot, const char *name)
{
    memset(src, 0, sizeof(*src));
    src->lane = lane;
    src->slot = slot;
    src->name = name;
    src->digests = MASK;
    src->owner = name;
}

/* Hold the lane's thread before it reads relpath; wait until it does. */
static void hold_at(const char *relpath)
{
    apr_thread_mutex_lock(seen.lock);
    seen.hold = relpath;
    apr_thread_mutex_unlock(seen.lock);
}

static int wait_holding(void)
{
    apr_time_t end = apr_time_now() + apr_time_from_sec(10);
    int ok;
    apr_thread_mutex_lock(seen.lock);
    while (!seen.holding && apr_time_now() < end) {
        apr_thread_cond_timedwait(seen.cond, seen.lock, apr_time_from_msec(100));
    }
    ok = seen.holding;
    apr_thread_mutex_unlock(seen.lock);
    return ok;
}

static void release(void)
{
    apr_thread_mutex_lock(seen.lock);
    seen.hold = NULL;
    apr_thread_cond_broadcast(seen.cond);
    apr_thread_mutex_unlock(seen.lock);
}

/* Write n bytes of fill at path; its stat into sb. */
static void write_file(const char *path, size_t n, int fill, struct stat *sb)
{
    char *buf = apr_palloc(ut_pool, n);
    memset(buf, fill, n);
    ut_write(path, buf, n);
    ck_assert_int_eq(stat(path, sb), 0);
}

/* The digests of n bytes of fill. */
static void expect_digests(size_t n, int fill, char hex[RS_HASH_COUNT][RS_HASH_HEXMAX])
{
    char *buf = apr_palloc(ut_pool, n);
    memset(hex, 0, sizeof(char[RS_HASH_COUNT][RS_HASH_HEXMAX]));
    memset(buf, fill, n);
    rs_hash_buf(buf, n, MASK, hex);
}

static void assert_digests(const rs_scan_digest_t *dg, size_t n, int fill)
{
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    int i;
    expect_digests(n, fill, hex);
    ck_assert_int_eq(dg->rc, 0);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        ck_assert_str_eq(dg->hex[i], hex[i]);
    }
    ck_assert_int_gt((int)strlen(dg->hex[0]), 0);
}

/* Take the ready files until want of them came (or 10 s); returns the
 * number taken, their names "slot/relpath" in got (may be NULL). */
static int wait_ready(rs_hashlane_t *lane, int want, apr_hash_t *got)
{
    apr_time_t end = apr_time_now() + apr_time_from_sec(10);
    int n = 0;
    while (n < want && apr_time_now() < end) {
        apr_array_header_t *files;
        int i;
        rs_hashlane_ready(lane, ut_pool, &files);
        for (i = 0; i < files->nelts; i++) {
            const rs_hashlane_file_t *f = &APR_ARRAY_IDX(files, i, rs_hashlane_file_t);
            if (got) {
                const char *k = apr_psprintf(ut_pool, "%d/%s", f->src->slot, f->relpath);
                ck_assert_ptr_null(apr_hash_get(got, k, APR_HASH_KEY_STRING));
                apr_hash_set(got, k, APR_HASH_KEY_STRING, f);
            }
            n++;
        }
        if (n < want) {
            apr_sleep(2000);
        }
    }
    return n;
}

START_TEST(test_deferred_then_ready)
{
    rs_hashlane_t *lane = lane_new();
    rs_hashlane_src_t src;
    char *dir = ut_tempdir("hl-ready");
    char *path = ut_path(dir, "big.bin");
    apr_hash_t *got = apr_hash_make(ut_pool);
    const rs_hashlane_file_t *f;
    rs_scan_digest_t dg;
    apr_array_header_t *files;
    struct stat sb;

    src_init(&src, lane, 3, "s");
    write_file(path, 300000, 'a', &sb);
    memset(&dg, 0, sizeof(dg));
    ck_assert_int_eq(rs_hashlane_defer(&src, "d/big.bin", path, &sb, &dg), 0);
    ck_assert_int_eq(wait_ready(lane, 1, got), 1);
    f = apr_hash_get(got, "3/d/big.bin", APR_HASH_KEY_STRING);
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_eq(f->src, &src);
    ck_assert_str_eq(f->src->owner, "s");
    /* Handed out once. */
    ck_assert_int_eq(rs_hashlane_ready(lane, ut_pool, &files), 0);
    /* The same version: its digests. */
    ck_assert_int_eq(rs_hashlane_defer(&src, "d/big.bin", path, &sb, &dg), 1);
    assert_digests(&dg, 300000, 'a');
    apr_thread_mutex_lock(seen.lock);
    ck_assert_int_eq(seen.started, 1);
    ck_assert_int_eq(seen.ended, 1);
    ck_assert_int_eq(seen.queue, 0);
    ck_assert_str_eq(seen.last, "s: d/big.bin");
    ck_assert_int_eq((int)seen.done, 300000);
    ck_assert_int_eq(seen.nlog, 1);
    ck_assert_str_eq(seen.logged, "7: set s: hashing 'd/big.bin' on the hashing lane");
    apr_thread_mutex_unlock(seen.lock);
    /* Forgotten: a request queues it again. */
    rs_hashlane_forget(lane, &src, "d/big.bin");
    hold_at("d/big.bin");
    ck_assert_int_eq(rs_hashlane_defer(&src, "d/big.bin", path, &sb, &dg), 0);
    ck_assert(wait_holding());
    release();
    ck_assert_int_eq(wait_ready(lane, 1, NULL), 1);
    rs_hashlane_stop(lane);
    ck_assert_int_eq(rs_hashlane_defer(&src, "d/big.bin", path, &sb, &dg), -1);
}
END_TEST

START_TEST(test_changed_while_queued)
{
    rs_hashlane_t *lane = lane_new();
    rs_hashlane_src_t src;
    char *dir = ut_tempdir("hl-queued");
    char *blocker = ut_path(dir, "blocker");
    char *path = ut_path(dir, "a.bin");
    char *path2 = ut_path(dir, "a2.bin");
    struct stat sbb, v1, v2;
    rs_scan_digest_t dg;

    src_init(&src, lane, 0, "q");
    write_file(blocker, 1000, 'b', &sbb);
    write_file(path, 100000, 'x', &v1);
    /* The thread held at the blocker: a.bin waits in the queue. */
    hold_at("blocker");
    ck_assert_int_eq(rs_hashlane_defer(&src, "blocker", blocker, &sbb, &dg), 0);
    ck_assert(wait_holding());
    ck_assert_int_eq(rs_hashlane_defer(&src, "a.bin", path, &v1, &dg), 0);
    ck_assert_int_eq(rs_hashlane_queued(lane), 1);
    /* Changed while queued (its name now leads to another file, as when
     * a link changed): the request for the new version does not queue it
     * twice, and the lane reads the new version. */
    write_file(path2, 150000, 'y', &v2);
    ck_assert_int_eq(rs_hashlane_defer(&src, "a.bin", path2, &v2, &dg), 0);
    ck_assert_int_eq(rs_hashlane_queued(lane), 1);
    apr_thread_mutex_lock(seen.lock);
    ck_assert_int_eq(seen.queue, 1);
    apr_thread_mutex_unlock(seen.lock);
    release();
    ck_assert_int_eq(wait_ready(lane, 2, NULL), 2);
    ck_assert_int_eq(rs_hashlane_defer(&src, "a.bin", path2, &v2, &dg), 1);
    assert_digests(&dg, 150000, 'y');
    /* Asked for another version than the one read: queued again, and not
     * dropped by a forget that comes meanwhile. */
    hold_at("a.bin");
    ck_assert_int_eq(rs_hashlane_defer(&src, "a.bin", path, &v1, &dg), 0);
    ck_assert(wait_holding());
    rs_hashlane_forget(lane, &src, "a.bin");
    write_file(path, 120000, 'z', &v1);
    release();
    ck_assert_int_eq(wait_ready(lane, 1, NULL), 1);
    ck_assert_int_eq(rs_hashlane_defer(&src, "a.bin", path, &v1, &dg), 1);
    assert_digests(&dg, 120000, 'z');
    ck_assert_int_eq(rs_hashlane_defer(&src, "a.bin", path, &v2, &dg), 0);
    /* The lane reads src (on this stack) while it works: stopped (its
     * thread joined) before src goes. */
    rs_hashlane_stop(lane);
}
END_TEST

START_TEST(test_missing_file)
{
    rs_hashlane_t *lane = lane_new();
    rs_hashlane_src_t src;
    char *dir = ut_tempdir("hl-missing");
    char *path = ut_path(dir, "gone.bin");
    rs_scan_digest_t dg;
    struct stat sb;

    src_init(&src, lane, 1, "m");
    write_file(path, 5000, 'g', &sb);
    hold_at("gone.bin");
    ck_assert_int_eq(rs_hashlane_defer(&src, "gone.bin", path, &sb, &dg), 0);
    ck_assert(wait_holding());
    ck_assert_int_eq(unlink(path), 0);
    release();
    ck_assert_int_eq(wait_ready(lane, 1, NULL), 1);
    /* Done with the read's error (the version asked for stays). */
    ck_assert_int_eq(rs_hashlane_defer(&src, "gone.bin", path, &sb, &dg), 1);
    ck_assert_int_eq(dg.rc, ENOENT);
    ck_assert_str_eq(dg.hex[0], "");
    /* The lane reads src (on this stack) while it works: stopped (its
     * thread joined) before src goes. */
    rs_hashlane_stop(lane);
}
END_TEST

START_TEST(test_capture)
{
    rs_hashlane_t *lane = lane_new();
    rs_hashlane_src_t src;
    char *dir = ut_tempdir("hl-capture");
    char *capdir = ut_path(dir, "capture");
    char *path = ut_path(dir, "c.bin");
    const char *hex[RS_HASH_COUNT];
    rs_scan_digest_t dg;
    struct stat sb;
    int i;

    ut_mkdir(capdir);
    src_init(&src, lane, 2, "c");
    src.capture_dir = capdir;
    write_file(path, 70000, 'c', &sb);
    ck_assert_int_eq(rs_hashlane_defer(&src, "c.bin", path, &sb, &dg), 0);
    ck_assert_int_eq(wait_ready(lane, 1, NULL), 1);
    ck_assert_int_eq(rs_hashlane_defer(&src, "c.bin", path, &sb, &dg), 1);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        hex[i] = dg.hex[i];
    }
    ck_assert(rs_capture_has(capdir, rs_capture_key(hex)));
    ck_assert_int_eq((int)rs_capture_bytes(capdir, ut_pool), 70000);
    /* The lane reads src (on this stack) while it works: stopped (its
     * thread joined) before src goes. */
    rs_hashlane_stop(lane);
}
END_TEST

START_TEST(test_many_files)
{
    rs_hashlane_t *lane = lane_new();
    rs_hashlane_src_t src[2];
    char *dir = ut_tempdir("hl-many");
    apr_hash_t *got = apr_hash_make(ut_pool);
    struct stat sb[2][40];
    rs_scan_digest_t dg;
    int i, k;

    src_init(&src[0], lane, 0, "one");
    src_init(&src[1], lane, 1, "two");
    /* The same names in two sets, of other contents. */
    for (k = 0; k < 2; k++) {
        for (i = 0; i < 40; i++) {
            char *p = ut_path(dir, apr_psprintf(ut_pool, "%d-%02d", k, i));
            write_file(p, (size_t)(4096 + i), 'A' + i + k, &sb[k][i]);
            ck_assert_int_eq(
                rs_hashlane_defer(&src[k], apr_psprintf(ut_pool, "f%02d", i), p, &sb[k][i], &dg),
                0);
        }
    }
    ck_assert_int_eq(wait_ready(lane, 80, got), 80);
    ck_assert_int_eq((int)apr_hash_count(got), 80);
    for (k = 0; k < 2; k++) {
        for (i = 0; i < 40; i++) {
            char *p = ut_path(dir, apr_psprintf(ut_pool, "%d-%02d", k, i));
            const char *rel = apr_psprintf(ut_pool, "f%02d", i);
            ck_assert_int_eq(rs_hashlane_defer(&src[k], rel, p, &sb[k][i], &dg), 1);
            assert_digests(&dg, (size_t)(4096 + i), 'A' + i + k);
            rs_hashlane_forget(lane, &src[k], rel);
        }
    }
    ck_assert_int_eq(rs_hashlane_queued(lane), 0);
    /* All forgotten: asking again queues. */
    ck_assert_int_eq(rs_hashlane_defer(&src[1], "f00", ut_path(dir, "1-00"), &sb[1][0], &dg), 0);
    /* The lane reads src (on this stack) while it works: stopped (its
     * thread joined) before src goes. */
    rs_hashlane_stop(lane);
}
END_TEST

START_TEST(test_no_lane)
{
    rs_hashlane_src_t src;
    rs_scan_digest_t dg;
    apr_array_header_t *files;
    struct stat sb;

    memset(&sb, 0, sizeof(sb));
    src_init(&src, NULL, 0, "n");
    ck_assert_int_eq(rs_hashlane_defer(&src, "x", "/nonexistent", &sb, &dg), -1);
    ck_assert_int_eq(rs_hashlane_defer(NULL, "x", "/nonexistent", &sb, &dg), -1);
    ck_assert_int_eq(rs_hashlane_ready(NULL, ut_pool, &files), 0);
    ck_assert_int_eq(files->nelts, 0);
}
END_TEST

Suite *hashlane_suite(void)
{
    Suite *s = suite_create("hashlane");
    TCase *tc = ut_tcase("lane", 60);
    tcase_add_test(tc, test_deferred_then_ready);
    tcase_add_test(tc, test_changed_while_queued);
    tcase_add_test(tc, test_missing_file);
    tcase_add_test(tc, test_capture);
    tcase_add_test(tc, test_many_files);
    tcase_add_test(tc, test_no_lane);
    suite_add_tcase(s, tc);
    return s;
}
