/* SPDX-License-Identifier: Apache-2.0 */
/* test_notifydigest.c - rs_notifydigest: what a set's framework topic
 * announces at a watcher start, from the documents' digests recorded at
 * the previous one (a real file in a temporary directory). */
#include <string.h>
#include "unit.h"
#include "rs_notifydigest.h"

#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SHA_ABC   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

/* The set lines of the Capability Lists u1, u2 (NULL: none). */
static apr_array_header_t *listed(const char *u1, const char *u2)
{
    apr_array_header_t *a = apr_array_make(ut_pool, 2, sizeof(const char *));
    if (u1) {
        APR_ARRAY_PUSH(a, const char *) = u1;
    }
    if (u2) {
        APR_ARRAY_PUSH(a, const char *) = u2;
    }
    return a;
}

/* The text names the SHA-256 of each document and every Capability List
 * the Source Description lists, in the file's format. */
START_TEST(text_holds_both_digests)
{
    ck_assert_str_eq(rs_notifydigest_text(ut_pool, "abc", 3, "", 0, NULL),
                     "capabilitylist " SHA_ABC "\ndescription " SHA_EMPTY "\n");
    ck_assert_str_eq(
        rs_notifydigest_text(ut_pool, "abc", 3, "", 0, listed("http://h/a", "http://h/b")),
        "capabilitylist " SHA_ABC "\ndescription " SHA_EMPTY "\nset http://h/a\nset http://h/b\n");
}
END_TEST

/* First start: both announced; no file yet: only recorded; the same
 * digests: nothing; changed: what changed, then recorded. */
START_TEST(decide_what_to_announce)
{
    const char *a = rs_notifydigest_text(ut_pool, "cl", 2, "sd", 2, NULL);
    const char *cl = rs_notifydigest_text(ut_pool, "cl2", 3, "sd", 2, NULL);
    const char *sd = rs_notifydigest_text(ut_pool, "cl", 2, "sd2", 3, NULL);
    const char *both = rs_notifydigest_text(ut_pool, "cl2", 3, "sd2", 3, NULL);

    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 0, 0, a, a), RS_NOTIFYDIGEST_CL_CREATED
                                                                      | RS_NOTIFYDIGEST_SD_UPDATED
                                                                      | RS_NOTIFYDIGEST_RECORD);
    /* The very first start: the Source Description is new too. */
    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 0, 1, NULL, a),
                     RS_NOTIFYDIGEST_CL_CREATED | RS_NOTIFYDIGEST_SD_CREATED
                         | RS_NOTIFYDIGEST_RECORD);
    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 1, 0, NULL, a), RS_NOTIFYDIGEST_RECORD);
    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 1, 0, a, a), 0);
    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 1, 0, a, cl),
                     RS_NOTIFYDIGEST_CL_UPDATED | RS_NOTIFYDIGEST_RECORD);
    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 1, 0, a, sd),
                     RS_NOTIFYDIGEST_SD_UPDATED | RS_NOTIFYDIGEST_RECORD);
    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 1, 0, a, both),
                     RS_NOTIFYDIGEST_CL_UPDATED | RS_NOTIFYDIGEST_SD_UPDATED
                         | RS_NOTIFYDIGEST_RECORD);
    /* A damaged file (a line missing): that document is announced. */
    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 1, 0, "description " SHA_EMPTY "\n",
                                            rs_notifydigest_text(ut_pool, "", 0, "", 0, NULL)),
                     RS_NOTIFYDIGEST_CL_UPDATED | RS_NOTIFYDIGEST_RECORD);
}
END_TEST

/* A set removed: the Capability List the Source Description listed and
 * lists no more is gone (announced deleted, with the Source Description
 * updated); one added is not; a file without set lines (an older
 * module's) names none. */
START_TEST(removed_set_is_gone)
{
    const char *ab = rs_notifydigest_text(
        ut_pool, "cl", 2, "sd-ab", 5,
        listed("http://h/a/capabilitylist.xml", "http://h/b/capabilitylist.xml"));
    const char *a = rs_notifydigest_text(ut_pool, "cl", 2, "sd-a", 4,
                                         listed("http://h/a/capabilitylist.xml", NULL));
    const char *old = rs_notifydigest_text(ut_pool, "cl", 2, "sd-ab", 5, NULL);
    apr_array_header_t *gone;

    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 1, 0, ab, a),
                     RS_NOTIFYDIGEST_SD_UPDATED | RS_NOTIFYDIGEST_CL_GONE | RS_NOTIFYDIGEST_RECORD);
    gone = rs_notifydigest_gone(ut_pool, ab, a);
    ck_assert_int_eq(gone->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(gone, 0, const char *), "http://h/b/capabilitylist.xml");
    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 1, 0, a, ab),
                     RS_NOTIFYDIGEST_SD_UPDATED | RS_NOTIFYDIGEST_RECORD);
    ck_assert_int_eq(rs_notifydigest_gone(ut_pool, a, ab)->nelts, 0);
    ck_assert_int_eq(rs_notifydigest_gone(ut_pool, old, a)->nelts, 0);
    /* A URL that is a prefix of a listed one is not mistaken for it. */
    ck_assert_int_eq(
        rs_notifydigest_gone(ut_pool, ab,
                             rs_notifydigest_text(ut_pool, "cl", 2, "sd", 2,
                                                  listed("http://h/a/capabilitylist.xml",
                                                         "http://h/b/capabilitylist.xml2")))
            ->nelts,
        1);
}
END_TEST

/* No file: no text and no error; a file: its text; a path that cannot be
 * read as a file: its cause. */
START_TEST(read_the_recorded_digests)
{
    const char *dir = ut_tempdir("notifydigest");
    const char *path = ut_path(dir, "documents.digest");
    const char *text = "x";
    const char *a = rs_notifydigest_text(ut_pool, "cl", 2, "sd", 2, NULL);

    ck_assert_int_eq(rs_notifydigest_read(ut_pool, path, &text), APR_SUCCESS);
    ck_assert_ptr_null(text);
    ut_write_str(path, a);
    ck_assert_int_eq(rs_notifydigest_read(ut_pool, path, &text), APR_SUCCESS);
    ck_assert_str_eq(text, a);
    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 1, 0, text, a), 0);
    ck_assert_int_ne(rs_notifydigest_read(ut_pool, dir, &text), APR_SUCCESS);
    ck_assert_ptr_null(text);
}
END_TEST

Suite *notifydigest_suite(void)
{
    Suite *s = suite_create("notifydigest");
    TCase *tc = ut_tcase("core", 10);
    tcase_add_test(tc, text_holds_both_digests);
    tcase_add_test(tc, decide_what_to_announce);
    tcase_add_test(tc, removed_set_is_gone);
    tcase_add_test(tc, read_the_recorded_digests);
    suite_add_tcase(s, tc);
    return s;
}
