/* SPDX-License-Identifier: Apache-2.0 */
/* test_journal.c - rs_journal: the journal of changes and the Change Lists */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <apr_strings.h>
#include <apr_time.h>
#include "unit.h"
#include "rs_hash.h"
#include "rs_journal.h"
#include "rs_inventory.h"
#include "rs_schema.h"

#define MD5        "900150983cd24fb0d6963f7d28e17f72"
#define SHA256     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define LASTMOD_NS (1600000000LL * 1000000000 + 123456789)

/* A store file, and a store + journal opened on it in a sub-pool (so
 * that the pair can be closed and opened again). */
typedef struct {
    const char *db;
    apr_pool_t *sp;
    rs_db_t *st;
    rs_journal_t *j;
    ut_log_t ul;
} jf_t;

static void jf_open(jf_t *f)
{
    apr_pool_create(&f->sp, ut_pool);
    ck_assert_int_eq(rs_schema_open(&f->st, f->sp, ut_driver, ut_store(f->db), ut_log_init(&f->ul)),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_journal_open(&f->j, f->st, f->sp), APR_SUCCESS);
}

static void jf_init(jf_t *f)
{
    memset(f, 0, sizeof(*f));
    f->db = ut_path(ut_tempdir("journal"), "state.db");
    jf_open(f);
}

static void jf_reopen(jf_t *f)
{
    apr_pool_destroy(f->sp);
    jf_open(f);
}

static rs_record_t *append(jf_t *f, const char *set, const char *dir, const char *name, int change)
{
    rs_record_t *r = apr_pcalloc(ut_pool, sizeof(*r));
    r->dir = dir;
    r->name = name;
    r->change = change;
    r->lastmod_ns = LASTMOD_NS;
    r->size = (apr_int64_t)strlen(name);
    r->type = "text/plain";
    r->hash[0] = MD5;
    r->hash[2] = SHA256;
    r->seq = -7;
    r->datetime = -7;
    ck_assert_int_eq(rs_journal_append(f->j, set, r), APR_SUCCESS);
    return r;
}

static void lists(jf_t *f, const char *set, apr_array_header_t **closed, rs_changelist_t *open)
{
    memset(open, 0x5a, sizeof(*open));
    ck_assert_int_eq(rs_journal_lists(f->j, ut_pool, set, closed, open), APR_SUCCESS);
    ck_assert_int_eq(open->until, 0);
}

static apr_array_header_t *records(jf_t *f, const char *set, apr_int64_t first, apr_int64_t last,
                                   int limit)
{
    apr_array_header_t *a = NULL;
    ck_assert_int_eq(rs_journal_records(f->j, ut_pool, set, first, last, limit, &a), APR_SUCCESS);
    ck_assert_ptr_nonnull(a);
    return a;
}

#define REC(a, i) (&APR_ARRAY_IDX((a), (i), rs_record_t))
#define CL(a, i)  (&APR_ARRAY_IDX((a), (i), rs_changelist_t))

static void assert_list(const rs_changelist_t *cl, apr_int64_t id, apr_time_t from,
                        apr_time_t until, apr_int64_t first, apr_int64_t last, apr_int64_t count)
{
    ck_assert_int_eq(cl->id, id);
    ck_assert_int_eq(cl->from, from);
    ck_assert_int_eq(cl->until, until);
    ck_assert_int_eq(cl->first_seq, first);
    ck_assert_int_eq(cl->last_seq, last);
    ck_assert_int_eq(cl->count, count);
}

static void close_list(jf_t *f, const char *set, apr_int64_t last_seq, apr_int64_t count,
                       apr_time_t until, rs_changelist_t *closed)
{
    memset(closed, 0x5a, sizeof(*closed));
    ck_assert_int_eq(rs_journal_close(f->j, ut_pool, set, last_seq, count, until, closed),
                     APR_SUCCESS);
}

/* rs_db_row_fn: an EXPLAIN QUERY PLAN row's detail, appended to *baton. */
static void add_plan(void *baton, apr_pool_t *p, const char *const *cols, int n)
{
    const char **plan = baton;
    (void)p;
    *plan = apr_pstrcat(ut_pool, *plan, n > 3 && cols[3] ? cols[3] : "", "; ", NULL);
}

START_TEST(change_names)
{
    ck_assert_str_eq(rs_journal_change_name(RS_CHANGE_CREATED), "created");
    ck_assert_str_eq(rs_journal_change_name(RS_CHANGE_UPDATED), "updated");
    ck_assert_str_eq(rs_journal_change_name(RS_CHANGE_DELETED), "deleted");
    ck_assert_ptr_null(rs_journal_change_name(0));
    ck_assert_ptr_null(rs_journal_change_name(4));
}
END_TEST

START_TEST(records_round_trip)
{
    jf_t f;
    rs_record_t *r1, *r2, bare;
    apr_array_header_t *a;

    jf_init(&f);
    r1 = append(&f, "s", "", "a.txt", RS_CHANGE_CREATED);
    r2 = append(&f, "s", "sub/deep", "caf\xC3\xA9 x.txt", RS_CHANGE_DELETED);
    memset(&bare, 0, sizeof(bare));
    bare.dir = "d";
    bare.name = "n";
    bare.change = RS_CHANGE_UPDATED;
    bare.size = 0;
    bare.encoding = "gzip";
    ck_assert_int_eq(rs_journal_append(f.j, "s", &bare), APR_SUCCESS);

    a = records(&f, "s", 1, -1, 100);
    ck_assert_int_eq(a->nelts, 3);
    ck_assert_int_eq(REC(a, 0)->seq, r1->seq);
    ck_assert_str_eq(REC(a, 0)->dir, "");
    ck_assert_str_eq(REC(a, 0)->name, "a.txt");
    ck_assert_int_eq(REC(a, 0)->change, RS_CHANGE_CREATED);
    ck_assert_int_eq(REC(a, 0)->datetime, r1->datetime);
    ck_assert_int_eq(REC(a, 0)->lastmod_ns, LASTMOD_NS);
    ck_assert_int_eq(REC(a, 0)->size, 5);
    ck_assert_str_eq(REC(a, 0)->type, "text/plain");
    ck_assert_ptr_null(REC(a, 0)->encoding);
    ck_assert_str_eq(REC(a, 0)->hash[0], MD5);
    ck_assert_ptr_null(REC(a, 0)->hash[1]);
    ck_assert_str_eq(REC(a, 0)->hash[2], SHA256);
    ck_assert_ptr_null(REC(a, 0)->hash[3]);

    ck_assert_int_eq(REC(a, 1)->seq, r2->seq);
    ck_assert_str_eq(REC(a, 1)->dir, "sub/deep");
    ck_assert_str_eq(REC(a, 1)->name, "caf\xC3\xA9 x.txt");
    ck_assert_int_eq(REC(a, 1)->change, RS_CHANGE_DELETED);
    ck_assert_int_eq(REC(a, 1)->datetime, r2->datetime);

    /* No type, no hashes: NULL back; the content coding kept. */
    ck_assert_int_eq(REC(a, 2)->seq, bare.seq);
    ck_assert_int_eq(REC(a, 2)->change, RS_CHANGE_UPDATED);
    ck_assert_ptr_null(REC(a, 2)->type);
    ck_assert_str_eq(REC(a, 2)->encoding, "gzip");
    ck_assert_ptr_null(REC(a, 2)->hash[0]);
    ck_assert_ptr_null(REC(a, 2)->hash[2]);
    ck_assert_int_eq(REC(a, 2)->lastmod_ns, 0);

    /* Another set has none of them. */
    ck_assert_int_eq(records(&f, "t", 1, -1, 100)->nelts, 0);
}
END_TEST

/* Two writers (processes, as two nodes of a shared store) journal
 * different sets at once, each record in a transaction of its own: the
 * sequences they take never collide (without the journal's lock both
 * read the same highest one, and one commit fails), and both sets get
 * every record. */
START_TEST(two_writers_two_sets)
{
    enum { N = 60 };
    jf_t f;
    int go[2], status, w, failed = 0;
    pid_t pid[2];
    apr_array_header_t *a, *b;

    jf_init(&f);
    ck_assert_int_eq(pipe(go), 0);
    for (w = 0; w < 2; w++) {
        pid[w] = fork();
        ck_assert_int_ge(pid[w], 0);
        if (pid[w] == 0) {
            apr_pool_t *p;
            rs_db_t *db = NULL;
            rs_journal_t *j = NULL;
            char x;
            int k, bad = 0;
            close(go[1]);
            apr_pool_create(&p, NULL);
            if (rs_schema_open(&db, p, ut_driver, ut_store(f.db), NULL) != APR_SUCCESS
                || rs_db_busy_timeout(db, 10000) != APR_SUCCESS
                || rs_journal_open(&j, db, p) != APR_SUCCESS || read(go[0], &x, 1) != 0) {
                _exit(100);
            }
            for (k = 0; k < N; k++) {
                rs_record_t r = { 0 };
                r.dir = "";
                r.name = apr_psprintf(p, "w%d-%d", w, k);
                r.change = RS_CHANGE_CREATED;
                r.lastmod_ns = LASTMOD_NS;
                r.type = "text/plain";
                if (rs_db_begin(db) != APR_SUCCESS
                    || rs_journal_append(j, w ? "t" : "s", &r) != APR_SUCCESS
                    || rs_db_commit(db) != APR_SUCCESS) {
                    bad++;
                    rs_db_rollback(db);
                }
            }
            _exit(bad > 99 ? 99 : bad);
        }
    }
    close(go[0]);
    close(go[1]); /* both start */
    for (w = 0; w < 2; w++) {
        ck_assert_int_eq(waitpid(pid[w], &status, 0), pid[w]);
        ck_assert(WIFEXITED(status));
        failed += WEXITSTATUS(status);
    }
    ck_assert_int_eq(failed, 0);
    a = records(&f, "s", 1, -1, 1000);
    b = records(&f, "t", 1, -1, 1000);
    ck_assert_int_eq(a->nelts, N);
    ck_assert_int_eq(b->nelts, N);
}
END_TEST

START_TEST(seq_across_sets_and_reopen)
{
    jf_t f;
    apr_int64_t prev = 0;
    int i;
    static const char *const sets[] = { "s", "t", "t", "s", "u" };

    jf_init(&f);
    for (i = 0; i < 5; i++) {
        rs_record_t *r =
            append(&f, sets[i], "", apr_psprintf(ut_pool, "f%d", i), RS_CHANGE_CREATED);
        ck_assert_int_eq(r->seq, prev + 1);
        prev = r->seq;
    }
    jf_reopen(&f);
    for (i = 0; i < 5; i++) {
        rs_record_t *r =
            append(&f, sets[4 - i], "", apr_psprintf(ut_pool, "g%d", i), RS_CHANGE_UPDATED);
        ck_assert_int_eq(r->seq, prev + 1);
        prev = r->seq;
    }
    ck_assert_int_eq(prev, 10);
    /* Set s holds 1, 4, then 7 and 10 (after the reopen: u s t t s -> 6..10). */
    {
        apr_array_header_t *a = records(&f, "s", 1, -1, 100);
        ck_assert_int_eq(a->nelts, 4);
        ck_assert_int_eq(REC(a, 0)->seq, 1);
        ck_assert_int_eq(REC(a, 1)->seq, 4);
        ck_assert_int_eq(REC(a, 2)->seq, 7);
        ck_assert_int_eq(REC(a, 3)->seq, 10);
        ck_assert_str_eq(REC(a, 3)->name, "g4");
    }
}
END_TEST

/* The newest records of every set, for filling the ring at startup. */
START_TEST(recent_across_sets)
{
    jf_t f;
    apr_array_header_t *recs, *sets;
    int i;
    static const char *const names[] = { "s", "t", "t", "s", "u" };

    jf_init(&f);
    ck_assert_int_eq(rs_journal_last_seq(f.j), 0);
    for (i = 0; i < 5; i++) {
        append(&f, names[i], "d", apr_psprintf(ut_pool, "f%d", i), RS_CHANGE_CREATED);
    }
    ck_assert_int_eq(rs_journal_last_seq(f.j), 5);
    ck_assert_int_eq(rs_journal_recent(f.j, ut_pool, 2, 100, &recs, &sets), APR_SUCCESS);
    ck_assert_int_eq(recs->nelts, 3);
    ck_assert_int_eq(sets->nelts, 3);
    for (i = 0; i < 3; i++) {
        ck_assert_int_eq(REC(recs, i)->seq, 3 + i);
        ck_assert_str_eq(APR_ARRAY_IDX(sets, i, const char *), names[2 + i]);
        ck_assert_str_eq(REC(recs, i)->name, apr_psprintf(ut_pool, "f%d", 2 + i));
        ck_assert_str_eq(REC(recs, i)->dir, "d");
        ck_assert_str_eq(REC(recs, i)->hash[2], SHA256);
    }
    /* limit, then paging on from the last one */
    ck_assert_int_eq(rs_journal_recent(f.j, ut_pool, 0, 2, &recs, &sets), APR_SUCCESS);
    ck_assert_int_eq(recs->nelts, 2);
    ck_assert_int_eq(REC(recs, 1)->seq, 2);
    ck_assert_int_eq(rs_journal_recent(f.j, ut_pool, 5, 2, &recs, &sets), APR_SUCCESS);
    ck_assert_int_eq(recs->nelts, 0);
    /* The newest record of each set. */
    {
        apr_int64_t seq = -1;
        ck_assert_int_eq(rs_journal_newest(f.j, ut_pool, "s", &seq), APR_SUCCESS);
        ck_assert_int_eq(seq, 4);
        ck_assert_int_eq(rs_journal_newest(f.j, ut_pool, "t", &seq), APR_SUCCESS);
        ck_assert_int_eq(seq, 3);
        ck_assert_int_eq(rs_journal_newest(f.j, ut_pool, "none", &seq), APR_SUCCESS);
        ck_assert_int_eq(seq, 0);
    }
    /* The last sequence is the store's after a reopen. */
    jf_reopen(&f);
    ck_assert_int_eq(rs_journal_last_seq(f.j), 5);
}
END_TEST

START_TEST(datetimes_strictly_increasing)
{
    jf_t f;
    apr_time_t before, last_s = 0, last_t = 0;
    int i, n = 500;

    jf_init(&f);
    ck_assert_int_eq(rs_db_begin(f.st), APR_SUCCESS);
    before = apr_time_now();
    for (i = 0; i < n; i++) {
        rs_record_t *r =
            append(&f, i % 3 ? "s" : "t", "", apr_psprintf(ut_pool, "f%d", i), RS_CHANGE_CREATED);
        apr_time_t *last = i % 3 ? &last_s : &last_t;
        ck_assert_int_ge(r->datetime, before);
        ck_assert_int_gt(r->datetime, *last);
        *last = r->datetime;
    }
    ck_assert_int_eq(rs_db_commit(f.st), APR_SUCCESS);
    /* Many records within one microsecond: the later ones were pushed
     * ahead, by at most one microsecond each. */
    ck_assert_int_le(last_s, apr_time_now() + n);

    /* Stored as assigned, and still increasing after a reopen. */
    {
        apr_array_header_t *a = records(&f, "s", 1, -1, 1000);
        rs_record_t *r;
        ck_assert_int_eq(a->nelts, n - (n + 2) / 3);
        for (i = 1; i < a->nelts; i++) {
            ck_assert_int_gt(REC(a, i)->datetime, REC(a, i - 1)->datetime);
        }
        ck_assert_int_eq(REC(a, a->nelts - 1)->datetime, last_s);
        jf_reopen(&f);
        r = append(&f, "s", "", "after", RS_CHANGE_CREATED);
        ck_assert_int_gt(r->datetime, last_s);
    }
}
END_TEST

START_TEST(datetime_after_future_until)
{
    jf_t f;
    rs_changelist_t cl, open;
    apr_array_header_t *closed;
    apr_time_t until;
    rs_record_t *r1, *r2, *r3;

    jf_init(&f);
    ck_assert_int_eq(rs_journal_begin_set(f.j, "s", apr_time_now() - apr_time_from_sec(10)),
                     APR_SUCCESS);
    r1 = append(&f, "s", "", "a", RS_CHANGE_CREATED);
    /* The clock stepped back by an hour after the close. */
    until = apr_time_now() + apr_time_from_sec(3600);
    close_list(&f, "s", -1, 0, until, &cl);
    ck_assert_int_eq(cl.id, 1);
    ck_assert_int_eq(cl.until, until);
    ck_assert_int_eq(cl.last_seq, r1->seq);
    ck_assert_int_eq(cl.count, 1);

    r2 = append(&f, "s", "", "b", RS_CHANGE_UPDATED);
    ck_assert_int_gt(r2->datetime, until);
    r3 = append(&f, "s", "", "c", RS_CHANGE_UPDATED);
    ck_assert_int_gt(r3->datetime, r2->datetime);
    /* The clock stays behind: every record is a microsecond after the
     * previous one, as when many are appended within one microsecond. */
    {
        apr_time_t prev = r3->datetime;
        int i;
        for (i = 0; i < 50; i++) {
            rs_record_t *r = append(&f, "s", "", "d", RS_CHANGE_UPDATED);
            ck_assert_int_eq(r->datetime, prev + 1);
            prev = r->datetime;
        }
        r3 = append(&f, "s", "", "e", RS_CHANGE_UPDATED);
    }
    lists(&f, "s", &closed, &open);
    assert_list(&open, 2, until, 0, r2->seq, r3->seq, 53);
    ck_assert_int_gt(r2->datetime, open.from);

    /* Another set is not affected by s's until. */
    {
        rs_record_t *o = append(&f, "t", "", "x", RS_CHANGE_CREATED);
        ck_assert_int_lt(o->datetime, until);
    }
}
END_TEST

/* After a reopen, a set's last datetime also counts the `until` of its
 * last closed list: a record appended while the clock is behind it still
 * comes after it. */
START_TEST(datetime_after_future_until_reopen)
{
    jf_t f;
    rs_changelist_t cl;
    apr_time_t until;
    rs_record_t *r;

    jf_init(&f);
    ck_assert_int_eq(rs_journal_begin_set(f.j, "s", apr_time_now() - apr_time_from_sec(10)),
                     APR_SUCCESS);
    append(&f, "s", "", "a", RS_CHANGE_CREATED);
    until = apr_time_now() + apr_time_from_sec(3600);
    close_list(&f, "s", -1, 0, until, &cl);
    ck_assert_int_eq(cl.id, 1);
    jf_reopen(&f);
    r = append(&f, "s", "", "b", RS_CHANGE_UPDATED);
    ck_assert_int_gt(r->datetime, until);
}
END_TEST

/* Sequence numbers go on after retention emptied the journal and the
 * store was reopened. */
START_TEST(seq_after_expiring_everything_and_reopen)
{
    jf_t f;
    rs_changelist_t cl;
    apr_array_header_t *dropped;
    rs_record_t *r;

    jf_init(&f);
    ck_assert_int_eq(rs_journal_begin_set(f.j, "s", apr_time_now() - apr_time_from_sec(10)),
                     APR_SUCCESS);
    append(&f, "s", "", "a", RS_CHANGE_CREATED);
    append(&f, "s", "", "b", RS_CHANGE_CREATED);
    close_list(&f, "s", -1, 0, apr_time_now(), &cl);
    ck_assert_int_eq(cl.id, 1);
    ck_assert_int_eq(rs_journal_expire(f.j, ut_pool, "s", cl.until + 1, &dropped), APR_SUCCESS);
    ck_assert_int_eq(dropped->nelts, 1);
    jf_reopen(&f);
    r = append(&f, "s", "", "c", RS_CHANGE_CREATED);
    ck_assert_int_eq(r->seq, 3);
}
END_TEST

/* A reset forgets every set's records, lists and start; the next writer
 * begins again at sequence 1 and list 1, also after a reopen. */
START_TEST(reset_forgets_everything)
{
    jf_t f;
    rs_changelist_t cl, open;
    apr_array_header_t *closed;
    apr_time_t t = -1;
    rs_record_t *r;

    jf_init(&f);
    ck_assert_int_eq(rs_journal_begin_set(f.j, "s", apr_time_now() - apr_time_from_sec(10)),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_journal_begin_set(f.j, "t", apr_time_now() - apr_time_from_sec(10)),
                     APR_SUCCESS);
    append(&f, "s", "", "a", RS_CHANGE_CREATED);
    append(&f, "t", "", "b", RS_CHANGE_CREATED);
    close_list(&f, "s", -1, 0, apr_time_now(), &cl);
    ck_assert_int_eq(cl.id, 1);
    ck_assert_int_eq(rs_journal_reset(f.j), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_last_seq(f.j), 0);
    ck_assert_int_eq(rs_journal_start(f.j, "s", &t), APR_SUCCESS);
    ck_assert_int_eq(t, 0);
    lists(&f, "s", &closed, &open);
    ck_assert_int_eq(closed->nelts, 0);
    ck_assert_int_eq(open.count, 0);
    ck_assert_int_eq(records(&f, "t", 1, -1, 10)->nelts, 0);
    jf_reopen(&f);
    ck_assert_int_eq(rs_journal_begin_set(f.j, "s", apr_time_now()), APR_SUCCESS);
    r = append(&f, "s", "", "c", RS_CHANGE_CREATED);
    ck_assert_int_eq(r->seq, 1);
    lists(&f, "s", &closed, &open);
    ck_assert_int_eq(closed->nelts, 0);
    ck_assert_int_eq(open.id, 1);
    ck_assert_int_eq(open.count, 1);
}
END_TEST

START_TEST(begin_set_idempotent)
{
    jf_t f;
    apr_time_t t = -1, t1 = apr_time_from_sec(1700000000), t2 = t1 + 5000000;

    jf_init(&f);
    ck_assert_int_eq(rs_journal_start(f.j, "s", &t), APR_SUCCESS);
    ck_assert_int_eq(t, 0);
    ck_assert_int_eq(rs_journal_begin_set(f.j, "s", t1), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_start(f.j, "s", &t), APR_SUCCESS);
    ck_assert_int_eq(t, t1);
    ck_assert_int_eq(rs_journal_begin_set(f.j, "s", t2), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_begin_set(f.j, "s", t1 - 1), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_start(f.j, "s", &t), APR_SUCCESS);
    ck_assert_int_eq(t, t1);
    /* Per set, and durable. */
    ck_assert_int_eq(rs_journal_start(f.j, "t", &t), APR_SUCCESS);
    ck_assert_int_eq(t, 0);
    ck_assert_int_eq(rs_journal_begin_set(f.j, "t", t2), APR_SUCCESS);
    jf_reopen(&f);
    ck_assert_int_eq(rs_journal_start(f.j, "s", &t), APR_SUCCESS);
    ck_assert_int_eq(t, t1);
    ck_assert_int_eq(rs_journal_start(f.j, "t", &t), APR_SUCCESS);
    ck_assert_int_eq(t, t2);
}
END_TEST

START_TEST(lists_and_closes)
{
    jf_t f;
    rs_changelist_t cl, cl2, open;
    apr_array_header_t *closed, *a;
    rs_record_t *s[5];
    apr_time_t t0 = apr_time_now() - apr_time_from_sec(100), u2;
    int i;

    jf_init(&f);
    /* Never recorded: an empty open list from 0. */
    lists(&f, "s", &closed, &open);
    ck_assert_int_eq(closed->nelts, 0);
    assert_list(&open, 1, 0, 0, 1, 0, 0);

    ck_assert_int_eq(rs_journal_begin_set(f.j, "s", t0), APR_SUCCESS);
    lists(&f, "s", &closed, &open);
    assert_list(&open, 1, t0, 0, 1, 0, 0);

    /* Closing an empty list at or before its from does nothing. */
    close_list(&f, "s", -1, 0, t0, &cl);
    ck_assert_int_eq(cl.id, 0);
    close_list(&f, "s", -1, 0, t0 - 1, &cl);
    ck_assert_int_eq(cl.id, 0);
    lists(&f, "s", &closed, &open);
    ck_assert_int_eq(closed->nelts, 0);

    /* s: seqs 1, 3, 5, 7, 9; t: 2, 4, 6, 8, 10. */
    for (i = 0; i < 5; i++) {
        s[i] = append(&f, "s", "", apr_psprintf(ut_pool, "s%d", i), RS_CHANGE_CREATED);
        append(&f, "t", "", apr_psprintf(ut_pool, "t%d", i), RS_CHANGE_CREATED);
    }
    lists(&f, "s", &closed, &open);
    ck_assert_int_eq(closed->nelts, 0);
    assert_list(&open, 1, t0, 0, 1, 9, 5);

    /* A close with until <= from does nothing, even at a record boundary. */
    close_list(&f, "s", s[1]->seq, 2, t0, &cl);
    ck_assert_int_eq(cl.id, 0);
    close_list(&f, "s", s[1]->seq, 2, t0 - 1000, &cl);
    ck_assert_int_eq(cl.id, 0);
    lists(&f, "s", &closed, &open);
    ck_assert_int_eq(closed->nelts, 0);
    assert_list(&open, 1, t0, 0, 1, 9, 5);

    /* Close at a record boundary: s0, s1; until = s2's datetime. */
    close_list(&f, "s", s[1]->seq, 2, s[2]->datetime, &cl);
    assert_list(&cl, 1, t0, s[2]->datetime, 1, 3, 2);
    lists(&f, "s", &closed, &open);
    ck_assert_int_eq(closed->nelts, 1);
    assert_list(CL(closed, 0), 1, t0, s[2]->datetime, 1, 3, 2);
    assert_list(&open, 2, s[2]->datetime, 0, 4, 9, 3);
    ck_assert_int_eq(CL(closed, 0)->until, open.from);
    a = records(&f, "s", open.first_seq, -1, 100);
    ck_assert_int_eq(a->nelts, 3);
    for (i = 0; i < 3; i++) {
        ck_assert_int_eq(REC(a, i)->seq, s[i + 2]->seq);
        ck_assert_int_ge(REC(a, i)->datetime, open.from);
    }
    /* The other set is untouched. */
    lists(&f, "t", &closed, &open);
    ck_assert_int_eq(closed->nelts, 0);
    assert_list(&open, 1, 0, 0, 1, 10, 5);

    /* Close everything, with an until before the last record: raised. */
    close_list(&f, "s", -1, 0, s[3]->datetime, &cl2);
    ck_assert_int_eq(cl2.id, 2);
    ck_assert_int_eq(cl2.from, s[2]->datetime);
    ck_assert_int_gt(cl2.until, s[4]->datetime);
    ck_assert_int_eq(cl2.first_seq, 4);
    ck_assert_int_eq(cl2.last_seq, 9);
    ck_assert_int_eq(cl2.count, 3);
    u2 = cl2.until;
    lists(&f, "s", &closed, &open);
    ck_assert_int_eq(closed->nelts, 2);
    assert_list(CL(closed, 0), 1, t0, s[2]->datetime, 1, 3, 2);
    assert_list(CL(closed, 1), 2, s[2]->datetime, u2, 4, 9, 3);
    assert_list(&open, 3, u2, 0, 10, 9, 0);
    ck_assert_int_eq(records(&f, "s", open.first_seq, -1, 100)->nelts, 0);

    /* Durable. */
    jf_reopen(&f);
    lists(&f, "s", &closed, &open);
    ck_assert_int_eq(closed->nelts, 2);
    assert_list(CL(closed, 1), 2, s[2]->datetime, u2, 4, 9, 3);
    assert_list(&open, 3, u2, 0, 10, 9, 0);
    {
        rs_record_t *r = append(&f, "s", "", "late", RS_CHANGE_DELETED);
        ck_assert_int_eq(r->seq, 11);
        ck_assert_int_gt(r->datetime, u2);
        lists(&f, "s", &closed, &open);
        assert_list(&open, 3, u2, 0, 10, 11, 1);
    }
}
END_TEST

START_TEST(records_range_and_paging)
{
    jf_t f;
    apr_int64_t seqs[12], next;
    apr_array_header_t *a;
    int i, n, pages;

    jf_init(&f);
    for (i = 0; i < 12; i++) {
        seqs[i] = append(&f, "s", "d", apr_psprintf(ut_pool, "f%02d", i), RS_CHANGE_UPDATED)->seq;
        if (i % 2) {
            append(&f, "t", "d", apr_psprintf(ut_pool, "x%02d", i), RS_CHANGE_UPDATED);
        }
    }
    a = records(&f, "s", 1, -1, 1000);
    ck_assert_int_eq(a->nelts, 12);
    for (i = 0; i < 12; i++) {
        ck_assert_int_eq(REC(a, i)->seq, seqs[i]);
        ck_assert_str_eq(REC(a, i)->name, apr_psprintf(ut_pool, "f%02d", i));
    }
    /* Inclusive range, including a bound that is another set's record. */
    a = records(&f, "s", seqs[3], seqs[7], 1000);
    ck_assert_int_eq(a->nelts, 5);
    ck_assert_int_eq(REC(a, 0)->seq, seqs[3]);
    ck_assert_int_eq(REC(a, 4)->seq, seqs[7]);
    a = records(&f, "s", seqs[3] + 1, seqs[7] - 1, 1000);
    ck_assert_int_eq(a->nelts, 3);
    ck_assert_int_eq(REC(a, 0)->seq, seqs[4]);
    ck_assert_int_eq(REC(a, 2)->seq, seqs[6]);
    a = records(&f, "s", seqs[5], seqs[5], 1000);
    ck_assert_int_eq(a->nelts, 1);
    ck_assert_int_eq(REC(a, 0)->seq, seqs[5]);
    ck_assert_int_eq(records(&f, "s", seqs[5], seqs[4], 1000)->nelts, 0);
    ck_assert_int_eq(records(&f, "s", seqs[11] + 1, -1, 1000)->nelts, 0);
    /* Limit: the first ones. */
    a = records(&f, "s", seqs[2], -1, 4);
    ck_assert_int_eq(a->nelts, 4);
    ck_assert_int_eq(REC(a, 0)->seq, seqs[2]);
    ck_assert_int_eq(REC(a, 3)->seq, seqs[5]);
    a = records(&f, "s", seqs[2], seqs[9], 2);
    ck_assert_int_eq(a->nelts, 2);
    ck_assert_int_eq(REC(a, 1)->seq, seqs[3]);

    /* Paging by 5 visits every record once, in order. */
    next = 1;
    n = 0;
    pages = 0;
    for (;;) {
        a = records(&f, "s", next, -1, 5);
        pages++;
        ck_assert_int_le(a->nelts, 5);
        for (i = 0; i < a->nelts; i++) {
            ck_assert_int_eq(REC(a, i)->seq, seqs[n]);
            n++;
        }
        if (a->nelts < 5) {
            break;
        }
        next = REC(a, a->nelts - 1)->seq + 1;
    }
    ck_assert_int_eq(n, 12);
    ck_assert_int_eq(pages, 3);
}
END_TEST

START_TEST(expire)
{
    jf_t f;
    rs_changelist_t l1, l2, open;
    apr_array_header_t *closed, *dropped, *a;
    apr_time_t t0 = apr_time_now() - apr_time_from_sec(100), start;
    rs_record_t *r[5];
    int i;

    jf_init(&f);
    ck_assert_int_eq(rs_journal_begin_set(f.j, "s", t0), APR_SUCCESS);
    /* Nothing to expire. */
    ck_assert_int_eq(rs_journal_expire(f.j, ut_pool, "s", apr_time_now(), &dropped), APR_SUCCESS);
    ck_assert_int_eq(dropped->nelts, 0);

    for (i = 0; i < 5; i++) {
        r[i] = append(&f, "s", "", apr_psprintf(ut_pool, "f%d", i), RS_CHANGE_CREATED);
        append(&f, "t", "", apr_psprintf(ut_pool, "g%d", i), RS_CHANGE_CREATED);
        if (i == 1) {
            close_list(&f, "s", -1, 0, apr_time_now(), &l1);
            ck_assert_int_eq(l1.id, 1);
        }
        else if (i == 3) {
            close_list(&f, "s", -1, 0, apr_time_now(), &l2);
            ck_assert_int_eq(l2.id, 2);
        }
    }
    ck_assert_int_eq(l2.from, l1.until);

    /* until == cutoff is kept. */
    ck_assert_int_eq(rs_journal_expire(f.j, ut_pool, "s", l1.until, &dropped), APR_SUCCESS);
    ck_assert_int_eq(dropped->nelts, 0);
    lists(&f, "s", &closed, &open);
    ck_assert_int_eq(closed->nelts, 2);
    ck_assert_int_eq(records(&f, "s", 1, -1, 100)->nelts, 5);
    ck_assert_int_eq(rs_journal_start(f.j, "s", &start), APR_SUCCESS);
    ck_assert_int_eq(start, t0);

    /* The first list goes, with its records; the journal starts at its until. */
    ck_assert_int_eq(rs_journal_expire(f.j, ut_pool, "s", l1.until + 1, &dropped), APR_SUCCESS);
    ck_assert_int_eq(dropped->nelts, 1);
    ck_assert_int_eq(APR_ARRAY_IDX(dropped, 0, apr_int64_t), 1);
    lists(&f, "s", &closed, &open);
    ck_assert_int_eq(closed->nelts, 1);
    assert_list(CL(closed, 0), 2, l1.until, l2.until, l2.first_seq, l2.last_seq, 2);
    assert_list(&open, 3, l2.until, 0, l2.last_seq + 1, r[4]->seq, 1);
    a = records(&f, "s", 1, -1, 100);
    ck_assert_int_eq(a->nelts, 3);
    ck_assert_int_eq(REC(a, 0)->seq, r[2]->seq);
    ck_assert_int_eq(rs_journal_start(f.j, "s", &start), APR_SUCCESS);
    ck_assert_int_eq(start, l1.until);
    ck_assert_int_eq(CL(closed, 0)->from, start);
    /* The other set keeps everything. */
    ck_assert_int_eq(records(&f, "t", 1, -1, 100)->nelts, 5);

    /* The second goes too: the open list stays continuous. */
    ck_assert_int_eq(rs_journal_expire(f.j, ut_pool, "s", apr_time_now() + 1000000, &dropped),
                     APR_SUCCESS);
    ck_assert_int_eq(dropped->nelts, 1);
    ck_assert_int_eq(APR_ARRAY_IDX(dropped, 0, apr_int64_t), 2);
    lists(&f, "s", &closed, &open);
    ck_assert_int_eq(closed->nelts, 0);
    /* List ids are never reused, and the open list keeps its records. */
    ck_assert_int_eq(open.id, 3);
    ck_assert_int_eq(open.from, l2.until);
    ck_assert_int_eq(open.count, 1);
    ck_assert_int_eq(open.last_seq, r[4]->seq);
    ck_assert_int_eq(rs_journal_start(f.j, "s", &start), APR_SUCCESS);
    ck_assert_int_eq(start, l2.until);
    a = records(&f, "s", 1, -1, 100);
    ck_assert_int_eq(a->nelts, 1);
    ck_assert_int_eq(REC(a, 0)->seq, r[4]->seq);
    ck_assert_int_eq(records(&f, "t", 1, -1, 100)->nelts, 5);
    /* New records still go after everything. */
    {
        rs_record_t *n = append(&f, "s", "", "new", RS_CHANGE_CREATED);
        rs_changelist_t l3;
        ck_assert_int_eq(n->seq, 11);
        ck_assert_int_gt(n->datetime, l2.until);
        /* The next close goes on with id 3, from the last until, with
         * the surviving and the new record; and so does a reopen. */
        close_list(&f, "s", -1, 0, apr_time_now(), &l3);
        assert_list(&l3, 3, l2.until, l3.until, 1, 11, 2);
        jf_reopen(&f);
        lists(&f, "s", &closed, &open);
        ck_assert_int_eq(closed->nelts, 1);
        assert_list(CL(closed, 0), 3, l2.until, l3.until, 1, 11, 2);
        assert_list(&open, 4, l3.until, 0, 12, 11, 0);
        /* Expiring it too keeps the numbering. */
        ck_assert_int_eq(rs_journal_expire(f.j, ut_pool, "s", l3.until + 1, &dropped), APR_SUCCESS);
        ck_assert_int_eq(dropped->nelts, 1);
        ck_assert_int_eq(APR_ARRAY_IDX(dropped, 0, apr_int64_t), 3);
        lists(&f, "s", &closed, &open);
        ck_assert_int_eq(closed->nelts, 0);
        ck_assert_int_eq(open.id, 4);
        ck_assert_int_eq(open.from, l3.until);
        ck_assert_int_eq(open.count, 0);
    }
}
END_TEST

/* An error reading the set's row is reported, not replaced by the
 * result of the next query.  The set's row is made unreadable by a
 * temporary view over journal_sets whose column overflows when read. */
START_TEST(lists_reports_set_row_error)
{
    jf_t f;
    apr_array_header_t *closed = NULL;
    rs_changelist_t open;

    memset(&f, 0, sizeof(f));
    f.db = ut_path(ut_tempdir("journal"), "state.db");
    apr_pool_create(&f.sp, ut_pool);
    ck_assert_int_eq(rs_schema_open(&f.st, f.sp, ut_driver, ut_store(f.db), ut_log_init(&f.ul)),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_run(f.st, "CREATE TEMP VIEW journal_sets AS SELECT 's' AS setname,"
                                     " abs(-9223372036854775807 - 1) AS started, 1 AS open_id"),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_journal_open(&f.j, f.st, f.sp), APR_SUCCESS);
    ck_assert_int_ne(rs_journal_lists(f.j, ut_pool, "s", &closed, &open), APR_SUCCESS);
    ck_assert_int_ge(ut_log_count(&f.ul, "journal_sets"), 1);
}
END_TEST

/* Two connections write one journal (a watcher and a tool, or two
 * watchers during a restart): neither reuses a sequence the other wrote,
 * and datetimes still grow per set. */
START_TEST(two_writers)
{
    jf_t a, b;
    rs_record_t *r1, *r2, *r3, *r4;

    jf_init(&a);
    memset(&b, 0, sizeof(b));
    b.db = a.db;
    jf_open(&b);

    ck_assert_int_eq(rs_db_begin(a.st), APR_SUCCESS);
    r1 = append(&a, "s", "", "a", RS_CHANGE_CREATED);
    ck_assert_int_eq(rs_db_commit(a.st), APR_SUCCESS);
    ck_assert_int_eq(r1->seq, 1);

    ck_assert_int_eq(rs_db_begin(b.st), APR_SUCCESS);
    r2 = append(&b, "s", "", "b", RS_CHANGE_CREATED);
    ck_assert_int_eq(rs_db_commit(b.st), APR_SUCCESS);
    ck_assert_int_eq(r2->seq, 2);
    ck_assert_int_gt(r2->datetime, r1->datetime);

    ck_assert_int_eq(rs_db_begin(a.st), APR_SUCCESS);
    r3 = append(&a, "s", "", "c", RS_CHANGE_UPDATED);
    ck_assert_int_eq(rs_db_commit(a.st), APR_SUCCESS);
    ck_assert_int_eq(r3->seq, 3);
    ck_assert_int_gt(r3->datetime, r2->datetime);
    ck_assert_int_eq(rs_journal_last_seq(a.j), 3);

    /* Outside a transaction too. */
    r4 = append(&b, "s", "", "d", RS_CHANGE_DELETED);
    ck_assert_int_eq(r4->seq, 4);
    ck_assert_int_gt(r4->datetime, r3->datetime);
    ck_assert_int_eq(a.ul.nerr + b.ul.nerr, 0);
}
END_TEST

/* The status of a store: the sets whose journal started, in byte order;
 * a set's record count and newest datetime. */
START_TEST(sets_and_summary)
{
    jf_t f;
    apr_array_header_t *sets;
    apr_int64_t count = -1;
    apr_time_t newest = -1;
    rs_record_t *last;

    jf_init(&f);
    ck_assert_int_eq(rs_journal_sets(f.j, ut_pool, &sets), APR_SUCCESS);
    ck_assert_int_eq(sets->nelts, 0);
    ck_assert_int_eq(rs_journal_begin_set(f.j, "t", 5), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_begin_set(f.j, "s", 5), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_summary(f.j, "s", &count, &newest), APR_SUCCESS);
    ck_assert_int_eq(count, 0);
    ck_assert_int_eq(newest, 0);
    append(&f, "s", "", "a", RS_CHANGE_CREATED);
    append(&f, "t", "", "a", RS_CHANGE_CREATED);
    last = append(&f, "s", "", "a", RS_CHANGE_DELETED);
    append(&f, "t", "", "b", RS_CHANGE_CREATED);
    ck_assert_int_eq(rs_journal_sets(f.j, ut_pool, &sets), APR_SUCCESS);
    ck_assert_int_eq(sets->nelts, 2);
    ck_assert_str_eq(APR_ARRAY_IDX(sets, 0, const char *), "s");
    ck_assert_str_eq(APR_ARRAY_IDX(sets, 1, const char *), "t");
    ck_assert_int_eq(rs_journal_summary(f.j, "s", &count, &newest), APR_SUCCESS);
    ck_assert_int_eq(count, 2);
    ck_assert_int_eq(newest, last->datetime);
}
END_TEST

/* A record of dir/name in set whose SHA-256 digest is sha256. */
static rs_record_t *append_digest(jf_t *f, const char *set, const char *dir, const char *name,
                                  int change, const char *sha256)
{
    rs_record_t *r = apr_pcalloc(ut_pool, sizeof(*r));
    r->dir = dir;
    r->name = name;
    r->change = change;
    r->lastmod_ns = LASTMOD_NS;
    r->hash[2] = sha256;
    ck_assert_int_eq(rs_journal_append(f->j, set, r), APR_SUCCESS);
    return r;
}

static void digest_use(jf_t *f, const char *set, const char *sha256, int kept, apr_time_t deleted)
{
    int k = -1;
    apr_time_t d = -1;
    ck_assert_int_eq(rs_journal_digest_use(f->j, ut_pool, set, sha256, &k, &d), APR_SUCCESS);
    ck_assert_int_eq(k, kept);
    ck_assert_int_eq(d, deleted);
}

/* A content is kept while one created/updated record of the set that
 * names it has no later deletion of its path; otherwise the latest of
 * those deletions says since when nothing needs it.  Deletions (which
 * carry the last version's digest), other sets, other paths' deletions,
 * and records gone with their list do not count. */
/* The created/updated versions of a set with the datetime of their
 * path's next deletion, and the versions of one path (both drivers). */
START_TEST(versions_and_path_versions)
{
    jf_t f;
    rs_record_t *a1, *a2, *da, *b1;
    apr_array_header_t *v, *seqs;
    rs_journal_version_t *x;

    jf_init(&f);
    a1 = append(&f, "s", "d", "a", RS_CHANGE_CREATED);
    b1 = append(&f, "s", "d", "b", RS_CHANGE_CREATED);
    a2 = append(&f, "s", "d", "a", RS_CHANGE_UPDATED);
    da = append(&f, "s", "d", "a", RS_CHANGE_DELETED);
    append(&f, "t", "d", "a", RS_CHANGE_CREATED);
    ck_assert_int_eq(rs_journal_versions(f.j, ut_pool, "s", 1, -1, 10, &v), APR_SUCCESS);
    ck_assert_int_eq(v->nelts, 3);
    x = &APR_ARRAY_IDX(v, 0, rs_journal_version_t);
    ck_assert(x->seq == a1->seq && x->deleted == da->datetime);
    x = &APR_ARRAY_IDX(v, 1, rs_journal_version_t);
    ck_assert(x->seq == b1->seq && x->deleted == 0);
    x = &APR_ARRAY_IDX(v, 2, rs_journal_version_t);
    ck_assert(x->seq == a2->seq && x->deleted == da->datetime);
    ck_assert_int_eq(rs_journal_versions(f.j, ut_pool, "s", b1->seq, b1->seq, 10, &v), APR_SUCCESS);
    ck_assert_int_eq(v->nelts, 1);
    ck_assert_int_eq(rs_journal_path_versions(f.j, ut_pool, "s", "d", "a", &seqs), APR_SUCCESS);
    ck_assert_int_eq(seqs->nelts, 2);
    ck_assert(APR_ARRAY_IDX(seqs, 0, apr_int64_t) == a1->seq);
    ck_assert(APR_ARRAY_IDX(seqs, 1, apr_int64_t) == a2->seq);
}
END_TEST

START_TEST(digest_use_follows_versions_and_deletions)
{
    jf_t f;
    rs_record_t *d1, *d2, *d3;
    rs_changelist_t cl;
    apr_array_header_t *dropped;
    const char *x = "1111111111111111111111111111111111111111111111111111111111111111";
    const char *y = "2222222222222222222222222222222222222222222222222222222222222222";
    const char *z = "3333333333333333333333333333333333333333333333333333333333333333";

    jf_init(&f);
    append_digest(&f, "s", "", "old", RS_CHANGE_CREATED, z);
    close_list(&f, "s", -1, 0, apr_time_now(), &cl);
    append_digest(&f, "s", "", "a", RS_CHANGE_CREATED, x);
    append_digest(&f, "s", "d", "b", RS_CHANGE_CREATED, x);
    d1 = append_digest(&f, "s", "d", "b", RS_CHANGE_DELETED, x);
    append_digest(&f, "s", "", "c", RS_CHANGE_CREATED, y);
    append_digest(&f, "s", "", "c", RS_CHANGE_UPDATED, y);
    d2 = append_digest(&f, "s", "", "c", RS_CHANGE_DELETED, y);
    append_digest(&f, "s", "", "e", RS_CHANGE_UPDATED, y);
    d3 = append_digest(&f, "s", "", "e", RS_CHANGE_DELETED, y);
    append_digest(&f, "s", "", "c", RS_CHANGE_CREATED, z); /* after c's deletion */
    append_digest(&f, "t", "", "a", RS_CHANGE_CREATED, y);
    append_digest(&f, "t", "", "w", RS_CHANGE_DELETED, x);

    digest_use(&f, "s", x, 1, d1->datetime); /* a keeps it; b's went */
    digest_use(&f, "s", y, 0, d3->datetime); /* the later of c's and e's deletions */
    ck_assert_int_lt(d2->datetime, d3->datetime);
    digest_use(&f, "s", z, 1, 0);
    digest_use(&f, "t", y, 1, 0);
    digest_use(&f, "t", x, 0, 0); /* only a deletion names it */
    digest_use(&f, "s", "4444444444444444444444444444444444444444444444444444444444444444", 0, 0);
    /* "old" goes with its list; the later c keeps z. */
    ck_assert_int_eq(rs_journal_expire(f.j, ut_pool, "s", cl.until + 1, &dropped), APR_SUCCESS);
    ck_assert_int_eq(dropped->nelts, 1);
    digest_use(&f, "s", z, 1, 0);
    ck_assert_int_eq(f.ul.nerr, 0);
}
END_TEST

/* The lookup by content goes through the journal's index of digests,
 * not through every record of the set. */
START_TEST(digest_use_is_indexed)
{
    jf_t f;
    rs_db_stmt_t *st = NULL;
    const char *plan = "";
    const void *args[] = { "s",
                           "1111111111111111111111111111111111111111111111111111111111111111" };

    jf_init(&f);
    ck_assert_int_eq(rs_db_prepare(f.st,
                                   "EXPLAIN QUERY PLAN SELECT seq FROM journal r"
                                   " WHERE r.setname = %s AND r.sha256 = %s AND r.change <> 3",
                                   &st),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_query(f.st, ut_pool, st, args, add_plan, &plan), APR_SUCCESS);
    ck_assert_msg(strstr(plan, "USING INDEX journal_set_sha256"), "plan: %s", plan);
}
END_TEST

/* Links: a created or updated record keeps them, a deleted one has none
 * (its entry carries none); recent records carry them too. */
START_TEST(records_keep_links)
{
    jf_t f;
    rs_record_t r;
    apr_array_header_t *a, *sets;
    int change;

    jf_init(&f);
    for (change = RS_CHANGE_CREATED; change <= RS_CHANGE_DELETED; change++) {
        memset(&r, 0, sizeof(r));
        r.dir = "records";
        r.name = "1.pdf";
        r.change = change;
        r.links = "describedby meta/1.xml";
        ck_assert_int_eq(rs_journal_append(f.j, "s", &r), APR_SUCCESS);
    }
    a = records(&f, "s", 1, -1, 100);
    ck_assert_int_eq(a->nelts, 3);
    ck_assert_str_eq(REC(a, 0)->links, "describedby meta/1.xml");
    ck_assert_str_eq(REC(a, 1)->links, "describedby meta/1.xml");
    ck_assert_ptr_null(REC(a, 2)->links);
    ck_assert_int_eq(rs_journal_recent(f.j, ut_pool, 0, 10, &a, &sets), APR_SUCCESS);
    ck_assert_int_eq(a->nelts, 3);
    ck_assert_str_eq(REC(a, 1)->links, "describedby meta/1.xml");
    ck_assert_str_eq(APR_ARRAY_IDX(sets, 1, const char *), "s");
}
END_TEST

static const char *relinked(jf_t *f, const char *set, apr_int64_t from)
{
    apr_array_header_t *a = NULL, *out = apr_array_make(ut_pool, 4, sizeof(const char *));
    int i;

    ck_assert_int_eq(rs_journal_relinked(f->j, ut_pool, set, from, 100, &a), APR_SUCCESS);
    for (i = 0; i < a->nelts; i++) {
        const rs_journal_path_t *k = &APR_ARRAY_IDX(a, i, rs_journal_path_t);
        APR_ARRAY_PUSH(out, const char *) = apr_pstrcat(ut_pool, k->dir, "/", k->name, NULL);
    }
    return apr_array_pstrcat(ut_pool, out, ' ');
}

/* Relinked paths: at the journal's last sequence, one row per path (its
 * latest), read from a sequence on (that sequence included), per set;
 * expired with the records before the last dropped one, gone with a
 * reset. */
START_TEST(relinked_paths)
{
    jf_t f;
    rs_changelist_t l1;
    apr_array_header_t *dropped;
    rs_record_t *r1, *r2;

    jf_init(&f);
    ck_assert_int_eq(rs_journal_begin_set(f.j, "s", apr_time_now() - 1000000), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_relink(f.j, "s", "m", "0.xml"), APR_SUCCESS);
    r1 = append(&f, "s", "", "a", RS_CHANGE_CREATED);
    ck_assert_int_eq(rs_journal_relink(f.j, "s", "m", "1.xml"), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_relink(f.j, "t", "m", "1.xml"), APR_SUCCESS);
    ck_assert_str_eq(relinked(&f, "s", 0), "m/0.xml m/1.xml");
    ck_assert_str_eq(relinked(&f, "s", r1->seq), "m/1.xml");
    ck_assert_str_eq(relinked(&f, "s", r1->seq + 1), "");
    r2 = append(&f, "s", "", "b", RS_CHANGE_CREATED);
    /* Relinked again later: its latest sequence counts. */
    ck_assert_int_eq(rs_journal_relink(f.j, "s", "m", "0.xml"), APR_SUCCESS);
    ck_assert_str_eq(relinked(&f, "s", r2->seq), "m/0.xml");
    ck_assert_str_eq(relinked(&f, "t", 0), "m/1.xml");

    /* A list of r1 and r2 closed and expired: m/1.xml (relinked at r1)
     * goes, m/0.xml (at r2, the last record dropped) stays. */
    close_list(&f, "s", -1, 0, apr_time_now(), &l1);
    ck_assert_int_eq(rs_journal_expire(f.j, ut_pool, "s", l1.until + 1, &dropped), APR_SUCCESS);
    ck_assert_int_eq(dropped->nelts, 1);
    ck_assert_str_eq(relinked(&f, "s", 0), "m/0.xml");
    ck_assert_str_eq(relinked(&f, "t", 0), "m/1.xml");
    ck_assert_int_eq(rs_journal_reset(f.j), APR_SUCCESS);
    ck_assert_str_eq(relinked(&f, "s", 0), "");
    ck_assert_str_eq(relinked(&f, "t", 0), "");
}
END_TEST

/* The time of a set's last retention drop: kept in the store, in the
 * caller's transaction, per set, and it never goes back. */
START_TEST(drop_time_only_grows)
{
    jf_t f;
    apr_time_t t, now = apr_time_now();
    int n;

    jf_init(&f);
    ck_assert_int_eq(rs_journal_drop_time(f.j, ut_pool, "s", &t), APR_SUCCESS);
    ck_assert_int_eq(t, 0);
    ck_assert_int_eq(rs_db_begin(f.st), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_drop_note(f.j, ut_pool, "s", now), APR_SUCCESS);
    rs_db_rollback(f.st);
    ck_assert_int_eq(rs_journal_drop_time(f.j, ut_pool, "s", &t), APR_SUCCESS);
    ck_assert_int_eq(t, 0);
    ck_assert_int_eq(rs_db_begin(f.st), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_drop_note(f.j, ut_pool, "s", now), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(f.st), APR_SUCCESS);
    /* A wall clock that stepped back changes nothing. */
    ck_assert_int_eq(rs_journal_drop_note(f.j, ut_pool, "s", now - 5), APR_SUCCESS);
    jf_reopen(&f);
    ck_assert_int_eq(rs_journal_drop_time(f.j, ut_pool, "s", &t), APR_SUCCESS);
    ck_assert_int_eq(t, now);
    ck_assert_int_eq(rs_journal_drop_time(f.j, ut_pool, "t", &t), APR_SUCCESS);
    ck_assert_int_eq(t, 0);
    ck_assert_int_eq(rs_journal_drop_note(f.j, ut_pool, "s", now + 1), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_drop_time(f.j, ut_pool, "s", &t), APR_SUCCESS);
    ck_assert_int_eq(t, now + 1);
    /* A set forgotten forgets it. */
    ck_assert_int_eq(rs_db_meta_forget_set(f.st, "s", &n), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_drop_time(f.j, ut_pool, "s", &t), APR_SUCCESS);
    ck_assert_int_eq(t, 0);
}
END_TEST

Suite *journal_suite(void)
{
    Suite *s = suite_create("rs_journal");
    TCase *tc = ut_tcase("journal", 60);
    tcase_add_test(tc, change_names);
    tcase_add_test(tc, records_round_trip);
    tcase_add_test(tc, records_keep_links);
    tcase_add_test(tc, relinked_paths);
    tcase_add_test(tc, seq_across_sets_and_reopen);
    tcase_add_test(tc, two_writers_two_sets);
    tcase_add_test(tc, recent_across_sets);
    tcase_add_test(tc, datetimes_strictly_increasing);
    tcase_add_test(tc, datetime_after_future_until);
    tcase_add_test(tc, datetime_after_future_until_reopen);
    tcase_add_test(tc, seq_after_expiring_everything_and_reopen);
    tcase_add_test(tc, begin_set_idempotent);
    tcase_add_test(tc, lists_and_closes);
    tcase_add_test(tc, records_range_and_paging);
    tcase_add_test(tc, expire);
    tcase_add_test(tc, drop_time_only_grows);
    tcase_add_test(tc, lists_reports_set_row_error);
    tcase_add_test(tc, two_writers);
    tcase_add_test(tc, reset_forgets_everything);
    tcase_add_test(tc, sets_and_summary);
    tcase_add_test(tc, digest_use_follows_versions_and_deletions);
    tcase_add_test(tc, versions_and_path_versions);
    if (!ut_pg_building) {
        tcase_add_test(tc, digest_use_is_indexed); /* SQLite's query plan */
    }
    suite_add_tcase(s, tc);
    return s;
}
