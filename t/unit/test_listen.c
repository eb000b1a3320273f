/* SPDX-License-Identifier: Apache-2.0 */
/* test_listen.c - rs_listen and the journal's notifications (rs_db_notify
 * through rs_journal), on PostgreSQL only: a transaction that journals a
 * set's records or closes its lists notifies once, at commit, never for
 * a rollback; a LISTEN session killed on the server is reported lost. */
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_journal.h"
#include "rs_blob.h"
#include "rs_listen.h"
#include "rs_schema.h"

typedef struct {
    const char *set;
    int mine, others;
} seen_t;

static void count(void *baton, const char *payload)
{
    seen_t *s = baton;
    if (!strcmp(payload, s->set)) {
        s->mine++;
    }
    else {
        s->others++; /* another test's store on the same server */
    }
}

/* Read l for ms milliseconds (or until one of the set's arrives when
 * until_one): the set's notifications counted in s. */
static apr_status_t wait_read(rs_listen_t *l, seen_t *s, int ms, int until_one)
{
    apr_time_t end = apr_time_now() + apr_time_from_msec(ms);
    apr_status_t rv = APR_SUCCESS;

    while (rv == APR_SUCCESS && apr_time_now() < end && !(until_one && s->mine)) {
        struct pollfd pfd = { rs_listen_fd(l), POLLIN, 0 };
        if (poll(&pfd, 1, 50) > 0) {
            rv = rs_listen_read(l, count, s, NULL);
        }
    }
    return rv;
}

static rs_record_t *rec(const char *name)
{
    rs_record_t *r = apr_pcalloc(ut_pool, sizeof(*r));
    r->dir = "";
    r->name = name;
    r->change = RS_CHANGE_CREATED;
    r->size = 1;
    r->type = "text/plain";
    return r;
}

START_TEST(journal_notifies_at_commit)
{
    ut_log_t ul;
    rs_db_t *db;
    rs_journal_t *j;
    rs_listen_t *l;
    rs_changelist_t done;
    char err[256];
    seen_t s = { apr_psprintf(ut_pool, "n%d", (int)getpid()), 0, 0 };

    ck_assert_int_eq(rs_schema_open(&db, ut_pool, ut_driver,
                                    ut_store(ut_path(ut_tempdir("listen"), "state.db")),
                                    ut_log_init(&ul)),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_journal_open(&j, db, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_listen_open(&l, ut_pool, ut_pg_dsn, RS_JOURNAL_CHANNEL, err, sizeof(err)),
                     APR_SUCCESS);
    ck_assert_int_gt(rs_listen_backend(l), 0);

    /* Two records in one transaction: nothing before the commit, one
     * notification after it. */
    ck_assert_int_eq(rs_journal_begin_set(j, s.set, apr_time_now() - 1000000), APR_SUCCESS);
    ck_assert_int_eq(wait_read(l, &s, 200, 0), APR_SUCCESS);
    s.mine = 0;
    ck_assert_int_eq(rs_db_begin(db), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_append(j, s.set, rec("a")), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_append(j, s.set, rec("b")), APR_SUCCESS);
    ck_assert_int_eq(wait_read(l, &s, 200, 0), APR_SUCCESS);
    ck_assert_int_eq(s.mine, 0);
    ck_assert_int_eq(rs_db_commit(db), APR_SUCCESS);
    ck_assert_int_eq(wait_read(l, &s, 5000, 1), APR_SUCCESS);
    ck_assert_int_eq(wait_read(l, &s, 200, 0), APR_SUCCESS);
    ck_assert_int_eq(s.mine, 1);

    /* A rolled-back transaction notifies nobody. */
    s.mine = 0;
    ck_assert_int_eq(rs_db_begin(db), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_append(j, s.set, rec("c")), APR_SUCCESS);
    ck_assert_int_eq(rs_db_rollback(db), APR_SUCCESS);
    ck_assert_int_eq(wait_read(l, &s, 300, 0), APR_SUCCESS);
    ck_assert_int_eq(s.mine, 0);

    /* A close (outside a transaction: at once). */
    ck_assert_int_eq(rs_journal_close(j, ut_pool, s.set, -1, 0, apr_time_now(), &done),
                     APR_SUCCESS);
    ck_assert_int_gt(done.id, 0);
    ck_assert_int_eq(wait_read(l, &s, 5000, 1), APR_SUCCESS);
    ck_assert_int_eq(s.mine, 1);
}
END_TEST

/* A put of a set's stored documents (rs_blob) notifies "docs:<set>" at
 * commit (a follower looks at once), nothing for a rollback. */
START_TEST(blob_put_notifies_at_commit)
{
    ut_log_t ul;
    rs_db_t *db;
    rs_listen_t *l;
    char err[256];
    const char *set = apr_psprintf(ut_pool, "b%d", (int)getpid());
    const char *dir = ut_tempdir("listenblob"), *file = ut_path(dir, "doc.xml");
    seen_t s = { apr_pstrcat(ut_pool, RS_BLOB_NOTIFY, set, NULL), 0, 0 };

    ut_write_str(file, "<doc/>");
    ck_assert_int_eq(rs_schema_open(&db, ut_pool, ut_driver,
                                    ut_store(ut_path(ut_tempdir("listenb"), "state.db")),
                                    ut_log_init(&ul)),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_listen_open(&l, ut_pool, ut_pg_dsn, RS_JOURNAL_CHANNEL, err, sizeof(err)),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_begin(db), APR_SUCCESS);
    ck_assert_int_eq(rs_blob_put(db, ut_pool, set, "snap", 1, dir, NULL, NULL, NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_blob_put_file(db, ut_pool, set, "topic-change", 1, file, "t.xml", NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(wait_read(l, &s, 200, 0), APR_SUCCESS);
    ck_assert_int_eq(s.mine, 0);
    ck_assert_int_eq(rs_db_commit(db), APR_SUCCESS);
    ck_assert_int_eq(wait_read(l, &s, 5000, 1), APR_SUCCESS);
    ck_assert_int_eq(wait_read(l, &s, 200, 0), APR_SUCCESS);
    ck_assert_int_eq(s.mine, 1); /* once per transaction */

    s.mine = 0;
    ck_assert_int_eq(rs_db_begin(db), APR_SUCCESS);
    ck_assert_int_eq(rs_blob_put_file(db, ut_pool, set, "topic-change", 2, file, "t.xml", NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_rollback(db), APR_SUCCESS);
    ck_assert_int_eq(wait_read(l, &s, 300, 0), APR_SUCCESS);
    ck_assert_int_eq(s.mine, 0);
}
END_TEST

START_TEST(listen_session_killed)
{
    rs_listen_t *l;
    char err[256];
    seen_t s = { "x", 0, 0 };
    apr_status_t rv;
    int i;

    ck_assert_int_eq(rs_listen_open(&l, ut_pool, ut_pg_dsn, RS_JOURNAL_CHANNEL, err, sizeof(err)),
                     APR_SUCCESS);
    ut_pg_exec(ut_pg_dsn,
               apr_psprintf(ut_pool, "SELECT pg_terminate_backend(%d)", rs_listen_backend(l)));
    for (i = 0, rv = APR_SUCCESS; i < 100 && rv == APR_SUCCESS; i++) {
        rv = wait_read(l, &s, 50, 0);
    }
    ck_assert_int_eq(rv, APR_ECONNRESET);
    ck_assert_str_ne(rs_listen_error(l), "");
    rs_listen_close(l);

    /* A server that cannot be reached: refused, with libpq's message. */
    ck_assert_int_eq(rs_listen_open(&l, ut_pool, "host=127.0.0.1 port=1 dbname=x",
                                    RS_JOURNAL_CHANNEL, err, sizeof(err)),
                     APR_ECONNREFUSED);
    ck_assert_ptr_null(l);
    ck_assert_str_ne(err, "");
}
END_TEST

Suite *listen_suite(void)
{
    Suite *s = suite_create("rs_listen");
    TCase *tc = ut_tcase("listen", 30);
    tcase_add_test(tc, journal_notifies_at_commit);
    tcase_add_test(tc, blob_put_notifies_at_commit);
    tcase_add_test(tc, listen_session_killed);
    suite_add_tcase(s, tc);
    return s;
}
