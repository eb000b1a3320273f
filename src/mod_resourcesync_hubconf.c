/* mod_resourcesync_hubconf.c - the directives of the built-in hub.
 *
 * Most hub directives are server-level ones (main server or
 * <VirtualHost>, not in directory sections): each virtual host has its
 * own policy (allowed callbacks, leases, subscription limits), applied
 * to the requests it received.  Each value starts as the unset sentinel
 * (rs_hubconf_init, from rs_config_create_srv); a virtual host inherits
 * what it does not set from the main server (rs_hubconf_merge); the
 * defaults are applied where a value is read (rs_hubconf_*), so "unset"
 * and "set to the default" stay apart.
 *
 * The limits of what all virtual hosts share (one spool, one intake:
 * ResourceSyncHubSpoolLimit, ResourceSyncHubRequestRate,
 * ResourceSyncHubVerifyTimeout) are main-server directives kept in
 * rs_global (0: unset).
 *
 * The callback policy at connect time (rs_hubconf_filter) is here too:
 * the intake's verifications and denials and the deliveries to
 * subscribers use the one function.
 */
#include <string.h>
#include <apr_strings.h>
#include <apr_uri.h>
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
    c->hub_max_subs = c->hub_max_per_addr = c->hub_max_per_client = RS_UNSET;
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
    c->hub_max_per_addr = add->hub_max_per_addr != RS_UNSET ? add->hub_max_per_addr
                                                             : base->hub_max_per_addr;
    c->hub_max_per_client = add->hub_max_per_client != RS_UNSET ? add->hub_max_per_client
                                                                 : base->hub_max_per_client;
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

apr_int64_t rs_hubconf_max_per_addr(const rs_srv_conf *sc)
{
    return sc->hub_max_per_addr != RS_UNSET ? sc->hub_max_per_addr
                                            : RS_DEFAULT_HUB_MAX_PER_ADDR;
}

apr_int64_t rs_hubconf_max_per_client(const rs_srv_conf *sc)
{
    return sc->hub_max_per_client != RS_UNSET ? sc->hub_max_per_client
                                              : RS_DEFAULT_HUB_MAX_PER_CLIENT;
}

apr_uint32_t rs_hubconf_spool_max(void)
{
    return (apr_uint32_t)(rs_global.hub_spool_max ? rs_global.hub_spool_max
                                                  : RS_DEFAULT_HUB_SPOOL);
}

apr_uint32_t rs_hubconf_spool_bytes(void)
{
    return (apr_uint32_t)(rs_global.hub_spool_kib ? rs_global.hub_spool_kib
                                                  : RS_DEFAULT_HUB_SPOOL_KIB) * 1024;
}

apr_int64_t rs_hubconf_rate(apr_interval_time_t *per)
{
    *per = rs_global.hub_rate ? rs_global.hub_rate_per : RS_DEFAULT_HUB_RATE_PER;
    return rs_global.hub_rate ? rs_global.hub_rate : RS_DEFAULT_HUB_RATE;
}

apr_interval_time_t rs_hubconf_verify_timeout(void)
{
    return rs_global.hub_verify_timeout ? rs_global.hub_verify_timeout
                                        : RS_DEFAULT_HUB_VERIFY_TIMEOUT;
}

const char *rs_hubconf_filter(void *baton, const unsigned char *addr, int len)
{
    const rs_srv_conf *sc = baton;
    return rs_hubaddr_check(sc->hub_allow, addr, len);
}

int rs_hubconf_host_allowed(apr_pool_t *p, const rs_srv_conf *sc, const char *url)
{
    apr_uri_t u;
    return sc->hub_allow && apr_uri_parse(p, url, &u) == APR_SUCCESS && u.hostname
           && rs_hubaddr_allow_host(sc->hub_allow, u.hostname);
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

/* ResourceSyncHubMaxSubscriptions total [per-address [per-client]]: an
 * omitted limit is its default, or the total when that is smaller. */
const char *rs_hubconf_set_max_subs(cmd_parms *cmd, void *mconfig, int argc,
                                    char *const argv[])
{
    const char *err = ap_check_cmd_context(cmd, NOT_IN_DIR_LOC_FILE);
    apr_int64_t t, a = RS_DEFAULT_HUB_MAX_PER_ADDR, c = RS_DEFAULT_HUB_MAX_PER_CLIENT;
    (void)mconfig;
    if (err) {
        return err;
    }
    if (argc < 1 || argc > 3) {
        return "ResourceSyncHubMaxSubscriptions: one to three numbers (total, per callback "
               "address, per client address)";
    }
    if ((err = count(cmd, argv[0], "subscriptions", &t))
        || (argc > 1 && (err = count(cmd, argv[1], "subscriptions", &a)))
        || (argc > 2 && (err = count(cmd, argv[2], "subscriptions", &c)))) {
        return err;
    }
    if (argc > 1 && a > t) {
        return apr_psprintf(cmd->pool, "ResourceSyncHubMaxSubscriptions: per-address '%s' is "
                            "larger than total '%s'", argv[1], argv[0]);
    }
    if (argc > 2 && c > t) {
        return apr_psprintf(cmd->pool, "ResourceSyncHubMaxSubscriptions: per-client '%s' is "
                            "larger than total '%s'", argv[2], argv[0]);
    }
    srv(cmd)->hub_max_subs = t;
    srv(cmd)->hub_max_per_addr = a < t ? a : t;
    srv(cmd)->hub_max_per_client = c < t ? c : t;
    return NULL;
}

const char *rs_hubconf_set_spool(cmd_parms *cmd, void *mconfig, const char *n,
                                 const char *kib)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    apr_int64_t r, k = RS_DEFAULT_HUB_SPOOL_KIB;
    (void)mconfig;
    if (err || (err = count(cmd, n, "requests", &r))) {
        return err;
    }
    if (kib && !rs_parse_int(kib, 16, 1048576, &k)) {
        return apr_psprintf(cmd->pool, "ResourceSyncHubSpoolLimit: '%s' is not a number of "
                            "KiB from 16 to 1048576", kib);
    }
    rs_global.hub_spool_max = r;
    rs_global.hub_spool_kib = k;
    return NULL;
}

const char *rs_hubconf_set_rate(cmd_parms *cmd, void *mconfig, const char *n,
                                const char *per)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    apr_interval_time_t d;
    apr_int64_t v;
    (void)mconfig;
    if (err || (err = count(cmd, n, "requests", &v))) {
        return err;
    }
    if (!rs_parse_duration(per, &d) || d <= 0) {
        return apr_psprintf(cmd->pool, "ResourceSyncHubRequestRate: '%s' is not a duration "
                            "(e.g. 60, 1m, 1h)", per);
    }
    rs_global.hub_rate = v;
    rs_global.hub_rate_per = d;
    return NULL;
}

const char *rs_hubconf_set_verify_timeout(cmd_parms *cmd, void *mconfig, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    apr_interval_time_t d;
    (void)mconfig;
    if (err) {
        return err;
    }
    if (!rs_parse_delay(arg, &d) || d < apr_time_from_msec(100) || d > apr_time_from_sec(600)) {
        return apr_psprintf(cmd->pool, "ResourceSyncHubVerifyTimeout: '%s' is not a duration "
                            "from 100ms to 10m", arg);
    }
    rs_global.hub_verify_timeout = d;
    return NULL;
}
