/* SPDX-License-Identifier: Apache-2.0 */
/* rs_storelock.h - the writer guard: one writer per set in a shared store.
 *
 * Several httpd nodes may point at one PostgreSQL store; each set must
 * then be written by one watcher at a time, or two watchers journal the
 * same changes twice and their sequences interleave.  This is step one of
 * "one writer per set": a watcher takes the set's guard before it writes
 * the set and writes nothing while another holds it.  (Leases with epochs,
 * which fence a partitioned old writer, replace it in a later step, in
 * this unit's place.)
 *
 * PostgreSQL: a session-level advisory lock (pg_try_advisory_lock) on the
 * connection db, never waited for.  Its 64-bit key is the first 8 bytes
 * of the SHA-256 digest of "resourcesync:", the store's schema
 * (current_schema(): two stores in one database do not block each
 * other), a NUL byte and the set name.  The lock lives as long as the
 * connection does: closing it (the pool of rs_db_open) releases it, and
 * PostgreSQL releases it when it sees the connection end, however the
 * process ended (kill -9 included; a node cut off from the database keeps
 * it until the server notices, tcp_keepalives_* decide when).  A lost
 * connection loses the guard with it: the caller takes it again on the
 * new connection before it writes again.
 *
 * SQLite: one node only; the set's lock file (rs_setlock) already serves
 * between the processes of that node: the guard is always held.
 */
#ifndef RS_STORELOCK_H
#define RS_STORELOCK_H

#include <apr_errno.h>
#include "rs_db.h"

/* Try to take set's guard on db without waiting: *held 1 when db's
 * connection holds it (also when it held it before: taking it again does
 * not count twice), 0 when another connection holds it.  Any other
 * failure (the statement's) is returned with *held 0. */
apr_status_t rs_storelock_try(rs_db_t *db, const char *set, int *held);

/* Release set's guard if db's connection holds it (nothing happens
 * otherwise, and on SQLite). */
apr_status_t rs_storelock_release(rs_db_t *db, const char *set);

#endif
