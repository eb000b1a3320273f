/* SPDX-License-Identifier: Apache-2.0 */
/* test_listclose.c - rs_listclose: closing Change Lists, retention and
 * their files, on a real SQLite journal and a temporary directory, with
 * explicit times. */
#include <string.h>
#include <sys/stat.h>
#include <apr_file_io.h>
#include <apr_strings.h>
#include <apr_time.h>
#include "unit.h"
#include "rs_changelist.h"
#include "rs_db.h"
#include "rs_journal.h"
#include "rs_cdump.h"
#include "rs_listclose.h"
#include "rs_listfollow.h"
#include "rs_schema.h"
#include "rs_xml.h"

#define SEC(n) apr_time_from_sec(n)

typedef struct lf_t lf_t;

/* What the glue's publish callback saw. */
typedef struct {
    int calls;
    rs_changelist_t openl;
    int index_existed; /* index.xml was there when it was called */
    int closed_files;  /* closed lists' files there when it was called */
} pub_t;

struct lf_t {
    rs_db_t *st;
    rs_journal_t *j;
    ut_log_t ul;
    const rs_logger_t *log;
    rs_changelist_opts_t o;
    rs_listclose_conf_t c;
    rs_listclose_io_t io;
    rs_listclose_t lc;
    pub_t pub;
    int sources;          /* record sources made (one per list file) */
    apr_int64_t fail_seq; /* reading this record fails (0: none) */
    apr_time_t t0;        /* the journal's start */
};

static void *src_make(void *baton, apr_pool_t *p)
{
    lf_t *f = baton;
    f->sources++;
    return f;
}

/* rs_changelist_source_fn: the journal only. */
static apr_status_t src_read(void *baton, apr_pool_t *p, apr_int64_t next, apr_int64_t last,
                             int limit, apr_array_header_t **out)
{
    lf_t *f = baton;
    if (f->fail_seq && next <= f->fail_seq && (last < 0 || f->fail_seq <= last)) {
        return APR_EGENERAL;
    }
    return rs_journal_records(f->j, p, f->c.set, next, last, limit, out);
}

static int count_lists(lf_t *f)
{
    apr_dir_t *d;
    apr_finfo_t fi;
    int n = 0;
    if (apr_dir_open(&d, f->c.dir, ut_pool) != APR_SUCCESS) {
        return 0;
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME, d) == APR_SUCCESS) {
        n += !strncmp(fi.name, "h1-", 3);
    }
    apr_dir_close(d);
    return n;
}

static void pub(void *baton, apr_pool_t *p, const rs_changelist_t *openl)
{
    lf_t *f = baton;
    f->pub.calls++;
    f->pub.openl = *openl;
    f->pub.index_existed = ut_exists(ut_path(f->c.dir, "index.xml"));
    f->pub.closed_files = count_lists(f);
}

static void lf_init(lf_t *f, int max_entries)
{
    const char *base = ut_tempdir("listclose");
    memset(f, 0, sizeof(*f));
    ck_assert_int_eq(
        rs_schema_open(&f->st, ut_pool, "sqlite3", ut_path(base, "state.db"), ut_log_init(&f->ul)),
        APR_SUCCESS);
    f->log = ut_log_init(&f->ul); /* this unit's lines only */
    ck_assert_int_eq(rs_journal_open(&f->j, f->st, ut_pool), APR_SUCCESS);
    f->t0 = apr_time_now() - SEC(1000);
    ck_assert_int_eq(rs_journal_begin_set(f->j, "s", f->t0), APR_SUCCESS);
    f->c.set = "s";
    f->c.max_entries = max_entries;
    /* Count retention has a test of its own: here the index may name
     * every list the tests close. */
    f->c.index_max = 1000;
    f->c.period = SEC(60);
    f->c.retention = SEC(3600);
    f->c.dir = ut_path(base, "changelists/s");
    f->o.set = "s";
    f->o.entry.url_base = "http://example.org/files/";
    f->o.capability_url = "http://example.org/rs/s/capabilitylist.xml";
    f->o.index_url = "http://example.org/rs/s/changelist.xml";
    f->o.list_url_prefix = "http://example.org/rs/s/changelist/h1-";
    f->io.source = src_make;
    f->io.read = src_read;
    f->io.publish = pub;
    f->io.baton = f;
}

/* Append n records of set s (one transaction); the last one's seq. */
static apr_int64_t append_n(lf_t *f, int n)
{
    apr_int64_t seq = 0;
    int i;
    ck_assert_int_eq(rs_db_begin(f->st), APR_SUCCESS);
    for (i = 0; i < n; i++) {
        rs_record_t r;
        memset(&r, 0, sizeof(r));
        r.dir = "d";
        r.name = apr_psprintf(ut_pool, "f%d.txt", i);
        r.change = RS_CHANGE_CREATED;
        r.lastmod_ns = 1600000000LL * 1000000000;
        r.size = i;
        r.type = "text/plain";
        ck_assert_int_eq(rs_journal_append(f->j, "s", &r), APR_SUCCESS);
        seq = r.seq;
    }
    ck_assert_int_eq(rs_db_commit(f->st), APR_SUCCESS);
    return seq;
}

static void lists(lf_t *f, apr_array_header_t **closed, rs_changelist_t *openl)
{
    ck_assert_int_eq(rs_journal_lists(f->j, ut_pool, "s", closed, openl), APR_SUCCESS);
}

static const rs_record_t *record(lf_t *f, apr_int64_t seq)
{
    apr_array_header_t *recs;
    ck_assert_int_eq(rs_journal_records(f->j, ut_pool, "s", seq, seq, 1, &recs), APR_SUCCESS);
    ck_assert_int_eq(recs->nelts, 1);
    return &APR_ARRAY_IDX(recs, 0, rs_record_t);
}

/* The bytes rs_changelist_write gives for cl, straight from the journal. */
static char *expected_list(lf_t *f, const rs_changelist_t *cl, size_t *len)
{
    ut_buf_t b;
    rs_xml_t *w;
    memset(&b, 0, sizeof(b));
    w = rs_xml_open(ut_pool, ut_buf_sink, &b);
    ck_assert_int_eq(rs_changelist_write(f->j, &f->o, cl, w, ut_pool), APR_SUCCESS);
    *len = b.len;
    return b.data;
}

static const char *list_path(lf_t *f, apr_int64_t id)
{
    return apr_psprintf(ut_pool, "%s/h1-%" APR_INT64_T_FMT ".xml", f->c.dir, id);
}

START_TEST(due_by_count_or_period)
{
    rs_listclose_conf_t c;
    rs_changelist_t o;
    apr_time_t from = SEC(1000000);

    memset(&c, 0, sizeof(c));
    c.max_entries = 3;
    c.period = SEC(60);
    memset(&o, 0, sizeof(o));
    o.from = from;
    /* Empty: never, however old. */
    ck_assert_int_eq(rs_listclose_due(&c, &o, from + SEC(3600)), 0);
    /* Within its period and not full. */
    o.count = 2;
    ck_assert_int_eq(rs_listclose_due(&c, &o, from), 0);
    ck_assert_int_eq(rs_listclose_due(&c, &o, from + SEC(60) - 1), 0);
    /* Its period ended: at its end exactly, and after. */
    ck_assert_int_eq(rs_listclose_due(&c, &o, from + SEC(60)), 1);
    ck_assert_int_eq(rs_listclose_due(&c, &o, from + SEC(61)), 1);
    /* Full: at once. */
    o.count = 3;
    ck_assert_int_eq(rs_listclose_due(&c, &o, from), 1);
    o.count = 4;
    ck_assert_int_eq(rs_listclose_due(&c, &o, from + 1), 1);
}
END_TEST

START_TEST(batch_due_when_the_list_may_be_full)
{
    /* Count not known yet (the extent is not published): look. */
    ck_assert_int_eq(rs_listclose_batch_due(3, 0, 0, 0, 100), 1);
    /* Known and below max_entries: wait for the tick. */
    ck_assert_int_eq(rs_listclose_batch_due(3, 1, 0, 0, 100), 0);
    ck_assert_int_eq(rs_listclose_batch_due(3, 1, 2, 100, 100), 0);
    /* Full or beyond: look. */
    ck_assert_int_eq(rs_listclose_batch_due(3, 1, 3, 0, 100), 1);
    ck_assert_int_eq(rs_listclose_batch_due(3, 1, 50000, 0, 100), 1);
    /* Its entries past the bytes a list may take: look; bytes unknown or
     * no byte limit known yet: the tick measures. */
    ck_assert_int_eq(rs_listclose_batch_due(3, 1, 2, 101, 100), 1);
    ck_assert_int_eq(rs_listclose_batch_due(3, 1, 2, -1, 100), 0);
    ck_assert_int_eq(rs_listclose_batch_due(3, 1, 2, 101, 0), 0);
}
END_TEST

START_TEST(cut_across_pages)
{
    lf_t f;
    rs_listclose_cut_t cut;
    apr_int64_t first;

    lf_init(&f, 1000);
    first = append_n(&f, 1001) - 1000;
    /* The 1,000th record ends the list; the 1,001st, on the second page of
     * 1,000, gives its until. */
    ck_assert_int_eq(rs_listclose_cut(ut_pool, f.j, "s", first, 1000, NULL, 0, 0, &cut),
                     APR_SUCCESS);
    ck_assert_int_eq(cut.last_seq, first + 999);
    ck_assert_int_eq(cut.count, 1000);
    ck_assert_int_eq(cut.bytes, 0);
    ck_assert_int_eq(cut.until, record(&f, first + 1000)->datetime);
    /* A short cut inside the first page. */
    ck_assert_int_eq(rs_listclose_cut(ut_pool, f.j, "s", first + 10, 3, NULL, 0, 0, &cut),
                     APR_SUCCESS);
    ck_assert_int_eq(cut.last_seq, first + 12);
    ck_assert_int_eq(cut.until, record(&f, first + 13)->datetime);
    /* No record after the n-th: nothing to cut. */
    ck_assert_int_eq(rs_listclose_cut(ut_pool, f.j, "s", first, 1001, NULL, 0, 0, &cut),
                     APR_SUCCESS);
    ck_assert_int_eq(cut.last_seq, 0);
    ck_assert_int_eq(cut.count, 1001);
    ck_assert_int_eq(rs_listclose_cut(ut_pool, f.j, "s", first + 1, 1000, NULL, 0, 0, &cut),
                     APR_SUCCESS);
    ck_assert_int_eq(cut.last_seq, 0);
    /* Another set's records do not count. */
    ck_assert_int_eq(rs_listclose_cut(ut_pool, f.j, "t", 1, 1, NULL, 0, 0, &cut), APR_SUCCESS);
    ck_assert_int_eq(cut.last_seq, 0);
}
END_TEST

/* The rendered length of record seq's entry. */
static apr_int64_t entry_len(lf_t *f, rs_entry_renderer_t *rr, apr_int64_t seq)
{
    apr_size_t len = 0;
    ck_assert_ptr_nonnull(rs_entry_render(rr, record(f, seq), &len));
    return (apr_int64_t)len;
}

START_TEST(cut_by_bytes)
{
    lf_t f;
    rs_listclose_cut_t cut;
    rs_entry_renderer_t *rr;
    apr_int64_t first, two;

    lf_init(&f, 1000);
    rr = rs_entry_renderer_create(ut_pool, &f.o.entry);
    ck_assert_ptr_nonnull(rr);
    first = append_n(&f, 1500) - 1499;
    two = entry_len(&f, rr, first) + entry_len(&f, rr, first + 1);
    /* Room for two entries and not for three: the list ends after the
     * second, whatever n allows. */
    ck_assert_int_eq(rs_listclose_cut(ut_pool, f.j, "s", first, 1000, rr, 0,
                                      two + entry_len(&f, rr, first + 2) - 1, &cut),
                     APR_SUCCESS);
    ck_assert_int_eq(cut.last_seq, first + 1);
    ck_assert_int_eq(cut.count, 2);
    ck_assert_int_eq(cut.bytes, two);
    ck_assert_int_eq(cut.until, record(&f, first + 2)->datetime);
    /* Exactly full: the third fits. */
    ck_assert_int_eq(rs_listclose_cut(ut_pool, f.j, "s", first, 1000, rr, 0,
                                      two + entry_len(&f, rr, first + 2), &cut),
                     APR_SUCCESS);
    ck_assert_int_eq(cut.count, 3);
    /* With Change Dumps each entry also counts its manifest path: the same
     * room holds two, and the bytes are the manifest's. */
    ck_assert_int_eq(rs_listclose_cut(ut_pool, f.j, "s", first, 1000, rr, 1,
                                      two + entry_len(&f, rr, first + 2), &cut),
                     APR_SUCCESS);
    ck_assert_int_eq(cut.count, 2);
    ck_assert_int_eq(cut.bytes, two + rs_cdump_path_len(ut_pool, record(&f, first))
                                    + rs_cdump_path_len(ut_pool, record(&f, first + 1)));
    /* An entry larger than the room still makes a list of its own. */
    ck_assert_int_eq(rs_listclose_cut(ut_pool, f.j, "s", first, 1000, rr, 0, 1, &cut), APR_SUCCESS);
    ck_assert_int_eq(cut.count, 1);
    ck_assert_int_eq(cut.last_seq, first);
    /* Room enough: n decides, across pages. */
    ck_assert_int_eq(rs_listclose_cut(ut_pool, f.j, "s", first, 1200, rr, 0, APR_INT64_MAX, &cut),
                     APR_SUCCESS);
    ck_assert_int_eq(cut.count, 1200);
    ck_assert_int_eq(cut.last_seq, first + 1199);
    /* Nothing closes: the bytes of every record read. */
    ck_assert_int_eq(
        rs_listclose_cut(ut_pool, f.j, "s", first + 1498, 1000, rr, 0, APR_INT64_MAX, &cut),
        APR_SUCCESS);
    ck_assert_int_eq(cut.last_seq, 0);
    ck_assert_int_eq(cut.count, 2);
    ck_assert_int_eq(cut.bytes, entry_len(&f, rr, first + 1498) + entry_len(&f, rr, first + 1499));
}
END_TEST

START_TEST(full_closes_before_the_bytes_pass)
{
    lf_t f;
    apr_array_header_t *closed;
    rs_changelist_t openl;
    rs_entry_renderer_t *rr;
    apr_int64_t first, bytes = -1, total = 0, seq;
    int closed_some = 0, i;

    lf_init(&f, 1000);
    rr = rs_entry_renderer_create(ut_pool, &f.o.entry);
    first = append_n(&f, 10) - 9;
    /* Entries of one length (d/f0.txt .. d/f9.txt, lengths 0 .. 9):
     * room for three. */
    f.c.entry = &f.o.entry;
    f.c.max_bytes = entry_len(&f, rr, first) * 3;
    for (seq = first; seq < first + 10; seq++) {
        total += entry_len(&f, rr, seq);
    }
    /* The open list's bytes unknown: measured, lists closed. */
    ck_assert_int_eq(rs_listclose_full(ut_pool, f.j, &f.c, &bytes, &closed_some), APR_SUCCESS);
    ck_assert_int_eq(closed_some, 1);
    lists(&f, &closed, &openl);
    ck_assert_int_ge(closed->nelts, 3);
    for (i = 0; i < closed->nelts; i++) {
        const rs_changelist_t *cl = &APR_ARRAY_IDX(closed, i, rs_changelist_t);
        apr_int64_t b = 0;
        for (seq = cl->first_seq; seq <= cl->last_seq; seq++) {
            b += entry_len(&f, rr, seq);
        }
        ck_assert_int_le(b, f.c.max_bytes);
        /* ... and the next record would not have fitted. */
        ck_assert_int_gt(b + entry_len(&f, rr, cl->last_seq + 1), f.c.max_bytes);
        ck_assert_int_eq(cl->count, cl->last_seq - cl->first_seq + 1);
        ck_assert_int_eq(cl->until, record(&f, cl->last_seq + 1)->datetime);
        total -= b;
    }
    /* What stays open fits, and its bytes are known. */
    ck_assert_int_eq(bytes, total);
    ck_assert_int_le(bytes, f.c.max_bytes);
    ck_assert_int_eq(openl.first_seq,
                     APR_ARRAY_IDX(closed, closed->nelts - 1, rs_changelist_t).last_seq + 1);

    /* Known bytes within the room: nothing read, nothing closed. */
    closed_some = 0;
    ck_assert_int_eq(rs_listclose_full(ut_pool, f.j, &f.c, &bytes, &closed_some), APR_SUCCESS);
    ck_assert_int_eq(closed_some, 0);
    /* Without a renderer, bytes play no part. */
    f.c.entry = NULL;
    bytes = APR_INT64_MAX;
    append_n(&f, 5);
    ck_assert_int_eq(rs_listclose_full(ut_pool, f.j, &f.c, &bytes, &closed_some), APR_SUCCESS);
    ck_assert_int_eq(closed_some, 0);
}
END_TEST

START_TEST(full_closes_at_record_boundaries)
{
    lf_t f;
    apr_array_header_t *closed;
    rs_changelist_t openl;
    apr_int64_t last, nobytes = -1;
    int closed_some = 0, i;

    lf_init(&f, 3);
    /* Exactly max_entries: full, but the cut waits for the next record. */
    last = append_n(&f, 3);
    ck_assert_int_eq(rs_listclose_full(ut_pool, f.j, &f.c, &nobytes, &closed_some), APR_SUCCESS);
    ck_assert_int_eq(closed_some, 0);
    lists(&f, &closed, &openl);
    ck_assert_int_eq(closed->nelts, 0);
    ck_assert_int_eq(openl.count, 3);

    /* 8 records: two lists of 3 close, 2 stay open. */
    last = append_n(&f, 5);
    ck_assert_int_eq(rs_listclose_full(ut_pool, f.j, &f.c, &nobytes, &closed_some), APR_SUCCESS);
    ck_assert_int_eq(closed_some, 1);
    lists(&f, &closed, &openl);
    ck_assert_int_eq(closed->nelts, 2);
    for (i = 0; i < 2; i++) {
        const rs_changelist_t *cl = &APR_ARRAY_IDX(closed, i, rs_changelist_t);
        ck_assert_int_eq(cl->id, i + 1);
        ck_assert_int_eq(cl->count, 3);
        ck_assert_int_eq(cl->first_seq, last - 7 + 3 * i);
        ck_assert_int_eq(cl->last_seq, last - 5 + 3 * i);
        /* until: the datetime of the next record, which opens the next. */
        ck_assert_int_eq(cl->until, record(&f, cl->last_seq + 1)->datetime);
    }
    ck_assert_int_eq(APR_ARRAY_IDX(closed, 0, rs_changelist_t).from, f.t0);
    ck_assert_int_eq(openl.id, 3);
    ck_assert_int_eq(openl.count, 2);
    ck_assert_int_eq(openl.first_seq, last - 1);
    ck_assert_int_eq(openl.from, APR_ARRAY_IDX(closed, 1, rs_changelist_t).until);
}
END_TEST

START_TEST(on_time_closes_the_whole_list)
{
    lf_t f;
    apr_array_header_t *closed;
    rs_changelist_t openl;
    apr_time_t now;
    int closed_some = 0;

    lf_init(&f, 3);
    /* Empty and long past its period: stays open. */
    ck_assert_int_eq(rs_listclose_on_time(ut_pool, f.j, &f.c, f.t0 + SEC(3600), &closed_some),
                     APR_SUCCESS);
    ck_assert_int_eq(closed_some, 0);
    append_n(&f, 2);
    lists(&f, &closed, &openl);
    /* Before the end of its period: stays open. */
    ck_assert_int_eq(
        rs_listclose_on_time(ut_pool, f.j, &f.c, openl.from + SEC(60) - 1, &closed_some),
        APR_SUCCESS);
    ck_assert_int_eq(closed_some, 0);
    lists(&f, &closed, &openl);
    ck_assert_int_eq(closed->nelts, 0);
    /* Its period ended: closed at now, all of it. */
    now = apr_time_now() + SEC(5);
    ck_assert_int_eq(rs_listclose_on_time(ut_pool, f.j, &f.c, now, &closed_some), APR_SUCCESS);
    ck_assert_int_eq(closed_some, 1);
    lists(&f, &closed, &openl);
    ck_assert_int_eq(closed->nelts, 1);
    ck_assert_int_eq(APR_ARRAY_IDX(closed, 0, rs_changelist_t).count, 2);
    ck_assert_int_eq(APR_ARRAY_IDX(closed, 0, rs_changelist_t).until, now);
    ck_assert_int_eq(openl.count, 0);
    ck_assert_int_eq(openl.from, now);

    /* Full (max_entries) within its period: closed too. */
    closed_some = 0;
    append_n(&f, 3);
    lists(&f, &closed, &openl);
    now = openl.from > apr_time_now() ? openl.from : apr_time_now();
    now += SEC(1);
    ck_assert_int_lt(now - openl.from, f.c.period);
    ck_assert_int_eq(rs_listclose_on_time(ut_pool, f.j, &f.c, now, &closed_some), APR_SUCCESS);
    ck_assert_int_eq(closed_some, 1);
    lists(&f, &closed, &openl);
    ck_assert_int_eq(closed->nelts, 2);
    ck_assert_int_eq(APR_ARRAY_IDX(closed, 1, rs_changelist_t).count, 3);
}
END_TEST

START_TEST(expire_drops_old_lists_and_files)
{
    lf_t f;
    apr_array_header_t *closed;
    rs_changelist_t openl, done;
    apr_time_t until1, until2;
    int dropped = 0;

    lf_init(&f, 100);
    ck_assert_int_eq(apr_dir_make_recursive(f.c.dir, APR_FPROT_OS_DEFAULT, ut_pool), APR_SUCCESS);
    append_n(&f, 2);
    until1 = apr_time_now() + SEC(1);
    ck_assert_int_eq(rs_journal_close(f.j, ut_pool, "s", -1, 0, until1, &done), APR_SUCCESS);
    append_n(&f, 1);
    until2 = until1 + SEC(100);
    ck_assert_int_eq(rs_journal_close(f.j, ut_pool, "s", -1, 0, until2, &done), APR_SUCCESS);
    ut_write_str(list_path(&f, 1), "one");
    ut_write_str(list_path(&f, 2), "two");

    /* Both within retention: nothing goes, nothing logged. */
    rs_listclose_expire(ut_pool, f.j, &f.c, "h1", until1 + f.c.retention, f.log, &dropped);
    ck_assert_int_eq(dropped, 0);
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
    ck_assert(ut_exists(list_path(&f, 1)));

    /* The first ended more than retention ago: it goes, with its file. */
    rs_listclose_expire(ut_pool, f.j, &f.c, "h1", until1 + f.c.retention + 1, f.log, &dropped);
    ck_assert_int_eq(dropped, 1);
    ck_assert(!ut_exists(list_path(&f, 1)));
    ck_assert(ut_exists(list_path(&f, 2)));
    ck_assert_int_eq(f.ul.msgs->nelts, 1);
    ck_assert_int_eq(ut_log_count(&f.ul, apr_psprintf(ut_pool,
                                                      "%d: set s: 1 Change Lists "
                                                      "expired",
                                                      RS_LOG_INFO)),
                     1);
    lists(&f, &closed, &openl);
    ck_assert_int_eq(closed->nelts, 1);
    ck_assert_int_eq(APR_ARRAY_IDX(closed, 0, rs_changelist_t).id, 2);
}
END_TEST

START_TEST(expire_keeps_what_the_index_may_name)
{
    lf_t f;
    apr_array_header_t *closed;
    rs_changelist_t openl, done;
    apr_time_t until = apr_time_now();
    apr_time_t from0;
    int dropped = 0, i;

    lf_init(&f, 100);
    f.c.index_max = 3; /* the open list and two closed ones */
    ck_assert_int_eq(apr_dir_make_recursive(f.c.dir, APR_FPROT_OS_DEFAULT, ut_pool), APR_SUCCESS);
    for (i = 1; i <= 5; i++) {
        append_n(&f, 1);
        until += SEC(1);
        ck_assert_int_eq(rs_journal_close(f.j, ut_pool, "s", -1, 0, until, &done), APR_SUCCESS);
        ut_write_str(list_path(&f, i), "list");
    }
    append_n(&f, 1);
    /* Within time retention; two lists beyond the count: the oldest two
     * go with their files, once, said with the limit. */
    rs_listclose_expire(ut_pool, f.j, &f.c, "h1", until, f.log, &dropped);
    ck_assert_int_eq(dropped, 1);
    lists(&f, &closed, &openl);
    ck_assert_int_eq(closed->nelts, 2);
    ck_assert_int_eq(APR_ARRAY_IDX(closed, 0, rs_changelist_t).id, 4);
    ck_assert_int_eq(openl.count, 1);
    ck_assert(!ut_exists(list_path(&f, 3)) && ut_exists(list_path(&f, 4)));
    ck_assert_int_eq(ut_log_count(&f.ul, "set s: 3 Change Lists left the Change List Index (it "
                                         "names at most 3 lists)"),
                     1);
    ck_assert_int_eq(f.ul.msgs->nelts, 1);
    /* The journal starts where the last dropped list ended: the index's
     * from moves with it. */
    from0 = APR_ARRAY_IDX(closed, 0, rs_changelist_t).from;
    {
        apr_time_t start;
        ck_assert_int_eq(rs_journal_start(f.j, "s", &start), APR_SUCCESS);
        ck_assert_int_eq(start, from0);
    }
    /* At the limit: nothing more goes. */
    dropped = 0;
    rs_listclose_expire(ut_pool, f.j, &f.c, "h1", until, f.log, &dropped);
    ck_assert_int_eq(dropped, 0);
    /* Time retention first, then the count: both said. */
    f.c.index_max = 2;
    rs_listclose_expire(ut_pool, f.j, &f.c, "h1",
                        APR_ARRAY_IDX(closed, 0, rs_changelist_t).until + f.c.retention + 1, f.log,
                        &dropped);
    ck_assert_int_eq(dropped, 1);
    lists(&f, &closed, &openl);
    ck_assert_int_eq(closed->nelts, 1);
    ck_assert_int_eq(APR_ARRAY_IDX(closed, 0, rs_changelist_t).id, 5);
    ck_assert_int_eq(ut_log_count(&f.ul, "set s: 1 Change Lists expired"), 1);
    /* Without index_max, max_entries is the count. */
    f.c.index_max = 0;
    f.c.max_entries = 1;
    rs_listclose_expire(ut_pool, f.j, &f.c, "h1", until, f.log, &dropped);
    lists(&f, &closed, &openl);
    ck_assert_int_eq(closed->nelts, 0);
    ck_assert_int_eq(openl.count, 1);
}
END_TEST

/* The bytes of the Change List Index of n closed lists of the longest
 * ids and times. */
static apr_size_t index_len(lf_t *f, int n)
{
    apr_array_header_t *closed = apr_array_make(ut_pool, n, sizeof(rs_changelist_t));
    rs_changelist_t open;
    ut_buf_t b;
    rs_xml_t *w;
    int i;

    memset(&open, 0, sizeof(open));
    for (i = 0; i < n; i++) {
        rs_changelist_t *cl = apr_array_push(closed);
        memset(cl, 0, sizeof(*cl));
        cl->id = APR_INT64_MAX - n + i;
        /* Six fractional digits, none of them a trailing 0. */
        cl->from = apr_time_from_sec(1700000000) + 10 * i + 1;
        cl->until = cl->from + 2;
    }
    open.id = APR_INT64_MAX;
    open.from = apr_time_from_sec(1700000000) + 10 * n + 1;
    memset(&b, 0, sizeof(b));
    w = rs_xml_open(ut_pool, ut_buf_sink, &b);
    ck_assert_int_eq(rs_changelist_write_index(&f->o, closed, &open, w, ut_pool), APR_SUCCESS);
    return b.len;
}

START_TEST(limits_in_bytes)
{
    lf_t f;
    rs_changelist_frame_t fr;
    rs_changelist_t cl;
    char *prefix;
    int cap;

    lf_init(&f, 50000);
    /* A closed list: its frame and the budget make 50 MB. */
    memset(&cl, 0, sizeof(cl));
    cl.from = apr_time_from_sec(1700000000) + 1;
    cl.until = cl.from + 1;
    ck_assert_int_eq(rs_changelist_frame(&f.o, &cl, ut_pool, &fr), APR_SUCCESS);
    ck_assert_int_eq(rs_listclose_budget(&f.o, ut_pool) + (apr_int64_t)(fr.head_len + fr.tail_len),
                     RS_XML_MAX_BYTES);
    /* Short URLs: the index may name max_entries lists. */
    ck_assert_int_eq(rs_listclose_index_cap(&f.o, 50000, ut_pool), 50000);
    ck_assert_int_eq(rs_listclose_index_cap(&f.o, 3, ut_pool), 3);
    /* List URLs of 4,000 bytes: fewer, and an index of that many fits
     * in 50 MB where one more would not. */
    prefix = apr_palloc(ut_pool, 4001);
    memset(prefix, 'a', 4000);
    prefix[4000] = 0;
    f.o.list_url_prefix = apr_pstrcat(ut_pool, "http://example.org/", prefix, NULL);
    cap = rs_listclose_index_cap(&f.o, 50000, ut_pool);
    ck_assert_int_lt(cap, 50000);
    ck_assert_int_gt(cap, 1000);
    ck_assert_int_le(index_len(&f, cap - 1), RS_XML_MAX_BYTES);
    ck_assert_int_gt(index_len(&f, cap), RS_XML_MAX_BYTES);
}
END_TEST

START_TEST(update_writes_closed_lists_then_extent_then_index)
{
    lf_t f;
    apr_array_header_t *closed;
    rs_changelist_t openl;
    size_t len, elen;
    char *got, *exp;
    int i;
    xmlDocPtr idx;

    lf_init(&f, 3);
    append_n(&f, 7);
    /* now: within the open list's period. */
    ck_assert_int_eq(
        rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, "h1", &f.o, &f.io, apr_time_now(), f.log),
        APR_SUCCESS);
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
    lists(&f, &closed, &openl);
    ck_assert_int_eq(closed->nelts, 2);
    ck_assert_int_eq(openl.count, 1);
    /* Each closed list's file: the document of its records. */
    for (i = 0; i < closed->nelts; i++) {
        const rs_changelist_t *cl = &APR_ARRAY_IDX(closed, i, rs_changelist_t);
        got = ut_read(list_path(&f, cl->id), &len);
        exp = expected_list(&f, cl, &elen);
        ck_assert_uint_eq(len, elen);
        ck_assert_mem_eq(got, exp, len);
    }
    ck_assert_int_eq(f.sources, 2);
    /* The extent was published after the list files, before the index. */
    ck_assert_int_eq(f.pub.calls, 1);
    ck_assert_int_eq(f.pub.openl.id, openl.id);
    ck_assert_int_eq(f.pub.openl.count, 1);
    ck_assert_int_eq(f.pub.closed_files, 2);
    ck_assert_int_eq(f.pub.index_existed, 0);
    /* The index: both closed lists, then the open one. */
    idx = ut_xml_parse_file(ut_path(f.c.dir, "index.xml"));
    ck_assert_int_eq(ut_xml_count(xmlDocGetRootElement(idx), UT_NS_SM, "sitemap"), 3);
    ck_assert_int_eq(f.lc.index_written, 1);
}
END_TEST

START_TEST(update_writes_each_file_when_needed)
{
    lf_t f;
    const char *index;
    apr_array_header_t *closed;
    rs_changelist_t openl;
    size_t len;

    lf_init(&f, 3);
    index = ut_path(f.c.dir, "index.xml");
    append_n(&f, 7);
    ck_assert_int_eq(
        rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, "h1", &f.o, &f.io, apr_time_now(), f.log),
        APR_SUCCESS);
    /* Nothing closed since: neither a list nor the index is written
     * again. */
    ut_write_str(index, "kept");
    ut_write_str(list_path(&f, 1), "kept 1");
    f.sources = 0;
    ck_assert_int_eq(
        rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, "h1", &f.o, &f.io, apr_time_now(), f.log),
        APR_SUCCESS);
    ck_assert_str_eq(ut_read(index, &len), "kept");
    ck_assert_str_eq(ut_read(list_path(&f, 1), &len), "kept 1");
    ck_assert_int_eq(f.sources, 0);
    ck_assert_int_eq(f.pub.calls, 2);
    /* A list file missing (a crash after the close): written again; the
     * index stays. */
    ck_assert_int_eq(apr_file_remove(list_path(&f, 2), ut_pool), APR_SUCCESS);
    ck_assert_int_eq(
        rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, "h1", &f.o, &f.io, apr_time_now(), f.log),
        APR_SUCCESS);
    ck_assert(ut_exists(list_path(&f, 2)));
    ck_assert_int_eq(f.sources, 1);
    ck_assert_str_eq(ut_read(index, &len), "kept");
    /* The index missing: written again. */
    ck_assert_int_eq(apr_file_remove(index, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(
        rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, "h1", &f.o, &f.io, apr_time_now(), f.log),
        APR_SUCCESS);
    ck_assert_int_ne(strcmp(ut_read(index, &len), "kept"), 0);
    /* A new watcher (its state zeroed) writes the index once. */
    ut_write_str(index, "kept");
    memset(&f.lc, 0, sizeof(f.lc));
    ck_assert_int_eq(
        rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, "h1", &f.o, &f.io, apr_time_now(), f.log),
        APR_SUCCESS);
    ck_assert_int_ne(strcmp(ut_read(index, &len), "kept"), 0);
    ut_write_str(index, "kept");
    ck_assert_int_eq(
        rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, "h1", &f.o, &f.io, apr_time_now(), f.log),
        APR_SUCCESS);
    ck_assert_str_eq(ut_read(index, &len), "kept");
    /* The period of the open list ended: it closes, the index is
     * rewritten with it. */
    lists(&f, &closed, &openl);
    ck_assert_int_eq(rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, "h1", &f.o, &f.io,
                                         apr_time_now() + f.c.period, f.log),
                     APR_SUCCESS);
    ck_assert(ut_exists(list_path(&f, openl.id)));
    ck_assert_int_ne(strcmp(ut_read(index, &len), "kept"), 0);
    ck_assert_int_eq(f.ul.msgs->nelts, 0);
}
END_TEST

START_TEST(update_expires_and_rewrites_the_index)
{
    lf_t f;
    const char *index;
    apr_time_t now;
    size_t len;

    lf_init(&f, 3);
    index = ut_path(f.c.dir, "index.xml");
    append_n(&f, 4);
    now = apr_time_now();
    ck_assert_int_eq(rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, "h1", &f.o, &f.io, now, f.log),
                     APR_SUCCESS);
    ck_assert(ut_exists(list_path(&f, 1)));
    ut_write_str(index, "kept");
    /* Retention later: list 1 goes with its file, the index is rewritten
     * without it (the open list, closed on time at the same update, is
     * the only closed one left). */
    now += f.c.retention + SEC(10);
    ck_assert_int_eq(rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, "h1", &f.o, &f.io, now, f.log),
                     APR_SUCCESS);
    ck_assert(!ut_exists(list_path(&f, 1)));
    ck_assert(ut_exists(list_path(&f, 2)));
    ck_assert_int_eq(ut_log_count(&f.ul, "set s: 1 Change Lists expired"), 1);
    ck_assert_int_eq(
        ut_xml_count(xmlDocGetRootElement(ut_xml_parse_file(index)), UT_NS_SM, "sitemap"), 2);
    (void)len;
}
END_TEST

START_TEST(update_reports_files_it_cannot_write)
{
    lf_t f;
    const char *index;
    apr_array_header_t *closed;
    rs_changelist_t openl;

    lf_init(&f, 3);
    index = ut_path(f.c.dir, "index.xml");
    append_n(&f, 10);
    /* List 2's records cannot be read: list 1 is written, list 2 fails
     * with its cause, list 3 waits, the extent and the index too. */
    lists(&f, &closed, &openl);
    f.fail_seq = openl.first_seq + 4;
    ck_assert_int_ne(
        rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, "h1", &f.o, &f.io, apr_time_now(), f.log),
        APR_SUCCESS);
    ck_assert(ut_exists(list_path(&f, 1)));
    ck_assert(!ut_exists(list_path(&f, 3)));
    ck_assert_int_eq(f.pub.calls, 0);
    ck_assert(!ut_exists(index));
    ck_assert_int_eq(f.ul.nerr, 1);
    ck_assert_int_eq(ut_log_count(&f.ul, apr_psprintf(ut_pool,
                                                      "set s: cannot write Change "
                                                      "List %s",
                                                      list_path(&f, 2))),
                     1);
    /* Readable again: the next update writes what is missing. */
    f.fail_seq = 0;
    ck_assert_int_eq(
        rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, "h1", &f.o, &f.io, apr_time_now(), f.log),
        APR_SUCCESS);
    ck_assert(ut_exists(list_path(&f, 2)));
    ck_assert(ut_exists(list_path(&f, 3)));
    ck_assert(ut_exists(index));

    /* The index cannot be written (a new watcher must write it): its
     * error. */
    ck_assert_int_eq(apr_file_remove(index, ut_pool), APR_SUCCESS);
    ut_mkdir(index);
    ut_write_str(ut_path(index, "x"), "x");
    memset(&f.lc, 0, sizeof(f.lc));
    ck_assert_int_ne(
        rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, "h1", &f.o, &f.io, apr_time_now(), f.log),
        APR_SUCCESS);
    ck_assert_int_eq(f.ul.nerr, 2);
    ck_assert_int_eq(ut_log_count(&f.ul, "set s: cannot write its Change List Index"), 1);
}
END_TEST

START_TEST(legacy_open_list_files_go)
{
    const char *dir = ut_tempdir("legacy");
    ut_write_str(ut_path(dir, "open-1.xml"), "x");
    ut_write_str(ut_path(dir, "open-state"), "x");
    ut_write_str(ut_path(dir, "h1-1.xml"), "x");
    ut_write_str(ut_path(dir, "index.xml"), "x");
    rs_listclose_remove_legacy(ut_pool, dir);
    ck_assert(!ut_exists(ut_path(dir, "open-1.xml")));
    ck_assert(!ut_exists(ut_path(dir, "open-state")));
    ck_assert(ut_exists(ut_path(dir, "h1-1.xml")));
    ck_assert(ut_exists(ut_path(dir, "index.xml")));
    /* No directory: nothing to do. */
    rs_listclose_remove_legacy(ut_pool, ut_path(dir, "none"));
}
END_TEST

/* The modification time of the file at path (µs). */
static apr_time_t mtime_of(const char *path)
{
    apr_finfo_t fi;
    ck_assert_int_eq(apr_stat(&fi, path, APR_FINFO_MTIME, ut_pool), APR_SUCCESS);
    return fi.mtime;
}

/* Whether the files named name in dirs a and b hold the same bytes and
 * have the same mtime. */
static void same_file(const char *a, const char *b, const char *name)
{
    size_t la, lb;
    char *x = ut_read(ut_path(a, name), &la), *y = ut_read(ut_path(b, name), &lb);
    ck_assert_uint_eq(la, lb);
    ck_assert_mem_eq(x, y, la);
    ck_assert_int_eq(mtime_of(ut_path(a, name)), mtime_of(ut_path(b, name)));
}

/* A closed list's file has its until as mtime, the index the open list's
 * from: the same on every node that writes them from one store. */
START_TEST(files_have_the_stores_times)
{
    lf_t f;
    apr_array_header_t *closed;
    rs_changelist_t openl;
    int i;

    lf_init(&f, 3);
    append_n(&f, 7);
    ck_assert_int_eq(
        rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, "h1", &f.o, &f.io, apr_time_now(), f.log),
        APR_SUCCESS);
    lists(&f, &closed, &openl);
    ck_assert_int_eq(closed->nelts, 2);
    for (i = 0; i < closed->nelts; i++) {
        const rs_changelist_t *cl = &APR_ARRAY_IDX(closed, i, rs_changelist_t);
        ck_assert_int_eq(mtime_of(list_path(&f, cl->id)), cl->until);
        ck_assert_int_eq(rs_listclose_mtime(cl), cl->until);
    }
    ck_assert_int_eq(mtime_of(ut_path(f.c.dir, "index.xml")), openl.from);
    ck_assert_int_eq(rs_listclose_index_mtime(&openl, 0), openl.from);
}
END_TEST

/* Retention drops a list and nothing closes: the index loses an entry,
 * and its mtime moves to the time of the drop (not later), so that a
 * client revalidating by date gets the new bytes.  A follower of the same
 * store writes the same bytes and mtime; a writer that writes the index
 * again (a restart) or an update that changes nothing keeps it. */
START_TEST(expiry_moves_the_index_mtime)
{
    lf_t f;
    rs_listfollow_t lf;
    rs_listclose_conf_t fc;
    rs_listclose_t fresh;
    apr_array_header_t *closed;
    rs_changelist_t openl;
    const char *index;
    apr_time_t now, before, until1;

    lf_init(&f, 3);
    index = ut_path(f.c.dir, "index.xml");
    fc = f.c;
    fc.dir = ut_path(ut_tempdir("follower"), "changelists/s");
    memset(&lf, 0, sizeof(lf));
    /* Two closed lists (the second on time at once), the open one empty. */
    append_n(&f, 6);
    now = apr_time_now();
    ck_assert_int_eq(rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, "h1", &f.o, &f.io, now, f.log),
                     APR_SUCCESS);
    lists(&f, &closed, &openl);
    ck_assert_int_eq(closed->nelts, 2);
    ck_assert_int_eq(openl.count, 0);
    until1 = APR_ARRAY_IDX(closed, 0, rs_changelist_t).until;
    before = mtime_of(index);
    ck_assert_int_eq(before, openl.from);
    ck_assert_int_eq(rs_listfollow_update(&lf, ut_pool, f.j, &fc, "h1", &f.o, &f.io, 1, f.log),
                     APR_SUCCESS);
    same_file(f.c.dir, fc.dir, "index.xml");
    /* List 1 ends before the cutoff, list 2 after it. */
    now = until1 + f.c.retention + 1;
    ck_assert_int_eq(rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, "h1", &f.o, &f.io, now, f.log),
                     APR_SUCCESS);
    ck_assert_int_eq(ut_log_count(&f.ul, "set s: 1 Change Lists expired"), 1);
    lists(&f, &closed, &openl);
    ck_assert_int_eq(closed->nelts, 1);
    ck_assert_int_gt(mtime_of(index), before);
    ck_assert_int_eq(mtime_of(index), now);
    ck_assert_int_eq(rs_listfollow_update(&lf, ut_pool, f.j, &fc, "h1", &f.o, &f.io, 0, f.log),
                     APR_SUCCESS);
    same_file(f.c.dir, fc.dir, "index.xml");
    /* Nothing changes: a later update, a new watcher, a seeding follower. */
    ck_assert_int_eq(
        rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, "h1", &f.o, &f.io, now + 1, f.log),
        APR_SUCCESS);
    ck_assert_int_eq(mtime_of(index), now);
    memset(&fresh, 0, sizeof(fresh));
    ck_assert_int_eq(
        rs_listclose_update(&fresh, ut_pool, f.j, &f.c, "h1", &f.o, &f.io, now + 2, f.log),
        APR_SUCCESS);
    ck_assert_int_eq(mtime_of(index), now);
    ck_assert_int_eq(rs_listfollow_update(&lf, ut_pool, f.j, &fc, "h1", &f.o, &f.io, 1, f.log),
                     APR_SUCCESS);
    same_file(f.c.dir, fc.dir, "index.xml");
    /* A close later: the open list's from, past the drop, again. */
    append_n(&f, 1);
    ck_assert_int_eq(
        rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, "h1", &f.o, &f.io, now + f.c.period, f.log),
        APR_SUCCESS);
    lists(&f, &closed, &openl);
    ck_assert_int_gt(openl.from, now);
    ck_assert_int_eq(mtime_of(index), openl.from);
}
END_TEST

#define H "0123abcd" /* a history */

/* A follower (its own directory, the writer's store) writes the writer's
 * files: seeded, after closes and after an expiry (the expired list's
 * file goes); seeding publishes after the index, a follow before it. */
START_TEST(follower_writes_the_writers_files)
{
    lf_t f;
    rs_listfollow_t lf;
    rs_listclose_conf_t fc;
    apr_array_header_t *closed;
    rs_changelist_t openl;
    const char *wdir;
    int i;

    lf_init(&f, 3);
    f.o.list_url_prefix = "http://example.org/rs/s/changelist/" H "-";
    wdir = f.c.dir;
    fc = f.c;
    fc.dir = ut_path(ut_tempdir("follower"), "changelists/s");
    memset(&lf, 0, sizeof(lf));
    append_n(&f, 7);
    ck_assert_int_eq(
        rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, H, &f.o, &f.io, apr_time_now(), f.log),
        APR_SUCCESS);
    /* A stale file of this history and one of another: only the first
     * goes (the store does not hold list 99). */
    ck_assert_int_eq(apr_dir_make_recursive(fc.dir, APR_FPROT_OS_DEFAULT, ut_pool), APR_SUCCESS);
    ut_write_str(ut_path(fc.dir, H "-99.xml"), "stale");
    ut_write_str(ut_path(fc.dir, "0123abce-1.xml"), "another history");
    f.pub.calls = 0;
    ck_assert_int_eq(rs_listfollow_update(&lf, ut_pool, f.j, &fc, H, &f.o, &f.io, 1, f.log),
                     APR_SUCCESS);
    lists(&f, &closed, &openl);
    ck_assert_int_eq(f.pub.calls, 1);
    ck_assert_int_eq(f.pub.index_existed, 1); /* seeding: the index first */
    ck_assert_int_eq(f.pub.openl.id, openl.id);
    ck_assert(!ut_exists(ut_path(fc.dir, H "-99.xml")));
    ck_assert(ut_exists(ut_path(fc.dir, "0123abce-1.xml")));
    same_file(wdir, fc.dir, "index.xml");
    for (i = 0; i < closed->nelts; i++) {
        const char *name = apr_psprintf(ut_pool, H "-%" APR_INT64_T_FMT ".xml",
                                        APR_ARRAY_IDX(closed, i, rs_changelist_t).id);
        same_file(wdir, fc.dir, name);
    }
    /* Nothing changed: only the publication. */
    ck_assert_int_eq(rs_listfollow_update(&lf, ut_pool, f.j, &fc, H, &f.o, &f.io, 0, f.log),
                     APR_SUCCESS);
    ck_assert_int_eq(f.pub.calls, 2);
    /* The writer closes two more lists and count retention drops the
     * oldest: the follower removes its file, writes the new ones, and
     * publishes before the index (which still names the old lists). */
    f.c.index_max = 3;
    fc.index_max = 3;
    append_n(&f, 6);
    ck_assert_int_eq(
        rs_listclose_update(&f.lc, ut_pool, f.j, &f.c, H, &f.o, &f.io, apr_time_now(), f.log),
        APR_SUCCESS);
    f.pub.calls = 0;
    ck_assert_int_eq(rs_listfollow_update(&lf, ut_pool, f.j, &fc, H, &f.o, &f.io, 0, f.log),
                     APR_SUCCESS);
    ck_assert_int_eq(f.pub.calls, 1);
    lists(&f, &closed, &openl);
    ck_assert_int_eq(closed->nelts, 2);
    ck_assert(!ut_exists(ut_path(wdir, H "-1.xml")));
    ck_assert(!ut_exists(ut_path(fc.dir, H "-1.xml")));
    same_file(wdir, fc.dir, "index.xml");
    for (i = 0; i < closed->nelts; i++) {
        const char *name = apr_psprintf(ut_pool, H "-%" APR_INT64_T_FMT ".xml",
                                        APR_ARRAY_IDX(closed, i, rs_changelist_t).id);
        same_file(wdir, fc.dir, name);
    }
}
END_TEST

Suite *listclose_suite(void)
{
    Suite *s = suite_create("rs_listclose");
    TCase *tc = ut_tcase("listclose", 60);
    tcase_add_test(tc, due_by_count_or_period);
    tcase_add_test(tc, batch_due_when_the_list_may_be_full);
    tcase_add_test(tc, cut_across_pages);
    tcase_add_test(tc, cut_by_bytes);
    tcase_add_test(tc, full_closes_before_the_bytes_pass);
    tcase_add_test(tc, full_closes_at_record_boundaries);
    tcase_add_test(tc, on_time_closes_the_whole_list);
    tcase_add_test(tc, expire_drops_old_lists_and_files);
    tcase_add_test(tc, expire_keeps_what_the_index_may_name);
    tcase_add_test(tc, limits_in_bytes);
    tcase_add_test(tc, update_writes_closed_lists_then_extent_then_index);
    tcase_add_test(tc, update_writes_each_file_when_needed);
    tcase_add_test(tc, update_expires_and_rewrites_the_index);
    tcase_add_test(tc, update_reports_files_it_cannot_write);
    tcase_add_test(tc, legacy_open_list_files_go);
    tcase_add_test(tc, files_have_the_stores_times);
    tcase_add_test(tc, follower_writes_the_writers_files);
    tcase_add_test(tc, expiry_moves_the_index_mtime);
    suite_add_tcase(s, tc);
    return s;
}
