/* SPDX-License-Identifier: Apache-2.0 */
/* test_massdel.c - rs_massdel: whether a set can be listed (its root, its
 * device, its URL-path), the mass-deletion limit, held deletions and the
 * confirming scan's timing, mount table changes; on a temporary tree and
 * a real SQLite store. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_massdel.h"
#include "rs_scan.h"
#include "rs_schema.h"

#define SEC(s) apr_time_from_sec(s)

/* The caller's side: what was published, what verify_root answers. */
typedef struct fx_t {
    rs_massdel_hooks_t h;
    rs_massdel_t md;
    ut_log_t ul; /* hooks.log: the once-only log */
    ut_log_t ue; /* hooks.episodes */
    rs_db_t *st;
    const char *base, *dbpath, *root;
    const char *url_why; /* verify_root's answer */
    int asked;           /* verify_root calls */
    int published;       /* publish calls */
    int pub_unavailable;
    char pub_why[RS_MASSDEL_WHY_MAX];
    apr_int64_t pub_held;
} fx_t;

static const char *verify_root(void *baton, apr_pool_t *p)
{
    fx_t *f = baton;
    f->asked++;
    return f->url_why ? apr_pstrdup(p, f->url_why) : NULL;
}

static void publish(void *baton, const rs_massdel_t *md)
{
    fx_t *f = baton;
    f->published++;
    f->pub_unavailable = md->unavailable;
    apr_cpystrn(f->pub_why, md->why, sizeof(f->pub_why));
    f->pub_held = md->held;
}

/* A set "s" rooted at <base>/root (made), share 10 %, at least 50. */
static void fx_init(fx_t *f)
{
    memset(f, 0, sizeof(*f));
    f->base = ut_tempdir("massdel");
    f->root = ut_path(f->base, "root");
    f->dbpath = ut_path(f->base, "state.db");
    ut_mkdir(f->root);
    f->h.verify_root = verify_root;
    f->h.publish = publish;
    f->h.baton = f;
    f->h.log = ut_log_init(&f->ul);
    f->h.episodes = ut_log_init(&f->ue);
    ck_assert_int_eq(rs_schema_open(&f->st, ut_pool, "sqlite3", f->dbpath, NULL), APR_SUCCESS);
    rs_massdel_init(&f->md, &f->h, "s", f->root, 10, 50);
}

static const char *msg(const ut_log_t *ul, int i)
{
    ck_assert_int_gt(ul->msgs->nelts, i);
    return APR_ARRAY_IDX(ul->msgs, i, const char *);
}

static apr_uint64_t dev_of(const char *path)
{
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    return (apr_uint64_t)sb.st_dev;
}

static const char *stored_dev(fx_t *f)
{
    const char *v = NULL;
    ck_assert_int_eq(rs_db_meta_get(f->st, ut_pool, "root-dev:s", &v), APR_SUCCESS);
    return v;
}

/* ------------------------------------------------------------ availability */

START_TEST(root_missing_then_back)
{
    fx_t f;
    const char *gone;

    fx_init(&f);
    ut_rmtree(f.root);
    gone = apr_psprintf(ut_pool,
                        "3: set s: root missing: %s: No such file or directory; the "
                        "set is unavailable: its documents answer 503 and nothing is "
                        "recorded until it is back",
                        f.root);
    ck_assert_int_eq(rs_massdel_check(&f.md, f.st, ut_pool), 0);
    ck_assert_int_eq(f.ue.msgs->nelts, 1);
    ck_assert_str_eq(msg(&f.ue, 0), gone);
    ck_assert_int_eq(f.published, 1);
    ck_assert_int_eq(f.pub_unavailable, 1);
    ck_assert_str_eq(f.pub_why, apr_psprintf(ut_pool,
                                             "root missing: %s: No such file or "
                                             "directory",
                                             f.root));
    ck_assert_int_eq(f.asked, 0); /* the URL-path is asked of a root that opens */
    /* The same cause again: nothing new logged or published. */
    ck_assert_int_eq(rs_massdel_check(&f.md, f.st, ut_pool), 0);
    ck_assert_int_eq(f.ue.msgs->nelts, 1);
    ck_assert_int_eq(f.published, 1);
    ck_assert_ptr_null(stored_dev(&f));
    /* Back: the end of the episode, and its device recorded. */
    ut_mkdir(f.root);
    ck_assert_int_eq(rs_massdel_check(&f.md, f.st, ut_pool), 1);
    ck_assert_int_eq(f.ue.msgs->nelts, 2);
    ck_assert_str_eq(msg(&f.ue, 1), "5: set s is available again; reconciling it with a full "
                                    "scan");
    ck_assert_int_eq(f.published, 2);
    ck_assert_int_eq(f.pub_unavailable, 0);
    ck_assert_str_eq(f.pub_why, "");
    ck_assert_int_eq(f.asked, 1);
    ck_assert_str_eq(stored_dev(&f), apr_psprintf(ut_pool, "%" APR_UINT64_T_FMT, dev_of(f.root)));
    /* Available and staying so: nothing logged or published. */
    ck_assert_int_eq(rs_massdel_check(&f.md, f.st, ut_pool), 1);
    ck_assert_int_eq(f.ue.msgs->nelts, 2);
    ck_assert_int_eq(f.published, 2);
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
}
END_TEST

/* A root that is an empty directory on another device than the one it
 * had when last listed (as recorded in the store) is what an unmounted
 * file system leaves behind: unavailable.  A file in it, or the known
 * device, makes it listable. */
START_TEST(empty_root_other_device)
{
    fx_t f;
    apr_uint64_t dev;
    const char *was;

    fx_init(&f);
    dev = dev_of(f.root);
    was = apr_psprintf(ut_pool, "%" APR_UINT64_T_FMT, dev + 1);
    ck_assert_int_eq(rs_db_meta_put(f.st, "root-dev:s", was), APR_SUCCESS);
    rs_massdel_adopt(&f.md, f.st, ut_pool, 0, "", 0);
    ck_assert_int_eq(f.md.root_dev, dev + 1);
    ck_assert_int_eq(f.published, 0);
    ck_assert_int_eq(rs_massdel_check(&f.md, f.st, ut_pool), 0);
    ck_assert_str_eq(f.pub_why, apr_psprintf(ut_pool,
                                             "root %s is an empty directory on "
                                             "another file system (device %" APR_UINT64_T_FMT
                                             ", was %" APR_UINT64_T_FMT "): not mounted?",
                                             f.root, dev, dev + 1));
    ck_assert_int_eq(f.ue.nerr, 1);
    ck_assert_int_eq(f.asked, 0);
    ck_assert_str_eq(stored_dev(&f), was); /* not taken while unavailable */
    /* Not empty: the new device is the root's. */
    ut_write_str(ut_path(f.root, "a"), "x");
    ck_assert_int_eq(rs_massdel_check(&f.md, f.st, ut_pool), 1);
    ck_assert_int_eq(f.md.root_dev, dev);
    ck_assert_str_eq(stored_dev(&f), apr_psprintf(ut_pool, "%" APR_UINT64_T_FMT, dev));
    /* Emptied on its own device: still listable (its files were deleted). */
    unlink(ut_path(f.root, "a"));
    ck_assert_int_eq(rs_massdel_check(&f.md, f.st, ut_pool), 1);
    ck_assert_int_eq(f.ue.nerr, 1);
}
END_TEST

/* The URL-path check (the caller's): its cause, logged once per cause. */
START_TEST(url_path)
{
    fx_t f;

    fx_init(&f);
    f.url_why = "URL-path /s/ maps to /elsewhere";
    ck_assert_int_eq(rs_massdel_check(&f.md, f.st, ut_pool), 0);
    ck_assert_int_eq(f.asked, 1);
    ck_assert_str_eq(f.pub_why, "URL-path /s/ maps to /elsewhere");
    ck_assert_str_eq(msg(&f.ue, 0),
                     "3: set s: URL-path /s/ maps to /elsewhere; the set is "
                     "unavailable: its documents answer 503 and nothing is recorded until "
                     "it is back");
    ck_assert_ptr_null(stored_dev(&f));
    /* Another cause: logged and published again. */
    f.url_why = "URL-path /s/ maps to /other";
    ck_assert_int_eq(rs_massdel_check(&f.md, f.st, ut_pool), 0);
    ck_assert_int_eq(f.ue.nerr, 2);
    ck_assert_int_eq(f.published, 2);
    ck_assert_str_eq(f.pub_why, "URL-path /s/ maps to /other");
    ck_assert_int_eq(rs_massdel_check(&f.md, f.st, ut_pool), 0);
    ck_assert_int_eq(f.ue.nerr, 2);
    /* Without hooks (a caller that has no URL-path): the root decides. */
    rs_massdel_init(&f.md, NULL, "s", f.root, 10, 50);
    ck_assert_int_eq(rs_massdel_check(&f.md, f.st, ut_pool), 1);
}
END_TEST

/* A device that cannot be recorded is warned about through the
 * once-only log; the set is listable all the same. */
START_TEST(device_not_recorded)
{
    fx_t f;
    rs_db_t *ro;
    const char *err = NULL;

    fx_init(&f);
    ck_assert_int_eq(
        rs_schema_open_ex(&ro, ut_pool, "sqlite3", f.dbpath, RS_DB_READONLY, f.h.log, &err),
        APR_SUCCESS);
    ck_assert_int_eq(rs_massdel_check(&f.md, ro, ut_pool), 1);
    ck_assert_int_eq(f.ul.nwarn, 1);
    ck_assert_int_eq(ut_log_count(&f.ul, "4: set s: cannot record the device of its root"), 1);
    ck_assert_int_eq(f.md.root_dev, dev_of(f.root));
    /* Known now: not tried again. */
    ck_assert_int_eq(rs_massdel_check(&f.md, ro, ut_pool), 1);
    ck_assert_int_eq(f.ul.nwarn, 1);
    ck_assert_int_eq(f.ue.msgs->nelts, 0);
}
END_TEST

/* What a previous watcher left: unavailable stands until the first
 * check; held deletions are dropped (and published); no device known. */
START_TEST(adopt)
{
    fx_t f;

    fx_init(&f);
    rs_massdel_adopt(&f.md, f.st, ut_pool, 1, "root missing: x", 0);
    ck_assert_int_eq(f.md.root_dev, 0); /* none recorded */
    ck_assert_int_eq(f.md.unavailable, 1);
    ck_assert_str_eq(f.md.why, "root missing: x");
    ck_assert_int_eq(f.published, 0);
    rs_massdel_adopt(&f.md, f.st, ut_pool, 1, "root missing: x", 700);
    ck_assert_int_eq(f.published, 1);
    ck_assert_int_eq(f.pub_held, 0);
    ck_assert_int_eq(f.pub_unavailable, 1);
    ck_assert_str_eq(f.pub_why, "root missing: x");
    /* The first check ends the episode: the root is there (empty, but
     * no device was known to compare with). */
    ck_assert_int_eq(rs_massdel_check(&f.md, f.st, ut_pool), 1);
    ck_assert_int_eq(f.md.root_dev, dev_of(f.root));
    ck_assert_int_eq(ut_log_count(&f.ue, "5: set s is available again"), 1);
    ck_assert_int_eq(f.pub_unavailable, 0);
}
END_TEST

/* ------------------------------------------------------------ the limit */

START_TEST(limit)
{
    fx_t f;

    fx_init(&f);
    ck_assert_int_eq(rs_massdel_limit(&f.md, 1000), 100); /* 10 % */
    ck_assert_int_eq(f.md.listed, 1000);
    ck_assert_int_eq(rs_massdel_limit(&f.md, 499), 50); /* at least min */
    ck_assert_int_eq(rs_massdel_limit(&f.md, 0), 50);
    ck_assert_int_eq(rs_massdel_limit(&f.md, 509), 50);
    ck_assert_int_eq(rs_massdel_limit(&f.md, 519), 51);
    ck_assert_int_eq(f.md.listed, 519);
    f.md.confirming = 1; /* the confirming scan */
    ck_assert_int_eq(rs_massdel_limit(&f.md, 1000), 0);
    ck_assert_int_eq(f.md.listed, 519);
    rs_massdel_init(&f.md, &f.h, "s", f.root, 0, 50); /* off */
    ck_assert_int_eq(rs_massdel_limit(&f.md, 1000), 0);
}
END_TEST

/* ------------------------------------------------------------ held deletions */

#define HOLD_WARN                                                                        \
    "4: set s: 300 of its 1000 listed files are gone (more than "                        \
    "ResourceSyncMassDeletion 10% and 50 files); nothing is deleted unless a full scan " \
    "in 5 s finds them gone too"

/* A held scan: one warning, the confirming scan 5 s later; a second
 * held batch meanwhile only updates the count. */
START_TEST(hold)
{
    fx_t f;
    apr_time_t t0 = SEC(1000);

    fx_init(&f);
    rs_massdel_limit(&f.md, 1000);
    ck_assert_int_eq(rs_massdel_scanned(&f.md, APR_SUCCESS, 20, t0), 0);
    ck_assert_int_eq(rs_massdel_waiting(&f.md), 0);
    ck_assert_int_eq(rs_massdel_next(&f.md), 0);
    ck_assert_int_eq(f.published, 0);
    ck_assert_int_eq(rs_massdel_scanned(&f.md, APR_EGENERAL, 20, t0), 0);
    ck_assert_int_eq(rs_massdel_waiting(&f.md), 0);

    ck_assert_int_eq(rs_massdel_scanned(&f.md, RS_SCAN_EMASSDEL, 300, t0), 1);
    ck_assert_int_eq(f.ue.msgs->nelts, 1);
    ck_assert_str_eq(msg(&f.ue, 0), HOLD_WARN);
    ck_assert_int_eq(f.published, 1);
    ck_assert_int_eq(f.pub_held, 300);
    ck_assert_int_eq(rs_massdel_waiting(&f.md), 1);
    ck_assert_int_eq(rs_massdel_next(&f.md), t0 + RS_MASSDEL_CONFIRM);
    ck_assert_int_eq(RS_MASSDEL_CONFIRM, SEC(5));
    ck_assert_int_eq(rs_massdel_due(&f.md, t0 + RS_MASSDEL_CONFIRM - 1), 0);
    ck_assert_int_eq(rs_massdel_due(&f.md, t0 + RS_MASSDEL_CONFIRM), 1);

    ck_assert_int_eq(rs_massdel_scanned(&f.md, RS_SCAN_EMASSDEL, 400, t0 + SEC(2)), 1);
    ck_assert_int_eq(f.ue.msgs->nelts, 1);
    ck_assert_int_eq(f.published, 2);
    ck_assert_int_eq(f.pub_held, 400);
    ck_assert_int_eq(rs_massdel_next(&f.md), t0 + RS_MASSDEL_CONFIRM);
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
}
END_TEST

/* The confirming scan: runs without the limit; what it finds ends the
 * hold, either way. */
START_TEST(confirm)
{
    fx_t f;
    apr_time_t t0 = SEC(1000), due = t0 + RS_MASSDEL_CONFIRM;
    int deleted;

    for (deleted = 0; deleted <= 120; deleted += 120) {
        fx_init(&f);
        rs_massdel_limit(&f.md, 1000);
        rs_massdel_scanned(&f.md, RS_SCAN_EMASSDEL, 300, t0);
        /* Before its time (a mount table change): not the confirming one. */
        f.md.remount = 1;
        ck_assert_int_eq(rs_massdel_due(&f.md, t0 + SEC(1)), 1);
        rs_massdel_recheck_begin(&f.md, t0 + SEC(1));
        ck_assert_int_eq(f.md.confirming, 0);
        ck_assert_int_eq(f.md.remount, 0);
        ck_assert_int_eq(rs_massdel_limit(&f.md, 1000), 100);
        ck_assert_int_eq(rs_massdel_scanned(&f.md, RS_SCAN_EMASSDEL, 300, t0 + SEC(2)), 1);
        rs_massdel_recheck_end(&f.md, t0 + SEC(2));
        ck_assert_int_eq(rs_massdel_next(&f.md), due);
        ck_assert_int_eq(rs_massdel_due(&f.md, t0 + SEC(2)), 0);
        /* At its time. */
        rs_massdel_recheck_begin(&f.md, due);
        ck_assert_int_eq(f.md.confirming, 1);
        ck_assert_int_eq(rs_massdel_limit(&f.md, 1000), 0);
        ck_assert_int_eq(rs_massdel_scanned(&f.md, APR_SUCCESS, deleted, due + SEC(1)), 0);
        rs_massdel_recheck_end(&f.md, due + SEC(1));
        ck_assert_int_eq(f.md.confirming, 0);
        ck_assert_int_eq(rs_massdel_waiting(&f.md), 0);
        ck_assert_int_eq(f.pub_held, 0);
        ck_assert_int_eq(f.ue.msgs->nelts, 2);
        ck_assert_str_eq(msg(&f.ue, 1),
                         deleted ? "5: set s: the confirming scan found 120 of the 300 files gone; "
                                   "their deletions are recorded"
                                 : "5: set s: the confirming scan found 0 of the 300 files gone; "
                                   "nothing is deleted");
        ck_assert_int_eq(rs_massdel_limit(&f.md, 1000), 100); /* guarded again */
    }
}
END_TEST

/* A confirming scan that failed, or did not run: the deletions stay
 * held, and it is tried again 5 s after then. */
START_TEST(confirm_again)
{
    fx_t f;
    apr_time_t t0 = SEC(1000), due = t0 + RS_MASSDEL_CONFIRM;

    fx_init(&f);
    rs_massdel_limit(&f.md, 1000);
    rs_massdel_scanned(&f.md, RS_SCAN_EMASSDEL, 300, t0);
    /* Failed (the driver logs why). */
    rs_massdel_recheck_begin(&f.md, due + SEC(1));
    ck_assert_int_eq(rs_massdel_scanned(&f.md, EIO, 0, due + SEC(3)), 0);
    rs_massdel_recheck_end(&f.md, due + SEC(3));
    ck_assert_int_eq(rs_massdel_next(&f.md), due + SEC(3) + RS_MASSDEL_CONFIRM);
    ck_assert_int_eq(f.pub_held, 300);
    ck_assert_int_eq(f.ue.msgs->nelts, 1);
    /* Did not run at all: the deadline passed is moved on. */
    rs_massdel_recheck_begin(&f.md, due + SEC(9));
    ck_assert_int_eq(f.md.confirming, 1);
    rs_massdel_recheck_end(&f.md, due + SEC(10));
    ck_assert_int_eq(f.md.confirming, 0);
    ck_assert_int_eq(rs_massdel_next(&f.md), due + SEC(10) + RS_MASSDEL_CONFIRM);
    ck_assert_int_eq(f.pub_held, 300);
    ck_assert_int_eq(f.ue.msgs->nelts, 1);
    /* ... and when it ends at its very deadline. */
    due = rs_massdel_next(&f.md);
    rs_massdel_recheck_begin(&f.md, due);
    rs_massdel_recheck_end(&f.md, due);
    ck_assert_int_eq(rs_massdel_next(&f.md), due + RS_MASSDEL_CONFIRM);
}
END_TEST

/* A set that cannot be listed forgets its hold: the scan that ends the
 * episode is guarded again. */
START_TEST(unlisted)
{
    fx_t f;

    fx_init(&f);
    rs_massdel_limit(&f.md, 1000);
    rs_massdel_scanned(&f.md, RS_SCAN_EMASSDEL, 300, SEC(1000));
    rs_massdel_unlisted(&f.md);
    ck_assert_int_eq(rs_massdel_waiting(&f.md), 0);
    ck_assert_int_eq(rs_massdel_due(&f.md, SEC(2000)), 0);
    ck_assert_int_eq(f.published, 2);
    ck_assert_int_eq(f.pub_held, 0);
    /* A new hold warns again. */
    rs_massdel_scanned(&f.md, RS_SCAN_EMASSDEL, 300, SEC(3000));
    ck_assert_int_eq(ut_log_count(&f.ue, HOLD_WARN), 2);
    ck_assert_int_eq(rs_massdel_next(&f.md), SEC(3000) + RS_MASSDEL_CONFIRM);
}
END_TEST

/* ------------------------------------------------------------ mounts */

START_TEST(mounts)
{
    fx_t f;
    rs_mounts_t *m = NULL;
    apr_array_header_t *mps;
    const char *tab;
    ut_log_t ul;

    fx_init(&f);
    tab = ut_path(f.base, "mountinfo");
    ut_log_init(&ul);
    /* No table: a warning, and none to follow. */
    ck_assert_int_eq(rs_massdel_mounts_open(&m, ut_pool, tab, &ul.logger), ENOENT);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(ut_log_count(&ul, apr_psprintf(ut_pool,
                                                    "4: watcher: cannot follow the "
                                                    "mount table (%s); mounts and unmounts "
                                                    "inside sets are found by the next full "
                                                    "scan",
                                                    tab)),
                     1);
    ut_write_str(tab, "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n");
    ck_assert_int_eq(rs_massdel_mounts_open(&m, ut_pool, tab, &ul.logger), APR_SUCCESS);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(ul.msgs->nelts, 1);
    /* Mounted beside the set: not its business. */
    ut_write_str(tab, "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
                      "31 22 0:40 / /elsewhere rw - tmpfs tmpfs rw\n");
    mps = rs_massdel_mounts_read(m, ut_pool, &ul.logger);
    ck_assert_ptr_nonnull(mps);
    ck_assert_int_eq(mps->nelts, 1);
    ck_assert_int_eq(rs_massdel_mounts_changed(&f.md, mps), 0);
    ck_assert_int_eq(rs_massdel_due(&f.md, SEC(1)), 0);
    /* Mounted in the set's root, and above it. */
    ut_write_str(tab, apr_psprintf(ut_pool,
                                   "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
                                   "32 22 0:41 / %s/sub rw - tmpfs tmpfs rw\n"
                                   "33 22 0:42 / %s rw - tmpfs tmpfs rw\n",
                                   f.root, f.base));
    mps = rs_massdel_mounts_read(m, ut_pool, &ul.logger);
    ck_assert_int_eq(mps->nelts, 3);
    ck_assert_int_eq(rs_massdel_mounts_changed(&f.md, mps), 1);
    ck_assert_int_eq(rs_massdel_due(&f.md, SEC(1)), 1);
    ck_assert_int_eq(f.ul.msgs->nelts, 1); /* one line for the set */
    ck_assert_int_eq(ut_log_count(&f.ul, "was mounted or unmounted; reconciling the set with "
                                         "a full scan"),
                     1);
    ck_assert_int_eq(ut_log_count(&f.ul, "5: set s: /"), 1);
    /* Marked already: not logged again. */
    ck_assert_int_eq(rs_massdel_mounts_changed(&f.md, mps), 1);
    ck_assert_int_eq(f.ul.msgs->nelts, 1);
    rs_massdel_recheck_begin(&f.md, SEC(1));
    ck_assert_int_eq(rs_massdel_due(&f.md, SEC(1)), 0);
    /* The table cannot be read. */
    unlink(tab);
    ck_assert_ptr_null(rs_massdel_mounts_read(m, ut_pool, &ul.logger));
    ck_assert_int_eq(ut_log_count(&ul, "4: cannot read the mount table; mounts and unmounts "
                                       "inside sets are found by the next full scan"),
                     1);
}
END_TEST

Suite *massdel_suite(void)
{
    Suite *s = suite_create("massdel");
    TCase *tc = ut_tcase("core", 30);

    tcase_add_test(tc, root_missing_then_back);
    tcase_add_test(tc, empty_root_other_device);
    tcase_add_test(tc, url_path);
    tcase_add_test(tc, device_not_recorded);
    tcase_add_test(tc, adopt);
    tcase_add_test(tc, limit);
    tcase_add_test(tc, hold);
    tcase_add_test(tc, confirm);
    tcase_add_test(tc, confirm_again);
    tcase_add_test(tc, unlisted);
    tcase_add_test(tc, mounts);
    suite_add_tcase(s, tc);
    return s;
}
