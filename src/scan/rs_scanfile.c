/* SPDX-License-Identifier: Apache-2.0 */
/* rs_scanfile.c - see rs_scanfile.h */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <apr_atomic.h>
#include <apr_strings.h>
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>
#include "rs_capture.h"
#include "rs_hash.h"
#include "rs_scanfile.h"

apr_int64_t rs_scanfile_mtime_ns(const struct stat *sb)
{
    return (apr_int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
}

apr_int64_t rs_scanfile_ctime_ns(const struct stat *sb)
{
    return (apr_int64_t)sb->st_ctim.tv_sec * 1000000000 + sb->st_ctim.tv_nsec;
}

static int same_version(const rs_item_t *row, const struct stat *sb)
{
    return row->size == (apr_int64_t)sb->st_size && row->mtime_ns == rs_scanfile_mtime_ns(sb)
           && row->dev == (apr_int64_t)sb->st_dev && row->ino == (apr_int64_t)sb->st_ino;
}

static int has_hashes(const rs_item_t *row, unsigned mask)
{
    int i;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        if ((mask & (1u << i)) && !row->hash[i]) {
            return 0;
        }
    }
    return 1;
}

/* Open a file for reading: relative to its directory, or through the
 * resolved target for a symlink. */
static int open_file(int dfd, const char *name, const char *target)
{
    if (target) {
        return open(target, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    }
    return openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
}

/* Fill it with hashes of the file's current content.  sb is updated to
 * the metadata of the version read.  Returns 0, or an errno. */
static int hash_file(const rs_scan_opts_t *o, apr_pool_t *p, int dfd, const char *name,
                     const char *target, struct stat *sb, rs_item_t *it, apr_int64_t *hashed,
                     int fd0)
{
    int attempt;
    for (attempt = 0; attempt < 3; attempt++) {
        char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
        struct stat after;
        rs_capture_tmp_t cap;
        apr_off_t n = 0;
        int i, werr = 0, fd;
        apr_status_t rv;

        if (attempt == 0 && fd0 >= 0) {
            fd = fd0; /* opened and described (sb) by the caller */
        }
        else if ((fd = open_file(dfd, name, target)) < 0) {
            return errno;
        }
        else if (fstat(fd, sb) != 0 || !S_ISREG(sb->st_mode)) {
            close(fd);
            return EINVAL;
        }
        if (!o->hashes) {
            close(fd);
            return 0;
        }
#ifdef POSIX_FADV_SEQUENTIAL
        if (sb->st_size > 256 * 1024) { /* a small file is one or two reads anyway */
            posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        }
#endif
        if (!o->capture_dir || rs_capture_open(&cap, o->capture_dir) != 0) {
            cap.fd = -1;
        }
        rv = rs_hash_fd_upto(fd, o->hashes, hex, sb->st_size, &n, NULL, cap.fd, &werr);
        if (rv == APR_SUCCESS && fstat(fd, &after) == 0 && after.st_size == sb->st_size
            && n == after.st_size && rs_scanfile_mtime_ns(&after) == rs_scanfile_mtime_ns(sb)) {
            close(fd);
            *hashed += n;
            if (cap.fd >= 0 && !werr) {
                /* Named by its SHA-256 digest (NULL, and so dropped, when
                 * the scan's digests lack it: see rs_scan_opts_t). */
                const char *h[RS_HASH_COUNT];
                for (i = 0; i < RS_HASH_COUNT; i++) {
                    h[i] = (o->hashes & (1u << i)) ? hex[i] : NULL;
                }
                /* A failed capture is noticed when the package is built. */
                (void)rs_capture_keep(&cap, rs_capture_key(h), rs_scanfile_mtime_ns(sb));
            }
            rs_capture_drop(&cap);
            for (i = 0; i < RS_HASH_COUNT; i++) {
                it->hash[i] = (o->hashes & (1u << i)) ? apr_pstrdup(p, hex[i]) : NULL;
            }
            return 0;
        }
        close(fd);
        rs_capture_drop(&cap);
        if (rv != APR_SUCCESS) {
            return rv;
        }
    }
    /* The file keeps changing: no hash now, the next scan retries. */
    memset(it->hash, 0, sizeof(it->hash));
    return 0;
}


/* A large file's digests, from o->defer: 1 when ready (in it, or the
 * read's errno in j->rc), 0 when the file waits for them, -1 when it is
 * hashed here (no defer, or not large). */
static int take_deferred(const rs_scan_opts_t *o, apr_pool_t *p, rs_scanfile_job_t *j,
                         rs_item_t *it)
{
    rs_scan_digest_t dg;
    int i, ready;

    if (!o->defer || o->defer_size <= 0 || (apr_int64_t)j->sb.st_size < o->defer_size) {
        return -1;
    }
    memset(&dg, 0, sizeof(dg));
    ready = o->defer(o->defer_baton, j->relpath,
                     j->target ? j->target : apr_pstrcat(p, o->root, "/", j->relpath, NULL), &j->sb,
                     &dg);
    if (ready <= 0) {
        return ready < 0 ? -1 : 0;
    }
    j->rc = dg.rc;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        it->hash[i] = (o->hashes & (1u << i)) && dg.hex[i][0] ? apr_pstrdup(p, dg.hex[i]) : NULL;
    }
    return 1;
}

int rs_scanfile_unchanged(const rs_scan_opts_t *o, const rs_item_t *row, const struct stat *sb)
{
    return row && same_version(row, sb) && row->ctime_ns == rs_scanfile_ctime_ns(sb) && row->cfg
           && o->cfg && !strcmp(row->cfg, o->cfg) && (!row->listed || has_hashes(row, o->hashes));
}

/* The first half of the per-file work: would the caller serve the file,
 * and with what type and encoding.  Runs on a worker thread with that worker's check
 * baton, or on the calling thread (see rs_scan_opts_t.hash_workers);
 * allocates only from p. */
static void job_check(const rs_scan_opts_t *o, void *baton, apr_pool_t *p, const char *dir,
                      rs_scanfile_job_t *j)
{
    rs_item_t *it = &j->it;
    rs_scan_media_t media = { NULL, NULL };

    memset(it, 0, sizeof(*it));
    it->dir = dir;
    it->name = j->name;
    it->cfg = o->cfg;
    it->listed = 1;
    if (o->check && !o->check(baton, p, j->relpath, j->target ? RS_SCAN_CHECK_LINK : 0, &media)) {
        it->listed = 0;
    }
    it->type = media.type;
    it->encoding = media.encoding;
}

/* The second half: for a file that is served, make sure it can be read
 * and hash it (or take its deferred digests); then the version the row
 * records.  Never calls the check callback, so it may run on any thread;
 * allocates only from p. */
static void job_read(const rs_scan_opts_t *o, apr_pool_t *p, int dfd, rs_scanfile_job_t *j)
{
    rs_item_t *it = &j->it;
    const rs_item_t *row = j->row;
    int fd0 = -1;

    if (j->need_stat) {
        /* A plain file by its directory entry (no link, no row): when
         * it is hashed, one open gives both its metadata and the bytes;
         * otherwise (or when it cannot be opened) fstatat. */
        if (it->listed && o->hashes && (fd0 = open_file(dfd, j->name, NULL)) >= 0) {
            if (fstat(fd0, &j->sb) != 0) {
                close(fd0);
                fd0 = -1;
            }
        }
        if (fd0 < 0 && fstatat(dfd, j->name, &j->sb, AT_SYMLINK_NOFOLLOW) != 0) {
            j->gone = 1; /* vanished since readdir */
            return;
        }
        if (!S_ISREG(j->sb.st_mode)) {
            if (fd0 >= 0) {
                close(fd0);
            }
            j->gone = 1; /* replaced since readdir: the next event or scan sees it */
            return;
        }
        j->need_stat = 0;
    }
    if (it->listed) {
        if (!o->hashes) {
            /* Nothing to read: only make sure the run user can. */
            int ok = j->target ? access(j->target, R_OK) == 0
                               : faccessat(dfd, j->name, R_OK, AT_EACCESS) == 0;
            j->rc = ok ? 0 : errno;
        }
        else if (row && same_version(row, &j->sb) && has_hashes(row, o->hashes)
                 && (!o->capture_dir
                     || rs_capture_has(o->capture_dir,
                                       rs_capture_key((const char *const *)row->hash)))) {
            /* Same content (only the inode's status changed, e.g. chmod):
             * keep the hashes, but make sure the file is still readable. */
            int fd = open_file(dfd, j->name, j->target);
            j->rc = fd < 0 ? errno : 0;
            if (fd >= 0) {
                close(fd);
            }
            memcpy(it->hash, row->hash, sizeof(it->hash));
        }
        else {
            int ready = take_deferred(o, p, j, it);
            if (ready < 0) {
                j->rc = hash_file(o, p, dfd, j->name, j->target, &j->sb, it, &j->hashed, fd0);
                fd0 = -1;
            }
            j->deferred = ready == 0;
        }
        if (j->rc != 0) {
            it->listed = 0;
            memset(it->hash, 0, sizeof(it->hash));
        }
    }
    if (fd0 >= 0) {
        close(fd0);
    }
    it->size = j->sb.st_size;
    it->mtime_ns = rs_scanfile_mtime_ns(&j->sb);
    it->ctime_ns = rs_scanfile_ctime_ns(&j->sb);
    it->dev = (apr_int64_t)j->sb.st_dev;
    it->ino = (apr_int64_t)j->sb.st_ino;
}

/* The whole per-file work; runs on any worker thread, allocating only
 * from p. */
static void run_job(const rs_scan_opts_t *o, void *baton, apr_pool_t *p, int dfd, const char *dir,
                    rs_scanfile_job_t *j)
{
    job_check(o, baton, p, dir, j);
    job_read(o, p, dfd, j);
}

typedef struct {
    const rs_scan_opts_t *o;
    const char *dir;
    int dfd;
    rs_scanfile_job_t *jobs;
    apr_uint32_t njobs;
    int checked; /* the checks are done: read and hash only */
    volatile apr_uint32_t next;
} batch_t;

typedef struct {
    batch_t *b;
    void *baton;
    apr_pool_t *pool;
    struct rs_scanfile_crew_t *crew;
    apr_uint64_t seen; /* the last batch number taken */
} worker_t;

/* The threads of a whole scan (see rs_scanfile.h).  Lifecycle of a
 * batch: rs_scanfile_run publishes it (b, seq + 1, busy = n) under the
 * lock and waits until busy is 0; each thread wakes on the new seq,
 * clears its pool (the results of the previous batch were consumed by
 * the caller before it published this one), takes jobs until none is
 * left, then decrements busy.  The caller never runs jobs itself while
 * the crew does (the check batons are one per crew thread). */
struct rs_scanfile_crew_t {
    apr_thread_mutex_t *lock;
    apr_thread_cond_t *cond; /* broadcast on every change below */
    batch_t *b;              /* the batch being worked on */
    apr_uint64_t seq;        /* batches published so far */
    int busy;                /* threads still on batch seq */
    int closing;
    int n; /* threads started */
    apr_thread_t **th;
    worker_t *w;
};

static void work(worker_t *w)
{
    batch_t *b = w->b;
    apr_uint32_t i;

    while ((i = apr_atomic_inc32(&b->next)) < b->njobs) {
        if (b->checked) {
            job_read(b->o, w->pool, b->dfd, &b->jobs[i]);
        }
        else {
            run_job(b->o, w->baton, w->pool, b->dfd, b->dir, &b->jobs[i]);
        }
    }
}

static void *APR_THREAD_FUNC worker_main(apr_thread_t *t, void *data)
{
    worker_t *w = data;
    rs_scanfile_crew_t *c = w->crew;

    apr_thread_mutex_lock(c->lock);
    for (;;) {
        if (c->seq != w->seen) {
            w->seen = c->seq;
            w->b = c->b;
            apr_thread_mutex_unlock(c->lock);
            apr_pool_clear(w->pool);
            work(w);
            apr_thread_mutex_lock(c->lock);
            if (--c->busy == 0) {
                apr_thread_cond_broadcast(c->cond);
            }
        }
        else if (c->closing) {
            break;
        }
        else {
            apr_thread_cond_wait(c->cond, c->lock);
        }
    }
    apr_thread_mutex_unlock(c->lock);
    /* A plain return, not apr_thread_exit(): pthread_exit() unwinds the
     * stack behind AddressSanitizer's back, which then reports its own
     * thread teardown.  The thread's pool goes with its parent. */
    (void)t;
    return NULL;
}

/* A pool of its own (own allocator: pools are not thread-safe, and
 * sibling pools share their parent's allocator) below p. */
static apr_pool_t *own_pool(apr_pool_t *p)
{
    apr_allocator_t *alloc;
    apr_pool_t *wp;

    apr_allocator_create(&alloc);
    apr_pool_create_ex(&wp, p, NULL, alloc);
    apr_allocator_owner_set(alloc, wp);
    return wp;
}

rs_scanfile_crew_t *rs_scanfile_crew_start(const rs_scan_opts_t *o, apr_pool_t *p)
{
    int parallel_checks = o->workers > 1 && o->check_batons;
    int n = parallel_checks ? o->workers : o->hash_workers, i;
    rs_scanfile_crew_t *c;

    if (n <= 1 || (!parallel_checks && !o->hashes)) {
        return NULL;
    }
    c = apr_pcalloc(p, sizeof(*c));
    c->th = apr_pcalloc(p, sizeof(*c->th) * (apr_size_t)n);
    c->w = apr_pcalloc(p, sizeof(*c->w) * (apr_size_t)n);
    if (apr_thread_mutex_create(&c->lock, APR_THREAD_MUTEX_DEFAULT, p) != APR_SUCCESS
        || apr_thread_cond_create(&c->cond, p) != APR_SUCCESS) {
        return NULL;
    }
    for (i = 0; i < n; i++) {
        c->w[i].pool = own_pool(p);
        c->w[i].crew = c;
        c->w[i].baton = parallel_checks ? o->check_batons[i] : NULL;
        if (apr_thread_create(&c->th[c->n], NULL, worker_main, &c->w[i], p) != APR_SUCCESS) {
            break;
        }
        c->n++;
    }
    if (c->n == 0) {
        return NULL;
    }
    return c;
}

void rs_scanfile_crew_stop(rs_scanfile_crew_t *c)
{
    apr_status_t trv;
    int i;

    if (!c) {
        return;
    }
    apr_thread_mutex_lock(c->lock);
    c->closing = 1;
    apr_thread_cond_broadcast(c->cond);
    apr_thread_mutex_unlock(c->lock);
    for (i = 0; i < c->n; i++) {
        apr_thread_join(&trv, c->th[i]);
    }
}

/* Run batch b on the crew and wait for it. */
static void crew_run(rs_scanfile_crew_t *c, batch_t *b)
{
    apr_thread_mutex_lock(c->lock);
    c->b = b;
    c->seq++;
    c->busy = c->n;
    apr_thread_cond_broadcast(c->cond);
    while (c->busy > 0) {
        apr_thread_cond_wait(c->cond, c->lock);
    }
    c->b = NULL;
    apr_thread_mutex_unlock(c->lock);
}

void rs_scanfile_run(const rs_scan_opts_t *o, rs_scanfile_crew_t *crew, apr_pool_t *p, int dfd,
                     const char *dir, rs_scanfile_job_t *jobs, int njobs)
{
    int parallel_checks = o->workers > 1 && o->check_batons, i;
    void *baton = parallel_checks ? o->check_batons[0] : o->check_baton;
    batch_t b;

    if (!crew || njobs < 8) {
        /* No threads, or too little work to hand over. */
        for (i = 0; i < njobs; i++) {
            run_job(o, baton, p, dfd, dir, &jobs[i]);
        }
        return;
    }
    if (!parallel_checks) {
        /* The checks must stay on this thread: do them all first, then
         * spread only the reading and hashing (rs_scan_opts_t.hash_workers). */
        for (i = 0; i < njobs; i++) {
            job_check(o, baton, p, dir, &jobs[i]);
        }
    }
    b.o = o;
    b.dir = dir;
    b.dfd = dfd;
    b.jobs = jobs;
    b.njobs = (apr_uint32_t)njobs;
    b.checked = !parallel_checks;
    b.next = 0;
    crew_run(crew, &b);
}
