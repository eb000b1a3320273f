/* SPDX-License-Identifier: Apache-2.0 */
/* rs_dumprun.h - the body of a set's Resource Dump job: its input made
 * from the set, the build on the job thread, and its end (published or
 * dropped) on the driver's thread.  When the job is due is rs_dumpsched's.
 *
 * A dump reflects the snapshot published last when it was prepared: its
 * at and completed are that snapshot's (rs_dumprun_in_t.at), and its rows
 * are read later, so nothing in it is older than at.  A destination that
 * takes the dump and then applies every change whose datetime is not
 * earlier than its at ends with the set's files, as from that Resource
 * List (ResourceSync 1.1, section 11.1: at "conveys the datetime at which
 * the process of taking a snapshot of resources for their inclusion in
 * the Resource Dump started").
 *
 * Lifecycle, like the snapshots': rs_dumprun_prepare on the driver's
 * thread (generation number and temporary directory in the set's dump
 * directory, rs_generation; the store key dump-gen:<set> keeps generation
 * numbers from being used twice), rs_dumprun_run as a job (rs_jobthread,
 * its own store connection; rs_dump_write, then the record in the store),
 * rs_dumprun_finish back on the driver's thread: renamed into place,
 * announced and the
 * older generations pruned -- or the temporary directory removed.
 *
 * A file that changes while it is packaged (RS_ZIP_ECHANGED) drops the
 * whole build, logged at debug level; the next snapshot makes the dump
 * due again.  Nothing partial is ever published: the generation
 * directory appears complete or not at all.  A build failing for want of
 * space is said once per episode (rs_dumpsched_nospace).
 *
 * The job's state lives in the job's pool (rs_jobthread_create) from
 * prepare to finish.  Times are arguments.
 */
#ifndef RS_DUMPRUN_H
#define RS_DUMPRUN_H

#include <apr_pools.h>
#include <apr_time.h>
#include "rs_db.h"
#include "rs_dump.h"
#include "rs_dumpsched.h"
#include "rs_generation.h"
#include "rs_log.h"

/* The job's input: the set's configuration and its status, plain. */
typedef struct rs_dumprun_in_t {
    const char *set;            /* its name */
    const char *root;           /* its directory, no trailing "/" */
    const char *root_url;       /* absolute URL of its root, ends "/" */
    const char *capability_url; /* its Capability List */
    const char *doc_base;       /* its documents' URL base, ends "/" */
    const char *dir;            /* its dump generations (ResourceSyncResourceDump) */
    unsigned hashes;            /* RS_HASH_* */
    const rs_links_t *links;    /* its link rules: mirrors (rs_dump_opts_t.links) */
    apr_int64_t max_entries;    /* per package (ResourceSyncDumpEntries) */
    apr_int64_t max_bytes;      /* per package (ResourceSyncDumpSize) */
    int list_max;               /* packages per document (ResourceSyncMaxEntries) */
    apr_interval_time_t grace;  /* superseded generations kept (ResourceSyncDumpGrace) */
    const char *store_history;  /* of the driver's store now */
    const char *url_history;    /* the status entry's (in the package URLs) */
    apr_time_t at, completed;   /* the snapshot the dump reflects */
    apr_uint64_t current;       /* the generation served now, 0: none */
    /* Would httpd serve a file now (rs_dump_opts_t.check)?  NULL: all. */
    rs_scan_check_fn *check;
    void *check_baton;
} rs_dumprun_in_t;

/* One job. */
typedef struct rs_dumprun_t {
    rs_dump_opts_t o;
    rs_generation_t g;
    rs_dump_info_t info;
    const char *history;     /* of the driver's store when prepared */
    const char *url_history; /* in the package URLs */
    apr_interval_time_t grace;
    apr_status_t recorded; /* the run's record of the generation (rs_followdump_record) */
} rs_dumprun_t;

/* What the end asks of the caller (every member is needed). */
typedef struct rs_dumprun_hooks_t {
    /* Generation gen is published: the status entry says so.  recorded
     * is the outcome of its record in the store by the run (dump-gen:<set>
     * and its files, written with the set's fence: RS_LEASE_LOST when
     * another node writes the set now). */
    void (*published)(void *baton, apr_uint64_t gen, apr_status_t recorded);
    /* Announce the new dump (the framework notification) by loc, the
     * document announced: resourcedump.xml, or when that is a Resource
     * Dump Index the first part of this generation, then with index the
     * index's URL (Framework Notification 1.0.1, section 2: one entry
     * for a new document under an index, with rs:ln rel="index"; NULL
     * when there is no index). */
    void (*announce)(void *baton, apr_pool_t *p, const char *loc, const char *index);
    void *baton;
} rs_dumprun_hooks_t;

/* Make job j in jp (its pool, lives until finish) from in: the options
 * of rs_dump_write and a new generation (its number after the one stored
 * under dump-gen:<set> in store and after in->current).  Returns
 * rs_generation_begin's status: on failure, the job is not run but
 * finished with that status. */
apr_status_t rs_dumprun_prepare(rs_dumprun_t *j, const rs_dumprun_in_t *in, rs_db_t *store,
                                apr_pool_t *jp);

/* The job (an rs_job_run_fn, on any thread; baton: the rs_dumprun_t):
 * write the dump into the temporary directory with store (a store whose
 * history is not the one j was prepared with publishes nothing), and the
 * history of its URLs last; then record the generation in store
 * (rs_followdump_record: its number, and on a shared store its files, in
 * one fenced transaction; the outcome kept for the finish, j->recorded). */
apr_status_t rs_dumprun_run(void *baton, rs_db_t *store, apr_pool_t *p);

/* How a job ended. */
typedef enum {
    RS_DUMPRUN_PUBLISHED, /* the generation is in place */
    RS_DUMPRUN_NOSPACE,   /* no space: tried again after the interval */
    RS_DUMPRUN_FAILED     /* another failure: tried after the next snapshot */
} rs_dumprun_end_t;

/* The end of j with the job's status rv, on the driver's thread: publish
 * the generation (hooks with the run's record, log lines, prune; the next build
 * paced by rs_dumpsched_built) or drop it.  sched
 * and interval: the set's schedule and dump interval; log: the driver's
 * (once-only), plain: one that says every line (the no-space line, whose
 * level sched decides); now on the monotonic clock, wall the real time
 * (pruning). */
rs_dumprun_end_t rs_dumprun_finish(rs_dumprun_t *j, apr_status_t rv, rs_dumpsched_t *sched,
                                   apr_interval_time_t interval, const rs_dumprun_hooks_t *hooks,
                                   const rs_logger_t *log, const rs_logger_t *plain, apr_pool_t *p,
                                   apr_time_t now, apr_time_t wall);

#endif
