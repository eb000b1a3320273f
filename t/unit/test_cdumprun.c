/* SPDX-License-Identifier: Apache-2.0 */
/* test_cdumprun.c - rs_cdumprun: a Change Dump job prepared, run and
 * finished on a real temporary state directory, SQLite journal and
 * captures: the packages of closed lists built and changedump.xml
 * written, a list whose captures are gone skipped (said once), a version
 * the access callback denies written as a deletion, a job with nothing
 * to do keeping changedump.xml, a full disk said once, a replaced store. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_capture.h"
#include "rs_cdumprun.h"
#include "rs_hash.h"
#include "rs_history.h"
#include "rs_journal.h"
#include "rs_schema.h"
#include "rs_statedir.h"
#include "rs_time.h"

#define SEC(n) apr_time_from_sec(n)

typedef struct fx_t {
    rs_db_t *db;
    rs_journal_t *j;
    rs_cdumprun_in_t in;
    rs_cdumpsched_t sched;
    ut_log_t log;
    apr_int64_t open_id; /* the newest list closed + 1 */
} fx_t;

static void fx_init(fx_t *f)
{
    const char *base = ut_tempdir("cdumprun");

    memset(f, 0, sizeof(*f));
    ck_assert_int_eq(
        rs_schema_open(&f->db, ut_pool, RS_STATEDIR_DB_DRIVER, rs_statedir_db(ut_pool, base), NULL),
        APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(f->db, RS_HISTORY_META, "h-1"), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_open(&f->j, f->db, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_begin_set(f->j, "s", apr_time_now()), APR_SUCCESS);
    ut_log_init(&f->log);
    f->in.set = "s";
    f->in.dir = rs_statedir_cdumpset(ut_pool, base, "s");
    f->in.capture_dir = ut_path(base, "capture");
    f->in.history = "0123abcd";
    f->in.root_url = "http://example.org/files/";
    f->in.capability_url = "http://example.org/rs/s/capabilitylist.xml";
    f->in.doc_base = "http://example.org/rs/s/";
    f->in.hashes = RS_HASH_MD5 | RS_HASH_SHA256;
    f->in.root = ut_path(base, "root");
    ut_mkdir(f->in.root);
}

/* Journal the creation of name with content, its bytes captured unless
 * !capture, and the file written below the root. */
static void created(fx_t *f, const char *name, const char *content, int capture)
{
    rs_record_t r;
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];

    rs_hash_buf(content, strlen(content), f->in.hashes, hex);
    memset(&r, 0, sizeof(r));
    r.dir = "";
    r.name = name;
    r.change = RS_CHANGE_CREATED;
    r.lastmod_ns = 1600000000LL * 1000000000;
    r.size = (apr_int64_t)strlen(content);
    r.type = "text/plain";
    r.hash[0] = hex[0];
    r.hash[2] = hex[2];
    ck_assert_int_eq(rs_journal_append(f->j, "s", &r), APR_SUCCESS);
    ut_write_str(ut_path(f->in.root, name), content);
    if (capture) {
        rs_capture_tmp_t t;
        ck_assert_int_eq(rs_capture_open(&t, f->in.capture_dir), 0);
        ck_assert_int_eq(write(t.fd, content, strlen(content)), (ssize_t)strlen(content));
        ck_assert_int_eq(rs_capture_keep(&t, hex[2], r.lastmod_ns), 0);
    }
}

static apr_int64_t close_list(fx_t *f)
{
    rs_changelist_t cl;
    ck_assert_int_eq(rs_journal_close(f->j, ut_pool, "s", -1, 0, apr_time_now(), &cl), APR_SUCCESS);
    f->open_id = cl.id + 1;
    return cl.id;
}

/* One job from prepare to finish at now, as the watcher runs it. */
static rs_cdumprun_end_t job(fx_t *f, rs_cdumprun_t *c, apr_status_t fail, apr_time_t now)
{
    apr_status_t rv;

    rs_cdumprun_prepare(c, &f->in, "h-1", &f->sched, now, f->open_id, SEC(60), ut_pool);
    rv = fail ? fail : rs_cdumprun_run(c, f->db, ut_pool);
    return rs_cdumprun_finish(c, rv, &f->sched, &f->log.logger, ut_pool, now);
}

static int done(fx_t *f, apr_int64_t id)
{
    rs_cdump_opts_t o;
    rs_cdumprun_opts(&o, &f->in, ut_pool);
    return rs_cdump_done(&o, id, ut_pool);
}

static const char *pkg(fx_t *f, apr_int64_t id)
{
    return rs_statedir_cdump_file(ut_pool, f->in.dir, f->in.history, id, 0);
}

START_TEST(builds_closed_lists)
{
    fx_t f;
    rs_cdumprun_t c;
    apr_int64_t l1, l2;
    const char *xml;

    fx_init(&f);
    created(&f, "a.txt", "alpha", 1);
    l1 = close_list(&f);
    created(&f, "b.txt", "bravo", 1);
    l2 = close_list(&f);
    created(&f, "c.txt", "charlie", 1); /* in the open list: no package */
    ck_assert_int_eq(job(&f, &c, 0, SEC(100)), RS_CDUMPRUN_WRITTEN);
    ck_assert(c.first);
    ck_assert_int_eq(c.built, 2);
    ck_assert_int_eq(c.skipped, 0);
    ck_assert(c.gc_took > 0); /* the first job collects */
    ck_assert(ut_exists(pkg(&f, l1)));
    ck_assert(ut_exists(pkg(&f, l2)));
    ck_assert(!ut_exists(pkg(&f, f.open_id)));
    xml = ut_read(pkg(&f, 0), NULL);
    ck_assert_ptr_nonnull(strstr(xml, "http://example.org/rs/s/changedump/0123abcd-"));
    ck_assert_int_gt(c.pkg_bytes, 0);
    ck_assert_int_gt(c.cap_bytes, 0);
    ck_assert(f.sched.written);
    ck_assert_int_eq(ut_log_count(&f.log, "6: set s: published 2 Change Dump package(s)"), 1);
    ck_assert_int_eq(ut_log_count(&f.log, "written as deletions"), 0);

    /* Nothing new: changedump.xml is kept. */
    ck_assert_int_eq(job(&f, &c, 0, SEC(200)), RS_CDUMPRUN_KEPT);
    ck_assert(!c.first);
    ck_assert_int_eq(c.built, 0);
    ck_assert_int_eq(ut_log_count(&f.log, "published"), 1);
}
END_TEST

START_TEST(skips_gone_captures)
{
    char from[RS_TIME_BUFSIZE];
    fx_t f;
    rs_cdumprun_t c;
    apr_int64_t l1, l2;

    fx_init(&f);
    created(&f, "a.txt", "alpha", 0);                   /* its bytes were never captured */
    ut_write_str(ut_path(f.in.root, "a.txt"), "other"); /* and the file has others now */
    l1 = close_list(&f);
    created(&f, "b.txt", "bravo", 1);
    l2 = close_list(&f);
    ck_assert_int_eq(job(&f, &c, 0, SEC(100)), RS_CDUMPRUN_WRITTEN);
    ck_assert_int_eq(c.skipped, 1);
    ck_assert_int_eq(c.built, 1);
    ck_assert_int_eq(c.recaptured, 0);
    ck_assert(done(&f, l1)); /* given up: not tried again */
    ck_assert(!ut_exists(pkg(&f, l1)));
    ck_assert(ut_exists(pkg(&f, l2)));
    /* The coverage starts after the list without a package. */
    ck_assert_int_eq(c.ix.gap, l1);
    ck_assert_int_eq(c.ix.packages, 1);
    ck_assert_int_eq(f.log.nwarn, 1);
    ck_assert_int_eq(
        ut_log_count(&f.log, apr_psprintf(ut_pool,
                                          "set s: no Change Dump package for 1 Change List(s), "
                                          "first %" APR_INT64_T_FMT ": the captured bytes of ",
                                          l1)),
        1);
    ck_assert_int_eq(ut_log_count(&f.log, apr_psprintf(ut_pool,
                                                       " are gone; the Change Dump now covers "
                                                       "only the changes from %s on, after "
                                                       "Change List %" APR_INT64_T_FMT,
                                                       rs_time_format(from, c.ix.from), l1)),
                     1);
    ck_assert_int_eq(ut_log_count(&f.log, "published 1 Change Dump package(s)"), 1);

    /* Said once: the next job neither retries nor repeats it. */
    ck_assert_int_eq(job(&f, &c, 0, SEC(200)), RS_CDUMPRUN_KEPT);
    ck_assert_int_eq(f.log.nwarn, 1);
}
END_TEST

/* A lost capture whose file still has the version's bytes is captured
 * again: the list gets its package, no hole. */
START_TEST(takes_lost_captures_again)
{
    fx_t f;
    rs_cdumprun_t c;
    apr_int64_t l1;

    fx_init(&f);
    created(&f, "a.txt", "alpha", 0); /* its capture was lost, the file is unchanged */
    l1 = close_list(&f);
    ck_assert_int_eq(job(&f, &c, 0, SEC(100)), RS_CDUMPRUN_WRITTEN);
    ck_assert_int_eq(c.skipped, 0);
    ck_assert_int_eq(c.built, 1);
    ck_assert_int_eq(c.recaptured, 1);
    ck_assert(ut_exists(pkg(&f, l1)));
    ck_assert_int_eq(c.ix.gap, 0);
    ck_assert_int_eq(f.log.nwarn, 0);
    ck_assert_int_eq(ut_log_count(&f.log, "set s: 1 lost Change Dump capture(s) taken again"), 1);
}
END_TEST

/* rs_cdumprun_announce_fn: "<change> <loc> <index>" lines. */
static void announced(void *baton, apr_pool_t *p, const char *loc, const char *change,
                      const char *index)
{
    APR_ARRAY_PUSH((apr_array_header_t *)baton, const char *) =
        apr_psprintf(ut_pool, "%s %s %s", change, loc, index ? index : "-");
}

static const char *announce_all(const rs_cdumprun_t *c, int first)
{
    apr_array_header_t *a = apr_array_make(ut_pool, 4, sizeof(const char *));
    rs_cdumprun_announce(c, first, announced, a, ut_pool);
    return apr_array_pstrcat(ut_pool, a, '|');
}

/* Framework notifications (Table 2): changedump.xml itself while it is a
 * Change Dump; under a Change Dump Index each new part (created) and each
 * part that got a package (updated), with rel="index", never the index. */
START_TEST(announces_parts_under_an_index)
{
    fx_t f;
    rs_cdumprun_t c;
    const char *cd = "http://example.org/rs/s/changedump.xml",
               *part = "http://example.org/rs/s/changedump/0123abcd-part-";

    fx_init(&f);
    f.in.list_max = 2;
    created(&f, "a.txt", "alpha", 1);
    close_list(&f);
    ck_assert_int_eq(job(&f, &c, 0, SEC(100)), RS_CDUMPRUN_WRITTEN);
    ck_assert_int_eq(c.ix.parts, 0);
    ck_assert_str_eq(announce_all(&c, 1), apr_pstrcat(ut_pool, "created ", cd, " -", NULL));
    ck_assert_str_eq(announce_all(&c, 0), apr_pstrcat(ut_pool, "updated ", cd, " -", NULL));

    created(&f, "b.txt", "bravo", 1);
    close_list(&f);
    created(&f, "c.txt", "charlie", 1);
    close_list(&f);
    ck_assert_int_eq(job(&f, &c, 0, SEC(200)), RS_CDUMPRUN_WRITTEN);
    ck_assert_int_eq(c.ix.parts, 2);
    ck_assert_str_eq(
        announce_all(&c, 0),
        apr_psprintf(ut_pool, "created %s1.xml %s|created %s2.xml %s", part, cd, part, cd));

    created(&f, "d.txt", "delta", 1);
    close_list(&f);
    ck_assert_int_eq(job(&f, &c, 0, SEC(300)), RS_CDUMPRUN_WRITTEN);
    ck_assert_int_eq(c.ix.parts, 2);
    ck_assert_str_eq(announce_all(&c, 0), apr_psprintf(ut_pool, "updated %s2.xml %s", part, cd));
}
END_TEST

START_TEST(denied_as_deletion)
{
    fx_t f;
    rs_cdumprun_t c;

    fx_init(&f);
    created(&f, "a.txt", "alpha", 1);
    created(&f, "secret.txt", "bravo", 1);
    close_list(&f);
    f.in.check = ut_check_deny;
    f.in.check_baton = "secret";
    ck_assert_int_eq(job(&f, &c, 0, SEC(100)), RS_CDUMPRUN_WRITTEN);
    ck_assert_int_eq(c.withheld, 1);
    ck_assert_int_eq(ut_log_count(&f.log, "set s: published 1 Change Dump package(s); versions of "
                                          "paths no longer listed, written as deletions without "
                                          "bytes: 1"),
                     1);
}
END_TEST

START_TEST(failures)
{
    fx_t f;
    rs_cdumprun_t c;

    fx_init(&f);
    created(&f, "a.txt", "alpha", 1);
    close_list(&f);
    /* No space: said once per episode, the job runs again soon. */
    ck_assert_int_eq(job(&f, &c, APR_FROM_OS_ERROR(ENOSPC), SEC(100)), RS_CDUMPRUN_FAILED);
    ck_assert_int_eq(job(&f, &c, APR_FROM_OS_ERROR(ENOSPC), SEC(101)), RS_CDUMPRUN_FAILED);
    ck_assert_int_eq(f.log.nwarn, 1);
    ck_assert_int_eq(ut_log_count(&f.log, "7: set s: no space left to build its Change Dump in "),
                     1);
    ck_assert(!f.sched.written);
    ck_assert_int_eq(job(&f, &c, 0, SEC(102)), RS_CDUMPRUN_WRITTEN);
    ck_assert_int_eq(ut_log_count(&f.log, "set s: space again for the Change Dump"), 1);
    /* A store replaced since the job was prepared: nothing is done. */
    created(&f, "b.txt", "bravo", 1);
    close_list(&f);
    ck_assert_int_eq(rs_db_meta_put(f.db, RS_HISTORY_META, "h-2"), APR_SUCCESS);
    ck_assert_int_eq(job(&f, &c, 0, SEC(200)), RS_CDUMPRUN_FAILED);
    ck_assert_int_eq(c.built, 0);
    ck_assert_int_eq(ut_log_count(&f.log, "3: set s: cannot build its Change Dump; trying again "
                                          "when the next Change List closes"),
                     1);
}
END_TEST

Suite *cdumprun_suite(void)
{
    Suite *s = suite_create("cdumprun");
    TCase *tc = ut_tcase("core", 30);

    tcase_add_test(tc, builds_closed_lists);
    tcase_add_test(tc, skips_gone_captures);
    tcase_add_test(tc, takes_lost_captures_again);
    tcase_add_test(tc, announces_parts_under_an_index);
    tcase_add_test(tc, denied_as_deletion);
    tcase_add_test(tc, failures);
    suite_add_tcase(s, tc);
    return s;
}
