/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_discovery.h - robots.txt and host-meta, the discovery
 * documents of a virtual host outside its ResourceSync URLs
 * (ResourceSyncRobots, ResourceSyncHostMeta). */
#ifndef MOD_RESOURCESYNC_DISCOVERY_H
#define MOD_RESOURCESYNC_DISCOVERY_H

#include "mod_resourcesync.h"
#include "mod_resourcesync_handler.h"

#define RS_ROBOTS         "/robots.txt"
#define RS_HOST_META      "/.well-known/host-meta"
#define RS_HOST_META_JSON "/.well-known/host-meta.json"
/* The largest robots.txt the lines are appended to: what RFC 9309
 * (section 2.5) asks crawlers to read at least, 500 KiB.  Lines after it
 * might never be read; a larger file is left to httpd unchanged. */
#define RS_ROBOTS_MAX (500 * 1024)

/* What a server serves for discovery, in pconf (rs_srv_conf.discovery). */
typedef struct rs_discovery_t {
    /* "Sitemap: <Resource List URL>\n" per set, in declaration order;
     * NULL: ResourceSyncRobots off. */
    const char *robots;
    apr_size_t robots_len;
    /* host-meta (XRD) and host-meta.json (JRD); bodies NULL:
     * ResourceSyncHostMeta off. */
    rs_memdoc_t host_meta[2];
} rs_discovery_t;

/* post_config (real pass, after rs_docs_render): for each server with
 * sets and ResourceSyncRobots or ResourceSyncHostMeta on, render its
 * robots.txt lines and host-meta documents into pconf, and log one notice
 * per host-meta file the operator has in the DocumentRoot (it is served
 * instead).  Returns OK, or !OK when a document cannot be rendered
 * (logged). */
int rs_discovery_render(apr_pool_t *pconf, server_rec *s0);

/* translate_name: claims r for the module's handler (rs_handler_claim)
 * when it asks for a host-meta document of its server (on, with sets) and
 * the operator has no file, directory or link at that path in r's
 * DocumentRoot now (checked on every request: a file created later wins
 * too).  OK when claimed, else DECLINED. */
int rs_discovery_translate(request_rec *r);

/* fixups: claims GET/HEAD /robots.txt for rs_discovery_robots_handle when
 * ResourceSyncRobots is on and httpd would serve it as a static file: no
 * file (the lines alone) or a regular file up to RS_ROBOTS_MAX that no set
 * lists (a listed file's bytes are what the lists describe).  Access
 * control has admitted the request; a denied robots.txt never gets here.
 * Always DECLINED. */
int rs_discovery_robots_fixup(request_rec *r);

/* handler: robots.txt claimed by the fixup: the file's bytes as the run
 * user reads them (a newline added when the last line has none), then the
 * Sitemap lines; text/plain, a strong ETag of those bytes, Last-Modified
 * the latest of the file's mtime and ctime and the configuration's time;
 * 304 and HEAD without a body.  A file the run user cannot read is a 403,
 * logged with its cause. */
int rs_discovery_robots_handle(request_rec *r);

#endif
