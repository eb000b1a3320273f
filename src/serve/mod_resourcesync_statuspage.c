/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_statuspage.c - "SetHandler resourcesync-status".
 *
 * A view of the shared status segment for operators, in the spirit of
 * mod_status: place it in a <Location> and protect it with Require.  It
 * reads only the segment and a few small files (never the store), so it
 * answers even while the watcher is busy scanning.  The query chooses the
 * format (docs/directives.md):
 *
 *   (none)   an HTML page            \
 *   ?auto    "Key: value" lines       > one model (statusmodel.c),
 *   ?json    application/json        /  rendered by statusfmt.c
 *   ?text    the plain text below, kept for the tests and benchmarks
 *            that read it
 *
 * The plain text:
 *   node: web1 store=sqlite     (ResourceSyncNodeName, ResourceSyncStore)
 *   watcher-pid: 1234
 *   watcher-state: watching   (or "store failing: <cause>")
 *   heartbeat: 2026-11-22T04:20:00.123Z (age 0.2 s)
 *   scan-set: -
 *   scan-files: 15
 *   recent-changes: slots=4096 newest-sequence=812
 *   set: main generation=3 entries=15 parts=0 at=... completed=... consistent-as-of=...
 *        open-changelist=2 open-changes=17 last-change=... mode=watching
 * (one line per set).  With ResourceSyncHub on, the hub's intake follows (hub_intake_lines):
 *   hub-spool-pending: 0                (subscription requests in the spool, from
 *   hub-spool-bytes: 0                   the status segment's gate: never a listing)
 *   hub-subscriptions: main change 3    (one line per topic with subscribers)
 *   hub-subscriptions-total: 3
 *   hub-last-intake: <time> subscribe <callback> subscribed, lease 600 s
 * Then the notifications' delivery, from the file the watcher's delivery thread renews (<statedir>/notify/delivery.txt):
 *   notify-topic: main change last=42 until=...
 *   notify-hub: main change http://hub/ mode=fat backlog=0 last-status=200
 *        last-try=... attempts=0
 *   notify-subscriber: main change http://cb/ pending=1 failures=2
 *        last-status=503 last-try=... lease-until=...
 */
#include <apr_strings.h>
#include <http_protocol.h>
#include <http_request.h>
#include "mod_resourcesync_statusfmt.h"
#include "mod_resourcesync_hubconf.h"
#include "mod_resourcesync_status.h"
#include "mod_resourcesync_statuspage.h"
#include "rs_deliverstat.h"
#include "rs_dumppkg.h"
#include "rs_statedir.h"
#include "rs_time.h"

#define RS_STATUS_HANDLER "resourcesync-status"

/* The hub's intake: requests waiting in the spool (counted here), and the
 * summary the watcher's intake thread keeps in <statedir>/hub/intake
 * (copied as it is; nothing before the watcher first wrote it). */
static void hub_intake_lines(request_rec *r)
{
    const rs_srv_conf *sc = ap_get_module_config(r->server->module_config, &resourcesync_module);
    const rs_hubgate_t *g = rs_status_hub_gate();
    apr_file_t *f;
    apr_size_t n = 65536; /* a line per topic with subscribers */
    char *buf = apr_palloc(r->pool, n);

    if (!sc || !rs_hubconf_on(sc)) {
        return;
    }
    /* The spool gate's counts, not a listing of the spool. */
    ap_rprintf(r, "hub-spool-pending: %u\nhub-spool-bytes: %u\n", g ? g->count : 0,
               g ? g->bytes : 0);
    if (apr_file_open(&f, rs_statedir_hubintake(r->pool, rs_global.state_dir), APR_FOPEN_READ,
                      APR_FPROT_OS_DEFAULT, r->pool)
        == APR_SUCCESS) {
        if (apr_file_read_full(f, buf, n, &n) == APR_SUCCESS || n > 0) {
            ap_rwrite(buf, (int)n, r);
        }
        apr_file_close(f);
    }
}

/* The lines of set i of the segment in the ?text page. */
static void text_set_lines(request_rec *r, apr_uint32_t i)
{
    char t1[RS_TIME_BUFSIZE], t2[RS_TIME_BUFSIZE], t3[RS_TIME_BUFSIZE], t4[RS_TIME_BUFSIZE];
    rs_status_set_t e;

    rs_status_read_set((int)i, &e);
    ap_rprintf(r,
               "set: %s generation=%" APR_UINT64_T_FMT " entries=%" APR_INT64_T_FMT
               " parts=%d at=%s completed=%s consistent-as-of=%s open-changelist=%" APR_INT64_T_FMT
               " open-changes=%" APR_INT64_T_FMT " last-change=%s mode=%s\n",
               e.name, e.gen, e.entries, (int)e.parts, e.at ? rs_time_format(t1, e.at) : "-",
               e.completed ? rs_time_format(t2, e.completed) : "-",
               e.consistent ? rs_time_format(t3, e.consistent) : "-", e.cl_open_id,
               e.cl_ready ? e.cl_count : 0,
               e.cl_ready && e.cl_count && e.cl_last_dt ? rs_time_format(t4, e.cl_last_dt) : "-",
               rs_statusmodel_mode_name(e.mode));
    if (e.unavailable) {
        e.why[sizeof(e.why) - 1] = '\0';
        ap_rprintf(r, "set-unavailable: %s %s\n", e.name, e.why);
    }
    if (e.held) {
        ap_rprintf(r, "set-held-deletions: %s %" APR_INT64_T_FMT "\n", e.name, e.held);
    }
    if (i < (apr_uint32_t)rs_global.sets->nelts
        && APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *)->rdump) {
        /* Read from disk on each request: a few entries per package. */
        const rs_set_t *set = APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *);
        ap_rprintf(r,
                   "set-resource-dump: %s generation=%" APR_UINT64_T_FMT
                   " disk-bytes=%" APR_INT64_T_FMT "\n",
                   e.name, e.dump_gen, rs_dumppkg_disk_bytes(r->pool, set->rdump_dir));
    }
    if (e.cdump_ready) {
        /* Disk use of ResourceSyncChangeDump, as of its last job. */
        ap_rprintf(r,
                   "set-changedump: %s packages-bytes=%" APR_INT64_T_FMT
                   " captured-bytes=%" APR_INT64_T_FMT "\n",
                   e.name, e.cdump_bytes, e.capture_bytes);
    }
}

/* The plain text (?text). */
static int text_page(request_rec *r)
{
    rs_status_t *st;
    char t1[RS_TIME_BUFSIZE];
    apr_time_t hb;
    apr_uint32_t i;
    apr_int32_t scanning;
    char hashing[RS_STATUS_PATH_MAX];
    const char *text;

    st = rs_status_get();
    if (!st) {
        ap_rputs("watcher-state: none (no ResourceSyncSet configured)\n", r);
        return OK;
    }
    hb = st->heartbeat;
    scanning = st->scan_set;
    ap_rprintf(r, "node: %s store=%s\n", rs_global.node_name, rs_global.store.kind);
    ap_rprintf(r, "watcher-pid: %d\n", (int)st->watcher_pid);
    if (st->store_err) {
        char buf[120];
        ap_rprintf(r, "watcher-state: store failing: %s\n",
                   apr_strerror((apr_status_t)st->store_err, buf, sizeof(buf)));
    }
    else {
        ap_rprintf(r, "watcher-state: %s\n", rs_statusmodel_state_name(st->state));
    }
    ap_rprintf(r, "heartbeat: %s (age %.1f s)\n", hb ? rs_time_format(t1, hb) : "-",
               hb ? (double)(apr_time_now() - hb) / APR_USEC_PER_SEC : 0.0);
    ap_rprintf(r, "scan-set: %s\n",
               scanning >= 0 && (apr_uint32_t)scanning < st->nsets ? st->sets[scanning].name : "-");
    ap_rprintf(r, "scan-files: %" APR_INT64_T_FMT "\n", (apr_int64_t)st->scan_files);
    rs_status_hashing_get(hashing);
    ap_rprintf(r, "hashing: %s size=%" APR_INT64_T_FMT " done=%" APR_INT64_T_FMT " queue=%d\n",
               hashing[0] ? hashing : "-", hashing[0] ? st->hash_size : 0,
               hashing[0] ? st->hash_done : 0, (int)st->hash_queue);
    ap_rprintf(r, "recent-changes: slots=%d newest-sequence=%" APR_INT64_T_FMT "\n",
               rs_global.recent, rs_status_ring_head());
    for (i = 0; i < st->nsets; i++) {
        text_set_lines(r, i);
    }
    hub_intake_lines(r);
    /* Notification delivery, from the watcher's status file. */
    if ((text = rs_deliverstat_read(r->pool, rs_global.state_dir))) {
        ap_rputs(text, r);
    }
    return OK;
}

/* The format the query asks for: one of its '&'-separated words "auto",
 * "json", "text"; anything else is the HTML page. */
static char format_of(request_rec *r)
{
    char *args = r->args ? apr_pstrdup(r->pool, r->args) : NULL, *last, *w;

    for (w = args ? apr_strtok(args, "&;", &last) : NULL; w; w = apr_strtok(NULL, "&;", &last)) {
        if (!strcmp(w, "auto") || !strcmp(w, "json") || !strcmp(w, "text")) {
            return w[0];
        }
    }
    return 'h';
}

int rs_statuspage_handle(request_rec *r)
{
    char fmt;

    if (!r->handler || strcmp(r->handler, RS_STATUS_HANDLER)) {
        return DECLINED;
    }
    r->allowed |= (AP_METHOD_BIT << M_GET);
    if (r->method_number != M_GET) {
        ap_allow_standard_methods(r, REPLACE_ALLOW, M_GET, -1);
        return HTTP_METHOD_NOT_ALLOWED;
    }
    fmt = format_of(r);
    ap_set_content_type(r, fmt == 'j'   ? "application/json"
                           : fmt == 'h' ? "text/html; charset=utf-8"
                                        : "text/plain; charset=utf-8");
    apr_table_setn(r->headers_out, "Cache-Control", "no-store");
    if (r->header_only) {
        return OK;
    }
    switch (fmt) {
    case 't':
        return text_page(r);
    case 'a':
        rs_statusfmt_auto(r, rs_statusmodel_build(r), "");
        return OK;
    case 'j':
        rs_statusfmt_json(r, rs_statusmodel_build(r));
        return OK;
    default:
        rs_statusfmt_html(r, rs_statusmodel_build(r), 1);
        return OK;
    }
}
