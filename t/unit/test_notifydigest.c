/* SPDX-License-Identifier: Apache-2.0 */
/* test_notifydigest.c - rs_notifydigest: what a set's framework topic
 * announces at a watcher start, from the documents' digests recorded at
 * the previous one (a real file in a temporary directory). */
#include <string.h>
#include "unit.h"
#include "rs_notifydigest.h"

#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SHA_ABC   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

/* The text names the SHA-256 of each document, in the file's format. */
START_TEST(text_holds_both_digests)
{
    ck_assert_str_eq(rs_notifydigest_text(ut_pool, "abc", 3, "", 0),
                     "capabilitylist " SHA_ABC "\ndescription " SHA_EMPTY "\n");
}
END_TEST

/* First start: both announced; no file yet: only recorded; the same
 * digests: nothing; changed: what changed, then recorded. */
START_TEST(decide_what_to_announce)
{
    const char *a = rs_notifydigest_text(ut_pool, "cl", 2, "sd", 2);
    const char *cl = rs_notifydigest_text(ut_pool, "cl2", 3, "sd", 2);
    const char *sd = rs_notifydigest_text(ut_pool, "cl", 2, "sd2", 3);
    const char *both = rs_notifydigest_text(ut_pool, "cl2", 3, "sd2", 3);

    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 0, a, a), RS_NOTIFYDIGEST_CL_CREATED
                                                                   | RS_NOTIFYDIGEST_SD_UPDATED
                                                                   | RS_NOTIFYDIGEST_RECORD);
    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 1, NULL, a), RS_NOTIFYDIGEST_RECORD);
    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 1, a, a), 0);
    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 1, a, cl),
                     RS_NOTIFYDIGEST_CL_UPDATED | RS_NOTIFYDIGEST_RECORD);
    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 1, a, sd),
                     RS_NOTIFYDIGEST_SD_UPDATED | RS_NOTIFYDIGEST_RECORD);
    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 1, a, both), RS_NOTIFYDIGEST_CL_UPDATED
                                                                      | RS_NOTIFYDIGEST_SD_UPDATED
                                                                      | RS_NOTIFYDIGEST_RECORD);
    /* A damaged file (a line missing): that document is announced. */
    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 1, "description " SHA_EMPTY "\n",
                                            rs_notifydigest_text(ut_pool, "", 0, "", 0)),
                     RS_NOTIFYDIGEST_CL_UPDATED | RS_NOTIFYDIGEST_RECORD);
}
END_TEST

/* No file: no text and no error; a file: its text; a path that cannot be
 * read as a file: its cause. */
START_TEST(read_the_recorded_digests)
{
    const char *dir = ut_tempdir("notifydigest");
    const char *path = ut_path(dir, "documents.digest");
    const char *text = "x";
    const char *a = rs_notifydigest_text(ut_pool, "cl", 2, "sd", 2);

    ck_assert_int_eq(rs_notifydigest_read(ut_pool, path, &text), APR_SUCCESS);
    ck_assert_ptr_null(text);
    ut_write_str(path, a);
    ck_assert_int_eq(rs_notifydigest_read(ut_pool, path, &text), APR_SUCCESS);
    ck_assert_str_eq(text, a);
    ck_assert_int_eq(rs_notifydigest_decide(ut_pool, 1, text, a), 0);
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
    tcase_add_test(tc, read_the_recorded_digests);
    suite_add_tcase(s, tc);
    return s;
}
