/* SPDX-License-Identifier: Apache-2.0 */
/* rs_withdrawq.h - the watcher's side of withdrawals: the queue of
 * requests (rs_withdraw.h: rs-tool records a request, the watcher
 * applies it), its decisions and outcomes.
 *
 * At most once a second (and at the first poll, after the startup scans)
 * the driver looks at the requests; it takes the oldest, one at a time,
 * when no job runs:
 *
 *   1. the path is reconciled now (a targeted scan: the caller's
 *      callback), so a file removed, denied or excluded by the operator is
 *      journaled as deleted before anything is decided, without waiting
 *      for the settling delay;
 *   2. a path that is still listed is refused (the outcome says so, and a
 *      warning is logged): a withdrawn package would be built again with
 *      the file in it;
 *   3. a job on the job thread (rs_jobthread, with its own connection)
 *      withdraws the Change Dump packages holding a version of the path
 *      (rs_cdump_withdraw: a new revision, the old files removed, so their
 *      URLs answer 404 at once) and rewrites changedump.xml without them,
 *      and removes the Resource Dump packages that hold the file from
 *      every generation on disk (rs_dumppkg_withdraw);
 *   4. on the driver's thread: the outcome is written and the request
 *      removed, the line logged, and the caller makes the dumps due
 *      (callback `withdrawn`: the Change Dump job runs next and builds the
 *      withdrawn lists' packages again under new names, a Resource Dump
 *      build is due at once).  A failed job leaves the request; it is
 *      taken again RS_WITHDRAWQ_RETRY after the next poll.
 *
 * A request whose set this watcher does not serve is answered with an
 * error; one that cannot be read, too.  A set whose store fails or whose
 * root is not there keeps its requests until it works again.
 *
 * Times are on the monotonic clock and always arguments.  One thread (the
 * watcher's driver) uses the state.
 */
#ifndef RS_WITHDRAWQ_H
#define RS_WITHDRAWQ_H

#include <apr_pools.h>
#include <apr_time.h>
#include "rs_cdump.h"
#include "rs_db.h"
#include "rs_jobthread.h"
#include "rs_log.h"

/* How often the requests are looked at; the wait after a failed job. */
#define RS_WITHDRAWQ_CHECK apr_time_from_sec(1)
#define RS_WITHDRAWQ_RETRY apr_time_from_sec(10)

/* A set as the caller tells of it (rs_withdrawq_cb_t.find). */
typedef struct rs_withdrawq_set_t {
    void *set;              /* the caller's; NULL: this watcher has no such set */
    const rs_logger_t *log; /* the set's: the outcome's line */
    int ready;              /* its store works and its root is there */
} rs_withdrawq_set_t;

/* What the queue asks of the caller (every member is needed). */
typedef struct rs_withdrawq_cb_t {
    /* Fill *out for the set named name. */
    void (*find)(void *baton, const char *name, rs_withdrawq_set_t *out);
    /* Reconcile the path dir/name of set now (a targeted scan, p for
     * it); 0 when the set's store failed meanwhile (the request waits). */
    int (*reconcile)(void *baton, void *set, apr_pool_t *p, const char *dir, const char *name);
    /* The job's input, in jp: the set's Change Dump options (o->set NULL:
     * none, or none published yet) and its Resource Dump directory
     * (*rdump_dir NULL: none). */
    void (*prepare)(void *baton, void *set, apr_pool_t *jp, rs_cdump_opts_t *o,
                    const char **rdump_dir);
    /* The path was withdrawn from set: cdump_n Change Dump and rdump_n
     * Resource Dump packages held it (make the dumps due). */
    void (*withdrawn)(void *baton, void *set, int cdump_n, int rdump_n);
    void *baton;
} rs_withdrawq_cb_t;

/* The queue's state.  All zero, then rs_withdrawq_init. */
typedef struct rs_withdrawq_t {
    const char *state_dir;       /* the requests are below it */
    rs_jobthread_t *jobs;        /* the job runs there */
    const rs_withdrawq_cb_t *cb; /* kept: lives as long as q */
    int running;                 /* a withdrawal job was submitted, not finished */
    int failed;                  /* the last job failed: wait RS_WITHDRAWQ_RETRY */
    apr_time_t next_check;       /* the requests are not looked at before */
} rs_withdrawq_t;

/* Prepare q (nothing running, the requests due at the first poll). */
void rs_withdrawq_init(rs_withdrawq_t *q, const char *state_dir, rs_jobthread_t *jobs,
                       const rs_withdrawq_cb_t *cb);

/* The driver's poll at now: when due and no job runs, take the oldest
 * request (steps above).  store: the driver's connection (is the path
 * listed), history: the store's history when the job is prepared (a job
 * finding another store fails), log: the driver's (refusals, warning),
 * p: for this call (the caller clears it). */
void rs_withdrawq_poll(rs_withdrawq_t *q, rs_db_t *store, const char *history,
                       const rs_logger_t *log, apr_pool_t *p, apr_time_t now);

#endif
