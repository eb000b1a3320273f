/* SPDX-License-Identifier: Apache-2.0 */
/* rs_notifyseal.h - when a set's open change notification is sealed,
 * the sweep for open ones nobody announced, and the pruning of the
 * outbox (rs_notify), decided with explicit times.
 *
 * Lifecycle of a change notification in the watcher: every journal record
 * of a set with ResourceSyncNotify on is added to the set's open change
 * notification by its recorder, in the transaction that appends it.
 * After the commit of the first record after a seal, the driver notes
 * when the notification becomes due (rs_notifyseal_changed: now + the
 * delay; records that follow within the delay join it); the event loop
 * wakes then (rs_notifyseal_next) and seals every open one
 * (rs_notifyseal_poll), so no change waits longer than the delay, also
 * while changes keep coming; one that holds ResourceSyncMaxEntries is
 * sealed at once.  A watcher that dies between a commit and the seal
 * leaves the notification open in the store; the next watcher seals every
 * open one at its first poll (rs_notifyseal_start), so nothing is lost.
 *
 * Clocks: `now` is monotonic (rs_time_mono: every time kept in the
 * struct is on it); `wall` is apr_time_now(), the clock of the outbox's
 * datetimes (the retention cutoff).  Both are arguments, never read
 * here.
 *
 * What the caller does after a poll is returned as flags (the topic files
 * and the framework check are the glue's): the unit never writes files.
 * Threads: the state belongs to the driver's thread, like the outbox
 * connection it is used with.
 */
#ifndef RS_NOTIFYSEAL_H
#define RS_NOTIFYSEAL_H

#include <apr_pools.h>
#include <apr_time.h>
#include "rs_log.h"
#include "rs_notify.h"

/* How often open notifications nobody announced (records committed by a
 * failed scan and published later) are looked for, and how often the
 * outbox is pruned. */
#define RS_NOTIFYSEAL_SWEEP apr_time_from_sec(1)
#define RS_NOTIFYSEAL_PRUNE apr_time_from_sec(60)

/* Flags returned by rs_notifyseal_start and rs_notifyseal_poll. */
#define RS_NOTIFYSEAL_STARTED \
    1 /* the first poll ran: rebuild both topic files
                                    * and run the framework check */
#define RS_NOTIFYSEAL_SEALED \
    2 /* change notifications were sealed: rewrite
                                    * the change topic's file */

/* A set's sealing state (zeroed: not started, nothing due). */
typedef struct rs_notifyseal_t {
    apr_time_t due;    /* when the open notification is looked at (0: none) */
    apr_time_t sweep;  /* the next sweep */
    apr_time_t prune;  /* the next pruning */
    int started;       /* rs_notifyseal_start ran in this watcher */
    int fw_checked;    /* the glue's framework check of this start is done
                             * (kept here with the rest of the set's notification
                             * state; this unit never reads it) */
    apr_int64_t shown; /* the glue's: the newest change notification the
                        * change topic file shows (0: not written in this
                        * watcher yet; this unit never reads it) */
} rs_notifyseal_t;

/* After a commit that appended `appended` records carried by the set's
 * open notification: if none is due yet, it becomes due at now + delay
 * (records that follow within the delay join it). */
void rs_notifyseal_changed(rs_notifyseal_t *st, apr_int64_t appended, apr_time_t delay,
                           apr_time_t now);

/* When the caller's event loop must poll next for this set (0: nothing
 * due; the sweep is driven by the loop's own tick). */
apr_time_t rs_notifyseal_next(const rs_notifyseal_t *st);

/* The first look at the set in this watcher: every open notification (a
 * previous watcher's) is sealed.  Returns RS_NOTIFYSEAL_STARTED, with
 * RS_NOTIFYSEAL_SEALED when any was sealed.  n may be NULL (no outbox):
 * then the failure is logged as a seal failure.  A seal leaves nothing
 * open (nothing due) or, when it failed, looks again after
 * RS_NOTIFYSEAL_SWEEP.  o: how the set's
 * notifications are written (o->set names the set in log lines). */
int rs_notifyseal_start(rs_notifyseal_t *st, rs_notify_t *n, const rs_notify_opts_t *o,
                        apr_time_t now, const rs_logger_t *log, apr_pool_t *p);

/* The driver's poll of the set: rs_notifyseal_start if it did not run
 * yet; else a sweep when due (an open notification nobody announced
 * becomes due now; every RS_NOTIFYSEAL_PRUNE, sealed notifications of
 * both topics older than wall - RS_NOTIFY_RETENTION that every
 * destination passed are pruned), then, when the open one is due, every
 * open one is sealed.  A seal that fails is logged ("set %s: cannot seal
 * its change notifications") and tried again after RS_NOTIFYSEAL_SWEEP.
 * Returns the flags of what the caller has to do (0: nothing). */
int rs_notifyseal_poll(rs_notifyseal_t *st, rs_notify_t *n, const rs_notify_opts_t *o,
                       apr_time_t now, apr_time_t wall, const rs_logger_t *log, apr_pool_t *p);

#endif
