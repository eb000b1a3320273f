/* SPDX-License-Identifier: Apache-2.0 */
/* rs_beneath.h - files of a set's tree, reached without following what
 * was swapped in after the scan.
 *
 * A dump is built from inventory rows that a scan wrote a while ago; in
 * between, anyone who can write the tree may replace a directory on a
 * row's path with a symbolic link to a directory outside the set, or a
 * file with a link, a FIFO or a device.  Opening the row's path by name
 * would then read what the link points to.  Here a path is walked from
 * the root's descriptor one component at a time, each directory opened
 * with O_NOFOLLOW | O_DIRECTORY, the last component without following
 * it either: a link anywhere on the way fails the walk (ELOOP, ENOTDIR).
 * The one exception is the link the set itself lists: a symbolic link to
 * a regular file whose real path stays inside the root (rs_scan lists it
 * with its target's metadata).  Its target is resolved with realpath,
 * refused unless it is below the root's real path, and walked the same
 * way from the root; the caller then compares device, inode, size and
 * mtime with the row (rs_beneath_same), so a target swapped meanwhile is
 * never taken for the listed one.
 *
 * Lifecycle: rs_beneath_open_root opens the root (the configured path,
 * which may itself be a link the operator made) and keeps its descriptor
 * and real path until the pool is cleared; one directory descriptor is
 * cached (rows come directory by directory), also closed with the pool.
 * A tree is used by one thread at a time.
 */
#ifndef RS_BENEATH_H
#define RS_BENEATH_H

#include <sys/stat.h>
#include <apr_pools.h>

typedef struct rs_beneath_t rs_beneath_t;

/* Open the tree at root (a directory).  Returns APR_SUCCESS or the cause
 * (errno) why root cannot be opened. */
apr_status_t rs_beneath_open_root(rs_beneath_t **out, const char *root, apr_pool_t *p);

/* Metadata of rel (a path relative to the root, no leading '/', no "."
 * or ".." segment) reached as described above, into *sb (of the link's
 * target for a listed link, and *link is then 1).  Returns 0 or an errno
 * (ENOENT: gone; ELOOP, ENOTDIR, EXDEV: a link or a non-directory on the
 * way, or a link leading out of the root). */
int rs_beneath_stat(rs_beneath_t *t, const char *rel, struct stat *sb, int *link);

/* Open rel for reading (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
 * never blocking on a FIFO or opening a device: a non-regular file is
 * refused with EINVAL before it is opened, and checked again on the
 * descriptor), reached as for rs_beneath_stat; *sb gets the descriptor's
 * metadata.  Returns the descriptor, or -1 with errno set. */
int rs_beneath_open(rs_beneath_t *t, const char *rel, struct stat *sb);

/* Whether sb describes the version a row records: a regular file with
 * that device, inode, size and mtime (ns). */
int rs_beneath_same(const struct stat *sb, apr_int64_t dev, apr_int64_t ino, apr_int64_t size,
                    apr_int64_t mtime_ns);

#endif
