/* SPDX-License-Identifier: Apache-2.0 */
/* test_changelist.c - rs_changelist: Change List and Change List Index documents */
#include <string.h>
#include <apr_strings.h>
#include <apr_time.h>
#include "unit.h"
#include "rs_changelist.h"
#include "rs_hash.h"
#include "rs_journal.h"
#include "rs_inventory.h"
#include "rs_time.h"
#include "rs_xml.h"
#include "rs_schema.h"
#include <libxml/xmlerror.h>

#define BASE   "http://example.org/files/"
#define CAP    "http://example.org/rs/s/capabilitylist.xml"
#define INDEX  "http://example.org/rs/s/changelist.xml"
#define PREFIX "http://example.org/rs/s/changelist/"
#define MD5    "900150983cd24fb0d6963f7d28e17f72"
#define SHA1   "a9993e364706816aba3e25717850c26c9cd0d89d"
#define SHA256 "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/* 2020-09-13T12:26:40.123456789Z */
#define LASTMOD_NS (1600000000LL * 1000000000 + 123456789)

typedef struct {
    rs_db_t *st;
    rs_journal_t *j;
    ut_log_t ul;
    rs_changelist_opts_t o;
    apr_time_t t0;
} cf_t;

static void cf_init(cf_t *f)
{
    const char *base = ut_tempdir("changelist");
    memset(f, 0, sizeof(*f));
    ck_assert_int_eq(
        rs_schema_open(&f->st, ut_pool, "sqlite3", ut_path(base, "state.db"), ut_log_init(&f->ul)),
        APR_SUCCESS);
    ck_assert_int_eq(rs_journal_open(&f->j, f->st, ut_pool), APR_SUCCESS);
    f->o.set = "s";
    f->o.entry.url_base = BASE;
    f->o.capability_url = CAP;
    f->o.index_url = INDEX;
    f->o.list_url_prefix = PREFIX;
    f->o.entry.hashes = RS_HASH_MD5 | RS_HASH_SHA256;
    f->t0 = apr_time_now() - apr_time_from_sec(100);
    ck_assert_int_eq(rs_journal_begin_set(f->j, "s", f->t0), APR_SUCCESS);
}

static rs_record_t *append(cf_t *f, const char *set, const char *dir, const char *name, int change,
                           apr_int64_t size)
{
    rs_record_t *r = apr_pcalloc(ut_pool, sizeof(*r));
    r->dir = dir;
    r->name = name;
    r->change = change;
    r->lastmod_ns = LASTMOD_NS + size * 1000;
    r->size = size;
    r->type = "text/plain";
    r->hash[0] = MD5;
    r->hash[1] = SHA1;
    r->hash[2] = SHA256;
    ck_assert_int_eq(rs_journal_append(f->j, set, r), APR_SUCCESS);
    return r;
}

static const char *fmt(apr_time_t t)
{
    char buf[RS_TIME_BUFSIZE];
    return apr_pstrdup(ut_pool, rs_time_format(buf, t));
}

static const char *fmt_ns(apr_int64_t ns)
{
    char buf[RS_TIME_BUFSIZE];
    return apr_pstrdup(ut_pool, rs_time_format_ns(buf, ns));
}

static xmlNodePtr write_list(cf_t *f, const rs_changelist_t *cl)
{
    ut_buf_t b;
    rs_xml_t *w;
    memset(&b, 0, sizeof(b));
    w = rs_xml_open(ut_pool, ut_buf_sink, &b);
    ck_assert_int_eq(rs_changelist_write(f->j, &f->o, cl, w, ut_pool), APR_SUCCESS);
    return xmlDocGetRootElement(ut_xml_parse(b.data, b.len));
}

static xmlNodePtr write_index(cf_t *f)
{
    ut_buf_t b;
    rs_xml_t *w;
    apr_array_header_t *closed;
    rs_changelist_t open;
    ck_assert_int_eq(rs_journal_lists(f->j, ut_pool, "s", &closed, &open), APR_SUCCESS);
    memset(&b, 0, sizeof(b));
    w = rs_xml_open(ut_pool, ut_buf_sink, &b);
    ck_assert_int_eq(rs_changelist_write_index(&f->o, closed, &open, w, ut_pool), APR_SUCCESS);
    return xmlDocGetRootElement(ut_xml_parse(b.data, b.len));
}

static void close_all(cf_t *f, rs_changelist_t *cl)
{
    ck_assert_int_eq(rs_journal_close(f->j, ut_pool, "s", -1, 0, apr_time_now(), cl), APR_SUCCESS);
    ck_assert_int_gt(cl->id, 0);
}

/* Header of a Change List. */
static void assert_head(xmlNodePtr root, const char *root_name, int with_index, apr_time_t from,
                        apr_time_t until)
{
    xmlNodePtr md, ln;
    ck_assert_str_eq((const char *)root->name, root_name);
    ck_assert_str_eq((const char *)root->ns->href, UT_NS_SM);
    ln = ut_xml_ln(root, "up");
    ck_assert_ptr_nonnull(ln);
    ck_assert_str_eq(ut_xml_attr(ln, "href"), CAP);
    ln = ut_xml_ln(root, "index");
    if (with_index) {
        ck_assert_ptr_nonnull(ln);
        ck_assert_str_eq(ut_xml_attr(ln, "href"), INDEX);
    }
    else {
        ck_assert_ptr_null(ln);
    }
    ck_assert_int_eq(ut_xml_count(root, UT_NS_RS, "md"), 1);
    md = ut_xml_child(root, UT_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(md, "capability"), "changelist");
    ck_assert_str_eq(ut_xml_attr(md, "from"), fmt(from));
    if (until) {
        ck_assert_ptr_nonnull(ut_xml_attr(md, "until"));
        ck_assert_str_eq(ut_xml_attr(md, "until"), fmt(until));
    }
    else {
        ck_assert_ptr_null(ut_xml_attr(md, "until"));
    }
}

/* The i-th <url> against a record. */
static void assert_entry(cf_t *f, xmlNodePtr root, int i, const rs_record_t *r, const char *loc)
{
    xmlNodePtr u = ut_xml_child(root, UT_NS_SM, "url", i), md;
    ck_assert_ptr_nonnull(u);
    ck_assert_str_eq(ut_xml_child_text(u, UT_NS_SM, "loc"), loc);
    ck_assert_int_eq(ut_xml_count(u, UT_NS_RS, "md"), 1);
    md = ut_xml_child(u, UT_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(md, "change"), rs_journal_change_name(r->change));
    if (f->o.entry.spec10) {
        ck_assert_str_eq(ut_xml_child_text(u, UT_NS_SM, "lastmod"), fmt(r->datetime));
        ck_assert_ptr_null(ut_xml_attr(md, "datetime"));
    }
    else {
        ck_assert_str_eq(ut_xml_child_text(u, UT_NS_SM, "lastmod"), fmt_ns(r->lastmod_ns));
        ck_assert_str_eq(ut_xml_attr(md, "datetime"), fmt(r->datetime));
    }
    if (r->change == RS_CHANGE_DELETED) {
        ck_assert_ptr_null(ut_xml_attr(md, "hash"));
        ck_assert_ptr_null(ut_xml_attr(md, "length"));
        ck_assert_ptr_null(ut_xml_attr(md, "type"));
    }
    else {
        ck_assert_str_eq(ut_xml_attr(md, "hash"), "md5:" MD5 " sha-256:" SHA256);
        ck_assert_str_eq(ut_xml_attr(md, "length"),
                         apr_psprintf(ut_pool, "%" APR_INT64_T_FMT, r->size));
        ck_assert_str_eq(ut_xml_attr(md, "type"), "text/plain");
    }
}

START_TEST(closed_list)
{
    cf_t f;
    rs_record_t *a, *b, *c;
    rs_changelist_t cl;
    xmlNodePtr root;
    apr_time_t prev = 0;
    int i;

    cf_init(&f);
    a = append(&f, "s", "", "a.txt", RS_CHANGE_CREATED, 3);
    append(&f, "t", "", "other.txt", RS_CHANGE_CREATED, 1);
    b = append(&f, "s", "sub dir", "caf\xC3\xA9 #1.txt", RS_CHANGE_UPDATED, 12);
    c = append(&f, "s", "sub/deep", "gone.txt", RS_CHANGE_DELETED, 7);
    close_all(&f, &cl);
    ck_assert_int_eq(cl.from, f.t0);

    root = write_list(&f, &cl);
    assert_head(root, "urlset", 1, f.t0, cl.until);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), 3);
    assert_entry(&f, root, 0, a, BASE "a.txt");
    assert_entry(&f, root, 1, b, BASE "sub%20dir/caf%C3%A9%20%231.txt");
    assert_entry(&f, root, 2, c, BASE "sub/deep/gone.txt");
    /* Entry datetimes increase and lie within [from, until]. */
    for (i = 0; i < 3; i++) {
        xmlNodePtr md = ut_xml_child(ut_xml_child(root, UT_NS_SM, "url", i), UT_NS_RS, "md", 0);
        apr_time_t t;
        ck_assert_int_eq(rs_time_parse(ut_xml_attr(md, "datetime"), &t), APR_SUCCESS);
        ck_assert_int_gt(t, prev);
        ck_assert_int_ge(t, cl.from);
        ck_assert_int_le(t, cl.until);
        prev = t;
    }
}
END_TEST

START_TEST(boundary_and_open_list)
{
    cf_t f;
    rs_record_t *r[5];
    rs_changelist_t cl, open;
    apr_array_header_t *closed;
    xmlNodePtr root;
    int i;

    cf_init(&f);
    for (i = 0; i < 5; i++) {
        r[i] = append(&f, "s", "d", apr_psprintf(ut_pool, "f%d", i),
                      i == 3 ? RS_CHANGE_DELETED : RS_CHANGE_UPDATED, i + 1);
    }
    ck_assert_int_eq(rs_journal_close(f.j, ut_pool, "s", r[2]->seq, 3, r[3]->datetime, &cl),
                     APR_SUCCESS);
    ck_assert_int_eq(cl.id, 1);

    root = write_list(&f, &cl);
    assert_head(root, "urlset", 1, f.t0, r[3]->datetime);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), 3);
    for (i = 0; i < 3; i++) {
        assert_entry(&f, root, i, r[i], apr_psprintf(ut_pool, BASE "d/f%d", i));
    }

    /* The open list: from the closed one's until, no until, the rest. */
    ck_assert_int_eq(rs_journal_lists(f.j, ut_pool, "s", &closed, &open), APR_SUCCESS);
    root = write_list(&f, &open);
    assert_head(root, "urlset", 1, r[3]->datetime, 0);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), 2);
    assert_entry(&f, root, 0, r[3], BASE "d/f3");
    assert_entry(&f, root, 1, r[4], BASE "d/f4");
    /* A list document covers the range read with it (so the body matches
     * the ETag made from that range); a record appended later shows once
     * the open list is read again, without a new close. */
    r[0] = append(&f, "s", "", "late", RS_CHANGE_CREATED, 9);
    root = write_list(&f, &open);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), 2);
    ck_assert_int_eq(rs_journal_lists(f.j, ut_pool, "s", &closed, &open), APR_SUCCESS);
    root = write_list(&f, &open);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), 3);
    assert_entry(&f, root, 2, r[0], BASE "late");
    /* ... but never in the closed one. */
    root = write_list(&f, &cl);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), 3);
}
END_TEST

START_TEST(spec10)
{
    cf_t f;
    rs_record_t *a, *b;
    rs_changelist_t cl;
    xmlNodePtr root;

    cf_init(&f);
    f.o.entry.spec10 = 1;
    f.o.entry.hashes = RS_HASH_MD5 | RS_HASH_SHA256;
    a = append(&f, "s", "", "a.txt", RS_CHANGE_CREATED, 3);
    b = append(&f, "s", "", "b.txt", RS_CHANGE_DELETED, 3);
    close_all(&f, &cl);
    root = write_list(&f, &cl);
    assert_head(root, "urlset", 1, f.t0, cl.until);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), 2);
    assert_entry(&f, root, 0, a, BASE "a.txt");
    assert_entry(&f, root, 1, b, BASE "b.txt");
    /* lastmod is the change time, not the file's modification time. */
    ck_assert_str_ne(ut_xml_child_text(ut_xml_child(root, UT_NS_SM, "url", 0), UT_NS_SM, "lastmod"),
                     fmt_ns(a->lastmod_ns));
}
END_TEST

START_TEST(hash_selection)
{
    cf_t f;
    rs_changelist_t cl;
    xmlNodePtr root, md;

    cf_init(&f);
    f.o.entry.hashes = RS_HASH_SHA1;
    append(&f, "s", "", "a.txt", RS_CHANGE_UPDATED, 3);
    close_all(&f, &cl);
    root = write_list(&f, &cl);
    md = ut_xml_child(ut_xml_child(root, UT_NS_SM, "url", 0), UT_NS_RS, "md", 0);
    ck_assert_ptr_nonnull(md);
    ck_assert_str_eq(ut_xml_attr(md, "hash"), "sha-1:" SHA1);
}
END_TEST

START_TEST(index_document)
{
    cf_t f;
    rs_changelist_t l1, l2;
    apr_array_header_t *dropped;
    xmlNodePtr root, e, md;

    cf_init(&f);
    /* No closed list yet: the open one only. */
    root = write_index(&f);
    assert_head(root, "sitemapindex", 0, f.t0, 0);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "sitemap"), 1);
    e = ut_xml_child(root, UT_NS_SM, "sitemap", 0);
    ck_assert_str_eq(ut_xml_child_text(e, UT_NS_SM, "loc"), PREFIX "1.xml");
    md = ut_xml_child(e, UT_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(md, "from"), fmt(f.t0));
    ck_assert_ptr_null(ut_xml_attr(md, "until"));

    append(&f, "s", "", "a", RS_CHANGE_CREATED, 1);
    close_all(&f, &l1);
    append(&f, "s", "", "b", RS_CHANGE_CREATED, 1);
    close_all(&f, &l2);
    append(&f, "s", "", "c", RS_CHANGE_CREATED, 1);

    root = write_index(&f);
    assert_head(root, "sitemapindex", 0, f.t0, 0);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), 0);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "sitemap"), 3);
    e = ut_xml_child(root, UT_NS_SM, "sitemap", 0);
    ck_assert_str_eq(ut_xml_child_text(e, UT_NS_SM, "loc"), PREFIX "1.xml");
    md = ut_xml_child(e, UT_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(md, "from"), fmt(f.t0));
    ck_assert_str_eq(ut_xml_attr(md, "until"), fmt(l1.until));
    e = ut_xml_child(root, UT_NS_SM, "sitemap", 1);
    ck_assert_str_eq(ut_xml_child_text(e, UT_NS_SM, "loc"), PREFIX "2.xml");
    md = ut_xml_child(e, UT_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(md, "from"), fmt(l1.until));
    ck_assert_str_eq(ut_xml_attr(md, "until"), fmt(l2.until));
    e = ut_xml_child(root, UT_NS_SM, "sitemap", 2);
    ck_assert_str_eq(ut_xml_child_text(e, UT_NS_SM, "loc"), PREFIX "3.xml");
    md = ut_xml_child(e, UT_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(md, "from"), fmt(l2.until));
    ck_assert_ptr_null(ut_xml_attr(md, "until"));

    /* After retention dropped list 1, the index starts at list 2. */
    ck_assert_int_eq(rs_journal_expire(f.j, ut_pool, "s", l1.until + 1, &dropped), APR_SUCCESS);
    ck_assert_int_eq(dropped->nelts, 1);
    root = write_index(&f);
    assert_head(root, "sitemapindex", 0, l1.until, 0);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "sitemap"), 2);
    e = ut_xml_child(root, UT_NS_SM, "sitemap", 0);
    ck_assert_str_eq(ut_xml_child_text(e, UT_NS_SM, "loc"), PREFIX "2.xml");
    e = ut_xml_child(root, UT_NS_SM, "sitemap", 1);
    ck_assert_str_eq(ut_xml_child_text(e, UT_NS_SM, "loc"), PREFIX "3.xml");

    /* All closed lists dropped: the index starts at the open list's from,
     * which is where the last dropped list ended. */
    ck_assert_int_eq(rs_journal_expire(f.j, ut_pool, "s", l2.until + 1, &dropped), APR_SUCCESS);
    ck_assert_int_eq(dropped->nelts, 1);
    root = write_index(&f);
    assert_head(root, "sitemapindex", 0, l2.until, 0);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "sitemap"), 1);
    e = ut_xml_child(root, UT_NS_SM, "sitemap", 0);
    ck_assert_str_eq(ut_xml_child_text(e, UT_NS_SM, "loc"), PREFIX "3.xml");
    md = ut_xml_child(e, UT_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(md, "from"), fmt(l2.until));
    ck_assert_ptr_null(ut_xml_attr(md, "until"));
}
END_TEST

START_TEST(many_records_across_pages)
{
    cf_t f;
    apr_array_header_t *recs, *closed;
    rs_changelist_t cl, open;
    xmlNodePtr root, u;
    int i, n = 4500, cut = 4003;

    cf_init(&f);
    ck_assert_int_eq(rs_db_begin(f.st), APR_SUCCESS);
    for (i = 0; i < n; i++) {
        append(&f, "s", "", apr_psprintf(ut_pool, "f%05d", i), RS_CHANGE_CREATED, i);
    }
    ck_assert_int_eq(rs_db_commit(f.st), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_records(f.j, ut_pool, "s", 1, -1, n, &recs), APR_SUCCESS);
    ck_assert_int_eq(recs->nelts, n);
    ck_assert_int_eq(rs_journal_close(f.j, ut_pool, "s",
                                      APR_ARRAY_IDX(recs, cut - 1, rs_record_t).seq, cut,
                                      APR_ARRAY_IDX(recs, cut, rs_record_t).datetime, &cl),
                     APR_SUCCESS);
    ck_assert_int_eq(cl.count, cut);

    root = write_list(&f, &cl);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), cut);
    for (i = 0, u = ut_xml_child(root, UT_NS_SM, "url", 0); u; u = u->next) {
        if (u->type != XML_ELEMENT_NODE) {
            continue;
        }
        ck_assert_str_eq(ut_xml_child_text(u, UT_NS_SM, "loc"),
                         apr_psprintf(ut_pool, BASE "f%05d", i));
        i++;
    }
    ck_assert_int_eq(i, cut);

    ck_assert_int_eq(rs_journal_lists(f.j, ut_pool, "s", &closed, &open), APR_SUCCESS);
    root = write_list(&f, &open);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), n - cut);
    ck_assert_str_eq(ut_xml_child_text(ut_xml_child(root, UT_NS_SM, "url", 0), UT_NS_SM, "loc"),
                     apr_psprintf(ut_pool, BASE "f%05d", cut));
    ck_assert_str_eq(
        ut_xml_child_text(ut_xml_child(root, UT_NS_SM, "url", n - cut - 1), UT_NS_SM, "loc"),
        apr_psprintf(ut_pool, BASE "f%05d", n - 1));
}
END_TEST

/* libxml2 reports a failing sink on stderr; the test expects it. */
static void quiet(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

START_TEST(sink_errors)
{
    cf_t f;
    rs_changelist_t cl, open;
    apr_array_header_t *closed;
    ut_buf_t b;
    rs_xml_t *w;

    cf_init(&f);
    xmlSetGenericErrorFunc(NULL, quiet);
    append(&f, "s", "", "a", RS_CHANGE_CREATED, 1);
    close_all(&f, &cl);
    memset(&b, 0, sizeof(b));
    b.fail = 1;
    w = rs_xml_open(ut_pool, ut_buf_sink, &b);
    ck_assert_int_ne(rs_changelist_write(f.j, &f.o, &cl, w, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_lists(f.j, ut_pool, "s", &closed, &open), APR_SUCCESS);
    memset(&b, 0, sizeof(b));
    b.fail = 1;
    w = rs_xml_open(ut_pool, ut_buf_sink, &b);
    ck_assert_int_ne(rs_changelist_write_index(&f.o, closed, &open, w, ut_pool), APR_SUCCESS);
    xmlSetGenericErrorFunc(NULL, NULL);
}
END_TEST

/* A source of fixed records (with or without pre-rendered entries). */
typedef struct {
    const apr_array_header_t *recs;
} fixed_t;

static apr_status_t fixed_source(void *baton, apr_pool_t *p, apr_int64_t next, apr_int64_t last,
                                 int limit, apr_array_header_t **out)
{
    fixed_t *fx = baton;
    int i;
    *out = apr_array_make(p, 4, sizeof(rs_record_t));
    for (i = 0; i < fx->recs->nelts && (*out)->nelts < limit; i++) {
        const rs_record_t *r = &APR_ARRAY_IDX(fx->recs, i, rs_record_t);
        if (r->seq >= next && r->seq <= last) {
            *(rs_record_t *)apr_array_push(*out) = *r;
        }
    }
    return APR_SUCCESS;
}

static int stop_after_one(void *baton, const char *buf, apr_size_t len)
{
    ut_buf_sink(baton, buf, len);
    return 1;
}

/* Frame and entries, separately: head + entries + tail is the document,
 * entries from a later record are a suffix of the entries, emit can stop,
 * and the open list's head does not depend on its extent. */
static void check_frame(const rs_changelist_opts_t *o, const rs_changelist_t *cl,
                        const apr_array_header_t *recs, const char *doc)
{
    rs_changelist_frame_t fr, fr2;
    rs_changelist_t other = *cl;
    fixed_t fx;
    ut_buf_t b;
    const char *whole;

    fx.recs = recs;
    ck_assert_int_eq(rs_changelist_frame(o, cl, ut_pool, &fr), APR_SUCCESS);
    memset(&b, 0, sizeof(b));
    ck_assert_int_eq(rs_changelist_write_entries(fixed_source, &fx, o, cl->first_seq, cl->last_seq,
                                                 ut_buf_sink, &b, ut_pool),
                     APR_SUCCESS);
    whole = apr_pstrcat(ut_pool, apr_pstrmemdup(ut_pool, fr.head, fr.head_len),
                        apr_pstrmemdup(ut_pool, b.data, b.len),
                        apr_pstrmemdup(ut_pool, fr.tail, fr.tail_len), NULL);
    ck_assert_str_eq(whole, doc);
    ck_assert_str_eq(apr_pstrmemdup(ut_pool, fr.tail, fr.tail_len), "</urlset>\n");
    /* From the last record on: the last entry, the end of the entries. */
    memset(&b, 0, sizeof(b));
    ck_assert_int_eq(rs_changelist_write_entries(fixed_source, &fx, o, cl->last_seq, cl->last_seq,
                                                 ut_buf_sink, &b, ut_pool),
                     APR_SUCCESS);
    ck_assert_uint_gt(b.len, 0);
    ck_assert_int_eq(memcmp(doc + strlen(doc) - fr.tail_len - b.len, b.data, b.len), 0);
    /* emit stops after the first entry. */
    memset(&b, 0, sizeof(b));
    ck_assert_int_eq(rs_changelist_write_entries(fixed_source, &fx, o, cl->first_seq, cl->last_seq,
                                                 stop_after_one, &b, ut_pool),
                     APR_SUCCESS);
    ck_assert_int_eq(b.calls, 1);
    ck_assert_int_eq(memcmp(doc + fr.head_len, b.data, b.len), 0);
    /* The open list's head depends on from only; closing changes it. */
    other.id++;
    other.last_seq += 100;
    other.count += 100;
    ck_assert_int_eq(rs_changelist_frame(o, &other, ut_pool, &fr2), APR_SUCCESS);
    ck_assert_uint_eq(fr2.head_len, fr.head_len);
    ck_assert_int_eq(memcmp(fr2.head, fr.head, fr.head_len), 0);
    other.until = cl->from + 1;
    ck_assert_int_eq(rs_changelist_frame(o, &other, ut_pool, &fr2), APR_SUCCESS);
    ck_assert_ptr_nonnull(strstr(apr_pstrmemdup(ut_pool, fr2.head, fr2.head_len), "until="));
}

static char *write_fixed(const rs_changelist_opts_t *o, const rs_changelist_t *cl,
                         const apr_array_header_t *recs)
{
    ut_buf_t b;
    fixed_t fx;
    rs_xml_t *w;
    memset(&b, 0, sizeof(b));
    fx.recs = recs;
    w = rs_xml_open(ut_pool, ut_buf_sink, &b);
    ck_assert_int_eq(rs_changelist_write_from(fixed_source, &fx, o, cl, w, ut_pool), APR_SUCCESS);
    return apr_pstrmemdup(ut_pool, b.data, b.len);
}

/* The exact bytes of a list, and the same bytes when every entry comes
 * pre-rendered (as from the ring), when only some do, and entry by entry
 * from the renderer. */
START_TEST(exact_bytes_and_prerendered_entries)
{
    rs_changelist_opts_t o;
    rs_changelist_t cl;
    apr_array_header_t *recs = apr_array_make(ut_pool, 3, sizeof(rs_record_t)), *pre, *mixed;
    rs_entry_renderer_t *rr;
    rs_record_t *r;
    const char *doc, *expected;
    int i;

    memset(&o, 0, sizeof(o));
    o.set = "s";
    o.entry.url_base = BASE;
    o.capability_url = CAP;
    o.index_url = INDEX;
    o.list_url_prefix = PREFIX;
    o.entry.hashes = RS_HASH_MD5 | RS_HASH_SHA256;
    memset(&cl, 0, sizeof(cl));
    cl.id = 4;
    cl.from = 1600000000LL * APR_USEC_PER_SEC;
    cl.first_seq = 10;
    cl.last_seq = 12;
    cl.count = 2;

    r = apr_array_push(recs);
    memset(r, 0, sizeof(*r));
    r->seq = 10;
    r->dir = "a&b";
    r->name = "<x> \"q\".txt";
    r->change = RS_CHANGE_CREATED;
    r->datetime = cl.from + 5;
    r->lastmod_ns = LASTMOD_NS;
    r->size = 3;
    r->type = "text/plain";
    r->hash[0] = MD5;
    r->hash[2] = SHA256;
    r = apr_array_push(recs);
    memset(r, 0, sizeof(*r));
    r->seq = 12; /* 11 was never used */
    r->dir = "";
    r->name = "gone";
    r->change = RS_CHANGE_DELETED;
    r->datetime = cl.from + 1000000;
    r->lastmod_ns = LASTMOD_NS;

    expected = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" "
               "xmlns:rs=\"http://www.openarchives.org/rs/terms/\">\n"
               "  <rs:ln rel=\"up\" href=\"" CAP "\"/>\n"
               "  <rs:ln rel=\"index\" href=\"" INDEX "\"/>\n"
               "  <rs:md capability=\"changelist\" from=\"2020-09-13T12:26:40Z\"/>\n"
               "  <url>\n"
               "    <loc>" BASE "a%26b/%3Cx%3E%20%22q%22.txt</loc>\n"
               "    <lastmod>2020-09-13T12:26:40.123456Z</lastmod>\n"
               "    <rs:md change=\"created\" datetime=\"2020-09-13T12:26:40.000005Z\" "
               "hash=\"md5:" MD5 " sha-256:" SHA256 "\" length=\"3\" type=\"text/plain\"/>\n"
               "  </url>\n"
               "  <url>\n"
               "    <loc>" BASE "gone</loc>\n"
               "    <lastmod>2020-09-13T12:26:40.123456Z</lastmod>\n"
               "    <rs:md change=\"deleted\" datetime=\"2020-09-13T12:26:41Z\"/>\n"
               "  </url>\n"
               "</urlset>\n";
    doc = write_fixed(&o, &cl, recs);
    ck_assert_str_eq(doc, expected);
    check_frame(&o, &cl, recs, expected);

    /* Pre-rendered: every entry, then only the second one. */
    rr = rs_entry_renderer_create(ut_pool, &o.entry);
    ck_assert_ptr_nonnull(rr);
    pre = apr_array_copy(ut_pool, recs);
    mixed = apr_array_copy(ut_pool, recs);
    for (i = 0; i < pre->nelts; i++) {
        rs_record_t *p = &APR_ARRAY_IDX(pre, i, rs_record_t);
        apr_size_t len = 0;
        const char *b = rs_entry_render(rr, p, &len);
        ck_assert_ptr_nonnull(b);
        p->xml = apr_pstrmemdup(ut_pool, b, len);
        p->xml_len = len;
        /* Each entry is a piece of the document. */
        ck_assert_ptr_nonnull(strstr(expected, p->xml));
        ck_assert_int_eq(strncmp(p->xml, "  <url>\n", 8), 0);
        ck_assert_int_eq(strcmp(p->xml + len - 9, "  </url>\n"), 0);
        /* Pre-rendered entries carry only what the ring keeps. */
        p->dir = p->name = p->type = NULL;
        memset(p->hash, 0, sizeof(p->hash));
    }
    APR_ARRAY_IDX(mixed, 1, rs_record_t) = APR_ARRAY_IDX(pre, 1, rs_record_t);
    ck_assert_str_eq(write_fixed(&o, &cl, pre), expected);
    ck_assert_str_eq(write_fixed(&o, &cl, mixed), expected);

    /* An empty list. */
    cl.last_seq = cl.first_seq - 1;
    cl.count = 0;
    ck_assert_str_eq(write_fixed(&o, &cl, recs),
                     "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                     "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" "
                     "xmlns:rs=\"http://www.openarchives.org/rs/terms/\">\n"
                     "  <rs:ln rel=\"up\" href=\"" CAP "\"/>\n"
                     "  <rs:ln rel=\"index\" href=\"" INDEX "\"/>\n"
                     "  <rs:md capability=\"changelist\" from=\"2020-09-13T12:26:40Z\"/>\n"
                     "</urlset>\n");
}
END_TEST

Suite *changelist_suite(void)
{
    Suite *s = suite_create("rs_changelist");
    TCase *tc = ut_tcase("changelist", 120);
    tcase_add_test(tc, closed_list);
    tcase_add_test(tc, boundary_and_open_list);
    tcase_add_test(tc, spec10);
    tcase_add_test(tc, hash_selection);
    tcase_add_test(tc, index_document);
    tcase_add_test(tc, many_records_across_pages);
    tcase_add_test(tc, sink_errors);
    tcase_add_test(tc, exact_bytes_and_prerendered_entries);
    suite_add_tcase(s, tc);
    return s;
}
