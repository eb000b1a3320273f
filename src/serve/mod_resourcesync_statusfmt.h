/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_statusfmt.h - the status page's model and formats:
 * shared by the handler (mod_resourcesync_statuspage.c), the model
 * (mod_resourcesync_statusmodel.c), its renderers and mod_status' hook
 * (mod_resourcesync_statusfmt.c).
 */
#ifndef MOD_RESOURCESYNC_STATUSFMT_H
#define MOD_RESOURCESYNC_STATUSFMT_H

#include "mod_resourcesync.h"

/* mod_resourcesync_statusmodel.c: the status page's data, one model for
 * every format.  A value is NULL when there is nothing to show. */
typedef struct rs_statkv_t {
    const char *key; /* CamelCase, no spaces */
    const char *val;
} rs_statkv_t;
typedef struct rs_statgroup_t {
    const char *name;       /* the set's name */
    apr_array_header_t *kv; /* rs_statkv_t */
} rs_statgroup_t;
typedef struct rs_statmodel_t {
    apr_array_header_t *global; /* rs_statkv_t: watcher, store, scan, ... */
    apr_array_header_t *sets;   /* rs_statgroup_t, in the segment's order */
    apr_array_header_t *lines;  /* rs_statkv_t, keys repeat: hub, delivery */
} rs_statmodel_t;
/* The model, from r->pool (never reads the store). */
rs_statmodel_t *rs_statusmodel_build(request_rec *r);

/* The watcher's state (RS_STATE_*) as a word: starting, scanning,
 * watching, degraded; "unknown" for anything else. */
const char *rs_statusmodel_state_name(apr_uint32_t s);
/* A set's mode (RS_MODE_*) as a word: starting, watching, rescans,
 * written-by-another-node. */
const char *rs_statusmodel_mode_name(apr_int32_t m);

/* mod_resourcesync_statusfmt.c: the model rendered into r.  html: a whole
 * page (page != 0) or a section of mod_status' page; auto: "Key: value"
 * lines, every key prefixed with prefix ("" on the own page); json: one
 * object (see docs/directives.md). */
void rs_statusfmt_html(request_rec *r, const rs_statmodel_t *m, int page);
void rs_statusfmt_auto(request_rec *r, const rs_statmodel_t *m, const char *prefix);
void rs_statusfmt_json(request_rec *r, const rs_statmodel_t *m);
/* mod_status' status_hook: the ResourceSync section of server-status. */
int rs_statusfmt_hook(request_rec *r, int flags);

#endif
