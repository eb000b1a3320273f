/* SPDX-License-Identifier: Apache-2.0 */
/* test_links.c - rs_links: the rules of rs:ln relations (construction,
 * checks, description, the target filter), matched with POSIX regexec */
#include <string.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_links.h"

/* rs_links_add with a pattern compiled here. */
static const char *add(rs_links_t *l, const char *rel, const char *pattern, const char *target,
                       const char *type, int pri, int if_exists)
{
    int ng;
    void *r = ut_regex(pattern, &ng);
    return rs_links_add(l, ut_pool, rel, r, ng, pattern, target, type, pri, if_exists);
}

static rs_links_t *links(void)
{
    return ut_links();
}

START_TEST(rel_names)
{
    static const char *const ok[] = { "describedby",
                                      "describes",
                                      "duplicate",
                                      "alternate",
                                      "canonical",
                                      "collection",
                                      "memento",
                                      "timegate",
                                      "timemap",
                                      "original",
                                      "via",
                                      "profile",
                                      "license",
                                      "related",
                                      "item",
                                      "predecessor-version",
                                      "successor-version",
                                      "latest-version",
                                      "cite-as",
                                      "type",
                                      "author",
                                      "DescribedBy",
                                      "http://www.openarchives.org/rs/terms/patch",
                                      "https://example.org/rels#derived",
                                      "urn:example:rel" };
    static const char *const bad[] = { "contents",
                                       "up",
                                       "index",
                                       "Index",
                                       "resourcesync-x",
                                       "patch",
                                       "describedby ",
                                       " via",
                                       "about acl",
                                       "about ",
                                       "ABOUT\tACL",
                                       "http://e.org/a b",
                                       "http://e.org/\"q\"",
                                       "http://e.org/<a>",
                                       "rel\tx",
                                       "http:",
                                       "1http://e.org/",
                                       "a\x01",
                                       "caf\xc3\xa9",
                                       "http://e.org/\x7f",
                                       "" };
    apr_size_t i;
    for (i = 0; i < sizeof(ok) / sizeof(*ok); i++) {
        ck_assert_msg(rs_links_rel_check(ut_pool, ok[i]) == NULL, "%s refused", ok[i]);
    }
    for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        ck_assert_msg(rs_links_rel_check(ut_pool, bad[i]) != NULL, "%s accepted", bad[i]);
    }
    ck_assert_ptr_null(rs_links_rel_check(ut_pool, "SELF"));
    ck_assert_ptr_nonnull(strstr(rs_links_rel_check(ut_pool, "up"), "\"up\" means something else"));
    ck_assert_ptr_nonnull(
        strstr(rs_links_rel_check(ut_pool, "frobs"), "unknown relation \"frobs\""));
}
END_TEST

START_TEST(add_checks)
{
    rs_links_t *l = links();
    const char *e;

    ck_assert_ptr_null(
        add(l, "describedby", "^records/([0-9]+)\\.pdf$", "meta/$1.xml", NULL, 0, 0));
    ck_assert_ptr_null(add(l, "alternate", "^(.*)\\.pdf$", "$1.html", NULL, 1, 1));
    ck_assert_ptr_null(
        add(l, "collection", "^c/", "https://example.org/coll/$$1", NULL, 999999, 0));
    ck_assert_ptr_null(add(l, "profile", "^(.*)$", "/profiles/$1", "application/xml", 0, 0));
    ck_assert_int_eq(rs_links_count(l), 4);
    ck_assert_int_eq(rs_links_has_local(l), 1);

    e = add(l, "describedby", "^(a)(b)$", "m/$3.xml", NULL, 0, 0);
    ck_assert_ptr_nonnull(e);
    ck_assert_ptr_nonnull(strstr(e, "$3"));
    ck_assert_ptr_nonnull(strstr(e, "2 groups"));
    ck_assert_ptr_nonnull(add(l, "describedby", "^a$", "m/$1", NULL, 0, 0));
    ck_assert_ptr_nonnull(add(l, "describedby", "^(a)$", "m/$0", NULL, 0, 0));
    ck_assert_ptr_nonnull(add(l, "describedby", "^(a)$", "m/$x", NULL, 0, 0));
    ck_assert_ptr_nonnull(add(l, "describedby", "^(a)$", "m/$", NULL, 0, 0));
    ck_assert_ptr_nonnull(add(l, "describedby", "^(a)$", "m/\x01$1", NULL, 0, 0));
    ck_assert_ptr_nonnull(add(l, "describedby", "^(a)$", "", NULL, 0, 0));
    e = add(l, "frobs", "^(a)$", "m/$1", NULL, 0, 0);
    ck_assert_ptr_nonnull(strstr(e, "\"frobs\""));
    ck_assert_ptr_nonnull(add(l, "up", "^(a)$", "m/$1", NULL, 0, 0));
    e = add(l, "describedby", "^(a)$", "m/$1", NULL, 1000000, 0);
    ck_assert_ptr_nonnull(strstr(e, "1000000"));
    ck_assert_ptr_nonnull(add(l, "describedby", "^(a)$", "m/$1", NULL, -1, 0));
    /* if-exists only on local targets; type= only on the others. */
    e = add(l, "describedby", "^(a)$", "http://e.org/$1", NULL, 0, 1);
    ck_assert_ptr_nonnull(strstr(e, "if-exists"));
    ck_assert_ptr_nonnull(add(l, "describedby", "^(a)$", "/m/$1", NULL, 0, 1));
    ck_assert_ptr_nonnull(add(l, "describedby", "^(a)$", "m/$1", "text/xml", 0, 0));
    ck_assert_ptr_nonnull(add(l, "describedby", "^(a)$", "http://e.org/$1", "text xml", 0, 0));
    ck_assert_ptr_nonnull(add(l, "describedby", "^(a)$", "http://e.org/$1", "textxml", 0, 0));
    /* A URL's literal parts are URI characters already. */
    ck_assert_ptr_nonnull(add(l, "describedby", "^(a)$", "http://e.org/a b/$1", NULL, 0, 0));
    ck_assert_ptr_nonnull(add(l, "describedby", "^(a)$", "/a\"b/$1", NULL, 0, 0));
    ck_assert_ptr_nonnull(add(l, "describedby", "^(a)$", "http://e.org/caf\xc3\xa9", NULL, 0, 0));
    /* A local target may name any file. */
    ck_assert_ptr_null(add(l, "describedby", "^(a)$", "caf\xc3\xa9 m/$1", NULL, 0, 0));
    ck_assert_int_eq(rs_links_count(l), 5);
    ck_assert_int_eq(rs_links_count(NULL), 0);
    ck_assert_int_eq(rs_links_has_local(NULL), 0);
}
END_TEST

START_TEST(mirrors)
{
    rs_links_t *l = links();
    const rs_links_mirror_t *m;
    int n;
    ck_assert_ptr_null(rs_links_add_mirror(l, ut_pool, "https://mirror.example.org/files", 2));
    ck_assert_ptr_null(rs_links_add_mirror(l, ut_pool, "https://m2.example.org/", 0));
    ck_assert_ptr_null(rs_links_add_mirror(l, ut_pool, "ftp://m3.example.org/pub/", 999999));
    ck_assert_ptr_nonnull(rs_links_add_mirror(l, ut_pool, "/relative/", 0));
    ck_assert_ptr_nonnull(rs_links_add_mirror(l, ut_pool, "mirror.example.org", 0));
    ck_assert_ptr_nonnull(rs_links_add_mirror(l, ut_pool, "http:", 0));
    ck_assert_ptr_nonnull(rs_links_add_mirror(l, ut_pool, "http://m.org/a b/", 0));
    ck_assert_ptr_nonnull(rs_links_add_mirror(l, ut_pool, "http://m.org/?x=", 0));
    ck_assert_ptr_nonnull(rs_links_add_mirror(l, ut_pool, "http://m.org/#x", 0));
    ck_assert_ptr_nonnull(rs_links_add_mirror(l, ut_pool, "http://m.org/", 1000000));
    ck_assert_ptr_nonnull(rs_links_add_mirror(l, ut_pool, NULL, 0));
    /* Mirrors are no rules: they are not counted, name no local target,
     * and are in the mirrors' description only. */
    ck_assert_int_eq(rs_links_count(l), 0);
    ck_assert_int_eq(rs_links_has_local(l), 0);
    ck_assert_int_eq(rs_links_may_be_target(l, "a/b"), 0);
    ck_assert_str_eq(rs_links_describe(l, ut_pool), "");
    /* In the order given, the "/" appended. */
    m = rs_links_mirrors(l, &n);
    ck_assert_int_eq(n, 3);
    ck_assert_str_eq(m[0].prefix, "https://mirror.example.org/files/");
    ck_assert_int_eq(m[0].pri, 2);
    ck_assert_str_eq(m[1].prefix, "https://m2.example.org/");
    ck_assert_int_eq(m[1].pri, 0);
    ck_assert_str_eq(m[2].prefix, "ftp://m3.example.org/pub/");
    ck_assert_int_eq(m[2].pri, 999999);
    ck_assert_ptr_nonnull(
        strstr(rs_links_mirrors_describe(l, ut_pool), "https://mirror.example.org/files/"));
    ck_assert_ptr_null(rs_links_mirrors(NULL, &n));
    ck_assert_int_eq(n, 0);
    ck_assert_ptr_null(rs_links_mirrors(links(), &n));
    ck_assert_int_eq(n, 0);
}
END_TEST

START_TEST(describe)
{
    rs_links_t *a = links(), *b = links(), *c = links(), *d = links();
    const char *da, *db;

    ck_assert_str_eq(rs_links_describe(NULL, ut_pool), "");
    ck_assert_str_eq(rs_links_describe(a, ut_pool), "");
    ck_assert_ptr_null(add(a, "describedby", "^(.*)\\.pdf$", "$1.xml", NULL, 0, 0));
    ck_assert_ptr_null(rs_links_add_mirror(a, ut_pool, "https://m.example.org/", 0));
    ck_assert_ptr_null(add(b, "describedby", "^(.*)\\.pdf$", "$1.xml", NULL, 0, 0));
    ck_assert_ptr_null(rs_links_add_mirror(b, ut_pool, "https://m.example.org", 0));
    da = rs_links_describe(a, ut_pool);
    db = rs_links_describe(b, ut_pool);
    /* The same rules, the same text; any argument changes it. */
    ck_assert_str_eq(da, db);
    ck_assert_str_eq(rs_links_mirrors_describe(a, ut_pool), rs_links_mirrors_describe(b, ut_pool));
    ck_assert_ptr_null(add(d, "describedby", "^(.*)\\.pdf$", "$1.xml", NULL, 0, 1));
    ck_assert_ptr_null(rs_links_add_mirror(d, ut_pool, "https://m.example.org/", 0));
    ck_assert_str_ne(rs_links_describe(d, ut_pool), da);
    /* The mirrors are not in the rules' text (what rows store does not
     * depend on them), and the rules are not in theirs; where a mirror
     * stands among the rules changes neither. */
    ck_assert_ptr_null(rs_links_add_mirror(c, ut_pool, "https://m.example.org/", 0));
    ck_assert_ptr_null(add(c, "describedby", "^(.*)\\.pdf$", "$1.xml", NULL, 0, 0));
    ck_assert_str_eq(rs_links_describe(c, ut_pool), da);
    ck_assert_str_eq(rs_links_mirrors_describe(c, ut_pool), rs_links_mirrors_describe(a, ut_pool));
    d = links();
    ck_assert_ptr_null(add(d, "describedby", "^(.*)\\.pdf$", "$1.xml", NULL, 0, 0));
    ck_assert_ptr_null(rs_links_add_mirror(d, ut_pool, "https://m.example.org/", 7));
    ck_assert_str_eq(rs_links_describe(d, ut_pool), da);
    ck_assert_str_ne(rs_links_mirrors_describe(d, ut_pool), rs_links_mirrors_describe(a, ut_pool));
    ck_assert_ptr_null(rs_links_add_mirror(d, ut_pool, "https://m2.example.org/", 0));
    ck_assert_str_ne(rs_links_mirrors_describe(d, ut_pool), rs_links_mirrors_describe(a, ut_pool));
    ck_assert_str_eq(rs_links_mirrors_describe(links(), ut_pool), "");
    ck_assert_str_eq(rs_links_mirrors_describe(NULL, ut_pool), "");
    /* No field can run into the next one: the same bytes, split
     * between pattern and target otherwise, give another text. */
    a = links();
    b = links();
    ck_assert_ptr_null(add(a, "via", "^(a)$", "http://e.org/b", NULL, 0, 0));
    ck_assert_ptr_null(add(b, "via", "^(a)$h", "ttp://e.org/b", NULL, 0, 0));
    ck_assert_str_ne(rs_links_describe(a, ut_pool), rs_links_describe(b, ut_pool));
}
END_TEST

START_TEST(may_be_target)
{
    rs_links_t *l = links();

    ck_assert_int_eq(rs_links_may_be_target(NULL, "a"), 0);
    ck_assert_ptr_null(
        add(l, "describedby", "^records/([0-9]+)\\.pdf$", "meta/$1.xml", NULL, 0, 0));
    ck_assert_ptr_null(add(l, "via", "^(.*)$", "http://e.org/$1", NULL, 0, 0));
    ck_assert_ptr_null(add(l, "collection", "^c/", "index.html", NULL, 0, 0));
    ck_assert_int_eq(rs_links_may_be_target(l, "meta/1.xml"), 1);
    ck_assert_int_eq(rs_links_may_be_target(l, "meta/.xml"), 1);
    ck_assert_int_eq(rs_links_may_be_target(l, "meta/1.pdf"), 0);
    ck_assert_int_eq(rs_links_may_be_target(l, "records/1.pdf"), 0);
    ck_assert_int_eq(rs_links_may_be_target(l, "meta.xml"), 0);
    ck_assert_int_eq(rs_links_may_be_target(l, "index.html"), 1);
    ck_assert_int_eq(rs_links_may_be_target(l, "x/index.html"), 0);
    ck_assert_int_eq(rs_links_may_be_target(l, "index.htm"), 0);
    ck_assert_ptr_null(add(l, "alternate", "^(.*)\\.pdf$", "$1.html", NULL, 0, 0));
    ck_assert_int_eq(rs_links_may_be_target(l, "x/index.html"), 1);
    ck_assert_int_eq(rs_links_may_be_target(l, ".html"), 1);
    ck_assert_int_eq(rs_links_may_be_target(l, "a.htm"), 0);
}
END_TEST

/* ------------------------------------------------------------ resolution */

#define BASE "http://example.org/files/"
#define MD5  "900150983cd24fb0d6963f7d28e17f72"
#define SHA1 "a9993e364706816aba3e25717850c26c9cd0d89d"

/* The files of a set for the lookup: listed ones with their attributes,
 * known ones that are not listed; "fail" makes the lookup fail. */
typedef struct tree_t {
    apr_hash_t *files;
    int lookups;
} tree_t;

static rs_item_t *file(tree_t *t, const char *path, int listed, const char *type, apr_int64_t size)
{
    rs_item_t *it = apr_pcalloc(ut_pool, sizeof(*it));
    it->name = path;
    it->dir = "";
    it->listed = listed;
    it->type = type;
    it->size = size;
    it->mtime_ns = 1600000000LL * 1000000000 + size;
    it->hash[0] = MD5;
    it->hash[1] = SHA1;
    apr_hash_set(t->files, path, APR_HASH_KEY_STRING, it);
    return it;
}

static tree_t *tree(void)
{
    tree_t *t = apr_pcalloc(ut_pool, sizeof(*t));
    t->files = apr_hash_make(ut_pool);
    return t;
}

static int lookup(void *baton, apr_pool_t *p, const char *path, rs_item_t *out)
{
    tree_t *t = baton;
    rs_item_t *it = apr_hash_get(t->files, path, APR_HASH_KEY_STRING);
    t->lookups++;
    if (!strcmp(path, "fail") || (it && !strcmp(it->type ? it->type : "", "fail"))) {
        return -1;
    }
    if (!it || !it->listed) {
        return 0;
    }
    *out = *it;
    return 1;
}

/* The links as text, one a line: rel href pri type enc length modified md5 sha1. */
static const char *show(const apr_array_header_t *links)
{
    const char *s = "";
    int i;
    for (i = 0; i < links->nelts; i++) {
        const rs_link_t *k = &APR_ARRAY_IDX(links, i, rs_link_t);
        s = apr_psprintf(
            ut_pool, "%s%s %s %d %s %s %" APR_INT64_T_FMT " %" APR_INT64_T_FMT " %s %s\n", s,
            k->rel, k->href, k->pri, k->type ? k->type : "-", k->encoding ? k->encoding : "-",
            k->length, k->modified_ns < 0 ? -1 : k->modified_ns % 1000000000,
            k->hash[0] ? "md5" : "-", k->hash[1] ? "sha1" : "-");
    }
    return s;
}

static const char *show_deps(const apr_array_header_t *deps)
{
    const char *s = "";
    int i;
    for (i = 0; i < deps->nelts; i++) {
        s = apr_pstrcat(ut_pool, s, i ? " " : "", APR_ARRAY_IDX(deps, i, const char *), NULL);
    }
    return s;
}

static const char *forward(const rs_links_t *l, tree_t *t, const char *path, const char **deps)
{
    apr_array_header_t *links, *d;
    ck_assert_int_eq(rs_links_forward(l, ut_pool, BASE, path, lookup, t, &links, &d), 0);
    if (deps) {
        *deps = show_deps(d);
    }
    return show(links);
}

START_TEST(forward_kinds)
{
    rs_links_t *l = links();
    tree_t *t = tree();
    const char *deps;
    apr_array_header_t *k;

    file(t, "meta/1.xml", 1, "application/xml", 11);
    file(t, "meta/2.xml", 0, "application/xml", 12); /* known, not listed */
    file(t, "records/1.html", 1, "text/html", 13);
    ck_assert_ptr_null(
        add(l, "describedby", "^records/([0-9]+)\\.pdf$", "meta/$1.xml", NULL, 0, 0));
    ck_assert_ptr_null(add(l, "alternate", "^(.*)\\.pdf$", "$1.html", NULL, 0, 1));
    ck_assert_ptr_null(rs_links_add_mirror(l, ut_pool, "https://mirror.example.org/f", 2));
    ck_assert_ptr_null(
        add(l, "collection", "^([^/]*)/", "https://example.org/c/$1?x=$$", NULL, 3, 0));
    ck_assert_ptr_null(add(l, "profile", "^([^/]*)/", "/profiles/$1.xsd", "application/xml", 0, 0));
    ck_assert_ptr_null(
        add(l, "via", "^records/(x)?([0-9]+)", "http://src.example.org/$1-$2", NULL, 0, 0));
    ck_assert_ptr_null(rs_links_add_mirror(l, ut_pool, "https://m2.example.org/", 0));

    /* Listed target: its attributes; if-exists target listed: there.
     * Mirrors are not resolved (the renderer writes them). */
    ck_assert_str_eq(
        forward(l, t, "records/1.pdf", &deps),
        "describedby " BASE "meta/1.xml 0 application/xml - 11 11 md5 sha1\n"
        "alternate " BASE "records/1.html 0 text/html - 13 13 md5 sha1\n"
        "collection https://example.org/c/records?x=$ 3 - - -1 -1 - -\n"
        "profile http://example.org/profiles/records.xsd 0 application/xml - -1 -1 - -\n"
        "via http://src.example.org/-1 0 - - -1 -1 - -\n");
    ck_assert_str_eq(deps, "meta/1.xml records/1.html");
    /* Known but not listed, and absent: a plain link; with if-exists
     * nothing; both stay dependencies. */
    ck_assert_str_eq(
        forward(l, t, "records/2.pdf", &deps),
        "describedby " BASE "meta/2.xml 0 - - -1 -1 - -\n"
        "collection https://example.org/c/records?x=$ 3 - - -1 -1 - -\n"
        "profile http://example.org/profiles/records.xsd 0 application/xml - -1 -1 - -\n"
        "via http://src.example.org/-2 0 - - -1 -1 - -\n");
    ck_assert_str_eq(deps, "meta/2.xml records/2.html");
    /* Groups are escaped in URLs and origin paths, the path in local
     * targets. */
    ck_assert_str_eq(
        forward(l, t, "a b&c/x\"y.pdf", &deps),
        "collection https://example.org/c/a%20b%26c?x=$ 3 - - -1 -1 - -\n"
        "profile http://example.org/profiles/a%20b%26c.xsd 0 application/xml - -1 -1 - -\n");
    ck_assert_str_eq(deps, "a b&c/x\"y.html");
    /* deps not wanted; a failing lookup fails the resolution. */
    ck_assert_int_eq(rs_links_forward(l, ut_pool, BASE, "records/1.pdf", lookup, t, &k, NULL), 0);
    ck_assert_int_eq(k->nelts, 5);
    l = links();
    ck_assert_ptr_null(add(l, "describedby", "^(.*)\\.pdf$", "fail", NULL, 0, 0));
    ck_assert_int_eq(rs_links_forward(l, ut_pool, BASE, "x.pdf", lookup, t, &k, NULL), -1);
    /* No rules, or mirrors only: nothing, no lookup. */
    t->lookups = 0;
    ck_assert_str_eq(forward(links(), t, "records/1.pdf", &deps), "");
    ck_assert_str_eq(deps, "");
    l = links();
    ck_assert_ptr_null(rs_links_add_mirror(l, ut_pool, "https://m.example.org/", 1));
    ck_assert_str_eq(forward(l, t, "records/1.pdf", &deps), "");
    ck_assert_str_eq(deps, "");
    ck_assert_int_eq(t->lookups, 0);
}
END_TEST

START_TEST(forward_local_paths)
{
    rs_links_t *l = links();
    tree_t *t = tree();
    const char *deps;

    file(t, "a/b", 1, "text/plain", 1);
    ck_assert_ptr_null(add(l, "describedby", "^([^:]*):(.*)$", "$1/$2", NULL, 0, 0));
    ck_assert_str_eq(forward(l, t, "a:b", &deps),
                     "describedby " BASE "a/b 0 text/plain - 1 1 md5 sha1\n");
    ck_assert_str_eq(deps, "a/b");
    /* Empty, "." and ".." segments, a leading or a trailing "/": no link,
     * no dependency; every other byte is a file name's. */
    ck_assert_str_eq(forward(l, t, ":b", &deps), "");
    ck_assert_str_eq(forward(l, t, "a:", &deps), "");
    ck_assert_str_eq(forward(l, t, "a/:b", &deps), "");
    ck_assert_str_eq(forward(l, t, "..:etc/passwd", &deps), "");
    ck_assert_str_eq(forward(l, t, "a:../../x", &deps), "");
    ck_assert_str_eq(forward(l, t, "a:./x", &deps), "");
    ck_assert_str_eq(forward(l, t, "a:x/.", &deps), "");
    ck_assert_str_eq(forward(l, t, "a:x/..", &deps), "");
    ck_assert_str_eq(deps, "");
    ck_assert_str_eq(forward(l, t, "...:..x", &deps),
                     "describedby " BASE ".../..x 0 - - -1 -1 - -\n");
    ck_assert_str_eq(forward(l, t, "%41 #?:\xc3\xa9", &deps),
                     "describedby " BASE "%2541%20%23%3F/%C3%A9 0 - - -1 -1 - -\n");
    ck_assert_str_eq(deps, "%41 #?/\xc3\xa9");
    /* A resource does not link to itself. */
    l = links();
    ck_assert_ptr_null(add(l, "describedby", "^(.*)$", "$1", NULL, 0, 0));
    ck_assert_str_eq(forward(l, t, "a/b", &deps), "");
    ck_assert_str_eq(deps, "");
    /* Targets named twice are one dependency. */
    l = links();
    ck_assert_ptr_null(add(l, "describedby", "^(.*)\\.pdf$", "$1.xml", NULL, 0, 0));
    ck_assert_ptr_null(add(l, "related", "^(.*)\\.pdf$", "$1.xml", NULL, 0, 1));
    ck_assert_str_eq(forward(l, t, "x.pdf", &deps), "describedby " BASE "x.xml 0 - - -1 -1 - -\n");
    ck_assert_str_eq(deps, "x.xml");
}
END_TEST

/* Inverse links of path from sources (space separated). */
static const char *inverse(const rs_links_t *l, tree_t *t, const char *path, const char *sources)
{
    apr_array_header_t *src = apr_array_make(ut_pool, 4, sizeof(const char *));
    apr_array_header_t *k = apr_array_make(ut_pool, 4, sizeof(rs_link_t));
    char *last, *w, *s = apr_pstrdup(ut_pool, sources);
    for (w = apr_strtok(s, " ", &last); w; w = apr_strtok(NULL, " ", &last)) {
        APR_ARRAY_PUSH(src, const char *) = w;
    }
    ck_assert_int_eq(rs_links_inverse(l, ut_pool, BASE, path, src, lookup, t, k), 0);
    return show(k);
}

START_TEST(inverse_pairs)
{
    rs_links_t *l = links();
    tree_t *t = tree();
    apr_array_header_t *src, *k;

    file(t, "records/1.pdf", 1, "application/pdf", 21);
    file(t, "records/2.pdf", 1, "application/pdf", 22);
    file(t, "records/3.pdf", 0, "application/pdf", 23); /* not listed */
    file(t, "records/1.html", 1, "text/html", 24);
    file(t, "meta/1.xml", 1, "application/xml", 25);
    ck_assert_ptr_null(
        add(l, "describedby", "^records/([0-9]+)\\.[a-z]+$", "meta/$1.xml", NULL, 5, 0));
    ck_assert_ptr_null(add(l, "canonical", "^(.*)\\.html$", "$1.pdf", NULL, 0, 0));
    ck_assert_ptr_null(add(l, "related", "^records/(.*)\\.pdf$", "meta/$1.xml", NULL, 0, 0));
    ck_assert_ptr_null(add(l, "describes", "^meta/(.*)\\.xml$", "records/$1.pdf", NULL, 0, 0));

    /* describedby -> describes, by source path; related has no inverse;
     * the source not listed and the one that no longer links (2.pdf
     * names meta/2.xml) are skipped; duplicates count once; pri stays
     * with the forward link. */
    ck_assert_str_eq(inverse(l, t, "meta/1.xml",
                             "records/3.pdf records/2.pdf records/1.pdf records/1.html "
                             "records/1.pdf meta/1.xml nothing"),
                     "describes " BASE "records/1.html 0 text/html - 24 24 md5 sha1\n"
                     "describes " BASE "records/1.pdf 0 application/pdf - 21 21 md5 sha1\n");
    /* canonical -> alternate, describes -> describedby; by source path. */
    ck_assert_str_eq(inverse(l, t, "records/1.pdf", "meta/1.xml records/1.html"),
                     "describedby " BASE "meta/1.xml 0 application/xml - 25 25 md5 sha1\n"
                     "alternate " BASE "records/1.html 0 text/html - 24 24 md5 sha1\n");
    ck_assert_str_eq(inverse(l, t, "records/1.pdf", ""), "");
    /* Appended after what the array holds; a failing lookup fails. */
    src = apr_array_make(ut_pool, 1, sizeof(const char *));
    k = apr_array_make(ut_pool, 1, sizeof(rs_link_t));
    APR_ARRAY_PUSH(src, const char *) = "records/1.html";
    ck_assert_int_eq(rs_links_inverse(l, ut_pool, BASE, "records/1.pdf", src, lookup, t, k), 0);
    ck_assert_int_eq(rs_links_inverse(l, ut_pool, BASE, "records/1.pdf", src, lookup, t, k), 0);
    ck_assert_int_eq(k->nelts, 2);
    file(t, "records/1.html", 1, "fail", 24);
    ck_assert_int_eq(rs_links_inverse(l, ut_pool, BASE, "records/1.pdf", src, lookup, t, k), -1);
    /* Without local rules nothing is looked up. */
    l = links();
    ck_assert_ptr_null(rs_links_add_mirror(l, ut_pool, "https://m.example.org/", 0));
    t->lookups = 0;
    ck_assert_str_eq(inverse(l, t, "records/1.pdf", "records/1.html"), "");
    ck_assert_int_eq(t->lookups, 0);
}
END_TEST
/* ------------------------------------------------------------ encoded form */

static void assert_same_links(const apr_array_header_t *in, const apr_array_header_t *out)
{
    int i, h;
    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(out->nelts, in->nelts);
    for (i = 0; i < in->nelts; i++) {
        const rs_link_t *a = &APR_ARRAY_IDX(in, i, rs_link_t);
        const rs_link_t *b = &APR_ARRAY_IDX(out, i, rs_link_t);
        ck_assert_str_eq(a->rel, b->rel);
        ck_assert_str_eq(a->href, b->href);
        ck_assert_int_eq(a->pri, b->pri);
        ck_assert_pstr_eq(a->type, b->type);
        ck_assert_pstr_eq(a->encoding, b->encoding);
        ck_assert_int_eq(a->length, b->length);
        ck_assert_int_eq(a->modified_ns, b->modified_ns);
        for (h = 0; h < RS_HASH_COUNT; h++) {
            ck_assert_pstr_eq(a->hash[h], b->hash[h]);
        }
    }
}

START_TEST(encode_round_trip)
{
    apr_array_header_t *in = apr_array_make(ut_pool, 4, sizeof(rs_link_t));
    char *all = apr_palloc(ut_pool, 256);
    rs_link_t *k;
    int i;

    ck_assert_ptr_null(rs_links_encode(ut_pool, in));
    ck_assert_ptr_null(rs_links_encode(ut_pool, NULL));
    ck_assert_int_eq(rs_links_decode(ut_pool, NULL)->nelts, 0);
    ck_assert_int_eq(rs_links_decode(ut_pool, "")->nelts, 0);

    k = rs_links_push(in, "describedby", BASE "meta/1.xml");
    k->pri = 999999;
    k->type = "application/xml; charset=\"utf-8\"";
    k->encoding = "gzip";
    k->length = 0;
    k->modified_ns = 1600000000LL * 1000000000 + 123456789;
    k->hash[0] = MD5;
    k->hash[3] = "0123456789abcdef";
    rs_links_push(in, "http://www.openarchives.org/rs/terms/patch",
                  "https://m.example.org/%1E%1F\\x");
    /* Every byte but NUL in the strings. */
    for (i = 1; i < 256; i++) {
        all[i - 1] = (char)i;
    }
    all[255] = '\0';
    k = rs_links_push(in, all, all + 0x1d);
    k->type = all + 0x5b;
    k->encoding = "\x1e\x1f\\";
    k->pri = 1;
    k->length = APR_INT64_MAX;
    k->modified_ns = -5000000000LL;
    assert_same_links(in, rs_links_decode(ut_pool, rs_links_encode(ut_pool, in)));

    /* Compact: the values and ten separators per link. */
    in->nelts = 1;
    k = &APR_ARRAY_IDX(in, 0, rs_link_t);
    k->type = "text/xml";
    k->encoding = NULL;
    ck_assert_str_eq(rs_links_encode(ut_pool, in), "describedby\x1f" BASE "meta/1.xml\x1f"
                                                   "999999\x1ftext/xml\x1f\x1f"
                                                   "0\x1f"
                                                   "1600000000123456789\x1f" MD5 "\x1f\x1f\x1f"
                                                   "0123456789abcdef");
}
END_TEST

START_TEST(decode_malformed)
{
    static const char *const bad[] = {
        "x",                                                  /* too few fields */
        "r\x1fh\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f", /* too many */
        "\x1fh\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f",          /* no rel */
        "r\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f",          /* no href */
        "r\x1fh\x1f"
        "0\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f", /* pri 0 */
        "r\x1fh\x1f"
        "1000000\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f", /* pri too large */
        "r\x1fh\x1f"
        "01\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f",               /* leading zero */
        "r\x1fh\x1f+1\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f",     /* sign */
        "r\x1fh\x1f\x1f\x1f\x1f-1\x1f\x1f\x1f\x1f\x1f\x1f", /* negative length */
        "r\x1fh\x1f\x1f\x1f\x1f"
        "1x\x1f\x1f\x1f\x1f\x1f\x1f", /* not a number */
        "r\x1fh\x1f\x1f\x1f\x1f"
        "9223372036854775808\x1f\x1f\x1f\x1f\x1f\x1f",
        "r\x1fh\x1f\x1f\x1f\x1f"
        "99999999999999999999\x1f\x1f\x1f\x1f\x1f\x1f",
        "r\x1fh\x1f\x1f\x1f\x1f\x1f-\x1f\x1f\x1f\x1f\x1f",  /* "-" */
        "r\x1fh\x1f\x1f\x1f\x1f\x1f-0\x1f\x1f\x1f\x1f\x1f", /* "-0" */
        "r\x1fh\x1f\x1f\x1f\x1f\x1f-1\x1f\x1f\x1f\x1f\x1f", /* "none" is empty */
        "r\\1e\x1fh\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f",   /* lower-case escape */
        "r\x1fh\x1f\x1f\x1f\x1f\x1f\x1f"
        "ABC\x1f\x1f\x1f",                                /* hex in upper case */
        "r\x1fh\x1f\x1f\x1f\x1f\x1f\x1fxyz\x1f\x1f\x1f",  /* not hex */
        "r\\\x1fh\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f",   /* "\" alone */
        "r\\4\x1fh\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f",  /* one digit */
        "r\\zz\x1fh\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f", /* not hex */
        "r\\00\x1fh\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f", /* encoded NUL */
        "r\\41\x1fh\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f", /* needless escape */
        "r\nx\x1fh\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f",  /* raw control byte */
        "r\x1fh\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1e", /* empty link after */
        "\x1er\x1fh\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f", /* empty link before */
    };
    apr_size_t i;
    apr_array_header_t *k;

    k = rs_links_decode(ut_pool, "r\x1fh\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f");
    ck_assert_ptr_nonnull(k);
    ck_assert_int_eq(k->nelts, 1);
    ck_assert_int_eq(APR_ARRAY_IDX(k, 0, rs_link_t).length, -1);
    ck_assert_int_eq(APR_ARRAY_IDX(k, 0, rs_link_t).modified_ns, -1);
    ck_assert_ptr_null(APR_ARRAY_IDX(k, 0, rs_link_t).type);
    k = rs_links_decode(ut_pool, "r\\1E\x1fh\\5C\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1f\x1e"
                                 "r\x1fh\x1f"
                                 "7\x1f\x1f\x1f"
                                 "5\x1f-3\x1f\x1f\x1f\x1f");
    ck_assert_ptr_nonnull(k);
    ck_assert_int_eq(k->nelts, 2);
    ck_assert_str_eq(APR_ARRAY_IDX(k, 0, rs_link_t).rel, "r\x1e");
    ck_assert_str_eq(APR_ARRAY_IDX(k, 0, rs_link_t).href, "h\\");
    ck_assert_int_eq(APR_ARRAY_IDX(k, 1, rs_link_t).pri, 7);
    ck_assert_int_eq(APR_ARRAY_IDX(k, 1, rs_link_t).length, 5);
    ck_assert_int_eq(APR_ARRAY_IDX(k, 1, rs_link_t).modified_ns, -3);
    for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        ck_assert_msg(rs_links_decode(ut_pool, bad[i]) == NULL, "bad[%d] decoded", (int)i);
    }
}
END_TEST

Suite *links_suite(void)
{
    Suite *s = suite_create("rs_links");
    TCase *tc = ut_tcase("links", 30);
    tcase_add_test(tc, rel_names);
    tcase_add_test(tc, add_checks);
    tcase_add_test(tc, mirrors);
    tcase_add_test(tc, describe);
    tcase_add_test(tc, may_be_target);
    tcase_add_test(tc, forward_kinds);
    tcase_add_test(tc, forward_local_paths);
    tcase_add_test(tc, inverse_pairs);
    tcase_add_test(tc, encode_round_trip);
    tcase_add_test(tc, decode_malformed);
    suite_add_tcase(s, tc);
    return s;
}
