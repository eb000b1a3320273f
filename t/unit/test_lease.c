/* SPDX-License-Identifier: Apache-2.0 */
/* test_lease.c - rs_lease: leases with epochs and the fence, on both
 * drivers; the datetimes of the journal across a handover. */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <apr_strings.h>
#include <apr_time.h>
#include "unit.h"
#include "rs_journal.h"
#include "rs_lease.h"
#include "rs_schema.h"

#define TTL apr_time_from_msec(200)

static rs_db_t *open_in(apr_pool_t *p, const char *path)
{
    rs_db_t *db = NULL;
    ck_assert_int_eq(rs_schema_open(&db, p, ut_driver, ut_store(path), NULL), APR_SUCCESS);
    return db;
}

static rs_lease_t lease(const char *set, const char *node, apr_interval_time_t ttl)
{
    rs_lease_t l = { set, node, rs_lease_token(ut_pool), ttl, 0 };
    return l;
}

static int take(rs_db_t *db, rs_lease_t *l)
{
    int held = -1;
    ck_assert_int_eq(rs_lease_take(db, l, &held), APR_SUCCESS);
    return held;
}

/* Wait on the store's clock until the set's lease has ended (5 s at
 * most): no fixed sleep. */
static void wait_ended(rs_db_t *db, const char *set)
{
    rs_lease_info_t in;
    int i;
    for (i = 0; i < 500; i++) {
        ck_assert_int_eq(rs_lease_peek(db, ut_pool, set, &in), APR_SUCCESS);
        if (!in.live) {
            return;
        }
        apr_sleep(apr_time_from_msec(10));
    }
    ck_abort_msg("the lease of %s did not end", set);
}

START_TEST(tokens_differ)
{
    const char *a = rs_lease_token(ut_pool), *b = rs_lease_token(ut_pool);
    ck_assert_uint_eq(strlen(a), 32);
    ck_assert_str_ne(a, b);
}
END_TEST

/* A second holder cannot take a held lease (PostgreSQL), and takes it
 * once it ended; the epoch grows only when the holder changes.  SQLite
 * (one node): a take always wins, with a new epoch. */
START_TEST(take_expire_epochs)
{
    const char *path = ut_path(ut_tempdir("lease"), "state.db");
    rs_db_t *a = open_in(ut_pool, path), *b = open_in(ut_pool, path);
    rs_lease_t la = lease("s", "node-a", TTL), lb = lease("s", "node-b", TTL);
    rs_lease_t other = lease("t", "node-b", TTL);
    rs_lease_info_t in;

    ck_assert_int_eq(take(a, &la), 1);
    ck_assert_int_eq(la.epoch, 1);
    ck_assert_int_eq(take(a, &la), 1); /* taken again: the same tenure */
    ck_assert_int_eq(la.epoch, 1);
    ck_assert_int_eq(take(b, &other), 1); /* another set's is free */
    ck_assert_int_eq(rs_lease_peek(b, ut_pool, "s", &in), APR_SUCCESS);
    ck_assert(in.exists && in.live);
    ck_assert_str_eq(in.node, "node-a");
    ck_assert_str_eq(in.token, la.token);
    ck_assert_int_eq(in.epoch, 1);
    if (!ut_pg()) {
        ck_assert_int_eq(take(b, &lb), 1);
        ck_assert_int_eq(lb.epoch, 2);
        ck_assert_int_eq(rs_lease_fence(a, &la), RS_LEASE_LOST);
        return;
    }
    ck_assert_int_eq(take(b, &lb), 0);
    ck_assert_int_eq(lb.epoch, 0);
    wait_ended(b, "s");
    ck_assert_int_eq(take(b, &lb), 1);
    ck_assert_int_eq(lb.epoch, 2);
    ck_assert_int_eq(take(a, &la), 0); /* b holds it now */
    ck_assert_int_eq(take(b, &lb), 1);
    ck_assert_int_eq(lb.epoch, 2);
    /* Its own lease ended: taken again, a new tenure. */
    wait_ended(b, "s");
    ck_assert_int_eq(take(b, &lb), 1);
    ck_assert_int_eq(lb.epoch, 3);
}
END_TEST

/* A release hands over at once. */
START_TEST(release_hands_over)
{
    const char *path = ut_path(ut_tempdir("lease"), "state.db");
    rs_db_t *a = open_in(ut_pool, path), *b = open_in(ut_pool, path);
    rs_lease_t la = lease("s", "a", apr_time_from_sec(3600)), lb = lease("s", "b", TTL);
    rs_lease_info_t in;

    ck_assert_int_eq(take(a, &la), 1);
    ck_assert_int_eq(rs_lease_release(a, &la), APR_SUCCESS);
    ck_assert_int_eq(la.epoch, 0);
    ck_assert_int_eq(rs_lease_peek(b, ut_pool, "s", &in), APR_SUCCESS);
    ck_assert(in.exists);
    ck_assert_int_eq(in.live, !ut_pg()); /* one node: it never ends by time */
    ck_assert_int_eq(take(b, &lb), 1);
    ck_assert_int_eq(lb.epoch, 2);
    ck_assert_int_eq(rs_lease_fence(a, &la), RS_LEASE_LOST); /* epoch 0: not held */
}
END_TEST

/* The fence as rs_db_begin_set runs it. */
typedef struct {
    rs_lease_t *l;
    int wrote; /* a write before the fence's verdict, to see it rolled back */
} fence_t;

static apr_status_t fence_fn(void *baton, rs_db_t *db, const char *set)
{
    fence_t *f = baton;
    ck_assert_str_eq(set, f->l->set);
    if (f->wrote) {
        ck_assert_int_eq(rs_db_meta_put(db, "before-fence:s", "x"), APR_SUCCESS);
    }
    return rs_lease_fence(db, f->l);
}

static const char *meta(rs_db_t *db, const char *key)
{
    const char *v = NULL;
    ck_assert_int_eq(rs_db_meta_get(db, ut_pool, key, &v), APR_SUCCESS);
    return v;
}

/* The fence passes for the holder (and renews: a write is a heartbeat);
 * after another took the lease, or after it ended, the transaction is
 * refused and rolled back. */
START_TEST(fence_holder_taken_expired)
{
    const char *path = ut_path(ut_tempdir("lease"), "state.db");
    rs_db_t *a = open_in(ut_pool, path), *b = open_in(ut_pool, path);
    rs_lease_t la = lease("s", "a", TTL), lb = lease("s", "b", TTL);
    fence_t f = { &la, 0 };
    int i;

    rs_db_fence_install(fence_fn, &f);
    ck_assert_int_eq(take(a, &la), 1);
    /* Writes renew it: it stays held across several TTLs. */
    for (i = 0; i < 6; i++) {
        ck_assert_int_eq(rs_db_begin_set(a, "s"), APR_SUCCESS);
        ck_assert_int_eq(rs_db_meta_put(a, "k:s", apr_itoa(ut_pool, i)), APR_SUCCESS);
        ck_assert_int_eq(rs_db_commit(a), APR_SUCCESS);
        apr_sleep(TTL / 2);
    }
    ck_assert_str_eq(meta(b, "k:s"), "5");
    if (ut_pg()) {
        ck_assert_int_eq(take(b, &lb), 0);
        /* Ended by time: refused, nothing written. */
        wait_ended(a, "s");
        f.wrote = 1;
        ck_assert_int_eq(rs_db_begin_set(a, "s"), RS_LEASE_LOST);
        ck_assert_ptr_null(meta(b, "before-fence:s"));
        ck_assert_int_eq(rs_lease_fence(a, &la), RS_LEASE_LOST); /* the renewal too */
        ck_assert_int_eq(take(a, &la), 1);                       /* taken again: epoch 2 */
        ck_assert_int_eq(la.epoch, 2);
        wait_ended(a, "s");
    }
    ck_assert_int_eq(take(b, &lb), 1);
    f.wrote = 1;
    ck_assert_int_eq(rs_db_begin_set(a, "s"), RS_LEASE_LOST);
    ck_assert_ptr_null(meta(b, "before-fence:s"));
    ck_assert_str_eq(meta(b, "k:s"), "5");
    /* The new holder's fence passes. */
    f.l = &lb;
    f.wrote = 0;
    ck_assert_int_eq(rs_db_begin_set(b, "s"), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(b), APR_SUCCESS);
    rs_db_fence_install(NULL, NULL);
}
END_TEST

/* A holder frozen (or cut off) inside a transaction holds its lease's
 * row: with the idle limit the server ends its session, so that the
 * lease can be taken once it has ended; without it the take would wait
 * for the row until its lock timeout (2 s here) and give up. */
START_TEST(frozen_in_transaction_let_go)
{
    const char *path = ut_path(ut_tempdir("lease"), "state.db");
    rs_db_t *a = open_in(ut_pool, path), *b = open_in(ut_pool, path);
    rs_lease_t la = lease("s", "a", TTL), lb = lease("s", "b", TTL);
    fence_t f = { &la, 0 };

    rs_db_fence_install(fence_fn, &f);
    ck_assert_int_eq(rs_db_idle_limit(a, 300), APR_SUCCESS);
    ck_assert_int_eq(rs_db_busy_timeout(b, 2000), APR_SUCCESS);
    ck_assert_int_eq(take(a, &la), 1);
    ck_assert_int_eq(rs_db_begin_set(a, "s"), APR_SUCCESS); /* holds the row */
    wait_ended(b, "s");
    ck_assert_int_eq(take(b, &lb), 1);
    ck_assert_int_eq(lb.epoch, la.epoch + 1);
    /* The frozen holder's transaction is gone with its session. */
    ck_assert_int_ne(rs_db_commit(a), APR_SUCCESS);
    rs_db_fence_install(NULL, NULL);
}
END_TEST

/* A transaction longer than the lease (a large generation's files): its
 * renewals as it goes are committed with it, so the lease is still its
 * holder's after the commit; without them it would have ended. */
START_TEST(long_transaction_renews)
{
    const char *path = ut_path(ut_tempdir("lease"), "state.db");
    rs_db_t *a = open_in(ut_pool, path), *b = open_in(ut_pool, path);
    rs_lease_t la = lease("s", "a", apr_time_from_msec(900)), lb = lease("s", "b", TTL);
    fence_t f = { &la, 0 };
    rs_lease_info_t in;
    int i;

    rs_db_fence_install(fence_fn, &f);
    ck_assert_int_eq(rs_db_fence_again(a), APR_SUCCESS); /* (outside: nothing) */
    ck_assert_int_eq(take(a, &la), 1);
    ck_assert_int_eq(rs_db_begin_set(a, "s"), APR_SUCCESS);
    for (i = 0; i < 8; i++) { /* 1.6 s: longer than the lease */
        apr_sleep(apr_time_from_msec(200));
        ck_assert_int_eq(rs_db_fence_again(a), APR_SUCCESS);
    }
    ck_assert_int_eq(rs_db_commit(a), APR_SUCCESS);
    ck_assert_int_eq(rs_lease_peek(b, ut_pool, "s", &in), APR_SUCCESS);
    ck_assert_int_eq(in.live, 1);
    ck_assert_int_eq(take(b, &lb), 0);
    rs_db_fence_install(NULL, NULL);
}
END_TEST

/* Two processes racing to take a free lease: exactly one wins. */
START_TEST(race_one_wins)
{
    enum { N = 4 };
    const char *path = ut_path(ut_tempdir("lease"), "state.db");
    rs_db_t *db = open_in(ut_pool, path);
    int go[2], status, i, won = 0;
    pid_t pid[N];

    ck_assert_int_eq(pipe(go), 0);
    for (i = 0; i < N; i++) {
        pid[i] = fork();
        ck_assert_int_ge(pid[i], 0);
        if (pid[i] == 0) {
            apr_pool_t *p;
            rs_db_t *c = NULL;
            rs_lease_t l;
            char x;
            int held = 0;
            close(go[1]);
            apr_pool_create(&p, NULL);
            l = (rs_lease_t){ "r", "racer", rs_lease_token(p), apr_time_from_sec(60), 0 };
            if (rs_schema_open(&c, p, ut_driver, ut_store(path), NULL) != APR_SUCCESS
                || read(go[0], &x, 1) != 0 || rs_lease_take(c, &l, &held) != APR_SUCCESS) {
                _exit(2);
            }
            _exit(held ? 1 : 0);
        }
    }
    close(go[0]);
    close(go[1]); /* every child's read returns at once: they race */
    for (i = 0; i < N; i++) {
        ck_assert_int_eq(waitpid(pid[i], &status, 0), pid[i]);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) < 2);
        won += WEXITSTATUS(status);
    }
    ck_assert_int_eq(won, 1);
    (void)db;
}
END_TEST

/* A new leader whose clock is behind the old one's continues the
 * journal: its records come after the old leader's last datetime, even
 * one in the future (the old node's clock 5 s ahead), and its sequences
 * after the old one's. */
START_TEST(handover_datetimes)
{
    const char *path = ut_path(ut_tempdir("lease"), "state.db");
    rs_db_t *a = open_in(ut_pool, path), *b = open_in(ut_pool, path);
    rs_journal_t *ja, *jb;
    rs_record_t r = { 0 }, s = { 0 };
    apr_time_t future;

    ck_assert_int_eq(rs_journal_open(&ja, a, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_open(&jb, b, ut_pool), APR_SUCCESS);
    r.dir = "";
    r.name = "x";
    r.change = RS_CHANGE_CREATED;
    s = r;
    /* b wrote first (its last datetime cached), then a led. */
    ck_assert_int_eq(rs_db_begin(b), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_append(jb, "s", &s), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(b), APR_SUCCESS);
    ck_assert_int_eq(rs_db_begin(a), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_append(ja, "s", &r), APR_SUCCESS);
    ck_assert_int_eq(
        rs_db_run(a,
                  apr_psprintf(ut_pool,
                               "UPDATE journal SET dt = dt + 5000000 WHERE seq = %" APR_INT64_T_FMT,
                               r.seq)),
        APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(a), APR_SUCCESS);
    future = r.datetime + 5000000;
    ck_assert_int_gt(future, apr_time_now() + apr_time_from_sec(4));
    /* b leads again. */
    s.name = "y";
    ck_assert_int_eq(rs_db_begin(b), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_append(jb, "s", &s), APR_SUCCESS);
    ck_assert_int_eq(s.datetime, future + 1);
    ck_assert_int_gt(s.seq, r.seq);
    s.name = "z";
    ck_assert_int_eq(rs_journal_append(jb, "s", &s), APR_SUCCESS);
    ck_assert_int_eq(s.datetime, future + 2);
    ck_assert_int_eq(rs_db_commit(b), APR_SUCCESS);
}
END_TEST

Suite *lease_suite(void)
{
    Suite *s = suite_create("lease");
    TCase *tc = ut_tcase("lease", 30);
    tcase_add_test(tc, tokens_differ);
    tcase_add_test(tc, take_expire_epochs);
    tcase_add_test(tc, release_hands_over);
    tcase_add_test(tc, fence_holder_taken_expired);
    if (ut_pg_building) {
        tcase_add_test(tc, race_one_wins);
        tcase_add_test(tc, frozen_in_transaction_let_go);
        tcase_add_test(tc, long_transaction_renews);
    }
    tcase_add_test(tc, handover_datetimes);
    suite_add_tcase(s, tc);
    return s;
}
