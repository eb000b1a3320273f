/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_storeconf.h - the declarations of
 * mod_resourcesync_storeconf.c. */
#ifndef MOD_RESOURCESYNC_STORECONF_H
#define MOD_RESOURCESYNC_STORECONF_H

#include "mod_resourcesync_cmd.h"

/* The directives' functions (rs_cmd_fn, scope RS_MAIN: conf is rs_global):
 * ResourceSyncStore sqlite | pgsql "DSN", ResourceSyncNodeName NAME. */
const char *rs_storeconf_set_store(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                   const char *const argv[]);
const char *rs_storeconf_set_node(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                  const char *const argv[]);
/* ResourceSyncFailover DURATION (scope RS_MAIN, once): how long a set's
 * lease lasts without a renewal, from 2 s to 1 h. */
const char *rs_storeconf_set_failover(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                      const char *const argv[]);

/* Once the configuration is read and the state directory known (from
 * rs_config_resolve, both passes): rs_global.store from the directive or
 * the default, its driver checked (apr_dbd_get_driver), and the node
 * name's default (the host name), the failover time's (10 s).  NULL, or the message that stops
 * startup (from p). */
const char *rs_storeconf_resolve(apr_pool_t *pconf, apr_pool_t *p);

#endif
