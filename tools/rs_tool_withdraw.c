/* SPDX-License-Identifier: Apache-2.0 */
/* rs_tool_withdraw.c - rs-tool withdraw: take back what a set's dump
 * packages published by mistake.
 *
 *   rs-tool withdraw [-d STATEDIR] [--wait SECONDS] SET PATH
 *
 * The request is recorded in the state directory (rs_withdraw.h), where
 * the watcher that serves the set applies it within a second: it
 * reconciles PATH, refuses a PATH that is still listed, removes every
 * Change Dump and Resource Dump package that holds a version of it (their
 * URLs answer 404 at once) and builds them again under new names without
 * it (see mod_resourcesync_withdraw.c).  The tool waits for the outcome
 * (at most --wait seconds, 60 by default) and prints it.
 *
 * When no watcher serves the set (httpd stopped, or the set not in its
 * configuration), the tool takes the set's lock (so no watcher starts on
 * it meanwhile) and removes the packages itself -- the same engine
 * functions, the journal read through rs_journal on a read-only
 * connection -- and leaves the request, which the next watcher of the set
 * applies at its start (building the packages again).
 *
 * Privileges: run as root, the tool first becomes the state directory's
 * owner (the run user), through rs_tool_check_statedir.  Everything it touches below the state directory
 * can be made by the run user, who must not get root to follow a link or
 * wait on a FIFO there; and what it creates (the request, the lock file)
 * must belong to the run user, who reads and removes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <apr_strings.h>
#include "rs_cdump.h"
#include "rs_dump.h"
#include "rs_dumppkg.h"
#include "rs_file.h"
#include "rs_history.h"
#include "rs_journal.h"
#include "rs_parse.h"
#include "rs_setlock.h"
#include "rs_statedir.h"
#include "rs_tool.h"
#include "rs_tool_statedir.h"
#include "rs_withdraw.h"
#include "rs_zip.h"

/* The set's closed lists and the sequences of the path's created/updated
 * records (in p), from the store opened read-only. */
static int journal_of(apr_pool_t *p, const char *dbpath, const char *set, const char *rel,
                      apr_array_header_t **closed, apr_array_header_t **seqs)
{
    const char *slash = strrchr(rel, '/');
    const char *dir = slash ? apr_pstrndup(p, rel, (apr_size_t)(slash - rel)) : "";
    rs_changelist_t open;
    rs_journal_t *j;
    apr_pool_t *sp;
    rs_db_t *db;
    int rc;

    apr_pool_create(&sp, p);
    if ((rc = rs_tool_store_open(sp, "withdraw", dbpath, RS_DB_READONLY, &db)) == RS_TOOL_OK
        && (rs_journal_open(&j, db, sp) != APR_SUCCESS
            || rs_journal_lists(j, p, set, closed, &open) != APR_SUCCESS
            || rs_journal_path_versions(j, p, set, dir, slash ? slash + 1 : rel, seqs)
                   != APR_SUCCESS)) {
        rc = rs_tool_err(RS_TOOL_FAIL, "withdraw: cannot read the journal: %s",
                         rs_db_last_error(db));
    }
    apr_pool_destroy(sp);
    return rc;
}

/* Whether the store knows the set (its journal was started): 1, 0, or
 * -1 with the error printed. */
static int set_known(apr_pool_t *p, const char *dbpath, const char *set)
{
    apr_time_t start = 0;
    rs_journal_t *j;
    apr_pool_t *sp;
    rs_db_t *db;
    int found = -1;

    apr_pool_create(&sp, p);
    if (rs_tool_store_open(sp, "withdraw", dbpath, RS_DB_READONLY, &db) == RS_TOOL_OK) {
        found = rs_journal_open(&j, db, sp) == APR_SUCCESS
                && rs_journal_start(j, set, &start) == APR_SUCCESS && start != 0;
    }
    apr_pool_destroy(sp);
    return found;
}

/* No watcher serves the set and its lock is ours: remove the packages. */
static int remove_now(apr_pool_t *p, const char *statedir, const char *dbpath, const char *set,
                      const char *rel)
{
    char history[RS_HISTORY_LEN + 1], err[256];
    rs_cdump_opts_t o;
    apr_array_header_t *closed, *seqs, *ids;
    apr_status_t rv = APR_SUCCESS;
    int rc, rdump = 0;

    ids = apr_array_make(p, 1, sizeof(apr_int64_t));
    if (rs_file_exists(p, rs_statedir_cdumpset(p, statedir, set))
        && rs_history_read(p, rs_statedir_history(p, statedir), history) == APR_SUCCESS) {
        if ((rc = journal_of(p, dbpath, set, rel, &closed, &seqs)) != RS_TOOL_OK) {
            return rc;
        }
        memset(&o, 0, sizeof(o));
        o.set = set;
        o.dir = rs_statedir_cdumpset(p, statedir, set);
        o.history = history;
        rv = rs_cdump_withdraw(&o, closed, seqs, p, &ids);
    }
    if (rv == APR_SUCCESS) {
        rv = rs_dumppkg_withdraw(
            p, rs_statedir_dumpset(p, statedir, set),
            rs_zip_member_name(p, RS_DUMP_MEMBER_DIR, RS_DUMP_ENCODED_DIR, rel), &rdump);
    }
    if (rv != APR_SUCCESS) {
        return rs_tool_err(RS_TOOL_FAIL,
                           "withdraw: cannot remove the packages holding '%s': "
                           "%s",
                           rel, apr_strerror(rv, err, sizeof(err)));
    }
    printf("no watcher serves set %s now: removed the %d Change Dump and %d Resource Dump "
           "package(s) that held '%s'; the request stays recorded, and the watcher that "
           "serves the set next builds them again without it\n",
           set, ids->nelts, rdump, rel);
    return RS_TOOL_OK;
}

/* A watcher serves the set: wait for its outcome. */
static int await(apr_pool_t *p, const char *statedir, const char *set, const char *rel,
                 const char *id, long holder, int wait)
{
    apr_time_t end = apr_time_now() + apr_time_from_sec(wait);
    const char *text;
    int ok;

    for (;;) {
        apr_status_t rv = rs_withdraw_outcome(p, statedir, id, &ok, &text);
        if (rv == APR_SUCCESS) {
            if (ok) {
                printf("%s\n", text);
                return RS_TOOL_OK;
            }
            return rs_tool_err(RS_TOOL_FAIL, "withdraw: %s", text);
        }
        if (!APR_STATUS_IS_ENOENT(rv) || apr_time_now() >= end) {
            break;
        }
        apr_sleep(apr_time_from_msec(100));
    }
    return rs_tool_err(RS_TOOL_FAIL,
                       "withdraw: the watcher serving set %s (pid %ld) has not "
                       "applied the withdrawal of '%s' within %d s; it stays recorded "
                       "(%s) and is applied when the watcher gets to it",
                       set, holder, rel, wait,
                       rs_statedir_withdraw_file(p, rs_statedir_withdraw(p, statedir), id, 0));
}

int rs_tool_withdraw(apr_pool_t *p, const char *statedir, const char *set, const char *path,
                     int wait)
{
    const char *dbpath, *id;
    char err[256];
    long holder = 0;
    int rc, fd;
    apr_status_t rv;

    while (*path == '/') {
        path++; /* "/a/b" names the same file as "a/b" */
    }
    if (!rs_parse_set_name(set, RS_TOOL_SET_NAME_MAX)) {
        return rs_tool_err(RS_TOOL_USAGE, "withdraw: invalid set name '%s'", set);
    }
    if (!rs_withdraw_path_ok(path)) {
        return rs_tool_err(RS_TOOL_USAGE,
                           "withdraw: PATH '%s' is not a file's path relative to "
                           "the set's directory",
                           path);
    }
    if ((rc = rs_tool_check_statedir(p, "withdraw", statedir, &dbpath)) != RS_TOOL_OK) {
        return rc;
    }
    if ((rc = set_known(p, dbpath, set)) <= 0) {
        return rc < 0 ? RS_TOOL_FAIL
                      : rs_tool_err(RS_TOOL_USAGE, "withdraw: no set '%s' in '%s'", set, statedir);
    }
    if ((rv = rs_withdraw_request(p, statedir, set, path, &id)) != APR_SUCCESS) {
        return rs_tool_err(RS_TOOL_FAIL, "withdraw: cannot record the request in %s: %s",
                           rs_statedir_withdraw(p, statedir), apr_strerror(rv, err, sizeof(err)));
    }
    rv = rs_setlock_take(p, statedir, set, &fd, &holder);
    if (rv == APR_EAGAIN) {
        return await(p, statedir, set, path, id, holder, wait);
    }
    if (rv != APR_SUCCESS) {
        return rs_tool_err(RS_TOOL_FAIL, "withdraw: cannot lock %s: %s",
                           rs_statedir_setlock(p, statedir, set),
                           apr_strerror(rv, err, sizeof(err)));
    }
    rc = remove_now(p, statedir, dbpath, set, path);
    close(fd);
    return rc;
}
