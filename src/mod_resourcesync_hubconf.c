/* mod_resourcesync_hubconf.c - the directives of the built-in hub.
 *
 * Every hub directive is a server-level one (main server or
 * <VirtualHost>, not in directory sections).  Each value starts as the
 * unset sentinel (rs_hubconf_init, from rs_config_create_srv); a virtual
 * host inherits what it does not set from the main server
 * (rs_hubconf_merge); the defaults are applied where a value is read
 * (rs_hubconf_*), so "unset" and "set to the default" stay apart.
 */
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync.h"
#include "rs_hubaddr.h"
#include "rs_parse.h"

#define DAY APR_INT64_C(86400)

void rs_hubconf_init(rs_srv_conf *c)
{
    c->hub = RS_UNSET;
    c->hub_lease_min = c->hub_lease_max = RS_UNSET;
    c->hub_allow = NULL;
    c->hub_backlog = RS_UNSET;
    c->hub_max_subs = c->hub_max_per_host = RS_UNSET;
}

void rs_hubconf_merge(rs_srv_conf *c, const rs_srv_conf *base, const rs_srv_conf *add)
{
    c->hub = add->hub != RS_UNSET ? add->hub : base->hub;
    c->hub_lease_min = add->hub_lease_min != RS_UNSET ? add->hub_lease_min
                                                       : base->hub_lease_min;
    c->hub_lease_max = add->hub_lease_max != RS_UNSET ? add->hub_lease_max
                                                       : base->hub_lease_max;
    c->hub_allow = add->hub_allow ? add->hub_allow : base->hub_allow;
    c->hub_backlog = add->hub_backlog != RS_UNSET ? add->hub_backlog : base->hub_backlog;
    c->hub_max_subs = add->hub_max_subs != RS_UNSET ? add->hub_max_subs : base->hub_max_subs;
    c->hub_max_per_host = add->hub_max_per_host != RS_UNSET ? add->hub_max_per_host
                                                             : base->hub_max_per_host;
    c->hub_sig = add->hub_sig ? add->hub_sig : base->hub_sig;
}

int rs_hubconf_on(const rs_srv_conf *sc)
{
    return sc->hub == 1;
}

apr_int64_t rs_hubconf_lease_min(const rs_srv_conf *sc)
{
    return sc->hub_lease_min != RS_UNSET ? sc->hub_lease_min : RS_DEFAULT_HUB_LEASE_MIN;
}

apr_int64_t rs_hubconf_lease_max(const rs_srv_conf *sc)
{
    return sc->hub_lease_max != RS_UNSET ? sc->hub_lease_max : RS_DEFAULT_HUB_LEASE_MAX;
}

apr_int64_t rs_hubconf_backlog(const rs_srv_conf *sc)
{
    return sc->hub_backlog != RS_UNSET ? sc->hub_backlog : RS_DEFAULT_HUB_BACKLOG;
}

apr_int64_t rs_hubconf_max_subs(const rs_srv_conf *sc)
{
    return sc->hub_max_subs != RS_UNSET ? sc->hub_max_subs : RS_DEFAULT_HUB_MAX_SUBS;
}

apr_int64_t rs_hubconf_max_per_host(const rs_srv_conf *sc)
{
    return sc->hub_max_per_host != RS_UNSET ? sc->hub_max_per_host
                                            : RS_DEFAULT_HUB_MAX_PER_HOST;
}

static rs_srv_conf *srv(cmd_parms *cmd)
{
    return ap_get_module_config(cmd->server->module_config, &resourcesync_module);
}

const char *rs_hubconf_set_hub(cmd_parms *cmd, void *mconfig, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, NOT_IN_DIR_LOC_FILE);
    (void)mconfig;
    if (err) {
        return err;
    }
    if (strcasecmp(arg, "on") && strcasecmp(arg, "off")) {
        return apr_psprintf(cmd->pool, "ResourceSyncHub: '%s' is not on or off", arg);
    }
    srv(cmd)->hub = !strcasecmp(arg, "on");
    return NULL;
}

/* A duration in whole seconds, or an error naming the directive and value. */
static const char *seconds(cmd_parms *cmd, const char *arg, apr_int64_t *out)
{
    apr_interval_time_t d;
    if (!rs_parse_duration(arg, &d)) {
        return apr_psprintf(cmd->pool, "%s: '%s' is not a duration (e.g. 300, 5m, 12h, 31d)",
                            cmd->cmd->name, arg);
    }
    *out = apr_time_sec(d);
    return NULL;
}

const char *rs_hubconf_set_lease(cmd_parms *cmd, void *mconfig, const char *min,
                                 const char *max)
{
    const char *err = ap_check_cmd_context(cmd, NOT_IN_DIR_LOC_FILE);
    apr_int64_t lo = 0, hi = 0;
    (void)mconfig;
    if (err || (err = seconds(cmd, min, &lo)) || (err = seconds(cmd, max, &hi))) {
        return err;
    }
    if (lo > hi) {
        return apr_psprintf(cmd->pool, "ResourceSyncHubLease: minimum '%s' is longer than "
                            "maximum '%s'", min, max);
    }
    srv(cmd)->hub_lease_min = lo;
    srv(cmd)->hub_lease_max = hi;
    return NULL;
}

const char *rs_hubconf_set_allow(cmd_parms *cmd, void *mconfig, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, NOT_IN_DIR_LOC_FILE);
    rs_srv_conf *sc = srv(cmd);
    rs_hubaddr_allow_t e;
    (void)mconfig;
    if (err) {
        return err;
    }
    if (!rs_hubaddr_allow_parse(cmd->pool, arg, &e)) {
        return apr_psprintf(cmd->pool, "ResourceSyncHubAllowCallback: '%s' is not a host "
                            "name, an IP address or a CIDR block (e.g. 10.0.0.0/8)", arg);
    }
    /* Several directives in one server add up. */
    if (!sc->hub_allow) {
        sc->hub_allow = apr_array_make(cmd->pool, 4, sizeof(rs_hubaddr_allow_t));
    }
    APR_ARRAY_PUSH(sc->hub_allow, rs_hubaddr_allow_t) = e;
    return NULL;
}

static const char *count(cmd_parms *cmd, const char *arg, const char *what, apr_int64_t *out)
{
    if (!rs_parse_int(arg, 1, APR_INT64_C(10000000), out)) {
        return apr_psprintf(cmd->pool, "%s: '%s' is not a number of %s from 1 to 10000000",
                            cmd->cmd->name, arg, what);
    }
    return NULL;
}

const char *rs_hubconf_set_backlog(cmd_parms *cmd, void *mconfig, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, NOT_IN_DIR_LOC_FILE);
    (void)mconfig;
    return err ? err : count(cmd, arg, "notifications", &srv(cmd)->hub_backlog);
}

const char *rs_hubconf_set_max_subs(cmd_parms *cmd, void *mconfig, const char *total,
                                    const char *per_host)
{
    const char *err = ap_check_cmd_context(cmd, NOT_IN_DIR_LOC_FILE);
    apr_int64_t t, h = RS_UNSET;
    (void)mconfig;
    if (err || (err = count(cmd, total, "subscriptions", &t))
        || (per_host && (err = count(cmd, per_host, "subscriptions", &h)))) {
        return err;
    }
    if (per_host && h > t) {
        return apr_psprintf(cmd->pool, "ResourceSyncHubMaxSubscriptions: per-host '%s' is "
                            "larger than total '%s'", per_host, total);
    }
    srv(cmd)->hub_max_subs = t;
    srv(cmd)->hub_max_per_host = per_host ? h : (t < RS_DEFAULT_HUB_MAX_PER_HOST ? t : RS_UNSET);
    return NULL;
}
