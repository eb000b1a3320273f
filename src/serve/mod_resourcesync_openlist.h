/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_openlist.h - the declarations of mod_resourcesync_openlist.c. */
#ifndef MOD_RESOURCESYNC_OPENLIST_H
#define MOD_RESOURCESYNC_OPENLIST_H

#include "mod_resourcesync.h"
#include "mod_resourcesync_status.h"

/* mod_resourcesync_openlist.c: children serve the open Change List. */
/* Serve the open Change List of a set, whose extent is cur (handler). */
int rs_openlist_serve(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur);

#endif
