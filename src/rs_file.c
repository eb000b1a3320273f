/* rs_file.c - see rs_file.h */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
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

apr_status_t rs_file_create(apr_file_t **f, const char *path, apr_size_t bufsize,
                            apr_pool_t *p)
{
    apr_status_t rv = apr_file_open(f, path, APR_FOPEN_WRITE | APR_FOPEN_CREATE
                                    | APR_FOPEN_TRUNCATE | APR_FOPEN_BUFFERED,
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

apr_status_t rs_file_replace(apr_pool_t *p, const char *path, rs_file_write_fn *fn,
                             void *baton)
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

/* Depth-first, bounded by the depth of the tree (the state directory's
 * trees are one or two levels deep).  The names of a directory are read
 * in full before any is removed: some file systems skip entries when a
 * directory changes while it is being read. */
static apr_status_t remove_below(apr_pool_t *p, const char *dir, int depth)
{
    apr_dir_t *d;
    apr_finfo_t fi;
    apr_array_header_t *names = apr_array_make(p, 16, sizeof(const char *));
    apr_array_header_t *isdir = apr_array_make(p, 16, sizeof(int));
    apr_status_t rv = apr_dir_open(&d, dir, p), first = APR_SUCCESS;
    int i;

    if (rv != APR_SUCCESS) {
        return APR_STATUS_IS_ENOENT(rv) ? APR_SUCCESS : rv;
    }
    /* The type comes from the directory entry (a symbolic link is APR_LNK,
     * never followed); APR_INCOMPLETE: it could not tell, not a directory. */
    for (;;) {
        rv = apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d);
        if (rv != APR_SUCCESS && rv != APR_INCOMPLETE) {
            break;
        }
        if (strcmp(fi.name, ".") && strcmp(fi.name, "..")) {
            APR_ARRAY_PUSH(names, const char *) = apr_pstrcat(p, dir, "/", fi.name, NULL);
            APR_ARRAY_PUSH(isdir, int) = (fi.valid & APR_FINFO_TYPE) && fi.filetype == APR_DIR;
        }
    }
    apr_dir_close(d);
    for (i = 0; i < names->nelts; i++) {
        const char *path = APR_ARRAY_IDX(names, i, const char *);
        if (APR_ARRAY_IDX(isdir, i, int) && depth < 32) {
            rv = remove_below(p, path, depth + 1);
            if (rv == APR_SUCCESS) {
                rv = apr_dir_remove(path, p);
            }
        }
        else {
            rv = apr_file_remove(path, p);
        }
        if (rv != APR_SUCCESS && first == APR_SUCCESS) {
            first = rv;
        }
    }
    return first;
}

apr_status_t rs_file_remove_tree(apr_pool_t *p, const char *dir)
{
    apr_pool_t *sp;
    apr_status_t rv;

    apr_pool_create(&sp, p);
    rv = remove_below(sp, dir, 0);
    apr_pool_destroy(sp);
    if (rv == APR_SUCCESS) {
        rv = apr_dir_remove(dir, p);
        if (APR_STATUS_IS_ENOENT(rv)) {
            rv = APR_SUCCESS;
        }
    }
    return rv;
}

apr_status_t rs_file_touch(apr_pool_t *p, const char *path)
{
    apr_file_t *f;
    apr_status_t rv = apr_file_open(&f, path, APR_FOPEN_WRITE | APR_FOPEN_CREATE,
                                    APR_FPROT_OS_DEFAULT, p);
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

apr_status_t rs_file_replace_buf(apr_pool_t *p, const char *path, const void *buf,
                                 apr_size_t len)
{
    buf_t b = { buf, len };
    return rs_file_replace(p, path, write_buf, &b);
}
