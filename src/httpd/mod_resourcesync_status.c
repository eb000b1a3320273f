/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_status.c - the shared-memory status segment.
 *
 * Lifecycle: one anonymous segment per server generation, created in
 * post_config (real pass) from pconf, so the watcher and every child
 * inherit it through fork; it disappears with pconf at the next restart,
 * when a new one is made and the new watcher fills it again.  Before that,
 * each set's entry is seeded with what the state directory holds (the
 * newest complete snapshot of its history, ...), read by a short-lived
 * process of the run user (mod_resourcesync_seed.c), so children keep
 * serving the previous Resource List across restarts.
 *
 * Layout (rs_status_t, versioned by magic + layout): watcher pid, state,
 * heartbeat, scan progress, then one rs_status_set_t per set, in the order
 * of rs_global.sets.  Per-set entries are copied under a global mutex
 * (registered with ap_mutex_register so the Mutex directive applies); the
 * scalar header fields are single aligned words written only by the watcher
 * and read without the lock.  Lock errors (possible while a graceful
 * restart tears the mutex down) are tolerated: the copy is then done
 * without it, and a torn read only affects one response.
 */
#include <stdlib.h>
#include <string.h>
#include <apr_general.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include <ap_mpm.h>
#include <util_mutex.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_seed.h"
#include "mod_resourcesync_status.h"
#include "rs_ring.h"

#define RS_STATUS_MAGIC  0x52535331u /* "RSS1" */
#define RS_STATUS_LAYOUT 7
#define RS_MUTEX_TYPE    "resourcesync-status"

static rs_status_t *status;
static rs_ring_t *ring;

int rs_status_pre(apr_pool_t *pconf)
{
    return ap_mutex_register(pconf, RS_MUTEX_TYPE, NULL, APR_LOCK_DEFAULT, 0);
}

rs_status_t *rs_status_get(void)
{
    return status;
}

static apr_status_t forget(void *data)
{
    (void)data;
    status = NULL;
    ring = NULL;
    return APR_SUCCESS;
}

/* The critical section around every copy in or out of the segment.
 * segment_lock() returns whether the mutex is held; a lock error (the
 * mutex torn down by a graceful restart while this process still runs, or
 * no mutex yet) is tolerated: the copy is then made without it, and at
 * worst one response sees a torn entry.  Pass its result to
 * segment_unlock(). */
static int segment_lock(void)
{
    return rs_global.mutex && apr_global_mutex_lock(rs_global.mutex) == APR_SUCCESS;
}

static void segment_unlock(int locked)
{
    if (locked) {
        apr_global_mutex_unlock(rs_global.mutex);
    }
}

int rs_status_create(apr_pool_t *pconf, server_rec *s)
{
    apr_size_t n = (apr_size_t)(rs_global.sets->nelts ? rs_global.sets->nelts : 1);
    apr_size_t sets_size = sizeof(rs_status_t) + (n - 1) * sizeof(rs_status_set_t), size;
    /* The ring of recent journal records (ResourceSyncRecentChanges
     * slots, shared by every set) follows the per-set entries. */
    apr_uint32_t nslots = (apr_uint32_t)rs_global.recent;
    apr_status_t rv;
    int i;

    sets_size = APR_ALIGN_DEFAULT(sets_size);
    size = sets_size + rs_ring_size(nslots);
    rv = apr_shm_create(&rs_global.shm, size, NULL, pconf);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, rv, s,
                     RS_TAG "cannot create the shared "
                            "status segment (%" APR_SIZE_T_FMT " bytes)",
                     size);
        return !OK;
    }
    rv = ap_global_mutex_create(&rs_global.mutex, NULL, RS_MUTEX_TYPE, NULL, s, pconf, 0);
    if (rv != APR_SUCCESS) {
        return !OK; /* ap_global_mutex_create logged why */
    }
    status = apr_shm_baseaddr_get(rs_global.shm);
    memset(status, 0, size);
    status->magic = RS_STATUS_MAGIC;
    status->layout = RS_STATUS_LAYOUT;
    status->scan_set = -1;
    status->scan_total = -1;
    status->nsets = (apr_uint32_t)rs_global.sets->nelts;
    {
        /* The rate table's hash is salted per segment: a client cannot
         * choose addresses that share another client's slots. */
        apr_uint64_t seed = 0;
        apr_generate_random_bytes((unsigned char *)&seed, sizeof(seed));
        rs_hubgate_init(&status->hub, seed);
    }
    ring = rs_ring_init((char *)status + sets_size, nslots);
    for (i = 0; i < rs_global.sets->nelts; i++) {
        const rs_set_t *set = APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *);
        apr_cpystrn(status->sets[i].name, set->name, sizeof(status->sets[i].name));
    }
    /* What the state directory holds, read by the run user. */
    rs_seed_fill(pconf, s, status->sets, rs_global.sets->nelts);
    apr_pool_cleanup_register(pconf, NULL, forget, apr_pool_cleanup_null);
    return OK;
}

void rs_status_child_init(apr_pool_t *p, server_rec *s)
{
    if (rs_global.mutex) {
        apr_status_t rv = apr_global_mutex_child_init(
            &rs_global.mutex, apr_global_mutex_lockfile(rs_global.mutex), p);
        if (rv != APR_SUCCESS) {
            ap_log_error(APLOG_MARK, APLOG_ERR, rv, s,
                         RS_TAG "cannot attach to the "
                                "status mutex in this child");
        }
    }
}

void rs_status_read_set(int slot, rs_status_set_t *out)
{
    int locked;
    if (!status || slot < 0 || (apr_uint32_t)slot >= status->nsets) {
        memset(out, 0, sizeof(*out));
        return;
    }
    locked = segment_lock();
    *out = status->sets[slot];
    segment_unlock(locked);
}

void rs_status_write_set(int slot, const rs_status_set_t *in)
{
    int locked;
    if (!status || slot < 0 || (apr_uint32_t)slot >= status->nsets) {
        return;
    }
    locked = segment_lock();
    status->sets[slot] = *in;
    segment_unlock(locked);
}

void rs_status_publish(int slot, const apr_array_header_t *recs, const rs_status_set_t *in)
{
    int locked, i;
    if (!status || slot < 0 || (apr_uint32_t)slot >= status->nsets) {
        return;
    }
    locked = segment_lock();
    for (i = 0; recs && ring && i < recs->nelts; i++) {
        rs_ring_put(ring, slot, &APR_ARRAY_IDX(recs, i, rs_record_t));
    }
    status->sets[slot] = *in;
    segment_unlock(locked);
}

void rs_status_ring_reset(void)
{
    int locked;
    if (!ring) {
        return;
    }
    locked = segment_lock();
    ring = rs_ring_init(ring, (apr_uint32_t)rs_global.recent); /* as created */
    segment_unlock(locked);
}

void rs_status_ring_fill(const apr_array_header_t *recs, const int *slots)
{
    int locked, i;
    if (!ring) {
        return;
    }
    locked = segment_lock();
    for (i = 0; i < recs->nelts; i++) {
        rs_ring_put(ring, slots[i], &APR_ARRAY_IDX(recs, i, rs_record_t));
    }
    segment_unlock(locked);
}

int rs_status_ring_get(int slot, apr_int64_t from, apr_int64_t last, int max, apr_pool_t *p,
                       apr_array_header_t *out, apr_int64_t *next)
{
    int locked, n;
    if (!ring) {
        *next = from;
        return -1;
    }
    locked = segment_lock();
    n = rs_ring_get(ring, slot, from, last, max, p, out, next);
    segment_unlock(locked);
    return n;
}

int rs_status_ring_seek(int slot, apr_int64_t first, apr_int64_t last, apr_int64_t need,
                        apr_int64_t *seq, apr_int64_t *bytes)
{
    int locked, rc;
    if (!ring) {
        return -1;
    }
    locked = segment_lock();
    rc = rs_ring_seek(ring, slot, first, last, need, seq, bytes);
    segment_unlock(locked);
    return rc;
}

apr_int64_t rs_status_ring_head(void)
{
    apr_int64_t head;
    int locked;
    if (!ring) {
        return 0;
    }
    locked = segment_lock();
    head = rs_ring_head(ring);
    segment_unlock(locked);
    return head;
}

void rs_status_hashing_put(const char *set, const char *relpath, apr_int64_t size)
{
    int locked;

    if (!status) {
        return;
    }
    locked = segment_lock();
    if (set) {
        apr_snprintf(status->hash_path, sizeof(status->hash_path), "%s: %s", set, relpath);
    }
    else {
        status->hash_path[0] = '\0';
    }
    status->hash_size = size;
    status->hash_done = 0;
    segment_unlock(locked);
}

void rs_status_hashing_get(char *buf)
{
    int locked;

    buf[0] = '\0';
    if (!status) {
        return;
    }
    locked = segment_lock();
    memcpy(buf, status->hash_path, RS_STATUS_PATH_MAX);
    buf[RS_STATUS_PATH_MAX - 1] = '\0';
    segment_unlock(locked);
}

void rs_status_error_put(const char *msg)
{
    int locked;

    if (!status) {
        return;
    }
    locked = segment_lock();
    apr_cpystrn(status->last_err, msg, sizeof(status->last_err));
    status->last_err_time = apr_time_now();
    segment_unlock(locked);
}

void rs_status_error_get(char *buf, apr_time_t *when)
{
    int locked;

    buf[0] = '\0';
    *when = 0;
    if (!status) {
        return;
    }
    locked = segment_lock();
    memcpy(buf, status->last_err, RS_STATUS_ERR_MAX);
    buf[RS_STATUS_ERR_MAX - 1] = '\0';
    *when = status->last_err_time;
    segment_unlock(locked);
}

rs_hubgate_t *rs_status_hub_gate(void)
{
    return status ? &status->hub : NULL;
}

apr_int64_t rs_status_hub_rate(const char *client, apr_time_t now, apr_int64_t n,
                               apr_interval_time_t per)
{
    apr_int64_t wait;
    int locked;

    if (!status) {
        return 0;
    }
    locked = segment_lock();
    wait = rs_hubgate_rate(&status->hub, client, now, n, per);
    segment_unlock(locked);
    return wait;
}
