/* SPDX-License-Identifier: Apache-2.0 */
/* test_cdump.c - rs_cdump: Change Dump packages from the journal and the
 * captured bytes, changedump.xml, pruning. */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_capture.h"
#include "rs_cdump.h"
#include "rs_cdumpdoc.h"
#include "rs_entry.h"
#include "rs_hash.h"
#include "rs_journal.h"
#include "rs_schema.h"
#include "rs_statedir.h"
#include "rs_time.h"
#include "rs_withdraw.h"

typedef struct {
    rs_db_t *st;
    rs_journal_t *j;
    ut_log_t ul;
    rs_cdump_opts_t o;
} cf_t;

static void cf_init(cf_t *f)
{
    const char *base = ut_tempdir("cdump");
    memset(f, 0, sizeof(*f));
    ck_assert_int_eq(
        rs_schema_open(&f->st, ut_pool, "sqlite3", ut_path(base, "state.db"), ut_log_init(&f->ul)),
        APR_SUCCESS);
    ck_assert_int_eq(rs_journal_open(&f->j, f->st, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_begin_set(f->j, "s", apr_time_now()), APR_SUCCESS);
    f->o.set = "s";
    f->o.dir = ut_path(base, "changedumps/s");
    f->o.capture_dir = ut_path(base, "capture/s");
    f->o.history = "0123abcd";
    f->o.url_base = "http://example.org/files/";
    f->o.capability_url = "http://example.org/rs/s/capabilitylist.xml";
    f->o.pkg_url_prefix = "http://example.org/rs/s/changedump/0123abcd-";
    f->o.hashes = RS_HASH_MD5 | RS_HASH_SHA256;
}

/* Journal a change of dir/name to content (captured unless !capture),
 * with content coding enc. */
static rs_record_t *change_enc(cf_t *f, const char *dir, const char *name, int kind,
                               const char *content, int capture, const char *enc)
{
    rs_record_t *r = apr_pcalloc(ut_pool, sizeof(*r));
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    rs_hash_buf(content, strlen(content), f->o.hashes, hex);
    r->dir = dir;
    r->name = name;
    r->change = kind;
    r->lastmod_ns = 1600000000LL * 1000000000;
    r->size = (apr_int64_t)strlen(content);
    r->type = "text/plain";
    r->encoding = enc;
    r->hash[0] = apr_pstrdup(ut_pool, hex[0]);
    r->hash[2] = apr_pstrdup(ut_pool, hex[2]);
    ck_assert_int_eq(rs_journal_append(f->j, "s", r), APR_SUCCESS);
    if (capture && kind != RS_CHANGE_DELETED) {
        rs_capture_tmp_t t;
        ck_assert_int_eq(rs_capture_open(&t, f->o.capture_dir), 0);
        ck_assert_int_eq(write(t.fd, content, strlen(content)), (ssize_t)strlen(content));
        ck_assert_int_eq(rs_capture_keep(&t, hex[2], r->lastmod_ns), 0);
    }
    return r;
}

static rs_record_t *change(cf_t *f, const char *dir, const char *name, int kind,
                           const char *content, int capture)
{
    return change_enc(f, dir, name, kind, content, capture, NULL);
}

static rs_changelist_t close_list(cf_t *f)
{
    rs_changelist_t cl;
    ck_assert_int_eq(rs_journal_close(f->j, ut_pool, "s", -1, 0, apr_time_now(), &cl), APR_SUCCESS);
    ck_assert_int_gt(cl.id, 0);
    return cl;
}

static char *member(zip_t *za, const char *name, zip_uint64_t *len)
{
    zip_stat_t zs;
    zip_file_t *zf;
    char *buf;
    ck_assert_msg(zip_stat(za, name, 0, &zs) == 0, "no member %s", name);
    buf = apr_pcalloc(ut_pool, zs.size + 1);
    zf = zip_fopen(za, name, 0);
    ck_assert_ptr_nonnull(zf);
    ck_assert_int_eq(zip_fread(zf, buf, zs.size), (zip_int64_t)zs.size);
    zip_fclose(zf);
    *len = zs.size;
    return buf;
}

/* The packages' disk use: the ".zip" files of the directory only. */
START_TEST(bytes_of_the_packages)
{
    char *dir = ut_tempdir("cdump-bytes");

    ck_assert_int_eq(rs_cdump_bytes(ut_path(dir, "none"), ut_pool), 0);
    ut_write_str(ut_path(dir, "changedump-1.zip"), "12345");
    ut_write_str(ut_path(dir, "changedump-2.zip"), "123");
    ut_write_str(ut_path(dir, "changedump.xml"), "not a package");
    ut_write_str(ut_path(dir, ".zip"), "a name of four bytes");
    ck_assert_int_eq(mkdir(ut_path(dir, "d.zip"), 0700), 0);
    ck_assert_int_eq(rs_cdump_bytes(dir, ut_pool), 8);
}
END_TEST

START_TEST(package_holds_every_version)
{
    cf_t f;
    rs_record_t *r1, *r2, *r3, *rc;
    rs_changelist_t cl;
    rs_cdump_result_t res;
    const char *zpath;
    zip_t *za;
    int err;
    zip_uint64_t len;
    size_t mlen;
    char *man, *copy;
    rs_cdumpdoc_t ix;
    xmlDocPtr doc;
    xmlNodePtr url, md;
    struct stat sb;

    cf_init(&f);
    r1 = change(&f, "", "a.txt", RS_CHANGE_CREATED, "one", 1);
    r2 = change(&f, "", "a.txt", RS_CHANGE_UPDATED, "two 2", 1);
    change(&f, "", "b.txt", RS_CHANGE_DELETED, "bee", 0);
    r3 = change(&f, "", "a.txt", RS_CHANGE_UPDATED, "three 3", 1);
    rc = change(&f, "sub", "c d.txt", RS_CHANGE_CREATED, "one", 1); /* same bytes as r1 */
    cl = close_list(&f);
    ck_assert_int_eq(rs_cdump_done(&f.o, cl.id, ut_pool), 0);
    ck_assert_int_eq(rs_cdump_package(f.j, &f.o, &cl, ut_pool, &res), APR_SUCCESS);
    ck_assert_int_eq(rs_cdump_done(&f.o, cl.id, ut_pool), 1);
    ck_assert_int_eq(res.withheld, 0);
    zpath = rs_statedir_cdump_file(ut_pool, f.o.dir, f.o.history, cl.id, 0);
    ck_assert_int_eq(stat(zpath, &sb), 0);
    ck_assert_int_eq(res.bytes, sb.st_size);

    za = zip_open(zpath, ZIP_RDONLY | ZIP_CHECKCONS, &err);
    ck_assert_ptr_nonnull(za);
    ck_assert_int_eq(zip_get_num_entries(za, 0), 5); /* manifest + 4 versions */
    ck_assert_str_eq(zip_get_name(za, 0, 0), "manifest.xml");
    ck_assert_str_eq(
        member(za, apr_psprintf(ut_pool, "changes/%" APR_INT64_T_FMT "/a.txt", r1->seq), &len),
        "one");
    ck_assert_str_eq(
        member(za, apr_psprintf(ut_pool, "changes/%" APR_INT64_T_FMT "/a.txt", r2->seq), &len),
        "two 2");
    ck_assert_str_eq(
        member(za, apr_psprintf(ut_pool, "changes/%" APR_INT64_T_FMT "/a.txt", r3->seq), &len),
        "three 3");
    ck_assert_str_eq(
        member(za, apr_psprintf(ut_pool, "changes/%" APR_INT64_T_FMT "/sub/c d.txt", rc->seq),
               &len),
        "one");
    man = member(za, "manifest.xml", &len);
    zip_close(za);
    copy = ut_read(rs_statedir_cdump_file(ut_pool, f.o.dir, f.o.history, cl.id, 1), &mlen);
    ck_assert_uint_eq(mlen, len);
    ck_assert_mem_eq(copy, man, mlen);

    doc = ut_xml_parse(man, len);
    md = ut_xml_child(xmlDocGetRootElement(doc), UT_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(md, "capability"), "changedump-manifest");
    ck_assert_ptr_nonnull(ut_xml_attr(md, "from"));
    ck_assert_ptr_nonnull(ut_xml_attr(md, "until"));
    ck_assert_str_eq(ut_xml_attr(ut_xml_ln(xmlDocGetRootElement(doc), "up"), "href"),
                     f.o.capability_url);
    ck_assert_int_eq(ut_xml_count(xmlDocGetRootElement(doc), UT_NS_SM, "url"), 5);
    url = ut_xml_child(xmlDocGetRootElement(doc), UT_NS_SM, "url", 2); /* the deletion */
    md = ut_xml_child(url, UT_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_child_text(url, UT_NS_SM, "loc"), "http://example.org/files/b.txt");
    ck_assert_str_eq(ut_xml_attr(md, "change"), "deleted");
    ck_assert_ptr_null(ut_xml_attr(md, "path"));
    url = ut_xml_child(xmlDocGetRootElement(doc), UT_NS_SM, "url", 4);
    md = ut_xml_child(url, UT_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_child_text(url, UT_NS_SM, "loc"),
                     "http://example.org/files/sub/c%20d.txt");
    ck_assert_str_eq(ut_xml_attr(md, "change"), "created");
    ck_assert_str_eq(ut_xml_attr(md, "path"),
                     apr_psprintf(ut_pool, "/changes/%" APR_INT64_T_FMT "/sub/c d.txt", rc->seq));
    ck_assert_str_eq(ut_xml_attr(md, "length"), "3");

    /* The Change Dump lists the package with its length and digests. */
    {
        apr_array_header_t *closed;
        rs_changelist_t openl;
        char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
        size_t zlen;
        char *zbytes = ut_read(zpath, &zlen);
        rs_hash_buf(zbytes, zlen, RS_HASH_MD5, hex);
        ck_assert_int_eq(rs_journal_lists(f.j, ut_pool, "s", &closed, &openl), APR_SUCCESS);
        ck_assert_int_eq(rs_cdumpdoc_write(&f.o, closed, openl.from, ut_pool, &ix), APR_SUCCESS);
        ck_assert_int_eq(ix.bytes, (apr_int64_t)zlen);
        ck_assert_int_eq(ix.packages, 1);
        ck_assert_int_eq(ix.gap, 0);
        doc = ut_xml_parse_file(rs_statedir_cdump_file(ut_pool, f.o.dir, f.o.history, 0, 0));
        md = ut_xml_child(xmlDocGetRootElement(doc), UT_NS_RS, "md", 0);
        ck_assert_str_eq(ut_xml_attr(md, "capability"), "changedump");
        ck_assert_ptr_null(ut_xml_attr(md, "until"));
        url = ut_xml_child(xmlDocGetRootElement(doc), UT_NS_SM, "url", 0);
        ck_assert_str_eq(
            ut_xml_child_text(url, UT_NS_SM, "loc"),
            apr_psprintf(ut_pool, "%s%" APR_INT64_T_FMT ".zip", f.o.pkg_url_prefix, cl.id));
        md = ut_xml_child(url, UT_NS_RS, "md", 0);
        ck_assert_str_eq(ut_xml_attr(md, "length"),
                         apr_psprintf(ut_pool, "%" APR_SIZE_T_FMT, zlen));
        ck_assert(
            !strncmp(ut_xml_attr(md, "hash"), apr_pstrcat(ut_pool, "md5:", hex[0], NULL), 36));
        ck_assert_str_eq(ut_xml_attr(md, "type"), "application/zip");
    }
}
END_TEST

/* A version's content coding (journaled with it) is listed in the
 * manifest after its type, as in the Change List. */
START_TEST(manifest_lists_the_encoding)
{
    cf_t f;
    rs_changelist_t cl;
    rs_cdump_result_t res;
    size_t mlen;
    char *man;
    xmlDocPtr doc;
    xmlNodePtr md;

    cf_init(&f);
    change(&f, "", "plain.txt", RS_CHANGE_CREATED, "one", 1);
    change_enc(&f, "", "a.txt.gz", RS_CHANGE_CREATED, "two", 1, "gzip");
    cl = close_list(&f);
    ck_assert_int_eq(rs_cdump_package(f.j, &f.o, &cl, ut_pool, &res), APR_SUCCESS);
    man = ut_read(rs_statedir_cdump_file(ut_pool, f.o.dir, f.o.history, cl.id, 1), &mlen);
    doc = ut_xml_parse(man, mlen);
    md = ut_xml_child(ut_xml_child(xmlDocGetRootElement(doc), UT_NS_SM, "url", 0), UT_NS_RS, "md",
                      0);
    ck_assert_ptr_null(ut_xml_attr(md, "encoding"));
    md = ut_xml_child(ut_xml_child(xmlDocGetRootElement(doc), UT_NS_SM, "url", 1), UT_NS_RS, "md",
                      0);
    ck_assert_str_eq(ut_xml_attr(md, "type"), "text/plain");
    ck_assert_str_eq(ut_xml_attr(md, "encoding"), "gzip");
}
END_TEST

/* A Change Dump Manifest's entries take at most the Change List's entries
 * plus rs_cdump_path_len each (the watcher closes a set's lists on that,
 * so a manifest stays within 50 MB as its list does): checked with names
 * whose paths are long, escaped ("&"), not ASCII, or not portable (':'),
 * and a deletion.  The list's own bytes are not enough. */
START_TEST(manifest_within_list_bytes_and_paths)
{
    cf_t f;
    rs_changelist_t cl;
    rs_cdump_result_t res;
    rs_entry_opts_t eo = { NULL, 0, 0 };
    rs_entry_renderer_t *rr;
    apr_array_header_t *recs;
    apr_int64_t entries = 0, paths = 0;
    size_t mlen;
    int i;

    cf_init(&f);
    for (i = 0; i < 40; i++) {
        char name[160];
        memset(name, "n&e:"[i % 4], 100);
        apr_snprintf(name + 100, sizeof(name) - 100, "%s%02d.txt", i % 4 == 2 ? "\xc3\xa9" : "", i);
        change(&f, "d&d", apr_pstrdup(ut_pool, name), RS_CHANGE_CREATED,
               apr_psprintf(ut_pool, "c%d", i), 1);
    }
    change(&f, "", "gone.txt", RS_CHANGE_DELETED, "", 0);
    cl = close_list(&f);
    ck_assert_int_eq(rs_cdump_package(f.j, &f.o, &cl, ut_pool, &res), APR_SUCCESS);
    ut_read(rs_statedir_cdump_file(ut_pool, f.o.dir, f.o.history, cl.id, 1), &mlen);

    eo.url_base = f.o.url_base;
    eo.hashes = f.o.hashes;
    rr = rs_entry_renderer_create(ut_pool, &eo);
    ck_assert_int_eq(rs_journal_records(f.j, ut_pool, "s", cl.first_seq, cl.last_seq, 1000, &recs),
                     APR_SUCCESS);
    ck_assert_int_eq(recs->nelts, 41);
    for (i = 0; i < recs->nelts; i++) {
        apr_size_t len;
        ck_assert_ptr_nonnull(rs_entry_render(rr, &APR_ARRAY_IDX(recs, i, rs_record_t), &len));
        entries += (apr_int64_t)len;
        paths += rs_cdump_path_len(ut_pool, &APR_ARRAY_IDX(recs, i, rs_record_t));
    }
    /* 1024: room for the manifest's head and tail */
    ck_assert_int_gt((apr_int64_t)mlen, entries + 1024);
    ck_assert_int_le((apr_int64_t)mlen, entries + paths + 1024);
}
END_TEST

START_TEST(missing_capture_skips_the_package)
{
    char from[RS_TIME_BUFSIZE];
    cf_t f;
    rs_changelist_t cl1, cl2;
    rs_cdump_result_t res;
    apr_array_header_t *closed;
    rs_changelist_t openl;
    rs_cdumpdoc_t ix;
    xmlDocPtr doc;

    cf_init(&f);
    change(&f, "", "ok.txt", RS_CHANGE_CREATED, "fine", 1);
    cl1 = close_list(&f);
    change(&f, "", "lost.txt", RS_CHANGE_CREATED, "never captured", 0);
    cl2 = close_list(&f);
    ck_assert_int_eq(rs_cdump_package(f.j, &f.o, &cl1, ut_pool, &res), APR_SUCCESS);
    ck_assert_int_eq(rs_cdump_package(f.j, &f.o, &cl2, ut_pool, &res), RS_CDUMP_EMISSING);
    ck_assert_ptr_nonnull(strstr(res.missing, "lost.txt"));
    ck_assert_int_eq(rs_cdump_done(&f.o, cl2.id, ut_pool), 1); /* not tried again */
    ck_assert(!ut_exists(rs_statedir_cdump_file(ut_pool, f.o.dir, f.o.history, cl2.id, 0)));
    ck_assert_int_eq(rs_journal_lists(f.j, ut_pool, "s", &closed, &openl), APR_SUCCESS);
    ck_assert_int_eq(rs_cdumpdoc_write(&f.o, closed, openl.from, ut_pool, &ix), APR_SUCCESS);
    /* The Change Dump never claims the interval it does not carry: its
     * coverage starts after the list without a package, and the package
     * before that list is no longer listed. */
    doc = ut_xml_parse_file(rs_statedir_cdump_file(ut_pool, f.o.dir, f.o.history, 0, 0));
    ck_assert_int_eq(ut_xml_count(xmlDocGetRootElement(doc), UT_NS_SM, "url"), 0);
    ck_assert_str_eq(
        ut_xml_attr(ut_xml_child(xmlDocGetRootElement(doc), UT_NS_RS, "md", 0), "from"),
        rs_time_format(from, cl2.until));
    ck_assert_int_eq(ix.gap, cl2.id);
    ck_assert_int_eq(ix.packages, 0);
    ck_assert_int_eq(ix.from, cl2.until);
    ck_assert(ut_exists(rs_statedir_cdump_file(ut_pool, f.o.dir, f.o.history, cl1.id, 0)));
    {
        /* A later package is listed, from its list's from. */
        rs_changelist_t cl3;
        apr_array_header_t *all;
        change(&f, "", "later.txt", RS_CHANGE_CREATED, "later", 1);
        cl3 = close_list(&f);
        ck_assert_int_eq(rs_cdump_package(f.j, &f.o, &cl3, ut_pool, &res), APR_SUCCESS);
        ck_assert_int_eq(rs_journal_lists(f.j, ut_pool, "s", &all, &openl), APR_SUCCESS);
        ck_assert_int_eq(rs_cdumpdoc_write(&f.o, all, openl.from, ut_pool, &ix), APR_SUCCESS);
        doc = ut_xml_parse_file(rs_statedir_cdump_file(ut_pool, f.o.dir, f.o.history, 0, 0));
        ck_assert_int_eq(ut_xml_count(xmlDocGetRootElement(doc), UT_NS_SM, "url"), 1);
        ck_assert_str_eq(
            ut_xml_attr(ut_xml_child(xmlDocGetRootElement(doc), UT_NS_RS, "md", 0), "from"),
            rs_time_format(from, cl3.from));
        ck_assert_str_eq(
            ut_xml_child_text(ut_xml_child(xmlDocGetRootElement(doc), UT_NS_SM, "url", 0), UT_NS_SM,
                              "loc"),
            apr_psprintf(ut_pool, "%s%" APR_INT64_T_FMT ".zip", f.o.pkg_url_prefix, cl3.id));
        ck_assert_int_eq(ix.gap, cl2.id);
        ck_assert_int_eq(ix.packages, 1);
    }

    /* Retention dropped the first list: its files go, temporary files
     * too; the second's marker stays. */
    ut_write_str(ut_path(f.o.dir, ".tmp-0123abcd-9.zip.XYZ"), "partial");
    ut_write_str(ut_path(f.o.dir, "feedf00d-1.zip"), "another history");
    apr_array_pop(closed);
    *(rs_changelist_t *)closed->elts = cl2;
    rs_cdump_prune(&f.o, closed, ut_pool);
    ck_assert(!ut_exists(rs_statedir_cdump_file(ut_pool, f.o.dir, f.o.history, cl1.id, 0)));
    ck_assert(!ut_exists(rs_statedir_cdump_file(ut_pool, f.o.dir, f.o.history, cl1.id, 1)));
    ck_assert(!ut_exists(ut_path(f.o.dir, ".tmp-0123abcd-9.zip.XYZ")));
    ck_assert(!ut_exists(ut_path(f.o.dir, "feedf00d-1.zip")));
    ck_assert_int_eq(rs_cdump_done(&f.o, cl1.id, ut_pool), 0);
    ck_assert_int_eq(rs_cdump_done(&f.o, cl2.id, ut_pool), 1);
    ck_assert(ut_exists(rs_statedir_cdump_file(ut_pool, f.o.dir, f.o.history, 0, 0)));
}
END_TEST

/* A lost capture is made again from the file at its path when the file
 * still has the version's bytes (same length, same SHA-256 digest): the
 * package is built as it would have been; a file with other bytes of the
 * same length, or another length, does not stand in for the version. */
START_TEST(lost_capture_taken_again_from_the_file)
{
    cf_t f;
    rs_record_t *r;
    rs_changelist_t cl1, cl2;
    rs_cdump_result_t res;
    const char *root = ut_path(ut_tempdir("cdroot"), "root");
    zip_uint64_t len;
    zip_t *za;
    int err;

    cf_init(&f);
    ut_mkdir(root);
    f.o.root = root;
    ut_write_str(ut_path(root, "same.txt"), "same bytes");
    r = change(&f, "", "same.txt", RS_CHANGE_CREATED, "same bytes", 0);
    cl1 = close_list(&f);
    ck_assert_int_eq(rs_cdump_package(f.j, &f.o, &cl1, ut_pool, &res), APR_SUCCESS);
    ck_assert_int_eq(res.recaptured, 1);
    ck_assert(rs_capture_has(f.o.capture_dir, rs_capture_key(r->hash)));
    za = zip_open(rs_statedir_cdump_file(ut_pool, f.o.dir, f.o.history, cl1.id, 0),
                  ZIP_RDONLY | ZIP_CHECKCONS, &err);
    ck_assert_ptr_nonnull(za);
    ck_assert_str_eq(
        member(za, apr_psprintf(ut_pool, "changes/%" APR_INT64_T_FMT "/same.txt", r->seq), &len),
        "same bytes");
    zip_close(za);

    /* The file changed since: same length, other bytes; then shorter. */
    ut_write_str(ut_path(root, "other.txt"), "other byte");
    change(&f, "", "other.txt", RS_CHANGE_CREATED, "other text", 0);
    cl2 = close_list(&f);
    ck_assert_int_eq(rs_cdump_package(f.j, &f.o, &cl2, ut_pool, &res), RS_CDUMP_EMISSING);
    ck_assert_int_eq(res.recaptured, 0);
    ck_assert_ptr_nonnull(strstr(res.missing, "other.txt"));
    ut_write_str(ut_path(root, "short.txt"), "short");
    change(&f, "", "short.txt", RS_CHANGE_CREATED, "short and more", 0);
    cl2 = close_list(&f);
    ck_assert_int_eq(rs_cdump_package(f.j, &f.o, &cl2, ut_pool, &res), RS_CDUMP_EMISSING);
    ck_assert_int_eq(res.recaptured, 0);
}
END_TEST

/* The packages of changedump.xml, or its parts' URLs when it is an index. */
static int doc_count(const char *path, const char *entry)
{
    xmlDocPtr doc = ut_xml_parse_file(path);
    return ut_xml_count(xmlDocGetRootElement(doc), UT_NS_SM, entry);
}

/* More packages than one document may list (ResourceSyncMaxEntries, or
 * fewer when their bytes could pass the limit): changedump.xml is a
 * Change Dump Index (section 13.1) of parts by list id, each a Change
 * Dump with rs:ln index, until on all but the newest; parts are kept by
 * pruning and removed when no longer in the layout. */
START_TEST(index_when_the_packages_do_not_fit)
{
    cf_t f;
    rs_changelist_t cl[5], openl;
    rs_cdump_result_t res;
    rs_cdumpdoc_t ix;
    apr_array_header_t *closed;
    const char *cd;
    char t[RS_TIME_BUFSIZE];
    xmlDocPtr doc;
    xmlNodePtr root, sm, md;
    int i;

    cf_init(&f);
    f.o.index_url = "http://example.org/rs/s/changedump.xml";
    f.o.part_url_prefix = "http://example.org/rs/s/changedump/0123abcd-part-";
    f.o.list_max = 2;
    for (i = 0; i < 5; i++) {
        change(&f, "", apr_psprintf(ut_pool, "f%d.txt", i), RS_CHANGE_CREATED,
               apr_psprintf(ut_pool, "content %d", i), 1);
        cl[i] = close_list(&f);
        ck_assert_int_eq(rs_cdump_package(f.j, &f.o, &cl[i], ut_pool, &res), APR_SUCCESS);
    }
    ck_assert_int_eq(cl[0].id, 1);
    ck_assert_int_eq(rs_journal_lists(f.j, ut_pool, "s", &closed, &openl), APR_SUCCESS);
    ck_assert_int_eq(rs_cdumpdoc_write(&f.o, closed, openl.from, ut_pool, &ix), APR_SUCCESS);
    ck_assert_int_eq(ix.parts, 3);
    ck_assert_int_eq(ix.per_part, 2);
    ck_assert_int_eq(ix.packages, 5);
    ck_assert_int_eq(ix.created->nelts, 3);
    ck_assert_int_eq(rs_cdumpdoc_part_of(&ix, 5), 3);
    cd = rs_statedir_cdump_file(ut_pool, f.o.dir, f.o.history, 0, 0);
    doc = ut_xml_parse_file(cd);
    root = xmlDocGetRootElement(doc);
    ck_assert_str_eq((const char *)root->name, "sitemapindex");
    md = ut_xml_child(root, UT_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(md, "capability"), "changedump");
    ck_assert_str_eq(ut_xml_attr(md, "from"), rs_time_format(t, cl[0].from));
    ck_assert_ptr_null(ut_xml_attr(md, "until"));
    ck_assert_str_eq(ut_xml_attr(ut_xml_ln(root, "up"), "href"), f.o.capability_url);
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "sitemap"), 3);
    for (i = 0; i < 3; i++) {
        sm = ut_xml_child(root, UT_NS_SM, "sitemap", i);
        ck_assert_str_eq(ut_xml_child_text(sm, UT_NS_SM, "loc"),
                         apr_psprintf(ut_pool, "%s%d.xml", f.o.part_url_prefix, i + 1));
        md = ut_xml_child(sm, UT_NS_RS, "md", 0);
        ck_assert_str_eq(ut_xml_attr(md, "from"), rs_time_format(t, cl[2 * i].from));
        if (i < 2) {
            ck_assert_str_eq(ut_xml_attr(md, "until"), rs_time_format(t, cl[2 * i + 1].until));
        }
        else {
            ck_assert_ptr_null(ut_xml_attr(md, "until"));
        }
    }
    /* Part 2: a Change Dump of lists 3 and 4, closed, under the index. */
    doc = ut_xml_parse_file(rs_statedir_cdump_part(ut_pool, f.o.dir, f.o.history, 2));
    root = xmlDocGetRootElement(doc);
    ck_assert_str_eq((const char *)root->name, "urlset");
    ck_assert_str_eq(ut_xml_attr(ut_xml_ln(root, "index"), "href"), f.o.index_url);
    ck_assert_str_eq(ut_xml_attr(ut_xml_ln(root, "up"), "href"), f.o.capability_url);
    md = ut_xml_child(root, UT_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(md, "capability"), "changedump");
    ck_assert_str_eq(ut_xml_attr(md, "from"), rs_time_format(t, cl[2].from));
    ck_assert_str_eq(ut_xml_attr(md, "until"), rs_time_format(t, cl[3].until));
    ck_assert_int_eq(ut_xml_count(root, UT_NS_SM, "url"), 2);
    ck_assert_str_eq(ut_xml_child_text(ut_xml_child(root, UT_NS_SM, "url", 0), UT_NS_SM, "loc"),
                     apr_psprintf(ut_pool, "%s3.zip", f.o.pkg_url_prefix));
    ck_assert_int_eq(doc_count(rs_statedir_cdump_part(ut_pool, f.o.dir, f.o.history, 3), "url"), 1);

    /* Pruning keeps the parts; written again, no part is new. */
    ck_assert_int_eq(rs_cdump_prune(&f.o, closed, ut_pool), 0);
    ck_assert_int_eq(rs_cdumpdoc_write(&f.o, closed, openl.from, ut_pool, &ix), APR_SUCCESS);
    ck_assert_int_eq(ix.created->nelts, 0);

    /* Bytes: a limit that fits one package per document. */
    f.o.max_bytes = 1200;
    ck_assert_int_eq(rs_cdumpdoc_write(&f.o, closed, openl.from, ut_pool, &ix), APR_SUCCESS);
    ck_assert_int_eq(ix.per_part, 1);
    ck_assert_int_eq(ix.parts, 5);
    ck_assert_int_eq(doc_count(cd, "sitemap"), 5);
    for (i = 1; i <= 5; i++) {
        const char *part = rs_statedir_cdump_part(ut_pool, f.o.dir, f.o.history, i);
        apr_finfo_t fi;
        ck_assert_int_eq(apr_stat(&fi, part, APR_FINFO_SIZE, ut_pool), APR_SUCCESS);
        ck_assert_int_le(fi.size, 1200);
        ck_assert_int_eq(doc_count(part, "url"), 1);
    }

    /* They fit again: a plain Change Dump, the parts gone. */
    f.o.max_bytes = 0;
    f.o.list_max = 5;
    ck_assert_int_eq(rs_cdumpdoc_write(&f.o, closed, openl.from, ut_pool, &ix), APR_SUCCESS);
    ck_assert_int_eq(ix.parts, 0);
    ck_assert_int_eq(doc_count(cd, "url"), 5);
    for (i = 1; i <= 5; i++) {
        ck_assert(!ut_exists(rs_statedir_cdump_part(ut_pool, f.o.dir, f.o.history, i)));
    }
}
END_TEST

/* ResourceSyncSpecVersion 1.0: a manifest entry has no datetime and its
 * <lastmod> is the change time (1.0 section 13.2), for a deletion too;
 * 1.1 (the other test) has the resource's modification time there. */
START_TEST(spec10_manifest_has_the_change_time_in_lastmod)
{
    cf_t f;
    rs_record_t *rc, *rd;
    rs_changelist_t cl;
    rs_cdump_result_t res;
    char lm[RS_TIME_BUFSIZE];
    size_t len;
    char *man;
    xmlDocPtr doc;
    xmlNodePtr url;

    cf_init(&f);
    f.o.spec10 = 1;
    rc = change(&f, "", "a.txt", RS_CHANGE_CREATED, "one", 1);
    rd = change(&f, "", "b.txt", RS_CHANGE_DELETED, "bee", 0);
    cl = close_list(&f);
    ck_assert_int_eq(rs_cdump_package(f.j, &f.o, &cl, ut_pool, &res), APR_SUCCESS);
    man = ut_read(rs_statedir_cdump_file(ut_pool, f.o.dir, f.o.history, cl.id, 1), &len);
    ck_assert_ptr_null(strstr(man, "datetime="));
    doc = ut_xml_parse(man, len);
    url = ut_xml_child(xmlDocGetRootElement(doc), UT_NS_SM, "url", 0);
    ck_assert_str_eq(ut_xml_child_text(url, UT_NS_SM, "lastmod"), rs_time_format(lm, rc->datetime));
    ck_assert_str_ne(ut_xml_child_text(url, UT_NS_SM, "lastmod"),
                     rs_time_format_ns(lm, rc->lastmod_ns));
    ck_assert_str_eq(ut_xml_attr(ut_xml_child(url, UT_NS_RS, "md", 0), "path"),
                     apr_psprintf(ut_pool, "/changes/%" APR_INT64_T_FMT "/a.txt", rc->seq));
    url = ut_xml_child(xmlDocGetRootElement(doc), UT_NS_SM, "url", 1);
    ck_assert_str_eq(ut_xml_child_text(url, UT_NS_SM, "lastmod"), rs_time_format(lm, rd->datetime));
    ck_assert_str_eq(ut_xml_attr(ut_xml_child(url, UT_NS_RS, "md", 0), "change"), "deleted");
}
END_TEST

/* The manifest entry of a path in the package of list id (rev), and
 * whether the package has a member below changes/ for it. */
static xmlNodePtr entry_of(cf_t *f, apr_int64_t id, int rev, const char *loc_tail, int *has)
{
    const char *zpath = rs_statedir_cdump_pkg(ut_pool, f->o.dir, f->o.history, id, rev, 0);
    int err;
    zip_int64_t i, n;
    zip_t *za = zip_open(zpath, ZIP_RDONLY | ZIP_CHECKCONS, &err);
    zip_uint64_t len;
    char *man;
    xmlDocPtr doc;
    xmlNodePtr found = NULL;

    ck_assert_msg(za != NULL, "no package %s", zpath);
    man = member(za, "manifest.xml", &len);
    *has = 0;
    for (i = 1, n = zip_get_num_entries(za, 0); i < n; i++) {
        const char *nm = zip_get_name(za, (zip_uint64_t)i, 0);
        *has |= strlen(nm) > strlen(loc_tail)
                && !strcmp(nm + strlen(nm) - strlen(loc_tail), loc_tail);
    }
    zip_close(za);
    doc = ut_xml_parse(man, len);
    for (i = 0; i < ut_xml_count(xmlDocGetRootElement(doc), UT_NS_SM, "url"); i++) {
        xmlNodePtr u = ut_xml_child(xmlDocGetRootElement(doc), UT_NS_SM, "url", (int)i);
        const char *loc = ut_xml_child_text(u, UT_NS_SM, "loc");
        if (!strcmp(loc + strlen(loc) - strlen(loc_tail), loc_tail)) {
            found = ut_xml_child(u, UT_NS_RS, "md", 0);
        }
    }
    return found;
}

/* A version whose path was deleted later is written as a deletion at its
 * datetime, without member or bytes, and its capture goes at the next
 * collection (young or not); the other versions keep theirs. */
START_TEST(deleted_paths_are_withheld)
{
    cf_t f;
    rs_record_t *ra, *rb;
    rs_changelist_t cl;
    rs_cdump_result_t res;
    xmlNodePtr md;
    int has;
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];

    cf_init(&f);
    ra = change(&f, "d", "secret.txt", RS_CHANGE_CREATED, "SECRET", 1);
    rb = change(&f, "d", "public.txt", RS_CHANGE_CREATED, "public", 1);
    change(&f, "d", "secret.txt", RS_CHANGE_DELETED, "SECRET", 0);
    cl = close_list(&f);
    ck_assert_int_eq(rs_cdump_package(f.j, &f.o, &cl, ut_pool, &res), APR_SUCCESS);
    ck_assert_int_eq(res.withheld, 1);
    md = entry_of(&f, cl.id, 0, "/d/secret.txt", &has);
    ck_assert_ptr_nonnull(md);
    ck_assert(!has);
    ck_assert_str_eq(ut_xml_attr(md, "change"), "deleted");
    ck_assert_ptr_null(ut_xml_attr(md, "path"));
    ck_assert_ptr_null(ut_xml_attr(md, "hash"));
    md = entry_of(&f, cl.id, 0, "/d/public.txt", &has);
    ck_assert(has);
    ck_assert_str_eq(ut_xml_attr(md, "change"), "created");
    (void)ra;
    (void)rb;

    /* Both captures are young: only the withheld one goes. */
    ck_assert_int_eq(
        rs_cdump_gc(f.j, &f.o, apr_time_now() - apr_time_from_sec(3600), ut_pool, NULL, NULL),
        APR_SUCCESS);
    rs_hash_buf("SECRET", 6, RS_HASH_SHA256, hex);
    ck_assert(!rs_capture_has(f.o.capture_dir, hex[2]));
    rs_hash_buf("public", 6, RS_HASH_SHA256, hex);
    ck_assert(rs_capture_has(f.o.capture_dir, hex[2]));
}
END_TEST

/* A version whose file the check says is not served now (it exists) is
 * withheld; a version whose file is gone keeps its bytes (the journal
 * says whether it was deleted). */
START_TEST(versions_denied_now_are_withheld)
{
    cf_t f;
    rs_changelist_t cl;
    rs_cdump_result_t res;
    int has;

    cf_init(&f);
    f.o.root = ut_tempdir("cdump-root");
    f.o.check = ut_check_deny;
    f.o.check_baton = "denied";
    ut_write_str(ut_path(f.o.root, "denied.txt"), "now denied");
    change(&f, "", "denied.txt", RS_CHANGE_CREATED, "now denied", 1);
    change(&f, "", "gone-denied.txt", RS_CHANGE_CREATED, "gone", 1);
    cl = close_list(&f);
    ck_assert_int_eq(rs_cdump_package(f.j, &f.o, &cl, ut_pool, &res), APR_SUCCESS);
    ck_assert_int_eq(res.withheld, 1);
    ck_assert_str_eq(ut_xml_attr(entry_of(&f, cl.id, 0, "/denied.txt", &has), "change"), "deleted");
    ck_assert(!has);
    ck_assert_str_eq(ut_xml_attr(entry_of(&f, cl.id, 0, "/gone-denied.txt", &has), "change"),
                     "created");
    ck_assert(has);
}
END_TEST

/* Withdrawing a path: every package holding a version of it goes at once
 * (and its .sum); it is built again under a new name without it; the
 * Change Dump names the new package; a package of the old revision that
 * a crash left is pruned. */
START_TEST(withdraw_rebuilds_under_a_new_name)
{
    cf_t f;
    rs_changelist_t cl1, cl2, cl3, openl;
    rs_cdump_result_t res;
    apr_array_header_t *closed, *ids, *seqs;
    rs_cdumpdoc_t ix;
    xmlDocPtr doc;
    xmlNodePtr url;
    int has;

    cf_init(&f);
    change(&f, "", "keep.txt", RS_CHANGE_CREATED, "kept", 1);
    cl1 = close_list(&f);
    change(&f, "", "oops.txt", RS_CHANGE_CREATED, "published by mistake", 1);
    change(&f, "", "oops.txt", RS_CHANGE_UPDATED, "still by mistake", 1);
    cl2 = close_list(&f);
    ck_assert_int_eq(rs_cdump_package(f.j, &f.o, &cl1, ut_pool, &res), APR_SUCCESS);
    ck_assert_int_eq(rs_cdump_package(f.j, &f.o, &cl2, ut_pool, &res), APR_SUCCESS);
    entry_of(&f, cl2.id, 0, "/oops.txt", &has);
    ck_assert(has);

    /* The file is removed (its deletion journaled), then withdrawn. */
    change(&f, "", "oops.txt", RS_CHANGE_DELETED, "", 0);
    ck_assert_int_eq(rs_journal_lists(f.j, ut_pool, "s", &closed, &openl), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_path_versions(f.j, ut_pool, "s", "", "oops.txt", &seqs),
                     APR_SUCCESS);
    ck_assert_int_eq(seqs->nelts, 2);
    ck_assert_int_eq(rs_cdump_withdraw(&f.o, closed, seqs, ut_pool, &ids), APR_SUCCESS);
    ck_assert_int_eq(ids->nelts, 1);
    ck_assert_int_eq(APR_ARRAY_IDX(ids, 0, apr_int64_t), cl2.id);
    ck_assert(!ut_exists(rs_statedir_cdump_pkg(ut_pool, f.o.dir, f.o.history, cl2.id, 0, 0)));
    ck_assert(!ut_exists(rs_statedir_cdump_pkg(ut_pool, f.o.dir, f.o.history, cl2.id, 0, 1)));
    ck_assert_int_eq(rs_cdump_done(&f.o, cl2.id, ut_pool), 0);
    ck_assert_int_eq(rs_cdump_rev(&f.o, cl2.id, ut_pool), 1);
    ck_assert_int_eq(rs_cdump_done(&f.o, cl1.id, ut_pool), 1); /* untouched */

    ck_assert_int_eq(rs_cdump_package(f.j, &f.o, &cl2, ut_pool, &res), APR_SUCCESS);
    ck_assert_int_eq(res.withheld, 2);
    ck_assert_str_eq(ut_xml_attr(entry_of(&f, cl2.id, 1, "/oops.txt", &has), "change"), "deleted");
    ck_assert(!has);
    ck_assert(ut_exists(rs_statedir_cdump_pkg(ut_pool, f.o.dir, f.o.history, cl2.id, 1, 1)));
    ck_assert_int_eq(rs_cdumpdoc_write(&f.o, closed, openl.from, ut_pool, &ix), APR_SUCCESS);
    doc = ut_xml_parse_file(rs_statedir_cdump_file(ut_pool, f.o.dir, f.o.history, 0, 0));
    url = ut_xml_child(xmlDocGetRootElement(doc), UT_NS_SM, "url", 1);
    ck_assert_str_eq(
        ut_xml_child_text(url, UT_NS_SM, "loc"),
        apr_psprintf(ut_pool, "%s%" APR_INT64_T_FMT "-1.zip", f.o.pkg_url_prefix, cl2.id));
    ck_assert_str_eq(
        ut_xml_attr(ut_xml_ln(url, "contents"), "href"),
        apr_psprintf(ut_pool, "%s%" APR_INT64_T_FMT "-1.xml", f.o.pkg_url_prefix, cl2.id));

    /* A crash between the new revision and the removal: pruned. */
    ut_write_str(rs_statedir_cdump_pkg(ut_pool, f.o.dir, f.o.history, cl2.id, 0, 0), "old");
    ck_assert_int_eq(rs_cdump_prune(&f.o, closed, ut_pool), 1);
    ck_assert(!ut_exists(rs_statedir_cdump_pkg(ut_pool, f.o.dir, f.o.history, cl2.id, 0, 0)));
    ck_assert(ut_exists(rs_statedir_cdump_pkg(ut_pool, f.o.dir, f.o.history, cl2.id, 1, 0)));

    /* Withdrawing it again: the package built again holds none of its
     * versions, so nothing goes and no name changes. */
    ck_assert_int_eq(rs_cdump_withdraw(&f.o, closed, seqs, ut_pool, &ids), APR_SUCCESS);
    ck_assert_int_eq(ids->nelts, 0);
    ck_assert_int_eq(rs_cdump_rev(&f.o, cl2.id, ut_pool), 1);
    ck_assert(ut_exists(rs_statedir_cdump_pkg(ut_pool, f.o.dir, f.o.history, cl2.id, 1, 0)));

    /* Published again by mistake in a later list, removed, withdrawn:
     * that list's package goes, the rebuilt one stays. */
    change(&f, "", "oops.txt", RS_CHANGE_CREATED, "again by mistake", 1);
    cl3 = close_list(&f);
    ck_assert_int_eq(rs_cdump_package(f.j, &f.o, &cl3, ut_pool, &res), APR_SUCCESS);
    change(&f, "", "oops.txt", RS_CHANGE_DELETED, "", 0);
    ck_assert_int_eq(rs_journal_lists(f.j, ut_pool, "s", &closed, &openl), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_path_versions(f.j, ut_pool, "s", "", "oops.txt", &seqs),
                     APR_SUCCESS);
    ck_assert_int_eq(seqs->nelts, 3);
    ck_assert_int_eq(rs_cdump_withdraw(&f.o, closed, seqs, ut_pool, &ids), APR_SUCCESS);
    ck_assert_int_eq(ids->nelts, 1);
    ck_assert_int_eq(APR_ARRAY_IDX(ids, 0, apr_int64_t), cl3.id);
    ck_assert_int_eq(rs_cdump_rev(&f.o, cl3.id, ut_pool), 1);
    ck_assert_int_eq(rs_cdump_rev(&f.o, cl2.id, ut_pool), 1);
    ck_assert(!ut_exists(rs_statedir_cdump_pkg(ut_pool, f.o.dir, f.o.history, cl3.id, 0, 0)));
    ck_assert(ut_exists(rs_statedir_cdump_pkg(ut_pool, f.o.dir, f.o.history, cl2.id, 1, 0)));
}
END_TEST

/* Withdrawal requests: recorded by the tool, read back in order by the
 * watcher (any bytes in the path), answered, the answer read once. */
START_TEST(withdraw_requests_round_trip)
{
    const char *sd = ut_tempdir("withdraw"), *id1, *id2, *text;
    apr_array_header_t *reqs;
    const rs_withdraw_req_t *r;
    struct stat sb;
    int ok;

    ck_assert(rs_withdraw_path_ok("a/b c.txt") && rs_withdraw_path_ok("x"));
    ck_assert(!rs_withdraw_path_ok("") && !rs_withdraw_path_ok("/a")
              && !rs_withdraw_path_ok("a/../b") && !rs_withdraw_path_ok("a//b")
              && !rs_withdraw_path_ok("./a") && !rs_withdraw_path_ok("a/"));
    ck_assert_int_eq(rs_withdraw_pending(ut_pool, sd, &reqs), APR_SUCCESS); /* no directory */
    ck_assert_int_eq(reqs->nelts, 0);
    ck_assert_int_eq(rs_withdraw_request(ut_pool, sd, "s1", "d/new\nline %41.txt", &id1),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_withdraw_request(ut_pool, sd, "s2", "b\xff.bin", &id2), APR_SUCCESS);
    ck_assert_int_eq(stat(apr_pstrcat(ut_pool, sd, "/withdraw/", id1, ".req", NULL), &sb), 0);
    ck_assert_int_eq(sb.st_mode & 07777, 0600);
    ut_write_str(ut_path(sd, "withdraw/0-1.req"), "garbage");
    ck_assert_int_eq(rs_withdraw_pending(ut_pool, sd, &reqs), APR_SUCCESS);
    ck_assert_int_eq(reqs->nelts, 3);
    r = &APR_ARRAY_IDX(reqs, 0, rs_withdraw_req_t);
    ck_assert_str_eq(r->id, "0-1");
    ck_assert_ptr_null(r->set);
    r = &APR_ARRAY_IDX(reqs, 1, rs_withdraw_req_t);
    ck_assert_str_eq(r->id, id1);
    ck_assert_str_eq(r->set, "s1");
    ck_assert_str_eq(r->rel, "d/new\nline %41.txt");
    r = &APR_ARRAY_IDX(reqs, 2, rs_withdraw_req_t);
    ck_assert_str_eq(r->rel, "b\xff.bin");
    ck_assert_int_eq(rs_withdraw_outcome(ut_pool, sd, id1, &ok, &text), APR_ENOENT);
    ck_assert_int_eq(rs_withdraw_finish(ut_pool, sd, id1, 1, "done it"), APR_SUCCESS);
    ck_assert_int_eq(rs_withdraw_pending(ut_pool, sd, &reqs), APR_SUCCESS);
    ck_assert_int_eq(reqs->nelts, 2);
    ck_assert_int_eq(rs_withdraw_outcome(ut_pool, sd, id1, &ok, &text), APR_SUCCESS);
    ck_assert(ok);
    ck_assert_str_eq(text, "done it");
    ck_assert_int_eq(rs_withdraw_outcome(ut_pool, sd, id1, &ok, &text), APR_ENOENT);
    ck_assert_int_eq(rs_withdraw_finish(ut_pool, sd, id2, 0, "refused"), APR_SUCCESS);
    ck_assert_int_eq(rs_withdraw_outcome(ut_pool, sd, id2, &ok, &text), APR_SUCCESS);
    ck_assert(!ok);
    ck_assert_str_eq(text, "refused");
    /* A link in the place of the directory is not followed. */
    ck_assert_int_eq(rename(ut_path(sd, "withdraw"), ut_path(sd, "moved")), 0);
    ck_assert_int_eq(symlink(ut_path(sd, "moved"), ut_path(sd, "withdraw")), 0);
    ck_assert_int_ne(rs_withdraw_request(ut_pool, sd, "s1", "x", &id1), APR_SUCCESS);
    ck_assert_int_ne(rs_withdraw_pending(ut_pool, sd, &reqs), APR_SUCCESS);
}
END_TEST

static const char *key_of(const char *content)
{
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    rs_hash_buf(content, strlen(content), RS_HASH_SHA256, hex);
    return apr_pstrdup(ut_pool, hex[2]);
}

/* The collection asks the journal about each capture: a content that a
 * kept version shares with a withheld one stays; a content that only
 * withheld versions named goes at once; a content whose records retention
 * dropped, or that no record names, goes once it is old. */
START_TEST(collection_follows_the_journal)
{
    cf_t f;
    apr_array_header_t *dropped;
    rs_changelist_t cl;
    apr_time_t young = apr_time_now() - apr_time_from_sec(3600);
    int removed = -1;
    apr_int64_t bytes = -1;

    cf_init(&f);
    change(&f, "", "old.txt", RS_CHANGE_CREATED, "expired", 1);
    cl = close_list(&f);
    change(&f, "", "a.txt", RS_CHANGE_CREATED, "shared", 1);
    change(&f, "", "b.txt", RS_CHANGE_CREATED, "shared", 1);
    change(&f, "", "b.txt", RS_CHANGE_DELETED, "shared", 0);
    change(&f, "d", "c.txt", RS_CHANGE_CREATED, "withheld", 1);
    change(&f, "d", "c.txt", RS_CHANGE_UPDATED, "withheld too", 1);
    change(&f, "d", "c.txt", RS_CHANGE_DELETED, "withheld too", 0);
    ut_write_str(rs_capture_path(ut_pool, f.o.capture_dir, key_of("nobody's")), "nobody's");
    ck_assert_int_eq(rs_journal_expire(f.j, ut_pool, "s", cl.until + 1, &dropped), APR_SUCCESS);
    ck_assert_int_eq(dropped->nelts, 1);

    ck_assert_int_eq(rs_cdump_gc(f.j, &f.o, young, ut_pool, &removed, &bytes), APR_SUCCESS);
    ck_assert_int_eq(removed, 2);
    ck_assert(!rs_capture_has(f.o.capture_dir, key_of("withheld")));
    ck_assert(!rs_capture_has(f.o.capture_dir, key_of("withheld too")));
    ck_assert(rs_capture_has(f.o.capture_dir, key_of("shared")));
    ck_assert(rs_capture_has(f.o.capture_dir, key_of("expired"))); /* young */
    ck_assert(rs_capture_has(f.o.capture_dir, key_of("nobody's")));
    ck_assert_int_eq(bytes, (apr_int64_t)strlen("sharedexpirednobody's"));

    ck_assert_int_eq(rs_cdump_gc(f.j, &f.o, 0, ut_pool, &removed, &bytes), APR_SUCCESS);
    ck_assert_int_eq(removed, 2);
    ck_assert(rs_capture_has(f.o.capture_dir, key_of("shared")));
    ck_assert(!rs_capture_has(f.o.capture_dir, key_of("expired")));
    ck_assert(!rs_capture_has(f.o.capture_dir, key_of("nobody's")));
    ck_assert_int_eq(bytes, (apr_int64_t)strlen("shared"));
}
END_TEST

/* n more records of the set, each a new version of one of two contents
 * (captured once), one transaction, a pool cleared per record: what the
 * writing costs does not count in the collection's figures. */
static void many_versions(cf_t *f, int from, int n)
{
    const char *odd = key_of("odd"), *even = key_of("even");
    apr_pool_t *rp;
    int i;

    apr_pool_create(&rp, ut_pool);
    ck_assert_int_eq(rs_db_begin(f->st), APR_SUCCESS);
    for (i = from; i < from + n; i++) {
        rs_record_t r;
        memset(&r, 0, sizeof(r));
        apr_pool_clear(rp);
        r.dir = "many";
        r.name = apr_psprintf(rp, "f%06d", i % 5000);
        r.change = RS_CHANGE_UPDATED;
        r.lastmod_ns = 1600000000LL * 1000000000;
        r.size = 3;
        r.hash[2] = i % 2 ? odd : even;
        ck_assert_int_eq(rs_journal_append(f->j, "s", &r), APR_SUCCESS);
    }
    ck_assert_int_eq(rs_db_commit(f->st), APR_SUCCESS);
    apr_pool_destroy(rp);
}

/* The collection's memory does not grow with the journal: 60,000 more
 * retained versions add less than 1 MB to the peak (reading every
 * version's digest into memory added about 6 MB). */
START_TEST(collection_memory_does_not_grow_with_the_journal)
{
    cf_t small, large;
    long long before, after;
    int removed;

    if (!ut_forking || ut_sanitized()) {
        return; /* the peak would include other tests, or
                                * AddressSanitizer's quarantine of freed memory */
    }
    cf_init(&small);
    cf_init(&large);
    change(&small, "", "o", RS_CHANGE_CREATED, "odd", 1);
    change(&small, "", "e", RS_CHANGE_CREATED, "even", 1);
    change(&large, "", "o", RS_CHANGE_CREATED, "odd", 1);
    change(&large, "", "e", RS_CHANGE_CREATED, "even", 1);
    many_versions(&small, 0, 1000);
    many_versions(&large, 0, 61000);
    ck_assert_int_eq(rs_cdump_gc(small.j, &small.o, 0, ut_pool, &removed, NULL), APR_SUCCESS);
    ck_assert_int_eq(removed, 0);
    before = ut_vm_hwm();
    ck_assert_int_eq(rs_cdump_gc(large.j, &large.o, 0, ut_pool, &removed, NULL), APR_SUCCESS);
    ck_assert_int_eq(removed, 0);
    after = ut_vm_hwm();
    ck_assert_msg(after - before < 1024 * 1024, "peak grew by %lld bytes for 60,000 versions",
                  after - before);
}
END_TEST

Suite *cdump_suite(void)
{
    Suite *s = suite_create("rs_cdump");
    TCase *tc = ut_tcase("cdump", 30);
    tcase_add_test(tc, bytes_of_the_packages);
    tcase_add_test(tc, package_holds_every_version);
    tcase_add_test(tc, manifest_lists_the_encoding);
    tcase_add_test(tc, manifest_within_list_bytes_and_paths);
    tcase_add_test(tc, missing_capture_skips_the_package);
    tcase_add_test(tc, spec10_manifest_has_the_change_time_in_lastmod);
    tcase_add_test(tc, lost_capture_taken_again_from_the_file);
    tcase_add_test(tc, index_when_the_packages_do_not_fit);
    tcase_add_test(tc, deleted_paths_are_withheld);
    tcase_add_test(tc, versions_denied_now_are_withheld);
    tcase_add_test(tc, withdraw_rebuilds_under_a_new_name);
    tcase_add_test(tc, withdraw_requests_round_trip);
    tcase_add_test(tc, collection_follows_the_journal);
    tcase_add_test(tc, collection_memory_does_not_grow_with_the_journal);
    suite_add_tcase(s, tc);
    return s;
}
