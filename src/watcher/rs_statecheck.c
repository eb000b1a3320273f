/* SPDX-License-Identifier: Apache-2.0 */
/* rs_statecheck.c - does the state store continue the published history?
 * See rs_statecheck.h for the lifecycle. */
#include <string.h>
#include <apr_strings.h>
#include <apr_file_info.h>
#include "rs_statecheck.h"
#include "rs_file.h"
#include "rs_notify.h"
#include "rs_parse.h"
#include "rs_statedir.h"

/* Whether any document of any history is on disk: an entry in a set's
 * directory below snapshots/ or changelists/. */
static int documents_on_disk(apr_pool_t *p, const char *top)
{
    apr_dir_t *d, *sd;
    apr_finfo_t fi, sfi;
    int found = 0;

    if (apr_dir_open(&d, top, p) != APR_SUCCESS) {
        return 0;
    }
    while (!found && apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        if (fi.filetype != APR_DIR || !strcmp(fi.name, ".") || !strcmp(fi.name, "..")
            || apr_dir_open(&sd, apr_pstrcat(p, top, "/", fi.name, NULL), p) != APR_SUCCESS) {
            continue;
        }
        while (apr_dir_read(&sfi, APR_FINFO_NAME, sd) == APR_SUCCESS) {
            if (strcmp(sfi.name, ".") && strcmp(sfi.name, "..")) {
                found = 1;
                break;
            }
        }
        apr_dir_close(sd);
    }
    apr_dir_close(d);
    return found;
}

/* Remove every set directory below top (snapshots/, changelists/ or changedumps/);
 * the watcher makes them again as it writes. */
static void remove_documents(apr_pool_t *p, const char *top)
{
    apr_dir_t *d;
    apr_finfo_t fi;

    if (apr_dir_open(&d, top, p) != APR_SUCCESS) {
        return;
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        if (strcmp(fi.name, ".") && strcmp(fi.name, "..")) {
            rs_file_remove_tree(p, apr_pstrcat(p, top, "/", fi.name, NULL));
        }
    }
    apr_dir_close(d);
    rs_file_sync_dir(top);
}

/* The highest generation directory of a set on disk (0: none). */
static apr_uint64_t newest_gen(apr_pool_t *p, const char *snap_dir)
{
    apr_dir_t *d;
    apr_finfo_t fi;
    apr_uint64_t max = 0;

    if (apr_dir_open(&d, snap_dir, p) != APR_SUCCESS) {
        return 0;
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        apr_int64_t g;
        if (fi.filetype == APR_DIR && rs_parse_int(fi.name, 1, APR_INT64_MAX, &g)
            && (apr_uint64_t)g > max) {
            max = (apr_uint64_t)g;
        }
    }
    apr_dir_close(d);
    return max;
}

/* Why the store is behind the published documents of its history, or
 * NULL: a closed Change List of that history on disk that the store does
 * not know (the open list's id or later). */
static const char *store_behind(const rs_statecheck_where_t *w, apr_pool_t *p,
                                rs_journal_t *journal, const char *history)
{
    int i;

    for (i = 0; i < w->nsets; i++) {
        const char *set = w->sets[i];
        apr_array_header_t *closed;
        rs_changelist_t openl;
        apr_dir_t *dir;
        apr_finfo_t fi;
        const char *why = NULL;

        if (rs_journal_lists(journal, p, set, &closed, &openl) != APR_SUCCESS
            || apr_dir_open(&dir, rs_statedir_clset(p, w->statedir, set), p) != APR_SUCCESS) {
            continue;
        }
        while (!why && apr_dir_read(&fi, APR_FINFO_NAME, dir) == APR_SUCCESS) {
            char h[RS_HISTORY_LEN + 1];
            apr_int64_t id;
            if (rs_statedir_is_cl_list(fi.name, h, &id) && !strcmp(h, history) && id >= openl.id) {
                why = apr_psprintf(p,
                                   "Change List %" APR_INT64_T_FMT " of set %s was "
                                   "published, but the store knows only %d closed lists of "
                                   "it (restored from an older copy, or its write-ahead "
                                   "log was lost)",
                                   id, set, closed->nelts);
            }
        }
        apr_dir_close(dir);
        if (why) {
            return why;
        }
    }
    return NULL;
}

const char *rs_statecheck_base_changed(const rs_statecheck_where_t *w, apr_pool_t *p,
                                       rs_db_t *store)
{
    int i;

    for (i = 0; w->bases && i < w->nsets; i++) {
        const char *old = NULL;
        /* The resources' own URLs change with the base (ResourceSync 1.1
         * section 2: a resource is identified by its URI), so every URL a
         * destination holds is another resource's now: it must take a new
         * baseline whatever is rewritten, and a new history tells it so
         * (the Change List Index begins after what it saw). */
        if (w->bases[i]
            && rs_db_meta_get(store, p, apr_pstrcat(p, RS_STATECHECK_BASE_META, w->sets[i], NULL),
                              &old)
                   == APR_SUCCESS
            && old && strcmp(old, w->bases[i])) {
            return apr_psprintf(p, "the base URLs of set %s changed from '%s' to '%s'", w->sets[i],
                                old, w->bases[i]);
        }
    }
    return NULL;
}

apr_status_t rs_statecheck_judge(const rs_statecheck_where_t *w, apr_pool_t *p, rs_db_t *store,
                                 rs_journal_t *journal, rs_statecheck_verdict_t *v)
{
    const char *statedir = w->statedir;
    char published[RS_HISTORY_LEN + 1];
    apr_status_t rv;
    int ondisk;

    memset(v, 0, sizeof(*v));
    if ((rv = rs_db_meta_get(store, p, RS_HISTORY_META, &v->stored)) != APR_SUCCESS) {
        rs_log_emit(w->log, RS_LOG_EMERG, rv,
                    "watcher: cannot read the history of the "
                    "state store in ResourceSyncStateDir '%s'",
                    statedir);
        v->stored = NULL;
        return rv;
    }
    if (v->stored && !rs_parse_history_id(v->stored)) {
        v->stored = NULL;
    }
    if (rs_history_read(p, rs_statedir_history(p, statedir), published) == APR_SUCCESS) {
        v->published = apr_pstrdup(p, published);
    }
    ondisk = documents_on_disk(p, rs_statedir_snapshots(p, statedir))
             || documents_on_disk(p, rs_statedir_changelists(p, statedir));
    if (!v->stored) {
        if (v->published || ondisk) {
            v->why = "the store is new (it was deleted, or written by a version without "
                     "histories)";
        }
    }
    else if (!v->published) {
        if (ondisk) {
            v->why =
                apr_psprintf(p, "%s is missing or unreadable", rs_statedir_history(p, statedir));
        }
    }
    else if (strcmp(v->stored, v->published)) {
        v->why = apr_psprintf(p, "the store holds history %s (it was replaced)", v->stored);
    }
    else if (!(v->why = store_behind(w, p, journal, v->published))) {
        v->why = rs_statecheck_base_changed(w, p, store);
    }
    return APR_SUCCESS;
}

/* Start a new history (see step 1 in rs_statecheck.h). */
static apr_status_t new_history(rs_statecheck_t *sc, const rs_statecheck_where_t *w, apr_pool_t *p,
                                rs_db_t *store, rs_journal_t *journal,
                                const rs_statecheck_verdict_t *v)
{
    const rs_statecheck_hooks_t *hk = w->hooks;
    const char *statedir = w->statedir;
    apr_status_t rv;
    int i;

    /* The journal goes with the old history: the next scan of each set is
     * a baseline, and the Change List Index starts at the new Resource
     * List's `at`, so a destination sees that it missed changes. */
    if ((rv = rs_journal_reset(journal)) != APR_SUCCESS
        || (hk && hk->forget && (rv = hk->forget(hk->baton)) != APR_SUCCESS)
        || (rv = rs_history_new(sc->history)) != APR_SUCCESS
        || (rv = rs_db_meta_put(store, RS_HISTORY_META, sc->history)) != APR_SUCCESS) {
        rs_log_emit(w->log, RS_LOG_EMERG, rv,
                    "watcher: cannot start a new history in the "
                    "state store of ResourceSyncStateDir '%s'",
                    statedir);
        return rv;
    }
    /* Generation numbers go on from the old history's: a child that read
     * the old entry just before it was emptied never finds a new
     * generation under an old part's number. */
    for (i = 0; hk && hk->gen_floor && i < w->nsets; i++) {
        hk->gen_floor(hk->baton, i, newest_gen(p, rs_statedir_snapset(p, statedir, w->sets[i])));
    }
    /* The topics' newest payloads belong to the old history's outbox (and
     * name its lists and base URLs): a topic is empty until the new
     * history's first notification.  Removed before adopt, which gives
     * an entry that was not seeded (other base URLs) the history under
     * which children serve the topic files. */
    for (i = 0; i < w->nsets; i++) {
        const char *ns = rs_statedir_notifyset(p, statedir, w->sets[i]);
        apr_file_remove(rs_statedir_notify_topic(p, ns, RS_NOTIFY_CHANGE), p);
        apr_file_remove(rs_statedir_notify_topic(p, ns, RS_NOTIFY_FRAMEWORK), p);
    }
    if (hk && hk->adopt) {
        hk->adopt(hk->baton, sc->history);
    }
    if (hk && hk->emptied) {
        hk->emptied(hk->baton);
    }
    remove_documents(p, rs_statedir_snapshots(p, statedir));
    remove_documents(p, rs_statedir_changelists(p, statedir));
    /* Change Dump packages belong to the old lists.  Resource Dump
     * generations stay: their history file keeps children from serving
     * them, and the new history's first dump reuses their unchanged
     * packages (a package's bytes do not depend on the history). */
    remove_documents(p, rs_statedir_changedumps(p, statedir));
    if ((rv = rs_history_write(p, rs_statedir_history(p, statedir), sc->history)) != APR_SUCCESS) {
        rs_log_emit(w->log, RS_LOG_EMERG, rv, "watcher: cannot write %s",
                    rs_statedir_history(p, statedir));
        return rv;
    }
    rs_log_emit(w->log, RS_LOG_WARN, 0,
                "state store %s does not continue the published "
                "history%s%s: %s; history %s starts, the documents of the old one are "
                "removed, and destinations must take a new baseline",
                w->store_shown ? w->store_shown : rs_statedir_db(p, statedir),
                v->published ? " " : "", v->published ? v->published : "", v->why, sc->history);
    return APR_SUCCESS;
}

/* Record set i's base URL (w->bases[i]) where it differs: in the store
 * (what rs_statecheck_base_changed compares), then in
 * <statedir>/base/<set> (what the seed of the status segment compares). */
static apr_status_t record_base(const rs_statecheck_where_t *w, apr_pool_t *p, rs_db_t *store,
                                int i)
{
    const char *key = apr_pstrcat(p, RS_STATECHECK_BASE_META, w->sets[i], NULL);
    const char *path = rs_statedir_setbase(p, w->statedir, w->sets[i]);
    const char *base = w->bases[i], *old = NULL;
    apr_size_t len = strlen(base), got = 0;
    char *buf = NULL;
    apr_status_t rv;

    if ((rv = rs_db_meta_get(store, p, key, &old)) == APR_SUCCESS && (!old || strcmp(old, base))) {
        rv = rs_db_meta_put(store, key, base);
    }
    if (rv != APR_SUCCESS
        || (rs_file_read_small(p, path, len + 1, &buf, &got) == APR_SUCCESS && got == len
            && !memcmp(buf, base, len))) {
        return rv;
    }
    rv = apr_dir_make_recursive(rs_statedir_bases(p, w->statedir), APR_FPROT_OS_DEFAULT, p);
    return rv == APR_SUCCESS ? rs_file_replace_buf(p, path, base, len) : rv;
}

/* record_base for every set that has base URLs. */
static apr_status_t record_bases(const rs_statecheck_where_t *w, apr_pool_t *p, rs_db_t *store)
{
    apr_status_t rv;
    int i;

    for (i = 0; w->bases && i < w->nsets; i++) {
        if (w->bases[i] && (rv = record_base(w, p, store, i)) != APR_SUCCESS) {
            rs_log_emit(w->log, RS_LOG_EMERG, rv,
                        "watcher: cannot record the base URLs of set %s in "
                        "ResourceSyncStateDir '%s'",
                        w->sets[i], w->statedir);
            return rv;
        }
    }
    return APR_SUCCESS;
}

apr_status_t rs_statecheck_start(rs_statecheck_t *sc, const rs_statecheck_where_t *w, apr_pool_t *p,
                                 rs_db_t *store, rs_journal_t *journal, apr_time_t now)
{
    const char *history = rs_statedir_history(p, w->statedir);
    rs_statecheck_verdict_t v;
    apr_finfo_t fi;
    apr_status_t rv;

    if ((rv = rs_statecheck_judge(w, p, store, journal, &v)) != APR_SUCCESS) {
        return rv;
    }
    if (v.why) {
        rv = new_history(sc, w, p, store, journal, &v);
    }
    else if (v.stored) {
        apr_cpystrn(sc->history, v.stored, sizeof(sc->history));
        rv = v.published ? APR_SUCCESS : rs_history_write(p, history, sc->history);
    }
    else if ((rv = rs_history_new(sc->history)) == APR_SUCCESS
             && (rv = rs_db_meta_put(store, RS_HISTORY_META, sc->history)) == APR_SUCCESS) {
        /* A new store, nothing published yet: its first history. */
        rv = rs_history_write(p, history, sc->history);
    }
    if (rv != APR_SUCCESS) {
        if (!v.why) {
            rs_log_emit(w->log, RS_LOG_EMERG, rv,
                        "watcher: cannot record the history of "
                        "the state store in ResourceSyncStateDir '%s'",
                        w->statedir);
        }
        return rv;
    }
    if ((rv = record_bases(w, p, store)) != APR_SUCCESS) {
        return rv;
    }
    if (w->hooks && w->hooks->adopt) {
        w->hooks->adopt(w->hooks->baton, sc->history);
    }
    /* Remember which file the store is, for rs_statecheck_lost. */
    sc->store_shown = w->store_shown;
    if (!w->store_shown
        && apr_stat(&fi, rs_statedir_db(p, w->statedir), APR_FINFO_IDENT, p) == APR_SUCCESS) {
        sc->db_dev = fi.device;
        sc->db_ino = fi.inode;
    }
    sc->next_check = now + RS_STATECHECK_INTERVAL;
    return APR_SUCCESS;
}

int rs_statecheck_lost(rs_statecheck_t *sc, const char *statedir, apr_pool_t *p, rs_db_t *store,
                       const rs_logger_t *log, apr_time_t now)
{
    const char *db, *why = NULL, *h = NULL;
    apr_finfo_t fi;
    apr_status_t rv;

    if (now < sc->next_check) {
        return 0;
    }
    sc->next_check = now + RS_STATECHECK_INTERVAL;
    db = sc->store_shown ? sc->store_shown : rs_statedir_db(p, statedir);
    if (sc->store_shown) {
        /* not a file: a replaced store shows by its history alone */
    }
    else if ((rv = apr_stat(&fi, db, APR_FINFO_IDENT, p)) != APR_SUCCESS) {
        why = APR_STATUS_IS_ENOENT(rv) ? "was deleted" : NULL;
    }
    else if (fi.device != sc->db_dev || fi.inode != sc->db_ino) {
        why = "was replaced by another file";
    }
    else if (rs_db_meta_get(store, p, RS_HISTORY_META, &h) == APR_SUCCESS && h
             && strcmp(h, sc->history)) {
        why = apr_psprintf(p, "now holds history %s", h);
    }
    if (why) {
        rs_log_emit(log, RS_LOG_WARN, 0,
                    "state store %s %s while the watcher ran "
                    "(history %s); restarting the watcher",
                    db, why, sc->history);
    }
    return why != NULL;
}
