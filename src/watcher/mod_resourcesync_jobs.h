/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_jobs.h - the declarations of mod_resourcesync_jobs.c. */
#ifndef MOD_RESOURCESYNC_JOBS_H
#define MOD_RESOURCESYNC_JOBS_H

#include "mod_resourcesync.h"
#include "rs_db.h"

/* mod_resourcesync_jobs.c: background work of the watcher, one job at a
 * time, on one thread with a store connection of its own (see that file
 * for a job's lifecycle). */
typedef struct rs_job_t rs_job_t;
/* Runs the job, on the job thread (or inline on the driver's thread);
 * store is the connection of the thread that runs it, p the job's pool.
 * Its result is passed to the finish function. */
typedef apr_status_t rs_job_run_fn(void *baton, rs_db_t *store, apr_pool_t *p);
/* Runs on the driver's thread once the job is done (rv: the run's
 * result); the job's pool p is destroyed right after. */
typedef void rs_job_finish_fn(void *baton, apr_status_t rv, apr_pool_t *p);
/* In the watcher, before the first job: the pool of the job thread and
 * its lock, the server for the thread's log lines, and the driver's store
 * connection (for jobs run inline). */
void rs_jobs_init(apr_pool_t *pool, server_rec *s, rs_db_t *store);
/* Close the job thread's store connection (opened again at its next job)
 * and forget the driver's, after finishing the job in progress: the
 * driver replaces its connection.  SQLite shares a file's locks and
 * shared-memory index among the connections of a process, so a
 * connection opened read-only (an immutable file) must be closed before
 * a writable one can be had. */
void rs_jobs_close_store(void);
/* The logger of the job thread (no once-only memory: that is the
 * driver's). */
const rs_logger_t *rs_jobs_logger(void);

/* A store connection for a thread of the watcher (the job thread, the
 * delivery and hub intake threads): *pool is a pool on an allocator of
 * its own holding it (destroyed again on failure, *out then NULL);
 * messages go to log.  Returns the cause of a failure. */
apr_status_t rs_jobs_store_open(rs_db_t **out, apr_pool_t **pool, const rs_logger_t *log);
/* A new job with a pool of its own (on an allocator of its own, so the
 * job thread may use it), returned in *pool for the job's input. */
rs_job_t *rs_jobs_create(apr_pool_t **pool);
/* Run job j: first finish the job in progress (waiting for it), then hand
 * j to the job thread (async, when it can be started), or run it inline
 * and finish it before returning. */
void rs_jobs_submit(rs_job_t *j, rs_job_run_fn *run, rs_job_finish_fn *finish, void *baton,
                    int async);
/* Give up job j before it ran: finish(baton, rv), then destroy its pool. */
void rs_jobs_drop(rs_job_t *j, rs_job_finish_fn *finish, void *baton, apr_status_t rv);
/* Driver's thread: finish the job in progress if it is done (wait: wait
 * for it first).  No job in progress: nothing. */
void rs_jobs_reap(int wait);
/* Driver's thread: whether a job is in progress (submitted, not finished). */
int rs_jobs_busy(void);
/* Job thread: APR_SUCCESS when store still holds history (the driver's
 * when the job was prepared); APR_ENOENT when the store was deleted or
 * replaced meanwhile (it holds another inventory and journal: nothing
 * of it may be published; the driver notices and restarts); else the
 * cause of the failed read. */
apr_status_t rs_jobs_same_store(rs_db_t *store, apr_pool_t *p, const char *history);

#endif
