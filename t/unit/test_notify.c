/* SPDX-License-Identifier: Apache-2.0 */
/* test_notify.c - rs_notify: the notification outbox (change and
 * framework notifications, sealing, continuity, pruning). */
#include <string.h>
#include <apr_strings.h>
#include <apr_time.h>
#include <libxml/xmlschemas.h>
#include "unit.h"
#include "rs_changelist.h"
#include "rs_hash.h"
#include "rs_journal.h"
#include "rs_notify.h"
#include "rs_notifydest.h"
#include "rs_recorder.h"
#include "rs_schema.h"
#include "rs_time.h"

#define BASE "http://example.org/files/"
#define CAP  "http://example.org/rs/s/capabilitylist.xml"
#define SD   "http://example.org/.well-known/resourcesync"
#define XSD  "t/xsd/resourcesync-lenient.xsd"

typedef struct {
    rs_db_t *db;
    rs_journal_t *j;
    rs_notify_t *n;
    ut_log_t ul;
    rs_notify_opts_t o;
} nf_t;

static void nf_init(nf_t *f, int max)
{
    const char *base = ut_tempdir("notify");
    memset(f, 0, sizeof(*f));
    ck_assert_int_eq(rs_schema_open(&f->db, ut_pool, ut_driver, ut_store(ut_path(base, "state.db")),
                                    ut_log_init(&f->ul)),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_journal_open(&f->j, f->db, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_notify_open(&f->n, f->db, f->j, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_begin_set(f->j, "s", apr_time_now() - apr_time_from_sec(10)),
                     APR_SUCCESS);
    f->o.set = "s";
    f->o.entry.url_base = BASE;
    f->o.entry.hashes = RS_HASH_MD5;
    f->o.capability_url = CAP;
    f->o.description_url = SD;
    f->o.max_entries = max;
}

/* k records of set "s" journaled and carried, in one transaction. */
static void record(nf_t *f, int k)
{
    int i;
    ck_assert_int_eq(rs_db_begin(f->db), APR_SUCCESS);
    for (i = 0; i < k; i++) {
        rs_record_t *r = apr_pcalloc(ut_pool, sizeof(*r));
        r->dir = "d";
        r->name = apr_psprintf(ut_pool, "f%d.txt", i);
        r->change = RS_CHANGE_UPDATED;
        r->lastmod_ns = 1600000000LL * 1000000000 + i;
        r->size = i;
        r->type = "text/plain";
        r->hash[0] = "900150983cd24fb0d6963f7d28e17f72";
        ck_assert_int_eq(rs_journal_append(f->j, "s", r), APR_SUCCESS);
        ck_assert_int_eq(rs_notify_extend(f->n, "s", r, f->o.max_entries), APR_SUCCESS);
    }
    ck_assert_int_eq(rs_db_commit(f->db), APR_SUCCESS);
}

static apr_array_header_t *all(nf_t *f, const char *topic)
{
    apr_array_header_t *a;
    ck_assert_int_eq(rs_notify_after(f->n, ut_pool, "s", topic, 0, 1000, &a), APR_SUCCESS);
    return a;
}

static void assert_valid(const rs_notification_t *x)
{
    xmlSchemaParserCtxtPtr pc = xmlSchemaNewParserCtxt(XSD);
    xmlSchemaPtr schema = xmlSchemaParse(pc);
    xmlSchemaValidCtxtPtr vc;
    ck_assert_ptr_nonnull(schema);
    vc = xmlSchemaNewValidCtxt(schema);
    ck_assert_int_eq(xmlSchemaValidateDoc(vc, ut_xml_parse(x->payload, x->payload_len)), 0);
    xmlSchemaFreeValidCtxt(vc);
    xmlSchemaFree(schema);
    xmlSchemaFreeParserCtxt(pc);
}

static const char *fmt(apr_time_t t)
{
    char buf[RS_TIME_BUFSIZE];
    return apr_pstrdup(ut_pool, rs_time_format(buf, t));
}

/* The entries of a payload: the bytes from its first <url> to </urlset>. */
static const char *entries(const rs_notification_t *x)
{
    const char *b = strstr(x->payload, "  <url>");
    const char *e = strstr(x->payload, "</urlset>");
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_nonnull(e);
    return apr_pstrmemdup(ut_pool, b, e - b);
}

/* The Change List of records first..last, as rs_changelist writes it. */
static const char *changelist(nf_t *f, apr_int64_t first, apr_int64_t last)
{
    rs_changelist_opts_t co;
    rs_changelist_t cl;
    ut_buf_t b;
    memset(&co, 0, sizeof(co));
    memset(&cl, 0, sizeof(cl));
    memset(&b, 0, sizeof(b));
    co.set = "s";
    co.entry = f->o.entry;
    co.capability_url = CAP;
    co.index_url = "i";
    co.list_url_prefix = "p";
    cl.first_seq = first;
    cl.last_seq = last;
    cl.from = 1;
    ck_assert_int_eq(
        rs_changelist_write(f->j, &co, &cl, rs_xml_open(ut_pool, ut_buf_sink, &b), ut_pool),
        APR_SUCCESS);
    return apr_pstrmemdup(ut_pool, b.data, b.len);
}

/* Notifications of the change topic: contiguous intervals, every record
 * of 1..records in exactly one, at most max each, valid payloads whose
 * entries are the Change List's bytes. */
static void assert_outbox(nf_t *f, apr_array_header_t *a, apr_int64_t records)
{
    const char *cl = changelist(f, 1, records);
    apr_int64_t next = 1;
    int i;
    for (i = 0; i < a->nelts; i++) {
        const rs_notification_t *x = &APR_ARRAY_IDX(a, i, rs_notification_t);
        xmlNodePtr root, md;
        ck_assert_int_eq(x->first_seq, next);
        ck_assert_int_eq(x->count, x->last_seq - x->first_seq + 1);
        ck_assert_int_le(x->count, f->o.max_entries);
        if (i > 0) {
            ck_assert_int_eq(x->from, APR_ARRAY_IDX(a, i - 1, rs_notification_t).until);
            ck_assert_int_gt(x->id, APR_ARRAY_IDX(a, i - 1, rs_notification_t).id);
        }
        next = x->last_seq + 1;
        assert_valid(x);
        root = xmlDocGetRootElement(ut_xml_parse(x->payload, x->payload_len));
        md = ut_xml_child(root, UT_NS_RS, "md", 0);
        ck_assert_str_eq(ut_xml_attr(md, "capability"), "change-notification");
        ck_assert_str_eq(ut_xml_attr(md, "from"), fmt(x->from));
        ck_assert_str_eq(ut_xml_attr(md, "until"), fmt(x->until));
        ck_assert_str_eq(ut_xml_attr(ut_xml_ln(root, "up"), "href"), CAP);
        ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), x->count);
        ck_assert_ptr_nonnull(strstr(cl, entries(x)));
    }
    ck_assert_int_eq(next, records + 1);
}

START_TEST(seal_after_quiet_time)
{
    nf_t f;
    apr_time_t due = 0;
    int sealed = -1, open = 0;

    nf_init(&f, 100);
    record(&f, 3);
    /* Not quiet yet: nothing sealed, the time it was last extended told. */
    ck_assert_int_eq(rs_notify_seal(f.n, ut_pool, &f.o, 0, &sealed, &due), APR_SUCCESS);
    ck_assert_int_eq(sealed, 0);
    ck_assert_int_gt(due, 0);
    ck_assert_int_eq(all(&f, RS_NOTIFY_CHANGE)->nelts, 0);
    ck_assert_int_eq(rs_notify_has_open(f.n, "s", &open), APR_SUCCESS);
    ck_assert_int_eq(open, 1);
    /* Quiet since then: sealed. */
    ck_assert_int_eq(rs_notify_seal(f.n, ut_pool, &f.o, due + 1, &sealed, &due), APR_SUCCESS);
    ck_assert_int_eq(sealed, 1);
    ck_assert_int_eq(due, 0);
    ck_assert_int_eq(rs_notify_has_open(f.n, "s", &open), APR_SUCCESS);
    ck_assert_int_eq(open, 0);
    assert_outbox(&f, all(&f, RS_NOTIFY_CHANGE), 3);
}
END_TEST

START_TEST(split_at_max_entries_and_continuity)
{
    nf_t f;
    apr_array_header_t *a;
    rs_notification_t latest;
    int sealed = 0;

    nf_init(&f, 2);
    record(&f, 5);
    /* Full ones are due at once, the last (one record) is not. */
    ck_assert_int_eq(rs_notify_seal(f.n, ut_pool, &f.o, 0, &sealed, NULL), APR_SUCCESS);
    ck_assert_int_eq(sealed, 2);
    record(&f, 2);
    ck_assert_int_eq(rs_notify_seal(f.n, ut_pool, &f.o, APR_INT64_MAX, &sealed, NULL), APR_SUCCESS);
    ck_assert_int_eq(sealed, 2);
    record(&f, 1);
    ck_assert_int_eq(rs_notify_seal(f.n, ut_pool, &f.o, APR_INT64_MAX, &sealed, NULL), APR_SUCCESS);
    ck_assert_int_eq(sealed, 1);
    a = all(&f, RS_NOTIFY_CHANGE);
    ck_assert_int_eq(a->nelts, 5);
    ck_assert_int_eq(APR_ARRAY_IDX(a, 2, rs_notification_t).count, 2); /* 5, 6 */
    assert_outbox(&f, a, 8);
    ck_assert_int_eq(rs_notify_latest(f.n, ut_pool, "s", RS_NOTIFY_CHANGE, &latest), APR_SUCCESS);
    ck_assert_int_eq(latest.id, APR_ARRAY_IDX(a, 4, rs_notification_t).id);
    ck_assert_str_eq(latest.topic, RS_NOTIFY_CHANGE);
    ck_assert_str_eq(APR_ARRAY_IDX(a, 4, rs_notification_t).topic, RS_NOTIFY_CHANGE);
    ck_assert_str_eq(latest.payload, APR_ARRAY_IDX(a, 4, rs_notification_t).payload);
}
END_TEST

START_TEST(open_notification_survives_a_new_connection)
{
    nf_t f;
    rs_notify_t *n2;
    int sealed = 0;

    nf_init(&f, 10);
    record(&f, 4);
    /* A later watcher (another rs_notify_t) seals what was left open. */
    ck_assert_int_eq(rs_notify_open(&n2, f.db, f.j, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_notify_seal(n2, ut_pool, &f.o, APR_INT64_MAX, &sealed, NULL), APR_SUCCESS);
    ck_assert_int_eq(sealed, 1);
    assert_outbox(&f, all(&f, RS_NOTIFY_CHANGE), 4);
}
END_TEST

START_TEST(framework_notifications)
{
    nf_t f;
    apr_array_header_t *e = apr_array_make(ut_pool, 2, sizeof(rs_notify_fw_entry_t));
    rs_notify_fw_entry_t *x;
    rs_notification_t a, b;
    xmlNodePtr root, url, md;
    apr_time_t t = apr_time_now();

    nf_init(&f, 10);
    x = apr_array_push(e);
    memset(x, 0, sizeof(*x));
    x->loc = "http://example.org/rs/s/resourcelist/x-1-1.xml";
    x->change = "created";
    x->capability = "resourcelist";
    x->datetime = t;
    x->index = "http://example.org/rs/s/resourcelist.xml";
    ck_assert_int_eq(rs_notify_add_framework(f.n, ut_pool, &f.o, e, t, &a), APR_SUCCESS);
    ck_assert_int_gt(a.id, 0);
    ck_assert_int_eq(a.from, t);
    ck_assert_int_eq(a.until, t);
    assert_valid(&a);
    root = xmlDocGetRootElement(ut_xml_parse(a.payload, a.payload_len));
    ck_assert_str_eq(ut_xml_attr(ut_xml_child(root, UT_NS_RS, "md", 0), "capability"),
                     "framework-notification");
    /* About a capability document: up is the Capability List. */
    ck_assert_str_eq(ut_xml_attr(ut_xml_ln(root, "up"), "href"), CAP);
    url = ut_xml_child(root, UT_NS_SM, "url", 0);
    ck_assert_str_eq(ut_xml_child_text(url, UT_NS_SM, "loc"), x->loc);
    md = ut_xml_child(url, UT_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(md, "change"), "created");
    ck_assert_str_eq(ut_xml_attr(md, "capability"), "resourcelist");
    ck_assert_str_eq(ut_xml_attr(md, "datetime"), fmt(t));
    ck_assert_str_eq(ut_xml_attr(ut_xml_ln(url, "index"), "href"), x->index);
    /* The next one continues the interval. */
    x->change = "updated";
    x->index = NULL;
    ck_assert_int_eq(rs_notify_add_framework(f.n, ut_pool, &f.o, e, t + 5, &b), APR_SUCCESS);
    ck_assert_int_gt(b.id, a.id);
    ck_assert_int_eq(b.from, a.until);
    ck_assert_int_eq(b.until, t + 5);
    ck_assert_int_eq(all(&f, RS_NOTIFY_FRAMEWORK)->nelts, 2);
    ck_assert_int_eq(all(&f, RS_NOTIFY_CHANGE)->nelts, 0);
}
END_TEST

/* The rs:ln rel="up" (its href, NULL when there is none; exactly one at
 * most) of a valid framework notification of entries with the given
 * capabilities (space-separated). */
static const char *fw_up_of(nf_t *f, const char *caps)
{
    apr_array_header_t *e = apr_array_make(ut_pool, 2, sizeof(rs_notify_fw_entry_t));
    char *list = apr_pstrdup(ut_pool, caps), *last;
    const char *c;
    rs_notification_t x;
    xmlNodePtr root, ln;
    int i, ups = 0;

    for (c = apr_strtok(list, " ", &last); c; c = apr_strtok(NULL, " ", &last)) {
        rs_notify_fw_entry_t *y = apr_array_push(e);
        memset(y, 0, sizeof(*y));
        y->loc = !strcmp(c, "description")      ? SD
                 : !strcmp(c, "capabilitylist") ? CAP
                                                : "http://example.org/rs/s/changelist.xml";
        y->change = "updated";
        y->capability = c;
    }
    ck_assert_int_eq(rs_notify_add_framework(f->n, ut_pool, &f->o, e, apr_time_now(), &x),
                     APR_SUCCESS);
    assert_valid(&x);
    root = xmlDocGetRootElement(ut_xml_parse(x.payload, x.payload_len));
    for (i = 0; (ln = ut_xml_child(root, UT_NS_RS, "ln", i)) != NULL; i++) {
        ups += !strcmp(ut_xml_attr(ln, "rel"), "up");
    }
    ck_assert_int_le(ups, 1);
    ln = ut_xml_ln(root, "up");
    return ln ? ut_xml_attr(ln, "href") : NULL;
}

/* Framework Notification 1.0.1, section 3: the up of a notification
 * about the Capability List is the Source Description, not the Capability
 * List itself; the Source Description alone has none above it. */
START_TEST(framework_up_link)
{
    nf_t f;

    nf_init(&f, 10);
    ck_assert_str_eq(fw_up_of(&f, "changelist"), CAP);
    ck_assert_str_eq(fw_up_of(&f, "changelist resourcedump"), CAP);
    ck_assert_str_eq(fw_up_of(&f, "capabilitylist"), SD);
    ck_assert_str_eq(fw_up_of(&f, "capabilitylist description"), SD);
    ck_assert_ptr_null(fw_up_of(&f, "description"));
    /* Capability documents and the Capability List together: none is
     * right for all entries, so none. */
    ck_assert_ptr_null(fw_up_of(&f, "changelist capabilitylist"));
    f.o.description_url = NULL;
    ck_assert_ptr_null(fw_up_of(&f, "capabilitylist"));
    ck_assert_int_eq(all(&f, RS_NOTIFY_FRAMEWORK)->nelts, 7);
}
END_TEST

START_TEST(prune_keeps_undelivered_and_newest)
{
    nf_t f;
    apr_array_header_t *a;
    apr_int64_t cursor;
    const char *q;
    int deleted = -1, i;

    nf_init(&f, 1);
    for (i = 0; i < 4; i++) {
        record(&f, 1);
    }
    ck_assert_int_eq(rs_notify_seal(f.n, ut_pool, &f.o, APR_INT64_MAX, NULL, NULL), APR_SUCCESS);
    a = all(&f, RS_NOTIFY_CHANGE);
    ck_assert_int_eq(a->nelts, 4);
    /* Too recent for the cutoff: nothing. */
    ck_assert_int_eq(rs_notify_prune(f.n, "s", RS_NOTIFY_CHANGE, 0, &deleted), APR_SUCCESS);
    ck_assert_int_eq(deleted, 0);
    /* A destination that got the first only. */
    cursor = APR_ARRAY_IDX(a, 0, rs_notification_t).id;
    q = apr_psprintf(ut_pool,
                     "INSERT INTO notify_dests (setname, topic, kind, url, cursor) "
                     "VALUES ('s', 'change', 'fat', 'http://h/', %" APR_INT64_T_FMT ")",
                     cursor);
    ck_assert_int_eq(rs_db_run(f.db, q), APR_SUCCESS);
    ck_assert_int_eq(rs_notify_prune(f.n, "s", RS_NOTIFY_CHANGE, APR_INT64_MAX, &deleted),
                     APR_SUCCESS);
    ck_assert_int_eq(deleted, 1);
    ck_assert_int_eq(all(&f, RS_NOTIFY_CHANGE)->nelts, 3);
    /* Without destinations: all but the newest. */
    ck_assert_int_eq(rs_db_run(f.db, "DELETE FROM notify_dests"), APR_SUCCESS);
    ck_assert_int_eq(rs_notify_prune(f.n, "s", RS_NOTIFY_CHANGE, APR_INT64_MAX, &deleted),
                     APR_SUCCESS);
    ck_assert_int_eq(deleted, 2);
    a = all(&f, RS_NOTIFY_CHANGE);
    ck_assert_int_eq(a->nelts, 1);
    ck_assert_int_eq(APR_ARRAY_IDX(a, 0, rs_notification_t).last_seq, 4);
    /* The next notification still continues the newest's interval. */
    record(&f, 1);
    ck_assert_int_eq(rs_notify_seal(f.n, ut_pool, &f.o, APR_INT64_MAX, NULL, NULL), APR_SUCCESS);
    a = all(&f, RS_NOTIFY_CHANGE);
    ck_assert_int_eq(a->nelts, 2);
    ck_assert_int_eq(APR_ARRAY_IDX(a, 1, rs_notification_t).from,
                     APR_ARRAY_IDX(a, 0, rs_notification_t).until);
}
END_TEST

/* A recorder with the outbox attached: a record and its notification
 * commit or roll back together. */
START_TEST(recorder_carries_records_in_its_transaction)
{
    nf_t f;
    rs_recorder_t *rc;
    rs_item_t it;
    apr_array_header_t *a;
    int open = 1;

    nf_init(&f, 10);
    rc = rs_recorder_create(ut_pool, f.j, "s", &f.o.entry, 16);
    rs_recorder_notify(rc, f.n, 10);
    memset(&it, 0, sizeof(it));
    it.dir = "d";
    it.name = "x.txt";
    it.size = 3;
    it.type = "text/plain";
    it.hash[0] = "900150983cd24fb0d6963f7d28e17f72";
    ck_assert_int_eq(rs_db_begin(f.db), APR_SUCCESS);
    ck_assert_int_eq(rs_recorder_record(rc, RS_CHANGE_CREATED, &it), APR_SUCCESS);
    ck_assert_int_eq(rs_db_rollback(f.db), APR_SUCCESS);
    ck_assert_int_eq(rs_notify_has_open(f.n, "s", &open), APR_SUCCESS);
    ck_assert_int_eq(open, 0);
    ck_assert_int_eq(rs_db_begin(f.db), APR_SUCCESS);
    ck_assert_int_eq(rs_recorder_record(rc, RS_CHANGE_CREATED, &it), APR_SUCCESS);
    ck_assert_int_eq(rs_recorder_record(rc, RS_CHANGE_UPDATED, &it), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(f.db), APR_SUCCESS);
    ck_assert_int_eq(rs_notify_seal(f.n, ut_pool, &f.o, APR_INT64_MAX, NULL, NULL), APR_SUCCESS);
    a = all(&f, RS_NOTIFY_CHANGE);
    ck_assert_int_eq(a->nelts, 1);
    ck_assert_int_eq(APR_ARRAY_IDX(a, 0, rs_notification_t).count, 2);
    assert_outbox(&f, a, APR_ARRAY_IDX(a, 0, rs_notification_t).last_seq);
}
END_TEST

/* Records journaled while notifications were off are carried by none;
 * the next notification starts after them with an honest gap. */
START_TEST(gap_after_records_not_carried)
{
    nf_t f;
    apr_array_header_t *a;
    rs_record_t r;
    const rs_notification_t *x, *y;

    nf_init(&f, 10);
    record(&f, 2);
    ck_assert_int_eq(rs_notify_seal(f.n, ut_pool, &f.o, APR_INT64_MAX, NULL, NULL), APR_SUCCESS);
    memset(&r, 0, sizeof(r));
    r.dir = "d";
    r.name = "off.txt";
    r.change = RS_CHANGE_CREATED;
    r.type = "text/plain";
    ck_assert_int_eq(rs_journal_append(f.j, "s", &r), APR_SUCCESS); /* not carried */
    record(&f, 1);
    ck_assert_int_eq(rs_notify_seal(f.n, ut_pool, &f.o, APR_INT64_MAX, NULL, NULL), APR_SUCCESS);
    a = all(&f, RS_NOTIFY_CHANGE);
    ck_assert_int_eq(a->nelts, 2);
    x = &APR_ARRAY_IDX(a, 0, rs_notification_t);
    y = &APR_ARRAY_IDX(a, 1, rs_notification_t);
    ck_assert_int_eq(y->first_seq, 4);
    ck_assert_int_eq(y->count, 1);
    ck_assert_int_gt(y->from, x->until);
    ck_assert_ptr_null(strstr(y->payload, "off.txt"));
    ck_assert_int_eq(ut_xml_count(xmlDocGetRootElement(ut_xml_parse(y->payload, y->payload_len)),
                                  UT_NS_SM, "url"),
                     1);
}
END_TEST

/* A new history forgets every notification, open and sealed (they name
 * the old history's resources), and sets the destinations' cursors back
 * to 0, so that the new history's first notification (id 1 again)
 * reaches a destination that had passed the old ones. */
START_TEST(reset_forgets_all)
{
    nf_t f;
    apr_array_header_t *a;
    apr_int64_t min = -1;
    int open = 0, found = 0;

    nf_init(&f, 10);
    record(&f, 2);
    ck_assert_int_eq(rs_notify_seal(f.n, ut_pool, &f.o, APR_INT64_MAX, NULL, NULL), APR_SUCCESS);
    record(&f, 1);
    ck_assert_int_eq(rs_notify_seal(f.n, ut_pool, &f.o, APR_INT64_MAX, NULL, NULL), APR_SUCCESS);
    record(&f, 1);
    a = all(&f, RS_NOTIFY_CHANGE);
    ck_assert_int_eq(a->nelts, 2);
    ck_assert_int_eq(rs_notifydest_ensure(f.db, "s", "change", "fat", "http://h/",
                                          APR_ARRAY_IDX(a, 1, rs_notification_t).id, NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_notify_reset(f.n), APR_SUCCESS);
    ck_assert_int_eq(rs_notify_has_open(f.n, "s", &open), APR_SUCCESS);
    ck_assert_int_eq(open, 0);
    ck_assert_int_eq(all(&f, RS_NOTIFY_CHANGE)->nelts, 0);
    ck_assert_int_eq(rs_notifydest_min_cursor(f.db, "s", "change", "fat", &min, &found),
                     APR_SUCCESS);
    ck_assert_int_eq(found, 1);
    ck_assert_int_eq(min, 0);
    record(&f, 1);
    ck_assert_int_eq(rs_notify_seal(f.n, ut_pool, &f.o, APR_INT64_MAX, NULL, NULL), APR_SUCCESS);
    a = all(&f, RS_NOTIFY_CHANGE);
    ck_assert_int_eq(a->nelts, 1);
    ck_assert_int_gt(APR_ARRAY_IDX(a, 0, rs_notification_t).id, min);
}
END_TEST

/* Sealed change notifications of 2, 1 and 1 records (max 3). */
static apr_array_header_t *three(nf_t *f)
{
    static const int sizes[] = { 2, 1, 1 };
    int i;
    for (i = 0; i < 3; i++) {
        record(f, sizes[i]);
        ck_assert_int_eq(rs_notify_seal(f->n, ut_pool, &f->o, APR_INT64_MAX, NULL, NULL),
                         APR_SUCCESS);
    }
    return all(f, RS_NOTIFY_CHANGE);
}

static int count_urls(const rs_notification_t *x)
{
    int n = 0;
    const char *p = x->payload;
    while ((p = strstr(p, "<url>"))) {
        n++;
        p++;
    }
    return n;
}

START_TEST(window_merges_newest_first_within_max_entries)
{
    nf_t f;
    apr_array_header_t *a;
    rs_notification_t w, *x;
    char buf[RS_TIME_BUFSIZE];

    nf_init(&f, 3);
    a = three(&f);
    ck_assert_int_eq(a->nelts, 3);
    x = (rs_notification_t *)a->elts;
    /* From the first on: 1 + 1 fit, the 2 of the first would make 4. */
    ck_assert_int_eq(rs_notify_window(f.n, ut_pool, &f.o, 0, &w), APR_SUCCESS);
    ck_assert_int_eq(w.id, x[2].id);
    ck_assert_int_eq(w.count, 2);
    ck_assert_int_eq(w.from, x[1].from);
    ck_assert_int_eq(w.until, x[2].until);
    ck_assert_int_eq(w.first_seq, x[1].first_seq);
    ck_assert_int_eq(w.last_seq, x[2].last_seq);
    ck_assert_int_eq(count_urls(&w), 2);
    ck_assert_ptr_nonnull(
        strstr(w.payload, apr_pstrcat(ut_pool, "from=\"", rs_time_format(buf, x[1].from), NULL)));
    ck_assert_ptr_nonnull(
        strstr(w.payload, apr_pstrcat(ut_pool, "until=\"", rs_time_format(buf, x[2].until), NULL)));
    assert_valid(&w);
    /* From the newest on: the newest alone, its own bytes. */
    ck_assert_int_eq(rs_notify_window(f.n, ut_pool, &f.o, x[2].id, &w), APR_SUCCESS);
    ck_assert_int_eq(w.count, 1);
    ck_assert_uint_eq(w.payload_len, x[2].payload_len);
    ck_assert_int_eq(memcmp(w.payload, x[2].payload, w.payload_len), 0);
    /* A larger maximum takes all three. */
    f.o.max_entries = 10;
    ck_assert_int_eq(rs_notify_window(f.n, ut_pool, &f.o, 0, &w), APR_SUCCESS);
    ck_assert_int_eq(w.count, 4);
    ck_assert_int_eq(w.from, x[0].from);
    ck_assert_int_eq(count_urls(&w), 4);
    /* Nothing from an id past the newest. */
    ck_assert_int_eq(rs_notify_window(f.n, ut_pool, &f.o, x[2].id + 1, &w), APR_SUCCESS);
    ck_assert_int_eq(w.id, 0);
}
END_TEST

START_TEST(destinations_rows_cursor_backlog)
{
    nf_t f;
    apr_array_header_t *a, *rows;
    rs_notification_t *x;
    rs_notifydest_t *d;
    apr_int64_t count, newest, min;
    int added = 0, found = 0;

    nf_init(&f, 3);
    a = three(&f);
    x = (rs_notification_t *)a->elts;
    ck_assert_int_eq(rs_notifydest_backlog(f.db, "s", "change", 0, &count, &newest), APR_SUCCESS);
    ck_assert_int_eq(count, 3);
    ck_assert_int_eq(newest, x[2].id);
    ck_assert_int_eq(
        rs_notifydest_ensure(f.db, "s", "change", "ping", "http://h/", x[0].id, &added),
        APR_SUCCESS);
    ck_assert_int_eq(added, 1);
    /* Ensuring again leaves the row as it is. */
    ck_assert_int_eq(rs_notifydest_ensure(f.db, "s", "change", "ping", "http://h/", 0, &added),
                     APR_SUCCESS);
    ck_assert_int_eq(added, 0);
    ck_assert_int_eq(rs_notifydest_ensure(f.db, "s", "change", "ping", "http://g/", x[1].id, NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_notifydest_min_cursor(f.db, "s", "change", "ping", &min, &found),
                     APR_SUCCESS);
    ck_assert_int_eq(found, 1);
    ck_assert_int_eq(min, x[0].id);
    ck_assert_int_eq(rs_notifydest_min_cursor(f.db, "s", "change", "fat", &min, &found),
                     APR_SUCCESS);
    ck_assert_int_eq(found, 0);
    ck_assert_int_eq(rs_notifydest_list(f.db, ut_pool, &rows), APR_SUCCESS);
    ck_assert_int_eq(rows->nelts, 2);
    d = &APR_ARRAY_IDX(rows, 1, rs_notifydest_t); /* ordered by url: h after g */
    ck_assert_str_eq(d->url, "http://h/");
    ck_assert_int_eq(d->cursor, x[0].id);
    ck_assert_ptr_null(d->secret);
    ck_assert_int_eq(rs_notifydest_backlog(f.db, "s", "change", d->cursor, &count, &newest),
                     APR_SUCCESS);
    ck_assert_int_eq(count, 2);
    d->cursor = x[2].id;
    d->attempts = 3;
    d->next_try = 42;
    d->last_status = 503;
    d->last_error = "boom";
    ck_assert_int_eq(rs_notifydest_update(f.db, d, &found), APR_SUCCESS);
    ck_assert_int_eq(found, 1);
    ck_assert_int_eq(rs_notifydest_list(f.db, ut_pool, &rows), APR_SUCCESS);
    d = &APR_ARRAY_IDX(rows, 1, rs_notifydest_t);
    ck_assert_int_eq(d->cursor, x[2].id);
    ck_assert_int_eq(d->attempts, 3);
    ck_assert_int_eq(d->next_try, 42);
    ck_assert_int_eq(d->last_status, 503);
    ck_assert_str_eq(d->last_error, "boom");
    ck_assert_int_eq(rs_notifydest_delete(f.db, d), APR_SUCCESS);
    ck_assert_int_eq(rs_notifydest_update(f.db, d, &found), APR_SUCCESS);
    ck_assert_int_eq(found, 0);
    ck_assert_int_eq(rs_notifydest_list(f.db, ut_pool, &rows), APR_SUCCESS);
    ck_assert_int_eq(rows->nelts, 1);
}
END_TEST

Suite *notify_suite(void)
{
    Suite *s = suite_create("rs_notify");
    TCase *tc = ut_tcase("notify", 60);
    tcase_add_test(tc, seal_after_quiet_time);
    tcase_add_test(tc, split_at_max_entries_and_continuity);
    tcase_add_test(tc, open_notification_survives_a_new_connection);
    tcase_add_test(tc, framework_notifications);
    tcase_add_test(tc, framework_up_link);
    tcase_add_test(tc, prune_keeps_undelivered_and_newest);
    tcase_add_test(tc, recorder_carries_records_in_its_transaction);
    tcase_add_test(tc, reset_forgets_all);
    tcase_add_test(tc, gap_after_records_not_carried);
    tcase_add_test(tc, window_merges_newest_first_within_max_entries);
    tcase_add_test(tc, destinations_rows_cursor_backlog);
    suite_add_tcase(s, tc);
    return s;
}
