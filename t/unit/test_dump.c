/* SPDX-License-Identifier: Apache-2.0 */
/* test_dump.c - rs_dump: a Resource Dump generation from the store */
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_dump.h"
#include "rs_dumppkg.h"
#include "rs_hash.h"
#include "rs_inventory.h"
#include "rs_schema.h"
#include "rs_statedir.h"
#include "rs_xml.h"
#include "rs_zip.h"

typedef struct {
    rs_db_t *st;
    ut_log_t ul;
    rs_dump_opts_t o;
    const char *root;  /* the set's files */
    const char *dumps; /* the set's dump generations (o.dumpset) */
    const char *dir;   /* the last generation built (build()) */
} fx_t;

static void fx_init(fx_t *f, apr_int64_t max_entries)
{
    const char *base = ut_tempdir("dump");
    memset(f, 0, sizeof(*f));
    ck_assert_int_eq(
        rs_schema_open(&f->st, ut_pool, "sqlite3", ut_path(base, "state.db"), ut_log_init(&f->ul)),
        APR_SUCCESS);
    f->root = ut_path(base, "root");
    f->dumps = ut_path(base, "dumps");
    ut_mkdir(f->root);
    ut_mkdir(f->dumps);
    f->o.set = "s";
    f->o.root = f->root;
    f->o.url_base = "http://example.org/files/";
    f->o.capability_url = "http://example.org/rs/s/capabilitylist.xml";
    f->o.dump_url = "http://example.org/rs/s/resourcedump.xml";
    f->o.pkg_url_prefix = "http://example.org/rs/s/resourcedump/0123abcd-";
    f->o.dumpset = f->dumps;
    f->o.hashes = RS_HASH_MD5;
    f->o.max_entries = max_entries;
    f->o.max_bytes = (apr_int64_t)1 << 30;
    f->o.at = 1700000000LL * APR_USEC_PER_SEC;
    f->o.completed = f->o.at + APR_USEC_PER_SEC;
}

/* When set, add() gives the file these access and modification times. */
static const struct timespec *add_times;

/* Write a file and its inventory row; size_delta != 0 makes the row
 * describe another version than the file holds. */
static void add(fx_t *f, const char *dir, const char *name, const char *data, int size_delta)
{
    const char *d = *dir ? ut_path(f->root, dir) : f->root;
    const char *path = ut_path(d, name);

    if (*dir && !ut_exists(d)) {
        ut_mkdir(d);
    }
    ut_write_str(path, data);
    if (add_times) {
        ck_assert_int_eq(utimensat(AT_FDCWD, path, add_times, 0), 0);
    }
    ut_inventory_row(f->st, "s", dir, name, path, data, size_delta, 1);
}

#define PREFIX "http://example.org/rs/s/resourcedump/0123abcd-"

/* Build generation gen as the dump job does: into tmp-<gen>, renamed to
 * <gen> on success (f->dir).  Returns rs_dump_write's status. */
static apr_status_t build(fx_t *f, int gen, rs_dump_info_t *info)
{
    const char *tmp = ut_path(f->dumps, apr_psprintf(ut_pool, "tmp-%d", gen));
    apr_status_t rv;

    ut_mkdir(tmp);
    rv = rs_dump_write(f->st, &f->o, tmp, ut_pool, info);
    f->dir = ut_path(f->dumps, apr_psprintf(ut_pool, "%d", gen));
    if (rv == APR_SUCCESS) {
        ck_assert_int_eq(rename(tmp, f->dir), 0);
    }
    return rv;
}

/* The key of the idx-th <url> of the dump in f->dir (its loc checked). */
static const char *pkg_key(fx_t *f, int idx)
{
    xmlDocPtr d = ut_xml_parse_file(rs_statedir_dump_file(ut_pool, f->dir));
    xmlNodePtr u = ut_xml_child(xmlDocGetRootElement(d), RS_XML_NS_SITEMAP, "url", idx);
    const char *loc = ut_xml_child_text(u, RS_XML_NS_SITEMAP, "loc");
    const char *key;

    ck_assert_int_eq(strncmp(loc, PREFIX, strlen(PREFIX)), 0);
    key = apr_pstrndup(ut_pool, loc + strlen(PREFIX), RS_DUMPPKG_KEY_LEN);
    ck_assert_uint_eq(strspn(key, "0123456789abcdef"), RS_DUMPPKG_KEY_LEN);
    ck_assert_str_eq(loc + strlen(PREFIX) + RS_DUMPPKG_KEY_LEN, ".zip");
    ck_assert_str_eq(ut_xml_attr(ut_xml_ln(u, "contents"), "href"),
                     apr_pstrcat(ut_pool, PREFIX, key, ".xml", NULL));
    return key;
}

START_TEST(packages_manifests_and_dump)
{
    fx_t f;
    rs_dump_info_t info;
    xmlDocPtr d;
    xmlNodePtr u, md;
    const char *k3;

    /* max_entries 1: one package per file. */
    fx_init(&f, 1);
    add(&f, "", "a.txt", "alpha\n", 0);
    add(&f, "", "manifest.xml", "<x/>\n", 0); /* must not collide */
    add(&f, "sub", "b c.txt", "bee\n", 0);
    ck_assert_int_eq(build(&f, 7, &info), APR_SUCCESS);
    ck_assert_int_eq(info.packages, 3);
    ck_assert_int_eq(info.reused, 0);
    ck_assert_int_eq(info.entries, 3);

    d = ut_xml_parse_file(rs_statedir_dump_file(ut_pool, f.dir));
    ck_assert_int_eq(ut_xml_count(xmlDocGetRootElement(d), RS_XML_NS_SITEMAP, "url"), 3);
    u = ut_xml_child(xmlDocGetRootElement(d), RS_XML_NS_SITEMAP, "url", 1);
    md = ut_xml_child(u, RS_XML_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(md, "type"), "application/zip");
    k3 = pkg_key(&f, 2);
    ck_assert_str_ne(pkg_key(&f, 0), k3);
    ck_assert(ut_exists(rs_statedir_dump_pkg(ut_pool, f.dir, k3, "zip")));
    ck_assert(ut_exists(rs_statedir_dump_pkg(ut_pool, f.dir, k3, "xml")));
    ck_assert(ut_exists(rs_statedir_dump_pkg(ut_pool, f.dir, k3, "rec")));

    /* Package 3 (listing order: a.txt, manifest.xml, sub/b c.txt). */
    d = ut_xml_parse_file(rs_statedir_dump_pkg(ut_pool, f.dir, k3, "xml"));
    u = ut_xml_child(xmlDocGetRootElement(d), RS_XML_NS_SITEMAP, "url", 0);
    ck_assert_str_eq(ut_xml_child_text(u, RS_XML_NS_SITEMAP, "loc"),
                     "http://example.org/files/sub/b%20c.txt");
    md = ut_xml_child(u, RS_XML_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(md, "path"), "/resources/sub/b c.txt");
    ck_assert_str_eq(ut_xml_attr(md, "length"), "4");
}
END_TEST

START_TEST(changed_file_fails_the_dump)
{
    fx_t f;
    rs_dump_info_t info;

    fx_init(&f, 1000);
    add(&f, "", "a.txt", "alpha\n", 0);
    add(&f, "", "b.txt", "bravo\n", 1); /* the row is another version */
    ck_assert_int_eq(build(&f, 1, &info), RS_ZIP_ECHANGED);
    ck_assert_ptr_nonnull(info.failed);
    ck_assert(!ut_exists(rs_statedir_dump_file(ut_pool, ut_path(f.dumps, "tmp-1"))));
}
END_TEST

/* The key of two entries, a.txt and member (with encoding enc). */
static const char *key_enc(const char *url_base, unsigned hashes, const char *member,
                           apr_int64_t size, apr_int64_t mtime, const char *h0, const char *enc)
{
    rs_dumppkg_key_t k;
    const char *hex[RS_HASH_COUNT] = { h0, NULL, NULL, NULL };
    char *out = apr_palloc(ut_pool, RS_DUMPPKG_KEY_LEN + 1);

    ck_assert_int_eq(rs_dumppkg_key_init(&k), APR_SUCCESS);
    rs_dumppkg_key_opts(&k, url_base, "http://x/rs/s/resourcedump.xml", hashes);
    rs_dumppkg_key_entry(&k, "a.txt", 5, 1000, "text/plain", NULL, hex, RS_HASH_COUNT);
    rs_dumppkg_key_entry(&k, member, size, mtime, "text/plain", enc, hex, RS_HASH_COUNT);
    rs_dumppkg_key_final(&k, out);
    return out;
}

static const char *key_of(const char *url_base, unsigned hashes, const char *member,
                          apr_int64_t size, apr_int64_t mtime, const char *h0)
{
    return key_enc(url_base, hashes, member, size, mtime, h0, NULL);
}

/* The key is a function of the entries and the manifest's options. */
START_TEST(key_names_the_contents)
{
    const char *k = key_of("http://x/", 1, "b.txt", 7, 2000, "abc");

    ck_assert_uint_eq(strlen(k), RS_DUMPPKG_KEY_LEN);
    ck_assert_uint_eq(strspn(k, "0123456789abcdef"), RS_DUMPPKG_KEY_LEN);
    ck_assert_str_eq(key_of("http://x/", 1, "b.txt", 7, 2000, "abc"), k);
    ck_assert_str_ne(key_of("http://y/", 1, "b.txt", 7, 2000, "abc"), k);
    ck_assert_str_ne(key_of("http://x/", 3, "b.txt", 7, 2000, "abc"), k);
    ck_assert_str_ne(key_of("http://x/", 1, "c.txt", 7, 2000, "abc"), k);
    ck_assert_str_ne(key_of("http://x/", 1, "b.txt", 8, 2000, "abc"), k);
    ck_assert_str_ne(key_of("http://x/", 1, "b.txt", 7, 2001, "abc"), k);
    ck_assert_str_ne(key_of("http://x/", 1, "b.txt", 7, 2000, "abd"), k);
    /* Fields cannot run into each other. */
    ck_assert_str_ne(key_of("http://x/", 1, "b.txt7", 0, 2000, "abc"), k);
    /* Entries without an encoding keep the key they had before encodings
     * were listed (the SHA-256 of the NUL-terminated fields
     * "rs-dumppkg-2", url_base, up, hashes, then per entry member, size,
     * mtime, type and the four digests): packages are not rebuilt for
     * it.  An encoding changes the key, and is not a digest field. */
    ck_assert_str_eq(k, "f28d1daab87aa9cd");
    ck_assert_str_ne(key_enc("http://x/", 1, "b.txt", 7, 2000, "abc", "gzip"), k);
    ck_assert_str_ne(key_enc("http://x/", 1, "b.txt", 7, 2000, "abc", "gzip"),
                     key_enc("http://x/", 1, "b.txt", 7, 2000, "abc", "br"));
    ck_assert_str_eq(key_enc("http://x/", 1, "b.txt", 7, 2000, "abc", "gzip"),
                     key_enc("http://x/", 1, "b.txt", 7, 2000, "abc", "gzip"));
}
END_TEST

/* The key of one entry with links (NULL: none). */
static const char *key_links(const char *links)
{
    rs_dumppkg_key_t k;
    const char *hex[RS_HASH_COUNT] = { "abc", NULL, NULL, NULL };
    char *out = apr_palloc(ut_pool, RS_DUMPPKG_KEY_LEN + 1);

    ck_assert_int_eq(rs_dumppkg_key_init(&k), APR_SUCCESS);
    rs_dumppkg_key_opts(&k, "http://x/", "http://x/rs/s/resourcedump.xml", 1);
    rs_dumppkg_key_entry(&k, "a.txt", 5, 1000, "text/plain", NULL, hex, RS_HASH_COUNT);
    rs_dumppkg_key_links(&k, links);
    rs_dumppkg_key_final(&k, out);
    return out;
}

/* A package's manifest writes its entries' links: another link is another
 * key (the package is written again, not reused with stale links); no
 * links, or empty ones, keep the key of an entry without links. */
START_TEST(key_names_the_links)
{
    const char *none = key_links(NULL);
    const char *dup = key_links("rel=duplicate");

    ck_assert_str_eq(key_links(""), none);
    ck_assert_str_ne(dup, none);
    ck_assert_str_eq(key_links("rel=duplicate"), dup);
    ck_assert_str_ne(key_links("rel=describedby"), dup);
}
END_TEST

static apr_int64_t size_of(const char *path)
{
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    return (apr_int64_t)sb.st_size;
}

/* A package's manifest is a document too: within the bytes a document may
 * take (doc_max_bytes here, RS_XML_MAX_BYTES by default), however long the
 * names, though the entry limit would let one package hold them all. */
START_TEST(manifests_within_bytes)
{
    fx_t f;
    rs_dump_info_t info;
    xmlNodePtr root;
    char name[256];
    int i, n, entries = 0;

    fx_init(&f, 1000);
    for (i = 0; i < 30; i++) {
        /* long names, some with bytes that take more once escaped */
        memset(name, i % 3 ? 'n' : '&', 200);
        apr_snprintf(name + 200, sizeof(name) - 200, "%02d \xc3\xa9.txt", i);
        add(&f, "", name, "x\n", 0);
    }
    f.o.doc_max_bytes = 9000 + 1024 + 6 * (apr_int64_t)strlen(f.o.capability_url);
    ck_assert_int_eq(build(&f, 1, &info), APR_SUCCESS);
    root = xmlDocGetRootElement(ut_xml_parse_file(rs_statedir_dump_file(ut_pool, f.dir)));
    n = ut_xml_count(root, RS_XML_NS_SITEMAP, "url");
    ck_assert_int_ge(n, 3); /* 30 entries of over 400 bytes: 12 KB and more */
    for (i = 0; i < n; i++) {
        const char *man = rs_statedir_dump_pkg(ut_pool, f.dir, pkg_key(&f, i), "xml");
        ck_assert_int_le(size_of(man), 9000);
        entries +=
            ut_xml_count(xmlDocGetRootElement(ut_xml_parse_file(man)), RS_XML_NS_SITEMAP, "url");
    }
    ck_assert_int_eq(entries, 30);
}
END_TEST

/* A row's content coding is listed in the manifest (rs:md encoding, after
 * the type, as in the Resource List), and a package whose entries gain
 * one gets a new key: it is not reused from a build without it. */
START_TEST(manifest_lists_the_encoding)
{
    fx_t f;
    rs_dump_info_t info;
    rs_item_t *row = NULL;
    xmlDocPtr d;
    xmlNodePtr md;
    const char *k1, *k2;

    fx_init(&f, 10);
    add(&f, "", "a.txt.gz", "not really gzip\n", 0);
    ck_assert_int_eq(build(&f, 1, &info), APR_SUCCESS);
    k1 = pkg_key(&f, 0);
    d = ut_xml_parse_file(rs_statedir_dump_pkg(ut_pool, f.dir, k1, "xml"));
    md = ut_xml_child(ut_xml_child(xmlDocGetRootElement(d), RS_XML_NS_SITEMAP, "url", 0),
                      RS_XML_NS_RS, "md", 0);
    ck_assert_ptr_null(ut_xml_attr(md, "encoding"));

    ck_assert_int_eq(rs_inventory_get(f.st, ut_pool, "s", "", "a.txt.gz", &row), APR_SUCCESS);
    ck_assert_ptr_nonnull(row);
    row->encoding = "gzip";
    ck_assert_int_eq(rs_inventory_put(f.st, "s", row), APR_SUCCESS);
    ck_assert_int_eq(build(&f, 2, &info), APR_SUCCESS);
    ck_assert_int_eq(info.reused, 0);
    k2 = pkg_key(&f, 0);
    ck_assert_str_ne(k1, k2);
    d = ut_xml_parse_file(rs_statedir_dump_pkg(ut_pool, f.dir, k2, "xml"));
    md = ut_xml_child(ut_xml_child(xmlDocGetRootElement(d), RS_XML_NS_SITEMAP, "url", 0),
                      RS_XML_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(md, "type"), "text/plain");
    ck_assert_str_eq(ut_xml_attr(md, "encoding"), "gzip");
    ck_assert_str_eq(ut_xml_attr(md, "path"), "/resources/a.txt.gz");
}
END_TEST

static ino_t inode_of(const char *path)
{
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    return sb.st_ino;
}

/* A rebuild after one file changed writes only the package holding it;
 * every other package is the previous one, linked (same inode, so the
 * same bytes and ETag), without reading its files, and keeps the
 * at/completed of the build that wrote it. */
START_TEST(rebuild_reuses_unchanged_packages)
{
    fx_t f;
    rs_dump_info_t info;
    apr_hash_t *first = apr_hash_make(ut_pool);
    const char *dir1, *changed = NULL;
    xmlDocPtr d;
    xmlNodePtr root;
    int i, n1, n2, fresh = 0;

    fx_init(&f, 16); /* content-defined cuts every ~4 files */
    for (i = 0; i < 40; i++) {
        add(&f, "d", apr_psprintf(ut_pool, "f%02d.txt", i), apr_psprintf(ut_pool, "file %d\n", i),
            0);
    }
    ck_assert_int_eq(build(&f, 1, &info), APR_SUCCESS);
    n1 = info.packages;
    ck_assert_int_ge(n1, 3);
    dir1 = f.dir;
    for (i = 0; i < n1; i++) {
        apr_hash_set(first, pkg_key(&f, i), APR_HASH_KEY_STRING, "");
    }

    /* One file changes; another gets other bytes of its size and its
     * mtime back (its row still describes it: device, inode, size,
     * mtime): its package must be reused without reading it. */
    add(&f, "d", "f17.txt", "file 17, second version\n", 0);
    {
        const char *p3 = ut_path(f.root, "d/f03.txt");
        struct stat sb;
        struct timespec ts[2];
        int fd;
        ck_assert_int_eq(stat(p3, &sb), 0);
        ts[0] = sb.st_atim;
        ts[1] = sb.st_mtim;
        ck_assert_int_ge(fd = open(p3, O_WRONLY), 0);
        ck_assert_int_eq(pwrite(fd, "FILE", 4, 0), 4);
        close(fd);
        ck_assert_int_eq(utimensat(AT_FDCWD, p3, ts, 0), 0);
    }
    f.o.at += 3600 * APR_USEC_PER_SEC;
    f.o.completed += 3600 * APR_USEC_PER_SEC;
    ck_assert_int_eq(build(&f, 2, &info), APR_SUCCESS);
    n2 = info.packages;
    ck_assert_int_eq(n2, n1);
    ck_assert_int_eq(info.reused, n1 - 1);
    d = ut_xml_parse_file(rs_statedir_dump_file(ut_pool, f.dir));
    root = xmlDocGetRootElement(d);
    for (i = 0; i < n2; i++) {
        const char *k = pkg_key(&f, i);
        xmlNodePtr md =
            ut_xml_child(ut_xml_child(root, RS_XML_NS_SITEMAP, "url", i), RS_XML_NS_RS, "md", 0);
        if (apr_hash_get(first, k, APR_HASH_KEY_STRING)) {
            ck_assert(inode_of(rs_statedir_dump_pkg(ut_pool, f.dir, k, "zip"))
                      == inode_of(rs_statedir_dump_pkg(ut_pool, dir1, k, "zip")));
            ck_assert(inode_of(rs_statedir_dump_pkg(ut_pool, f.dir, k, "xml"))
                      == inode_of(rs_statedir_dump_pkg(ut_pool, dir1, k, "xml")));
            ck_assert_str_eq(ut_xml_attr(md, "at"), "2023-11-14T22:13:20Z");
        }
        else {
            fresh++;
            changed = k;
            ck_assert_str_eq(ut_xml_attr(md, "at"), "2023-11-14T23:13:20Z");
        }
    }
    ck_assert_int_eq(fresh, 1);
    ck_assert_str_eq(ut_xml_attr(ut_xml_child(root, RS_XML_NS_RS, "md", 0), "at"),
                     "2023-11-14T23:13:20Z");
    d = ut_xml_parse_file(rs_statedir_dump_pkg(ut_pool, f.dir, changed, "xml"));
    ck_assert_str_eq(
        ut_xml_attr(ut_xml_child(xmlDocGetRootElement(d), RS_XML_NS_RS, "md", 0), "at"),
        "2023-11-14T23:13:20Z");
}
END_TEST

/* The rows of a set whose files were swapped after the scan: a
 * directory replaced by a symbolic link to a directory outside the set
 * that holds a file of the same name, size and mtime (a secret), a file
 * replaced by a link to such a file, a file replaced by a FIFO.  Each
 * build fails as for a changed file, and no package ever holds the
 * secret; a build from rows that describe the tree again succeeds. */
static void swap_back(const char *path, const char *moved)
{
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(rename(moved, path), 0);
}

/* Whether any file of the directory tree dir holds the bytes s. */
static int tree_holds(const char *dir, const char *s)
{
    const char *cmd = apr_psprintf(ut_pool, "grep -rqaF -- '%s' '%s'", s, dir);
    return system(cmd) == 0;
}

START_TEST(swapped_in_links_are_never_followed)
{
    fx_t f;
    rs_dump_info_t info;
    const char *out = ut_path(ut_tempdir("dump-outside"), "secrets");
    const char *sub, *moved, *file;
    struct stat sb;
    struct timespec ts[2];

    fx_init(&f, 1000);
    add(&f, "", "a.txt", "alpha\n", 0);
    add(&f, "sub", "report.txt", "public report\n", 0);
    sub = ut_path(f.root, "sub");
    file = ut_path(sub, "report.txt");
    ck_assert_int_eq(stat(file, &sb), 0);
    /* Outside the set: the same name, size and mtime, other bytes. */
    ut_mkdir(out);
    ut_write_str(ut_path(out, "report.txt"), "SECRET REPORT\n");
    ts[0] = sb.st_atim;
    ts[1] = sb.st_mtim;
    ck_assert_int_eq(utimensat(AT_FDCWD, ut_path(out, "report.txt"), ts, 0), 0);

    /* The directory, swapped for a link after the scan. */
    moved = ut_path(f.root, "sub.moved");
    ck_assert_int_eq(rename(sub, moved), 0);
    ck_assert_int_eq(symlink(out, sub), 0);
    ck_assert_int_eq(build(&f, 1, &info), RS_ZIP_ECHANGED);
    ck_assert_ptr_nonnull(strstr(info.failed, "sub/report.txt"));
    ck_assert(!tree_holds(f.dumps, "SECRET"));
    swap_back(sub, moved);

    /* The file, swapped for a link to the secret. */
    ck_assert_int_eq(rename(file, ut_path(f.root, "report.moved")), 0);
    ck_assert_int_eq(symlink(ut_path(out, "report.txt"), file), 0);
    ck_assert_int_eq(build(&f, 2, &info), RS_ZIP_ECHANGED);
    ck_assert(!tree_holds(f.dumps, "SECRET"));
    swap_back(file, ut_path(f.root, "report.moved"));

    /* The file, swapped for a FIFO: refused, never opened (an open
     * would wait for a writer forever). */
    ck_assert_int_eq(rename(file, ut_path(f.root, "report.moved")), 0);
    ck_assert_int_eq(mkfifo(file, 0644), 0);
    ck_assert_int_eq(build(&f, 3, &info), RS_ZIP_ECHANGED);
    swap_back(file, ut_path(f.root, "report.moved"));

    /* Back as scanned: the dump holds the public file. */
    ck_assert_int_eq(build(&f, 4, &info), APR_SUCCESS);
    ck_assert_int_eq(info.entries, 2);
    ck_assert(tree_holds(f.dir, "public report"));
    ck_assert(!tree_holds(f.dumps, "SECRET"));
}
END_TEST

/* The same swap after the rows were checked and before the package is
 * written (the window the checks before the cut cannot close): rs_zip
 * opens the member below the root without following the link and
 * checks its identity, so the write fails and nothing is published. */
START_TEST(swap_while_the_package_is_written)
{
    const char *base = ut_tempdir("dump-window");
    const char *root = ut_path(base, "root"), *out = ut_path(base, "out");
    const char *target = ut_path(base, "p.zip");
    rs_beneath_t *tree;
    rs_zip_t *z;
    rs_zip_result_t res;
    struct stat sb;
    struct timespec ts[2];

    ut_mkdir(root);
    ut_mkdir(ut_path(root, "sub"));
    ut_mkdir(out);
    ut_write_str(ut_path(root, "sub/r.txt"), "public\n");
    ut_write_str(ut_path(out, "r.txt"), "SECRET\n");
    ck_assert_int_eq(stat(ut_path(root, "sub/r.txt"), &sb), 0);
    ts[0] = sb.st_atim;
    ts[1] = sb.st_mtim;
    ck_assert_int_eq(utimensat(AT_FDCWD, ut_path(out, "r.txt"), ts, 0), 0);
    ck_assert_int_eq(rs_beneath_open_root(&tree, root, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_zip_create(&z, target, "m", 1, 0, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(
        rs_zip_add_beneath(z, "resources/sub/r.txt", tree, "sub/r.txt", sb.st_size,
                           (apr_int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec,
                           (apr_int64_t)sb.st_dev, (apr_int64_t)sb.st_ino),
        APR_SUCCESS);
    ck_assert_int_eq(rename(ut_path(root, "sub"), ut_path(base, "sub.moved")), 0);
    ck_assert_int_eq(symlink(out, ut_path(root, "sub")), 0);
    ck_assert_int_eq(rs_zip_finish(z, RS_HASH_MD5, &res), RS_ZIP_ECHANGED);
    ck_assert_ptr_nonnull(strstr(rs_zip_error(z), "resources/sub/r.txt"));
    ck_assert(!ut_exists(target));
    /* A file in a directory reached without links, but another inode of
     * the same size and mtime (replaced by rename): refused too. */
    ck_assert_int_eq(unlink(ut_path(root, "sub")), 0);
    ck_assert_int_eq(rename(ut_path(base, "sub.moved"), ut_path(root, "sub")), 0);
    ut_write_str(ut_path(base, "new"), "PUBLIC\n");
    ck_assert_int_eq(utimensat(AT_FDCWD, ut_path(base, "new"), ts, 0), 0);
    ck_assert_int_eq(rename(ut_path(base, "new"), ut_path(root, "sub/r.txt")), 0);
    ck_assert_int_eq(rs_zip_create(&z, target, "m", 1, 0, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(
        rs_zip_add_beneath(z, "resources/sub/r.txt", tree, "sub/r.txt", sb.st_size,
                           (apr_int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec,
                           (apr_int64_t)sb.st_dev, (apr_int64_t)sb.st_ino),
        APR_SUCCESS);
    ck_assert_int_eq(rs_zip_finish(z, RS_HASH_MD5, &res), RS_ZIP_ECHANGED);
    ck_assert(!ut_exists(target));
}
END_TEST

/* A row the check callback says is not served now is left out. */
START_TEST(rows_denied_now_are_left_out)
{
    fx_t f;
    rs_dump_info_t info;

    fx_init(&f, 1000);
    add(&f, "", "a.txt", "alpha\n", 0);
    add(&f, "d", "secret.txt", "SECRET\n", 0);
    f.o.check = ut_check_deny;
    f.o.check_baton = "secret";
    ck_assert_int_eq(build(&f, 1, &info), APR_SUCCESS);
    ck_assert_int_eq(info.entries, 1);
    ck_assert_int_eq(info.withheld, 1);
    ck_assert(!tree_holds(f.dir, "SECRET"));
    ck_assert(tree_holds(f.dir, "alpha"));
}
END_TEST

/* Withdrawing a member: every package holding it goes from every
 * generation (the three files), others stay; the next build writes a
 * package under another key. */
START_TEST(withdraw_removes_the_packages_in_every_generation)
{
    fx_t f;
    rs_dump_info_t info;
    const char *k_oops, *k_keep;
    int removed;

    fx_init(&f, 1); /* one package per file */
    add(&f, "", "keep.txt", "kept\n", 0);
    add(&f, "d", "oops & x.txt", "OOPS\n", 0);
    ck_assert_int_eq(build(&f, 1, &info), APR_SUCCESS);
    k_keep = pkg_key(&f, 0);
    k_oops = pkg_key(&f, 1);
    ck_assert_int_eq(build(&f, 2, &info), APR_SUCCESS); /* linked into generation 2 */
    ck_assert_int_eq(info.reused, 2);
    ck_assert_int_eq(rs_dumppkg_withdraw(ut_pool, f.dumps, "resources/d/oops & x.txt", &removed),
                     APR_SUCCESS);
    ck_assert_int_eq(removed, 1);
    ck_assert(!ut_exists(rs_statedir_dump_pkg(ut_pool, ut_path(f.dumps, "1"), k_oops, "zip")));
    ck_assert(!ut_exists(rs_statedir_dump_pkg(ut_pool, ut_path(f.dumps, "2"), k_oops, "xml")));
    ck_assert(!ut_exists(rs_statedir_dump_pkg(ut_pool, ut_path(f.dumps, "2"), k_oops, "rec")));
    ck_assert(ut_exists(rs_statedir_dump_pkg(ut_pool, ut_path(f.dumps, "2"), k_keep, "zip")));
    ck_assert_int_eq(rs_dumppkg_withdraw(ut_pool, f.dumps, "resources/none.txt", &removed),
                     APR_SUCCESS);
    ck_assert_int_eq(removed, 0);
}
END_TEST

/* A package whose record is missing or damaged is not reused. */
START_TEST(no_reuse_without_record)
{
    fx_t f;
    rs_dump_info_t info;
    const char *k;

    fx_init(&f, 1);
    add(&f, "", "a.txt", "alpha\n", 0);
    ck_assert_int_eq(build(&f, 1, &info), APR_SUCCESS);
    k = pkg_key(&f, 0);
    ut_write_str(rs_statedir_dump_pkg(ut_pool, f.dir, k, "rec"), "garbage");
    ck_assert_int_eq(build(&f, 2, &info), APR_SUCCESS);
    ck_assert_int_eq(info.reused, 0);
    ck_assert_str_eq(pkg_key(&f, 0), k);
    ck_assert(inode_of(rs_statedir_dump_pkg(ut_pool, f.dir, k, "zip"))
              != inode_of(rs_statedir_dump_pkg(ut_pool, ut_path(f.dumps, "1"), k, "zip")));
    ck_assert_int_eq(build(&f, 3, &info), APR_SUCCESS);
    ck_assert_int_eq(info.reused, 1);
}
END_TEST

/* More packages than list_max: resourcedump.xml is a Resource Dump
 * Index whose parts list the packages. */
START_TEST(index_when_packages_do_not_fit)
{
    fx_t f;
    rs_dump_info_t info;
    xmlDocPtr d;
    xmlNodePtr root, part;
    int i;

    fx_init(&f, 1);
    f.o.list_max = 2;
    f.o.part_url_prefix = "http://example.org/rs/s/resourcedump/0123abcd-4-";
    for (i = 0; i < 5; i++) {
        add(&f, "", apr_psprintf(ut_pool, "f%d", i), "x\n", 0);
    }
    ck_assert_int_eq(build(&f, 4, &info), APR_SUCCESS);
    ck_assert_int_eq(info.packages, 5);
    ck_assert_int_eq(info.parts, 3);
    d = ut_xml_parse_file(rs_statedir_dump_file(ut_pool, f.dir));
    root = xmlDocGetRootElement(d);
    ck_assert_str_eq((const char *)root->name, "sitemapindex");
    ck_assert_str_eq(ut_xml_attr(ut_xml_child(root, RS_XML_NS_RS, "md", 0), "capability"),
                     "resourcedump");
    ck_assert_str_eq(ut_xml_attr(ut_xml_ln(root, "up"), "href"), f.o.capability_url);
    ck_assert_int_eq(ut_xml_count(root, RS_XML_NS_SITEMAP, "sitemap"), 3);
    ck_assert_str_eq(ut_xml_child_text(ut_xml_child(root, RS_XML_NS_SITEMAP, "sitemap", 2),
                                       RS_XML_NS_SITEMAP, "loc"),
                     "http://example.org/rs/s/resourcedump/0123abcd-4-3.xml");
    for (i = 1; i <= 3; i++) {
        d = ut_xml_parse_file(rs_statedir_gen_file(ut_pool, f.dir, i));
        part = xmlDocGetRootElement(d);
        ck_assert_str_eq((const char *)part->name, "urlset");
        ck_assert_str_eq(ut_xml_attr(ut_xml_ln(part, "index"), "href"), f.o.dump_url);
        ck_assert_str_eq(ut_xml_attr(ut_xml_ln(part, "up"), "href"), f.o.capability_url);
        ck_assert_int_eq(ut_xml_count(part, RS_XML_NS_SITEMAP, "url"), i < 3 ? 2 : 1);
    }
    ck_assert(!ut_exists(rs_statedir_gen_file(ut_pool, f.dir, 4)));

    /* Exactly list_max packages fit one document. */
    f.o.list_max = 5;
    ck_assert_int_eq(build(&f, 5, &info), APR_SUCCESS);
    ck_assert_int_eq(info.parts, 0);
    d = ut_xml_parse_file(rs_statedir_dump_file(ut_pool, f.dir));
    ck_assert_str_eq((const char *)xmlDocGetRootElement(d)->name, "urlset");
    ck_assert_int_eq(info.reused, 5);
}
END_TEST

/* Documents within their bytes too: with a document smaller than the
 * one 5 packages make (list_max 100 would take them all), an index
 * whose parts each stay within it. */
START_TEST(index_when_bytes_do_not_fit)
{
    fx_t f;
    rs_dump_info_t info;
    apr_int64_t one, two;
    int i, total = 0;

    fx_init(&f, 1);
    f.o.list_max = 100;
    f.o.part_url_prefix = "http://example.org/rs/s/resourcedump/0123abcd-4-";
    for (i = 0; i < 5; i++) {
        add(&f, "", apr_psprintf(ut_pool, "f%d", i), "x\n", 0);
    }
    /* Without the byte limit: one document; its size gives the room. */
    ck_assert_int_eq(build(&f, 4, &info), APR_SUCCESS);
    ck_assert_int_eq(info.parts, 0);
    one = size_of(rs_statedir_dump_file(ut_pool, f.dir));
    f.o.doc_max_bytes = one - one / 4;
    ck_assert_int_eq(build(&f, 5, &info), APR_SUCCESS);
    ck_assert_int_ge(info.parts, 2);
    ck_assert_int_le(info.parts, 4);
    for (i = 1; i <= info.parts; i++) {
        const char *path = rs_statedir_gen_file(ut_pool, f.dir, i);
        xmlNodePtr part = xmlDocGetRootElement(ut_xml_parse_file(path));
        int m = ut_xml_count(part, RS_XML_NS_SITEMAP, "url");
        two = size_of(path);
        ck_assert_int_le(two, f.o.doc_max_bytes);
        ck_assert_int_ge(m, 1);
        total += m;
    }
    ck_assert_int_eq(total, 5);
    ck_assert_int_eq(
        ut_xml_count(xmlDocGetRootElement(ut_xml_parse_file(rs_statedir_dump_file(ut_pool, f.dir))),
                     RS_XML_NS_SITEMAP, "sitemap"),
        info.parts);
}
END_TEST

/* Disk use counts a package linked into several generations once. */
START_TEST(disk_bytes_count_links_once)
{
    fx_t f;
    rs_dump_info_t info;
    apr_int64_t one;
    const char *k;

    fx_init(&f, 1);
    ck_assert_int_eq(rs_dumppkg_disk_bytes(ut_pool, f.dumps), 0);
    add(&f, "", "a.txt", "alpha\n", 0);
    ck_assert_int_eq(build(&f, 1, &info), APR_SUCCESS);
    k = pkg_key(&f, 0);
    one = size_of(rs_statedir_dump_file(ut_pool, f.dir))
          + size_of(rs_statedir_dump_pkg(ut_pool, f.dir, k, "zip"))
          + size_of(rs_statedir_dump_pkg(ut_pool, f.dir, k, "xml"))
          + size_of(rs_statedir_dump_pkg(ut_pool, f.dir, k, "rec"));
    ck_assert_int_eq(rs_dumppkg_disk_bytes(ut_pool, f.dumps), one);
    ck_assert_int_eq(build(&f, 2, &info), APR_SUCCESS);
    ck_assert_int_eq(info.reused, 1);
    ck_assert_int_eq(rs_dumppkg_disk_bytes(ut_pool, f.dumps),
                     one + size_of(rs_statedir_dump_file(ut_pool, f.dir)));
}
END_TEST

/* A package that comes back (its files as they were) while an older
 * generation holding it is still on disk is that very file again: one
 * URL never names two byte strings. */
START_TEST(returning_package_reused_from_older_generation)
{
    fx_t f;
    rs_dump_info_t info;
    const char *path, *k1;
    struct stat sb;
    struct timespec ts[2];

    fx_init(&f, 1);
    add(&f, "", "a.txt", "alpha\n", 0);
    path = ut_path(f.root, "a.txt");
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_int_eq(build(&f, 1, &info), APR_SUCCESS);
    k1 = pkg_key(&f, 0);
    add(&f, "", "a.txt", "alpha two\n", 0);
    ck_assert_int_eq(build(&f, 2, &info), APR_SUCCESS);
    ck_assert_str_ne(pkg_key(&f, 0), k1);
    /* Back to the first version, mtime included. */
    ts[0] = sb.st_atim;
    ts[1] = sb.st_mtim;
    add_times = ts;
    add(&f, "", "a.txt", "alpha\n", 0);
    add_times = NULL;
    f.o.at += APR_USEC_PER_SEC;
    ck_assert_int_eq(build(&f, 3, &info), APR_SUCCESS);
    ck_assert_str_eq(pkg_key(&f, 0), k1);
    ck_assert_int_eq(info.reused, 1);
    ck_assert(inode_of(rs_statedir_dump_pkg(ut_pool, f.dir, k1, "zip"))
              == inode_of(rs_statedir_dump_pkg(ut_pool, ut_path(f.dumps, "1"), k1, "zip")));
}
END_TEST

/* Memory of a build grows with a package's members by what libzip and
 * the member list need, not with its manifest: with a URL base of 2,000
 * bytes each manifest entry is over 2 KB, and 4,000 more members in the
 * one package add less than 2.5 KB each to the peak (about 1.2 KB; a
 * manifest held in memory, grown by doubling and copied into the
 * package, made it over 12 KB). */
START_TEST(memory_does_not_grow_with_the_manifest)
{
    fx_t f;
    rs_dump_info_t info;
    char *base = apr_palloc(ut_pool, 2048);
    long long small, large;
    int i;

    if (!ut_forking || ut_sanitized()) {
        return; /* the peak would include other tests, or
                                * AddressSanitizer's quarantine of freed memory */
    }
    fx_init(&f, 100000);
    memset(base, 'u', 2047);
    base[2047] = '\0';
    memcpy(base, "http://example.org/", 19);
    base[2046] = '/';
    f.o.url_base = base;
    for (i = 0; i < 500; i++) {
        add(&f, "d", apr_psprintf(ut_pool, "f%05d", i), "x", 0);
    }
    ck_assert_int_eq(build(&f, 1, &info), APR_SUCCESS);
    ck_assert_int_eq(info.packages, 1);
    small = ut_vm_hwm();
    for (; i < 4500; i++) {
        add(&f, "d", apr_psprintf(ut_pool, "f%05d", i), "x", 0);
    }
    f.o.dumpset = NULL; /* built again, not reused */
    ck_assert_int_eq(build(&f, 2, &info), APR_SUCCESS);
    ck_assert_int_eq(info.packages, 1);
    ck_assert_int_eq((int)info.entries, 4500);
    large = ut_vm_hwm();
    ck_assert_msg(large - small < 4000LL * 2560, "peak grew by %lld bytes for 4000 members",
                  large - small);
}
END_TEST

Suite *dump_suite(void)
{
    Suite *s = suite_create("rs_dump");
    TCase *tc = ut_tcase("dump", 30);
    tcase_add_test(tc, packages_manifests_and_dump);
    tcase_add_test(tc, manifest_lists_the_encoding);
    tcase_add_test(tc, changed_file_fails_the_dump);
    tcase_add_test(tc, key_names_the_contents);
    tcase_add_test(tc, key_names_the_links);
    tcase_add_test(tc, rebuild_reuses_unchanged_packages);
    tcase_add_test(tc, no_reuse_without_record);
    tcase_add_test(tc, swapped_in_links_are_never_followed);
    tcase_add_test(tc, swap_while_the_package_is_written);
    tcase_add_test(tc, rows_denied_now_are_left_out);
    tcase_add_test(tc, withdraw_removes_the_packages_in_every_generation);
    tcase_add_test(tc, index_when_packages_do_not_fit);
    tcase_add_test(tc, index_when_bytes_do_not_fit);
    tcase_add_test(tc, disk_bytes_count_links_once);
    tcase_add_test(tc, returning_package_reused_from_older_generation);
    tcase_add_test(tc, memory_does_not_grow_with_the_manifest);
    tcase_add_test(tc, manifests_within_bytes);
    suite_add_tcase(s, tc);
    return s;
}
