/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_followcdump.c - Change Dumps on the nodes of a shared
 * store (engine: rs_followcdump, rs_blob).
 *
 * Writer: the Change Dump job stores the set's directory after a run
 * that changed it (mod_resourcesync_cdumpjob.c, on the job thread with
 * the job's connection, so a large package never holds the event loop);
 * rs_followcdumpw_stored then says how that went, on the driver's
 * thread.  A failed store (or a failed job, which may have removed
 * files) leaves the set "pending": the next job stores the directory
 * even if it changes nothing.
 *
 * Follower: a set another node writes is "elsewhere"
 * (mod_resourcesync_writer.c): its status entry's cdump_ready was
 * cleared with its documents, so children answer changedump.xml 503.
 * rs_followcdumpw_poll reads the stored generation number when
 * rs_follow_look says (at once after the writer's commit told this node,
 * else every few seconds); a generation this node has not replayed (or
 * none yet since the entry was emptied) is replayed into the directory
 * (rs_followcdump_copy) and then cdump_ready is set.  A replay that
 * races the writer's next store finds the chunks or the generation gone
 * and is tried again RS_FOLLOWCDUMP_EVERY later, silently; another failure is
 * logged once per episode and tried again after RS_FOLLOWCDUMP_RETRY.
 *
 * Takeover (rs_followcdumpw_take, from rs_writer_take): the node replays
 * the store's generation once more (the previous writer may have stored
 * one less than a poll before it stopped), so that its Change Dump job,
 * which looks at what is on disk, goes on from the writer's packages;
 * and it marks the set pending, so that its first job stores the
 * directory (the other nodes then follow this node's).
 *
 * State per set: ws->cdfollow, the driver's thread only.
 */
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_follow.h"
#include "rs_cdump.h"
#include "rs_followcdump.h"
#include "rs_storecfg.h"

#define RS_FOLLOWCDUMP_EVERY apr_time_from_msec(250)
#define RS_FOLLOWCDUMP_RETRY apr_time_from_sec(2)

int rs_followcdumpw_followed(const wset_t *ws)
{
    return ws->set->cdump && rs_storecfg_is_pgsql(&rs_global.store);
}

int rs_followcdumpw_pending(const wset_t *ws)
{
    return rs_followcdumpw_followed(ws) && ws->cdfollow.pending;
}

void rs_followcdumpw_stored(wset_t *ws, int tried, apr_status_t rv, apr_uint64_t gen,
                            const rs_blob_stats_t *st)
{
    struct rs_cdfollow *f;

    if (!rs_followcdumpw_followed(ws)) {
        return;
    }
    f = &ws->cdfollow;
    if (!tried) {
        f->pending = 1; /* the job failed: its directory may differ from the store's */
        return;
    }
    f->pending = rv != APR_SUCCESS;
    if (rv == RS_LEASE_LOST) {
        rs_storefail_note(ws, rv, "storing the Change Dump"); /* elsewhere now */
        return;
    }
    if (rv != APR_SUCCESS) {
        if (!f->store_err) {
            rs_log_emit(ws->log, RS_LOG_ERR, rv,
                        "set %s: cannot store its Change Dump for the other nodes; they serve "
                        "the one before until its next job stores it",
                        ws->set->name);
        }
        f->store_err = rv;
        return;
    }
    if (f->store_err) {
        rs_log_emit(ws->log, RS_LOG_NOTICE, 0, "set %s: storing its Change Dump works again",
                    ws->set->name);
        f->store_err = APR_SUCCESS;
    }
    f->have = gen;
    rs_log_emit(ws->log, RS_LOG_DEBUG, 0,
                "set %s: stored its Change Dump as generation %" APR_UINT64_T_FMT
                " (%d files, %d kept, %" APR_OFF_T_FMT " bytes sent)",
                ws->set->name, gen, st->files, st->refs, st->bytes);
}

/* Replay the store's generation into the set's directory when this node
 * has not: APR_SUCCESS (also when the store holds none: *gen 0),
 * APR_EINCOMPLETE or APR_ENOENT when the writer replaced it meanwhile,
 * another failure's cause. */
static apr_status_t replay(wset_t *ws, struct rs_cdfollow *f, apr_pool_t *p, apr_uint64_t *gen)
{
    rs_blob_stats_t st;
    int removed = 0;
    apr_status_t rv = rs_followcdump_gen(ws->d->store, p, ws->set->name, gen);

    if (rv != APR_SUCCESS || !*gen || (*gen == f->have && ws->status.cdump_ready)) {
        return rv;
    }
    rv = rs_followcdump_copy(ws->d->store, p, ws->set->name, ws->set->cdump_dir, *gen, &st,
                             &removed);
    if (rv == APR_SUCCESS) {
        f->have = *gen;
        /* The packages' disk use, as the writer's status says it. */
        ws->status.cdump_bytes = rs_cdump_bytes(ws->set->cdump_dir, p);
        rs_wset_status_put(ws);
        rs_log_emit(ws->log, RS_LOG_INFO, 0,
                    "set %s: follows the writer's Change Dump %" APR_UINT64_T_FMT
                    " (%d files, %d unchanged, %" APR_OFF_T_FMT " bytes copied, %d removed)",
                    ws->set->name, *gen, st.files, st.refs, st.bytes, removed);
    }
    return rv;
}

void rs_followcdumpw_poll(wset_t *ws, apr_pool_t *p, apr_time_t now)
{
    struct rs_cdfollow *f;
    apr_uint64_t gen = 0;
    apr_status_t rv;

    if (!ws->elsewhere || !rs_followcdumpw_followed(ws)) {
        return;
    }
    f = &ws->cdfollow;
    if (!rs_follow_look(ws, &f->seen, &f->next, RS_FOLLOWCDUMP_EVERY, now)) {
        return;
    }
    rv = replay(ws, f, p, &gen);
    if (rv == APR_EINCOMPLETE || rv == APR_ENOENT) {
        f->next = now + RS_FOLLOWCDUMP_EVERY; /* replaced by the writer while read: soon again */
        return;
    }
    if (rv != APR_SUCCESS) {
        if (!f->copy_err) {
            rs_log_emit(ws->log, RS_LOG_ERR, rv,
                        "set %s: cannot copy the writer's Change Dump from the store; trying "
                        "again",
                        ws->set->name);
        }
        f->copy_err = rv;
        f->next = now + RS_FOLLOWCDUMP_RETRY;
        return;
    }
    if (f->copy_err) {
        rs_log_emit(ws->log, RS_LOG_NOTICE, 0,
                    "set %s: copying the writer's Change Dump works again", ws->set->name);
        f->copy_err = APR_SUCCESS;
    }
    if (gen && !ws->status.cdump_ready) {
        ws->status.cdump_ready = 1;
        rs_wset_status_put(ws);
    }
}

void rs_followcdumpw_take(wset_t *ws, apr_pool_t *p)
{
    struct rs_cdfollow *f;
    apr_uint64_t gen = 0;
    apr_status_t rv;

    if (!rs_followcdumpw_followed(ws)) {
        return;
    }
    f = &ws->cdfollow;
    f->pending = 1;
    f->have = 0; /* (what is on disk is looked at again) */
    if ((rv = replay(ws, f, p, &gen)) != APR_SUCCESS) {
        rs_log_emit(ws->log, RS_LOG_WARN, rv,
                    "set %s: cannot copy the previous writer's Change Dump from the store; "
                    "its Change Dump job goes on from what this node has",
                    ws->set->name);
    }
    else if (gen && !ws->status.cdump_ready) {
        ws->status.cdump_ready = 1; /* (a job that changes nothing does not set it) */
        rs_wset_status_put(ws);
    }
}
