/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_follow.h - a follower's Change Lists, fed by
 * LISTEN/NOTIFY (see mod_resourcesync_follow.c).  Driver's thread only. */
#ifndef MOD_RESOURCESYNC_FOLLOW_H
#define MOD_RESOURCESYNC_FOLLOW_H

#include <poll.h>
#include "mod_resourcesync_wset.h"

/* The event loop's preparation: with a PostgreSQL store and some set
 * written elsewhere, the LISTEN session (opened, or tried again when its
 * backoff ended) is put into pfd (returns 1; 0 when there is none);
 * while there is none, every followed set is due each second, and *next
 * is brought forward to that poll or to the next connection attempt. */
int rs_follow_prepare(rs_drive_t *d, struct pollfd *pfd, apr_time_t now, apr_time_t *next);

/* The LISTEN session's socket is readable: the sets its notifications
 * name become due; a lost session is said once and closed (polling and a
 * reconnection with a backoff take over). */
void rs_follow_readable(rs_drive_t *d, apr_time_t now);

/* The turn of ws, a set written elsewhere (rs_writer_poll): when due (a
 * notification, the poll, or its documents not seeded yet), its Change
 * Lists are followed from the store (rs_changes_follow). */
void rs_follow_set(wset_t *ws, apr_pool_t *p, apr_time_t now);

#endif
