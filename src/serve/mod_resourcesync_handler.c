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
#include "mod_resourcesync_handler.h"
#include "mod_resourcesync_notifyconf.h"
#include "mod_resourcesync_openlist.h"
#include "mod_resourcesync_status.h"
#include "rs_glob.h"
#include "rs_file.h"
#include "rs_dumppkg.h"
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

static void set_validators(request_rec *r, const char *type, const char *etag, apr_time_t mtime)
{
    ap_set_content_type(r, type);
    apr_table_setn(r->headers_out, "ETag", etag);
    ap_update_mtime(r, mtime);
    ap_set_last_modified(r);
}

int rs_handler_send(request_rec *r, const char *type, const char *body, apr_size_t len,
                    const char *etag, apr_time_t mtime)
{
    apr_bucket_brigade *bb;
    int rc;

    set_validators(r, type, etag, mtime);
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

static int send_file(request_rec *r, const char *path, int immutable)
{
    apr_file_t *f;
    apr_finfo_t fi;
    apr_bucket_brigade *bb;
    apr_status_t rv;
    int rc;

    core_dir_config *core = ap_get_core_module_config(r->per_dir_config);
    /* Honour EnableSendfile like the default handler does. */
    apr_int32_t flags =
        APR_FOPEN_READ
        | (core->enable_sendfile == ENABLE_SENDFILE_ON ? APR_FOPEN_SENDFILE_ENABLED : 0);

    rv = apr_file_open(&f, path, flags, 0, r->pool);
    if (rv != APR_SUCCESS) {
        return HTTP_NOT_FOUND; /* a part pruned with its snapshot */
    }
    rv = apr_file_info_get(&fi, APR_FINFO_SIZE | APR_FINFO_MTIME, f);
    if (rv != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, RS_TAG "cannot stat %s", path);
        return HTTP_SERVICE_UNAVAILABLE;
    }
    /* Snapshot files are never rewritten: size and mtime (µs) identify
     * the bytes, so the ETag is strong.  No inode: a follower's copy of a
     * file (mtime set to the writer's) has the writer's ETag. */
    set_validators(r, "application/xml",
                   apr_psprintf(r->pool, "\"%" APR_UINT64_T_HEX_FMT "-%" APR_UINT64_T_HEX_FMT "\"",
                                (apr_uint64_t)fi.size, (apr_uint64_t)fi.mtime),
                   fi.mtime);
    /* immutable: 1 = a Resource List part (kept an hour after it is
     * superseded), 2 = a closed Change List or a dump's manifest copy
     * (never changes), 3 = a dump package (never changes, a ZIP file). */
    if (immutable == 3) {
        ap_set_content_type(r, "application/zip");
    }
    apr_table_setn(r->headers_out, "Cache-Control",
                   immutable >= 2 ? "max-age=31536000, immutable"
                   : immutable    ? "max-age=3600"
                                  : "no-cache");
    if ((rc = ap_meets_conditions(r)) != OK) {
        return rc;
    }
    ap_set_content_length(r, fi.size);
    ap_set_accept_ranges(r);
    if (r->header_only) {
        return OK;
    }
    bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    {
        apr_bucket *e = apr_brigade_insert_file(bb, f, 0, fi.size, r->pool);
#if APR_HAS_MMAP
        /* Honour EnableMMAP like the default handler does. */
        if (core->enable_mmap == ENABLE_MMAP_OFF) {
            for (; e != APR_BRIGADE_SENTINEL(bb); e = APR_BUCKET_NEXT(e)) {
                apr_bucket_file_enable_mmap(e, 0);
            }
        }
#else
        (void)e;
#endif
    }
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(bb->bucket_alloc));
    return ap_pass_brigade(r->output_filters, bb) == APR_SUCCESS ? OK : AP_FILTER_ERROR;
}

/* A set the watcher found unavailable (root missing or unmounted, URL-path
 * elsewhere): its lists would lie, so they are a 503 until the watcher
 * finds it back, which it checks every ResourceSyncRescanInterval and at
 * every change of the mount table.  Returns 0 if the set is available. */
static int unavailable(request_rec *r, const rs_status_set_t *cur)
{
    if (!cur->unavailable) {
        return 0;
    }
    apr_table_setn(r->err_headers_out, "Retry-After",
                   apr_psprintf(r->pool, "%d",
                                (int)apr_time_sec(rs_global.rescan) > 0
                                    ? (int)apr_time_sec(rs_global.rescan)
                                    : 1));
    return HTTP_SERVICE_UNAVAILABLE;
}

/* A document newer than this node's entry knows: 404 where this node
 * writes the set (none exists), 503 with Retry-After where another node
 * does: behind a load balancer, a client that read an index from the
 * writer may ask for a part or list this node serves within moments. */
static int not_here_yet(request_rec *r, const rs_status_set_t *cur)
{
    if (cur->mode != RS_MODE_ELSEWHERE) {
        return HTTP_NOT_FOUND;
    }
    apr_table_setn(r->err_headers_out, "Retry-After", "1");
    return HTTP_SERVICE_UNAVAILABLE;
}

/* The rest of a part or list name after "<history>-", when history is
 * the current one; NULL otherwise. */
static const char *this_history(const rs_status_set_t *cur, const char *arg)
{
    char h[RS_HISTORY_LEN + 1];
    const char *rest = rs_parse_history(arg, h);
    return rest && *cur->history && !strcmp(h, cur->history) ? rest : NULL;
}

static int serve_list(request_rec *r, const rs_set_t *set, const char *part)
{
    rs_status_set_t cur;
    apr_uint64_t gen;
    const char *path;
    int n;

    rs_status_read_set(set->slot, &cur);
    if (unavailable(r, &cur)) {
        return HTTP_SERVICE_UNAVAILABLE;
    }
    if (!part) {
        if (!cur.gen) {
            /* The first scan of this set has not finished yet. */
            apr_table_setn(r->err_headers_out, "Retry-After", "5");
            return HTTP_SERVICE_UNAVAILABLE;
        }
        return send_file(
            r, rs_statedir_gen_file(r->pool, rs_statedir_gen(r->pool, set->snap_dir, cur.gen), 0),
            0);
    }
    if (!(part = this_history(&cur, part)) || !rs_parse_part(part, &gen, &n) || n < 1) {
        return HTTP_NOT_FOUND;
    }
    if (gen > cur.gen) {
        return not_here_yet(r, &cur);
    }
    /* A part keeps the URL of the generation that wrote it; later
     * generations that list it hold a hard link (rs_snapparts.h). */
    if (!(path = rs_snapparts_find(r->pool, set->snap_dir, cur.gen, gen, n))) {
        return HTTP_NOT_FOUND;
    }
    return send_file(r, path, 1);
}

static int serve_changes(request_rec *r, const rs_set_t *set, const char *list)
{
    rs_status_set_t cur;
    apr_int64_t id;

    rs_status_read_set(set->slot, &cur);
    if (unavailable(r, &cur)) {
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
        return send_file(r, index, 0);
    }
    if (!(list = this_history(&cur, list)) || !rs_parse_id(list, ".xml", &id)) {
        return HTTP_NOT_FOUND;
    }
    if (id > cur.cl_open_id) {
        return not_here_yet(r, &cur);
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
    return send_file(r, rs_statedir_cl_list(r->pool, set->cl_dir, cur.history, id), 2);
}

/* A dump package (or its manifest copy) by key: in the current dump
 * generation, else in an older one still on disk (a package that left
 * the dump stays for ResourceSyncDumpGrace, until its generation is
 * pruned).  A key names the same bytes wherever it is (rs_dumppkg.h). */
static int send_package(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur,
                        const char *key, int manifest)
{
    const char *ext = manifest ? "xml" : "zip";
    const char *path = rs_statedir_dump_pkg(
        r->pool, rs_statedir_gen(r->pool, set->rdump_dir, cur->dump_gen), key, ext);
    apr_array_header_t *gens;
    int i;

    if (!rs_file_exists(r->pool, path)) {
        gens = rs_dumppkg_gens(r->pool, set->rdump_dir);
        for (i = 0; i < gens->nelts; i++) {
            path = rs_statedir_dump_pkg(r->pool, APR_ARRAY_IDX(gens, i, const char *), key, ext);
            if (rs_file_exists(r->pool, path)) {
                break;
            }
        }
    }
    return send_file(r, path, manifest ? 2 : 3);
}

/* The Resource Dump of the set's current dump generation, its packages
 * and their manifest copies. */
static int serve_dump(request_rec *r, const rs_set_t *set, const char *part)
{
    rs_status_set_t cur;
    char key[RS_PARSE_DUMP_KEY_LEN + 1];
    apr_uint64_t gen;
    int manifest, n;

    if (!set->rdump) {
        return HTTP_NOT_FOUND;
    }
    rs_status_read_set(set->slot, &cur);
    if (unavailable(r, &cur)) {
        return HTTP_SERVICE_UNAVAILABLE;
    }
    if (!cur.dump_gen) {
        if (part) {
            return HTTP_NOT_FOUND;
        }
        /* The first dump is not built yet. */
        apr_table_setn(r->err_headers_out, "Retry-After", "5");
        return HTTP_SERVICE_UNAVAILABLE;
    }
    if (!part) {
        return send_file(
            r,
            rs_statedir_dump_file(r->pool, rs_statedir_gen(r->pool, set->rdump_dir, cur.dump_gen)),
            0);
    }
    if (!(part = this_history(&cur, part))) {
        return HTTP_NOT_FOUND;
    }
    if (rs_parse_part(part, &gen, &n)) {
        /* A part of a Resource Dump Index: "<gen>-<n>.xml", kept while
         * its generation is on disk. */
        return gen > cur.dump_gen
                   ? HTTP_NOT_FOUND
                   : send_file(r,
                               rs_statedir_gen_file(
                                   r->pool, rs_statedir_gen(r->pool, set->rdump_dir, gen), n),
                               1);
    }
    if (!rs_parse_dump_part(part, key, &manifest)) {
        return HTTP_NOT_FOUND;
    }
    return send_package(r, set, &cur, key, manifest);
}

/* The Change Dump (rewritten when a package is added or expires), the
 * parts of a Change Dump Index, and the packages of closed Change Lists
 * of the entry's history with their manifest copies (never rewritten;
 * gone with their list). */
static int serve_cdump(request_rec *r, const rs_set_t *set, const char *part)
{
    rs_status_set_t cur;
    apr_int64_t id;
    int rev, manifest, n;

    if (!set->cdump) {
        return HTTP_NOT_FOUND;
    }
    rs_status_read_set(set->slot, &cur);
    if (unavailable(r, &cur)) {
        return HTTP_SERVICE_UNAVAILABLE;
    }
    if (!part) {
        if (!cur.cdump_ready) {
            /* The watcher has not written it in this history yet. */
            apr_table_setn(r->err_headers_out, "Retry-After", "5");
            return HTTP_SERVICE_UNAVAILABLE;
        }
        return send_file(r, rs_statedir_cdump_file(r->pool, set->cdump_dir, cur.history, 0, 0), 0);
    }
    if (!(part = this_history(&cur, part))) {
        return HTTP_NOT_FOUND;
    }
    if (rs_parse_cdump_index_part(part, &n)) {
        /* A part of the Change Dump Index, rewritten with changedump.xml;
         * 404 once the index no longer has it (rs_cdump.h). */
        return send_file(r, rs_statedir_cdump_part(r->pool, set->cdump_dir, cur.history, n), 0);
    }
    if (!rs_parse_cdump_part(part, &id, &rev, &manifest)) {
        return HTTP_NOT_FOUND;
    }
    /* Only the list's current revision is on disk: a package withdrawn
     * and rebuilt under a new name answers 404 at its old one. */
    return send_file(r,
                     rs_statedir_cdump_pkg(r->pool, set->cdump_dir, cur.history, id, rev, manifest),
                     manifest ? 2 : 3);
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
        return send_file(r, path, 0);
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
        return serve_dump(r, set, rp.arg);
    case RS_DOC_CHANGEDUMP:
    case RS_DOC_CHANGEDUMP_PART:
        return serve_cdump(r, set, rp.arg);
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
