/* SPDX-License-Identifier: Apache-2.0 */
/* rs_above.h - the access files above a set's root.
 *
 * httpd reads the access files (.htaccess, AccessFileName) of every
 * directory from "/" down to a file that AllowOverride (or
 * AllowOverrideList) lets it read, so a file above a set's root decides
 * what is served in the whole set as much as one inside it.  Inside the
 * set, each access file has an inventory row (rs_scanaccess.c); above
 * it, the files of the directories the caller names (the glue asks httpd
 * which) are described together by one text, their *state*: one line
 * per directory and name, in the order given,
 *
 *     <dir>/<name> TAB <dev> <inode> <size> <mtime ns> <ctime ns>
 *     <dir>/<name> TAB -          (no such file)
 *     <dir>/<name> TAB !<errno>   (it cannot be looked at: EACCES ...)
 *
 * of the file a symbolic link leads to (httpd opens it so); the content
 * is never read.  A state that differs from the one stored when the set's
 * files were last all decided means: decide every file again.  The stored
 * state is in the store's meta table under "access-above:<set>", written
 * by the caller only after a scan that re-decided everything committed,
 * so a change made while no watcher ran, or during a scan that failed, is
 * found by the next one.  A state that was never stored (a set's first
 * scan, or a store written before this existed) differs from every state
 * but the empty one.
 */
#ifndef RS_ABOVE_H
#define RS_ABOVE_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "rs_db.h"

/* The directories strictly above root (absolute, canonical, no trailing
 * '/'), from "/" down to root's parent: those httpd may read access files
 * in.  From p. */
apr_array_header_t *rs_above_dirs(apr_pool_t *p, const char *root);

/* The state (see the top) of the access files names (array of char*) in
 * each of dirs (absolute directories, array of char*), from p.  Empty
 * when there is no directory or no name. */
const char *rs_above_state(apr_pool_t *p, const apr_array_header_t *dirs,
                           const apr_array_header_t *names);

/* The path of the first access file whose line differs between states a
 * and b, or NULL when they are equal; from p.  Either may be NULL (never
 * stored), which differs from every state but the empty one (nothing to
 * follow). */
const char *rs_above_diff(apr_pool_t *p, const char *a, const char *b);

/* The state stored for set (*state NULL: none), from p. */
apr_status_t rs_above_load(rs_db_t *db, apr_pool_t *p, const char *set, const char **state);

/* Store state for set (outside a transaction: in one of its own that
 * begins with the set's fence, rs_db_meta_put_set; RS_LEASE_LOST, nothing
 * stored, when another node writes the set now). */
apr_status_t rs_above_save(rs_db_t *db, apr_pool_t *p, const char *set, const char *state);

#endif
