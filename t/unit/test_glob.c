/* SPDX-License-Identifier: Apache-2.0 */
/* test_glob.c - rs_glob: exclusion patterns and dotfile rules */
#include <stdarg.h>
#include <string.h>
#include "unit.h"
#include "rs_glob.h"

/* Array of the given patterns (NULL-terminated argument list). */
static apr_array_header_t *pats(const char *first, ...)
{
    apr_array_header_t *a = apr_array_make(ut_pool, 4, sizeof(const char *));
    const char *s;
    va_list ap;
    va_start(ap, first);
    for (s = first; s; s = va_arg(ap, const char *)) {
        APR_ARRAY_PUSH(a, const char *) = s;
    }
    va_end(ap);
    return a;
}

#define MATCH(p, path)   ck_assert_msg(rs_glob_match(p, path) == 1, "no match: %s", path)
#define NOMATCH(p, path) ck_assert_msg(rs_glob_match(p, path) == 0, "matched: %s", path)

START_TEST(no_patterns)
{
    NOMATCH(NULL, "a.tmp");
    NOMATCH(pats(NULL), "a.tmp");
}
END_TEST

START_TEST(basename_patterns)
{
    apr_array_header_t *p = pats("*.tmp", NULL);
    MATCH(p, "a.tmp");
    MATCH(p, "dir/a.tmp");
    MATCH(p, "dir/sub/deeper/x.tmp");
    MATCH(p, ".tmp");
    MATCH(p, "dir.tmp"); /* a directory: the scan prunes it */
    NOMATCH(p, "a.tmp.txt");
    NOMATCH(p, "a.tmpx");
    NOMATCH(p, "a.TMP");
    NOMATCH(p, "dir.tmp/x"); /* only the base name is matched */

    p = pats("cache", NULL);
    MATCH(p, "cache");
    MATCH(p, "a/cache");
    MATCH(p, "a/b/cache");
    NOMATCH(p, "cached");
    NOMATCH(p, "mycache");
    NOMATCH(p, "cache/x");

    p = pats("?.txt", "[ab]*.log", NULL);
    MATCH(p, "x.txt");
    MATCH(p, "d/x.txt");
    NOMATCH(p, "xx.txt");
    MATCH(p, "a1.log");
    MATCH(p, "d/b.log");
    NOMATCH(p, "c.log");

    p = pats("[!a]*", NULL);
    NOMATCH(p, "apple");
    MATCH(p, "banana");
}
END_TEST

START_TEST(anchored_patterns)
{
    apr_array_header_t *p = pats("private/*", NULL);
    MATCH(p, "private/x");
    MATCH(p, "private/.x");
    NOMATCH(p, "private");
    NOMATCH(p, "private/x/y"); /* "*" does not cross "/" */
    NOMATCH(p, "a/private/x"); /* anchored at the root */
    NOMATCH(p, "privatex/y");

    p = pats("a/b?.txt", NULL);
    MATCH(p, "a/b1.txt");
    NOMATCH(p, "a/b/.txt"); /* "?" does not match "/" */
    NOMATCH(p, "b1.txt");
    NOMATCH(p, "x/a/b1.txt");

    p = pats("docs/*/draft-*", NULL);
    MATCH(p, "docs/2023/draft-1");
    NOMATCH(p, "docs/draft-1");
    NOMATCH(p, "docs/a/b/draft-1");

    p = pats("a/**/z", NULL); /* "**" is not special */
    MATCH(p, "a/b/z");
    NOMATCH(p, "a/b/c/z");
}
END_TEST

START_TEST(leading_slash)
{
    apr_array_header_t *p = pats("/drafts", NULL);
    MATCH(p, "drafts");
    NOMATCH(p, "a/drafts");
    NOMATCH(p, "drafts2");
    NOMATCH(p, "drafts/x");

    p = pats("/*.bak", NULL);
    MATCH(p, "x.bak");
    NOMATCH(p, "d/x.bak");

    /* The same pattern without the slash matches at any depth. */
    p = pats("drafts", NULL);
    MATCH(p, "a/drafts");
}
END_TEST

START_TEST(several_patterns)
{
    apr_array_header_t *p = pats("*.tmp", "/private", "cache/*.bin", "core", NULL);
    MATCH(p, "x/y.tmp");
    MATCH(p, "private");
    MATCH(p, "cache/a.bin");
    MATCH(p, "d/core");
    NOMATCH(p, "x/private");
    NOMATCH(p, "d/cache/a.bin");
    NOMATCH(p, "README");
}
END_TEST

START_TEST(escapes)
{
    apr_array_header_t *p = pats("\\*.txt", NULL);
    MATCH(p, "*.txt");
    MATCH(p, "d/*.txt");
    NOMATCH(p, "a.txt");

    p = pats("a\\?", NULL);
    MATCH(p, "a?");
    NOMATCH(p, "ab");
}
END_TEST

START_TEST(hidden)
{
    ck_assert_int_eq(rs_glob_hidden(".htaccess", 0), 1);
    ck_assert_int_eq(rs_glob_hidden(".htaccess", 1), 1);
    ck_assert_int_eq(rs_glob_hidden(".htpasswd", 1), 1);
    ck_assert_int_eq(rs_glob_hidden(".ht", 1), 1);
    ck_assert_int_eq(rs_glob_hidden(".hidden", 0), 1);
    ck_assert_int_eq(rs_glob_hidden(".hidden", 1), 0);
    ck_assert_int_eq(rs_glob_hidden(".h", 1), 0);
    ck_assert_int_eq(rs_glob_hidden(".well-known", 1), 0);
    ck_assert_int_eq(rs_glob_hidden(".well-known", 0), 1);
    ck_assert_int_eq(rs_glob_hidden("a.txt", 0), 0);
    ck_assert_int_eq(rs_glob_hidden("x.htaccess", 0), 0);
    ck_assert_int_eq(rs_glob_hidden("htaccess", 0), 0);
    ck_assert_int_eq(rs_glob_hidden("..data", 1), 0);
}
END_TEST

START_TEST(check_ok)
{
    static const char
        *const good[] = { "*.tmp", "cache",  "/drafts", "private/*", "a/b/c", "[abc].txt",
                          "[!a]*", "[]a]",   "[!]a]",   "\\[x",      "x\\]",  "a]b",
                          "\\\\",  "[a-z]?", "[[]", /* a bracket expression matching "[" */
                          "[a[]b", "[\\]]",         /* escaped "]" inside the bracket */
                          NULL };
    int i;
    for (i = 0; good[i]; i++) {
        const char *err = rs_glob_check(ut_pool, good[i]);
        ck_assert_msg(err == NULL, "'%s' rejected: %s", good[i], err);
    }
}
END_TEST

START_TEST(check_errors)
{
    const char *err;
    ck_assert_ptr_nonnull(rs_glob_check(ut_pool, ""));
    ck_assert_ptr_nonnull(rs_glob_check(ut_pool, "/"));
    err = rs_glob_check(ut_pool, "abc\\");
    ck_assert_ptr_nonnull(err);
    ck_assert_ptr_nonnull(strstr(err, "backslash"));
    err = rs_glob_check(ut_pool, "[abc");
    ck_assert_ptr_nonnull(err);
    ck_assert_ptr_nonnull(strstr(err, "unterminated"));
    ck_assert_ptr_nonnull(strstr(err, "[abc"));
    ck_assert_ptr_nonnull(rs_glob_check(ut_pool, "a/[b"));
    ck_assert_ptr_nonnull(rs_glob_check(ut_pool, "[]"));
    ck_assert_ptr_nonnull(rs_glob_check(ut_pool, "[!]"));
    ck_assert_ptr_nonnull(rs_glob_check(ut_pool, "x[\\]"));
    ck_assert_ptr_nonnull(rs_glob_check(ut_pool, "[a\\"));
    ck_assert_ptr_nonnull(rs_glob_check(ut_pool, "ok/[a-"));
}
END_TEST

START_TEST(bracket_semantics)
{
    /* What rs_glob_check accepts, apr_fnmatch treats as a bracket. */
    apr_array_header_t *p = pats("[[]x", NULL);
    MATCH(p, "[x");
    NOMATCH(p, "[]x");
    p = pats("[]a]", NULL);
    MATCH(p, "]");
    MATCH(p, "a");
    NOMATCH(p, "b");
}
END_TEST

Suite *glob_suite(void)
{
    Suite *s = suite_create("rs_glob");
    TCase *tc = ut_tcase("match", 10);
    tcase_add_test(tc, no_patterns);
    tcase_add_test(tc, basename_patterns);
    tcase_add_test(tc, anchored_patterns);
    tcase_add_test(tc, leading_slash);
    tcase_add_test(tc, several_patterns);
    tcase_add_test(tc, escapes);
    tcase_add_test(tc, bracket_semantics);
    tcase_add_test(tc, hidden);
    suite_add_tcase(s, tc);
    tc = ut_tcase("check", 10);
    tcase_add_test(tc, check_ok);
    tcase_add_test(tc, check_errors);
    suite_add_tcase(s, tc);
    return s;
}
