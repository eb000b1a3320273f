/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubstate.c - the hub intake's state and the steps its parts share
 * (see rs_hubstate.h). */
#include <stdlib.h>
#include <string.h>
#include <apr_file_io.h>
#include <apr_strings.h>
#include "rs_hubqueue.h"
#include "rs_hubstate.h"
#include "rs_lease.h"
#include "rs_time.h"

apr_time_t rs_hubstate_now(const rs_hubintake_t *hi)
{
    return hi->hooks.clock ? hi->hooks.clock(hi->hooks.baton) : apr_time_now();
}

/* The outcome of a request, logged at info (subscribers' mistakes are no
 * operator's business) and kept for the status page. */
void rs_hubstate_outcome(const rs_hubintake_req_t *q, const char *what)
{
    rs_hubintake_t *hi = q->hi;
    char t[RS_TIME_BUFSIZE];
    rs_log_emit(&hi->log, RS_LOG_INFO, APR_SUCCESS, "hub: %s %s of '%s' for '%s' from %s: %s",
                rs_hubreq_mode_name(q->req.mode), q->name, q->req.callback, q->req.topic,
                *q->req.client ? q->req.client : "(unknown)", what);
    apr_snprintf(hi->last, sizeof(hi->last), "%s %s %s %s", rs_time_format(t, rs_hubstate_now(hi)),
                 rs_hubreq_mode_name(q->req.mode), q->req.callback, what);
    hi->changed = 1;
}

/* The store connection, opened at first use and after a failure. */
rs_db_t *rs_hubstate_store(rs_hubintake_t *hi)
{
    if (hi->db) {
        return hi->db;
    }
    if (hi->hooks.store_open(hi->hooks.baton, &hi->db, &hi->db_pool, &hi->log) != APR_SUCCESS) {
        hi->db = NULL;
        return NULL;
    }
    /* Never wait for the driver's lock holding apr_dbd's mutex. */
    rs_db_busy_timeout(hi->db, 0);
    return hi->db;
}

/* After a store failure (not a busy store) the connection is opened
 * again next time. */
void rs_hubstate_store_failed(rs_hubintake_t *hi, apr_status_t rv)
{
    if (hi->db && !APR_STATUS_IS_EBUSY(rv)) {
        hi->db = NULL;
        apr_pool_destroy(hi->db_pool);
    }
}

int rs_hubstate_writes(rs_hubintake_t *hi, const char *set)
{
    rs_db_t *db = rs_hubstate_store(hi);
    const char *node = hi->hooks.node ? hi->hooks.node : "";
    rs_lease_info_t in;
    apr_pool_t *p;
    apr_status_t rv;

    if (!db) {
        return -1;
    }
    if (rs_db_one_node(db)) {
        return 1; /* one node: it writes every set it serves */
    }
    /* First a read, which waits for no lock: a lease that has ended, or
     * is held under another node's name, is not this node's. */
    apr_pool_create(&p, hi->pool);
    rv = rs_lease_peek(db, p, set, &in);
    if (rv == APR_SUCCESS && (!in.live || strcmp(in.node, node))) {
        apr_pool_destroy(p);
        return 0;
    }
    apr_pool_destroy(p);
    if (rv != APR_SUCCESS) {
        rs_hubstate_store_failed(hi, rv);
        return -1;
    }
    /* Under this node's name: the process's fence is the one place that
     * knows whether this watcher holds it (the writer's leases; two nodes
     * may share a name); its statement renews a lease held, as any write.
     * The row locked (its holder's transaction is under way; the lock
     * timeout of this connection is short): the driver of this node is
     * writing the set. */
    if ((rv = rs_db_begin_set(db, set)) == APR_SUCCESS) {
        rs_db_rollback(db);
        return 1;
    }
    if (rv == RS_LEASE_LOST) {
        return 0;
    }
    if (APR_STATUS_IS_EBUSY(rv)) {
        return 1;
    }
    rs_hubstate_store_failed(hi, rv);
    return -1;
}

const char *rs_hubstate_queued_name(apr_pool_t *p, apr_int64_t id)
{
    return apr_psprintf(p, "queued-%" APR_INT64_T_FMT, id);
}

/* A queued row whose outcome is durable (a denial sent, a request not
 * confirmed, a malformed record): deleted under the set's fence. */
static void drop_row(rs_hubintake_req_t *q)
{
    rs_hubintake_t *hi = q->hi;
    rs_db_t *db = rs_hubstate_store(hi);
    apr_status_t rv = db ? rs_hubqueue_delete(db, q->qset, q->pend->qid, NULL) : APR_EGENERAL;

    if (rv == RS_LEASE_LOST) {
        rs_log_emit(&hi->log, RS_LOG_INFO, 0,
                    "hub: set %s is not written by this node now; its queued request %s "
                    "is left to its writer",
                    q->qset, q->name);
    }
    else if (rv != APR_SUCCESS) {
        /* Taken again at a later sweep (verified again). */
        rs_log_emit(&hi->log, RS_LOG_ERR, rv, "hub: cannot delete the queued request %s", q->name);
        rs_hubstate_store_failed(hi, rv);
    }
}

/* Remove a spool file whose outcome is durable, giving its reservation
 * back.  A file that cannot be removed (permissions changed under the
 * watcher) is remembered, so it is not done again and again in this
 * watcher's life (logged once). */
void rs_hubstate_drop_file(rs_hubintake_t *hi, apr_pool_t *p, const char *name, apr_size_t size)
{
    static const char stuck[] = "stuck";
    const char *path = apr_pstrcat(p, hi->spool, "/", name, NULL);
    apr_status_t rv = apr_file_remove(path, p);

    if (rv != APR_SUCCESS && !APR_STATUS_IS_ENOENT(rv)) {
        rs_log_emit(&hi->log, RS_LOG_ERR, rv,
                    "hub: cannot remove the spool file '%s'; it is "
                    "not handled again until the watcher restarts",
                    path);
        apr_hash_set(hi->stuck, apr_pstrdup(hi->pool, name), APR_HASH_KEY_STRING, stuck);
        return;
    }
    rs_hubgate_release(hi->gate, 1, (apr_uint32_t)size);
}

/* Done with q: its file removed when its outcome is durable, its slot in
 * the scheduler freed, everything of it forgotten. */
void rs_hubstate_finish(rs_hubintake_req_t *q, int remove)
{
    rs_hubintake_t *hi = q->hi;
    rs_hubpending_t *pend = q->pend;
    if (remove && pend->qid) {
        if (!q->row_gone) {
            drop_row(q);
        }
    }
    else if (remove) {
        rs_hubstate_drop_file(hi, q->pool, pend->name, pend->size);
    }
    rs_hubsched_done(hi->sched, pend->entry);
    apr_hash_set(hi->known, pend->name, APR_HASH_KEY_STRING, NULL);
    free(pend);
    apr_pool_destroy(q->pool);
}
