/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_childstore.h - the declarations of
 * mod_resourcesync_childstore.c: a child's read connection to the store. */
#ifndef MOD_RESOURCESYNC_CHILDSTORE_H
#define MOD_RESOURCESYNC_CHILDSTORE_H

#include "mod_resourcesync.h"

/* Per child: the lock of its read connection to the store. */
void rs_childstore_init(apr_pool_t *p);

/* The journal records of set from next to last (at most limit), read
 * from the store of history (rs_journal_records) into *more; a failure
 * logged once per episode. */
apr_status_t rs_childstore_records(request_rec *r, apr_pool_t *p, const char *history,
                                   const char *set, apr_int64_t next, apr_int64_t last, int limit,
                                   apr_array_header_t **more);

/* Whether the store of history holds a file named name of (set, kind)
 * in any generation (rs_blob_named): *found. */
apr_status_t rs_childstore_stored(request_rec *r, const char *history, const char *set,
                                  const char *kind, const char *name, int *found);

#endif
