/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_statuspage.h - the declarations of mod_resourcesync_statuspage.c. */
#ifndef MOD_RESOURCESYNC_STATUSPAGE_H
#define MOD_RESOURCESYNC_STATUSPAGE_H

#include "mod_resourcesync.h"

/* mod_resourcesync_statuspage.c */
int rs_statuspage_handle(request_rec *r);

#endif
