/* SPDX-License-Identifier: Apache-2.0 */
/* test_snapshot.c - rs_snapshot: Resource List documents from the store */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_hash.h"
#include "rs_scan.h"
#include "rs_partition.h"
#include "rs_snapshot.h"
#include "rs_snapdoc.h"
#include "rs_snapinfo.h"
#include "rs_snapparts.h"
#include "rs_journal.h"
#include "rs_inventory.h"
#include "rs_statedir.h"
#include "rs_time.h"
#include "rs_uri.h"
#include "rs_schema.h"

#define BASE   "http://example.org/files/"
#define CAP    "http://example.org/rs/s/capabilitylist.xml"
#define LIST   "http://example.org/rs/s/resourcelist.xml"
#define PREFIX "http://example.org/rs/s/resourcelist/"
#define AT     (1700000000LL * APR_USEC_PER_SEC + 500000)
#define DONE   (AT + 1250000)
#define AT_S   "2023-11-14T22:13:20.5Z"
#define DONE_S "2023-11-14T22:13:21.75Z"

static const char *const abc_md5 = "900150983cd24fb0d6963f7d28e17f72";
static const char *const abc_sha1 = "a9993e364706816aba3e25717850c26c9cd0d89d";
static const char *const abc_sha256 =
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

typedef struct {
    rs_db_t *st;
    ut_log_t ul;
    rs_snapshot_opts_t o;
    const char *dir; /* snapshot directory */
} fx_t;

static void fx_init(fx_t *f, apr_int64_t max)
{
    const char *base = ut_tempdir("snap");
    memset(f, 0, sizeof(*f));
    ck_assert_int_eq(
        rs_schema_open(&f->st, ut_pool, "sqlite3", ut_path(base, "state.db"), ut_log_init(&f->ul)),
        APR_SUCCESS);
    f->dir = ut_path(base, "gen");
    ut_mkdir(f->dir);
    f->o.set = "s";
    f->o.entry.url_base = BASE;
    f->o.capability_url = CAP;
    f->o.list_url = LIST;
    f->o.part_url_prefix = PREFIX;
    f->o.max_entries = max;
    f->o.entry.hashes = RS_HASH_MD5 | RS_HASH_SHA256;
    f->o.at = AT;
    f->o.completed = DONE;
    f->o.log = &f->ul.logger;
}

static void add(fx_t *f, const char *dir, const char *name, apr_int64_t size, int listed)
{
    rs_item_t it;
    memset(&it, 0, sizeof(it));
    it.dir = dir;
    it.name = name;
    it.size = size;
    it.mtime_ns = 1600000000LL * 1000000000 + size * 1000;
    it.ctime_ns = it.mtime_ns;
    it.dev = 1;
    it.ino = size + 1;
    it.listed = listed;
    it.cfg = "c";
    it.type = "text/plain";
    it.hash[0] = abc_md5;
    it.hash[1] = abc_sha1;
    it.hash[2] = abc_sha256;
    ck_assert_int_eq(rs_inventory_put(f->st, "s", &it), APR_SUCCESS);
}

static void assert_info_eq(const rs_snapshot_info_t *a, const rs_snapshot_info_t *b)
{
    ck_assert_uint_eq(a->gen, b->gen);
    ck_assert_int_eq(a->at, b->at);
    ck_assert_int_eq(a->completed, b->completed);
    ck_assert_int_eq(a->entries, b->entries);
    ck_assert_int_eq(a->parts, b->parts);
    ck_assert_int_eq(a->bytes, b->bytes);
}

/* Header of a Resource List or part. */
static void assert_list_head(xmlNodePtr root, int with_index)
{
    xmlNodePtr md, ln;
    ck_assert_str_eq((const char *)root->name, "urlset");
    ck_assert_str_eq((const char *)root->ns->href, UT_NS_SM);
    ln = ut_xml_ln(root, "up");
    ck_assert_ptr_nonnull(ln);
    ck_assert_str_eq(ut_xml_attr(ln, "href"), CAP);
    ln = ut_xml_ln(root, "index");
    if (with_index) {
        ck_assert_ptr_nonnull(ln);
        ck_assert_str_eq(ut_xml_attr(ln, "href"), LIST);
    }
    else {
        ck_assert_ptr_null(ln);
    }
    ck_assert_int_eq(ut_xml_count(root, UT_NS_RS, "md"), 1);
    md = ut_xml_child(root, UT_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(md, "capability"), "resourcelist");
    ck_assert_str_eq(ut_xml_attr(md, "at"), AT_S);
    ck_assert_str_eq(ut_xml_attr(md, "completed"), DONE_S);
}

static const char *loc_of(xmlNodePtr root, int i)
{
    xmlNodePtr u = ut_xml_child(root, UT_NS_SM, "url", i);
    ck_assert_ptr_nonnull(u);
    return ut_xml_child_text(u, UT_NS_SM, "loc");
}

START_TEST(file_names)
{
    ck_assert_str_eq(rs_statedir_gen_file(ut_pool, "/x/y", 0), "/x/y/resourcelist.xml");
    ck_assert_str_eq(rs_statedir_gen_file(ut_pool, "/x/y", 1), "/x/y/part-1.xml");
    ck_assert_str_eq(rs_statedir_gen_file(ut_pool, "/x/y", 12), "/x/y/part-12.xml");
}
END_TEST

START_TEST(single_list)
{
    fx_t f;
    rs_snapshot_info_t info, back;
    xmlNodePtr root, url, md;
    rs_item_t it;
    char lastmod[RS_TIME_BUFSIZE];

    fx_init(&f, 100);
    add(&f, "sub/deep", "x", 1, 1);
    add(&f, "", "z.txt", 2, 1);
    add(&f, "sub", "caf\xC3\xA9 \xE9.txt", 3, 1);
    add(&f, "", "a b&c<d>\"q\".txt", 5, 1);
    add(&f, "", "hidden.txt", 6, 0);
    /* A row without digests or type. */
    memset(&it, 0, sizeof(it));
    it.dir = "sub";
    it.name = "bare";
    it.size = 0;
    it.mtime_ns = -1500000000LL;
    it.listed = 1;
    ck_assert_int_eq(rs_inventory_put(f.st, "s", &it), APR_SUCCESS);

    ck_assert_int_eq(rs_snapshot_write(f.st, &f.o, f.dir, 7, ut_pool, &info), APR_SUCCESS);
    ck_assert_uint_eq(info.gen, 7);
    ck_assert_int_eq(info.entries, 5);
    ck_assert_int_eq(info.parts, 0);
    ck_assert_int_eq(info.at, AT);
    ck_assert_int_eq(info.completed, DONE);
    ck_assert_int_eq(info.bytes, 1 + 2 + 3 + 5 + 0); /* listed rows only */
    ck_assert(ut_exists(rs_statedir_gen_file(ut_pool, f.dir, 0)));
    ck_assert(!ut_exists(rs_statedir_gen_file(ut_pool, f.dir, 1)));

    memset(&back, 0xff, sizeof(back));
    ck_assert_int_eq(rs_snapinfo_read(f.dir, ut_pool, &back), APR_SUCCESS);
    assert_info_eq(&back, &info);
    ck_assert_str_eq(ut_read(ut_path(f.dir, "info"), NULL),
                     apr_psprintf(ut_pool, "7 %" APR_TIME_T_FMT " %" APR_TIME_T_FMT " 5 0 11\n",
                                  (apr_time_t)AT, (apr_time_t)DONE));

    root = xmlDocGetRootElement(ut_xml_parse_file(rs_statedir_gen_file(ut_pool, f.dir, 0)));
    assert_list_head(root, 0);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), 5);
    /* (dir, name) order, percent-encoded below url_base. */
    ck_assert_str_eq(loc_of(root, 0), BASE "a%20b%26c%3Cd%3E%22q%22.txt");
    ck_assert_str_eq(loc_of(root, 1), BASE "z.txt");
    ck_assert_str_eq(loc_of(root, 2), BASE "sub/bare");
    ck_assert_str_eq(loc_of(root, 3), BASE "sub/caf%C3%A9%20%E9.txt");
    ck_assert_str_eq(loc_of(root, 4), BASE "sub/deep/x");

    url = ut_xml_child(root, UT_NS_SM, "url", 0);
    rs_time_format_ns(lastmod, 1600000000LL * 1000000000 + 5 * 1000);
    ck_assert_str_eq(lastmod, "2020-09-13T12:26:40.000005Z");
    ck_assert_str_eq(ut_xml_child_text(url, UT_NS_SM, "lastmod"), lastmod);
    md = ut_xml_child(url, UT_NS_RS, "md", 0);
    ck_assert_ptr_nonnull(md);
    /* Only the configured digests, in table order. */
    ck_assert_str_eq(ut_xml_attr(md, "hash"),
                     apr_pstrcat(ut_pool, "md5:", abc_md5, " sha-256:", abc_sha256, NULL));
    ck_assert_str_eq(ut_xml_attr(md, "length"), "5");
    ck_assert_str_eq(ut_xml_attr(md, "type"), "text/plain");

    url = ut_xml_child(root, UT_NS_SM, "url", 2);
    ck_assert_str_eq(ut_xml_child_text(url, UT_NS_SM, "lastmod"), "1969-12-31T23:59:58.5Z");
    md = ut_xml_child(url, UT_NS_RS, "md", 0);
    ck_assert_ptr_null(ut_xml_attr(md, "hash"));
    ck_assert_ptr_null(ut_xml_attr(md, "type"));
    ck_assert_str_eq(ut_xml_attr(md, "length"), "0");
    ck_assert_int_eq(f.ul.nerr, 0);
}
END_TEST

/* The list's bytes are exactly those of the XML writer writing every
 * entry with rs_entry_write (as lists were always written), whether an
 * entry takes the renderer's fast path or needs the writer (escaping in
 * its type, non-ASCII). */
START_TEST(bytes_as_the_writer_writes)
{
    static const char *const types[] = { "text/plain", NULL,         "a/b; q=\"x\"",
                                         "a/<b>&c",    "t/\xC3\xA9", "" };
    fx_t f;
    rs_snapshot_info_t info;
    rs_xml_attr_t md[3];
    char at[RS_TIME_BUFSIZE], done[RS_TIME_BUFSIZE];
    apr_array_header_t *rows = NULL;
    ut_buf_t b;
    rs_xml_t *w;
    rs_item_t it;
    rs_record_t r;
    apr_size_t len = 0;
    const char *got;
    int i;

    fx_init(&f, 100);
    for (i = 0; i < 24; i++) {
        memset(&it, 0, sizeof(it));
        it.dir = i % 3 ? "sub dir/x" : "";
        it.name = apr_psprintf(ut_pool, "f%d&<\xC3\xA9>'%%.txt", i);
        it.size = (apr_int64_t)i * 1000003;
        it.mtime_ns = 1600000000LL * 1000000000 + i * 123456789LL;
        it.listed = 1;
        it.type = types[i % 6];
        it.hash[0] = i % 4 ? abc_md5 : NULL;
        it.hash[2] = abc_sha256;
        ck_assert_int_eq(rs_inventory_put(f.st, "s", &it), APR_SUCCESS);
    }
    ck_assert_int_eq(rs_snapshot_write(f.st, &f.o, f.dir, 1, ut_pool, &info), APR_SUCCESS);
    got = ut_read(rs_statedir_gen_file(ut_pool, f.dir, 0), &len);

    memset(&b, 0, sizeof(b));
    w = rs_xml_open(ut_pool, ut_buf_sink, &b);
    md[0].name = "capability";
    md[0].value = "resourcelist";
    md[1].name = "at";
    md[1].value = rs_time_format(at, AT);
    md[2].name = "completed";
    md[2].value = rs_time_format(done, DONE);
    ck_assert_int_eq(rs_xml_begin(w, "urlset"), 0);
    ck_assert_int_eq(rs_xml_ln(w, "up", CAP, NULL, 0), 0);
    ck_assert_int_eq(rs_xml_md(w, md, 3), 0);
    ck_assert_int_eq(rs_inventory_page(f.st, ut_pool, "s", NULL, NULL, 100, &rows), APR_SUCCESS);
    ck_assert_int_eq(rows->nelts, 24);
    for (i = 0; i < rows->nelts; i++) {
        rs_entry_from_item(&r, &APR_ARRAY_IDX(rows, i, rs_item_t));
        ck_assert_int_eq(rs_entry_write(w, ut_pool, &f.o.entry, &r), 0);
    }
    ck_assert_int_eq(rs_xml_end(w), 0);
    ck_assert_uint_eq(len, b.len);
    ck_assert(memcmp(got, b.data, len) == 0);
    ck_assert_int_eq(f.ul.nerr, 0);
}
END_TEST

START_TEST(empty_set)
{
    fx_t f;
    rs_snapshot_info_t info, back;
    xmlNodePtr root;

    fx_init(&f, 10);
    add(&f, "", "unlisted", 1, 0);
    ck_assert_int_eq(rs_snapshot_write(f.st, &f.o, f.dir, 1, ut_pool, &info), APR_SUCCESS);
    ck_assert_int_eq(info.entries, 0);
    ck_assert_int_eq(info.parts, 0);
    root = xmlDocGetRootElement(ut_xml_parse_file(rs_statedir_gen_file(ut_pool, f.dir, 0)));
    assert_list_head(root, 0);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), 0);
    ck_assert_int_eq(rs_snapinfo_read(f.dir, ut_pool, &back), APR_SUCCESS);
    assert_info_eq(&back, &info);
}
END_TEST

/* Check an index snapshot of n entries named so that their listing order
 * is their number: dir "d<i/per_dir>", name "f<i>".  Returns nothing;
 * asserts the whole structure. */
/* The part sizes rs_partition cuts the listing of check_indexed into
 * (content-defined, max entries as the limit); returns their number. */
static int cut_parts(int n, int per_dir, int max, apr_uint64_t interval, int *sizes)
{
    rs_partition_t pt;
    int i, parts = 0, in = 0;

    rs_partition_init(&pt, max, APR_INT64_MAX, interval);
    for (i = 0; i < n; i++) {
        const char *path = apr_psprintf(ut_pool, "d%03d/f%06d", i / per_dir, i);
        in++;
        if (rs_partition_add(&pt, path, strlen(path), 0) & RS_PARTITION_CUT_AFTER) {
            sizes[parts++] = in;
            in = 0;
        }
    }
    if (in) {
        sizes[parts++] = in;
    }
    return parts;
}

/* At the interval for n entries; when that makes more than max parts,
 * with every part full. */
static int expected_parts(int n, int per_dir, int max, int *sizes)
{
    int parts = cut_parts(n, per_dir, max, rs_snapdoc_interval(max, max, n), sizes);
    return parts <= max ? parts : cut_parts(n, per_dir, max, APR_UINT64_C(1) << 63, sizes);
}

static void check_indexed(fx_t *f, apr_uint64_t gen, int n, int per_dir, int max)
{
    rs_snapshot_info_t info, back;
    xmlNodePtr idx, md;
    int *sizes = apr_pcalloc(ut_pool, sizeof(int) * (apr_size_t)n);
    int parts = expected_parts(n, per_dir, max, sizes), p, k = 0;
    apr_int64_t total = -1;

    ck_assert_int_eq(rs_snapshot_write(f->st, &f->o, f->dir, gen, ut_pool, &info), APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_count(f->st, "s", &total), APR_SUCCESS);
    ck_assert_int_eq(info.entries, total);
    ck_assert_int_eq(info.entries, n);
    ck_assert_int_eq(info.parts, parts);
    ck_assert_uint_eq(info.gen, gen);
    ck_assert_int_eq(rs_snapinfo_read(f->dir, ut_pool, &back), APR_SUCCESS);
    assert_info_eq(&back, &info);

    /* The index. */
    idx = xmlDocGetRootElement(ut_xml_parse_file(rs_statedir_gen_file(ut_pool, f->dir, 0)));
    ck_assert_str_eq((const char *)idx->name, "sitemapindex");
    ck_assert_str_eq((const char *)idx->ns->href, UT_NS_SM);
    ck_assert_str_eq(ut_xml_attr(ut_xml_ln(idx, "up"), "href"), CAP);
    md = ut_xml_child(idx, UT_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(md, "capability"), "resourcelist");
    ck_assert_str_eq(ut_xml_attr(md, "at"), AT_S);
    ck_assert_str_eq(ut_xml_attr(md, "completed"), DONE_S);
    ck_assert_int_eq(ut_xml_count(idx, UT_NS_SM, "sitemap"), parts);
    ck_assert_int_eq(ut_xml_count(idx, UT_NS_SM, "url"), 0);
    for (p = 1; p <= parts; p++) {
        xmlNodePtr sm = ut_xml_child(idx, UT_NS_SM, "sitemap", p - 1);
        ck_assert_str_eq(ut_xml_child_text(sm, UT_NS_SM, "loc"),
                         apr_psprintf(ut_pool, PREFIX "%" APR_UINT64_T_FMT "-%d.xml", gen, p));
        ck_assert_str_eq(ut_xml_attr(ut_xml_child(sm, UT_NS_RS, "md", 0), "at"), AT_S);
    }
    ck_assert(!ut_exists(rs_statedir_gen_file(ut_pool, f->dir, parts + 1)));

    /* The parts: every entry once, in order, max per part. */
    for (p = 1; p <= parts; p++) {
        xmlNodePtr root =
            xmlDocGetRootElement(ut_xml_parse_file(rs_statedir_gen_file(ut_pool, f->dir, p)));
        xmlNodePtr u;
        int want = sizes[p - 1], i = 0;
        ck_assert_int_le(want, max);
        assert_list_head(root, 1);
        ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), want);
        for (u = root->children; u; u = u->next) {
            const char *loc;
            if (u->type != XML_ELEMENT_NODE || strcmp((const char *)u->name, "url")) {
                continue;
            }
            loc = ut_xml_child_text(u, UT_NS_SM, "loc");
            ck_assert_str_eq(loc, apr_psprintf(ut_pool, BASE "d%03d/f%06d", k / per_dir, k));
            i++;
            k++;
        }
        ck_assert_int_eq(i, want);
    }
    ck_assert_int_eq(k, n);
}

static void fill(fx_t *f, int n, int per_dir, int unlisted_every)
{
    int i;
    ck_assert_int_eq(rs_db_begin(f->st), APR_SUCCESS);
    for (i = 0; i < n; i++) {
        add(f, apr_psprintf(ut_pool, "d%03d", i / per_dir), apr_psprintf(ut_pool, "f%06d", i), i,
            1);
        if (unlisted_every && i % unlisted_every == 0) {
            add(f, apr_psprintf(ut_pool, "d%03d", i / per_dir),
                apr_psprintf(ut_pool, "f%06d-unlisted", i), i, 0);
        }
    }
    ck_assert_int_eq(rs_db_commit(f->st), APR_SUCCESS);
}

/* Stable parts: a journaled change rewrites the part(s) around it and
 * keeps the rest (same inode), and the parts are exactly those a write
 * from scratch cuts. */
typedef struct {
    fx_t f;
    rs_journal_t *j;
    apr_uint64_t gen;
    const char *dir; /* the current generation's directory */
    const char *base;
} sp_t;

static const char *sp_gendir(sp_t *t, apr_uint64_t g, const char *tag)
{
    const char *d = ut_path(t->base, apr_psprintf(ut_pool, "%s%" APR_UINT64_T_FMT, tag, g));
    ut_mkdir(d);
    return d;
}

/* The entries of a part file: its bytes from the first <url> on (the
 * header carries the writing generation's times). */
static const char *sp_body(const char *path)
{
    const char *x = ut_read(path, NULL), *u = strstr(x, "<url>");
    ck_assert_ptr_nonnull(u);
    return u;
}

static const char *sp_part_file(const char *dir, apr_uint64_t gen, const rs_snappart_t *s)
{
    return s->gen == gen ? rs_statedir_gen_file(ut_pool, dir, s->n)
                         : rs_statedir_gen_kept(ut_pool, dir, s->gen, s->n);
}

static apr_uint64_t sp_ino(const char *path)
{
    apr_finfo_t fi;
    ck_assert_int_eq(apr_stat(&fi, path, APR_FINFO_INODE, ut_pool), APR_SUCCESS);
    return (apr_uint64_t)fi.inode;
}

/* The next generation, incremental, checked against one from scratch;
 * returns the parts kept. */
static int sp_next(sp_t *t)
{
    rs_snapshot_info_t info, full;
    rs_snapparts_t a, b, prev;
    const char *dir = sp_gendir(t, t->gen + 1, "g"), *sdir = sp_gendir(t, t->gen + 1, "s");
    int i, have_prev = t->gen > 0;

    t->f.o.ident = "0123abcd|key";
    t->f.o.seq = rs_journal_last_seq(t->j);
    t->f.o.journal = t->j;
    t->f.o.prev_dir = have_prev ? t->dir : NULL;
    t->f.o.prev_gen = t->gen;
    t->f.o.at += APR_USEC_PER_SEC;
    t->f.o.completed = t->f.o.at;
    ck_assert_int_eq(rs_snapshot_write(t->f.st, &t->f.o, dir, t->gen + 1, ut_pool, &info),
                     APR_SUCCESS);
    t->f.o.prev_dir = NULL;
    ck_assert_int_eq(rs_snapshot_write(t->f.st, &t->f.o, sdir, t->gen + 1, ut_pool, &full),
                     APR_SUCCESS);
    ck_assert_int_eq(info.entries, full.entries);
    ck_assert_int_eq(info.parts, full.parts);
    ck_assert_int_eq(rs_snapparts_read(ut_pool, dir, &a), APR_SUCCESS);
    ck_assert_int_eq(rs_snapparts_read(ut_pool, sdir, &b), APR_SUCCESS);
    ck_assert(!have_prev || rs_snapparts_read(ut_pool, t->dir, &prev) == APR_SUCCESS);
    ck_assert_int_eq(a.parts->nelts, b.parts->nelts);
    for (i = 0; i < a.parts->nelts; i++) {
        const rs_snappart_t *x = &APR_ARRAY_IDX(a.parts, i, rs_snappart_t);
        const rs_snappart_t *y = &APR_ARRAY_IDX(b.parts, i, rs_snappart_t);
        ck_assert_int_eq(x->entries, y->entries);
        ck_assert_str_eq(x->last_dir, y->last_dir);
        ck_assert_str_eq(x->last_name, y->last_name);
        ck_assert_str_eq(sp_body(sp_part_file(dir, t->gen + 1, x)),
                         sp_body(rs_statedir_gen_file(ut_pool, sdir, y->n)));
        if (x->gen != t->gen + 1) {
            /* Kept: the very file of the generation that wrote it. */
            int k, found = 0;
            for (k = 0; k < prev.parts->nelts; k++) {
                const rs_snappart_t *o = &APR_ARRAY_IDX(prev.parts, k, rs_snappart_t);
                if (o->gen == x->gen && o->n == x->n) {
                    found = 1;
                    ck_assert_uint_eq(sp_ino(sp_part_file(t->dir, t->gen, o)),
                                      sp_ino(sp_part_file(dir, t->gen + 1, x)));
                    ck_assert_int_eq(o->at, x->at);
                }
            }
            ck_assert(found);
        }
        else {
            ck_assert_int_eq(x->at, t->f.o.at);
        }
    }
    ck_assert_int_eq(info.reused + (a.parts->nelts - info.reused), a.parts->nelts);
    t->gen++;
    t->dir = dir;
    return info.reused;
}

static void sp_change(sp_t *t, const char *dir, const char *name, int change)
{
    rs_record_t r;

    ck_assert_int_eq(rs_db_begin(t->f.st), APR_SUCCESS);
    if (change == RS_CHANGE_DELETED) {
        ck_assert_int_eq(rs_inventory_delete(t->f.st, "s", dir, name), APR_SUCCESS);
    }
    else {
        add(&t->f, dir, name, 77, 1);
    }
    memset(&r, 0, sizeof(r));
    r.dir = dir;
    r.name = name;
    r.change = change;
    r.size = 77;
    ck_assert_int_eq(rs_journal_append(t->j, "s", &r), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(t->f.st), APR_SUCCESS);
}

START_TEST(stable_parts)
{
    sp_t t;
    rs_snapparts_t tab;
    int i, kept, parts;
    unsigned seed = 12345;

    memset(&t, 0, sizeof(t));
    fx_init(&t.f, 50);
    t.base = ut_tempdir("stable");
    ck_assert_int_eq(rs_journal_open(&t.j, t.f.st, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_begin_set(t.j, "s", AT - APR_USEC_PER_SEC), APR_SUCCESS);
    fill(&t.f, 600, 100, 0);
    ck_assert_int_eq(sp_next(&t), 0);
    ck_assert_int_eq(rs_snapparts_read(ut_pool, t.dir, &tab), APR_SUCCESS);
    parts = tab.parts->nelts;
    ck_assert_int_gt(parts, 12);

    /* Nothing changed: every part kept. */
    ck_assert_int_eq(sp_next(&t), parts);
    /* One update in the middle: one part rewritten (two if it is a cut). */
    sp_change(&t, "d003", "f000333", RS_CHANGE_UPDATED);
    kept = sp_next(&t);
    ck_assert_int_ge(kept, parts - 2);
    ck_assert_int_lt(kept, parts);
    /* Inserts and deletes at the start, at the end, and at boundaries. */
    sp_change(&t, "", "aaa", RS_CHANGE_CREATED);
    ck_assert_int_ge(sp_next(&t), parts - 2);
    sp_change(&t, "zzz", "last", RS_CHANGE_CREATED);
    ck_assert_int_ge(sp_next(&t), parts - 2);
    for (i = 0; i < 3; i++) {
        const rs_snappart_t *s;
        ck_assert_int_eq(rs_snapparts_read(ut_pool, t.dir, &tab), APR_SUCCESS);
        s = &APR_ARRAY_IDX(tab.parts, 2 + 3 * i, rs_snappart_t);
        sp_change(&t, s->last_dir, s->last_name, RS_CHANGE_DELETED);
        ck_assert_int_ge(sp_next(&t), tab.parts->nelts - 3);
        sp_change(&t, s->last_dir, apr_pstrcat(ut_pool, s->last_name, "+", NULL),
                  RS_CHANGE_CREATED);
        ck_assert_int_ge(sp_next(&t), tab.parts->nelts - 3);
    }
    /* Random changes, several per generation. */
    for (i = 0; i < 30; i++) {
        int k, n = 1 + (int)(rand_r(&seed) % 5);
        for (k = 0; k < n; k++) {
            int x = (int)(rand_r(&seed) % 700);
            sp_change(&t, apr_psprintf(ut_pool, "d%03d", x / 100),
                      apr_psprintf(ut_pool, "f%06d", x),
                      rand_r(&seed) % 3 ? RS_CHANGE_UPDATED : RS_CHANGE_DELETED);
        }
        sp_next(&t);
    }
    /* A path relinked (its links changed, no record): its part is
     * rewritten, the others kept. */
    ck_assert_int_eq(rs_snapparts_read(ut_pool, t.dir, &tab), APR_SUCCESS);
    parts = tab.parts->nelts;
    ck_assert_int_eq(sp_next(&t), parts);
    ck_assert_int_eq(rs_journal_relink(t.j, "s", "d004", "f000444"), APR_SUCCESS);
    kept = sp_next(&t);
    ck_assert_int_ge(kept, parts - 2);
    ck_assert_int_lt(kept, parts);
    /* Other options or history: every part written. */
    t.f.o.ident = "other";
    {
        rs_snapshot_info_t info;
        const char *dir = sp_gendir(&t, 999, "x");
        t.f.o.prev_dir = t.dir;
        t.f.o.prev_gen = t.gen;
        ck_assert_int_eq(rs_snapshot_write(t.f.st, &t.f.o, dir, 999, ut_pool, &info), APR_SUCCESS);
        ck_assert_int_eq(info.reused, 0);
    }
    ck_assert_int_eq(t.f.ul.nerr, 0);
}
END_TEST

/* A listing that ends exactly on a page of rows read from the store
 * (the last page read is empty): the last part still records its last
 * entry. */
START_TEST(ends_on_a_page)
{
    fx_t f;
    rs_snapshot_info_t info;
    rs_snapparts_t tab;
    const rs_snappart_t *last;

    fx_init(&f, 100);
    fill(&f, 10000, 100, 0);
    ck_assert_int_eq(rs_snapshot_write(f.st, &f.o, f.dir, 1, ut_pool, &info), APR_SUCCESS);
    ck_assert_int_eq(info.entries, 10000);
    ck_assert_int_eq(rs_snapparts_read(ut_pool, f.dir, &tab), APR_SUCCESS);
    ck_assert_int_gt(tab.parts->nelts, 1);
    last = &APR_ARRAY_IDX(tab.parts, tab.parts->nelts - 1, rs_snappart_t);
    ck_assert_str_eq(last->last_dir, "d099");
    ck_assert_str_eq(last->last_name, "f009999");
}
END_TEST

START_TEST(index_and_parts)
{
    fx_t f;
    fx_init(&f, 5);
    fill(&f, 12, 4, 3);
    check_indexed(&f, 42, 12, 4, 5);
}
END_TEST

START_TEST(boundaries)
{
    fx_t f;
    rs_snapshot_info_t info;

    /* Exactly max entries: still a single list. */
    fx_init(&f, 6);
    fill(&f, 6, 2, 0);
    ck_assert_int_eq(rs_snapshot_write(f.st, &f.o, f.dir, 1, ut_pool, &info), APR_SUCCESS);
    ck_assert_int_eq(info.parts, 0);
    ck_assert_int_eq(info.entries, 6);
    assert_list_head(
        xmlDocGetRootElement(ut_xml_parse_file(rs_statedir_gen_file(ut_pool, f.dir, 0))), 0);

    /* One more: index with a full part and a part of one. */
    fx_init(&f, 5);
    fill(&f, 6, 2, 0);
    check_indexed(&f, 2, 6, 2, 5);

    /* max_entries 1: one entry per part. */
    fx_init(&f, 1);
    fill(&f, 3, 1, 0);
    check_indexed(&f, 3, 3, 1, 1);

    /* max_entries <= 0 means the Sitemap limit of 50000. */
    fx_init(&f, 0);
    fill(&f, 3, 1, 0);
    ck_assert_int_eq(rs_snapshot_write(f.st, &f.o, f.dir, 1, ut_pool, &info), APR_SUCCESS);
    ck_assert_int_eq(info.parts, 0);
}
END_TEST

/* Check the documents of an index snapshot written into f->dir: at most
 * max_parts parts, each with at most f->o.max_entries entries and at most
 * max_bytes bytes (0: no check), n entries in all, in order. */
static void check_limits(fx_t *f, const rs_snapshot_info_t *info, int n, int per_dir, int max_parts,
                         apr_int64_t max_bytes)
{
    xmlNodePtr idx =
        xmlDocGetRootElement(ut_xml_parse_file(rs_statedir_gen_file(ut_pool, f->dir, 0)));
    int p, k = 0;

    ck_assert_str_eq((const char *)idx->name, "sitemapindex");
    ck_assert_int_eq(ut_xml_count(idx, UT_NS_SM, "sitemap"), info->parts);
    ck_assert_int_le(info->parts, max_parts);
    for (p = 1; p <= info->parts; p++) {
        const char *path = rs_statedir_gen_file(ut_pool, f->dir, p);
        xmlNodePtr root = xmlDocGetRootElement(ut_xml_parse_file(path));
        int i, m = ut_xml_count(root, UT_NS_SM, "url");
        size_t len = 0;
        ck_assert_int_ge(m, 1);
        ck_assert_int_le(m, f->o.max_entries);
        ut_read(path, &len);
        ck_assert(max_bytes <= 0 || (apr_int64_t)len <= max_bytes);
        for (i = 0; i < m; i++, k++) {
            ck_assert_str_eq(loc_of(root, i),
                             apr_psprintf(ut_pool, BASE "d%03d/f%06d", k / per_dir, k));
        }
    }
    ck_assert_int_eq(k, n);
}

START_TEST(parts_within_max_entries)
{
    fx_t f;
    rs_snapshot_info_t info;
    int *sizes = apr_pcalloc(ut_pool, sizeof(int) * 200);

    /* 90 resources at most 10 a document: the cut interval for 10 alone
     * (2) makes far more than 10 parts; the snapshot's makes at most 10. */
    ck_assert_int_gt(cut_parts(90, 10, 10, rs_partition_interval(10), sizes), 10);
    fx_init(&f, 10);
    fill(&f, 90, 10, 0);
    ck_assert_int_eq(rs_snapshot_write(f.st, &f.o, f.dir, 1, ut_pool, &info), APR_SUCCESS);
    check_limits(&f, &info, 90, 10, 10, 0);

    /* 150 do not fit in 10 parts of 10: every part full, 15 of them (more
     * than max_entries, within what an index may name). */
    fx_init(&f, 10);
    fill(&f, 150, 10, 0);
    ck_assert_int_eq(rs_snapshot_write(f.st, &f.o, f.dir, 1, ut_pool, &info), APR_SUCCESS);
    ck_assert_int_eq(info.parts, 15);
    check_limits(&f, &info, 150, 10, 15, 0);
}
END_TEST

START_TEST(interval_for_the_set)
{
    /* Small sets: a quarter of the limit at most (rs_partition_interval). */
    ck_assert_uint_eq(rs_snapdoc_interval(50000, 50000, 0), 8192);
    ck_assert_uint_eq(rs_snapdoc_interval(50000, 50000, 100000000), 8192);
    /* Larger: doubled while the parts would pass half the index. */
    ck_assert_uint_eq(rs_snapdoc_interval(50000, 50000, 300000000), 16384);
    ck_assert_uint_eq(rs_snapdoc_interval(1000, 1000, 100000), 256);
    ck_assert_uint_eq(rs_snapdoc_interval(1000, 1000, 500000), 1024);
    /* Never past the first power of two at or above max_entries. */
    ck_assert_uint_eq(rs_snapdoc_interval(1000, 1000, APR_INT64_C(1) << 40), 1024);
    ck_assert_uint_eq(rs_snapdoc_interval(1000, 10, 100000), 1024);
}
END_TEST

START_TEST(parts_within_bytes)
{
    fx_t f;
    rs_snapshot_info_t info;
    apr_int64_t budget;

    /* 40 resources, at most 100 a document, and documents of at most the
     * frame and about 8 entries: an index of parts of at most that many
     * bytes, though the entries would fit in one list. */
    fx_init(&f, 100);
    f.o.max_bytes = 3000;
    budget = rs_snapdoc_entry_budget(&f.o, ut_pool);
    ck_assert_int_gt(budget, 1000);
    ck_assert_int_lt(budget, 3000);
    fill(&f, 40, 10, 0);
    ck_assert_int_eq(rs_snapshot_write(f.st, &f.o, f.dir, 1, ut_pool, &info), APR_SUCCESS);
    ck_assert_int_ge(info.parts, 4);
    check_limits(&f, &info, 40, 10, 100, 3000);
    /* Without the byte limit: one list. */
    fx_init(&f, 100);
    fill(&f, 40, 10, 0);
    ck_assert_int_eq(rs_snapshot_write(f.st, &f.o, f.dir, 1, ut_pool, &info), APR_SUCCESS);
    ck_assert_int_eq(info.parts, 0);
}
END_TEST

START_TEST(index_cap_in_bytes)
{
    fx_t f;
    char *long_prefix = apr_palloc(ut_pool, 3001);

    fx_init(&f, 50000);
    ck_assert_int_eq(rs_snapdoc_index_cap(&f.o, ut_pool), 50000);
    f.o.max_entries = 0;
    ck_assert_int_eq(rs_snapdoc_index_cap(&f.o, ut_pool), 50000);
    f.o.max_entries = 7;
    ck_assert_int_eq(rs_snapdoc_index_cap(&f.o, ut_pool), 7);
    /* Part URLs of 3,000 bytes: 50,000 of them pass 50 MB. */
    memset(long_prefix, 'p', 3000);
    long_prefix[3000] = 0;
    f.o.part_url_prefix = apr_pstrcat(ut_pool, PREFIX, long_prefix, NULL);
    f.o.max_entries = 50000;
    ck_assert_int_lt(rs_snapdoc_index_cap(&f.o, ut_pool), 50000);
    ck_assert_int_gt(rs_snapdoc_index_cap(&f.o, ut_pool), 15000);
    /* A small document limit: a small index. */
    f.o.part_url_prefix = PREFIX;
    f.o.max_bytes = 2000;
    ck_assert_int_lt(rs_snapdoc_index_cap(&f.o, ut_pool), 20);
    ck_assert_int_ge(rs_snapdoc_index_cap(&f.o, ut_pool), 1);
}
END_TEST

START_TEST(many_rows_across_pages)
{
    /* More rows than one page of the store (5000) and parts that end in
     * the middle of a page. */
    fx_t f;
    fx_init(&f, 3000);
    fill(&f, 12001, 1000, 0);
    check_indexed(&f, 18446744073709551615ULL, 12001, 1000, 3000);
}
END_TEST

START_TEST(write_errors)
{
    fx_t f;
    rs_snapshot_info_t info;

    fx_init(&f, 5);
    fill(&f, 3, 1, 0);
    ck_assert_int_ne(rs_snapshot_write(f.st, &f.o, ut_path(f.dir, "missing"), 1, ut_pool, &info),
                     APR_SUCCESS);
    fill(&f, 12, 4, 0);
    ck_assert_int_ne(rs_snapshot_write(f.st, &f.o, ut_path(f.dir, "missing"), 1, ut_pool, &info),
                     APR_SUCCESS);
    ck_assert(!ut_exists(ut_path(f.dir, "missing")));
}
END_TEST

/* A write that fails keeps its cause: a missing directory is ENOENT, a
 * file that cannot grow (RLIMIT_FSIZE: EFBIG, the same path as a full
 * disk) is EFBIG, not an unspecified error. */
START_TEST(write_errors_keep_their_cause)
{
    fx_t f;
    rs_snapshot_info_t info;
    struct rlimit rl;

    fx_init(&f, 50000);
    fill(&f, 200, 1, 0);
    ck_assert_int_eq(rs_snapshot_write(f.st, &f.o, ut_path(f.dir, "missing"), 1, ut_pool, &info),
                     APR_ENOENT);
    if (!ut_forking) {
        return; /* the limit would outlive the test */
    }
    signal(SIGXFSZ, SIG_IGN);
    rl.rlim_cur = rl.rlim_max = 4096;
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    ck_assert_int_eq(rs_snapshot_write(f.st, &f.o, f.dir, 1, ut_pool, &info),
                     APR_FROM_OS_ERROR(EFBIG));
    ck_assert(!ut_exists(ut_path(f.dir, "info")));
}
END_TEST

START_TEST(read_info_errors)
{
    const char *dir = ut_tempdir("info");
    rs_snapshot_info_t info;

    ck_assert_int_ne(rs_snapinfo_read(dir, ut_pool, &info), APR_SUCCESS);
    ck_assert_int_ne(rs_snapinfo_read(ut_path(dir, "nope"), ut_pool, &info), APR_SUCCESS);
    ut_write_str(ut_path(dir, "info"), "");
    ck_assert_int_ne(rs_snapinfo_read(dir, ut_pool, &info), APR_SUCCESS);
    ut_write_str(ut_path(dir, "info"), "1 2 3\n");
    ck_assert_int_eq(rs_snapinfo_read(dir, ut_pool, &info), APR_EINVAL);
    ut_write_str(ut_path(dir, "info"), "1 2 3 4 x\n");
    ck_assert_int_eq(rs_snapinfo_read(dir, ut_pool, &info), APR_EINVAL);
    /* Incomplete write: no newline yet. */
    ut_write_str(ut_path(dir, "info"), "1 2 3 4 5");
    ck_assert_int_eq(rs_snapinfo_read(dir, ut_pool, &info), APR_EINVAL);
    /* Signs, wrapped or oversized numbers, torn or padded lines. */
    {
        static const char *const bad[] = {
            "9 -2 3 4 5\n",
            "-1 2 3 4 5\n",
            "+1 2 3 4 5\n",
            "0 2 3 4 5\n",
            "18446744073709551616 2 3 4 5\n",
            "1 9223372036854775808 3 4 5\n",
            "1 2 3 4 2147483648\n",
            "1 5 3 4 5\n",
            "1  2 3 4 5\n",
            "1 2 3 4 5 \n",
            "1 2 3 4 5\nmore",
            "1 2 3 4 5\n\n",
            " 1 2 3 4 5\n",
            "1\t2 3 4 5\n",
            "1 2 3 4 5 -6\n",
            "1 2 3 4 5 6 \n",
            "1 2 3 4 5 6 7\n",
            "1 2 3 4 5 6",
            "1 2 3 4 5 9223372036854775808\n",
            "1 2 3 4 5  6\n",
        };
        size_t i;
        for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            ut_write_str(ut_path(dir, "info"), bad[i]);
            ck_assert_msg(rs_snapinfo_read(dir, ut_pool, &info) == APR_EINVAL, "accepted: %s",
                          bad[i]);
        }
    }
    ut_write_str(ut_path(dir, "info"), "9 2 3 4 5\n");
    ck_assert_int_eq(rs_snapinfo_read(dir, ut_pool, &info), APR_SUCCESS);
    ck_assert_uint_eq(info.gen, 9);
    ck_assert_int_eq(info.at, 2);
    ck_assert_int_eq(info.completed, 3);
    ck_assert_int_eq(info.entries, 4);
    ck_assert_int_eq(info.parts, 5);
    ck_assert_int_eq(info.bytes, -1); /* written before bytes were */
    ut_write_str(ut_path(dir, "info"), "9 2 3 4 5 123\n");
    ck_assert_int_eq(rs_snapinfo_read(dir, ut_pool, &info), APR_SUCCESS);
    ck_assert_int_eq(info.parts, 5);
    ck_assert_int_eq(info.bytes, 123);
    ut_write_str(ut_path(dir, "info"), "18446744073709551615 0 9223372036854775807 0 2147483647\n");
    ck_assert_int_eq(rs_snapinfo_read(dir, ut_pool, &info), APR_SUCCESS);
    ck_assert_uint_eq(info.gen, 18446744073709551615ULL);
    ck_assert_int_eq(info.completed, APR_INT64_MAX);
    ck_assert_int_eq(info.parts, 2147483647);
}
END_TEST

START_TEST(from_a_scan)
{
    /* The snapshot of a scanned tree lists exactly the store's rows, with
     * the digests of the files' content. */
    fx_t f;
    rs_snapshot_info_t info;
    xmlNodePtr root;
    const char *tree;
    ut_log_t ul;
    rs_scan_opts_t so;
    rs_scan_stats_t ss;
    apr_int64_t total;
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];

    fx_init(&f, 100);
    tree = ut_tempdir("tree");
    ut_write_str(ut_path(tree, "abc.txt"), "abc");
    ut_mkdir(ut_path(tree, "s p"));
    ut_write_str(ut_path(tree, "s p/#1.txt"), "one");
    memset(&so, 0, sizeof(so));
    so.set = "s";
    so.root = tree;
    so.hashes = RS_HASH_MD5 | RS_HASH_SHA256;
    so.cfg = "c";
    so.log = ut_log_init(&ul);
    ck_assert_int_eq(rs_scan_set(f.st, &so, ut_pool, &ss), APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_count(f.st, "s", &total), APR_SUCCESS);
    ck_assert_int_eq(total, 2);

    ck_assert_int_eq(rs_snapshot_write(f.st, &f.o, f.dir, 3, ut_pool, &info), APR_SUCCESS);
    ck_assert_int_eq(info.entries, total);
    root = xmlDocGetRootElement(ut_xml_parse_file(rs_statedir_gen_file(ut_pool, f.dir, 0)));
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), 2);
    ck_assert_str_eq(loc_of(root, 0), BASE "abc.txt");
    ck_assert_str_eq(loc_of(root, 1), BASE "s%20p/%231.txt");
    ck_assert_str_eq(
        ut_xml_attr(ut_xml_child(ut_xml_child(root, UT_NS_SM, "url", 0), UT_NS_RS, "md", 0),
                    "hash"),
        apr_pstrcat(ut_pool, "md5:", abc_md5, " sha-256:", abc_sha256, NULL));
    rs_hash_buf("one", 3, RS_HASH_MD5 | RS_HASH_SHA256, hex);
    ck_assert_str_eq(
        ut_xml_attr(ut_xml_child(ut_xml_child(root, UT_NS_SM, "url", 1), UT_NS_RS, "md", 0),
                    "hash"),
        apr_pstrcat(ut_pool, "md5:", hex[0], " sha-256:", hex[2], NULL));
    ck_assert_str_eq(
        ut_xml_attr(ut_xml_child(ut_xml_child(root, UT_NS_SM, "url", 1), UT_NS_RS, "md", 0),
                    "length"),
        "3");
}
END_TEST

START_TEST(long_paths)
{
    /* Long relative paths whose every byte is percent-encoded: a deep tree
     * stores paths of any length, far beyond PATH_MAX (20,000 bytes here,
     * 60,000 once escaped). */
    fx_t f;
    rs_snapshot_info_t info;
    xmlNodePtr root;
    char *d1 = apr_palloc(ut_pool, 10001), *d2 = apr_palloc(ut_pool, 10001);
    char *name = apr_palloc(ut_pool, 256);
    const char *dir;

    memset(d1, '%', 10000);
    d1[10000] = '\0';
    memset(d2, '#', 10000);
    d2[10000] = '\0';
    memset(name, '\xE9', 255);
    name[255] = '\0';
    dir = apr_pstrcat(ut_pool, d1, "/", d2, NULL);
    fx_init(&f, 10);
    add(&f, dir, name, 1, 1);
    add(&f, "", "short", 2, 1);
    ck_assert_int_eq(rs_snapshot_write(f.st, &f.o, f.dir, 1, ut_pool, &info), APR_SUCCESS);
    ck_assert_int_eq(info.entries, 2);
    root = xmlDocGetRootElement(ut_xml_parse_file(rs_statedir_gen_file(ut_pool, f.dir, 0)));
    ck_assert_str_eq(loc_of(root, 0), BASE "short");
    ck_assert_str_eq(loc_of(root, 1), apr_pstrcat(ut_pool, BASE, rs_uri_escape_path(ut_pool, dir),
                                                  "/", rs_uri_escape_path(ut_pool, name), NULL));
    ck_assert_uint_eq(strlen(loc_of(root, 1)), strlen(BASE) + 3 * 20000 + 1 + 1 + 3 * 255);
}
END_TEST

Suite *snapshot_suite(void)
{
    Suite *s = suite_create("rs_snapshot");
    TCase *tc = ut_tcase("snapshot", 120);
    tcase_add_test(tc, file_names);
    tcase_add_test(tc, single_list);
    tcase_add_test(tc, bytes_as_the_writer_writes);
    tcase_add_test(tc, empty_set);
    tcase_add_test(tc, index_and_parts);
    tcase_add_test(tc, stable_parts);
    tcase_add_test(tc, ends_on_a_page);
    tcase_add_test(tc, boundaries);
    tcase_add_test(tc, many_rows_across_pages);
    tcase_add_test(tc, parts_within_max_entries);
    tcase_add_test(tc, interval_for_the_set);
    tcase_add_test(tc, parts_within_bytes);
    tcase_add_test(tc, index_cap_in_bytes);
    tcase_add_test(tc, long_paths);
    tcase_add_test(tc, write_errors);
    tcase_add_test(tc, write_errors_keep_their_cause);
    tcase_add_test(tc, read_info_errors);
    tcase_add_test(tc, from_a_scan);
    suite_add_tcase(s, tc);
    return s;
}
