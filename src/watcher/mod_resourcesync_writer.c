/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_writer.c - one writer per set: whether this node's
 * watcher writes a set, in one place.
 *
 * With a PostgreSQL store several nodes may declare the same set; exactly
 * one of them may scan, journal and write the set's documents.  The rule
 * is a lease per set in the store (rs_lease: holder, token, epoch,
 * expiry on the database's clock), ResourceSyncFailover long:
 *
 *   1. before its first scan of a set the watcher takes the set's lease
 *      with its token (random per watcher start);
 *   2. every transaction that writes the set's rows begins with the
 *      fence (rs_db_begin_set calls fence() below, on whichever thread):
 *      the lease must still be this token's at this epoch and live, and
 *      is renewed; a refused fence rolls the transaction back.  The loop
 *      renews a lease no write renewed for a third of the failover time
 *      (rs_writer_heartbeat);
 *   3. a set whose lease another node holds is "elsewhere": said once at
 *      notice, its status entry says so (mode RS_MODE_ELSEWHERE) and holds
 *      none of this node's older writing of the set (forget_documents):
 *      children answer a document 503 with Retry-After until this node
 *      follows the writer's; its events are dropped.  A
 *      lease found lost by a fence or a renewal (this node was frozen or
 *      cut off longer than the failover time, and another node may have
 *      taken over) makes the set elsewhere in the same way
 *      (rs_writer_lost), said once with the reason;
 *   4. every min(2 s, failover / 4) the lease is tried again; once taken
 *      (a new epoch), the set's open Change List and the ring of recent
 *      changes are read again from the store (the other node journaled
 *      meanwhile: the ring must hold its records too, it has no gaps),
 *      the set is reconciled as at a start (links, then a full scan
 *      against the stored inventory, which writes a Resource List) and
 *      only then made available again: written from then on;
 *   5. a signal that ends the watcher (httpd's stop or restart) releases
 *      its leases first (a thread of its own, shared stores only), so that
 *      another node takes the sets over at its next try.
 *
 * A failure to ask (the store failing) is a store failure of the set
 * (rs_storefail_note): its retry reopens the connection and renews the
 * leases (rs_writer_retake).  The leases are the driver's (ws->lease);
 * the fence reads them on other threads too (the job thread's
 * transactions), under mx, which a fence holds for its statement: the
 * releasing thread, which takes mx and never gives it back, knows that
 * no fence is under way and none begins.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <apr_strings.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_setconf.h"
#include "mod_resourcesync_follow.h"
#include "mod_resourcesync_writer.h"
#include "rs_storecfg.h"
#include "rs_time.h"

static apr_thread_mutex_t *mx;
/* A store several nodes share (PostgreSQL): leases end by time, so they
 * are renewed, and released at a stop.  One node's (SQLite): neither. */
static int shared;

/* Another node's tries: at least every 2 s, and 4 times per failover. */
static apr_interval_time_t poll_interval(void)
{
    apr_interval_time_t q = rs_global.store.failover / 4;
    return q < apr_time_from_sec(2) ? q : apr_time_from_sec(2);
}

/* Empty the documents of ws's entry: nothing this node wrote of the set
 * (as an earlier writer, or seeded from its disk) is served while another
 * node writes it.  Its name, history and the store's view stay; each
 * kind of document comes back as this node follows the writer's (the
 * follower's replay fills gen, the open list's extent, the dumps), and
 * until then children answer it 503 with Retry-After, as at a start. */
static void forget_documents(rs_status_set_t *e)
{
    e->gen = 0;
    e->at = e->completed = 0;
    e->entries = 0;
    e->parts = 0;
    e->bytes = -1;
    e->cl_open_id = 0;
    e->cl_ready = 0;
    e->cl_from = 0;
    e->cl_first_seq = e->cl_last_seq = e->cl_count = 0;
    e->cl_last_dt = 0;
    e->cl_bytes = e->cl_paths = -1;
    e->dump_gen = 0;
    e->cdump_ready = 0;
    e->held = 0;
    e->topics = 0;
}

/* The set's entry: written by another node (mode RS_MODE_ELSEWHERE, its
 * documents emptied: see forget_documents), or, once this node has
 * reconciled it, by this one (its mode and documents are the
 * reconciliation's). */
static void publish(wset_t *ws, int elsewhere)
{
    rs_deliver_writes(ws->set, !elsewhere);
    if (elsewhere) {
        ws->status.mode = RS_MODE_ELSEWHERE;
        if (!ws->setconf_differs) {
            ws->status.unavailable = 0;
            ws->status.why[0] = '\0';
        }
        forget_documents(&ws->status);
    }
    rs_wset_status_put(ws);
}

/* ------------------------------------------------------------ the fence */

static wset_t *set_named(rs_drive_t *d, const char *set)
{
    int i;
    for (i = 0; d->ws && i < d->nsets; i++) {
        if (!strcmp(d->ws[i].set->name, set)) {
            return &d->ws[i];
        }
    }
    return NULL;
}

/* rs_db_fence_fn: the lease of set as held now, checked and renewed in
 * db's transaction.  A set this watcher does not serve is not its. */
static apr_status_t fence(void *baton, rs_db_t *db, const char *set)
{
    apr_time_t start = rs_time_mono();
    wset_t *ws;
    apr_status_t rv = RS_LEASE_LOST;

    apr_thread_mutex_lock(mx);
    if ((ws = set_named(baton, set)) && ws->lease.epoch > 0) {
        if ((rv = rs_lease_fence(db, &ws->lease)) == APR_SUCCESS) {
            ws->lease_at = start;
        }
    }
    apr_thread_mutex_unlock(mx);
    return rv;
}

/* ------------------------------------------------- release at a stop */

/* The signals whose default ends the watcher (watcher_signals). */
static void stop_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGUSR1);
}

/* The signal's thread: wait for one of them, release every lease held
 * (a connection of its own: the driver's belongs to the driver's
 * thread), then end the process by the same signal, as before.  mx stays
 * taken: no fence begins after the release.  A release waits for a
 * transaction of the driver's that already passed its fence (it holds
 * the row), and httpd's SIGKILL after 3 s bounds the whole. */
static void *APR_THREAD_FUNC stop_thread(apr_thread_t *t, void *baton)
{
    rs_drive_t *d = baton;
    apr_pool_t *p = NULL;
    rs_db_t *db = NULL;
    sigset_t set;
    int sig = SIGTERM, i;

    (void)t;
    stop_signals(&set);
    while (sigwait(&set, &sig) != 0) {
    }
    apr_thread_mutex_lock(mx);
    apr_pool_create(&p, NULL);
    if (rs_storecfg_open(&db, p, &rs_global.store, rs_global.state_dir, NULL) == APR_SUCCESS) {
        for (i = 0; d->ws && i < d->nsets; i++) {
            rs_lease_release(db, &d->ws[i].lease);
        }
    }
    signal(sig, SIG_DFL);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(1);
    return NULL;
}

void rs_writer_init(rs_drive_t *d)
{
    apr_thread_t *t;
    sigset_t set;

    apr_thread_mutex_create(&mx, APR_THREAD_MUTEX_DEFAULT, d->pool);
    rs_db_fence_install(fence, d);
    shared = rs_storecfg_is_pgsql(&rs_global.store);
    if (!shared) {
        return; /* one node: a take always wins, nothing to hand over */
    }
    /* Blocked in every thread (they inherit it from this one), so the
     * signals reach the stop thread alone. */
    stop_signals(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    if (apr_thread_create(&t, NULL, stop_thread, d, d->pool) != APR_SUCCESS) {
        pthread_sigmask(SIG_UNBLOCK, &set, NULL); /* they end it at once, as before */
    }
}

/* ----------------------------------------------------------- the rule */

static void lease_init(wset_t *ws)
{
    static const char *token;

    if (!token) {
        token = rs_lease_token(ws->d->pool);
    }
    if (!ws->lease.set) {
        ws->lease.set = ws->set->name;
        ws->lease.node = rs_global.node_name;
        ws->lease.token = token;
        ws->lease.ttl = rs_global.store.failover;
    }
}

/* The set is not this node's to write (another holds the lease, or its
 * own was lost): its events dropped, tried again later.  Its entry is
 * emptied once, when it becomes elsewhere: what this node then follows of
 * the writer's documents stays published across the later tries. */
static void become_elsewhere(wset_t *ws, apr_time_t now)
{
    ws->writer_at = now + poll_interval();
    if (!ws->elsewhere) {
        ws->elsewhere = 1;
        publish(ws, 1);
    }
}

/* Another node holds ws's set: this node's options against those it
 * recorded (a shared store's only). */
static void check_options(wset_t *ws)
{
    rs_lease_info_t in;
    apr_pool_t *p;

    apr_pool_create(&p, ws->d->pool);
    if (rs_lease_peek(ws->d->store, p, ws->set->name, &in) == APR_SUCCESS) {
        rs_setconfw_check(ws, p, in.exists ? in.node : NULL);
    }
    apr_pool_destroy(p);
}

/* This node has taken ws's set: its options are the set's now. */
static void record_options(wset_t *ws)
{
    apr_pool_t *p;

    apr_pool_create(&p, ws->d->pool);
    rs_setconfw_record(ws, p);
    apr_pool_destroy(p);
    if (ws->setconf_differs) {
        ws->setconf_differs = 0; /* (publish at rs_writer_start makes it available) */
        ws->status.unavailable = 0;
        ws->status.why[0] = '\0';
    }
}

/* This node has taken ws's set: its topic files and its Change Dump are
 * the store's. */
static void take_files(wset_t *ws)
{
    apr_pool_t *p;

    apr_pool_create(&p, ws->d->pool);
    rs_followtopicw_take(ws, p);
    apr_pool_clear(p);
    rs_followcdumpw_take(ws, p);
    apr_pool_destroy(p);
}

int rs_writer_take(wset_t *ws, apr_time_t now)
{
    apr_status_t rv;
    int held = 0;

    lease_init(ws);
    apr_thread_mutex_lock(mx);
    rv = rs_lease_take(ws->d->store, &ws->lease, &held);
    ws->lease_at = now;
    apr_thread_mutex_unlock(mx);
    if (rv != APR_SUCCESS) {
        rs_storefail_note(ws, rv, "taking the set's lease");
        return 0;
    }
    if (!held) {
        /* The store works: a failing state of the set ends here (the
         * writer's next full scan is the takeover's). */
        rs_storeretry_ok(&ws->retry, &ws->d->episode);
        if (!ws->elsewhere) {
            rs_log_emit(ws->log, RS_LOG_NOTICE, 0,
                        "set %s: another node writes it (its lease is held in the %s); "
                        "this node does not write it and takes it over when that node stops",
                        ws->set->name, rs_global.store_shown ? rs_global.store_shown : "store");
        }
        become_elsewhere(ws, now);
        if (shared) {
            check_options(ws);
        }
        return 0;
    }
    if (shared) {
        record_options(ws);
        take_files(ws);
    }
    if (ws->elsewhere) {
        ws->elsewhere = 0;
        rs_log_emit(ws->log, RS_LOG_NOTICE, 0,
                    "set %s: no other node writes it now; this node takes it over (lease "
                    "epoch %" APR_INT64_T_FMT ") and reconciles it",
                    ws->set->name, ws->lease.epoch);
        ws->status.mode = RS_MODE_STARTING; /* still unavailable: rs_writer_start */
    }
    return 1;
}

void rs_writer_lost(wset_t *ws)
{
    rs_lease_info_t in;
    apr_pool_t *p;
    apr_int64_t epoch;
    const char *why;

    ws->lease_lost = 0;
    if (ws->elsewhere) {
        return; /* said already (a job that failed after the loss) */
    }
    apr_thread_mutex_lock(mx);
    epoch = ws->lease.epoch;
    ws->lease.epoch = 0;
    apr_thread_mutex_unlock(mx);
    apr_pool_create(&p, ws->d->pool);
    if (rs_lease_peek(ws->d->store, p, ws->set->name, &in) == APR_SUCCESS && in.exists
        && in.epoch != epoch) {
        why =
            apr_psprintf(p, "node %s took it over (epoch %" APR_INT64_T_FMT ")", in.node, in.epoch);
    }
    else {
        why = apr_psprintf(
            p, "it was not renewed within ResourceSyncFailover (%" APR_TIME_T_FMT " ms)",
            apr_time_as_msec(rs_global.store.failover));
    }
    rs_log_emit(ws->log, RS_LOG_NOTICE, 0,
                "set %s: this node lost the set's lease (epoch %" APR_INT64_T_FMT "): %s; "
                "it writes nothing more of the set and takes it over again once the lease "
                "is free",
                ws->set->name, epoch, why);
    apr_pool_destroy(p);
    become_elsewhere(ws, rs_time_mono());
}

void rs_writer_start(wset_t *ws, apr_pool_t *p)
{
    rs_reconcile_links(p, ws);
    apr_pool_clear(p);
    rs_reconcile_full(p, ws, 1); /* its Resource List written before it returns */
    ws->next_tick = rs_time_mono() + rs_global.rescan;
    if (ws->lease_lost) { /* (during the scan) */
        rs_writer_lost(ws);
    }
    else if (!ws->elsewhere) {
        publish(ws, 0);
    }
}

void rs_writer_poll(wset_t *ws, apr_pool_t *p, apr_time_t now)
{
    rs_scan_target_t *t;

    if (ws->w) { /* the takeover's full scan finds what they name */
        rs_watch_take_flags(ws->w);
        rs_watch_take(ws->w, p, now, &t);
    }
    apr_pool_clear(p);
    rs_follow_set(ws, p, now); /* its Change Lists, the writer's */
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
    rs_followsnap_poll(ws, p, now); /* still elsewhere: the writer's Resource Lists */
    apr_pool_clear(p);
    rs_followdump_poll(ws, p, now); /* its Resource Dumps */
    apr_pool_clear(p);
    rs_followtopicw_poll(ws, p, now); /* and its notification topics */
    apr_pool_clear(p);
    rs_followcdumpw_poll(ws, p, now); /* and its Change Dump */
    apr_pool_clear(p);
}

/* Renew ws's lease now (outside a transaction). */
static void renew(wset_t *ws, apr_time_t now)
{
    apr_status_t rv;

    apr_thread_mutex_lock(mx);
    rv = rs_lease_fence(ws->d->store, &ws->lease);
    if (rv == APR_SUCCESS) {
        ws->lease_at = now;
    }
    apr_thread_mutex_unlock(mx);
    if (rv == RS_LEASE_LOST) {
        rs_writer_lost(ws);
    }
    else if (rv != APR_SUCCESS) {
        rs_storefail_note(ws, rv, "renewing the set's lease");
    }
}

/* When ws's lease is to be renewed (monotonic; 0: not by the loop). */
static apr_time_t renew_due(const wset_t *ws)
{
    return !shared || ws->elsewhere || ws->lease.epoch <= 0
               ? 0
               : ws->lease_at + rs_global.store.failover / 3;
}

void rs_writer_heartbeat(rs_drive_t *d, apr_time_t now)
{
    int i;

    for (i = 0; i < d->nsets; i++) {
        wset_t *ws = &d->ws[i];
        apr_time_t due = renew_due(ws);
        if (ws->lease_lost) {
            rs_writer_lost(ws);
        }
        else if (due && now >= due && !ws->retry.err) {
            renew(ws, now);
        }
    }
}

void rs_writer_retake(rs_drive_t *d)
{
    apr_time_t now = rs_time_mono();
    int i;

    for (i = 0; i < d->nsets; i++) {
        wset_t *ws = &d->ws[i];
        if (!ws->elsewhere && ws->lease.epoch > 0) {
            if (shared) { /* (one node's never ends by time) */
                renew(ws, now);
            }
        }
        else if (!ws->elsewhere) { /* its first take failed with the store */
            rs_writer_take(ws, now);
        }
        if (ws->elsewhere) {
            /* Written by another node (already, or found so just now: its
             * lease ran out while the store failed): nothing of it waits
             * to be written here, so its failure ends with the new
             * connection and it is followed again (rs_writer_poll). */
            rs_storeretry_ok(&ws->retry, &d->episode);
        }
    }
}
