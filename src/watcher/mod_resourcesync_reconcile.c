/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_reconcile.c - a set's reconciliation (rs_reconcile.h)
 * in the watcher: what it asks of the other concerns, filled in from the
 * set's wset_t - the scan's options (httpd's access checks, the watches
 * added as the scan reaches directories, the hashing lane, progress in
 * the status segment), the ring and the Change Lists
 * (mod_resourcesync_changes.c), notifications, the store failing
 * (mod_resourcesync_storefail.c), the access files above the root
 * (mod_resourcesync_above.c) and the snapshots
 * (mod_resourcesync_snapjob.c).  Runs on the driver's thread.
 */
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_access.h"
#include "mod_resourcesync_changes.h"
#include "mod_resourcesync_status.h"
#include "rs_notify.h"

void rs_reconcile_mode(wset_t *ws)
{
    int mode = ws->w && !ws->degraded && !ws->rec.root_lost ? RS_MODE_WATCHING : RS_MODE_RESCANS;
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

/* rs_scan's links_row and links_done: the set's links, on the scan's
 * store connection (the driver's) and journal. */
static apr_status_t links_row(void *baton, rs_item_t *it, int was_listed)
{
    wset_t *ws = baton;
    return rs_linkkeep_row(ws->links, ws->d->store, it, was_listed);
}

static apr_status_t links_done(void *baton, const char *dir, const char *name, int gone)
{
    wset_t *ws = baton;
    return rs_linkkeep_done(ws->links, ws->d->store, ws->d->journal, dir, name, gone, NULL);
}

/* A set's first scan: the collection of its links (rs_linkscan.h). */
static rs_linkscan_t *links_scan(void *baton)
{
    wset_t *ws = baton;
    const rs_set_t *set = ws->set;

    return rs_linkscan_create(set->links, set->name, set->root_url, set->links_fp, 0);
}

static void scan_opts(void *baton, rs_scan_opts_t *so)
{
    wset_t *ws = baton;
    const rs_set_t *set = ws->set;

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
    if (ws->links) {
        so->links_row = links_row;
        so->links_done = links_done;
        so->links_baton = ws;
    }
}

static rs_recorder_t *recorder(void *baton, apr_pool_t *p, rs_journal_t *j)
{
    wset_t *ws = baton;
    rs_recorder_t *rc = rs_changes_recorder(p, j, ws->set);

    rs_notifyw_attach(ws, rc);
    return rc;
}

static void publish(void *baton, apr_pool_t *p, rs_recorder_t *rc)
{
    wset_t *ws = baton;

    rs_changes_publish(p, ws->d->journal, rc, ws->set, &ws->status);
    rs_notifyw_changed(ws, rc);
    if (ws->set->cdump && rs_recorder_deleted(rc)) {
        /* Versions of paths that stopped being listed: their captures go
         * now, not with the journal's retention (rs_cdump_gc). */
        ws->cdump.deleted = 1;
    }
}

static void extent(void *baton, rs_reconcile_extent_t *out)
{
    const wset_t *ws = baton;

    out->entries = ws->status.entries;
    out->open_id = ws->status.cl_open_id;
    out->ready = ws->status.cl_ready;
    out->count = ws->status.cl_count;
    out->bytes = rs_changes_close_bytes(ws->set, &ws->status);
    out->max_bytes = ws->listclose.max_bytes;
}

static apr_status_t update_lists(void *baton, apr_pool_t *p, rs_journal_t *j)
{
    wset_t *ws = baton;
    apr_time_t jstart = 0;
    apr_status_t rv =
        rs_changes_update(p, ws->d->store, j, ws->set, &ws->listclose, &ws->status, ws->log);

    /* Retention may have moved the index's from past the at of the
     * Resource List and Resource Dump in service: then a new snapshot at
     * this tick (rs_snapsched_outlived). */
    if (rv == APR_SUCCESS && ws->status.gen
        && rs_journal_start(j, ws->set->name, &jstart) == APR_SUCCESS) {
        rs_snapsched_outlived(&ws->snap, jstart, ws->status.at);
    }
    return rv;
}

/* Framework notification: Change Lists old_id .. new_id - 1 closed
 * (updated: they got their until), new_id opened (created). */
static void lists_closed(void *baton, apr_pool_t *p, apr_int64_t old_id, apr_int64_t new_id)
{
    wset_t *ws = baton;
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

static void store_note(void *baton, apr_status_t rv, const char *what)
{
    rs_storefail_note(baton, rv, what);
}

static void store_failed(void *baton, apr_pool_t *p, apr_status_t rv, const char *what)
{
    rs_storefail_failed(p, baton, rv, what);
}

static apr_status_t resync(void *baton, apr_pool_t *p)
{
    return rs_storefail_resync(p, baton);
}

static int watch_begin(void *baton)
{
    wset_t *ws = baton;
    int was = ws->degraded;

    if (!ws->w
        && rs_watch_create(&ws->w, ws->d->pool, ws->set->dir, RS_DRIVE_MAX_WATCHES)
               != APR_SUCCESS) {
        ws->w = NULL;
    }
    ws->degraded = 0;
    return was;
}

static long watches(void *baton, int *degraded)
{
    const wset_t *ws = baton;

    *degraded = ws->degraded;
    return ws->w ? rs_watch_count(ws->w) : -1;
}

static void watch_restored(void *baton)
{
    ((wset_t *)baton)->degraded_logged = 0;
}

static void mode(void *baton)
{
    rs_reconcile_mode(baton);
}

static int above_begin(void *baton, apr_pool_t *p)
{
    return rs_abovew_begin(baton, p);
}

static void above_end(void *baton, apr_pool_t *p)
{
    rs_abovew_end(baton, p);
}

static void progress_begin(void *baton)
{
    wset_t *ws = baton;
    rs_status_t *st;

    rs_progressw_begin(ws);
    if ((st = rs_status_get())) {
        st->state = RS_STATE_SCANNING;
        st->scan_set = ws->set->slot;
        st->scan_files = 0;
    }
}

static void progress_end(void *baton)
{
    rs_progressw_end(baton);
}

static void changed(void *baton, apr_time_t now)
{
    rs_snapjob_changed(baton, now);
}

static void snapshot(void *baton, apr_pool_t *p, apr_time_t at, apr_time_t completed, int force)
{
    wset_t *ws = baton;
    rs_snapjob_schedule(ws, p, at, completed, force || ws->snap.dirty, 0);
}

void rs_reconcilew_init(wset_t *ws)
{
    rs_reconcile_hooks_t *h = apr_pcalloc(ws->d->pool, sizeof(*h));

    h->scan_opts = scan_opts;
    h->recorder = recorder;
    h->publish = publish;
    h->extent = extent;
    h->update_lists = update_lists;
    h->lists_closed = lists_closed;
    h->store_note = store_note;
    h->store_failed = store_failed;
    h->resync = resync;
    h->watch_begin = watch_begin;
    h->watches = watches;
    h->watch_restored = watch_restored;
    h->mode = mode;
    h->above_begin = above_begin;
    h->above_end = above_end;
    h->progress_begin = progress_begin;
    h->progress_end = progress_end;
    h->changed = changed;
    h->snapshot = snapshot;
    h->baton = ws;
    ws->links = rs_linkkeep_create(ws->d->pool, ws->set->links, ws->set->name, ws->set->root_url);
    /* Rules without local targets (URLs) look nothing up: the
     * walk resolves them as it writes, no second pass. */
    h->links_scan = ws->links && rs_links_has_local(ws->set->links) ? links_scan : NULL;
    rs_reconcile_init(&ws->rec, h, ws->set->name, ws->set->cdump ? ws->set->capture_dir : NULL,
                      ws->set->max_entries, &ws->massdel, &ws->retry, &ws->d->episode, ws->log);
}

apr_status_t rs_reconcile_changes(apr_pool_t *p, wset_t *ws, rs_recorder_t *rc, int full)
{
    return rs_reconcile_publish(&ws->rec, p, ws->d->journal, rc, full);
}

void rs_reconcile_full(apr_pool_t *p, wset_t *ws, int first)
{
    rs_reconcile_scan(&ws->rec, p, ws->d->store, ws->d->journal, first);
}

void rs_reconcile_targets(apr_pool_t *p, wset_t *ws, const rs_scan_target_t *t, int n)
{
    rs_reconcile_batch(&ws->rec, p, ws->d->store, ws->d->journal, t, n);
}

void rs_reconcile_links(apr_pool_t *p, wset_t *ws)
{
    const rs_set_t *set = ws->set;
    apr_int64_t changed = 0;
    int ran = 0;
    apr_status_t rv = rs_linkpass_start(ws->d->store, ws->d->journal, p, set->name, set->links,
                                        set->root_url, set->links_fp, &ran, &changed);

    if (rv != APR_SUCCESS) {
        /* Tried again at the next start; meanwhile the scans keep what
         * they write. */
        rs_log_emit(ws->log, RS_LOG_ERR, rv,
                    "set %s: cannot resolve its links again after a change of its "
                    "ResourceSyncLink rules",
                    set->name);
        return;
    }
    if (ran) {
        rs_log_emit(ws->log, RS_LOG_INFO, 0,
                    "set %s: its link rules changed; %" APR_INT64_T_FMT
                    " resources changed their links",
                    set->name, changed);
    }
    if (changed) {
        ws->snap.dirty = 1; /* the parts that hold them are written again */
    }
}
