/* SPDX-License-Identifier: Apache-2.0 */
/* test_links.c - rs_links: the rules of rs:ln relations (construction,
 * checks, description, the target filter), matched with POSIX regexec */
#include <regex.h>
#include <string.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_links.h"

/* rs_links_match_fn over POSIX regexec (REG_EXTENDED). */
static int posix_match(void *re, const char *path, int nmatch, rs_links_span_t *m)
{
    regmatch_t pm[10];
    int i;
    if (nmatch > 10 || regexec(re, path, (size_t)nmatch, pm, 0) != 0) {
        return 0;
    }
    for (i = 0; i < nmatch; i++) {
        m[i].so = (int)pm[i].rm_so;
        m[i].eo = (int)pm[i].rm_eo;
    }
    return 1;
}

static apr_status_t re_cleanup(void *re)
{
    regfree(re);
    return APR_SUCCESS;
}

/* A compiled pattern (freed with ut_pool) and its number of groups. */
static regex_t *re(const char *pattern, int *ngroups)
{
    regex_t *r = apr_pcalloc(ut_pool, sizeof(*r));
    ck_assert_int_eq(regcomp(r, pattern, REG_EXTENDED), 0);
    apr_pool_cleanup_register(ut_pool, r, re_cleanup, apr_pool_cleanup_null);
    *ngroups = (int)r->re_nsub;
    return r;
}

/* rs_links_add with a pattern compiled here. */
static const char *add(rs_links_t *l, const char *rel, const char *pattern, const char *target,
                       const char *type, int pri, int if_exists)
{
    int ng;
    regex_t *r = re(pattern, &ng);
    return rs_links_add(l, ut_pool, rel, r, ng, pattern, target, type, pri, if_exists);
}

static rs_links_t *links(void)
{
    return rs_links_create(ut_pool, posix_match);
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
    ck_assert_ptr_nonnull(strstr(rs_links_rel_check(ut_pool, "up"), "\"up\""));
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
    ck_assert_int_eq(rs_links_count(l), 3);
    /* Mirrors alone name no local target. */
    ck_assert_int_eq(rs_links_has_local(l), 0);
    ck_assert_int_eq(rs_links_may_be_target(l, "a/b"), 0);
    /* The "/" appended shows in the description. */
    ck_assert_ptr_nonnull(
        strstr(rs_links_describe(l, ut_pool), "https://mirror.example.org/files/"));
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
    /* The same rules, the same text; any argument or the order changes it. */
    ck_assert_str_eq(da, db);
    ck_assert_ptr_null(rs_links_add_mirror(c, ut_pool, "https://m.example.org/", 0));
    ck_assert_ptr_null(add(c, "describedby", "^(.*)\\.pdf$", "$1.xml", NULL, 0, 0));
    ck_assert_str_ne(rs_links_describe(c, ut_pool), da);
    ck_assert_ptr_null(add(d, "describedby", "^(.*)\\.pdf$", "$1.xml", NULL, 0, 1));
    ck_assert_ptr_null(rs_links_add_mirror(d, ut_pool, "https://m.example.org/", 0));
    ck_assert_str_ne(rs_links_describe(d, ut_pool), da);
    d = links();
    ck_assert_ptr_null(add(d, "describedby", "^(.*)\\.pdf$", "$1.xml", NULL, 0, 0));
    ck_assert_ptr_null(rs_links_add_mirror(d, ut_pool, "https://m.example.org/", 7));
    ck_assert_str_ne(rs_links_describe(d, ut_pool), da);
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

Suite *links_suite(void)
{
    Suite *s = suite_create("rs_links");
    TCase *tc = ut_tcase("links", 30);
    tcase_add_test(tc, rel_names);
    tcase_add_test(tc, add_checks);
    tcase_add_test(tc, mirrors);
    tcase_add_test(tc, describe);
    tcase_add_test(tc, may_be_target);
    suite_add_tcase(s, tc);
    return s;
}
