/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_followsnap.c - Resource Lists on a follower: the
 * writer's generations copied from the store and published as this
 * node's (engine: rs_followsnap, rs_blob).
 *
 * Lifecycle: the driver's thread only.  A set another node writes is
 * "elsewhere" (mod_resourcesync_writer.c): its status entry's documents
 * were emptied, so children answer 503 until rs_followsnap_poll publishes
 * the writer's current generation; from then on each newer one replaces
 * it as soon as the poll sees it (at once after the writer's
 * notification, rs_follow_look).
 * When this node takes the set over, the generation it follows is its
 * own current one: its next snapshot keeps that generation's parts, and
 * its number comes from the store (rs_generation).
 *
 * State per set and kind (follow_t, in the driver's pool, found by the
 * kind and the set's name; the Resource Dumps' too): when to look next, a generation the store holds no files of
 * (not asked again until the number changes), and whether copying fails
 * (logged once per episode).
 */
#include <apr_hash.h>
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_follow.h"
#include "rs_followsnap.h"
#include "rs_storecfg.h"

#define RS_FOLLOWSNAP_EVERY apr_time_from_msec(250)
#define RS_FOLLOWSNAP_RETRY apr_time_from_sec(2)

typedef rs_follow_state_t follow_t;

static apr_hash_t *follows;

follow_t *rs_followsnap_state(wset_t *ws, const char *kind)
{
    const char *key = apr_pstrcat(ws->d->iter, kind, ":", ws->set->name, NULL);
    follow_t *f;

    if (!follows) {
        follows = apr_hash_make(ws->d->pool);
    }
    if (!(f = apr_hash_get(follows, key, APR_HASH_KEY_STRING))) {
        f = apr_pcalloc(ws->d->pool, sizeof(*f));
        apr_hash_set(follows, apr_pstrdup(ws->d->pool, key), APR_HASH_KEY_STRING, f);
    }
    return f;
}

/* A copy failed with rv: said once per episode, tried again later. */
static void copy_failed(wset_t *ws, follow_t *f, const char *what, apr_status_t rv,
                        apr_uint64_t gen, apr_uint64_t have, apr_time_t now)
{
    if (!f->failing) {
        rs_log_emit(ws->log, RS_LOG_ERR, rv,
                    "set %s: cannot copy the writer's %s %" APR_UINT64_T_FMT
                    " from the store; serving generation %" APR_UINT64_T_FMT
                    " meanwhile, trying again",
                    ws->set->name, what, gen, have);
    }
    f->failing = rv;
    f->next = now + RS_FOLLOWSNAP_RETRY;
}

int rs_followsnap_copied(wset_t *ws, follow_t *f, const char *what, apr_status_t rv,
                         apr_uint64_t gen, apr_uint64_t have, apr_time_t now)
{
    if (rv == APR_ENOENT) { /* a number without files: nothing to follow */
        f->none = gen;
        rs_log_emit(ws->log, RS_LOG_DEBUG, 0,
                    "set %s: the store holds no files of %s %" APR_UINT64_T_FMT, ws->set->name,
                    what, gen);
        return 0;
    }
    if (rv != APR_SUCCESS) {
        copy_failed(ws, f, what, rv, gen, have, now);
        return 0;
    }
    if (f->failing) {
        rs_log_emit(ws->log, RS_LOG_NOTICE, 0, "set %s: copying the writer's %ss works again",
                    ws->set->name, what);
        f->failing = APR_SUCCESS;
    }
    return 1;
}

void rs_followsnap_poll(wset_t *ws, apr_pool_t *p, apr_time_t now)
{
    const rs_set_t *set = ws->set;
    follow_t *f;
    rs_snapshot_info_t info;
    rs_blob_stats_t st;
    apr_uint64_t gen;
    apr_status_t rv;

    if (!ws->elsewhere || !rs_storecfg_is_pgsql(&rs_global.store)) {
        return;
    }
    f = rs_followsnap_state(ws, RS_FOLLOWSNAP_KIND);
    if (!rs_follow_look(ws, &f->seen, &f->next, RS_FOLLOWSNAP_EVERY, now)) {
        return;
    }
    gen = rs_snapsched_stored_gen(ws->d->store, p, set->name);
    if (gen <= ws->status.gen || gen == f->none) {
        return;
    }
    rv = rs_followsnap_copy(ws->d->store, p, set->name, set->snap_dir, gen, ws->status.gen, &info,
                            &st);
    if (!rs_followsnap_copied(ws, f, "Resource List", rv, gen, ws->status.gen, now)) {
        return;
    }
    rs_snapjob_publish(ws, &info, info.at);
    rs_log_emit(ws->log, RS_LOG_INFO, 0,
                "set %s: follows the writer's Resource List %" APR_UINT64_T_FMT
                " (%d files, %d linked, %" APR_OFF_T_FMT " bytes copied)",
                set->name, gen, st.files, st.refs, st.bytes);
    rs_snapjob_prune(ws, p, gen);
}
