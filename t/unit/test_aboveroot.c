/* SPDX-License-Identifier: Apache-2.0 */
/* test_aboveroot.c - rs_aboveroot: the access files above a set's root on
 * a temporary tree, with a real inotify instance (rs_watch) and a real
 * SQLite store holding the state of the last full scan. */
#include <errno.h>
#include <unistd.h>
#include <string.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_aboveroot.h"
#include "rs_schema.h"

typedef struct fx_t {
    char *base, *up, *root;
    apr_array_header_t *dirs, *names;
    rs_db_t *st;
    rs_watch_t *w;
    ut_log_t ul;
    rs_aboveroot_hooks_t h;
    rs_aboveroot_t ab;
    rs_aboveroot_t next; /* the next watcher's */
    int forgets, failed, failed_err;
    const char *failed_dir;
} fx_t;

static void h_watch_failed(void *baton, const char *dir, int err)
{
    fx_t *f = baton;
    f->failed++;
    f->failed_dir = dir;
    f->failed_err = err;
}

static void h_forget(void *baton)
{
    ((fx_t *)baton)->forgets++;
}

/* <base>/up/root, following <base> and <base>/up; max_watches for the
 * set's inotify instance (0: no cap). */
static void fx_init(fx_t *f, long max_watches)
{
    f->base = ut_tempdir("above");
    f->up = ut_path(f->base, "up");
    f->root = ut_path(f->up, "root");
    ut_mkdir(f->up);
    ut_mkdir(f->root);
    f->dirs = apr_array_make(ut_pool, 2, sizeof(const char *));
    APR_ARRAY_PUSH(f->dirs, const char *) = f->base;
    APR_ARRAY_PUSH(f->dirs, const char *) = f->up;
    f->names = apr_array_make(ut_pool, 1, sizeof(const char *));
    APR_ARRAY_PUSH(f->names, const char *) = ".htaccess";
    ck_assert_int_eq(rs_schema_open(&f->st, ut_pool, "sqlite3", ut_path(f->base, "state.db"), NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_watch_create(&f->w, ut_pool, f->root, max_watches), 0);
    f->h.watch_failed = h_watch_failed;
    f->h.forget = h_forget;
    f->h.baton = f;
    ut_log_init(&f->ul);
}

static void ab_init(fx_t *f, rs_aboveroot_t *ab, int complete)
{
    rs_aboveroot_init(ab, ut_pool, &f->h, "s", f->root, f->dirs, complete, f->names, 60,
                      &f->ul.logger, f->st, ut_pool);
}

/* Never stored: the first full scan decides every file (said at no
 * level: nothing changed that was known), its success stores the state,
 * which the next watcher reads. */
START_TEST(first_scan_stores_state)
{
    fx_t *f = apr_pcalloc(ut_pool, sizeof(*f));

    fx_init(f, 0);
    ab_init(f, &f->ab, 1);
    ck_assert_int_eq(ut_log_count(&f->ul, apr_psprintf(ut_pool,
                                                       "6: set s: access files above its root "
                                                       "followed in 2 directories: %s %s",
                                                       f->base, f->up)),
                     1);
    ck_assert_ptr_null(f->ab.state);
    ck_assert_int_eq(rs_watch_count(f->w), 0);
    ck_assert_int_eq(rs_aboveroot_begin(&f->ab, f->w, ut_pool), 1);
    ck_assert_int_eq(rs_watch_count(f->w), 2); /* both directories watched */
    ck_assert_int_eq(f->forgets, 1);
    ck_assert_int_eq(ut_log_count(&f->ul, "changed; deciding every file"), 0);
    ck_assert_int_eq(rs_aboveroot_changed(&f->ab, f->w, ut_pool), 1); /* not stored yet */
    rs_aboveroot_end(&f->ab, f->st, ut_pool);
    ck_assert_ptr_nonnull(f->ab.state);
    ck_assert_int_eq(rs_aboveroot_changed(&f->ab, f->w, ut_pool), 0);
    /* The next watcher. */
    ab_init(f, &f->next, 1);
    ck_assert_ptr_nonnull(f->next.state);
    ck_assert_int_eq(rs_aboveroot_begin(&f->next, NULL, ut_pool), 0);
    ck_assert_int_eq(f->forgets, 1);
    ck_assert_int_eq(f->failed, 0);
}
END_TEST

/* An access file above the root appears: found by changed, said by the
 * next begin (naming it); a scan that does not succeed stores nothing,
 * so the next one decides everything again. */
START_TEST(change_found_until_stored)
{
    fx_t *f = apr_pcalloc(ut_pool, sizeof(*f));
    const char *ht;

    fx_init(f, 0);
    ab_init(f, &f->ab, 1);
    rs_aboveroot_begin(&f->ab, f->w, ut_pool);
    rs_aboveroot_end(&f->ab, f->st, ut_pool);
    ht = ut_path(f->up, ".htaccess");
    ut_write_str(ht, "Require all denied\n");
    ck_assert_int_eq(rs_aboveroot_changed(&f->ab, f->w, ut_pool), 1);
    ck_assert_int_eq(rs_aboveroot_begin(&f->ab, f->w, ut_pool), 1);
    ck_assert_int_eq(ut_log_count(&f->ul, apr_psprintf(ut_pool,
                                                       "5: set s: access file %s above its root "
                                                       "changed; deciding every file of the set "
                                                       "again",
                                                       ht)),
                     1);
    ck_assert_int_eq(f->forgets, 2);
    /* That scan failed: no end. */
    ck_assert_int_eq(rs_aboveroot_changed(&f->ab, f->w, ut_pool), 1);
    ck_assert_int_eq(rs_aboveroot_begin(&f->ab, f->w, ut_pool), 1);
    ck_assert_int_eq(f->forgets, 3);
    rs_aboveroot_end(&f->ab, f->st, ut_pool);
    ck_assert_int_eq(rs_aboveroot_changed(&f->ab, f->w, ut_pool), 0);
    /* Stored: a new watcher does not decide again. */
    ab_init(f, &f->next, 1);
    ck_assert_int_eq(rs_aboveroot_begin(&f->next, NULL, ut_pool), 0);
    /* Gone again. */
    ck_assert_int_eq(unlink(ht), 0);
    ck_assert_int_eq(rs_aboveroot_changed(&f->next, NULL, ut_pool), 1);
}
END_TEST

/* httpd's walk does not reach the root (logged); out of watches, the
 * set is degraded through the hook, naming the directory. */
START_TEST(incomplete_walk_and_no_watches)
{
    fx_t *f = apr_pcalloc(ut_pool, sizeof(*f));

    fx_init(f, 1);
    ab_init(f, &f->ab, 0);
    ck_assert_int_eq(ut_log_count(&f->ul, apr_psprintf(ut_pool,
                                                       "6: set s: httpd's directory walk does not "
                                                       "reach its root %s; following the access "
                                                       "files of every directory above it",
                                                       f->root)),
                     1);
    ck_assert_int_eq(rs_aboveroot_begin(&f->ab, f->w, ut_pool), 1);
    ck_assert_int_eq(f->failed, 1);
    ck_assert_str_eq(f->failed_dir, f->up);
    ck_assert_int_eq(f->failed_err, ENOSPC);
    ck_assert_int_eq(f->ul.nwarn, 0); /* the hook says it */
}
END_TEST

Suite *aboveroot_suite(void)
{
    Suite *s = suite_create("rs_aboveroot");
    TCase *tc = ut_tcase("aboveroot", 30);

    tcase_add_test(tc, first_scan_stores_state);
    tcase_add_test(tc, change_found_until_stored);
    tcase_add_test(tc, incomplete_walk_and_no_watches);
    suite_add_tcase(s, tc);
    return s;
}
