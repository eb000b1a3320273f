/* SPDX-License-Identifier: Apache-2.0 */
/* test_setlock.c - rs_setlock: a set held by a watcher cannot be taken. */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "unit.h"
#include "rs_setlock.h"
#include "rs_statedir.h"

/* A child that holds the shared lock of set "a" until killed; returns
 * once the lock is held. */
static pid_t holder_start(const char *statedir)
{
    int pfd[2];
    char c;
    pid_t pid;

    ck_assert_int_eq(pipe(pfd), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(pfd[0]);
        if (rs_setlock_hold(ut_pool, statedir, "a") != APR_SUCCESS) {
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
    return pid;
}

START_TEST(held_set_is_refused)
{
    char *dir = ut_tempdir("setlock");
    pid_t pid = holder_start(dir);
    long who = -1;
    int fd = -1;

    ck_assert(ut_exists(rs_statedir_setlock(ut_pool, dir, "a")));
    /* Held by the child: refused, naming it. */
    ck_assert_int_eq(rs_setlock_take(ut_pool, dir, "a", &fd, &who), APR_EAGAIN);
    ck_assert_int_eq(who, (long)pid);
    ck_assert_int_eq(fd, -1);
    /* Another set is free. */
    ck_assert_int_eq(rs_setlock_take(ut_pool, dir, "b", &fd, &who), APR_SUCCESS);
    ck_assert_int_ge(fd, 0);
    close(fd);
    /* The lock goes with the process, however it ends. */
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    ck_assert_int_eq(rs_setlock_take(ut_pool, dir, "a", &fd, &who), APR_SUCCESS);
    ck_assert_int_eq(who, 0);
    close(fd);
}
END_TEST

START_TEST(missing_statedir)
{
    char *dir = ut_path(ut_tempdir("setlock-none"), "no/such");
    long who;
    int fd;

    ck_assert_int_eq(rs_setlock_take(ut_pool, dir, "a", &fd, &who), APR_ENOENT);
    ck_assert_int_eq(rs_setlock_hold(ut_pool, dir, "a"), APR_ENOENT);
}
END_TEST

Suite *setlock_suite(void)
{
    Suite *s = suite_create("setlock");
    TCase *tc = ut_tcase("setlock", 30);
    tcase_add_test(tc, held_set_is_refused);
    tcase_add_test(tc, missing_statedir);
    suite_add_tcase(s, tc);
    return s;
}
