/* SPDX-License-Identifier: Apache-2.0 */
/* rs_cdumprun.c - the body of a set's Change Dump job (rs_cdumprun.h). */
#include <string.h>
#include <apr_strings.h>
#include "rs_capture.h"
#include "rs_cdumprun.h"
#include "rs_jobthread.h"
#include "rs_journal.h"
#include "rs_time.h"

void rs_cdumprun_opts(rs_cdump_opts_t *o, const rs_cdumprun_in_t *in, apr_pool_t *p)
{
    memset(o, 0, sizeof(*o));
    o->set = in->set;
    o->dir = in->dir;
    o->capture_dir = in->capture_dir;
    o->history = apr_pstrdup(p, in->history);
    o->url_base = in->root_url;
    o->capability_url = in->capability_url;
    o->pkg_url_prefix = apr_pstrcat(p, in->doc_base, "changedump/", in->history, "-", NULL);
    o->hashes = in->hashes;
    o->links = in->links;
    o->spec10 = in->spec10;
    o->list_max = in->list_max;
    o->index_url = apr_pstrcat(p, in->doc_base, "changedump.xml", NULL);
    o->part_url_prefix = apr_pstrcat(p, o->pkg_url_prefix, "part-", NULL);
    /* Versions denied since the last scan are withheld (rs_cdump.h). */
    o->root = in->root;
    o->check = in->check;
    o->check_baton = in->check_baton;
}

void rs_cdumprun_prepare(rs_cdumprun_t *c, const rs_cdumprun_in_t *in, const char *store_history,
                         rs_cdumpsched_t *sched, apr_time_t now, apr_int64_t open_id,
                         apr_interval_time_t period, apr_pool_t *jp)
{
    memset(c, 0, sizeof(*c));
    c->store_history = apr_pstrdup(jp, store_history);
    rs_cdumprun_opts(&c->o, in, jp);
    rs_cdumpsched_started(sched, now, open_id, period, &c->collect, &c->first);
}

/* Step 2: the missing packages. */
static apr_status_t build_missing(rs_cdumprun_t *c, rs_journal_t *j,
                                  const apr_array_header_t *closed, apr_pool_t *p)
{
    apr_pool_t *kp;
    apr_status_t rv = APR_SUCCESS;
    int i;

    apr_pool_create(&kp, p);
    c->built_ids = apr_array_make(p, 4, sizeof(apr_int64_t));
    for (i = 0; i < closed->nelts && rv == APR_SUCCESS; i++) {
        const rs_changelist_t *cl = &APR_ARRAY_IDX(closed, i, rs_changelist_t);
        rs_cdump_result_t res;
        apr_pool_clear(kp);
        if (rs_cdump_done(&c->o, cl->id, kp)) {
            continue;
        }
        rv = rs_cdump_package(j, &c->o, cl, kp, &res);
        if (rv == RS_CDUMP_EMISSING) {
            if (!c->skipped++) {
                c->skip_id = cl->id;
                c->skip_what = apr_pstrdup(p, res.missing);
            }
            rv = APR_SUCCESS;
        }
        else if (rv == APR_SUCCESS) {
            APR_ARRAY_PUSH(c->built_ids, apr_int64_t) = cl->id;
            c->built++;
            c->withheld += res.withheld;
        }
        c->recaptured += res.recaptured;
    }
    apr_pool_destroy(kp);
    return rv;
}

apr_status_t rs_cdumprun_run(void *baton, rs_db_t *store, apr_pool_t *p)
{
    rs_cdumprun_t *c = baton;
    rs_journal_t *j;
    apr_array_header_t *closed;
    rs_changelist_t openl;
    int pruned;
    apr_status_t rv;

    /* As for snapshots: a store replaced meanwhile is another journal. */
    if ((rv = rs_jobthread_same_store(store, p, c->store_history)) != APR_SUCCESS
        || (rv = rs_journal_open(&j, store, p)) != APR_SUCCESS
        || (rv = rs_journal_lists(j, p, c->o.set, &closed, &openl)) != APR_SUCCESS) {
        return rv;
    }
    pruned = rs_cdump_prune(&c->o, closed, p);
    if ((rv = build_missing(c, j, closed, p)) != APR_SUCCESS) {
        return rv;
    }
    if (pruned || c->first || c->collect) {
        apr_time_t t0 = rs_time_mono();
        rs_cdump_gc(j, &c->o, apr_time_now() - RS_CDUMPRUN_YOUNG, p, NULL, NULL);
        c->gc_took = rs_time_mono() - t0 + 1;
    }
    c->cap_bytes = rs_capture_bytes(c->o.capture_dir, p);
    if (!pruned && !c->first && !c->built && !c->skipped) {
        return APR_SUCCESS;
    }
    c->written = 1;
    rv = rs_cdumpdoc_write(&c->o, closed, openl.from, p, &c->ix);
    c->pkg_bytes = c->ix.bytes;
    return rv;
}

rs_cdumprun_end_t rs_cdumprun_finish(rs_cdumprun_t *c, apr_status_t rv, rs_cdumpsched_t *sched,
                                     const rs_logger_t *log, apr_pool_t *p, apr_time_t now)
{
    const char *name = c->o.set;
    char from[RS_TIME_BUFSIZE];

    if (c->recaptured) {
        rs_log_emit(log, RS_LOG_INFO, 0,
                    "set %s: %d lost Change Dump capture(s) taken again from the current "
                    "file, whose SHA-256 digest still matches the journal",
                    name, c->recaptured);
    }
    if (c->skipped) {
        /* Said once: the .skip marker keeps the list from being tried
         * again.  The coverage moved past the newest list without a
         * package (rs_cdumpdoc_write) when changedump.xml was written. */
        const char *moved = "";
        if (c->written && rv == APR_SUCCESS && c->ix.gap) {
            moved = apr_psprintf(p,
                                 "; the Change Dump now covers only the changes from %s on, "
                                 "after Change List %" APR_INT64_T_FMT,
                                 rs_time_format(from, c->ix.from), c->ix.gap);
        }
        rs_log_emit(log, RS_LOG_WARN, 0,
                    "set %s: no Change Dump package for %d Change "
                    "List(s), first %" APR_INT64_T_FMT ": the captured bytes of %s are gone%s",
                    name, c->skipped, c->skip_id, c->skip_what, moved);
    }
    if (rv != APR_SUCCESS && rs_dumpsched_no_space(rv)) {
        /* Once per episode, then at debug level; nothing partial was
         * published, changedump.xml still lists what is complete, and the
         * job runs again within RS_CDUMPSCHED_NOSPACE_RETRY, so it resumes
         * by itself. */
        rs_log_emit(log, rs_cdumpsched_nospace(sched, now), rv,
                    "set %s: no space left to build its Change Dump in %s; the packages "
                    "built stay served, building resumes when there is space",
                    name, c->o.dir);
        return RS_CDUMPRUN_FAILED;
    }
    if (rv != APR_SUCCESS) {
        rs_log_emit(log, RS_LOG_ERR, rv,
                    "set %s: cannot build its Change Dump; trying "
                    "again when the next Change List closes",
                    name);
        return RS_CDUMPRUN_FAILED;
    }
    if (rs_cdumpsched_ok(sched)) {
        rs_log_emit(log, RS_LOG_INFO, 0, "set %s: space again for the Change Dump", name);
    }
    if (c->gc_took) {
        /* The next collection after deletions, not before (see the top). */
        rs_cdumpsched_collected(sched, now, c->gc_took);
    }
    if (c->built) {
        rs_log_emit(log, RS_LOG_INFO, 0, "set %s: published %d Change Dump package(s)%s%s", name,
                    c->built,
                    c->withheld ? "; versions of paths no longer listed, "
                                  "written as deletions without bytes: "
                                : "",
                    c->withheld ? apr_itoa(p, c->withheld) : "");
    }
    if (!c->written) {
        return RS_CDUMPRUN_KEPT;
    }
    sched->written = 1;
    return RS_CDUMPRUN_WRITTEN;
}

void rs_cdumprun_announce(const rs_cdumprun_t *c, int first, rs_cdumprun_announce_fn *announce,
                          void *baton, apr_pool_t *p)
{
    apr_hash_t *told = apr_hash_make(p);
    int i, n;

    if (!c->ix.parts) {
        announce(baton, p, c->o.index_url, first ? "created" : "updated", NULL);
        return;
    }
    for (i = 0; i < c->ix.created->nelts; i++) {
        n = APR_ARRAY_IDX(c->ix.created, i, int);
        apr_hash_set(told, apr_pmemdup(p, &n, sizeof(n)), sizeof(n), "");
        announce(baton, p, apr_psprintf(p, "%s%d.xml", c->o.part_url_prefix, n), "created",
                 c->o.index_url);
    }
    for (i = 0; c->built_ids && i < c->built_ids->nelts; i++) {
        apr_int64_t id = APR_ARRAY_IDX(c->built_ids, i, apr_int64_t);
        n = rs_cdumpdoc_part_of(&c->ix, id);
        /* A package older than the coverage (before a hole) is in no part. */
        if (id < c->ix.first_id || apr_hash_get(told, &n, sizeof(n))) {
            continue;
        }
        apr_hash_set(told, apr_pmemdup(p, &n, sizeof(n)), sizeof(n), "");
        announce(baton, p, apr_psprintf(p, "%s%d.xml", c->o.part_url_prefix, n), "updated",
                 c->o.index_url);
    }
}
