/* SPDX-License-Identifier: Apache-2.0 */
/* test_withdrawq.c - rs_withdrawq: withdrawal requests written with
 * rs_withdraw's own functions, taken oldest first at most once a second;
 * a set this watcher does not serve and an unreadable request answered
 * with an error; a listed path refused; a Resource Dump package holding
 * the path withdrawn for real by the job thread; a failed job retried
 * after its wait; requests that wait for their set or the job thread. */
#include <string.h>
#include <sys/stat.h>
#include <apr_atomic.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_dump.h"
#include "rs_dumppkg.h"
#include "rs_hash.h"
#include "rs_history.h"
#include "rs_inventory.h"
#include "rs_schema.h"
#include "rs_statedir.h"
#include "rs_withdraw.h"
#include "rs_withdrawq.h"

#define SEC(n) apr_time_from_sec(n)

typedef struct fx_t {
    const char *statedir, *root, *dumps;
    rs_db_t *db;
    rs_jobthread_t *jobs;
    rs_withdrawq_t q;
    rs_withdrawq_cb_t cb;
    ut_log_t drvlog, setlog;
    const char *history; /* the driver's, given to each poll */
    int ready, reconcile_ok;
    int reconciled;           /* calls of reconcile */
    const char *rdir, *rname; /* its last path */
    int withdrawn, cdump_n, rdump_n;
} fx_t;

static void cb_find(void *baton, const char *name, rs_withdrawq_set_t *out)
{
    fx_t *f = baton;
    if (!strcmp(name, "s")) {
        out->set = f;
        out->log = &f->setlog.logger;
        out->ready = f->ready;
    }
}

static int cb_reconcile(void *baton, void *set, apr_pool_t *p, const char *dir, const char *name)
{
    fx_t *f = baton;
    (void)p;
    ck_assert_ptr_eq(set, f);
    f->reconciled++;
    f->rdir = apr_pstrdup(ut_pool, dir);
    f->rname = apr_pstrdup(ut_pool, name);
    return f->reconcile_ok;
}

static void cb_prepare(void *baton, void *set, apr_pool_t *jp, rs_cdump_opts_t *o,
                       const char **rdump_dir)
{
    fx_t *f = baton;
    (void)set;
    memset(o, 0, sizeof(*o));
    *rdump_dir = apr_pstrdup(jp, f->dumps);
}

static void cb_withdrawn(void *baton, void *set, int cdump_n, int rdump_n)
{
    fx_t *f = baton;
    ck_assert_ptr_eq(set, f);
    f->withdrawn++;
    f->cdump_n = cdump_n;
    f->rdump_n = rdump_n;
}

static void fx_init(fx_t *f)
{
    memset(f, 0, sizeof(*f));
    f->statedir = ut_tempdir("withdrawq");
    f->root = ut_path(f->statedir, "root");
    f->dumps = ut_path(f->statedir, "dumps");
    ut_mkdir(f->root);
    ut_mkdir(f->dumps);
    ck_assert_int_eq(rs_schema_open(&f->db, ut_pool, RS_STATEDIR_DB_DRIVER,
                                    rs_statedir_db(ut_pool, f->statedir), NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(f->db, RS_HISTORY_META, "h-1"), APR_SUCCESS);
    f->history = "h-1";
    ut_log_init(&f->drvlog);
    ut_log_init(&f->setlog);
    f->jobs = ut_jobthread(f->statedir, f->db, &f->drvlog.logger);
    f->cb.find = cb_find;
    f->cb.reconcile = cb_reconcile;
    f->cb.prepare = cb_prepare;
    f->cb.withdrawn = cb_withdrawn;
    f->cb.baton = f;
    f->ready = f->reconcile_ok = 1;
    rs_withdrawq_init(&f->q, f->statedir, f->jobs, &f->cb);
}

/* The driver's poll at now, then its event loop finishing the job. */
static void poll_at(fx_t *f, apr_time_t now)
{
    apr_pool_t *p;

    apr_pool_create(&p, ut_pool);
    rs_withdrawq_poll(&f->q, f->db, f->history, &f->drvlog.logger, p, now);
    apr_pool_destroy(p);
    rs_jobthread_reap(f->jobs, 1);
}

static const char *request(fx_t *f, const char *set, const char *rel)
{
    const char *id;
    ck_assert_int_eq(rs_withdraw_request(ut_pool, f->statedir, set, rel, &id), APR_SUCCESS);
    return id;
}

static int npending(fx_t *f)
{
    apr_array_header_t *reqs;
    ck_assert_int_eq(rs_withdraw_pending(ut_pool, f->statedir, &reqs), APR_SUCCESS);
    return reqs->nelts;
}

/* The outcome of id (APR_ENOENT while it waits). */
static apr_status_t outcome(fx_t *f, const char *id, int *ok, const char **text)
{
    return rs_withdraw_outcome(ut_pool, f->statedir, id, ok, text);
}

/* File rel below the root with its inventory row of set s. */
static void add(fx_t *f, const char *dir, const char *name, const char *data, int listed)
{
    const char *d = *dir ? ut_path(f->root, dir) : f->root;
    const char *path = ut_path(d, name);

    if (*dir && !ut_exists(d)) {
        ut_mkdir(d);
    }
    ut_write_str(path, data);
    ut_inventory_row(f->db, "s", dir, name, path, data, 0, listed);
}

START_TEST(oldest_first_once_a_second)
{
    fx_t f;
    const char *id1, *junk = "99999999999999999999-1", *text;
    int ok;

    fx_init(&f);
    id1 = request(&f, "nope", "a.txt");
    ut_write_str(ut_path(rs_statedir_withdraw(ut_pool, f.statedir),
                         apr_pstrcat(ut_pool, junk, ".req", NULL)),
                 "junk\n");
    ck_assert_int_eq(npending(&f), 2);
    /* The oldest: a set this watcher does not serve. */
    poll_at(&f, SEC(100));
    ck_assert_int_eq(outcome(&f, id1, &ok, &text), APR_SUCCESS);
    ck_assert_int_eq(ok, 0);
    ck_assert_str_eq(text, "this server has no set 'nope'");
    ck_assert_int_eq(ut_log_count(&f.drvlog, apr_psprintf(ut_pool,
                                                          "4: withdrawal %s refused: this "
                                                          "server has no set 'nope'",
                                                          id1)),
                     1);
    ck_assert_int_eq(npending(&f), 1);
    /* Not again within the second. */
    poll_at(&f, SEC(101) - 1);
    ck_assert_int_eq(npending(&f), 1);
    ck_assert_int_eq(outcome(&f, junk, &ok, &text), APR_ENOENT);
    /* Then the unreadable one. */
    poll_at(&f, SEC(101));
    ck_assert_int_eq(npending(&f), 0);
    ck_assert_int_eq(outcome(&f, junk, &ok, &text), APR_SUCCESS);
    ck_assert_int_eq(ok, 0);
    ck_assert_str_eq(text, "not a withdrawal request (rs-tool withdraw SET PATH makes them)");
    ck_assert_int_eq(f.reconciled, 0);
    ck_assert_int_eq(f.drvlog.nwarn, 2);
}
END_TEST

START_TEST(listed_path_refused)
{
    fx_t f;
    const char *id, *text;
    int ok;

    fx_init(&f);
    add(&f, "d", "f.txt", "still here", 1);
    id = request(&f, "s", "d/f.txt");
    poll_at(&f, SEC(5));
    /* Reconciled first, then refused. */
    ck_assert_int_eq(f.reconciled, 1);
    ck_assert_str_eq(f.rdir, "d");
    ck_assert_str_eq(f.rname, "f.txt");
    ck_assert_int_eq(outcome(&f, id, &ok, &text), APR_SUCCESS);
    ck_assert_int_eq(ok, 0);
    ck_assert_str_eq(text, "set s: 'd/f.txt' is still served and listed: deny it (an access "
                           "file, a <Files> section), exclude it or remove it first, then "
                           "withdraw it");
    ck_assert_int_eq(ut_log_count(&f.drvlog, "refused: set s: 'd/f.txt' is still served"), 1);
    ck_assert_int_eq(f.withdrawn, 0);
    ck_assert(!rs_jobthread_busy(f.jobs));
}
END_TEST

/* A Resource Dump of the set's listed files, generation 1. */
static void dump_built(fx_t *f)
{
    rs_dump_opts_t o;
    rs_dump_info_t info;
    const char *tmp = ut_path(f->dumps, "tmp-1");

    memset(&o, 0, sizeof(o));
    o.set = "s";
    o.root = f->root;
    o.url_base = "http://example.org/files/";
    o.capability_url = "http://example.org/rs/s/capabilitylist.xml";
    o.dump_url = "http://example.org/rs/s/resourcedump.xml";
    o.pkg_url_prefix = "http://example.org/rs/s/resourcedump/0123abcd-";
    o.dumpset = f->dumps;
    o.hashes = RS_HASH_MD5;
    o.max_entries = 1; /* one package per file */
    o.max_bytes = (apr_int64_t)1 << 30;
    o.at = 1700000000LL * APR_USEC_PER_SEC;
    o.completed = o.at + APR_USEC_PER_SEC;
    ut_mkdir(tmp);
    ck_assert_int_eq(rs_dump_write(f->db, &o, tmp, ut_pool, &info), APR_SUCCESS);
    ck_assert_int_eq(rename(tmp, ut_path(f->dumps, "1")), 0);
}

/* The number of package files (.zip) of generation 1. */
static int nzips(fx_t *f)
{
    apr_dir_t *d;
    apr_finfo_t fi;
    int n = 0;

    ck_assert_int_eq(apr_dir_open(&d, ut_path(f->dumps, "1"), ut_pool), APR_SUCCESS);
    while (apr_dir_read(&fi, APR_FINFO_NAME, d) == APR_SUCCESS) {
        size_t len = strlen(fi.name);
        n += len > 4 && !strcmp(fi.name + len - 4, ".zip");
    }
    apr_dir_close(d);
    return n;
}

START_TEST(withdrawn_from_resource_dump)
{
    fx_t f;
    const char *id, *text;
    int ok;

    fx_init(&f);
    add(&f, "d", "oops.txt", "published by mistake", 1);
    add(&f, "", "keep.txt", "fine", 1);
    dump_built(&f);
    ck_assert_int_eq(nzips(&f), 2);
    add(&f, "d", "oops.txt", "published by mistake", 0); /* denied since */
    id = request(&f, "s", "d/oops.txt");
    poll_at(&f, SEC(5));
    ck_assert_int_eq(outcome(&f, id, &ok, &text), APR_SUCCESS);
    ck_assert_int_eq(ok, 1);
    ck_assert_str_eq(text, "set s: withdrew 'd/oops.txt': 0 Change Dump and 1 Resource Dump "
                           "package(s) held it and are gone; they are built again under new "
                           "names without it");
    ck_assert_int_eq(ut_log_count(&f.setlog, apr_pstrcat(ut_pool, "5: ", text, NULL)), 1);
    ck_assert_int_eq(nzips(&f), 1);
    ck_assert_int_eq(f.withdrawn, 1);
    ck_assert_int_eq(f.cdump_n, 0);
    ck_assert_int_eq(f.rdump_n, 1);
    ck_assert_int_eq(npending(&f), 0);
    /* At the root, held by no package: nothing to build again. */
    id = request(&f, "s", "gone.txt");
    poll_at(&f, SEC(5)); /* at once after a job */
    ck_assert_str_eq(f.rdir, "");
    ck_assert_str_eq(f.rname, "gone.txt");
    ck_assert_int_eq(outcome(&f, id, &ok, &text), APR_SUCCESS);
    ck_assert_int_eq(ok, 1);
    ck_assert_str_eq(text, "set s: withdrew 'gone.txt': 0 Change Dump and 0 Resource Dump "
                           "package(s) held it and are gone; nothing to build again");
    ck_assert_int_eq(f.withdrawn, 2);
    ck_assert_int_eq(f.rdump_n, 0);
}
END_TEST

START_TEST(failed_job_tried_again_after_its_wait)
{
    fx_t f;
    const char *id, *text;
    int ok;

    fx_init(&f);
    id = request(&f, "s", "x.txt");
    f.history = "h-other"; /* the store was replaced since */
    poll_at(&f, SEC(5));
    ck_assert_int_eq(ut_log_count(&f.setlog, "3: set s: cannot withdraw 'x.txt': "), 1);
    ck_assert_int_eq(ut_log_count(&f.setlog, "(the request stays; it is tried again)"), 1);
    ck_assert_int_eq(outcome(&f, id, &ok, &text), APR_ENOENT);
    ck_assert_int_eq(npending(&f), 1);
    ck_assert_int_eq(f.withdrawn, 0);
    f.history = "h-1";
    /* The wait runs from the next poll. */
    poll_at(&f, SEC(20));
    poll_at(&f, SEC(30) - 1);
    ck_assert_int_eq(f.reconciled, 1);
    ck_assert_int_eq(npending(&f), 1);
    poll_at(&f, SEC(30));
    ck_assert_int_eq(f.reconciled, 2);
    ck_assert_int_eq(outcome(&f, id, &ok, &text), APR_SUCCESS);
    ck_assert_int_eq(ok, 1);
}
END_TEST

static volatile apr_uint32_t hold_go;

static apr_status_t hold_run(void *baton, rs_db_t *store, apr_pool_t *p)
{
    (void)baton;
    (void)store;
    (void)p;
    while (!apr_atomic_read32(&hold_go)) {
        apr_sleep(apr_time_from_msec(2));
    }
    return APR_SUCCESS;
}

static void hold_finish(void *baton, apr_status_t rv, apr_pool_t *p)
{
    (void)baton;
    (void)rv;
    (void)p;
}

START_TEST(waits_for_its_set_and_the_job_thread)
{
    fx_t f;
    const char *id, *text;
    apr_pool_t *jp;
    rs_job_t *j;
    int ok;

    fx_init(&f);
    id = request(&f, "s", "x.txt");
    f.ready = 0; /* its store fails or its root is gone */
    poll_at(&f, SEC(1));
    ck_assert_int_eq(f.reconciled, 0);
    f.ready = 1;
    f.reconcile_ok = 0; /* the store fails during the targeted scan */
    poll_at(&f, SEC(2));
    ck_assert_int_eq(f.reconciled, 1);
    ck_assert_int_eq(outcome(&f, id, &ok, &text), APR_ENOENT);
    f.reconcile_ok = 1;
    /* Another job runs: not looked at, however late. */
    apr_atomic_set32(&hold_go, 0);
    j = rs_jobthread_create(&jp);
    rs_jobthread_submit(f.jobs, j, hold_run, hold_finish, NULL, 1);
    rs_withdrawq_poll(&f.q, f.db, f.history, &f.drvlog.logger, ut_pool, SEC(100));
    ck_assert_int_eq(f.reconciled, 1);
    apr_atomic_set32(&hold_go, 1);
    rs_jobthread_reap(f.jobs, 1);
    poll_at(&f, SEC(100));
    ck_assert_int_eq(f.reconciled, 2);
    ck_assert_int_eq(outcome(&f, id, &ok, &text), APR_SUCCESS);
    ck_assert_int_eq(ok, 1);
    ck_assert_int_eq(npending(&f), 0);
}
END_TEST

Suite *withdrawq_suite(void)
{
    Suite *s = suite_create("withdrawq");
    TCase *tc = ut_tcase("requests", 30);

    tcase_add_test(tc, oldest_first_once_a_second);
    tcase_add_test(tc, listed_path_refused);
    tcase_add_test(tc, withdrawn_from_resource_dump);
    tcase_add_test(tc, failed_job_tried_again_after_its_wait);
    tcase_add_test(tc, waits_for_its_set_and_the_job_thread);
    suite_add_tcase(s, tc);
    return s;
}
