/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_drive.c - the watcher's driver: what the watcher does.
 *
 * Runs in the watcher process (mod_resourcesync_watcher.c forks it and
 * calls rs_drive_run as the run user), on one thread; long work goes to
 * background jobs (mod_resourcesync_jobs.c, snapshots through
 * mod_resourcesync_snapjob.c).
 *
 * Lifecycle:
 *   0. make the state directory's entries private to the run user, as an
 *      older version or another umask may have left them: its own entries
 *      before the store is opened (its -wal and -shm take the store file's
 *      mode), what is below once per store right after;
 *   1. open the store and the journal (retried with back-off while the
 *      cause may go away by itself; any other failure ends the watcher
 *      with the exit code that prevents a respawn);
 *   2. per set: an access checker per scan worker, an inotify instance,
 *      the open Change List's extent from the store; then the ring filled
 *      with the newest journal records;
 *   3. startup reconciliation (of every set that can be listed at all:
 *      rs_massdel.h): a full scan of every set against the stored
 *      inventory, journaling whatever changed while no watcher ran, adding
 *      the watches as it goes, then a Resource List snapshot if needed;
 *   4. the event loop (until the parent is gone): wait for inotify events
 *      or the next deadline; reconcile what the events name (one
 *      transaction per set and wake-up) and publish the records; on a lost
 *      event queue, a lost root or a mount or unmount at, below or above
 *      the set's directory (the mount table, polled too), or to confirm
 *      a held mass deletion, reconcile the whole set; at each set's
 *      tick (every ResourceSyncRescanInterval) close Change Lists whose
 *      period ended, apply retention, write a snapshot of a set whose
 *      inventory changed, and rescan sets that cannot be watched; write a
 *      fresh snapshot of a set quiet for a second after live changes
 *      (rs_snapjob_poll); take the
 *      large files the hashing lane finished (mod_resourcesync_hashlane.c)
 *      and reconcile them; run the verification pass
 *      (rs_verifypass.c) a slice at a time.  A set whose store
 *      writes fail waits for its retry instead
 *      (mod_resourcesync_storefail.c).
 *
 * Because every restart kills the watcher, nothing here matters beyond
 * its lifetime: the inventory and the journal are in the store, Resource
 * Lists are snapshot files.  The driver owns its per-set state (wset_t,
 * including its copy of each set's status entry) and only writes the
 * shared segment, which children read.
 */
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include <poll.h>
#include <apr_strings.h>
#include <ap_mpm.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_follow.h"
#include "mod_resourcesync_writer.h"
#include "mod_resourcesync_access.h"
#include "mod_resourcesync_changes.h"
#include "mod_resourcesync_jobs.h"
#include "mod_resourcesync_logonce.h"
#include "mod_resourcesync_os.h"
#include "mod_resourcesync_status.h"
#include "rs_scan.h"
#include "rs_statedir.h"
#include "rs_setlock.h"
#include "rs_time.h"
#include "rs_schema.h"


/* The driver's state of set, or NULL. */
static wset_t *set_of(rs_drive_t *d, const rs_set_t *set)
{
    int i;
    for (i = 0; i < d->nsets; i++) {
        if (d->ws[i].set == set) {
            return &d->ws[i];
        }
    }
    return NULL;
}

/* Large files whose digests the hashing lane finished: each is reconciled
 * again as an ordinary scan target, which takes the digests if the file
 * is still the version that was read (else queues it again), and
 * journals it. */
static void lane_ready(rs_drive_t *d)
{
    apr_array_header_t *files;
    int i;

    if (!rs_hashlanew_ready(d->iter, &files)) {
        return;
    }
    for (i = 0; i < files->nelts; i++) {
        const rs_hashlane_file_t *f = &APR_ARRAY_IDX(files, i, rs_hashlane_file_t);
        const char *slash = strrchr(f->relpath, '/');
        apr_array_header_t *names = apr_array_make(d->iter, 1, sizeof(const char *));
        wset_t *ws = set_of(d, f->src->owner);
        rs_scan_target_t t;

        t.dir = slash ? apr_pstrmemdup(d->iter, f->relpath, (apr_size_t)(slash - f->relpath)) : "";
        APR_ARRAY_PUSH(names, const char *) = slash ? slash + 1 : f->relpath;
        t.names = names;
        /* A set that fails to store, is unavailable or holds deletions
         * gets a full scan later, which hands the file to the lane again
         * if it still needs its digests. */
        if (ws && !ws->retry.err && !ws->rec.root_lost && !rs_massdel_waiting(&ws->massdel)) {
            rs_reconcile_targets(d->iter, ws, &t, 1);
        }
        rs_hashlanew_forget(f);
    }
    apr_pool_clear(d->iter);
}

/* Threads for the per-file work of a scan (access checks and hashing).
 * The checks run httpd's request hooks; a threaded MPM promises that the
 * loaded modules are thread-safe, prefork does not, so prefork gets one. */
static int scan_workers(void)
{
    int threaded = AP_MPMQ_NOT_SUPPORTED;

    if (ap_mpm_query(AP_MPMQ_IS_THREADED, &threaded) != APR_SUCCESS
        || threaded == AP_MPMQ_NOT_SUPPORTED) {
        return 1;
    }
    return rs_scan_threads();
}

/* A slice of the set's verification pass, if one is due or in progress;
 * returns 1 while it goes on. */
static int set_verify(rs_drive_t *d, wset_t *ws, apr_time_t now)
{
    rs_scan_target_t *t;
    int more, n;

    if (!ws->w || ws->degraded || ws->rec.root_lost) {
        return 0; /* rescanned in full at every tick: nothing to verify */
    }
    n = rs_verifypass_slice(&ws->verify, d->store, d->iter, ws->set->name, ws->set->dir, ws->log,
                            now, &t, &more);
    if (n) {
        rs_reconcile_targets(d->iter, ws, t, n);
    }
    apr_pool_clear(d->iter);
    return more;
}

/* The event loop's poll set: one inotify descriptor per watched set
 * (map[k]: the set of pfd[k]), then the mount table (map[k] == -1). */
typedef struct loop_t {
    struct pollfd *pfd;
    int *map;
    int nfds;
} loop_t;

/* Fill the poll set, publish the watcher's state and heartbeat; returns
 * the nearest deadline (a tick, a settling entry, or the next heartbeat). */
static apr_time_t loop_prepare(rs_drive_t *d, loop_t *l, apr_time_t now)
{
    rs_status_t *st = rs_status_get();
    apr_time_t next = now + apr_time_from_msec(200);
    int i, degraded = 0;

    l->nfds = 0;
    for (i = 0; i < d->nsets; i++) {
        wset_t *ws = &d->ws[i];
        apr_time_t due = ws->w ? rs_watch_next_due(ws->w) : 0;
        apr_time_t slice = rs_verifypass_wake(&ws->verify, now);
        if (due && due < next) {
            next = due;
        }
        if (ws->elsewhere) { /* nothing of the set but its lease */
            next = ws->writer_at < next ? ws->writer_at : next;
            continue;
        }
        if (ws->next_tick < next) {
            next = ws->next_tick;
        }
        if (rs_massdel_next(&ws->massdel) && rs_massdel_next(&ws->massdel) < next) {
            next = rs_massdel_next(&ws->massdel);
        }
        if (ws->retry.err && ws->retry.at < next) {
            next = ws->retry.at;
        }
        if (rs_snapjob_due(ws) && rs_snapjob_due(ws) < next) {
            next = rs_snapjob_due(ws);
        }
        if (rs_notifyw_next(ws) && rs_notifyw_next(ws) < next) {
            next = rs_notifyw_next(ws);
        }
        if (ws->w) {
            l->pfd[l->nfds].fd = rs_watch_fd(ws->w);
            l->pfd[l->nfds].events = POLLIN;
            l->pfd[l->nfds].revents = 0;
            l->map[l->nfds++] = i;
        }
        degraded |= ws->degraded || !ws->w || ws->rec.root_lost;
        if (slice && slice < next) {
            next = slice; /* next slice of a verification pass soon, events first */
        }
    }
    if (rs_follow_prepare(d, &l->pfd[l->nfds], now, &next)) {
        l->map[l->nfds++] = -2; /* the followers' LISTEN session */
    }
    if (d->mounts) {
        l->pfd[l->nfds].fd = rs_mounts_fd(d->mounts);
        l->pfd[l->nfds].events = POLLPRI;
        l->pfd[l->nfds].revents = 0;
        l->map[l->nfds++] = -1;
    }
    if (st) {
        st->state = degraded ? RS_STATE_DEGRADED : RS_STATE_WATCHING;
        st->scan_set = -1;
        st->heartbeat = apr_time_now();
    }
    return next;
}

/* Sleep until an inotify queue is readable or the deadline passes; read
 * what arrived into each set's rs_watch. */
static void loop_wait(rs_drive_t *d, loop_t *l, apr_time_t now, apr_time_t next)
{
    int i, timeout = next > now ? (int)((next - now + 999) / 1000) : 0;

    if (poll(l->pfd, (nfds_t)l->nfds, timeout) <= 0) {
        return;
    }
    for (i = 0; i < l->nfds; i++) {
        wset_t *ws;
        if (l->map[i] == -2 && l->pfd[i].revents) {
            rs_follow_readable(d, now);
        }
        if (l->map[i] < 0) {
            if (l->map[i] == -1 && l->pfd[i].revents) {
                rs_massdelw_mounts_changed(d);
            }
            continue;
        }
        ws = &d->ws[l->map[i]];
        if (l->pfd[i].revents && rs_watch_read(ws->w) != APR_SUCCESS) {
            ws->rec.root_lost = 1; /* unreadable queue: treat as lost events */
        }
    }
}

/* Reconcile a watched set's due events.  Returns 1 when that took a full
 * scan (a lost queue or a changed root), which also stands for this
 * round's tick. */
static int set_events(rs_drive_t *d, wset_t *ws, apr_time_t now)
{
    unsigned flags = rs_watch_take_flags(ws->w);
    rs_scan_target_t *t;
    int n;

    if (ws->rec.root_lost || rs_massdel_waiting(&ws->massdel)) {
        /* Unavailable, or a mass deletion waits for its confirming scan:
         * the next full scan covers whatever the events name. */
        rs_watch_take(ws->w, d->iter, now, &t);
        apr_pool_clear(d->iter);
        return 0;
    }
    if (flags & RS_WATCH_OVERFLOW) {
        /* Said once per set and watcher life at notice: a busy tree can
         * overflow at every burst, and each time the full scan repairs it. */
        ws->overflows++;
        rs_log_emit(ws->log, ws->overflows == 1 ? RS_LOG_NOTICE : RS_LOG_DEBUG, 0,
                    "set %s: the inotify event queue overflowed "
                    "(fs.inotify.max_queued_events), events lost (%d time%s); reconciling "
                    "the set with a full scan%s",
                    ws->set->name, ws->overflows, ws->overflows == 1 ? "" : "s",
                    ws->overflows == 1 ? " (further overflows are logged at debug)" : "");
    }
    else if (flags) {
        rs_log_emit(ws->log, RS_LOG_NOTICE, 0,
                    "set %s: its root directory changed; "
                    "reconciling the set with a full scan",
                    ws->set->name);
    }
    if (flags) {
        rs_watch_take(ws->w, d->iter, now, &t); /* the scan covers it */
        rs_reconcile_full(d->iter, ws, 0);
        apr_pool_clear(d->iter);
        return 1;
    }
    if (rs_watch_take_above(ws->w, now) && rs_abovew_changed(ws, d->iter)) {
        /* An access file above the root: every file may be served
         * differently now. */
        rs_watch_take(ws->w, d->iter, now, &t); /* the scan covers it */
        rs_reconcile_full(d->iter, ws, 0);
        apr_pool_clear(d->iter);
        return 1;
    }
    n = rs_watch_take(ws->w, d->iter, now, &t);
    if (n) {
        rs_reconcile_targets(d->iter, ws, t, n);
    }
    apr_pool_clear(d->iter);
    return 0;
}

/* A set's tick: rescan a set that cannot be watched; otherwise close a
 * Change List whose period ended, apply retention, and write a snapshot
 * if the inventory changed (as a job: the loop goes on meanwhile). */
static void set_tick(rs_drive_t *d, wset_t *ws, apr_time_t now)
{
    apr_status_t rv;

    ws->next_tick = now + rs_global.rescan;
    if (!ws->w || ws->degraded || ws->rec.root_lost
        || (!rs_massdel_waiting(&ws->massdel) && rs_abovew_changed(ws, d->iter))) {
        /* (An access file above the root changed unseen: a directory up
         * there cannot be watched.) */
        rs_reconcile_full(d->iter, ws, 0);
    }
    else if ((rv = rs_reconcile_changes(d->iter, ws, NULL, 1))
             != APR_SUCCESS) { /* close; retention */
        rs_storefail_failed(d->iter, ws, rv, "closing a Change List");
    }
    else {
        /* A dump being built holds the job thread: the snapshot waits
         * for a later tick rather than the loop for the dump. */
        if (ws->snap.dirty && !rs_dumpjob_busy() && !rs_cdumpjob_busy()) {
            rs_snapjob_schedule(ws, d->iter, 0, 0, 1, 1);
        }
    }
    apr_pool_clear(d->iter);
}

/* A full scan out of turn: the confirming scan of a held mass deletion
 * (without the limit), or after a mount table change. */
static void set_recheck(rs_drive_t *d, wset_t *ws)
{
    rs_massdel_recheck_begin(&ws->massdel, rs_time_mono());
    rs_reconcile_full(d->iter, ws, 0);
    rs_massdel_recheck_end(&ws->massdel, rs_time_mono());
    apr_pool_clear(d->iter);
}

/* A set whose store writes fail: its events are collected and dropped
 * (the retry's full scan finds what they name: the inventory did not
 * change since the failure); ticks wait, so no snapshot or list claims
 * more than what was committed.  At the retry time: a new connection,
 * then the full scan, whose success ends the failure. */
static void set_retry(rs_drive_t *d, wset_t *ws, apr_time_t now)
{
    rs_scan_target_t *t;

    if (ws->w) {
        rs_watch_take_flags(ws->w);
        rs_watch_take(ws->w, d->iter, now, &t);
    }
    if (rs_storeretry_due(&ws->retry, now)) {
        /* The new connection renews the sets' leases: another node may
         * have taken one meanwhile. */
        if (rs_storefail_reopen(d) == APR_SUCCESS) {
            rs_writer_retake(d);
            if (!ws->elsewhere && ws->lease.epoch > 0) { /* (a take may fail again) */
                rs_reconcile_full(d->iter, ws, 0);
                ws->next_tick = rs_time_mono() + rs_global.rescan;
            }
        }
    }
    apr_pool_clear(d->iter);
}

/* The event loop, until the parent is gone.  Deadlines (ticks, settling
 * entries, the heartbeat) are on the monotonic clock: a wall clock
 * stepped back must not hold them back for as long as the step. */
static apr_status_t watch_loop(rs_drive_t *d)
{
    loop_t l;
    int i;

    l.pfd = apr_pcalloc(d->pool, sizeof(*l.pfd) * (apr_size_t)(d->nsets + 3));
    l.map = apr_pcalloc(d->pool, sizeof(*l.map) * (apr_size_t)(d->nsets + 3));
    for (;;) {
        apr_time_t now = rs_time_mono();
        loop_wait(d, &l, now, loop_prepare(d, &l, now));
        if (getppid() == 1) {
            break;
        }
        rs_jobs_reap(0);
        lane_ready(d);
        now = rs_time_mono();
        if (rs_drive_history_lost(d, now)) {
            return RS_DRIVE_RESTART;
        }
        rs_writer_heartbeat(d, now);
        for (i = 0; i < d->nsets; i++) {
            wset_t *ws = &d->ws[i];
            if (ws->retry.err) {
                set_retry(d, ws, now);
                continue;
            }
            if (ws->elsewhere) {
                rs_writer_poll(ws, d->iter, now);
                continue;
            }
            rs_notifyw_poll(ws, d->iter, now);
            if (ws->w && set_events(d, ws, now)) {
                continue;
            }
            if (rs_massdel_due(&ws->massdel, now)) {
                set_recheck(d, ws);
                continue;
            }
            if (now >= ws->next_tick) {
                set_tick(d, ws, now);
            }
            rs_snapjob_poll(ws, d->iter, now);
            apr_pool_clear(d->iter);
            set_verify(d, ws, now);
            rs_dumpjob_poll(ws, d->iter);
            rs_cdumpjob_poll(ws, d->iter);
        }
        rs_withdraw_poll(d, now);
    }
    return APR_SUCCESS;
}

/* One set's state at watcher start: access checkers (a private
 * connection record per scan worker), the inotify instance, and the
 * status entry as the segment holds it (seeded from disk by post_config,
 * or left by the previous watcher of this server generation). */
static void set_init(rs_drive_t *d, wset_t *ws, const rs_set_t *set)
{
    apr_status_t rv;
    int k;

    ws->d = d;
    ws->set = set;
    ws->log = &d->log;
    /* Held until the process ends: rs-tool forget-set refuses a set in use
     * (and this waits while one removes the set's state). */
    if ((rv = rs_setlock_hold(d->pool, rs_global.state_dir, set->name)) != APR_SUCCESS) {
        rs_log_emit(&d->log, RS_LOG_WARN, rv, "set %s: cannot lock %s", set->name,
                    rs_statedir_setlock(d->iter, rs_global.state_dir, set->name));
    }
    ws->acc = apr_pcalloc(d->pool, sizeof(*ws->acc) * (apr_size_t)d->workers);
    for (k = 0; k < d->workers; k++) {
        ws->acc[k] = rs_access_create(d->pool, set);
    }
    ws->job_acc = rs_access_create(d->pool, set);
    if ((rv = rs_watch_create(&ws->w, d->pool, set->dir, RS_DRIVE_MAX_WATCHES)) != APR_SUCCESS) {
        ws->w = NULL;
        rs_log_emit(&d->log, RS_LOG_WARN, rv,
                    "set %s: cannot create an inotify instance "
                    "(see fs.inotify.max_user_instances): changes are found by rescans "
                    "every %d s",
                    set->name, (int)apr_time_sec(rs_global.rescan));
    }
    rs_status_read_set(set->slot, &ws->status);
    rs_massdelw_init(ws, d->iter);
    rs_reconcilew_init(ws);
    rs_abovew_init(ws, d->iter);
    apr_pool_clear(d->iter);
}

/* Every set's state, the open Change Lists' extents, the ring. */
static void sets_init(rs_drive_t *d)
{
    int i;

    d->ws = apr_pcalloc(d->pool, sizeof(*d->ws) * (apr_size_t)(d->nsets + 1));
    for (i = 0; i < d->nsets; i++) {
        set_init(d, &d->ws[i], APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *));
    }
    for (i = 0; i < d->nsets; i++) {
        wset_t *ws = &d->ws[i];
        /* Children answer the open Change List from what is stored. */
        apr_status_t rv = rs_changes_seed(d->iter, d->journal, ws->set, &ws->status);
        if (rv != APR_SUCCESS) {
            rs_log_emit(&d->log, RS_LOG_ERR, rv, "set %s: cannot read its Change Lists",
                        ws->set->name);
        }
        apr_pool_clear(d->iter);
    }
    /* The ring starts empty in every server generation: fill it with the
     * newest records, so children serve the open lists from it at once. */
    rs_changes_seed_ring(d->iter, d->journal, &d->log);
    apr_pool_clear(d->iter);
}

/* Open the store (retrying while the cause may go away by itself, see
 * rs_storefail_open); a cause that stays ends the watcher. */
static apr_status_t drive_open(rs_drive_t *d)
{
    apr_status_t rv = rs_storefail_open(d);

    if (rv != APR_SUCCESS && rs_global.store_shown) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, rv, d->s, RS_TAG "watcher: cannot open the %s",
                     rs_global.store_shown);
    }
    else if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, rv, d->s,
                     RS_TAG "watcher: cannot open the "
                            "state store in ResourceSyncStateDir '%s'",
                     rs_global.state_dir);
    }
    return rv;
}

apr_status_t rs_drive_run(apr_pool_t *pool, server_rec *s)
{
    rs_drive_t *d = apr_pcalloc(pool, sizeof(*d));
    apr_status_t rv;
    int i;

    d->s = s;
    d->pool = pool;
    d->log.fn = rs_logonce_log;
    d->log.baton = s;
    d->nsets = rs_global.sets->nelts;
    rs_logonce_init(pool);
    rs_storefail_init(d);
    rs_writer_init(d); /* before any thread starts */
    apr_pool_create(&d->iter, pool);
    rs_os_statedir_prepare(d->iter, s);
    apr_pool_clear(d->iter);
    if ((rv = drive_open(d)) != APR_SUCCESS) {
        return rv;
    }
    rs_os_statedir_private(d->iter, s, d->store);
    apr_pool_clear(d->iter);
    ap_log_error(APLOG_MARK, APLOG_INFO, 0, s, RS_TAG "watcher started (pid %d, %d sets, node %s)",
                 (int)getpid(), d->nsets, rs_global.node_name);
    d->workers = scan_workers();
    /* Hashing calls no httpd code: every processor, whatever the MPM. */
    d->hash_workers = rs_scan_threads();
    if ((rv = rs_drive_history_start(d)) != APR_SUCCESS) {
        return rv;
    }
    rs_jobs_init(pool, s, d->store);
    rs_hubintake_start(pool, s);
    if ((rv = rs_hashlanew_init(pool, s)) != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, rv, s,
                     RS_TAG "watcher: cannot start the "
                            "hashing lane; large files are hashed by the scans");
    }
    rs_massdelw_mounts_open(d);
    sets_init(d);
    rs_deliver_start(s);
    /* Startup reconciliation: whatever changed while no watcher ran is
     * journaled before anything new is published; watches are added as
     * the scans go.  Only the sets this node writes (their lease,
     * mod_resourcesync_writer.c); the others wait for theirs. */
    for (i = 0; i < d->nsets; i++) {
        d->ws[i].next_tick = rs_time_mono() + rs_global.rescan;
        if (rs_writer_take(&d->ws[i], rs_time_mono())) {
            rs_writer_start(&d->ws[i], d->iter);
        }
        rs_verifypass_init(&d->ws[i].verify, d->pool, rs_global.verify, rs_time_mono());
        apr_pool_clear(d->iter);
    }
    rv = watch_loop(d);
    ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, s, RS_TAG "watcher stopping");
    return rv;
}
