/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_followtopic.c - the notification topics' files on the
 * nodes of a shared store (engine: rs_followtopic, rs_blob).
 *
 * Lifecycle, on the driver's thread only.  The writer stores each version
 * of a topic's file right after it replaced the file (write_topic).  A
 * set another node writes is "elsewhere" (mod_resourcesync_writer.c): its
 * status entry's topics mark was emptied with its documents, so children
 * answer the topics 503 instead of serving this node's own earlier
 * files; the first rs_followtopicw_poll makes both files the writer's
 * (or removes one the store holds no version of: an empty body then, as
 * the writer serves) and sets the mark; each later poll copies a newer
 * version over the file (atomically: children serve the old or the new
 * one).  A node that takes the set copies once more (rs_followtopic_take):
 * the file it serves until it writes a new version is the store's, also
 * when the previous writer stored one less than a poll before it
 * stopped; a store without a version gets this node's own file.
 */
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_follow.h"
#include "rs_followtopic.h"
#include "rs_notify.h"
#include "rs_statedir.h"
#include "rs_storecfg.h"

#define RS_FOLLOWTOPIC_EVERY apr_time_from_msec(250)
#define RS_FOLLOWTOPIC_RETRY apr_time_from_sec(2)

static const char *const topics[] = { RS_NOTIFY_CHANGE, RS_NOTIFY_FRAMEWORK };

static int followed(const wset_t *ws)
{
    return ws->set->notify && rs_storecfg_is_pgsql(&rs_global.store);
}

void rs_followtopicw_put(wset_t *ws, apr_pool_t *p, const char *topic, apr_uint64_t id,
                         const char *path)
{
    apr_status_t rv;

    if (!followed(ws)) {
        return;
    }
    rv = rs_followtopic_store(ws->d->store, p, ws->set->name, topic, id, path);
    if (rv == RS_LEASE_LOST) {
        rs_storefail_note(ws, rv, "storing a notification topic"); /* elsewhere now */
    }
    else if (rv != APR_SUCCESS && !ws->topics.store_err) {
        rs_log_emit(ws->log, RS_LOG_ERR, rv,
                    "set %s: cannot store its %s topic for the other nodes; they serve the "
                    "version before until the next one is stored",
                    ws->set->name, topic);
    }
    else if (rv == APR_SUCCESS && ws->topics.store_err) {
        rs_log_emit(ws->log, RS_LOG_NOTICE, 0, "set %s: storing its topics works again",
                    ws->set->name);
    }
    ws->topics.store_err = rv == RS_LEASE_LOST ? APR_SUCCESS : rv;
}

/* Both topics' files made the store's versions: APR_SUCCESS, or the
 * first failure (the files then as they were or copied). */
static apr_status_t copy_topics(wset_t *ws, apr_pool_t *p)
{
    apr_status_t rv = apr_dir_make_recursive(ws->set->notify_dir, APR_FPROT_OS_DEFAULT, p);
    int i;

    for (i = 0; rv == APR_SUCCESS && i < 2; i++) {
        rv = rs_followtopic_copy(ws->d->store, p, ws->set->name, topics[i],
                                 rs_statedir_notify_topic(p, ws->set->notify_dir, topics[i]), NULL);
        rv = rv == APR_ENOENT ? APR_SUCCESS : rv; /* never written: no file */
    }
    return rv;
}

void rs_followtopicw_poll(wset_t *ws, apr_pool_t *p, apr_time_t now)
{
    apr_status_t rv;

    if (!ws->elsewhere || !followed(ws)
        || !rs_follow_look(ws, &ws->topics.seen, &ws->topics.next, RS_FOLLOWTOPIC_EVERY, now)) {
        return;
    }
    rv = copy_topics(ws, p);
    if (rv == APR_EINCOMPLETE) {
        ws->topics.next = now + RS_FOLLOWTOPIC_EVERY; /* replaced while read: soon again */
        return;
    }
    if (rv != APR_SUCCESS) {
        if (!ws->topics.copy_err) {
            rs_log_emit(ws->log, RS_LOG_ERR, rv,
                        "set %s: cannot copy the writer's notification topics from the store; "
                        "trying again",
                        ws->set->name);
        }
        ws->topics.copy_err = rv;
        ws->topics.next = now + RS_FOLLOWTOPIC_RETRY;
        return;
    }
    if (ws->topics.copy_err) {
        rs_log_emit(ws->log, RS_LOG_NOTICE, 0,
                    "set %s: copying the writer's notification topics works again", ws->set->name);
        ws->topics.copy_err = APR_SUCCESS;
    }
    if (!ws->status.topics) {
        ws->status.topics = 1;
        rs_wset_status_put(ws);
    }
}

void rs_followtopicw_take(wset_t *ws, apr_pool_t *p)
{
    apr_status_t rv;
    int i;

    if (!followed(ws)) {
        return;
    }
    rv = apr_dir_make_recursive(ws->set->notify_dir, APR_FPROT_OS_DEFAULT, p);
    for (i = 0; rv == APR_SUCCESS && i < 2; i++) {
        rv = rs_followtopic_take(ws->d->store, p, ws->set->name, topics[i],
                                 rs_statedir_notify_topic(p, ws->set->notify_dir, topics[i]));
    }
    if (rv == RS_LEASE_LOST) {
        rs_storefail_note(ws, rv, "storing a notification topic"); /* lost at once */
    }
    else if (rv != APR_SUCCESS) {
        rs_log_emit(ws->log, RS_LOG_WARN, rv,
                    "set %s: cannot make its notification topics the store's versions; its "
                    "own are served until it writes new ones",
                    ws->set->name);
    }
}
