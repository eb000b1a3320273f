/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_jobs.h - the declarations of mod_resourcesync_jobs.c. */
#ifndef MOD_RESOURCESYNC_JOBS_H
#define MOD_RESOURCESYNC_JOBS_H

#include "mod_resourcesync.h"
#include "rs_db.h"
#include "rs_jobthread.h"

/* mod_resourcesync_jobs.c: the watcher's one job thread (rs_jobthread.h:
 * a job's lifecycle), for the watcher's files; each function below is
 * rs_jobthread's of the same verb on it. */
/* In the watcher, before the first job: the pool of the job thread and
 * its lock, the server for the thread's log lines, and the driver's store
 * connection (for jobs run inline); again after rs_jobs_close_store. */
void rs_jobs_init(apr_pool_t *pool, server_rec *s, rs_db_t *store);
void rs_jobs_close_store(void);
/* The logger of the job thread (no once-only memory: that is the
 * driver's; warnings and errors become the status page's last error). */
const rs_logger_t *rs_jobs_logger(void);
/* The watcher's job thread itself (for engine units that submit jobs). */
rs_jobthread_t *rs_jobs_thread(void);
/* rs_jobthread_store_open on the configured store (ResourceSyncStore). */
apr_status_t rs_jobs_store_open(rs_db_t **out, apr_pool_t **pool, const rs_logger_t *log);
rs_job_t *rs_jobs_create(apr_pool_t **pool);
void rs_jobs_submit(rs_job_t *j, rs_job_run_fn *run, rs_job_finish_fn *finish, void *baton,
                    int async);
void rs_jobs_drop(rs_job_t *j, rs_job_finish_fn *finish, void *baton, apr_status_t rv);
void rs_jobs_reap(int wait);
int rs_jobs_busy(void);
apr_status_t rs_jobs_same_store(rs_db_t *store, apr_pool_t *p, const char *history);

#endif
