/* SPDX-License-Identifier: Apache-2.0 */
/* test_reconcile.c - rs_reconcile: a set's full scans and event batches
 * on a temporary tree with a real SQLite store (inventory, journal), a
 * trivial access checker and hooks that record what they were asked;
 * the store made to fail by triggers and dropped tables. */
#include <string.h>
#include <unistd.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_hash.h"
#include "rs_inventory.h"
#include "rs_links.h"
#include "rs_reconcile.h"
#include "rs_schema.h"

#define SET   "s"
#define WALL0 apr_time_from_sec(1700000000) /* the wall clock's first value */
#define MONO0 apr_time_from_sec(5000)       /* the monotonic clock's */

/* The clocks: each reading is one second after the last. */
static apr_time_t wall_now, mono_now;

static apr_time_t wall_clock(void)
{
    return wall_now += apr_time_from_sec(1);
}

static apr_time_t mono_clock(void)
{
    return mono_now += apr_time_from_sec(1);
}

typedef struct fx_t {
    char *root;
    const char *dsn;
    rs_db_t *st;
    rs_journal_t *j;
    ut_log_t ul;    /* the set's log */
    ut_log_t md_ul; /* the guard's */
    rs_massdel_hooks_t mdh;
    rs_massdel_t md;
    rs_storeretry_t retry;
    rs_storeretry_episode_t ep;
    ut_log_t ep_ul;
    rs_storeretry_cb_t ep_cb;
    rs_entry_opts_t eo;
    rs_reconcile_hooks_t h;
    rs_reconcile_t rc;
    /* What the hooks answer. */
    rs_reconcile_extent_t ext;
    int degraded;            /* watch_begin returns it, then clears it */
    int degraded_after;      /* watches says so after the scan */
    int recheck;             /* above_begin's answer */
    apr_status_t resync_rv;  /* resync's answer */
    apr_status_t update_rv;  /* update_lists's answer */
    int close_on_update;     /* update_lists opens the next list */
    int remove_root_in_scan; /* progress_begin removes the root */
    /* What they were asked. */
    int recorders, publishes, updates, above_begins, above_ends, progress_begins, progress_ends;
    int modes, restored, changes, snapshots, resyncs;
    apr_int64_t published;    /* records taken in the last publish */
    apr_array_header_t *recs; /* the last publish's (rs_record_t) */
    int closed_old, closed_new;
    const char *noted, *failed; /* `what` of the last store_note / store_failed */
    apr_status_t noted_rv, failed_rv;
    apr_time_t snap_at, snap_completed, changed_at;
    int snap_force;
    int links;                                 /* the scans get links hooks */
    int link_rows, link_dones, link_baselines; /* their calls */
    int snap_linked;                           /* links:s was "fp" at the last snapshot */
} fx_t;

static const char *no_verify(void *baton, apr_pool_t *p)
{
    (void)baton;
    (void)p;
    return NULL;
}

static void md_publish(void *baton, const rs_massdel_t *md)
{
    (void)baton;
    (void)md;
}

static apr_status_t h_links_row(void *baton, rs_item_t *it, int was_listed)
{
    (void)it;
    (void)was_listed;
    ((fx_t *)baton)->link_rows++;
    return APR_SUCCESS;
}

static apr_status_t h_links_done(void *baton, const char *dir, const char *name, int gone)
{
    (void)dir;
    (void)name;
    (void)gone;
    ((fx_t *)baton)->link_dones++;
    return APR_SUCCESS;
}

/* A collection for the baseline: *.txt describedby *.xml. */
static rs_linkscan_t *h_links_scan(void *baton)
{
    fx_t *f = baton;
    rs_links_t *l = ut_links();
    int ng;
    void *re = ut_regex("^(.*)\\.txt$", &ng);

    ck_assert_ptr_null(
        rs_links_add(l, ut_pool, "describedby", re, ng, "^(.*)\\.txt$", "$1.xml", NULL, 0, 0));
    f->link_baselines++;
    return rs_linkscan_create(l, SET, "http://example.org/s/", "fp", 0);
}

/* The stored links of path ("-": no row). */
static const char *stored_links(fx_t *f, const char *dir, const char *name)
{
    rs_item_t *row = NULL;
    ck_assert_int_eq(rs_inventory_get(f->st, ut_pool, SET, dir, name, &row), APR_SUCCESS);
    return row ? (row->links ? row->links : "") : "-";
}

static void h_scan_opts(void *baton, rs_scan_opts_t *so)
{
    fx_t *f = baton;
    if (f->links) {
        so->links_row = h_links_row;
        so->links_done = h_links_done;
        so->links_baton = f;
    }
    so->set = SET;
    so->root = f->root;
    so->hashes = RS_HASH_MD5;
    so->check = ut_check_deny; /* nothing named "private" is served */
    so->check_baton = (void *)"private";
    so->cfg = "the checks' configuration";
    so->log = &f->ul.logger;
}

static rs_recorder_t *h_recorder(void *baton, apr_pool_t *p, rs_journal_t *j)
{
    fx_t *f = baton;
    f->recorders++;
    return rs_recorder_create(p, j, SET, &f->eo, 64);
}

static void h_publish(void *baton, apr_pool_t *p, rs_recorder_t *r)
{
    fx_t *f = baton;
    f->publishes++;
    f->recs = NULL;
    f->published = r ? rs_recorder_take(r, p, &f->recs) : 0;
    f->ext.count += f->published;
}

static void h_extent(void *baton, rs_reconcile_extent_t *out)
{
    *out = ((fx_t *)baton)->ext;
}

static apr_status_t h_update_lists(void *baton, apr_pool_t *p, rs_journal_t *j)
{
    fx_t *f = baton;
    (void)p;
    (void)j;
    f->updates++;
    if (f->update_rv == APR_SUCCESS && f->close_on_update) {
        f->ext.open_id++;
        f->ext.count = 0;
    }
    return f->update_rv;
}

static void h_lists_closed(void *baton, apr_pool_t *p, apr_int64_t old_id, apr_int64_t new_id)
{
    fx_t *f = baton;
    (void)p;
    f->closed_old = (int)old_id;
    f->closed_new = (int)new_id;
}

static void h_store_note(void *baton, apr_status_t rv, const char *what)
{
    fx_t *f = baton;
    f->noted = what;
    f->noted_rv = rv;
}

static void h_store_failed(void *baton, apr_pool_t *p, apr_status_t rv, const char *what)
{
    fx_t *f = baton;
    (void)p;
    f->failed = what;
    f->failed_rv = rv;
}

static apr_status_t h_resync(void *baton, apr_pool_t *p)
{
    fx_t *f = baton;
    (void)p;
    f->resyncs++;
    f->retry.resync = f->resync_rv != APR_SUCCESS;
    return f->resync_rv;
}

static int h_watch_begin(void *baton)
{
    fx_t *f = baton;
    int was = f->degraded;
    f->degraded = 0;
    return was;
}

static long h_watches(void *baton, int *degraded)
{
    fx_t *f = baton;
    *degraded = f->degraded_after;
    return 7;
}

static void h_watch_restored(void *baton)
{
    ((fx_t *)baton)->restored++;
}

static void h_mode(void *baton)
{
    ((fx_t *)baton)->modes++;
}

static int h_above_begin(void *baton, apr_pool_t *p)
{
    fx_t *f = baton;
    (void)p;
    f->above_begins++;
    return f->recheck;
}

static void h_above_end(void *baton, apr_pool_t *p)
{
    (void)p;
    ((fx_t *)baton)->above_ends++;
}

static void h_progress_begin(void *baton)
{
    fx_t *f = baton;
    f->progress_begins++;
    if (f->remove_root_in_scan) {
        ck_assert_int_eq(ut_rmtree(f->root), 0);
    }
}

static void h_progress_end(void *baton)
{
    ((fx_t *)baton)->progress_ends++;
}

static void h_changed(void *baton, apr_time_t now)
{
    fx_t *f = baton;
    f->changes++;
    f->changed_at = now;
}

static void h_snapshot(void *baton, apr_pool_t *p, apr_time_t at, apr_time_t completed, int force)
{
    fx_t *f = baton;
    const char *fp = NULL;
    (void)p;
    f->snapshots++;
    /* A baseline's links were resolved before: their digest is stored. */
    ck_assert_int_eq(rs_db_meta_get(f->st, ut_pool, "links:" SET, &fp), APR_SUCCESS);
    f->snap_linked = fp && !strcmp(fp, "fp");
    f->snap_at = at;
    f->snap_completed = completed;
    f->snap_force = force;
}

static void reopen(fx_t *f);

/* A set "s" on a fresh tree and store; the guard off unless share. */
static void fx_init(fx_t *f, int share, apr_int64_t min)
{
    char *base = ut_tempdir("reconcile");

    memset(f, 0, sizeof(*f));
    wall_now = WALL0;
    mono_now = MONO0;
    f->root = ut_path(base, "root");
    ut_mkdir(f->root);
    f->dsn = ut_path(base, "state.db");
    reopen(f);
    f->mdh.verify_root = no_verify;
    f->mdh.publish = md_publish;
    f->mdh.baton = f;
    f->mdh.log = f->mdh.episodes = ut_log_init(&f->md_ul);
    rs_massdel_init(&f->md, &f->mdh, SET, f->root, share, min);
    rs_massdel_adopt(&f->md, f->st, ut_pool, 0, "", 0);
    rs_storeretry_init(&f->ep, base, ut_log_init(&f->ep_ul), &f->ep_cb);
    f->eo.url_base = "http://example.org/s/";
    f->eo.hashes = RS_HASH_MD5;
    f->ext.open_id = 1;
    f->ext.ready = 1;
    f->h = (rs_reconcile_hooks_t){ h_scan_opts,    h_recorder,
                                   h_publish,      h_extent,
                                   h_update_lists, h_lists_closed,
                                   h_store_note,   h_store_failed,
                                   h_resync,       h_watch_begin,
                                   h_watches,      h_watch_restored,
                                   h_mode,         h_above_begin,
                                   h_above_end,    h_progress_begin,
                                   h_progress_end, h_changed,
                                   h_snapshot,     mono_clock,
                                   wall_clock,     f };
    rs_reconcile_init(&f->rc, &f->h, SET, NULL, 100, &f->md, &f->retry, &f->ep,
                      ut_log_init(&f->ul));
}

/* A new connection to the store and journal (as a store failure's retry
 * makes): the statements of the old one were prepared for the schema
 * before a trigger was made or dropped. */
static void reopen(fx_t *f)
{
    ck_assert_int_eq(rs_schema_open(&f->st, ut_pool, "sqlite3", f->dsn, NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_open(&f->j, f->st, ut_pool), APR_SUCCESS);
}

static void put(fx_t *f, const char *rel, const char *content)
{
    ut_write_str(ut_path(f->root, rel), content);
}

static void scan(fx_t *f, int first)
{
    rs_reconcile_scan(&f->rc, ut_pool, f->st, f->j, first);
}

static apr_int64_t journal_newest(fx_t *f)
{
    apr_int64_t seq = -1;
    ck_assert_int_eq(rs_journal_newest(f->j, ut_pool, SET, &seq), APR_SUCCESS);
    return seq;
}

/* The change of the record of name in the last publish (0: none): the
 * window has sequences and changes, the journal the paths. */
static int published_change(const fx_t *f, const char *name)
{
    int i;
    for (i = 0; f->recs && i < f->recs->nelts; i++) {
        const rs_record_t *r = &APR_ARRAY_IDX(f->recs, i, rs_record_t);
        apr_array_header_t *out = NULL;
        ck_assert_int_eq(rs_journal_records(f->j, ut_pool, SET, r->seq, r->seq, 1, &out),
                         APR_SUCCESS);
        ck_assert_int_eq(out->nelts, 1);
        if (!strcmp(APR_ARRAY_IDX(out, 0, rs_record_t).name, name)) {
            return r->change;
        }
    }
    return 0;
}

/* A target batch naming one entry of the root. */
static void batch(fx_t *f, const char *name)
{
    apr_array_header_t *names = apr_array_make(ut_pool, 1, sizeof(const char *));
    rs_scan_target_t t;

    APR_ARRAY_PUSH(names, const char *) = name;
    t.dir = "";
    t.names = names;
    rs_reconcile_batch(&f->rc, ut_pool, f->st, f->j, &t, 1);
}

/* The first scan of a set ever: the baseline, not journaled; the journal
 * begins at its start, the report line is a notice, the snapshot is
 * forced, as of that start. */
START_TEST(first_scan_begins_journal)
{
    fx_t f;
    apr_time_t start = 0;

    fx_init(&f, 0, 0);
    put(&f, "a.txt", "a");
    put(&f, "b.txt", "bb");
    put(&f, "private.txt", "p");
    f.degraded = 1; /* the end of a degraded episode is said */
    scan(&f, 1);
    ck_assert_int_eq(f.recorders, 0);
    ck_assert_int_eq(rs_journal_start(f.j, SET, &start), APR_SUCCESS);
    ck_assert_int_eq(start, WALL0 + apr_time_from_sec(1));
    ck_assert_int_eq(journal_newest(&f), 0);
    ck_assert_int_eq(f.publishes, 1);
    ck_assert_int_eq(f.published, 0);
    ck_assert_int_eq(f.updates, 1); /* a full scan updates the lists */
    ck_assert_int_eq(f.above_begins, 1);
    ck_assert_int_eq(f.above_ends, 1);
    ck_assert_int_eq(f.progress_begins, 1);
    ck_assert_int_eq(f.progress_ends, 1);
    ck_assert_int_eq(f.restored, 1);
    ck_assert_int_eq(f.modes, 1);
    ck_assert_int_eq(f.snapshots, 1);
    ck_assert_int_eq(f.snap_force, 1);
    ck_assert_int_eq(f.snap_at, start);
    ck_assert_int_eq(f.snap_completed, WALL0 + apr_time_from_sec(2));
    ck_assert_ptr_null(f.failed);
    ck_assert_ptr_null(f.noted);
    ck_assert_int_eq(ut_log_count(&f.ul, "5: set s: every directory is watched again (7 watches); "
                                         "changes are followed live"),
                     1);
    ck_assert_int_eq(ut_log_count(&f.ul, "5: set s: scanned 3 files in 1 directories (2 listed, "
                                         "3 rows written, 0 removed, 3 bytes hashed) in "),
                     1);
    ck_assert_int_eq(ut_log_count(&f.ul, "directories watched"), 1);
    ck_assert_int_eq(ut_log_count(&f.ul, " s; 7 directories watched"), 1);
}
END_TEST

/* The second scan journals what changed, published after the commit;
 * its report is at debug; a scan that finds nothing new does not force
 * the snapshot. */
START_TEST(second_scan_journals)
{
    fx_t f;
    apr_time_t mark = 0;

    fx_init(&f, 0, 0);
    put(&f, "a.txt", "a");
    put(&f, "b.txt", "b");
    scan(&f, 1);
    put(&f, "a.txt", "a changed");
    put(&f, "c.txt", "c");
    ck_assert_int_eq(unlink(ut_path(f.root, "b.txt")), 0);
    f.recheck = 1;
    scan(&f, 0);
    ck_assert_int_eq(f.recorders, 1);
    ck_assert_int_eq(journal_newest(&f), 3);
    ck_assert_int_eq(f.published, 3);
    ck_assert_int_eq(published_change(&f, "a.txt"), RS_CHANGE_UPDATED);
    ck_assert_int_eq(published_change(&f, "b.txt"), RS_CHANGE_DELETED);
    ck_assert_int_eq(published_change(&f, "c.txt"), RS_CHANGE_CREATED);
    ck_assert_int_eq(f.snap_force, 1);
    ck_assert_int_eq(rs_journal_mark(f.j, SET, &mark), APR_SUCCESS);
    ck_assert_int_le(f.snap_at, mark);
    ck_assert_int_gt(f.snap_at, WALL0);
    ck_assert_int_eq(ut_log_count(&f.ul, "7: set s: scanned 2 files in 1 directories (2 listed, "
                                         "2 rows written, 1 removed"),
                     1);
    /* Never degraded: no end of an episode to say. */
    ck_assert_int_eq(f.restored, 0);
    ck_assert_int_eq(ut_log_count(&f.ul, "watched again"), 0);
    /* Nothing new. */
    f.recheck = 0;
    scan(&f, 0);
    ck_assert_int_eq(f.published, 0);
    ck_assert_int_eq(f.snapshots, 3);
    ck_assert_int_eq(f.snap_force, 0);
    ck_assert_int_eq(journal_newest(&f), 3);
    ck_assert_int_eq(ut_log_count(&f.ul, "(2 listed, 0 rows written, 0 removed, 0 bytes hashed)"),
                     1);
    /* An access file above the root changed: every file is decided
     * again (its row rewritten, not hashed again). */
    f.recheck = 1;
    scan(&f, 0);
    ck_assert_int_eq(ut_log_count(&f.ul, "(2 listed, 2 rows written, 0 removed, 0 bytes hashed)"),
                     1);
    ck_assert_int_eq(journal_newest(&f), 3);
}
END_TEST

/* Links: with links_scan, a set's first scan (its baseline) resolves
 * none through links_row and links_done, but hands its rows to the
 * collection, which resolves them in one pass after it, before its
 * snapshot; later scans and batches resolve them as they write. */
START_TEST(links_of_the_baseline_in_one_pass)
{
    fx_t f;

    fx_init(&f, 0, 0);
    f.links = 1;
    f.h.links_scan = h_links_scan;
    put(&f, "a.txt", "a");
    put(&f, "a.xml", "<a/>");
    put(&f, "b.txt", "b");
    scan(&f, 1);
    ck_assert_int_eq(f.link_baselines, 1);
    ck_assert_int_eq(f.link_rows + f.link_dones, 0);
    ck_assert_int_eq(f.snapshots, 1);
    ck_assert_int_eq(f.snap_linked, 1);
    ck_assert_ptr_nonnull(strstr(stored_links(&f, "", "a.txt"), "a.xml"));
    ck_assert_ptr_nonnull(strstr(stored_links(&f, "", "a.xml"), "a.txt"));
    ck_assert_ptr_nonnull(strstr(stored_links(&f, "", "b.txt"), "b.xml"));
    put(&f, "a.txt", "a changed");
    scan(&f, 0);
    ck_assert_int_eq(f.link_baselines, 1);
    ck_assert_int_eq(f.link_rows, 1);
    ck_assert_int_eq(f.link_dones, 1);
    put(&f, "c.txt", "c");
    batch(&f, "c.txt");
    ck_assert_int_eq(f.link_rows, 2);
    ck_assert_int_eq(f.link_dones, 2);
    ck_assert_int_eq(f.link_baselines, 1);

    /* Without links_scan (rules that look nothing up), the baseline
     * resolves them as it writes. */
    fx_init(&f, 0, 0);
    f.links = 1;
    put(&f, "a.txt", "a");
    put(&f, "b.txt", "b");
    scan(&f, 1);
    ck_assert_int_eq(f.link_rows, 2);
    ck_assert_int_eq(f.link_dones, 2);
}
END_TEST

/* Batches: a created, a changed and a deleted file each journaled and
 * published; the lists are looked at only once the open one may be
 * full, and a closing is announced. */
START_TEST(batches_journal_targets)
{
    fx_t f;

    fx_init(&f, 0, 0);
    put(&f, "a.txt", "a");
    scan(&f, 1);
    scan(&f, 0); /* the journal has begun */
    f.updates = 0;
    put(&f, "new.txt", "n");
    batch(&f, "new.txt");
    ck_assert_int_eq(f.published, 1);
    ck_assert_int_eq(published_change(&f, "new.txt"), RS_CHANGE_CREATED);
    ck_assert_int_eq(f.changes, 1);
    ck_assert_int_eq(f.changed_at, mono_now);
    ck_assert_int_eq(f.updates, 0);
    put(&f, "a.txt", "a again");
    batch(&f, "a.txt");
    ck_assert_int_eq(published_change(&f, "a.txt"), RS_CHANGE_UPDATED);
    ck_assert_int_eq(unlink(ut_path(f.root, "new.txt")), 0);
    f.ext.count = 99; /* the next record fills the open list (100) */
    f.close_on_update = 1;
    batch(&f, "new.txt");
    ck_assert_int_eq(published_change(&f, "new.txt"), RS_CHANGE_DELETED);
    ck_assert_int_eq(journal_newest(&f), 3);
    ck_assert_int_eq(f.updates, 1);
    ck_assert_int_eq(f.closed_old, 1);
    ck_assert_int_eq(f.closed_new, 2);
    ck_assert_int_eq(ut_log_count(&f.ul, "7: set s: Change List 1 closed, 2 open, in "), 1);
    /* A batch without changes publishes nothing. */
    batch(&f, "a.txt");
    ck_assert_int_eq(f.changes, 3);
    ck_assert_int_eq(journal_newest(&f), 3);
    ck_assert_int_eq(f.modes, 2); /* the two full scans; no batch was degraded */
    f.degraded_after = 1;
    batch(&f, "a.txt");
    ck_assert_int_eq(f.modes, 3);
}
END_TEST

/* The store fails: during the scan (a full scan), beginning the journal,
 * reading its start, updating the lists; each is handed to the store
 * failure with its words, and nothing is published or scheduled. */
START_TEST(store_failures)
{
    fx_t f;

    fx_init(&f, 0, 0);
    put(&f, "a.txt", "a");
    ck_assert_int_eq(rs_db_run(f.st, "CREATE TRIGGER fail_begin BEFORE INSERT ON journal_sets "
                                     "BEGIN SELECT RAISE(ABORT, 'disk I/O'); END"),
                     APR_SUCCESS);
    reopen(&f);
    scan(&f, 1);
    ck_assert_str_eq(f.failed, "starting the journal");
    ck_assert_str_eq(rs_db_last_error(f.st), "disk I/O");
    ck_assert_int_ne(f.failed_rv, APR_SUCCESS);
    ck_assert_int_eq(f.publishes, 0);
    ck_assert_int_eq(f.snapshots, 0);
    ck_assert_int_eq(rs_db_run(f.st, "DROP TRIGGER fail_begin"), APR_SUCCESS);
    reopen(&f);
    scan(&f, 1);
    ck_assert_int_eq(f.snapshots, 1);

    /* The scan's own writes fail: journaling a change. */
    f.failed = NULL;
    ck_assert_int_eq(rs_db_run(f.st, "CREATE TRIGGER fail_rec BEFORE INSERT ON journal "
                                     "BEGIN SELECT RAISE(ABORT, 'disk I/O'); END"),
                     APR_SUCCESS);
    reopen(&f);
    put(&f, "b.txt", "b");
    scan(&f, 0);
    ck_assert_str_eq(f.failed, "a full scan");
    ck_assert_str_eq(rs_db_last_error(f.st), "disk I/O");
    ck_assert_int_eq(f.rc.root_lost, 0);
    ck_assert_int_eq(ut_log_count(&f.ul, "7: set s: scan failed; keeping the previous Resource "
                                         "List"),
                     1);
    ck_assert_int_eq(f.snapshots, 1);
    ck_assert_int_eq(f.above_ends, 2); /* the failed scan's state is not stored */

    /* A batch that fails is decided by a full scan, after a resync. */
    f.failed = NULL;
    batch(&f, "b.txt");
    ck_assert_int_eq(f.resyncs, 1);
    ck_assert_str_eq(f.failed, "a full scan");
    ck_assert_int_eq(f.retry.resync, 0); /* h_resync worked */
    ck_assert_int_eq(rs_db_run(f.st, "DROP TRIGGER fail_rec"), APR_SUCCESS);
    reopen(&f);

    /* The lists cannot be updated. */
    f.failed = NULL;
    f.update_rv = APR_EGENERAL;
    scan(&f, 0);
    ck_assert_str_eq(f.failed, "updating the Change Lists");
    ck_assert_int_eq(ut_log_count(&f.ul, "3: set s: cannot update its Change Lists"), 1);
    ck_assert_int_eq(f.snapshots, 1);
    f.update_rv = APR_SUCCESS;

    /* A resync that fails: nothing is scanned. */
    f.retry.resync = 1;
    f.resync_rv = APR_EGENERAL;
    scan(&f, 0);
    ck_assert_str_eq(f.noted, "reading the journal");
    ck_assert_int_eq(f.noted_rv, APR_EGENERAL);
    ck_assert_int_eq(f.progress_begins, 5);
    f.resync_rv = APR_SUCCESS;
    scan(&f, 0);
    ck_assert_int_eq(f.progress_begins, 6);
    ck_assert_int_eq(f.snapshots, 2);

    /* The journal's start cannot be read (its table went under the
     * connection). */
    ck_assert_int_eq(rs_db_run(f.st, "DROP TABLE journal_sets"), APR_SUCCESS);
    scan(&f, 0);
    ck_assert_str_eq(f.noted, "marking the journal");
    ck_assert_int_eq(f.progress_begins, 6);
}
END_TEST

/* The root: gone before the scan (nothing scanned), gone during it
 * (nothing changed, no failure of the store), back again. */
START_TEST(root_lost)
{
    fx_t f;

    fx_init(&f, 0, 0);
    put(&f, "a.txt", "a");
    scan(&f, 1);
    scan(&f, 0);
    f.remove_root_in_scan = 1;
    scan(&f, 0);
    ck_assert_int_eq(f.rc.root_lost, 1);
    ck_assert_ptr_null(f.failed);
    ck_assert_int_eq(f.modes, 3);
    ck_assert_int_eq(f.snapshots, 2);
    ck_assert_int_eq(journal_newest(&f), 0);
    f.remove_root_in_scan = 0;
    scan(&f, 0); /* still gone: not scanned */
    ck_assert_int_eq(f.progress_begins, 3);
    ck_assert_int_eq(f.rc.root_lost, 1);
    ck_assert_int_eq(f.md.unavailable, 1);
    ck_assert_int_eq(f.modes, 4);
    ut_mkdir(f.root);
    put(&f, "a.txt", "a");
    scan(&f, 0);
    ck_assert_int_eq(f.rc.root_lost, 0);
    ck_assert_int_eq(f.md.unavailable, 0);
    ck_assert_int_eq(f.snapshots, 3);
}
END_TEST

/* The mass-deletion guard holds a scan that deletes too much: nothing
 * journaled, published or scheduled; the confirming scan is due 5 s
 * after the scan ended. */
START_TEST(massdel_holds)
{
    fx_t f;
    int i;

    fx_init(&f, 10, 1);
    for (i = 0; i < 10; i++) {
        put(&f, apr_psprintf(ut_pool, "f%d.txt", i), "x");
    }
    scan(&f, 1);
    scan(&f, 0);
    f.ext.entries = 10;
    for (i = 0; i < 5; i++) {
        ck_assert_int_eq(unlink(ut_path(f.root, apr_psprintf(ut_pool, "f%d.txt", i))), 0);
    }
    f.publishes = 0;
    scan(&f, 0);
    ck_assert_int_eq(f.md.held, 5);
    ck_assert_int_eq(f.md.confirm_at, mono_now + RS_MASSDEL_CONFIRM);
    ck_assert_int_eq(f.publishes, 0);
    ck_assert_int_eq(f.snapshots, 2);
    ck_assert_ptr_null(f.failed);
    ck_assert_int_eq(journal_newest(&f), 0);
    /* A batch of one deletion stays under the limit. */
    batch(&f, "f0.txt");
    ck_assert_int_eq(journal_newest(&f), 1);
    /* The confirming scan (no limit) deletes the rest. */
    rs_massdel_recheck_begin(&f.md, f.md.confirm_at);
    scan(&f, 0);
    rs_massdel_recheck_end(&f.md, mono_now);
    ck_assert_int_eq(f.md.held, 0);
    ck_assert_int_eq(journal_newest(&f), 5);
    ck_assert_int_eq(f.snapshots, 3);
}
END_TEST

/* A new watcher's first scan finds the Resource List in service behind
 * the journal (an earlier watcher's changes whose snapshot never came):
 * the snapshot is forced although nothing changed. */
START_TEST(list_behind_journal)
{
    fx_t f;

    fx_init(&f, 0, 0);
    put(&f, "a.txt", "a");
    scan(&f, 1);
    put(&f, "b.txt", "b");
    scan(&f, 0);
    ck_assert_int_eq(journal_newest(&f), 1);
    ck_assert_int_eq(rs_db_meta_put(f.st, "snapshot-seq:" SET, "0"), APR_SUCCESS);
    ck_assert_int_eq(rs_reconcile_list_behind(&f.rc, ut_pool, f.st, f.j), 1);
    scan(&f, 1);
    ck_assert_int_eq(f.published, 0);
    ck_assert_int_eq(f.snap_force, 1);
    scan(&f, 0); /* not at a watcher's start: nothing to force */
    ck_assert_int_eq(f.snap_force, 0);
    ck_assert_int_eq(rs_db_meta_put(f.st, "snapshot-seq:" SET, "1"), APR_SUCCESS);
    ck_assert_int_eq(rs_reconcile_list_behind(&f.rc, ut_pool, f.st, f.j), 0);
    scan(&f, 1);
    ck_assert_int_eq(f.snap_force, 0);
}
END_TEST

Suite *reconcile_suite(void)
{
    Suite *s = suite_create("rs_reconcile");
    TCase *tc = ut_tcase("reconcile", 30);

    tcase_add_test(tc, first_scan_begins_journal);
    tcase_add_test(tc, second_scan_journals);
    tcase_add_test(tc, links_of_the_baseline_in_one_pass);
    tcase_add_test(tc, batches_journal_targets);
    tcase_add_test(tc, store_failures);
    tcase_add_test(tc, root_lost);
    tcase_add_test(tc, massdel_holds);
    tcase_add_test(tc, list_behind_journal);
    suite_add_tcase(s, tc);
    return s;
}
