/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_setconf.c - the writer's set options in a shared
 * store, and a follower's refusal when its own differ.
 *
 * Lifecycle: every take of a set's lease by this node records the set's
 * options (rs_setconfw_record, in a fenced transaction: only the writer
 * records).  A node that finds the lease held by another compares its own
 * options with the recorded ones at each try (rs_writer_take, every
 * min(2 s, failover / 4)): while they differ, the set's entry is
 * unavailable, so that its children serve none of the writer's documents
 * beside a Capability List, Source Description and Link headers of
 * another configuration; it still takes the set over once the lease is
 * free (a rolling change of the configuration: the first node restarted
 * with the new options waits for the writer's restart, then writes the
 * set with its own options, which the others then share).  On SQLite
 * (one node) nothing is recorded or compared.
 */
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_setconf.h"
#include "rs_hash.h"
#include "rs_setconf.h"

#define SETCONF_KEY "setconf:"

static const char *duration(apr_pool_t *p, apr_interval_time_t t)
{
    return apr_psprintf(p, "%" APR_TIME_T_FMT " ms", apr_time_as_msec(t));
}

static const char *joined(apr_pool_t *p, const apr_array_header_t *a)
{
    return a && a->nelts ? apr_array_pstrcat(p, a, ' ') : "";
}

static const char *hash_names(apr_pool_t *p, unsigned mask)
{
    const char *s = "";
    int i;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        if (mask & (1u << i)) {
            s = apr_pstrcat(p, s, *s ? " " : "", rs_hash_name(i), NULL);
        }
    }
    return *s ? s : "none";
}

const char *rs_setconfw_encode(apr_pool_t *p, const rs_set_t *set)
{
    apr_array_header_t *it = apr_array_make(p, 24, sizeof(rs_setconf_item_t));
    const char *i64 = "%" APR_INT64_T_FMT;

    rs_setconf_add(it, "ResourceSyncBaseURL (the set's URL)", set->root_url);
    rs_setconf_add(it, "the documents' URL", set->doc_base);
    rs_setconf_add(it, "ResourceSyncHash", hash_names(p, set->hashes));
    rs_setconf_add(it, "ResourceSyncMaxEntries", apr_itoa(p, set->max_entries));
    rs_setconf_add(it, "ResourceSyncExclude", joined(p, set->excludes));
    rs_setconf_add(it, "ResourceSyncIncludeDotfiles", set->dotfiles ? "on" : "off");
    rs_setconf_add(it, "ResourceSyncDescribedBy", set->describedby);
    rs_setconf_add(it, "ResourceSyncSpecVersion", set->spec10 ? "1.0" : "1.1");
    rs_setconf_add(it, "ResourceSyncChangeListPeriod", duration(p, set->cl_period));
    rs_setconf_add(it, "ResourceSyncJournalRetention", duration(p, set->retention));
    rs_setconf_add(it, "ResourceSyncResourceDump", set->rdump ? duration(p, set->rdump) : "off");
    rs_setconf_add(it, "ResourceSyncDumpMaxEntries", apr_psprintf(p, i64, set->dump_entries));
    rs_setconf_add(it, "ResourceSyncDumpMaxSize", apr_psprintf(p, i64, set->dump_size));
    rs_setconf_add(it, "ResourceSyncDumpGrace", duration(p, set->dump_grace));
    rs_setconf_add(it, "ResourceSyncChangeDump", set->cdump ? "on" : "off");
    rs_setconf_add(it, "ResourceSyncNotify", set->notify ? "on" : "off");
    rs_setconf_add(it, "ResourceSyncNotifyDelay", duration(p, set->notify_delay));
    rs_setconf_add(it, "the notification hubs", joined(p, set->notify_hubs));
    rs_setconf_add(it, "ResourceSyncLink (digest)", set->links_fp);
    rs_setconf_add(it, "ResourceSyncMirror (digest)", set->mirrors_fp);
    rs_setconf_add(it, "the Capability List (ETag)", set->cl_etag);
    return rs_setconf_encode(p, it);
}

void rs_setconfw_record(wset_t *ws, apr_pool_t *p)
{
    apr_status_t rv = rs_db_meta_put_set(ws->d->store, ws->set->name,
                                         apr_pstrcat(p, SETCONF_KEY, ws->set->name, NULL),
                                         rs_setconfw_encode(p, ws->set));
    if (rv != APR_SUCCESS) {
        rs_storefail_note(ws, rv, "recording the set's options");
    }
}

/* The set's entry while its options differ (why non-NULL) or agree. */
static void refuse(wset_t *ws, const char *why)
{
    if (why) {
        ws->status.unavailable = 1;
        apr_cpystrn(ws->status.why, why, sizeof(ws->status.why));
    }
    else {
        ws->status.unavailable = 0;
        ws->status.why[0] = '\0';
    }
    rs_wset_status_put(ws);
}

int rs_setconfw_check(wset_t *ws, apr_pool_t *p, const char *writer)
{
    const char *stored = NULL, *diff, *why;
    char shown[sizeof(ws->status.why)];
    apr_status_t rv;

    rv = rs_db_meta_get(ws->d->store, p, apr_pstrcat(p, SETCONF_KEY, ws->set->name, NULL), &stored);
    if (rv != APR_SUCCESS) {
        return !ws->setconf_differs; /* (the next try reads it again) */
    }
    diff = stored ? rs_setconf_diff(p, rs_setconfw_encode(p, ws->set), stored,
                                    apr_pstrcat(p, "node ", writer ? writer : "?", NULL))
                  : NULL;
    if (!diff) {
        if (ws->setconf_differs) {
            ws->setconf_differs = 0;
            rs_log_emit(ws->log, RS_LOG_NOTICE, 0,
                        "set %s: its options agree with those of the writing node again; "
                        "this node serves the set",
                        ws->set->name);
            refuse(ws, NULL);
        }
        return 1;
    }
    why = apr_pstrcat(p, "its configuration differs from the writing node's: ", diff, NULL);
    /* Compared as the entry holds it (cut to its size). */
    apr_cpystrn(shown, why, sizeof(shown));
    if (!ws->setconf_differs || strcmp(ws->status.why, shown)) {
        rs_log_emit(ws->log, RS_LOG_WARN, 0,
                    "set %s: %s; this node serves none of the set's documents (503) until "
                    "every node declares the set alike",
                    ws->set->name, why);
        ws->setconf_differs = 1;
        refuse(ws, why);
    }
    return 0;
}
