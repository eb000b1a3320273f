/* SPDX-License-Identifier: Apache-2.0 */
/* rs_beneath.c - see rs_beneath.h */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <apr_strings.h>
#include "rs_beneath.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

struct rs_beneath_t {
    int rootfd;
    const char *realroot;
    apr_size_t realroot_len;
    int dirfd; /* the cached directory (not rootfd), or -1 */
    char *dir; /* its path relative to the root */
    apr_size_t dir_size;
    char target[NAME_MAX + 1]; /* the last component of a listed link's target */
    apr_pool_t *p;
};

static apr_status_t tree_cleanup(void *data)
{
    rs_beneath_t *t = data;
    if (t->dirfd >= 0) {
        close(t->dirfd);
        t->dirfd = -1;
    }
    if (t->rootfd >= 0) {
        close(t->rootfd);
        t->rootfd = -1;
    }
    return APR_SUCCESS;
}

apr_status_t rs_beneath_open_root(rs_beneath_t **out, const char *root, apr_pool_t *p)
{
    rs_beneath_t *t = apr_pcalloc(p, sizeof(*t));
    char buf[PATH_MAX];
    struct stat a, b;

    t->dirfd = -1;
    t->p = p;
    t->rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (t->rootfd < 0) {
        return APR_FROM_OS_ERROR(errno);
    }
    apr_pool_cleanup_register(p, t, tree_cleanup, apr_pool_cleanup_null);
    /* The real path of the directory just opened (a listed link must
     * resolve below it). */
    if (!realpath(root, buf) || stat(buf, &a) != 0 || fstat(t->rootfd, &b) != 0) {
        return APR_FROM_OS_ERROR(errno);
    }
    if (a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
        return APR_FROM_OS_ERROR(EAGAIN); /* the root moved while opened */
    }
    t->realroot = apr_pstrdup(p, buf);
    t->realroot_len = strlen(buf);
    *out = t;
    return APR_SUCCESS;
}

/* Whether the segment [s, s + n) may be walked: not empty, "." or "..". */
static int segment_ok(const char *s, apr_size_t n)
{
    return n && !(n == 1 && s[0] == '.') && !(n == 2 && s[0] == '.' && s[1] == '.');
}

/* The descriptor of directory dir (relative, "" for the root), opened
 * component by component without following links; cached.  -1 with
 * errno on failure. */
static int dir_fd(rs_beneath_t *t, const char *dir, apr_size_t len)
{
    const char *s = dir, *end = dir + len;
    int fd = t->rootfd;

    if (!len) {
        return t->rootfd;
    }
    if (t->dirfd >= 0 && strlen(t->dir) == len && !memcmp(t->dir, dir, len)) {
        return t->dirfd;
    }
    if (t->dirfd >= 0) {
        close(t->dirfd);
        t->dirfd = -1;
    }
    while (s < end) {
        const char *e = memchr(s, '/', (apr_size_t)(end - s));
        char name[NAME_MAX + 1];
        int next;
        apr_size_t n;

        e = e ? e : end;
        n = (apr_size_t)(e - s);
        if (!segment_ok(s, n) || n > NAME_MAX) {
            errno = EINVAL;
            next = -1;
        }
        else {
            memcpy(name, s, n);
            name[n] = '\0';
            next = openat(fd, name, DIR_FLAGS);
        }
        if (fd != t->rootfd) {
            int e2 = errno;
            close(fd);
            errno = e2;
        }
        if (next < 0) {
            return -1;
        }
        fd = next;
        s = e + 1;
    }
    if (len + 1 > t->dir_size) {
        t->dir_size = len + 64;
        t->dir = apr_palloc(t->p, t->dir_size); /* grows rarely: paths are short */
    }
    memcpy(t->dir, dir, len);
    t->dir[len] = '\0';
    t->dirfd = fd;
    return fd;
}

/* The directory descriptor and the last component of rel; with
 * metadata of that component (not followed) in sb.  0 or an errno. */
static int locate(rs_beneath_t *t, const char *rel, int *dfd, const char **name, struct stat *sb)
{
    const char *slash = strrchr(rel, '/');
    const char *base = slash ? slash + 1 : rel;

    if (!segment_ok(base, strlen(base))) {
        return EINVAL;
    }
    if ((*dfd = dir_fd(t, rel, slash ? (apr_size_t)(slash - rel) : 0)) < 0) {
        return errno;
    }
    *name = base;
    return fstatat(*dfd, base, sb, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
}

/* rel, or the target of the listed link rel (see rs_beneath.h). */
static int locate_target(rs_beneath_t *t, const char *rel, int *dfd, const char **name,
                         struct stat *sb, int *link)
{
    char full[PATH_MAX], buf[PATH_MAX];
    int rc = locate(t, rel, dfd, name, sb);

    *link = 0;
    if (rc || !S_ISLNK(sb->st_mode)) {
        return rc;
    }
    if (apr_snprintf(full, sizeof(full), "%s/%s", t->realroot, rel) >= (int)sizeof(full) - 1) {
        return ENAMETOOLONG;
    }
    if (!realpath(full, buf)) {
        return errno;
    }
    if (strncmp(buf, t->realroot, t->realroot_len) || buf[t->realroot_len] != '/') {
        return EXDEV; /* leads out of the root */
    }
    /* *name points into buf: copied before buf goes. */
    if ((rc = locate(t, buf + t->realroot_len + 1, dfd, name, sb)) != 0) {
        return rc;
    }
    if (S_ISLNK(sb->st_mode)) {
        return ELOOP; /* swapped since realpath */
    }
    apr_cpystrn(t->target, *name, sizeof(t->target));
    *name = t->target;
    *link = 1;
    return 0;
}

int rs_beneath_stat(rs_beneath_t *t, const char *rel, struct stat *sb, int *link)
{
    const char *name;
    int dfd;
    return locate_target(t, rel, &dfd, &name, sb, link);
}

int rs_beneath_open(rs_beneath_t *t, const char *rel, struct stat *sb)
{
    const char *name;
    int dfd, fd, link, rc = locate_target(t, rel, &dfd, &name, sb, &link);

    if (!rc && !S_ISREG(sb->st_mode)) {
        rc = EINVAL;
    }
    if (rc) {
        errno = rc;
        return -1;
    }
    fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    if (fstat(fd, sb) != 0) {
        rc = errno;
    }
    else if (!S_ISREG(sb->st_mode)) {
        rc = EINVAL; /* replaced since the fstatat */
    }
    if (rc) {
        close(fd);
        errno = rc;
        return -1;
    }
    return fd;
}

int rs_beneath_same(const struct stat *sb, apr_int64_t dev, apr_int64_t ino, apr_int64_t size,
                    apr_int64_t mtime_ns)
{
    return S_ISREG(sb->st_mode) && (apr_int64_t)sb->st_dev == dev && (apr_int64_t)sb->st_ino == ino
           && (apr_int64_t)sb->st_size == size
           && (apr_int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec == mtime_ns;
}
