/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync.c - ResourceSync Source for Apache httpd 2.4.
 *
 * Module record and hook registration only; the work is done in
 * src/<folder>/mod_resourcesync_*.c (httpd glue) and src/<folder>/rs_*.c (engine), one folder
 * per subsystem (docs/ARCHITECTURE.md, "Layout").
 */
#define RS_MODULE_MAIN
#include <httpd.h>
#include <http_config.h>
#include <http_core.h>
#include <http_log.h>
#include <http_protocol.h>
#include <http_request.h>
#include <dlfcn.h>
#include <libxml/parser.h>
#include <mod_status.h>
#include "src/httpd/mod_resourcesync.h"
#include "src/httpd/mod_resourcesync_access.h"
#include "src/serve/mod_resourcesync_discovery.h"
#include "src/serve/mod_resourcesync_docs.h"
#include "src/serve/mod_resourcesync_handler.h"
#include "src/serve/mod_resourcesync_hub.h"
#include "src/serve/mod_resourcesync_childstore.h"
#include "src/serve/mod_resourcesync_openlist.h"
#include "src/httpd/mod_resourcesync_status.h"
#include "src/serve/mod_resourcesync_statuspage.h"
#include "src/watcher/mod_resourcesync_watcher.h"
#include "src/base/rs_hash.h"
#include "src/serve/mod_resourcesync_statusfmt.h"

#ifndef RS_VERSION
#define RS_VERSION "unknown"
#endif

static int rs_pre_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp)
{
    if (rs_config_pre(pconf, plog, ptemp) != OK || rs_status_pre(pconf) != APR_SUCCESS) {
        return !OK;
    }
    return OK;
}

static int rs_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s)
{
    (void)plog;
    rs_hash_forget_on(pconf);
    if (rs_config_resolve(pconf, ptemp, s, 1) != OK) {
        return !OK;
    }
    /* The first pass at startup only validates; the real one renders,
     * creates the status segment and forks the watcher. */
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG) {
        return OK;
    }
    rs_config_started();
    ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, s,
                 "mod_resourcesync/" RS_VERSION " (%d set%s) configured", rs_global.sets->nelts,
                 rs_global.sets->nelts == 1 ? "" : "s");
    if (!rs_global.sets->nelts) {
        return OK;
    }
    xmlInitParser();
    /* A restart that found the state directory unusable (logged) serves
     * what it holds, without a watcher to write there. */
    if (rs_docs_render(pconf, s) != OK || rs_discovery_render(pconf, s) != OK
        || rs_status_create(pconf, s) != OK
        || (!rs_global.state_unusable && rs_watcher_start(pconf, s) != OK)) {
        return !OK;
    }
    return OK;
}

static int rs_check_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s)
{
    (void)plog;
    return rs_config_resolve(pconf, ptemp, s, 0);
}

static void rs_child_init(apr_pool_t *p, server_rec *s)
{
    rs_status_child_init(p, s);
    rs_childstore_init(p);
}

static void rs_register_hooks(apr_pool_t *p)
{
    (void)p;
    /* httpd unloads and loads its modules again between configuration
     * passes and at restarts; libcurl (and what it links: TLS, IDN,
     * HTTP/2 libraries with thread-local data) then went with this module
     * each time.  Pinned once, it stays loaded for the life of the
     * process: its global state is set up once (curl_global_init counts
     * its calls), and no thread-local storage of an unloaded library is
     * left behind for tools that walk it (LeakSanitizer). */
    (void)dlopen("libcurl.so.4", RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    ap_hook_pre_config(rs_pre_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_check_config(rs_check_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_post_config(rs_post_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_child_init(rs_child_init, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_translate_name(rs_discovery_translate, NULL, NULL, APR_HOOK_FIRST);
    ap_hook_translate_name(rs_handler_translate, NULL, NULL, APR_HOOK_FIRST);
    ap_hook_map_to_storage(rs_handler_map, NULL, NULL, APR_HOOK_FIRST);
    ap_hook_post_perdir_config(rs_access_post_perdir, NULL, NULL, APR_HOOK_REALLY_FIRST);
    ap_hook_map_to_storage(rs_access_map_to_storage, NULL, NULL, APR_HOOK_REALLY_FIRST);
    ap_hook_open_htaccess(rs_access_open_htaccess, NULL, NULL, APR_HOOK_REALLY_FIRST);
    ap_hook_fixups(rs_handler_link, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_fixups(rs_discovery_robots_fixup, NULL, NULL, APR_HOOK_LAST);
    ap_hook_handler(rs_hub_handle, NULL, NULL, APR_HOOK_FIRST);
    ap_hook_handler(rs_handler_handle, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_handler(rs_discovery_robots_handle, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_handler(rs_statuspage_handle, NULL, NULL, APR_HOOK_MIDDLE);
    /* A ResourceSync section in mod_status' server-status, when loaded. */
    APR_OPTIONAL_HOOK(ap, status_hook, rs_statusfmt_hook, NULL, NULL, APR_HOOK_MIDDLE);
}

AP_DECLARE_MODULE(resourcesync) = {
    STANDARD20_MODULE_STUFF, rs_config_create_dir, rs_config_merge_dir, rs_config_create_srv,
    rs_config_merge_srv, rs_cmds, rs_register_hooks,
    /* A virtual host without any of the module's directives gets a config
     * of its own (created, then merged) instead of sharing the main
     * server's: sets and resolved URLs belong to the server that declares
     * them, never to a vhost that merely inherits. */
    AP_MODULE_FLAG_ALWAYS_MERGE
};
