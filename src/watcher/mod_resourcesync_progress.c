/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_progress.c - a full scan's progress, for operators.
 *
 * When a full scan starts (rs_progress_begin, driver's thread) the status
 * segment gets its start time and the number of files it is expected to
 * see: the rows the store already holds for the set (what the previous
 * scans found), or, at a set's first scan (an empty inventory), a count
 * of the tree's non-directory names by readdir alone (no stat, no access
 * check), given up after RS_PROGRESS_COUNT_MAX (the total is then
 * unknown).  Either figure is an estimate: files come and go while the
 * scan runs, and the scan skips excluded and unreadable names.
 *
 * The count runs on a thread of its own while the scan goes on: counting
 * first would delay a first scan by as long (a second at a million
 * files).  It starts only half a progress interval into the scan (5 s;
 * no progress line comes before the interval): a shorter scan never
 * counts, and does not share the processors with the count (a second
 * readdir of the whole tree).  Lifecycle: started by the first
 * rs_progress_tick after that delay, its result taken by
 * the first rs_progress_tick after it is done (the thread is joined
 * there, on the driver's thread), or by rs_progress_end after the scan,
 * which stops it first (a total that comes after the scan serves
 * nothing, and waiting for it would make the scan longer); the next
 * scan's rs_progress_begin stops one left over (a flag checked per
 * name).  Until then the
 * total is unknown.  The thread only reads directories and writes
 * pg.count_n before it sets pg.count_done.
 *
 * As the scan goes (rs_progress_tick, from its progress callback, once
 * per directory) the files seen so far go to the segment, the set's entry
 * is refreshed once a second (its inotify watches grow as directories are
 * reached), and every RS_PROGRESS_INTERVAL a notice line tells the files
 * so far, the total, the rate and the time left.  The interval may be
 * shortened for tests with the environment variable
 * RESOURCESYNC_PROGRESS_MS (milliseconds, read at each scan's start).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <apr_atomic.h>
#include <apr_strings.h>
#include <apr_thread_proc.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_status.h"
#include "rs_scanrate.h"
#include "rs_time.h"

#define RS_PROGRESS_INTERVAL  apr_time_from_sec(10)
#define RS_PROGRESS_COUNT_MAX apr_time_from_sec(2)
#define RS_PROGRESS_DEPTH_MAX 256

static struct {
    apr_interval_time_t interval;
    apr_time_t next_log; /* monotonic */
    apr_time_t next_put; /* monotonic */
    apr_time_t t0;       /* monotonic start of the scan */
    /* The count of a first scan (see the top). */
    apr_time_t count_at;    /* monotonic; 0: no count to start */
    apr_pool_t *count_pool; /* NULL: no count running */
    apr_thread_t *count_thread;
    int count_fd;
    apr_int64_t count_n; /* written by the thread before count_done */
    volatile apr_uint32_t count_done;
    volatile apr_uint32_t count_stop;
} pg;

/* Non-directory names below the directory open as fd (which is closed);
 * -1 once the deadline (monotonic) passed. */
static apr_int64_t count_tree(int fd, apr_time_t deadline, int depth)
{
    DIR *d = fdopendir(fd);
    struct dirent *de;
    apr_int64_t n = 0, sub;

    if (!d) {
        close(fd);
        return 0;
    }
    while (n >= 0 && (de = readdir(d))) {
        if (apr_atomic_read32(&pg.count_stop)) {
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
            sub = count_tree(cfd, deadline, depth + 1);
            n = sub < 0 ? -1 : n + sub;
        }
    }
    closedir(d);
    return n;
}

static void *APR_THREAD_FUNC count_main(apr_thread_t *t, void *data)
{
    (void)t;
    (void)data;
    pg.count_n = count_tree(pg.count_fd, rs_time_mono() + RS_PROGRESS_COUNT_MAX, 0);
    apr_atomic_set32(&pg.count_done, 1);
    return NULL;
}

/* Start counting the names of ws's tree on a thread; 0 when it could not
 * be started (the total stays unknown). */
static int count_start(wset_t *ws)
{
    int fd = open(ws->set->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0) {
        return 0;
    }
    /* The thread's own pool is made and destroyed by APR below this one
     * (also on the thread): safe beside the scan, since the watcher's
     * allocator has a mutex (fork_watcher). */
    apr_pool_create(&pg.count_pool, ws->d->pool);
    pg.count_fd = fd;
    pg.count_n = -1;
    apr_atomic_set32(&pg.count_done, 0);
    apr_atomic_set32(&pg.count_stop, 0);
    if (apr_thread_create(&pg.count_thread, NULL, count_main, NULL, pg.count_pool) != APR_SUCCESS) {
        close(fd);
        apr_pool_destroy(pg.count_pool);
        pg.count_pool = NULL;
        return 0;
    }
    return 1;
}

/* Join the count (stopping it first when stop) and put its total in the
 * status segment. */
static void count_take(int stop)
{
    rs_status_t *st = rs_status_get();
    apr_status_t trv;

    if (!pg.count_pool) {
        return;
    }
    if (stop) {
        apr_atomic_set32(&pg.count_stop, 1);
    }
    apr_thread_join(&trv, pg.count_thread);
    if (st && pg.count_n >= 0) {
        st->scan_total = pg.count_n;
        st->scan_total_src = RS_SCAN_TOTAL_COUNTED;
    }
    apr_pool_destroy(pg.count_pool);
    pg.count_pool = NULL;
}

/* The expected total of a full scan of ws's set and where it comes from
 * (unknown while a count runs). */
static apr_int64_t expected(wset_t *ws, apr_int32_t *src)
{
    apr_int64_t n = 0;

    count_take(1); /* a count left from an earlier scan */
    pg.count_at = 0;
    *src = RS_SCAN_TOTAL_UNKNOWN;
    if (rs_inventory_count(ws->d->store, ws->set->name, &n) == APR_SUCCESS && n > 0) {
        *src = RS_SCAN_TOTAL_PREVIOUS;
        return n;
    }
    pg.count_at = -1; /* rs_progress_begin sets the time */
    return -1;
}

void rs_progress_end(wset_t *ws)
{
    (void)ws;
    pg.count_at = 0;
    count_take(1); /* a total it found first is kept */
}

void rs_progress_begin(wset_t *ws)
{
    rs_status_t *st = rs_status_get();
    const char *env = getenv("RESOURCESYNC_PROGRESS_MS");
    apr_int32_t src = RS_SCAN_TOTAL_UNKNOWN;
    apr_int64_t total = expected(ws, &src);

    pg.interval = env && apr_atoi64(env) > 0 ? apr_time_from_msec(apr_atoi64(env))
                                             : RS_PROGRESS_INTERVAL;
    pg.t0 = rs_time_mono();
    if (pg.count_at < 0) {
        pg.count_at = pg.t0 + pg.interval / 2;
    }
    pg.next_log = pg.t0 + pg.interval;
    pg.next_put = pg.t0 + apr_time_from_sec(1);
    if (st) {
        st->scan_total = total;
        st->scan_total_src = src;
        st->scan_start = apr_time_now();
    }
}

void rs_progress_tick(wset_t *ws, apr_int64_t files)
{
    rs_status_t *st = rs_status_get();
    apr_time_t now = rs_time_mono();
    double rate, left;
    apr_int64_t total;

    if (pg.count_at > 0 && now >= pg.count_at) {
        pg.count_at = 0;
        count_start(ws);
    }
    if (pg.count_pool && apr_atomic_read32(&pg.count_done)) {
        count_take(0);
    }
    total = st ? st->scan_total : -1;
    if (now >= pg.next_put) {
        pg.next_put = now + apr_time_from_sec(1);
        rs_wset_status_put(ws);
    }
    if (now < pg.next_log) {
        return;
    }
    pg.next_log = now + pg.interval;
    rs_scanrate_estimate(files, total, now - pg.t0, &rate, &left);
    if (total >= 0) {
        rs_log_emit(ws->log, RS_LOG_NOTICE, 0,
                    "set %s: scanning: %" APR_INT64_T_FMT " of about %" APR_INT64_T_FMT
                    " files (estimate: %s), %.0f files/s, "
                    "about %.0f s left",
                    ws->set->name, files, total, rs_scanrate_source(st->scan_total_src), rate,
                    left);
    }
    else {
        rs_log_emit(ws->log, RS_LOG_NOTICE, 0,
                    "set %s: scanning: %" APR_INT64_T_FMT
                    " files so far (total unknown), %.0f files/s",
                    ws->set->name, files, rate);
    }
}
