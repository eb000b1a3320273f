/* SPDX-License-Identifier: Apache-2.0 */
/* rs_deliverlook.h - what a turn of the delivery thread reads once per
 * (set, topic, cursor): how many sealed notifications follow the cursor,
 * and the first of them, whose payload every request that carries it
 * shares by reference.
 *
 * Lifecycle.  A turn keeps its looks in a hash (in the turn's pool):
 * rs_deliverlook_get reads the store at the first call for a (set, topic,
 * cursor) and returns the same look afterwards; the look holds one
 * reference to its payload (malloc'd).  A request that carries the
 * payload takes a reference of its own (refs++) and gives it back at its
 * completion (rs_deliverlook_unref); rs_deliverlook_release gives back
 * the turn's references at the end of the turn.  So memory grows with the
 * notifications in flight, not with the subscribers, and a payload is
 * freed when its last reference goes.  One thread only: the counts are
 * not atomic.
 */
#ifndef RS_DELIVERLOOK_H
#define RS_DELIVERLOOK_H

#include <apr_hash.h>
#include <apr_pools.h>
#include "rs_db.h"
#include "rs_notify.h"

/* A sealed notification's payload (malloc'd). */
typedef struct rs_deliverlook_payload_t {
    apr_int64_t id;
    apr_time_t until;
    char *buf;
    apr_size_t len;
    int refs;
} rs_deliverlook_payload_t;

typedef struct rs_deliverlook_t {
    apr_int64_t count;              /* sealed notifications after the cursor */
    apr_int64_t newest;             /* the newest of them (0: none) */
    rs_deliverlook_payload_t *next; /* the first of them, NULL: none or failed */
} rs_deliverlook_t;

/* The look of (set, topic, cursor) in looks (a hash in p, the turn's),
 * read from db (the backlog, rs_notifydest_backlog) and box (the next
 * notification) at its first call; a read that fails gives count 0. */
const rs_deliverlook_t *rs_deliverlook_get(rs_db_t *db, rs_notify_t *box, apr_pool_t *p,
                                           apr_hash_t *looks, const char *set, const char *topic,
                                           apr_int64_t cursor);

/* The end of a turn: its references to payloads go. */
void rs_deliverlook_release(apr_pool_t *p, apr_hash_t *looks);

/* Give back a reference to pl (NULL: nothing); the last one frees it. */
void rs_deliverlook_unref(rs_deliverlook_payload_t *pl);

#endif
