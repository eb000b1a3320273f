/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_writer.c - one writer per set: whether this node's
 * watcher writes a set, in one place.
 *
 * With a PostgreSQL store several nodes may declare the same set; exactly
 * one of them may scan, journal and write the set's documents.  The rule
 * (step one of several nodes; leases with epochs and fencing replace the
 * lock here, and only here):
 *
 *   1. before its first scan of a set, and again after every new driver
 *      connection (a session lock ends with its session), the watcher
 *      takes the set's store lock on its driver connection
 *      (rs_storelock_try: PostgreSQL, an advisory lock of the session;
 *      SQLite, always held: one node);
 *   2. a set whose lock another node holds is "elsewhere": said once at
 *      notice, its status entry says so (mode RS_MODE_ELSEWHERE) and marks
 *      it unavailable, so that children answer its documents 503 with
 *      Retry-After as for a set whose root is missing (never documents of
 *      this node's older writing of the set); its events are dropped;
 *   3. every RS_STORERETRY_FIRST the lock is tried again; once taken, the
 *      set's open Change List and the ring of recent changes are read
 *      again from the store (the other node journaled meanwhile: the ring
 *      must hold its records too, it has no gaps), the set is reconciled
 *      as at a start (links, then a full scan against
 *      the stored inventory, which writes a Resource List) and only then
 *      made available again: written from then on.
 *
 * A failure to ask (the store failing) is a store failure of the set
 * (rs_storefail_note): its retry reopens the connection, which takes the
 * locks again (rs_writer_retake).  Only the driver's thread uses this.
 */
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_writer.h"
#include "rs_storelock.h"
#include "rs_time.h"

#define ELSEWHERE_WHY "written by another node (its store lock is held there)"

/* The set's entry: written by another node (unavailable, so children
 * answer 503), or, once this node has reconciled it, by this one (the
 * mass-deletion guard's own view of availability restored). */
static void publish(wset_t *ws, int elsewhere)
{
    rs_deliver_writes(ws->set, !elsewhere);
    if (elsewhere) {
        ws->status.mode = RS_MODE_ELSEWHERE;
        ws->status.unavailable = 1;
        apr_cpystrn(ws->status.why, ELSEWHERE_WHY, sizeof(ws->status.why));
    }
    else if (ws->status.unavailable && !strcmp(ws->status.why, ELSEWHERE_WHY)) {
        ws->status.unavailable = ws->massdel.unavailable;
        apr_cpystrn(ws->status.why, ws->massdel.why, sizeof(ws->status.why));
    }
    rs_wset_status_put(ws);
}

int rs_writer_take(wset_t *ws, apr_time_t now)
{
    apr_status_t rv;
    int held = 0;

    if ((rv = rs_storelock_try(ws->d->store, ws->set->name, &held)) != APR_SUCCESS) {
        rs_storefail_note(ws, rv, "taking the set's store lock");
        return 0;
    }
    if (!held) {
        ws->writer_at = now + RS_STORERETRY_FIRST;
        /* The store works: a failing state of the set ends here (the
         * writer's next full scan is the takeover's). */
        rs_storeretry_ok(&ws->retry, &ws->d->episode);
        if (!ws->elsewhere) {
            ws->elsewhere = 1;
            rs_log_emit(ws->log, RS_LOG_NOTICE, 0,
                        "set %s: another node writes it (its store lock is held in the %s); "
                        "this node does not write it and takes it over when that node stops",
                        ws->set->name, rs_global.store_shown ? rs_global.store_shown : "store");
            publish(ws, 1);
        }
        return 0;
    }
    if (ws->elsewhere) {
        ws->elsewhere = 0;
        rs_log_emit(ws->log, RS_LOG_NOTICE, 0,
                    "set %s: no other node writes it now; this node takes it over and "
                    "reconciles it",
                    ws->set->name);
        ws->status.mode = RS_MODE_STARTING; /* still unavailable: rs_writer_start */
    }
    return 1;
}

void rs_writer_start(wset_t *ws, apr_pool_t *p)
{
    rs_reconcile_links(p, ws);
    apr_pool_clear(p);
    rs_reconcile_full(p, ws, 1); /* its Resource List written before it returns */
    ws->next_tick = rs_time_mono() + rs_global.rescan;
    publish(ws, 0);
}

void rs_writer_poll(wset_t *ws, apr_pool_t *p, apr_time_t now)
{
    rs_scan_target_t *t;

    if (ws->w) { /* the takeover's full scan finds what they name */
        rs_watch_take_flags(ws->w);
        rs_watch_take(ws->w, p, now, &t);
    }
    apr_pool_clear(p);
    if (now >= ws->writer_at && rs_writer_take(ws, now)) {
        /* The other node journaled meanwhile: the set's open Change List
         * and the ring (whose sequences must have no gap, the other
         * node's records included) are read again from the store, as at
         * a start (sets_init). */
        apr_status_t rv = rs_changes_seed(p, ws->d->journal, ws->set, &ws->status);
        if (rv != APR_SUCCESS) {
            rs_log_emit(ws->log, RS_LOG_ERR, rv, "set %s: cannot read its Change Lists",
                        ws->set->name);
        }
        apr_pool_clear(p);
        rs_status_ring_reset();
        rs_changes_seed_ring(p, ws->d->journal, ws->log);
        apr_pool_clear(p);
        rs_writer_start(ws, p);
    }
    apr_pool_clear(p);
}

void rs_writer_retake(rs_drive_t *d)
{
    apr_time_t now = rs_time_mono();
    int i;

    for (i = 0; i < d->nsets; i++) {
        if (!d->ws[i].elsewhere) {
            rs_writer_take(&d->ws[i], now);
        }
    }
}
