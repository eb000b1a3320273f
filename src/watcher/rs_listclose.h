/* SPDX-License-Identifier: Apache-2.0 */
/* rs_listclose.h - closing a set's Change Lists, retention, and their
 * files, in the watcher.
 *
 * Lifecycle: after the records of a scan of a set are committed and put
 * into the ring (glue: mod_resourcesync_changes.c), the watcher calls
 * rs_listclose_update(): it closes the open Change List when it holds more
 * than ResourceSyncMaxEntries (at record boundaries, as often as needed),
 * then the whole open list when it is full or its period ended, drops
 * closed lists older than ResourceSyncJournalRetention with their files,
 * writes the file of every closed list that has none, lets the glue
 * publish the open list's extent, and writes the Change List Index when it
 * changed.  The files are below the set's directory
 * (<statedir>/changelists/<set>, rs_statedir):
 *   index.xml    the Change List Index (closed lists, then the open one)
 *   <id>.xml     each closed Change List, written once when it closes and
 *                never again (byte-identical forever)
 * Every file appears by an atomic rename of a synced temporary file
 * (rs_file_replace), so a reader gets either the old or the new bytes.
 * Lists are closed in the store first and their files written after: a
 * crash between the two loses nothing, as a missing list file is written
 * at the next update and each watcher writes the index once at its first
 * update (rs_listclose_t).
 *
 * Times: `now` is the wall clock (apr_time_now() in the watcher), the
 * clock of the journal's datetimes, a list's `from` and `until`; it is an
 * argument, never read here.  Memory: every step reads the journal a page
 * or a list at a time, in pools cleared for the next, so it does not grow
 * with ResourceSyncMaxEntries or with the number of lists retained.
 *
 * Engine unit: APR, the journal, the Change List writer, rs_file,
 * rs_statedir and the engine logger; no httpd, no status segment, no
 * ring (the glue's callbacks, rs_listclose_io_t).
 */
#ifndef RS_LISTCLOSE_H
#define RS_LISTCLOSE_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>
#include "rs_changelist.h"
#include "rs_journal.h"
#include "rs_log.h"

/* A set's state for its watcher's life (zeroed at watcher start). */
typedef struct rs_listclose_t {
    int index_written; /* this watcher wrote the set's index */
} rs_listclose_t;

/* A set's settings. */
typedef struct rs_listclose_conf_t {
    const char *set;               /* its name in the journal */
    int max_entries;               /* ResourceSyncMaxEntries (> 0) */
    apr_interval_time_t period;    /* ResourceSyncChangeListPeriod */
    apr_interval_time_t retention; /* ResourceSyncJournalRetention */
    const char *dir;               /* <statedir>/changelists/<set> */
} rs_listclose_conf_t;

/* What the glue provides for an update.  `source` makes a fresh record
 * source for one file (called once per closed list written; its result is
 * the baton of `read`); `read` gives the records (rs_changelist_source_fn;
 * in the watcher: the ring while it holds them, then the store).
 * `publish` (may be NULL) is called with the open list after the closed
 * lists' files and before the index: a client that reads the new index
 * must find a list it names closed served from its file, and the next one
 * served open.  All take `baton`. */
typedef struct rs_listclose_io_t {
    void *(*source)(void *baton, apr_pool_t *p);
    rs_changelist_source_fn *read;
    void (*publish)(void *baton, apr_pool_t *p, const rs_changelist_t *openl);
    void *baton;
} rs_listclose_io_t;

/* Whether the whole open list openl is due to close at now: it has
 * records, and holds max_entries of them or began a period or more ago. */
int rs_listclose_due(const rs_listclose_conf_t *c, const rs_changelist_t *openl, apr_time_t now);

/* Whether an update after an event batch is worth reading the journal's
 * lists: only when the open list may hold max_entries records (known: the
 * watcher knows its count; count: the records it holds).  Closing on time
 * and retention wait for the set's next full update (its tick). */
int rs_listclose_batch_due(int max_entries, int known, apr_int64_t count);

/* Where the first n records of the set from sequence first on end: the
 * sequence of the n-th one (*last_seq), and the datetime of the next
 * (*until), which opens the next list; *last_seq is 0 when there are no
 * more than n (nothing to close).  Read 1,000 records at a time, each page
 * in a pool cleared for the next. */
apr_status_t rs_listclose_cut(apr_pool_t *p, rs_journal_t *j, const char *set, apr_int64_t first,
                              int n, apr_int64_t *last_seq, apr_time_t *until);

/* Close the open list after its first max_entries records, at record
 * boundaries, as often as it holds more than that (each list closed with
 * exactly max_entries records, until the datetime of the next record).
 * *closed_some is set when a list closed. */
apr_status_t rs_listclose_full(apr_pool_t *p, rs_journal_t *j, const rs_listclose_conf_t *c,
                               int *closed_some);

/* Close the whole open list at now when rs_listclose_due says so.
 * *closed_some is set when a list closed. */
apr_status_t rs_listclose_on_time(apr_pool_t *p, rs_journal_t *j, const rs_listclose_conf_t *c,
                                  apr_time_t now, int *closed_some);

/* Retention: drop the closed lists that ended before now - retention from
 * the store, and their files (of history); logs at info how many went.
 * *dropped_some is set when a list went.  A failure of the store is not
 * returned: the lists stay until the next update. */
void rs_listclose_expire(apr_pool_t *p, rs_journal_t *j, const rs_listclose_conf_t *c,
                         const char *history, apr_time_t now, const rs_logger_t *log,
                         int *dropped_some);

/* Write the file of every closed list that has none (of history), each
 * in a pool cleared for the next; logs an error for a file that cannot be
 * written and returns its cause (the lists after it wait for the next
 * update). */
apr_status_t rs_listclose_write_closed(apr_pool_t *p, const rs_listclose_conf_t *c,
                                       const char *history, const rs_changelist_opts_t *o,
                                       const rs_listclose_io_t *io,
                                       const apr_array_header_t *closed, const rs_logger_t *log);

/* Write the index when dirty (a list closed or expired), when this
 * watcher has not written it yet (lc), or when it is missing; logs an
 * error when it cannot be written. */
apr_status_t rs_listclose_write_index(rs_listclose_t *lc, apr_pool_t *p,
                                      const rs_listclose_conf_t *c, const rs_changelist_opts_t *o,
                                      const rs_changelist_t *openl,
                                      const apr_array_header_t *closed, int dirty,
                                      const rs_logger_t *log);

/* The whole update (see the top of this file), for history (non-empty)
 * with the documents' options o.  The set's directory is made if needed.
 * Returns the first failure of the store or of a file. */
apr_status_t rs_listclose_update(rs_listclose_t *lc, apr_pool_t *p, rs_journal_t *j,
                                 const rs_listclose_conf_t *c, const char *history,
                                 const rs_changelist_opts_t *o, const rs_listclose_io_t *io,
                                 apr_time_t now, const rs_logger_t *log);

/* At watcher start: remove the files of an older layout's open list
 * ("open-*", rs_statedir_is_cl_legacy) from the set's directory dir. */
void rs_listclose_remove_legacy(apr_pool_t *p, const char *dir);

#endif
