/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_followdump.c - Resource Dumps on a follower: the
 * writer's dump generations copied from the store and published as this
 * node's (engine: rs_followdump, rs_blob).
 *
 * Lifecycle: the driver's thread only, like the Resource Lists'
 * (mod_resourcesync_followsnap.c, whose per-set state it shares under
 * its own kind).  A set another node writes had its entry's dump_gen
 * emptied (forget_documents), so children answer the dump 503 until
 * rs_followdump_poll publishes the writer's newest generation; from then
 * on each newer one replaces it as soon as the poll sees it.  Packages
 * the writer kept are linked from this node's own copies.  When this
 * node takes the set over, the generation it follows is its own current
 * one: its next build keeps that generation's packages by key
 * (rs_dumppkg_reuse), and its number comes from the store.
 */
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_follow.h"
#include "rs_followdump.h"
#include "rs_generation.h"
#include "rs_storecfg.h"

#define RS_FOLLOWDUMP_EVERY apr_time_from_msec(250)

void rs_followdump_poll(wset_t *ws, apr_pool_t *p, apr_time_t now)
{
    const rs_set_t *set = ws->set;
    rs_follow_state_t *f;
    rs_blob_stats_t st;
    apr_uint64_t gen;
    apr_status_t rv;

    if (!ws->elsewhere || !set->rdump || !rs_storecfg_is_pgsql(&rs_global.store)) {
        return;
    }
    f = rs_followsnap_state(ws, RS_FOLLOWDUMP_KIND);
    if (!rs_follow_look(ws, &f->seen, &f->next, RS_FOLLOWDUMP_EVERY, now)) {
        return;
    }
    /* Superseded generations go after their grace as on the writer (at
     * most once a second when looked), also while the writer publishes no new one. */
    if (rs_dumpsched_prune(&ws->dump, now, 0, ws->status.dump_gen)) {
        rs_generation_prune(p, set->rdump_dir, ws->status.dump_gen, set->dump_grace,
                            apr_time_now());
    }
    gen = rs_followdump_stored_gen(ws->d->store, p, set->name);
    if (gen <= ws->status.dump_gen || gen == f->none) {
        return;
    }
    rv = rs_followdump_copy(ws->d->store, p, set->name, set->rdump_dir, gen, &st);
    if (!rs_followsnap_copied(ws, f, "Resource Dump", rv, gen, ws->status.dump_gen, now)) {
        return;
    }
    ws->status.dump_gen = gen;
    rs_wset_status_put(ws);
    rs_log_emit(ws->log, RS_LOG_INFO, 0,
                "set %s: follows the writer's Resource Dump %" APR_UINT64_T_FMT
                " (%d files, %d linked, %" APR_OFF_T_FMT " bytes copied)",
                set->name, gen, st.files, st.refs, st.bytes);
    rs_generation_prune(p, set->rdump_dir, gen, set->dump_grace, apr_time_now());
}
