/* SPDX-License-Identifier: Apache-2.0 */
/* rs_jobthread.c - background work of the watcher (see rs_jobthread.h
 * for a job's lifecycle). */
#include <string.h>
#include <apr_atomic.h>
#include "rs_jobthread.h"
#include "rs_history.h"
#include "rs_schema.h"
#include "rs_statedir.h"

struct rs_job_t {
    apr_pool_t *pool; /* own allocator: used by the job thread */
    rs_job_run_fn *run;
    rs_job_finish_fn *finish;
    void *baton;
    apr_status_t rv;
    volatile apr_uint32_t done; /* set by the runner, read by the driver */
};

void rs_jobthread_setup(rs_jobthread_t *jt, apr_pool_t *pool, const char *state_dir, rs_db_t *store,
                        const rs_logger_t *log)
{
    jt->pool = pool;
    jt->state_dir = state_dir;
    jt->store = store;
    jt->log = log;
}

apr_status_t rs_jobthread_store_open(rs_db_t **out, apr_pool_t **pool,
                                     const rs_storecfg_t *storecfg, const char *state_dir,
                                     const rs_logger_t *log)
{
    apr_allocator_t *alloc;
    apr_status_t rv;

    apr_allocator_create(&alloc);
    apr_pool_create_ex(pool, NULL, NULL, alloc);
    apr_allocator_owner_set(alloc, *pool);
    rv = rs_storecfg_open(out, *pool, storecfg, state_dir, log);
    if (rv != APR_SUCCESS) {
        *out = NULL;
        apr_pool_destroy(*pool);
        *pool = NULL;
    }
    return rv;
}

/* Job thread: its store connection, opened at its first job and kept
 * (a failure is retried at the next job). */
static rs_db_t *thread_store(rs_jobthread_t *jt)
{
    if (!jt->tstore) {
        rs_jobthread_store_open(&jt->tstore, &jt->tstore_pool, jt->storecfg, jt->state_dir,
                                jt->log);
    }
    return jt->tstore;
}

void rs_jobthread_close_store(rs_jobthread_t *jt)
{
    rs_jobthread_reap(jt, 1);
    jt->store = NULL;
    if (jt->tstore) {
        jt->tstore = NULL;
        apr_pool_destroy(jt->tstore_pool);
        jt->tstore_pool = NULL;
    }
}

static void *APR_THREAD_FUNC job_thread(apr_thread_t *t, void *data)
{
    rs_jobthread_t *jt = data;

    (void)t;
    for (;;) {
        rs_job_t *j;
        rs_db_t *store;
        apr_thread_mutex_lock(jt->lock);
        while (!jt->next && !jt->quit) {
            apr_thread_cond_wait(jt->cond, jt->lock);
        }
        if (jt->quit) {
            apr_thread_mutex_unlock(jt->lock);
            return NULL;
        }
        j = jt->next;
        jt->next = NULL;
        apr_thread_mutex_unlock(jt->lock);
        store = thread_store(jt);
        j->rv = store ? j->run(j->baton, store, j->pool) : APR_EGENERAL;
        apr_atomic_set32(&j->done, 1);
    }
    return NULL;
}

/* Hand j to the job thread (started on first use).  Returns 0 if there
 * is no thread to run it. */
static int hand_over(rs_jobthread_t *jt, rs_job_t *j)
{
    if (!jt->thread && !jt->thread_failed) {
        if (apr_thread_mutex_create(&jt->lock, APR_THREAD_MUTEX_DEFAULT, jt->pool) != APR_SUCCESS
            || apr_thread_cond_create(&jt->cond, jt->pool) != APR_SUCCESS
            || apr_thread_create(&jt->thread, NULL, job_thread, jt, jt->pool) != APR_SUCCESS) {
            jt->thread_failed = 1;
        }
    }
    if (!jt->thread) {
        return 0;
    }
    apr_thread_mutex_lock(jt->lock);
    jt->next = j;
    apr_thread_cond_signal(jt->cond);
    apr_thread_mutex_unlock(jt->lock);
    return 1;
}

rs_job_t *rs_jobthread_create(apr_pool_t **pool)
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

void rs_jobthread_drop(rs_job_t *j, rs_job_finish_fn *fin, void *baton, apr_status_t rv)
{
    j->finish = fin;
    j->baton = baton;
    j->rv = rv;
    finish(j);
}

void rs_jobthread_submit(rs_jobthread_t *jt, rs_job_t *j, rs_job_run_fn *run, rs_job_finish_fn *fin,
                         void *baton, int async)
{
    rs_jobthread_reap(jt, 1);
    j->run = run;
    j->finish = fin;
    j->baton = baton;
    jt->running = j;
    if (async && hand_over(jt, j)) {
        return;
    }
    j->rv = run(baton, jt->store, j->pool);
    j->done = 1;
    rs_jobthread_reap(jt, 1);
}

int rs_jobthread_busy(const rs_jobthread_t *jt)
{
    return jt->running != NULL;
}

void rs_jobthread_reap(rs_jobthread_t *jt, int wait)
{
    rs_job_t *j = jt->running;

    if (!j || (!wait && !apr_atomic_read32(&j->done))) {
        return;
    }
    while (!apr_atomic_read32(&j->done)) {
        apr_sleep(apr_time_from_msec(5));
    }
    jt->running = NULL;
    finish(j);
}

void rs_jobthread_stop(rs_jobthread_t *jt)
{
    rs_job_t *j = jt->running;
    apr_status_t trv;

    if (j) {
        while (!apr_atomic_read32(&j->done)) {
            apr_sleep(apr_time_from_msec(5));
        }
        jt->running = NULL;
        apr_pool_destroy(j->pool);
    }
    if (jt->thread) {
        apr_thread_mutex_lock(jt->lock);
        jt->quit = 1;
        apr_thread_cond_signal(jt->cond);
        apr_thread_mutex_unlock(jt->lock);
        apr_thread_join(&trv, jt->thread);
        jt->thread = NULL;
    }
    if (jt->tstore) {
        jt->tstore = NULL;
        apr_pool_destroy(jt->tstore_pool);
        jt->tstore_pool = NULL;
    }
}

apr_status_t rs_jobthread_same_store(rs_db_t *store, apr_pool_t *p, const char *history)
{
    const char *h = NULL;
    apr_status_t rv = rs_db_meta_get(store, p, RS_HISTORY_META, &h);

    if (rv != APR_SUCCESS) {
        return rv;
    }
    return h && !strcmp(h, history) ? APR_SUCCESS : APR_ENOENT;
}
