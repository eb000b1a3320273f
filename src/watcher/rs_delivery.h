/* SPDX-License-Identifier: Apache-2.0 */
/* rs_delivery.h - the delivery thread's table: the destination rows of
 * the outbox (notify_dests: hubs the sets publish to, kinds "fat" and
 * "ping", and the built-in hub's subscribers, kind "sub") and the turns
 * that send each of them its sealed notifications.
 *
 * Lifecycle.  The glue (mod_resourcesync_deliver.c) makes the table
 * (rs_delivery_create) in the thread's pool, then the sender (rs_websub)
 * with rs_delivery_done as its completion callback and the table as its
 * baton.  On the thread: rs_delivery_open binds the sender and the
 * thread's store connection (busy timeout 0), rs_delivery_reconcile makes
 * the hub rows match the configuration (both tried again until they
 * succeed), then rs_delivery_turn and rs_websub_run take turns for ever:
 *
 *   refresh   every RS_DELIVERY_REFRESH, or at once when the turn is
 *             told the driver sealed or stored a notification: the rows
 *             are read again into a new table (pool), carrying over what
 *             is only in memory (a request in flight, state not yet
 *             written);
 *   status    every RS_DELIVERY_STATUS the status file (rs_deliverstat)
 *             is renewed: a line per topic and per row;
 *   step      a row that is idle and due gets the next sealed
 *             notification after its cursor submitted under its own key
 *             ("<kind>|<set>|<topic>|<url>"): one request in flight per
 *             row, at most max_parallel in all;
 *   flush     the rows whose state changed (dirty) are written, one
 *             statement each; the first failure (the store busy) leaves
 *             the rest for the next turn.
 *
 * Cursors are decided by rs_deliverpolicy: a row's cursor moves only
 * after a 2xx or when a notification is given up, so it is never ahead of
 * what the destination acknowledged.  Payloads are shared per (set,
 * topic, cursor) within a turn (rs_deliverlook).
 *
 * Configuration.  What the configuration says (which sets have
 * notifications on, the hubs they publish to, a topic's URL and Link
 * header, the signature algorithm, the address policy, the retry time,
 * the backlog limit) comes from hooks the glue fills; a set and a hub are
 * opaque handles to the engine.  Wall-clock times are µs (apr_time_now()
 * in the glue, explicit in tests): the turn's is an argument, a
 * completion's comes from hooks->now.  One thread only.
 */
#ifndef RS_DELIVERY_H
#define RS_DELIVERY_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>
#include "rs_db.h"
#include "rs_log.h"
#include "rs_notifydest.h"
#include "rs_websub.h"

#define RS_DELIVERY_REFRESH apr_time_from_sec(1) /* the rows read again */
#define RS_DELIVERY_STATUS  apr_time_from_sec(2) /* the status file renewed */

typedef struct rs_delivery_t rs_delivery_t;

/* What the glue does for the table; baton is handed to every hook. */
typedef struct rs_delivery_hooks_t {
    void *baton;
    /* The wall clock, for a completion's time. */
    apr_time_t (*now)(void *baton);
    /* The set called name when it is configured with notifications on,
     * else NULL (its rows are skipped). */
    const void *(*set)(void *baton, const char *name);
    /* The hub (url, ping) as set publishes to it, NULL when not
     * configured (any more: its rows are skipped). */
    const void *(*hub)(void *baton, const void *set, const char *url, int ping);
    /* The names (const char *) of the sets with notifications on, in
     * configuration order, allocated in p. */
    apr_array_header_t *(*sets)(void *baton, apr_pool_t *p);
    /* The configured hubs (rs_deliverpolicy_hub_t), allocated in p. */
    apr_array_header_t *(*hubs)(void *baton, apr_pool_t *p);
    /* set's ResourceSyncNotifyRetry and its server's
     * ResourceSyncHubMaxBacklog. */
    apr_time_t (*retry)(void *baton, const void *set);
    apr_int64_t (*max_backlog)(void *baton, const void *set);
    /* Fill in what the configuration says of the request to row (hub:
     * NULL for a subscriber): a fat or deliver request's headers and
     * signature algorithm, a ping's topic URL, the address filter (with a
     * baton living as long as the process), all allocated in p. */
    void (*request)(void *baton, apr_pool_t *p, const void *set, const void *hub,
                    const rs_notifydest_t *row, rs_websub_req_t *req);
    /* The newest notification of (set, topic) that the topic serves now
     * (its file replaced in this watcher; 0: none yet).  A ping hub
     * fetches the topic when pinged, so a ping never announces a
     * notification the topic does not serve yet.  NULL: no limit. */
    apr_int64_t (*shown)(void *baton, const void *set, const char *topic);
    /* Whether this node writes set (its watcher holds the set's lease,
     * rs_lease): the rows of a set another node writes are that
     * node's to send, drop or end, and are left alone here.  NULL: every
     * set is this node's. */
    int (*writes)(void *baton, const void *set);
} rs_delivery_hooks_t;

/* A new table in a subpool of p (the thread's: it lives as long as the
 * thread), writing its status file below state_dir, sending at most
 * max_parallel requests at once.  hooks and log are kept (not copied). */
rs_delivery_t *rs_delivery_create(apr_pool_t *p, const char *state_dir, int max_parallel,
                                  const rs_delivery_hooks_t *hooks, const rs_logger_t *log);

/* Bind the sender (made with rs_delivery_done and dv) and the thread's
 * store connection db; opens the outbox.  On failure (returned) nothing
 * is bound and the caller may close db. */
apr_status_t rs_delivery_open(rs_delivery_t *dv, rs_websub_t *ws, rs_db_t *db);

/* The hub rows made to match hooks->hubs (rs_deliverpolicy_reconcile).
 * The first store failure is returned (the caller tries again). */
apr_status_t rs_delivery_reconcile(rs_delivery_t *dv);

/* One turn at wall time now (woken: a notification was sealed or stored
 * since the last turn): refresh when woken or due, the status file when
 * due, step the rows that asked for it, write the dirty ones.  Returns
 * the time of the next refresh (the caller runs the sender until then,
 * at most a second). */
apr_time_t rs_delivery_turn(rs_delivery_t *dv, apr_time_t now, int woken);

/* The sender's completion callback (baton: the table): what it does to
 * the row is rs_deliverpolicy's; the row is written at the next turn. */
void rs_delivery_done(void *baton, const rs_websub_result_t *r);

#endif
