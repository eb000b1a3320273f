/* SPDX-License-Identifier: Apache-2.0 */
/* rs_deliverpolicy.h - the delivery thread's decisions about one
 * destination row (rs_notifydest: a hub a set publishes to, kinds "fat"
 * and "ping", or a subscriber of the built-in hub, kind "sub"): when it
 * is due, when a subscription ends (lease expired, backlog over the
 * limit, the subscriber's 410 or refusal), what a completion does to the
 * row (the cursor moves after a 2xx or when a hub's notification is
 * given up; a retryable failure backs off), and which lines are logged.
 *
 * The row's fields are changed in memory only: the caller writes them to
 * the store (rs_notifydest_update) and deletes the row of a subscription
 * that ended (rs_notifydest_delete).  Times are wall-clock µs
 * (apr_time_now(): the rows' next_try and lease_until are), an argument,
 * never read here.  Log lines go through the caller's logger, with the
 * levels and texts the delivery thread always had.
 */
#ifndef RS_DELIVERPOLICY_H
#define RS_DELIVERPOLICY_H

#include <apr_pools.h>
#include <apr_time.h>
#include "rs_log.h"
#include "rs_notifydest.h"
#include "rs_websub.h"

/* The retry back-off, in seconds: doubling from the base with full
 * jitter, at most the cap; a Retry-After is taken as given up to the
 * cap. */
#define RS_DELIVERPOLICY_BACKOFF_BASE 1
#define RS_DELIVERPOLICY_BACKOFF_CAP  3600

/* What the caller does with the row. */
#define RS_DELIVERPOLICY_WAIT 0 /* nothing now */
#define RS_DELIVERPOLICY_GO   1 /* go on (look at its backlog; send the next) */
#define RS_DELIVERPOLICY_DROP 2 /* the subscription ended (logged): delete the row */

/* A hub a set publishes to, as configured (ResourceSyncNotifyHub of a
 * set with notifications on). */
typedef struct rs_deliverpolicy_hub_t {
    const char *set;
    const char *url;
    int ping; /* ping mode, else fat */
} rs_deliverpolicy_hub_t;

/* Make the hub rows (kinds fat and ping) of db match the configured hubs
 * (array of rs_deliverpolicy_hub_t), at watcher start: a missing row of a
 * configured hub is added for each topic with its cursor at the topic's
 * newest sealed notification (a new hub gets what is sealed from now on,
 * not the past; logged `info`); a row of a hub no longer configured is
 * deleted (logged `info`).  Subscribers' rows are left alone.  Each
 * write begins with its set's fence: the rows of a set this node does
 * not write now (RS_LEASE_LOST) are left as they are, which is no
 * failure (the caller reconciles again once it writes the set).  The
 * first store failure is returned (the caller tries again). */
apr_status_t rs_deliverpolicy_reconcile(rs_db_t *db, const apr_array_header_t *hubs,
                                        const rs_logger_t *log, apr_pool_t *p);

/* Whether row may be sent to now: WAIT while a request is in flight or
 * before its next_try; DROP a subscriber (sub) whose lease ended before
 * now; else GO. */
int rs_deliverpolicy_ready(const rs_notifydest_t *row, int sub, int inflight, apr_time_t now,
                           const rs_logger_t *log);

/* With `count` sealed notifications after row's cursor: WAIT when none;
 * DROP a subscriber that has more than max_backlog
 * (ResourceSyncHubMaxBacklog) undelivered; else GO. */
int rs_deliverpolicy_backlog(const rs_notifydest_t *row, int sub, apr_int64_t count,
                             apr_int64_t max_backlog, const rs_logger_t *log);

/* The completion r of the request that carried notification `sending`
 * (its until: sending_until) to row, at now.  Records the outcome in the
 * row (last_status, last_error copied into p) and then:
 *   2xx                 the cursor moves to `sending`, attempts and
 *                       next_try reset;
 *   retryable failure   (and a subscriber's answer other than 2xx and
 *                       410, WebSub 7) attempts + 1, next_try after the
 *                       back-off or Retry-After; at a hub, a notification
 *                       whose until is older than now - retry
 *                       (ResourceSyncNotifyRetry) is given up instead
 *                       (logged, the cursor moves);
 *   410 of a subscriber the subscription ends (DROP);
 *   a subscriber's refusal without an answer (an address refused, ...)
 *                       the subscription ends (DROP);
 *   a hub's refusal     (also 410) logged, the notification is skipped
 *                       (the cursor moves).
 * Returns DROP or GO. */
int rs_deliverpolicy_done(rs_notifydest_t *row, int sub, apr_int64_t sending,
                          apr_time_t sending_until, apr_time_t retry, const rs_websub_result_t *r,
                          apr_time_t now, const rs_logger_t *log, apr_pool_t *p);

#endif
