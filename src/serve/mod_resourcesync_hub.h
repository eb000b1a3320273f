/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_hub.h - the declarations of mod_resourcesync_hub.c. */
#ifndef MOD_RESOURCESYNC_HUB_H
#define MOD_RESOURCESYNC_HUB_H

#include "mod_resourcesync.h"
#include "mod_resourcesync_handler.h"

/* mod_resourcesync_hub.c: the hub's endpoint <prefix>/hub (a handler
 * hook that runs before rs_handler_handle, after access control). */
int rs_hub_handle(request_rec *r);

#endif
