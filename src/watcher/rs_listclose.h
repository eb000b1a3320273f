/* SPDX-License-Identifier: Apache-2.0 */
/* rs_listclose.h - closing a set's Change Lists, retention, and their
 * files, in the watcher.
 *
 * Lifecycle: after the records of a scan of a set are committed and put
 * into the ring (glue: mod_resourcesync_changes.c), the watcher calls
 * rs_listclose_update(): it closes the open Change List when it holds more
 * than ResourceSyncMaxEntries or when its entries pass the bytes a
 * document may take (at record boundaries, as often as needed), then the
 * whole open list when it is full or its period ended, drops closed lists
 * older than ResourceSyncJournalRetention with their files, and the oldest
 * ones beyond what the Change List Index may name (count retention),
 * writes the file of every closed list that has none, lets the glue
 * publish the open list's extent, and writes the Change List Index when it
 * changed.
 *
 * Limits (ResourceSync 1.1 section 7: "the limit is 50,000 items per
 * document and a document size of 50 MB", RS_XML_MAX_*): a closed list
 * holds at most max_entries records and at most RS_XML_MAX_BYTES bytes
 * (rs_listclose_budget: its entries' rendered bytes are measured); the
 * index names at most index_max lists, the open one among them
 * (rs_listclose_index_cap), so it too stays within both.  The files are below the set's directory
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
    int index_written;     /* this watcher wrote the set's index */
    apr_int64_t max_bytes; /* the last update's conf max_bytes (0: none yet) */
} rs_listclose_t;

/* A set's settings. */
typedef struct rs_listclose_conf_t {
    const char *set;               /* its name in the journal */
    int max_entries;               /* ResourceSyncMaxEntries (> 0) */
    apr_interval_time_t period;    /* ResourceSyncChangeListPeriod */
    apr_interval_time_t retention; /* ResourceSyncJournalRetention */
    const char *dir;               /* <statedir>/changelists/<set> */
    /* The bytes a closed list's entries may take (rs_listclose_budget),
     * measured with the renderer of `entry`; 0 or entry NULL: entries
     * are not measured (no byte limit). */
    apr_int64_t max_bytes;
    const rs_entry_opts_t *entry;
    /* The set has Change Dumps: each record also counts the bytes its
     * Change Dump Manifest entry adds (rs_cdump_path_len), so that the
     * manifest of a list stays within max_bytes too. */
    int manifest_paths;
    /* Lists the Change List Index may name, the open one included
     * (rs_listclose_index_cap); 0: max_entries. */
    int index_max;
    /* The journal's connection: the closes and expiries of an update are
     * one transaction of it that begins with the set's fence
     * (rs_db_begin_set: a node that no longer writes the set changes no
     * list); NULL: each is a statement of its own. */
    rs_db_t *fence;
} rs_listclose_conf_t;

/* What the glue provides for an update.  `source` makes a fresh record
 * source for one file (called once per closed list written; its result is
 * the baton of `read`); `read` gives the records (rs_changelist_source_fn;
 * in the watcher: the ring while it holds them, then the store).
 * `publish` (may be NULL) is called with the open list after the closed
 * lists' files and before the index: a client that reads the new index
 * must find a list it names closed served from its file, and the next one
 * served open.  All take `baton`.  `open_bytes`: the rendered bytes of
 * the open list's entries as the glue knows them (-1: unknown, then they
 * are measured from the journal when conf max_bytes is set). */
typedef struct rs_listclose_io_t {
    void *(*source)(void *baton, apr_pool_t *p);
    rs_changelist_source_fn *read;
    void (*publish)(void *baton, apr_pool_t *p, const rs_changelist_t *openl);
    void *baton;
    apr_int64_t open_bytes;
} rs_listclose_io_t;

/* The bytes the entries of a closed Change List with options o may take:
 * RS_XML_MAX_BYTES less its head and tail (with the longest times).
 * 0 when the frame cannot be rendered. */
apr_int64_t rs_listclose_budget(const rs_changelist_opts_t *o, apr_pool_t *p);

/* The lists a Change List Index with options o (list URLs
 * o->list_url_prefix<id>.xml) may name: max_entries (at most
 * RS_XML_MAX_ENTRIES), fewer when so many entries with the longest ids
 * and times would pass RS_XML_MAX_BYTES; at least 1 (the open list). */
int rs_listclose_index_cap(const rs_changelist_opts_t *o, int max_entries, apr_pool_t *p);

/* Whether the whole open list openl is due to close at now: it has
 * records, and holds max_entries of them or began a period or more ago. */
int rs_listclose_due(const rs_listclose_conf_t *c, const rs_changelist_t *openl, apr_time_t now);

/* Whether an update after an event batch is worth reading the journal's
 * lists: only when the open list may hold max_entries records (known: the
 * watcher knows its count; count: the records it holds) or its entries'
 * bytes (known, >= 0) pass max_bytes (> 0).  Closing on time and
 * retention wait for the set's next full update (its tick). */
int rs_listclose_batch_due(int max_entries, int known, apr_int64_t count, apr_int64_t bytes,
                           apr_int64_t max_bytes);

/* Where a list ends (rs_listclose_cut). */
typedef struct rs_listclose_cut_t {
    apr_int64_t last_seq; /* its last record (0: no record follows, nothing to close) */
    apr_time_t until;     /* the datetime of the next record, which opens the next list */
    int count;            /* its records */
    apr_int64_t bytes;    /* their rendered bytes (0 without a renderer) */
} rs_listclose_cut_t;

/* Where the list of the set's records from sequence first on ends: after
 * the n-th record, or (rr not NULL) after the last whose rendered entry
 * (rs_entry_render with rr; with paths, plus rs_cdump_path_len) still
 * fits in max_bytes with those before it (a list takes at least one
 * record).  When no record follows, nothing
 * closes (out->last_seq 0) and out->count and out->bytes are those of
 * every record read.  Read 1,000 records at a time, each page in a pool
 * cleared for the next. */
apr_status_t rs_listclose_cut(apr_pool_t *p, rs_journal_t *j, const char *set, apr_int64_t first,
                              int n, rs_entry_renderer_t *rr, int paths, apr_int64_t max_bytes,
                              rs_listclose_cut_t *out);

/* Close the open list at record boundaries, as often as it holds more
 * than max_entries records or its entries more than max_bytes bytes
 * (*open_bytes: as known, -1: unknown, then measured; updated with what
 * stays open): each list closed with max_entries records, or with the
 * records that fit in max_bytes, until the datetime of the next record.
 * *closed_some is set when a list closed. */
apr_status_t rs_listclose_full(apr_pool_t *p, rs_journal_t *j, const rs_listclose_conf_t *c,
                               apr_int64_t *open_bytes, int *closed_some);

/* Close the whole open list at now when rs_listclose_due says so.
 * *closed_some is set when a list closed. */
apr_status_t rs_listclose_on_time(apr_pool_t *p, rs_journal_t *j, const rs_listclose_conf_t *c,
                                  apr_time_t now, int *closed_some);

/* Retention: drop the closed lists that ended before now - retention from
 * the store, and their files (of history); logs at info how many went.
 * Then, by count, the oldest closed lists beyond index_max - 1 (the index
 * names the open list too), as time retention drops them: the journal
 * starts where the last one dropped ended (the index's `from` moves);
 * logged at info with the limit.  Each drop notes now in the store
 * (rs_journal_drop_note), in the same transaction, for the index's mtime
 * (rs_listclose_index_mtime).  *dropped_some is set when a list went.
 * Returns the store's failure: the caller's transaction must then roll
 * back (the lists stay until the next update). */
apr_status_t rs_listclose_expire(apr_pool_t *p, rs_journal_t *j, const rs_listclose_conf_t *c,
                                 const char *history, apr_time_t now, const rs_logger_t *log,
                                 int *dropped_some);

/* The modification time of a Change List file, which makes its ETag
 * ("size-mtime", the handler's) and Last-Modified the same on every node
 * that writes it from the same store.  A closed list cl's is its until:
 * its bytes never change. */
apr_time_t rs_listclose_mtime(const rs_changelist_t *cl);

/* The Change List Index's: the later of the open list openl's from (the
 * newest closed list's until, or the journal's start), which moves with
 * every close, and `dropped`, the time of the set's last retention drop
 * (rs_journal_drop_time, 0: none), which moves with every expiry.  So it
 * grows whenever the index's bytes change (a list closed or dropped): a
 * client that revalidates by date (If-Modified-Since) gets the new bytes,
 * not a 304.  Both are times of the store, not of the node: a writer after
 * a restart and every follower give the same value, never later than the
 * writer's clock when it closed or dropped the lists, and the same again
 * while nothing changes.  (HTTP dates count seconds: a change in the same
 * second as the one before cannot show in Last-Modified; the ETag shows
 * it.) */
apr_time_t rs_listclose_index_mtime(const rs_changelist_t *openl, apr_time_t dropped);

/* Write the file of every closed list that has none (of history), each
 * in a pool cleared for the next; logs an error for a file that cannot be
 * written and returns its cause (the lists after it wait for the next
 * update). */
apr_status_t rs_listclose_write_closed(apr_pool_t *p, const rs_listclose_conf_t *c,
                                       const char *history, const rs_changelist_opts_t *o,
                                       const rs_listclose_io_t *io,
                                       const apr_array_header_t *closed, const rs_logger_t *log);

/* Write the index when dirty (a list closed or expired), when this
 * watcher has not written it yet (lc), or when it is missing, with the
 * mtime rs_listclose_index_mtime(openl, dropped); logs an error when it
 * cannot be written. */
apr_status_t rs_listclose_write_index(rs_listclose_t *lc, apr_pool_t *p,
                                      const rs_listclose_conf_t *c, const rs_changelist_opts_t *o,
                                      const rs_changelist_t *openl,
                                      const apr_array_header_t *closed, apr_time_t dropped,
                                      int dirty, const rs_logger_t *log);

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
