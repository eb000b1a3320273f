/* SPDX-License-Identifier: Apache-2.0 */
/* rs_dumpsched.c - see rs_dumpsched.h */
#include <errno.h>
#include "rs_dumpsched.h"
#include "rs_log.h"

int rs_dumpsched_no_space(apr_status_t rv)
{
    return APR_STATUS_IS_ENOSPC(rv)
#ifdef EDQUOT
           || rv == APR_FROM_OS_ERROR(EDQUOT)
#endif
        ;
}

int rs_dumpsched_prune(rs_dumpsched_t *d, apr_time_t now, int running, apr_uint64_t gen)
{
    if (running || !gen || now < d->prune_next) {
        return 0;
    }
    d->prune_next = now + apr_time_from_sec(1);
    return 1;
}

int rs_dumpsched_due(const rs_dumpsched_t *d, apr_time_t now, int free)
{
    return free && (d->due || !d->tried) && now >= d->next;
}

void rs_dumpsched_started(rs_dumpsched_t *d, apr_time_t now)
{
    d->started = now;
    d->due = 0;
    d->tried = 1;
}

void rs_dumpsched_built(rs_dumpsched_t *d, apr_time_t now, apr_interval_time_t interval)
{
    apr_interval_time_t took = now > d->started ? now - d->started : 0;

    d->next = now + (took < interval ? took : interval);
}

int rs_dumpsched_nospace(rs_dumpsched_t *d, apr_time_t now, apr_interval_time_t interval)
{
    int level = d->nospace ? RS_LOG_DEBUG : RS_LOG_WARN;

    d->nospace = 1;
    d->due = 1;
    d->next = now + (interval > apr_time_from_sec(1) ? interval : apr_time_from_sec(1));
    return level;
}

void rs_dumpsched_failed(rs_dumpsched_t *d)
{
    d->next = 0; /* the next snapshot tries again */
}

int rs_dumpsched_published(rs_dumpsched_t *d)
{
    int was = d->nospace;

    d->nospace = 0;
    return was;
}

int rs_cdumpsched_due(const rs_cdumpsched_t *c, apr_time_t now, int free, apr_int64_t open_id)
{
    int collect = c->deleted && now >= c->gc_next;

    return free && (c->seen != open_id || now >= c->next || collect);
}

void rs_cdumpsched_started(rs_cdumpsched_t *c, apr_time_t now, apr_int64_t open_id,
                           apr_interval_time_t period, int *collect, int *first)
{
    *collect = c->deleted;
    c->deleted = 0;
    *first = !c->written;
    c->seen = open_id;
    c->next = now + (period < RS_CDUMPSCHED_RECHECK ? period : RS_CDUMPSCHED_RECHECK);
}

int rs_cdumpsched_nospace(rs_cdumpsched_t *c, apr_time_t now)
{
    int level = c->nospace ? RS_LOG_DEBUG : RS_LOG_WARN;

    c->nospace = 1;
    c->next = now + RS_CDUMPSCHED_NOSPACE_RETRY;
    return level;
}

int rs_cdumpsched_ok(rs_cdumpsched_t *c)
{
    int was = c->nospace;

    c->nospace = 0;
    return was;
}

void rs_cdumpsched_collected(rs_cdumpsched_t *c, apr_time_t now, apr_interval_time_t took)
{
    apr_interval_time_t wait = 10 * took;

    c->gc_next = now + (wait > RS_CDUMPSCHED_GC_MIN ? wait : RS_CDUMPSCHED_GC_MIN);
}
