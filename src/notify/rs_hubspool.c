/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubspool.c - see rs_hubspool.h */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <apr_file_info.h>
#include <apr_file_io.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "rs_hubreq.h"
#include "rs_hubspool.h"

#define MASK                                                                               \
    (IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF \
     | IN_MOVE_SELF | IN_ONLYDIR)

/* A write in progress ("tmp-*"); malloc'd, as its key. */
typedef struct tmp_t {
    char *name;
} tmp_t;

struct rs_hubspool_t {
    apr_pool_t *pool;
    const char *dir;
    apr_fileperms_t perms;
    int fd;
    int wd;           /* -1: no watch (the directory went) */
    int relist;       /* the next take lists the directory */
    apr_hash_t *tmps; /* name -> tmp_t */
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
};

static int is_tmp(const char *name)
{
    return !strncmp(name, "tmp-", 4);
}

static void tmp_forget(rs_hubspool_t *s, const char *name)
{
    tmp_t *t = apr_hash_get(s->tmps, name, APR_HASH_KEY_STRING);
    if (t) {
        apr_hash_set(s->tmps, name, APR_HASH_KEY_STRING, NULL);
        free(t->name);
        free(t);
    }
}

static void tmp_note(rs_hubspool_t *s, const char *name)
{
    tmp_t *t;
    if (apr_hash_get(s->tmps, name, APR_HASH_KEY_STRING)) {
        return;
    }
    t = malloc(sizeof(*t));
    if (!t || !(t->name = strdup(name))) {
        free(t);
        return; /* not swept: a listing finds it again */
    }
    apr_hash_set(s->tmps, t->name, APR_HASH_KEY_STRING, t);
}

static void tmp_clear(rs_hubspool_t *s)
{
    apr_hash_index_t *hi;
    apr_pool_t *p;
    apr_pool_create(&p, s->pool);
    for (hi = apr_hash_first(p, s->tmps); hi; hi = apr_hash_next(hi)) {
        /* Deleting the current entry during iteration is allowed. */
        tmp_forget(s, ((tmp_t *)apr_hash_this_val(hi))->name);
    }
    apr_pool_destroy(p);
}

static apr_status_t cleanup(void *data)
{
    rs_hubspool_t *s = data;
    tmp_clear(s);
    if (s->fd >= 0) {
        close(s->fd);
        s->fd = -1;
    }
    return APR_SUCCESS;
}

/* The directory, created if missing, and its watch. */
static apr_status_t watch(rs_hubspool_t *s)
{
    apr_status_t rv = apr_dir_make_recursive(s->dir, s->perms, s->pool);
    if (rv != APR_SUCCESS && !APR_STATUS_IS_EEXIST(rv)) {
        return rv;
    }
    if ((s->wd = inotify_add_watch(s->fd, s->dir, MASK)) < 0) {
        return errno;
    }
    return APR_SUCCESS;
}

apr_status_t rs_hubspool_open(rs_hubspool_t **out, apr_pool_t *p, const char *dir,
                              apr_fileperms_t perms)
{
    rs_hubspool_t *s = apr_pcalloc(p, sizeof(*s));
    apr_status_t rv;

    s->pool = p;
    s->dir = apr_pstrdup(p, dir);
    s->perms = perms;
    s->wd = -1;
    s->relist = 1;
    s->tmps = apr_hash_make(p);
    if ((s->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0) {
        return errno;
    }
    apr_pool_cleanup_register(p, s, cleanup, apr_pool_cleanup_null);
    if ((rv = watch(s)) != APR_SUCCESS) {
        return rv;
    }
    *out = s;
    return APR_SUCCESS;
}

int rs_hubspool_fd(const rs_hubspool_t *s)
{
    return s->fd;
}

/* Read the events waiting: requests' names appended to names, writes in
 * progress noted and forgotten; lost events or a lost directory mark a
 * listing as due. */
static void read_events(rs_hubspool_t *s, apr_pool_t *p, apr_array_header_t *names)
{
    ssize_t n;

    while ((n = read(s->fd, s->buf, sizeof(s->buf))) > 0) {
        char *c = s->buf;
        while (c < s->buf + n) {
            const struct inotify_event *ev = (const struct inotify_event *)c;
            const char *name = ev->len ? ev->name : "";
            c += sizeof(*ev) + ev->len;
            if (ev->mask & IN_Q_OVERFLOW) {
                s->relist = 1;
            }
            else if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
                if (ev->wd != s->wd) {
                    continue; /* of a watch replaced since */
                }
                if (!(ev->mask & IN_IGNORED)) {
                    inotify_rm_watch(s->fd, s->wd);
                }
                s->wd = -1;
                s->relist = 1;
            }
            else if (is_tmp(name)) {
                if (ev->mask & IN_CREATE) {
                    tmp_note(s, name);
                }
                else if (ev->mask & (IN_MOVED_FROM | IN_DELETE)) {
                    tmp_forget(s, name);
                }
            }
            else if ((ev->mask & (IN_MOVED_TO | IN_CLOSE_WRITE)) && rs_hubreq_spool_is_req(name)) {
                APR_ARRAY_PUSH(names, const char *) = apr_pstrdup(p, name);
            }
        }
    }
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every request in the directory, sorted; temporary files noted. */
static apr_status_t list(rs_hubspool_t *s, apr_pool_t *p, apr_array_header_t *names,
                         rs_hubspool_census_t *census)
{
    apr_dir_t *d;
    apr_finfo_t fi;
    apr_status_t rv;

    if ((rv = apr_dir_open(&d, s->dir, p)) != APR_SUCCESS) {
        return rv;
    }
    tmp_clear(s);
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE | APR_FINFO_SIZE | APR_FINFO_MTIME, d)
           == APR_SUCCESS) {
        int req = rs_hubreq_spool_is_req(fi.name), tmp = is_tmp(fi.name);
        if (fi.filetype != APR_REG || (!req && !tmp)) {
            continue;
        }
        census->files++;
        census->bytes += fi.size > 0 ? (apr_uint64_t)fi.size : 0;
        if (req) {
            APR_ARRAY_PUSH(names, const char *) = apr_pstrdup(p, fi.name);
        }
        else {
            tmp_note(s, fi.name);
        }
    }
    apr_dir_close(d);
    qsort(names->elts, names->nelts, sizeof(const char *), by_name);
    census->listed = 1;
    return APR_SUCCESS;
}

apr_status_t rs_hubspool_take(rs_hubspool_t *s, apr_pool_t *p, apr_array_header_t *names,
                              rs_hubspool_census_t *census)
{
    apr_array_header_t *all;
    apr_status_t rv;

    memset(census, 0, sizeof(*census));
    read_events(s, p, names);
    if (!s->relist && s->wd >= 0) {
        return APR_SUCCESS;
    }
    /* The watch first, then the listing: a request renamed in between is
     * in both (the caller ignores the second report), never in neither.
     * A listing that fails leaves the events' names and is tried again
     * at the next take. */
    if (s->wd < 0 && (rv = watch(s)) != APR_SUCCESS) {
        return rv;
    }
    all = apr_array_make(p, 16, sizeof(const char *));
    if ((rv = list(s, p, all, census)) != APR_SUCCESS) {
        return rv;
    }
    names->nelts = 0;
    apr_array_cat(names, all);
    s->relist = 0;
    return APR_SUCCESS;
}

void rs_hubspool_sweep(rs_hubspool_t *s, apr_time_t now, apr_interval_time_t age,
                       apr_uint32_t *files, apr_uint64_t *bytes)
{
    apr_hash_index_t *hi;
    apr_pool_t *p;

    *files = 0;
    *bytes = 0;
    apr_pool_create(&p, s->pool);
    for (hi = apr_hash_first(p, s->tmps); hi; hi = apr_hash_next(hi)) {
        tmp_t *t = apr_hash_this_val(hi);
        const char *path = apr_pstrcat(p, s->dir, "/", t->name, NULL);
        apr_finfo_t fi;
        apr_status_t rv = apr_stat(&fi, path, APR_FINFO_SIZE | APR_FINFO_MTIME, p);
        /* A child writes its file within moments: one not written to for
         * the age is abandoned. */
        if (rv == APR_SUCCESS && fi.mtime > now - age) {
            continue;
        }
        if (rv == APR_SUCCESS && apr_file_remove(path, p) == APR_SUCCESS) {
            (*files)++;
            *bytes += fi.size > 0 ? (apr_uint64_t)fi.size : 0;
        }
        /* Deleting the current entry during iteration is allowed. */
        tmp_forget(s, t->name);
    }
    apr_pool_destroy(p);
}
