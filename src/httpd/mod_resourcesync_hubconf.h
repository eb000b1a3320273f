/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_hubconf.h - the declarations of mod_resourcesync_hubconf.c. */
#ifndef MOD_RESOURCESYNC_HUBCONF_H
#define MOD_RESOURCESYNC_HUBCONF_H

#include "mod_resourcesync.h"

/* mod_resourcesync_hubconf.c: the hub's directives (server level). */
/* Every hub field of a new server config to its unset sentinel. */
void rs_hubconf_init(rs_srv_conf *c);
/* The hub fields of c: add's where set, else base's. */
void rs_hubconf_merge(rs_srv_conf *c, const rs_srv_conf *base, const rs_srv_conf *add);
/* ResourceSyncHub on in this server. */
int rs_hubconf_on(const rs_srv_conf *sc);
/* The values in force (the default where unset): lease bounds in
 * seconds, backlog in notifications, subscription limits. */
apr_int64_t rs_hubconf_lease_min(const rs_srv_conf *sc);
apr_int64_t rs_hubconf_lease_max(const rs_srv_conf *sc);
apr_int64_t rs_hubconf_backlog(const rs_srv_conf *sc);
apr_int64_t rs_hubconf_max_subs(const rs_srv_conf *sc);
apr_int64_t rs_hubconf_max_per_addr(const rs_srv_conf *sc);
apr_int64_t rs_hubconf_max_per_client(const rs_srv_conf *sc);
/* The global limits in force: requests and bytes in the spool, requests
 * per client (n per `per`), the verification's timeout. */
apr_uint32_t rs_hubconf_spool_max(void);
apr_uint32_t rs_hubconf_spool_bytes(void);
apr_int64_t rs_hubconf_rate(apr_interval_time_t *per);
apr_interval_time_t rs_hubconf_verify_timeout(void);
/* The callback policy of server sc at connect time, an rs_websub address
 * filter (baton: the rs_srv_conf): NULL when the address may be called
 * (public, or in a CIDR block of its ResourceSyncHubAllowCallback), else
 * why not. */
const char *rs_hubconf_filter(void *baton, const unsigned char *addr, int len);
/* Whether url's host is named in sc's ResourceSyncHubAllowCallback (then
 * called wherever it resolves to, without a filter). */
int rs_hubconf_host_allowed(apr_pool_t *p, const rs_srv_conf *sc, const char *url);
/* The directives' functions (rs_cmd_fn, mod_resourcesync_cmd.h):
 * ResourceSyncHubLease (conf: the rs_srv_conf), ResourceSyncHubMaxSubscriptions
 * (rs_srv_conf), ResourceSyncHubSpoolLimit and ResourceSyncHubRequestRate
 * (rs_global); and one ResourceSyncHubAllowCallback entry
 * (rs_cmd_elem_fn: an rs_hubaddr_allow_t). */
const char *rs_hubconf_set_lease(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                 const char *const argv[]);
const char *rs_hubconf_set_max_subs(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                    const char *const argv[]);
const char *rs_hubconf_set_spool(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                 const char *const argv[]);
const char *rs_hubconf_set_rate(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                const char *const argv[]);
const char *rs_hubconf_parse_allow(cmd_parms *cmd, int argc, const char *const argv[], void *elem);

#endif
