/* SPDX-License-Identifier: Apache-2.0 */
/* rs_capture.h - the bytes of journaled versions, kept for Change Dumps.
 *
 * A set with ResourceSyncChangeDump keeps, in its capture directory
 * (<statedir>/capture/<set>), one file per distinct content that a
 * journal record names: the bytes the journal hashed, named by their
 * SHA-256 digest (RS_CAPTURE_HASH), whatever digests the set lists: a
 * set that lists only MD5 still computes SHA-256 for what it captures
 * (rs_set_t.digests), so two contents with the same MD5 -- a collision
 * made on purpose -- never share a capture.  Being content-addressed, a
 * metadata-only update (same digest) costs nothing and a file changed
 * back to an earlier content shares its capture.  A capture named by
 * another digest (by a version of the module that named them by the
 * set's first digest) is never looked up: its name is not a SHA-256
 * digest, so the records that would need it find no capture (their
 * list gets no package) and it is collected.
 *
 * Lifecycle of one capture: rs_capture_open makes a temporary file
 * `.tmp-XXXXXX` in the directory; the hashing code writes every byte it
 * reads into it (rs_hash_fd_tee: one read, one extra write); when the
 * version read turns out consistent, rs_capture_keep gives the file the
 * version's mtime and renames it to its digest (atomic; an existing file
 * of that name already holds those bytes and is kept); otherwise
 * rs_capture_drop removes it.  No fsync: a crash may lose a capture or
 * leave a short one, and a capture's size is checked against the
 * record's length before it is packaged (rs_cdump).  `.tmp-` files left
 * by a crash are removed by rs_capture_gc.
 *
 * Threads: rs_capture_open/keep/drop use no pool and no shared state;
 * scan workers and the hashing lane call them concurrently.
 *
 * Garbage collection: rs_capture_gc removes every capture whose name is
 * not a digest that retained journal records need, asking for each
 * capture in turn (rs_cdump_gc asks the journal's index).
 */
#ifndef RS_CAPTURE_H
#define RS_CAPTURE_H

#include <apr_pools.h>
#include <apr_time.h>
#include "rs_hash.h"

/* A capture being written. */
typedef struct rs_capture_tmp_t {
    int fd;          /* -1: none */
    char path[4096]; /* the temporary file */
    char dir[4096];
} rs_capture_tmp_t;

/* Start a capture in dir (created if missing).  Returns 0, or an errno
 * (t->fd is then -1). */
int rs_capture_open(rs_capture_tmp_t *t, const char *dir);

/* Finish a capture whose bytes are the version with mtime_ns and digest
 * (the name): set its mtime, close it, rename it to dir/digest.  Returns
 * 0 or an errno (the temporary file is then removed). */
int rs_capture_keep(rs_capture_tmp_t *t, const char *digest, apr_int64_t mtime_ns);

/* Drop an unfinished capture (no-op when t->fd is -1). */
void rs_capture_drop(rs_capture_tmp_t *t);

/* The digest that names captures, and its index in a digest array. */
#define RS_CAPTURE_HASH       RS_HASH_SHA256
#define RS_CAPTURE_HASH_INDEX 2

/* The key of a version: its SHA-256 digest (NULL when it has none, e.g.
 * a record journaled before captures were named by it). */
const char *rs_capture_key(const char *const hash[RS_HASH_COUNT]);

/* dir/key, from p. */
const char *rs_capture_path(apr_pool_t *p, const char *dir, const char *key);

/* Whether dir holds a capture named key (no pool: any thread). */
int rs_capture_has(const char *dir, const char *key);

/* What the retained records say of the capture named key (a SHA-256
 * digest), in p: *kept 1 when a version that needs its bytes is
 * retained; *withdrawn a time after which no record needs them (the
 * deletion of the path whose versions they hold; 0: none).  Any other
 * status than APR_SUCCESS stops the collection. */
typedef apr_status_t rs_capture_use_fn(void *baton, apr_pool_t *p, const char *key, int *kept,
                                       apr_time_t *withdrawn);

/* Remove the captures of dir that use says are not kept (a file not
 * named by a digest is asked about too: no record names it), and
 * temporary files.  Files whose inode changed
 * after `young` (apr time; 0: none) are kept whatever their name: a scan
 * worker or the hashing lane may be writing one, or have made one whose
 * record is not committed yet.  Except a capture that use says was
 * withdrawn: it goes unless kept or its inode changed after that time (a
 * scan captured the same bytes again since, for a record to come).
 * The directory is read one file at a time (use is asked once per file
 * but temporary ones, in a pool cleared per file): memory does not grow with the
 * number of captures.  *removed and *bytes (either may be NULL) get the
 * number removed and the bytes that remain.  A missing directory is no
 * error; use's failure is returned (files already removed stay
 * removed). */
apr_status_t rs_capture_gc(const char *dir, rs_capture_use_fn *use, void *baton, apr_time_t young,
                           apr_pool_t *p, int *removed, apr_int64_t *bytes);

/* The bytes of the files in dir (0 when it is missing). */
apr_int64_t rs_capture_bytes(const char *dir, apr_pool_t *p);

#endif
