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

/* Whether a follower is to look now at the documents the writer stores
 * for the other nodes (Resource Lists, notification topics, dumps:
 * rs_blob), for one poller of ws (*seen: the set's notifications it has
 * seen; *next: its next look, monotonic; both start at 0): at once after
 * a notification of the set's stored documents (RS_BLOB_NOTIFY, sent at
 * the writer's commit), else every `every` while no LISTEN session is up
 * and every RS_FOLLOW_LOOK_IDLE while one is (a notification lost with a
 * session).  A caller that failed sets *next to its retry. */
#define RS_FOLLOW_LOOK_IDLE apr_time_from_sec(5)
int rs_follow_look(wset_t *ws, apr_uint64_t *seen, apr_time_t *next, apr_interval_time_t every,
                   apr_time_t now);

#endif
