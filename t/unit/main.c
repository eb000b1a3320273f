/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - runner of the engine unit tests.
 *
 * Runs every suite with Check's normal output (ending with the
 * "NN%: Checks: N, Failures: F, Errors: E" summary line) and exits non-zero
 * when a test fails.  CK_FORK, CK_RUN_SUITE, CK_RUN_CASE and CK_VERBOSITY
 * are honoured as usual.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <apr_general.h>
#include <libxml/parser.h>
#include "unit.h"

const char *ut_tmproot;
int ut_forking = 1;

int main(int argc, const char *const *argv)
{
    static char root[] = "/tmp/rs-unit-XXXXXX";
    SRunner *sr;
    int failed;

    if (apr_app_initialize(&argc, &argv, NULL) != APR_SUCCESS) {
        fprintf(stderr, "unit-tests: apr_app_initialize failed\n");
        return 2;
    }
    xmlInitParser();
    if (!mkdtemp(root)) {
        fprintf(stderr, "unit-tests: mkdtemp %s: %s\n", root, strerror(errno));
        return 2;
    }
    /* Searchable by every user: one scan test runs without privileges. */
    chmod(root, 0711);
    ut_tmproot = root;

    sr = srunner_create(time_suite());
    srunner_add_suite(sr, uri_suite());
    srunner_add_suite(sr, path_suite());
    srunner_add_suite(sr, hash_suite());
    srunner_add_suite(sr, glob_suite());
    srunner_add_suite(sr, xml_suite());
    srunner_add_suite(sr, db_suite());
    srunner_add_suite(sr, dbdriver_suite());
    srunner_add_suite(sr, schema_suite());
    srunner_add_suite(sr, linkkeep_suite());
    srunner_add_suite(sr, statedir_suite());
    srunner_add_suite(sr, inventory_suite());
    srunner_add_suite(sr, invbatch_suite());
    srunner_add_suite(sr, scan_suite());
    srunner_add_suite(sr, snapshot_suite());
    srunner_add_suite(sr, journal_suite());
    srunner_add_suite(sr, changelist_suite());
    srunner_add_suite(sr, scan_changes_suite());
    srunner_add_suite(sr, scan_access_suite());
    srunner_add_suite(sr, ring_suite());
    srunner_add_suite(sr, watch_suite());
    srunner_add_suite(sr, file_suite());
    srunner_add_suite(sr, generation_suite());
    srunner_add_suite(sr, entry_suite());
    srunner_add_suite(sr, parse_suite());
    srunner_add_suite(sr, confval_suite());
    srunner_add_suite(sr, mounts_suite());
    srunner_add_suite(sr, zip_suite());
    srunner_add_suite(sr, hubreq_suite());
    srunner_add_suite(sr, zipout_suite());
    srunner_add_suite(sr, partition_suite());
    srunner_add_suite(sr, dump_suite());
    srunner_add_suite(sr, capture_suite());
    srunner_add_suite(sr, cdump_suite());
    srunner_add_suite(sr, notify_suite());
    srunner_add_suite(sr, notifyseal_suite());
    srunner_add_suite(sr, deliverpolicy_suite());
    srunner_add_suite(sr, delivery_suite());
    srunner_add_suite(sr, notifydigest_suite());
    srunner_add_suite(sr, deliverstat_suite());
    srunner_add_suite(sr, scanrate_suite());
    srunner_add_suite(sr, websub_suite());
    srunner_add_suite(sr, hubsub_suite());
    srunner_add_suite(sr, hubflow_suite());
    srunner_add_suite(sr, json_suite());
    srunner_add_suite(sr, setlock_suite());
    srunner_add_suite(sr, storelock_suite());
    srunner_add_suite(sr, storeretry_suite());
    srunner_add_suite(sr, massdel_suite());
    srunner_add_suite(sr, links_suite());
    srunner_add_suite(sr, statecheck_suite());
    srunner_add_suite(sr, jobthread_suite());
    srunner_add_suite(sr, withdrawq_suite());
    srunner_add_suite(sr, hubintake_suite());
    srunner_add_suite(sr, range_suite());
    srunner_add_suite(sr, verifypass_suite());
    srunner_add_suite(sr, listclose_suite());
    srunner_add_suite(sr, hashlane_suite());
    srunner_add_suite(sr, progress_suite());
    srunner_add_suite(sr, snapsched_suite());
    srunner_add_suite(sr, dumpsched_suite());
    srunner_add_suite(sr, reconcile_suite());
    srunner_add_suite(sr, aboveroot_suite());
    srunner_add_suite(sr, dumprun_suite());
    srunner_add_suite(sr, cdumprun_suite());
    /* The store's suites again on PostgreSQL (see unit.h). */
    ut_pg_dsn = getenv("RS_TEST_PG");
    if (ut_pg_dsn && *ut_pg_dsn) {
        ut_pg_building = 1;
        srunner_add_suite(sr, db_suite());
        srunner_add_suite(sr, dbdriver_suite());
        srunner_add_suite(sr, schema_suite());
        srunner_add_suite(sr, inventory_suite());
        srunner_add_suite(sr, invbatch_suite());
        srunner_add_suite(sr, journal_suite());
        srunner_add_suite(sr, notify_suite());
        srunner_add_suite(sr, hubsub_suite());
        srunner_add_suite(sr, linkkeep_suite());
        srunner_add_suite(sr, storelock_suite());
        srunner_add_suite(sr, notifyseal_suite());
        srunner_add_suite(sr, deliverpolicy_suite());
        srunner_add_suite(sr, delivery_suite());
        srunner_add_suite(sr, deliverstat_suite());
        ut_pg_building = 0;
    }
    else if (getenv("RS_TEST_PG_REQUIRED") && strcmp(getenv("RS_TEST_PG_REQUIRED"), "0")) {
        fprintf(stderr, "unit-tests: RS_TEST_PG_REQUIRED is set but RS_TEST_PG holds no DSN: "
                        "the PostgreSQL tests cannot run (t/pgcluster run)\n");
        return 2;
    }
    ut_forking = srunner_fork_status(sr) != CK_NOFORK;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);

    if (ut_rmtree(root) != 0) {
        fprintf(stderr, "unit-tests: could not remove %s\n", root);
    }
    xmlCleanupParser();
    apr_terminate();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
