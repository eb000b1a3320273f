/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_storeconf.c - ResourceSyncStore, ResourceSyncNodeName and
 * ResourceSyncFailover.
 *
 * All three are server config only (one store and one name per httpd
 * instance) and are kept in rs_global as given, unset (NULL) until a
 * directive sets them: a second use is a mistake (two files both setting
 * it), not an override, as for ResourceSyncStateDir.  rs_storeconf_resolve
 * turns them into what the processes use: rs_global.store, the one
 * rs_storecfg_t every opener of the store is handed (the watcher, its job
 * thread, the children, forked after post_config), and the node name.
 * The DSN may carry a password: no message here quotes it
 * (rs_storecfg_describe masks it).
 */
#include <string.h>
#include <apr_network_io.h>
#include <apr_strings.h>
#include "mod_resourcesync_storeconf.h"

#define NODE_NAME_MAX 64

const char *rs_storeconf_set_store(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                   const char *const argv[])
{
    rs_global_t *g = conf;
    const char *kind = argv[0], *dsn = argc > 1 ? argv[1] : NULL;

    (void)d;
    if (g->store_kind) {
        return apr_psprintf(cmd->pool,
                            "ResourceSyncStore %s: already set at %s (one store per httpd "
                            "instance)",
                            kind, g->store_where);
    }
    if (!strcasecmp(kind, RS_STORECFG_SQLITE)) {
        if (dsn) {
            return "ResourceSyncStore sqlite: takes no connection string (the store is "
                   "state.db in ResourceSyncStateDir)";
        }
        kind = RS_STORECFG_SQLITE;
    }
    else if (!strcasecmp(kind, RS_STORECFG_PGSQL)) {
        if (!dsn || !*dsn) {
            return "ResourceSyncStore pgsql: needs a connection string (e.g. ResourceSyncStore "
                   "pgsql \"host=db.example.org dbname=rs user=rs\")";
        }
        kind = RS_STORECFG_PGSQL;
    }
    else {
        return apr_psprintf(cmd->pool, "ResourceSyncStore: '%s' is not sqlite or pgsql", kind);
    }
    g->store_kind = kind;
    g->store_dsn = dsn;
    g->store_where = rs_cmd_where(cmd);
    return NULL;
}

/* A node name is a printable token: letters, digits and "-._:", as host
 * names are, so that it goes into every status format unescaped. */
static int node_name_ok(const char *name)
{
    apr_size_t n = strlen(name);
    return n > 0 && n <= NODE_NAME_MAX
           && strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._:")
                  == n;
}

const char *rs_storeconf_set_node(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                  const char *const argv[])
{
    rs_global_t *g = conf;

    (void)d;
    (void)argc;
    if (g->node_name) {
        return apr_psprintf(cmd->pool, "ResourceSyncNodeName '%s': already set to '%s'", argv[0],
                            g->node_name);
    }
    if (!node_name_ok(argv[0])) {
        return apr_psprintf(cmd->pool,
                            "ResourceSyncNodeName: '%s' is not a name of 1 to %d letters, "
                            "digits, '-', '.', '_' or ':'",
                            argv[0], NODE_NAME_MAX);
    }
    g->node_name = argv[0];
    return NULL;
}

const char *rs_storeconf_set_failover(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                      const char *const argv[])
{
    static const rs_confval_t v = { RS_DELAY(
        RS_STORECFG_FAILOVER_MIN, RS_STORECFG_FAILOVER_MAX,
        "is not a duration from 2s to 1h (e.g. 10, 30s, 2m)") };
    rs_global_t *g = conf;
    apr_int64_t t;
    const char *err;

    (void)d;
    (void)argc;
    if (g->failover) {
        return apr_psprintf(cmd->pool, "ResourceSyncFailover %s: already set at %s", argv[0],
                            g->failover_where);
    }
    if ((err = rs_cmd_parse(cmd, &v, argv[0], &t))) {
        return err;
    }
    g->failover = t;
    g->failover_where = rs_cmd_where(cmd);
    return NULL;
}

const char *rs_storeconf_resolve(apr_pool_t *pconf, apr_pool_t *p)
{
    rs_global_t *g = &rs_global;
    char host[APRMAXHOSTLEN + 1];
    const char *why;

    if (g->store_kind && !strcmp(g->store_kind, RS_STORECFG_PGSQL)) {
        rs_storecfg_pgsql(&g->store, g->store_dsn);
        g->store_shown = rs_storecfg_describe(&g->store, pconf, g->state_dir);
        if ((why = rs_storecfg_check_driver(&g->store, p))) {
            return apr_psprintf(p, "ResourceSyncStore pgsql: %s", why);
        }
    }
    else {
        rs_storecfg_sqlite(&g->store, pconf, g->state_dir);
    }
    g->store.failover = g->failover ? g->failover : RS_STORECFG_FAILOVER;
    if (!g->node_name) {
        g->node_name = apr_gethostname(host, sizeof(host), p) == APR_SUCCESS && node_name_ok(host)
                           ? apr_pstrdup(pconf, host)
                           : "localhost";
    }
    return NULL;
}
