/* rs_hubsub.h - the built-in hub's subscriptions in the state store.
 *
 * A subscription is a notify_dests row (rs_notify.h) of kind "sub": set,
 * topic ("change" or "framework"), url (the callback, as given, its query
 * string kept), secret (NULL: deliveries unsigned), lease_until (µs since
 * the epoch) and cursor (the id of the last notification of the topic
 * delivered to it).
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
    const char *topic;            /* "change" or "framework" */
    const char *url;              /* callback */
    const char *secret;           /* NULL: none */
    apr_time_t lease_until;
    apr_int64_t cursor;
} rs_hubsub_t;

/* Insert the subscription (set, topic, url), or renew it when it exists:
 * lease_until and secret replaced, cursor kept.  A new row's cursor is the
 * id of the topic's newest sealed notification (0: none).  *created (may
 * be NULL) gets 1 for a new row, 0 for a renewal. */
apr_status_t rs_hubsub_put(rs_db_t *db, const char *set, const char *topic, const char *url,
                           const char *secret, apr_time_t lease_until, int *created);

/* Delete the subscription (set, topic, url).  *removed (may be NULL) gets
 * 1 when it existed. */
apr_status_t rs_hubsub_remove(rs_db_t *db, const char *set, const char *topic, const char *url,
                              int *removed);

/* Every subscription, ordered by set, topic and url, into *out (an array
 * of rs_hubsub_t from p). */
apr_status_t rs_hubsub_list(rs_db_t *db, apr_pool_t *p, apr_array_header_t **out);

/* Delete the subscriptions whose lease ended before now (one statement
 * each; one renewed meanwhile stays); *gone (from p) gets those deleted
 * (rs_hubsub_t), for the log, also when a later one failed. */
apr_status_t rs_hubsub_expire(rs_db_t *db, apr_pool_t *p, apr_time_t now,
                              apr_array_header_t **gone);

/* Whether a NEW subscription (set, topic, url) may be added beside subs
 * (as listed by rs_hubsub_list): NULL when it may (also when it exists
 * already: a renewal is never refused), else the reason, from p: "too
 * many subscriptions" (max_total reached) or "too many subscriptions for
 * this callback host" (max_per_host subscriptions whose callback has the
 * same host, compared case-insensitively). */
const char *rs_hubsub_limit(apr_pool_t *p, const apr_array_header_t *subs, const char *set,
                            const char *topic, const char *url, apr_int64_t max_total,
                            apr_int64_t max_per_host);

#endif
