/* SPDX-License-Identifier: Apache-2.0 */
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
 * The hub's single values (ResourceSyncHub, ResourceSyncHubMaxBacklog,
 * ResourceSyncHubVerifyTimeout) are described in the directive table and
 * set by its shared setter; the functions below parse the directives of
 * several values and the elements of ResourceSyncHubAllowCallback.
 *
 * The callback policy at connect time (rs_hubconf_filter) is here too:
 * the intake's verifications and denials and the deliveries to
 * subscribers use the one function.
 */
#include <string.h>
#include <apr_strings.h>
#include <apr_uri.h>
#include "mod_resourcesync_cmd.h"
#include "mod_resourcesync_hubconf.h"
#include "rs_hubaddr.h"

void rs_hubconf_init(rs_srv_conf *c)
{
    c->hub = RS_UNSET;
    c->hub_lease_min = c->hub_lease_max = RS_UNSET;
    c->hub_allow = NULL;
    c->hub_backlog = RS_UNSET;
    c->hub_max_subs = c->hub_max_per_addr = c->hub_max_per_client = RS_UNSET;
    c->hub_sig = RS_UNSET;
}

void rs_hubconf_merge(rs_srv_conf *c, const rs_srv_conf *base, const rs_srv_conf *add)
{
    c->hub = add->hub != RS_UNSET ? add->hub : base->hub;
    c->hub_lease_min = add->hub_lease_min != RS_UNSET ? add->hub_lease_min : base->hub_lease_min;
    c->hub_lease_max = add->hub_lease_max != RS_UNSET ? add->hub_lease_max : base->hub_lease_max;
    c->hub_allow = add->hub_allow ? add->hub_allow : base->hub_allow;
    c->hub_backlog = add->hub_backlog != RS_UNSET ? add->hub_backlog : base->hub_backlog;
    c->hub_max_subs = add->hub_max_subs != RS_UNSET ? add->hub_max_subs : base->hub_max_subs;
    c->hub_max_per_addr = add->hub_max_per_addr != RS_UNSET ? add->hub_max_per_addr
                                                            : base->hub_max_per_addr;
    c->hub_max_per_client = add->hub_max_per_client != RS_UNSET ? add->hub_max_per_client
                                                                : base->hub_max_per_client;
    c->hub_sig = add->hub_sig != RS_UNSET ? add->hub_sig : base->hub_sig;
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
    return sc->hub_max_per_addr != RS_UNSET ? sc->hub_max_per_addr : RS_DEFAULT_HUB_MAX_PER_ADDR;
}

apr_int64_t rs_hubconf_max_per_client(const rs_srv_conf *sc)
{
    return sc->hub_max_per_client != RS_UNSET ? sc->hub_max_per_client
                                              : RS_DEFAULT_HUB_MAX_PER_CLIENT;
}

apr_uint32_t rs_hubconf_spool_max(void)
{
    return (apr_uint32_t)(rs_global.hub_spool_max ? rs_global.hub_spool_max : RS_DEFAULT_HUB_SPOOL);
}

apr_uint32_t rs_hubconf_spool_bytes(void)
{
    return (apr_uint32_t)(rs_global.hub_spool_kib ? rs_global.hub_spool_kib
                                                  : RS_DEFAULT_HUB_SPOOL_KIB)
           * 1024;
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

/* The numbers of the hub's limits. */
static const rs_confval_t requests = { RS_NUMBER(1, RS_HUB_MAX_COUNT, "requests") };
static const rs_confval_t subscriptions = { RS_NUMBER(1, RS_HUB_MAX_COUNT, "subscriptions") };

const char *rs_hubconf_set_lease(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                 const char *const argv[])
{
    static const rs_confval_t lease = { RS_DURATION("is not a duration (e.g. 300, 5m, 12h, "
                                                    "31d)") };
    rs_srv_conf *sc = conf;
    apr_int64_t lo, hi;
    const char *err;

    if ((err = rs_cmd_parse(cmd, &lease, argv[0], &lo))
        || (err = rs_cmd_parse(cmd, &lease, argv[1], &hi))) {
        return err;
    }
    /* Whole seconds, as the intake counts them. */
    lo = apr_time_sec(lo);
    hi = apr_time_sec(hi);
    if (lo > hi) {
        return apr_psprintf(cmd->pool,
                            "ResourceSyncHubLease: minimum '%s' is longer than "
                            "maximum '%s'",
                            argv[0], argv[1]);
    }
    sc->hub_lease_min = lo;
    sc->hub_lease_max = hi;
    return NULL;
}

const char *rs_hubconf_parse_allow(cmd_parms *cmd, int argc, const char *const argv[], void *elem)
{
    if (!rs_hubaddr_allow_parse(cmd->pool, argv[0], elem)) {
        return apr_psprintf(cmd->pool,
                            "ResourceSyncHubAllowCallback: '%s' is not a host "
                            "name, an IP address or a CIDR block (e.g. 10.0.0.0/8)",
                            argv[0]);
    }
    return NULL;
}

/* ResourceSyncHubMaxSubscriptions total [per-address [per-client]]: an
 * omitted limit is its default, or the total when that is smaller. */
const char *rs_hubconf_set_max_subs(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                    const char *const argv[])
{
    rs_srv_conf *sc = conf;
    apr_int64_t t, a = RS_DEFAULT_HUB_MAX_PER_ADDR, c = RS_DEFAULT_HUB_MAX_PER_CLIENT;
    const char *err;

    if (argc < 1 || argc > 3) {
        return "ResourceSyncHubMaxSubscriptions: one to three numbers (total, per callback "
               "address, per client address)";
    }
    if ((err = rs_cmd_parse(cmd, &subscriptions, argv[0], &t))
        || (argc > 1 && (err = rs_cmd_parse(cmd, &subscriptions, argv[1], &a)))
        || (argc > 2 && (err = rs_cmd_parse(cmd, &subscriptions, argv[2], &c)))) {
        return err;
    }
    if (argc > 1 && a > t) {
        return apr_psprintf(cmd->pool,
                            "ResourceSyncHubMaxSubscriptions: per-address '%s' is "
                            "larger than total '%s'",
                            argv[1], argv[0]);
    }
    if (argc > 2 && c > t) {
        return apr_psprintf(cmd->pool,
                            "ResourceSyncHubMaxSubscriptions: per-client '%s' is "
                            "larger than total '%s'",
                            argv[2], argv[0]);
    }
    sc->hub_max_subs = t;
    sc->hub_max_per_addr = a < t ? a : t;
    sc->hub_max_per_client = c < t ? c : t;
    return NULL;
}

const char *rs_hubconf_set_spool(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                 const char *const argv[])
{
    static const rs_confval_t kib = { RS_NUMBER(16, 1048576, "KiB") };
    rs_global_t *g = conf;
    apr_int64_t r, k = RS_DEFAULT_HUB_SPOOL_KIB;
    const char *err;

    if ((err = rs_cmd_parse(cmd, &requests, argv[0], &r))
        || (argc > 1 && (err = rs_cmd_parse(cmd, &kib, argv[1], &k)))) {
        return err;
    }
    g->hub_spool_max = r;
    g->hub_spool_kib = k;
    return NULL;
}

const char *rs_hubconf_set_rate(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                const char *const argv[])
{
    static const rs_confval_t per = { RS_DURATION("is not a duration (e.g. 60, 1m, 1h)") };
    rs_global_t *g = conf;
    apr_int64_t n, t;
    const char *err;

    if ((err = rs_cmd_parse(cmd, &requests, argv[0], &n))
        || (err = rs_cmd_parse(cmd, &per, argv[1], &t))) {
        return err;
    }
    g->hub_rate = n;
    g->hub_rate_per = t;
    return NULL;
}
