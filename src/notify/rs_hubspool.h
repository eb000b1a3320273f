/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubspool.h - the watcher's view of the built-in hub's spool
 * directory: which requests arrived, at a cost per new request.
 *
 * Children write each request as a temporary file "tmp-*" and rename it
 * to "<time>-<rand>.req" (rs_hubreq.h).  The follower lists the directory
 * once (when it starts, and again only if inotify lost events) and from
 * then on learns names from inotify alone:
 *
 *   - a "*.req" name renamed into the directory (IN_MOVED_TO) or closed
 *     after writing (IN_CLOSE_WRITE: a file written in place, e.g. by
 *     hand) is a new request;
 *   - a "tmp-*" name created (IN_CREATE) is a write in progress; it is
 *     forgotten when renamed away or removed.  One not written to for the
 *     given age belongs to a child killed mid-write: rs_hubspool_sweep
 *     removes it.
 *
 * So following the spool never lists or sorts it while requests come
 * and go: a flood of requests costs one event each.  A listing is sorted
 * by name (arrival order); events come in the order of the renames.  A
 * name may be reported more than once (a listing after an overflow
 * repeats what events reported); the caller ignores names it already
 * has.  The directory removed under the follower is created again and
 * listed at the next take.
 *
 * Not thread-safe (one owner thread); Linux only.  Engine code: APR and
 * inotify.
 */
#ifndef RS_HUBSPOOL_H
#define RS_HUBSPOOL_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>

typedef struct rs_hubspool_t rs_hubspool_t;

/* What a listing found (rs_hubspool_take): every file that holds a
 * reservation of the spool's gate (requests and temporary files). */
typedef struct rs_hubspool_census_t {
    int listed; /* this take listed the directory */
    apr_uint32_t files;
    apr_uint64_t bytes;
} rs_hubspool_census_t;

/* Follow the spool directory dir (created with mode perms when missing).
 * Nothing is read before the first rs_hubspool_take.  Returns the cause
 * of a failure (the inotify instance or the watch). */
apr_status_t rs_hubspool_open(rs_hubspool_t **out, apr_pool_t *p, const char *dir,
                              apr_fileperms_t perms);

/* The descriptor to poll for input (readable: events wait). */
int rs_hubspool_fd(const rs_hubspool_t *s);

/* Append to names (an array of const char *, from p) the requests'
 * names that arrived since the last take: every one in the spool, sorted
 * by name, at the first take and after lost events (census->listed then
 * 1, with the files and bytes found); else those the events report, in
 * their order.  Returns the cause of a failed listing (names then
 * empty). */
apr_status_t rs_hubspool_take(rs_hubspool_t *s, apr_pool_t *p, apr_array_header_t *names,
                              rs_hubspool_census_t *census);

/* Remove the temporary files (those the events or a listing showed)
 * last modified more than age before now: children killed mid-write.
 * *files and *bytes get what was removed (for the gate).  Costs the
 * number of writes in progress, no listing. */
void rs_hubspool_sweep(rs_hubspool_t *s, apr_time_t now, apr_interval_time_t age,
                       apr_uint32_t *files, apr_uint64_t *bytes);

#endif
