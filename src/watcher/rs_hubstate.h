/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubstate.h - the built-in hub's intake: its state, what the glue
 * gives it, and the steps its parts share.
 *
 * The intake is three engine units, all on the intake thread (see
 * rs_hubintake.h for the lifecycle of a spool file): rs_hubintake (the
 * thread's turns: arrival, scheduling, sweeps, the status file),
 * rs_hubverify (one request verified and applied) and rs_hubstate (the
 * state below and the steps both take).  The glue
 * (mod_resourcesync_hubintake.c) starts the thread and answers, through
 * rs_hubintake_hooks_t, what only httpd's configuration knows: which
 * server received a set's requests, its limits and its callback policy.
 *
 * Engine code: APR only.
 */
#ifndef RS_HUBSTATE_H
#define RS_HUBSTATE_H

#include <apr_hash.h>
#include <apr_tables.h>
#include "rs_db.h"
#include "rs_hubgate.h"
#include "rs_hubreq.h"
#include "rs_hubsched.h"
#include "rs_hubspool.h"
#include "rs_hubsub.h"
#include "rs_log.h"
#include "rs_websub.h"

/* An address filter at connect time (rs_websub_req_t's addr_filter); its
 * baton is the server (rs_hubintake_hooks_t.server_of). */
typedef const char *rs_hubintake_filter_fn(void *server, const unsigned char *addr, int len);

/* What the intake asks of the glue.  Servers are opaque handles, compared
 * by identity: the same set of the same server gives the same handle. */
typedef struct rs_hubintake_hooks_t {
    void *baton;
    /* The server whose requests for set name it receives; NULL when the
     * set is not configured (any more). */
    void *(*server_of)(void *baton, const char *set);
    /* The limits of server's subscriptions. */
    void (*quota)(void *baton, void *server, rs_hubsub_quota_t *quota);
    /* Whether url's host is named in server's allowed callbacks (then
     * called wherever it resolves to, without filter). */
    int (*host_allowed)(void *baton, apr_pool_t *p, void *server, const char *url);
    /* server's callback policy, judged on the address connected to. */
    rs_hubintake_filter_fn *addr_filter;
    /* A new store connection in a pool of its own (*pool, destroyed when
     * the connection is given up); APR_SUCCESS or the cause. */
    apr_status_t (*store_open)(void *baton, rs_db_t **db, apr_pool_t **pool,
                               const rs_logger_t *log);
    /* The wall clock, for lease ends and the outcome's time stamp. */
    apr_time_t (*clock)(void *baton);
    /* This node's name (ResourceSyncNodeName), recorded with the requests
     * it queues for another node (a shared store); NULL: "". */
    const char *node;
    /* The most requests of one set this node adds to a shared store's
     * queue (ResourceSyncHubSpoolLimit's count: the queue stays bounded as
     * the spool is); beyond, they wait in the spool.  0: no bound. */
    apr_int64_t queue_max;
} rs_hubintake_hooks_t;

/* A request waiting in the scheduler: what it needs until it starts
 * (malloc'd, name included: thousands may wait, a pool each would cost
 * more than they hold). */
typedef struct rs_hubpending_t {
    rs_hubsched_entry_t *entry;
    apr_size_t size; /* its bytes in the gate */
    apr_int64_t qid; /* a row of the store's queue (rs_hubqueue); 0: a spool file */
    char name[1];    /* entry name in the spool; "queued-<id>" for a row */
} rs_hubpending_t;

typedef struct rs_hubintake_t rs_hubintake_t;

/* A request started; lives in its own pool. */
typedef struct rs_hubintake_req_t {
    apr_pool_t *pool;
    rs_hubintake_t *hi;
    rs_hubpending_t *pend;
    const char *name;
    const char *path;
    rs_hubreq_t req;
    void *server;       /* the server that received it */
    const char *client; /* key of the client's address */
    const char *addr;   /* key of the address verified, NULL before */
    int denial;         /* a denial GET was sent */
    int route;          /* a spool file's request for the set's writer: to be queued
                         * (1), its failure to be queued said (2) */
    int elsewhere;      /* one node's store: its write refused by the fence (said once) */
    int row_gone;       /* a queued row: deleted with its outcome */
    const char *qset;   /* a queued row: its set (the fence of its delete) */
} rs_hubintake_req_t;

/* The intake's state: one per watcher, touched by the intake thread only
 * (made by rs_hubintake_create before the thread starts). */
struct rs_hubintake_t {
    apr_pool_t *pool; /* own allocator */
    apr_pool_t *iter; /* cleared after every turn */
    rs_logger_t log;
    rs_hubintake_hooks_t hooks;
    const char *state_dir;
    const char *spool;
    const char *status_path;
    rs_hubspool_t *follow;
    rs_hubgate_t *gate;
    rs_hubsched_t *sched;
    rs_db_t *db;
    apr_pool_t *db_pool;
    rs_websub_t *ws;
    apr_hash_t *known;            /* name -> rs_hubpending_t, waiting or started */
    apr_hash_t *stuck;            /* names that could not be removed */
    apr_array_header_t *unstored; /* confirmed, store failed: retried */
    int changed;                  /* the status file is out of date */
    char last[512];               /* last intake outcome */
    apr_pool_t *qpool;            /* queued: cleared when it changes */
    const char *queued;           /* the queue's status lines (shared store), NULL */
    apr_pool_t *spool_lines;      /* subs: cleared when they change */
    const char *subs;             /* the subscriptions' status lines, NULL */
};

/* The wall clock (hooks.clock). */
apr_time_t rs_hubstate_now(const rs_hubintake_t *hi);

/* The outcome of a request, logged at info (subscribers' mistakes are no
 * operator's business) and kept for the status page. */
void rs_hubstate_outcome(const rs_hubintake_req_t *q, const char *what);

/* The store connection, opened at first use and after a failure; NULL
 * when it cannot be opened. */
rs_db_t *rs_hubstate_store(rs_hubintake_t *hi);

/* After a store failure (not a busy store) the connection is opened
 * again next time. */
void rs_hubstate_store_failed(rs_hubintake_t *hi, apr_status_t rv);

/* Whether this node writes set now: 1 (also always on one node's store),
 * 0 when another node does or none does (the lease has ended or is held
 * under another node's name, or the process's fence refuses it:
 * rs_db_begin_set in a transaction rolled back at once), -1 when the
 * store cannot tell (failing, not open).  Never waits for a lock. */
int rs_hubstate_writes(rs_hubintake_t *hi, const char *set);

/* The request of pend from the store's queue: its row id (the name
 * "queued-<id>"), in the scheduler like a spool file's. */
const char *rs_hubstate_queued_name(apr_pool_t *p, apr_int64_t id);

/* Remove a spool file whose outcome is durable, giving its reservation
 * back (a file that cannot be removed is remembered and logged once). */
void rs_hubstate_drop_file(rs_hubintake_t *hi, apr_pool_t *p, const char *name, apr_size_t size);

/* Done with q: its file removed when its outcome is durable (remove), its
 * slot in the scheduler freed, everything of it forgotten.  A queued
 * row's "remove" is its delete, fenced (rs_hubqueue_delete), unless its
 * outcome's transaction deleted it (row_gone): refused when this node no
 * longer writes the set, and the row stays for the next writer. */
void rs_hubstate_finish(rs_hubintake_req_t *q, int remove);

#endif
