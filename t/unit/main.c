/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - runner of the engine unit tests.
 *
 * Runs every suite with Check's normal output (ending with the
 * "NN%: Checks: N, Failures: F, Errors: E" summary line) and exits non-zero
 * when a test fails.  CK_FORK, CK_RUN_SUITE, CK_RUN_CASE and CK_VERBOSITY
 * are honoured as usual; RS_UNIT_SHARD splits the suites between
 * processes (t/unit-run).
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

/* RS_UNIT_SHARD=I/N (t/unit-run): this process runs every Nth suite from
 * the Ith on (0-based), so that N processes run the whole list between
 * them; unset, every suite.  Suites are only built when they are run. */
static SRunner *sr;
static unsigned shard_i, shard_n = 1, nth;

static void add(Suite *(*make)(void))
{
    if (nth++ % shard_n != shard_i) {
        return;
    }
    if (!sr) {
        sr = srunner_create(make());
    }
    else {
        srunner_add_suite(sr, make());
    }
}

static int shard_parse(void)
{
    const char *v = getenv("RS_UNIT_SHARD");
    char tail;

    if (!v || !*v) {
        return 0;
    }
    if (sscanf(v, "%u/%u%c", &shard_i, &shard_n, &tail) != 2 || shard_n == 0
        || shard_i >= shard_n) {
        fprintf(stderr, "unit-tests: RS_UNIT_SHARD '%s' is not I/N with 0 <= I < N\n", v);
        return -1;
    }
    return 0;
}

int main(int argc, const char *const *argv)
{
    static char root[] = "/tmp/rs-unit-XXXXXX";
    int failed;

    if (apr_app_initialize(&argc, &argv, NULL) != APR_SUCCESS) {
        fprintf(stderr, "unit-tests: apr_app_initialize failed\n");
        return 2;
    }
    if (shard_parse() != 0) {
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

    add(time_suite);
    add(uri_suite);
    add(path_suite);
    add(hash_suite);
    add(glob_suite);
    add(xml_suite);
    add(db_suite);
    add(dbdriver_suite);
    add(schema_suite);
    add(linkkeep_suite);
    add(statedir_suite);
    add(inventory_suite);
    add(invbatch_suite);
    add(scan_suite);
    add(snapshot_suite);
    add(journal_suite);
    add(changelist_suite);
    add(scan_changes_suite);
    add(scan_access_suite);
    add(ring_suite);
    add(watch_suite);
    add(file_suite);
    add(generation_suite);
    add(entry_suite);
    add(parse_suite);
    add(confval_suite);
    add(mounts_suite);
    add(zip_suite);
    add(hubreq_suite);
    add(zipout_suite);
    add(partition_suite);
    add(dump_suite);
    add(capture_suite);
    add(cdump_suite);
    add(notify_suite);
    add(notifyseal_suite);
    add(deliverpolicy_suite);
    add(delivery_suite);
    add(notifydigest_suite);
    add(deliverstat_suite);
    add(scanrate_suite);
    add(websub_suite);
    add(hubsub_suite);
    add(hubflow_suite);
    add(json_suite);
    add(setlock_suite);
    add(lease_suite);
    add(hubqueue_suite);
    add(fence_suite);
    add(blob_suite);
    add(followtopic_suite);
    add(followcdump_suite);
    add(followdump_suite);
    add(storeretry_suite);
    add(massdel_suite);
    add(links_suite);
    add(statecheck_suite);
    add(jobthread_suite);
    add(withdrawq_suite);
    add(hubintake_suite);
    add(range_suite);
    add(verifypass_suite);
    add(listclose_suite);
    add(hashlane_suite);
    add(progress_suite);
    add(snapsched_suite);
    add(dumpsched_suite);
    add(reconcile_suite);
    add(aboveroot_suite);
    add(dumprun_suite);
    add(cdumprun_suite);
    add(setconf_suite);
    /* The store's suites again on PostgreSQL (see unit.h). */
    ut_pg_dsn = getenv("RS_TEST_PG");
    if (ut_pg_dsn && *ut_pg_dsn) {
        ut_pg_building = 1;
        add(db_suite);
        add(dbdriver_suite);
        add(schema_suite);
        add(inventory_suite);
        add(invbatch_suite);
        add(journal_suite);
        add(notify_suite);
        add(hubsub_suite);
        add(linkkeep_suite);
        add(lease_suite);
        add(hubqueue_suite);
        add(hubroute_suite);
        add(fence_suite);
        add(blob_suite);
        add(followtopic_suite);
        add(followcdump_suite);
        add(followdump_suite);
        add(listen_suite);
        add(notifyseal_suite);
        add(deliverpolicy_suite);
        add(delivery_suite);
        add(deliverstat_suite);
        ut_pg_building = 0;
    }
    else if (getenv("RS_TEST_PG_REQUIRED") && strcmp(getenv("RS_TEST_PG_REQUIRED"), "0")) {
        fprintf(stderr, "unit-tests: RS_TEST_PG_REQUIRED is set but RS_TEST_PG holds no DSN: "
                        "the PostgreSQL tests cannot run (t/pgcluster run)\n");
        return 2;
    }
    if (!sr) { /* a shard past the last suite */
        sr = srunner_create(NULL);
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
