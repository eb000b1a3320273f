/* SPDX-License-Identifier: Apache-2.0 */
/* rs_scanahead.c - see rs_scanahead.h: reading the tree's metadata ahead
 * of a full scan's walk, on a cold cache.
 *
 * A scan without hashes reads only metadata (directory blocks and
 * inodes).  With the kernel's caches warm that costs processor time
 * only, and the walk and the store writer already keep both processors
 * busy: more threads would only take turns with them.  With the caches
 * cold the walk waits for the disk one read at a time; a few threads
 * reading ahead of it (readdir, then fstatat of every entry, results
 * thrown away) keep several reads in flight and leave the walk a warm
 * cache.  So the threads start only when the walk finds the disk under
 * it, and pause again when they find everything cached themselves.
 *
 * Cold or warm: a directory counts as cold for a thread when reading it
 * made that thread read at least a block from a device per 8 entries
 * (getrusage(RUSAGE_THREAD)'s ru_inblock: the kernel charges a read to
 * the thread that submits it) and the thread spent most of that time
 * waiting (see is_cold).  The walk measures each directory it reads (rs_scanahead_note);
 * a cold one starts (or resumes) the readers; RS_SCANAHEAD_WARM
 * directories in a row that the readers found cached pause them until
 * the walk finds a cold one again.
 *
 * Order and bounds: the readers share a stack of directories (relative
 * to the root): each pops one, reads it, and pushes its subdirectories
 * so that the first is popped next, which follows the walk's own order
 * (depth first, subdirectories in readdir order) closely.  They stay at
 * most RS_SCANAHEAD_LEAD files ahead of the walk, so that on a machine
 * whose caches cannot hold the whole tree they do not push out what the
 * walk is about to read.  Only real directories (d_type, or fstatat for
 * DT_UNKNOWN) are pushed, never links, and no deeper than
 * RS_SCANAHEAD_DEPTH.
 *
 * Lifecycle: rs_scanahead_start (the walk's thread, before the walk)
 * starts the threads paused, or reading from the root when forced;
 * rs_scanahead_note (the walk's thread, after each directory) wakes
 * them; rs_scanahead_stop (the walk's thread, after the walk) stops
 * and joins them and frees everything (forced, as in tests, it first
 * waits until they have read the whole tree, so that what they read is
 * known).  The readers allocate with
 * malloc only (their stack entries), never from APR pools; their APR
 * thread pools hang below a pool with an allocator of its own.  Nothing
 * they do changes what the scan finds: they only warm the caches.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <apr_allocator.h>
#include <apr_atomic.h>
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>
#include "rs_scanahead.h"

#define RS_SCANAHEAD_THREADS 4
#define RS_SCANAHEAD_LEAD    50000
#define RS_SCANAHEAD_WARM    16
#define RS_SCANAHEAD_DEPTH   256

typedef struct ra_dir_t {
    struct ra_dir_t *next;
    int depth;
    char rel[1]; /* "" for the root */
} ra_dir_t;

struct rs_scanahead_t {
    apr_pool_t *pool; /* own allocator: the threads' pools */
    int rootfd;
    apr_thread_mutex_t *lock;
    apr_thread_cond_t *cond; /* broadcast on every change below */
    apr_thread_t *th[RS_SCANAHEAD_THREADS];
    int nth;
    /* Under lock: */
    ra_dir_t *stack;                /* the next directory on top */
    int seeded;                     /* the root was pushed */
    int active;                     /* readers may read */
    volatile apr_uint32_t stopping; /* also read without lock (apr_atomic) */
    int force;                      /* read everything, even warm (tests) */
    int busy;                       /* readers reading a directory */
    int warm_run;                   /* directories in a row found cached */
    apr_int64_t ahead_files;        /* entries the readers looked at */
    apr_int64_t walk_files;         /* the walk's count */
    apr_int64_t dirs;               /* directories the readers read */
};

void rs_scanahead_mark(rs_scanahead_mark_t *m)
{
    struct rusage ru;
    struct timespec ts;

    m->blocks = getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_inblock : 0;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    m->cpu = (apr_int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    m->wall = (apr_int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static ra_dir_t *dir_new(const char *parent, const char *name, int depth)
{
    apr_size_t pl = strlen(parent), nl = strlen(name);
    ra_dir_t *d = malloc(sizeof(*d) + pl + nl + 1);

    if (!d) {
        return NULL;
    }
    d->next = NULL;
    d->depth = depth;
    memcpy(d->rel, parent, pl);
    if (pl && nl) {
        d->rel[pl++] = '/';
    }
    memcpy(d->rel + pl, name, nl);
    d->rel[pl + nl] = '\0';
    return d;
}

/* Whether the work between mark `from` and now, on this thread, on a
 * directory of n entries, found it cold: it read at least one 512-byte
 * block from a device per 8 entries (an inode takes 256 bytes on ext4:
 * about a quarter of the inodes were not cached), and it spent most of
 * its time waiting (wall time at least twice the thread's processor
 * time).  A tree that is mostly cached, with a block evicted here and
 * there, is not cold: readers started for it would only take the
 * processors from the walk and the writer, which keep both busy. */
static int is_cold(const rs_scanahead_mark_t *from, apr_int64_t n)
{
    rs_scanahead_mark_t now;
    long blocks;

    rs_scanahead_mark(&now);
    blocks = now.blocks - from->blocks;
    return blocks > 0 && (apr_int64_t)blocks * 8 >= n
           && now.wall - from->wall >= 2 * (now.cpu - from->cpu);
}

/* Read directory d (readdir, fstatat of every entry); its subdirectories
 * are put on *subs, first one first.  Returns whether it was cold. */
static int read_dir(rs_scanahead_t *ra, const ra_dir_t *d, apr_int64_t *n, ra_dir_t **subs)
{
    rs_scanahead_mark_t before;
    ra_dir_t *head = NULL, **tail = &head;
    struct dirent *de;
    struct stat st;
    DIR *dp;
    int fd;

    rs_scanahead_mark(&before);
    fd =
        openat(ra->rootfd, *d->rel ? d->rel : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    *n = 0;
    if (fd < 0 || !(dp = fdopendir(fd))) {
        if (fd >= 0) {
            close(fd);
        }
        *subs = NULL;
        return is_cold(&before, 1);
    }
    while ((de = readdir(dp)) != NULL) {
        int is_dir = de->d_type == DT_DIR;
        if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2]))) {
            continue;
        }
        if ((++*n & 255) == 0 && apr_atomic_read32(&ra->stopping)) {
            break;
        }
        if (!is_dir) {
            if (fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
                continue;
            }
            is_dir = de->d_type == DT_UNKNOWN && S_ISDIR(st.st_mode);
        }
        if (is_dir && d->depth < RS_SCANAHEAD_DEPTH) {
            ra_dir_t *c = dir_new(d->rel, de->d_name, d->depth + 1);
            if (c) {
                *tail = c;
                tail = &c->next;
            }
        }
    }
    closedir(dp);
    *subs = head;
    return is_cold(&before, *n);
}

static void *APR_THREAD_FUNC reader_main(apr_thread_t *t, void *data)
{
    rs_scanahead_t *ra = data;

    apr_thread_mutex_lock(ra->lock);
    for (;;) {
        ra_dir_t *d, *subs, *last;
        apr_int64_t n;
        int cold;
        if (apr_atomic_read32(&ra->stopping)) {
            break;
        }
        if (!ra->active || !ra->stack
            || (ra->ahead_files - ra->walk_files > RS_SCANAHEAD_LEAD && !ra->force)) {
            apr_thread_cond_wait(ra->cond, ra->lock);
            continue;
        }
        d = ra->stack;
        ra->stack = d->next;
        ra->busy++;
        apr_thread_mutex_unlock(ra->lock);
        cold = read_dir(ra, d, &n, &subs);
        free(d);
        apr_thread_mutex_lock(ra->lock);
        ra->busy--;
        if (subs) {
            for (last = subs; last->next; last = last->next) {
            }
            last->next = ra->stack; /* the first subdirectory on top */
            ra->stack = subs;
        }
        ra->ahead_files += n;
        ra->dirs++;
        if (cold) {
            ra->warm_run = 0;
        }
        else if (++ra->warm_run >= RS_SCANAHEAD_WARM && !ra->force) {
            ra->active = 0; /* until the walk finds the disk again */
        }
        apr_thread_cond_broadcast(ra->cond);
    }
    apr_thread_mutex_unlock(ra->lock);
    (void)t;
    return NULL;
}

/* Let the readers read (under lock, or before they start), from the
 * root the first time. */
static void activate(rs_scanahead_t *ra)
{
    ra->active = 1;
    ra->warm_run = 0;
    if (!ra->seeded) {
        ra->stack = dir_new("", "", 0);
        ra->seeded = 1;
    }
}

rs_scanahead_t *rs_scanahead_start(apr_pool_t *p, int rootfd, int force)
{
    rs_scanahead_t *ra;
    apr_allocator_t *alloc;
    apr_pool_t *pool;
    int i;

    if (apr_allocator_create(&alloc) != APR_SUCCESS) {
        return NULL;
    }
    if (apr_pool_create_ex(&pool, p, NULL, alloc) != APR_SUCCESS) {
        apr_allocator_destroy(alloc);
        return NULL;
    }
    apr_allocator_owner_set(alloc, pool);
    ra = apr_pcalloc(pool, sizeof(*ra));
    ra->pool = pool;
    ra->rootfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
    if (ra->rootfd < 0
        || apr_thread_mutex_create(&ra->lock, APR_THREAD_MUTEX_DEFAULT, pool) != APR_SUCCESS
        || apr_thread_cond_create(&ra->cond, pool) != APR_SUCCESS) {
        if (ra->rootfd >= 0) {
            close(ra->rootfd);
        }
        apr_pool_destroy(pool);
        return NULL;
    }
    if (force) {
        ra->force = 1;
        activate(ra);
    }
    for (i = 0; i < RS_SCANAHEAD_THREADS; i++) {
        if (apr_thread_create(&ra->th[ra->nth], NULL, reader_main, ra, pool) == APR_SUCCESS) {
            ra->nth++;
        }
    }
    if (!ra->nth) {
        rs_scanahead_stop(ra, NULL);
        return NULL;
    }
    return ra;
}

void rs_scanahead_note(rs_scanahead_t *ra, const rs_scanahead_mark_t *from, apr_int64_t entries,
                       apr_int64_t walk_files)
{
    int cold = is_cold(from, entries);

    apr_thread_mutex_lock(ra->lock);
    ra->walk_files = walk_files;
    if (cold && !ra->active) {
        activate(ra);
    }
    /* Readers may wait for the walk to come closer, or to be woken. */
    if (ra->active) {
        apr_thread_cond_broadcast(ra->cond);
    }
    apr_thread_mutex_unlock(ra->lock);
}

void rs_scanahead_stop(rs_scanahead_t *ra, apr_int64_t *dirs)
{
    apr_status_t trv;
    int i;

    if (!ra) {
        if (dirs) {
            *dirs = 0;
        }
        return;
    }
    apr_thread_mutex_lock(ra->lock);
    while (ra->force && (ra->stack || ra->busy)) {
        apr_thread_cond_wait(ra->cond, ra->lock); /* forced: the whole tree */
    }
    apr_atomic_set32(&ra->stopping, 1);
    apr_thread_cond_broadcast(ra->cond);
    apr_thread_mutex_unlock(ra->lock);
    for (i = 0; i < ra->nth; i++) {
        apr_thread_join(&trv, ra->th[i]);
    }
    while (ra->stack) {
        ra_dir_t *d = ra->stack;
        ra->stack = d->next;
        free(d);
    }
    if (dirs) {
        *dirs = ra->dirs;
    }
    close(ra->rootfd);
    apr_pool_destroy(ra->pool);
}
