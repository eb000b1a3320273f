/* SPDX-License-Identifier: Apache-2.0 */
/* test_statedir.c - rs_statedir: the layout of the state directory, every
 * path its functions spell. */
#include <string.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_statedir.h"

#define SD "/var/lib/rs"

/* The directories and files below the state directory, as the layout in
 * rs_statedir.h draws them. */
START_TEST(layout)
{
    apr_pool_t *p = ut_pool;
    const char *ns = rs_statedir_notifyset(p, SD, "s1");
    const char *wd = rs_statedir_withdraw(p, SD);
    const struct {
        const char *got, *want;
    } c[] = {
        { rs_statedir_db(p, SD), SD "/state.db" },
        { rs_statedir_history(p, SD), SD "/history" },
        { rs_statedir_changelists(p, SD), SD "/changelists" },
        { rs_statedir_clset(p, SD, "s1"), SD "/changelists/s1" },
        { rs_statedir_snapshots(p, SD), SD "/snapshots" },
        { rs_statedir_snapset(p, SD, "s1"), SD "/snapshots/s1" },
        { rs_statedir_dumpset(p, SD, "s1"), SD "/dumps/s1" },
        { rs_statedir_captureset(p, SD, "s1"), SD "/capture/s1" },
        { rs_statedir_changedumps(p, SD), SD "/changedumps" },
        { rs_statedir_cdumpset(p, SD, "s1"), SD "/changedumps/s1" },
        { rs_statedir_hub(p, SD), SD "/hub" },
        { rs_statedir_hubspool(p, SD), SD "/hub/spool" },
        { rs_statedir_hubintake(p, SD), SD "/hub/intake" },
        { rs_statedir_notify(p, SD), SD "/notify" },
        { rs_statedir_delivery(p, SD), SD "/notify/delivery.txt" },
        { ns, SD "/notify/s1" },
        { rs_statedir_notify_topic(p, ns, "change"), SD "/notify/s1/change.xml" },
        { rs_statedir_notify_topic(p, ns, "framework"), SD "/notify/s1/framework.xml" },
        { rs_statedir_notify_digests(p, ns), SD "/notify/s1/documents.digest" },
        { rs_statedir_locks(p, SD), SD "/locks" },
        { rs_statedir_setlock(p, SD, "s1"), SD "/locks/s1" },
        { rs_statedir_bases(p, SD), SD "/base" },
        { rs_statedir_setbase(p, SD, "s1"), SD "/base/s1" },
        { wd, SD "/withdraw" },
        { rs_statedir_withdraw_file(p, wd, "0001-7", 0), SD "/withdraw/0001-7.req" },
        { rs_statedir_withdraw_file(p, wd, "0001-7", 1), SD "/withdraw/0001-7.done" },
        { rs_statedir_withdraw_file(p, NULL, "0001-7", 0), "0001-7.req" },
        { rs_statedir_withdraw_file(p, NULL, "0001-7", 1), "0001-7.done" },
        { rs_statedir_backup_tmp(p, SD), SD "/.backup-XXXXXX" },
    };
    size_t i;

    for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        ck_assert_msg(!strcmp(c[i].got, c[i].want), "%s, not %s", c[i].got, c[i].want);
    }
}
END_TEST

/* The temporary copy's name is a mkstemp template in a fresh string
 * (mkstemp writes into it). */
START_TEST(backup_template_is_writable)
{
    char *a = rs_statedir_backup_tmp(ut_pool, SD), *b = rs_statedir_backup_tmp(ut_pool, SD);
    ck_assert_ptr_ne(a, b);
    a[strlen(a) - 1] = 'a';
    ck_assert_str_eq(b, SD "/.backup-XXXXXX");
}
END_TEST

Suite *statedir_suite(void)
{
    Suite *s = suite_create("statedir");
    TCase *tc = ut_tcase("statedir", 10);
    tcase_add_test(tc, layout);
    tcase_add_test(tc, backup_template_is_writable);
    suite_add_tcase(s, tc);
    return s;
}
