/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_docs.h - the declarations of mod_resourcesync_docs.c. */
#ifndef MOD_RESOURCESYNC_DOCS_H
#define MOD_RESOURCESYNC_DOCS_H

#include "mod_resourcesync.h"

/* mod_resourcesync_docs.c */
int rs_docs_render(apr_pool_t *pconf, server_rec *s);

#endif
