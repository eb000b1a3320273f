/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_writer.h - one writer per set (see
 * mod_resourcesync_writer.c for the rule).  Driver's thread only, but for
 * the fence, which rs_db_begin_set calls on any thread. */
#ifndef MOD_RESOURCESYNC_WRITER_H
#define MOD_RESOURCESYNC_WRITER_H

#include "mod_resourcesync_wset.h"

/* At the watcher's start, before it starts a thread: this watcher's
 * token, the process's fence (rs_db_fence_install) and, with a shared
 * store, the thread that releases the leases when a signal ends the
 * watcher. */
void rs_writer_init(rs_drive_t *d);

/* Whether this node writes ws's set now (1), taking its lease; 0 when
 * another node holds it (ws->elsewhere, said once, the status entry
 * marked) or the store failed (noted). */
int rs_writer_take(wset_t *ws, apr_time_t now);

/* Reconcile a set this node has just begun to write, as at a start: its
 * links, then a full scan against the stored inventory (p cleared). */
void rs_writer_start(wset_t *ws, apr_pool_t *p);

/* The event loop's turn of a set written elsewhere: its events dropped,
 * the lease tried again when due, the set taken over when it frees. */
void rs_writer_poll(wset_t *ws, apr_pool_t *p, apr_time_t now);

/* The event loop's heartbeat: a set whose fence was refused
 * (ws->lease_lost) becomes elsewhere (rs_writer_lost); every lease this
 * node holds that no write renewed for a third of ResourceSyncFailover is
 * renewed (a shared store's only), one found lost makes its set elsewhere, a failing store is the
 * set's store failure. */
void rs_writer_heartbeat(rs_drive_t *d, apr_time_t now);

/* A new driver connection after a store failure: every set this node
 * writes renews its lease (one another node took meanwhile becomes
 * elsewhere), one whose first take failed takes it; the failure of every
 * set written elsewhere ends (it is followed again). */
void rs_writer_retake(rs_drive_t *d);

/* ws's fence or renewal found its lease lost (RS_LEASE_LOST, noted in
 * ws->lease_lost by rs_storefail_note): the set becomes elsewhere, said once at notice with the reason, and is taken
 * again only through rs_writer_take (a new epoch). */
void rs_writer_lost(wset_t *ws);

#endif
