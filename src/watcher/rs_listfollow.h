/* SPDX-License-Identifier: Apache-2.0 */
/* rs_listfollow.h - a follower's Change List files: those of a set
 * another node writes, derived from the store as that node derives its
 * own (rs_listclose), so that both serve the same bytes.
 *
 * Lifecycle: the follower calls rs_listfollow_update() for the set on
 * every notification of the set's writer (LISTEN/NOTIFY) or poll, and
 * with `seeding` set when it begins to follow the set (a watcher start,
 * a set lost to another node).  It reads the set's lists from the store
 * and the time of their last retention drop (rs_journal_drop_time, read
 * first: see rs_listfollow.c) and, when they differ from what it last saw
 * (a list closed or expired, or seeding):
 *
 *   1. removes the files of this history's closed lists that the store
 *      no longer holds (expired while this node followed, or while it
 *      was down), so that they answer 404 as on the writer;
 *   2. writes the file of every closed list that has none, from the
 *      journal (rs_listclose_write_closed: the writer's own code, bytes
 *      and mtime);
 *   3. publishes the open list (io->publish) and writes the index, in
 *      the writer's order: publish, then the index (a client that reads
 *      the new index finds the list it names closed served from its
 *      file); when seeding the index comes first, since the set's Change
 *      Lists answer 503 until the publication.  The index's mtime is the
 *      writer's (rs_listclose_index_mtime, from the same store).
 *
 * When nothing changed only io->publish runs (the glue puts the open
 * list's new records in the ring and publishes its extent).  The
 * follower writes nothing to the store.
 *
 * Engine unit: APR, the journal, rs_listclose, rs_statedir; no httpd.
 */
#ifndef RS_LISTFOLLOW_H
#define RS_LISTFOLLOW_H

#include "rs_listclose.h"

/* What the follower last saw of a set's lists (zeroed: nothing). */
typedef struct rs_listfollow_t {
    rs_listclose_t lc;                      /* its index (rs_listclose_write_index) */
    int known;                              /* the fields below hold */
    apr_int64_t first_id, last_id, nclosed; /* the closed lists */
    apr_int64_t open_id;
    apr_time_t open_from;
    apr_time_t dropped; /* the last drop's time (rs_journal_drop_time) */
} rs_listfollow_t;

/* Remove the files of history's closed lists below c->dir whose ids are
 * not those of `closed` (sorted by id, as rs_journal_lists gives them).
 * Returns how many went. */
int rs_listfollow_prune(apr_pool_t *p, const rs_listclose_conf_t *c, const char *history,
                        const apr_array_header_t *closed);

/* The update (see the top of this file) for history (non-empty) with the
 * documents' options o; c->fence is not used (nothing is written to the
 * store).  Returns the first failure of the store or of a file. */
apr_status_t rs_listfollow_update(rs_listfollow_t *lf, apr_pool_t *p, rs_journal_t *j,
                                  const rs_listclose_conf_t *c, const char *history,
                                  const rs_changelist_opts_t *o, const rs_listclose_io_t *io,
                                  int seeding, const rs_logger_t *log);

#endif
