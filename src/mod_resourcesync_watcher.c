/* mod_resourcesync_watcher.c - the watcher process.
 *
 * Lifecycle (mod_cgid style): post_config of the real start forks one
 * watcher per server generation.  The parent registers it as an "other
 * child" of the MPM and notes it as a subprocess of pconf, so:
 *   - a restart (graceful or not) clears pconf, which SIGTERMs the watcher
 *     (SIGKILL after a timeout); the new generation forks a new one;
 *   - if the watcher dies otherwise (crash, kill -9), the MPM reports the
 *     death to watcher_maint(), which forks a replacement unless the server
 *     is stopping or the watcher exited with RS_WATCHER_FATAL (a startup
 *     failure that a respawn would only repeat).
 * The watcher also asks the kernel for SIGTERM when the parent dies.
 *
 * Because every restart kills it, the watcher keeps nothing that matters in
 * memory: the inventory is in the state store and the Resource Lists are
 * snapshot files.  On start it reconciles every set against the stored
 * inventory (rs_scan_set) before it publishes anything new.
 *
 * Main loop: scan every set, write a new snapshot generation for each set
 * whose inventory changed (or whose options changed), publish it in the
 * status segment, prune superseded snapshots, then sleep until the next
 * rescan while beating the heartbeat.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <apr_strings.h>
#include <apr_file_io.h>
#include <apr_signal.h>
#include <apr_atomic.h>
#include <apr_thread_proc.h>
#include <apr_thread_mutex.h>
#include <apr_thread_cond.h>
#include <ap_listen.h>
#include <ap_mpm.h>
#include <http_main.h>
#include <mpm_common.h>
#include "mod_resourcesync.h"
#include "rs_file.h"
#include "rs_journal.h"
#include "rs_recorder.h"
#include "rs_scan.h"
#include "rs_snapshot.h"
#include "rs_statedir.h"
#include "rs_store.h"
#include "rs_time.h"
#include "rs_watch.h"

#define RS_WATCHER_FATAL      78            /* EX_CONFIG: do not respawn */
#define RS_SNAPSHOT_KEEP      apr_time_from_sec(3600)

static apr_proc_t *watcher_proc;
/* Respawn throttling (parent side; a forked watcher inherits the delay):
 * a watcher that dies within RS_QUICK_DEATH of its start makes the next
 * one wait 1, 2, 4 ... up to 60 s before it starts working, so a watcher
 * that crashes at once cannot spin the parent. */
#define RS_QUICK_DEATH apr_time_from_sec(10)
static apr_time_t last_fork;      /* rs_time_mono() */
static int quick_deaths;
static apr_interval_time_t start_delay;
static server_rec *watcher_server;
static volatile sig_atomic_t stop_flag;

/* Warnings and errors of the engine are logged once per watcher lifetime:
 * a rescan meets the same unreadable directory or missing root every
 * time, and the error log must not repeat it every interval.  The set of
 * messages seen is bounded (forgotten past RS_LOG_MEMORY entries). */
#define RS_LOG_MEMORY 10000
static apr_pool_t *seen_pool;
static apr_hash_t *seen;

static void watcher_log(void *baton, int level, apr_status_t rv, const char *msg)
{
    if (level <= RS_LOG_WARN && seen) {
        if (apr_hash_get(seen, msg, APR_HASH_KEY_STRING)) {
            level = RS_LOG_DEBUG;
        }
        else {
            if (apr_hash_count(seen) >= RS_LOG_MEMORY) {
                apr_pool_clear(seen_pool);
                seen = apr_hash_make(seen_pool);
            }
            apr_hash_set(seen, apr_pstrdup(seen_pool, msg), APR_HASH_KEY_STRING, "");
        }
    }
    ap_log_error(APLOG_MARK, level, rv, (server_rec *)baton, RS_TAG "%s", msg);
}

/* Per set: failures since the last success.  A failing store or a full
 * disk is logged once at error level (then at debug on every retry) and
 * once more when it recovers. */
static int failing[RS_MAX_SETS];

/* Options of a set that shape its snapshot; a change forces a new one. */
static const char *snapshot_key(apr_pool_t *p, const rs_set_t *set)
{
    return apr_psprintf(p, "%s|%s|%s|%d|%u", set->root_url, set->capability_url,
                        set->list_url, set->max_entries, set->hashes);
}

/* Drop snapshots superseded more than RS_SNAPSHOT_KEEP ago, and leftovers
 * of interrupted writes.  A superseded snapshot is marked with a file
 * "superseded" whose mtime says when. */
static void prune(apr_pool_t *p, const rs_set_t *set, apr_uint64_t current)
{
    apr_dir_t *d;
    apr_finfo_t fi;
    apr_time_t now = apr_time_now();

    if (apr_dir_open(&d, set->snap_dir, p) != APR_SUCCESS) {
        return;
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        const char *path = apr_pstrcat(p, set->snap_dir, "/", fi.name, NULL);
        const char *marker;
        apr_finfo_t sf;
        if (fi.filetype != APR_DIR || !strcmp(fi.name, ".") || !strcmp(fi.name, "..")) {
            continue;
        }
        if (rs_statedir_is_gen_tmp(fi.name)) {
            rs_file_remove_tree(p, path);
            continue;
        }
        if ((apr_uint64_t)apr_atoi64(fi.name) == current) {
            continue;
        }
        marker = rs_statedir_gen_superseded(p, path);
        if (apr_stat(&sf, marker, APR_FINFO_MTIME, p) != APR_SUCCESS) {
            rs_file_touch(p, marker);
        }
        else if (now - sf.mtime > RS_SNAPSHOT_KEEP) {
            rs_file_remove_tree(p, path);
        }
    }
    apr_dir_close(d);
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

/* The watcher's view of one set.  Lifecycle: created at watcher start;
 * `w` is the set's inotify instance (NULL when none could be made), fed by
 * the scans' on_dir callback.  `degraded` says that some directory could
 * not be watched: the set then relies on full rescans every
 * ResourceSyncRescanInterval until a full scan manages to watch
 * everything again. */
typedef struct wset_t {
    const rs_set_t *set;
    rs_access_t **acc;
    rs_watch_t *w;
    int degraded;          /* errno of the failed watch, 0: none */
    int degraded_logged;   /* the error log was told (once per episode) */
    int dirty;             /* inventory changed since the last snapshot */
    int root_lost;         /* the root is gone: retry at every tick */
    apr_time_t next_tick;  /* on the monotonic clock (rs_time_mono) */
    /* The set's entry of the status segment as this watcher published it
     * last: the watcher updates this copy and writes it, and never reads
     * the segment back (read once, at start, to take over what the
     * parent seeded and an earlier watcher published). */
    rs_status_set_t own;
    const rs_logger_t *log;
    apr_pool_t *pool;      /* lives as long as the watcher */
    apr_pool_t *iter;      /* cleared after each piece of work */
} wset_t;

static int workers_n;
/* No cap of our own: the kernel's fs.inotify.max_user_watches is the
 * limit (t/degraded.t reaches it for real). */
static const long max_watches = 0;

static void set_mode(wset_t *ws)
{
    int mode = ws->w && !ws->degraded && !ws->root_lost ? RS_MODE_WATCHING : RS_MODE_RESCANS;
    if (ws->own.mode != mode) {
        ws->own.mode = mode;
        rs_status_write_set(ws->set->slot, &ws->own);
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

static void scan_opts(wset_t *ws, rs_scan_opts_t *so, rs_recorder_t **rc,
                      rs_journal_t *journal, int journaled)
{
    const rs_set_t *set = ws->set;
    memset(so, 0, sizeof(*so));
    so->set = set->name;
    so->root = set->dir;
    so->hashes = set->hashes;
    so->excludes = set->excludes;
    so->dotfiles = set->dotfiles;
    so->cfg = rs_global.fingerprint;
    so->check = rs_access_check;
    so->check_baton = ws->acc[0];
    so->workers = workers_n;
    so->check_batons = (void **)ws->acc;
    so->progress = progress;
    so->log = ws->log;
    so->on_dir = on_dir;
    so->on_drop = on_drop;
    so->dir_baton = ws;
    *rc = NULL;
    if (journaled) {
        *rc = rs_changes_recorder(ws->iter, journal, set);
        so->on_change = rs_recorder_record;
        so->change_baton = *rc;
    }
}

/* After records were committed: into the ring, then the Change Lists
 * (closing, retention, files).  full == 0 (an event batch): the lists are
 * only looked at when the open one may have reached
 * ResourceSyncMaxEntries; closing on time and retention wait for the
 * set's tick. */
static void changes_done(apr_pool_t *p, rs_journal_t *journal, wset_t *ws,
                         rs_recorder_t *rc, int full)
{
    rs_status_set_t *own = &ws->own;
    rs_changes_publish(p, rc, ws->set, own);
    if (!full && own->cl_ready && own->cl_count < ws->set->max_entries) {
        return;
    }
    {
        apr_time_t t0 = rs_time_mono();
        apr_int64_t open_id = own->cl_open_id;
        if (rs_changes_update(p, journal, ws->set, own, ws->log) != APR_SUCCESS) {
            rs_log_emit(ws->log, RS_LOG_ERR, 0, "set %s: cannot update its Change Lists",
                        ws->set->name);
        }
        if (own->cl_open_id != open_id) {
            rs_log_emit(ws->log, RS_LOG_DEBUG, 0, "set %s: Change List %" APR_INT64_T_FMT
                        " closed, %" APR_INT64_T_FMT " open, in %.1f ms", ws->set->name,
                        open_id, own->cl_open_id, (double)(rs_time_mono() - t0) / 1000.0);
        }
    }
}

/* A snapshot being written.  Lifecycle: prepared by the main thread
 * (generation, temporary directory, options, all in the job's own pool),
 * written by rs_snapshot_write - inline, or on a thread with a store
 * connection of its own so the event loop goes on meanwhile - then
 * finished by the main thread (rename into place, store bookkeeping,
 * status segment, pruning).  One job at a time: the generation counter is
 * only read and advanced by the main thread, between jobs. */
typedef struct snapjob_t {
    wset_t *ws;
    apr_pool_t *pool;              /* own allocator: used by the thread */
    rs_snapshot_opts_t sn;
    rs_logger_t log;
    const char *key, *tmp, *final;
    apr_uint64_t gen;
    apr_time_t at;
    apr_int64_t seq;               /* the journal's last sequence when prepared */
    rs_snapshot_info_t info;
    apr_status_t rv;
    volatile apr_uint32_t done;
} snapjob_t;

static snapjob_t *job;
static rs_store_t *snap_store;     /* the snapshot thread's connection */
static apr_pool_t *snap_store_pool;

/* Messages from the snapshot thread go straight to the error log (the
 * once-only memory of watcher_log belongs to the main thread). */
static void thread_log(void *baton, int level, apr_status_t rv, const char *msg)
{
    ap_log_error(APLOG_MARK, level, rv, (server_rec *)baton, RS_TAG "%s", msg);
}

/* The snapshot thread lives as long as the watcher (it never exits: the
 * process ends with _exit), waiting for one job at a time. */
static apr_thread_mutex_t *snap_lock;
static apr_thread_cond_t *snap_cond;
static snapjob_t *snap_next;        /* handed over under snap_lock */

static void *APR_THREAD_FUNC snap_thread(apr_thread_t *t, void *data)
{
    (void)t;
    (void)data;
    for (;;) {
        snapjob_t *j;
        apr_thread_mutex_lock(snap_lock);
        while (!snap_next) {
            apr_thread_cond_wait(snap_cond, snap_lock);
        }
        j = snap_next;
        snap_next = NULL;
        apr_thread_mutex_unlock(snap_lock);
        if (!snap_store) {
            apr_allocator_t *alloc;
            apr_allocator_create(&alloc);
            apr_pool_create_ex(&snap_store_pool, NULL, NULL, alloc);
            apr_allocator_owner_set(alloc, snap_store_pool);
            if (rs_store_open(&snap_store, snap_store_pool, RS_STATEDIR_DB_DRIVER,
                              rs_statedir_db(snap_store_pool, rs_global.state_dir), &j->log)
                != APR_SUCCESS) {
                snap_store = NULL;
                apr_pool_destroy(snap_store_pool);
            }
        }
        j->rv = snap_store ? rs_snapshot_write(snap_store, &j->sn, j->tmp, j->gen, j->pool,
                                               &j->info)
                           : APR_EGENERAL;
        apr_atomic_set32(&j->done, 1);
    }
    return NULL;
}

/* Hand a job to the snapshot thread (started on first use).  Returns 0
 * if there is no thread to run it. */
static int snap_submit(snapjob_t *j, apr_pool_t *pool)
{
    static apr_thread_t *thread;
    static int failed;

    if (!thread && !failed) {
        if (apr_thread_mutex_create(&snap_lock, APR_THREAD_MUTEX_DEFAULT, pool) != APR_SUCCESS
            || apr_thread_cond_create(&snap_cond, pool) != APR_SUCCESS
            || apr_thread_create(&thread, NULL, snap_thread, NULL, pool) != APR_SUCCESS) {
            failed = 1;
        }
    }
    if (!thread) {
        return 0;
    }
    apr_thread_mutex_lock(snap_lock);
    snap_next = j;
    apr_thread_cond_signal(snap_cond);
    apr_thread_mutex_unlock(snap_lock);
    return 1;
}

/* Main thread: put a written snapshot into place and publish it. */
static void snapshot_finish(rs_store_t *store, snapjob_t *j)
{
    wset_t *ws = j->ws;
    const rs_set_t *set = ws->set;
    const rs_logger_t *log = ws->log;
    apr_pool_t *p = j->pool;
    rs_status_set_t *own = &ws->own;
    apr_status_t rv = j->rv;

    if (rv == APR_SUCCESS) {
        rv = apr_file_rename(j->tmp, j->final, p);
    }
    if (rv != APR_SUCCESS) {
        rs_log_emit(log, failing[set->slot]++ ? RS_LOG_DEBUG : RS_LOG_ERR, rv,
                    "set %s: cannot write Resource List snapshot "
                    "%s; keeping the previous one", set->name, j->final);
        rs_file_remove_tree(p, j->tmp);
        ws->dirty = 1;
        apr_pool_destroy(j->pool);
        return;
    }
    rs_file_sync_dir(set->snap_dir);
    rs_store_meta_put(store, apr_pstrcat(p, "snapshot-gen:", set->name, NULL),
                      apr_psprintf(p, "%" APR_UINT64_T_FMT, j->gen));
    rs_store_meta_put(store, apr_pstrcat(p, "snapshot-key:", set->name, NULL), j->key);
    rs_store_meta_put(store, apr_pstrcat(p, "snapshot-seq:", set->name, NULL),
                      apr_psprintf(p, "%" APR_INT64_T_FMT, j->seq));
    if (failing[set->slot]) {
        rs_log_emit(log, RS_LOG_NOTICE, 0, "set %s: Resource List snapshots work again",
                    set->name);
        failing[set->slot] = 0;
        /* A later failure deserves an error line again. */
        if (seen) {
            apr_pool_clear(seen_pool);
            seen = apr_hash_make(seen_pool);
        }
    }
    own->gen = j->info.gen;
    own->at = j->info.at;
    own->completed = j->info.completed;
    own->entries = j->info.entries;
    own->parts = j->info.parts;
    own->consistent = j->at;
    rs_status_write_set(set->slot, own);
    rs_log_emit(log, RS_LOG_INFO, 0, "set %s: published Resource List %" APR_UINT64_T_FMT
                " (%" APR_INT64_T_FMT " entries, %d parts)", set->name, j->info.gen,
                j->info.entries, j->info.parts);
    prune(p, set, j->info.gen);
    apr_pool_destroy(j->pool);
}

/* Main thread: finish the running job if it is done (wait: until it is). */
static void snapshot_reap(rs_store_t *store, int wait)
{
    if (!job || (!wait && !apr_atomic_read32(&job->done))) {
        return;
    }
    while (!apr_atomic_read32(&job->done)) {
        apr_sleep(apr_time_from_msec(5));
    }
    snapshot_finish(store, job);
    job = NULL;
}

/* Write a new Resource List snapshot of the set from the inventory, unless
 * the current one is still valid (force: the inventory changed).  at == 0:
 * take it from the journal now.  async: on the snapshot thread. */
static void snapshot(apr_pool_t *p, rs_store_t *store, rs_journal_t *journal, wset_t *ws,
                     apr_time_t at, apr_time_t completed, int force, int async)
{
    const rs_set_t *set = ws->set;
    rs_status_set_t *own = &ws->own;
    const char *key = snapshot_key(p, set), *oldkey = NULL;
    apr_allocator_t *alloc;
    snapjob_t *j;

    snapshot_reap(store, 1);
    rs_store_meta_get(store, p, apr_pstrcat(p, "snapshot-key:", set->name, NULL), &oldkey);
    if (!force && own->gen && oldkey && !strcmp(oldkey, key)) {
        /* Nothing changed: the current snapshot stays valid and is now
         * known to be consistent as of `at`. */
        own->consistent = at;
        rs_status_write_set(set->slot, own);
        ws->dirty = 0;
        prune(p, set, own->gen);
        return;
    }
    if (!at && rs_journal_mark(journal, set->name, &at) != APR_SUCCESS) {
        return;
    }
    if (completed < at) {
        completed = apr_time_now() > at ? apr_time_now() : at;
    }

    apr_allocator_create(&alloc);
    apr_pool_create_ex(&p, NULL, NULL, alloc);
    apr_allocator_owner_set(alloc, p);
    j = apr_pcalloc(p, sizeof(*j));
    j->pool = p;
    j->ws = ws;
    j->at = at;
    /* Every record up to this one is in the inventory the list will read
     * (the watcher is the only writer); a later one may not be. */
    j->seq = rs_journal_last_seq(journal);
    j->key = apr_pstrdup(p, key);
    j->log.fn = thread_log;
    j->log.baton = ws->log->baton;
    j->sn.set = set->name;
    j->sn.entry.url_base = set->root_url;
    j->sn.capability_url = set->capability_url;
    j->sn.list_url = set->list_url;
    j->sn.part_url_prefix = apr_pstrcat(p, set->doc_base, "resourcelist/", NULL);
    j->sn.max_entries = set->max_entries;
    j->sn.entry.hashes = set->hashes;
    j->sn.at = at;
    j->sn.completed = completed;
    j->sn.log = async ? &j->log : ws->log;
    {
        /* Generations only grow, also across restarts and state loss of
         * the status segment: take the larger of the segment's and the
         * store's counter. */
        const char *g = NULL;
        apr_uint64_t gen = own->gen;
        apr_status_t rv;
        rs_store_meta_get(store, p, apr_pstrcat(p, "snapshot-gen:", set->name, NULL), &g);
        if (g && (apr_uint64_t)apr_atoi64(g) > gen) {
            gen = (apr_uint64_t)apr_atoi64(g);
        }
        gen++;
        apr_dir_make_recursive(set->snap_dir, APR_FPROT_OS_DEFAULT, p);
        /* A watcher killed between publishing a snapshot directory and
         * recording it leaves that generation on disk: never reuse it. */
        while (rs_file_exists(p, rs_statedir_gen(p, set->snap_dir, gen))) {
            gen++;
        }
        j->gen = gen;
        j->tmp = rs_statedir_gen_tmp(p, set->snap_dir, gen);
        j->final = rs_statedir_gen(p, set->snap_dir, gen);
        rs_file_remove_tree(p, j->tmp);
        if ((rv = apr_dir_make(j->tmp, APR_FPROT_OS_DEFAULT, p)) != APR_SUCCESS) {
            j->rv = rv;
            snapshot_finish(store, j);
            return;
        }
    }
    /* Changes from here on make the set dirty again. */
    ws->dirty = 0;
    job = j;
    if (async && snap_submit(j, ws->pool)) {
        return;
    }
    j->rv = rs_snapshot_write(store, &j->sn, j->tmp, j->gen, j->pool, &j->info);
    j->done = 1;
    snapshot_reap(store, 1);
}

/* Reconcile the whole set with the stored inventory (at startup, after a
 * lost event queue, and periodically while the set cannot be watched),
 * then publish what changed.  Directories get their watches as the scan
 * reaches them. */
static void full_scan(apr_pool_t *p, rs_store_t *store, rs_journal_t *journal, wset_t *ws,
                      int first)
{
    const rs_set_t *set = ws->set;
    const rs_logger_t *log = ws->log;
    rs_status_t *st = rs_status_get();
    rs_scan_opts_t so;
    rs_scan_stats_t stats;
    rs_recorder_t *rc;
    apr_time_t jstart = 0, start = 0, end, t0 = rs_time_mono();
    apr_status_t rv;
    int was_degraded = ws->degraded;

    if (rs_journal_start(journal, set->name, &jstart) != APR_SUCCESS) {
        return;
    }
    /* Changes are journaled from the second scan of a set on: the first
     * one is the baseline, published as the Resource List whose `at` is
     * the journal's start. */
    if (jstart) {
        if (rs_journal_mark(journal, set->name, &start) != APR_SUCCESS) {
            return;
        }
    }
    else {
        start = apr_time_now();
    }
    if (!ws->w && rs_watch_create(&ws->w, ws->pool, set->dir, max_watches) != APR_SUCCESS) {
        ws->w = NULL;
    }
    ws->degraded = 0;
    scan_opts(ws, &so, &rc, journal, jstart != 0);
    if (st) {
        st->state = RS_STATE_SCANNING;
        st->scan_set = set->slot;
        st->scan_files = 0;
    }
    rv = rs_scan_set(store, &so, p, &stats);
    end = apr_time_now();
    ws->root_lost = 0;
    if (rv != APR_SUCCESS) {
        rs_log_emit(log, failing[set->slot]++ ? RS_LOG_DEBUG : RS_LOG_ERR, rv,
                    "set %s: scan failed; keeping the previous "
                    "Resource List", set->name);
        return;
    }
    if (stats.dirs == 0) {
        ws->root_lost = 1;     /* the root is missing: no watch either */
    }
    if (was_degraded && !ws->degraded && ws->w && !ws->root_lost) {
        /* The end of a degraded episode: say so, and let the next one be
         * reported again. */
        ws->degraded_logged = 0;
        rs_log_emit(log, RS_LOG_NOTICE, 0, "set %s: every directory is watched again "
                    "(%ld watches); changes are followed live", set->name,
                    rs_watch_count(ws->w));
    }
    rs_log_emit(log, first ? RS_LOG_NOTICE : RS_LOG_DEBUG, 0,
                "set %s: scanned %" APR_INT64_T_FMT " files in %" APR_INT64_T_FMT
                " directories (%" APR_INT64_T_FMT " listed, %" APR_INT64_T_FMT
                " rows written, %" APR_INT64_T_FMT " removed, %" APR_INT64_T_FMT
                " bytes hashed) in %.3f s; %ld directories watched", set->name, stats.files,
                stats.dirs, stats.listed, stats.written, stats.removed, stats.hashed,
                (double)(rs_time_mono() - t0) / APR_USEC_PER_SEC,
                ws->w ? rs_watch_count(ws->w) : 0L);
    if (!jstart) {
        /* The journal starts where this scan's Resource List does. */
        rs_journal_begin_set(journal, set->name, start);
    }
    changes_done(p, journal, ws, rc, 1);
    set_mode(ws);
    if (first && jstart && !ws->dirty) {
        /* Changes journaled after the Resource List in service read the
         * inventory (by an earlier watcher, whose next tick never came):
         * a new list now, not after the next change. */
        const char *v = NULL;
        apr_int64_t newest = 0;
        if (rs_store_meta_get(store, p, apr_pstrcat(p, "snapshot-seq:", set->name, NULL), &v)
            == APR_SUCCESS && v
            && rs_journal_newest(journal, p, set->name, &newest) == APR_SUCCESS
            && newest > apr_atoi64(v)) {
            ws->dirty = 1;
        }
    }
    snapshot(p, store, journal, ws, start, end, !jstart || stats.written || stats.removed || ws->dirty,
             0);
}

/* Reconcile what inotify reported. */
static void scan_targets(apr_pool_t *p, rs_store_t *store, rs_journal_t *journal, wset_t *ws,
                         const rs_scan_target_t *t, int n)
{
    rs_scan_opts_t so;
    rs_scan_stats_t stats;
    rs_recorder_t *rc;
    apr_status_t rv;

    scan_opts(ws, &so, &rc, journal, 1);
    so.progress = NULL;     /* scan-files counts the last full scan */
    rv = rs_scan_targets(store, &so, p, t, n, &stats);
    if (rv != APR_SUCCESS) {
        /* The root is gone, or the store failed: the full scan knows how
         * to say which, and records what it can. */
        full_scan(p, store, journal, ws, 0);
        return;
    }
    if (stats.written || stats.removed) {
        ws->dirty = 1;
    }
    if (rs_recorder_appended(rc)) {
        changes_done(p, journal, ws, rc, 0);
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

/* Main loop: wait for inotify events (or the next deadline), reconcile
 * what they name in one transaction per set and wake-up, publish the
 * records; on a lost queue or a lost root, reconcile the whole set; every
 * ResourceSyncRescanInterval, write a new Resource List snapshot of a set
 * whose inventory changed, and rescan sets that cannot be watched. */
static void watch_loop(apr_pool_t *iter, rs_store_t *store, rs_journal_t *journal,
                       wset_t *ws, int nsets)
{
    rs_status_t *st = rs_status_get();
    struct pollfd *pfd = calloc((apr_size_t)nsets + 1, sizeof(*pfd));
    int *map = calloc((apr_size_t)nsets + 1, sizeof(int));
    int i;

    /* Deadlines (ticks, settling entries, the heartbeat) are on the
     * monotonic clock: a wall clock stepped back must not hold them back
     * for as long as the step. */
    while (!stop_flag) {
        apr_time_t now = rs_time_mono(), next = now + apr_time_from_msec(200);
        int nfds = 0, degraded = 0, timeout;

        for (i = 0; i < nsets; i++) {
            apr_time_t due = ws[i].w ? rs_watch_next_due(ws[i].w) : 0;
            if (due && due < next) {
                next = due;
            }
            if (ws[i].next_tick < next) {
                next = ws[i].next_tick;
            }
            if (ws[i].w) {
                pfd[nfds].fd = rs_watch_fd(ws[i].w);
                pfd[nfds].events = POLLIN;
                pfd[nfds].revents = 0;
                map[nfds++] = i;
            }
            degraded |= ws[i].degraded || !ws[i].w || ws[i].root_lost;
        }
        if (st) {
            st->state = degraded ? RS_STATE_DEGRADED : RS_STATE_WATCHING;
            st->scan_set = -1;
            st->heartbeat = apr_time_now();
        }
        timeout = next > now ? (int)((next - now + 999) / 1000) : 0;
        if (poll(pfd, (nfds_t)nfds, timeout) > 0) {
            for (i = 0; i < nfds; i++) {
                if (pfd[i].revents && rs_watch_read(ws[map[i]].w) != APR_SUCCESS) {
                    /* Unreadable queue: treat as lost events. */
                    ws[map[i]].root_lost = 1;
                }
            }
        }
        if (getppid() == 1) {
            break;
        }
        snapshot_reap(store, 0);
        now = rs_time_mono();
        for (i = 0; i < nsets && !stop_flag; i++) {
            wset_t *w = &ws[i];
            if (w->w) {
                unsigned flags = rs_watch_take_flags(w->w);
                rs_scan_target_t *t;
                int n;
                if (flags) {
                    rs_log_emit(w->log, RS_LOG_NOTICE, 0, "set %s: %s; reconciling the set "
                                "with a full scan", w->set->name,
                                (flags & RS_WATCH_OVERFLOW) ? "the inotify event queue "
                                "overflowed (fs.inotify.max_queued_events)"
                                : "its root directory changed");
                    rs_watch_take(w->w, iter, now, &t);   /* the scan covers it */
                    full_scan(iter, store, journal, w, 0);
                    apr_pool_clear(iter);
                    continue;
                }
                n = rs_watch_take(w->w, iter, now, &t);
                if (n) {
                    scan_targets(iter, store, journal, w, t, n);
                }
                apr_pool_clear(iter);
            }
            if (now >= w->next_tick) {
                w->next_tick = now + rs_global.rescan;
                if (!w->w || w->degraded || w->root_lost) {
                    full_scan(iter, store, journal, w, 0);
                }
                else {
                    /* Close a list whose period ended; retention. */
                    changes_done(iter, journal, w, NULL, 1);
                    if (w->dirty) {
                        snapshot(iter, store, journal, w, 0, 0, 1, 1);
                    }
                }
                apr_pool_clear(iter);
            }
        }
    }
    free(map);
    free(pfd);
}

static void watcher_main(apr_pool_t *pool, server_rec *s)
{
    rs_logger_t log = { watcher_log, s };
    rs_store_t *store = NULL;
    rs_journal_t *journal = NULL;
    wset_t *ws;
    rs_status_t *st = rs_status_get();
    apr_pool_t *iter;
    apr_status_t rv;
    int i, k, nsets = rs_global.sets->nelts;

    prctl(PR_SET_NAME, "rs-watcher", 0, 0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
    /* The parent's handlers are inherited through fork: restore the
     * defaults, so that any of the signals httpd sends on stop or restart
     * simply ends the watcher.  That is safe at any point: store writes
     * are transactions and snapshots appear by an atomic rename. */
    apr_signal(SIGTERM, SIG_DFL);
    apr_signal(SIGHUP, SIG_DFL);
    apr_signal(SIGINT, SIG_DFL);
    apr_signal(SIGUSR1, SIG_DFL);
    apr_signal(SIGWINCH, SIG_DFL);
    apr_signal(SIGPIPE, SIG_IGN);
    apr_signal_unblock(SIGTERM);
    apr_signal_unblock(SIGHUP);
    apr_signal_unblock(SIGUSR1);
    ap_close_listeners();

    if (rs_global.mutex) {
        rs_status_child_init(pool, s);
    }
    if (geteuid() == 0 && ap_run_drop_privileges(pool, s) != OK) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, RS_TAG "watcher: cannot drop privileges");
        _exit(RS_WATCHER_FATAL);
    }
    if (st) {
        st->watcher_pid = getpid();
        st->heartbeat = apr_time_now();
        st->state = RS_STATE_STARTING;
    }
    if (start_delay) {
        apr_sleep(start_delay);
    }
    rv = rs_store_open(&store, pool, RS_STATEDIR_DB_DRIVER,
                       rs_statedir_db(pool, rs_global.state_dir), &log);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, rv, s, RS_TAG "watcher: cannot open the "
                     "state store in ResourceSyncStateDir '%s'", rs_global.state_dir);
        _exit(RS_WATCHER_FATAL);
    }
    if (rs_journal_open(&journal, store, pool) != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, RS_TAG "watcher: cannot open the "
                     "journal in ResourceSyncStateDir '%s'", rs_global.state_dir);
        _exit(RS_WATCHER_FATAL);
    }
    ap_log_error(APLOG_MARK, APLOG_INFO, 0, s, RS_TAG "watcher started (pid %d, %d sets)",
                 (int)getpid(), nsets);
    apr_pool_create(&seen_pool, pool);
    seen = apr_hash_make(seen_pool);
    workers_n = scan_workers();

    /* One access checker (a private connection record) per set and
     * worker thread. */
    ws = apr_pcalloc(pool, sizeof(*ws) * (apr_size_t)(nsets + 1));
    for (i = 0; i < nsets; i++) {
        const char *why;
        ws[i].set = APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *);
        rs_status_read_set(ws[i].set->slot, &ws[i].own);
        ws[i].log = apr_pmemdup(pool, &log, sizeof(log));
        ws[i].pool = pool;
        ws[i].acc = apr_pcalloc(pool, sizeof(*ws[i].acc) * (apr_size_t)workers_n);
        for (k = 0; k < workers_n; k++) {
            ws[i].acc[k] = rs_access_create(pool, ws[i].set);
        }
        why = rs_access_verify_root(ws[i].acc[0], pool);
        if (why) {
            rs_log_emit(&log, RS_LOG_ERR, 0, "%s", why);
        }
        if ((rv = rs_watch_create(&ws[i].w, pool, ws[i].set->dir, max_watches)) != APR_SUCCESS) {
            ws[i].w = NULL;
            rs_log_emit(&log, RS_LOG_WARN, rv, "set %s: cannot create an inotify instance "
                        "(see fs.inotify.max_user_instances): changes are found by rescans "
                        "every %d s", ws[i].set->name, (int)apr_time_sec(rs_global.rescan));
        }
    }
    apr_pool_create(&iter, pool);
    for (i = 0; i < nsets; i++) {
        ws[i].iter = iter;
        /* Children answer the open Change List from what is stored. */
        if (rs_changes_seed(iter, journal, ws[i].set, &ws[i].own) != APR_SUCCESS) {
            rs_log_emit(&log, RS_LOG_ERR, 0, "set %s: cannot read its Change Lists",
                        ws[i].set->name);
        }
        apr_pool_clear(iter);
    }
    /* The ring starts empty in every server generation: fill it with the
     * newest records, so children serve the open lists from it at once. */
    rs_changes_seed_ring(iter, journal, &log);
    apr_pool_clear(iter);
    /* Startup reconciliation: whatever changed while no watcher ran is
     * journaled before anything new is published; watches are added as
     * the scans go. */
    for (i = 0; i < nsets && !stop_flag; i++) {
        full_scan(iter, store, journal, &ws[i], 1);
        ws[i].next_tick = rs_time_mono() + rs_global.rescan;
        apr_pool_clear(iter);
    }
    watch_loop(iter, store, journal, ws, nsets);
    ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, s, RS_TAG "watcher stopping");
    /* _exit: never run the parent's atexit handlers or pool cleanups. */
    _exit(0);
}

static apr_status_t fork_watcher(apr_pool_t *pconf, server_rec *s);

static void watcher_maint(int reason, void *data, apr_wait_t status)
{
    apr_proc_t *proc = data;
    int mpm_state = AP_MPMQ_STARTING;

    switch (reason) {
    case APR_OC_REASON_DEATH:
    case APR_OC_REASON_LOST:
        apr_proc_other_child_unregister(data);
        if (ap_mpm_query(AP_MPMQ_MPM_STATE, &mpm_state) == APR_SUCCESS
            && mpm_state == AP_MPMQ_STOPPING) {
            break;
        }
        /* The MPMs pass the exit code, or the number of the signal that
         * ended the process (no signal has the number 78). */
        if (reason == APR_OC_REASON_DEATH && status == RS_WATCHER_FATAL) {
            ap_log_error(APLOG_MARK, APLOG_ERR, 0, watcher_server, RS_TAG "watcher "
                         "(pid %d) could not start; not restarting it until the next "
                         "server restart", (int)proc->pid);
            break;
        }
        if (rs_time_mono() - last_fork < RS_QUICK_DEATH) {
            quick_deaths++;
        }
        else {
            quick_deaths = 0;
        }
        start_delay = quick_deaths ? apr_time_from_sec(1 << (quick_deaths > 6 ? 6 : quick_deaths - 1))
                                   : 0;
        if (start_delay > apr_time_from_sec(60)) {
            start_delay = apr_time_from_sec(60);
        }
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, watcher_server, RS_TAG "watcher "
                     "(pid %d) died (exit status or signal %d); starting a new one%s",
                     (int)proc->pid, (int)status,
                     start_delay ? apr_psprintf(rs_global.pconf, " in %d s",
                                                (int)apr_time_sec(start_delay)) : "");
        fork_watcher(rs_global.pconf, watcher_server);
        break;
    case APR_OC_REASON_RESTART:
        apr_proc_other_child_unregister(data);
        kill(proc->pid, SIGTERM);
        break;
    case APR_OC_REASON_UNREGISTER:
        kill(proc->pid, SIGTERM);
        break;
    default:
        break;
    }
}

static apr_status_t fork_watcher(apr_pool_t *pconf, server_rec *s)
{
    apr_proc_t *proc = apr_pcalloc(pconf, sizeof(*proc));
    apr_status_t rv;

    last_fork = rs_time_mono();
    rv = apr_proc_fork(proc, pconf);

    if (rv == APR_INCHILD) {
        apr_pool_t *wpool;
        apr_allocator_t *alloc;
        /* Own allocator: the watcher's memory is not tied to pconf's. */
        apr_allocator_create(&alloc);
        apr_allocator_max_free_set(alloc, 4 * 1024 * 1024);
        apr_pool_create_ex(&wpool, NULL, NULL, alloc);
        apr_allocator_owner_set(alloc, wpool);
        watcher_main(wpool, s);
        _exit(0);
    }
    if (rv != APR_INPARENT) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, RS_TAG "cannot fork the watcher");
        return rv;
    }
    watcher_proc = proc;
    apr_pool_note_subprocess(pconf, proc, APR_KILL_AFTER_TIMEOUT);
    apr_proc_other_child_register(proc, watcher_maint, proc, NULL, pconf);
    return APR_SUCCESS;
}

int rs_watcher_start(apr_pool_t *pconf, server_rec *s)
{
    watcher_server = s;
    if (!rs_global.sets->nelts) {
        return OK;
    }
    return fork_watcher(pconf, s) == APR_SUCCESS ? OK : !OK;
}
