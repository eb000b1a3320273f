/* SPDX-License-Identifier: Apache-2.0 */
/* rs_mounts.h - follow the mount table (Linux /proc/self/mountinfo).
 *
 * inotify reports neither a mount nor an unmount inside a watched tree:
 * a directory that becomes a mount point keeps its watch on the directory
 * below the mount, so the files of the mounted file system are never
 * seen, and an unmount shows a directory that was never written to.  The
 * kernel signals every change of the mount table to a poller of
 * /proc/self/mountinfo with POLLPRI (and POLLERR): the caller polls
 * rs_mounts_fd for POLLPRI, then asks rs_mounts_changed which mount points
 * appeared or went, and rescans the trees they affect.
 *
 * Lifecycle: one rs_mounts_t per process (the mount namespace is the
 * process's), made by rs_mounts_open, which reads the table once; its
 * descriptor is closed with the pool.  Used from one thread.
 */
#ifndef RS_MOUNTS_H
#define RS_MOUNTS_H

#include <apr_pools.h>
#include <apr_tables.h>

typedef struct rs_mounts_t rs_mounts_t;

/* Open the mount table at path (normally "/proc/self/mountinfo") and read
 * it.  Returns the cause (errno) when it cannot be opened or read. */
apr_status_t rs_mounts_open(rs_mounts_t **out, apr_pool_t *p, const char *path);

/* The descriptor to poll for POLLPRI: readable when the table changed
 * since the last poll. */
int rs_mounts_fd(const rs_mounts_t *m);

/* Read the table again; *changed gets the mount points (char *, unescaped,
 * from p) that appeared, went, or were mounted again (a new mount id)
 * since the last read, in no particular order (empty: none). */
apr_status_t rs_mounts_changed(rs_mounts_t *m, apr_pool_t *p, apr_array_header_t **changed);

/* 1 if a mount or unmount at mount point mp changes what the tree rooted
 * at dir shows: mp is dir, below it, or above it (both absolute, without
 * trailing "/" but for "/"). */
int rs_mounts_affects(const char *mp, const char *dir);

/* The mount point (field 5) of one line of mountinfo, unescaped (\040 and
 * the other octal escapes), from p; NULL if the line is malformed.  *id
 * gets the mount id (field 1). */
const char *rs_mounts_parse_line(apr_pool_t *p, const char *line, long *id);

#endif
