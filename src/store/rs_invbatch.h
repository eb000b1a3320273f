/* SPDX-License-Identifier: Apache-2.0 */
/* rs_invbatch.h - inventory rows written several to a statement.
 *
 * A scan that writes many rows in one transaction (a first scan, a full
 * rescan) hands them to a batch instead of rs_inventory_put: the batch
 * keeps copies and writes them RS_INVBATCH_ROWS to an upsert statement
 * (one server round trip each on PostgreSQL, instead of one per row).
 * A batch that is not full (a flush before a commit) is written in
 * statements of 32, 16, ..., 1 rows: each size is prepared once per
 * connection, and a tail costs at most one statement per size.  The rows
 * and the results are those of rs_inventory_put in the same order: a
 * later put of a key that is waiting writes the waiting rows first (a
 * statement holds each key once).
 *
 * Lifecycle and the caller's duties: a batch belongs to one set and one
 * connection, and is used by the thread that holds the connection (it
 * may change hands with it: the batch's pool has an allocator of its
 * own, which only that thread touches).  What is waiting is not in the
 * store yet: before anything else reads or writes the set's rows on the
 * connection, and before a commit, the caller flushes
 * (rs_invbatch_flush); before a rollback it discards.  A delete of a key
 * that is not waiting commutes with the batch and needs no flush
 * (rs_invbatch_holds).  Memory: the copies of at most RS_INVBATCH_ROWS
 * rows, freed at each flush.
 */
#ifndef RS_INVBATCH_H
#define RS_INVBATCH_H

#include <apr_pools.h>
#include "rs_db.h"
#include "rs_inventory.h"

/* Rows written by one statement of a full batch. */
#define RS_INVBATCH_ROWS 64

typedef struct rs_invbatch_t rs_invbatch_t;

/* A batch of set's rows for db, from p (which must not outlive db). */
rs_invbatch_t *rs_invbatch_create(apr_pool_t *p, rs_db_t *db, const char *set);

/* Keep a copy of row it; a full batch is written at once.  Returns the
 * status of what was written (APR_SUCCESS when nothing was). */
apr_status_t rs_invbatch_put(rs_invbatch_t *b, const rs_item_t *it);

/* Whether the row dir/name is waiting to be written. */
int rs_invbatch_holds(const rs_invbatch_t *b, const char *dir, const char *name);

/* Write every waiting row.  On failure the waiting rows are dropped and
 * the statement's status returned (inside a transaction, the
 * transaction then fails: rs_db_commit returns it). */
apr_status_t rs_invbatch_flush(rs_invbatch_t *b);

/* Drop the waiting rows unwritten (before a rollback). */
void rs_invbatch_discard(rs_invbatch_t *b);

/* Statements a batch has run: rows written by each (rs_invbatch_flush
 * and full batches), for tests and measurements. */
apr_int64_t rs_invbatch_statements(const rs_invbatch_t *b);

#endif
