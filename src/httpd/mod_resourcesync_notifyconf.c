/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_notifyconf.c - the directives of publishing
 * notifications to hubs.
 *
 * ResourceSyncNotifyHub and ResourceSyncNotifyRetry are set options (in
 * the set's <Directory> section or at server level for every set): each
 * starts unset (NULL, RS_UNSET) and is merged by rs_config_merge_dir; a
 * set's hubs are the server level's followed by its section's.
 * ResourceSyncHubSignature is a server-level option of the built-in hub,
 * merged by rs_hubconf_merge.  The directive table describes the retry
 * (a duration) and the signature (one of rs_notifyconf_sig_names); a hub
 * is parsed here (rs_notifyconf_parse_hub).  rs_notifyconf_resolve turns them into the
 * set's resolved fields at post_config, before the documents are
 * rendered (the Capability List names the hubs), and give each hub the
 * address policy of publishing to it (rs_notifyconf_filter): the same
 * callback policy as the set's server's built-in hub (public addresses,
 * ResourceSyncHubAllowCallback), and the address the URL names literally
 * (the operator wrote it), so a hub's name re-pointed by its DNS cannot
 * make the watcher POST into the server's own network.
 *
 * A hub only takes effect for a set with ResourceSyncNotify on; it does
 * not turn notifications on (they keep state and add topics to the
 * Capability List: a hub added for one purpose must not start publishing
 * a set unannounced).  So a hub in a set's own section without
 * notifications is a contradiction, refused in check_config and
 * post_config alike (rs_notifyconf_check_set, so `httpd -t` says it);
 * server-level hubs are defaults for every set of the server, where some
 * sets may publish and others not, and they and ResourceSyncHub are
 * inherited by virtual hosts, so a server whose sets all publish nothing
 * is warned about at the real start only (rs_notifyconf_warn_unpublished).
 */
#include <string.h>
#include <apr_strings.h>
#include <http_core.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_hubconf.h"
#include "mod_resourcesync_notifyconf.h"
#include "rs_hubaddr.h"

const char *const rs_notifyconf_sig_names[] = { "sha1", "sha256", "sha384", "sha512", NULL };

const char *rs_notifyconf_parse_hub(cmd_parms *cmd, int argc, const char *const argv[], void *elem)
{
    rs_notify_hub_t *h = elem;
    const char *url = argv[0], *mode = argc > 1 ? argv[1] : NULL;
    apr_uri_t u;

    if (apr_uri_parse(cmd->pool, url, &u) != APR_SUCCESS || !u.scheme || !u.hostname || !*u.hostname
        || (strcasecmp(u.scheme, "http") && strcasecmp(u.scheme, "https")) || u.fragment
        || u.user) {
        return apr_psprintf(cmd->pool,
                            "ResourceSyncNotifyHub: '%s' is not an absolute "
                            "http or https URL",
                            url);
    }
    if (mode && strcasecmp(mode, "fat") && strcasecmp(mode, "ping")) {
        return apr_psprintf(cmd->pool, "ResourceSyncNotifyHub: '%s' is not fat or ping", mode);
    }
    h->url = apr_pstrdup(cmd->pool, url);
    h->ping = mode && !strcasecmp(mode, "ping");
    return NULL;
}

apr_interval_time_t rs_notifyconf_timeout(void)
{
    return rs_global.notify_timeout ? rs_global.notify_timeout : RS_DEFAULT_NOTIFY_TIMEOUT;
}

const char *rs_notifyconf_sig(const rs_srv_conf *sc)
{
    return sc->hub_sig != RS_UNSET ? rs_notifyconf_sig_names[sc->hub_sig] : "sha256";
}

const char *rs_notifyconf_filter(void *baton, const unsigned char *addr, int len)
{
    const rs_notify_hub_t *h = baton;
    if (h->lit_len == len && !memcmp(h->lit, addr, (size_t)len)) {
        return NULL;
    }
    return rs_hubaddr_check(h->allow, addr, len);
}

/* The set's own copy of its hubs, each with the policy of its server. */
static void hub_policy(apr_pool_t *pconf, rs_set_t *set, const rs_srv_conf *sc)
{
    apr_array_header_t *own = apr_array_copy(pconf, set->notify_pub);
    int i;

    for (i = 0; i < own->nelts; i++) {
        rs_notify_hub_t *h = &APR_ARRAY_IDX(own, i, rs_notify_hub_t);
        apr_uri_t u;
        h->allow = sc->hub_allow;
        h->lit_len = 0;
        h->trusted = 0;
        if (apr_uri_parse(pconf, h->url, &u) == APR_SUCCESS && u.hostname) {
            h->trusted = rs_hubaddr_allow_host(sc->hub_allow, u.hostname);
            if (!rs_hubaddr_literal(u.hostname, h->lit, &h->lit_len)) {
                h->lit_len = 0;
            }
        }
    }
    set->notify_pub = own;
}

void rs_notifyconf_resolve(apr_pool_t *pconf, rs_set_t *set, const char *prefix)
{
    rs_srv_conf *sc = ap_get_module_config(set->s->module_config, &resourcesync_module);
    int i;

    if (set->notify_retry == RS_UNSET || set->notify_retry <= 0) {
        set->notify_retry = RS_DEFAULT_NOTIFY_RETRY;
    }
    if (set->notify_pub) {
        hub_policy(pconf, set, sc);
    }
    set->notify_hubs = apr_array_make(pconf, 2, sizeof(const char *));
    for (i = 0; set->notify_pub && i < set->notify_pub->nelts; i++) {
        APR_ARRAY_PUSH(set->notify_hubs, const char *) =
            APR_ARRAY_IDX(set->notify_pub, i, rs_notify_hub_t).url;
    }
    if (rs_hubconf_on(sc)) {
        APR_ARRAY_PUSH(set->notify_hubs, const char *) =
            apr_pstrcat(pconf, sc->canonical, prefix, "/hub", NULL);
    }
}

const char *rs_notifyconf_check_set(apr_pool_t *p, const rs_set_t *set)
{
    const rs_dir_conf *dflt = ap_get_module_config(set->s->lookup_defaults, &resourcesync_module);
    const apr_array_header_t *own = set->section->notify_pub;
    int notify = set->section->notify != RS_UNSET ? set->section->notify : dflt->notify;

    if (!own || !own->nelts || notify == 1) {
        return NULL;
    }
    return apr_psprintf(p,
                        "ResourceSyncNotifyHub %s (set %s, %s): the set has no "
                        "ResourceSyncNotify on, so nothing is ever published to this hub",
                        APR_ARRAY_IDX(own, 0, rs_notify_hub_t).url, set->name, set->where);
}

void rs_notifyconf_warn_unpublished(server_rec *s)
{
    const rs_srv_conf *sc = ap_get_module_config(s->module_config, &resourcesync_module);
    const rs_dir_conf *dflt = ap_get_module_config(s->lookup_defaults, &resourcesync_module);
    int i;

    if (!sc->sets->nelts || ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG) {
        return;
    }
    for (i = 0; i < sc->sets->nelts; i++) {
        if (APR_ARRAY_IDX(sc->sets, i, const rs_set_t *)->notify) {
            return;
        }
    }
    if (rs_hubconf_on(sc)) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
                     RS_TAG "server %s: ResourceSyncHub on, but none of its sets has "
                            "ResourceSyncNotify on, so its hub never delivers anything",
                     sc->canonical);
    }
    if (dflt->notify_pub && dflt->notify_pub->nelts) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
                     RS_TAG "server %s: ResourceSyncNotifyHub %s at server level, but none "
                            "of its sets has ResourceSyncNotify on, so nothing is ever "
                            "published to it",
                     sc->canonical, APR_ARRAY_IDX(dflt->notify_pub, 0, rs_notify_hub_t).url);
    }
}

void rs_notifyconf_warn_ping(server_rec *s)
{
    const rs_srv_conf *sc = ap_get_module_config(s->module_config, &resourcesync_module);
    int i, j;

    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG) {
        return;
    }
    for (i = 0; i < sc->sets->nelts; i++) {
        const rs_set_t *set = APR_ARRAY_IDX(sc->sets, i, const rs_set_t *);
        for (j = 0; set->notify && set->notify_pub && j < set->notify_pub->nelts; j++) {
            const rs_notify_hub_t *h = &APR_ARRAY_IDX(set->notify_pub, j, rs_notify_hub_t);
            if (!h->ping) {
                continue;
            }
            /* Change Notification 1.0.1, section 3: consecutive
             * notifications "must cover consecutive and non-overlapping
             * temporal from/until intervals"; a ping hub fetches the topic
             * when it likes, so no document the topic serves can promise
             * its subscribers that (ARCHITECTURE.md, "Ping hubs and the
             * change topic"). */
            ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
                         RS_TAG "ResourceSyncNotifyHub %s ping (set %s, %s): a ping hub "
                                "fetches the topics when it likes, so its subscribers may get "
                                "a notification twice (the same interval) or miss one (a gap "
                                "they see, filled from the Change Lists); use fat mode for "
                                "every notification exactly in order",
                         h->url, set->name, set->where);
        }
    }
}

const char *rs_notifyconf_link_header(apr_pool_t *p, const rs_set_t *set, const char *topic)
{
    const char *v = apr_pstrcat(p, "<", set->doc_base, "notify/", topic, ">; rel=\"self\"", NULL);
    int i;

    for (i = 0; set->notify_hubs && i < set->notify_hubs->nelts; i++) {
        v = apr_pstrcat(p, v, ", <", APR_ARRAY_IDX(set->notify_hubs, i, const char *),
                        ">; rel=\"hub\"", NULL);
    }
    /* The Change and Framework Notification 1.0.1 examples of a POST to
     * the hub (Examples 2 and 3) and of the hub's POST to a destination
     * (Examples 6 and 7) add the set's Capability List with
     * rel="resourcesync" after "self" and "hub". */
    return apr_pstrcat(p, v, ", <", set->capability_url, ">; rel=\"resourcesync\"", NULL);
}
