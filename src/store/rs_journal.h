/* SPDX-License-Identifier: Apache-2.0 */
/* rs_journal.h - the durable journal of changes and the Change Lists.
 *
 * Every change the watcher observes in a set becomes one record: a global
 * sequence number (strictly increasing, assigned here: the watcher is
 * the writer, but another connection writing meanwhile is noticed, see
 * rs_journal.c), the set, the path, the change (created / updated /
 * deleted), the datetime it was observed (microseconds, strictly
 * increasing per set even if the wall clock steps back), and the
 * resource's lastmod, length, media type, content coding and hashes of
 * that version (for a deletion: of the last known version).  Records are
 * written in the caller's store transaction, so a record and the
 * inventory change it describes are committed together.
 *
 * Change Lists partition each set's journal in time: closed lists are
 * rows (id, from, until, first and last sequence) whose documents never
 * change; the open list is everything after the last closed one, from
 * the last `until` (or the set's journal start) on.  A list's `until` is
 * the next list's `from`.  Retention drops closed lists (and their
 * records) whose `until` is older than a cutoff.
 */
#ifndef RS_JOURNAL_H
#define RS_JOURNAL_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>
#include "rs_hash.h"
#include "rs_db.h"

/* The PostgreSQL channel on which every transaction that journals a
 * set's records, or closes or expires its lists, notifies the nodes that
 * follow the set (rs_db_notify, once per set and transaction, payload:
 * the set's name, delivered at commit).  Nothing on SQLite. */
#define RS_JOURNAL_CHANNEL "resourcesync_journal"

#define RS_CHANGE_CREATED 1
#define RS_CHANGE_UPDATED 2
#define RS_CHANGE_DELETED 3

typedef struct rs_record_t {
    apr_int64_t seq;
    const char *dir;
    const char *name;
    int change;          /* RS_CHANGE_* */
    apr_time_t datetime; /* observed, µs */
    apr_int64_t lastmod_ns;
    apr_int64_t size;
    const char *type;
    const char *encoding; /* content coding(s) (Content-Encoding) or NULL */
    const char *hash[RS_HASH_COUNT];
    /* Its rs:ln relations, encoded (rs_links.h); NULL or "": none. */
    const char *links;
    /* The entry as rendered by rs_entry_render, when the source has
     * it (the shared ring); NULL: render from the fields above. */
    const char *xml;
    apr_size_t xml_len;
    /* With Change Dumps, the bytes the record's Change Dump Manifest entry
     * adds (rs_cdump_path_len), when the source knew them (the recorder's
     * window, which keeps no path); 0: not known. */
    apr_int64_t manifest_extra;
} rs_record_t;

typedef struct rs_changelist_t {
    apr_int64_t id; /* 1, 2, ... per set */
    apr_time_t from;
    apr_time_t until;      /* 0: the open list */
    apr_int64_t first_seq; /* records first_seq .. last_seq */
    apr_int64_t last_seq;
    apr_int64_t count;
} rs_changelist_t;

typedef struct rs_journal_t rs_journal_t;

/* The journal of connection db (whose schema rs_db_open created); it
 * lives as long as pool p, which must not outlive db. */
apr_status_t rs_journal_open(rs_journal_t **out, rs_db_t *db, apr_pool_t *p);

/* Name of a change ("created", ...). */
const char *rs_journal_change_name(int change);

/* Append a record (in the caller's transaction).  Assigns rec->seq and
 * rec->datetime (max(now, the set's last datetime + 1 µs)).  On a shared
 * store the transaction's first record of the set notifies the set's
 * followers (RS_JOURNAL_CHANNEL); rs_journal_close and rs_journal_expire
 * do the same when they change a list. */
apr_status_t rs_journal_append(rs_journal_t *j, const char *set, rs_record_t *rec);

/* A time for a Resource List's `at` that every later record's datetime
 * reaches: max(now, the set's last datetime + 1 µs).  Kept in the store,
 * so it holds across restarts and wall-clock steps. */
apr_status_t rs_journal_mark(rs_journal_t *j, const char *set, apr_time_t *at);

/* Forget every set's journal: records, closed lists, starts, relinked
 * paths (one transaction).  The store then starts a new history (rs_history.h): the
 * next scan of each set is a baseline again, and sequences and list ids
 * start over.  Returns the failed statement's cause. */
apr_status_t rs_journal_reset(rs_journal_t *j);

/* The set's journal start (when it began recording; 0 if never). */
apr_status_t rs_journal_start(rs_journal_t *j, const char *set, apr_time_t *start);

/* Begin recording a set at time t (no-op if it already has a start). */
apr_status_t rs_journal_begin_set(rs_journal_t *j, const char *set, apr_time_t t);

/* Closed lists of a set, oldest first (array of rs_changelist_t), and
 * the open list (id, from, first_seq, last_seq, count; until 0). */
apr_status_t rs_journal_lists(rs_journal_t *j, apr_pool_t *p, const char *set,
                              apr_array_header_t **closed, rs_changelist_t *open);

/* Records of a set with first <= seq <= last (last < 0: no upper bound),
 * at most limit, in sequence order (array of rs_record_t). */
apr_status_t rs_journal_records(rs_journal_t *j, apr_pool_t *p, const char *set, apr_int64_t first,
                                apr_int64_t last, int limit, apr_array_header_t **out);

/* Records of every set with seq > after, at most limit, in sequence order
 * (array of rs_record_t), and the name of each one's set in *sets (array
 * of const char *, parallel). */
apr_status_t rs_journal_recent(rs_journal_t *j, apr_pool_t *p, apr_int64_t after, int limit,
                               apr_array_header_t **out, apr_array_header_t **sets);

/* A created or updated record, and whether its path stopped being listed
 * after it: deleted is the datetime of the first later `deleted` record
 * of the same path (0: none).  A version so superseded is withheld from
 * every Change Dump package built afterwards (rs_cdump.h). */
typedef struct rs_journal_version_t {
    apr_int64_t seq;
    const char *sha256; /* its SHA-256 digest, NULL if none */
    apr_time_t deleted;
} rs_journal_version_t;

/* The created/updated records of a set with first <= seq <= last (last
 * < 0: no upper bound), at most limit, in sequence order (array of
 * rs_journal_version_t). */
apr_status_t rs_journal_versions(rs_journal_t *j, apr_pool_t *p, const char *set, apr_int64_t first,
                                 apr_int64_t last, int limit, apr_array_header_t **out);

/* The sequences of the created/updated records of path dir/name in the
 * set, in order (array of apr_int64_t). */
apr_status_t rs_journal_path_versions(rs_journal_t *j, apr_pool_t *p, const char *set,
                                      const char *dir, const char *name, apr_array_header_t **seqs);

/* How the set's retained records use a content: of its created/updated
 * records whose SHA-256 digest is sha256, whether one was not deleted
 * later (*kept 1: no later `deleted` record of its path), and the latest
 * datetime at which one of the others stopped being listed (*deleted:
 * the first later deletion of its path; 0 when none was).  One indexed
 * lookup, however long the journal: a Change Dump capture is decided
 * without reading every retained record (rs_cdump_gc). */
apr_status_t rs_journal_digest_use(rs_journal_t *j, apr_pool_t *p, const char *set,
                                   const char *sha256, int *kept, apr_time_t *deleted);

/* A path (set-relative dir and name). */
typedef struct rs_journal_path_t {
    const char *dir, *name;
} rs_journal_path_t;

/* Note that the links of dir/name were resolved again and changed
 * without a change of the resource itself (a target of its links
 * appeared, changed or went, or the rules changed): no record, but a
 * row `relinked` at the journal's last sequence (one row per path, its
 * latest; in the caller's transaction), so that the next Resource List
 * snapshot does not keep the part that holds the path.  Pruned with the
 * records (rs_journal_expire). */
apr_status_t rs_journal_relink(rs_journal_t *j, const char *set, const char *dir, const char *name);

/* The paths of set relinked at sequence `from` or later, at most limit
 * (array of rs_journal_path_t in *out, in sequence order).  A snapshot
 * reflects the records up to its sequence s, but a path relinked at s
 * may have been relinked after it was written (no record moves the
 * sequence): the next snapshot asks from s on, so such a path is never
 * missed (one at s already reflected is only rewritten once more). */
apr_status_t rs_journal_relinked(rs_journal_t *j, apr_pool_t *p, const char *set, apr_int64_t from,
                                 int limit, apr_array_header_t **out);

/* The sequence of the set's newest record in the journal (0: none). */
apr_status_t rs_journal_newest(rs_journal_t *j, apr_pool_t *p, const char *set, apr_int64_t *seq);

/* The sets whose journal was started (rs_journal_begin_set), in byte
 * order (array of const char *, in p). */
apr_status_t rs_journal_sets(rs_journal_t *j, apr_pool_t *p, apr_array_header_t **out);

/* How many records the set's journal holds, and the datetime of its
 * newest (0: none). */
apr_status_t rs_journal_summary(rs_journal_t *j, const char *set, apr_int64_t *count,
                                apr_time_t *newest);

/* The last sequence assigned or read from the store (at open, or at the
 * first append of a transaction). */
apr_int64_t rs_journal_last_seq(const rs_journal_t *j);

/* Close (part of) the open list.  last_seq < 0: all of it, at `until`
 * (raised above its last record's datetime if needed).  Otherwise the
 * records up to last_seq (count of them), with `until` = the datetime of
 * the first record after them, which opens the next list.  Nothing
 * happens (closed->id is 0) if until <= from. */
apr_status_t rs_journal_close(rs_journal_t *j, apr_pool_t *p, const char *set, apr_int64_t last_seq,
                              apr_int64_t count, apr_time_t until, rs_changelist_t *closed);

/* Drop closed lists whose until < cutoff, and their records (and the
 * paths relinked before the last of them, rs_journal_relink; those
 * relinked at its sequence stay, since a snapshot of that sequence may
 * not hold them: rs_journal_relinked).  *dropped gets the ids removed
 * (array of apr_int64_t).  The caller notes the time of a drop in the
 * same transaction (rs_journal_drop_note). */
apr_status_t rs_journal_expire(rs_journal_t *j, apr_pool_t *p, const char *set, apr_time_t cutoff,
                               apr_array_header_t **dropped);

/* Note that retention dropped lists of set at t (the caller's wall
 * clock; in the caller's transaction, the one that dropped them): the
 * time is kept in the store and only grows (a t not after the one kept
 * changes nothing).  The Change List Index's modification time takes it
 * (rs_listclose_index_mtime): an index that lost entries must look
 * modified to a client that revalidates by date. */
apr_status_t rs_journal_drop_note(rs_journal_t *j, apr_pool_t *p, const char *set, apr_time_t t);

/* The time kept by rs_journal_drop_note for set (0: never). */
apr_status_t rs_journal_drop_time(rs_journal_t *j, apr_pool_t *p, const char *set, apr_time_t *t);

#endif
