/* SPDX-License-Identifier: Apache-2.0 */
/* rs_path.h - absolute paths as strings: one at or below another, and
 * trailing slashes.
 *
 * Paths are compared as text, component by component ("/srv/www" holds
 * "/srv/www/data" but not "/srv/wwwdata"); nothing is resolved on disk
 * (no symbolic links, no "..").  The configuration compares sets'
 * directories, DocumentRoot and the state directory this way; the
 * watcher compares mount points with sets' roots.  Paths relative to a
 * set's root are joined here too (rs_path_join).
 */
#ifndef RS_PATH_H
#define RS_PATH_H

#include <apr_pools.h>

/* 1 if path a is b or below b, else 0.  Both absolute, without a trailing
 * "/" (except "/" itself, which holds every path). */
int rs_path_within(const char *a, const char *b);

/* A copy of path in p without its trailing "/"s; "/" (or "//...") stays
 * "/". */
const char *rs_path_strip_slash(apr_pool_t *p, const char *path);

/* The path of entry name of directory dir, both relative to a set's root
 * ("" is the root itself): "dir/name" in p, or name (not copied) when dir
 * is "". */
const char *rs_path_join(apr_pool_t *p, const char *dir, const char *name);

#endif
