/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_hashlane.c - the watcher's hashing lane (rs_hashlane.h):
 * one per watcher, started with the driver, with a source per configured
 * set (the scans' defer baton) and the status segment shown the file
 * being read and the files waiting.
 */
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_status.h"

static rs_hashlane_t *lane;
static rs_hashlane_src_t *srcs; /* per set, by slot */
static int nsrcs;

static void lane_log(void *baton, int level, apr_status_t rv, const char *msg)
{
    ap_log_error(APLOG_MARK, level, rv, (server_rec *)baton, RS_TAG "%s", msg);
}

static void lane_queue(void *baton, int nqueued)
{
    rs_status_t *st = rs_status_get();
    (void)baton;
    if (st) {
        st->hash_queue = nqueued;
    }
}

static volatile apr_int64_t *lane_hashing(void *baton, const char *set, const char *relpath,
                                          apr_int64_t size)
{
    rs_status_t *st = rs_status_get();
    (void)baton;
    rs_status_hashing_put(set, relpath, size);
    return st ? &st->hash_done : NULL;
}

apr_status_t rs_hashlanew_init(apr_pool_t *pool, server_rec *s)
{
    static const rs_hashlane_cb_t cb = { lane_queue, lane_hashing, NULL };
    rs_logger_t *log = apr_pcalloc(pool, sizeof(*log));
    apr_status_t rv;
    int i;

    log->fn = lane_log;
    log->baton = s;
    rv = rs_hashlane_create(&lane, pool, &cb, log);
    nsrcs = rs_global.sets->nelts;
    srcs = apr_pcalloc(pool, sizeof(*srcs) * (apr_size_t)(nsrcs + 1));
    for (i = 0; i < nsrcs; i++) {
        const rs_set_t *set = APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *);
        srcs[i].lane = lane;
        srcs[i].slot = set->slot;
        srcs[i].name = set->name;
        srcs[i].digests = set->digests;
        srcs[i].capture_dir = set->cdump ? set->capture_dir : NULL;
        srcs[i].owner = set;
    }
    return rv;
}

void *rs_hashlanew_baton(const rs_set_t *set)
{
    if (set->slot < 0 || set->slot >= nsrcs) {
        return NULL;
    }
    return &srcs[set->slot];
}

int rs_hashlanew_ready(apr_pool_t *p, apr_array_header_t **out)
{
    return rs_hashlane_ready(lane, p, out);
}

void rs_hashlanew_forget(const rs_hashlane_file_t *f)
{
    rs_hashlane_forget(lane, f->src, f->relpath);
}
