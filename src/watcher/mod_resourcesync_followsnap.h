/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_followsnap.h - the declarations of
 * mod_resourcesync_followsnap.c. */
#ifndef MOD_RESOURCESYNC_FOLLOWSNAP_H
#define MOD_RESOURCESYNC_FOLLOWSNAP_H

#include "mod_resourcesync_wset.h"

/* The event loop's turn of a set another node writes (from rs_writer_poll,
 * at every wake-up, at most every 200 ms): at most every
 * RS_FOLLOWSNAP_EVERY the store's snapshot-gen:<set> is read (one
 * statement); a generation newer than the one in ws's status entry is
 * copied from the store (rs_followsnap_copy) and published as this
 * node's, and the node's older generations are pruned by the writer's
 * rule.  A failure is logged once per episode, the copy removed, and
 * tried again after RS_FOLLOWSNAP_RETRY; the generation in service
 * stays.  Nothing with a store of one node's (SQLite). */
void rs_followsnap_poll(wset_t *ws, apr_pool_t *p, apr_time_t now);

#endif
