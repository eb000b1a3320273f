/* SPDX-License-Identifier: Apache-2.0 */
/* rs_dumprun.c - the body of a set's Resource Dump job (rs_dumprun.h). */
#include <string.h>
#include <apr_strings.h>
#include "rs_dumprun.h"
#include "rs_followdump.h"
#include "rs_history.h"
#include "rs_jobthread.h"
#include "rs_statedir.h"
#include "rs_zip.h"

apr_status_t rs_dumprun_prepare(rs_dumprun_t *j, const rs_dumprun_in_t *in, rs_db_t *store,
                                apr_pool_t *jp)
{
    apr_status_t rv;

    memset(j, 0, sizeof(*j));
    j->history = apr_pstrdup(jp, in->store_history);
    j->url_history = apr_pstrdup(jp, in->url_history);
    j->grace = in->grace;
    j->o.set = in->set;
    j->o.root = in->root;
    j->o.url_base = in->root_url;
    j->o.capability_url = in->capability_url;
    j->o.dump_url = apr_pstrcat(jp, in->doc_base, "resourcedump.xml", NULL);
    j->o.pkg_url_prefix =
        apr_pstrcat(jp, in->doc_base, "resourcedump/", in->url_history, "-", NULL);
    j->o.dumpset = in->dir;
    j->o.hashes = in->hashes;
    j->o.links = in->links;
    j->o.max_entries = in->max_entries;
    j->o.max_bytes = in->max_bytes;
    j->o.at = in->at;
    j->o.completed = in->completed;
    /* Rows denied since the last scan are left out (rs_dump.h). */
    j->o.check = in->check;
    j->o.check_baton = in->check_baton;
    rv = rs_generation_begin(jp, in->dir, rs_followdump_stored_gen(store, jp, in->set), in->current,
                             &j->g);
    j->o.list_max = in->list_max;
    j->o.part_url_prefix =
        apr_psprintf(jp, "%s%" APR_UINT64_T_FMT "-", j->o.pkg_url_prefix, j->g.gen);
    return rv;
}

apr_status_t rs_dumprun_run(void *baton, rs_db_t *store, apr_pool_t *p)
{
    rs_dumprun_t *j = baton;
    /* As for snapshots: a store replaced meanwhile holds another
     * inventory; nothing of it is published. */
    apr_status_t rv = rs_jobthread_same_store(store, p, j->history);

    if (rv != APR_SUCCESS) {
        return rv;
    }
    rv = rs_dump_write(store, &j->o, j->g.tmp, p, &j->info);
    /* Written last: post_config serves a dump after a restart only when
     * its URLs belong to the history on disk (rs_status_create). */
    if (rv != APR_SUCCESS
        || (rv = rs_history_write(p, rs_statedir_dump_history(p, j->g.tmp), j->url_history))
               != APR_SUCCESS) {
        return rv;
    }
    /* Recorded here, on the job's thread and connection: with a store
     * several nodes share the generation's files go into the transaction
     * that records its number (rs_followdump.h), new packages of hundreds
     * of MB among them, and the driver never waits for their bytes.  Its
     * outcome is the finish's (published even when the record fails, as
     * before: the store's failure is the caller's to note). */
    j->recorded = rs_followdump_record(store, p, j->o.set, j->o.dumpset, j->g.tmp, j->g.gen, NULL);
    return APR_SUCCESS;
}

/* A build failed for want of space (the temporary directory is already
 * removed).  Said once per episode (rs_dumpsched_nospace, until a build
 * succeeds), then at debug level; the previous dump stays served, and the
 * build is tried again after the set's dump interval, without waiting for
 * a change, so it resumes by itself when space returns. */
static void nospace(const rs_dumprun_t *j, apr_status_t rv, rs_dumpsched_t *sched,
                    apr_interval_time_t interval, const rs_logger_t *plain, apr_time_t now)
{
    rs_log_emit(plain, rs_dumpsched_nospace(sched, now, interval), rv,
                "set %s: no space left to build the Resource Dump in %s%s%s; the "
                "previous dump stays served, building resumes when there is space",
                j->o.set, j->o.dumpset, j->info.failed ? ": " : "",
                j->info.failed ? j->info.failed : "");
}

/* The generation is in place (recorded by the run): announce, log,
 * prune. */
static void published(rs_dumprun_t *j, rs_dumpsched_t *sched, apr_interval_time_t interval,
                      const rs_dumprun_hooks_t *hooks, const rs_logger_t *log, apr_pool_t *p,
                      apr_time_t now, apr_time_t wall)
{
    const char *set = j->o.set;

    rs_dumpsched_built(sched, now, interval);
    hooks->published(hooks->baton, j->g.gen, j->recorded);
    if (rs_dumpsched_published(sched)) {
        rs_log_emit(log, RS_LOG_INFO, 0, "set %s: space again for the Resource Dump", set);
    }
    rs_log_emit(log, RS_LOG_INFO, 0,
                "set %s: published Resource Dump %" APR_UINT64_T_FMT " (%" APR_INT64_T_FMT
                " files, %d packages of which %d unchanged, %" APR_INT64_T_FMT " bytes%s%s)",
                set, j->g.gen, j->info.entries, j->info.packages, j->info.reused, j->info.bytes,
                j->info.withheld ? "; files denied since the "
                                   "last scan left out: "
                                 : "",
                j->info.withheld ? apr_itoa(p, j->info.withheld) : "");
    if (j->info.parts) {
        hooks->announce(hooks->baton, p, apr_pstrcat(p, j->o.part_url_prefix, "1.xml", NULL),
                        j->o.dump_url);
    }
    else {
        hooks->announce(hooks->baton, p, j->o.dump_url, NULL);
    }
    rs_generation_prune(p, j->o.dumpset, j->g.gen, j->grace, wall);
}

rs_dumprun_end_t rs_dumprun_finish(rs_dumprun_t *j, apr_status_t rv, rs_dumpsched_t *sched,
                                   apr_interval_time_t interval, const rs_dumprun_hooks_t *hooks,
                                   const rs_logger_t *log, const rs_logger_t *plain, apr_pool_t *p,
                                   apr_time_t now, apr_time_t wall)
{
    if (rv == APR_SUCCESS) {
        rv = rs_generation_publish(p, j->o.dumpset, &j->g);
    }
    if (rv != APR_SUCCESS && rs_dumpsched_no_space(rv)) {
        rs_generation_abandon(p, &j->g);
        nospace(j, rv, sched, interval, plain, now);
        return RS_DUMPRUN_NOSPACE;
    }
    if (rv != APR_SUCCESS) {
        rs_log_emit(log, rv == RS_ZIP_ECHANGED ? RS_LOG_DEBUG : RS_LOG_ERR, rv,
                    "set %s: cannot build Resource Dump %" APR_UINT64_T_FMT "%s%s; "
                    "trying again after the next snapshot",
                    j->o.set, j->g.gen, j->info.failed ? ": " : "",
                    j->info.failed ? j->info.failed : "");
        rs_generation_abandon(p, &j->g);
        rs_dumpsched_failed(sched); /* the next snapshot tries again */
        return RS_DUMPRUN_FAILED;
    }
    published(j, sched, interval, hooks, log, p, now, wall);
    return RS_DUMPRUN_PUBLISHED;
}
