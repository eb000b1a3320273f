/* SPDX-License-Identifier: Apache-2.0 */
/* rs_reconcile.c - see rs_reconcile.h */
#include <string.h>
#include <apr_strings.h>
#include "rs_listclose.h"
#include "rs_reconcile.h"
#include "rs_time.h"

static apr_time_t mono(const rs_reconcile_t *rc)
{
    return rc->h->mono ? rc->h->mono() : rs_time_mono();
}

static apr_time_t wall(const rs_reconcile_t *rc)
{
    return rc->h->wall ? rc->h->wall() : apr_time_now();
}

void rs_reconcile_init(rs_reconcile_t *rc, const rs_reconcile_hooks_t *h, const char *name,
                       const char *capture_dir, int max_entries, rs_massdel_t *massdel,
                       rs_storeretry_t *retry, rs_storeretry_episode_t *episode,
                       const rs_logger_t *log)
{
    memset(rc, 0, sizeof(*rc));
    rc->h = h;
    rc->name = name;
    rc->capture_dir = capture_dir;
    rc->max_entries = max_entries;
    rc->massdel = massdel;
    rc->retry = retry;
    rc->episode = episode;
    rc->log = log;
}

/* The scan's options; journaled: its changes go into the journal through
 * a recorder (*r), whose window is published after the commit; not (a
 * baseline): its links collected by *ls (NULL: none) for one pass after
 * it. */
static void scan_opts(rs_reconcile_t *rc, apr_pool_t *p, rs_journal_t *journal, rs_scan_opts_t *so,
                      rs_recorder_t **r, rs_linkscan_t **ls, int journaled)
{
    rs_reconcile_extent_t ext;

    memset(so, 0, sizeof(*so));
    rc->h->scan_opts(rc->h->baton, so);
    *ls = !journaled && rc->h->links_scan ? rc->h->links_scan(rc->h->baton) : NULL;
    if (*ls) {
        so->links_row = NULL;
        so->links_done = NULL;
        so->links_scan = rs_linkscan_row;
        so->links_scan_baton = *ls;
    }
    *r = journaled ? rc->h->recorder(rc->h->baton, p, journal) : NULL;
    if (journaled) {
        rc->h->extent(rc->h->baton, &ext);
        so->max_deleted = rs_massdel_limit(rc->massdel, ext.entries);
    }
    if (*r) {
        so->on_change = rs_recorder_record;
        so->change_baton = *r;
        /* Change Dumps: what this scan journals is captured as it is
         * hashed (rs_capture.h). */
        so->capture_dir = rc->capture_dir;
    }
}

apr_status_t rs_reconcile_publish(rs_reconcile_t *rc, apr_pool_t *p, rs_journal_t *journal,
                                  rs_recorder_t *r, int full)
{
    rs_reconcile_extent_t before, after;
    apr_time_t t0;
    apr_status_t rv;

    rc->h->publish(rc->h->baton, p, r);
    rc->h->extent(rc->h->baton, &before);
    if (!full
        && !rs_listclose_batch_due(rc->max_entries, before.ready, before.count, before.bytes,
                                   before.max_bytes)) {
        return APR_SUCCESS;
    }
    t0 = mono(rc);
    if ((rv = rc->h->update_lists(rc->h->baton, p, journal)) != APR_SUCCESS) {
        rs_log_emit(rc->log, RS_LOG_ERR, rv, "set %s: cannot update its Change Lists", rc->name);
        return rv;
    }
    rc->h->extent(rc->h->baton, &after);
    if (after.open_id != before.open_id) {
        rs_log_emit(rc->log, RS_LOG_DEBUG, 0,
                    "set %s: Change List %" APR_INT64_T_FMT " closed, %" APR_INT64_T_FMT
                    " open, in %.1f ms",
                    rc->name, before.open_id, after.open_id, (double)(mono(rc) - t0) / 1000.0);
        rc->h->lists_closed(rc->h->baton, p, before.open_id, after.open_id);
    }
    return APR_SUCCESS;
}

int rs_reconcile_list_behind(rs_reconcile_t *rc, apr_pool_t *p, rs_db_t *store,
                             rs_journal_t *journal)
{
    const char *v = NULL;
    apr_int64_t newest = 0;

    return rs_db_meta_get(store, p, apr_pstrcat(p, "snapshot-seq:", rc->name, NULL), &v)
               == APR_SUCCESS
           && v && rs_journal_newest(journal, p, rc->name, &newest) == APR_SUCCESS
           && newest > apr_atoi64(v);
}

/* The log lines after a successful full scan. */
static void full_scan_report(rs_reconcile_t *rc, const rs_scan_stats_t *stats, int was_degraded,
                             int first, apr_time_t t0)
{
    char ahead[96] = "";
    int degraded = 0;
    long watches = rc->h->watches(rc->h->baton, &degraded);

    if (stats->ahead_dirs) {
        apr_snprintf(ahead, sizeof(ahead),
                     "; %" APR_INT64_T_FMT " directories read ahead "
                     "(a cold cache)",
                     stats->ahead_dirs);
    }
    if (was_degraded && !degraded && watches >= 0 && !rc->root_lost) {
        /* The end of a degraded episode: say so, and let the next one be
         * reported again. */
        rc->h->watch_restored(rc->h->baton);
        rs_log_emit(rc->log, RS_LOG_NOTICE, 0,
                    "set %s: every directory is watched again "
                    "(%ld watches); changes are followed live",
                    rc->name, watches);
    }
    rs_log_emit(rc->log, first ? RS_LOG_NOTICE : RS_LOG_DEBUG, 0,
                "set %s: scanned %" APR_INT64_T_FMT " files in %" APR_INT64_T_FMT
                " directories (%" APR_INT64_T_FMT " listed, %" APR_INT64_T_FMT
                " rows written, %" APR_INT64_T_FMT " removed, %" APR_INT64_T_FMT
                " bytes hashed) in %.3f s; %ld directories watched%s",
                rc->name, stats->files, stats->dirs, stats->listed, stats->written, stats->removed,
                stats->hashed, (double)(mono(rc) - t0) / APR_USEC_PER_SEC,
                watches >= 0 ? watches : 0L, ahead);
}

/* Whether a full scan may run now, and where the set's journal starts
 * (*jstart, 0: not yet) and the scan's start (*start: the mark of the
 * journal, or now).  Nothing of a set that cannot be listed is scanned or
 * recorded; a store that fails is noted (its retry decides). */
static int scan_ready(rs_reconcile_t *rc, apr_pool_t *p, rs_db_t *store, rs_journal_t *journal,
                      apr_time_t *jstart, apr_time_t *start)
{
    apr_status_t rv;

    rc->root_lost = !rs_massdel_check(rc->massdel, store, p);
    if (rc->root_lost) {
        rs_massdel_unlisted(rc->massdel);
        rc->h->mode(rc->h->baton);
        return 0;
    }
    if (rc->retry->resync && (rv = rc->h->resync(rc->h->baton, p)) != APR_SUCCESS) {
        rc->h->store_note(rc->h->baton, rv, "reading the journal");
        return 0;
    }
    /* The mark in a transaction that begins with the set's fence: a node
     * that no longer writes the set moves nothing. */
    if ((rv = rs_journal_start(journal, rc->name, jstart)) == APR_SUCCESS && *jstart
        && (rv = rs_db_begin_set(store, rc->name)) == APR_SUCCESS) {
        rv = rs_db_end(store, rs_journal_mark(journal, rc->name, start));
    }
    if (rv != APR_SUCCESS) {
        rc->h->store_note(rc->h->baton, rv, "marking the journal");
        return 0;
    }
    if (!*jstart) {
        *start = wall(rc);
    }
    return 1;
}

/* The scan's verdict: 1 when it succeeded, 0 when it was held, found
 * the root gone or failed (each dealt with). */
static int scan_verdict(rs_reconcile_t *rc, apr_pool_t *p, rs_db_t *store, apr_status_t rv,
                        const rs_scan_stats_t *stats)
{
    if (rs_massdel_scanned(rc->massdel, rv, stats->deleted, mono(rc))) {
        return 0;
    }
    if (rv != APR_SUCCESS && !rs_massdel_check(rc->massdel, store, p)) {
        rc->root_lost = 1; /* gone during the scan: nothing was changed */
        rc->h->mode(rc->h->baton);
        return 0;
    }
    if (rv != APR_SUCCESS) {
        rs_log_emit(rc->log, RS_LOG_DEBUG, rv,
                    "set %s: scan failed; keeping the previous "
                    "Resource List",
                    rc->name);
        rc->h->store_failed(rc->h->baton, p, rv, "a full scan");
        return 0;
    }
    return 1;
}

void rs_reconcile_scan(rs_reconcile_t *rc, apr_pool_t *p, rs_db_t *store, rs_journal_t *journal,
                       int first)
{
    const rs_reconcile_hooks_t *h = rc->h;
    rs_scan_opts_t so;
    rs_scan_stats_t stats;
    rs_recorder_t *r;
    rs_linkscan_t *ls;
    apr_time_t jstart = 0, start = 0, end, t0 = mono(rc);
    apr_status_t rv;
    apr_int64_t linked = 0; /* rows given links by the pass */
    int was_degraded, ok;

    if (!scan_ready(rc, p, store, journal, &jstart, &start)) {
        return;
    }
    was_degraded = h->watch_begin(h->baton);
    scan_opts(rc, p, journal, &so, &r, &ls, jstart != 0);
    so.recheck = h->above_begin(h->baton, p);
    h->progress_begin(h->baton);
    rv = rs_scan_set(store, &so, p, &stats);
    h->progress_end(h->baton);
    end = wall(rc);
    ok = scan_verdict(rc, p, store, rv, &stats);
    /* A baseline's links: one pass from what its walk collected. */
    rv = ok && ls ? rs_linkscan_run(ls, store, stats.fresh, &linked) : APR_SUCCESS;
    rs_linkscan_destroy(ls);
    if (!ok) {
        return;
    }
    if (rv != APR_SUCCESS) {
        h->store_failed(h->baton, p, rv, "resolving the links of its first scan");
        return;
    }
    h->above_end(h->baton, p); /* every file was decided under that state */
    full_scan_report(rc, &stats, was_degraded, first, t0);
    if (!jstart && (rv = rs_db_begin_set(store, rc->name)) == APR_SUCCESS) {
        rv = rs_db_end(store, rs_journal_begin_set(journal, rc->name, start));
    }
    if (!jstart && rv != APR_SUCCESS) {
        /* The journal starts where this scan's Resource List does. */
        h->store_failed(h->baton, p, rv, "starting the journal");
        return;
    }
    if ((rv = rs_reconcile_publish(rc, p, journal, r, 1)) != APR_SUCCESS) {
        h->store_failed(h->baton, p, rv, "updating the Change Lists");
        return;
    }
    rs_storeretry_ok(rc->retry, rc->episode);
    h->mode(h->baton);
    h->snapshot(h->baton, p, start, end,
                !jstart || stats.written || stats.removed
                    || (first && jstart && rs_reconcile_list_behind(rc, p, store, journal)));
}

void rs_reconcile_batch(rs_reconcile_t *rc, apr_pool_t *p, rs_db_t *store, rs_journal_t *journal,
                        const rs_scan_target_t *t, int n)
{
    rs_scan_opts_t so;
    rs_scan_stats_t stats;
    rs_recorder_t *r;
    rs_linkscan_t *ls; /* none: a batch is journaled */
    apr_status_t rv;
    int degraded = 0;

    scan_opts(rc, p, journal, &so, &r, &ls, 1);
    so.progress = NULL; /* scan-files counts the last full scan */
    rv = rs_scan_targets(store, &so, p, t, n, &stats);
    if (rs_massdel_scanned(rc->massdel, rv, stats.deleted, mono(rc))) {
        return;
    }
    if (rv != APR_SUCCESS) {
        /* The root is gone, or the store failed: the full scan knows how
         * to say which, and records what it can.  The batch's records
         * were rolled back: never published. */
        rc->retry->resync = 1;
        rs_reconcile_scan(rc, p, store, journal, 0);
        return;
    }
    if (stats.written || stats.removed) {
        rc->h->changed(rc->h->baton, mono(rc));
    }
    if (rs_recorder_appended(r)
        && (rv = rs_reconcile_publish(rc, p, journal, r, 0)) != APR_SUCCESS) {
        rc->h->store_failed(rc->h->baton, p, rv, "updating the Change Lists");
    }
    rc->h->watches(rc->h->baton, &degraded);
    if (degraded) {
        rc->h->mode(rc->h->baton);
    }
}
