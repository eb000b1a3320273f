/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hashlane.h - the hashing lane: large files are hashed on a thread of
 * their own, so that they do not hold up the listing of other changes.
 *
 * A scan (full or targeted) asks rs_hashlane_defer (its rs_scan_defer_fn,
 * the baton an rs_hashlane_src_t), on any of its worker threads, for the
 * digests of every file of at least ResourceSyncLargeFileSize bytes whose
 * stored row no longer describes it.  The first time, the file is queued
 * and the scan leaves it as stored (a new file is not listed yet, a
 * changed one keeps its previous row), so the scan's transaction, the
 * Change List records of the other files and the next Resource List do
 * not wait for it.  The lane's thread reads the file and keeps the
 * digests with the version it read (device, inode, size, mtime, ctime).
 * The owner takes the finished files (rs_hashlane_ready) and reconciles
 * each again as an ordinary scan target: that scan asks again, gets the
 * digests if the file is still the version that was read, and journals
 * the file like any other change; then the owner forgets the entry
 * (rs_hashlane_forget).  A file that changed meanwhile is queued again
 * with its new version.
 *
 * Lifecycle: one lane per watcher (rs_hashlane_create); its thread runs
 * until rs_hashlane_stop or the destruction of the pool it was created
 * in (the watcher ends with _exit and never stops it).  Entries live from
 * the first request of a file until the owner forgets them after the
 * reconciliation that took their digests; they are allocated with malloc
 * so the lane's memory does not grow with the number of files it has
 * seen (rs_hashlane_stop frees those left).
 *
 * Races: the entry table, the queue and every entry field are touched
 * only under the lane's lock, by the scan workers, the lane's thread and
 * the owner.  The thread reads the file without the lock, from a copy of
 * the entry's path, and labels the digests with the version it read
 * (fstat of the open file), never with the one asked for: a scan that
 * finds another version queues the file again.  A file whose size or
 * mtime changed during the read is read again (up to RS_HASHLANE_ATTEMPTS
 * times, then kept without digests like rs_scanfile does, for the next
 * change to retry).
 */
#ifndef RS_HASHLANE_H
#define RS_HASHLANE_H

#include <sys/stat.h>
#include <apr_pools.h>
#include <apr_tables.h>
#include "rs_log.h"
#include "rs_scanopts.h"

/* Reads of one file that may find it changing before it is kept without
 * digests. */
#define RS_HASHLANE_ATTEMPTS 3

typedef struct rs_hashlane_t rs_hashlane_t;

/* What the lane tells its owner (for the status segment); any member may
 * be NULL.  Both are called with the lane's lock held. */
typedef struct rs_hashlane_cb_t {
    /* The number of files waiting changed (a scan worker's or the lane's
     * thread). */
    void (*queue)(void *baton, int nqueued);
    /* The lane's thread starts reading relpath of set, of size bytes, or
     * is done with it (set NULL).  Returns where the bytes read so far
     * go while it reads (NULL: nowhere). */
    volatile apr_int64_t *(*hashing)(void *baton, const char *set, const char *relpath,
                                     apr_int64_t size);
    void *baton;
} rs_hashlane_cb_t;

/* A set as the lane sees it: the baton of rs_hashlane_defer.  The owner
 * fills it and keeps it as long as the lane. */
typedef struct rs_hashlane_src_t {
    rs_hashlane_t *lane;     /* NULL: no lane (rs_hashlane_defer returns -1) */
    int slot;                /* a number of the set's own: the entries' key */
    const char *name;        /* the set's, as logged and shown */
    unsigned digests;        /* RS_HASH_* mask */
    const char *capture_dir; /* ResourceSyncChangeDump's captures, NULL: none */
    const void *owner;       /* the owner's, handed back with a ready file */
} rs_hashlane_src_t;

/* A file whose digests are ready, for the owner to reconcile again. */
typedef struct rs_hashlane_file_t {
    const rs_hashlane_src_t *src;
    const char *relpath;
} rs_hashlane_file_t;

/* Start a lane: its pool (an allocator of its own, below pool), lock and
 * thread.  cb and log must live as long as the lane; log gets a debug
 * line per file read.  On failure (*out NULL) large files are to be
 * hashed by the scans themselves. */
apr_status_t rs_hashlane_create(rs_hashlane_t **out, apr_pool_t *pool, const rs_hashlane_cb_t *cb,
                                const rs_logger_t *log);

/* Stop the lane's thread (after the file it reads) and free its entries;
 * the lane is not used afterwards.  Also run when pool goes. */
void rs_hashlane_stop(rs_hashlane_t *lane);

/* rs_scan_defer_fn (baton: an rs_hashlane_src_t): the digests of that
 * version (*out) if the lane has them (1), else queue the file (0); -1
 * without a lane or without memory (the scan hashes it). */
int rs_hashlane_defer(void *baton, const char *relpath, const char *path, const struct stat *sb,
                      rs_scan_digest_t *out);

/* The files finished since the last call (array of rs_hashlane_file_t in
 * p, each handed out once); returns their number. */
int rs_hashlane_ready(rs_hashlane_t *lane, apr_pool_t *p, apr_array_header_t **out);

/* After the reconciliation of a file handed out by rs_hashlane_ready:
 * drop its digests, unless it was queued again meanwhile. */
void rs_hashlane_forget(rs_hashlane_t *lane, const rs_hashlane_src_t *src, const char *relpath);

/* The files waiting to be read (for tests and the status). */
int rs_hashlane_queued(rs_hashlane_t *lane);

#endif
