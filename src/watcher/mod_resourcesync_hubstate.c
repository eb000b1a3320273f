/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_hubstate.c - the hub intake's state and the steps its
 * parts share (see mod_resourcesync_hubintake.h). */
#include <stdlib.h>
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_jobs.h"
#include "mod_resourcesync_hubintake.h"
#include "rs_time.h"

rs_hubintake_t rs_hi;

/* The outcome of a request, logged at info (subscribers' mistakes are no
 * operator's business) and kept for the status page. */
void rs_hubstate_outcome(const intake_req_t *q, const char *what)
{
    char t[RS_TIME_BUFSIZE];
    rs_log_emit(&rs_hi.log, RS_LOG_INFO, APR_SUCCESS, "hub: %s %s of '%s' for '%s' from %s: %s",
                rs_hubreq_mode_name(q->req.mode), q->name, q->req.callback, q->req.topic,
                *q->req.client ? q->req.client : "(unknown)", what);
    apr_snprintf(rs_hi.last, sizeof(rs_hi.last), "%s %s %s %s", rs_time_format(t, apr_time_now()),
                 rs_hubreq_mode_name(q->req.mode), q->req.callback, what);
    rs_hi.changed = 1;
}

/* The store connection, opened at first use and after a failure. */
rs_db_t *rs_hubstate_store(void)
{
    if (rs_hi.db) {
        return rs_hi.db;
    }
    if (rs_jobs_store_open(&rs_hi.db, &rs_hi.db_pool, &rs_hi.log) != APR_SUCCESS) {
        return NULL;
    }
    /* Never wait for the driver's lock holding apr_dbd's mutex. */
    rs_db_busy_timeout(rs_hi.db, 0);
    return rs_hi.db;
}

/* After a store failure (not a busy store) the connection is opened
 * again next time. */
void rs_hubstate_store_failed(apr_status_t rv)
{
    if (rs_hi.db && !APR_STATUS_IS_EBUSY(rv)) {
        rs_hi.db = NULL;
        apr_pool_destroy(rs_hi.db_pool);
    }
}

/* Remove a spool file whose outcome is durable, giving its reservation
 * back.  A file that cannot be removed (permissions changed under the
 * watcher) is remembered, so it is not done again and again in this
 * watcher's life (logged once). */
void rs_hubstate_drop_file(apr_pool_t *p, const char *name, apr_size_t size)
{
    static const char stuck[] = "stuck";
    const char *path = apr_pstrcat(p, rs_hi.spool, "/", name, NULL);
    apr_status_t rv = apr_file_remove(path, p);

    if (rv != APR_SUCCESS && !APR_STATUS_IS_ENOENT(rv)) {
        rs_log_emit(&rs_hi.log, RS_LOG_ERR, rv,
                    "hub: cannot remove the spool file '%s'; it is "
                    "not handled again until the watcher restarts",
                    path);
        apr_hash_set(rs_hi.stuck, apr_pstrdup(rs_hi.pool, name), APR_HASH_KEY_STRING, stuck);
        return;
    }
    rs_hubgate_release(rs_hi.gate, 1, (apr_uint32_t)size);
}

/* Done with q: its file removed when its outcome is durable, its slot in
 * the scheduler freed, everything of it forgotten. */
void rs_hubstate_finish(intake_req_t *q, int remove)
{
    pending_t *pend = q->pend;
    if (remove) {
        rs_hubstate_drop_file(q->pool, pend->name, pend->size);
    }
    rs_hubsched_done(rs_hi.sched, pend->entry);
    apr_hash_set(rs_hi.known, pend->name, APR_HASH_KEY_STRING, NULL);
    free(pend);
    apr_pool_destroy(q->pool);
}
