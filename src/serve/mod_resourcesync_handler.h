/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_handler.h - the declarations of mod_resourcesync_handler.c. */
#ifndef MOD_RESOURCESYNC_HANDLER_H
#define MOD_RESOURCESYNC_HANDLER_H

#include "mod_resourcesync.h"

/* mod_resourcesync_handler.c */
int rs_handler_translate(request_rec *r);
int rs_handler_map(request_rec *r);
int rs_handler_handle(request_rec *r);
int rs_handler_link(request_rec *r);

#endif
