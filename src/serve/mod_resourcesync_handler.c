/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_handler.c - URL mapping, the document handler and the
 * Link header.
 *
 * URLs (per virtual host that declares sets; the prefix is
 * ResourceSyncPrefix, default /resourcesync):
 *   /.well-known/resourcesync                       Source Description
 *   <prefix>/<set>/capabilitylist.xml               Capability List
 *   <prefix>/<set>/resourcelist.xml                 Resource List or Index
 *   <prefix>/<set>/resourcelist/<history>-<gen>-<n>.xml   part n of snapshot gen
 *   <prefix>/<set>/changelist.xml                   Change List Index
 *   <prefix>/<set>/changelist/<history>-<id>.xml    Change List id
 *   <prefix>/<set>/notify/change, notify/framework  notification topics
 *
 * <history> is the state store's history (rs_history.h): a URL of another
 * history than the one in the set's status entry is a 404, so a document
 * that never changes is never served with other content after the store
 * starts over.
 *
 * Requests for these URLs are claimed in translate_name and skip the
 * directory walk (they map to no file), but <Location> sections still
 * apply.  Other translate_name hooks claim documents of their own the same
 * way (rs_handler_claim with the document: host-meta,
 * mod_resourcesync_discovery.c), answered here like the Source
 * Description.  Documents are never generated here: Source Descriptions and
 * Capability Lists are rendered in post_config, Resource Lists are snapshot
 * files written by the watcher, served like static files (sendfile or mmap
 * as EnableSendfile and EnableMMAP say), with Range, a strong ETag and
 * Last-Modified.  Conditional requests and HEAD are answered from
 * metadata alone.  Anything else under the prefix is a 404; methods other
 * than GET and HEAD are a 405 with Allow, except TRACE, which the core
 * answers as TraceEnable says (and Allow lists it only when enabled).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_access.h"
#include "mod_resourcesync_answer.h"
#include "mod_resourcesync_dumpserve.h"
#include "mod_resourcesync_handler.h"
#include "mod_resourcesync_notifyconf.h"
#include "mod_resourcesync_openlist.h"
#include "mod_resourcesync_status.h"
#include "rs_glob.h"
#include "rs_file.h"
#include "rs_statedir.h"
#include "rs_snapparts.h"
#include "rs_parse.h"
#include "rs_snapshot.h"

#define RS_NOTE "resourcesync-doc"

int rs_handler_translate(request_rec *r)
{
    rs_srv_conf *sc = ap_get_module_config(r->server->module_config, &resourcesync_module);
    const char *prefix;
    apr_size_t n;

    if (!sc || !sc->sets->nelts || !r->uri || r->uri[0] != '/') {
        return DECLINED;
    }
    prefix = rs_config_prefix(sc);
    n = strlen(prefix);
    if (!strcmp(r->uri, RS_WELL_KNOWN)
        || (!strncmp(r->uri, prefix, n) && (r->uri[n] == '/' || r->uri[n] == '\0'))) {
        rs_handler_claim(r, NULL);
        return OK;
    }
    return DECLINED;
}

void rs_handler_claim(request_rec *r, const rs_memdoc_t *doc)
{
    r->handler = RS_HANDLER;
    r->filename = apr_pstrcat(r->pool, "resourcesync:", r->uri, NULL);
    apr_table_setn(r->notes, RS_NOTE, "1");
    ap_set_module_config(r->request_config, &resourcesync_module, (void *)doc);
}

int rs_handler_map(request_rec *r)
{
    /* TRACE is the core's (ap_send_http_trace, a later map_to_storage
     * hook): it answers or refuses it as TraceEnable says, which is also
     * what decides whether the Allow header of a 405 lists TRACE. */
    if (apr_table_get(r->notes, RS_NOTE) && r->method_number != M_TRACE) {
        return OK; /* no file behind it: skip the directory walk */
    }
    return DECLINED;
}

int rs_handler_send(request_rec *r, const char *type, const char *body, apr_size_t len,
                    const char *etag, apr_time_t mtime)
{
    apr_bucket_brigade *bb;
    int rc;

    rs_answer_validators(r, type, etag, mtime);
    apr_table_setn(r->headers_out, "Cache-Control", "no-cache");
    if ((rc = ap_meets_conditions(r)) != OK) {
        return rc;
    }
    ap_set_content_length(r, (apr_off_t)len);
    if (r->header_only) {
        return OK;
    }
    bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_immortal_create(body, len, bb->bucket_alloc));
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(bb->bucket_alloc));
    return ap_pass_brigade(r->output_filters, bb) == APR_SUCCESS ? OK : AP_FILTER_ERROR;
}

static int serve_list(request_rec *r, const rs_set_t *set, const char *part)
{
    rs_status_set_t cur;
    apr_uint64_t gen;
    const char *path;
    int n;

    rs_status_read_set(set->slot, &cur);
    if (rs_answer_unavailable(r, &cur)) {
        return HTTP_SERVICE_UNAVAILABLE;
    }
    if (!part) {
        if (!cur.gen) {
            /* The first scan of this set has not finished yet. */
            apr_table_setn(r->err_headers_out, "Retry-After", "5");
            return HTTP_SERVICE_UNAVAILABLE;
        }
        return rs_answer_file(
            r, rs_statedir_gen_file(r->pool, rs_statedir_gen(r->pool, set->snap_dir, cur.gen), 0),
            0);
    }
    if (!(part = rs_answer_history_rest(&cur, part)) || !rs_parse_part(part, &gen, &n) || n < 1) {
        return HTTP_NOT_FOUND;
    }
    if (gen > cur.gen) {
        return rs_answer_not_here_yet(r, &cur);
    }
    /* A part keeps the URL of the generation that wrote it; later
     * generations that list it hold a hard link (rs_snapparts.h). */
    if (!(path = rs_snapparts_find(r->pool, set->snap_dir, cur.gen, gen, n))) {
        return HTTP_NOT_FOUND;
    }
    return rs_answer_file(r, path, 1);
}

static int serve_changes(request_rec *r, const rs_set_t *set, const char *list)
{
    rs_status_set_t cur;
    apr_int64_t id;

    rs_status_read_set(set->slot, &cur);
    if (rs_answer_unavailable(r, &cur)) {
        return HTTP_SERVICE_UNAVAILABLE;
    }
    if (!cur.cl_open_id) {
        apr_table_setn(r->err_headers_out, "Retry-After", "5");
        return HTTP_SERVICE_UNAVAILABLE;
    }
    if (!list) {
        const char *index = rs_statedir_cl_index(r->pool, set->cl_dir);
        if (!rs_file_exists(r->pool, index)) {
            /* A new history whose index is not written yet. */
            apr_table_setn(r->err_headers_out, "Retry-After", "5");
            return HTTP_SERVICE_UNAVAILABLE;
        }
        return rs_answer_file(r, index, 0);
    }
    if (!(list = rs_answer_history_rest(&cur, list)) || !rs_parse_id(list, ".xml", &id)) {
        return HTTP_NOT_FOUND;
    }
    if (id > cur.cl_open_id) {
        return rs_answer_not_here_yet(r, &cur);
    }
    /* Closed lists never change: files.  The open one is answered from
     * the status segment and the ring (rs_openlist_serve), with the
     * extent read above, even if it closed meanwhile. */
    if (id == cur.cl_open_id) {
        if (!cur.cl_ready) {
            /* The watcher has not said what it holds yet (it is starting). */
            apr_table_setn(r->err_headers_out, "Retry-After", "5");
            return HTTP_SERVICE_UNAVAILABLE;
        }
        return rs_openlist_serve(r, set, &cur);
    }
    return rs_answer_file(r, rs_statedir_cl_list(r->pool, set->cl_dir, cur.history, id), 2);
}

/* A notification topic: the newest payload the watcher wrote (a file
 * replaced by rename: a strong ETag per version; on a set another node
 * writes, that node's, copied: mod_resourcesync_followtopic.c), or an
 * empty body before the first; always the Link header with rel="self" and the hubs (on 304
 * too).  404 when the set has notifications off.  While the set's entry
 * has no history (not seeded: its documents were written with other base
 * URLs, mod_resourcesync_seed.c), the payload on disk may be of a history
 * the watcher is about to end: nothing is served of it. */
static int serve_notify(request_rec *r, const rs_set_t *set, const char *topic)
{
    rs_status_set_t cur;
    const char *path;

    if (!set->notify) {
        return HTTP_NOT_FOUND;
    }
    apr_table_setn(r->headers_out, "Link", rs_notifyconf_link_header(r->pool, set, topic));
    path = rs_statedir_notify_topic(r->pool, set->notify_dir, topic);
    rs_status_read_set(set->slot, &cur);
    if (cur.mode == RS_MODE_ELSEWHERE && !cur.topics) {
        /* Not followed yet: a payload here is of this node's writing. */
        apr_table_setn(r->err_headers_out, "Retry-After", "5");
        return HTTP_SERVICE_UNAVAILABLE;
    }
    if (*cur.history && rs_file_exists(r->pool, path)) {
        return rs_answer_file(r, path, 0);
    }
    ap_set_content_type(r, "application/xml");
    apr_table_setn(r->headers_out, "Cache-Control", "no-cache");
    ap_set_content_length(r, 0);
    return OK;
}

int rs_handler_handle(request_rec *r)
{
    rs_srv_conf *sc;
    rs_request_path_t rp;
    rs_set_t *set = NULL;
    const rs_memdoc_t *doc;
    int i;

    if (!r->handler || strcmp(r->handler, RS_HANDLER) || !apr_table_get(r->notes, RS_NOTE)) {
        return DECLINED;
    }
    sc = ap_get_module_config(r->server->module_config, &resourcesync_module);
    /* The Allow header of a 405 is made from r->allowed_methods (not from
     * r->allowed); M_GET stands for GET and HEAD. */
    r->allowed |= (AP_METHOD_BIT << M_GET);
    ap_allow_standard_methods(r, REPLACE_ALLOW, M_GET, -1);
    if (r->method_number != M_GET) {
        return HTTP_METHOD_NOT_ALLOWED;
    }
    if (!strcmp(r->uri, RS_WELL_KNOWN)) {
        return rs_handler_send(r, "application/xml", sc->sd_body, sc->sd_len, sc->sd_etag,
                               rs_global.config_time);
    }
    if ((doc = ap_get_module_config(r->request_config, &resourcesync_module))) {
        return rs_handler_send(r, doc->type, doc->body, doc->len, doc->etag, rs_global.config_time);
    }
    if (!rs_parse_request_path(r->uri + strlen(rs_config_prefix(sc)), &rp)) {
        return HTTP_NOT_FOUND;
    }
    for (i = 0; i < sc->sets->nelts; i++) {
        rs_set_t *s = APR_ARRAY_IDX(sc->sets, i, rs_set_t *);
        if (strlen(s->name) == rp.set_len && !strncmp(rp.set, s->name, rp.set_len)) {
            set = s;
            break;
        }
    }
    if (!set) {
        return HTTP_NOT_FOUND;
    }
    switch (rp.kind) {
    case RS_DOC_CAPABILITY:
        return rs_handler_send(r, "application/xml", set->cl_body, set->cl_len, set->cl_etag,
                               rs_global.config_time);
    case RS_DOC_RESOURCELIST:
    case RS_DOC_RESOURCELIST_PART:
        return serve_list(r, set, rp.arg);
    case RS_DOC_CHANGELIST:
    case RS_DOC_CHANGELIST_PART:
        return serve_changes(r, set, rp.arg);
    case RS_DOC_RESOURCEDUMP:
    case RS_DOC_RESOURCEDUMP_PART:
        return rs_dumpserve_rdump(r, set, rp.arg);
    case RS_DOC_CHANGEDUMP:
    case RS_DOC_CHANGEDUMP_PART:
        return rs_dumpserve_cdump(r, set, rp.arg);
    case RS_DOC_NOTIFY:
        return serve_notify(r, set, rp.arg);
    case RS_DOC_NONE:
        break;
    }
    return HTTP_NOT_FOUND;
}

/* 1 if the name rel of the set's file path is one the scan would list as
 * such: no directory on the way is a symbolic link (the scan never
 * descends into one) and, if the file is a link, its target lies inside
 * the set's real root.  Costs a realpath or two per request in a set. */
static int link_real_inside(request_rec *r, const rs_set_t *set, const char *rel)
{
    char root[PATH_MAX], real[PATH_MAX];
    const char *slash = strrchr(rel, '/');
    const char *parent, *want;
    apr_size_t n;

    if (!realpath(set->dir, root) || !realpath(r->filename, real)) {
        return 0;
    }
    n = strlen(root);
    if (strncmp(real, root, n) || real[n] != '/') {
        return 0;
    }
    parent =
        apr_pstrndup(r->pool, r->filename, (apr_size_t)(strrchr(r->filename, '/') - r->filename));
    want = slash ? apr_pstrcat(r->pool, root, "/",
                               apr_pstrndup(r->pool, rel, (apr_size_t)(slash - rel)), NULL)
                 : root;
    return realpath(parent, real) && !strcmp(real, want);
}

/* 1 if the response of r is about a file its set lists: a regular file
 * (not a directory, not a missing name) of the set's directory, neither
 * hidden nor excluded by the set's rules, requested on the server that
 * declares the set.  <Directory> sections are global: a virtual host that
 * serves the same directory finds the same set in its per-directory
 * config, but the set and its URLs belong to the declaring server, so
 * that host's responses carry no Link.  Access control has already
 * admitted the request (fixups run after it). */
int rs_handler_listed(request_rec *r, const rs_set_t *set)
{
    apr_size_t n = strlen(set->dir);
    const char *rel, *seg, *end;

    if (set->s != r->server || !set->capability_url || r->finfo.filetype != APR_REG || !r->filename
        || strncmp(r->filename, set->dir, n) || r->filename[n] != '/') {
        return 0;
    }
    rel = r->filename + n + 1;
    /* Each directory on the way counts like the file itself: the scan
     * never descends into a hidden or excluded directory. */
    for (seg = rel; seg; seg = end ? end + 1 : NULL) {
        end = strchr(seg, '/');
        if (rs_glob_hidden(seg, set->dotfiles)
            || rs_glob_match(set->excludes,
                             end ? apr_pstrndup(r->pool, rel, (apr_size_t)(end - rel)) : rel)) {
            return 0;
        }
    }
    return link_real_inside(r, set, rel);
}

/* Link: <capability list>; rel="resourcesync" on the successful responses
 * (200, 206, 304, HEAD) for a file the set lists (spec 6.3.3: the
 * Capability List must cover the linking resource).  The header goes to
 * headers_out in fixups, after access control and before the handler: an
 * error response (401, 403, 404, 500) drops headers_out, so only answers
 * about the file's bytes carry it. */
int rs_handler_link(request_rec *r)
{
    rs_dir_conf *dc = ap_get_module_config(r->per_dir_config, &resourcesync_module);
    const char *link, *have;

    /* The watcher's access checks run fixups too: their answer has no
     * header to carry, and the check below costs a few path resolutions,
     * once per file of every scan. */
    if (!dc || !dc->set || rs_access_internal(r) || !rs_handler_listed(r, dc->set)) {
        return DECLINED;
    }
    link = apr_pstrcat(r->pool, "<", dc->set->capability_url, ">; rel=\"resourcesync\"", NULL);
    have = apr_table_get(r->headers_out, "Link");
    if (!have || !strstr(have, link)) {
        apr_table_addn(r->headers_out, "Link", link);
    }
    return DECLINED;
}
