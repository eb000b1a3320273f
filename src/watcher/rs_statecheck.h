/* SPDX-License-Identifier: Apache-2.0 */
/* rs_statecheck.h - does the state store continue the published history?
 *
 * A history (rs_history.h) is one unbroken life of the state store.  The
 * documents that never change (closed Change Lists, Resource List parts)
 * carry its id in their URLs and file names.  When the store does not
 * continue the documents already published, its journal sequences, list
 * ids and generations start over, and serving the old URLs with new
 * content would let a destination believe it is in step when it is not.
 * This unit makes the watcher's decisions about that, on the state
 * directory and the store it is given; what needs httpd (the status
 * segment, the snapshot jobs' generation floor) is done through hooks.
 *
 * Lifecycle, in the watcher:
 *   1. at start (rs_statecheck_start, after the store is opened and before
 *      any set is looked at) the store's id (meta RS_HISTORY_META) is
 *      compared with <statedir>/history and with the closed Change List
 *      files on disk (rs_statecheck_judge).  The store does not continue
 *      them when it has no id although documents are on disk (deleted, or
 *      from a version without histories), when its id differs (replaced),
 *      or when a closed list of its id on disk is unknown to it (restored
 *      from an older copy, or its write-ahead log lost), or when the base
 *      URLs of a set (scheme, host, port, path prefix: ServerName, Listen,
 *      SSL, ResourceSyncBaseURL, ResourceSyncPrefix, the set's URL-path)
 *      differ from those its documents were written with (meta
 *      RS_STATECHECK_BASE_META<set>).  Then a new
 *      history starts: the journal forgotten (so each set's next scan is a
 *      new baseline, and the Change List Index begins after anything a
 *      destination saw), hooks->forget, new id in the store, generation
 *      floors (hooks->gen_floor), every set's status entry emptied and
 *      marked with it (hooks->adopt: children answer 404 for the old URLs
 *      and 503 until the new lists exist), the ring emptied
 *      (hooks->emptied), every document of the old history removed (the
 *      notification topics' newest payloads too), then <statedir>/history
 *      written; one warning says so.  A crash at any step leaves a store
 *      whose id differs from the file, so the next watcher starts over
 *      again.  Last, every set's base URLs are recorded: in the store, then
 *      in <statedir>/base/<set> for the seed of the status segment, which
 *      does not seed a set whose file names other base URLs than its
 *      configuration (a crash before the file keeps the old one there:
 *      nothing seeded, the safe side);
 *   2. while running (rs_statecheck_lost, every RS_STATECHECK_INTERVAL)
 *      the store file's device and inode and the store's id are compared
 *      with those at start: a store deleted or replaced under the watcher
 *      makes it end, and the next watcher takes step 1.
 *
 * Only the watcher's driver thread uses a rs_statecheck_t.
 */
#ifndef RS_STATECHECK_H
#define RS_STATECHECK_H

#include <apr_pools.h>
#include <apr_file_info.h>
#include <apr_time.h>
#include "rs_db.h"
#include "rs_history.h"
#include "rs_journal.h"
#include "rs_log.h"

/* The store's meta key of a set's base URLs is this prefix and the set's
 * name (rs-tool forget-set removes it with the set's other keys). */
#define RS_STATECHECK_BASE_META "base:"

/* How often the running watcher looks at the store file. */
#define RS_STATECHECK_INTERVAL apr_time_from_sec(2)

/* The watcher's history and store file.  Zeroed before
 * rs_statecheck_start, which fills it; then read by the watcher (history
 * goes into the jobs) and advanced by rs_statecheck_lost. */
typedef struct rs_statecheck_t {
    char history[RS_HISTORY_LEN + 1]; /* the store's history id */
    apr_dev_t db_dev;                 /* the store file at start */
    apr_ino_t db_ino;
    apr_time_t next_check; /* of the store file, monotonic */
    /* The where's store_shown at start: a store that is no file of the
     * state directory (only its history is looked at while running). */
    const char *store_shown;
} rs_statecheck_t;

/* What the caller does at the steps of rs_statecheck_start.  Every member
 * may be NULL (nothing to do). */
typedef struct rs_statecheck_hooks_t {
    /* A new history, after the journal is reset and before the new id is
     * stored: forget what else went with the journal (the watcher: the
     * open change notifications).  A failure stops the new history. */
    apr_status_t (*forget)(void *baton);
    /* A new history: the snapshot generations of set i go on from gen,
     * the highest generation directory of the set on disk (0: none), so
     * that a child that read the old entry never finds a new generation
     * under an old part's number. */
    void (*gen_floor)(void *baton, int i, apr_uint64_t gen);
    /* Every set's published entry belongs to history: entries of any
     * other history are emptied.  Called at a new history before its
     * documents are removed, and at the end of every successful start. */
    void (*adopt)(void *baton, const char *history);
    /* A new history, after adopt: what is published of the old history
     * apart from the files (the watcher: the ring) is emptied. */
    void (*emptied)(void *baton);
    void *baton;
} rs_statecheck_hooks_t;

/* Where the history lives: the state directory and the sets' names (their
 * directories below it: rs_statedir_snapset, rs_statedir_clset), hooks
 * (NULL: none) and the log.  Owned by the caller, read during a call. */
typedef struct rs_statecheck_where_t {
    const char *statedir;
    const char *const *sets;
    /* The base URLs each set's documents are written with from now on
     * (index as sets; the caller's text, compared and recorded as it is),
     * or NULL (none compared or recorded).  A set's entry NULL: not that
     * set's. */
    const char *const *bases;
    int nsets;
    const rs_statecheck_hooks_t *hooks;
    const rs_logger_t *log;
    /* NULL: the store is the state directory's file (rs_statedir_db), named
     * by its path.  Else the store is elsewhere (PostgreSQL) and this is
     * its name in messages (kept by rs_statecheck_start, never with a
     * password). */
    const char *store_shown;
} rs_statecheck_where_t;

/* Whether the store continues the documents on disk, from p:
 * `stored` is the store's id (NULL: none, or not an id), `published` the
 * history file's (NULL: missing, unreadable or damaged), `why` the reason
 * why it does not continue them (NULL: it does). */
typedef struct rs_statecheck_verdict_t {
    const char *stored;
    const char *published;
    const char *why;
} rs_statecheck_verdict_t;

/* Judge (step 1) whether store and journal continue the documents below
 * w->statedir, into *v.  Changes nothing.  Returns the cause (logged at
 * the emergency level) when the store's id cannot be read. */
apr_status_t rs_statecheck_judge(const rs_statecheck_where_t *w, apr_pool_t *p, rs_db_t *store,
                                 rs_journal_t *journal, rs_statecheck_verdict_t *v);

/* Why the documents of a continuing store no longer name the sets' base
 * URLs, or NULL: the first set whose base URLs recorded in store differ
 * from w->bases (a set without recorded ones, as written by a version
 * that did not record them, is taken to have them).  Part of
 * rs_statecheck_judge; changes nothing. */
const char *rs_statecheck_base_changed(const rs_statecheck_where_t *w, apr_pool_t *p,
                                       rs_db_t *store);

/* Step 1: judge, then adopt the store's history into sc->history, or
 * start a new one (see above; one warning), or give a new store without
 * published documents its first history; record it in <statedir>/history
 * when it is not there, record the sets' base URLs (in the store, then
 * in <statedir>/base/<set>), call hooks->adopt, and remember the store file
 * (w->statedir's rs_statedir_db) with the first look at now +
 * RS_STATECHECK_INTERVAL (now: monotonic).  Returns the cause (logged at
 * the emergency level) when the history cannot be read or recorded, or a
 * set's base URLs cannot be recorded. */
apr_status_t rs_statecheck_start(rs_statecheck_t *sc, const rs_statecheck_where_t *w, apr_pool_t *p,
                                 rs_db_t *store, rs_journal_t *journal, apr_time_t now);

/* Step 2, at monotonic time now: when the look is due, whether the store
 * file of statedir was deleted or replaced by another file, or store holds
 * another history than sc->history, since rs_statecheck_start (then
 * logged as a warning, and the caller must end so that a new start takes
 * step 1).  Returns 0 when the look is not due (before sc->next_check) or
 * finds the same store, also when the store file cannot be looked at for
 * another cause than its absence.  A look moves sc->next_check to now +
 * RS_STATECHECK_INTERVAL. */
int rs_statecheck_lost(rs_statecheck_t *sc, const char *statedir, apr_pool_t *p, rs_db_t *store,
                       const rs_logger_t *log, apr_time_t now);

#endif
