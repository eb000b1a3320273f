/* mod_resourcesync_notifyconf.c - the directives of publishing
 * notifications to hubs.
 *
 * ResourceSyncNotifyHub and ResourceSyncNotifyRetry are set options (in
 * the set's <Directory> section or at server level for every set): each
 * starts unset (NULL, RS_UNSET) and is merged by rs_config_merge_dir; a
 * set's hubs are the server level's followed by its section's.
 * ResourceSyncHubSignature is a server-level option of the built-in hub,
 * merged by rs_hubconf_merge.  rs_notifyconf_resolve turns them into the
 * set's resolved fields at post_config, before the documents are
 * rendered (the Capability List names the hubs), and give each hub the
 * address policy of publishing to it (rs_notifyconf_filter): the same
 * callback policy as the set's server's built-in hub (public addresses,
 * ResourceSyncHubAllowCallback), and the address the URL names literally
 * (the operator wrote it), so a hub's name re-pointed by its DNS cannot
 * make the watcher POST into the server's own network.
 */
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync.h"
#include "rs_hubaddr.h"
#include "rs_parse.h"

const char *rs_notifyconf_set_hub(cmd_parms *cmd, void *mconfig, const char *url,
                                  const char *mode)
{
    rs_dir_conf *dc = mconfig;
    const char *err = rs_directives_option_context(cmd, mconfig);
    rs_notify_hub_t *h;
    apr_uri_t u;

    if (err) {
        return err;
    }
    if (apr_uri_parse(cmd->pool, url, &u) != APR_SUCCESS || !u.scheme || !u.hostname
        || !*u.hostname || (strcasecmp(u.scheme, "http") && strcasecmp(u.scheme, "https"))
        || u.fragment || u.user) {
        return apr_psprintf(cmd->pool, "ResourceSyncNotifyHub: '%s' is not an absolute "
                            "http or https URL", url);
    }
    if (mode && strcasecmp(mode, "fat") && strcasecmp(mode, "ping")) {
        return apr_psprintf(cmd->pool, "ResourceSyncNotifyHub: '%s' is not fat or ping", mode);
    }
    if (!dc->notify_pub) {
        dc->notify_pub = apr_array_make(cmd->pool, 2, sizeof(rs_notify_hub_t));
    }
    h = apr_array_push(dc->notify_pub);
    h->url = apr_pstrdup(cmd->pool, url);
    h->ping = mode && !strcasecmp(mode, "ping");
    return NULL;
}

const char *rs_notifyconf_set_retry(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_dir_conf *dc = mconfig;
    const char *err = rs_directives_option_context(cmd, mconfig);
    apr_interval_time_t d;

    if (err) {
        return err;
    }
    if (!rs_parse_duration(arg, &d) || d <= 0) {
        return apr_psprintf(cmd->pool, "ResourceSyncNotifyRetry: '%s' is not a duration "
                            "(e.g. 3600, 30m, 12h, 1d)", arg);
    }
    dc->notify_retry = d;
    return NULL;
}

const char *rs_notifyconf_set_sig(cmd_parms *cmd, void *mconfig, const char *arg)
{
    static const char *const algos[] = { "sha1", "sha256", "sha384", "sha512", NULL };
    rs_srv_conf *sc = ap_get_module_config(cmd->server->module_config, &resourcesync_module);
    const char *err = ap_check_cmd_context(cmd, NOT_IN_DIR_LOC_FILE);
    int i;
    (void)mconfig;

    if (err) {
        return err;
    }
    for (i = 0; algos[i]; i++) {
        if (!strcasecmp(arg, algos[i])) {
            sc->hub_sig = algos[i];
            return NULL;
        }
    }
    return apr_psprintf(cmd->pool, "ResourceSyncHubSignature: '%s' is not sha1, sha256, "
                        "sha384 or sha512", arg);
}

const char *rs_notifyconf_sig(const rs_srv_conf *sc)
{
    return sc->hub_sig ? sc->hub_sig : "sha256";
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

void rs_notifyconf_resolve(apr_pool_t *pconf, rs_set_t *set)
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
        APR_ARRAY_PUSH(set->notify_hubs, const char *)
            = APR_ARRAY_IDX(set->notify_pub, i, rs_notify_hub_t).url;
    }
    if (rs_hubconf_on(sc)) {
        APR_ARRAY_PUSH(set->notify_hubs, const char *)
            = apr_pstrcat(pconf, sc->canonical, rs_config_prefix(sc), "/hub", NULL);
    }
}
