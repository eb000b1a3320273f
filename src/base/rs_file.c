/* SPDX-License-Identifier: Apache-2.0 */
/* rs_file.c - see rs_file.h */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <apr_portable.h>
#include <apr_strings.h>
#include "rs_file.h"

/* fsync what path names, opened with flags. */
static apr_status_t sync_opened(const char *path, int flags)
{
    apr_status_t rv = APR_SUCCESS;
    int fd = open(path, flags | O_CLOEXEC);
    if (fd < 0) {
        return APR_FROM_OS_ERROR(errno);
    }
    if (fsync(fd) != 0) {
        rv = APR_FROM_OS_ERROR(errno);
    }
    close(fd);
    return rv;
}

apr_status_t rs_file_sync_dir(const char *dir)
{
    return sync_opened(dir, O_RDONLY | O_DIRECTORY);
}

apr_status_t rs_file_sync_path(const char *path)
{
    return sync_opened(path, O_RDONLY);
}

apr_status_t rs_file_create(apr_file_t **f, const char *path, apr_size_t bufsize, apr_pool_t *p)
{
    apr_status_t rv = apr_file_open(
        f, path, APR_FOPEN_WRITE | APR_FOPEN_CREATE | APR_FOPEN_TRUNCATE | APR_FOPEN_BUFFERED,
        APR_FPROT_OS_DEFAULT, p);
    if (rv == APR_SUCCESS && bufsize) {
        apr_file_buffer_set(*f, apr_palloc(p, bufsize), bufsize);
    }
    return rv;
}

apr_status_t rs_file_finish(apr_file_t *f)
{
    apr_status_t rv = apr_file_flush(f), rc;
    if (rv == APR_SUCCESS) {
        rv = apr_file_sync(f);
    }
    rc = apr_file_close(f);
    return rv != APR_SUCCESS ? rv : rc;
}

apr_status_t rs_file_finish_later(apr_file_t *f)
{
    apr_status_t rv = apr_file_flush(f), rc;
    apr_os_file_t fd;

    /* Only a hint to start the writeback: durability is the later fsync's.
     * Neither its failure nor its absence changes what is written. */
    if (rv == APR_SUCCESS && apr_os_file_get(&fd, f) == APR_SUCCESS) {
        (void)sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
    }
    rc = apr_file_close(f);
    return rv != APR_SUCCESS ? rv : rc;
}

apr_int64_t rs_file_dir_bytes(apr_pool_t *p, const char *dir, const char *suffix)
{
    apr_size_t sl = suffix ? strlen(suffix) : 0, n;
    apr_int64_t b = 0;
    apr_dir_t *d;
    apr_finfo_t fi;

    if (apr_dir_open(&d, dir, p) != APR_SUCCESS) {
        return 0;
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE | APR_FINFO_SIZE, d) == APR_SUCCESS) {
        n = strlen(fi.name);
        if (fi.filetype == APR_REG && (!suffix || (n > sl && !strcmp(fi.name + n - sl, suffix)))) {
            b += fi.size;
        }
    }
    apr_dir_close(d);
    return b;
}

apr_status_t rs_file_replace(apr_pool_t *p, const char *path, rs_file_write_fn *fn, void *baton)
{
    const char *slash = strrchr(path, '/');
    const char *dir = slash ? apr_pstrndup(p, path, (apr_size_t)(slash - path)) : ".";
    const char *tmp = apr_pstrcat(p, dir, "/.tmp-", slash ? slash + 1 : path, NULL);
    apr_pool_t *fp;
    apr_file_t *f;
    apr_status_t rv;

    apr_pool_create(&fp, p);
    rv = rs_file_create(&f, tmp, 0, fp);
    if (rv == APR_SUCCESS) {
        rv = fn(baton, f, fp);
        if (rv == APR_SUCCESS) {
            rv = rs_file_finish(f);
        }
        else {
            apr_file_close(f);
        }
    }
    if (rv == APR_SUCCESS) {
        rv = apr_file_rename(tmp, path, fp);
    }
    if (rv == APR_SUCCESS) {
        rv = rs_file_sync_dir(dir);
    }
    else {
        apr_file_remove(tmp, fp);
    }
    apr_pool_destroy(fp);
    return rv;
}

/* How deep the walks below go: the state directory's trees are a few
 * levels deep; anything deeper was not made by the module. */
#define MAX_DEPTH 32

/* The names in the directory open at fd ("." and ".." left out) and their
 * d_type (DT_UNKNOWN when the file system does not say), read in full
 * before the caller changes anything: some file systems skip entries when
 * a directory changes while it is being read.  fd stays open. */
static apr_status_t list_dir(apr_pool_t *p, int fd, apr_array_header_t **names,
                             apr_array_header_t **types)
{
    int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
    struct dirent *e;
    apr_status_t rv = APR_SUCCESS;

    *names = apr_array_make(p, 16, sizeof(const char *));
    *types = apr_array_make(p, 16, sizeof(unsigned char));
    if (!d) {
        rv = APR_FROM_OS_ERROR(errno);
        if (dfd >= 0) {
            close(dfd);
        }
        return rv;
    }
    rewinddir(d); /* the duplicate shares the offset */
    for (errno = 0; (e = readdir(d)); errno = 0) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            APR_ARRAY_PUSH(*names, const char *) = apr_pstrdup(p, e->d_name);
            APR_ARRAY_PUSH(*types, unsigned char) = e->d_type;
        }
    }
    if (errno) {
        rv = APR_FROM_OS_ERROR(errno);
    }
    closedir(d);
    return rv;
}

static void first_error(apr_status_t *first, apr_status_t rv)
{
    if (*first == APR_SUCCESS) {
        *first = rv;
    }
}

static apr_status_t remove_at(apr_pool_t *p, int dfd, const char *name, unsigned char type,
                              int depth);

/* Remove everything in the directory open at fd. */
static apr_status_t remove_below(apr_pool_t *p, int fd, int depth)
{
    apr_array_header_t *names, *types;
    apr_status_t rv, first;
    apr_pool_t *sp;
    int i;

    apr_pool_create(&sp, p); /* this directory's names */
    if ((first = list_dir(sp, fd, &names, &types)) != APR_SUCCESS) {
        names->nelts = 0;
    }
    for (i = 0; i < names->nelts; i++) {
        rv = remove_at(sp, fd, APR_ARRAY_IDX(names, i, const char *),
                       APR_ARRAY_IDX(types, i, unsigned char), depth);
        if (rv != APR_SUCCESS) {
            first_error(&first, rv);
        }
    }
    apr_pool_destroy(sp);
    return first;
}

/* Remove name of the directory open at dfd, and what is below it when it
 * is a directory (type: its d_type, a hint only).  A directory is opened
 * with O_NOFOLLOW below dfd, so a symbolic link is unlinked, never
 * entered, even one swapped in after the listing. */
static apr_status_t remove_at(apr_pool_t *p, int dfd, const char *name, unsigned char type,
                              int depth)
{
    apr_status_t rv;
    int fd;

    if (type != DT_DIR && type != DT_UNKNOWN) {
        if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT) {
            return APR_SUCCESS;
        }
        if (errno != EISDIR && errno != EPERM) { /* EPERM: Linux, for a directory */
            return APR_FROM_OS_ERROR(errno);
        }
    }
    fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOTDIR || errno == ELOOP) {
            return unlinkat(dfd, name, 0) == 0 || errno == ENOENT ? APR_SUCCESS
                                                                  : APR_FROM_OS_ERROR(errno);
        }
        return errno == ENOENT ? APR_SUCCESS : APR_FROM_OS_ERROR(errno);
    }
    rv = depth < MAX_DEPTH ? remove_below(p, fd, depth + 1) : APR_FROM_OS_ERROR(ELOOP);
    close(fd);
    if (rv == APR_SUCCESS && unlinkat(dfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT) {
        rv = APR_FROM_OS_ERROR(errno);
    }
    return rv;
}

/* The directory that holds path, opened (following symbolic links: the
 * caller named it), and path's last component in *name. */
static int open_parent(apr_pool_t *p, const char *path, const char **name)
{
    const char *slash = strrchr(path, '/');

    if (!slash) {
        *name = path;
        return open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
    *name = slash + 1;
    return open(slash == path ? "/" : apr_pstrndup(p, path, (apr_size_t)(slash - path)),
                O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

apr_status_t rs_file_remove_tree(apr_pool_t *p, const char *dir)
{
    apr_pool_t *sp;
    apr_status_t rv;
    const char *name;
    int pfd;

    apr_pool_create(&sp, p);
    pfd = open_parent(sp, dir, &name);
    if (pfd < 0) {
        rv = errno == ENOENT ? APR_SUCCESS : APR_FROM_OS_ERROR(errno);
    }
    else {
        rv = *name ? remove_at(sp, pfd, name, DT_UNKNOWN, 0) : APR_EINVAL;
        close(pfd);
    }
    apr_pool_destroy(sp);
    return rv;
}

apr_status_t rs_file_read_small(apr_pool_t *p, const char *path, apr_size_t max, char **buf,
                                apr_size_t *len)
{
    struct stat st;
    apr_status_t rv = APR_SUCCESS;
    apr_size_t n = 0;
    char *b = NULL;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

    if (fd < 0) {
        return APR_FROM_OS_ERROR(errno);
    }
    if (fstat(fd, &st) != 0) {
        rv = APR_FROM_OS_ERROR(errno);
    }
    else if (!S_ISREG(st.st_mode)) {
        rv = APR_EFTYPE;
    }
    else if (st.st_uid != geteuid()) {
        rv = APR_FROM_OS_ERROR(EPERM);
    }
    else if ((apr_uint64_t)st.st_size > (apr_uint64_t)max) {
        rv = APR_FROM_OS_ERROR(EFBIG);
    }
    else {
        /* One byte past max tells a file that grew since the fstat. */
        b = apr_palloc(p, max + 2);
        while (n <= max) {
            ssize_t r = read(fd, b + n, max + 1 - n);
            if (r < 0 && errno == EINTR) {
                continue;
            }
            if (r < 0) {
                rv = APR_FROM_OS_ERROR(errno);
                break;
            }
            if (r == 0) {
                break;
            }
            n += (apr_size_t)r;
        }
        if (rv == APR_SUCCESS && n > max) {
            rv = APR_FROM_OS_ERROR(EFBIG);
        }
    }
    close(fd);
    if (rv == APR_SUCCESS) {
        b[n] = '\0';
        *buf = b;
        *len = n;
    }
    return rv;
}

/* Open name of the directory open at dfd (a directory when dir) without
 * following a symbolic link or blocking.  An entry of this user without
 * the read permission gets mode want first (fchmodat without following:
 * glibc does it through an O_PATH descriptor). */
static int open_entry(int dfd, const char *name, int dir, mode_t want)
{
    int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (dir ? O_DIRECTORY : 0);
    int fd = openat(dfd, name, flags);

    if (fd < 0 && errno == EACCES && fchmodat(dfd, name, want, AT_SYMLINK_NOFOLLOW) == 0) {
        fd = openat(dfd, name, flags);
    }
    return fd;
}

/* A walk of rs_file_restrict_tree. */
typedef struct restrict_walk_t {
    int max; /* levels below the top to go */
    rs_file_restrict_t o;
    apr_status_t first;
} restrict_walk_t;

static void restrict_below(apr_pool_t *p, int fd, int depth, restrict_walk_t *w);

/* Give the entry open at fd (depth levels below the top) mode want,
 * unless it has it; then, for a directory, the same below it. */
static void restrict_fd(apr_pool_t *p, int fd, mode_t want, int depth, restrict_walk_t *w)
{
    struct stat st;

    if (fstat(fd, &st) != 0) {
        first_error(&w->first, APR_FROM_OS_ERROR(errno));
        return;
    }
    if (st.st_uid != geteuid()) {
        w->o.foreign++;
        return;
    }
    if ((st.st_mode & 07777) != want) {
        if (fchmod(fd, want) != 0) {
            first_error(&w->first, APR_FROM_OS_ERROR(errno));
        }
        else {
            w->o.changed++;
        }
    }
    if (S_ISDIR(st.st_mode) && depth < w->max) {
        restrict_below(p, fd, depth + 1, w);
    }
}

/* The entries of the directory open at fd, depth levels below the top. */
static void restrict_below(apr_pool_t *p, int fd, int depth, restrict_walk_t *w)
{
    apr_array_header_t *names, *types;
    apr_status_t rv;
    apr_pool_t *sp;
    int i;

    apr_pool_create(&sp, p); /* this directory's names */
    if ((rv = list_dir(sp, fd, &names, &types)) != APR_SUCCESS) {
        first_error(&w->first, rv);
        names->nelts = 0;
    }
    for (i = 0; i < names->nelts; i++) {
        const char *name = APR_ARRAY_IDX(names, i, const char *);
        struct stat st;
        int cfd, dir;

        if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno != ENOENT) {
                first_error(&w->first, APR_FROM_OS_ERROR(errno));
            }
            continue;
        }
        dir = S_ISDIR(st.st_mode);
        if (!dir && !S_ISREG(st.st_mode)) {
            w->o.other++;
            continue;
        }
        if (st.st_uid != geteuid()) {
            w->o.foreign++;
            continue;
        }
        if ((st.st_mode & 07777) == (dir ? 0700 : 0600) && (!dir || depth >= w->max)) {
            continue; /* the common case: no open */
        }
        /* The mode is set through a descriptor of what was opened without
         * following, and only if it is still of the type that was seen. */
        if ((cfd = open_entry(fd, name, dir, dir ? 0700 : 0600)) < 0) {
            if (errno != ENOENT) {
                first_error(&w->first, APR_FROM_OS_ERROR(errno));
            }
            continue;
        }
        if (fstat(cfd, &st) == 0 && (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode))) {
            restrict_fd(sp, cfd, dir ? 0700 : 0600, depth, w);
        }
        close(cfd);
    }
    apr_pool_destroy(sp);
}

apr_status_t rs_file_restrict_tree(apr_pool_t *p, const char *dir, int depth,
                                   rs_file_restrict_t *out)
{
    restrict_walk_t w;
    apr_pool_t *sp;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    memset(&w, 0, sizeof(w));
    w.max = depth < RS_FILE_ALL_LEVELS ? depth : RS_FILE_ALL_LEVELS;
    if (fd < 0) {
        w.first = APR_FROM_OS_ERROR(errno);
    }
    else {
        apr_pool_create(&sp, p);
        restrict_fd(sp, fd, 0700, 0, &w);
        apr_pool_destroy(sp);
        close(fd);
    }
    if (out) {
        *out = w.o;
    }
    return w.first;
}

apr_status_t rs_file_touch(apr_pool_t *p, const char *path)
{
    apr_file_t *f;
    apr_status_t rv =
        apr_file_open(&f, path, APR_FOPEN_WRITE | APR_FOPEN_CREATE, APR_FPROT_OS_DEFAULT, p);
    if (rv == APR_SUCCESS) {
        rv = apr_file_close(f);
    }
    return rv;
}

int rs_file_exists(apr_pool_t *p, const char *path)
{
    apr_finfo_t fi;
    return apr_stat(&fi, path, APR_FINFO_TYPE, p) == APR_SUCCESS;
}

typedef struct {
    const void *buf;
    apr_size_t len;
} buf_t;

static apr_status_t write_buf(void *baton, apr_file_t *f, apr_pool_t *p)
{
    const buf_t *b = baton;
    (void)p;
    return b->len ? apr_file_write_full(f, b->buf, b->len, NULL) : APR_SUCCESS;
}

apr_status_t rs_file_replace_buf(apr_pool_t *p, const char *path, const void *buf, apr_size_t len)
{
    buf_t b = { buf, len };
    return rs_file_replace(p, path, write_buf, &b);
}

/* Whether the regular file at path (a link or a FIFO in its place is
 * neither followed nor waited on) holds the bytes needle (n of them),
 * read in chunks: a manifest is never held in memory. */
int rs_file_holds(const char *path, const char *needle, apr_size_t n)
{
    char buf[65536];
    apr_size_t keep = 0;
    struct stat sb;
    ssize_t got;
    int found = 0, fd;

    if (n == 0 || n >= sizeof(buf) / 2
        || (fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0) {
        return 0;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return 0;
    }
    for (;;) {
        got = read(fd, buf + keep, sizeof(buf) - keep);
        if (got <= 0) {
            break;
        }
        keep += (apr_size_t)got;
        if (memmem(buf, keep, needle, n)) {
            found = 1;
            break;
        }
        /* The last n - 1 bytes may begin a match. */
        if (keep > n - 1) {
            memmove(buf, buf + keep - (n - 1), n - 1);
            keep = n - 1;
        }
    }
    close(fd);
    return found;
}
