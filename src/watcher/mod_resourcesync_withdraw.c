/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_withdraw.c - the watcher's side of withdrawals
 * (rs_withdraw.h: rs-tool records a request, the watcher applies it).
 *
 * At most once a second (and in the first round after the startup
 * scans) the driver looks at the requests; it takes the oldest, one at a
 * time, when no job runs:
 *
 *   1. the path is reconciled now (a targeted scan), so a file removed,
 *      denied or excluded by the operator is journaled as deleted before
 *      anything is decided, without waiting for the settling delay;
 *   2. a path that is still listed is refused (the outcome says so, and a
 *      warning is logged): a withdrawn package would be built again with
 *      the file in it;
 *   3. a job (rs_jobs, with the job thread's connection) withdraws the
 *      Change Dump packages holding a version of the path
 *      (rs_cdump_withdraw: a new revision, the old files removed, so their
 *      URLs answer 404 at once) and rewrites changedump.xml without them,
 *      and removes the Resource Dump packages that hold the file from
 *      every generation on disk (rs_dumppkg_withdraw);
 *   4. on the driver's thread: the outcome is written and the request
 *      removed; the Change Dump job runs next (it builds the withdrawn
 *      lists' packages again under their new names, without the path's
 *      versions, collects their captures and lists the new packages, with
 *      a framework notification as for any new package), and a Resource
 *      Dump build is made due at once (its packages that held the file
 *      get other keys, so other names).
 *
 * A request whose set this watcher does not serve is answered with an
 * error; one that cannot be read, too.  A request made while no watcher
 * ran is applied at the next start (the tool then removed the packages
 * itself, under the set's lock).
 */
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_jobs.h"
#include "rs_cdump.h"
#include "rs_dump.h"
#include "rs_dumppkg.h"
#include "rs_time.h"
#include "rs_withdraw.h"
#include "rs_zip.h"

#define WITHDRAW_CHECK apr_time_from_sec(1)

typedef struct wdjob_t {
    wset_t *ws;
    const char *id, *rel, *dir, *name;
    const char *store_history;
    rs_cdump_opts_t o;    /* o.set NULL: the set has no Change Dump */
    const char *dumpset;  /* NULL: the set has no Resource Dump */
    int cdump_n, rdump_n; /* packages withdrawn */
} wdjob_t;

static int running;
static apr_time_t next_check;

/* Job (job thread): the packages holding the path go. */
static apr_status_t wd_run(void *baton, rs_db_t *store, apr_pool_t *p)
{
    wdjob_t *w = baton;
    apr_status_t rv = rs_jobs_same_store(store, p, w->store_history);

    if (rv != APR_SUCCESS) {
        return rv;
    }
    if (w->o.set) {
        rs_journal_t *j;
        apr_array_header_t *closed, *seqs, *ids;
        rs_changelist_t openl;
        apr_int64_t bytes;
        if ((rv = rs_journal_open(&j, store, p)) != APR_SUCCESS
            || (rv = rs_journal_lists(j, p, w->o.set, &closed, &openl)) != APR_SUCCESS
            || (rv = rs_journal_path_versions(j, p, w->o.set, w->dir, w->name, &seqs))
                   != APR_SUCCESS
            || (rv = rs_cdump_withdraw(&w->o, closed, seqs, p, &ids)) != APR_SUCCESS) {
            return rv;
        }
        w->cdump_n = ids->nelts;
        /* No removed package stays listed while they are built again. */
        if (ids->nelts
            && (rv = rs_cdump_index(&w->o, closed, openl.from, p, &bytes)) != APR_SUCCESS) {
            return rv;
        }
    }
    if (w->dumpset) {
        rv = rs_dumppkg_withdraw(
            p, w->dumpset, rs_zip_member_name(p, RS_DUMP_MEMBER_DIR, RS_DUMP_ENCODED_DIR, w->rel),
            &w->rdump_n);
    }
    return rv;
}

/* Driver's thread: the outcome. */
static void wd_finish(void *baton, apr_status_t rv, apr_pool_t *p)
{
    wdjob_t *w = baton;
    wset_t *ws = w->ws;
    const char *text;
    char buf[120];

    running = 0;
    next_check = 0;
    if (rv != APR_SUCCESS) {
        text = apr_psprintf(p,
                            "set %s: cannot withdraw '%s': %s (the request stays; it is "
                            "tried again)",
                            ws->set->name, w->rel, apr_strerror(rv, buf, sizeof(buf)));
        rs_log_emit(ws->log, RS_LOG_ERR, rv, "%s", text);
        next_check = rs_time_mono() + apr_time_from_sec(10);
        return;
    }
    text = apr_psprintf(p,
                        "set %s: withdrew '%s': %d Change Dump and %d Resource Dump "
                        "package(s) held it and are gone; %s",
                        ws->set->name, w->rel, w->cdump_n, w->rdump_n,
                        w->cdump_n + w->rdump_n ? "they are built again under new names "
                                                  "without it"
                                                : "nothing to build again");
    rs_log_emit(ws->log, RS_LOG_NOTICE, 0, "%s", text);
    if (w->cdump_n) {
        ws->cdump.next = 0; /* the Change Dump job runs next */
    }
    /* Its versions' captures go with the next collection. */
    ws->cdump.deleted = 1;
    ws->cdump.gc_next = 0;
    if (w->rdump_n) {
        ws->dump.due = 1;
        ws->dump.next = 0;
    }
    rs_withdraw_finish(p, rs_global.state_dir, w->id, 1, text);
}

/* Answer request r with an error (logged as a warning). */
static void refuse(rs_drive_t *d, const rs_withdraw_req_t *r, const char *text)
{
    rs_log_emit(&d->log, RS_LOG_WARN, 0, "withdrawal %s refused: %s", r->id, text);
    rs_withdraw_finish(d->iter, rs_global.state_dir, r->id, 0, text);
}

static wset_t *set_named(rs_drive_t *d, const char *name)
{
    int i;
    for (i = 0; name && i < d->nsets; i++) {
        if (!strcmp(d->ws[i].set->name, name)) {
            return &d->ws[i];
        }
    }
    return NULL;
}

/* Steps 1-3 for request r of set ws. */
static void start(rs_drive_t *d, wset_t *ws, const rs_withdraw_req_t *r)
{
    const rs_set_t *set = ws->set;
    const char *slash = strrchr(r->rel, '/');
    rs_scan_target_t t;
    apr_array_header_t *names = apr_array_make(d->iter, 1, sizeof(const char *));
    rs_item_t *row = NULL;
    apr_pool_t *jp;
    rs_job_t *job;
    wdjob_t *w;

    t.dir = slash ? apr_pstrndup(d->iter, r->rel, (apr_size_t)(slash - r->rel)) : "";
    APR_ARRAY_PUSH(names, const char *) = slash ? slash + 1 : r->rel;
    t.names = names;
    rs_reconcile_targets(d->iter, ws, &t, 1);
    if (ws->retry.err) {
        return; /* tried again once the store is back */
    }
    if (rs_inventory_get(d->store, d->iter, set->name, t.dir, APR_ARRAY_IDX(names, 0, const char *),
                         &row)
        != APR_SUCCESS) {
        return;
    }
    if (row && row->listed) {
        refuse(d, r,
               apr_psprintf(d->iter,
                            "set %s: '%s' is still served and listed: deny it "
                            "(an access file, a <Files> section), exclude it or remove "
                            "it first, then withdraw it",
                            set->name, r->rel));
        return;
    }
    job = rs_jobs_create(&jp);
    w = apr_pcalloc(jp, sizeof(*w));
    w->ws = ws;
    w->id = apr_pstrdup(jp, r->id);
    w->rel = apr_pstrdup(jp, r->rel);
    w->dir = apr_pstrdup(jp, t.dir);
    w->name = apr_pstrdup(jp, APR_ARRAY_IDX(names, 0, const char *));
    w->store_history = apr_pstrdup(jp, d->statecheck.history);
    if (set->cdump && *ws->status.history) {
        rs_cdumpjob_opts(ws, jp, &w->o);
    }
    w->dumpset = set->rdump ? set->rdump_dir : NULL;
    running = 1;
    rs_jobs_submit(job, wd_run, wd_finish, w, 1);
}

void rs_withdraw_poll(rs_drive_t *d, apr_time_t now)
{
    apr_array_header_t *reqs;
    const rs_withdraw_req_t *r;
    wset_t *ws;

    if (running || rs_jobs_busy() || now < next_check) {
        return;
    }
    next_check = now + WITHDRAW_CHECK;
    if (rs_withdraw_pending(d->iter, rs_global.state_dir, &reqs) != APR_SUCCESS || !reqs->nelts) {
        return;
    }
    r = &APR_ARRAY_IDX(reqs, 0, rs_withdraw_req_t);
    if (!r->set) {
        refuse(d, r, "not a withdrawal request (rs-tool withdraw SET PATH makes them)");
    }
    else if (!(ws = set_named(d, r->set))) {
        refuse(d, r, apr_psprintf(d->iter, "this server has no set '%s'", r->set));
    }
    else if (!ws->retry.err && !ws->status.unavailable) {
        start(d, ws, r);
    }
    apr_pool_clear(d->iter);
}
