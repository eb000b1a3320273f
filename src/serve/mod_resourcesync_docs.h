/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_docs.h - the declarations of mod_resourcesync_docs.c. */
#ifndef MOD_RESOURCESYNC_DOCS_H
#define MOD_RESOURCESYNC_DOCS_H

#include "mod_resourcesync.h"

/* mod_resourcesync_docs.c */
int rs_docs_render(apr_pool_t *pconf, server_rec *s);
/* The strong ETag of a document's bytes: 24 hex digits of their MD5, in
 * quotes (in p). */
const char *rs_docs_etag(apr_pool_t *p, const char *body, apr_size_t len);

#endif
