/* SPDX-License-Identifier: Apache-2.0 */
/* rs_lease.h - one writer per set: leases with epochs, and the fence.
 *
 * Several httpd nodes may point at one PostgreSQL store; each set must be
 * written by one watcher at a time, and a writer that was cut off from the
 * database or frozen (a stopped process, a long pause) must never write
 * after another took the set over.  A set's leadership is a row of the
 * table leases: the set, the holder's node name (shown only), the
 * holder's token (random per watcher start: two nodes given the same
 * name, or a restarted watcher, are still told apart), an epoch and an
 * expiry.
 *
 *   take     the row is absent, has ended (expiry passed, or released),
 *            or is this token's: this token holds it until now + ttl.
 *            The epoch grows by one whenever the taker did not hold it
 *            live at exactly its epoch (another holder before it, or its
 *            own lease ended or lost meanwhile), so every new tenure has
 *            a new epoch and epochs never repeat.  One statement (INSERT
 *            ... ON CONFLICT DO UPDATE ... WHERE): of two takers racing,
 *            PostgreSQL makes the second wait for the first's row and
 *            then evaluate its WHERE on it, so exactly one wins.
 *   fence    the first statement of every transaction that writes the
 *            set's rows: the row must still hold this token and epoch and
 *            not have ended; its expiry is moved to now + ttl (a write is
 *            a heartbeat).  It updates the row, so it holds the row's lock
 *            until the transaction ends: a takeover's take waits for the
 *            old leader's transaction, and an old leader's transaction
 *            that begins after the takeover finds the new token.  A
 *            failed fence (RS_LEASE_LOST) means the transaction must be
 *            rolled back: nothing of it stays.
 *   renew    the fence outside a transaction: the heartbeat of a leader
 *            that has not written for a while.
 *   release  at a clean stop: the lease ends now, so another node takes
 *            the set over at its next try instead of after the expiry.
 *
 * Time is the store's clock (rs_db_clock): on PostgreSQL the database
 * server's, one clock for every node whatever the nodes' clocks say;
 * SQLite has one node.  SQLite: one node, whose processes the set's lock
 * file and the watcher's lifecycle already keep to one writer, so a
 * lease never ends by time there (a long pause of the watcher's loop
 * loses nothing) and a take always wins (a restarted watcher does not
 * wait for its predecessor's lease); the statements and the fence are the
 * same.
 *
 * Invariant: a write committed under (token, epoch) happened while that
 * tenure was live and no later epoch existed: the fence ran in its
 * transaction and held the row's lock until the commit.
 */
#ifndef RS_LEASE_H
#define RS_LEASE_H

#include <apr_errno.h>
#include <apr_time.h>
#include "rs_db.h"

/* The fence, or a renewal, found the lease no longer this holder's (taken
 * by another token, or ended by time). */
#define RS_LEASE_LOST (APR_OS_START_USERERR + 60)

/* A holder's lease of one set.  epoch is the epoch held (0: not held);
 * rs_lease_take sets it, a lost fence does not clear it (the caller
 * decides).  Strings are the caller's and must outlive the calls. */
typedef struct rs_lease_t {
    const char *set;
    const char *node;        /* the holder's name, shown (ResourceSyncNodeName) */
    const char *token;       /* the holder's, from rs_lease_token */
    apr_interval_time_t ttl; /* a take, fence or renewal holds it for this long */
    apr_int64_t epoch;
} rs_lease_t;

/* What the store says of a set's lease (rs_lease_peek). */
typedef struct rs_lease_info_t {
    int exists;       /* a row */
    int live;         /* it has not ended */
    const char *node; /* its holder's name (in the caller's pool) */
    const char *token;
    apr_int64_t epoch;
} rs_lease_info_t;

/* The lease table's DDL at schema version `version` (NULL-terminated, or
 * NULL), and its tables.  Used by rs_schema. */
const char *const *rs_lease_schema(int version);
const char *const *rs_lease_tables(void);

/* A new random token (32 hex digits, in p). */
const char *rs_lease_token(apr_pool_t *p);

/* Try to take l's set: *held 1 and l->epoch the epoch held, or *held 0
 * when another token holds it live (l->epoch then 0).  Outside a
 * transaction.  A busy row (another connection's transaction holds it:
 * the holder is writing) is *held 0 too; any other failure is returned
 * with *held 0. */
apr_status_t rs_lease_take(rs_db_t *db, rs_lease_t *l, int *held);

/* The fence, in db's open transaction (its first statement): APR_SUCCESS
 * when l's set is still held live by l's token at l->epoch, its expiry
 * then moved to now + ttl; RS_LEASE_LOST when not; another failure as
 * returned by the store.  Outside a transaction it is the renewal. */
apr_status_t rs_lease_fence(rs_db_t *db, const rs_lease_t *l);

/* End l's lease now if l's token holds it at l->epoch (nothing happens
 * otherwise); l->epoch becomes 0. */
apr_status_t rs_lease_release(rs_db_t *db, rs_lease_t *l);

/* The set's lease as stored, judged by the store's clock; strings in p.
 * Read-only connections may call it. */
apr_status_t rs_lease_peek(rs_db_t *db, apr_pool_t *p, const char *set, rs_lease_info_t *out);

#endif
