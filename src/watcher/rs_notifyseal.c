/* SPDX-License-Identifier: Apache-2.0 */
/* rs_notifyseal.c - sealing a set's change notifications, the sweep and
 * the pruning of the outbox (see rs_notifyseal.h). */
#include "rs_notifyseal.h"

void rs_notifyseal_changed(rs_notifyseal_t *st, apr_int64_t appended, apr_time_t delay,
                           apr_time_t now)
{
    if (appended > 0 && !st->due) {
        st->due = now + delay;
    }
}

apr_time_t rs_notifyseal_next(const rs_notifyseal_t *st)
{
    return st->due;
}

/* Seal every open notification (quiet_before APR_INT64_MAX: the outbox
 * leaves none open); returns whether any was sealed.  A failure is tried
 * again after RS_NOTIFYSEAL_SWEEP. */
static int seal(rs_notifyseal_t *st, rs_notify_t *n, const rs_notify_opts_t *o, apr_time_t now,
                const rs_logger_t *log, apr_pool_t *p)
{
    int sealed = 0;
    apr_status_t rv = APR_EGENERAL;

    if (!n || (rv = rs_notify_seal(n, p, o, APR_INT64_MAX, &sealed, NULL)) != APR_SUCCESS) {
        rs_log_emit(log, RS_LOG_ERR, rv, "set %s: cannot seal its change notifications", o->set);
        st->due = now + RS_NOTIFYSEAL_SWEEP;
        return 0;
    }
    st->due = 0;
    return sealed > 0;
}

/* Open notifications nobody announced become due now; the outbox is
 * pruned every RS_NOTIFYSEAL_PRUNE. */
static void sweep(rs_notifyseal_t *st, rs_notify_t *n, const char *set, apr_time_t now,
                  apr_time_t wall)
{
    int open = 0;

    st->sweep = now + RS_NOTIFYSEAL_SWEEP;
    if (!n) {
        return;
    }
    if (!st->due && rs_notify_has_open(n, set, &open) == APR_SUCCESS && open) {
        st->due = now;
    }
    if (now >= st->prune) {
        apr_time_t cutoff = wall - RS_NOTIFY_RETENTION;
        st->prune = now + RS_NOTIFYSEAL_PRUNE;
        rs_notify_prune(n, set, RS_NOTIFY_CHANGE, cutoff, NULL);
        rs_notify_prune(n, set, RS_NOTIFY_FRAMEWORK, cutoff, NULL);
    }
}

int rs_notifyseal_start(rs_notifyseal_t *st, rs_notify_t *n, const rs_notify_opts_t *o,
                        apr_time_t now, const rs_logger_t *log, apr_pool_t *p)
{
    st->started = 1;
    return RS_NOTIFYSEAL_STARTED | (seal(st, n, o, now, log, p) ? RS_NOTIFYSEAL_SEALED : 0);
}

int rs_notifyseal_poll(rs_notifyseal_t *st, rs_notify_t *n, const rs_notify_opts_t *o,
                       apr_time_t now, apr_time_t wall, const rs_logger_t *log, apr_pool_t *p)
{
    if (!st->started) {
        return rs_notifyseal_start(st, n, o, now, log, p);
    }
    if (now >= st->sweep) {
        sweep(st, n, o->set, now, wall);
    }
    if (st->due && now >= st->due) {
        return seal(st, n, o, now, log, p) ? RS_NOTIFYSEAL_SEALED : 0;
    }
    return 0;
}
