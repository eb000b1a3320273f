/* test_dump.c - rs_dump: a Resource Dump generation from the store */
#include <string.h>
#include <sys/stat.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_dump.h"
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
    const char *root;         /* the set's files */
    const char *dir;          /* the dump generation directory */
} fx_t;

static void fx_init(fx_t *f, apr_int64_t max_entries)
{
    const char *base = ut_tempdir("dump");
    memset(f, 0, sizeof(*f));
    ck_assert_int_eq(rs_schema_open(&f->st, ut_pool, "sqlite3", ut_path(base, "state.db"),
                                    ut_log_init(&f->ul)), APR_SUCCESS);
    f->root = ut_path(base, "root");
    f->dir = ut_path(base, "gen");
    ut_mkdir(f->root);
    ut_mkdir(f->dir);
    f->o.set = "s";
    f->o.root = f->root;
    f->o.url_base = "http://example.org/files/";
    f->o.capability_url = "http://example.org/rs/s/capabilitylist.xml";
    f->o.dump_url = "http://example.org/rs/s/resourcedump.xml";
    f->o.pkg_url_prefix = "http://example.org/rs/s/resourcedump/0123abcd-";
    f->o.hashes = RS_HASH_MD5;
    f->o.max_entries = max_entries;
    f->o.max_bytes = (apr_int64_t)1 << 30;
    f->o.at = 1700000000LL * APR_USEC_PER_SEC;
    f->o.completed = f->o.at + APR_USEC_PER_SEC;
}

/* Write a file and its inventory row; size_delta != 0 makes the row
 * describe another version than the file holds. */
static void add(fx_t *f, const char *dir, const char *name, const char *data, int size_delta)
{
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    const char *d = *dir ? ut_path(f->root, dir) : f->root;
    const char *path = ut_path(d, name);
    struct stat sb;
    rs_item_t it;

    if (*dir) {
        ut_mkdir(d);
    }
    ut_write_str(path, data);
    ck_assert_int_eq(stat(path, &sb), 0);
    rs_hash_buf(data, strlen(data), RS_HASH_MD5, hex);
    memset(&it, 0, sizeof(it));
    it.dir = dir;
    it.name = name;
    it.size = (apr_int64_t)strlen(data) + size_delta;
    it.mtime_ns = (apr_int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    it.ctime_ns = (apr_int64_t)sb.st_ctim.tv_sec * 1000000000 + sb.st_ctim.tv_nsec;
    it.dev = (apr_int64_t)sb.st_dev;
    it.ino = (apr_int64_t)sb.st_ino;
    it.listed = 1;
    it.cfg = "c";
    it.type = "text/plain";
    it.hash[0] = apr_pstrdup(ut_pool, hex[0]);
    ck_assert_int_eq(rs_inventory_put(f->st, "s", &it), APR_SUCCESS);
}

START_TEST(packages_manifests_and_dump)
{
    fx_t f;
    rs_dump_info_t info;
    xmlDocPtr d;
    xmlNodePtr u, md;

    /* max_entries 1: one package per file. */
    fx_init(&f, 1);
    add(&f, "", "a.txt", "alpha\n", 0);
    add(&f, "", "manifest.xml", "<x/>\n", 0);     /* must not collide */
    add(&f, "sub", "b c.txt", "bee\n", 0);
    ck_assert_int_eq(rs_dump_write(f.st, &f.o, f.dir, 7, ut_pool, &info), APR_SUCCESS);
    ck_assert_int_eq(info.packages, 3);
    ck_assert_int_eq(info.entries, 3);
    ck_assert(ut_exists(rs_statedir_dump_file(ut_pool, f.dir, 3, 0)));
    ck_assert(ut_exists(rs_statedir_dump_file(ut_pool, f.dir, 3, 1)));
    ck_assert(!ut_exists(rs_statedir_dump_file(ut_pool, f.dir, 4, 0)));

    d = ut_xml_parse_file(rs_statedir_dump_file(ut_pool, f.dir, 0, 0));
    ck_assert_int_eq(ut_xml_count(xmlDocGetRootElement(d), RS_XML_NS_SITEMAP, "url"), 3);
    u = ut_xml_child(xmlDocGetRootElement(d), RS_XML_NS_SITEMAP, "url", 1);
    ck_assert_str_eq(ut_xml_child_text(u, RS_XML_NS_SITEMAP, "loc"),
                     "http://example.org/rs/s/resourcedump/0123abcd-7-2.zip");
    md = ut_xml_child(u, RS_XML_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(md, "type"), "application/zip");
    ck_assert_str_eq(ut_xml_attr(ut_xml_ln(u, "contents"), "href"),
                     "http://example.org/rs/s/resourcedump/0123abcd-7-2.xml");

    /* Package 3 (listing order: a.txt, manifest.xml, sub/b c.txt). */
    d = ut_xml_parse_file(rs_statedir_dump_file(ut_pool, f.dir, 3, 1));
    u = ut_xml_child(xmlDocGetRootElement(d), RS_XML_NS_SITEMAP, "url", 0);
    ck_assert_str_eq(ut_xml_child_text(u, RS_XML_NS_SITEMAP, "loc"),
                     "http://example.org/files/sub/b%20c.txt");
    md = ut_xml_child(u, RS_XML_NS_RS, "md", 0);
    ck_assert_str_eq(ut_xml_attr(md, "path"), "/resources/sub/b%20c.txt");
    ck_assert_str_eq(ut_xml_attr(md, "length"), "4");
}
END_TEST

START_TEST(changed_file_fails_the_dump)
{
    fx_t f;
    rs_dump_info_t info;

    fx_init(&f, 1000);
    add(&f, "", "a.txt", "alpha\n", 0);
    add(&f, "", "b.txt", "bravo\n", 1);            /* the row is another version */
    ck_assert_int_eq(rs_dump_write(f.st, &f.o, f.dir, 1, ut_pool, &info), RS_ZIP_ECHANGED);
    ck_assert_ptr_nonnull(info.failed);
    ck_assert(!ut_exists(rs_statedir_dump_file(ut_pool, f.dir, 0, 0)));
    ck_assert(!ut_exists(rs_statedir_dump_file(ut_pool, f.dir, 1, 0)));
}
END_TEST

Suite *dump_suite(void)
{
    Suite *s = suite_create("rs_dump");
    TCase *tc = ut_tcase("dump", 30);
    tcase_add_test(tc, packages_manifests_and_dump);
    tcase_add_test(tc, changed_file_fails_the_dump);
    suite_add_tcase(s, tc);
    return s;
}
