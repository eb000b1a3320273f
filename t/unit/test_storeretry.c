/* SPDX-License-Identifier: Apache-2.0 */
/* test_storeretry.c - rs_storeretry: a set whose store fails, the
 * back-off of its retry, the watcher-wide episode and its two log lines,
 * and opening again a real SQLite store that could not be opened. */
#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_schema.h"
#include "rs_statedir.h"
#include "rs_storeretry.h"

#define SEC(n) apr_time_from_sec(n)

/* What the callbacks saw. */
typedef struct cb_seen_t {
    apr_status_t published[8];
    int npublished;
    int ended;
    int ended_after_notice; /* "store works again" was logged before ended */
    apr_interval_time_t waits[16];
    int nwaits;
    int wait_ok_until; /* wait returns 0 from this call on (0: never) */
    int restore_wait;  /* chattr -i the store at this call (0: never) */
    ut_log_t *log;
} cb_seen_t;

static void seen_publish(void *baton, apr_status_t cause)
{
    cb_seen_t *s = baton;
    ck_assert_int_lt(s->npublished, 8);
    s->published[s->npublished++] = cause;
}

static void seen_ended(void *baton)
{
    cb_seen_t *s = baton;
    s->ended++;
    s->ended_after_notice = ut_log_count(s->log, "5: store works again") == s->ended;
}

/* chattr +i / -i on the store's files that exist. */
static int chattr(const char *flag, const char *statedir)
{
    const char *db = rs_statedir_db(ut_pool, statedir);
    const char *suffix[] = { "", "-wal", "-shm" };
    const char *argv[6];
    int i, n = 0, status;
    pid_t pid;

    argv[n++] = "chattr";
    argv[n++] = flag;
    for (i = 0; i < 3; i++) {
        const char *f = apr_pstrcat(ut_pool, db, suffix[i], NULL);
        if (ut_exists(f)) {
            argv[n++] = f;
        }
    }
    argv[n] = NULL;
    pid = fork();
    if (pid == 0) {
        execvp("chattr", (char *const *)argv);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static const char *wait_statedir; /* chattr -i its store at the restore wait */

static int seen_wait(void *baton, apr_interval_time_t delay)
{
    cb_seen_t *s = baton;
    ck_assert_int_lt(s->nwaits, 16);
    s->waits[s->nwaits++] = delay;
    if (s->restore_wait && s->nwaits == s->restore_wait) {
        ck_assert_int_eq(chattr("-i", wait_statedir), 0);
    }
    return !s->wait_ok_until || s->nwaits < s->wait_ok_until;
}

typedef struct fixture_t {
    ut_log_t log; /* the episode's */
    ut_log_t setlog;
    cb_seen_t seen;
    rs_storeretry_cb_t cb;
    rs_storeretry_episode_t ep;
} fixture_t;

static fixture_t *fixture(const char *statedir)
{
    fixture_t *f = apr_pcalloc(ut_pool, sizeof(*f));

    ut_log_init(&f->log);
    ut_log_init(&f->setlog);
    f->seen.log = &f->log;
    f->cb.publish = seen_publish;
    f->cb.ended = seen_ended;
    f->cb.wait = seen_wait;
    f->cb.baton = &f->seen;
    rs_storeretry_init(&f->ep, statedir, &f->log.logger, &f->cb);
    return f;
}

START_TEST(backoff_sequence)
{
    const apr_interval_time_t want[] = { SEC(2), SEC(4), SEC(8), SEC(16), SEC(30), SEC(30) };
    apr_interval_time_t d = 0;
    int i;

    for (i = 0; i < 6; i++) {
        d = rs_storeretry_next_delay(d);
        ck_assert_int_eq(d, want[i]);
    }
}
END_TEST

/* One set fails again and again: the episode starts once, the set's
 * retry backs off, and is due exactly at its time. */
START_TEST(set_backs_off)
{
    fixture_t *f = fixture("/var/state");
    rs_storeretry_t sr = { 0 };
    const apr_interval_time_t want[] = { SEC(2), SEC(4), SEC(8), SEC(16), SEC(30), SEC(30) };
    apr_time_t now = SEC(1000);
    int i;

    ck_assert(!rs_storeretry_due(&sr, now));
    ck_assert_int_eq(
        rs_storeretry_note(&sr, &f->ep, APR_ENOSPC, "docs", "a full scan", now, &f->setlog.logger),
        1);
    ck_assert_int_eq(sr.err, APR_ENOSPC);
    ck_assert_int_eq(f->ep.nfailing, 1);
    ck_assert_int_eq(f->ep.err, APR_ENOSPC);
    ck_assert_int_eq(f->seen.npublished, 1);
    ck_assert_int_eq(f->seen.published[0], APR_ENOSPC);
    ck_assert_int_eq(f->log.msgs->nelts, 1);
    ck_assert_int_eq(f->log.nerr, 1);
    ck_assert_int_eq(ut_log_count(&f->log,
                                  "3: store failing: No space left on device (a full "
                                  "scan, in ResourceSyncStateDir '/var/state'); changes are "
                                  "kept and published once it works again, retrying every "
                                  "few seconds"),
                     1);
    ck_assert_int_eq(f->setlog.msgs->nelts, 1);
    ck_assert_int_eq(ut_log_count(&f->setlog, "7: set docs: a full scan failed; reconciling "
                                              "the set once the store works again"),
                     1);
    for (i = 0; i < 6; i++) {
        ck_assert_int_eq(sr.delay, want[i]);
        ck_assert_int_eq(sr.at, now + want[i]);
        ck_assert(!rs_storeretry_due(&sr, sr.at - 1));
        ck_assert(rs_storeretry_due(&sr, sr.at));
        now = sr.at;
        /* The retry fails again: no new line, a new cause is kept. */
        ck_assert_int_eq(rs_storeretry_note(&sr, &f->ep, APR_FROM_OS_ERROR(EROFS), "docs",
                                            "opening the store", now, &f->setlog.logger),
                         0);
        ck_assert_int_eq(sr.err, APR_FROM_OS_ERROR(EROFS));
    }
    ck_assert_int_eq(f->ep.nfailing, 1);
    ck_assert_int_eq(f->ep.err, APR_ENOSPC); /* the episode's cause is its first */
    ck_assert_int_eq(f->seen.npublished, 1);
    ck_assert_int_eq(f->log.msgs->nelts, 1);
    ck_assert_int_eq(f->setlog.msgs->nelts, 1);
    ck_assert_int_eq(f->seen.ended, 0);
}
END_TEST

/* A failure without a cause still fails the set. */
START_TEST(no_cause_is_general)
{
    fixture_t *f = fixture("/s");
    rs_storeretry_t sr = { 0 };

    rs_storeretry_note(&sr, &f->ep, APR_SUCCESS, "a", "x", SEC(5), &f->setlog.logger);
    ck_assert_int_eq(sr.err, APR_EGENERAL);
    ck_assert_int_eq(f->seen.published[0], APR_EGENERAL);
    ck_assert(rs_storeretry_due(&sr, SEC(7)));
}
END_TEST

/* Two sets: the episode runs from the first failing to the last working
 * again; it ends once, after its notice, and a later failure starts a
 * new one with the back-off from its start. */
START_TEST(episode_spans_sets)
{
    fixture_t *f = fixture("/s");
    rs_storeretry_t a = { 0 }, b = { 0 };

    ck_assert_int_eq(rs_storeretry_ok(&a, &f->ep), 0); /* not failing: nothing */
    ck_assert_int_eq(f->log.msgs->nelts, 0);
    rs_storeretry_note(&a, &f->ep, APR_FROM_OS_ERROR(EIO), "a", "closing a Change List", SEC(10),
                       &f->setlog.logger);
    rs_storeretry_note(&a, &f->ep, APR_FROM_OS_ERROR(EIO), "a", "closing a Change List", SEC(12),
                       &f->setlog.logger);
    rs_storeretry_note(&b, &f->ep, APR_FROM_OS_ERROR(EIO), "b", "a full scan", SEC(11),
                       &f->setlog.logger);
    ck_assert_int_eq(f->ep.nfailing, 2);
    ck_assert_int_eq(ut_log_count(&f->log, "store failing"), 1);
    ck_assert_int_eq(f->setlog.msgs->nelts, 2);
    ck_assert_int_eq(ut_log_count(&f->setlog, "set b: a full scan failed"), 1);
    ck_assert_int_eq(b.at, SEC(13));

    ck_assert_int_eq(rs_storeretry_ok(&a, &f->ep), 1);
    ck_assert_int_eq(a.err, APR_SUCCESS);
    ck_assert_int_eq(a.delay, 0);
    ck_assert(!rs_storeretry_due(&a, SEC(1000)));
    ck_assert_int_eq(f->ep.nfailing, 1);
    ck_assert_int_eq(ut_log_count(&f->log, "store works again"), 0);
    ck_assert_int_eq(f->seen.ended, 0);
    ck_assert_int_eq(f->ep.err, APR_FROM_OS_ERROR(EIO));

    ck_assert_int_eq(rs_storeretry_ok(&b, &f->ep), 1);
    ck_assert_int_eq(f->ep.nfailing, 0);
    ck_assert_int_eq(f->ep.err, APR_SUCCESS);
    ck_assert_int_eq(ut_log_count(&f->log, "5: store works again"), 1);
    ck_assert_int_eq(f->log.msgs->nelts, 2);
    ck_assert_int_eq(f->seen.npublished, 2);
    ck_assert_int_eq(f->seen.published[1], APR_SUCCESS);
    ck_assert_int_eq(f->seen.ended, 1);
    ck_assert(f->seen.ended_after_notice);
    ck_assert_int_eq(rs_storeretry_ok(&b, &f->ep), 0); /* once */
    ck_assert_int_eq(f->ep.nfailing, 0);

    /* A new episode: logged again, the back-off from its start. */
    rs_storeretry_note(&a, &f->ep, APR_ENOSPC, "a", "a full scan", SEC(100), &f->setlog.logger);
    ck_assert_int_eq(ut_log_count(&f->log, "store failing: No space left on device"), 1);
    ck_assert_int_eq(ut_log_count(&f->log, "store failing"), 2);
    ck_assert_int_eq(f->seen.published[2], APR_ENOSPC);
    ck_assert_int_eq(a.delay, SEC(2));
    ck_assert_int_eq(a.at, SEC(102));
}
END_TEST

/* Without callbacks the episode is only logged. */
START_TEST(no_callbacks)
{
    ut_log_t log;
    rs_storeretry_episode_t ep;
    rs_storeretry_t sr = { 0 };

    rs_storeretry_init(&ep, "/s", ut_log_init(&log), NULL);
    rs_storeretry_note(&sr, &ep, APR_ENOSPC, "a", "x", SEC(1), NULL);
    ck_assert_int_eq(ep.err, APR_ENOSPC);
    ck_assert_int_eq(rs_storeretry_ok(&sr, &ep), 1);
    ck_assert_int_eq(ut_log_count(&log, "3: store failing"), 1);
    ck_assert_int_eq(ut_log_count(&log, "5: store works again"), 1);
}
END_TEST

/* A store made once, with its schema, in a fresh state directory; no
 * connection is left open. */
static char *made_store(const char *tag)
{
    char *dir = ut_tempdir(tag);
    rs_db_t *db;
    apr_pool_t *p;

    apr_pool_create(&p, ut_pool);
    ck_assert_int_eq(rs_schema_open(&db, p, RS_STATEDIR_DB_DRIVER, rs_statedir_db(p, dir), NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(db, "probe", "1"), APR_SUCCESS);
    apr_pool_destroy(p);
    return dir;
}

/* A store file that cannot be written before its schema is made (an
 * empty state.db, immutable), in dir: opening it fails with EPERM, a
 * transient cause.  0 when chattr worked (it needs root and a file
 * system that has the flag). */
static int store_unmakeable(const char *dir)
{
    const char *db = rs_statedir_db(ut_pool, dir);
    const char *suffix[] = { "", "-wal", "-shm" };
    int i;

    if (geteuid() != 0) {
        return -1;
    }
    for (i = 0; i < 3; i++) {
        unlink(apr_pstrcat(ut_pool, db, suffix[i], NULL));
    }
    ut_write_str(db, "");
    return chattr("+i", dir);
}

/* A write through the connection, in a transaction. */
static apr_status_t store_write(rs_db_t *db, const char *value)
{
    apr_status_t rv = rs_db_begin(db);
    if (rv == APR_SUCCESS && (rv = rs_db_meta_put(db, "probe", value)) == APR_SUCCESS) {
        return rs_db_commit(db);
    }
    rs_db_rollback(db);
    return rv;
}

/* A store that cannot be made at the start: the open waits with the back-off,
 * says it once, and works once the file is writable again. */
START_TEST(open_waits_for_store)
{
    char *dir = ut_tempdir("storeretry-open");
    fixture_t *f = fixture(dir);
    apr_pool_t *pool = NULL;
    rs_db_t *db = NULL;
    rs_journal_t *j = NULL;

    if (store_unmakeable(dir) != 0) {
        fprintf(stderr, "open_waits_for_store: skipped (needs root and chattr)\n");
        return;
    }
    wait_statedir = dir;
    f->seen.restore_wait = 3;
    ck_assert_int_eq(rs_storeretry_open(&f->ep, ut_pool, NULL, &pool, &db, &j), APR_SUCCESS);
    ck_assert_int_eq(f->seen.nwaits, 3);
    ck_assert_int_eq(f->seen.waits[0], SEC(2));
    ck_assert_int_eq(f->seen.waits[1], SEC(4));
    ck_assert_int_eq(f->seen.waits[2], SEC(8));
    ck_assert_int_eq(f->log.msgs->nelts, 2);
    ck_assert_int_eq(
        ut_log_count(&f->log,
                     apr_psprintf(ut_pool,
                                  "3: store failing: Operation "
                                  "not permitted (opening the store, in ResourceSyncStateDir '%s')",
                                  dir)),
        1);
    ck_assert_int_eq(ut_log_count(&f->log, "5: store works again"), 1);
    ck_assert_int_eq(f->seen.npublished, 2);
    ck_assert_int_eq(f->seen.published[0], APR_FROM_OS_ERROR(EPERM));
    ck_assert_int_eq(f->seen.published[1], APR_SUCCESS);
    ck_assert_int_eq(f->seen.ended, 1);
    ck_assert_int_eq(f->ep.err, APR_SUCCESS);
    ck_assert_int_eq(f->ep.nfailing, 0);
    ck_assert_ptr_nonnull(pool);
    ck_assert_ptr_nonnull(db);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(store_write(db, "2"), APR_SUCCESS);
}
END_TEST

/* The watcher is to end while it waits: the cause is returned, nothing
 * is open. */
START_TEST(open_gives_up_when_told)
{
    char *dir = ut_tempdir("storeretry-end");
    fixture_t *f = fixture(dir);
    apr_pool_t *pool = NULL;
    rs_db_t *db = NULL;
    rs_journal_t *j = NULL;
    apr_status_t rv;

    if (store_unmakeable(dir) != 0) {
        fprintf(stderr, "open_gives_up_when_told: skipped (needs root and chattr)\n");
        return;
    }
    f->seen.wait_ok_until = 2;
    rv = rs_storeretry_open(&f->ep, ut_pool, NULL, &pool, &db, &j);
    ck_assert_int_eq(chattr("-i", dir), 0);
    ck_assert_int_eq(rv, APR_FROM_OS_ERROR(EPERM));
    ck_assert_int_eq(f->seen.nwaits, 2);
    ck_assert_ptr_null(pool);
    ck_assert_ptr_null(db);
    ck_assert_ptr_null(j);
    ck_assert_int_eq(ut_log_count(&f->log, "store failing"), 1);
    ck_assert_int_eq(ut_log_count(&f->log, "store works again"), 0);
    ck_assert_int_eq(f->seen.ended, 0);
    ck_assert_int_eq(f->ep.err, APR_FROM_OS_ERROR(EPERM));

    /* No wait callback: no waiting, the cause at the first failure. */
    f = fixture(dir);
    f->cb.wait = NULL;
    ck_assert_int_eq(store_unmakeable(dir), 0);
    rv = rs_storeretry_open(&f->ep, ut_pool, NULL, &pool, &db, &j);
    ck_assert_int_eq(chattr("-i", dir), 0);
    ck_assert_int_eq(rv, APR_FROM_OS_ERROR(EPERM));
    ck_assert_int_eq(f->seen.nwaits, 0);
    ck_assert_ptr_null(db);
    ck_assert_int_eq(ut_log_count(&f->log, "store failing"), 1);
}
END_TEST

/* A cause that does not go away by itself (no state directory): no wait,
 * no episode. */
START_TEST(open_permanent_failure)
{
    char *dir = ut_path(ut_tempdir("storeretry-none"), "missing");
    fixture_t *f = fixture(dir);
    apr_pool_t *pool = NULL;
    rs_db_t *db = NULL;
    rs_journal_t *j = NULL;
    apr_status_t rv = rs_storeretry_open(&f->ep, ut_pool, NULL, &pool, &db, &j);

    ck_assert_int_ne(rv, APR_SUCCESS);
    ck_assert(!rs_db_transient(rv));
    ck_assert_int_eq(f->seen.nwaits, 0);
    ck_assert_int_eq(f->log.msgs->nelts, 0);
    ck_assert_int_eq(f->seen.npublished, 0);
    ck_assert_ptr_null(pool);
    ck_assert_ptr_null(db);
}
END_TEST

static apr_status_t flag_gone(void *data)
{
    *(int *)data = 1;
    return APR_SUCCESS;
}

/* A connection opened while the store file was immutable is read-only
 * and stays so once the file is writable again: only a new one writes.
 * While the store cannot be opened there is no connection; once it can,
 * there is one again. */
START_TEST(reopen_real_store)
{
    char *dir = made_store("storeretry-reopen");
    fixture_t *f = fixture(dir);
    apr_pool_t *pool = NULL;
    rs_db_t *db = NULL;
    rs_journal_t *j = NULL;
    const char *value;
    int gone = 0;

    if (geteuid() != 0 || chattr("+i", dir) != 0) { /* state.db alone */
        fprintf(stderr, "reopen_real_store: skipped (needs root and chattr)\n");
        return;
    }
    ck_assert_int_eq(rs_storeretry_connect(&f->ep, ut_pool, NULL, &pool, &db, &j), APR_SUCCESS);
    ck_assert_int_ne(store_write(db, "3"), APR_SUCCESS);
    ck_assert_int_eq(chattr("-i", dir), 0);
    ck_assert_int_ne(store_write(db, "3"), APR_SUCCESS); /* still read-only */
    apr_pool_cleanup_register(pool, &gone, flag_gone, apr_pool_cleanup_null);
    ck_assert_int_eq(rs_storeretry_reopen(&f->ep, ut_pool, NULL, &pool, &db, &j), APR_SUCCESS);
    ck_assert_int_eq(gone, 1); /* the old connection was closed */
    ck_assert_int_eq(store_write(db, "3"), APR_SUCCESS);

    /* The store's files removed under the connection and an empty
     * immutable one in their place: the old connection goes, no new one
     * opens.  Once the file is writable, the new one makes a new store. */
    ck_assert_int_eq(store_unmakeable(dir), 0);
    ck_assert_int_eq(rs_storeretry_reopen(&f->ep, ut_pool, NULL, &pool, &db, &j),
                     APR_FROM_OS_ERROR(EPERM));
    ck_assert_ptr_null(pool);
    ck_assert_ptr_null(db);
    ck_assert_ptr_null(j);
    ck_assert_int_eq(chattr("-i", dir), 0);
    ck_assert_int_eq(rs_storeretry_reopen(&f->ep, ut_pool, NULL, &pool, &db, &j), APR_SUCCESS);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(rs_db_meta_get(db, ut_pool, "probe", &value), APR_SUCCESS);
    ck_assert_ptr_null(value);
    ck_assert_int_eq(store_write(db, "4"), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_get(db, ut_pool, "probe", &value), APR_SUCCESS);
    ck_assert_str_eq(value, "4");
    /* Reopening starts no episode: the caller notes its sets. */
    ck_assert_int_eq(f->log.msgs->nelts, 0);
    ck_assert_int_eq(f->seen.npublished, 0);
}
END_TEST

Suite *storeretry_suite(void)
{
    Suite *s = suite_create("storeretry");
    TCase *tc = ut_tcase("decisions", 10);

    tcase_add_test(tc, backoff_sequence);
    tcase_add_test(tc, set_backs_off);
    tcase_add_test(tc, no_cause_is_general);
    tcase_add_test(tc, episode_spans_sets);
    tcase_add_test(tc, no_callbacks);
    suite_add_tcase(s, tc);
    tc = ut_tcase("store", 30);
    tcase_add_test(tc, open_waits_for_store);
    tcase_add_test(tc, open_gives_up_when_told);
    tcase_add_test(tc, open_permanent_failure);
    tcase_add_test(tc, reopen_real_store);
    suite_add_tcase(s, tc);
    return s;
}
