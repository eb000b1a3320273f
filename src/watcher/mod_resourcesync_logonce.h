/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_logonce.h - the declarations of mod_resourcesync_logonce.c. */
#ifndef MOD_RESOURCESYNC_LOGONCE_H
#define MOD_RESOURCESYNC_LOGONCE_H

#include "mod_resourcesync.h"

/* mod_resourcesync_logonce.c: the driver's logger (an rs_logger_t fn,
 * baton: the server_rec); warnings and errors once per watcher life. */
void rs_logonce_init(apr_pool_t *pool);
void rs_logonce_log(void *baton, int level, apr_status_t rv, const char *msg);
/* Forget the messages seen: the next occurrence of each is logged again. */
void rs_logonce_forget(void);
/* A warning or error (with its cause, rv != 0) becomes the status page's
 * last error; any thread of the watcher. */
void rs_logonce_note(apr_status_t rv, const char *msg);

#endif
