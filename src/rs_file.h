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
apr_status_t rs_file_create(apr_file_t **f, const char *path, apr_size_t bufsize,
                            apr_pool_t *p);

/* Flush, fsync and close f: the file is complete on disk when this
 * returns APR_SUCCESS.  f is closed in every case; the first error is
 * returned. */
apr_status_t rs_file_finish(apr_file_t *f);

/* Writes the content of a file being replaced. */
typedef apr_status_t rs_file_write_fn(void *baton, apr_file_t *f, apr_pool_t *p);

/* Replace path atomically: write a temporary file ".tmp-<name>" beside it
 * through fn, finish it (rs_file_finish), rename it over path and fsync
 * the directory.  On failure the temporary file is removed, path is left
 * as it was, and the cause is returned. */
apr_status_t rs_file_replace(apr_pool_t *p, const char *path, rs_file_write_fn *fn,
                             void *baton);

/* rs_file_replace with the len bytes at buf as the content. */
apr_status_t rs_file_replace_buf(apr_pool_t *p, const char *path, const void *buf,
                                 apr_size_t len);

/* fsync the file or directory at path. */
apr_status_t rs_file_sync_path(const char *path);

/* Remove dir and everything below it (a missing dir is success).
 * Symbolic links are removed, never followed. */
apr_status_t rs_file_remove_tree(apr_pool_t *p, const char *dir);

/* Create path if it does not exist (its mtime then says when). */
apr_status_t rs_file_touch(apr_pool_t *p, const char *path);

/* Whether path exists (any type). */
int rs_file_exists(apr_pool_t *p, const char *path);

#endif
