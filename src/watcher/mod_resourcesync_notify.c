/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_notify.c - Change and Framework Notifications in the
 * watcher: the outbox (rs_notify) on the driver's store connection, the
 * set's sealing state (rs_notifyseal: when the open change notification
 * is sealed after ResourceSyncNotifyDelay, the sweep, the pruning; see
 * rs_notifyseal.h for the lifecycle) driven with the driver's clocks,
 * framework notifications, and the topic files children serve.
 *
 * Framework notifications are stored sealed right after the commit of
 * what they announce (a snapshot recorded, a Change List closed); one
 * lost between that commit and its own (kill -9 in between) is not sent
 * again: the next one follows.  At the first start of a set (no
 * framework notification in the store), one announces its Capability
 * List (created) and the Source Description (created at the virtual
 * host's very first start, else updated); a later start announces the
 * Capability Lists of sets removed from the configuration (deleted).
 * Their rs:ln
 * rel="up" is rs_notify's to decide from the entries (opts: the
 * Capability List and the Source Description's URL).
 *
 * Configuration changes: both documents are rendered in post_config,
 * before the watcher forks, so the watcher digests the very bytes the
 * children serve (set->cl_body, sc->sd_body).  At each watcher start
 * (rs_notifydigest decides) the SHA-256 of each is compared with the one recorded at the previous start
 * in <statedir>/notify/<set>/documents.digest; a difference is announced
 * as `updated` on the set's framework topic (every set of the virtual host
 * compares the Source Description itself, so all of them announce it).
 * The file is replaced only after the notification is stored: a crash in
 * between announces the change again at the next start, never loses it.
 * A set with framework notifications but no file (written by an older
 * module) records the digests without announcing anything.
 *
 * Topic files: <statedir>/notify/<set>/change.xml and framework.xml hold
 * the newest sealed payload of each topic (for ping hubs, the change
 * notifications sealed since the previous version, merged: topic_doc),
 * replaced atomically
 * (rs_file_replace: temporary file, fsync, rename, directory fsync) after
 * every seal and at the first poll (rebuilt from the store).
 */
#include <string.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include <apr_file_io.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_clsource.h"
#include "mod_resourcesync_drive.h"
#include "rs_file.h"
#include "rs_notify.h"
#include "rs_notifydest.h"
#include "rs_notifydigest.h"
#include "rs_recorder.h"
#include "rs_statedir.h"
#include "rs_time.h"

/* The outbox on the driver's connection and journal, opened again when
 * the driver replaced them (rs_storefail_reopen).  It is allocated from
 * the watcher's pool, not the store's (destroyed by a reopen), so it
 * never outlives its memory; the few bytes of each reopen stay. */
static rs_notify_t *box;
static rs_db_t *box_db;
static rs_journal_t *box_journal;

static rs_notify_t *outbox(rs_drive_t *d)
{
    if (!d->store || !d->journal) {
        return NULL;
    }
    if (box_db != d->store || box_journal != d->journal) {
        box = NULL;
        box_db = NULL;
        if (rs_notify_open(&box, d->store, d->journal, d->pool) == APR_SUCCESS) {
            box_db = d->store;
            box_journal = d->journal;
        }
    }
    return box;
}

/* The URL of the Source Description of the set's virtual host, in p. */
static const char *sd_url(const rs_set_t *set, apr_pool_t *p)
{
    rs_srv_conf *sc = ap_get_module_config(set->s->module_config, &resourcesync_module);
    return apr_pstrcat(p, sc->canonical, RS_WELL_KNOWN, NULL);
}

/* The set's options; the Source Description's URL (the rel="up" of
 * framework notifications about the Capability List) in p. */
static void opts(const wset_t *ws, rs_notify_opts_t *o, apr_pool_t *p)
{
    const rs_set_t *set = ws->set;
    memset(o, 0, sizeof(*o));
    o->set = set->name;
    rs_clsource_entry_opts(set, &o->entry);
    o->capability_url = set->capability_url;
    o->description_url = sd_url(set, p);
    o->max_entries = set->max_entries;
}

apr_status_t rs_notifyw_reset(rs_drive_t *d)
{
    rs_notify_t *n = outbox(d);
    return n ? rs_notify_reset(n) : APR_EGENERAL;
}

static void poll_done(wset_t *ws, apr_pool_t *p, int what);

void rs_notifyw_attach(wset_t *ws, rs_recorder_t *rc)
{
    rs_notify_opts_t o;
    rs_notify_t *n;
    if (rc && ws->set->notify && (n = outbox(ws->d))) {
        /* What an earlier watcher left open is sealed before this one
         * journals anything (its startup reconciliation comes first). */
        if (!ws->notify.started) {
            opts(ws, &o, ws->d->iter);
            poll_done(
                ws, ws->d->iter,
                rs_notifyseal_start(&ws->notify, n, &o, rs_time_mono(), ws->log, ws->d->iter));
        }
        rs_recorder_notify(rc, n, ws->set->max_entries);
    }
}

void rs_notifyw_changed(wset_t *ws, rs_recorder_t *rc)
{
    if (ws->set->notify) {
        rs_notifyseal_changed(&ws->notify, rs_recorder_appended(rc), ws->set->notify_delay,
                              rs_time_mono());
    }
}

apr_time_t rs_notifyw_next(const wset_t *ws)
{
    return ws->set->notify ? rs_notifyseal_next(&ws->notify) : 0;
}

/* ----------------------------------------------------------- topic files */

/* Whether the set publishes to a hub in ping mode. */
static int has_ping_hub(const rs_set_t *set)
{
    int i;
    for (i = 0; set->notify_pub && i < set->notify_pub->nelts; i++) {
        if (APR_ARRAY_IDX(set->notify_pub, i, rs_notify_hub_t).ping) {
            return 1;
        }
    }
    return 0;
}

/* What the topic serves, *x (x->id 0: nothing new to write).  The
 * framework topic, and the change topic of a set without ping hubs: the
 * newest sealed notification.  The change topic of a set with ping hubs,
 * which fetch the topic when pinged (when they like) and keep only what
 * they fetched: every version of the file covers the interval right after
 * the previous version's (Change Notification 1.0.1, section 3:
 * "Consecutive change notifications sent by the Source must cover
 * consecutive and non-overlapping temporal from/until intervals"), the
 * change notifications sealed since it was written merged into one
 * (rs_notify_window, at most ResourceSyncMaxEntries entries, the newest
 * always), and the delivery pings once per version (rs_deliver_shown).
 * In a new watcher the first version starts after the oldest ping hub's
 * cursor (what every ping hub has been pinged for).  ARCHITECTURE.md
 * "Ping hubs and the change topic" says what this can and cannot
 * promise. */
static apr_status_t topic_doc(wset_t *ws, apr_pool_t *p, rs_notify_t *n, const char *topic,
                              rs_notification_t *x)
{
    apr_int64_t since = ws->notify.shown;
    rs_notify_opts_t o;
    apr_status_t rv;
    int found = 1;

    if (strcmp(topic, RS_NOTIFY_CHANGE) || !has_ping_hub(ws->set)
        || (!since
            && (rs_notifydest_min_cursor(ws->d->store, ws->set->name, topic, RS_NOTIFYDEST_PING,
                                         &since, &found)
                    != APR_SUCCESS
                || !found))) {
        return rs_notify_latest(n, p, ws->set->name, topic, x);
    }
    opts(ws, &o, p);
    if ((rv = rs_notify_window(n, p, &o, since + 1, x)) == APR_SUCCESS && !x->id) {
        ws->notify.shown = since; /* nothing after it: the next version follows it */
        rs_deliver_shown(ws->set, topic, since);
    }
    return rv;
}

/* Replace the topic file with what the topic serves (topic_doc). */
static void write_topic(wset_t *ws, apr_pool_t *p, const char *topic)
{
    rs_notify_t *n = outbox(ws->d);
    rs_notification_t x;
    const char *path;
    apr_status_t rv;

    if (!n || (rv = topic_doc(ws, p, n, topic, &x)) != APR_SUCCESS) {
        rs_log_emit(ws->log, RS_LOG_ERR, n ? rv : APR_EGENERAL,
                    "set %s: cannot read its %s notifications", ws->set->name, topic);
        return;
    }
    if (!x.id) {
        return;
    }
    apr_dir_make_recursive(ws->set->notify_dir, APR_FPROT_OS_DEFAULT, p);
    path = rs_statedir_notify_topic(p, ws->set->notify_dir, topic);
    if ((rv = rs_file_replace_buf(p, path, x.payload, x.payload_len)) != APR_SUCCESS) {
        rs_log_emit(ws->log, RS_LOG_ERR, rv, "set %s: cannot write %s", ws->set->name, path);
    }
    else {
        if (!strcmp(topic, RS_NOTIFY_CHANGE)) {
            ws->notify.shown = x.id;
        }
        rs_deliver_shown(ws->set, topic, x.id);
        rs_followtopicw_put(ws, p, topic, (apr_uint64_t)x.id, path); /* for the other nodes */
    }
    rs_deliver_wakeup();
}

/* ------------------------------------------------- framework notifications */

/* Store a framework notification of entries and rewrite framework.xml. */
static apr_status_t store_framework(wset_t *ws, apr_pool_t *p, const apr_array_header_t *entries)
{
    rs_notify_t *n = outbox(ws->d);
    rs_notify_opts_t o;
    apr_status_t rv = APR_EGENERAL;

    opts(ws, &o, p);
    if (n
        && (rv = rs_notify_add_framework(n, p, &o, entries, apr_time_now(), NULL))
               == RS_LEASE_LOST) {
        rs_storefail_note(ws, rv, "storing a framework notification"); /* elsewhere now */
        return rv;
    }
    if (rv != APR_SUCCESS) {
        rs_log_emit(ws->log, RS_LOG_ERR, rv, "set %s: cannot store a framework notification",
                    ws->set->name);
        return rv;
    }
    write_topic(ws, p, RS_NOTIFY_FRAMEWORK);
    return APR_SUCCESS;
}

/* The Capability Lists the Source Description of set's virtual host
 * lists (all its sets), in p. */
static apr_array_header_t *sd_listed(apr_pool_t *p, const rs_srv_conf *sc)
{
    apr_array_header_t *a = apr_array_make(p, sc->sets->nelts, sizeof(const char *));
    int i;

    for (i = 0; i < sc->sets->nelts; i++) {
        APR_ARRAY_PUSH(a, const char *) = APR_ARRAY_IDX(sc->sets, i, rs_set_t *)->capability_url;
    }
    return a;
}

/* Whether the Source Description of set's virtual host is new: none of
 * its sets has a framework notification (none ever announced anything:
 * the very first start).  Decided once per virtual host and watcher,
 * before any set of it stores one, so every set starting with it
 * announces it `created`.  Sets without notifications leave no trace:
 * one whose virtual host only had such sets before announces it created
 * (the first notice of it on any topic). */
static int sd_new(wset_t *ws, apr_pool_t *p, const rs_srv_conf *sc)
{
    static apr_hash_t *seen; /* server_rec -> "1"/"0", the watcher's */
    const char *v;
    rs_notification_t x;
    int i, fresh = 1;

    if (!seen) {
        seen = apr_hash_make(ws->d->pool);
    }
    if ((v = apr_hash_get(seen, &ws->set->s, sizeof(server_rec *)))) {
        return *v == '1';
    }
    for (i = 0; fresh && i < sc->sets->nelts; i++) {
        const rs_set_t *o = APR_ARRAY_IDX(sc->sets, i, rs_set_t *);
        if (o->notify
            && (rs_notify_latest(outbox(ws->d), p, o->name, RS_NOTIFY_FRAMEWORK, &x) != APR_SUCCESS
                || x.id)) {
            fresh = 0;
        }
    }
    apr_hash_set(seen, apr_pmemdup(ws->d->pool, &ws->set->s, sizeof(server_rec *)),
                 sizeof(server_rec *), fresh ? "1" : "0");
    return fresh;
}

/* At the set's first framework check in this watcher: what changed
 * since the previous start is announced (rs_notifydigest decides): the
 * Capability List created (the set's first start) or updated, the Source
 * Description created (its very first start), or updated, and the
 * Capability Lists of sets removed from the configuration deleted
 * (Framework Notification 1.0.1, section 2: "deleted" for a resource that
 * no longer exists); the digests are recorded once the notification is
 * stored. */
static void first_framework(wset_t *ws, apr_pool_t *p)
{
    const rs_set_t *set = ws->set;
    rs_srv_conf *sc = ap_get_module_config(set->s->module_config, &resourcesync_module);
    apr_array_header_t *e = apr_array_make(p, 2, sizeof(rs_notify_fw_entry_t));
    const char *path = rs_statedir_notify_digests(p, set->notify_dir);
    const char *cur = rs_notifydigest_text(p, set->cl_body, set->cl_len, sc->sd_body, sc->sd_len,
                                           sd_listed(p, sc));
    const char *old = NULL;
    rs_notification_t x;
    apr_time_t now = apr_time_now();
    apr_status_t rv;
    int what, i;

    if (ws->notify.fw_checked || !outbox(ws->d)
        || rs_notify_latest(outbox(ws->d), p, set->name, RS_NOTIFY_FRAMEWORK, &x) != APR_SUCCESS) {
        return;
    }
    ws->notify.fw_checked = 1;
    if (x.id && (rv = rs_notifydigest_read(p, path, &old)) != APR_SUCCESS) {
        rs_log_emit(ws->log, RS_LOG_ERR, rv, "set %s: cannot read %s", set->name, path);
        return;
    }
    what = rs_notifydigest_decide(p, x.id != 0, !x.id && sd_new(ws, p, sc), old, cur);
    if (what & (RS_NOTIFYDIGEST_CL_CREATED | RS_NOTIFYDIGEST_CL_UPDATED)) {
        rs_notifyw_fw_add(e, set->capability_url,
                          what & RS_NOTIFYDIGEST_CL_CREATED ? "created" : "updated",
                          "capabilitylist", now, NULL);
    }
    if (what & RS_NOTIFYDIGEST_CL_GONE) {
        apr_array_header_t *gone = rs_notifydigest_gone(p, old, cur);
        for (i = 0; i < gone->nelts; i++) {
            rs_notifyw_fw_add(e, APR_ARRAY_IDX(gone, i, const char *), "deleted", "capabilitylist",
                              now, NULL);
        }
    }
    if (what & (RS_NOTIFYDIGEST_SD_CREATED | RS_NOTIFYDIGEST_SD_UPDATED)) {
        rs_notifyw_fw_add(e, sd_url(set, p),
                          what & RS_NOTIFYDIGEST_SD_CREATED ? "created" : "updated", "description",
                          now, NULL);
    }
    if (!(what & RS_NOTIFYDIGEST_RECORD)
        || (e->nelts && store_framework(ws, p, e) != APR_SUCCESS)) {
        return;
    }
    apr_dir_make_recursive(set->notify_dir, APR_FPROT_OS_DEFAULT, p);
    if ((rv = rs_file_replace_buf(p, path, cur, strlen(cur))) != APR_SUCCESS) {
        rs_log_emit(ws->log, RS_LOG_ERR, rv, "set %s: cannot write %s", set->name, path);
    }
}

void rs_notifyw_framework(wset_t *ws, apr_pool_t *p, const apr_array_header_t *entries)
{
    if (!ws->set->notify || !entries->nelts) {
        return;
    }
    first_framework(ws, p);
    store_framework(ws, p, entries);
}

void rs_notifyw_fw_add(apr_array_header_t *entries, const char *loc, const char *change,
                       const char *capability, apr_time_t datetime, const char *index)
{
    rs_notify_fw_entry_t *e = apr_array_push(entries);
    e->loc = loc;
    e->change = change;
    e->capability = capability;
    e->datetime = datetime;
    e->index = index;
}

/* ------------------------------------------------------------- sealing */

/* What a poll of the sealing state asks for (RS_NOTIFYSEAL_*): at the
 * set's first poll in this watcher the topic files are rebuilt from the
 * store and the framework check runs; after a seal the change topic's
 * file is rewritten. */
static void poll_done(wset_t *ws, apr_pool_t *p, int what)
{
    if (what & RS_NOTIFYSEAL_STARTED) {
        write_topic(ws, p, RS_NOTIFY_CHANGE);
        first_framework(ws, p);
        write_topic(ws, p, RS_NOTIFY_FRAMEWORK);
    }
    else if (what & RS_NOTIFYSEAL_SEALED) {
        write_topic(ws, p, RS_NOTIFY_CHANGE);
    }
}

void rs_notifyw_poll(wset_t *ws, apr_pool_t *p, apr_time_t now)
{
    rs_notify_opts_t o;
    rs_notify_t *n;

    if (!ws->set->notify || ws->retry.err || !(n = outbox(ws->d))) {
        return;
    }
    opts(ws, &o, p);
    poll_done(ws, p, rs_notifyseal_poll(&ws->notify, n, &o, now, apr_time_now(), ws->log, p));
}
