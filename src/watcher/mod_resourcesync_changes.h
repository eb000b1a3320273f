/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_changes.h - the declarations of mod_resourcesync_changes.c. */
#ifndef MOD_RESOURCESYNC_CHANGES_H
#define MOD_RESOURCESYNC_CHANGES_H

#include "mod_resourcesync.h"
#include "rs_journal.h"
#include "rs_recorder.h"
#include "mod_resourcesync_status.h"

/* The bytes of the open list's entries the close rule counts (-1:
 * unknown): with Change Dumps those of their manifest entries, which are
 * the Change List's plus their paths (rs_cdump_path_len). */
apr_int64_t rs_changes_close_bytes(const rs_set_t *set, const rs_status_set_t *own);

/* mod_resourcesync_changes.c: the watcher's side of the journal and the
 * Change Lists.  `own` is the watcher's own copy of the set's status
 * entry: these functions update it and publish it, never read the
 * segment. */
/* The recorder of a scan of set (rs_scan's on_change: rs_recorder_record),
 * from p (the scan's pool): journal records with their entries rendered
 * for the ring, a window as large as the ring. */
rs_recorder_t *rs_changes_recorder(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set);
/* After the transaction with rc's records committed: put them in the ring
 * and publish the open list's new extent (rc NULL: nothing to do).  When
 * the batch had more records than the window holds, the bytes of those
 * that left it are read from the journal j (the extent's byte count stays
 * exact: a GET's Content-Length, HEAD and ranges depend on it). */
void rs_changes_publish(apr_pool_t *p, rs_journal_t *j, rs_recorder_t *rc, const rs_set_t *set,
                        rs_status_set_t *own);
/* After a failed scan: put the set's records that are committed but not
 * published yet (those after own's extent, from the store) into the ring
 * and publish the extent that covers them.  Records of a rolled-back
 * transaction are not in the store, so they never reach the ring. */
apr_status_t rs_changes_resync(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                               rs_status_set_t *own);
/* Close the open list when full or at the end of its period, expire old
 * lists, write the closed lists' files and the index that changed, and
 * publish the open list's extent (rs_listclose_update, with lc the set's
 * state for the watcher's life).  The closes and expiries are one
 * transaction of db, j's connection, begun with the set's fence. */
struct rs_listclose_t;
apr_status_t rs_changes_update(apr_pool_t *p, rs_db_t *db, rs_journal_t *j, const rs_set_t *set,
                               struct rs_listclose_t *lc, rs_status_set_t *own,
                               const rs_logger_t *log);
/* A set another node writes (a follower's): its Change List files
 * written from the store as the writer writes them, and its open list
 * published (ring and extent), from the store's lists
 * (rs_listfollow_update, with lf the follower's state of the set).  The
 * first call after own's documents were emptied (cl_ready 0) seeds them:
 * the files and the index, then the extent; until then children answer
 * the set's Change Lists 503.  Nothing is written to the store. */
struct rs_listfollow_t;
apr_status_t rs_changes_follow(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                               struct rs_listfollow_t *lf, rs_status_set_t *own,
                               const rs_logger_t *log);
/* At watcher start: publish the open list's extent from the store. */
apr_status_t rs_changes_seed(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                             rs_status_set_t *own);
/* At watcher start, after rs_changes_seed of every set: put the newest
 * journal records (as many as the ring holds, every set), rendered, into
 * the ring. */
void rs_changes_seed_ring(apr_pool_t *p, rs_journal_t *j, const rs_logger_t *log);

#endif
