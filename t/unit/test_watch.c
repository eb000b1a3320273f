/* SPDX-License-Identifier: Apache-2.0 */
/* test_watch.c - rs_watch: inotify events turned into work, on real trees */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_scan.h"
#include "rs_time.h"
#include "rs_watch.h"

#define WAIT_MS 10000 /* deadline for an event that must come */

typedef struct {
    const char *base; /* holds root, and room outside the tree */
    const char *root;
    rs_watch_t *w;
} fx_t;

static void fx_init_max(fx_t *f, long max_watches)
{
    memset(f, 0, sizeof(*f));
    f->base = ut_tempdir("watch");
    f->root = ut_path(f->base, "root");
    ut_mkdir(f->root);
    ck_assert_int_eq(rs_watch_create(&f->w, ut_pool, f->root, max_watches), APR_SUCCESS);
    ck_assert_int_ge(rs_watch_fd(f->w), 0);
    ck_assert_int_eq(rs_watch_count(f->w), 0);
    ck_assert_int_eq(rs_watch_events(f->w), 0);
    ck_assert_int_eq(rs_watch_next_due(f->w), 0);
}

static void fx_init(fx_t *f)
{
    fx_init_max(f, 0);
}

static const char *at(fx_t *f, const char *rel)
{
    return *rel ? ut_path(f->root, rel) : f->root;
}

/* Watch directory rel as the scanner does: open it, pass the descriptor. */
static int add_at(fx_t *f, const char *rel, const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int err;
    ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
    err = rs_watch_add(f->w, rel, fd);
    close(fd);
    return err;
}

static int add(fx_t *f, const char *rel)
{
    return add_at(f, rel, at(f, rel));
}

static void mkdir_in(fx_t *f, const char *rel)
{
    ut_mkdir(at(f, rel));
}

static void put(fx_t *f, const char *rel, const char *content)
{
    ut_write_str(at(f, rel), content);
}

/* Wait (poll) until events are queued, then read them all. */
static void wait_read(fx_t *f)
{
    struct pollfd pfd;
    int rc;

    pfd.fd = rs_watch_fd(f->w);
    pfd.events = POLLIN;
    do {
        pfd.revents = 0;
        rc = poll(&pfd, 1, WAIT_MS);
    } while (rc < 0 && errno == EINTR);
    ck_assert_msg(rc == 1, "no inotify event within %d ms", WAIT_MS);
    ck_assert_int_eq(rs_watch_read(f->w), APR_SUCCESS);
    /* Everything queued was read. */
    pfd.revents = 0;
    ck_assert_int_eq(poll(&pfd, 1, 0), 0);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_target(const void *a, const void *b)
{
    return strcmp(((const rs_scan_target_t *)a)->dir, ((const rs_scan_target_t *)b)->dir);
}

/* Take the work due at `now`: "dir:name,name|dir:name", directories and
 * names sorted, each once. */
static const char *take(fx_t *f, apr_time_t now)
{
    rs_scan_target_t *t = NULL;
    apr_array_header_t *parts = apr_array_make(ut_pool, 4, sizeof(char *));
    int n = rs_watch_take(f->w, ut_pool, now, &t), i, j;

    ck_assert_int_ge(n, 0);
    qsort(t, (size_t)n, sizeof(*t), cmp_target);
    for (i = 0; i < n; i++) {
        apr_array_header_t *names;
        ck_assert_ptr_nonnull(t[i].dir);
        ck_assert_ptr_nonnull(t[i].names);
        ck_assert_int_gt(t[i].names->nelts, 0);
        names = apr_array_copy(ut_pool, t[i].names);
        qsort(names->elts, (size_t)names->nelts, sizeof(char *), cmp_str);
        for (j = 1; j < names->nelts; j++) {
            ck_assert_str_ne(APR_ARRAY_IDX(names, j - 1, char *), APR_ARRAY_IDX(names, j, char *));
        }
        if (i > 0) {
            ck_assert_str_ne(t[i - 1].dir, t[i].dir);
        }
        APR_ARRAY_PUSH(parts, char *) =
            apr_pstrcat(ut_pool, t[i].dir, ":", apr_array_pstrcat(ut_pool, names, ','), NULL);
    }
    return apr_array_pstrcat(ut_pool, parts, '|');
}

/* Take what is due now (not settling entries still waiting). */
static const char *take_now(fx_t *f)
{
    return take(f, rs_time_mono());
}

/* A file created, written and closed elsewhere, to show that the events
 * before it were (or were not) reported. */
static void marker(fx_t *f, const char *rel)
{
    put(f, rel, "m");
    wait_read(f);
}

START_TEST(tree_and_close_write)
{
    fx_t f;
    apr_int64_t ev;

    fx_init(&f);
    mkdir_in(&f, "sub");
    mkdir_in(&f, "sub/deep");
    ck_assert_int_eq(add(&f, ""), 0);
    ck_assert_int_eq(add(&f, "sub"), 0);
    ck_assert_int_eq(add(&f, "sub/deep"), 0);
    ck_assert_int_eq(rs_watch_count(f.w), 3);
    /* Adding a watched directory again changes nothing. */
    ck_assert_int_eq(add(&f, "sub"), 0);
    ck_assert_int_eq(rs_watch_count(f.w), 3);
    ck_assert_str_eq(take_now(&f), "");

    /* Created, written, closed: IN_CREATE, IN_MODIFY, IN_CLOSE_WRITE,
     * one piece of "now" work. */
    put(&f, "a.txt", "abc");
    wait_read(&f);
    ck_assert_int_eq(rs_watch_events(f.w), 3);
    ck_assert_str_eq(take_now(&f), ":a.txt");
    ck_assert_int_eq(rs_watch_next_due(f.w), 0);
    ck_assert_str_eq(take_now(&f), "");

    put(&f, "sub/deep/b.txt", "b");
    put(&f, "sub/c.txt", "c");
    wait_read(&f);
    ck_assert_int_eq(rs_watch_events(f.w), 9);
    ck_assert_str_eq(take_now(&f), "sub:c.txt|sub/deep:b.txt");
    ck_assert_str_eq(take_now(&f), "");
    ck_assert_int_eq(rs_watch_next_due(f.w), 0);

    /* Reading with nothing queued is fine. */
    ev = rs_watch_events(f.w);
    ck_assert_int_eq(rs_watch_read(f.w), APR_SUCCESS);
    ck_assert_int_eq(rs_watch_events(f.w), ev);
    ck_assert_uint_eq(rs_watch_take_flags(f.w), 0);
}
END_TEST

START_TEST(one_entry_per_name)
{
    fx_t f;
    int i;

    fx_init(&f);
    mkdir_in(&f, "d");
    ck_assert_int_eq(add(&f, ""), 0);
    ck_assert_int_eq(add(&f, "d"), 0);
    for (i = 0; i < 5; i++) {
        put(&f, "d/f", apr_psprintf(ut_pool, "version %d", i));
    }
    ck_assert_int_eq(chmod(at(&f, "d/f"), 0600), 0);
    put(&f, "d/g", "g");
    put(&f, "top", "t");
    ck_assert_int_eq(chmod(at(&f, "top"), 0600), 0);
    wait_read(&f);
    ck_assert_int_gt(rs_watch_events(f.w), 10);
    ck_assert_str_eq(take_now(&f), ":top|d:f,g");
    ck_assert_str_eq(take_now(&f), "");
}
END_TEST

START_TEST(settling_links)
{
    fx_t f;
    apr_time_t before, after, due;
    const char *outside;

    fx_init(&f);
    outside = ut_path(f.base, "outside.txt");
    ut_write_str(outside, "o");
    ck_assert_int_eq(add(&f, ""), 0);

    /* A hard link and a symlink are created, never closed. */
    before = rs_time_mono();
    ck_assert_int_eq(link(outside, at(&f, "hard")), 0);
    ck_assert_int_eq(symlink("outside.txt", at(&f, "soft")), 0);
    wait_read(&f);
    after = rs_time_mono();
    ck_assert_int_eq(rs_watch_events(f.w), 2);
    due = rs_watch_next_due(f.w);
    ck_assert_int_ge(due, before + RS_WATCH_SETTLE);
    ck_assert_int_le(due, after + RS_WATCH_SETTLE);

    /* Not due before the delay (or at the time of the events). */
    ck_assert_str_eq(take(&f, before), "");
    ck_assert_str_eq(take(&f, due - 1), "");
    ck_assert_int_eq(rs_watch_next_due(f.w), due);
    /* Due after it, once. */
    ck_assert_str_eq(take(&f, due), ":hard,soft");
    ck_assert_int_eq(rs_watch_next_due(f.w), 0);
    ck_assert_str_eq(take(&f, due + RS_WATCH_SETTLE), "");

    /* Removing them is "now" work. */
    ck_assert_int_eq(unlink(at(&f, "hard")), 0);
    ck_assert_int_eq(unlink(at(&f, "soft")), 0);
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), ":hard,soft");
    ck_assert_int_eq(rs_watch_next_due(f.w), 0);
}
END_TEST

START_TEST(settling_taken_by_close)
{
    fx_t f;
    apr_time_t due;
    int fd;

    fx_init(&f);
    mkdir_in(&f, "d");
    ck_assert_int_eq(add(&f, ""), 0);
    ck_assert_int_eq(add(&f, "d"), 0);

    /* Created and written, still open: settling. */
    fd = open(at(&f, "d/w.txt"), O_WRONLY | O_CREAT | O_EXCL, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "12345", 5), 5);
    wait_read(&f);
    due = rs_watch_next_due(f.w);
    ck_assert_int_gt(due, 0);
    ck_assert_str_eq(take(&f, due - 1), "");

    /* The close takes it first: "now", and not again at the delay. */
    ck_assert_int_eq(close(fd), 0);
    wait_read(&f);
    ck_assert_str_eq(take(&f, due - 1), "d:w.txt");
    ck_assert_str_eq(take(&f, due + RS_WATCH_SETTLE), "");
    ck_assert_int_eq(rs_watch_next_due(f.w), 0);

    /* Another "now" event (a deletion) takes a settling entry too. */
    ck_assert_int_eq(symlink("w.txt", at(&f, "d/ln")), 0);
    wait_read(&f);
    due = rs_watch_next_due(f.w);
    ck_assert_int_gt(due, 0);
    ck_assert_int_eq(unlink(at(&f, "d/ln")), 0);
    wait_read(&f);
    ck_assert_str_eq(take(&f, due - 1), "d:ln");
    ck_assert_str_eq(take(&f, due), "");
    ck_assert_int_eq(rs_watch_next_due(f.w), 0);
}
END_TEST

START_TEST(settling_writer_kept_open)
{
    fx_t f;
    apr_time_t due, due2;
    int fd;

    fx_init(&f);
    ck_assert_int_eq(add(&f, ""), 0);
    put(&f, "log", "start\n");
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), ":log");

    /* A writer keeps it open: the first write starts the delay, later
     * ones do not push it back. */
    fd = open(at(&f, "log"), O_WRONLY | O_APPEND);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "one\n", 4), 4);
    wait_read(&f);
    due = rs_watch_next_due(f.w);
    ck_assert_int_gt(due, 0);
    ck_assert_int_eq(write(fd, "two\n", 4), 4);
    wait_read(&f);
    ck_assert_int_eq(rs_watch_next_due(f.w), due);
    ck_assert_str_eq(take(&f, due - 1), "");
    ck_assert_str_eq(take(&f, due), ":log");
    ck_assert_int_eq(rs_watch_next_due(f.w), 0);

    /* Written again after that: a new delay. */
    ck_assert_int_eq(write(fd, "three\n", 6), 6);
    wait_read(&f);
    due2 = rs_watch_next_due(f.w);
    ck_assert_int_ge(due2, due);
    ck_assert_str_eq(take(&f, due2 - 1), "");
    ck_assert_str_eq(take(&f, due2), ":log");
    ck_assert_int_eq(close(fd), 0);
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), ":log");
    ck_assert_int_eq(rs_watch_next_due(f.w), 0);
}
END_TEST

START_TEST(settling_two_due_times)
{
    fx_t f;
    apr_time_t due1, due2;
    int fd1, fd2;

    fx_init(&f);
    ck_assert_int_eq(add(&f, ""), 0);
    ck_assert_int_eq(symlink("x", at(&f, "first")), 0);
    wait_read(&f);
    due1 = rs_watch_next_due(f.w);
    ck_assert_int_gt(due1, 0);
    /* A later read: a later due time (the clock moves by at least 1 µs). */
    do {
        apr_sleep(1000);
    } while (rs_time_mono() <= due1 - RS_WATCH_SETTLE);
    ck_assert_int_eq(symlink("x", at(&f, "second")), 0);
    wait_read(&f);
    ck_assert_int_eq(rs_watch_next_due(f.w), due1);
    ck_assert_str_eq(take(&f, due1), ":first");
    due2 = rs_watch_next_due(f.w);
    ck_assert_int_gt(due2, due1);
    ck_assert_str_eq(take(&f, due2 - 1), "");
    ck_assert_int_eq(rs_watch_next_due(f.w), due2);
    ck_assert_str_eq(take(&f, due2), ":second");
    ck_assert_int_eq(rs_watch_next_due(f.w), 0);

    /* The first of two taken by a close: the due time may stay early,
     * never late; the take at that time finds nothing and corrects it. */
    fd1 = open(at(&f, "p"), O_WRONLY | O_CREAT | O_EXCL, 0644);
    ck_assert_int_ge(fd1, 0);
    wait_read(&f);
    due1 = rs_watch_next_due(f.w);
    ck_assert_int_gt(due1, 0);
    do {
        apr_sleep(1000);
    } while (rs_time_mono() <= due1 - RS_WATCH_SETTLE);
    fd2 = open(at(&f, "q"), O_WRONLY | O_CREAT | O_EXCL, 0644);
    ck_assert_int_ge(fd2, 0);
    wait_read(&f);
    ck_assert_int_eq(close(fd1), 0);
    wait_read(&f);
    ck_assert_str_eq(take(&f, due1 - 1), ":p");
    ck_assert_int_eq(rs_watch_next_due(f.w), due1);
    ck_assert_str_eq(take(&f, due1), "");
    due2 = rs_watch_next_due(f.w);
    ck_assert_int_gt(due2, due1);
    ck_assert_str_eq(take(&f, due2), ":q");
    ck_assert_int_eq(rs_watch_next_due(f.w), 0);
    ck_assert_int_eq(close(fd2), 0);
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), ":q");
}
END_TEST

START_TEST(created_directory)
{
    fx_t f;

    fx_init(&f);
    mkdir_in(&f, "sub");
    ck_assert_int_eq(add(&f, ""), 0);
    ck_assert_int_eq(add(&f, "sub"), 0);
    mkdir_in(&f, "new");
    mkdir_in(&f, "sub/inner");
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), ":new|sub:inner");
    ck_assert_int_eq(rs_watch_next_due(f.w), 0);

    /* Not watched before the scanner adds it. */
    put(&f, "new/early", "e");
    marker(&f, "m1");
    ck_assert_str_eq(take_now(&f), ":m1");
    ck_assert_int_eq(add(&f, "new"), 0);
    ck_assert_int_eq(rs_watch_count(f.w), 3);
    put(&f, "new/late", "l");
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), "new:late");

    /* Attributes of a directory: its parent reports it, no flag. */
    ck_assert_int_eq(chmod(at(&f, "sub"), 0700), 0);
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), ":sub");
    ck_assert_uint_eq(rs_watch_take_flags(f.w), 0);
}
END_TEST

START_TEST(delete_and_rename)
{
    fx_t f;

    fx_init(&f);
    mkdir_in(&f, "sub");
    mkdir_in(&f, "sub/deep");
    put(&f, "a", "a");
    put(&f, "b", "b");
    put(&f, "x", "x");
    ck_assert_int_eq(add(&f, ""), 0);
    ck_assert_int_eq(add(&f, "sub"), 0);
    ck_assert_int_eq(add(&f, "sub/deep"), 0);
    ck_assert_int_eq(rs_watch_count(f.w), 3);

    ck_assert_int_eq(unlink(at(&f, "a")), 0);
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), ":a");

    /* Renamed across directories: both names. */
    ck_assert_int_eq(rename(at(&f, "b"), at(&f, "sub/c")), 0);
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), ":b|sub:c");

    /* Renamed in place, over another file. */
    put(&f, "sub/deep/y", "y");
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), "sub/deep:y");
    ck_assert_int_eq(rename(at(&f, "sub/c"), at(&f, "sub/deep/y")), 0);
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), "sub:c|sub/deep:y");

    /* Moved in from outside the tree, and out of it. */
    ut_write_str(ut_path(f.base, "in"), "i");
    ck_assert_int_eq(rename(ut_path(f.base, "in"), at(&f, "in")), 0);
    ck_assert_int_eq(rename(at(&f, "x"), ut_path(f.base, "x")), 0);
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), ":in,x");

    /* A deleted directory: reported by its parent, its watch goes. */
    ck_assert_int_eq(unlink(at(&f, "sub/deep/y")), 0);
    ck_assert_int_eq(rmdir(at(&f, "sub/deep")), 0);
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), "sub:deep|sub/deep:y");
    ck_assert_int_eq(rs_watch_count(f.w), 2);
    ck_assert_uint_eq(rs_watch_take_flags(f.w), 0);
    ck_assert_int_eq(rs_watch_next_due(f.w), 0);
}
END_TEST

START_TEST(directory_moved_within)
{
    fx_t f;

    fx_init(&f);
    mkdir_in(&f, "a");
    mkdir_in(&f, "a/inner");
    mkdir_in(&f, "b");
    ck_assert_int_eq(add(&f, ""), 0);
    ck_assert_int_eq(add(&f, "a"), 0);
    ck_assert_int_eq(add(&f, "a/inner"), 0);
    ck_assert_int_eq(add(&f, "b"), 0);
    ck_assert_int_eq(rs_watch_count(f.w), 4);

    ck_assert_int_eq(rename(at(&f, "a"), at(&f, "b/a2")), 0);
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), ":a|b:a2");
    ck_assert_uint_eq(rs_watch_take_flags(f.w), 0);

    /* The watch followed the inode: until the scanner walks the new
     * path, its events carry the old one. */
    put(&f, "b/a2/early", "e");
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), "a:early");

    /* Walking the new path gets the same descriptor back: no new watch,
     * and the new path from then on; the same for the directory below. */
    ck_assert_int_eq(add(&f, "b/a2"), 0);
    ck_assert_int_eq(rs_watch_count(f.w), 4);
    put(&f, "b/a2/late", "l");
    put(&f, "b/a2/inner/deeper", "d");
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), "a/inner:deeper|b/a2:late");
    ck_assert_int_eq(add(&f, "b/a2/inner"), 0);
    ck_assert_int_eq(rs_watch_count(f.w), 4);
    put(&f, "b/a2/inner/deepest", "d");
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), "b/a2/inner:deepest");

    /* The old path is no longer watched: forgetting it is a no-op. */
    rs_watch_forget(f.w, "a");
    rs_watch_forget(f.w, "a/inner");
    ck_assert_int_eq(rs_watch_count(f.w), 4);
    put(&f, "b/a2/again", "a");
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), "b/a2:again");

    /* Moved back, and the old path forgotten before the new one is
     * walked (the scanner may drop the old name first): watched anew. */
    ck_assert_int_eq(rename(at(&f, "b/a2"), at(&f, "c")), 0);
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), ":c|b:a2");
    rs_watch_forget(f.w, "b/a2");
    ck_assert_int_eq(rs_watch_count(f.w), 2);
    ck_assert_int_eq(add(&f, "c"), 0);
    ck_assert_int_eq(add(&f, "c/inner"), 0);
    ck_assert_int_eq(rs_watch_count(f.w), 4);
    put(&f, "c/one", "1");
    put(&f, "c/inner/two", "2");
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), "c:one|c/inner:two");
}
END_TEST

START_TEST(forget_moved_out)
{
    fx_t f;
    const char *away;

    fx_init(&f);
    mkdir_in(&f, "out");
    mkdir_in(&f, "out/deeper");
    mkdir_in(&f, "outer"); /* shares the prefix, stays */
    ck_assert_int_eq(add(&f, ""), 0);
    ck_assert_int_eq(add(&f, "out"), 0);
    ck_assert_int_eq(add(&f, "out/deeper"), 0);
    ck_assert_int_eq(add(&f, "outer"), 0);
    ck_assert_int_eq(rs_watch_count(f.w), 4);

    away = ut_path(f.base, "away");
    ck_assert_int_eq(rename(at(&f, "out"), away), 0);
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), ":out");

    /* Still reporting from outside until forgotten. */
    ut_write_str(ut_path(away, "x"), "x");
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), "out:x");

    /* Forgetting an unwatched path, or a prefix that is not a directory
     * of the map, removes nothing. */
    rs_watch_forget(f.w, "nothing");
    rs_watch_forget(f.w, "ou");
    ck_assert_int_eq(rs_watch_count(f.w), 4);

    rs_watch_forget(f.w, "out");
    ck_assert_int_eq(rs_watch_count(f.w), 2);
    ut_write_str(ut_path(away, "y"), "y");
    ut_write_str(ut_path(away, "deeper/z"), "z");
    put(&f, "outer/o", "o");
    marker(&f, "m");
    ck_assert_str_eq(take_now(&f), ":m|outer:o");
    ck_assert_uint_eq(rs_watch_take_flags(f.w), 0);

    /* Forgetting the root forgets everything, without a flag. */
    rs_watch_forget(f.w, "");
    ck_assert_int_eq(rs_watch_count(f.w), 0);
    put(&f, "after", "a");
    put(&f, "outer/after", "a");
    ck_assert_int_eq(rs_watch_read(f.w), APR_SUCCESS);
    ck_assert_str_eq(take_now(&f), "");
    ck_assert_uint_eq(rs_watch_take_flags(f.w), 0);
}
END_TEST

START_TEST(root_attributes)
{
    fx_t f;

    fx_init(&f);
    ck_assert_int_eq(add(&f, ""), 0);
    ck_assert_int_eq(chmod(f.root, 0700), 0);
    wait_read(&f);
    ck_assert_uint_eq(rs_watch_take_flags(f.w), RS_WATCH_ROOT);
    ck_assert_uint_eq(rs_watch_take_flags(f.w), 0);
    ck_assert_str_eq(take_now(&f), "");
    ck_assert_int_eq(rs_watch_count(f.w), 1);
}
END_TEST

START_TEST(root_moved)
{
    fx_t f;

    fx_init(&f);
    mkdir_in(&f, "sub");
    ck_assert_int_eq(add(&f, ""), 0);
    ck_assert_int_eq(add(&f, "sub"), 0);
    ck_assert_int_eq(rename(f.root, ut_path(f.base, "moved")), 0);
    wait_read(&f);
    ck_assert_uint_eq(rs_watch_take_flags(f.w), RS_WATCH_ROOT);
    ck_assert_uint_eq(rs_watch_take_flags(f.w), 0);
    ck_assert_str_eq(take_now(&f), "");
}
END_TEST

START_TEST(root_deleted)
{
    fx_t f;

    fx_init(&f);
    mkdir_in(&f, "sub");
    put(&f, "sub/f", "f");
    ck_assert_int_eq(add(&f, ""), 0);
    ck_assert_int_eq(add(&f, "sub"), 0);
    ck_assert_int_eq(ut_rmtree(f.root), 0);
    ck_assert_int_eq(ut_exists(f.root), 0);
    wait_read(&f);
    ck_assert_uint_eq(rs_watch_take_flags(f.w), RS_WATCH_ROOT);
    ck_assert_uint_eq(rs_watch_take_flags(f.w), 0);
    /* Both watches went with their directories. */
    ck_assert_int_eq(rs_watch_count(f.w), 0);
    ck_assert_str_eq(take_now(&f), ":sub|sub:f");
}
END_TEST

static long read_long(const char *path)
{
    FILE *fp = fopen(path, "r");
    long v = -1;
    if (fp) {
        if (fscanf(fp, "%ld", &v) != 1) {
            v = -1;
        }
        fclose(fp);
    }
    return v;
}

START_TEST(queue_overflow)
{
    fx_t f;
    long max = read_long("/proc/sys/fs/inotify/max_queued_events"), i;
    rs_scan_target_t *t;
    apr_time_t due;
    int n;

    ck_assert_msg(max > 0, "cannot read fs.inotify.max_queued_events");
    if (max > 65536) {
        /* A raised limit: too many files to make here. */
        return;
    }
    fx_init(&f);
    ck_assert_int_eq(add(&f, ""), 0);
    /* One IN_CREATE per symlink, nothing read meanwhile: the queue holds
     * `max` of them, then the overflow. */
    for (i = 0; i < max + 10; i++) {
        char name[32];
        snprintf(name, sizeof(name), "l%06ld", i);
        ck_assert_int_eq(symlink("t", at(&f, name)), 0);
    }
    wait_read(&f);
    ck_assert_int_eq(rs_watch_events(f.w), (apr_int64_t)max + 1);
    ck_assert_uint_eq(rs_watch_take_flags(f.w), RS_WATCH_OVERFLOW);
    ck_assert_uint_eq(rs_watch_take_flags(f.w), 0);

    /* What was queued is still work: one directory, every name once. */
    due = rs_watch_next_due(f.w);
    ck_assert_int_gt(due, 0);
    ck_assert_int_eq(rs_watch_take(f.w, ut_pool, due - 1, &t), 0);
    n = rs_watch_take(f.w, ut_pool, due, &t);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(t[0].dir, "");
    ck_assert_int_eq(t[0].names->nelts, max);
    ck_assert_int_eq(rs_watch_next_due(f.w), 0);

    /* Events flow again afterwards. */
    put(&f, "after", "a");
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), ":after");
    ck_assert_uint_eq(rs_watch_take_flags(f.w), 0);
}
END_TEST

START_TEST(max_watches)
{
    fx_t f;

    fx_init_max(&f, 3);
    mkdir_in(&f, "a");
    mkdir_in(&f, "b");
    mkdir_in(&f, "c");
    ck_assert_int_eq(add(&f, ""), 0);
    ck_assert_int_eq(add(&f, "a"), 0);
    ck_assert_int_eq(add(&f, "b"), 0);
    ck_assert_int_eq(add(&f, "c"), ENOSPC);
    ck_assert_int_eq(rs_watch_count(f.w), 3);
    /* Not watched. */
    put(&f, "c/no", "n");
    marker(&f, "b/m");
    ck_assert_str_eq(take_now(&f), "b:m");

    /* Watched directories can be added again at the cap. */
    ck_assert_int_eq(add(&f, "a"), 0);
    ck_assert_int_eq(rs_watch_count(f.w), 3);

    /* Room again once a watch goes. */
    ck_assert_int_eq(rmdir(at(&f, "a")), 0);
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), ":a");
    ck_assert_int_eq(rs_watch_count(f.w), 2);
    ck_assert_int_eq(add(&f, "c"), 0);
    ck_assert_int_eq(rs_watch_count(f.w), 3);
    mkdir_in(&f, "d");
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), ":d");
    ck_assert_int_eq(add(&f, "d"), ENOSPC);

    /* At the cap, a directory moved inside the tree is walked under its
     * new path: the same watch, not a new one. */
    ck_assert_int_eq(rename(at(&f, "b"), at(&f, "b2")), 0);
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), ":b,b2");
    ck_assert_int_eq(add(&f, "b2"), 0);
    ck_assert_int_eq(rs_watch_count(f.w), 3);
    put(&f, "b2/x", "x");
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), "b2:x");

    /* At the cap, a directory replaced by another under the same path:
     * the new one is watched instead of the old one. */
    ck_assert_int_eq(rename(at(&f, "c"), ut_path(f.base, "c-away")), 0);
    mkdir_in(&f, "c");
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), ":c");
    ck_assert_int_eq(add(&f, "c"), 0);
    ck_assert_int_eq(rs_watch_count(f.w), 3);
    ut_write_str(ut_path(f.base, "c-away/old"), "o");
    put(&f, "c/new", "n");
    wait_read(&f);
    ck_assert_str_eq(take_now(&f), "c:new");
}
END_TEST

/* Settling deadlines are on the monotonic clock (rs_time_mono), which a
 * step of the wall clock does not move. */
START_TEST(mono_follows_clock_monotonic)
{
    struct timespec a, b;
    apr_time_t m;
    clock_gettime(CLOCK_MONOTONIC, &a);
    m = rs_time_mono();
    clock_gettime(CLOCK_MONOTONIC, &b);
    ck_assert_int_ge(m, (apr_time_t)a.tv_sec * APR_USEC_PER_SEC + a.tv_nsec / 1000);
    ck_assert_int_le(m, (apr_time_t)b.tv_sec * APR_USEC_PER_SEC + b.tv_nsec / 1000);
    ck_assert_int_le(m, rs_time_mono());
}
END_TEST

/* A symlink is created and never closed: it settles, and is due
 * RS_WATCH_SETTLE after it was read on the monotonic clock - not on the
 * wall clock, which may be stepped back meanwhile (the watcher passes
 * rs_time_mono() to rs_watch_take). */
START_TEST(settling_due_on_monotonic_clock)
{
    const char *dir = ut_tempdir("watch-mono");
    rs_watch_t *w;
    rs_scan_target_t *t;
    apr_time_t m0, m1, due;
    int dfd, n;

    ck_assert_int_eq(rs_watch_create(&w, ut_pool, dir, 0), APR_SUCCESS);
    dfd = open(dir, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge(dfd, 0);
    ck_assert_int_eq(rs_watch_add(w, "", dfd), 0);
    close(dfd);
    ck_assert_int_eq(symlink("nowhere", ut_path(dir, "link")), 0);

    m0 = rs_time_mono();
    ck_assert_int_eq(rs_watch_read(w), APR_SUCCESS);
    m1 = rs_time_mono();
    due = rs_watch_next_due(w);
    ck_assert_int_ge(due, m0 + RS_WATCH_SETTLE);
    ck_assert_int_le(due, m1 + RS_WATCH_SETTLE);

    /* Not before it is due, then exactly once. */
    ck_assert_int_eq(rs_watch_take(w, ut_pool, due - 1, &t), 0);
    n = rs_watch_take(w, ut_pool, due, &t);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(t[0].dir, "");
    ck_assert_int_eq(t[0].names->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(t[0].names, 0, const char *), "link");
    ck_assert_int_eq(rs_watch_next_due(w), 0);
    ck_assert_int_eq(rs_watch_take(w, ut_pool, due + RS_WATCH_SETTLE, &t), 0);
}
END_TEST

/* The access file names the watches above the root follow. */
static const apr_array_header_t *access_names(void)
{
    apr_array_header_t *n = apr_array_make(ut_pool, 2, sizeof(const char *));
    APR_ARRAY_PUSH(n, const char *) = ".htaccess";
    APR_ARRAY_PUSH(n, const char *) = ".acl";
    return n;
}

/* Directories above the root: only their access files make work, of its
 * own kind (never scan targets), "now" for a close, a rename or a
 * removal, after the settling delay for a file created or written and
 * still open; rs_watch_forget never drops them. */
START_TEST(above_access_files)
{
    fx_t f;
    const char *up = NULL;
    apr_time_t due;
    int fd;

    fx_init(&f);
    up = f.base; /* the root's parent */
    ck_assert_int_eq(add(&f, ""), 0);
    ck_assert_int_eq(rs_watch_above(f.w, up, access_names()), 0);
    ck_assert_int_eq(rs_watch_count(f.w), 2);
    /* Again: nothing new. */
    ck_assert_int_eq(rs_watch_above(f.w, up, access_names()), 0);
    ck_assert_int_eq(rs_watch_count(f.w), 2);
    ck_assert_int_eq(rs_watch_take_above(f.w, rs_time_mono()), 0);

    /* Other names up there make no work at all. */
    ut_write_str(ut_path(up, "other.txt"), "o");
    ut_write_str(ut_path(up, ".htaccess.new"), "Require all denied\n");
    marker(&f, "m1");
    ck_assert_int_eq(rs_watch_take_above(f.w, rs_time_mono()), 0);
    ck_assert_str_eq(take_now(&f), ":m1");

    /* Replaced by rename: now. */
    ck_assert_int_eq(rename(ut_path(up, ".htaccess.new"), ut_path(up, ".htaccess")), 0);
    wait_read(&f);
    ck_assert_int_eq(rs_watch_take_above(f.w, rs_time_mono()), 1);
    ck_assert_int_eq(rs_watch_take_above(f.w, rs_time_mono()), 0);
    ck_assert_str_eq(take_now(&f), "");

    /* Written in place and closed: now (the close takes the delay). */
    ut_write_str(ut_path(up, ".htaccess"), "Require all granted\n");
    wait_read(&f);
    ck_assert_int_eq(rs_watch_take_above(f.w, rs_time_mono()), 1);
    ck_assert_int_eq(rs_watch_next_due(f.w), 0);

    /* The second name, created and held open: after the delay. */
    fd = open(ut_path(up, ".acl"), O_WRONLY | O_CREAT | O_EXCL, 0644);
    ck_assert_int_ge(fd, 0);
    wait_read(&f);
    due = rs_watch_next_due(f.w);
    ck_assert_int_gt(due, 0);
    ck_assert_int_eq(rs_watch_take_above(f.w, due - 1), 0);
    ck_assert_int_eq(rs_watch_take_above(f.w, due), 1);
    ck_assert_int_eq(rs_watch_next_due(f.w), 0);
    ck_assert_int_eq(close(fd), 0);
    wait_read(&f);
    ck_assert_int_eq(rs_watch_take_above(f.w, rs_time_mono()), 1);

    /* Attributes, removal. */
    ck_assert_int_eq(chmod(ut_path(up, ".acl"), 0600), 0);
    wait_read(&f);
    ck_assert_int_eq(rs_watch_take_above(f.w, rs_time_mono()), 1);
    ck_assert_int_eq(unlink(ut_path(up, ".acl")), 0);
    wait_read(&f);
    ck_assert_int_eq(rs_watch_take_above(f.w, rs_time_mono()), 1);

    /* Forgetting the whole tree keeps the watch above. */
    rs_watch_forget(f.w, "");
    ck_assert_int_eq(rs_watch_count(f.w), 1);
    ck_assert_int_eq(unlink(ut_path(up, ".htaccess")), 0);
    wait_read(&f);
    ck_assert_int_eq(rs_watch_take_above(f.w, rs_time_mono()), 1);
    ck_assert_str_eq(take_now(&f), "");
    ck_assert_uint_eq(rs_watch_take_flags(f.w), 0);
}
END_TEST

/* A directory above that goes is work (the owner looks again); watching
 * its path again watches the directory now there. */
START_TEST(above_directory_replaced)
{
    fx_t f;
    const char *top = NULL, *mid, *root;

    memset(&f, 0, sizeof(f));
    top = ut_tempdir("watch-above");
    mid = ut_path(top, "mid");
    root = ut_path(mid, "root");
    ut_mkdir(mid);
    ut_mkdir(root);
    ck_assert_int_eq(rs_watch_create(&f.w, ut_pool, root, 0), APR_SUCCESS);
    ck_assert_int_eq(rs_watch_above(f.w, mid, access_names()), 0);
    ck_assert_int_eq(rs_watch_above(f.w, top, access_names()), 0);
    ck_assert_int_eq(rs_watch_count(f.w), 2);

    /* Moved away and made again: the old one reports its move. */
    ck_assert_int_eq(rename(mid, ut_path(top, "mid-away")), 0);
    ut_mkdir(mid);
    wait_read(&f);
    ck_assert_int_eq(rs_watch_take_above(f.w, rs_time_mono()), 1);
    ck_assert_int_eq(rs_watch_above(f.w, mid, access_names()), 0);
    ck_assert_int_eq(rs_watch_count(f.w), 2);
    /* The old one no longer reports, the new one does. */
    ut_write_str(ut_path(ut_path(top, "mid-away"), ".htaccess"), "x");
    ut_write_str(ut_path(mid, ".htaccess"), "x");
    wait_read(&f);
    ck_assert_int_eq(rs_watch_take_above(f.w, rs_time_mono()), 1);

    /* Deleted: its watch goes (IN_IGNORED), which is work too. */
    ck_assert_int_eq(ut_rmtree(mid), 0);
    wait_read(&f);
    ck_assert_int_eq(rs_watch_take_above(f.w, rs_time_mono()), 1);
    ck_assert_int_eq(rs_watch_count(f.w), 1);
    ck_assert_int_eq(rs_watch_above(f.w, mid, access_names()), ENOENT);
    ck_assert_int_eq(rs_watch_count(f.w), 1);
}
END_TEST

Suite *watch_suite(void)
{
    Suite *s = suite_create("rs_watch");
    TCase *tc = ut_tcase("watch", 60);
    tcase_add_test(tc, tree_and_close_write);
    tcase_add_test(tc, one_entry_per_name);
    tcase_add_test(tc, settling_links);
    tcase_add_test(tc, settling_taken_by_close);
    tcase_add_test(tc, settling_writer_kept_open);
    tcase_add_test(tc, settling_two_due_times);
    tcase_add_test(tc, created_directory);
    tcase_add_test(tc, delete_and_rename);
    tcase_add_test(tc, directory_moved_within);
    tcase_add_test(tc, forget_moved_out);
    tcase_add_test(tc, root_attributes);
    tcase_add_test(tc, root_moved);
    tcase_add_test(tc, root_deleted);
    tcase_add_test(tc, queue_overflow);
    tcase_add_test(tc, max_watches);
    tcase_add_test(tc, mono_follows_clock_monotonic);
    tcase_add_test(tc, settling_due_on_monotonic_clock);
    tcase_add_test(tc, above_access_files);
    tcase_add_test(tc, above_directory_replaced);
    suite_add_tcase(s, tc);
    return s;
}
