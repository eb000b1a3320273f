/* SPDX-License-Identifier: Apache-2.0 */
/* test_confval.c - rs_confval: directive values by their description, with
 * the messages httpd reports (the same as t/startup-errors.t and
 * docs/directives.md quote). */
#include "unit.h"
#include "rs_confval.h"

/* The value of arg, which must be accepted. */
static apr_int64_t ok(const rs_confval_t *v, const char *arg)
{
    apr_int64_t out = -77;
    const char *err = rs_confval_parse(ut_pool, "D", v, arg, &out);
    ck_assert_msg(err == NULL, "'%s' refused: %s", arg, err);
    return out;
}

/* The message for arg, which must be refused without touching *out. */
static const char *bad(const rs_confval_t *v, const char *name, const char *arg)
{
    apr_int64_t out = -77;
    const char *err = rs_confval_parse(ut_pool, name, v, arg, &out);
    ck_assert_msg(err != NULL, "'%s' accepted as %" APR_INT64_T_FMT, arg, out);
    ck_assert_int_eq(out, -77);
    return err;
}

START_TEST(numbers)
{
    static const rs_confval_t secs = { RS_NUMBER(1, 86400, "seconds"), .scale = APR_USEC_PER_SEC };
    static const rs_confval_t plain = { RS_NUMBER(1, 50000, "") };
    static const rs_confval_t unnamed = { RS_NUMBER(1, 10, NULL) };

    ck_assert_int_eq(ok(&secs, "30"), apr_time_from_sec(30));
    ck_assert_int_eq(ok(&secs, "86400"), apr_time_from_sec(86400));
    ck_assert_int_eq(ok(&plain, "007"), 7);
    ck_assert_str_eq(bad(&secs, "ResourceSyncRescanInterval", "0"),
                     "ResourceSyncRescanInterval: '0' is not a number of seconds from 1 to 86400");
    ck_assert_str_eq(bad(&secs, "ResourceSyncRescanInterval", "86401"),
                     "ResourceSyncRescanInterval: '86401' is not a number of seconds from 1 "
                     "to 86400");
    ck_assert_str_eq(bad(&plain, "ResourceSyncMaxEntries", "abc"),
                     "ResourceSyncMaxEntries: 'abc' is not a number from 1 to 50000");
    ck_assert_str_eq(bad(&unnamed, "D", "11"), "D: '11' is not a number from 1 to 10");
    /* "off" only where the description accepts it. */
    ck_assert_str_eq(bad(&plain, "D", "off"), "D: 'off' is not a number from 1 to 50000");
    bad(&plain, "D", "");
    bad(&plain, "D", "1e3");
}
END_TEST

START_TEST(numbers_off)
{
    static const rs_confval_t mib = { RS_NUMBER(1, 1048576, "MiB"), .off = 1,
                                      .scale = APR_INT64_C(1) << 20 };

    ck_assert_int_eq(ok(&mib, "off"), 0);
    ck_assert_int_eq(ok(&mib, "OFF"), 0);
    ck_assert_int_eq(ok(&mib, "7"), APR_INT64_C(7) << 20);
    ck_assert_int_eq(ok(&mib, "1048576"), APR_INT64_C(1) << 40);
    ck_assert_str_eq(bad(&mib, "ResourceSyncLargeFileSize", "0"),
                     "ResourceSyncLargeFileSize: '0' is not 'off' nor a number of MiB from 1 "
                     "to 1048576");
    ck_assert_str_eq(bad(&mib, "ResourceSyncLargeFileSize", "64M"),
                     "ResourceSyncLargeFileSize: '64M' is not 'off' nor a number of MiB from 1 "
                     "to 1048576");
    bad(&mib, "D", "on");
}
END_TEST

START_TEST(durations)
{
    static const rs_confval_t period = { RS_DURATION("is not a duration (e.g. 3600, 90m, 12h, "
                                                     "1d)") };
    static const rs_confval_t dump = { RS_DURATION("is not a duration (e.g. 3600, 90m, 12h, "
                                                   "1d) or off"),
                                       .off = 1 };

    ck_assert_int_eq(ok(&period, "1h"), apr_time_from_sec(3600));
    ck_assert_int_eq(ok(&period, "90"), apr_time_from_sec(90));
    ck_assert_str_eq(bad(&period, "ResourceSyncChangeListPeriod", "5x"),
                     "ResourceSyncChangeListPeriod: '5x' is not a duration (e.g. 3600, 90m, 12h, "
                     "1d)");
    bad(&period, "D", "0");
    bad(&period, "D", "off");
    ck_assert_int_eq(ok(&dump, "Off"), 0);
    ck_assert_int_eq(ok(&dump, "2d"), apr_time_from_sec(2 * 86400));
    ck_assert_str_eq(bad(&dump, "ResourceSyncResourceDump", "sometimes"),
                     "ResourceSyncResourceDump: 'sometimes' is not a duration (e.g. 3600, 90m, "
                     "12h, 1d) or off");
}
END_TEST

START_TEST(delays)
{
    static const rs_confval_t notify = { RS_DELAY(0, apr_time_from_sec(3600),
                                                  "is not a delay from 0 to 1h (e.g. 100ms, "
                                                  "2s)") };
    static const rs_confval_t timeout = { RS_DELAY(apr_time_from_msec(100), apr_time_from_sec(600),
                                                   "is not a duration from 100ms to 10m") };

    ck_assert_int_eq(ok(&notify, "0"), 0);
    ck_assert_int_eq(ok(&notify, "100ms"), apr_time_from_msec(100));
    ck_assert_int_eq(ok(&notify, "1h"), apr_time_from_sec(3600));
    ck_assert_str_eq(bad(&notify, "ResourceSyncNotifyDelay", "2h"),
                     "ResourceSyncNotifyDelay: '2h' is not a delay from 0 to 1h (e.g. 100ms, 2s)");
    ck_assert_int_eq(ok(&timeout, "100ms"), apr_time_from_msec(100));
    ck_assert_int_eq(ok(&timeout, "10m"), apr_time_from_sec(600));
    ck_assert_str_eq(bad(&timeout, "ResourceSyncHubVerifyTimeout", "99ms"),
                     "ResourceSyncHubVerifyTimeout: '99ms' is not a duration from 100ms to 10m");
    ck_assert_str_eq(bad(&timeout, "ResourceSyncHubVerifyTimeout", "601s"),
                     "ResourceSyncHubVerifyTimeout: '601s' is not a duration from 100ms to 10m");
}
END_TEST

START_TEST(words)
{
    static const char *const access[] = { "auto", "per-file", NULL };
    static const rs_confval_t flag = { RS_FLAG("is not On or Off") };
    static const rs_confval_t check = { RS_WORDS(access, "is not auto or per-file") };

    ck_assert_int_eq(ok(&flag, "off"), 0);
    ck_assert_int_eq(ok(&flag, "On"), 1);
    ck_assert_int_eq(ok(&flag, "ON"), 1);
    ck_assert_str_eq(bad(&flag, "ResourceSyncIncludeDotfiles", "maybe"),
                     "ResourceSyncIncludeDotfiles: 'maybe' is not On or Off");
    bad(&flag, "D", "");
    bad(&flag, "D", "1");
    bad(&flag, "D", "onn");
    ck_assert_int_eq(ok(&check, "auto"), 0);
    ck_assert_int_eq(ok(&check, "PER-FILE"), 1);
    ck_assert_str_eq(bad(&check, "ResourceSyncAccessCheck", "sometimes"),
                     "ResourceSyncAccessCheck: 'sometimes' is not auto or per-file");
}
END_TEST

Suite *confval_suite(void)
{
    Suite *s = suite_create("rs_confval");
    TCase *tc = ut_tcase("confval", 10);
    tcase_add_test(tc, numbers);
    tcase_add_test(tc, numbers_off);
    tcase_add_test(tc, durations);
    tcase_add_test(tc, delays);
    tcase_add_test(tc, words);
    suite_add_tcase(s, tc);
    return s;
}
