/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_hashlane.c - the hashing lane: large files are hashed
 * on a thread of their own, so that they do not hold up the listing of
 * other changes.
 *
 * A scan (full or targeted) asks rs_hashlane_defer, on any of its worker
 * threads, for the digests of every file of at least
 * ResourceSyncLargeFileSize bytes whose stored row no longer describes it.
 * The first time, the file is queued and the scan leaves it as stored (a
 * new file is not listed yet, a changed one keeps its previous row), so
 * the scan's transaction, the Change List records of the other files and
 * the next Resource List do not wait for it.  The lane's thread reads the
 * file and keeps the digests with the version it read (device, inode,
 * size, mtime, ctime).  The driver takes the finished files
 * (rs_hashlane_ready) at each wake-up of its event loop and reconciles
 * each again as an ordinary scan target: that scan asks again, gets the
 * digests if the file is still the version that was read, and journals
 * the file like any other change; then the driver forgets the entry
 * (rs_hashlane_forget).  A file that changed meanwhile is queued again
 * with its new version.
 *
 * Lifecycle: one lane per watcher, started with the driver
 * (rs_hashlane_init); its thread never exits (the watcher ends with
 * _exit).  Entries live from the first request of a file until the driver
 * forgets them after the reconciliation that took their digests; they are
 * allocated with malloc so the lane's memory does not grow with the
 * number of files it has seen.
 *
 * Races: the entry table, the queue and every entry field are touched
 * only under `lock`, by the scan workers, the lane's thread and the
 * driver.  The thread reads the file without the lock, from a copy of the
 * entry's path, and labels the digests with the version it read (fstat of
 * the open file), never with the one asked for: a scan that finds another
 * version queues the file again.  A file whose size or mtime changed
 * during the read is read again (up to LANE_ATTEMPTS times, then kept
 * without digests like rs_scanfile does, for the next change to retry).
 * The status segment shows the file being read and the queue.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_status.h"
#include "rs_capture.h"
#include "rs_hash.h"

#define LANE_ATTEMPTS 3

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
    const rs_set_t *set;
    int state;            /* E_* */
    int attempts;         /* reads that found the file changing */
    int taken;            /* E_DONE and handed to the driver */
    version_t v;          /* asked for (queued), or read (done) */
    rs_scan_digest_t dg;  /* E_DONE: the result */
    struct entry_t *next; /* in the queue */
} entry_t;

static struct {
    apr_pool_t *pool; /* own allocator: used under lock only */
    apr_thread_mutex_t *lock;
    apr_thread_cond_t *cond;
    apr_hash_t *entries; /* key -> entry_t */
    entry_t *qhead, *qtail;
    int nqueued;
    server_rec *s;
} lane;

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

static void publish_queue(void)
{
    rs_status_t *st = rs_status_get();
    if (st) {
        st->hash_queue = lane.nqueued;
    }
}

/* Under lock. */
static void enqueue(entry_t *e)
{
    e->state = E_QUEUED;
    e->taken = 0;
    e->next = NULL;
    if (lane.qtail) {
        lane.qtail->next = e;
    }
    else {
        lane.qhead = e;
    }
    lane.qtail = e;
    lane.nqueued++;
    publish_queue();
    apr_thread_cond_signal(lane.cond);
}

/* Under lock; NULL when the queue is empty. */
static entry_t *dequeue(void)
{
    entry_t *e = lane.qhead;
    if (e) {
        lane.qhead = e->next;
        if (!lane.qhead) {
            lane.qtail = NULL;
        }
        e->next = NULL;
        lane.nqueued--;
        publish_queue();
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

/* Read the file and digest it.  *read gets the version read; *changed is
 * set when the file changed while it was read.  Returns 0 or an errno. */
static int hash_one(const char *path, unsigned mask, const char *capture_dir, version_t *read,
                    rs_scan_digest_t *dg, int *changed)
{
    rs_status_t *st = rs_status_get();
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
    rv = rs_hash_fd_tee(fd, mask, dg->hex, &n, st ? &st->hash_done : NULL, cap.fd, &werr);
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
        const char *hex[RS_HASH_COUNT];
        int i;
        for (i = 0; i < RS_HASH_COUNT; i++) {
            hex[i] = dg->hex[i];
        }
        (void)rs_capture_keep(&cap, rs_capture_key(hex),
                              (apr_int64_t)before.st_mtim.tv_sec * 1000000000
                                  + before.st_mtim.tv_nsec);
    }
    rs_capture_drop(&cap);
    if (rv != APR_SUCCESS) {
        memset(dg->hex, 0, sizeof(dg->hex));
    }
    return rv;
}

/* After a read of e (under lock): done, or back in the queue. */
static void finish_one(entry_t *e, int rc, int changed, const version_t *read,
                       const rs_scan_digest_t *dg)
{
    if (changed && ++e->attempts < LANE_ATTEMPTS) {
        enqueue(e);
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

static void *APR_THREAD_FUNC lane_main(apr_thread_t *t, void *data)
{
    (void)t;
    (void)data;
    apr_thread_mutex_lock(lane.lock);
    for (;;) {
        entry_t *e;
        char *path, *name;
        unsigned mask;
        const char *capdir;
        version_t read;
        rs_scan_digest_t dg;
        int rc, changed;

        while (!(e = dequeue())) {
            apr_thread_cond_wait(lane.cond, lane.lock);
        }
        e->state = E_HASHING;
        path = e->path ? strdup(e->path) : NULL;
        name = strdup(e->relpath);
        mask = e->set->digests;
        capdir = e->set->cdump ? e->set->capture_dir : NULL;
        rs_status_hashing_put(e->set->name, name ? name : "?", e->v.size);
        apr_thread_mutex_unlock(lane.lock);

        ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, lane.s,
                     RS_TAG "set %s: hashing '%s' "
                            "on the hashing lane",
                     e->set->name, name ? name : "?");
        rc = hash_one(path, mask, capdir, &read, &dg, &changed);

        apr_thread_mutex_lock(lane.lock);
        rs_status_hashing_put(NULL, NULL, 0);
        finish_one(e, rc, changed, &read, &dg);
        free(path);
        free(name);
    }
    return NULL;
}

apr_status_t rs_hashlane_init(apr_pool_t *pool, server_rec *s)
{
    apr_allocator_t *alloc;
    apr_thread_t *thread;
    apr_status_t rv;

    memset(&lane, 0, sizeof(lane));
    lane.s = s;
    if ((rv = apr_allocator_create(&alloc)) != APR_SUCCESS) {
        return rv;
    }
    apr_pool_create_ex(&lane.pool, pool, NULL, alloc);
    apr_allocator_owner_set(alloc, lane.pool);
    lane.entries = apr_hash_make(lane.pool);
    if ((rv = apr_thread_mutex_create(&lane.lock, APR_THREAD_MUTEX_DEFAULT, lane.pool))
            != APR_SUCCESS
        || (rv = apr_thread_cond_create(&lane.cond, lane.pool)) != APR_SUCCESS
        || (rv = apr_thread_create(&thread, NULL, lane_main, NULL, lane.pool)) != APR_SUCCESS) {
        lane.lock = NULL;
        return rv;
    }
    return APR_SUCCESS;
}

int rs_hashlane_defer(void *baton, const char *relpath, const char *path, const struct stat *sb,
                      rs_scan_digest_t *out)
{
    const rs_set_t *set = baton;
    char *key;
    entry_t *e;
    version_t v;
    int ready = 0;

    if (!lane.lock) {
        /* No lane thread: hash in the scan rather than never. */
        return -1;
    }
    version_of(sb, &v);
    key = malloc(strlen(relpath) + 16);
    if (!key) {
        return -1;
    }
    sprintf(key, "%d/%s", set->slot, relpath);
    apr_thread_mutex_lock(lane.lock);
    e = apr_hash_get(lane.entries, key, APR_HASH_KEY_STRING);
    if (!e && !(e = calloc(1, sizeof(*e)))) {
        ready = -1; /* no memory for an entry: hash in the scan */
    }
    else if (!e->key) {
        e->key = key;
        key = NULL;
        e->relpath = strchr(e->key, '/') + 1;
        e->set = set;
        apr_hash_set(lane.entries, e->key, APR_HASH_KEY_STRING, e);
        e->v = v;
        set_path(e, path);
        enqueue(e);
    }
    else if (e->state == E_DONE && same_version(&e->v, &v)) {
        *out = e->dg;
        ready = 1;
    }
    else if (e->state == E_DONE) {
        /* Done for another version: read it again. */
        e->v = v;
        set_path(e, path);
        enqueue(e);
    }
    else if (e->state == E_QUEUED) {
        e->v = v;
        set_path(e, path);
    }
    /* E_HASHING: the result is labelled with the version read; if that is
     * not this one, the reconciliation that follows queues it again. */
    apr_thread_mutex_unlock(lane.lock);
    free(key);
    return ready;
}

int rs_hashlane_ready(apr_pool_t *p, apr_array_header_t **out)
{
    apr_hash_index_t *hi;

    *out = apr_array_make(p, 4, sizeof(rs_hashlane_file_t));
    if (!lane.lock) {
        return 0;
    }
    apr_thread_mutex_lock(lane.lock);
    for (hi = apr_hash_first(NULL, lane.entries); hi; hi = apr_hash_next(hi)) {
        entry_t *e = apr_hash_this_val(hi);
        if (e->state == E_DONE && !e->taken) {
            rs_hashlane_file_t *f = apr_array_push(*out);
            e->taken = 1;
            f->set = e->set;
            f->relpath = apr_pstrdup(p, e->relpath);
        }
    }
    apr_thread_mutex_unlock(lane.lock);
    return (*out)->nelts;
}

void rs_hashlane_forget(const rs_set_t *set, const char *relpath)
{
    char *key;
    entry_t *e;

    if (!lane.lock || !(key = malloc(strlen(relpath) + 16))) {
        return;
    }
    sprintf(key, "%d/%s", set->slot, relpath);
    apr_thread_mutex_lock(lane.lock);
    e = apr_hash_get(lane.entries, key, APR_HASH_KEY_STRING);
    if (e && e->state == E_DONE && e->taken) {
        apr_hash_set(lane.entries, e->key, APR_HASH_KEY_STRING, NULL);
        free(e->path);
        free(e->key);
        free(e);
    }
    apr_thread_mutex_unlock(lane.lock);
    free(key);
}
