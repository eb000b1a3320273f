/* mod_resourcesync_drive.c - the watcher's driver: what the watcher does.
 *
 * Runs in the watcher process (mod_resourcesync_watcher.c forks it and
 * calls rs_drive_run as the run user), on one thread; long work goes to
 * background jobs (mod_resourcesync_jobs.c, snapshots through
 * mod_resourcesync_snapjob.c).
 *
 * Lifecycle:
 *   1. open the store and the journal (a failure ends the watcher with the
 *      exit code that prevents a respawn);
 *   2. per set: an access checker per scan worker, an inotify instance,
 *      the open Change List's extent from the store; then the ring filled
 *      with the newest journal records;
 *   3. startup reconciliation: a full scan of every set against the stored
 *      inventory, journaling whatever changed while no watcher ran, adding
 *      the watches as it goes, then a Resource List snapshot if needed;
 *   4. the event loop (until the parent is gone): wait for inotify events
 *      or the next deadline; reconcile what the events name (one
 *      transaction per set and wake-up) and publish the records; on a lost
 *      event queue or a lost root, reconcile the whole set; at each set's
 *      tick (every ResourceSyncRescanInterval) close Change Lists whose
 *      period ended, apply retention, write a snapshot of a set whose
 *      inventory changed, and rescan sets that cannot be watched.
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
#include "rs_scan.h"
#include "rs_statedir.h"
#include "rs_time.h"
#include "rs_schema.h"

/* No cap of our own: the kernel's fs.inotify.max_user_watches is the
 * limit (t/degraded.t reaches it for real). */
static const long max_watches = 0;

static void set_mode(wset_t *ws)
{
    int mode = ws->w && !ws->degraded && !ws->root_lost ? RS_MODE_WATCHING : RS_MODE_RESCANS;
    if (ws->status.mode != mode) {
        ws->status.mode = mode;
        rs_drive_status_put(ws);
    }
}

static void progress(void *baton, apr_int64_t files)
{
    rs_status_t *st = rs_status_get();
    (void)baton;
    if (st) {
        st->scan_files = files;
        st->heartbeat = apr_time_now();
    }
}

/* rs_scan on_dir: watch every directory before it is read. */
static void on_dir(void *baton, const char *relpath, int dfd)
{
    wset_t *ws = baton;
    int err;

    if (!ws->w || ws->degraded) {
        return;
    }
    if ((err = rs_watch_add(ws->w, relpath, dfd)) != 0) {
        ws->degraded = err;
        if (!ws->degraded_logged) {
            ws->degraded_logged = 1;
            rs_log_emit(ws->log, RS_LOG_WARN, err, "set %s: cannot watch directory '%s' "
                        "(%ld watches; see fs.inotify.max_user_watches): changes are "
                        "found by rescans every %d s until the watches can be added",
                        ws->set->name, *relpath ? relpath : "/", rs_watch_count(ws->w),
                        (int)apr_time_sec(rs_global.rescan));
        }
    }
}

static void on_drop(void *baton, const char *relpath)
{
    wset_t *ws = baton;
    if (ws->w) {
        rs_watch_forget(ws->w, relpath);
    }
}

/* The scan's options; journaled: its changes go into the journal through
 * a recorder (*rc), whose window is put into the ring after the commit. */
static void scan_opts(wset_t *ws, rs_scan_opts_t *so, rs_recorder_t **rc, int journaled)
{
    const rs_set_t *set = ws->set;
    memset(so, 0, sizeof(*so));
    so->set = set->name;
    so->root = set->dir;
    so->hashes = set->hashes;
    so->excludes = set->excludes;
    so->dotfiles = set->dotfiles;
    so->cfg = rs_global.fingerprint;
    so->access_files = rs_access_files(ws->acc[0]);
    so->check = rs_access_check;
    so->check_baton = ws->acc[0];
    so->workers = ws->d->workers;
    so->check_batons = (void **)ws->acc;
    so->progress = progress;
    so->log = ws->log;
    so->on_dir = on_dir;
    so->on_drop = on_drop;
    so->dir_baton = ws;
    *rc = journaled ? rs_changes_recorder(ws->d->iter, ws->d->journal, set) : NULL;
    if (*rc) {
        so->on_change = rs_recorder_record;
        so->change_baton = *rc;
    }
}

/* After records were committed: into the ring, then the Change Lists
 * (closing, retention, files).  full == 0 (an event batch): the lists are
 * only looked at when the open one may have reached
 * ResourceSyncMaxEntries; closing on time and retention wait for the
 * set's tick. */
static void changes_done(apr_pool_t *p, wset_t *ws, rs_recorder_t *rc, int full)
{
    apr_time_t t0;
    apr_int64_t open_id;
    apr_status_t rv;

    rs_changes_publish(p, rc, ws->set, &ws->status);
    if (!full && ws->status.cl_ready && ws->status.cl_count < ws->set->max_entries) {
        return;
    }
    t0 = rs_time_mono();
    open_id = ws->status.cl_open_id;
    if ((rv = rs_changes_update(p, ws->d->journal, ws->set, &ws->status, ws->log))
        != APR_SUCCESS) {
        rs_log_emit(ws->log, RS_LOG_ERR, rv, "set %s: cannot update its Change Lists",
                    ws->set->name);
    }
    if (ws->status.cl_open_id != open_id) {
        rs_log_emit(ws->log, RS_LOG_DEBUG, 0, "set %s: Change List %" APR_INT64_T_FMT
                    " closed, %" APR_INT64_T_FMT " open, in %.1f ms", ws->set->name,
                    open_id, ws->status.cl_open_id, (double)(rs_time_mono() - t0) / 1000.0);
    }
}

/* Whether changes were journaled after the Resource List in service read
 * the inventory (by an earlier watcher, whose next tick never came). */
static int list_behind_journal(apr_pool_t *p, wset_t *ws)
{
    const char *v = NULL;
    apr_int64_t newest = 0;

    return rs_db_meta_get(ws->d->store, p, apr_pstrcat(p, "snapshot-seq:", ws->set->name,
                                                          NULL), &v) == APR_SUCCESS
           && v && rs_journal_newest(ws->d->journal, p, ws->set->name, &newest) == APR_SUCCESS
           && newest > apr_atoi64(v);
}

/* The log lines after a successful full scan. */
static void full_scan_report(wset_t *ws, const rs_scan_stats_t *stats, int was_degraded,
                             int first, apr_time_t t0)
{
    const rs_set_t *set = ws->set;

    if (was_degraded && !ws->degraded && ws->w && !ws->root_lost) {
        /* The end of a degraded episode: say so, and let the next one be
         * reported again. */
        ws->degraded_logged = 0;
        rs_log_emit(ws->log, RS_LOG_NOTICE, 0, "set %s: every directory is watched again "
                    "(%ld watches); changes are followed live", set->name,
                    rs_watch_count(ws->w));
    }
    rs_log_emit(ws->log, first ? RS_LOG_NOTICE : RS_LOG_DEBUG, 0,
                "set %s: scanned %" APR_INT64_T_FMT " files in %" APR_INT64_T_FMT
                " directories (%" APR_INT64_T_FMT " listed, %" APR_INT64_T_FMT
                " rows written, %" APR_INT64_T_FMT " removed, %" APR_INT64_T_FMT
                " bytes hashed) in %.3f s; %ld directories watched", set->name, stats->files,
                stats->dirs, stats->listed, stats->written, stats->removed, stats->hashed,
                (double)(rs_time_mono() - t0) / APR_USEC_PER_SEC,
                ws->w ? rs_watch_count(ws->w) : 0L);
}

static void scan_state(int state, int slot)
{
    rs_status_t *st = rs_status_get();
    if (st) {
        st->state = (apr_uint32_t)state;
        st->scan_set = slot;
        st->scan_files = 0;
    }
}

/* Reconcile the whole set with the stored inventory (at startup, after a
 * lost event queue, and periodically while the set cannot be watched),
 * then publish what changed.  Directories get their watches as the scan
 * reaches them.  Changes are journaled from the second scan of a set on:
 * the first one is the baseline, published as the Resource List whose
 * `at` is the journal's start. */
static void full_scan(apr_pool_t *p, wset_t *ws, int first)
{
    const rs_set_t *set = ws->set;
    rs_journal_t *journal = ws->d->journal;
    rs_scan_opts_t so;
    rs_scan_stats_t stats;
    rs_recorder_t *rc;
    apr_time_t jstart = 0, start = 0, end, t0 = rs_time_mono();
    apr_status_t rv;
    int was_degraded = ws->degraded;

    if (rs_journal_start(journal, set->name, &jstart) != APR_SUCCESS) {
        return;
    }
    if (jstart) {
        if (rs_journal_mark(journal, set->name, &start) != APR_SUCCESS) {
            return;
        }
    }
    else {
        start = apr_time_now();
    }
    if (!ws->w && rs_watch_create(&ws->w, ws->d->pool, set->dir, max_watches) != APR_SUCCESS) {
        ws->w = NULL;
    }
    ws->degraded = 0;
    scan_opts(ws, &so, &rc, jstart != 0);
    scan_state(RS_STATE_SCANNING, set->slot);
    rv = rs_scan_set(ws->d->store, &so, p, &stats);
    end = apr_time_now();
    ws->root_lost = 0;
    if (rv != APR_SUCCESS) {
        rs_log_emit(ws->log, ws->failing++ ? RS_LOG_DEBUG : RS_LOG_ERR, rv,
                    "set %s: scan failed; keeping the previous "
                    "Resource List", set->name);
        return;
    }
    if (stats.dirs == 0) {
        ws->root_lost = 1;     /* the root is missing: no watch either */
    }
    full_scan_report(ws, &stats, was_degraded, first, t0);
    if (!jstart) {
        /* The journal starts where this scan's Resource List does. */
        rs_journal_begin_set(journal, set->name, start);
    }
    changes_done(p, ws, rc, 1);
    set_mode(ws);
    if (first && jstart && !ws->dirty && list_behind_journal(p, ws)) {
        ws->dirty = 1;         /* a new list now, not after the next change */
    }
    rs_snapjob_schedule(ws, p, start, end, !jstart || stats.written || stats.removed
                        || ws->dirty, 0);
}

/* Reconcile what inotify reported. */
static void scan_targets(apr_pool_t *p, wset_t *ws, const rs_scan_target_t *t, int n)
{
    rs_scan_opts_t so;
    rs_scan_stats_t stats;
    rs_recorder_t *rc;
    apr_status_t rv;

    scan_opts(ws, &so, &rc, 1);
    so.progress = NULL;     /* scan-files counts the last full scan */
    rv = rs_scan_targets(ws->d->store, &so, p, t, n, &stats);
    if (rv != APR_SUCCESS) {
        /* The root is gone, or the store failed: the full scan knows how
         * to say which, and records what it can. */
        full_scan(p, ws, 0);
        return;
    }
    if (stats.written || stats.removed) {
        ws->dirty = 1;
    }
    if (rs_recorder_appended(rc)) {
        changes_done(p, ws, rc, 0);
    }
    if (ws->degraded) {
        set_mode(ws);
    }
}

/* Threads for the per-file work of a scan (access checks and hashing).
 * The checks run httpd's request hooks; a threaded MPM promises that the
 * loaded modules are thread-safe, prefork does not, so prefork gets one. */
static int scan_workers(void)
{
    int threaded = AP_MPMQ_NOT_SUPPORTED;
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    if (ap_mpm_query(AP_MPMQ_IS_THREADED, &threaded) != APR_SUCCESS
        || threaded == AP_MPMQ_NOT_SUPPORTED) {
        return 1;
    }
    return n < 1 ? 1 : n > 4 ? 4 : (int)n;
}

/* The event loop's poll set: one inotify descriptor per watched set
 * (map[k]: the set of pfd[k]). */
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
        if (due && due < next) {
            next = due;
        }
        if (ws->next_tick < next) {
            next = ws->next_tick;
        }
        if (ws->w) {
            l->pfd[l->nfds].fd = rs_watch_fd(ws->w);
            l->pfd[l->nfds].events = POLLIN;
            l->pfd[l->nfds].revents = 0;
            l->map[l->nfds++] = i;
        }
        degraded |= ws->degraded || !ws->w || ws->root_lost;
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
        wset_t *ws = &d->ws[l->map[i]];
        if (l->pfd[i].revents && rs_watch_read(ws->w) != APR_SUCCESS) {
            ws->root_lost = 1;     /* unreadable queue: treat as lost events */
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

    if (flags) {
        rs_log_emit(ws->log, RS_LOG_NOTICE, 0, "set %s: %s; reconciling the set "
                    "with a full scan", ws->set->name,
                    (flags & RS_WATCH_OVERFLOW) ? "the inotify event queue "
                    "overflowed (fs.inotify.max_queued_events)"
                    : "its root directory changed");
        rs_watch_take(ws->w, d->iter, now, &t);   /* the scan covers it */
        full_scan(d->iter, ws, 0);
        apr_pool_clear(d->iter);
        return 1;
    }
    n = rs_watch_take(ws->w, d->iter, now, &t);
    if (n) {
        scan_targets(d->iter, ws, t, n);
    }
    apr_pool_clear(d->iter);
    return 0;
}

/* A set's tick: rescan a set that cannot be watched; otherwise close a
 * Change List whose period ended, apply retention, and write a snapshot
 * if the inventory changed (as a job: the loop goes on meanwhile). */
static void set_tick(rs_drive_t *d, wset_t *ws, apr_time_t now)
{
    ws->next_tick = now + rs_global.rescan;
    if (!ws->w || ws->degraded || ws->root_lost) {
        full_scan(d->iter, ws, 0);
    }
    else {
        changes_done(d->iter, ws, NULL, 1);     /* close on time; retention */
        if (ws->dirty) {
            rs_snapjob_schedule(ws, d->iter, 0, 0, 1, 1);
        }
    }
    apr_pool_clear(d->iter);
}

/* The event loop, until the parent is gone.  Deadlines (ticks, settling
 * entries, the heartbeat) are on the monotonic clock: a wall clock
 * stepped back must not hold them back for as long as the step. */
static void watch_loop(rs_drive_t *d)
{
    loop_t l;
    int i;

    l.pfd = apr_pcalloc(d->pool, sizeof(*l.pfd) * (apr_size_t)(d->nsets + 1));
    l.map = apr_pcalloc(d->pool, sizeof(*l.map) * (apr_size_t)(d->nsets + 1));
    for (;;) {
        apr_time_t now = rs_time_mono();
        loop_wait(d, &l, now, loop_prepare(d, &l, now));
        if (getppid() == 1) {
            break;
        }
        rs_jobs_reap(0);
        now = rs_time_mono();
        for (i = 0; i < d->nsets; i++) {
            wset_t *ws = &d->ws[i];
            if (ws->w && set_events(d, ws, now)) {
                continue;
            }
            if (now >= ws->next_tick) {
                set_tick(d, ws, now);
            }
        }
    }
}

/* One set's state at watcher start: access checkers (a private
 * connection record per scan worker), the inotify instance, and the
 * status entry as the segment holds it (seeded from disk by post_config,
 * or left by the previous watcher of this server generation). */
static void set_init(rs_drive_t *d, wset_t *ws, const rs_set_t *set)
{
    const char *why;
    apr_status_t rv;
    int k;

    ws->d = d;
    ws->set = set;
    ws->log = &d->log;
    ws->acc = apr_pcalloc(d->pool, sizeof(*ws->acc) * (apr_size_t)d->workers);
    for (k = 0; k < d->workers; k++) {
        ws->acc[k] = rs_access_create(d->pool, set);
    }
    why = rs_access_verify_root(ws->acc[0], d->pool);
    if (why) {
        rs_log_emit(&d->log, RS_LOG_ERR, 0, "%s", why);
    }
    if ((rv = rs_watch_create(&ws->w, d->pool, set->dir, max_watches)) != APR_SUCCESS) {
        ws->w = NULL;
        rs_log_emit(&d->log, RS_LOG_WARN, rv, "set %s: cannot create an inotify instance "
                    "(see fs.inotify.max_user_instances): changes are found by rescans "
                    "every %d s", set->name, (int)apr_time_sec(rs_global.rescan));
    }
    rs_status_read_set(set->slot, &ws->status);
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

static apr_status_t drive_open(rs_drive_t *d)
{
    apr_status_t rv;

    rv = rs_schema_open(&d->store, d->pool, RS_STATEDIR_DB_DRIVER,
                       rs_statedir_db(d->pool, rs_global.state_dir), &d->log);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, rv, d->s, RS_TAG "watcher: cannot open the "
                     "state store in ResourceSyncStateDir '%s'", rs_global.state_dir);
        return rv;
    }
    if ((rv = rs_journal_open(&d->journal, d->store, d->pool)) != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, rv, d->s, RS_TAG "watcher: cannot open the "
                     "journal in ResourceSyncStateDir '%s'", rs_global.state_dir);
        return rv;
    }
    return APR_SUCCESS;
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
    if ((rv = drive_open(d)) != APR_SUCCESS) {
        return rv;
    }
    ap_log_error(APLOG_MARK, APLOG_INFO, 0, s, RS_TAG "watcher started (pid %d, %d sets)",
                 (int)getpid(), d->nsets);
    rs_logonce_init(pool);
    d->workers = scan_workers();
    rs_jobs_init(pool, s, d->store);
    apr_pool_create(&d->iter, pool);
    sets_init(d);
    /* Startup reconciliation: whatever changed while no watcher ran is
     * journaled before anything new is published; watches are added as
     * the scans go. */
    for (i = 0; i < d->nsets; i++) {
        full_scan(d->iter, &d->ws[i], 1);
        d->ws[i].next_tick = rs_time_mono() + rs_global.rescan;
        apr_pool_clear(d->iter);
    }
    watch_loop(d);
    ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, s, RS_TAG "watcher stopping");
    return APR_SUCCESS;
}
