/* SPDX-License-Identifier: Apache-2.0 */
/* rs_withdraw.h - withdrawal requests: the operator asks (rs-tool
 * withdraw), the watcher applies.
 *
 * The watcher is the only writer of a set's state, so a withdrawal -- the
 * packages that hold a version of a path published by mistake removed at
 * once and built again under new names without it -- is recorded here by
 * the tool and carried out by the watcher, which takes requests in the
 * order they were made, within a second, and at its start for requests
 * made while no watcher ran.  Files of <statedir>/withdraw:
 *
 *   <id>.req    a request: "set <name>\npath <relative path>\n", the path
 *               percent-encoded like a URI path (any bytes fit one line)
 *   <id>.done   its outcome, written by the watcher when it removed the
 *               request: "ok\n" or "error\n", then one line of text;
 *               read and removed by the tool, or removed after a day
 *
 * id is "<microseconds since the epoch>-<pid>" of the requesting tool
 * (zero-padded, so ids sort in time order).  Every file appears by
 * rename of a synced temporary file (".tmp-" names, removed when found
 * old).  A request written by root belongs to the state directory's
 * owner (the run user, who must read it); every file is mode 0600.
 * Nothing is followed: the directory is opened below the state
 * directory with O_NOFOLLOW, files are created O_EXCL | O_NOFOLLOW.
 */
#ifndef RS_WITHDRAW_H
#define RS_WITHDRAW_H

#include <apr_pools.h>
#include <apr_tables.h>

/* One request read back. */
typedef struct rs_withdraw_req_t {
    const char *id;
    const char *set; /* NULL: the file is not a request */
    const char *rel; /* the path relative to the set's root */
} rs_withdraw_req_t;

/* Whether rel may be withdrawn: a relative path (no leading '/'), no
 * empty, "." or ".." segment. */
int rs_withdraw_path_ok(const char *rel);

/* Record a request to withdraw rel from set (rs-tool).  *id gets its id.
 * Returns the cause of a failure. */
apr_status_t rs_withdraw_request(apr_pool_t *p, const char *statedir, const char *set,
                                 const char *rel, const char **id);

/* The requests waiting, oldest first (array of rs_withdraw_req_t). */
apr_status_t rs_withdraw_pending(apr_pool_t *p, const char *statedir, apr_array_header_t **reqs);

/* Write the outcome of request id (ok: 1 or 0, text one line) and
 * remove the request (the watcher). */
apr_status_t rs_withdraw_finish(apr_pool_t *p, const char *statedir, const char *id, int ok,
                                const char *text);

/* The outcome of request id, once it is there (then removed): *ok and
 * *text.  APR_ENOENT while the request waits. */
apr_status_t rs_withdraw_outcome(apr_pool_t *p, const char *statedir, const char *id, int *ok,
                                 const char **text);

#endif
