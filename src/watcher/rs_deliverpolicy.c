/* SPDX-License-Identifier: Apache-2.0 */
/* rs_deliverpolicy.c - the delivery decisions about one destination row
 * (see rs_deliverpolicy.h). */
#include <string.h>
#include <apr_strings.h>
#include "rs_deliverpolicy.h"
#include "rs_lease.h"
#include "rs_notify.h"

/* Whether rows (as listed) hold the row (set, topic, kind, url). */
static int listed(const apr_array_header_t *rows, const char *set, const char *topic,
                  const char *kind, const char *url)
{
    int i;
    for (i = 0; i < rows->nelts; i++) {
        const rs_notifydest_t *d = &APR_ARRAY_IDX(rows, i, rs_notifydest_t);
        if (!strcmp(d->set, set) && !strcmp(d->topic, topic) && !strcmp(d->kind, kind)
            && !strcmp(d->url, url)) {
            return 1;
        }
    }
    return 0;
}

/* Add the rows of hub h that are missing from rows (as listed before),
 * for both topics: a watcher's start with the same hubs writes nothing
 * (a write waits for the set's fence and the driver's lock). */
static apr_status_t hub_add(rs_db_t *db, const rs_deliverpolicy_hub_t *h,
                            const apr_array_header_t *rows, const rs_logger_t *log)
{
    static const char *const topics[] = { RS_NOTIFY_CHANGE, RS_NOTIFY_FRAMEWORK };
    const char *kind = h->ping ? RS_NOTIFYDEST_PING : RS_NOTIFYDEST_FAT;
    apr_status_t rv = APR_SUCCESS;
    int t;

    for (t = 0; rv == APR_SUCCESS && t < 2; t++) {
        apr_int64_t count, newest;
        int added = 0;
        if (listed(rows, h->set, topics[t], kind, h->url)) {
            continue;
        }
        if ((rv = rs_notifydest_backlog(db, h->set, topics[t], 0, &count, &newest)) == APR_SUCCESS
            && (rv = rs_notifydest_ensure(db, h->set, topics[t], kind, h->url, newest, &added))
                   == APR_SUCCESS
            && added) {
            rs_log_emit(log, RS_LOG_INFO, 0,
                        "set %s: publishing its %s topic to "
                        "hub %s (%s), from notification %" APR_INT64_T_FMT " on",
                        h->set, topics[t], h->url, h->ping ? "ping" : "fat", newest + 1);
        }
    }
    /* The set's fence refused: its rows are its writer's (this node adds
     * them once it writes the set: rs_delivery_reconcile again). */
    return rv == RS_LEASE_LOST ? APR_SUCCESS : rv;
}

/* Whether hubs holds the hub of row d (set, url, mode). */
static int configured(const apr_array_header_t *hubs, const rs_notifydest_t *d, int ping)
{
    int i;
    for (i = 0; i < hubs->nelts; i++) {
        const rs_deliverpolicy_hub_t *h = &APR_ARRAY_IDX(hubs, i, rs_deliverpolicy_hub_t);
        if (h->ping == ping && !strcmp(h->set, d->set) && !strcmp(h->url, d->url)) {
            return 1;
        }
    }
    return 0;
}

apr_status_t rs_deliverpolicy_reconcile(rs_db_t *db, const apr_array_header_t *hubs,
                                        const rs_logger_t *log, apr_pool_t *p)
{
    apr_array_header_t *rows;
    apr_status_t rv = APR_SUCCESS;
    int i;

    if ((rv = rs_notifydest_list(db, p, &rows)) != APR_SUCCESS) {
        return rv;
    }
    for (i = 0; rv == APR_SUCCESS && i < hubs->nelts; i++) {
        rv = hub_add(db, &APR_ARRAY_IDX(hubs, i, rs_deliverpolicy_hub_t), rows, log);
    }
    if (rv != APR_SUCCESS) {
        return rv;
    }
    for (i = 0; i < rows->nelts; i++) {
        const rs_notifydest_t *d = &APR_ARRAY_IDX(rows, i, rs_notifydest_t);
        int ping = !strcmp(d->kind, RS_NOTIFYDEST_PING);
        if ((ping || !strcmp(d->kind, RS_NOTIFYDEST_FAT)) && !configured(hubs, d, ping)) {
            if ((rv = rs_notifydest_delete(db, d)) == RS_LEASE_LOST) {
                continue; /* another node writes the set: its rows are that node's */
            }
            if (rv != APR_SUCCESS) {
                return rv;
            }
            rs_log_emit(log, RS_LOG_INFO, 0,
                        "set %s: hub %s (%s) is no longer "
                        "configured; its %s topic is no longer published there",
                        d->set, d->url, d->kind, d->topic);
        }
    }
    return APR_SUCCESS;
}

int rs_deliverpolicy_ready(const rs_notifydest_t *row, int sub, int inflight, apr_time_t now,
                           const rs_logger_t *log)
{
    if (inflight || row->next_try > now) {
        return RS_DELIVERPOLICY_WAIT;
    }
    if (sub && row->lease_until && row->lease_until < now) {
        rs_log_emit(log, RS_LOG_INFO, 0,
                    "set %s: subscription of %s to its %s topic "
                    "ended: its lease expired",
                    row->set, row->url, row->topic);
        return RS_DELIVERPOLICY_DROP;
    }
    return RS_DELIVERPOLICY_GO;
}

int rs_deliverpolicy_backlog(const rs_notifydest_t *row, int sub, apr_int64_t count,
                             apr_int64_t max_backlog, const rs_logger_t *log)
{
    if (!count) {
        return RS_DELIVERPOLICY_WAIT;
    }
    if (sub && count > max_backlog) {
        rs_log_emit(log, RS_LOG_WARN, 0,
                    "set %s: subscription of %s to its %s topic "
                    "ended: %" APR_INT64_T_FMT " notifications undelivered, more than "
                    "ResourceSyncHubMaxBacklog %" APR_INT64_T_FMT,
                    row->set, row->url, row->topic, count, max_backlog);
        return RS_DELIVERPOLICY_DROP;
    }
    return RS_DELIVERPOLICY_GO;
}

/* The notification in flight is done with: the cursor moves past it. */
static void advance(rs_notifydest_t *row, apr_int64_t sending)
{
    row->cursor = sending;
    row->attempts = 0;
    row->next_try = 0;
}

/* A retryable failure: try again later, or (at a hub) give the
 * notification up when it waited longer than `retry`. */
static void retry_later(rs_notifydest_t *row, int sub, apr_int64_t sending,
                        apr_time_t sending_until, apr_time_t retry, const rs_websub_result_t *r,
                        apr_time_t now, const rs_logger_t *log, apr_pool_t *p)
{
    apr_int64_t wait;

    if (!sub && sending_until < now - retry) {
        rs_log_emit(log, RS_LOG_WARN, 0,
                    "set %s: hub %s did not take notification "
                    "%" APR_INT64_T_FMT " of its %s topic within ResourceSyncNotifyRetry "
                    "(last: %s); it is skipped",
                    row->set, row->url, sending, row->topic,
                    r->status ? apr_ltoa(p, r->status) : r->error);
        advance(row, sending);
        return;
    }
    row->attempts++;
    wait = rs_websub_backoff(RS_DELIVERPOLICY_BACKOFF_BASE, RS_DELIVERPOLICY_BACKOFF_CAP,
                             (unsigned)row->attempts,
                             (apr_uint32_t)(apr_time_usec(now) * 2654435761u ^ row->attempts));
    if (r->retry_after >= 0) {
        /* The destination said when: that is when. */
        wait = r->retry_after > RS_DELIVERPOLICY_BACKOFF_CAP ? RS_DELIVERPOLICY_BACKOFF_CAP
                                                             : r->retry_after;
    }
    row->next_try = now + apr_time_from_sec(wait);
}

/* What answered, for log lines: "HTTP <status>" or the transfer's error. */
static const char *answer(apr_pool_t *p, const rs_websub_result_t *r)
{
    return r->status ? apr_psprintf(p, "HTTP %ld", r->status) : r->error;
}

int rs_deliverpolicy_done(rs_notifydest_t *row, int sub, apr_int64_t sending,
                          apr_time_t sending_until, apr_time_t retry, const rs_websub_result_t *r,
                          apr_time_t now, const rs_logger_t *log, apr_pool_t *p)
{
    row->last_status = (int)r->status;
    row->last_error = r->error && *r->error ? apr_pstrdup(p, r->error) : NULL;
    switch (r->outcome) {
    case RS_WEBSUB_OK:
        advance(row, sending);
        break;
    case RS_WEBSUB_RETRY:
        retry_later(row, sub, sending, sending_until, retry, r, now, log, p);
        break;
    case RS_WEBSUB_GONE:
        if (sub) {
            rs_log_emit(log, RS_LOG_INFO, 0,
                        "set %s: subscription of %s to its %s topic "
                        "ended by the subscriber (410 Gone)",
                        row->set, row->url, row->topic);
            return RS_DELIVERPOLICY_DROP;
        }
        /* fall through - at a hub, 410 is a refusal like any other */
    case RS_WEBSUB_PERMANENT:
        if (sub && r->status) {
            /* WebSub 7: a subscriber's answer other than 2xx and 410 is a
             * failure to retry (while the lease lasts), not a refusal. */
            retry_later(row, sub, sending, sending_until, retry, r, now, log, p);
            break;
        }
        if (sub) {
            rs_log_emit(log, RS_LOG_WARN, 0,
                        "set %s: subscription of %s to its %s topic "
                        "ended: the callback refused notification %" APR_INT64_T_FMT " (%s)",
                        row->set, row->url, row->topic, sending, answer(p, r));
            return RS_DELIVERPOLICY_DROP;
        }
        rs_log_emit(log, RS_LOG_ERR, 0,
                    "set %s: hub %s refused notification "
                    "%" APR_INT64_T_FMT " of its %s topic (%s); it is skipped",
                    row->set, row->url, sending, row->topic, answer(p, r));
        advance(row, sending);
        break;
    }
    return RS_DELIVERPOLICY_GO;
}
