/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hashlane.c - see rs_hashlane.h */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>
#include "rs_capture.h"
#include "rs_hash.h"
#include "rs_hashlane.h"

#define E_QUEUED  0
#define E_HASHING 1
#define E_DONE    2

/* A version of a file: what the digests are valid for. */
typedef struct version_t {
    apr_int64_t dev, ino, size, mtime, ctime;
} version_t;

typedef struct entry_t {
    char *key;           /* "<slot>/<relpath>" (malloc) */
    const char *relpath; /* inside key */
    char *path;          /* the file to read (malloc) */
    const rs_hashlane_src_t *src;
    int state;            /* E_* */
    int attempts;         /* reads that found the file changing */
    int taken;            /* E_DONE and handed to the owner */
    version_t v;          /* asked for (queued), or read (done) */
    rs_scan_digest_t dg;  /* E_DONE: the result */
    struct entry_t *next; /* in the queue */
} entry_t;

struct rs_hashlane_t {
    apr_pool_t *pool; /* own allocator: used under lock only */
    apr_thread_mutex_t *lock;
    apr_thread_cond_t *cond;
    apr_thread_t *thread;
    apr_hash_t *entries; /* key -> entry_t */
    entry_t *qhead, *qtail;
    int nqueued;
    int stop; /* the thread is to end (under lock) */
    const rs_hashlane_cb_t *cb;
    const rs_logger_t *log;
};

static void version_of(const struct stat *sb, version_t *v)
{
    v->dev = (apr_int64_t)sb->st_dev;
    v->ino = (apr_int64_t)sb->st_ino;
    v->size = (apr_int64_t)sb->st_size;
    v->mtime = (apr_int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
    v->ctime = (apr_int64_t)sb->st_ctim.tv_sec * 1000000000 + sb->st_ctim.tv_nsec;
}

static int same_version(const version_t *a, const version_t *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime == b->mtime
           && a->ctime == b->ctime;
}

static void publish_queue(rs_hashlane_t *lane)
{
    if (lane->cb && lane->cb->queue) {
        lane->cb->queue(lane->cb->baton, lane->nqueued);
    }
}

/* Under lock. */
static void enqueue(rs_hashlane_t *lane, entry_t *e)
{
    e->state = E_QUEUED;
    e->taken = 0;
    e->next = NULL;
    if (lane->qtail) {
        lane->qtail->next = e;
    }
    else {
        lane->qhead = e;
    }
    lane->qtail = e;
    lane->nqueued++;
    publish_queue(lane);
    apr_thread_cond_signal(lane->cond);
}

/* Under lock; NULL when the queue is empty. */
static entry_t *dequeue(rs_hashlane_t *lane)
{
    entry_t *e = lane->qhead;
    if (e) {
        lane->qhead = e->next;
        if (!lane->qhead) {
            lane->qtail = NULL;
        }
        e->next = NULL;
        lane->nqueued--;
        publish_queue(lane);
    }
    return e;
}

static void set_path(entry_t *e, const char *path)
{
    if (!e->path || strcmp(e->path, path)) {
        free(e->path);
        e->path = strdup(path);
    }
}

/* The table's key of relpath in src (malloc; NULL without memory). */
static char *key_of(const rs_hashlane_src_t *src, const char *relpath)
{
    size_t len = strlen(relpath) + 16;
    char *key = malloc(len);

    if (key) {
        snprintf(key, len, "%d/%s", src->slot, relpath);
    }
    return key;
}

/* Keep the capture cap of the file's bytes (mtime: its version's, in ns)
 * under the digests' key. */
static void capture_keep(rs_capture_tmp_t *cap, const rs_scan_digest_t *dg, apr_int64_t mtime)
{
    const char *hex[RS_HASH_COUNT];
    int i;

    for (i = 0; i < RS_HASH_COUNT; i++) {
        hex[i] = dg->hex[i];
    }
    (void)rs_capture_keep(cap, rs_capture_key(hex), mtime);
}

/* Read the file and digest it (progress: where the bytes read go).  *read
 * gets the version read; *changed is set when the file changed while it
 * was read.  Returns 0 or an errno. */
static int hash_one(const char *path, unsigned mask, const char *capture_dir,
                    volatile apr_int64_t *progress, version_t *read, rs_scan_digest_t *dg,
                    int *changed)
{
    struct stat before, after;
    rs_capture_tmp_t cap;
    apr_off_t n = 0;
    apr_status_t rv;
    int fd, werr = 0;

    *changed = 0;
    memset(dg, 0, sizeof(*dg));
    memset(read, 0, sizeof(*read));
    if (!path) {
        return ENOMEM;
    }
    /* Not through a link: the scan resolved links into path already. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) {
        return errno;
    }
    if (fstat(fd, &before) != 0 || !S_ISREG(before.st_mode)) {
        close(fd);
        return EINVAL;
    }
    version_of(&before, read);
#ifdef POSIX_FADV_SEQUENTIAL
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    /* With ResourceSyncChangeDump the same read captures the bytes
     * (rs_capture.h); a capture the scan's record never names goes at the
     * next garbage collection. */
    if (!capture_dir || rs_capture_open(&cap, capture_dir) != 0) {
        cap.fd = -1;
    }
    rv = rs_hash_fd_tee(fd, mask, dg->hex, &n, progress, cap.fd, &werr);
    if (rv == APR_SUCCESS) {
        if (fstat(fd, &after) != 0) {
            rv = errno;
        }
        else {
            version_t v;
            version_of(&after, &v);
            *changed = n != v.size || v.size != read->size || v.mtime != read->mtime;
        }
    }
    close(fd);
    if (rv == APR_SUCCESS && !*changed && cap.fd >= 0 && !werr) {
        capture_keep(&cap, dg, read->mtime);
    }
    rs_capture_drop(&cap);
    if (rv != APR_SUCCESS) {
        memset(dg->hex, 0, sizeof(dg->hex));
    }
    return rv;
}

/* After a read of e (under lock): done, or back in the queue. */
static void finish_one(rs_hashlane_t *lane, entry_t *e, int rc, int changed, const version_t *read,
                       const rs_scan_digest_t *dg)
{
    if (changed && ++e->attempts < RS_HASHLANE_ATTEMPTS) {
        enqueue(lane, e);
        return;
    }
    e->state = E_DONE;
    e->taken = 0;
    e->attempts = 0;
    e->dg = *dg;
    e->dg.rc = rc;
    if (changed) {
        /* It never held still: no digests, like rs_scanfile. */
        memset(e->dg.hex, 0, sizeof(e->dg.hex));
    }
    if (rc == 0) {
        e->v = *read; /* what the digests are valid for */
    }
}

/* The lane's thread tells its owner what it reads (under lock). */
static volatile apr_int64_t *hashing(rs_hashlane_t *lane, const char *set, const char *relpath,
                                     apr_int64_t size)
{
    if (lane->cb && lane->cb->hashing) {
        return lane->cb->hashing(lane->cb->baton, set, relpath, size);
    }
    return NULL;
}

/* Read e (queued), with the lock held on entry and on return. */
static void read_one(rs_hashlane_t *lane, entry_t *e)
{
    char *path = e->path ? strdup(e->path) : NULL;
    char *name = strdup(e->relpath);
    unsigned mask = e->src->digests;
    const char *capdir = e->src->capture_dir;
    const char *set = e->src->name;
    volatile apr_int64_t *progress;
    version_t read;
    rs_scan_digest_t dg;
    int rc, changed;

    e->state = E_HASHING;
    progress = hashing(lane, set, name ? name : "?", e->v.size);
    apr_thread_mutex_unlock(lane->lock);

    rs_log_emit(lane->log, RS_LOG_DEBUG, 0, "set %s: hashing '%s' on the hashing lane", set,
                name ? name : "?");
    rc = hash_one(path, mask, capdir, progress, &read, &dg, &changed);

    apr_thread_mutex_lock(lane->lock);
    hashing(lane, NULL, NULL, 0);
    finish_one(lane, e, rc, changed, &read, &dg);
    free(path);
    free(name);
}

static void *APR_THREAD_FUNC lane_main(apr_thread_t *t, void *data)
{
    rs_hashlane_t *lane = data;
    entry_t *e;

    (void)t;
    apr_thread_mutex_lock(lane->lock);
    while (!lane->stop) {
        if (!(e = dequeue(lane))) {
            apr_thread_cond_wait(lane->cond, lane->lock);
            continue;
        }
        read_one(lane, e);
    }
    apr_thread_mutex_unlock(lane->lock);
    return NULL;
}

void rs_hashlane_stop(rs_hashlane_t *lane)
{
    apr_hash_index_t *hi;
    apr_status_t trv;

    if (!lane || !lane->thread) {
        return;
    }
    apr_thread_mutex_lock(lane->lock);
    lane->stop = 1;
    apr_thread_cond_signal(lane->cond);
    apr_thread_mutex_unlock(lane->lock);
    apr_thread_join(&trv, lane->thread);
    lane->thread = NULL;
    for (hi = apr_hash_first(NULL, lane->entries); hi; hi = apr_hash_next(hi)) {
        entry_t *e = apr_hash_this_val(hi);
        free(e->path);
        free(e->key);
        free(e);
    }
    apr_hash_clear(lane->entries);
    lane->qhead = lane->qtail = NULL;
    lane->nqueued = 0;
}

/* Before the lane's pool (and its thread's, below it) goes. */
static apr_status_t lane_cleanup(void *data)
{
    rs_hashlane_stop(data);
    return APR_SUCCESS;
}

apr_status_t rs_hashlane_create(rs_hashlane_t **out, apr_pool_t *pool, const rs_hashlane_cb_t *cb,
                                const rs_logger_t *log)
{
    apr_allocator_t *alloc;
    apr_pool_t *lp;
    rs_hashlane_t *lane;
    apr_status_t rv;

    *out = NULL;
    if ((rv = apr_allocator_create(&alloc)) != APR_SUCCESS) {
        return rv;
    }
    if ((rv = apr_pool_create_ex(&lp, pool, NULL, alloc)) != APR_SUCCESS) {
        apr_allocator_destroy(alloc);
        return rv;
    }
    apr_allocator_owner_set(alloc, lp);
    lane = apr_pcalloc(lp, sizeof(*lane));
    lane->pool = lp;
    lane->cb = cb;
    lane->log = log;
    lane->entries = apr_hash_make(lp);
    if ((rv = apr_thread_mutex_create(&lane->lock, APR_THREAD_MUTEX_DEFAULT, lp)) != APR_SUCCESS
        || (rv = apr_thread_cond_create(&lane->cond, lp)) != APR_SUCCESS
        || (rv = apr_thread_create(&lane->thread, NULL, lane_main, lane, lp)) != APR_SUCCESS) {
        lane->thread = NULL;
        apr_pool_destroy(lp);
        return rv;
    }
    apr_pool_pre_cleanup_register(lp, lane, lane_cleanup);
    *out = lane;
    return APR_SUCCESS;
}

/* Under lock: what a request for version v of e's file (at path) does;
 * 1 with *out when the digests are ready. */
static int defer_known(rs_hashlane_t *lane, entry_t *e, const version_t *v, const char *path,
                       rs_scan_digest_t *out)
{
    if (e->state == E_DONE && same_version(&e->v, v)) {
        *out = e->dg;
        return 1;
    }
    if (e->state == E_DONE) {
        /* Done for another version: read it again. */
        e->v = *v;
        set_path(e, path);
        enqueue(lane, e);
    }
    else if (e->state == E_QUEUED) {
        e->v = *v;
        set_path(e, path);
    }
    /* E_HASHING: the result is labelled with the version read; if that is
     * not this one, the reconciliation that follows queues it again. */
    return 0;
}

int rs_hashlane_defer(void *baton, const char *relpath, const char *path, const struct stat *sb,
                      rs_scan_digest_t *out)
{
    const rs_hashlane_src_t *src = baton;
    rs_hashlane_t *lane = src ? src->lane : NULL;
    char *key;
    entry_t *e;
    version_t v;
    int ready = 0;

    if (!lane || !lane->thread) {
        /* No lane thread: hash in the scan rather than never. */
        return -1;
    }
    version_of(sb, &v);
    if (!(key = key_of(src, relpath))) {
        return -1;
    }
    apr_thread_mutex_lock(lane->lock);
    e = apr_hash_get(lane->entries, key, APR_HASH_KEY_STRING);
    if (!e && !(e = calloc(1, sizeof(*e)))) {
        ready = -1; /* no memory for an entry: hash in the scan */
    }
    else if (!e->key) {
        e->key = key;
        key = NULL;
        e->relpath = strchr(e->key, '/') + 1;
        e->src = src;
        apr_hash_set(lane->entries, e->key, APR_HASH_KEY_STRING, e);
        e->v = v;
        set_path(e, path);
        enqueue(lane, e);
    }
    else {
        ready = defer_known(lane, e, &v, path, out);
    }
    apr_thread_mutex_unlock(lane->lock);
    free(key);
    return ready;
}

int rs_hashlane_ready(rs_hashlane_t *lane, apr_pool_t *p, apr_array_header_t **out)
{
    apr_hash_index_t *hi;

    *out = apr_array_make(p, 4, sizeof(rs_hashlane_file_t));
    if (!lane || !lane->thread) {
        return 0;
    }
    apr_thread_mutex_lock(lane->lock);
    for (hi = apr_hash_first(NULL, lane->entries); hi; hi = apr_hash_next(hi)) {
        entry_t *e = apr_hash_this_val(hi);
        if (e->state == E_DONE && !e->taken) {
            rs_hashlane_file_t *f = apr_array_push(*out);
            e->taken = 1;
            f->src = e->src;
            f->relpath = apr_pstrdup(p, e->relpath);
        }
    }
    apr_thread_mutex_unlock(lane->lock);
    return (*out)->nelts;
}

void rs_hashlane_forget(rs_hashlane_t *lane, const rs_hashlane_src_t *src, const char *relpath)
{
    char *key;
    entry_t *e;

    if (!lane || !lane->thread || !(key = key_of(src, relpath))) {
        return;
    }
    apr_thread_mutex_lock(lane->lock);
    e = apr_hash_get(lane->entries, key, APR_HASH_KEY_STRING);
    if (e && e->state == E_DONE && e->taken) {
        apr_hash_set(lane->entries, e->key, APR_HASH_KEY_STRING, NULL);
        free(e->path);
        free(e->key);
        free(e);
    }
    apr_thread_mutex_unlock(lane->lock);
    free(key);
}

int rs_hashlane_queued(rs_hashlane_t *lane)
{
    int n;

    if (!lane || !lane->thread) {
        return 0;
    }
    apr_thread_mutex_lock(lane->lock);
    n = lane->nqueued;
    apr_thread_mutex_unlock(lane->lock);
    return n;
}
