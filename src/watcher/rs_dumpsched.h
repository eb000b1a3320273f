/* SPDX-License-Identifier: Apache-2.0 */
/* rs_dumpsched.h - when a set's Resource Dump and Change Dump jobs are
 * due, and what their outcomes change in that schedule.
 *
 * Resource Dumps (rs_dumpsched_t).  A dump is built from the inventory
 * after every Resource List snapshot that is published
 * (rs_dumpsched_t.due), and once at every watcher start (until the first
 * build is tried), so that the dump and the Resource List cover the same
 * resources (ResourceSync 1.1, section 9: "Capabilities that are conveyed
 * in the same Capability List uniformly apply to the set of resources
 * covered by that Capability List. For example, ... a given resource that
 * appears in a Resource List must also appear in a Resource Dump").  A
 * rebuild costs the changed packages and a pass over the rows (unchanged
 * packages are linked, rs_dumppkg); one that changed many packages costs
 * a whole build, and the job thread also writes the Resource Lists, so
 * the next build waits as long as the last one took, but never longer
 * than the set's dump interval (rs_dumpsched_built): builds take at most
 * about half the job thread, and a snapshot's dump is published at most
 * that wait, a job of another kind and its own build after it.  A build
 * that fails for want of space is said once per episode
 * (rs_dumpsched_nospace: a warning, then debug, until a build succeeds)
 * and tried again after the interval (at least a second) without waiting
 * for a change; any other failure waits for the next snapshot.
 * Superseded generations are pruned at most once a second
 * (rs_dumpsched_prune), never while a build runs.
 *
 * Change Dumps (rs_cdumpsched_t).  A job is due when the open Change
 * List's id changed since the last job (a list closed), at watcher start,
 * and once per Change List period (at most RS_CDUMPSCHED_RECHECK)
 * otherwise; and when deletions were journaled since the last collection
 * of captures, once the collection's pacing allows: a collection waits at
 * least RS_CDUMPSCHED_GC_MIN, and ten times as long as the last one took,
 * after the last (rs_cdumpsched_collected), so a set that deletes all the
 * time does not spend its job thread reading its journal.  A job that
 * found the disk full runs again RS_CDUMPSCHED_NOSPACE_RETRY later, said
 * once per episode.
 *
 * Lifecycle: one of each per set, all zero at watcher start, used from
 * the driver's thread only (nothing locks).  Times are monotonic and
 * always arguments; whether the job thread is free is the caller's.
 */
#ifndef RS_DUMPSCHED_H
#define RS_DUMPSCHED_H

#include <apr_errno.h>
#include <apr_time.h>

#define RS_CDUMPSCHED_RECHECK       apr_time_from_sec(3600)
#define RS_CDUMPSCHED_NOSPACE_RETRY apr_time_from_sec(10)
#define RS_CDUMPSCHED_GC_MIN        apr_time_from_sec(2)

/* A set's Resource Dump schedule. */
typedef struct rs_dumpsched_t {
    int due;               /* a snapshot was published since the last build */
    int tried;             /* a build was started in this watcher's life */
    apr_time_t started;    /* the last build started then */
    apr_time_t next;       /* the next build may start then */
    apr_time_t prune_next; /* next pruning of old dump generations */
    int nospace;           /* the last build found the disk full (said once) */
} rs_dumpsched_t;

/* A set's Change Dump schedule. */
typedef struct rs_cdumpsched_t {
    apr_int64_t seen;   /* the open list's id the last job saw */
    apr_time_t next;    /* when the next job is due anyway */
    int written;        /* a job of this watcher wrote changedump.xml */
    int deleted;        /* deletions were journaled since the last collection */
    apr_time_t gc_next; /* the next collection after deletions, not before */
    int nospace;        /* the last job found the disk full (said once) */
} rs_cdumpsched_t;

/* Whether rv says the file system is full (or the quota reached):
 * ENOSPC, EDQUOT. */
int rs_dumpsched_no_space(apr_status_t rv);

/* Whether old generations are to be pruned now (then not again for a
 * second): never while a build runs (running) nor before the set has a
 * dump (gen 0). */
int rs_dumpsched_prune(rs_dumpsched_t *d, apr_time_t now, int running, apr_uint64_t gen);

/* Whether a build is due at now (free: the job thread is free and the set
 * can be dumped: it has a snapshot, is available, its store works). */
int rs_dumpsched_due(const rs_dumpsched_t *d, apr_time_t now, int free);

/* A build starts at now: it takes the snapshot published last. */
void rs_dumpsched_started(rs_dumpsched_t *d, apr_time_t now);

/* The build that started last was published at now: the next one not
 * before now + min(the time it took, interval), so dump builds leave the
 * job thread at least as much time as they take (snapshots, Change Dumps,
 * withdrawals) and a cheap rebuild follows its snapshot at once. */
void rs_dumpsched_built(rs_dumpsched_t *d, apr_time_t now, apr_interval_time_t interval);

/* The build found no space at now: due again after interval (at least a
 * second).  Returns the level of its line: RS_LOG_WARN for the first of
 * an episode, RS_LOG_DEBUG after. */
int rs_dumpsched_nospace(rs_dumpsched_t *d, apr_time_t now, apr_interval_time_t interval);

/* The build failed otherwise: the next snapshot makes it due again. */
void rs_dumpsched_failed(rs_dumpsched_t *d);

/* A build was published: returns 1 when that ends an episode without
 * space (the caller says so, once). */
int rs_dumpsched_published(rs_dumpsched_t *d);

/* Whether a Change Dump job is due at now (free: the job thread is free
 * and the set's Change Lists are ready; open_id: the open list's id). */
int rs_cdumpsched_due(const rs_cdumpsched_t *c, apr_time_t now, int free, apr_int64_t open_id);

/* A job starts at now, seeing open list open_id; period: the set's
 * Change List period.  *collect: deletions were journaled since the last
 * collection (the job collects captures); *first: no job of this watcher
 * wrote changedump.xml yet. */
void rs_cdumpsched_started(rs_cdumpsched_t *c, apr_time_t now, apr_int64_t open_id,
                           apr_interval_time_t period, int *collect, int *first);

/* The job found no space at now: it runs again within
 * RS_CDUMPSCHED_NOSPACE_RETRY.  Returns the level of its line, as
 * rs_dumpsched_nospace. */
int rs_cdumpsched_nospace(rs_cdumpsched_t *c, apr_time_t now);

/* The job succeeded: returns 1 when that ends an episode without space. */
int rs_cdumpsched_ok(rs_cdumpsched_t *c);

/* The job collected captures at now, which took took: the next
 * collection after deletions not before now + max(10 * took,
 * RS_CDUMPSCHED_GC_MIN). */
void rs_cdumpsched_collected(rs_cdumpsched_t *c, apr_time_t now, apr_interval_time_t took);

#endif
