/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_reconcile.c - a set's tree reconciled with its
 * inventory, on the driver's thread: the full scan (at startup, after a
 * lost event queue or a changed root, for sets that cannot be watched, to
 * confirm a held mass deletion, as a store failure's retry) and the scan
 * of what inotify named; then the changes published (ring, open list,
 * closing and retention) and the next snapshot scheduled.
 *
 * Lifecycle of one reconciliation: the scan runs in the store's
 * transactions; its records reach the ring and the documents only after
 * they committed (rs_reconcile_changes), so a rolled-back batch is never
 * published.  A failure of the store puts the set into the failing state
 * (mod_resourcesync_storefail.c), whose retry is a full scan here; a set
 * that cannot be listed (rs_massdel.h) is not scanned at all.
 * Directories get their inotify watches as the scan reaches them
 * (on_dir), before they are read; a full scan first looks at the access
 * files above the root (mod_resourcesync_above.c) and decides every file
 * again when one of them changed.
 */
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_access.h"
#include "mod_resourcesync_changes.h"
#include "mod_resourcesync_status.h"
#include "rs_listclose.h"
#include "rs_notify.h"
#include "rs_scan.h"
#include "rs_statedir.h"
#include "rs_time.h"

void rs_reconcile_mode(wset_t *ws)
{
    int mode = ws->w && !ws->degraded && !ws->root_lost ? RS_MODE_WATCHING : RS_MODE_RESCANS;
    if (ws->status.mode != mode) {
        ws->status.mode = mode;
        rs_wset_status_put(ws);
    }
}

static void progress(void *baton, apr_int64_t files)
{
    rs_status_t *st = rs_status_get();
    if (st) {
        st->scan_files = files;
        st->heartbeat = apr_time_now();
    }
    rs_progressw_tick(baton, files);
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
        rs_wset_watch_failed(ws, *relpath ? relpath : "/", err);
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
    so->hashes = set->digests;
    so->excludes = set->excludes;
    so->dotfiles = set->dotfiles;
    so->cfg = rs_global.fingerprint;
    so->access_files = rs_access_files(ws->acc[0]);
    so->check = rs_access_check;
    so->check_baton = ws->acc[0];
    so->workers = ws->d->workers;
    so->hash_workers = ws->d->hash_workers;
    so->check_batons = (void **)ws->acc;
    so->progress = progress;
    so->progress_baton = ws;
    so->log = ws->log;
    so->on_dir = on_dir;
    so->on_drop = on_drop;
    so->dir_baton = ws;
    so->defer = rs_hashlane_defer;
    so->defer_baton = rs_hashlanew_baton(set);
    so->defer_size = rs_global.large_file;
    *rc = journaled ? rs_changes_recorder(ws->d->iter, ws->d->journal, set) : NULL;
    so->max_deleted = journaled ? rs_massdel_limit(&ws->massdel, ws->status.entries) : 0;
    if (*rc) {
        so->on_change = rs_recorder_record;
        so->change_baton = *rc;
        /* Change Dumps: what this scan journals is captured as it is
         * hashed (rs_capture.h). */
        so->capture_dir = set->cdump ? set->capture_dir : NULL;
        rs_notifyw_attach(ws, *rc);
    }
}

/* Framework notification: Change Lists old_id .. new_id - 1 closed
 * (updated: they got their until), new_id opened (created). */
static void lists_closed(apr_pool_t *p, wset_t *ws, apr_int64_t old_id, apr_int64_t new_id)
{
    apr_array_header_t *e = apr_array_make(p, 2, sizeof(rs_notify_fw_entry_t));
    const char *prefix =
        apr_pstrcat(p, ws->set->doc_base, "changelist/", ws->status.history, "-", NULL);
    apr_time_t now = apr_time_now();
    apr_int64_t id;

    for (id = old_id > 0 ? old_id : new_id; id <= new_id; id++) {
        rs_notifyw_fw_add(e, apr_psprintf(p, "%s%" APR_INT64_T_FMT ".xml", prefix, id),
                          id < new_id ? "updated" : "created", "changelist", now,
                          ws->set->cl_index_url);
    }
    rs_notifyw_framework(ws, p, e);
}

/* After records were committed: into the ring, then the Change Lists
 * (closing, retention, files).  full == 0 (an event batch): the lists are
 * only looked at when the open one may have reached
 * ResourceSyncMaxEntries; closing on time and retention wait for the
 * set's tick. */
apr_status_t rs_reconcile_changes(apr_pool_t *p, wset_t *ws, rs_recorder_t *rc, int full)
{
    apr_time_t t0;
    apr_int64_t open_id;
    apr_status_t rv;

    rs_changes_publish(p, rc, ws->set, &ws->status);
    rs_notifyw_changed(ws, rc);
    if (ws->set->cdump && rs_recorder_deleted(rc)) {
        /* Versions of paths that stopped being listed: their captures go
         * now, not with the journal's retention (rs_cdump_gc). */
        ws->cdump.deleted = 1;
    }
    if (!full
        && !rs_listclose_batch_due(ws->set->max_entries, ws->status.cl_ready,
                                   ws->status.cl_count)) {
        return APR_SUCCESS;
    }
    t0 = rs_time_mono();
    open_id = ws->status.cl_open_id;
    if ((rv = rs_changes_update(p, ws->d->journal, ws->set, &ws->listclose, &ws->status, ws->log))
        != APR_SUCCESS) {
        rs_log_emit(ws->log, RS_LOG_ERR, rv, "set %s: cannot update its Change Lists",
                    ws->set->name);
        return rv;
    }
    if (ws->status.cl_open_id != open_id) {
        rs_log_emit(ws->log, RS_LOG_DEBUG, 0,
                    "set %s: Change List %" APR_INT64_T_FMT " closed, %" APR_INT64_T_FMT
                    " open, in %.1f ms",
                    ws->set->name, open_id, ws->status.cl_open_id,
                    (double)(rs_time_mono() - t0) / 1000.0);
        lists_closed(p, ws, open_id, ws->status.cl_open_id);
    }
    return APR_SUCCESS;
}

/* Whether changes were journaled after the Resource List in service read
 * the inventory (by an earlier watcher, whose next tick never came). */
static int list_behind_journal(apr_pool_t *p, wset_t *ws)
{
    const char *v = NULL;
    apr_int64_t newest = 0;

    return rs_db_meta_get(ws->d->store, p, apr_pstrcat(p, "snapshot-seq:", ws->set->name, NULL), &v)
               == APR_SUCCESS
           && v && rs_journal_newest(ws->d->journal, p, ws->set->name, &newest) == APR_SUCCESS
           && newest > apr_atoi64(v);
}

/* The log lines after a successful full scan. */
static void full_scan_report(wset_t *ws, const rs_scan_stats_t *stats, int was_degraded, int first,
                             apr_time_t t0)
{
    const rs_set_t *set = ws->set;
    char ahead[96] = "";

    if (stats->ahead_dirs) {
        apr_snprintf(ahead, sizeof(ahead),
                     "; %" APR_INT64_T_FMT " directories read ahead "
                     "(a cold cache)",
                     stats->ahead_dirs);
    }
    if (was_degraded && !ws->degraded && ws->w && !ws->root_lost) {
        /* The end of a degraded episode: say so, and let the next one be
         * reported again. */
        ws->degraded_logged = 0;
        rs_log_emit(ws->log, RS_LOG_NOTICE, 0,
                    "set %s: every directory is watched again "
                    "(%ld watches); changes are followed live",
                    set->name, rs_watch_count(ws->w));
    }
    rs_log_emit(ws->log, first ? RS_LOG_NOTICE : RS_LOG_DEBUG, 0,
                "set %s: scanned %" APR_INT64_T_FMT " files in %" APR_INT64_T_FMT
                " directories (%" APR_INT64_T_FMT " listed, %" APR_INT64_T_FMT
                " rows written, %" APR_INT64_T_FMT " removed, %" APR_INT64_T_FMT
                " bytes hashed) in %.3f s; %ld directories watched%s",
                set->name, stats->files, stats->dirs, stats->listed, stats->written, stats->removed,
                stats->hashed, (double)(rs_time_mono() - t0) / APR_USEC_PER_SEC,
                ws->w ? rs_watch_count(ws->w) : 0L, ahead);
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

/* Whether a full scan of ws's set may run now, and where its journal
 * starts (*jstart, 0: not yet) and the scan's start (*start: the mark of
 * the journal, or now).  Nothing of a set that cannot be listed is
 * scanned or recorded; a store that fails is noted (its retry decides). */
static int scan_ready(apr_pool_t *p, wset_t *ws, apr_time_t *jstart, apr_time_t *start)
{
    rs_journal_t *journal = ws->d->journal;
    apr_status_t rv;

    ws->root_lost = !rs_massdel_check(&ws->massdel, ws->d->store, p);
    if (ws->root_lost) {
        rs_massdel_unlisted(&ws->massdel);
        rs_reconcile_mode(ws);
        return 0;
    }
    if (ws->retry.resync && (rv = rs_storefail_resync(p, ws)) != APR_SUCCESS) {
        rs_storefail_note(ws, rv, "reading the journal");
        return 0;
    }
    if ((rv = rs_journal_start(journal, ws->set->name, jstart)) != APR_SUCCESS
        || (*jstart && (rv = rs_journal_mark(journal, ws->set->name, start)) != APR_SUCCESS)) {
        rs_storefail_note(ws, rv, "marking the journal");
        return 0;
    }
    if (!*jstart) {
        *start = apr_time_now();
    }
    return 1;
}

/* Reconcile the whole set with the stored inventory (at startup, after a
 * lost event queue, and periodically while the set cannot be watched),
 * then publish what changed.  Directories get their watches as the scan
 * reaches them.  Changes are journaled from the second scan of a set on:
 * the first one is the baseline, published as the Resource List whose
 * `at` is the journal's start. */
void rs_reconcile_full(apr_pool_t *p, wset_t *ws, int first)
{
    const rs_set_t *set = ws->set;
    rs_journal_t *journal = ws->d->journal;
    rs_scan_opts_t so;
    rs_scan_stats_t stats;
    rs_recorder_t *rc;
    apr_time_t jstart = 0, start = 0, end, t0 = rs_time_mono();
    apr_status_t rv;
    int was_degraded = ws->degraded;

    if (!scan_ready(p, ws, &jstart, &start)) {
        return;
    }
    if (!ws->w
        && rs_watch_create(&ws->w, ws->d->pool, set->dir, RS_DRIVE_MAX_WATCHES) != APR_SUCCESS) {
        ws->w = NULL;
    }
    ws->degraded = 0;
    scan_opts(ws, &so, &rc, jstart != 0);
    so.recheck = rs_abovew_begin(ws, p);
    rs_progressw_begin(ws);
    scan_state(RS_STATE_SCANNING, set->slot);
    rv = rs_scan_set(ws->d->store, &so, p, &stats);
    rs_progressw_end(ws);
    end = apr_time_now();
    if (rs_massdel_scanned(&ws->massdel, rv, stats.deleted, rs_time_mono())) {
        return;
    }
    if (rv != APR_SUCCESS && !rs_massdel_check(&ws->massdel, ws->d->store, p)) {
        ws->root_lost = 1; /* gone during the scan: nothing was changed */
        rs_reconcile_mode(ws);
        return;
    }
    if (rv != APR_SUCCESS) {
        rs_log_emit(ws->log, RS_LOG_DEBUG, rv,
                    "set %s: scan failed; keeping the previous "
                    "Resource List",
                    set->name);
        rs_storefail_failed(p, ws, rv, "a full scan");
        return;
    }
    rs_abovew_end(ws, p); /* every file was decided under that state */
    full_scan_report(ws, &stats, was_degraded, first, t0);
    if (!jstart && (rv = rs_journal_begin_set(journal, set->name, start)) != APR_SUCCESS) {
        /* The journal starts where this scan's Resource List does. */
        rs_storefail_failed(p, ws, rv, "starting the journal");
        return;
    }
    if ((rv = rs_reconcile_changes(p, ws, rc, 1)) != APR_SUCCESS) {
        rs_storefail_failed(p, ws, rv, "updating the Change Lists");
        return;
    }
    rs_storeretry_ok(&ws->retry, &ws->d->episode);
    rs_reconcile_mode(ws);
    if (first && jstart && !ws->snap.dirty && list_behind_journal(p, ws)) {
        ws->snap.dirty = 1; /* a new list now, not after the next change */
    }
    rs_snapjob_schedule(ws, p, start, end,
                        !jstart || stats.written || stats.removed || ws->snap.dirty, 0);
}

/* Reconcile what inotify reported. */
void rs_reconcile_targets(apr_pool_t *p, wset_t *ws, const rs_scan_target_t *t, int n)
{
    rs_scan_opts_t so;
    rs_scan_stats_t stats;
    rs_recorder_t *rc;
    apr_status_t rv;

    scan_opts(ws, &so, &rc, 1);
    so.progress = NULL; /* scan-files counts the last full scan */
    rv = rs_scan_targets(ws->d->store, &so, p, t, n, &stats);
    if (rs_massdel_scanned(&ws->massdel, rv, stats.deleted, rs_time_mono())) {
        return;
    }
    if (rv != APR_SUCCESS) {
        /* The root is gone, or the store failed: the full scan knows how
         * to say which, and records what it can.  The batch's records
         * were rolled back: never published. */
        ws->retry.resync = 1;
        rs_reconcile_full(p, ws, 0);
        return;
    }
    if (stats.written || stats.removed) {
        rs_snapjob_changed(ws, rs_time_mono());
    }
    if (rs_recorder_appended(rc) && (rv = rs_reconcile_changes(p, ws, rc, 0)) != APR_SUCCESS) {
        rs_storefail_failed(p, ws, rv, "updating the Change Lists");
    }
    if (ws->degraded) {
        rs_reconcile_mode(ws);
    }
}
