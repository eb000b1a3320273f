/* SPDX-License-Identifier: Apache-2.0 */
/* rs_cdumprun.h - the body of a set's Change Dump job: one package per
 * closed Change List (rs_cdump).  When the job is due is rs_dumpsched's
 * (rs_cdumpsched_t); one job runs at a time (rs_jobthread).  The job, on
 * the job thread with its own store connection (rs_cdumprun_run):
 *
 *   1. removes the files of lists no longer retained (or of another
 *      history) and temporary files a crash left (rs_cdump_prune);
 *   2. builds the package of every retained closed list that has none
 *      (so a package lost to a crash or kill, or withdrawn, is rebuilt at
 *      the next start); a lost capture is made again from the current
 *      file when it still has the version's digest (logged); a list
 *      whose captured bytes are gone otherwise gets a .skip marker and
 *      no package, and the Change Dump's coverage then starts after it
 *      (rs_cdumpdoc_write), logged once (the Change List still has the
 *      changes); versions whose path stopped being listed, or that httpd
 *      would not serve now (the options' access checker), are written
 *      as deletions without bytes (rs_cdump.h);
 *   3. when lists went (step 1), in the first job of a watcher, and when
 *      deletions were journaled since the last collection, collects the
 *      captures no kept version names (rs_cdump_gc, which reads every
 *      retained record's digest; files changed in the last hour,
 *      RS_CDUMPRUN_YOUNG, are kept: the hashing lane and the scans write
 *      captures whose records are not committed yet -- except the
 *      captures of versions withheld since, which go at once); its
 *      duration paces the next collection (rs_cdumpsched_collected);
 *   4. when anything changed (or in the first job), rewrites
 *      changedump.xml; then (rs_cdumprun_finish, driver's thread) the
 *      caller publishes its readiness and the disk use.
 *
 * A failure other than missing captures (disk full...) publishes no
 * package and leaves changedump.xml as it was; the next job tries again.
 * The job's state lives in the job's pool from prepare to finish; the
 * schedule's times are arguments (the job itself reads the clocks to
 * time its collection and to tell young captures).
 */
#ifndef RS_CDUMPRUN_H
#define RS_CDUMPRUN_H

#include <apr_pools.h>
#include <apr_time.h>
#include "rs_cdump.h"
#include "rs_cdumpdoc.h"
#include "rs_db.h"
#include "rs_dumpsched.h"
#include "rs_log.h"

/* Captures younger than this are never collected (step 3). */
#define RS_CDUMPRUN_YOUNG apr_time_from_sec(3600)

/* The set as the job needs it, plain. */
typedef struct rs_cdumprun_in_t {
    const char *set;            /* its name */
    const char *dir;            /* its Change Dump directory */
    const char *capture_dir;    /* its captures */
    const char *history;        /* the status entry's (documents, package URLs) */
    const char *root_url;       /* absolute URL of its root, ends "/" */
    const char *capability_url; /* its Capability List */
    const char *doc_base;       /* its documents' URL base, ends "/" */
    unsigned hashes;            /* RS_HASH_* */
    const rs_links_t *links;    /* its link rules: mirrors (rs_cdump_opts_t.links) */
    int spec10;                 /* ResourceSyncSpecVersion 1.0 (manifests) */
    int list_max;               /* packages per document (ResourceSyncMaxEntries) */
    const char *root;           /* its directory */
    /* Would httpd serve a version's path now (rs_cdump_opts_t.check)? */
    rs_scan_check_fn *check;
    void *check_baton;
} rs_cdumprun_in_t;

/* One job: its options and, once run, what it did. */
typedef struct rs_cdumprun_t {
    rs_cdump_opts_t o;
    const char *store_history;   /* of the driver's store when prepared */
    int first;                   /* the first job of this watcher for the set */
    int collect;                 /* collect captures (deletions were journaled) */
    int written;                 /* changedump.xml was written */
    apr_interval_time_t gc_took; /* the collection's time, 0: none ran */
    int built, skipped, withheld, recaptured;
    const char *skip_what; /* the first skipped list's cause */
    apr_int64_t skip_id;
    apr_int64_t pkg_bytes, cap_bytes;
    rs_cdumpdoc_t ix;              /* what changedump.xml got (written) */
    apr_array_header_t *built_ids; /* the lists whose package was built (apr_int64_t) */
} rs_cdumprun_t;

/* The framework notifications of a job that wrote changedump.xml with
 * new packages (Framework Notification 1.0.1, section 2, Table 2: a
 * Change Dump is created or updated; "framework notifications are never
 * sent at the index level": a document under an index is announced
 * itself, with rs:ln rel="index" to the index): changedump.xml, created
 * (first) or updated; or, when it is a Change Dump Index, each part that
 * is new (created) or got a new package (updated), with index the URL of
 * changedump.xml.  announce is called once per document. */
typedef void rs_cdumprun_announce_fn(void *baton, apr_pool_t *p, const char *loc,
                                     const char *change, const char *index);
void rs_cdumprun_announce(const rs_cdumprun_t *c, int first, rs_cdumprun_announce_fn *announce,
                          void *baton, apr_pool_t *p);

/* Fill o (in p) from in: the options of rs_cdump for the set. */
void rs_cdumprun_opts(rs_cdump_opts_t *o, const rs_cdumprun_in_t *in, apr_pool_t *p);

/* Make job c in jp (its pool, lives until finish) from in, the driver's
 * store history now, and start it in sched at now (open_id: the open
 * list's id, period: the set's Change List period). */
void rs_cdumprun_prepare(rs_cdumprun_t *c, const rs_cdumprun_in_t *in, const char *store_history,
                         rs_cdumpsched_t *sched, apr_time_t now, apr_int64_t open_id,
                         apr_interval_time_t period, apr_pool_t *jp);

/* The job (an rs_job_run_fn, on any thread; baton: the rs_cdumprun_t),
 * steps 1-4 with store (a store whose history is not the one c was
 * prepared with is another journal: nothing is done). */
apr_status_t rs_cdumprun_run(void *baton, rs_db_t *store, apr_pool_t *p);

/* How a job ended. */
typedef enum {
    RS_CDUMPRUN_FAILED,  /* nothing published (no space: said once) */
    RS_CDUMPRUN_KEPT,    /* changedump.xml kept (gc_took: captures collected) */
    RS_CDUMPRUN_WRITTEN, /* changedump.xml written (built: new packages) */
} rs_cdumprun_end_t;

/* The end of c with the job's status rv, on the driver's thread: the
 * lines (skipped lists, no space, failure, space again, packages
 * published) on log, the schedule's bookkeeping in sched at now.  The
 * caller publishes the outcome (c->pkg_bytes, c->cap_bytes). */
rs_cdumprun_end_t rs_cdumprun_finish(rs_cdumprun_t *c, apr_status_t rv, rs_cdumpsched_t *sched,
                                     const rs_logger_t *log, apr_pool_t *p, apr_time_t now);

#endif
