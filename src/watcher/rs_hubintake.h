/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubintake.h - the built-in hub's intake: the watcher's side of
 * subscription requests.
 *
 * Thread.  With ResourceSyncHub on, the watcher's glue
 * (mod_resourcesync_hubintake.c) makes the intake (rs_hubintake_create)
 * and starts one thread that opens it (rs_hubintake_open: its rs_websub
 * sender, the spool followed, its store connection, opened again after a
 * failure) and then takes turns for ever: rs_hubintake_sweep once a
 * second, rs_hubintake_drain, rs_hubintake_wait.  The intake shares
 * nothing with the driver's thread but the log and the spool gate (in the
 * status segment).
 *
 * Lifecycle of a spool file (see docs/ARCHITECTURE.md, "Built-in hub:
 * subscriptions"):
 *   1. Arrival.  The spool is followed by rs_hubspool: listed once at the
 *      start (the gate's counts set from that listing), then new names
 *      come from inotify, so a flood costs one event and one file read
 *      per request.  Each new file is read once to learn its server (its
 *      set's), its client and its callback's host, and queued in the
 *      scheduler (rs_hubsched) under (client, host).  A malformed file,
 *      one of a set no longer configured, and a version 1 record marked
 *      deny are removed without any request going out.
 *   2. Start.  The scheduler starts what may start (at most
 *      RS_HUBINTAKE_MAX_RUNNING, PER_HOST per callback host, PER_CLIENT
 *      per client, clients and hosts in turn): a hanging callback holds
 *      PER_HOST slots, never the intake.  The file is read again; a new
 *      subscription beyond the server's total or per-client limit gets a
 *      denial GET; otherwise the verification GET (rs_hubverify).  Every
 *      GET carries the policy of the server that received the request
 *      (hooks.addr_filter, unless hooks.host_allowed), judged on the
 *      address connected to, after DNS, new or reused connection
 *      (rs_websub): a name that resolves to a refused address is never
 *      called.  Each request gives up after the verification timeout.
 *   3. Confirmed (a 2xx whose body is the challenge): the address the GET
 *      was sent to is the subscription's callback address; a new
 *      subscription beyond the per-address limit gets a denial GET,
 *      anything else is stored or deleted (rs_hubsub), one statement.
 *   4. The file is removed only after its outcome is durable, and its
 *      reservation given back to the gate: a watcher killed at any point
 *      before leaves the file, and the next watcher does it again;
 *      storing and deleting are idempotent (a renewal of the same row, a
 *      delete of nothing), so a request is applied once.  A store failure
 *      keeps the confirmed request for a later attempt.
 * Requests go out under the key "cb|<callback>": those for one callback
 * one at a time in the order they were started.
 *
 * Several nodes (a shared store, see rs_hubqueue.h): at step 2, before
 * any GET, a spool file's request of a set this node does not write
 * (rs_hubstate_writes) is queued in the store for the set's writer, and
 * its file removed once the row committed (at most hooks.queue_max rows
 * of a set from this node; beyond, it waits in the spool).  At each sweep
 * the writer's intake takes the queued rows of the sets it writes into
 * its scheduler like spool files ("queued-<id>"); a row is deleted in the
 * fenced transaction of its outcome, or after a denial or an unverified
 * request in a fenced delete: a writer that lost the set leaves it to the
 * next.  A spool file's store write refused by the fence is queued too.
 *
 * Once a second (rs_hubintake_sweep) the intake also deletes
 * subscriptions whose lease ended, removes "tmp-*" files older than a
 * minute (left by a child killed mid-write; their reservations given
 * back) and, when something changed, rewrites <statedir>/hub/intake
 * (subscriptions per topic and the last outcome; the status page shows
 * it).
 *
 * Engine code: APR only; the server lookups are hooks (rs_hubstate.h).
 */
#ifndef RS_HUBINTAKE_H
#define RS_HUBINTAKE_H

#include "rs_hubstate.h"

#define RS_HUBINTAKE_MAX_RUNNING 32 /* verifications at once */
/* A shared store's queued requests of a set no node configures are
 * deleted once they are this old (µs). */
#define RS_HUBINTAKE_QUEUE_DROP apr_time_from_sec(3600)

/* A new intake for the state directory state_dir, in a pool of its own
 * allocator (it lives as long as the process), the reservations of its
 * spool counted in gate.  The hooks and log are copied. */
rs_hubintake_t *rs_hubintake_create(const char *state_dir, rs_hubgate_t *gate,
                                    const rs_hubintake_hooks_t *hooks, const rs_logger_t *log);

/* On the intake's thread, before its first turn: its sender (a request
 * gives up after timeout), the spool followed, the scheduler, the store
 * connection and the status file's directory.  APR_SUCCESS, or the cause
 * (logged): then requests stay in the spool. */
apr_status_t rs_hubintake_open(rs_hubintake_t *hi, apr_interval_time_t timeout);

/* The turn's chores once a second, at wall time now: expired leases,
 * failed store writes again, abandoned "tmp-*" files, the status file. */
void rs_hubintake_sweep(rs_hubintake_t *hi, apr_time_t now);

/* New requests from the spool, then whatever the scheduler lets start. */
void rs_hubintake_drain(rs_hubintake_t *hi);

/* Until a GET completes (its outcome applied), a request arrives (the
 * spool's inotify descriptor) or wait_ms have passed.  Returns the
 * number of GETs still queued or in flight. */
int rs_hubintake_wait(rs_hubintake_t *hi, int wait_ms);

/* Free hi: requests in flight are dropped without their outcome (their
 * spool files stay for the next intake), the sender, the spool's watch,
 * the store connection and the pool go.  The watcher never calls it (the
 * intake's thread ends with the process); the unit tests do. */
void rs_hubintake_destroy(rs_hubintake_t *hi);

#endif
