/* rs_tool_forget.c - rs-tool forget-set: remove every trace of a set that
 * is no longer configured.
 *
 * What a set leaves in the state directory: its rows in every table of the
 * store (inventory; journal, changelists, journal_sets; notifications,
 * notify_dests: each table has a setname column) and its meta keys
 * ("<what>:<set>": snapshot-gen, snapshot-key, snapshot-seq, dump-gen,
 * root-dev ...), and its directories (rs_statedir.h): snapshots, Change
 * Lists, Resource Dumps, captures, Change Dumps, notification topics.
 *
 * Race with the module: a watcher serving the set holds a shared lock on
 * <statedir>/locks/<set> (rs_setlock.h).  forget-set takes the exclusive
 * lock without waiting, so it refuses while a watcher serves the set, and
 * a watcher that starts meanwhile waits until the state is gone.  The
 * rows go in one transaction, then the directories; a failure in between
 * leaves files that a second forget-set removes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <apr_strings.h>
#include "rs_file.h"
#include "rs_parse.h"
#include "rs_setlock.h"
#include "rs_statedir.h"
#include "rs_tool.h"

static const char *const tables[] = { "inventory", "journal", "changelists", "journal_sets",
                                      "notifications", "notify_dests", NULL };

/* The set's directories below the state directory. */
static const char **set_dirs(apr_pool_t *p, const char *sd, const char *set)
{
    const char **d = apr_pcalloc(p, 7 * sizeof(*d));
    d[0] = rs_statedir_snapset(p, sd, set);
    d[1] = rs_statedir_clset(p, sd, set);
    d[2] = rs_statedir_dumpset(p, sd, set);
    d[3] = rs_statedir_captureset(p, sd, set);
    d[4] = rs_statedir_cdumpset(p, sd, set);
    d[5] = rs_statedir_notifyset(p, sd, set);
    return d;
}

/* "DELETE FROM <table> WHERE setname = ?1" (tables[] only: no quoting
 * needed); static storage, valid until the next call. */
static const char *delete_sql(const char *table)
{
    static char sql[96];
    snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE setname = ?1", table);
    return sql;
}

/* Run a statement with the set name bound to ?1; rows changed or -1. */
static long long run(sqlite3 *db, const char *sql, const char *set)
{
    sqlite3_stmt *st;
    int rc;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        return -1;
    }
    sqlite3_bind_text(st, 1, set, -1, SQLITE_TRANSIENT);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? sqlite3_changes(db) : -1;
}

/* Whether sql, with arg bound to its one parameter, gives a row. */
static int has_row(sqlite3 *db, const char *sql, const char *arg)
{
    sqlite3_stmt *st;
    int found = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
    }
    return found;
}

static int table_exists(sqlite3 *db, const char *t)
{
    return has_row(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", t);
}

/* Delete the set's rows in one transaction; *rows their number. */
static int forget_rows(sqlite3 *db, const char *set, long long *rows)
{
    long long n;
    int i;
    *rows = 0;
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        return rs_tool_err(RS_TOOL_FAIL, "forget-set: cannot start a transaction: %s",
                           sqlite3_errmsg(db));
    }
    for (i = 0; tables[i]; i++) {
        if (!table_exists(db, tables[i])) {
            continue;
        }
        if ((n = run(db, delete_sql(tables[i]), set)) < 0) {
            break;
        }
        *rows += n;
    }
    /* meta keys "<what>:<set>": the part after the last ':' is the name
     * (set names have no ':'). */
    if (!tables[i] && (n = run(db, "DELETE FROM meta WHERE instr(k, ':') > 0 AND "
                                   "substr(k, length(k) - length(?1)) = ':' || ?1", set)) >= 0) {
        *rows += n;
        if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) {
            return RS_TOOL_OK;
        }
    }
    n = rs_tool_err(RS_TOOL_FAIL, "forget-set: cannot remove the rows of set '%s': %s", set,
                    sqlite3_errmsg(db));
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return (int)n;
}

/* Whether anything of the set is there: rows or directories. */
static int set_exists(apr_pool_t *p, sqlite3 *db, const char *sd, const char *set)
{
    const char **d = set_dirs(p, sd, set);
    struct stat sb;
    int i, found = 0;
    for (i = 0; d[i] && !found; i++) {
        found = stat(d[i], &sb) == 0;
    }
    for (i = 0; tables[i] && !found; i++) {
        const char *sql = apr_psprintf(p, "SELECT 1 FROM %s WHERE setname = ?1 LIMIT 1",
                                       tables[i]);
        if (table_exists(db, tables[i])) {
            found = has_row(db, sql, set);
        }
    }
    return found;
}

/* Lock files created by root belong to the state directory's owner, so
 * the watcher (the run user) can open them. */
static void give_lock(apr_pool_t *p, const char *sd, const char *set)
{
    struct stat sb;
    if (geteuid() == 0 && stat(sd, &sb) == 0) {
        (void)!chown(rs_statedir_setlock(p, sd, ""), sb.st_uid, sb.st_gid);
        (void)!chown(rs_statedir_setlock(p, sd, set), sb.st_uid, sb.st_gid);
    }
}

int rs_tool_forget(apr_pool_t *p, const char *statedir, const char *set)
{
    const char *dbpath, **d;
    sqlite3 *db;
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
    if ((rc = rs_tool_sqlite_open("forget-set", dbpath, SQLITE_OPEN_READWRITE, &db))
        != RS_TOOL_OK) {
        return rc;
    }
    if (!set_exists(p, db, statedir, set)) {
        sqlite3_close(db);
        return rs_tool_err(RS_TOOL_USAGE, "forget-set: no set '%s' in '%s'", set, statedir);
    }
    rv = rs_setlock_take(p, statedir, set, &fd, &holder);
    if (rv == APR_EAGAIN) {
        sqlite3_close(db);
        return rs_tool_err(RS_TOOL_FAIL, "forget-set: set '%s' is in use by a running watcher "
                           "(pid %ld): remove its ResourceSyncSet and restart httpd "
                           "(apachectl graceful), or stop httpd (apachectl stop), then run "
                           "forget-set again", set, holder);
    }
    if (rv != APR_SUCCESS) {
        sqlite3_close(db);
        return rs_tool_err(RS_TOOL_FAIL, "forget-set: cannot lock %s: %s",
                           rs_statedir_setlock(p, statedir, set),
                           apr_strerror(rv, err, sizeof(err)));
    }
    give_lock(p, statedir, set);
    if ((rc = forget_rows(db, set, &rows)) == RS_TOOL_OK) {
        for (d = set_dirs(p, statedir, set), i = 0; d[i]; i++) {
            struct stat sb;
            int had = stat(d[i], &sb) == 0;
            if ((rv = rs_file_remove_tree(p, d[i])) != APR_SUCCESS) {
                rc = rs_tool_err(RS_TOOL_FAIL, "forget-set: cannot remove '%s': %s", d[i],
                                 apr_strerror(rv, err, sizeof(err)));
                break;
            }
            ndirs += had;
        }
    }
    sqlite3_close(db);
    close(fd);
    if (rc == RS_TOOL_OK) {
        printf("forgot set %s: rows %lld directories %d\n", set, rows, ndirs);
    }
    return rc;
}
