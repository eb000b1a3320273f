/* SPDX-License-Identifier: Apache-2.0 */
/* rs_jobthread.h - background work of the watcher: one job thread with a
 * store connection of its own, one job at a time.
 *
 * Some of the watcher's work takes long and needs only the store and the
 * state directory: writing a Resource List snapshot, building dump
 * packages, withdrawing packages.  It runs on one job thread with a store
 * connection of its own, so the event loop (the driver) keeps following
 * changes meanwhile.
 *
 * Lifecycle of a job:
 *   1. the driver makes it (rs_jobthread_create), with a pool of its own
 *      on an allocator of its own, and prepares its input in that pool;
 *   2. rs_jobthread_submit hands it to the job thread (started on first
 *      use), whose run function gets the thread's store connection
 *      (opened on first use from the state directory, with an allocator
 *      of its own as well); without a thread the job runs inline, on the
 *      driver's own connection;
 *   3. the job thread sets `done`; the driver notices it in
 *      rs_jobthread_reap (polled from the event loop, or waited for) and
 *      calls the finish function on its own thread, where it may touch
 *      the driver's state, the main store connection and the status
 *      segment; then the job's pool is destroyed.
 *
 * One job at a time: rs_jobthread_submit first finishes the previous job
 * (waiting for it), so the job thread and the driver never use the same
 * pool, and whatever the driver reads between jobs (a set's generation
 * counter) is not changed behind its back.  The job thread never exits:
 * the watcher ends with _exit.
 *
 * Threads: every function is for the driver's thread (the one that made
 * the state), except the run functions and the thread's logger, used on
 * the job thread.  Only `next` is shared, under `lock`.
 */
#ifndef RS_JOBTHREAD_H
#define RS_JOBTHREAD_H

#include <apr_pools.h>
#include <apr_thread_proc.h>
#include <apr_thread_mutex.h>
#include <apr_thread_cond.h>
#include "rs_db.h"
#include "rs_log.h"
#include "rs_storecfg.h"

typedef struct rs_job_t rs_job_t;
/* Runs the job, on the job thread (or inline on the driver's thread);
 * store is the connection of the thread that runs it, p the job's pool.
 * Its result is passed to the finish function. */
typedef apr_status_t rs_job_run_fn(void *baton, rs_db_t *store, apr_pool_t *p);
/* Runs on the driver's thread once the job is done (rv: the run's
 * result); the job's pool p is destroyed right after. */
typedef void rs_job_finish_fn(void *baton, apr_status_t rv, apr_pool_t *p);

/* The job machinery.  All zero before rs_jobthread_setup; the members
 * below the first five are the engine's (storecfg: the caller's, after
 * rs_jobthread_setup, NULL meaning SQLite in state_dir). */
typedef struct rs_jobthread_t {
    apr_pool_t *pool;              /* the watcher's: mutex, cond, thread */
    const char *state_dir;         /* the job thread's connection is opened there */
    rs_db_t *store;                /* the driver's connection (inline jobs) */
    const rs_logger_t *log;        /* messages of the job thread (any thread) */
    const rs_storecfg_t *storecfg; /* the store the job thread opens */
    apr_thread_t *thread;
    int thread_failed; /* it could not be started: jobs run inline */
    apr_thread_mutex_t *lock;
    apr_thread_cond_t *cond;
    rs_job_t *next;    /* handed to the thread under lock */
    rs_job_t *running; /* submitted, not finished yet */
    rs_db_t *tstore;   /* the job thread's connection */
    apr_pool_t *tstore_pool;
    int quit; /* under lock: the thread ends (rs_jobthread_stop) */
} rs_jobthread_t;

/* Before the first job, and again with the driver's new connection after
 * rs_jobthread_close_store: the pool of the job thread and its lock (it
 * must live as long as the watcher), the state directory, the driver's
 * store connection (for jobs run inline) and the job thread's logger
 * (kept: it must live as long as jt).  The thread, if started, stays. */
void rs_jobthread_setup(rs_jobthread_t *jt, apr_pool_t *pool, const char *state_dir, rs_db_t *store,
                        const rs_logger_t *log);

/* End the job thread after the job it runs (whose finish function is
 * not called: its pool is destroyed) and close the thread's connection.
 * The watcher never calls it (it ends with _exit, the thread with it);
 * an owner that must leave nothing behind (the unit tests) does, before
 * the pool given to rs_jobthread_setup goes. */
void rs_jobthread_stop(rs_jobthread_t *jt);

/* Close the job thread's store connection (opened again at its next job)
 * and forget the driver's, after finishing the job in progress: the
 * driver replaces its connection.  SQLite shares a file's locks and
 * shared-memory index among the connections of a process, so a
 * connection opened read-only (an immutable file) must be closed before
 * a writable one can be had. */
void rs_jobthread_close_store(rs_jobthread_t *jt);

/* A store connection to the store storecfg names (NULL: SQLite in
 * state_dir, rs_storecfg_open) for a thread of the
 * watcher (the job thread, the delivery and hub intake threads): *pool is
 * a pool on an allocator of its own holding it (destroyed again on
 * failure, *out then NULL); messages go to log.  Returns the cause of a
 * failure. */
apr_status_t rs_jobthread_store_open(rs_db_t **out, apr_pool_t **pool,
                                     const rs_storecfg_t *storecfg, const char *state_dir,
                                     const rs_logger_t *log);

/* A new job with a pool of its own (on an allocator of its own, so the
 * job thread may use it), returned in *pool for the job's input. */
rs_job_t *rs_jobthread_create(apr_pool_t **pool);

/* Run job j: first finish the job in progress (waiting for it), then hand
 * j to the job thread (async, when it can be started), or run it inline
 * on jt->store and finish it before returning.  A job handed over whose
 * thread has no connection (it cannot be opened) is done with
 * APR_EGENERAL without running. */
void rs_jobthread_submit(rs_jobthread_t *jt, rs_job_t *j, rs_job_run_fn *run,
                         rs_job_finish_fn *finish, void *baton, int async);

/* Give up job j before it ran: finish(baton, rv), then destroy its pool. */
void rs_jobthread_drop(rs_job_t *j, rs_job_finish_fn *finish, void *baton, apr_status_t rv);

/* Finish the job in progress if it is done (wait: wait for it first).
 * No job in progress: nothing. */
void rs_jobthread_reap(rs_jobthread_t *jt, int wait);

/* Whether a job is in progress (submitted, not finished). */
int rs_jobthread_busy(const rs_jobthread_t *jt);

/* Job thread: APR_SUCCESS when store still holds history (the driver's
 * when the job was prepared); APR_ENOENT when the store was deleted or
 * replaced meanwhile (it holds another inventory and journal: nothing
 * of it may be published; the driver notices and restarts); else the
 * cause of the failed read. */
apr_status_t rs_jobthread_same_store(rs_db_t *store, apr_pool_t *p, const char *history);

#endif
