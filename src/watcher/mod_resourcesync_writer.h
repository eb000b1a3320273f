/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_writer.h - one writer per set (see
 * mod_resourcesync_writer.c for the rule).  Driver's thread only. */
#ifndef MOD_RESOURCESYNC_WRITER_H
#define MOD_RESOURCESYNC_WRITER_H

#include "mod_resourcesync_wset.h"

/* Whether this node writes ws's set now (1), taking its store lock on the
 * driver's connection; 0 when another node holds it (ws->elsewhere, said
 * once, the status entry marked) or the store failed (noted). */
int rs_writer_take(wset_t *ws, apr_time_t now);

/* Reconcile a set this node has just begun to write, as at a start: its
 * links, then a full scan against the stored inventory (p cleared). */
void rs_writer_start(wset_t *ws, apr_pool_t *p);

/* The event loop's turn of a set written elsewhere: its events dropped,
 * the lock tried again when due, the set taken over when it frees. */
void rs_writer_poll(wset_t *ws, apr_pool_t *p, apr_time_t now);

/* A new driver connection (the old one's session locks are gone): every
 * set this node wrote takes its lock again; one another node took
 * meanwhile becomes elsewhere. */
void rs_writer_retake(rs_drive_t *d);

#endif
