/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubsched.h - the order in which the built-in hub's intake verifies
 * pending subscription requests, so that one slow or hanging callback
 * (or one client sending many requests) cannot delay the others.
 *
 * Every pending request is queued under two keys: its CLIENT (the key of
 * the address that sent it, rs_hubaddr_key: an IPv6 client per /64) and
 * its callback's HOST (rs_hubaddr_host_key: every spelling of a literal
 * address is one host).  A request that is started is RUNNING until
 * rs_hubsched_done.  rs_hubsched_next picks the next request to start:
 *
 *   - at most `total` requests run at once, at most `per_host` for one
 *     callback host (whichever client sent them) and at most
 *     `per_client` for one client;
 *   - clients take turns (round robin over the clients with something
 *     queued), and within a client its hosts take turns, each host's
 *     requests in arrival order; a client or host at its limit is passed
 *     over, not waited for.
 *
 * So a hundred requests whose callback hangs hold at most per_host
 * running slots (and per_client of their client's), and a request for
 * another host is started as soon as a slot is free; requests of one
 * host keep their arrival order.  Picking costs at most the number of
 * clients and hosts queued, never the number of requests.
 *
 * Memory: the entries, clients and hosts are malloc'd and freed as soon
 * as nothing is queued or running under them (the scheduler's memory
 * follows what is pending); rs_hubsched_create registers a cleanup on p
 * that frees what is left (entries too; never the caller's items).  Not
 * thread-safe: one owner thread.
 *
 * Engine code: APR only.
 */
#ifndef RS_HUBSCHED_H
#define RS_HUBSCHED_H

#include <apr_pools.h>

typedef struct rs_hubsched_t rs_hubsched_t;
typedef struct rs_hubsched_entry_t rs_hubsched_entry_t;

typedef struct rs_hubsched_limits_t {
    int total;      /* running at once, in all */
    int per_host;   /* ... for one callback host */
    int per_client; /* ... for one client */
} rs_hubsched_limits_t;

/* A scheduler with these limits (each at least 1). */
rs_hubsched_t *rs_hubsched_create(apr_pool_t *p, const rs_hubsched_limits_t *limits);

/* Queue item (the caller's) under client and host (copied); returns its
 * entry. */
rs_hubsched_entry_t *rs_hubsched_add(rs_hubsched_t *s, const char *client, const char *host,
                                     void *item);

/* The next entry to start, now running, or NULL when none may start. */
rs_hubsched_entry_t *rs_hubsched_next(rs_hubsched_t *s);

/* The caller's item of an entry. */
void *rs_hubsched_item(const rs_hubsched_entry_t *e);

/* A running entry is done: its slots are free, the entry is freed. */
void rs_hubsched_done(rs_hubsched_t *s, rs_hubsched_entry_t *e);

/* Entries queued (not started), and running. */
int rs_hubsched_queued(const rs_hubsched_t *s);
int rs_hubsched_running(const rs_hubsched_t *s);

#endif
