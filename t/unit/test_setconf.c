/* SPDX-License-Identifier: Apache-2.0 */
/* test_setconf.c - rs_setconf: a set's options as the writer records
 * them, and the sentence that names the first one another node has
 * otherwise. */
#include "unit.h"
#include "rs_setconf.h"

static const char *enc(const char *const *kv)
{
    apr_array_header_t *items = apr_array_make(ut_pool, 4, sizeof(rs_setconf_item_t));
    for (; *kv; kv += 2) {
        rs_setconf_add(items, kv[0], kv[1]);
    }
    return rs_setconf_encode(ut_pool, items);
}

START_TEST(encode_lines)
{
    static const char *const a[] = {
        "ResourceSyncHash", "md5 sha-256", "ResourceSyncMaxEntries", "50000", "Empty", NULL, NULL
    };
    static const char *const esc[] = { "X", "a\nb\\c", NULL };

    ck_assert_str_eq(enc(a),
                     "ResourceSyncHash=md5 sha-256\nResourceSyncMaxEntries=50000\nEmpty=\n");
    /* A value with a newline or a backslash stays one line. */
    ck_assert_str_eq(enc(esc), "X=a\\nb\\\\c\n");
}
END_TEST

START_TEST(same_options)
{
    static const char *const a[] = { "A", "1", "B", "two words", NULL };
    ck_assert_ptr_null(rs_setconf_diff(ut_pool, enc(a), enc(a), "n2"));
}
END_TEST

START_TEST(first_difference_named)
{
    static const char *const mine[] = { "ResourceSyncBaseURL",
                                        "http://a.example/",
                                        "ResourceSyncHash",
                                        "md5",
                                        "ResourceSyncMaxEntries",
                                        "100",
                                        NULL };
    static const char *const theirs[] = { "ResourceSyncBaseURL",
                                          "http://a.example/",
                                          "ResourceSyncHash",
                                          "sha-256",
                                          "ResourceSyncMaxEntries",
                                          "200",
                                          NULL };
    ck_assert_str_eq(rs_setconf_diff(ut_pool, enc(mine), enc(theirs), "node b"),
                     "ResourceSyncHash is md5 here, sha-256 on node b");
}
END_TEST

START_TEST(missing_on_either_side)
{
    static const char *const two[] = { "A", "1", "B", "2", NULL };
    static const char *const one[] = { "A", "1", NULL };
    static const char *const empty[] = { "A", "1", "B", "", NULL };

    /* An option the writer (an older module) does not record. */
    ck_assert_str_eq(rs_setconf_diff(ut_pool, enc(two), enc(one), "w"),
                     "B is 2 here, (not set) on w");
    /* One this node does not know. */
    ck_assert_str_eq(rs_setconf_diff(ut_pool, enc(one), enc(two), "w"),
                     "B is (not set) here, 2 on w");
    ck_assert_str_eq(rs_setconf_diff(ut_pool, enc(two), enc(empty), "w"),
                     "B is 2 here, (empty) on w");
}
END_TEST

START_TEST(prefix_names_are_other_names)
{
    /* "Hash" is not "HashX": a name is matched whole. */
    static const char *const a[] = { "HashX", "1", "Hash", "2", NULL };
    static const char *const b[] = { "Hash", "2", "HashX", "1", NULL };
    static const char *const c[] = { "HashX", "1", "Hash", "3", NULL };

    ck_assert_ptr_null(rs_setconf_diff(ut_pool, enc(a), enc(b), "w"));
    ck_assert_str_eq(rs_setconf_diff(ut_pool, enc(a), enc(c), "w"), "Hash is 2 here, 3 on w");
}
END_TEST

START_TEST(long_value_cut)
{
    char v[301];
    const char *d;
    const char *kv1[] = { "L", v, NULL }, *kv2[] = { "L", "x", NULL };

    memset(v, 'a', 300);
    v[300] = '\0';
    d = rs_setconf_diff(ut_pool, enc(kv1), enc(kv2), "w");
    ck_assert_ptr_nonnull(d);
    ck_assert_int_eq((int)strlen(d), (int)strlen("L is  here, x on w") + 200 + 3);
    ck_assert_ptr_nonnull(strstr(d, "aaa... here"));
}
END_TEST

START_TEST(garbage_stored_value)
{
    /* Whatever the store holds (an older form, a hand edit) is a
     * difference, never a crash. */
    static const char *const a[] = { "A", "1", NULL };
    const char *d = rs_setconf_diff(ut_pool, enc(a), "no equals sign\n\n=\n", "w");
    ck_assert_str_eq(d, "A is 1 here, (not set) on w");
    ck_assert_ptr_nonnull(rs_setconf_diff(ut_pool, enc(a), "", "w"));
}
END_TEST

Suite *setconf_suite(void)
{
    Suite *s = suite_create("rs_setconf");
    TCase *tc = ut_tcase("setconf", 10);
    tcase_add_test(tc, encode_lines);
    tcase_add_test(tc, same_options);
    tcase_add_test(tc, first_difference_named);
    tcase_add_test(tc, missing_on_either_side);
    tcase_add_test(tc, prefix_names_are_other_names);
    tcase_add_test(tc, long_value_cut);
    tcase_add_test(tc, garbage_stored_value);
    suite_add_tcase(s, tc);
    return s;
}
