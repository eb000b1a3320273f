/* rs_tool_state.c - rs-tool status, forget-set and backup: the state
 * directory and its store, read and changed with SQLite directly.
 *
 * The tool does not migrate the store (the module does, at its start): it
 * reads the schema version and refuses a store newer than it knows, and
 * touches only tables that exist.  Writes (forget-set) are one
 * transaction; the busy timeout lets it wait for a running watcher's
 * transaction to end.  Run as root, each command acts as the state
 * directory's owner before it opens anything in it (rs_tool_owner.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <apr_strings.h>
#include <curl/curl.h>
#include "rs_file.h"
#include "rs_history.h"
#include "rs_parse.h"
#include "rs_schema.h"
#include "rs_setlock.h"
#include "rs_statedir.h"
#include "rs_time.h"
#include "rs_tool.h"

int rs_tool_check_statedir(apr_pool_t *p, const char *cmd, const char *statedir,
                           const char **dbpath)
{
    struct stat sb;
    int rc;
    if ((rc = rs_tool_as_owner(cmd, "state directory", statedir, 1)) != RS_TOOL_OK) {
        return rc;
    }
    if (stat(statedir, &sb) != 0) {
        return rs_tool_err(RS_TOOL_USAGE, "%s: state directory '%s': %s", cmd, statedir,
                           strerror(errno));
    }
    if (!S_ISDIR(sb.st_mode)) {
        return rs_tool_err(RS_TOOL_USAGE, "%s: state directory '%s' is not a directory", cmd,
                           statedir);
    }
    *dbpath = rs_statedir_db(p, statedir);
    if (lstat(*dbpath, &sb) != 0) {
        return rs_tool_err(RS_TOOL_USAGE, "%s: no state store in '%s': %s: %s", cmd, statedir,
                           *dbpath, strerror(errno));
    }
    if (!S_ISREG(sb.st_mode)) {
        /* A FIFO would hang SQLite's open; a link is nobody's store. */
        return rs_tool_err(RS_TOOL_USAGE, "%s: no state store in '%s': %s is not a regular "
                           "file", cmd, statedir, *dbpath);
    }
    return RS_TOOL_OK;
}

/* One integer from a query (0 when no row or NULL); -1 on error. */
static sqlite3_int64 one_int(sqlite3 *db, const char *sql, const char *arg)
{
    sqlite3_stmt *st;
    sqlite3_int64 v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        return -1;
    }
    if (arg) {
        sqlite3_bind_text(st, 1, arg, -1, SQLITE_TRANSIENT);
    }
    v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return v;
}

static int has_table(sqlite3 *db, const char *name)
{
    return one_int(db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
                   name) > 0;
}

int rs_tool_sqlite_open(const char *cmd, const char *path, int flags, sqlite3 **out)
{
    sqlite3_int64 v;
    if (sqlite3_open_v2(path, out, flags | SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
        int rc = rs_tool_err(RS_TOOL_FAIL, "%s: cannot open '%s': %s", cmd, path,
                             *out ? sqlite3_errmsg(*out) : "out of memory");
        sqlite3_close(*out);
        return rc;
    }
    sqlite3_busy_timeout(*out, 10000);
    v = has_table(*out, "meta")
        ? one_int(*out, "SELECT CAST(v AS INTEGER) FROM meta WHERE k = 'schema-version'", NULL)
        : 0;
    if (v > RS_SCHEMA_VERSION) {
        sqlite3_close(*out);
        return rs_tool_err(RS_TOOL_FAIL, "%s: '%s' has schema version %lld, newer than "
                           "version %d that this rs-tool knows", cmd, path, (long long)v,
                           RS_SCHEMA_VERSION);
    }
    if (v < 0) {
        int rc = rs_tool_err(RS_TOOL_FAIL, "%s: cannot read '%s': %s", cmd, path,
                             sqlite3_errmsg(*out));
        sqlite3_close(*out);
        return rc;
    }
    return RS_TOOL_OK;
}

/* ------------------------------------------------------------ status */

/* Whether a watcher holds the set's lock: its pid, 0 if none, -1 when no
 * lock file can be read.  Only asks (F_GETLK): never takes or creates,
 * never follows a symbolic link or waits on a FIFO put in its place. */
static long watcher_of(apr_pool_t *p, const char *statedir, const char *set)
{
    struct flock fl;
    int fd = open(rs_statedir_setlock(p, statedir, set),
                  O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    long pid = -1;
    if (fd >= 0) {
        memset(&fl, 0, sizeof(fl));
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        if (fcntl(fd, F_GETLK, &fl) == 0) {
            pid = fl.l_type == F_UNLCK ? 0 : (long)fl.l_pid;
        }
        close(fd);
    }
    return pid;
}

static const char *meta_of(apr_pool_t *p, sqlite3 *db, const char *key)
{
    sqlite3_stmt *st;
    const char *v = NULL;
    if (sqlite3_prepare_v2(db, "SELECT v FROM meta WHERE k = ?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
            v = apr_pstrdup(p, (const char *)sqlite3_column_text(st, 0));
        }
        sqlite3_finalize(st);
    }
    return v;
}

/* One line per set of the inventory or the journal.  Its last change is
 * the datetime of its newest journaled change or, before any, the newest
 * modification time of a listed file. */
static int status_sets(apr_pool_t *p, sqlite3 *db, const char *statedir)
{
    static const char *const sql =
        "SELECT s, (SELECT COUNT(*) FROM inventory WHERE setname = s AND listed = 1),"
        " (SELECT COALESCE(SUM(size), 0) FROM inventory WHERE setname = s AND listed = 1),"
        " COALESCE((SELECT MAX(dt) FROM journal WHERE setname = s),"
        "  (SELECT MAX(mtime_ns) / 1000 FROM inventory WHERE setname = s AND listed = 1)),"
        " (SELECT COUNT(*) FROM journal WHERE setname = s)"
        " FROM (SELECT setname AS s FROM inventory UNION SELECT setname FROM journal_sets)"
        " ORDER BY s";
    sqlite3_stmt *st;
    int rc, n = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        return rs_tool_err(RS_TOOL_FAIL, "status: cannot read the store: %s", sqlite3_errmsg(db));
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *set = (const char *)sqlite3_column_text(st, 0);
        const char *gen = meta_of(p, db, apr_pstrcat(p, "snapshot-gen:", set, NULL));
        char when[RS_TIME_BUFSIZE] = "none";
        long pid = watcher_of(p, statedir, set);
        if (sqlite3_column_type(st, 3) != SQLITE_NULL) {
            rs_time_format(when, (apr_time_t)sqlite3_column_int64(st, 3));
        }
        printf("set %s: files %lld bytes %lld last-change %s generation %s journal %lld "
               "watcher %s\n", set, (long long)sqlite3_column_int64(st, 1),
               (long long)sqlite3_column_int64(st, 2), when, gen ? gen : "0",
               (long long)sqlite3_column_int64(st, 4),
               pid > 0 ? apr_psprintf(p, "%ld", pid) : "none");
        n++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        return rs_tool_err(RS_TOOL_FAIL, "status: cannot read the store: %s", sqlite3_errmsg(db));
    }
    printf("sets %d\n", n);
    return RS_TOOL_OK;
}

static size_t to_stdout(char *buf, size_t size, size_t n, void *baton)
{
    (void)baton;
    return fwrite(buf, size, n, stdout);
}

/* The running server's view: the body of its resourcesync-status
 * handler, as it answers. */
static int status_url(const char *url)
{
    CURL *c = curl_easy_init();
    CURLcode cc;
    long code = 0;
    if (!c) {
        return rs_tool_err(RS_TOOL_FAIL, "status: cannot start libcurl");
    }
    printf("server %s\n", url);
    fflush(stdout);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, to_stdout);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    cc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    if (cc != CURLE_OK) {
        return rs_tool_err(RS_TOOL_FAIL, "status: --url '%s': %s", url, curl_easy_strerror(cc));
    }
    if (code != 200) {
        return rs_tool_err(RS_TOOL_FAIL, "status: --url '%s': HTTP status %ld", url, code);
    }
    return RS_TOOL_OK;
}

int rs_tool_status(apr_pool_t *p, const char *statedir, const char *url)
{
    const char *dbpath, *h;
    sqlite3 *db;
    struct stat sb;
    int rc;

    if ((rc = rs_tool_check_statedir(p, "status", statedir, &dbpath)) != RS_TOOL_OK
        || (rc = rs_tool_sqlite_open("status", dbpath, SQLITE_OPEN_READONLY, &db))
               != RS_TOOL_OK) {
        return rc;
    }
    stat(dbpath, &sb);
    h = meta_of(p, db, RS_HISTORY_META);
    printf("rs-tool %s\nstate-dir %s\nstore %s bytes %lld schema %lld history %s\n", RS_VERSION,
           statedir, dbpath, (long long)sb.st_size,
           (long long)one_int(db, "SELECT CAST(v AS INTEGER) FROM meta "
                                  "WHERE k = 'schema-version'", NULL), h ? h : "none");
    rc = status_sets(p, db, statedir);
    sqlite3_close(db);
    return rc == RS_TOOL_OK && url ? status_url(url) : rc;
}

/* ------------------------------------------------------------ backup */

/* In the child, as the owner of the state directory: the SQLite online
 * backup of the store (a consistent copy while the watcher goes on
 * writing: pages changed during the copy make it start over, which
 * step(-1) does in one go) into a temporary file of the state directory,
 * switched to journal_mode DELETE (one self-contained file), checked, then
 * its bytes written to out (FILE.tmp, opened by the parent) and the
 * temporary file removed.  Returns RS_TOOL_OK or the error printed. */
static int backup_copy(apr_pool_t *p, const char *statedir, int out)
{
    const char *dbpath;
    char *tmp;
    sqlite3 *src = NULL, *dst = NULL;
    sqlite3_backup *b;
    char buf[65536];
    int rc, sr, fd;
    ssize_t n;

    if ((rc = rs_tool_check_statedir(p, "backup", statedir, &dbpath)) != RS_TOOL_OK
        || (rc = rs_tool_sqlite_open("backup", dbpath, SQLITE_OPEN_READONLY, &src))
           != RS_TOOL_OK) {
        return rc;
    }
    tmp = apr_pstrcat(p, statedir, "/.backup-XXXXXX", NULL);
    umask(077);
    if ((fd = mkstemp(tmp)) < 0) {
        rc = rs_tool_err(RS_TOOL_FAIL, "backup: cannot create a temporary copy in '%s': %s",
                         statedir, strerror(errno));
        sqlite3_close(src);
        return rc;
    }
    close(fd);
    if (sqlite3_open_v2(tmp, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL)
        != SQLITE_OK) {
        rc = rs_tool_err(RS_TOOL_FAIL, "backup: cannot open '%s': %s", tmp,
                         dst ? sqlite3_errmsg(dst) : "out of memory");
        goto done;
    }
    if (!(b = sqlite3_backup_init(dst, "main", src, "main"))) {
        rc = rs_tool_err(RS_TOOL_FAIL, "backup: %s", sqlite3_errmsg(dst));
        goto done;
    }
    while ((sr = sqlite3_backup_step(b, -1)) == SQLITE_BUSY || sr == SQLITE_LOCKED) {
        sqlite3_sleep(100);
    }
    sqlite3_backup_finish(b);
    if (sr != SQLITE_DONE
        || sqlite3_exec(dst, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL) != SQLITE_OK
        || one_int(dst, "SELECT COUNT(*) FROM pragma_integrity_check WHERE integrity_check "
                        "<> 'ok'", NULL) != 0) {
        rc = rs_tool_err(RS_TOOL_FAIL, "backup: copying '%s' failed: %s", dbpath,
                         sr != SQLITE_DONE ? sqlite3_errstr(sr) : sqlite3_errmsg(dst));
        goto done;
    }
    sqlite3_close(dst);
    dst = NULL;
    if ((fd = open(tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        rc = rs_tool_err(RS_TOOL_FAIL, "backup: cannot read '%s': %s", tmp, strerror(errno));
        goto done;
    }
    while ((n = read(fd, buf, sizeof(buf))) > 0) {
        char *at = buf;
        while (n > 0) {
            ssize_t w = write(out, at, (size_t)n);
            if (w < 0 && errno != EINTR) {
                break;
            }
            at += w > 0 ? w : 0;
            n -= w > 0 ? w : 0;
        }
        if (n > 0) {
            break;
        }
    }
    if (n != 0) {
        rc = rs_tool_err(RS_TOOL_FAIL, "backup: cannot write the copy: %s", strerror(errno));
    }
    close(fd);
done:
    if (dst) {
        sqlite3_close(dst);
    }
    sqlite3_close(src);
    unlink(tmp);
    unlink(apr_pstrcat(p, tmp, "-journal", NULL));
    return rc;
}

/* The backup is written to FILE.tmp (mode 0600: it holds subscribers'
 * secrets, notify_dests), created here by the invoking user without
 * following a symbolic link, filled by a child that reads the store as
 * the state directory's owner (backup_copy), synced, then renamed to
 * FILE, so FILE is complete or absent.  Run as root, the tool thus never
 * opens anything inside the state directory as root, and FILE may be
 * anywhere root may write. */
int rs_tool_backup(apr_pool_t *p, const char *statedir, const char *file)
{
    const char *tmp = apr_pstrcat(p, file, ".tmp", NULL);
    struct stat sb;
    pid_t pid, w;
    int rc, out, status = 0;

    if (lstat(file, &sb) == 0) {
        return rs_tool_err(RS_TOOL_USAGE, "backup: FILE '%s' exists; not overwritten", file);
    }
    unlink(tmp);             /* a leftover (a symbolic link: the link only) */
    if ((out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0) {
        return rs_tool_err(RS_TOOL_FAIL, "backup: cannot create '%s': %s", tmp,
                           strerror(errno));
    }
    fflush(NULL);
    if ((pid = fork()) < 0) {
        rc = rs_tool_err(RS_TOOL_FAIL, "backup: cannot fork: %s", strerror(errno));
    }
    else if (pid == 0) {
        rc = backup_copy(p, statedir, out);
        fflush(NULL);
        _exit(rc);
    }
    else {
        while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
        }
        rc = w < 0 ? rs_tool_err(RS_TOOL_FAIL, "backup: cannot wait for the copy: %s",
                                 strerror(errno))
             : WIFEXITED(status) ? WEXITSTATUS(status)
             : rs_tool_err(RS_TOOL_FAIL, "backup: the copy ended by signal %d",
                           WTERMSIG(status));
    }
    if (rc == RS_TOOL_OK && (fsync(out) != 0 || fstat(out, &sb) != 0)) {
        rc = rs_tool_err(RS_TOOL_FAIL, "backup: cannot sync '%s': %s", tmp, strerror(errno));
    }
    close(out);
    if (rc == RS_TOOL_OK && rename(tmp, file) != 0) {
        rc = rs_tool_err(RS_TOOL_FAIL, "backup: cannot rename '%s' to '%s': %s", tmp, file,
                         strerror(errno));
    }
    if (rc != RS_TOOL_OK) {
        unlink(tmp);
        return rc;
    }
    printf("backup %s bytes %lld\n", file, (long long)sb.st_size);
    return RS_TOOL_OK;
}
