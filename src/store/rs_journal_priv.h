/* SPDX-License-Identifier: Apache-2.0 */
/* rs_journal_priv.h - what the files of the journal share (rs_journal.c:
 * records, lists, retention; rs_journal_drop.c: the time of a set's last
 * retention drop).  Not for other units: they see rs_journal.h only. */
#ifndef RS_JOURNAL_PRIV_H
#define RS_JOURNAL_PRIV_H

#include <apr_hash.h>
#include "rs_journal.h"

/* The counters are cached, and another connection may write the journal
 * too (a second watcher during a restart, a tool).  Each cached value
 * remembers the transaction (rs_db_txn_serial) in which it was read or
 * last written; in any other transaction, or outside one, it is read
 * again before it is used.  Within a transaction no other connection's
 * write can come between (writers are serialised; with SQLite, a write
 * on a snapshot that another writer made stale fails, and the commit with
 * it), so the cache holds until its end: a few indexed reads per
 * transaction, not per record. */
typedef struct {
    apr_time_t t; /* the set's last datetime */
    apr_uint64_t serial;
} last_dt_t;

struct rs_journal_t {
    rs_db_t *db;
    apr_pool_t *pool;
    apr_int64_t seq;         /* last assigned sequence */
    apr_uint64_t seq_serial; /* transaction seq was valid in */
    apr_hash_t *last_dt;     /* set -> last_dt_t* */
};

#endif
