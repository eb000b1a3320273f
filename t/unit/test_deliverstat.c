/* SPDX-License-Identifier: Apache-2.0 */
/* test_deliverstat.c - the delivery status file: its lines, written only
 * when its text changed, read back whole. */
#include <string.h>
#include <sys/stat.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_deliverstat.h"
#include "rs_journal.h"
#include "rs_schema.h"
#include "rs_statedir.h"

/* A hub row and a subscriber: their lines name the set, topic, URL and
 * state; a destination never tried shows "-". */
START_TEST(destination_lines)
{
    rs_notifydest_t hub = {
        "s", "change", "fat", "http://hub.example/", NULL, 0, 7, 3, 0, 503, NULL
    };
    rs_notifydest_t sub = { "s",
                            "framework",
                            RS_NOTIFYDEST_SUB,
                            "http://cb.example/x",
                            NULL,
                            apr_time_from_sec(1700000000),
                            0,
                            0,
                            0,
                            0,
                            "refused" };

    ck_assert_str_eq(rs_deliverstat_line(ut_pool, &hub, apr_time_from_sec(1700000001), 4),
                     "notify-hub: s change http://hub.example/ mode=fat backlog=4 "
                     "last-status=503 last-try=2023-11-14T22:13:21Z attempts=3\n");
    ck_assert_str_eq(rs_deliverstat_line(ut_pool, &sub, 0, 2),
                     "notify-subscriber: s framework http://cb.example/x pending=2 failures=0 "
                     "last-status=none last-try=- lease-until=2023-11-14T22:13:20Z\n");
    hub.last_status = 0;
    ck_assert_ptr_nonnull(
        strstr(rs_deliverstat_line(ut_pool, &hub, 0, 0), " last-status=- last-try=- "));
}
END_TEST

/* A topic's line gives its newest notification; none yet: 0 and "-". */
START_TEST(topic_line)
{
    const char *base = ut_tempdir("deliverstat");
    ut_log_t ul;
    rs_db_t *db;
    rs_journal_t *j;
    rs_notify_t *n;

    ck_assert_int_eq(rs_schema_open(&db, ut_pool, ut_driver, ut_store(ut_path(base, "state.db")),
                                    ut_log_init(&ul)),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_journal_open(&j, db, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_notify_open(&n, db, j, ut_pool), APR_SUCCESS);
    ck_assert_str_eq(rs_deliverstat_topic(ut_pool, n, "s", RS_NOTIFY_CHANGE),
                     "notify-topic: s change last=0 until=-\n");
}
END_TEST

/* Written below the state directory, read back whole; the same text
 * again is not written (the file keeps its inode); another is. */
START_TEST(write_only_when_changed)
{
    const char *sd = ut_tempdir("deliverstat-dir");
    const char *path = rs_statedir_delivery(ut_pool, sd);
    char *prev = NULL;
    struct stat a, b;

    ck_assert_ptr_null(rs_deliverstat_read(ut_pool, sd));
    rs_deliverstat_write(ut_pool, sd, "notify-topic: s change last=1 until=-\n", &prev);
    ck_assert_str_eq(rs_deliverstat_read(ut_pool, sd), "notify-topic: s change last=1 until=-\n");
    ck_assert_str_eq(prev, "notify-topic: s change last=1 until=-\n");
    ck_assert_int_eq(stat(path, &a), 0);
    rs_deliverstat_write(ut_pool, sd, "notify-topic: s change last=1 until=-\n", &prev);
    ck_assert_int_eq(stat(path, &b), 0);
    ck_assert_int_eq(a.st_ino, b.st_ino);
    rs_deliverstat_write(ut_pool, sd, "", &prev);
    ck_assert_str_eq(rs_deliverstat_read(ut_pool, sd), "");
    ck_assert_int_eq(stat(path, &b), 0);
    ck_assert_int_ne(a.st_ino, b.st_ino);
    free(prev);
}
END_TEST

Suite *deliverstat_suite(void)
{
    Suite *s = suite_create("rs_deliverstat");
    TCase *tc = ut_tcase("deliverstat", 30);
    tcase_add_test(tc, destination_lines);
    tcase_add_test(tc, topic_line);
    tcase_add_test(tc, write_only_when_changed);
    suite_add_tcase(s, tc);
    return s;
}
