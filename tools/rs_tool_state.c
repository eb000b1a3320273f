/* SPDX-License-Identifier: Apache-2.0 */
/* rs_tool_state.c - rs-tool status, forget-set and backup: the state
 * directory and its store, read and changed through the engine's store
 * units (rs_schema, rs_inventory, rs_journal, rs_db).
 *
 * The tool does not migrate the store (the module does, at its start): it
 * opens it as it is (rs_tool_store_open), refuses a store newer than it
 * knows, and touches only tables that exist.  Writes (forget-set) are one
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
#include "rs_history.h"
#include "rs_inventory.h"
#include "rs_journal.h"
#include "rs_schema.h"
#include "rs_statedir.h"
#include "rs_time.h"
#include "rs_tool.h"
#include "rs_tool_statedir.h"

/* ------------------------------------------------------------ status */

/* Whether a watcher holds the set's lock: its pid, 0 if none, -1 when no
 * lock file can be read.  Only asks (F_GETLK): never takes or creates,
 * never follows a symbolic link or waits on a FIFO put in its place. */
static long watcher_of(apr_pool_t *p, const char *statedir, const char *set)
{
    struct flock fl;
    int fd =
        open(rs_statedir_setlock(p, statedir, set), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
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

/* The sets of the inventory or the journal, in byte order, each once. */
static apr_array_header_t *union_of(apr_pool_t *p, const apr_array_header_t *a,
                                    const apr_array_header_t *b)
{
    apr_array_header_t *out = apr_array_make(p, a->nelts + b->nelts, sizeof(const char *));
    int i = 0, k = 0;

    while (i < a->nelts || k < b->nelts) {
        const char *x = i < a->nelts ? APR_ARRAY_IDX(a, i, const char *) : NULL;
        const char *y = k < b->nelts ? APR_ARRAY_IDX(b, k, const char *) : NULL;
        int c = !x ? 1 : !y ? -1 : strcmp(x, y);
        APR_ARRAY_PUSH(out, const char *) = c <= 0 ? x : y;
        i += c <= 0;
        k += c >= 0;
    }
    return out;
}

/* One set's line.  Its last change is the datetime of its newest
 * journaled change or, before any, the newest modification time of a
 * listed file. */
static apr_status_t status_set(apr_pool_t *p, rs_db_t *db, rs_journal_t *j, const char *statedir,
                               const char *set)
{
    rs_inventory_summary_t s;
    apr_int64_t records;
    apr_time_t newest;
    const char *gen = NULL;
    char when[RS_TIME_BUFSIZE] = "none";
    long pid = watcher_of(p, statedir, set);
    apr_status_t rv;

    if ((rv = rs_inventory_summary(db, set, &s)) != APR_SUCCESS
        || (rv = rs_journal_summary(j, set, &records, &newest)) != APR_SUCCESS
        || (rv = rs_db_meta_get(db, p, apr_pstrcat(p, "snapshot-gen:", set, NULL), &gen))
               != APR_SUCCESS) {
        return rv;
    }
    if (records || s.newest) {
        rs_time_format(when, records ? newest : (apr_time_t)(s.newest_mtime_ns / 1000));
    }
    printf("set %s: files %lld bytes %lld last-change %s generation %s journal %lld "
           "watcher %s\n",
           set, (long long)s.files, (long long)s.bytes, when, gen ? gen : "0", (long long)records,
           pid > 0 ? apr_psprintf(p, "%ld", pid) : "none");
    return APR_SUCCESS;
}

/* One line per set of the inventory or the journal. */
static int status_sets(apr_pool_t *p, rs_db_t *db, const char *statedir)
{
    apr_array_header_t *inv, *started, *sets = NULL;
    rs_journal_t *j;
    apr_pool_t *ip;
    apr_status_t rv;
    int i;

    if ((rv = rs_inventory_sets(db, p, &inv)) == APR_SUCCESS
        && (rv = rs_journal_open(&j, db, p)) == APR_SUCCESS
        && (rv = rs_journal_sets(j, p, &started)) == APR_SUCCESS) {
        sets = union_of(p, inv, started);
        apr_pool_create(&ip, p);
        for (i = 0; rv == APR_SUCCESS && i < sets->nelts; i++) {
            apr_pool_clear(ip);
            rv = status_set(ip, db, j, statedir, APR_ARRAY_IDX(sets, i, const char *));
        }
    }
    if (rv != APR_SUCCESS) {
        return rs_tool_err(RS_TOOL_FAIL, "status: cannot read the store: %s", rs_db_last_error(db));
    }
    printf("sets %d\n", sets->nelts);
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
    const char *dbpath, *h = NULL;
    apr_pool_t *sp;
    rs_db_t *db;
    struct stat sb;
    int rc;

    if ((rc = rs_tool_check_statedir(p, "status", statedir, &dbpath)) != RS_TOOL_OK) {
        return rc;
    }
    apr_pool_create(&sp, p);
    if ((rc = rs_tool_store_open(sp, "status", dbpath, RS_DB_READONLY, &db)) == RS_TOOL_OK) {
        if (stat(dbpath, &sb) != 0) {
            sb.st_size = 0; /* not a file: PostgreSQL */
        }
        rs_db_meta_get(db, sp, RS_HISTORY_META, &h);
        printf("rs-tool %s\nstate-dir %s\nstore %s bytes %lld schema %d history %s\n", RS_VERSION,
               statedir, dbpath, (long long)sb.st_size, rs_db_schema_version(db), h ? h : "none");
        rc = status_sets(sp, db, statedir);
    }
    apr_pool_destroy(sp);
    return rc == RS_TOOL_OK && url ? status_url(url) : rc;
}

/* ------------------------------------------------------------ backup */

/* The bytes of the file at path written to out; RS_TOOL_OK or the error
 * printed. */
static int copy_out(const char *path, int out)
{
    char buf[65536];
    ssize_t n;
    int fd, rc = RS_TOOL_OK;

    if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        return rs_tool_err(RS_TOOL_FAIL, "backup: cannot read '%s': %s", path, strerror(errno));
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
    return rc;
}

/* In the child, as the owner of the state directory: the online backup
 * of the store (rs_db_backup: a consistent copy while the watcher goes on
 * writing, one self-contained file, checked) into a temporary file of the
 * state directory, then its bytes written to out (FILE.tmp, opened by the
 * parent) and the temporary file removed.  Returns RS_TOOL_OK or the
 * error printed. */
static int backup_copy(apr_pool_t *p, const char *statedir, int out)
{
    const char *dbpath;
    char *tmp;
    apr_pool_t *sp;
    rs_db_t *src;
    int rc, fd;

    if ((rc = rs_tool_check_statedir(p, "backup", statedir, &dbpath)) != RS_TOOL_OK) {
        return rc;
    }
    apr_pool_create(&sp, p);
    if ((rc = rs_tool_store_open(sp, "backup", dbpath, RS_DB_READONLY, &src)) != RS_TOOL_OK) {
        apr_pool_destroy(sp);
        return rc;
    }
    tmp = rs_statedir_backup_tmp(p, statedir);
    umask(077);
    if ((fd = mkstemp(tmp)) < 0) {
        rc = rs_tool_err(RS_TOOL_FAIL, "backup: cannot create a temporary copy in '%s': %s",
                         statedir, strerror(errno));
        apr_pool_destroy(sp);
        return rc;
    }
    close(fd);
    rc = rs_db_backup(src, tmp) == APR_SUCCESS
             ? copy_out(tmp, out)
             : rs_tool_err(RS_TOOL_FAIL, "backup: copying '%s' failed: %s", dbpath,
                           rs_db_last_error(src));
    apr_pool_destroy(sp);
    rs_db_remove(p, RS_STATEDIR_DB_DRIVER, tmp);
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
    unlink(tmp); /* a leftover (a symbolic link: the link only) */
    if ((out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0) {
        return rs_tool_err(RS_TOOL_FAIL, "backup: cannot create '%s': %s", tmp, strerror(errno));
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
        rc = w < 0               ? rs_tool_err(RS_TOOL_FAIL, "backup: cannot wait for the copy: %s",
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
