/* SPDX-License-Identifier: Apache-2.0 */
/* rs_tool_forget.c - rs-tool forget-set: remove every trace of a set that
 * is no longer configured.
 *
 * What a set leaves in the state directory: its rows in every table of the
 * store (each table has a setname column; the units that own the tables
 * name them, rs_schema_tables) and its meta keys ("<what>:<set>":
 * snapshot-gen, snapshot-key, snapshot-seq, dump-gen, root-dev ...), and
 * its directories (rs_statedir.h): snapshots, Change Lists, Resource
 * Dumps, captures, Change Dumps, notification topics, and the file of its
 * base URLs.
 *
 * Race with the module: a watcher serving the set holds a shared lock on
 * <statedir>/locks/<set> (rs_setlock.h).  forget-set takes the exclusive
 * lock without waiting, so it refuses while a watcher serves the set, and
 * a watcher that starts meanwhile waits until the state is gone.  The
 * rows go in one transaction (rs_schema_forget_set), then the
 * directories; a failure in between leaves files that a second
 * forget-set removes.
 *
 * Run as root, the tool is the state directory's owner before it touches
 * anything (rs_tool_check_statedir): the lock file it creates is that
 * user's, and the removal (rs_file_remove_tree) never follows a symbolic
 * link, so nothing outside the set's directories can be changed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <apr_strings.h>
#include "rs_file.h"
#include "rs_parse.h"
#include "rs_schema.h"
#include "rs_setlock.h"
#include "rs_statedir.h"
#include "rs_lease.h"
#include "rs_tool.h"
#include "rs_tool_statedir.h"

/* The set's directories below the state directory, and the file of its
 * base URLs (rs_statecheck.h). */
static const char **set_dirs(apr_pool_t *p, const char *sd, const char *set)
{
    const char **d = apr_pcalloc(p, 8 * sizeof(*d));
    d[0] = rs_statedir_snapset(p, sd, set);
    d[1] = rs_statedir_clset(p, sd, set);
    d[2] = rs_statedir_dumpset(p, sd, set);
    d[3] = rs_statedir_captureset(p, sd, set);
    d[4] = rs_statedir_cdumpset(p, sd, set);
    d[5] = rs_statedir_notifyset(p, sd, set);
    d[6] = rs_statedir_setbase(p, sd, set);
    return d;
}

/* Delete the set's rows in one transaction; *rows their number. */
static int forget_rows(apr_pool_t *p, rs_db_t *db, const char *set, long long *rows)
{
    apr_int64_t n = 0;
    int rc;

    *rows = 0;
    if (rs_db_begin(db) != APR_SUCCESS) {
        return rs_tool_err(RS_TOOL_FAIL, "forget-set: cannot start a transaction: %s",
                           rs_db_last_error(db));
    }
    if (rs_schema_forget_set(db, p, set, &n) == APR_SUCCESS && rs_db_commit(db) == APR_SUCCESS) {
        *rows = n;
        return RS_TOOL_OK;
    }
    rc = rs_tool_err(RS_TOOL_FAIL, "forget-set: cannot remove the rows of set '%s': %s", set,
                     rs_db_last_error(db));
    rs_db_rollback(db);
    return rc;
}

/* Whether anything of the set is there: rows or directories. */
static int set_exists(apr_pool_t *p, rs_db_t *db, const char *sd, const char *set)
{
    const char **d = set_dirs(p, sd, set);
    struct stat sb;
    int i, found = 0;
    for (i = 0; d[i] && !found; i++) {
        found = stat(d[i], &sb) == 0;
    }
    if (!found && rs_schema_set_exists(db, p, set, &found) != APR_SUCCESS) {
        found = 0;
    }
    return found;
}

/* A shared (PostgreSQL) store: a watcher of another node may write the
 * set, which this node's lock file does not show.  The set's lease
 * (rs_lease) does: the tool takes it for itself (held until the set's
 * rows, the lease's among them, are gone, so no watcher takes the set
 * meanwhile), and refuses while a watcher holds it.  RS_TOOL_OK or the
 * error said. */
static int store_lock(rs_db_t *db, apr_pool_t *p, const char *set)
{
    rs_lease_t l = { set, "rs-tool", rs_lease_token(p), apr_time_from_sec(60), 0 };
    rs_lease_info_t in;
    apr_status_t rv;
    char err[256];
    int held = 0;

    if (rs_db_one_node(db)) {
        return RS_TOOL_OK; /* the lock file serves */
    }
    if ((rv = rs_lease_take(db, &l, &held)) != APR_SUCCESS
        || (!held && (rv = rs_lease_peek(db, p, set, &in)) != APR_SUCCESS)) {
        return rs_tool_err(RS_TOOL_FAIL, "forget-set: cannot take the lease of set '%s': %s", set,
                           apr_strerror(rv, err, sizeof(err)));
    }
    if (!held) {
        return rs_tool_err(RS_TOOL_FAIL,
                           "forget-set: set '%s' is written by a watcher of node %s (it holds "
                           "the set's lease): remove its ResourceSyncSet on every node and "
                           "restart them, or stop them, then run forget-set again",
                           set, in.node);
    }
    return RS_TOOL_OK;
}

int rs_tool_forget(apr_pool_t *p, const char *statedir, const char *set)
{
    const char *dbpath, **d;
    apr_pool_t *sp;
    rs_db_t *db;
    long long rows = 0;
    long holder;
    int rc, fd, i, ndirs = 0;
    apr_status_t rv;
    char err[256];

    if (!rs_parse_set_name(set, RS_TOOL_SET_NAME_MAX)) {
        return rs_tool_err(RS_TOOL_USAGE, "forget-set: invalid set name '%s'", set);
    }
    if ((rc = rs_tool_check_statedir(p, "forget-set", statedir, &dbpath)) != RS_TOOL_OK) {
        return rc;
    }
    apr_pool_create(&sp, p);
    if ((rc = rs_tool_store_open(sp, "forget-set", dbpath, RS_DB_AS_IS, &db)) != RS_TOOL_OK) {
        apr_pool_destroy(sp);
        return rc;
    }
    if (!set_exists(sp, db, statedir, set)) {
        apr_pool_destroy(sp);
        return rs_tool_err(RS_TOOL_USAGE, "forget-set: no set '%s' in '%s'", set, statedir);
    }
    rv = rs_setlock_take(p, statedir, set, &fd, &holder);
    if (rv == APR_EAGAIN) {
        apr_pool_destroy(sp);
        return rs_tool_err(RS_TOOL_FAIL,
                           "forget-set: set '%s' is in use by a running watcher "
                           "(pid %ld): remove its ResourceSyncSet and restart httpd "
                           "(apachectl graceful), or stop httpd (apachectl stop), then run "
                           "forget-set again",
                           set, holder);
    }
    if (rv != APR_SUCCESS) {
        apr_pool_destroy(sp);
        return rs_tool_err(RS_TOOL_FAIL, "forget-set: cannot lock %s: %s",
                           rs_statedir_setlock(p, statedir, set),
                           apr_strerror(rv, err, sizeof(err)));
    }
    if ((rc = store_lock(db, sp, set)) != RS_TOOL_OK) {
        apr_pool_destroy(sp);
        close(fd);
        return rc;
    }
    if ((rc = forget_rows(sp, db, set, &rows)) == RS_TOOL_OK) {
        for (d = set_dirs(p, statedir, set), i = 0; d[i]; i++) {
            struct stat sb;
            int had = stat(d[i], &sb) == 0 && S_ISDIR(sb.st_mode);
            if ((rv = rs_file_remove_tree(p, d[i])) != APR_SUCCESS) {
                rc = rs_tool_err(RS_TOOL_FAIL, "forget-set: cannot remove '%s': %s", d[i],
                                 apr_strerror(rv, err, sizeof(err)));
                break;
            }
            ndirs += had;
        }
    }
    apr_pool_destroy(sp);
    close(fd);
    if (rc == RS_TOOL_OK) {
        printf("forgot set %s: rows %lld directories %d\n", set, rows, ndirs);
    }
    return rc;
}
