/* SPDX-License-Identifier: Apache-2.0 */
/* rs_withdraw.c - see rs_withdraw.h */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <apr_strings.h>
#include "rs_statedir.h"
#include "rs_uri.h"
#include "rs_withdraw.h"

#define MAX_FILE 65536
/* An outcome nobody read (its tool gave up waiting, or the request was
 * made while no watcher ran), or a temporary file a crash left, goes
 * after a day. */
#define STALE_SEC 86400

int rs_withdraw_path_ok(const char *rel)
{
    const char *s = rel, *e;
    if (!rel || !*rel || *rel == '/') {
        return 0;
    }
    for (;;) {
        e = strchr(s, '/');
        e = e ? e : s + strlen(s);
        if (e == s || (e - s == 1 && s[0] == '.') || (e - s == 2 && s[0] == '.' && s[1] == '.')) {
            return 0;
        }
        if (!*e) {
            return 1;
        }
        s = e + 1;
    }
}

/* The requests' directory below statedir, opened without following a
 * link (created, mode 0700 and owned like statedir, when create).  A
 * descriptor, or -1 with errno. */
static int dir_open(apr_pool_t *p, const char *statedir, int create)
{
    const char *dir = rs_statedir_withdraw(p, statedir);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), e;
    struct stat sb;

    if (dfd < 0 && errno == ENOENT && create) {
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            return -1;
        }
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        e = errno;
        if (dfd >= 0 && geteuid() == 0 && stat(statedir, &sb) == 0) {
            (void)!fchown(dfd, sb.st_uid, sb.st_gid);
        }
        errno = e;
    }
    return dfd;
}

/* Write name in dfd atomically (mode 0600, owned like the directory). */
static apr_status_t write_file(int dfd, const char *name, const char *text)
{
    char tmp[256];
    struct stat sb;
    size_t len = strlen(text);
    int fd, rc = 0;

    snprintf(tmp, sizeof(tmp), ".tmp-%s.%ld", name, (long)getpid());
    unlinkat(dfd, tmp, 0);
    fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        return APR_FROM_OS_ERROR(errno);
    }
    if (geteuid() == 0 && fstat(dfd, &sb) == 0) {
        (void)!fchown(fd, sb.st_uid, sb.st_gid);
    }
    if (write(fd, text, len) != (ssize_t)len || fsync(fd) != 0) {
        rc = errno ? errno : EIO;
    }
    if (close(fd) != 0 && !rc) {
        rc = errno;
    }
    if (!rc && renameat(dfd, tmp, dfd, name) != 0) {
        rc = errno;
    }
    if (rc) {
        unlinkat(dfd, tmp, 0);
        return APR_FROM_OS_ERROR(rc);
    }
    return fsync(dfd) == 0 ? APR_SUCCESS : APR_FROM_OS_ERROR(errno);
}

/* The content of name in dfd (a regular file of at most MAX_FILE bytes,
 * never a link or a FIFO), or NULL with errno. */
static char *read_file(apr_pool_t *p, int dfd, const char *name)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), e;
    struct stat sb;
    char *buf = NULL;
    ssize_t n;

    if (fd < 0) {
        return NULL;
    }
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size < MAX_FILE) {
        buf = apr_palloc(p, (apr_size_t)sb.st_size + 1);
        n = read(fd, buf, (size_t)sb.st_size);
        buf[n > 0 ? n : 0] = '\0';
    }
    else {
        errno = EINVAL;
    }
    e = errno;
    close(fd);
    errno = e;
    return buf;
}

apr_status_t rs_withdraw_request(apr_pool_t *p, const char *statedir, const char *set,
                                 const char *rel, const char **id)
{
    int dfd = dir_open(p, statedir, 1);
    apr_status_t rv;

    if (dfd < 0) {
        return APR_FROM_OS_ERROR(errno);
    }
    *id =
        apr_psprintf(p, "%016" APR_INT64_T_FMT "-%ld", (apr_int64_t)apr_time_now(), (long)getpid());
    rv = write_file(dfd, rs_statedir_withdraw_file(p, NULL, *id, 0),
                    apr_pstrcat(p, "set ", set, "\npath ", rs_uri_escape_path(p, rel), "\n", NULL));
    close(dfd);
    return rv;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A request's fields from its text (set NULL when it is not one). */
static void parse(apr_pool_t *p, char *text, rs_withdraw_req_t *r)
{
    char *nl1 = text ? strchr(text, '\n') : NULL, *nl2 = nl1 ? strchr(nl1 + 1, '\n') : NULL;

    r->set = NULL;
    r->rel = NULL;
    if (!nl2 || strncmp(text, "set ", 4) || strncmp(nl1 + 1, "path ", 5)) {
        return;
    }
    *nl1 = *nl2 = '\0';
    r->rel = rs_uri_unescape(p, nl1 + 6);
    if (r->rel && rs_withdraw_path_ok(r->rel) && text[4]) {
        r->set = apr_pstrdup(p, text + 4);
    }
}

apr_status_t rs_withdraw_pending(apr_pool_t *p, const char *statedir, apr_array_header_t **reqs)
{
    apr_array_header_t *names = apr_array_make(p, 4, sizeof(const char *));
    int dfd = dir_open(p, statedir, 0), i;
    struct dirent *de;
    DIR *d;

    *reqs = apr_array_make(p, 4, sizeof(rs_withdraw_req_t));
    if (dfd < 0) {
        return errno == ENOENT ? APR_SUCCESS : APR_FROM_OS_ERROR(errno);
    }
    if (!(d = fdopendir(dup(dfd)))) {
        apr_status_t rv = APR_FROM_OS_ERROR(errno);
        close(dfd);
        return rv;
    }
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        struct stat sb;
        if (n > 4 && !strcmp(de->d_name + n - 4, ".req")
            && strspn(de->d_name, "0123456789-") == n - 4) {
            APR_ARRAY_PUSH(names, const char *) = apr_pstrdup(p, de->d_name);
        }
        else if (((n > 5 && !strcmp(de->d_name + n - 5, ".done"))
                  || !strncmp(de->d_name, ".tmp-", 5))
                 && fstatat(dfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0
                 && sb.st_mtime < time(NULL) - STALE_SEC) {
            unlinkat(dfd, de->d_name, 0);
        }
    }
    closedir(d);
    qsort(names->elts, (size_t)names->nelts, sizeof(const char *), by_name);
    for (i = 0; i < names->nelts; i++) {
        const char *name = APR_ARRAY_IDX(names, i, const char *);
        rs_withdraw_req_t *r = apr_array_push(*reqs);
        r->id = apr_pstrndup(p, name, strlen(name) - 4);
        parse(p, read_file(p, dfd, name), r);
    }
    close(dfd);
    return APR_SUCCESS;
}

apr_status_t rs_withdraw_finish(apr_pool_t *p, const char *statedir, const char *id, int ok,
                                const char *text)
{
    int dfd = dir_open(p, statedir, 0);
    apr_status_t rv;

    if (dfd < 0) {
        return APR_FROM_OS_ERROR(errno);
    }
    rv = write_file(dfd, rs_statedir_withdraw_file(p, NULL, id, 1),
                    apr_pstrcat(p, ok ? "ok\n" : "error\n", text, "\n", NULL));
    if (rv == APR_SUCCESS && unlinkat(dfd, rs_statedir_withdraw_file(p, NULL, id, 0), 0) != 0
        && errno != ENOENT) {
        rv = APR_FROM_OS_ERROR(errno);
    }
    close(dfd);
    return rv;
}

apr_status_t rs_withdraw_outcome(apr_pool_t *p, const char *statedir, const char *id, int *ok,
                                 const char **text)
{
    const char *name = rs_statedir_withdraw_file(p, NULL, id, 1);
    int dfd = dir_open(p, statedir, 0);
    char *buf, *nl;

    if (dfd < 0) {
        return APR_FROM_OS_ERROR(errno);
    }
    if (!(buf = read_file(p, dfd, name))) {
        apr_status_t rv = APR_FROM_OS_ERROR(errno);
        close(dfd);
        return rv;
    }
    unlinkat(dfd, name, 0);
    close(dfd);
    nl = strchr(buf, '\n');
    *ok = nl && !strncmp(buf, "ok\n", 3);
    *text = nl ? nl + 1 : buf;
    if ((nl = strchr(*text, '\n'))) {
        *nl = '\0';
    }
    return APR_SUCCESS;
}
