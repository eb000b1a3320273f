/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_history.c - the watcher keeps one history per state store.
 *
 * The decisions are the engine's (rs_statecheck.h: whether the store
 * continues the published documents, starting a new history, noticing a
 * store deleted or replaced under the running watcher).  What is left here
 * needs httpd: the status segment's entries and ring, the snapshot jobs'
 * generation floor, the notifications' outbox, and the error log (the
 * messages go straight to it, not through the once-only log).
 */
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_status.h"
#include "rs_statecheck.h"
#include "rs_lease.h"
#include "rs_time.h"

/* The engine's messages, as they are. */
static void history_log(void *baton, int level, apr_status_t rv, const char *msg)
{
    ap_log_error(APLOG_MARK, level, rv, (server_rec *)baton, RS_TAG "%s", msg);
}

/* Every set's status entry belongs to history: an entry of another one
 * (seeded from disk by post_config, or left by an earlier watcher) is
 * emptied, so that children serve nothing of it. */
static void status_adopt(void *baton, const char *history)
{
    rs_drive_t *d = baton;
    int i;

    for (i = 0; i < d->nsets; i++) {
        const rs_set_t *set = APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *);
        rs_status_set_t e;
        rs_status_read_set(set->slot, &e);
        if (strcmp(e.history, history)) {
            char name[sizeof(e.name)];
            memcpy(name, e.name, sizeof(name));
            memset(&e, 0, sizeof(e));
            memcpy(e.name, name, sizeof(name));
            apr_cpystrn(e.history, history, sizeof(e.history));
            rs_status_write_set(set->slot, &e);
        }
    }
}

static apr_status_t forget_notifications(void *baton)
{
    return rs_notifyw_reset(baton);
}

static void gen_floor(void *baton, int i, apr_uint64_t gen)
{
    rs_drive_t *d = baton;
    rs_snapjob_gen_floor(d->store, d->iter, APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *), gen);
}

static void ring_emptied(void *baton)
{
    (void)baton;
    rs_status_ring_reset();
}

/* A shared (PostgreSQL) store whose history this node's documents do
 * not continue: a new history would reset the journal every node shares.
 * Only a node where no other node holds a set's lease may start one; another refuses to start its watcher and says why, its
 * children serving what its state directory holds.  (The store's own
 * judgement, rs_statecheck_judge, is the one rs_statecheck_start makes.) */
static apr_status_t shared_guard(rs_drive_t *d, const rs_statecheck_where_t *w)
{
    rs_statecheck_verdict_t v;
    apr_status_t rv;
    int i, held = 1;

    if (!rs_storecfg_is_pgsql(&rs_global.store)) {
        return APR_SUCCESS;
    }
    if ((rv = rs_statecheck_judge(w, d->iter, d->store, d->journal, &v)) != APR_SUCCESS || !v.why
        || !v.stored) {
        return rv; /* (a failure is rs_statecheck_start's to report) */
    }
    for (i = 0; i < d->nsets && held; i++) {
        rs_lease_info_t in;
        if ((rv = rs_lease_peek(d->store, d->iter, w->sets[i], &in)) != APR_SUCCESS) {
            return rv;
        }
        /* (This node's earlier watcher, killed, is no other node.) */
        held = !in.live || !strcmp(in.node, rs_global.node_name);
    }
    if (held) {
        return APR_SUCCESS;
    }
    ap_log_error(APLOG_MARK, APLOG_EMERG, 0, d->s,
                 RS_TAG "watcher: the %s holds history %s, which another node writes, but this "
                        "node's documents do not continue it (%s); not starting a new history "
                        "for every node: make this node's configuration (ResourceSyncBaseURL, "
                        "the sets) the other nodes', or empty its ResourceSyncStateDir '%s' of "
                        "documents, and restart httpd",
                 rs_global.store_shown, v.stored, v.why, rs_global.state_dir);
    return APR_EGENERAL;
}

apr_status_t rs_drive_history_start(rs_drive_t *d)
{
    rs_statecheck_hooks_t hooks = { forget_notifications, gen_floor, status_adopt, ring_emptied,
                                    d };
    rs_logger_t log = { history_log, d->s };
    rs_statecheck_where_t w;
    const char **names = apr_palloc(d->iter, sizeof(*names) * (apr_size_t)(d->nsets + 1));
    const char **bases = apr_palloc(d->iter, sizeof(*bases) * (apr_size_t)(d->nsets + 1));
    apr_status_t rv;
    int i;

    for (i = 0; i < d->nsets; i++) {
        names[i] = APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *)->name;
        bases[i] = APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *)->base;
    }
    w.statedir = rs_global.state_dir;
    w.store_shown = rs_global.store_shown;
    w.sets = names;
    w.bases = bases;
    w.nsets = d->nsets;
    w.hooks = &hooks;
    w.log = &log;
    if ((rv = shared_guard(d, &w)) != APR_SUCCESS) {
        apr_pool_clear(d->iter);
        return rv;
    }
    rv = rs_statecheck_start(&d->statecheck, &w, d->iter, d->store, d->journal, rs_time_mono());
    apr_pool_clear(d->iter);
    return rv;
}

int rs_drive_history_lost(rs_drive_t *d, apr_time_t now)
{
    rs_logger_t log = { history_log, d->s };
    int lost =
        rs_statecheck_lost(&d->statecheck, rs_global.state_dir, d->iter, d->store, &log, now);
    apr_pool_clear(d->iter);
    return lost;
}
