/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_hubintake.h - what the built-in hub's intake shares
 * between its parts, all on the intake thread (see
 * mod_resourcesync_hubintake.c for the lifecycle of a spool file):
 * mod_resourcesync_hubintake.c (the thread: arrival, scheduling, sweeps,
 * the status file), mod_resourcesync_hubverify.c (one request verified
 * and applied) and mod_resourcesync_hubstate.c (the state below and the
 * steps both take).  Private to these three files.
 */
#ifndef MOD_RESOURCESYNC_HUBINTAKE_H
#define MOD_RESOURCESYNC_HUBINTAKE_H

#include <apr_hash.h>
#include "mod_resourcesync.h"
#include "rs_hubgate.h"
#include "rs_hubreq.h"
#include "rs_hubsched.h"
#include "rs_hubspool.h"
#include "rs_websub.h"

/* A request waiting in the scheduler: what it needs until it starts
 * (malloc'd, name included: thousands may wait, a pool each would cost
 * more than they hold). */
typedef struct pending_t {
    rs_hubsched_entry_t *entry;
    apr_size_t size; /* its bytes in the gate */
    char name[1];    /* entry name in the spool */
} pending_t;

/* A request started; lives in its own pool. */
typedef struct intake_req_t {
    apr_pool_t *pool;
    pending_t *pend;
    const char *name;
    const char *path;
    rs_hubreq_t req;
    const rs_srv_conf *sc; /* the server that received it */
    const char *client;    /* key of the client's address */
    const char *addr;      /* key of the address verified, NULL before */
    int denial;            /* a denial GET was sent */
} intake_req_t;

typedef struct rs_hubintake_t {
    server_rec *s;
    apr_pool_t *pool; /* own allocator */
    rs_logger_t log;
    const char *spool;
    const char *status_path;
    rs_hubspool_t *follow;
    rs_hubgate_t *gate;
    rs_hubsched_t *sched;
    rs_db_t *db;
    apr_pool_t *db_pool;
    rs_websub_t *ws;
    apr_hash_t *known;            /* name -> pending_t, waiting or started */
    apr_hash_t *stuck;            /* names that could not be removed */
    apr_array_header_t *unstored; /* confirmed, store failed: retried */
    int changed;                  /* the status file is out of date */
    char last[512];               /* last intake outcome */
} rs_hubintake_t;

/* The intake's state: one per watcher, touched by the intake thread only
 * (set up by rs_hubintake_start before the thread starts). */
extern rs_hubintake_t rs_hi;

/* The outcome of a request, logged at info (subscribers' mistakes are no
 * operator's business) and kept for the status page. */
void rs_hubstate_outcome(const intake_req_t *q, const char *what);

/* The store connection, opened at first use and after a failure; NULL
 * when it cannot be opened. */
rs_db_t *rs_hubstate_store(void);

/* After a store failure (not a busy store) the connection is opened
 * again next time. */
void rs_hubstate_store_failed(apr_status_t rv);

/* Remove a spool file whose outcome is durable, giving its reservation
 * back (a file that cannot be removed is remembered and logged once). */
void rs_hubstate_drop_file(apr_pool_t *p, const char *name, apr_size_t size);

/* Done with q: its file removed when its outcome is durable (remove), its
 * slot in the scheduler freed, everything of it forgotten. */
void rs_hubstate_finish(intake_req_t *q, int remove);

/* mod_resourcesync_hubverify.c: start the verification (or denial) of
 * the request of pend, whose turn the scheduler gave; the sender's
 * completion callback (rs_websub_done_fn); and the confirmed requests
 * whose store write failed, tried again. */
void rs_hubverify_start(pending_t *pend);
void rs_hubverify_done(void *baton, const rs_websub_result_t *res);
void rs_hubverify_retry(void);

#endif
