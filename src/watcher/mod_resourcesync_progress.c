/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_progress.c - the watcher's full scans' progress
 * (rs_progress.h): the expected total and the scan's start into the
 * status segment, the set's entry refreshed during the scan.  The
 * interval of the notice lines may be shortened for tests with the
 * environment variable RESOURCESYNC_PROGRESS_MS (milliseconds, read at
 * each scan's start).  One full scan at a time, on the driver's thread.
 */
#include <stdlib.h>
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_status.h"
#include "rs_progress.h"
#include "rs_time.h"

static rs_progress_t pg;

static void put_total(void *baton, apr_int64_t total, apr_int32_t src)
{
    rs_status_t *st = rs_status_get();
    (void)baton;
    if (st) {
        st->scan_total = total;
        st->scan_total_src = src;
    }
}

static void refresh(void *baton)
{
    rs_wset_status_put(baton);
}

void rs_progressw_begin(wset_t *ws)
{
    rs_status_t *st = rs_status_get();
    const char *env = getenv("RESOURCESYNC_PROGRESS_MS");
    rs_progress_scan_t scan = { 0 };

    scan.set = ws->set->name;
    scan.root = ws->set->dir;
    scan.db = ws->d->store;
    scan.pool = ws->d->pool;
    scan.log = ws->log;
    scan.interval = env && apr_atoi64(env) > 0 ? apr_time_from_msec(apr_atoi64(env)) : 0;
    scan.total = put_total;
    scan.refresh = refresh;
    scan.baton = ws;
    rs_progress_begin(&pg, &scan, rs_time_mono());
    if (st) {
        st->scan_start = apr_time_now();
    }
}

void rs_progressw_tick(wset_t *ws, apr_int64_t files)
{
    (void)ws;
    rs_progress_tick(&pg, files, rs_time_mono());
}

void rs_progressw_end(wset_t *ws)
{
    (void)ws;
    rs_progress_end(&pg);
}
