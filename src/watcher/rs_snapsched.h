/* SPDX-License-Identifier: Apache-2.0 */
/* rs_snapsched.h - when a set's Resource List snapshot is due, and what
 * the store records of each snapshot.
 *
 * Freshness.  A live change (rs_snapsched_changed) makes the set dirty: a
 * new snapshot becomes due once the set has been quiet for
 * RS_SNAPSCHED_QUIET, and at the latest RS_SNAPSCHED_MAXWAIT after the
 * first change under continuous change (rs_snapsched_due).  Writing never
 * eats the machine: the next snapshot starts no earlier than the previous
 * one's end plus the time it took (rs_snapsched_ended), so snapshot
 * writing takes at most about half of the job thread's time however large
 * the set.  When the job thread is busy (a dump, another set's snapshot)
 * a due snapshot is looked at again RS_SNAPSCHED_RETRY later
 * (rs_snapsched_poll), never waited for.  A failed write keeps the set
 * dirty and is retried at the caller's tick, not every second
 * (rs_snapsched_failed: the first failure of an episode is an error, the
 * next ones debug; rs_snapsched_recovered ends the episode).
 *
 * Lifecycle: one rs_snapsched_t per set, all zero at watcher start, used
 * from the driver's thread only (nothing locks).  Times are monotonic and
 * always arguments.
 *
 * Store keys per set: snapshot-gen (the newest generation published),
 * snapshot-key (the options it was written with) and snapshot-seq (the
 * journal's last sequence when it was prepared: every record up to it is
 * reflected by the list).
 */
#ifndef RS_SNAPSCHED_H
#define RS_SNAPSCHED_H

#include <apr_pools.h>
#include <apr_time.h>
#include "rs_db.h"
#include "rs_snapshot.h"

#define RS_SNAPSCHED_QUIET   apr_time_from_sec(1)     /* quiet before a fresh list */
#define RS_SNAPSCHED_MAXWAIT apr_time_from_msec(1500) /* under continuous change */
#define RS_SNAPSCHED_RETRY   apr_time_from_msec(200)  /* the job thread was busy */

/* One set's schedule. */
typedef struct rs_snapsched_t {
    int dirty; /* inventory changed since the last snapshot started */
    /* The first and the last live change since the last snapshot started
     * (0: none), and the earliest start of the next one (the previous
     * one's end plus its duration). */
    apr_time_t first;
    apr_time_t last;
    apr_time_t next;
    int failing; /* failed writes since the last success */
} rs_snapsched_t;

/* A live change of the inventory at now: the set is dirty. */
void rs_snapsched_changed(rs_snapsched_t *s, apr_time_t now);

/* When the next fresh snapshot is due (0: none, or a failing write that
 * waits for the tick): RS_SNAPSCHED_QUIET after the last change, at the
 * latest RS_SNAPSCHED_MAXWAIT after the first, never before s->next. */
apr_time_t rs_snapsched_due(const rs_snapsched_t *s);

/* The event loop at now, busy: whether the job thread runs another job.
 * Returns 1 when a fresh snapshot is to start now; 0 when none is due
 * yet, or (busy) when it is due but looked at again RS_SNAPSCHED_RETRY
 * later. */
int rs_snapsched_poll(rs_snapsched_t *s, apr_time_t now, int busy);

/* The set's journal now starts at jstart (the Change List Index's from,
 * moved by retention) and the Resource List in service has at (0: none).
 * A destination may apply the Change Lists only from a baseline whose at
 * is not earlier than the index's from; one that is earlier "has missed
 * changes" and takes a new baseline, so an idle set whose last Change List
 * expired after its last snapshot would send it to the same Resource List
 * (and Resource Dump, which share its at) for ever.  When jstart is later
 * than at the set is made dirty: the caller's tick writes a snapshot,
 * whose at (the journal's mark, not before now) is past jstart, and the
 * Resource Dump follows it.  Returns 1 when it did. */
int rs_snapsched_outlived(rs_snapsched_t *s, apr_time_t jstart, apr_time_t at);

/* A snapshot started (or was found still valid): changes from here on
 * make the set dirty again. */
void rs_snapsched_started(rs_snapsched_t *s);

/* A snapshot job submitted at t0 (0: unknown) finished at now, whatever
 * its outcome: the next one waits at least as long as this one took. */
void rs_snapsched_ended(rs_snapsched_t *s, apr_time_t t0, apr_time_t now);

/* Writing a snapshot failed: the set stays dirty.  Returns the level of
 * its line: RS_LOG_ERR for the first failure of an episode, RS_LOG_DEBUG
 * after. */
int rs_snapsched_failed(rs_snapsched_t *s);

/* A snapshot was published: returns 1 when that ends an episode of
 * failures (the caller says so, once). */
int rs_snapsched_recovered(rs_snapsched_t *s);

/* The store's key of a snapshot's `what` (gen, key, seq) for set name. */
const char *rs_snapsched_meta_key(apr_pool_t *p, const char *what, const char *name);

/* The newest generation the store knows for the set (0: none). */
apr_uint64_t rs_snapsched_stored_gen(rs_db_t *store, apr_pool_t *p, const char *name);

/* Whether the store's snapshot-key of the set equals key (the options a
 * snapshot is written with: when they differ a new one is needed). */
int rs_snapsched_same_key(rs_db_t *store, apr_pool_t *p, const char *name, const char *key);

/* Raise the store's snapshot-gen of the set to gen when it is lower (a
 * generation found on disk), so numbers are never used twice. */
void rs_snapsched_gen_floor(rs_db_t *store, apr_pool_t *p, const char *name, apr_uint64_t gen);

/* Record a published snapshot: its generation, options key and journal
 * sequence, in one transaction (fenced).  On a store several nodes share
 * (not rs_db_one_node) the files of gendir, the generation's directory,
 * go into the same transaction (rs_followsnap_store), so another node
 * never reads a generation without its files.  Returns its outcome (the
 * caller notes a failure of the store). */
apr_status_t rs_snapsched_record(rs_db_t *store, apr_pool_t *p, const char *name, apr_uint64_t gen,
                                 const char *key, apr_int64_t seq, const char *gendir);

/* The snapshot job's body (any thread, on its own connection store):
 * write the snapshot sn describes as generation gen into the temporary
 * directory tmp (info: what was written).  history: the driver's store's
 * history when the job was prepared; a connection that reads another
 * (the store was deleted or replaced meanwhile: another, empty,
 * inventory) writes nothing, sets *other_store and returns APR_ENOENT.
 * With sn->prev_dir, parts no change touched are kept from the generation
 * in service (the journal is opened on store for what changed). */
apr_status_t rs_snapsched_write(rs_db_t *store, rs_snapshot_opts_t *sn, const char *tmp,
                                apr_uint64_t gen, const char *history, apr_pool_t *p,
                                rs_snapshot_info_t *info, int *other_store);

#endif
