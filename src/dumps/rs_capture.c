/* SPDX-License-Identifier: Apache-2.0 */
/* rs_capture.c - see rs_capture.h */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <apr_file_info.h>
#include <apr_strings.h>
#include "rs_capture.h"
#include "rs_file.h"

#define TMP_PREFIX ".tmp-"

int rs_capture_open(rs_capture_tmp_t *t, const char *dir)
{
    t->fd = -1;
    if (strlen(dir) + sizeof(TMP_PREFIX "XXXXXX") + 1 > sizeof(t->path)) {
        return ENAMETOOLONG;
    }
    strcpy(t->dir, dir);
    snprintf(t->path, sizeof(t->path), "%s/" TMP_PREFIX "XXXXXX", dir);
    t->fd = mkostemp(t->path, O_CLOEXEC);
    if (t->fd < 0 && errno == ENOENT) {
        /* The directory went (or never was): make it, once. */
        char *slash = strrchr(t->dir, '/');
        if (slash && slash != t->dir) {
            *slash = '\0';
            mkdir(t->dir, 0700);
            *slash = '/';
        }
        mkdir(t->dir, 0700);
        snprintf(t->path, sizeof(t->path), "%s/" TMP_PREFIX "XXXXXX", dir);
        t->fd = mkostemp(t->path, O_CLOEXEC);
    }
    return t->fd < 0 ? errno : 0;
}

void rs_capture_drop(rs_capture_tmp_t *t)
{
    if (t->fd >= 0) {
        close(t->fd);
        unlink(t->path);
        t->fd = -1;
    }
}

int rs_capture_keep(rs_capture_tmp_t *t, const char *digest, apr_int64_t mtime_ns)
{
    char target[sizeof(t->dir) + 160];
    struct timespec ts[2];
    int rc = 0;

    if (t->fd < 0) {
        return EBADF;
    }
    if (!digest || !*digest || strlen(digest) > 128 || strchr(digest, '/')) {
        rs_capture_drop(t);
        return EINVAL;
    }
    ts[0].tv_sec = ts[1].tv_sec = (time_t)(mtime_ns / 1000000000);
    ts[0].tv_nsec = ts[1].tv_nsec = (long)(mtime_ns % 1000000000);
    if (futimens(t->fd, ts) != 0) {
        rc = errno;
    }
    if (close(t->fd) != 0 && !rc) {
        rc = errno;
    }
    t->fd = -1;
    snprintf(target, sizeof(target), "%s/%s", t->dir, digest);
    if (!rc && access(target, F_OK) == 0) {
        /* Same digest: the same bytes are kept already.  Its inode change
         * time is renewed, so that a collection running meanwhile takes
         * it as young (rs_capture_gc). */
        chmod(target, 0600);
        unlink(t->path);
        return 0;
    }
    if (!rc && rename(t->path, target) != 0) {
        rc = errno;
    }
    if (rc) {
        unlink(t->path);
    }
    return rc;
}

const char *rs_capture_key(const char *const hash[RS_HASH_COUNT])
{
    const char *h = hash[RS_CAPTURE_HASH_INDEX];
    /* A SHA-256 digest has 64 hex digits: anything else names nothing. */
    return h && strlen(h) == 64 && strspn(h, "0123456789abcdef") == 64 ? h : NULL;
}

const char *rs_capture_path(apr_pool_t *p, const char *dir, const char *key)
{
    return apr_pstrcat(p, dir, "/", key, NULL);
}

int rs_capture_has(const char *dir, const char *key)
{
    char path[4096 + 160];
    if (!key) {
        return 0;
    }
    snprintf(path, sizeof(path), "%s/%s", dir, key);
    return access(path, F_OK) == 0;
}

apr_int64_t rs_capture_bytes(const char *dir, apr_pool_t *p)
{
    return rs_file_dir_bytes(p, dir, NULL);
}

/* Whether a file of the directory goes (see rs_capture_gc). */
static apr_status_t goes(const apr_finfo_t *fi, rs_capture_use_fn *use, void *baton,
                         apr_time_t young, apr_pool_t *p, int *out)
{
    int old = !young || fi->ctime < young, kept = 0;
    apr_time_t gone = 0;
    apr_status_t rv;

    if (!strncmp(fi->name, TMP_PREFIX, sizeof(TMP_PREFIX) - 1)) {
        *out = old; /* no record names it */
        return APR_SUCCESS;
    }
    if ((rv = use(baton, p, fi->name, &kept, &gone)) != APR_SUCCESS) {
        return rv;
    }
    *out = !kept && (old || (gone && fi->ctime < gone));
    return APR_SUCCESS;
}

apr_status_t rs_capture_gc(const char *dir, rs_capture_use_fn *use, void *baton, apr_time_t young,
                           apr_pool_t *p, int *removed, apr_int64_t *bytes)
{
    apr_dir_t *d;
    apr_finfo_t fi;
    apr_pool_t *fp;
    apr_status_t rv;
    int n = 0, out;
    apr_int64_t b = 0;

    if (removed) {
        *removed = 0;
    }
    if (bytes) {
        *bytes = 0;
    }
    if ((rv = apr_dir_open(&d, dir, p)) != APR_SUCCESS) {
        return APR_STATUS_IS_ENOENT(rv) ? APR_SUCCESS : rv;
    }
    /* One file at a time, each in a pool of its own: memory does not
     * grow with the number of captures, nor with the journal. */
    apr_pool_create(&fp, p);
    while (
        rv == APR_SUCCESS
        && apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE | APR_FINFO_SIZE | APR_FINFO_CTIME, d)
               == APR_SUCCESS) {
        apr_pool_clear(fp);
        if (fi.filetype != APR_REG
            || (rv = goes(&fi, use, baton, young, fp, &out)) != APR_SUCCESS) {
            continue;
        }
        if (out && apr_file_remove(apr_pstrcat(fp, dir, "/", fi.name, NULL), fp) == APR_SUCCESS) {
            n++;
            continue;
        }
        b += fi.size;
    }
    apr_pool_destroy(fp);
    apr_dir_close(d);
    if (removed) {
        *removed = n;
    }
    if (bytes) {
        *bytes = b;
    }
    return rv;
}
