/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_watcher.h - the declarations of mod_resourcesync_watcher.c. */
#ifndef MOD_RESOURCESYNC_WATCHER_H
#define MOD_RESOURCESYNC_WATCHER_H

#include "mod_resourcesync.h"

/* mod_resourcesync_watcher.c */
/* post_config (real pass): fork this generation's watcher, registered as
 * an other child of the MPM, respawned if it dies.  No sets: no watcher. */
int rs_watcher_start(apr_pool_t *pconf, server_rec *s);

#endif
