/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_setconf.h - the writer's set options in a shared store,
 * and a follower's refusal when its own differ (rs_setconf.h says why). */
#ifndef MOD_RESOURCESYNC_SETCONF_H
#define MOD_RESOURCESYNC_SETCONF_H

#include "mod_resourcesync_wset.h"

/* The options of set that a node must share with the writing node, as
 * rs_setconf_encode lines (in p): the URLs, digests, limits, periods,
 * dumps, notifications, links and mirrors, and the Capability List's
 * digest last (whatever else it says). */
const char *rs_setconfw_encode(apr_pool_t *p, const rs_set_t *set);

/* This node has just taken ws's set: record its options in the store
 * (store key "setconf:<set>", fenced).  A failure is the set's store
 * failure (noted; recorded again at the next take). */
void rs_setconfw_record(wset_t *ws, apr_pool_t *p);

/* ws's set is written by node `writer`: 1 when this node's options are
 * the ones it recorded (or it recorded none: an older writer), 0 when
 * they differ: the set's entry is then unavailable with the reason (its
 * documents answer 503), said once at warn per reason, until they agree
 * again (said at notice).  A store failure keeps the last answer. */
int rs_setconfw_check(wset_t *ws, apr_pool_t *p, const char *writer);

#endif
