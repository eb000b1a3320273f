/* SPDX-License-Identifier: Apache-2.0 */
/* test_storelock.c - rs_storelock: one writer per set in a shared store. */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <apr_time.h>
#include "unit.h"
#include "rs_schema.h"
#include "rs_storelock.h"

static rs_db_t *open_in(apr_pool_t *p, const char *path)
{
    rs_db_t *db = NULL;
    ck_assert_int_eq(rs_schema_open(&db, p, ut_driver, ut_store(path), NULL), APR_SUCCESS);
    return db;
}

/* Try set's guard on db until it is held (5 s at most): PostgreSQL
 * releases a closed session's locks when its backend ends, shortly after
 * the client went. */
static int held_soon(rs_db_t *db, const char *set)
{
    int held = 0, i;
    for (i = 0; i < 500 && !held; i++) {
        ck_assert_int_eq(rs_storelock_try(db, set, &held), APR_SUCCESS);
        if (!held) {
            apr_sleep(apr_time_from_msec(10));
        }
    }
    return held;
}

/* SQLite: one node, the guard is always held. */
START_TEST(sqlite_always_held)
{
    rs_db_t *db = open_in(ut_pool, ut_path(ut_tempdir("slock"), "state.db"));
    int held = 0;
    ck_assert_int_eq(rs_storelock_try(db, "a", &held), APR_SUCCESS);
    ck_assert_int_eq(held, 1);
    ck_assert_int_eq(rs_storelock_release(db, "a"), APR_SUCCESS);
}
END_TEST

/* A second connection cannot take a held set's guard (another set's it
 * can); after the first connection closes, or releases it, it can. */
START_TEST(second_connection_waits_for_the_first)
{
    const char *path = ut_path(ut_tempdir("slock"), "state.db");
    apr_pool_t *pa, *pb;
    rs_db_t *a, *b;
    int held = 0;

    apr_pool_create(&pa, ut_pool);
    apr_pool_create(&pb, ut_pool);
    a = open_in(pa, path);
    b = open_in(pb, path);
    ck_assert_int_eq(rs_storelock_try(a, "s", &held), APR_SUCCESS);
    ck_assert_int_eq(held, 1);
    /* Taken again: held once, one release frees it. */
    ck_assert_int_eq(rs_storelock_try(a, "s", &held), APR_SUCCESS);
    ck_assert_int_eq(held, 1);
    ck_assert_int_eq(rs_storelock_try(b, "s", &held), APR_SUCCESS);
    ck_assert_int_eq(held, 0);
    ck_assert_int_eq(rs_storelock_try(b, "t", &held), APR_SUCCESS);
    ck_assert_int_eq(held, 1);
    /* Released by a: b takes it at once. */
    ck_assert_int_eq(rs_storelock_release(a, "s"), APR_SUCCESS);
    ck_assert_int_eq(rs_storelock_try(b, "s", &held), APR_SUCCESS);
    ck_assert_int_eq(held, 1);
    ck_assert_int_eq(rs_storelock_try(a, "s", &held), APR_SUCCESS);
    ck_assert_int_eq(held, 0);
    /* b's connection closes: a gets both. */
    apr_pool_destroy(pb);
    ck_assert(held_soon(a, "s"));
    ck_assert(held_soon(a, "t"));
}
END_TEST

/* Another store in the same database (another schema) has guards of its
 * own. */
START_TEST(other_store_other_guard)
{
    rs_db_t *a = open_in(ut_pool, ut_path(ut_tempdir("slock"), "state.db"));
    rs_db_t *b = open_in(ut_pool, ut_path(ut_tempdir("slock"), "state.db"));
    int held = 0;
    ck_assert_int_eq(rs_storelock_try(a, "s", &held), APR_SUCCESS);
    ck_assert_int_eq(held, 1);
    ck_assert_int_eq(rs_storelock_try(b, "s", &held), APR_SUCCESS);
    ck_assert_int_eq(held, 1);
}
END_TEST

/* A writer killed with -9 holds nothing once PostgreSQL sees its
 * connection end. */
START_TEST(killed_writer_releases)
{
    const char *path = ut_path(ut_tempdir("slock"), "state.db");
    rs_db_t *db = open_in(ut_pool, path);
    int pfd[2], held = 0, status;
    pid_t pid;
    char c;

    ck_assert_int_eq(pipe(pfd), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        apr_pool_t *p;
        rs_db_t *w = NULL;
        close(pfd[0]);
        apr_pool_create(&p, NULL);
        if (rs_schema_open(&w, p, ut_driver, ut_store(path), NULL) != APR_SUCCESS
            || rs_storelock_try(w, "s", &held) != APR_SUCCESS || !held) {
            _exit(1);
        }
        (void)!write(pfd[1], "x", 1);
        for (;;) {
            pause();
        }
    }
    close(pfd[1]);
    ck_assert_int_eq(read(pfd[0], &c, 1), 1);
    close(pfd[0]);
    ck_assert_int_eq(rs_storelock_try(db, "s", &held), APR_SUCCESS);
    ck_assert_int_eq(held, 0);
    kill(pid, SIGKILL);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(held_soon(db, "s"));
}
END_TEST

Suite *storelock_suite(void)
{
    Suite *s = suite_create("storelock");
    TCase *tc = ut_tcase("storelock", 30);
    if (ut_pg_building) {
        tcase_add_test(tc, second_connection_waits_for_the_first);
        tcase_add_test(tc, other_store_other_guard);
        tcase_add_test(tc, killed_writer_releases);
    }
    else {
        tcase_add_test(tc, sqlite_always_held);
    }
    suite_add_tcase(s, tc);
    return s;
}
