/* mod_resourcesync_storefail.c - the watcher when the state store fails.
 *
 * A write to the store can fail for reasons that go away without a
 * restart: a full disk, a read-only or immutable file, a file system
 * remounted read-only, an I/O error.  The failed transaction is rolled
 * back, so the inventory still holds what it held before the batch: a
 * full scan finds the batch's changes again.  That makes the rule simple:
 *
 *   1. a failed transaction of a set (an event batch, a full scan, a list
 *      close, a snapshot's bookkeeping) puts the set in the "store failing"
 *      state (rs_storefail_note): its records are never published, its
 *      ticks (list closing, snapshots) wait, so no document claims
 *      anything past the last committed change;
 *   2. events keep being collected meanwhile (and dropped: the retry's
 *      full scan covers them);
 *   3. at the retry time (2 s, doubling up to 30 s) the driver opens a new
 *      store connection (one opened read-only while the file was immutable
 *      stays read-only) and reconciles the set by a full scan; its success
 *      ends the state (rs_storefail_ok).
 *
 * The watcher says it once: one line at error when the first set starts
 * failing ("store failing: <cause>"), one at notice when the last one works
 * again ("store works again"); the status segment's header carries the
 * cause (store_err) for the status page while any set fails.  The same
 * back-off applies to opening the store at the watcher's start
 * (rs_storefail_open): a transient cause is retried while children go on
 * serving what is on disk.
 */
#include <unistd.h>
#include "mod_resourcesync_drive.h"
#include "rs_schema.h"
#include "rs_statedir.h"
#include "rs_time.h"

#define RS_RETRY_FIRST  apr_time_from_sec(2)
#define RS_RETRY_MAX    apr_time_from_sec(30)

static void publish_cause(apr_status_t rv)
{
    rs_status_t *st = rs_status_get();
    if (st) {
        st->store_err = (apr_int32_t)rv;
    }
}

/* The watcher-wide episode: starts with the first failing set. */
static void episode_start(rs_drive_t *d, apr_status_t rv, const char *what)
{
    char buf[120];

    d->store_err = rv;
    publish_cause(rv);
    ap_log_error(APLOG_MARK, APLOG_ERR, rv, d->s, RS_TAG "store failing: %s (%s, in "
                 "ResourceSyncStateDir '%s'); changes are kept and published once it works "
                 "again, retrying every few seconds", apr_strerror(rv, buf, sizeof(buf)),
                 what, rs_global.state_dir);
}

static void episode_end(rs_drive_t *d)
{
    d->store_err = APR_SUCCESS;
    publish_cause(APR_SUCCESS);
    ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, d->s, RS_TAG "store works again");
    /* The store's own error lines are logged again in a later episode. */
    rs_logonce_forget();
}

static apr_interval_time_t next_delay(apr_interval_time_t delay)
{
    if (!delay) {
        return RS_RETRY_FIRST;
    }
    return delay * 2 > RS_RETRY_MAX ? RS_RETRY_MAX : delay * 2;
}

void rs_storefail_note(wset_t *ws, apr_status_t rv, const char *what)
{
    rs_drive_t *d = ws->d;

    if (rv == APR_SUCCESS) {
        rv = APR_EGENERAL;
    }
    if (!ws->store_err) {
        ws->retry_delay = 0;
        if (d->nfailing++ == 0) {
            episode_start(d, rv, what);
        }
        rs_log_emit(ws->log, RS_LOG_DEBUG, rv, "set %s: %s failed; reconciling the set "
                    "once the store works again", ws->set->name, what);
    }
    ws->store_err = rv;
    ws->retry_delay = next_delay(ws->retry_delay);
    ws->retry_at = rs_time_mono() + ws->retry_delay;
    ws->dirty = 1;      /* a new Resource List once it works */
}

apr_status_t rs_storefail_resync(apr_pool_t *p, wset_t *ws)
{
    apr_status_t rv = rs_changes_resync(p, ws->d->journal, ws->set, &ws->status);
    ws->resync = rv != APR_SUCCESS;
    return rv;
}

void rs_storefail_failed(apr_pool_t *p, wset_t *ws, apr_status_t rv, const char *what)
{
    ws->resync = 1;
    rs_storefail_resync(p, ws);
    rs_storefail_note(ws, rv, what);
}

int rs_storefail_due(const wset_t *ws, apr_time_t now)
{
    return ws->store_err && now >= ws->retry_at;
}

void rs_storefail_ok(wset_t *ws)
{
    if (!ws->store_err) {
        return;
    }
    ws->store_err = APR_SUCCESS;
    ws->retry_delay = 0;
    if (--ws->d->nfailing == 0) {
        episode_end(ws->d);
    }
}

/* Open the store and the journal in a pool of their own. */
static apr_status_t open_store(rs_drive_t *d, apr_pool_t **pool, rs_db_t **store,
                               rs_journal_t **journal)
{
    apr_status_t rv;

    apr_pool_create(pool, d->pool);
    rv = rs_schema_open(store, *pool, RS_STATEDIR_DB_DRIVER,
                        rs_statedir_db(*pool, rs_global.state_dir), &d->log);
    if (rv == APR_SUCCESS) {
        rv = rs_journal_open(journal, *store, *pool);
    }
    if (rv != APR_SUCCESS) {
        apr_pool_destroy(*pool);
        *pool = NULL;
    }
    return rv;
}

apr_status_t rs_storefail_reopen(rs_drive_t *d)
{
    apr_status_t rv;
    int i;

    /* Every connection of the process goes first: SQLite shares a file's
     * locks and -shm index among them, and one opened read-only would
     * keep the new one read-only. */
    rs_jobs_close_store();
    if (d->store_pool) {
        apr_pool_destroy(d->store_pool);
    }
    d->store_pool = NULL;
    d->store = NULL;
    d->journal = NULL;
    if ((rv = open_store(d, &d->store_pool, &d->store, &d->journal)) == APR_SUCCESS) {
        rs_jobs_init(d->pool, d->s, d->store);
        return APR_SUCCESS;
    }
    /* No connection: no set may touch the store before a retry opens
     * one. */
    for (i = 0; i < d->nsets; i++) {
        rs_storefail_note(&d->ws[i], rv, "opening the store");
    }
    return rv;
}

/* Sleep for delay, keeping the heartbeat; 0 when the parent is gone. */
static int wait_retry(apr_interval_time_t delay)
{
    apr_time_t end = rs_time_mono() + delay;
    rs_status_t *st = rs_status_get();

    while (rs_time_mono() < end) {
        if (getppid() == 1) {
            return 0;
        }
        if (st) {
            st->heartbeat = apr_time_now();
        }
        apr_sleep(apr_time_from_msec(200));
    }
    return 1;
}

apr_status_t rs_storefail_open(rs_drive_t *d)
{
    apr_interval_time_t delay = 0;
    apr_status_t rv;

    for (;;) {
        rv = open_store(d, &d->store_pool, &d->store, &d->journal);
        if (rv == APR_SUCCESS) {
            if (delay) {
                episode_end(d);
            }
            return APR_SUCCESS;
        }
        if (!rs_db_transient(rv)) {
            return rv;
        }
        if (!delay) {
            episode_start(d, rv, "opening the store");
        }
        delay = next_delay(delay);
        if (!wait_retry(delay)) {
            return rv;      /* the parent is gone: the watcher ends */
        }
    }
}
