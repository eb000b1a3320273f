/* SPDX-License-Identifier: Apache-2.0 */
/* test_jobthread.c - rs_jobthread: jobs run on the job thread with its
 * own connection to a real SQLite store, finished on the caller's thread
 * in order, one at a time; inline jobs; a thread without a connection;
 * the connection closed and opened again; a dropped job; the store's
 * history checked. */
#include <string.h>
#include <apr_atomic.h>
#include <apr_portable.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_history.h"
#include "rs_jobthread.h"
#include "rs_schema.h"
#include "rs_statedir.h"

/* What one job saw, and what the test tells it. */
typedef struct seen_t {
    int id;
    apr_os_thread_t ran_on, finished_on;
    rs_db_t *store;           /* the connection it ran on */
    char probe[64];           /* meta "probe" read through it ("": none) */
    volatile apr_uint32_t go; /* run waits for it when hold is set */
    int hold;
    volatile apr_uint32_t started, ended; /* order numbers of its run's start and end */
    int finished;                         /* order number of its finish (0: not yet) */
    apr_status_t rv;                      /* as the finish got it */
    int pool_gone;                        /* its pool was destroyed (after finish) */
    int finished_before_pool;
} seen_t;

static volatile apr_uint32_t order; /* run starts/ends, on either thread */
static int finishes;                /* finishes, on the caller's thread */

static apr_status_t pool_gone(void *data)
{
    seen_t *s = data;
    s->pool_gone = 1;
    s->finished_before_pool = s->finished != 0;
    return APR_SUCCESS;
}

static apr_status_t job_run(void *baton, rs_db_t *store, apr_pool_t *p)
{
    seen_t *s = baton;
    const char *probe = NULL;

    s->started = apr_atomic_inc32(&order) + 1;
    s->ran_on = apr_os_thread_current();
    s->store = store;
    while (s->hold && !apr_atomic_read32(&s->go)) {
        apr_sleep(apr_time_from_msec(2));
    }
    if (rs_db_meta_get(store, p, "probe", &probe) == APR_SUCCESS && probe) {
        apr_cpystrn(s->probe, probe, sizeof(s->probe)); /* p goes after the finish */
    }
    apr_sleep(apr_time_from_msec(20)); /* long enough for a second submit */
    s->ended = apr_atomic_inc32(&order) + 1;
    return s->id == 99 ? APR_EINVAL : APR_SUCCESS;
}

static void job_finish(void *baton, apr_status_t rv, apr_pool_t *p)
{
    seen_t *s = baton;
    (void)p;
    s->finished = ++finishes;
    s->finished_on = apr_os_thread_current();
    s->rv = rv;
}

/* A store with meta probe=value and history h in a fresh state directory;
 * the connection (the "driver's") stays open in ut_pool. */
static rs_db_t *made_store(const char *tag, const char **dir)
{
    rs_db_t *db;

    *dir = ut_tempdir(tag);
    ck_assert_int_eq(
        rs_schema_open(&db, ut_pool, RS_STATEDIR_DB_DRIVER, rs_statedir_db(ut_pool, *dir), NULL),
        APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(db, "probe", "driver wrote this"), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(db, RS_HISTORY_META, "h-1"), APR_SUCCESS);
    return db;
}

/* Submit a job for s (id), registering the pool check. */
static void submit(rs_jobthread_t *jt, seen_t *s, int id, int async)
{
    apr_pool_t *jp;
    rs_job_t *j = rs_jobthread_create(&jp);

    s->id = id;
    apr_pool_cleanup_register(jp, s, pool_gone, apr_pool_cleanup_null);
    rs_jobthread_submit(jt, j, job_run, job_finish, s, async);
}

START_TEST(async_jobs_in_order)
{
    const char *dir;
    ut_log_t ul;
    rs_db_t *db = made_store("jobs-async", &dir);
    rs_jobthread_t *jt = ut_jobthread(dir, db, ut_log_init(&ul));
    apr_os_thread_t me = apr_os_thread_current();
    seen_t a, b;

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    finishes = 0;
    ck_assert(!rs_jobthread_busy(jt));
    submit(jt, &a, 1, 1);
    ck_assert(rs_jobthread_busy(jt));
    /* The second waits for the first: finished before it is handed over. */
    submit(jt, &b, 2, 1);
    ck_assert_int_eq(a.finished, 1);
    ck_assert(a.pool_gone && a.finished_before_pool);
    ck_assert(rs_jobthread_busy(jt));
    rs_jobthread_reap(jt, 1);
    ck_assert(!rs_jobthread_busy(jt));
    ck_assert_int_eq(b.finished, 2);
    ck_assert(b.pool_gone && b.finished_before_pool);
    ck_assert_uint_lt(a.ended, b.started);
    /* Run on the job thread, with its own connection to the same store. */
    ck_assert(!apr_os_thread_equal(a.ran_on, me));
    ck_assert(apr_os_thread_equal(a.ran_on, b.ran_on));
    ck_assert_ptr_nonnull(a.store);
    ck_assert_ptr_ne(a.store, db);
    ck_assert_ptr_eq(a.store, b.store); /* kept between jobs */
    ck_assert_str_eq(a.probe, "driver wrote this");
    /* Finished on the caller's thread. */
    ck_assert(apr_os_thread_equal(a.finished_on, me));
    ck_assert(apr_os_thread_equal(b.finished_on, me));
    ck_assert_int_eq(a.rv, APR_SUCCESS);
    ck_assert_int_eq(ul.nerr + ul.nwarn, 0);
}
END_TEST

START_TEST(reap_waits_only_when_told)
{
    const char *dir;
    rs_db_t *db = made_store("jobs-reap", &dir);
    rs_jobthread_t *jt = ut_jobthread(dir, db, NULL);
    seen_t a;
    int i;

    memset(&a, 0, sizeof(a));
    finishes = 0;
    a.hold = 1;
    submit(jt, &a, 99, 1);
    for (i = 0; i < 5; i++) {
        rs_jobthread_reap(jt, 0); /* not done: nothing */
        apr_sleep(apr_time_from_msec(5));
    }
    ck_assert_int_eq(a.finished, 0);
    ck_assert(!a.pool_gone);
    ck_assert(rs_jobthread_busy(jt));
    apr_atomic_set32(&a.go, 1);
    for (i = 0; i < 2500 && !a.finished; i++) {
        rs_jobthread_reap(jt, 0); /* finished once done */
        apr_sleep(apr_time_from_msec(2));
    }
    ck_assert_int_eq(a.finished, 1);
    ck_assert_int_eq(a.rv, APR_EINVAL); /* the run's result */
    ck_assert(!rs_jobthread_busy(jt));
    rs_jobthread_reap(jt, 1); /* none in progress: nothing */
    ck_assert_int_eq(finishes, 1);
}
END_TEST

START_TEST(inline_job)
{
    const char *dir;
    rs_db_t *db = made_store("jobs-inline", &dir);
    rs_jobthread_t *jt = ut_jobthread(dir, db, NULL);
    apr_os_thread_t me = apr_os_thread_current();
    seen_t a;

    memset(&a, 0, sizeof(a));
    finishes = 0;
    submit(jt, &a, 1, 0);
    /* Run on the caller's thread and connection, finished on return. */
    ck_assert_int_eq(a.finished, 1);
    ck_assert(a.pool_gone);
    ck_assert(!rs_jobthread_busy(jt));
    ck_assert(apr_os_thread_equal(a.ran_on, me));
    ck_assert_ptr_eq(a.store, db);
    ck_assert_ptr_null(jt->thread); /* none started for it */
}
END_TEST

START_TEST(thread_without_store)
{
    const char *dir = ut_path(ut_tempdir("jobs-nostore"), "missing");
    ut_log_t ul;
    rs_jobthread_t *jt = ut_jobthread(dir, NULL, ut_log_init(&ul));
    seen_t a;

    memset(&a, 0, sizeof(a));
    finishes = 0;
    submit(jt, &a, 1, 1);
    rs_jobthread_reap(jt, 1);
    /* Not run: done with APR_EGENERAL, the cause logged on the way. */
    ck_assert_int_eq(a.started, 0);
    ck_assert_int_eq(a.finished, 1);
    ck_assert_int_eq(a.rv, APR_EGENERAL);
    ck_assert_ptr_null(jt->tstore);
    ck_assert_int_gt(ul.nerr + ul.nwarn, 0);
}
END_TEST

START_TEST(store_closed_and_opened_again)
{
    const char *dir;
    rs_db_t *db = made_store("jobs-reopen", &dir);
    rs_jobthread_t *jt = ut_jobthread(dir, db, NULL);
    seen_t a, b;

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    finishes = 0;
    a.hold = 1;
    submit(jt, &a, 1, 1);
    apr_atomic_set32(&a.go, 1);
    /* Closing finishes the job in progress first. */
    rs_jobthread_close_store(jt);
    ck_assert_int_eq(a.finished, 1);
    ck_assert_ptr_null(jt->tstore);
    ck_assert_ptr_null(jt->store);
    rs_jobthread_setup(jt, jt->pool, dir, db, NULL);
    submit(jt, &b, 2, 1);
    rs_jobthread_reap(jt, 1);
    ck_assert_int_eq(b.rv, APR_SUCCESS);
    ck_assert_ptr_nonnull(b.store);
    ck_assert_ptr_eq(b.store, jt->tstore);
    ck_assert_str_eq(b.probe, "driver wrote this");
}
END_TEST

START_TEST(dropped_job)
{
    apr_pool_t *jp;
    rs_job_t *j = rs_jobthread_create(&jp);
    seen_t a;

    memset(&a, 0, sizeof(a));
    finishes = 0;
    apr_pool_cleanup_register(jp, &a, pool_gone, apr_pool_cleanup_null);
    rs_jobthread_drop(j, job_finish, &a, APR_ENOSPC);
    ck_assert_int_eq(a.started, 0);
    ck_assert_int_eq(a.finished, 1);
    ck_assert_int_eq(a.rv, APR_ENOSPC);
    ck_assert(a.pool_gone && a.finished_before_pool);
}
END_TEST

START_TEST(same_store)
{
    const char *dir;
    rs_db_t *db = made_store("jobs-same", &dir);

    ck_assert_int_eq(rs_jobthread_same_store(db, ut_pool, "h-1"), APR_SUCCESS);
    ck_assert_int_eq(rs_jobthread_same_store(db, ut_pool, "h-2"), APR_ENOENT);
    ck_assert_int_eq(rs_db_meta_put(db, RS_HISTORY_META, ""), APR_SUCCESS);
    ck_assert_int_eq(rs_jobthread_same_store(db, ut_pool, "h-1"), APR_ENOENT);
}
END_TEST

Suite *jobthread_suite(void)
{
    Suite *s = suite_create("jobthread");
    TCase *tc = ut_tcase("jobs", 30);

    tcase_add_test(tc, async_jobs_in_order);
    tcase_add_test(tc, reap_waits_only_when_told);
    tcase_add_test(tc, inline_job);
    tcase_add_test(tc, thread_without_store);
    tcase_add_test(tc, store_closed_and_opened_again);
    tcase_add_test(tc, dropped_job);
    tcase_add_test(tc, same_store);
    suite_add_tcase(s, tc);
    return s;
}
