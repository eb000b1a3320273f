/* SPDX-License-Identifier: Apache-2.0 */
/* rs_generation.h - the snapshot generation protocol of a set.
 *
 * A set's Resource List is a numbered, immutable directory
 * <snapset>/<gen>/ (see rs_statedir.h).  Lifecycle of one generation:
 *   1. rs_generation_begin chooses its number and makes an empty
 *      temporary directory <snapset>/tmp-<gen>/;
 *   2. the writer (rs_snapshot_write) fills the temporary directory;
 *   3. rs_generation_publish renames it to <snapset>/<gen>/ and fsyncs
 *      <snapset>, so the generation appears complete or not at all; or
 *      rs_generation_abandon removes it;
 *   4. once a newer generation is current, rs_generation_prune marks the
 *      older one superseded (a marker file whose mtime says when) and
 *      removes it after a keep time, which leaves a destination that read
 *      an index of the old generation the time to fetch its parts.
 *
 * Invariant: a number is never used twice for different contents, also
 * across restarts and after the loss of the store's bookkeeping: the next
 * number is larger than both the one recorded in the store and the one in
 * service, and it skips every number whose directory exists on disk (a
 * writer killed between the rename and recording the number leaves one).
 * Only one writer (the watcher) runs these functions for a set at a time.
 */
#ifndef RS_GENERATION_H
#define RS_GENERATION_H

#include <apr_pools.h>
#include <apr_time.h>

typedef struct rs_generation_t {
    apr_uint64_t gen;  /* the chosen number */
    const char *tmp;   /* <snapset>/tmp-<gen>: written into */
    const char *final; /* <snapset>/<gen>: its published name */
} rs_generation_t;

/* Choose the next generation of the set whose generations live in
 * snapset (created if missing): larger than stored (the store's counter)
 * and current (the generation in service), never one whose directory
 * exists.  Any leftover <snapset>/tmp-<gen> is removed and an empty one
 * made.  g is filled in (strings from p) even on failure, which returns
 * the cause of the failed mkdir. */
apr_status_t rs_generation_begin(apr_pool_t *p, const char *snapset, apr_uint64_t stored,
                                 apr_uint64_t current, rs_generation_t *g);

/* Rename g's temporary directory to its final name and fsync snapset.
 * Returns the rename's cause on failure (the temporary directory is then
 * left for rs_generation_abandon).  A failed fsync of snapset is not an
 * error: the generation is in place and will be durable with the next
 * sync of the file system. */
apr_status_t rs_generation_publish(apr_pool_t *p, const char *snapset, const rs_generation_t *g);

/* Remove g's temporary directory (a failed or interrupted write). */
void rs_generation_abandon(apr_pool_t *p, const rs_generation_t *g);

/* Prune snapset: every directory other than generation current is marked
 * superseded (marker created at its first prune) and removed once the
 * marker is older than keep at time now; tmp-* leftovers of interrupted
 * writes are removed at once.  Generation current is never touched.  A
 * missing snapset is not an error. */
void rs_generation_prune(apr_pool_t *p, const char *snapset, apr_uint64_t current,
                         apr_interval_time_t keep, apr_time_t now);

#endif
