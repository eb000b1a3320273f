/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_jobs.c - the watcher's job thread (rs_jobthread) and
 * its logger: lines of the job thread go straight to the error log (the
 * once-only memory of rs_logonce belongs to the driver's thread). */
#include "mod_resourcesync.h"
#include "mod_resourcesync_jobs.h"
#include "mod_resourcesync_logonce.h"

static rs_jobthread_t jobs;
static rs_logger_t jobs_log;

static void thread_log(void *baton, int level, apr_status_t rv, const char *msg)
{
    if (level <= RS_LOG_WARN) {
        rs_logonce_note(rv, msg);
    }
    ap_log_error(APLOG_MARK, level, rv, (server_rec *)baton, RS_TAG "%s", msg);
}

void rs_jobs_init(apr_pool_t *pool, server_rec *s, rs_db_t *store)
{
    jobs_log.fn = thread_log;
    jobs_log.baton = s;
    rs_jobthread_setup(&jobs, pool, rs_global.state_dir, store, &jobs_log);
    jobs.storecfg = &rs_global.store;
}

const rs_logger_t *rs_jobs_logger(void)
{
    return &jobs_log;
}

rs_jobthread_t *rs_jobs_thread(void)
{
    return &jobs;
}

apr_status_t rs_jobs_store_open(rs_db_t **out, apr_pool_t **pool, const rs_logger_t *log)
{
    return rs_jobthread_store_open(out, pool, &rs_global.store, rs_global.state_dir, log);
}

void rs_jobs_close_store(void)
{
    rs_jobthread_close_store(&jobs);
}

rs_job_t *rs_jobs_create(apr_pool_t **pool)
{
    return rs_jobthread_create(pool);
}

void rs_jobs_drop(rs_job_t *j, rs_job_finish_fn *fin, void *baton, apr_status_t rv)
{
    rs_jobthread_drop(j, fin, baton, rv);
}

void rs_jobs_submit(rs_job_t *j, rs_job_run_fn *run, rs_job_finish_fn *fin, void *baton, int async)
{
    rs_jobthread_submit(&jobs, j, run, fin, baton, async);
}

int rs_jobs_busy(void)
{
    return rs_jobthread_busy(&jobs);
}

void rs_jobs_reap(int wait)
{
    rs_jobthread_reap(&jobs, wait);
}

apr_status_t rs_jobs_same_store(rs_db_t *store, apr_pool_t *p, const char *history)
{
    return rs_jobthread_same_store(store, p, history);
}
