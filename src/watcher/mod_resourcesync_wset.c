/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_wset.c - see mod_resourcesync_wset.h */
#include "mod_resourcesync_wset.h"

void rs_wset_status_put(wset_t *ws)
{
    ws->status.watches = ws->w ? rs_watch_count(ws->w) : 0;
    rs_status_write_set(ws->set->slot, &ws->status);
}

void rs_wset_watch_failed(wset_t *ws, const char *dir, int err)
{
    ws->degraded = err;
    if (!ws->degraded_logged) {
        ws->degraded_logged = 1;
        rs_log_emit(ws->log, RS_LOG_WARN, err,
                    "set %s: cannot watch directory '%s' "
                    "(%ld watches; see fs.inotify.max_user_watches): changes are "
                    "found by rescans every %d s until the watches can be added",
                    ws->set->name, dir, rs_watch_count(ws->w), (int)apr_time_sec(rs_global.rescan));
    }
}
