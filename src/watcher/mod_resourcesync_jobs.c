/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_jobs.c - background work of the watcher.
 *
 * Some of the watcher's work takes long and needs only the store and the
 * state directory: writing a Resource List snapshot today, building dump
 * packages and delivering notifications next.  It runs on one job thread
 * with a store connection of its own, so the event loop (the driver)
 * keeps following changes meanwhile.
 *
 * Lifecycle of a job:
 *   1. the driver makes it (rs_jobs_create), with a pool of its own on an
 *      allocator of its own, and prepares its input in that pool;
 *   2. rs_jobs_submit hands it to the job thread (started on first use),
 *      whose run function gets the thread's store connection (opened on
 *      first use, with an allocator of its own as well); without a thread
 *      the job runs inline, on the driver's own connection;
 *   3. the job thread sets `done`; the driver notices it in rs_jobs_reap
 *      (polled from the event loop, or waited for) and calls the finish
 *      function on its own thread, where it may touch the driver's state,
 *      the main store connection and the status segment; then the job's
 *      pool is destroyed.
 *
 * One job at a time: rs_jobs_submit first finishes the previous job
 * (waiting for it), so the job thread and the driver never use the same
 * pool, and whatever the driver reads between jobs (a set's generation
 * counter) is not changed behind its back.  The job thread never exits:
 * the watcher ends with _exit.
 */
#include <apr_atomic.h>
#include <apr_thread_proc.h>
#include <apr_thread_mutex.h>
#include <apr_thread_cond.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_jobs.h"
#include "mod_resourcesync_logonce.h"
#include "rs_statedir.h"
#include "rs_history.h"
#include "rs_inventory.h"
#include "rs_schema.h"

struct rs_job_t {
    apr_pool_t *pool; /* own allocator: used by the job thread */
    rs_job_run_fn *run;
    rs_job_finish_fn *finish;
    void *baton;
    apr_status_t rv;
    volatile apr_uint32_t done; /* set by the runner, read by the driver */
};

/* State of the job machinery.  Everything except `next` (handed over
 * under `lock`) and the job thread's store is only touched by the
 * driver's thread. */
static struct {
    apr_pool_t *pool; /* the watcher's: mutex, cond, thread */
    rs_db_t *store;   /* the driver's connection (inline jobs) */
    rs_logger_t log;  /* for messages of the job thread */
    apr_thread_t *thread;
    int thread_failed;
    apr_thread_mutex_t *lock;
    apr_thread_cond_t *cond;
    rs_job_t *next;    /* handed to the thread under lock */
    rs_job_t *running; /* submitted, not finished yet */
    rs_db_t *tstore;   /* the job thread's connection */
    apr_pool_t *tstore_pool;
} jobs;

/* Messages from the job thread go straight to the error log (the
 * once-only memory of rs_logonce belongs to the driver's thread). */
static void thread_log(void *baton, int level, apr_status_t rv, const char *msg)
{
    if (level <= RS_LOG_WARN) {
        rs_logonce_note(rv, msg);
    }
    ap_log_error(APLOG_MARK, level, rv, (server_rec *)baton, RS_TAG "%s", msg);
}

void rs_jobs_init(apr_pool_t *pool, server_rec *s, rs_db_t *store)
{
    jobs.pool = pool;
    jobs.store = store;
    jobs.log.fn = thread_log;
    jobs.log.baton = s;
}

const rs_logger_t *rs_jobs_logger(void)
{
    return &jobs.log;
}

apr_status_t rs_jobs_store_open(rs_db_t **out, apr_pool_t **pool, const rs_logger_t *log)
{
    apr_allocator_t *alloc;
    apr_status_t rv;

    apr_allocator_create(&alloc);
    apr_pool_create_ex(pool, NULL, NULL, alloc);
    apr_allocator_owner_set(alloc, *pool);
    rv = rs_schema_open(out, *pool, RS_STATEDIR_DB_DRIVER,
                        rs_statedir_db(*pool, rs_global.state_dir), log);
    if (rv != APR_SUCCESS) {
        *out = NULL;
        apr_pool_destroy(*pool);
        *pool = NULL;
    }
    return rv;
}

/* Job thread: its store connection, opened at its first job and kept
 * (a failure is retried at the next job). */
static rs_db_t *thread_store(void)
{
    if (!jobs.tstore) {
        rs_jobs_store_open(&jobs.tstore, &jobs.tstore_pool, &jobs.log);
    }
    return jobs.tstore;
}

void rs_jobs_close_store(void)
{
    rs_jobs_reap(1);
    jobs.store = NULL;
    if (jobs.tstore) {
        jobs.tstore = NULL;
        apr_pool_destroy(jobs.tstore_pool);
        jobs.tstore_pool = NULL;
    }
}

static void *APR_THREAD_FUNC job_thread(apr_thread_t *t, void *data)
{
    (void)t;
    (void)data;
    for (;;) {
        rs_job_t *j;
        rs_db_t *store;
        apr_thread_mutex_lock(jobs.lock);
        while (!jobs.next) {
            apr_thread_cond_wait(jobs.cond, jobs.lock);
        }
        j = jobs.next;
        jobs.next = NULL;
        apr_thread_mutex_unlock(jobs.lock);
        store = thread_store();
        j->rv = store ? j->run(j->baton, store, j->pool) : APR_EGENERAL;
        apr_atomic_set32(&j->done, 1);
    }
    return NULL;
}

/* Hand j to the job thread (started on first use).  Returns 0 if there
 * is no thread to run it. */
static int hand_over(rs_job_t *j)
{
    if (!jobs.thread && !jobs.thread_failed) {
        if (apr_thread_mutex_create(&jobs.lock, APR_THREAD_MUTEX_DEFAULT, jobs.pool) != APR_SUCCESS
            || apr_thread_cond_create(&jobs.cond, jobs.pool) != APR_SUCCESS
            || apr_thread_create(&jobs.thread, NULL, job_thread, NULL, jobs.pool) != APR_SUCCESS) {
            jobs.thread_failed = 1;
        }
    }
    if (!jobs.thread) {
        return 0;
    }
    apr_thread_mutex_lock(jobs.lock);
    jobs.next = j;
    apr_thread_cond_signal(jobs.cond);
    apr_thread_mutex_unlock(jobs.lock);
    return 1;
}

rs_job_t *rs_jobs_create(apr_pool_t **pool)
{
    apr_allocator_t *alloc;
    apr_pool_t *p;
    rs_job_t *j;

    apr_allocator_create(&alloc);
    apr_pool_create_ex(&p, NULL, NULL, alloc);
    apr_allocator_owner_set(alloc, p);
    j = apr_pcalloc(p, sizeof(*j));
    j->pool = p;
    *pool = p;
    return j;
}

static void finish(rs_job_t *j)
{
    j->finish(j->baton, j->rv, j->pool);
    apr_pool_destroy(j->pool);
}

void rs_jobs_drop(rs_job_t *j, rs_job_finish_fn *fin, void *baton, apr_status_t rv)
{
    j->finish = fin;
    j->baton = baton;
    j->rv = rv;
    finish(j);
}

void rs_jobs_submit(rs_job_t *j, rs_job_run_fn *run, rs_job_finish_fn *fin, void *baton, int async)
{
    rs_jobs_reap(1);
    j->run = run;
    j->finish = fin;
    j->baton = baton;
    jobs.running = j;
    if (async && hand_over(j)) {
        return;
    }
    j->rv = run(baton, jobs.store, j->pool);
    j->done = 1;
    rs_jobs_reap(1);
}

int rs_jobs_busy(void)
{
    return jobs.running != NULL;
}

void rs_jobs_reap(int wait)
{
    rs_job_t *j = jobs.running;

    if (!j || (!wait && !apr_atomic_read32(&j->done))) {
        return;
    }
    while (!apr_atomic_read32(&j->done)) {
        apr_sleep(apr_time_from_msec(5));
    }
    jobs.running = NULL;
    finish(j);
}

apr_status_t rs_jobs_same_store(rs_db_t *store, apr_pool_t *p, const char *history)
{
    const char *h = NULL;
    apr_status_t rv = rs_db_meta_get(store, p, RS_HISTORY_META, &h);

    if (rv != APR_SUCCESS) {
        return rv;
    }
    return h && !strcmp(h, history) ? APR_SUCCESS : APR_ENOENT;
}
