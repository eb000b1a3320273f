/* SPDX-License-Identifier: Apache-2.0 */
/* rs_progress.h - a full scan's progress, for operators.
 *
 * When a full scan starts (rs_progress_begin, the driver's thread) its
 * owner is told the number of files it is expected to see: the rows the
 * store already holds for the set (what the previous scans found), or,
 * at a set's first scan (an empty inventory), a count of the tree's
 * non-directory names by readdir alone (no stat, no access check), given
 * up after count_max (RS_PROGRESS_COUNT_MAX; the total is then unknown).
 * Either figure is an estimate: files come and go while the scan runs,
 * and the scan skips excluded and unreadable names.
 *
 * The count runs on a thread of its own while the scan goes on: counting
 * first would delay a first scan by as long (a second at a million
 * files).  It starts only half a progress interval into the scan (5 s;
 * no progress line comes before the interval): a shorter scan never
 * counts, and does not share the processors with the count (a second
 * readdir of the whole tree).  Lifecycle: started by the first
 * rs_progress_tick after that delay, its result taken by the first
 * rs_progress_tick after it is done (the thread is joined there, on the
 * driver's thread), or by rs_progress_end after the scan, which stops it
 * first (a total that comes after the scan serves nothing, and waiting
 * for it would make the scan longer); the next scan's rs_progress_begin
 * stops one left over (a flag checked per name).  Until then the total
 * is unknown.  The thread only reads directories and writes count_n
 * before it sets count_done.
 *
 * As the scan goes (rs_progress_tick, from its progress callback, once
 * per directory) the owner is asked once a second to refresh the set's
 * entry (its inotify watches grow as directories are reached), and every
 * interval (RS_PROGRESS_INTERVAL) a notice line tells the files so far,
 * the total, the rate and the time left.
 *
 * Times are monotonic and arguments, except the count's own deadline
 * (read on its thread).  One scan at a time, from one thread.
 */
#ifndef RS_PROGRESS_H
#define RS_PROGRESS_H

#include <apr_pools.h>
#include <apr_thread_proc.h>
#include <apr_time.h>
#include "rs_db.h"
#include "rs_log.h"

#define RS_PROGRESS_INTERVAL  apr_time_from_sec(10)
#define RS_PROGRESS_COUNT_MAX apr_time_from_sec(2)
#define RS_PROGRESS_DEPTH_MAX 256

/* A full scan, as its progress sees it (kept by rs_progress_begin: the
 * strings, the logger and the pool must live as long as the scan). */
typedef struct rs_progress_scan_t {
    const char *set;               /* its name, logged */
    const char *root;              /* the tree counted at a first scan */
    rs_db_t *db;                   /* the set's rows: the estimate */
    apr_pool_t *pool;              /* the count's pool is made below it (its
                             * allocator must be thread-safe) */
    const rs_logger_t *log;        /* the notice lines */
    apr_interval_time_t interval;  /* between notice lines; 0: RS_PROGRESS_INTERVAL */
    apr_interval_time_t count_max; /* the count's time; 0: RS_PROGRESS_COUNT_MAX */
    /* The expected total changed (-1: unknown) and where it comes from
     * (RS_SCAN_TOTAL_*); NULL: not told. */
    void (*total)(void *baton, apr_int64_t total, apr_int32_t src);
    /* Once a second during the scan: the set's entry; NULL: none. */
    void (*refresh)(void *baton);
    void *baton;
} rs_progress_scan_t;

/* The progress of the scan in progress (all zero: none yet). */
typedef struct rs_progress_t {
    rs_progress_scan_t scan;
    apr_time_t t0;       /* start of the scan */
    apr_time_t next_log; /* the next notice line */
    apr_time_t next_put; /* the next refresh */
    apr_int64_t total;   /* expected files, -1: unknown */
    apr_int32_t total_src;
    /* The count of a first scan (see the top). */
    apr_time_t count_at;    /* when to start it; 0: no count to start */
    apr_pool_t *count_pool; /* NULL: no count running */
    apr_thread_t *count_thread;
    int count_fd;
    apr_int64_t count_n; /* written by the thread before count_done */
    volatile apr_uint32_t count_done;
    volatile apr_uint32_t count_stop;
} rs_progress_t;

/* A full scan starts at now: its expected total (told through
 * scan->total; a count left from an earlier scan is stopped first). */
void rs_progress_begin(rs_progress_t *pg, const rs_progress_scan_t *scan, apr_time_t now);

/* The scan has seen files so far at now: the count started or taken, the
 * refresh once a second, a notice line every interval. */
void rs_progress_tick(rs_progress_t *pg, apr_int64_t files, apr_time_t now);

/* After the scan: a count still running is stopped (a total it found
 * first is kept). */
void rs_progress_end(rs_progress_t *pg);

/* Whether a count of the tree runs (started and not taken yet). */
int rs_progress_counting(const rs_progress_t *pg);

#endif
