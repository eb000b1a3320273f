/* SPDX-License-Identifier: Apache-2.0 */
/* test_dumprun.c - rs_dumprun: a Resource Dump job prepared, run and
 * finished on a real temporary state directory, SQLite store and files:
 * published (generation directory, packages, store key, hooks, line), a
 * file changed during packaging dropping the build, a file the access
 * callback denies left out, a full disk said once, a replaced store. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_dumprun.h"
#include "rs_hash.h"
#include "rs_history.h"
#include "rs_inventory.h"
#include "rs_schema.h"
#include "rs_statedir.h"
#include "rs_zip.h"

typedef struct fx_t {
    const char *root, *dumps;
    rs_db_t *db;
    rs_dumprun_in_t in;
    rs_dumpsched_t sched;
    rs_dumprun_hooks_t hooks;
    ut_log_t log, plain;
    apr_uint64_t gen;      /* published(): its last gen */
    apr_status_t recorded; /* and its record's outcome */
    apr_time_t wall;       /* the real time given to finish (pruning) */
    int published, announced;
    const char *loc, *index; /* announce(): its last arguments */
} fx_t;

static void hk_published(void *baton, apr_uint64_t gen, apr_status_t recorded)
{
    fx_t *f = baton;
    f->published++;
    f->gen = gen;
    f->recorded = recorded;
}

static void hk_announce(void *baton, apr_pool_t *p, const char *loc, const char *index)
{
    fx_t *f = baton;
    (void)p;
    ck_assert_int_eq(f->published, f->announced + 1); /* after the status entry */
    f->announced++;
    f->loc = apr_pstrdup(ut_pool, loc);
    f->index = index ? apr_pstrdup(ut_pool, index) : NULL;
}

static void fx_init(fx_t *f)
{
    const char *base = ut_tempdir("dumprun");

    memset(f, 0, sizeof(*f));
    f->root = ut_path(base, "root");
    f->dumps = ut_path(base, "dumps");
    ut_mkdir(f->root);
    ut_mkdir(f->dumps);
    ck_assert_int_eq(
        rs_schema_open(&f->db, ut_pool, RS_STATEDIR_DB_DRIVER, rs_statedir_db(ut_pool, base), NULL),
        APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(f->db, RS_HISTORY_META, "h-1"), APR_SUCCESS);
    ut_log_init(&f->log);
    ut_log_init(&f->plain);
    f->in.set = "s";
    f->in.root = f->root;
    f->in.root_url = "http://example.org/files/";
    f->in.capability_url = "http://example.org/rs/s/capabilitylist.xml";
    f->in.doc_base = "http://example.org/rs/s/";
    f->in.dir = f->dumps;
    f->in.hashes = RS_HASH_MD5;
    f->in.max_entries = 1;
    f->in.max_bytes = (apr_int64_t)1 << 30;
    f->in.list_max = 100;
    f->in.grace = apr_time_from_sec(60);
    f->in.store_history = "h-1";
    f->in.url_history = "0123abcd";
    f->in.at = 1700000000LL * APR_USEC_PER_SEC;
    f->in.completed = f->in.at + APR_USEC_PER_SEC;
    f->hooks.published = hk_published;
    f->hooks.announce = hk_announce;
    f->hooks.baton = f;
    f->wall = apr_time_now();
}

/* A file and its inventory row (size_delta != 0: the row describes
 * another version than the file holds). */
static void add(fx_t *f, const char *name, const char *data, int size_delta)
{
    const char *path = ut_path(f->root, name);

    ut_write_str(path, data);
    ut_inventory_row(f->db, "s", "", name, path, data, size_delta, 1);
}

/* One job from prepare to finish, as the watcher runs it. */
static rs_dumprun_end_t job(fx_t *f, rs_dumprun_t *j)
{
    apr_status_t rv = rs_dumprun_prepare(j, &f->in, f->db, ut_pool);

    if (rv == APR_SUCCESS) {
        rv = rs_dumprun_run(j, f->db, ut_pool);
    }
    return rs_dumprun_finish(j, rv, &f->sched, apr_time_from_sec(10), &f->hooks, &f->log.logger,
                             &f->plain.logger, ut_pool, apr_time_from_sec(100), f->wall);
}

/* The number of packages (.zip) in generation gen's directory. */
static int packages(fx_t *f, apr_uint64_t gen)
{
    const char *dir = ut_path(f->dumps, apr_psprintf(ut_pool, "%" APR_UINT64_T_FMT, gen));
    apr_dir_t *d;
    apr_finfo_t fi;
    int n = 0;

    ck_assert_int_eq(apr_dir_open(&d, dir, ut_pool), APR_SUCCESS);
    while (apr_dir_read(&fi, APR_FINFO_NAME, d) == APR_SUCCESS) {
        size_t len = strlen(fi.name);
        n += len > 4 && !strcmp(fi.name + len - 4, ".zip");
    }
    apr_dir_close(d);
    return n;
}

START_TEST(published)
{
    fx_t f;
    rs_dumprun_t j;
    const char *g = NULL;

    fx_init(&f);
    add(&f, "a.txt", "alpha", 0);
    add(&f, "b.txt", "bravo", 0);
    ck_assert_int_eq(job(&f, &j), RS_DUMPRUN_PUBLISHED);
    ck_assert_int_eq(f.published, 1);
    ck_assert_int_eq(f.announced, 1);
    ck_assert_str_eq(f.loc, "http://example.org/rs/s/resourcedump.xml"); /* no index */
    ck_assert_ptr_null(f.index);
    ck_assert_uint_eq(f.gen, 1);
    ck_assert_int_eq(packages(&f, 1), 2); /* one file per package */
    ck_assert(ut_exists(rs_statedir_dump_file(ut_pool, ut_path(f.dumps, "1"))));
    ck_assert(!ut_exists(j.g.tmp));
    ck_assert_str_eq(ut_read(rs_statedir_dump_history(ut_pool, ut_path(f.dumps, "1")), NULL),
                     "0123abcd\n");
    ck_assert_str_eq(j.o.pkg_url_prefix, "http://example.org/rs/s/resourcedump/0123abcd-");
    ck_assert_int_eq(rs_db_meta_get(f.db, ut_pool, "dump-gen:s", &g), APR_SUCCESS);
    ck_assert_str_eq(g, "1");
    ck_assert_int_eq(ut_log_count(&f.log, "set s: published Resource Dump 1 (2 files, 2 "
                                          "packages of which 0 unchanged"),
                     1);
    /* The next build waits as long as this one took (started at 0,
     * published at 100 s), at most the interval (10 s): rs_dumpsched. */
    ck_assert_int_eq(f.sched.next, apr_time_from_sec(110));
    /* The next generation: numbered after the stored one, the old kept
     * for its grace. */
    f.in.current = 1;
    ck_assert_int_eq(job(&f, &j), RS_DUMPRUN_PUBLISHED);
    ck_assert_uint_eq(f.gen, 2);
    ck_assert_int_eq(packages(&f, 2), 2);
    ck_assert(ut_exists(ut_path(f.dumps, "1")));
    ck_assert_int_eq(ut_log_count(&f.log, "2 packages of which 2 unchanged"), 1);
    /* Past the grace of generation 1: it goes when 3 is published. */
    f.in.current = 2;
    f.wall += 2 * f.in.grace;
    ck_assert_int_eq(job(&f, &j), RS_DUMPRUN_PUBLISHED);
    ck_assert_uint_eq(f.gen, 3);
    ck_assert(!ut_exists(ut_path(f.dumps, "1")));
    ck_assert(ut_exists(ut_path(f.dumps, "2")));
    ck_assert(ut_exists(ut_path(f.dumps, "3")));
}
END_TEST

/* A dump whose packages do not fit in one document is a Resource Dump
 * Index: announced by the first part of the generation, with the index. */
START_TEST(index_announced_by_first_part)
{
    fx_t f;
    rs_dumprun_t j;
    const char *part;

    fx_init(&f);
    f.in.list_max = 1;
    add(&f, "a.txt", "alpha", 0);
    add(&f, "b.txt", "bravo", 0);
    ck_assert_int_eq(job(&f, &j), RS_DUMPRUN_PUBLISHED);
    ck_assert_int_eq(j.info.parts, 2);
    ck_assert_int_eq(f.announced, 1);
    ck_assert_str_eq(f.loc, "http://example.org/rs/s/resourcedump/0123abcd-1-1.xml");
    ck_assert_str_eq(f.index, "http://example.org/rs/s/resourcedump.xml");
    /* The announced part is the index's first, and names the index. */
    part = ut_read(rs_statedir_gen_file(ut_pool, ut_path(f.dumps, "1"), 1), NULL);
    ck_assert_ptr_nonnull(strstr(part, "<rs:ln rel=\"index\" "
                                       "href=\"http://example.org/rs/s/resourcedump.xml\"/>"));
    ck_assert_ptr_nonnull(
        strstr(ut_read(rs_statedir_dump_file(ut_pool, ut_path(f.dumps, "1")), NULL),
               "<loc>http://example.org/rs/s/resourcedump/0123abcd-1-1.xml</loc>"));
    /* The next generation's parts are new: its first is announced. */
    f.in.current = 1;
    ck_assert_int_eq(job(&f, &j), RS_DUMPRUN_PUBLISHED);
    ck_assert_int_eq(f.announced, 2);
    ck_assert_str_eq(f.loc, "http://example.org/rs/s/resourcedump/0123abcd-2-1.xml");
    ck_assert_str_eq(f.index, "http://example.org/rs/s/resourcedump.xml");
}
END_TEST

START_TEST(changed_drops)
{
    fx_t f;
    rs_dumprun_t j;

    fx_init(&f);
    add(&f, "a.txt", "alpha", 0);
    add(&f, "b.txt", "bravo", 3); /* the file is not the version listed */
    f.sched.next = apr_time_from_sec(500);
    ck_assert_int_eq(job(&f, &j), RS_DUMPRUN_FAILED);
    ck_assert_int_eq(f.published, 0);
    ck_assert(!ut_exists(j.g.tmp));
    ck_assert(!ut_exists(ut_path(f.dumps, "1")));
    ck_assert_int_eq(ut_log_count(&f.log, "set s: cannot build Resource Dump 1: "), 1);
    ck_assert_int_eq(ut_log_count(&f.log, "trying again after the next snapshot"), 1);
    ck_assert_int_eq(f.log.nerr, 0); /* RS_ZIP_ECHANGED: debug level */
    ck_assert_int_eq(ut_log_count(&f.log, "7: "), 1);
    ck_assert_int_eq(f.sched.next, 0); /* the next snapshot tries again */
}
END_TEST

START_TEST(denied_left_out)
{
    fx_t f;
    rs_dumprun_t j;

    fx_init(&f);
    add(&f, "a.txt", "alpha", 0);
    add(&f, "secret.txt", "bravo", 0);
    f.in.check = ut_check_deny;
    f.in.check_baton = "secret";
    ck_assert_int_eq(job(&f, &j), RS_DUMPRUN_PUBLISHED);
    ck_assert_int_eq(j.info.withheld, 1);
    ck_assert_int_eq(packages(&f, 1), 1);
    ck_assert_int_eq(ut_log_count(&f.log, "(1 files, 1 packages of which 0 unchanged"), 1);
    ck_assert_int_eq(ut_log_count(&f.log, "; files denied since the last scan left out: 1)"), 1);
}
END_TEST

START_TEST(nospace_once)
{
    fx_t f;
    rs_dumprun_t j;

    fx_init(&f);
    add(&f, "a.txt", "alpha", 0);
    ck_assert_int_eq(rs_dumprun_prepare(&j, &f.in, f.db, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_dumprun_finish(&j, APR_FROM_OS_ERROR(ENOSPC), &f.sched,
                                       apr_time_from_sec(10), &f.hooks, &f.log.logger,
                                       &f.plain.logger, ut_pool, apr_time_from_sec(100), 0),
                     RS_DUMPRUN_NOSPACE);
    ck_assert(!ut_exists(j.g.tmp));
    ck_assert_int_eq(f.plain.nwarn, 1);
    ck_assert_int_eq(ut_log_count(&f.plain, apr_psprintf(ut_pool,
                                                         "set s: no space left to build the "
                                                         "Resource Dump in %s; the previous",
                                                         f.dumps)),
                     1);
    ck_assert_int_eq(f.sched.next, apr_time_from_sec(110));
    ck_assert_int_eq(job(&f, &j), RS_DUMPRUN_PUBLISHED);
    ck_assert_int_eq(ut_log_count(&f.log, "set s: space again for the Resource Dump"), 1);
    /* A second episode is said again. */
    ck_assert_int_eq(rs_dumprun_prepare(&j, &f.in, f.db, ut_pool), APR_SUCCESS);
    rs_dumprun_finish(&j, APR_FROM_OS_ERROR(ENOSPC), &f.sched, apr_time_from_sec(10), &f.hooks,
                      &f.log.logger, &f.plain.logger, ut_pool, apr_time_from_sec(200), 0);
    ck_assert_int_eq(f.plain.nwarn, 2);
}
END_TEST

START_TEST(other_store)
{
    fx_t f;
    rs_dumprun_t j;

    fx_init(&f);
    add(&f, "a.txt", "alpha", 0);
    f.in.store_history = "h-0"; /* the store was replaced since */
    ck_assert_int_eq(job(&f, &j), RS_DUMPRUN_FAILED);
    ck_assert_int_eq(f.published, 0);
    ck_assert(!ut_exists(ut_path(f.dumps, "1")));
    ck_assert_int_eq(f.log.nerr, 1);
}
END_TEST

Suite *dumprun_suite(void)
{
    Suite *s = suite_create("dumprun");
    TCase *tc = ut_tcase("core", 30);

    tcase_add_test(tc, published);
    tcase_add_test(tc, index_announced_by_first_part);
    tcase_add_test(tc, changed_drops);
    tcase_add_test(tc, denied_left_out);
    tcase_add_test(tc, nospace_once);
    tcase_add_test(tc, other_store);
    suite_add_tcase(s, tc);
    return s;
}
