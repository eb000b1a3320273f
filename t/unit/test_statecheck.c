/* SPDX-License-Identifier: Apache-2.0 */
/* test_statecheck.c - rs_statecheck: whether the state store continues the
 * published history, a new history when it does not, and a store deleted
 * or replaced under the running watcher; on a real state directory and a
 * real SQLite store. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_history.h"
#include "rs_notify.h"
#include "rs_schema.h"
#include "rs_statecheck.h"
#include "rs_statedir.h"

#define OLD "0123abcd"
#define T0  ((apr_time_t)1000000000)

/* A state directory with sets s1 and s2, its store opened in a sub-pool
 * (so that it can be closed, deleted, replaced and opened again), and
 * hooks that write down what they were called with. */
typedef struct {
    const char *dir;
    apr_pool_t *sp;
    rs_db_t *st;
    rs_journal_t *j;
    ut_log_t ul;
    rs_statecheck_hooks_t hooks;
    rs_statecheck_where_t w;
    const char *calls; /* "forget gen:0=7 ... adopt:<id> ..." */
    apr_status_t forget_rv;
} sc_fix_t;

static const char *const sets[] = { "s1", "s2" };
#define BASE_A "http://h:8080/s/ http://h:8080/resourcesync/s/"
#define BASE_B "https://h/mirror/s/ https://h/mirror/resourcesync/s/"

static apr_status_t h_forget(void *baton)
{
    sc_fix_t *f = baton;
    f->calls = apr_pstrcat(ut_pool, f->calls, "forget ", NULL);
    return f->forget_rv;
}

static void h_gen_floor(void *baton, int i, apr_uint64_t gen)
{
    sc_fix_t *f = baton;
    f->calls = apr_psprintf(ut_pool, "%sgen:%d=%" APR_UINT64_T_FMT " ", f->calls, i, gen);
}

static void h_adopt(void *baton, const char *history)
{
    sc_fix_t *f = baton;
    f->calls = apr_pstrcat(ut_pool, f->calls, "adopt:", history, " ", NULL);
}

static void h_emptied(void *baton)
{
    sc_fix_t *f = baton;
    f->calls = apr_pstrcat(ut_pool, f->calls, "emptied ", NULL);
}

static void sc_open(sc_fix_t *f)
{
    apr_pool_create(&f->sp, ut_pool);
    ck_assert_int_eq(
        rs_schema_open(&f->st, f->sp, "sqlite3", rs_statedir_db(ut_pool, f->dir), NULL),
        APR_SUCCESS);
    ck_assert_int_eq(rs_journal_open(&f->j, f->st, f->sp), APR_SUCCESS);
}

static void sc_close(sc_fix_t *f)
{
    apr_pool_destroy(f->sp);
    f->sp = NULL;
}

static void sc_init(sc_fix_t *f)
{
    memset(f, 0, sizeof(*f));
    f->dir = ut_tempdir("statecheck");
    f->calls = "";
    f->hooks.forget = h_forget;
    f->hooks.gen_floor = h_gen_floor;
    f->hooks.adopt = h_adopt;
    f->hooks.emptied = h_emptied;
    f->hooks.baton = f;
    f->w.statedir = f->dir;
    f->w.sets = sets;
    f->w.nsets = 2;
    f->w.hooks = &f->hooks;
    f->w.log = ut_log_init(&f->ul);
    sc_open(f);
}

/* Start on the fixture's store; returns the history adopted. */
static const char *start(sc_fix_t *f, rs_statecheck_t *sc)
{
    memset(sc, 0, sizeof(*sc));
    ck_assert_int_eq(rs_statecheck_start(sc, &f->w, ut_pool, f->st, f->j, T0), APR_SUCCESS);
    ck_assert(rs_parse_history_id(sc->history));
    ck_assert_int_eq(sc->next_check, T0 + RS_STATECHECK_INTERVAL);
    return apr_pstrdup(ut_pool, sc->history);
}

static const char *history_file(sc_fix_t *f)
{
    char h[RS_HISTORY_LEN + 1];
    if (rs_history_read(ut_pool, rs_statedir_history(ut_pool, f->dir), h) != APR_SUCCESS) {
        return NULL;
    }
    return apr_pstrdup(ut_pool, h);
}

static const char *stored(sc_fix_t *f)
{
    const char *h = NULL;
    ck_assert_int_eq(rs_db_meta_get(f->st, ut_pool, RS_HISTORY_META, &h), APR_SUCCESS);
    return h;
}

/* A set's topic file. */
static const char *topic(sc_fix_t *f, const char *set, const char *name)
{
    return rs_statedir_notify_topic(ut_pool, rs_statedir_notifyset(ut_pool, f->dir, set), name);
}

/* Documents of a history on disk: generations 3 and 7 of s1 (and a
 * file in 7), a closed Change List of s2, a Change Dump package of s1. */
static void publish(sc_fix_t *f, const char *history)
{
    const char *snap = rs_statedir_snapshots(ut_pool, f->dir);
    const char *s1 = rs_statedir_snapset(ut_pool, f->dir, "s1");
    const char *cl = rs_statedir_changelists(ut_pool, f->dir);
    const char *cl2 = rs_statedir_clset(ut_pool, f->dir, "s2");
    const char *cd = rs_statedir_changedumps(ut_pool, f->dir);
    const char *cd1 = rs_statedir_cdumpset(ut_pool, f->dir, "s1");

    if (!ut_exists(snap)) {
        ut_mkdir(snap);
        ut_mkdir(s1);
        ut_mkdir(rs_statedir_gen(ut_pool, s1, 3));
        ut_mkdir(rs_statedir_gen(ut_pool, s1, 7));
        ut_write_str(rs_statedir_gen_file(ut_pool, rs_statedir_gen(ut_pool, s1, 7), 1), "x");
        ut_mkdir(cl);
        ut_mkdir(cl2);
        ut_mkdir(cd);
        ut_mkdir(cd1);
    }
    ut_write_str(rs_statedir_cl_list(ut_pool, cl2, history, 1), "<urlset/>");
    ut_write_str(rs_statedir_cdump_pkg(ut_pool, cd1, history, 1, 0, 0), "zip");
    if (!ut_exists(rs_statedir_notify(ut_pool, f->dir))) {
        ut_mkdir(rs_statedir_notify(ut_pool, f->dir));
        ut_mkdir(rs_statedir_notifyset(ut_pool, f->dir, "s1"));
    }
    ut_write_str(topic(f, "s1", RS_NOTIFY_CHANGE), "<urlset/>");
    ut_write_str(topic(f, "s1", RS_NOTIFY_FRAMEWORK), "<urlset/>");
    ut_write_str(rs_statedir_notify_digests(ut_pool, rs_statedir_notifyset(ut_pool, f->dir, "s1")),
                 "digests");
}

/* Nothing published of the old history is left; the set directories'
 * parents stay. */
static void assert_removed(sc_fix_t *f)
{
    ck_assert(!ut_exists(rs_statedir_snapset(ut_pool, f->dir, "s1")));
    ck_assert(!ut_exists(rs_statedir_clset(ut_pool, f->dir, "s2")));
    ck_assert(!ut_exists(rs_statedir_cdumpset(ut_pool, f->dir, "s1")));
    ck_assert(ut_exists(rs_statedir_snapshots(ut_pool, f->dir)));
    ck_assert(ut_exists(rs_statedir_changelists(ut_pool, f->dir)));
    /* The topics' newest payloads go; the documents' digests stay. */
    ck_assert(!ut_exists(topic(f, "s1", RS_NOTIFY_CHANGE)));
    ck_assert(!ut_exists(topic(f, "s1", RS_NOTIFY_FRAMEWORK)));
    ck_assert(ut_exists(
        rs_statedir_notify_digests(ut_pool, rs_statedir_notifyset(ut_pool, f->dir, "s1"))));
}

static void assert_kept(sc_fix_t *f)
{
    ck_assert(ut_exists(rs_statedir_gen(ut_pool, rs_statedir_snapset(ut_pool, f->dir, "s1"), 7)));
    ck_assert(ut_exists(rs_statedir_clset(ut_pool, f->dir, "s2")));
    ck_assert(ut_exists(rs_statedir_cdumpset(ut_pool, f->dir, "s1")));
    ck_assert(ut_exists(topic(f, "s1", RS_NOTIFY_CHANGE)));
}

/* The steps of a new history, in their order, for history h, with the
 * newest generation gen of s1 on disk (s2 has none). */
static const char *new_steps(const char *h, int gen)
{
    return apr_psprintf(ut_pool, "forget gen:0=%d gen:1=0 adopt:%s emptied adopt:%s ", gen, h, h);
}

/* The history file names id. */
static void write_history_file(sc_fix_t *f, const char *id)
{
    ck_assert_int_eq(rs_history_write(ut_pool, rs_statedir_history(ut_pool, f->dir), id),
                     APR_SUCCESS);
}

/* Start where a new history is due: every step of it is taken, the new
 * history is in the store and the history file; returns it. */
static const char *start_new(sc_fix_t *f, rs_statecheck_t *sc, int gen)
{
    const char *h;

    f->calls = "";
    h = start(f, sc);
    ck_assert_str_eq(stored(f), h);
    ck_assert_str_eq(history_file(f), h);
    ck_assert_str_eq(f->calls, new_steps(h, gen));
    return h;
}

/* A new store, nothing on disk: its first history, in the store and in
 * the history file, without a warning and without the steps of a new
 * history. */
START_TEST(first_history)
{
    sc_fix_t f;
    rs_statecheck_t sc;
    const char *h;

    sc_init(&f);
    h = start(&f, &sc);
    ck_assert_str_eq(stored(&f), h);
    ck_assert_str_eq(history_file(&f), h);
    ck_assert_str_eq(f.calls, apr_pstrcat(ut_pool, "adopt:", h, " ", NULL));
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
}
END_TEST

/* The same store opened again, its documents on disk: it continues them
 * (its closed list is known to it); nothing is removed or logged. */
START_TEST(same_store_reopened)
{
    sc_fix_t f;
    rs_statecheck_t sc;
    rs_statecheck_verdict_t v;
    rs_changelist_t cl;
    const char *h;

    sc_init(&f);
    h = start(&f, &sc);
    ck_assert_int_eq(rs_journal_begin_set(f.j, "s2", T0), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_close(f.j, ut_pool, "s2", -1, 0, T0 + 10, &cl), APR_SUCCESS);
    ck_assert_int_eq(cl.id, 1);
    publish(&f, h);
    sc_close(&f);

    sc_open(&f);
    f.calls = "";
    ck_assert_int_eq(rs_statecheck_judge(&f.w, ut_pool, f.st, f.j, &v), APR_SUCCESS);
    ck_assert_str_eq(v.stored, h);
    ck_assert_str_eq(v.published, h);
    ck_assert_ptr_null(v.why);
    ck_assert_str_eq(start(&f, &sc), h);
    ck_assert_str_eq(f.calls, apr_pstrcat(ut_pool, "adopt:", h, " ", NULL));
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
    assert_kept(&f);
}
END_TEST

/* A fresh store (the old one deleted, or written by a version without
 * histories): a new history, every step, the documents removed, one
 * warning naming the old history when the history file did.  Cases: the
 * documents of an old history and its history file; the documents only;
 * the history file only (its id was published in the status entries). */
static const struct {
    int docs, file, gen;
} fresh_cases[] = {
    { 1, 1, 7 },
    { 1, 0, 7 },
    { 0, 1, 0 },
};

START_TEST(fresh_store)
{
    sc_fix_t f;
    rs_statecheck_t sc;
    const char *h;

    sc_init(&f);
    if (fresh_cases[_i].docs) {
        publish(&f, OLD);
    }
    if (fresh_cases[_i].file) {
        write_history_file(&f, OLD);
    }
    h = start_new(&f, &sc, fresh_cases[_i].gen);
    ck_assert_str_ne(h, OLD);
    if (fresh_cases[_i].docs) {
        assert_removed(&f);
    }
    ck_assert_int_eq(f.ul.nwarn, 1);
    ck_assert_int_eq(f.ul.msgs->nelts, 1);
    ck_assert_int_eq(
        ut_log_count(
            &f.ul,
            apr_psprintf(ut_pool,
                         "4: state store %s does not "
                         "continue the published history%s: the store is new (it was "
                         "deleted, or written by a version without histories); history %s "
                         "starts, the documents of the old one are removed, and destinations "
                         "must take a new baseline",
                         rs_statedir_db(ut_pool, f.dir), fresh_cases[_i].file ? " " OLD : "", h)),
        1);
}
END_TEST

/* The store replaced by another one (of another history): a new history. */
START_TEST(store_replaced)
{
    sc_fix_t f;
    rs_statecheck_t sc;
    const char *h, *h2;

    sc_init(&f);
    h = start(&f, &sc);
    publish(&f, h);
    ck_assert_int_eq(rs_db_meta_put(f.st, RS_HISTORY_META, OLD), APR_SUCCESS);
    h2 = start_new(&f, &sc, 7);
    ck_assert_str_ne(h2, h);
    ck_assert_str_ne(h2, OLD);
    assert_removed(&f);
    ck_assert_int_eq(ut_log_count(&f.ul, apr_psprintf(ut_pool,
                                                      "published history %s: the "
                                                      "store holds history " OLD
                                                      " (it was replaced); history %s starts",
                                                      h, h2)),
                     1);
}
END_TEST

/* A closed list of the store's history on disk that the store does not
 * know (restored from an older copy): a new history. */
START_TEST(store_behind)
{
    sc_fix_t f;
    rs_statecheck_t sc;
    rs_statecheck_verdict_t v;
    const char *h;

    sc_init(&f);
    h = start(&f, &sc);
    publish(&f, h);
    ck_assert_int_eq(rs_statecheck_judge(&f.w, ut_pool, f.st, f.j, &v), APR_SUCCESS);
    ck_assert_ptr_nonnull(v.why);
    ck_assert_str_eq(v.why, "Change List 1 of set s2 was published, but the store knows only "
                            "0 closed lists of it (restored from an older copy, or its write-ahead "
                            "log was lost)");
    f.calls = "";
    ck_assert_str_ne(start(&f, &sc), h);
    assert_removed(&f);
    ck_assert_int_eq(f.ul.nwarn, 1);
}
END_TEST

/* A damaged history file: with documents on disk they cannot be trusted
 * (a new history); without, the file is written again with the store's
 * history and nothing else happens. */
START_TEST(history_file_damaged)
{
    sc_fix_t f;
    rs_statecheck_t sc;
    rs_statecheck_verdict_t v;
    const char *h, *hf;

    sc_init(&f);
    h = start(&f, &sc);
    hf = rs_statedir_history(ut_pool, f.dir);
    ut_write_str(hf, "not a history\n");
    f.calls = "";
    ck_assert_str_eq(start(&f, &sc), h);
    ck_assert_str_eq(history_file(&f), h);
    ck_assert_str_eq(f.calls, apr_pstrcat(ut_pool, "adopt:", h, " ", NULL));
    ck_assert_int_eq(f.ul.msgs->nelts, 0);

    publish(&f, h);
    ut_write_str(hf, "garbage");
    ck_assert_int_eq(rs_statecheck_judge(&f.w, ut_pool, f.st, f.j, &v), APR_SUCCESS);
    ck_assert_ptr_null(v.published);
    ck_assert_str_eq(v.why, apr_pstrcat(ut_pool, hf, " is missing or unreadable", NULL));
    f.calls = "";
    ck_assert_str_ne(start(&f, &sc), h);
    assert_removed(&f);
    ck_assert_int_eq(ut_log_count(&f.ul, "continue the published history: "), 1);
}
END_TEST

/* A new history that cannot be made (the outbox cannot be reset): the
 * cause is returned and logged once at the emergency level, nothing is
 * removed and the history file still names the old history. */
START_TEST(new_history_fails)
{
    sc_fix_t f;
    rs_statecheck_t sc;

    sc_init(&f);
    publish(&f, OLD);
    write_history_file(&f, OLD);
    f.forget_rv = APR_EGENERAL;
    memset(&sc, 0, sizeof(sc));
    ck_assert_int_eq(rs_statecheck_start(&sc, &f.w, ut_pool, f.st, f.j, T0), APR_EGENERAL);
    ck_assert_str_eq(f.calls, "forget ");
    ck_assert_str_eq(history_file(&f), OLD);
    assert_kept(&f);
    ck_assert_int_eq(f.ul.msgs->nelts, 1);
    ck_assert_int_eq(
        ut_log_count(&f.ul,
                     apr_psprintf(ut_pool,
                                  "0: watcher: cannot start a "
                                  "new history in the state store of ResourceSyncStateDir '%s'",
                                  f.dir)),
        1);
}
END_TEST

/* The running watcher's look at the store: only when due, every
 * RS_STATECHECK_INTERVAL; the same store is not lost. */
START_TEST(lost_timing)
{
    sc_fix_t f;
    rs_statecheck_t sc;
    apr_time_t due = T0 + RS_STATECHECK_INTERVAL;

    sc_init(&f);
    start(&f, &sc);
    ck_assert_int_eq(rs_statecheck_lost(&sc, f.dir, ut_pool, f.st, f.w.log, due), 0);
    ck_assert_int_eq(sc.next_check, due + RS_STATECHECK_INTERVAL);
    /* Deleted: not noticed before the next look is due, then noticed. */
    ck_assert_int_eq(unlink(rs_statedir_db(ut_pool, f.dir)), 0);
    ck_assert_int_eq(
        rs_statecheck_lost(&sc, f.dir, ut_pool, f.st, f.w.log, due + RS_STATECHECK_INTERVAL - 1),
        0);
    ck_assert_int_eq(sc.next_check, due + RS_STATECHECK_INTERVAL);
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
    ck_assert_int_eq(
        rs_statecheck_lost(&sc, f.dir, ut_pool, f.st, f.w.log, due + RS_STATECHECK_INTERVAL), 1);
    ck_assert_int_eq(sc.next_check, due + 2 * RS_STATECHECK_INTERVAL);
    ck_assert_int_eq(
        ut_log_count(&f.ul,
                     apr_psprintf(ut_pool,
                                  "4: state store %s was deleted "
                                  "while the watcher ran (history %s); restarting the watcher",
                                  rs_statedir_db(ut_pool, f.dir), sc.history)),
        1);
}
END_TEST

/* Replaced by another file (renamed over it), or holding another
 * history: lost, with the cause. */
START_TEST(lost_replaced)
{
    sc_fix_t f;
    rs_statecheck_t sc;
    const char *db, *other;
    apr_time_t now = T0 + RS_STATECHECK_INTERVAL;

    sc_init(&f);
    db = rs_statedir_db(ut_pool, f.dir);
    start(&f, &sc);
    ck_assert_int_eq(rs_db_meta_put(f.st, RS_HISTORY_META, OLD), APR_SUCCESS);
    ck_assert_int_eq(rs_statecheck_lost(&sc, f.dir, ut_pool, f.st, f.w.log, now), 1);
    ck_assert_int_eq(ut_log_count(&f.ul, apr_psprintf(ut_pool,
                                                      "state store %s now holds "
                                                      "history " OLD " while the watcher ran",
                                                      db)),
                     1);
    ck_assert_int_eq(rs_db_meta_put(f.st, RS_HISTORY_META, sc.history), APR_SUCCESS);
    now += RS_STATECHECK_INTERVAL;
    ck_assert_int_eq(rs_statecheck_lost(&sc, f.dir, ut_pool, f.st, f.w.log, now), 0);

    other = ut_path(f.dir, "other.db");
    ut_write_str(other, "");
    ck_assert_int_eq(rename(other, db), 0);
    now += RS_STATECHECK_INTERVAL;
    ck_assert_int_eq(rs_statecheck_lost(&sc, f.dir, ut_pool, f.st, f.w.log, now), 1);
    ck_assert_int_eq(ut_log_count(&f.ul, apr_psprintf(ut_pool,
                                                      "state store %s was replaced "
                                                      "by another file while the watcher ran",
                                                      db)),
                     1);
    ck_assert_int_eq(f.ul.nwarn, 2);
}
END_TEST

/* A store file that cannot be looked at for another cause than its
 * absence (a path through a file, ENOTDIR) is not taken for lost. */
START_TEST(lost_unlookable)
{
    sc_fix_t f;
    rs_statecheck_t sc;
    const char *notdir;

    sc_init(&f);
    start(&f, &sc);
    notdir = ut_path(f.dir, "plain");
    ut_write_str(notdir, "");
    ck_assert_int_eq(
        rs_statecheck_lost(&sc, notdir, ut_pool, f.st, f.w.log, T0 + RS_STATECHECK_INTERVAL), 0);
    ck_assert_int_eq(sc.next_check, T0 + 2 * RS_STATECHECK_INTERVAL);
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
}
END_TEST

/* publish, with the closed list known to the store (the same store goes
 * on). */
static void publish_known(sc_fix_t *f, const char *history)
{
    rs_changelist_t cl;
    ck_assert_int_eq(rs_journal_begin_set(f->j, "s2", T0), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_close(f->j, ut_pool, "s2", -1, 0, T0 + 10, &cl), APR_SUCCESS);
    ck_assert_int_eq(cl.id, 1);
    publish(f, history);
}

/* The base URLs recorded for set i: in the store (NULL: none) and in
 * its file (NULL: none). */
static const char *base_stored(sc_fix_t *f, int i)
{
    const char *v = NULL;
    ck_assert_int_eq(rs_db_meta_get(f->st, ut_pool,
                                    apr_pstrcat(ut_pool, RS_STATECHECK_BASE_META, sets[i], NULL),
                                    &v),
                     APR_SUCCESS);
    return v;
}

static const char *base_file(sc_fix_t *f, int i)
{
    const char *path = rs_statedir_setbase(ut_pool, f->dir, sets[i]);
    return ut_exists(path) ? ut_read(path, NULL) : NULL;
}

/* Every set's base URLs are recorded at start, in the store and in its
 * file; the same ones at the next start: the store continues, nothing is
 * removed or logged.  A set without base URLs (NULL) records none. */
START_TEST(base_recorded)
{
    sc_fix_t f;
    rs_statecheck_t sc;
    const char *bases[] = { BASE_A, NULL };
    const char *h;

    sc_init(&f);
    f.w.bases = bases;
    h = start(&f, &sc);
    ck_assert_str_eq(base_stored(&f, 0), BASE_A);
    ck_assert_str_eq(base_file(&f, 0), BASE_A);
    ck_assert_ptr_null(base_stored(&f, 1));
    ck_assert_ptr_null(base_file(&f, 1));
    publish_known(&f, h);
    f.calls = "";
    ck_assert_str_eq(start(&f, &sc), h);
    ck_assert_str_eq(f.calls, apr_pstrcat(ut_pool, "adopt:", h, " ", NULL));
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
    assert_kept(&f);
    /* A file that differs from the store (a crash between the two) is
     * written again, without a new history. */
    ut_write_str(rs_statedir_setbase(ut_pool, f.dir, "s1"), BASE_B);
    ck_assert_str_eq(start(&f, &sc), h);
    ck_assert_str_eq(base_file(&f, 0), BASE_A);
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
}
END_TEST

/* The base URLs of a set changed (another port, scheme, host or path
 * prefix): the documents name URLs the server no longer has, so a new
 * history starts (every step, the documents and topics removed, one
 * warning naming the set and both base URLs), and the new ones are
 * recorded. */
START_TEST(base_changed)
{
    sc_fix_t f;
    rs_statecheck_t sc;
    rs_statecheck_verdict_t v;
    const char *bases[] = { BASE_A, BASE_A };
    const char *h, *h2;

    sc_init(&f);
    f.w.bases = bases;
    h = start(&f, &sc);
    publish_known(&f, h);
    bases[1] = BASE_B;
    ck_assert_str_eq(rs_statecheck_base_changed(&f.w, ut_pool, f.st),
                     "the base URLs of set s2 changed from '" BASE_A "' to '" BASE_B "'");
    ck_assert_int_eq(rs_statecheck_judge(&f.w, ut_pool, f.st, f.j, &v), APR_SUCCESS);
    ck_assert_str_eq(v.why, "the base URLs of set s2 changed from '" BASE_A "' to '" BASE_B "'");
    h2 = start_new(&f, &sc, 7);
    ck_assert_str_ne(h2, h);
    assert_removed(&f);
    ck_assert_str_eq(base_stored(&f, 1), BASE_B);
    ck_assert_str_eq(base_file(&f, 1), BASE_B);
    ck_assert_str_eq(base_stored(&f, 0), BASE_A);
    ck_assert_int_eq(f.ul.nwarn, 1);
    ck_assert_int_eq(
        ut_log_count(&f.ul, apr_psprintf(ut_pool,
                                         "published history %s: the base URLs of set s2 changed "
                                         "from '" BASE_A "' to '" BASE_B "'; history %s starts",
                                         h, h2)),
        1);
    /* Started again with the new ones: the store continues. */
    ck_assert_ptr_null(rs_statecheck_base_changed(&f.w, ut_pool, f.st));
    ck_assert_str_eq(start(&f, &sc), h2);
    ck_assert_int_eq(f.ul.msgs->nelts, 1);
}
END_TEST

/* A store without recorded base URLs (written by a version that did not
 * record them) or callers that give none: nothing is compared, the store
 * continues; the base URLs given are recorded. */
START_TEST(base_unknown)
{
    sc_fix_t f;
    rs_statecheck_t sc;
    const char *bases[] = { BASE_B, BASE_B };
    const char *h;

    sc_init(&f);
    h = start(&f, &sc);
    publish_known(&f, h);
    ck_assert_ptr_null(base_stored(&f, 0));
    f.w.bases = bases;
    ck_assert_ptr_null(rs_statecheck_base_changed(&f.w, ut_pool, f.st));
    f.calls = "";
    ck_assert_str_eq(start(&f, &sc), h);
    ck_assert_str_eq(f.calls, apr_pstrcat(ut_pool, "adopt:", h, " ", NULL));
    assert_kept(&f);
    ck_assert_str_eq(base_stored(&f, 0), BASE_B);
    ck_assert_str_eq(base_file(&f, 1), BASE_B);
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
}
END_TEST

Suite *statecheck_suite(void)
{
    Suite *s = suite_create("statecheck");
    TCase *tc = ut_tcase("statecheck", 20);
    tcase_add_test(tc, first_history);
    tcase_add_test(tc, same_store_reopened);
    tcase_add_loop_test(tc, fresh_store, 0, (int)(sizeof(fresh_cases) / sizeof(fresh_cases[0])));
    tcase_add_test(tc, store_replaced);
    tcase_add_test(tc, store_behind);
    tcase_add_test(tc, history_file_damaged);
    tcase_add_test(tc, new_history_fails);
    tcase_add_test(tc, lost_timing);
    tcase_add_test(tc, lost_replaced);
    tcase_add_test(tc, lost_unlookable);
    tcase_add_test(tc, base_recorded);
    tcase_add_test(tc, base_changed);
    tcase_add_test(tc, base_unknown);
    suite_add_tcase(s, tc);
    return s;
}
