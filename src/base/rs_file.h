/* SPDX-License-Identifier: Apache-2.0 */
/* rs_file.h - file-system primitives of the state directory.
 *
 * Everything the watcher publishes appears by an atomic rename of a
 * complete, synced file or directory, so a child serves either the old or
 * the new bytes, never a mixture, and a crash at any point leaves either
 * the old or the new state.  These helpers are the only place that knows
 * how that is done (write, flush, fsync, close, rename, fsync of the
 * directory).
 */
#ifndef RS_FILE_H
#define RS_FILE_H

#include <apr_pools.h>
#include <apr_file_io.h>

/* fsync a directory, making a rename, creation or removal in it durable.
 * Returns the cause (errno as apr_status_t) on failure. */
apr_status_t rs_file_sync_dir(const char *dir);

/* Open path for writing (created, truncated, buffered with a buffer of
 * bufsize bytes from p; 0: APR's default). */
apr_status_t rs_file_create(apr_file_t **f, const char *path, apr_size_t bufsize, apr_pool_t *p);

/* Flush, fsync and close f: the file is complete on disk when this
 * returns APR_SUCCESS.  f is closed in every case; the first error is
 * returned. */
apr_status_t rs_file_finish(apr_file_t *f);

/* Flush and close f, and have the kernel start writing its pages to disk
 * without waiting for them: a file of a batch made durable together
 * later, by rs_file_sync_path before whatever publishes the batch.  The
 * disk then writes each file while the next ones are made, instead of
 * the writer waiting for every file in turn.  f is closed in every case;
 * the first error is returned (a write error may show only at the sync). */
apr_status_t rs_file_finish_later(apr_file_t *f);

/* Writes the content of a file being replaced. */
typedef apr_status_t rs_file_write_fn(void *baton, apr_file_t *f, apr_pool_t *p);

/* Replace path atomically: write a temporary file ".tmp-<name>" beside it
 * through fn, finish it (rs_file_finish), rename it over path and fsync
 * the directory.  On failure the temporary file is removed, path is left
 * as it was, and the cause is returned. */
apr_status_t rs_file_replace(apr_pool_t *p, const char *path, rs_file_write_fn *fn, void *baton);

/* rs_file_replace with the len bytes at buf as the content. */
apr_status_t rs_file_replace_buf(apr_pool_t *p, const char *path, const void *buf, apr_size_t len);

/* The bytes of the regular files in dir (not below it): all of them, or
 * (suffix not NULL) those whose names end in suffix after at least one
 * other character.  0 when dir cannot be read. */
apr_int64_t rs_file_dir_bytes(apr_pool_t *p, const char *dir, const char *suffix);

/* fsync the file or directory at path. */
apr_status_t rs_file_sync_path(const char *path);

/* Remove dir and everything below it (a missing dir is success).
 * Symbolic links are removed, never followed, at any level: a symbolic
 * link at dir itself is removed and its target left alone, and each
 * directory is opened below the one that listed it (openat, O_NOFOLLOW),
 * so one swapped for a symbolic link during the removal is not entered. */
apr_status_t rs_file_remove_tree(apr_pool_t *p, const char *dir);

/* Read a small file of this process's user that another principal may
 * have put there: path is opened without following a symbolic link at its
 * last component and without blocking (O_NOFOLLOW | O_NONBLOCK: a FIFO
 * never hangs the caller), and refused unless it is a regular file owned
 * by the effective user and at most max bytes long.  On success *buf
 * holds its *len bytes and a NUL after them (from p).  Returns the cause
 * of a failed open (APR_ENOENT: none; ELOOP: a symbolic link), APR_EFTYPE
 * for a file that is not regular, EPERM for one of another owner,
 * APR_FROM_OS_ERROR(EFBIG) for one longer than max, or a read error. */
apr_status_t rs_file_read_small(apr_pool_t *p, const char *path, apr_size_t max, char **buf,
                                apr_size_t *len);

/* What rs_file_restrict_tree did. */
typedef struct rs_file_restrict_t {
    apr_int64_t changed; /* entries whose mode it set */
    apr_int64_t foreign; /* entries of another owner, left as they are */
    apr_int64_t other;   /* symbolic links, FIFOs, sockets, devices: left */
} rs_file_restrict_t;

/* rs_file_restrict_tree's depth for the whole tree. */
#define RS_FILE_ALL_LEVELS 32

/* Make dir and what is below it, down to depth levels (1: dir's own
 * entries; RS_FILE_ALL_LEVELS: everything), private to this process's
 * user: directories mode 0700, regular files 0600, whatever the mode was
 * (an older version's, or a umask's).  Nothing is followed: dir is opened
 * with O_NOFOLLOW, each entry below the directory that lists it, and a
 * symbolic link (or a FIFO, socket or device) is counted in out->other
 * and left alone; an entry of another owner is counted in out->foreign
 * and neither changed nor entered.  Returns APR_SUCCESS or the first
 * error (the walk goes on past it); out (may be NULL) counts what was
 * done. */
apr_status_t rs_file_restrict_tree(apr_pool_t *p, const char *dir, int depth,
                                   rs_file_restrict_t *out);

/* Create path if it does not exist (its mtime then says when). */
apr_status_t rs_file_touch(apr_pool_t *p, const char *path);

/* Whether path exists (any type). */
int rs_file_exists(apr_pool_t *p, const char *path);

/* Whether the regular file at path holds the bytes needle (n of them,
 * 0 < n < 32 KiB): read in 64 KiB chunks, never whole; a link or a FIFO
 * in its place is neither followed nor waited on (0). */
int rs_file_holds(const char *path, const char *needle, apr_size_t n);

#endif
