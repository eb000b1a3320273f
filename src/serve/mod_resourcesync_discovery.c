/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_discovery.c - robots.txt and host-meta.
 *
 * ResourceSync 1.1 section 6.3.4: a Resource List is a Sitemap, so a
 * "Sitemap:" line in robots.txt makes it discoverable; RFC 6415 host-meta
 * (the discovery of the 2012 draft) links a host to its Source
 * Description.  Both belong to a virtual host that declares sets and has
 * the directive on; a server without sets is untouched.
 *
 * Lifecycle: what depends on the configuration only is rendered once per
 * server generation in post_config, into pconf, after the Source
 * Description (whose URL host-meta names): the Sitemap lines, and the two
 * host-meta documents with a strong ETag each.  Children serve them from
 * memory.
 *
 * robots.txt is the operator's file when there is one, so the request
 * takes httpd's ordinary way (translate_name, the directory walk with its
 * Options and symbolic link rules, access control) and is claimed only in
 * fixups, once everything has admitted it: a robots.txt denied to the
 * client is denied by httpd before the module reads a byte of it.  The
 * handler runs in a child, as the run user, and reads the file the
 * request maps to on every request (it is small): its bytes and the lines
 * make the body, whose MD5 is the ETag, so the ETag changes when the file
 * or the lines change.  A robots.txt that a set lists is left unchanged,
 * since the lists describe its bytes (operators exclude it from the set to
 * get the lines).
 *
 * host-meta has no file of its own: translate_name claims the two paths,
 * as it claims /.well-known/resourcesync, unless the operator has a file
 * there, which then wins (checked on each request; a notice at startup).
 */
#include <errno.h>
#include <string.h>
#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>
#include <libxml/xmlwriter.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_access.h"
#include "mod_resourcesync_discovery.h"
#include "mod_resourcesync_docs.h"
#include "mod_resourcesync_handler.h"
#include "rs_json.h"

#define RS_ROBOTS_HANDLER "resourcesync-robots"
#define XRD_NS            "http://docs.oasis-open.org/ns/xri/xrd-1.0"
#define REL               "resourcesync"

static const char *const host_meta_paths[2] = { RS_HOST_META, RS_HOST_META_JSON };

/* The "Sitemap:" lines of sc's sets. */
static void render_robots(apr_pool_t *p, const rs_srv_conf *sc, rs_discovery_t *d)
{
    apr_array_header_t *parts = apr_array_make(p, sc->sets->nelts * 3, sizeof(const char *));
    int i;

    for (i = 0; i < sc->sets->nelts; i++) {
        APR_ARRAY_PUSH(parts, const char *) = "Sitemap: ";
        APR_ARRAY_PUSH(parts, const char *) = APR_ARRAY_IDX(sc->sets, i, rs_set_t *)->list_url;
        APR_ARRAY_PUSH(parts, const char *) = "\n";
    }
    d->robots = apr_array_pstrcat(p, parts, '\0');
    d->robots_len = strlen(d->robots);
}

static void memdoc(apr_pool_t *p, rs_memdoc_t *doc, const char *type, const char *body,
                   apr_size_t len)
{
    doc->type = type;
    doc->body = apr_pstrmemdup(p, body, len);
    doc->len = len;
    doc->etag = rs_docs_etag(p, doc->body, len);
}

/* RFC 6415 section 3: an XRD document whose one Link is the Source
 * Description. */
static int render_xrd(apr_pool_t *p, const char *sd, rs_memdoc_t *doc)
{
    xmlBufferPtr b = xmlBufferCreate();
    xmlTextWriterPtr w = b ? xmlNewTextWriterMemory(b, 0) : NULL;
    int ok = w && xmlTextWriterSetIndent(w, 1) >= 0
             && xmlTextWriterSetIndentString(w, BAD_CAST "  ") >= 0
             && xmlTextWriterStartDocument(w, "1.0", "UTF-8", NULL) >= 0
             && xmlTextWriterStartElement(w, BAD_CAST "XRD") >= 0
             && xmlTextWriterWriteAttribute(w, BAD_CAST "xmlns", BAD_CAST XRD_NS) >= 0
             && xmlTextWriterStartElement(w, BAD_CAST "Link") >= 0
             && xmlTextWriterWriteAttribute(w, BAD_CAST "rel", BAD_CAST REL) >= 0
             && xmlTextWriterWriteAttribute(w, BAD_CAST "type", BAD_CAST "application/xml") >= 0
             && xmlTextWriterWriteAttribute(w, BAD_CAST "href", BAD_CAST sd) >= 0
             && xmlTextWriterEndDocument(w) >= 0;

    if (w) {
        xmlFreeTextWriter(w); /* flushes into b */
    }
    if (ok) {
        memdoc(p, doc, "application/xrd+xml", (const char *)xmlBufferContent(b),
               (apr_size_t)xmlBufferLength(b));
    }
    if (b) {
        xmlBufferFree(b);
    }
    return ok ? 0 : -1;
}

/* RFC 6415 appendix A: the same as JRD. */
static void render_jrd(apr_pool_t *p, const char *sd, rs_memdoc_t *doc)
{
    const char *body = apr_pstrcat(p, "{\"links\":[{\"rel\":", rs_json_str(p, REL),
                                   ",\"type\":", rs_json_str(p, "application/xml"),
                                   ",\"href\":", rs_json_str(p, sd), "}]}\n", NULL);
    memdoc(p, doc, "application/json", body, strlen(body));
}

/* One notice per host-meta path where s's DocumentRoot has something of
 * the operator's (a file, a directory, a symbolic link: not followed). */
static void note_operator_files(apr_pool_t *p, server_rec *s)
{
    core_server_config *core = ap_get_core_module_config(s->module_config);
    apr_finfo_t fi;
    int i;

    for (i = 0; core->ap_document_root && i < 2; i++) {
        const char *path = apr_pstrcat(p, core->ap_document_root, host_meta_paths[i], NULL);
        if (apr_stat(&fi, path, APR_FINFO_LINK | APR_FINFO_TYPE, p) == APR_SUCCESS) {
            ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, s,
                         RS_TAG "ResourceSyncHostMeta: %s is the operator's own file; %s is "
                                "left to it (server %s)",
                         path, host_meta_paths[i], s->server_hostname);
        }
    }
}

int rs_discovery_render(apr_pool_t *pconf, server_rec *s0)
{
    server_rec *s;

    for (s = s0; s; s = s->next) {
        rs_srv_conf *sc = ap_get_module_config(s->module_config, &resourcesync_module);
        rs_discovery_t *d;
        const char *sd;

        if (!sc->sets->nelts || (sc->robots != 1 && sc->host_meta != 1)) {
            continue;
        }
        d = apr_pcalloc(pconf, sizeof(*d));
        if (sc->robots == 1) {
            render_robots(pconf, sc, d);
        }
        if (sc->host_meta == 1) {
            sd = apr_pstrcat(pconf, sc->canonical, RS_WELL_KNOWN, NULL);
            if (render_xrd(pconf, sd, &d->host_meta[0]) < 0) {
                ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, RS_TAG "cannot render host-meta");
                return !OK;
            }
            render_jrd(pconf, sd, &d->host_meta[1]);
            note_operator_files(pconf, s);
        }
        sc->discovery = d;
    }
    return OK;
}

int rs_discovery_translate(request_rec *r)
{
    rs_srv_conf *sc = ap_get_module_config(r->server->module_config, &resourcesync_module);
    const rs_memdoc_t *doc = NULL;
    apr_finfo_t fi;
    apr_status_t rv;
    int i;

    for (i = 0; sc && sc->discovery && r->uri && i < 2; i++) {
        if (sc->discovery->host_meta[i].body && !strcmp(r->uri, host_meta_paths[i])) {
            doc = &sc->discovery->host_meta[i];
        }
    }
    if (!doc) {
        return DECLINED;
    }
    /* Anything there, or what cannot be looked at, is the operator's. */
    rv = apr_stat(&fi, apr_pstrcat(r->pool, ap_document_root(r), r->uri, NULL),
                  APR_FINFO_LINK | APR_FINFO_TYPE, r->pool);
    if (!APR_STATUS_IS_ENOENT(rv) && !APR_STATUS_IS_ENOTDIR(rv)) {
        return DECLINED;
    }
    rs_handler_claim(r, doc);
    return OK;
}

int rs_discovery_robots_fixup(request_rec *r)
{
    rs_srv_conf *sc = ap_get_module_config(r->server->module_config, &resourcesync_module);
    rs_dir_conf *dc;

    if (!sc || !sc->discovery || !sc->discovery->robots || r->method_number != M_GET
        || strcmp(r->uri, RS_ROBOTS) || (r->handler && strcmp(r->handler, "default-handler"))
        || rs_access_internal(r)) {
        return DECLINED;
    }
    if (r->finfo.filetype == APR_REG) {
        if (r->finfo.size > RS_ROBOTS_MAX) {
            ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                          RS_TAG "%s has %" APR_OFF_T_FMT " bytes, more than crawlers read "
                                 "(%d): served without Sitemap lines",
                          r->filename, r->finfo.size, RS_ROBOTS_MAX);
            return DECLINED;
        }
        dc = ap_get_module_config(r->per_dir_config, &resourcesync_module);
        if (dc && dc->set && rs_handler_listed(r, dc->set)) {
            ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r,
                          RS_TAG "%s is listed by set %s: served without Sitemap lines",
                          r->filename, dc->set->name);
            return DECLINED;
        }
    }
    else if (r->finfo.filetype != APR_NOFILE) {
        return DECLINED; /* a directory, a device: httpd's */
    }
    r->handler = RS_ROBOTS_HANDLER;
    return DECLINED;
}

/* The bytes of the robots.txt r maps to into *buf (*len of them, at most
 * RS_ROBOTS_MAX) and the time of its last change: the later of its mtime
 * and ctime, since an mtime can be set back (cp -p, rsync -t) and
 * If-Modified-Since must not then answer 304 to new bytes.  The file may
 * change meanwhile: what is read is what the ETag is made of. */
static apr_status_t read_robots(request_rec *r, char **buf, apr_size_t *len, apr_time_t *mtime)
{
    apr_file_t *f;
    apr_finfo_t fi;
    /* Non-blocking: a FIFO swapped in since the directory walk must not
     * hold the child in open(); it is refused below. */
    apr_status_t rv = apr_file_open(
        &f, r->filename, APR_FOPEN_READ | APR_FOPEN_BINARY | APR_FOPEN_NONBLOCK, 0, r->pool);

    if (rv != APR_SUCCESS) {
        return rv;
    }
    rv = apr_file_info_get(&fi, APR_FINFO_SIZE | APR_FINFO_MTIME | APR_FINFO_CTIME | APR_FINFO_TYPE,
                           f);
    /* Replaced since the directory walk by something else, or grown. */
    if (rv == APR_SUCCESS && fi.filetype != APR_REG) {
        rv = APR_FROM_OS_ERROR(EINVAL);
    }
    else if (rv == APR_SUCCESS && fi.size > RS_ROBOTS_MAX) {
        rv = APR_FROM_OS_ERROR(EFBIG);
    }
    if (rv == APR_SUCCESS) {
        *buf = apr_palloc(r->pool, (apr_size_t)fi.size + 1);
        *mtime = fi.mtime > fi.ctime ? fi.mtime : fi.ctime;
        rv = apr_file_read_full(f, *buf, (apr_size_t)fi.size, len);
        if (APR_STATUS_IS_EOF(rv)) {
            rv = APR_SUCCESS; /* truncated meanwhile */
        }
    }
    apr_file_close(f);
    return rv;
}

int rs_discovery_robots_handle(request_rec *r)
{
    rs_srv_conf *sc;
    char *file = NULL;
    apr_size_t n = 0, len;
    apr_time_t mtime = 0;
    apr_status_t rv;
    char *body;

    if (!r->handler || strcmp(r->handler, RS_ROBOTS_HANDLER)) {
        return DECLINED;
    }
    sc = ap_get_module_config(r->server->module_config, &resourcesync_module);
    if (r->finfo.filetype == APR_REG && (rv = read_robots(r, &file, &n, &mtime)) != APR_SUCCESS
        && !APR_STATUS_IS_ENOENT(rv)) {
        const char *why = rv == APR_FROM_OS_ERROR(EINVAL) || rv == APR_FROM_OS_ERROR(EFBIG)
                              ? apr_psprintf(r->pool,
                                             ": since the request was mapped, it stopped being a "
                                             "regular file of at most %d bytes",
                                             RS_ROBOTS_MAX)
                              : "";
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, RS_TAG "cannot read %s%s", r->filename, why);
        return APR_STATUS_IS_EACCES(rv) ? HTTP_FORBIDDEN : HTTP_SERVICE_UNAVAILABLE;
    }
    len = n + (n && file[n - 1] != '\n') + sc->discovery->robots_len;
    body = apr_palloc(r->pool, len);
    if (n) {
        memcpy(body, file, n);
    }
    if (n && file[n - 1] != '\n') {
        body[n++] = '\n';
    }
    memcpy(body + n, sc->discovery->robots, sc->discovery->robots_len);
    return rs_handler_send(r, "text/plain", body, len, rs_docs_etag(r->pool, body, len),
                           mtime > rs_global.config_time ? mtime : rs_global.config_time);
}
