/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_openlist.h - the declarations of mod_resourcesync_openlist.c. */
#ifndef MOD_RESOURCESYNC_OPENLIST_H
#define MOD_RESOURCESYNC_OPENLIST_H

#include "mod_resourcesync.h"
#include "mod_resourcesync_status.h"

/* mod_resourcesync_openlist.c: children serve the open Change List. */
/* Per child: the lock of its read connection to the store. */
void rs_openlist_child_init(apr_pool_t *p);
/* Serve the open Change List of a set, whose extent is cur (handler). */
int rs_openlist_serve(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur);

#endif
