/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubqueue.h - the built-in hub's queue in a shared store: subscription
 * requests on their way from the node that received them to the node that
 * writes their set.
 *
 * Several nodes behind a balancer each receive hub requests into their own
 * spool; only the set's writer (rs_lease) may verify and store them.  A
 * node's intake that takes up a spooled request of a set it does not
 * write moves it here (table hub_queue: id, setname, record, node,
 * queued), and the writer's intake takes the rows of the sets it writes
 * from here, in id order, as if they were its own spool's.
 *
 * Lifecycle of a row (see docs/ARCHITECTURE.md, "Built-in hub:
 * subscriptions"):
 *   1. put: by whichever node received the request, NOT fenced: any node
 *      may enqueue (a request is not the set's state, and the receiver
 *      writes no set).  Committed before the spool file is removed, so a
 *      request is always in a spool file or in a row, or both (a node
 *      killed between the insert and the removal leaves both: the file
 *      is queued again, and the writer verifies twice; storing is
 *      idempotent).
 *   2. taken: read by the set's writer (rs_hubqueue_list, rs_hubqueue_get),
 *      never marked: a writer that dies leaves the row as it was, for the
 *      next writer.
 *   3. deleted, fenced: in the same transaction that stores or deletes the
 *      subscription (rs_hubqueue_delete_in, inside the caller's
 *      rs_db_begin_set), or, after a denial or an unverified request, in a
 *      transaction of its own that begins with the set's fence
 *      (rs_hubqueue_delete): a writer that lost the set deletes nothing,
 *      and the row is applied once, by the writer that deletes it.
 *   4. forgotten, unfenced (rs_hubqueue_forget): rows of a set this node
 *      does not configure, older than a bound the caller chooses (a set
 *      no longer configured anywhere: nobody will ever take them).
 *
 * Engine code: APR only; the connection is the caller's thread's.
 */
#ifndef RS_HUBQUEUE_H
#define RS_HUBQUEUE_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>
#include "rs_db.h"

/* One queued request. */
typedef struct rs_hubqueue_row_t {
    apr_int64_t id;     /* grows with each insert: the order rows are taken in */
    const char *set;    /* the set of the request's topic */
    const char *record; /* the spool record (rs_hubreq_record_format) */
    const char *node;   /* the node that received it (ResourceSyncNodeName) */
    apr_time_t queued;  /* when it was queued, µs since the epoch (that node's clock) */
} rs_hubqueue_row_t;

/* The queue's DDL at schema version `version` (NULL-terminated, or NULL),
 * and its tables (rs_schema). */
const char *const *rs_hubqueue_schema(int version);
const char *const *rs_hubqueue_tables(void);

/* Queue the request record of set, received by node at queued: one
 * INSERT, durable when it returns APR_SUCCESS.  Not fenced (see above). */
apr_status_t rs_hubqueue_put(rs_db_t *db, const char *set, const char *record, const char *node,
                             apr_time_t queued);

/* The number of rows of set into *n. */
apr_status_t rs_hubqueue_count(rs_db_t *db, const char *set, apr_int64_t *n);

/* The rows of set (every set: NULL), in id order, at most limit of them,
 * into *out (an array of rs_hubqueue_row_t from p). */
apr_status_t rs_hubqueue_list(rs_db_t *db, apr_pool_t *p, const char *set, int limit,
                              apr_array_header_t **out);

/* The row id into *row (strings from p); APR_ENOENT when it is gone. */
apr_status_t rs_hubqueue_get(rs_db_t *db, apr_pool_t *p, apr_int64_t id, rs_hubqueue_row_t *row);

/* The sets with queued rows and their counts, ordered by set: into *sets
 * (const char *) and *counts (apr_int64_t), parallel arrays from p. */
apr_status_t rs_hubqueue_counts(rs_db_t *db, apr_pool_t *p, apr_array_header_t **sets,
                                apr_array_header_t **counts);

/* Delete row id of set in a transaction of its own that begins with set's
 * fence (rs_db_begin_set): RS_LEASE_LOST, nothing deleted, when this node
 * does not write the set now.  *deleted (may be NULL) gets 1 when the row
 * was there. */
apr_status_t rs_hubqueue_delete(rs_db_t *db, const char *set, apr_int64_t id, int *deleted);

/* Delete row id in the caller's open transaction (which began with the
 * row's set's fence); *n (may be NULL) gets 1 when the row was there, 0
 * when another transaction deleted it first. */
apr_status_t rs_hubqueue_delete_in(rs_db_t *db, apr_int64_t id, int *n);

/* Delete, unfenced, the rows of set queued before `before`; *n (may be
 * NULL) gets their number.  For rows of a set this node does not
 * configure (no fence can be had for it). */
apr_status_t rs_hubqueue_forget(rs_db_t *db, const char *set, apr_time_t before, int *n);

#endif
