/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_os.h - the declarations of mod_resourcesync_os.c. */
#ifndef MOD_RESOURCESYNC_OS_H
#define MOD_RESOURCESYNC_OS_H

#include "mod_resourcesync.h"
#include "rs_db.h"

/* mod_resourcesync_os.c (who may do what in the state directory: see
 * that file) */
/* NULL if the state directory dir (absolute) exists as a writable
 * directory (not a symbolic link) or could be created; else why not (in
 * ptemp).  Changes nothing on disk (it runs under `httpd -t`). */
const char *rs_os_statedir_check(apr_pool_t *ptemp, const char *dir);
/* Create dir (and missing parents, 0755) and, when root, give it to the
 * run user; mode 0700.  Nothing inside it is touched, and a symbolic link
 * at dir is refused, never followed.  NULL, or what failed with its cause
 * (in ptemp). */
const char *rs_os_statedir_make(apr_pool_t *ptemp, const char *dir);
/* The watcher's first step, as the run user, before the store is opened:
 * the state directory's own entries private (directories 0700, files
 * 0600; nothing followed), snapshots/ created.  Logs what it changed, and
 * a failure. */
void rs_os_statedir_prepare(apr_pool_t *p, server_rec *s);
/* Right after the store is opened: everything below the state directory
 * private, unless the store records that this was done (then it is set). */
void rs_os_statedir_private(apr_pool_t *p, server_rec *s, rs_db_t *store);

#endif
