/* rs_tool_verify.c - rs-tool verify: compare a set's inventory with its
 * tree, changing nothing.
 *
 * The comparison is the scanner's own (rs_scan_set: the same rules for
 * hidden files, exclusions, symbolic links and versions), run on a
 * private copy: the set's inventory rows are copied into a temporary store
 * (in $TMPDIR), the scan reconciles the copy, and every change it reports
 * is a difference.  The live store is only read.
 *
 * What rs-tool cannot know is httpd's access decision.  So that a file the
 * module keeps unlisted (not served) does not count as different while it
 * is unchanged, the copied rows all carry the verify's own check
 * fingerprint: the scan then re-checks only files whose version changed,
 * and an unchanged row keeps its stored decision.  A changed file counts
 * as "updated" only when its size, modification time or a stored digest
 * differs (a chmod alone is no difference).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <apr_strings.h>
#include "rs_hash.h"
#include "rs_parse.h"
#include "rs_scan.h"
#include "rs_schema.h"
#include "rs_statedir.h"
#include "rs_tool.h"

#define VERIFY_CFG "rs-tool-verify"

typedef struct verify_t {
    sqlite3 *live;            /* the real store, opened read-only */
    sqlite3_stmt *row;        /* its row of (set, dir, name) */
    apr_pool_t *p;
    const char *set;
    long long diffs;
} verify_t;

static void log_stderr(void *baton, int level, apr_status_t rv, const char *msg)
{
    (void)baton;
    if (level <= RS_LOG_WARN) {
        fprintf(stderr, "rs-tool: verify: %s\n", msg);
    }
}

static const rs_logger_t verify_log = { log_stderr, NULL };

static const char *relpath(apr_pool_t *p, const rs_item_t *it)
{
    return *it->dir ? apr_pstrcat(p, it->dir, "/", it->name, NULL) : it->name;
}

/* Whether the new row differs from the live one in what is published:
 * size, modification time, or a digest both have.  A row that is gone
 * from the live store differs. */
static int differs(verify_t *v, const rs_item_t *now)
{
    sqlite3_stmt *st = v->row;
    int i, d = 1;
    sqlite3_reset(st);
    sqlite3_bind_text(st, 1, v->set, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, now->dir, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, now->name, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        d = sqlite3_column_int64(st, 0) != now->size || sqlite3_column_int64(st, 1) != now->mtime_ns;
        for (i = 0; i < RS_HASH_COUNT && !d; i++) {
            const char *h = (const char *)sqlite3_column_text(st, 2 + i);
            d = h && now->hash[i] && strcmp(h, now->hash[i]);
        }
    }
    sqlite3_reset(st);
    return d;
}

static apr_status_t on_change(void *baton, int change, const rs_item_t *it)
{
    verify_t *v = baton;
    const char *what = change == RS_CHANGE_CREATED ? "created"
                     : change == RS_CHANGE_DELETED ? "deleted" : "updated";
    if (change == RS_CHANGE_UPDATED && !differs(v, it)) {
        return APR_SUCCESS;
    }
    printf("%s %s\n", what, relpath(v->p, it));
    v->diffs++;
    return APR_SUCCESS;
}

/* Copy the set's rows into the temporary store at tmp (schema created
 * already); *hashes the digests the listed rows carry. */
static int copy_rows(const char *live, const char *tmp, const char *set, unsigned *hashes)
{
    static const char *const cols[RS_HASH_COUNT] = { "md5", "sha1", "sha256", "sha512" };
    sqlite3 *db;
    sqlite3_stmt *st;
    char *sql;
    int rc, i, ok;

    if ((rc = rs_tool_sqlite_open("verify", tmp, SQLITE_OPEN_READWRITE, &db)) != RS_TOOL_OK) {
        return rc;
    }
    sql = sqlite3_mprintf("ATTACH 'file:%q?mode=ro' AS live;"
                          "INSERT INTO main.inventory SELECT * FROM live.inventory"
                          " WHERE setname = %Q;"
                          "UPDATE main.inventory SET cfg = '" VERIFY_CFG "';", live, set);
    ok = sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
    sqlite3_free(sql);
    *hashes = 0;
    for (i = 0; ok && i < RS_HASH_COUNT; i++) {
        sql = sqlite3_mprintf("SELECT 1 FROM main.inventory WHERE listed = 1 AND %s IS NOT NULL"
                              " LIMIT 1", cols[i]);
        if ((ok = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK)) {
            *hashes |= sqlite3_step(st) == SQLITE_ROW ? 1u << i : 0;
            sqlite3_finalize(st);
        }
        sqlite3_free(sql);
    }
    rc = ok ? RS_TOOL_OK : rs_tool_err(RS_TOOL_FAIL, "verify: cannot copy the inventory of "
                                       "set '%s': %s", set, sqlite3_errmsg(db));
    sqlite3_close(db);
    return rc;
}

/* Remove the temporary store and its -wal and -shm files. */
static void drop_tmp(apr_pool_t *p, const char *tmp)
{
    unlink(tmp);
    unlink(apr_pstrcat(p, tmp, "-wal", NULL));
    unlink(apr_pstrcat(p, tmp, "-shm", NULL));
    unlink(apr_pstrcat(p, tmp, "-journal", NULL));
}

/* The set checked, the copy made and scanned. */
static int verify_copy(apr_pool_t *p, verify_t *v, const char *dbpath, const char *statedir,
                       const char *root, const apr_array_header_t *excludes, int dotfiles)
{
    const char *set = v->set, *tdir = getenv("TMPDIR");
    char *tmp;
    rs_db_t *copy;
    rs_scan_opts_t o;
    rs_scan_stats_t s;
    apr_status_t rv;
    char err[256];
    sqlite3_stmt *st;
    int fd, found = 0;

    if (sqlite3_prepare_v2(v->live, "SELECT 1 FROM inventory WHERE setname = ?1 LIMIT 1", -1,
                           &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, set, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
    }
    if (!found) {
        return rs_tool_err(RS_TOOL_USAGE, "verify: no set '%s' in '%s'", set, statedir);
    }
    tmp = apr_pstrcat(p, tdir && *tdir ? tdir : "/tmp", "/rs-tool-verify-XXXXXX", NULL);
    if ((fd = mkstemp(tmp)) < 0) {
        return rs_tool_err(RS_TOOL_FAIL, "verify: cannot create a temporary store '%s': %s", tmp,
                           strerror(errno));
    }
    close(fd);
    memset(&o, 0, sizeof(o));
    if (rs_schema_open(&copy, p, RS_STATEDIR_DB_DRIVER, tmp, &verify_log) != APR_SUCCESS
        || copy_rows(dbpath, tmp, set, &o.hashes) != RS_TOOL_OK) {
        drop_tmp(p, tmp);
        return rs_tool_err(RS_TOOL_FAIL, "verify: cannot prepare the temporary store '%s'", tmp);
    }
    o.set = set;
    o.root = root;
    o.excludes = excludes;
    o.dotfiles = dotfiles;
    o.cfg = VERIFY_CFG;
    o.log = &verify_log;
    o.on_change = on_change;
    o.change_baton = v;
    rv = rs_scan_set(copy, &o, p, &s);
    drop_tmp(p, tmp);
    if (rv != APR_SUCCESS) {
        return rs_tool_err(RS_TOOL_USAGE, "verify: set %s: %s", set,
                           apr_strerror(rv, err, sizeof(err)));
    }
    printf("verify %s: files %" APR_INT64_T_FMT " listed %" APR_INT64_T_FMT " differences %lld\n",
           set, s.files, s.listed, v->diffs);
    return v->diffs ? RS_TOOL_FAIL : RS_TOOL_OK;
}

int rs_tool_verify(apr_pool_t *p, const char *statedir, const char *set, const char *root,
                   const apr_array_header_t *excludes, int dotfiles)
{
    const char *dbpath;
    verify_t v;
    struct stat sb;
    int rc;

    if (!rs_parse_set_name(set, RS_TOOL_SET_NAME_MAX)) {
        return rs_tool_err(RS_TOOL_USAGE, "verify: invalid set name '%s'", set);
    }
    if ((rc = rs_tool_check_statedir(p, "verify", statedir, &dbpath)) != RS_TOOL_OK) {
        return rc;
    }
    if (stat(root, &sb) != 0) {
        return rs_tool_err(RS_TOOL_USAGE, "verify: ROOT '%s' is not a directory: %s", root,
                           strerror(errno));
    }
    if (!S_ISDIR(sb.st_mode)) {
        return rs_tool_err(RS_TOOL_USAGE, "verify: ROOT '%s' is not a directory", root);
    }
    memset(&v, 0, sizeof(v));
    v.p = p;
    v.set = set;
    if ((rc = rs_tool_sqlite_open("verify", dbpath, SQLITE_OPEN_READONLY, &v.live))
        != RS_TOOL_OK) {
        return rc;
    }
    if (sqlite3_prepare_v2(v.live, "SELECT size, mtime_ns, md5, sha1, sha256, sha512 FROM "
                           "inventory WHERE setname = ?1 AND dir = ?2 AND name = ?3", -1,
                           &v.row, NULL) != SQLITE_OK) {
        rc = rs_tool_err(RS_TOOL_FAIL, "verify: cannot read '%s': %s", dbpath,
                         sqlite3_errmsg(v.live));
        sqlite3_close(v.live);
        return rc;
    }
    rc = verify_copy(p, &v, dbpath, statedir, root, excludes, dotfiles);
    sqlite3_finalize(v.row);
    sqlite3_close(v.live);
    return rc;
}
