/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_notifyconf.h - the declarations of mod_resourcesync_notifyconf.c. */
#ifndef MOD_RESOURCESYNC_NOTIFYCONF_H
#define MOD_RESOURCESYNC_NOTIFYCONF_H

#include "mod_resourcesync.h"

/* mod_resourcesync_notifyconf.c: the publishing directives
 * (ResourceSyncNotifyHub and ResourceSyncNotifyRetry, set options;
 * ResourceSyncHubSignature, server level). */
#define RS_DEFAULT_NOTIFY_RETRY apr_time_from_sec(86400)
/* One ResourceSyncNotifyHub (rs_cmd_elem_fn: URL and optional mode into an
 * rs_notify_hub_t). */
const char *rs_notifyconf_parse_hub(cmd_parms *cmd, int argc, const char *const argv[], void *elem);
/* The algorithms of ResourceSyncHubSignature, NULL-terminated: the
 * directive stores the index of the one given. */
extern const char *const rs_notifyconf_sig_names[];
/* The transfer timeout of one delivery (ResourceSyncNotifyTimeout, default
 * RS_DEFAULT_NOTIFY_TIMEOUT). */
apr_interval_time_t rs_notifyconf_timeout(void);
/* The signature algorithm of the hub's deliveries (default sha256). */
const char *rs_notifyconf_sig(const rs_srv_conf *sc);
/* The address filter of publishing to a hub (rs_websub; baton: its
 * rs_notify_hub_t): the address the URL names literally, or one that
 * passes the set's server's callback policy. */
const char *rs_notifyconf_filter(void *baton, const unsigned char *addr, int len);
/* Fill set->notify_hubs (the URLs of set->notify_pub, then the built-in
 * hub's absolute URL, <canonical base><prefix>/hub, when its server has
 * ResourceSyncHub on; prefix: that server's ResourceSyncPrefix in force)
 * and apply the default of set->notify_retry; after the set's options and
 * URLs are resolved, before the documents are rendered. */
void rs_notifyconf_resolve(apr_pool_t *pconf, rs_set_t *set, const char *prefix);
/* NULL, or the message that refuses set's configuration: a
 * ResourceSyncNotifyHub in its own <Directory> section while the set has
 * no ResourceSyncNotify on (its section's value over the server level's,
 * read from the records: usable in check_config, before the options are
 * resolved).  In p. */
const char *rs_notifyconf_check_set(apr_pool_t *p, const rs_set_t *set);
/* Log at warn, for server s with sets none of which has notifications
 * (set->notify: after the options are resolved), each hub setting that
 * therefore never carries anything: ResourceSyncHub on, a server-level
 * ResourceSyncNotifyHub (the first), naming the server by its canonical
 * base.  Only in the real pass of post_config (once per start, in the
 * error log); a server without sets is not named (it may only inherit
 * the settings from the main server). */
void rs_notifyconf_warn_unpublished(server_rec *s);

/* At startup (not in `httpd -t`): a warning per ping hub of a set of s
 * with notifications on, saying what ping mode cannot promise. */
void rs_notifyconf_warn_ping(server_rec *s);
/* The value of a topic's Link header, on the topic's answers (children)
 * and on what the delivery thread sends (the watcher):
 * "<topic URL>; rel=\"self\"" and ", <hub>; rel=\"hub\"" for each of
 * set->notify_hubs (topic: "change" or "framework"). */
const char *rs_notifyconf_link_header(apr_pool_t *p, const rs_set_t *set, const char *topic);

#endif
