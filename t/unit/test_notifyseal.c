/* SPDX-License-Identifier: Apache-2.0 */
/* test_notifyseal.c - rs_notifyseal: when a set's change notifications
 * are sealed, the sweep and the pruning, with explicit times on a real
 * SQLite outbox (rs_notify over rs_journal). */
#include <string.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_hash.h"
#include "rs_journal.h"
#include "rs_notify.h"
#include "rs_notifyseal.h"
#include "rs_schema.h"

#define SEC(s) apr_time_from_sec(s)
#define T0     SEC(1000) /* a monotonic "now" */
#define DELAY  SEC(5)

typedef struct {
    rs_db_t *db;
    rs_journal_t *j;
    rs_notify_t *n;
    ut_log_t ul;
    rs_notify_opts_t o;
    rs_notifyseal_t st;
    const char *path;
    int seq;
} sf_t;

static void sf_init(sf_t *f)
{
    const char *dir = ut_tempdir("notifyseal");
    memset(f, 0, sizeof(*f));
    f->path = ut_path(dir, "state.db");
    ck_assert_int_eq(
        rs_schema_open(&f->db, ut_pool, ut_driver, ut_store(f->path), ut_log_init(&f->ul)),
        APR_SUCCESS);
    ck_assert_int_eq(rs_journal_open(&f->j, f->db, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_notify_open(&f->n, f->db, f->j, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_begin_set(f->j, "s", apr_time_now() - SEC(10)), APR_SUCCESS);
    f->o.set = "s";
    f->o.entry.url_base = "http://example.org/s/";
    f->o.entry.hashes = RS_HASH_MD5;
    f->o.capability_url = "http://example.org/s/capabilitylist.xml";
    f->o.max_entries = 100;
}

/* One journal record of set "s" carried by its open notification, as the
 * recorder does it, committed. */
static void change(sf_t *f)
{
    rs_record_t *r = apr_pcalloc(ut_pool, sizeof(*r));
    r->dir = "";
    r->name = apr_psprintf(ut_pool, "n%d", ++f->seq);
    r->change = RS_CHANGE_CREATED;
    r->lastmod_ns = 1700000000LL * 1000000000;
    r->type = "text/plain";
    ck_assert_int_eq(rs_db_begin(f->db), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_append(f->j, "s", r), APR_SUCCESS);
    ck_assert_int_eq(rs_notify_extend(f->n, "s", r, f->o.max_entries), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(f->db), APR_SUCCESS);
}

static int is_open(sf_t *f)
{
    int open = -1;
    ck_assert_int_eq(rs_notify_has_open(f->n, "s", &open), APR_SUCCESS);
    return open;
}

static int sealed(sf_t *f, const char *topic)
{
    apr_array_header_t *a;
    ck_assert_int_eq(rs_notify_after(f->n, ut_pool, "s", topic, 0, 1000, &a), APR_SUCCESS);
    return a->nelts;
}

static int poll_at(sf_t *f, apr_time_t now, apr_time_t wall)
{
    return rs_notifyseal_poll(&f->st, f->n, &f->o, now, wall, &f->ul.logger, ut_pool);
}

/* A commit's records make the open notification due after the delay;
 * later commits within the delay do not move it; a commit of nothing
 * makes nothing due. */
START_TEST(changed_sets_the_deadline_once)
{
    rs_notifyseal_t st;
    memset(&st, 0, sizeof(st));
    rs_notifyseal_changed(&st, 0, DELAY, T0);
    ck_assert_int_eq(rs_notifyseal_next(&st), 0);
    rs_notifyseal_changed(&st, 3, DELAY, T0);
    ck_assert_int_eq(rs_notifyseal_next(&st), T0 + DELAY);
    rs_notifyseal_changed(&st, 1, DELAY, T0 + SEC(4));
    ck_assert_int_eq(rs_notifyseal_next(&st), T0 + DELAY);
}
END_TEST

/* The first poll seals what a previous watcher left open and asks for
 * the topic files; a start with nothing open seals nothing. */
START_TEST(start_seals_what_was_left_open)
{
    sf_t f, g;
    sf_init(&f);
    change(&f);
    change(&f);
    ck_assert_int_eq(poll_at(&f, T0, apr_time_now()), RS_NOTIFYSEAL_STARTED | RS_NOTIFYSEAL_SEALED);
    ck_assert_int_eq(f.st.started, 1);
    ck_assert_int_eq(is_open(&f), 0);
    ck_assert_int_eq(sealed(&f, RS_NOTIFY_CHANGE), 1);
    ck_assert_int_eq(rs_notifyseal_next(&f.st), 0);

    sf_init(&g);
    ck_assert_int_eq(rs_notifyseal_start(&g.st, g.n, &g.o, T0, &g.ul.logger, ut_pool),
                     RS_NOTIFYSEAL_STARTED);
    ck_assert_int_eq(g.st.started, 1);
    ck_assert_int_eq(sealed(&g, RS_NOTIFY_CHANGE), 0);
}
END_TEST

/* Records announced by changed() wait for the delay, then every open
 * one is sealed into one notification; polls before the deadline leave
 * it open. */
START_TEST(seal_after_the_delay)
{
    sf_t f;
    sf_init(&f);
    ck_assert_int_eq(poll_at(&f, T0, apr_time_now()), RS_NOTIFYSEAL_STARTED);
    change(&f);
    rs_notifyseal_changed(&f.st, 1, DELAY, T0 + SEC(1));
    change(&f);
    rs_notifyseal_changed(&f.st, 1, DELAY, T0 + SEC(2));
    ck_assert_int_eq(rs_notifyseal_next(&f.st), T0 + SEC(1) + DELAY);
    ck_assert_int_eq(poll_at(&f, T0 + SEC(1) + DELAY - 1, apr_time_now()), 0);
    ck_assert_int_eq(is_open(&f), 1);
    ck_assert_int_eq(poll_at(&f, T0 + SEC(1) + DELAY, apr_time_now()), RS_NOTIFYSEAL_SEALED);
    ck_assert_int_eq(is_open(&f), 0);
    ck_assert_int_eq(sealed(&f, RS_NOTIFY_CHANGE), 1);
    ck_assert_int_eq(rs_notifyseal_next(&f.st), 0);
    /* Nothing due: later polls seal nothing. */
    ck_assert_int_eq(poll_at(&f, T0 + SEC(30), apr_time_now()), 0);
    ck_assert_int_eq(sealed(&f, RS_NOTIFY_CHANGE), 1);
    ck_assert_int_eq(f.ul.nerr + f.ul.nwarn, 0);
}
END_TEST

/* Records nobody announced (committed by a scan whose publication
 * failed) are found by the sweep, at most RS_NOTIFYSEAL_SWEEP later, and
 * sealed in the same poll. */
START_TEST(sweep_finds_unannounced_records)
{
    sf_t f;
    sf_init(&f);
    ck_assert_int_eq(poll_at(&f, T0, apr_time_now()), RS_NOTIFYSEAL_STARTED);
    ck_assert_int_eq(poll_at(&f, T0, apr_time_now()), 0); /* first sweep: nothing */
    ck_assert_int_eq(f.st.sweep, T0 + RS_NOTIFYSEAL_SWEEP);
    change(&f);
    ck_assert_int_eq(poll_at(&f, T0 + RS_NOTIFYSEAL_SWEEP - 1, apr_time_now()), 0);
    ck_assert_int_eq(is_open(&f), 1);
    ck_assert_int_eq(poll_at(&f, T0 + RS_NOTIFYSEAL_SWEEP, apr_time_now()), RS_NOTIFYSEAL_SEALED);
    ck_assert_int_eq(is_open(&f), 0);
    ck_assert_int_eq(f.st.sweep, T0 + 2 * RS_NOTIFYSEAL_SWEEP);
}
END_TEST

/* A seal that fails (another connection holds the store's write lock)
 * is logged and tried again a sweep later; then it succeeds. */
START_TEST(failed_seal_is_retried)
{
    sf_t f;
    rs_db_t *other;
    ut_log_t ol;

    sf_init(&f);
    ck_assert_int_eq(poll_at(&f, T0, apr_time_now()), RS_NOTIFYSEAL_STARTED);
    change(&f);
    rs_notifyseal_changed(&f.st, 1, DELAY, T0);
    ck_assert_int_eq(rs_db_busy_timeout(f.db, 0), APR_SUCCESS);
    ck_assert_int_eq(rs_schema_open(&other, ut_pool, ut_driver, ut_store(f.path), ut_log_init(&ol)),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_begin(other), APR_SUCCESS);
    ck_assert_int_eq(rs_db_run(other, "DELETE FROM notify_dests"), APR_SUCCESS);
    ck_assert_int_eq(poll_at(&f, T0 + DELAY, apr_time_now()), 0);
    ck_assert_int_eq(ut_log_count(&f.ul, "3: set s: cannot seal its change notifications"), 1);
    ck_assert_int_eq(is_open(&f), 1);
    ck_assert_int_eq(rs_notifyseal_next(&f.st), T0 + DELAY + RS_NOTIFYSEAL_SWEEP);
    ck_assert_int_eq(rs_db_rollback(other), APR_SUCCESS);
    ck_assert_int_eq(poll_at(&f, T0 + DELAY + RS_NOTIFYSEAL_SWEEP - 1, apr_time_now()), 0);
    ck_assert_int_eq(is_open(&f), 1);
    ck_assert_int_eq(poll_at(&f, T0 + DELAY + RS_NOTIFYSEAL_SWEEP, apr_time_now()),
                     RS_NOTIFYSEAL_SEALED);
    ck_assert_int_eq(is_open(&f), 0);
    ck_assert_int_eq(ut_log_count(&f.ul, "cannot seal"), 1);

    /* No outbox at all: the same line, the same retry. */
    memset(&f.st, 0, sizeof(f.st));
    ck_assert_int_eq(rs_notifyseal_start(&f.st, NULL, &f.o, T0, &f.ul.logger, ut_pool),
                     RS_NOTIFYSEAL_STARTED);
    ck_assert_int_eq(ut_log_count(&f.ul, "cannot seal"), 2);
    ck_assert_int_eq(rs_notifyseal_next(&f.st), T0 + RS_NOTIFYSEAL_SWEEP);
}
END_TEST

/* Pruning runs at the first sweep and then every RS_NOTIFYSEAL_PRUNE,
 * on both topics, with the retention counted back from the wall clock:
 * only notifications past it go, and the newest of a topic stays. */
START_TEST(prune_every_period_by_retention)
{
    sf_t f;
    apr_array_header_t *fw = apr_array_make(ut_pool, 1, sizeof(rs_notify_fw_entry_t));
    rs_notify_fw_entry_t *e = apr_array_push(fw);
    apr_time_t later = apr_time_now() + 2 * RS_NOTIFY_RETENTION;
    int i;

    sf_init(&f);
    e->loc = f.o.capability_url;
    e->change = "updated";
    e->capability = "capabilitylist";
    for (i = 0; i < 3; i++) {
        change(&f);
        ck_assert_int_eq(rs_notify_seal(f.n, ut_pool, &f.o, APR_INT64_MAX, NULL, NULL),
                         APR_SUCCESS);
        ck_assert_int_eq(rs_notify_add_framework(f.n, ut_pool, &f.o, fw, apr_time_now(), NULL),
                         APR_SUCCESS);
    }
    ck_assert_int_eq(poll_at(&f, T0, later), RS_NOTIFYSEAL_STARTED);
    /* Within the retention: nothing goes. */
    ck_assert_int_eq(poll_at(&f, T0, apr_time_now()), 0);
    ck_assert_int_eq(sealed(&f, RS_NOTIFY_CHANGE), 3);
    ck_assert_int_eq(sealed(&f, RS_NOTIFY_FRAMEWORK), 3);
    ck_assert_int_eq(f.st.prune, T0 + RS_NOTIFYSEAL_PRUNE);
    /* Past it, at a sweep before the next pruning is due: nothing goes. */
    ck_assert_int_eq(poll_at(&f, T0 + RS_NOTIFYSEAL_SWEEP, later), 0);
    ck_assert_int_eq(f.st.sweep, T0 + 2 * RS_NOTIFYSEAL_SWEEP);
    ck_assert_int_eq(sealed(&f, RS_NOTIFY_CHANGE), 3);
    /* Due: all but the newest of each topic go. */
    ck_assert_int_eq(poll_at(&f, T0 + RS_NOTIFYSEAL_PRUNE, later), 0);
    ck_assert_int_eq(sealed(&f, RS_NOTIFY_CHANGE), 1);
    ck_assert_int_eq(sealed(&f, RS_NOTIFY_FRAMEWORK), 1);
    ck_assert_int_eq(f.st.prune, T0 + 2 * RS_NOTIFYSEAL_PRUNE);
}
END_TEST

Suite *notifyseal_suite(void)
{
    Suite *s = suite_create("notifyseal");
    TCase *tc = ut_tcase("core", 30);
    tcase_add_test(tc, changed_sets_the_deadline_once);
    tcase_add_test(tc, start_seals_what_was_left_open);
    tcase_add_test(tc, seal_after_the_delay);
    tcase_add_test(tc, sweep_finds_unannounced_records);
    if (!ut_pg_building) {
        /* SQLite's write lock is the database's; PostgreSQL's are rows'. */
        tcase_add_test(tc, failed_seal_is_retried);
    }
    tcase_add_test(tc, prune_every_period_by_retention);
    suite_add_tcase(s, tc);
    return s;
}
