/* mod_resourcesync_history.c - the watcher keeps one history per state store.
 *
 * A history (rs_history.h) is one unbroken life of the state store.  The
 * documents that never change (closed Change Lists, Resource List parts)
 * carry its id in their URLs and file names.  When the store does not
 * continue the documents already published, its journal sequences, list
 * ids and generations start over, and serving the old URLs with new
 * content would let a destination believe it is in step when it is not.
 *
 * Lifecycle, in the watcher:
 *   1. at start (rs_drive_history_start, after the store is opened and
 *      before any set is looked at) the store's id (meta "history") is
 *      compared with <statedir>/history and with the closed Change List
 *      files on disk.  The store does not continue them when it has no id
 *      although documents are on disk (deleted, or from a version without
 *      histories), when its id differs (replaced), or when a closed list
 *      of its id on disk is unknown to it (restored from an older copy,
 *      or its write-ahead log lost).  Then a new history starts: the
 *      journal forgotten (so each set's next scan is a new baseline, and
 *      the Change List Index begins after anything a destination saw),
 *      new id in the store, every set's status entry emptied and marked with it
 *      (children answer 404 for the old URLs and 503 until the new lists
 *      exist), the ring emptied, every document of the old history
 *      removed, then <statedir>/history written; one warning says so.
 *      A crash at any step leaves a store whose id differs from the file,
 *      so the next watcher starts over again;
 *   2. while running (rs_drive_history_lost, every few seconds) the store
 *      file's device and inode and the store's id are compared with those
 *      at start: a store deleted or replaced under the watcher makes it
 *      exit with RS_DRIVE_RESTART, and the next watcher takes step 1.
 */
#include <string.h>
#include <apr_strings.h>
#include <apr_file_info.h>
#include "mod_resourcesync_drive.h"
#include "rs_file.h"
#include "rs_history.h"
#include "rs_statedir.h"
#include "rs_time.h"

/* How often the running watcher looks at the store file. */
#define RS_HISTORY_CHECK apr_time_from_sec(2)

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
static apr_uint64_t newest_gen(apr_pool_t *p, const rs_set_t *set)
{
    apr_dir_t *d;
    apr_finfo_t fi;
    apr_uint64_t max = 0;

    if (apr_dir_open(&d, set->snap_dir, p) != APR_SUCCESS) {
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
static const char *store_behind(rs_drive_t *d, apr_pool_t *p, const char *history)
{
    int i;

    for (i = 0; i < d->nsets; i++) {
        const rs_set_t *set = APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *);
        apr_array_header_t *closed;
        rs_changelist_t openl;
        apr_dir_t *dir;
        apr_finfo_t fi;
        const char *why = NULL;

        if (rs_journal_lists(d->journal, p, set->name, &closed, &openl) != APR_SUCCESS
            || apr_dir_open(&dir, set->cl_dir, p) != APR_SUCCESS) {
            continue;
        }
        while (!why && apr_dir_read(&fi, APR_FINFO_NAME, dir) == APR_SUCCESS) {
            char h[RS_HISTORY_LEN + 1];
            apr_int64_t id;
            if (rs_statedir_is_cl_list(fi.name, h, &id) && !strcmp(h, history)
                && id >= openl.id) {
                why = apr_psprintf(p, "Change List %" APR_INT64_T_FMT " of set %s was "
                                   "published, but the store knows only %d closed lists of "
                                   "it (restored from an older copy, or its write-ahead "
                                   "log was lost)", id, set->name, closed->nelts);
            }
        }
        apr_dir_close(dir);
        if (why) {
            return why;
        }
    }
    return NULL;
}

/* Every set's status entry belongs to history: an entry of another one
 * (seeded from disk by post_config, or left by an earlier watcher) is
 * emptied, so that children serve nothing of it. */
static void status_adopt(rs_drive_t *d)
{
    int i;

    for (i = 0; i < d->nsets; i++) {
        const rs_set_t *set = APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *);
        rs_status_set_t e;
        rs_status_read_set(set->slot, &e);
        if (strcmp(e.history, d->history)) {
            char name[sizeof(e.name)];
            memcpy(name, e.name, sizeof(name));
            memset(&e, 0, sizeof(e));
            memcpy(e.name, name, sizeof(name));
            apr_cpystrn(e.history, d->history, sizeof(e.history));
            rs_status_write_set(set->slot, &e);
        }
    }
}

/* Start a new history (see step 1 above). */
static apr_status_t new_history(rs_drive_t *d, apr_pool_t *p, const char *old, const char *why)
{
    const char *statedir = rs_global.state_dir;
    apr_status_t rv;
    int i;

    /* The journal goes with the old history: the next scan of each set is
     * a baseline, and the Change List Index starts at the new Resource
     * List's `at`, so a destination sees that it missed changes. */
    if ((rv = rs_journal_reset(d->journal)) != APR_SUCCESS
        || (rv = rs_notifyw_reset(d)) != APR_SUCCESS
        || (rv = rs_history_new(d->history)) != APR_SUCCESS
        || (rv = rs_db_meta_put(d->store, RS_HISTORY_META, d->history)) != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, rv, d->s, RS_TAG "watcher: cannot start a "
                     "new history in the state store of ResourceSyncStateDir '%s'", statedir);
        return rv;
    }
    /* Generation numbers go on from the old history's: a child that read
     * the old entry just before it was emptied never finds a new
     * generation under an old part's number. */
    for (i = 0; i < d->nsets; i++) {
        const rs_set_t *set = APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *);
        rs_snapjob_gen_floor(d->store, p, set, newest_gen(p, set));
    }
    status_adopt(d);
    rs_status_ring_reset();
    remove_documents(p, rs_statedir_snapshots(p, statedir));
    remove_documents(p, rs_statedir_changelists(p, statedir));
    /* Change Dump packages belong to the old lists.  Resource Dump
     * generations stay: their history file keeps children from serving
     * them, and the new history's first dump reuses their unchanged
     * packages (a package's bytes do not depend on the history). */
    remove_documents(p, rs_statedir_changedumps(p, statedir));
    if ((rv = rs_history_write(p, rs_statedir_history(p, statedir), d->history))
        != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, rv, d->s, RS_TAG "watcher: cannot write %s",
                     rs_statedir_history(p, statedir));
        return rv;
    }
    ap_log_error(APLOG_MARK, APLOG_WARNING, 0, d->s, RS_TAG "state store %s does not "
                 "continue the published history%s%s: %s; history %s starts, the documents "
                 "of the old one are removed, and destinations must take a new baseline",
                 rs_statedir_db(p, statedir), old ? " " : "", old ? old : "", why,
                 d->history);
    return APR_SUCCESS;
}

/* Remember which file the store is, for rs_drive_history_lost. */
static void note_store_file(rs_drive_t *d, apr_pool_t *p)
{
    apr_finfo_t fi;

    if (apr_stat(&fi, rs_statedir_db(p, rs_global.state_dir), APR_FINFO_IDENT, p)
        == APR_SUCCESS) {
        d->db_dev = fi.device;
        d->db_ino = fi.inode;
    }
    d->next_check = rs_time_mono() + RS_HISTORY_CHECK;
}

apr_status_t rs_drive_history_start(rs_drive_t *d)
{
    apr_pool_t *p = d->iter;
    const char *statedir = rs_global.state_dir;
    const char *stored = NULL, *why = NULL;
    char published[RS_HISTORY_LEN + 1];
    apr_status_t rv, frv;
    int ondisk;

    if ((rv = rs_db_meta_get(d->store, p, RS_HISTORY_META, &stored)) != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, rv, d->s, RS_TAG "watcher: cannot read the "
                     "history of the state store in ResourceSyncStateDir '%s'", statedir);
        return rv;
    }
    if (stored && !rs_parse_history_id(stored)) {
        stored = NULL;
    }
    frv = rs_history_read(p, rs_statedir_history(p, statedir), published);
    ondisk = documents_on_disk(p, rs_statedir_snapshots(p, statedir))
             || documents_on_disk(p, rs_statedir_changelists(p, statedir));
    if (!stored) {
        if (frv == APR_SUCCESS || ondisk) {
            why = "the store is new (it was deleted, or written by a version without "
                  "histories)";
        }
    }
    else if (frv != APR_SUCCESS) {
        if (ondisk) {
            why = apr_psprintf(p, "%s is missing or unreadable",
                               rs_statedir_history(p, statedir));
        }
    }
    else if (strcmp(stored, published)) {
        why = apr_psprintf(p, "the store holds history %s (it was replaced)", stored);
    }
    else {
        why = store_behind(d, p, published);
    }
    if (why) {
        rv = new_history(d, p, frv == APR_SUCCESS ? published : NULL, why);
    }
    else if (stored) {
        apr_cpystrn(d->history, stored, sizeof(d->history));
        rv = frv == APR_SUCCESS ? APR_SUCCESS
             : rs_history_write(p, rs_statedir_history(p, statedir), d->history);
    }
    else if ((rv = rs_history_new(d->history)) == APR_SUCCESS
             && (rv = rs_db_meta_put(d->store, RS_HISTORY_META, d->history)) == APR_SUCCESS) {
        /* A new store, nothing published yet: its first history. */
        rv = rs_history_write(p, rs_statedir_history(p, statedir), d->history);
    }
    if (rv != APR_SUCCESS) {
        if (!why) {
            ap_log_error(APLOG_MARK, APLOG_EMERG, rv, d->s, RS_TAG "watcher: cannot record "
                         "the history of the state store in ResourceSyncStateDir '%s'",
                         statedir);
        }
        return rv;
    }
    status_adopt(d);
    note_store_file(d, p);
    apr_pool_clear(p);
    return APR_SUCCESS;
}

int rs_drive_history_lost(rs_drive_t *d, apr_time_t now)
{
    apr_pool_t *p = d->iter;
    const char *db = rs_statedir_db(p, rs_global.state_dir), *why = NULL, *h = NULL;
    apr_finfo_t fi;
    apr_status_t rv;

    if (now < d->next_check) {
        return 0;
    }
    d->next_check = now + RS_HISTORY_CHECK;
    if ((rv = apr_stat(&fi, db, APR_FINFO_IDENT, p)) != APR_SUCCESS) {
        why = APR_STATUS_IS_ENOENT(rv) ? "was deleted" : NULL;
    }
    else if (fi.device != d->db_dev || fi.inode != d->db_ino) {
        why = "was replaced by another file";
    }
    else if (rs_db_meta_get(d->store, p, RS_HISTORY_META, &h) == APR_SUCCESS && h
             && strcmp(h, d->history)) {
        why = apr_psprintf(p, "now holds history %s", h);
    }
    if (why) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, d->s, RS_TAG "state store %s %s while "
                     "the watcher ran (history %s); restarting the watcher", db, why,
                     d->history);
    }
    apr_pool_clear(p);
    return why != NULL;
}
