/* SPDX-License-Identifier: Apache-2.0 */
/* rs_withdrawq.c - the watcher's side of withdrawals (see rs_withdrawq.h). */
#include <string.h>
#include <apr_strings.h>
#include "rs_withdrawq.h"
#include "rs_cdumpdoc.h"
#include "rs_dump.h"
#include "rs_dumppkg.h"
#include "rs_inventory.h"
#include "rs_journal.h"
#include "rs_withdraw.h"
#include "rs_zip.h"

/* One withdrawal job: its input (the job's pool) and what it did. */
typedef struct wdjob_t {
    rs_withdrawq_t *q;
    void *set;
    const rs_logger_t *log; /* the set's */
    const char *setname, *id, *rel, *dir, *name;
    const char *store_history;
    rs_cdump_opts_t o;    /* o.set NULL: the set has no Change Dump */
    const char *dumpset;  /* NULL: the set has no Resource Dump */
    int cdump_n, rdump_n; /* packages withdrawn */
} wdjob_t;

void rs_withdrawq_init(rs_withdrawq_t *q, const char *state_dir, rs_jobthread_t *jobs,
                       const rs_withdrawq_cb_t *cb)
{
    memset(q, 0, sizeof(*q));
    q->state_dir = state_dir;
    q->jobs = jobs;
    q->cb = cb;
}

/* Job thread: the Change Dump packages holding a version of the path go,
 * changedump.xml rewritten without them. */
static apr_status_t wd_cdump(wdjob_t *w, rs_db_t *store, apr_pool_t *p)
{
    rs_journal_t *j;
    apr_array_header_t *closed, *seqs, *ids;
    rs_changelist_t openl;
    rs_cdumpdoc_t ix;
    apr_status_t rv;

    if ((rv = rs_journal_open(&j, store, p)) != APR_SUCCESS
        || (rv = rs_journal_lists(j, p, w->o.set, &closed, &openl)) != APR_SUCCESS
        || (rv = rs_journal_path_versions(j, p, w->o.set, w->dir, w->name, &seqs)) != APR_SUCCESS
        || (rv = rs_cdump_withdraw(&w->o, closed, seqs, p, &ids)) != APR_SUCCESS) {
        return rv;
    }
    w->cdump_n = ids->nelts;
    /* No removed package stays listed while they are built again. */
    if (ids->nelts) {
        rv = rs_cdumpdoc_write(&w->o, closed, openl.from, p, &ix);
    }
    return rv;
}

/* Job (job thread): the packages holding the path go. */
static apr_status_t wd_run(void *baton, rs_db_t *store, apr_pool_t *p)
{
    wdjob_t *w = baton;
    apr_status_t rv = rs_jobthread_same_store(store, p, w->store_history);

    if (rv != APR_SUCCESS) {
        return rv;
    }
    if (w->o.set && (rv = wd_cdump(w, store, p)) != APR_SUCCESS) {
        return rv;
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
    const char *text;
    char buf[120];

    w->q->running = 0;
    w->q->next_check = 0;
    if (rv != APR_SUCCESS) {
        text = apr_psprintf(p,
                            "set %s: cannot withdraw '%s': %s (the request stays; it is "
                            "tried again)",
                            w->setname, w->rel, apr_strerror(rv, buf, sizeof(buf)));
        rs_log_emit(w->log, RS_LOG_ERR, rv, "%s", text);
        w->q->failed = 1;
        return;
    }
    text = apr_psprintf(p,
                        "set %s: withdrew '%s': %d Change Dump and %d Resource Dump "
                        "package(s) held it and are gone; %s",
                        w->setname, w->rel, w->cdump_n, w->rdump_n,
                        w->cdump_n + w->rdump_n ? "they are built again under new names "
                                                  "without it"
                                                : "nothing to build again");
    rs_log_emit(w->log, RS_LOG_NOTICE, 0, "%s", text);
    w->q->cb->withdrawn(w->q->cb->baton, w->set, w->cdump_n, w->rdump_n);
    rs_withdraw_finish(p, w->q->state_dir, w->id, 1, text);
}

/* Answer request r with an error (logged as a warning). */
static void refuse(rs_withdrawq_t *q, const rs_logger_t *log, apr_pool_t *p,
                   const rs_withdraw_req_t *r, const char *text)
{
    rs_log_emit(log, RS_LOG_WARN, 0, "withdrawal %s refused: %s", r->id, text);
    rs_withdraw_finish(p, q->state_dir, r->id, 0, text);
}

/* The job for request r of set s (path dir/name), submitted. */
static void submit(rs_withdrawq_t *q, const rs_withdrawq_set_t *s, const rs_withdraw_req_t *r,
                   const char *dir, const char *name, const char *history)
{
    apr_pool_t *jp;
    rs_job_t *job = rs_jobthread_create(&jp);
    wdjob_t *w = apr_pcalloc(jp, sizeof(*w));

    w->q = q;
    w->set = s->set;
    w->log = s->log;
    w->setname = apr_pstrdup(jp, r->set);
    w->id = apr_pstrdup(jp, r->id);
    w->rel = apr_pstrdup(jp, r->rel);
    w->dir = apr_pstrdup(jp, dir);
    w->name = apr_pstrdup(jp, name);
    w->store_history = apr_pstrdup(jp, history);
    q->cb->prepare(q->cb->baton, s->set, jp, &w->o, &w->dumpset);
    q->running = 1;
    rs_jobthread_submit(q->jobs, job, wd_run, wd_finish, w, 1);
}

/* Steps 1-3 for request r of set s. */
static void start(rs_withdrawq_t *q, const rs_withdrawq_set_t *s, const rs_withdraw_req_t *r,
                  rs_db_t *store, const char *history, const rs_logger_t *log, apr_pool_t *p)
{
    const char *slash = strrchr(r->rel, '/');
    const char *dir = slash ? apr_pstrndup(p, r->rel, (apr_size_t)(slash - r->rel)) : "";
    const char *name = slash ? slash + 1 : r->rel;
    rs_item_t *row = NULL;

    if (!q->cb->reconcile(q->cb->baton, s->set, p, dir, name)) {
        return; /* tried again once the store is back */
    }
    if (rs_inventory_get(store, p, r->set, dir, name, &row) != APR_SUCCESS) {
        return;
    }
    if (row && row->listed) {
        refuse(q, log, p, r,
               apr_psprintf(p,
                            "set %s: '%s' is still served and listed: deny it "
                            "(an access file, a <Files> section), exclude it or remove "
                            "it first, then withdraw it",
                            r->set, r->rel));
        return;
    }
    submit(q, s, r, dir, name, history);
}

void rs_withdrawq_poll(rs_withdrawq_t *q, rs_db_t *store, const char *history,
                       const rs_logger_t *log, apr_pool_t *p, apr_time_t now)
{
    apr_array_header_t *reqs;
    const rs_withdraw_req_t *r;
    rs_withdrawq_set_t s;

    if (q->running || rs_jobthread_busy(q->jobs)) {
        return;
    }
    if (q->failed) {
        q->failed = 0;
        q->next_check = now + RS_WITHDRAWQ_RETRY;
    }
    if (now < q->next_check) {
        return;
    }
    q->next_check = now + RS_WITHDRAWQ_CHECK;
    if (rs_withdraw_pending(p, q->state_dir, &reqs) != APR_SUCCESS || !reqs->nelts) {
        return;
    }
    r = &APR_ARRAY_IDX(reqs, 0, rs_withdraw_req_t);
    memset(&s, 0, sizeof(s));
    if (r->set) {
        q->cb->find(q->cb->baton, r->set, &s);
    }
    if (!r->set) {
        refuse(q, log, p, r, "not a withdrawal request (rs-tool withdraw SET PATH makes them)");
    }
    else if (!s.set) {
        refuse(q, log, p, r, apr_psprintf(p, "this server has no set '%s'", r->set));
    }
    else if (s.ready) {
        start(q, &s, r, store, history, log, p);
    }
}
