/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_seed.h - the declarations of mod_resourcesync_seed.c. */
#ifndef MOD_RESOURCESYNC_SEED_H
#define MOD_RESOURCESYNC_SEED_H

#include "mod_resourcesync.h"
#include "mod_resourcesync_status.h"

/* mod_resourcesync_seed.c */
/* Fill the nsets entries of a status segment that no other process uses
 * yet (each with its set's name) from what the state directory holds,
 * read by a short-lived process of the run user; waits for it a bounded
 * time.  Entries it could not fill are left empty (logged). */
void rs_seed_fill(apr_pool_t *pconf, server_rec *s, rs_status_set_t *sets, int nsets);

#endif
