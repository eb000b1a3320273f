/* SPDX-License-Identifier: Apache-2.0 */
/* rs_notifydest.h - the delivery destinations of the notification outbox
 * (table notify_dests of rs_notify, schema version 2).
 *
 * A row is one (set, topic, kind, url): kind "fat" or "ping" for a hub
 * the set publishes to (ResourceSyncNotifyHub), "sub" for a subscriber
 * of the built-in hub.  `cursor` is the id of the last notification of
 * the topic delivered to it: delivery sends the sealed notifications
 * after it, in id order, one at a time, and moves it only after the
 * destination acknowledged (2xx) or the notification was given up.
 *
 * Threads: like rs_notify, the functions use the connection given and
 * belong to the thread that uses it.
 */
#ifndef RS_NOTIFYDEST_H
#define RS_NOTIFYDEST_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>
#include "rs_db.h"

#define RS_NOTIFYDEST_FAT  "fat"
#define RS_NOTIFYDEST_PING "ping"
#define RS_NOTIFYDEST_SUB  "sub"

typedef struct rs_notifydest_t {
    const char *set, *topic, *kind, *url;
    const char *secret;     /* NULL: none */
    apr_time_t lease_until; /* µs, 0: none */
    apr_int64_t cursor;
    int attempts;
    apr_time_t next_try;    /* µs, 0: now */
    int last_status;        /* HTTP status of the last attempt, 0: none */
    const char *last_error; /* NULL: none */
} rs_notifydest_t;

/* Every row (array of rs_notifydest_t, strings in p), ordered by set,
 * topic, kind, url. */
apr_status_t rs_notifydest_list(rs_db_t *db, apr_pool_t *p, apr_array_header_t **out);

/* The writes below (ensure, delete, update) each run outside a
 * transaction, in one of their own that begins with the set's fence
 * (rs_db_exec_set): RS_LEASE_LOST, the row as it was, when another node
 * writes the set now. */

/* Insert the row (set, topic, kind, url) with the given cursor unless it
 * exists (then it is left as it is).  *added (may be NULL) gets 1 when
 * it was inserted. */
apr_status_t rs_notifydest_ensure(rs_db_t *db, const char *set, const char *topic, const char *kind,
                                  const char *url, apr_int64_t cursor, int *added);

/* Delete one row. */
apr_status_t rs_notifydest_delete(rs_db_t *db, const rs_notifydest_t *d);

/* Write the delivery state of d (cursor, attempts, next_try, last_status,
 * last_error) to its row.  *found (may be NULL) gets 0 when the row is
 * gone. */
apr_status_t rs_notifydest_update(rs_db_t *db, const rs_notifydest_t *d, int *found);

/* The smallest cursor of the rows (set, topic, kind); *min 0 and *found
 * 0 when there is none. */
apr_status_t rs_notifydest_min_cursor(rs_db_t *db, const char *set, const char *topic,
                                      const char *kind, apr_int64_t *min, int *found);

/* Sealed notifications of (set, topic) after id `after`, counted, and
 * the newest sealed id (0: none). */
apr_status_t rs_notifydest_backlog(rs_db_t *db, const char *set, const char *topic,
                                   apr_int64_t after, apr_int64_t *count, apr_int64_t *newest);

#endif
