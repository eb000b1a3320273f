/* SPDX-License-Identifier: Apache-2.0 */
/* rs_storeretry.c - see rs_storeretry.h */
#include "rs_storeretry.h"

void rs_storeretry_init(rs_storeretry_episode_t *ep, const char *state_dir, const rs_logger_t *log,
                        const rs_storeretry_cb_t *cb)
{
    ep->nfailing = 0;
    ep->err = APR_SUCCESS;
    ep->state_dir = state_dir;
    ep->log = log;
    ep->cb = cb;
    ep->store = NULL;
    ep->store_shown = NULL;
}

void rs_storeretry_use(rs_storeretry_episode_t *ep, const rs_storecfg_t *store, const char *shown)
{
    ep->store = store;
    ep->store_shown = shown;
}

static void publish(const rs_storeretry_episode_t *ep, apr_status_t cause)
{
    if (ep->cb && ep->cb->publish) {
        ep->cb->publish(ep->cb->baton, cause);
    }
}

/* The watcher-wide episode: starts with the first failing set (or the
 * first failed open at the start). */
static void episode_start(rs_storeretry_episode_t *ep, apr_status_t rv, const char *what)
{
    char buf[120];

    ep->err = rv;
    publish(ep, rv);
    if (ep->store_shown) {
        rs_log_emit(ep->log, RS_LOG_ERR, rv,
                    "store failing: %s (%s, in the %s); changes are kept and published once it "
                    "works again, retrying every few seconds",
                    apr_strerror(rv, buf, sizeof(buf)), what, ep->store_shown);
        return;
    }
    rs_log_emit(ep->log, RS_LOG_ERR, rv,
                "store failing: %s (%s, in ResourceSyncStateDir "
                "'%s'); changes are kept and published once it works again, retrying every "
                "few seconds",
                apr_strerror(rv, buf, sizeof(buf)), what, ep->state_dir);
}

static void episode_end(rs_storeretry_episode_t *ep)
{
    ep->err = APR_SUCCESS;
    publish(ep, APR_SUCCESS);
    rs_log_emit(ep->log, RS_LOG_NOTICE, 0, "store works again");
    if (ep->cb && ep->cb->ended) {
        ep->cb->ended(ep->cb->baton);
    }
}

apr_interval_time_t rs_storeretry_next_delay(apr_interval_time_t delay)
{
    if (!delay) {
        return RS_STORERETRY_FIRST;
    }
    return delay * 2 > RS_STORERETRY_MAX ? RS_STORERETRY_MAX : delay * 2;
}

int rs_storeretry_note(rs_storeretry_t *sr, rs_storeretry_episode_t *ep, apr_status_t rv,
                       const char *name, const char *what, apr_time_t now,
                       const rs_logger_t *setlog)
{
    int entered = !sr->err;

    if (rv == APR_SUCCESS) {
        rv = APR_EGENERAL;
    }
    if (entered) { /* (sr->delay is 0: rs_storeretry_ok) */
        if (ep->nfailing++ == 0) {
            episode_start(ep, rv, what);
        }
        rs_log_emit(setlog, RS_LOG_DEBUG, rv,
                    "set %s: %s failed; reconciling the set "
                    "once the store works again",
                    name, what);
    }
    sr->err = rv;
    sr->delay = rs_storeretry_next_delay(sr->delay);
    sr->at = now + sr->delay;
    return entered;
}

int rs_storeretry_due(const rs_storeretry_t *sr, apr_time_t now)
{
    return sr->err && now >= sr->at;
}

int rs_storeretry_ok(rs_storeretry_t *sr, rs_storeretry_episode_t *ep)
{
    if (!sr->err) {
        return 0;
    }
    sr->err = APR_SUCCESS;
    sr->delay = 0;
    if (--ep->nfailing == 0) {
        episode_end(ep);
    }
    return 1;
}

apr_status_t rs_storeretry_connect(const rs_storeretry_episode_t *ep, apr_pool_t *parent,
                                   const rs_logger_t *storelog, apr_pool_t **pool, rs_db_t **store,
                                   rs_journal_t **journal)
{
    apr_status_t rv;

    *store = NULL;
    *journal = NULL;
    apr_pool_create(pool, parent);
    rv = rs_storecfg_open(store, *pool, ep->store, ep->state_dir, storelog);
    if (rv == APR_SUCCESS) {
        rv = rs_journal_open(journal, *store, *pool);
    }
    if (rv != APR_SUCCESS) {
        apr_pool_destroy(*pool); /* closes the connection, if any */
        *pool = NULL;
        *store = NULL;
        *journal = NULL;
    }
    return rv;
}

apr_status_t rs_storeretry_reopen(const rs_storeretry_episode_t *ep, apr_pool_t *parent,
                                  const rs_logger_t *storelog, apr_pool_t **pool, rs_db_t **store,
                                  rs_journal_t **journal)
{
    if (*pool) {
        apr_pool_destroy(*pool);
    }
    *pool = NULL;
    return rs_storeretry_connect(ep, parent, storelog, pool, store, journal);
}

apr_status_t rs_storeretry_open(rs_storeretry_episode_t *ep, apr_pool_t *parent,
                                const rs_logger_t *storelog, apr_pool_t **pool, rs_db_t **store,
                                rs_journal_t **journal)
{
    apr_interval_time_t delay = 0;
    apr_status_t rv;

    for (;;) {
        rv = rs_storeretry_connect(ep, parent, storelog, pool, store, journal);
        if (rv == APR_SUCCESS) {
            if (delay) {
                episode_end(ep);
            }
            return APR_SUCCESS;
        }
        if (!rs_db_transient(rv)) {
            return rv;
        }
        if (!delay) {
            episode_start(ep, rv, "opening the store");
        }
        delay = rs_storeretry_next_delay(delay);
        if (!ep->cb || !ep->cb->wait || !ep->cb->wait(ep->cb->baton, delay)) {
            return rv; /* the parent is gone: the watcher ends */
        }
    }
}
