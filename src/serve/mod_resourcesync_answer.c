/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_answer.c - how the handler's documents are answered:
 * a state file served like a static file, and the answers every document
 * of a set shares (unavailable, not here yet, another history).  See
 * mod_resourcesync_answer.h. */
#include <apr_strings.h>
#include <http_core.h>
#include <http_log.h>
#include <http_protocol.h>
#include <http_request.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_answer.h"
#include "rs_parse.h"

void rs_answer_validators(request_rec *r, const char *type, const char *etag, apr_time_t mtime)
{
    ap_set_content_type(r, type);
    apr_table_setn(r->headers_out, "ETag", etag);
    ap_update_mtime(r, mtime);
    ap_set_last_modified(r);
}

int rs_answer_file(request_rec *r, const char *path, int immutable)
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
    rs_answer_validators(r, "application/xml",
                         apr_psprintf(r->pool,
                                      "\"%" APR_UINT64_T_HEX_FMT "-%" APR_UINT64_T_HEX_FMT "\"",
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
int rs_answer_unavailable(request_rec *r, const rs_status_set_t *cur)
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
int rs_answer_not_here_yet(request_rec *r, const rs_status_set_t *cur)
{
    if (cur->mode != RS_MODE_ELSEWHERE) {
        return HTTP_NOT_FOUND;
    }
    apr_table_setn(r->err_headers_out, "Retry-After", "1");
    return HTTP_SERVICE_UNAVAILABLE;
}

/* The rest of a part or list name after "<history>-", when history is
 * the current one; NULL otherwise. */
const char *rs_answer_history_rest(const rs_status_set_t *cur, const char *arg)
{
    char h[RS_HISTORY_LEN + 1];
    const char *rest = rs_parse_history(arg, h);
    return rest && *cur->history && !strcmp(h, cur->history) ? rest : NULL;
}
