/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_statusmodel.c - what the status page shows, built once
 * per request as lists of (key, value), then rendered as HTML, as
 * mod_status-style "Key: value" lines or as JSON
 * (mod_resourcesync_statusfmt.c).
 *
 * Sources, all read without the store: the status segment (header words,
 * each set's entry copied under the mutex, the last error), the sizes of
 * the store's files, /proc/sys/fs/inotify/max_user_watches, the hub's
 * spool and intake summary, and the delivery thread's status file.  A
 * value is NULL when there is nothing to show ("-" in text, null in
 * JSON); numbers are plain decimal so every format can keep them as
 * numbers; times are W3C datetimes in UTC.
 */
#include <apr_lib.h>
#include <apr_strings.h>
#include <apr_file_info.h>
#include "mod_resourcesync_statusfmt.h"
#include "mod_resourcesync_hubconf.h"
#include "mod_resourcesync_status.h"
#include "rs_deliverstat.h"
#include "rs_scanrate.h"
#include "rs_dumppkg.h"
#include "rs_statedir.h"
#include "rs_time.h"

#ifndef RS_VERSION
#define RS_VERSION "unknown"
#endif

#define INOTIFY_LIMIT_FILE "/proc/sys/fs/inotify/max_user_watches"

static void put(apr_array_header_t *kv, const char *key, const char *val)
{
    rs_statkv_t *e = apr_array_push(kv);
    e->key = key;
    e->val = val;
}

static const char *num(apr_pool_t *p, apr_int64_t n)
{
    return apr_psprintf(p, "%" APR_INT64_T_FMT, n);
}

static const char *when(apr_pool_t *p, apr_time_t t)
{
    char buf[RS_TIME_BUFSIZE];
    return t ? apr_pstrdup(p, rs_time_format(buf, t)) : NULL;
}

/* Seconds from t to now, one decimal (NULL: no t). */
static const char *age(apr_pool_t *p, apr_time_t t)
{
    apr_time_t d = apr_time_now() - t;
    return t ? apr_psprintf(p, "%.1f", d > 0 ? (double)d / APR_USEC_PER_SEC : 0.0) : NULL;
}

const char *rs_statusmodel_state_name(apr_uint32_t s)
{
    switch (s) {
    case RS_STATE_STARTING:
        return "starting";
    case RS_STATE_SCANNING:
        return "scanning";
    case RS_STATE_WATCHING:
        return "watching";
    case RS_STATE_DEGRADED:
        return "degraded";
    default:
        return "unknown";
    }
}

const char *rs_statusmodel_mode_name(apr_int32_t m)
{
    return m == RS_MODE_WATCHING    ? "watching"
           : m == RS_MODE_RESCANS   ? "rescans"
           : m == RS_MODE_ELSEWHERE ? "written-by-another-node"
                                    : "starting";
}

/* Bytes of the store: its database file and write-ahead log (NULL for
 * a PostgreSQL store, whose size is the database server's to tell). */
static const char *store_bytes(apr_pool_t *p)
{
    const char *db = rs_statedir_db(p, rs_global.state_dir);
    const char *const files[] = { db, apr_pstrcat(p, db, "-wal", NULL) };
    apr_finfo_t fi;
    apr_int64_t n = 0;
    int i;

    if (rs_storecfg_is_pgsql(&rs_global.store)) {
        return NULL;
    }
    for (i = 0; i < 2; i++) {
        if (apr_stat(&fi, files[i], APR_FINFO_SIZE, p) == APR_SUCCESS) {
            n += fi.size;
        }
    }
    return num(p, n);
}

/* A small file's first line, NULL if unreadable.  One read: a sysctl
 * file under /proc answers only a read at offset 0. */
static const char *first_line(apr_pool_t *p, const char *path)
{
    apr_file_t *f;
    char buf[64];
    apr_size_t n = sizeof(buf) - 1;

    if (apr_file_open(&f, path, APR_FOPEN_READ, APR_FPROT_OS_DEFAULT, p) != APR_SUCCESS) {
        return NULL;
    }
    if (apr_file_read(f, buf, &n) != APR_SUCCESS) {
        n = 0;
    }
    apr_file_close(f);
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return buf[0] ? apr_pstrdup(p, buf) : NULL;
}

/* A full scan's figures (files so far, total and its source, rate, time
 * left) under keys prefixed "Scan". */
static void scan_fields(apr_pool_t *p, apr_array_header_t *kv, const rs_status_t *st)
{
    apr_int64_t files = st->scan_files, total = st->scan_total;
    apr_time_t start = st->scan_start;
    double rate, left;

    rs_scanrate_estimate(files, total, start ? apr_time_now() - start : 0, &rate, &left);
    put(kv, "ScanFiles", num(p, files));
    put(kv, "ScanTotal", total >= 0 ? num(p, total) : NULL);
    put(kv, "ScanTotalSource", rs_scanrate_source(st->scan_total_src));
    put(kv, "ScanStarted", when(p, start));
    put(kv, "ScanRate", apr_psprintf(p, "%.1f", rate));
    put(kv, "ScanSecondsLeft", left >= 0 ? apr_psprintf(p, "%.0f", left) : NULL);
}

static void global_fields(request_rec *r, rs_statmodel_t *m, const rs_status_t *st,
                          apr_int64_t watches)
{
    apr_pool_t *p = r->pool;
    apr_array_header_t *kv = m->global;
    apr_int32_t scanning = st->scan_set;
    char hashing[RS_STATUS_PATH_MAX], err[RS_STATUS_ERR_MAX], cause[120];
    apr_time_t err_at;

    put(kv, "Version", RS_VERSION);
    put(kv, "NodeName", rs_global.node_name);
    put(kv, "Store", rs_global.store.kind);
    /* Where it is, never with a password (rs_storecfg_describe). */
    put(kv, "StoreLocation", rs_global.store_shown);
    put(kv, "WatcherPid", num(p, st->watcher_pid));
    put(kv, "WatcherState", rs_statusmodel_state_name(st->state));
    put(kv, "Heartbeat", when(p, st->heartbeat));
    put(kv, "HeartbeatAge", age(p, st->heartbeat));
    put(kv, "StoreHealth", st->store_err ? "failing" : "ok");
    put(kv, "StoreError",
        st->store_err
            ? apr_pstrdup(p, apr_strerror((apr_status_t)st->store_err, cause, sizeof(cause)))
            : NULL);
    put(kv, "StoreBytes", store_bytes(p));
    put(kv, "ScanSet",
        scanning >= 0 && (apr_uint32_t)scanning < st->nsets
            ? apr_pstrdup(p, st->sets[scanning].name)
            : NULL);
    scan_fields(p, kv, st);
    rs_status_hashing_get(hashing);
    put(kv, "Hashing", hashing[0] ? apr_pstrdup(p, hashing) : NULL);
    put(kv, "HashingSize", num(p, hashing[0] ? st->hash_size : 0));
    put(kv, "HashingDone", num(p, hashing[0] ? st->hash_done : 0));
    put(kv, "HashingQueue", num(p, st->hash_queue));
    put(kv, "RecentSlots", num(p, rs_global.recent));
    put(kv, "NewestSequence", num(p, rs_status_ring_head()));
    put(kv, "InotifyWatches", num(p, watches));
    put(kv, "InotifyLimit", first_line(p, INOTIFY_LIMIT_FILE));
    rs_status_error_get(err, &err_at);
    put(kv, "LastError", err[0] ? apr_pstrdup(p, err) : NULL);
    put(kv, "LastErrorTime", when(p, err_at));
}

static void set_fields(request_rec *r, rs_statmodel_t *m, const rs_status_t *st, int i,
                       const rs_status_set_t *e)
{
    apr_pool_t *p = r->pool;
    rs_statgroup_t *g = apr_array_push(m->sets);
    apr_array_header_t *kv = apr_array_make(p, 32, sizeof(rs_statkv_t));
    const rs_set_t *set = i < rs_global.sets->nelts ? APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *)
                                                    : NULL;
    int open = e->cl_ready;

    g->name = apr_pstrdup(p, e->name);
    g->kv = kv;
    put(kv, "Mode", rs_statusmodel_mode_name(e->mode));
    put(kv, "WrittenBy", e->mode == RS_MODE_ELSEWHERE ? "another node" : "this node");
    put(kv, "Available", e->unavailable ? "no" : "yes");
    put(kv, "UnavailableReason",
        e->unavailable ? apr_pstrndup(p, e->why, sizeof(e->why) - 1) : NULL);
    put(kv, "Files", num(p, e->entries));
    put(kv, "Bytes", e->gen && e->bytes >= 0 ? num(p, e->bytes) : NULL);
    put(kv, "Generation", num(p, (apr_int64_t)e->gen));
    put(kv, "Parts", num(p, e->parts));
    put(kv, "SnapshotAt", when(p, e->at));
    put(kv, "SnapshotCompleted", when(p, e->completed));
    put(kv, "SnapshotAge", age(p, e->completed));
    put(kv, "ConsistentAsOf", when(p, e->consistent));
    put(kv, "LastChange", open && e->cl_count ? when(p, e->cl_last_dt) : NULL);
    put(kv, "OpenChangeList", num(p, e->cl_open_id));
    put(kv, "OpenChanges", num(p, open ? e->cl_count : 0));
    put(kv, "OpenChangeBytes", open && e->cl_bytes >= 0 ? num(p, e->cl_bytes) : NULL);
    put(kv, "HeldDeletions", num(p, e->held));
    put(kv, "Watches", num(p, e->watches));
    put(kv, "Scanning", st->scan_set == i ? "yes" : "no");
    if (st->scan_set == i) {
        scan_fields(p, kv, st);
    }
    /* Fixed at post_config (mod_resourcesync_uniform.c); children inherit it. */
    put(kv, "AccessCheck", set ? (set->uniform ? "per-directory" : "per-file") : NULL);
    if (set && set->rdump) {
        /* Read from disk on each request: a few entries per package. */
        put(kv, "ResourceDumpGeneration", num(p, (apr_int64_t)e->dump_gen));
        put(kv, "ResourceDumpBytes", num(p, rs_dumppkg_disk_bytes(p, set->rdump_dir)));
    }
    if (e->cdump_ready) {
        put(kv, "ChangeDumpBytes", num(p, e->cdump_bytes));
        put(kv, "CaptureBytes", num(p, e->capture_bytes));
    }
}

/* "some-key: value" lines of text into (SomeKey, value) pairs. */
static void text_lines(apr_pool_t *p, apr_array_header_t *kv, const char *text)
{
    char *copy = apr_pstrdup(p, text), *last, *line;

    for (line = apr_strtok(copy, "\n", &last); line; line = apr_strtok(NULL, "\n", &last)) {
        char *colon = strstr(line, ": "), *key, *k;
        int up = 1;
        if (!colon || colon == line) {
            continue;
        }
        *colon = '\0';
        key = k = apr_palloc(p, strlen(line) + 1);
        for (; *line; line++) {
            if (*line == '-' || *line == '_') {
                up = 1;
                continue;
            }
            *k++ = up ? apr_toupper(*line) : *line;
            up = 0;
        }
        *k = '\0';
        put(kv, key, colon + 2);
    }
}

/* The hub's intake (spool, summary) and the notifications' delivery. */
static void other_lines(request_rec *r, rs_statmodel_t *m)
{
    const rs_srv_conf *sc = ap_get_module_config(r->server->module_config, &resourcesync_module);
    const rs_hubgate_t *g = rs_status_hub_gate();
    apr_file_t *f;
    apr_size_t n = 65536;
    char *buf;
    const char *text;

    if (sc && rs_hubconf_on(sc)) {
        /* The spool gate's counts: never a listing of the spool, which a
         * flood may fill up to ResourceSyncHubSpoolLimit. */
        put(m->lines, "HubSpoolPending", num(r->pool, g ? g->count : 0));
        put(m->lines, "HubSpoolBytes", num(r->pool, g ? g->bytes : 0));
        buf = apr_palloc(r->pool, n + 1);
        if (apr_file_open(&f, rs_statedir_hubintake(r->pool, rs_global.state_dir), APR_FOPEN_READ,
                          APR_FPROT_OS_DEFAULT, r->pool)
            == APR_SUCCESS) {
            if (apr_file_read_full(f, buf, n, &n) == APR_SUCCESS || n > 0) {
                buf[n] = '\0';
                text_lines(r->pool, m->lines, buf);
            }
            apr_file_close(f);
        }
    }
    if ((text = rs_deliverstat_read(r->pool, rs_global.state_dir))) {
        text_lines(r->pool, m->lines, text);
    }
}

rs_statmodel_t *rs_statusmodel_build(request_rec *r)
{
    rs_statmodel_t *m = apr_pcalloc(r->pool, sizeof(*m));
    rs_status_t *st = rs_status_get();
    rs_status_set_t e;
    apr_int64_t watches = 0;
    apr_uint32_t i;

    m->global = apr_array_make(r->pool, 32, sizeof(rs_statkv_t));
    m->sets = apr_array_make(r->pool, 8, sizeof(rs_statgroup_t));
    m->lines = apr_array_make(r->pool, 8, sizeof(rs_statkv_t));
    if (!st) {
        put(m->global, "Version", RS_VERSION);
        put(m->global, "WatcherState", "none");
        return m;
    }
    for (i = 0; i < st->nsets; i++) {
        rs_status_read_set((int)i, &e);
        watches += e.watches;
        set_fields(r, m, st, (int)i, &e);
    }
    global_fields(r, m, st, watches);
    other_lines(r, m);
    return m;
}
