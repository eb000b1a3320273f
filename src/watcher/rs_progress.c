/* SPDX-License-Identifier: Apache-2.0 */
/* rs_progress.c - see rs_progress.h */
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <apr_atomic.h>
#include "rs_inventory.h"
#include "rs_progress.h"
#include "rs_scanrate.h"
#include "rs_time.h"

/* Non-directory names below the directory open as fd (which is closed);
 * -1 once the deadline (monotonic) passed or the count is stopped. */
static apr_int64_t count_tree(rs_progress_t *pg, int fd, apr_time_t deadline, int depth)
{
    DIR *d = fdopendir(fd);
    struct dirent *de;
    apr_int64_t n = 0, sub;

    if (!d) {
        close(fd);
        return 0;
    }
    while (n >= 0 && (de = readdir(d))) {
        if (apr_atomic_read32(&pg->count_stop)) {
            n = -1;
            break;
        }
        int cfd;
        if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2]))) {
            continue;
        }
        if (de->d_type != DT_DIR) {
            n++; /* DT_UNKNOWN counted as a file: an estimate */
            continue;
        }
        if (depth >= RS_PROGRESS_DEPTH_MAX || rs_time_mono() > deadline) {
            n = depth >= RS_PROGRESS_DEPTH_MAX ? n : -1;
            continue;
        }
        cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (cfd >= 0) {
            sub = count_tree(pg, cfd, deadline, depth + 1);
            n = sub < 0 ? -1 : n + sub;
        }
    }
    closedir(d);
    return n;
}

static void *APR_THREAD_FUNC count_main(apr_thread_t *t, void *data)
{
    rs_progress_t *pg = data;
    apr_interval_time_t max = pg->scan.count_max > 0 ? pg->scan.count_max : RS_PROGRESS_COUNT_MAX;

    (void)t;
    pg->count_n = count_tree(pg, pg->count_fd, rs_time_mono() + max, 0);
    apr_atomic_set32(&pg->count_done, 1);
    return NULL;
}

static void tell_total(rs_progress_t *pg)
{
    if (pg->scan.total) {
        pg->scan.total(pg->scan.baton, pg->total, pg->total_src);
    }
}

/* Start counting the names of the scan's tree on a thread; 0 when it
 * could not be started (the total stays unknown). */
static int count_start(rs_progress_t *pg)
{
    int fd = open(pg->scan.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0) {
        return 0;
    }
    /* The thread's own pool is made and destroyed by APR below this one
     * (also on the thread): safe beside the scan, since the watcher's
     * allocator has a mutex (fork_watcher). */
    apr_pool_create(&pg->count_pool, pg->scan.pool);
    pg->count_fd = fd;
    pg->count_n = -1;
    apr_atomic_set32(&pg->count_done, 0);
    apr_atomic_set32(&pg->count_stop, 0);
    if (apr_thread_create(&pg->count_thread, NULL, count_main, pg, pg->count_pool) != APR_SUCCESS) {
        close(fd);
        apr_pool_destroy(pg->count_pool);
        pg->count_pool = NULL;
        return 0;
    }
    return 1;
}

/* Join the count (stopping it first when stop) and tell its total. */
static void count_take(rs_progress_t *pg, int stop)
{
    apr_status_t trv;

    if (!pg->count_pool) {
        return;
    }
    if (stop) {
        apr_atomic_set32(&pg->count_stop, 1);
    }
    apr_thread_join(&trv, pg->count_thread);
    if (pg->count_n >= 0) {
        pg->total = pg->count_n;
        pg->total_src = RS_SCAN_TOTAL_COUNTED;
        tell_total(pg);
    }
    apr_pool_destroy(pg->count_pool);
    pg->count_pool = NULL;
}

void rs_progress_begin(rs_progress_t *pg, const rs_progress_scan_t *scan, apr_time_t now)
{
    apr_int64_t n = 0;

    count_take(pg, 1); /* a count left from an earlier scan */
    pg->scan = *scan;
    pg->count_at = 0;
    pg->total = -1;
    pg->total_src = RS_SCAN_TOTAL_UNKNOWN;
    if (rs_inventory_count(scan->db, scan->set, &n) == APR_SUCCESS && n > 0) {
        pg->total = n;
        pg->total_src = RS_SCAN_TOTAL_PREVIOUS;
    }
    if (pg->scan.interval <= 0) {
        pg->scan.interval = RS_PROGRESS_INTERVAL;
    }
    pg->t0 = now;
    if (pg->total_src == RS_SCAN_TOTAL_UNKNOWN) {
        pg->count_at = now + pg->scan.interval / 2;
    }
    pg->next_log = now + pg->scan.interval;
    pg->next_put = now + apr_time_from_sec(1);
    tell_total(pg);
}

void rs_progress_end(rs_progress_t *pg)
{
    pg->count_at = 0;
    count_take(pg, 1); /* a total it found first is kept */
}

int rs_progress_counting(const rs_progress_t *pg)
{
    return pg->count_pool != NULL;
}

void rs_progress_tick(rs_progress_t *pg, apr_int64_t files, apr_time_t now)
{
    double rate, left;

    if (pg->count_at > 0 && now >= pg->count_at) {
        pg->count_at = 0;
        count_start(pg);
    }
    if (pg->count_pool && apr_atomic_read32(&pg->count_done)) {
        count_take(pg, 0);
    }
    if (now >= pg->next_put) {
        pg->next_put = now + apr_time_from_sec(1);
        if (pg->scan.refresh) {
            pg->scan.refresh(pg->scan.baton);
        }
    }
    if (now < pg->next_log) {
        return;
    }
    pg->next_log = now + pg->scan.interval;
    rs_scanrate_estimate(files, pg->total, now - pg->t0, &rate, &left);
    if (pg->total >= 0) {
        rs_log_emit(pg->scan.log, RS_LOG_NOTICE, 0,
                    "set %s: scanning: %" APR_INT64_T_FMT " of about %" APR_INT64_T_FMT
                    " files (estimate: %s), %.0f files/s, "
                    "about %.0f s left",
                    pg->scan.set, files, pg->total, rs_scanrate_source(pg->total_src), rate, left);
    }
    else {
        rs_log_emit(pg->scan.log, RS_LOG_NOTICE, 0,
                    "set %s: scanning: %" APR_INT64_T_FMT
                    " files so far (total unknown), %.0f files/s",
                    pg->scan.set, files, rate);
    }
}
