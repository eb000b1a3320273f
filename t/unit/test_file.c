/* SPDX-License-Identifier: Apache-2.0 */
/* test_file.c - rs_file (file-system primitives) and rs_statedir (layout). */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_file.h"
#include "rs_statedir.h"
#include "rs_history.h"

static apr_status_t write_hello(void *baton, apr_file_t *f, apr_pool_t *p)
{
    (void)p;
    return apr_file_write_full(f, baton, strlen(baton), NULL);
}

static apr_status_t write_fail(void *baton, apr_file_t *f, apr_pool_t *p)
{
    (void)p;
    apr_file_write_full(f, "partial", 7, NULL);
    return *(apr_status_t *)baton;
}

START_TEST(replace_new_and_existing)
{
    char *dir = ut_tempdir("replace");
    char *path = ut_path(dir, "doc.xml");
    size_t len;

    ck_assert_int_eq(rs_file_replace(ut_pool, path, write_hello, "one"), APR_SUCCESS);
    ck_assert_str_eq(ut_read(path, &len), "one");
    ck_assert_int_eq(rs_file_replace(ut_pool, path, write_hello, "second"), APR_SUCCESS);
    ck_assert_str_eq(ut_read(path, &len), "second");
    /* No temporary file is left beside it. */
    ck_assert(!ut_exists(ut_path(dir, ".tmp-doc.xml")));
}
END_TEST

START_TEST(replace_failure_keeps_old)
{
    char *dir = ut_tempdir("replace-fail");
    char *path = ut_path(dir, "doc.xml");
    apr_status_t cause = APR_ENOSPC;
    size_t len;

    ut_write_str(path, "old");
    /* The writer's error comes back unchanged, the old bytes stay. */
    ck_assert_int_eq(rs_file_replace(ut_pool, path, write_fail, &cause), APR_ENOSPC);
    ck_assert_str_eq(ut_read(path, &len), "old");
    ck_assert(!ut_exists(ut_path(dir, ".tmp-doc.xml")));
    /* A directory that does not exist: the cause is ENOENT. */
    ck_assert(APR_STATUS_IS_ENOENT(
        rs_file_replace(ut_pool, ut_path(dir, "no/doc.xml"), write_hello, "x")));
}
END_TEST

/* A file finished later: its bytes are there once it is closed, and a
 * write that fails at the flush (the device is full) is the error. */
START_TEST(finish_later)
{
    char *dir = ut_tempdir("finish-later");
    char *path = ut_path(dir, "part-1.xml");
    apr_file_t *f;
    size_t len;

    ck_assert_int_eq(rs_file_create(&f, path, 1 << 16, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(apr_file_write_full(f, "<urlset/>", 9, NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_file_finish_later(f), APR_SUCCESS);
    ck_assert_str_eq(ut_read(path, &len), "<urlset/>");
    ck_assert_int_eq(rs_file_sync_path(path), APR_SUCCESS);
    if (access("/dev/full", W_OK) == 0) {
        ck_assert_int_eq(apr_file_open(&f, "/dev/full", APR_FOPEN_WRITE | APR_FOPEN_BUFFERED,
                                       APR_FPROT_OS_DEFAULT, ut_pool),
                         APR_SUCCESS);
        ck_assert_int_eq(apr_file_write_full(f, "x", 1, NULL), APR_SUCCESS); /* buffered */
        ck_assert_int_eq(rs_file_finish_later(f), APR_FROM_OS_ERROR(ENOSPC));
    }
}
END_TEST

START_TEST(remove_tree_nested)
{
    char *dir = ut_tempdir("rmtree");
    char *top = ut_path(dir, "top");
    char *outside = ut_path(dir, "outside");

    ut_mkdir(top);
    ut_mkdir(ut_path(top, "a"));
    ut_mkdir(ut_path(top, "a/b"));
    ut_write_str(ut_path(top, "f"), "x");
    ut_write_str(ut_path(top, "a/b/g"), "y");
    ut_mkdir(outside);
    ut_write_str(ut_path(outside, "keep"), "z");
    /* A symbolic link is removed, its target is not touched. */
    ck_assert_int_eq(symlink(outside, ut_path(top, "a/link")), 0);
    ck_assert_int_eq(rs_file_remove_tree(ut_pool, top), APR_SUCCESS);
    ck_assert(!ut_exists(top));
    ck_assert(ut_exists(ut_path(outside, "keep")));
    /* Already gone: success. */
    ck_assert_int_eq(rs_file_remove_tree(ut_pool, top), APR_SUCCESS);
}
END_TEST

START_TEST(sync_dir_and_touch)
{
    char *dir = ut_tempdir("sync");
    char *marker = ut_path(dir, "superseded");
    struct stat sb;

    ck_assert_int_eq(rs_file_sync_dir(dir), APR_SUCCESS);
    ck_assert(APR_STATUS_IS_ENOENT(rs_file_sync_dir(ut_path(dir, "missing"))));
    ck_assert(!rs_file_exists(ut_pool, marker));
    ck_assert_int_eq(rs_file_touch(ut_pool, marker), APR_SUCCESS);
    ck_assert(rs_file_exists(ut_pool, marker));
    ck_assert_int_eq(stat(marker, &sb), 0);
    ck_assert_int_eq((int)sb.st_size, 0);
}
END_TEST

START_TEST(statedir_layout)
{
    const char *snapset = rs_statedir_snapset(ut_pool, "/var/rs", "data");
    const char *gen = rs_statedir_gen(ut_pool, snapset, 12);
    const char *clset = rs_statedir_clset(ut_pool, "/var/rs", "data");

    ck_assert_str_eq(rs_statedir_db(ut_pool, "/var/rs"), "/var/rs/state.db");
    ck_assert_str_eq(rs_statedir_snapshots(ut_pool, "/var/rs"), "/var/rs/snapshots");
    ck_assert_str_eq(snapset, "/var/rs/snapshots/data");
    ck_assert_str_eq(gen, "/var/rs/snapshots/data/12");
    ck_assert_str_eq(rs_statedir_gen_tmp(ut_pool, snapset, 12), "/var/rs/snapshots/data/tmp-12");
    ck_assert(rs_statedir_is_gen_tmp("tmp-12"));
    ck_assert(!rs_statedir_is_gen_tmp("12"));
    ck_assert_str_eq(rs_statedir_gen_file(ut_pool, gen, 0),
                     "/var/rs/snapshots/data/12/resourcelist.xml");
    ck_assert_str_eq(rs_statedir_gen_file(ut_pool, gen, 3), "/var/rs/snapshots/data/12/part-3.xml");
    ck_assert_str_eq(rs_statedir_gen_info(ut_pool, gen), "/var/rs/snapshots/data/12/info");
    ck_assert_str_eq(rs_statedir_gen_superseded(ut_pool, gen),
                     "/var/rs/snapshots/data/12/superseded");
    ck_assert_str_eq(clset, "/var/rs/changelists/data");
    ck_assert_str_eq(rs_statedir_cl_index(ut_pool, clset), "/var/rs/changelists/data/index.xml");
    ck_assert_str_eq(rs_statedir_cl_list(ut_pool, clset, "0a1b2c3d", 7),
                     "/var/rs/changelists/data/0a1b2c3d-7.xml");
    ck_assert_str_eq(rs_statedir_history(ut_pool, "/var/rs"), "/var/rs/history");
    ck_assert_str_eq(rs_statedir_changelists(ut_pool, "/var/rs"), "/var/rs/changelists");
    {
        char h[RS_HISTORY_LEN + 1] = "";
        apr_int64_t id = 0;
        ck_assert(rs_statedir_is_cl_list("0a1b2c3d-7.xml", h, &id));
        ck_assert_str_eq(h, "0a1b2c3d");
        ck_assert(id == 7);
        ck_assert(!rs_statedir_is_cl_list("7.xml", h, &id)); /* before histories */
        ck_assert(!rs_statedir_is_cl_list("0a1b2c3d-7.xml.tmp", h, &id));
        ck_assert(!rs_statedir_is_cl_list(".tmp-0a1b2c3d-7.xml", h, &id));
        ck_assert(!rs_statedir_is_cl_list("index.xml", h, &id));
    }
    ck_assert(rs_statedir_is_cl_legacy("open-3.xml"));
    ck_assert(!rs_statedir_is_cl_legacy("3.xml"));
}
END_TEST

/* The history file: written atomically, read back; a malformed or missing
 * one is told apart. */
START_TEST(history_file)
{
    const char *path = ut_path(ut_tempdir("hist"), "history");
    char a[RS_HISTORY_LEN + 1], b[RS_HISTORY_LEN + 1], got[RS_HISTORY_LEN + 1];

    ck_assert_int_eq(rs_history_read(ut_pool, path, got), APR_ENOENT);
    ck_assert_int_eq(rs_history_new(a), APR_SUCCESS);
    ck_assert_int_eq(rs_history_new(b), APR_SUCCESS);
    ck_assert(rs_parse_history_id(a) && rs_parse_history_id(b));
    ck_assert_str_ne(a, b);
    ck_assert_int_eq(rs_history_write(ut_pool, path, a), APR_SUCCESS);
    ck_assert_int_eq(rs_history_read(ut_pool, path, got), APR_SUCCESS);
    ck_assert_str_eq(got, a);
    ck_assert_int_eq(rs_history_write(ut_pool, path, b), APR_SUCCESS);
    ck_assert_int_eq(rs_history_read(ut_pool, path, got), APR_SUCCESS);
    ck_assert_str_eq(got, b);
    ut_write_str(path, "0a1b2c3dx\n");
    ck_assert_int_eq(rs_history_read(ut_pool, path, got), APR_EINVAL);
    ck_assert_str_eq(got, b);
}
END_TEST

/* A symbolic link at the top, or swapped in for a directory below, is
 * removed, never entered. */
START_TEST(remove_tree_symlink_top)
{
    char *dir = ut_tempdir("rmtree-link");
    char *outside = ut_path(dir, "outside");
    char *link = ut_path(dir, "link");

    ut_mkdir(outside);
    ut_write_str(ut_path(outside, "keep"), "z");
    ck_assert_int_eq(symlink(outside, link), 0);
    ck_assert_int_eq(rs_file_remove_tree(ut_pool, link), APR_SUCCESS);
    ck_assert(!ut_exists(link));
    ck_assert(ut_exists(ut_path(outside, "keep")));
    /* A missing parent: nothing to remove. */
    ck_assert_int_eq(rs_file_remove_tree(ut_pool, ut_path(dir, "no/such")), APR_SUCCESS);
}
END_TEST

/* The safe reader: a regular file of this user within the bound; a
 * symbolic link, a FIFO (without waiting for a writer), a directory, a
 * file past the bound and (as root) a file of another user are refused
 * with their causes. */
START_TEST(read_small_refusals)
{
    char *dir = ut_tempdir("readsmall");
    char *f = ut_path(dir, "f"), *fifo = ut_path(dir, "fifo"), *link = ut_path(dir, "link");
    char *buf;
    apr_size_t n;

    ut_write_str(f, "0123456789");
    ck_assert_int_eq(rs_file_read_small(ut_pool, f, 10, &buf, &n), APR_SUCCESS);
    ck_assert_uint_eq(n, 10);
    ck_assert_str_eq(buf, "0123456789");
    ck_assert_int_eq(rs_file_read_small(ut_pool, f, 9, &buf, &n), APR_FROM_OS_ERROR(EFBIG));
    ut_write_str(f, "");
    ck_assert_int_eq(rs_file_read_small(ut_pool, f, 9, &buf, &n), APR_SUCCESS);
    ck_assert_uint_eq(n, 0);
    ck_assert_str_eq(buf, "");
    ck_assert(APR_STATUS_IS_ENOENT(rs_file_read_small(ut_pool, ut_path(dir, "none"), 9, &buf, &n)));
    ck_assert_int_eq(symlink(f, link), 0);
    ck_assert_int_eq(rs_file_read_small(ut_pool, link, 9, &buf, &n), APR_FROM_OS_ERROR(ELOOP));
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(rs_file_read_small(ut_pool, fifo, 9, &buf, &n), APR_EFTYPE);
    ck_assert_int_eq(rs_file_read_small(ut_pool, dir, 9, &buf, &n), APR_EFTYPE);
    if (geteuid() == 0) {
        ut_write_str(f, "x");
        ck_assert_int_eq(chown(f, 65534, 65534), 0);
        ck_assert_int_eq(rs_file_read_small(ut_pool, f, 9, &buf, &n), APR_FROM_OS_ERROR(EPERM));
    }
}
END_TEST

static mode_t mode_of(const char *path)
{
    struct stat sb;
    ck_assert_int_eq(lstat(path, &sb), 0);
    return sb.st_mode & 07777;
}

/* Every directory 0700, every regular file 0600, whatever they were;
 * symbolic links (and what they point to), FIFOs and (as root) entries of
 * other users are left as they are. */
START_TEST(restrict_tree_modes)
{
    char *dir = ut_tempdir("restrict");
    char *top = ut_path(dir, "state"), *outside = ut_path(dir, "outside");
    rs_file_restrict_t r;

    ut_mkdir(top);
    ut_mkdir(ut_path(top, "a"));
    ut_mkdir(ut_path(top, "a/b"));
    ut_mkdir(outside);
    ut_write_str(ut_path(top, "state.db"), "x");
    ut_write_str(ut_path(top, "a/b/part.xml"), "y");
    ut_write_str(ut_path(top, "a/ok"), "z");
    ut_write_str(ut_path(outside, "target"), "t");
    ck_assert_int_eq(chmod(top, 0755), 0);
    ck_assert_int_eq(chmod(ut_path(top, "a"), 02750), 0);
    ck_assert_int_eq(chmod(ut_path(top, "a/b"), 0), 0); /* not even readable */
    ck_assert_int_eq(chmod(ut_path(top, "state.db"), 0644), 0);
    ck_assert_int_eq(chmod(ut_path(top, "a/ok"), 0600), 0);
    ck_assert_int_eq(chmod(outside, 0755), 0);
    ck_assert_int_eq(chmod(ut_path(outside, "target"), 0644), 0);
    ck_assert_int_eq(symlink(outside, ut_path(top, "dirlink")), 0);
    ck_assert_int_eq(symlink(ut_path(outside, "target"), ut_path(top, "a/filelink")), 0);
    ck_assert_int_eq(mkfifo(ut_path(top, "history"), 0644), 0);
    if (geteuid() == 0) {
        ut_write_str(ut_path(top, "theirs"), "o");
        ck_assert_int_eq(chmod(ut_path(top, "theirs"), 0644), 0);
        ck_assert_int_eq(chown(ut_path(top, "theirs"), 65534, 65534), 0);
    }
    ck_assert_int_eq(chmod(ut_path(top, "a/b/part.xml"), 0640), 0);
    /* One level: the top and its own entries (a/ itself, not what is in
     * it). */
    ck_assert_int_eq(rs_file_restrict_tree(ut_pool, top, 1, &r), APR_SUCCESS);
    ck_assert_int_eq(mode_of(top), 0700);
    ck_assert_int_eq(mode_of(ut_path(top, "a")), 0700);
    ck_assert_int_eq(mode_of(ut_path(top, "state.db")), 0600);
    ck_assert_int_eq(mode_of(ut_path(top, "a/b")), 0);
    ck_assert_int_eq((int)r.changed, 3);
    ck_assert_int_eq(chmod(top, 0755), 0);
    ck_assert_int_eq(chmod(ut_path(top, "a"), 02750), 0);
    ck_assert_int_eq(chmod(ut_path(top, "state.db"), 0644), 0);
    /* Everything; part.xml is below a directory without permissions:
     * reached once that one has its mode. */
    ck_assert_int_eq(rs_file_restrict_tree(ut_pool, top, RS_FILE_ALL_LEVELS, &r), APR_SUCCESS);
    ck_assert_int_eq(mode_of(top), 0700);
    ck_assert_int_eq(mode_of(ut_path(top, "a")), 0700);
    ck_assert_int_eq(mode_of(ut_path(top, "a/b")), 0700);
    ck_assert_int_eq(mode_of(ut_path(top, "state.db")), 0600);
    ck_assert_int_eq(mode_of(ut_path(top, "a/ok")), 0600);
    ck_assert_int_eq(mode_of(ut_path(top, "a/b/part.xml")), 0600);
    ck_assert_int_eq(mode_of(ut_path(top, "history")), 0644);
    ck_assert_int_eq(mode_of(outside), 0755);
    ck_assert_int_eq(mode_of(ut_path(outside, "target")), 0644);
    ck_assert_int_eq((int)r.changed, 5);
    ck_assert_int_eq((int)r.other, 3);
    if (geteuid() == 0) {
        ck_assert_int_eq(mode_of(ut_path(top, "theirs")), 0644);
        ck_assert_int_eq((int)r.foreign, 1);
    }
    /* Again: nothing left to change. */
    ck_assert_int_eq(rs_file_restrict_tree(ut_pool, top, RS_FILE_ALL_LEVELS, &r), APR_SUCCESS);
    ck_assert_int_eq((int)r.changed, 0);
    /* The top itself a symbolic link: refused, its target untouched. */
    {
        apr_status_t rv =
            rs_file_restrict_tree(ut_pool, ut_path(top, "dirlink"), RS_FILE_ALL_LEVELS, &r);
        /* Linux says ENOTDIR for O_DIRECTORY | O_NOFOLLOW on a link. */
        ck_assert(rv == APR_FROM_OS_ERROR(ENOTDIR) || rv == APR_FROM_OS_ERROR(ELOOP));
    }
    ck_assert_int_eq(mode_of(outside), 0755);
}
END_TEST

Suite *file_suite(void)
{
    Suite *s = suite_create("rs_file");
    TCase *tc = ut_tcase("file", 10);
    tcase_add_test(tc, replace_new_and_existing);
    tcase_add_test(tc, replace_failure_keeps_old);
    tcase_add_test(tc, finish_later);
    tcase_add_test(tc, remove_tree_nested);
    tcase_add_test(tc, sync_dir_and_touch);
    tcase_add_test(tc, statedir_layout);
    tcase_add_test(tc, history_file);
    tcase_add_test(tc, remove_tree_symlink_top);
    tcase_add_test(tc, read_small_refusals);
    tcase_add_test(tc, restrict_tree_modes);
    suite_add_tcase(s, tc);
    return s;
}
