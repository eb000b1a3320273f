/* SPDX-License-Identifier: Apache-2.0 */
/* rs_setlock.h - a set's lock file: is the set in use by a watcher?
 *
 * Every watcher holds a shared (read) lock, an fcntl() record lock, on
 * <statedir>/locks/<set> for each set it serves, from its start to its
 * end: the kernel drops the lock when the process ends, however it ends
 * (kill -9 included), so a stale lock cannot exist.  Shared, because at a
 * restart the old watcher may still hold its lock while the new one takes
 * its own.
 *
 * A tool that removes a set's state (rs-tool forget-set) takes the
 * exclusive (write) lock without waiting: it fails while any watcher
 * serves the set, and tells which process holds it.  While the tool holds
 * it, a watcher starting for that set waits for its shared lock, so it
 * never reads state that is being removed.
 */
#ifndef RS_SETLOCK_H
#define RS_SETLOCK_H

#include <apr_errno.h>
#include <apr_pools.h>

/* Take the shared lock on the set's lock file, waiting while an
 * exclusive one is held; creates <statedir>/locks (mode 0700) and the file (0600)
 * when missing.  The descriptor stays open (and the lock held) until the
 * process ends; it is not inherited by exec'd programs.  Returns the cause
 * (errno) of a failure. */
apr_status_t rs_setlock_hold(apr_pool_t *p, const char *statedir, const char *set);

/* Take the exclusive lock without waiting.  APR_SUCCESS: *fd is the open,
 * locked descriptor (close it to release).  APR_EAGAIN: a process holds a
 * lock on it; *holder is its pid (0 when the kernel does not say).
 * Another status: the cause (errno) of the failure to create or lock the
 * file. */
apr_status_t rs_setlock_take(apr_pool_t *p, const char *statedir, const char *set, int *fd,
                             long *holder);

#endif
