/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_massdel.c - the mass-deletion guard in the watcher.
 *
 * The guard's decisions are rs_massdel's (see rs_massdel.h): whether a
 * set can be listed, the limit of a scan, held deletions and their
 * confirming scan, mount table changes.  This file gives it what needs
 * httpd: whether the set's URL-path maps to its root (rs_access_verify_
 * root, with the scan workers' first checker), the set's status entry
 * (published from the guard's fields), and the error log - lines of an
 * episode straight to it, repeating warnings through the driver's
 * once-only log.  Runs on the driver's thread.
 */
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_access.h"

/* The guard's hooks and loggers of one set (the watcher's pool). */
typedef struct massdel_glue_t {
    rs_massdel_hooks_t hooks;
    rs_logger_t episodes;
} massdel_glue_t;

/* rs_massdel_hooks_t.verify_root: why the URL-path does not map to the
 * root, without the "set <name>: " its message starts with. */
static const char *verify_root(void *baton, apr_pool_t *p)
{
    wset_t *ws = baton;
    const char *why = rs_access_verify_root(ws->acc[0], p);
    const char *tag = why ? apr_pstrcat(p, "set ", ws->set->name, ": ", NULL) : NULL;

    if (why && !strncmp(why, tag, strlen(tag))) {
        why += strlen(tag);
    }
    return why;
}

/* rs_massdel_hooks_t.publish: the guard's fields into the status entry. */
static void publish(void *baton, const rs_massdel_t *md)
{
    wset_t *ws = baton;

    ws->status.unavailable = md->unavailable;
    apr_cpystrn(ws->status.why, md->why, sizeof(ws->status.why));
    ws->status.held = md->held;
    rs_wset_status_put(ws);
}

/* Every line to the error log, as it comes (baton: the server_rec). */
static void episode_log(void *baton, int level, apr_status_t rv, const char *msg)
{
    ap_log_error(APLOG_MARK, level, rv, (server_rec *)baton, RS_TAG "%s", msg);
}

void rs_massdelw_init(wset_t *ws, apr_pool_t *p)
{
    massdel_glue_t *g = apr_pcalloc(ws->d->pool, sizeof(*g));

    g->episodes.fn = episode_log;
    g->episodes.baton = ws->d->s;
    g->hooks.verify_root = verify_root;
    g->hooks.publish = publish;
    g->hooks.baton = ws;
    g->hooks.log = ws->log;
    g->hooks.episodes = &g->episodes;
    rs_massdel_init(&ws->massdel, &g->hooks, ws->set->name, ws->set->dir, rs_global.massdel_share,
                    rs_global.massdel_min);
    rs_massdel_adopt(&ws->massdel, ws->d->store, p, ws->status.unavailable, ws->status.why,
                     ws->status.held);
}

void rs_massdelw_mounts_open(rs_drive_t *d)
{
    rs_logger_t log = { episode_log, d->s };

    rs_massdel_mounts_open(&d->mounts, d->pool, "/proc/self/mountinfo", &log);
}

void rs_massdelw_mounts_changed(rs_drive_t *d)
{
    apr_array_header_t *mps = rs_massdel_mounts_read(d->mounts, d->iter, &d->log);
    int i;

    if (!mps) {
        return;
    }
    for (i = 0; i < d->nsets; i++) {
        rs_massdel_mounts_changed(&d->ws[i].massdel, mps);
    }
    apr_pool_clear(d->iter);
}
