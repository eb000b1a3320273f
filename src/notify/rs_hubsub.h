/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubsub.h - the built-in hub's subscriptions in the state store.
 *
 * A subscription is a notify_dests row (rs_notify.h) of kind "sub": set,
 * topic ("change" or "framework"), url (the callback, as given, its query
 * string kept), secret (NULL: deliveries unsigned), lease_until (µs since
 * the epoch), cursor (the id of the last notification of the topic
 * delivered to it), and what the limits count by (columns of schema
 * version 4, rs_hubsub_schema): cb_addr, the key (rs_hubaddr_key) of the
 * address the verification of intent was sent to, and client, the key of
 * the address of the client that asked for it (both NULL in rows from
 * before: such a row counts in the total only).
 *
 * Lifecycle of a row (see docs/ARCHITECTURE.md, "Built-in hub:
 * subscriptions"): created by the watcher's intake once the subscriber has
 * confirmed its intent (rs_hubsub_put), its cursor then the topic's newest
 * sealed notification (a new subscriber gets what is sealed after it
 * subscribed); renewed by a confirmed re-subscription (lease and secret
 * replaced, cursor and delivery state kept); deleted by a confirmed
 * unsubscription (rs_hubsub_remove) or when its lease has ended
 * (rs_hubsub_expire).  The delivery side advances the cursor and may end
 * a row too (410, backlog); this unit never touches its delivery fields.
 *
 * Every write is ONE statement in autocommit mode (no transaction spanning
 * statements): it holds the store's write lock only while it runs, so a
 * connection of another thread of the same process never waits for it
 * between two of its statements (see rs_db.h, "Threads").  An outcome is
 * durable when the function returns APR_SUCCESS.
 *
 * Threads: the functions use the connection they are given, from the
 * thread that owns it.  Engine code: APR only.
 */
#ifndef RS_HUBSUB_H
#define RS_HUBSUB_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>
#include "rs_db.h"

#define RS_HUBSUB_KIND "sub"

/* One subscription row. */
typedef struct rs_hubsub_t {
    const char *set;
    const char *topic;  /* "change" or "framework" */
    const char *url;    /* callback */
    const char *secret; /* NULL: none */
    apr_time_t lease_until;
    apr_int64_t cursor;
    const char *addr;   /* key of the callback's address, NULL: unknown */
    const char *client; /* key of the requesting client, NULL: unknown */
} rs_hubsub_t;

/* The limits of one server's subscriptions (ResourceSyncHubMaxSubscriptions). */
typedef struct rs_hubsub_quota_t {
    apr_int64_t total;
    apr_int64_t per_addr;   /* for one callback address (IPv6: /64) */
    apr_int64_t per_client; /* from one client address (IPv6: /64) */
} rs_hubsub_quota_t;

/* The DDL of the subscriptions' own columns for schema version (the
 * module's schema, rs_schema.h): version 4 adds cb_addr and client to
 * notify_dests.  NULL for other versions. */
const char *const *rs_hubsub_schema(int version);

/* Insert the subscription x (set, topic, url, secret, lease_until, addr,
 * client), or renew it when (set, topic, url) exists: lease_until,
 * secret, addr and client replaced, cursor kept.  A new row's cursor is
 * the id of the topic's newest sealed notification (0: none); x->cursor
 * is not read.  *created (may be NULL) gets 1 for a new row, 0 for a
 * renewal.  The writes here (put, remove, expire) run outside a
 * transaction, each in one of its own that begins with the set's fence
 * (rs_db_begin_set): RS_LEASE_LOST, the rows as they were, when another
 * node writes the set now. */
apr_status_t rs_hubsub_put(rs_db_t *db, const rs_hubsub_t *x, int *created);

/* Delete the subscription (set, topic, url).  *removed (may be NULL) gets
 * 1 when it existed. */
apr_status_t rs_hubsub_remove(rs_db_t *db, const char *set, const char *topic, const char *url,
                              int *removed);

/* More work of the caller in the same transaction as a write of put or
 * remove (the built-in hub's queued request deleted with the outcome it
 * led to: rs_hubqueue): fn runs after the write, inside the transaction
 * that began with the set's fence; its failure rolls both back.  On
 * SQLite's second writer (rs_db_begin_set opens no transaction there)
 * each statement commits alone. */
typedef struct rs_hubsub_also_t {
    apr_status_t (*fn)(void *baton, rs_db_t *db);
    void *baton;
} rs_hubsub_also_t;

/* rs_hubsub_put and rs_hubsub_remove with also (NULL: as they are). */
apr_status_t rs_hubsub_put_also(rs_db_t *db, const rs_hubsub_t *x, int *created,
                                const rs_hubsub_also_t *also);
apr_status_t rs_hubsub_remove_also(rs_db_t *db, const char *set, const char *topic, const char *url,
                                   int *removed, const rs_hubsub_also_t *also);

/* Every subscription, ordered by set, topic and url, into *out (an array
 * of rs_hubsub_t from p). */
apr_status_t rs_hubsub_list(rs_db_t *db, apr_pool_t *p, apr_array_header_t **out);

/* The number of subscriptions of each (set, topic) that has any, ordered
 * by set and topic: *out, an array of rs_hubsub_count_t from p.  One
 * query, whoever removed rows (the hub's intake, the delivery, another
 * node): the status page's lines come from it. */
typedef struct rs_hubsub_count_t {
    const char *set;
    const char *topic;
    apr_int64_t n;
} rs_hubsub_count_t;
apr_status_t rs_hubsub_counts(rs_db_t *db, apr_pool_t *p, apr_array_header_t **out);

/* Delete the subscriptions whose lease ended before now (one statement
 * each; one renewed meanwhile stays); *gone (from p) gets those deleted
 * (rs_hubsub_t), for the log, also when a later one failed.  Those of a
 * set another node writes (its fence refused) are left to that node. */
apr_status_t rs_hubsub_expire(rs_db_t *db, apr_pool_t *p, apr_time_t now,
                              apr_array_header_t **gone);

/* Whether the NEW subscription x (set, topic, url; addr and client its
 * keys, NULL when not known yet: that limit is not checked) may be added
 * beside subs (rows as listed by rs_hubsub_list, those of the same
 * server): NULL when it may (also when it exists already: a renewal is
 * never refused), else the reason, in general terms: "too many
 * subscriptions" (q->total reached), "too many subscriptions for this
 * callback address" (q->per_addr rows with the same addr: every spelling
 * of an address, and every name of it, counts as one) or "too many
 * subscriptions from this client" (q->per_client rows with the same
 * client). */
const char *rs_hubsub_limit(const apr_array_header_t *subs, const rs_hubsub_t *x,
                            const rs_hubsub_quota_t *q);

#endif
