/* SPDX-License-Identifier: Apache-2.0 */
/* rs_recorder.h - a scan's changes become journal records and rendered
 * entries.
 *
 * The data path: rs_scan reports every change of what a set lists through
 * its on_change callback; rs_recorder_record (that callback) appends the
 * journal record, in the scan's store transaction, and renders its <url>
 * entry once (rs_entry_render), so that no reader renders it again.
 *
 * Lifecycle: one recorder per piece of work on a set (a full scan, a batch
 * of events), allocated from that work's pool and gone when the pool is
 * cleared.  After the scan's transaction committed, the caller takes the
 * window (rs_recorder_take) and publishes it - in the watcher: into the
 * ring of the status segment.  Records of a transaction that failed must
 * not be published: the caller then drops the recorder without taking.
 *
 * Memory: only the newest `cap` records can stay in a ring of `cap` slots,
 * so the window keeps no more than `cap` (written circularly once full);
 * it grows with use, so a batch of a few changes costs a few slots, and a
 * scan that finds millions of changes costs `cap` of them.
 */
#ifndef RS_RECORDER_H
#define RS_RECORDER_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "rs_entry.h"
#include "rs_journal.h"
#include "rs_inventory.h"

typedef struct rs_recorder_t rs_recorder_t;

/* A recorder of set `set` into journal j, its entries rendered with eo
 * (which must outlive it), keeping a window of at most cap records
 * (cap <= 0: none; the records are only journaled).  From p. */
rs_recorder_t *rs_recorder_create(apr_pool_t *p, rs_journal_t *j, const char *set,
                                  const rs_entry_opts_t *eo, int cap);

/* The set has Change Dumps: each record the window keeps also gets its
 * manifest_extra (rs_cdump_path_len), which the window's copy, keeping no
 * path, could not give later. */
void rs_recorder_manifest_paths(rs_recorder_t *rc);

/* rs_scan's on_change (baton: the recorder): append the record of a
 * change (RS_CHANGE_*) of item it, and keep it in the window with its
 * rendered entry.  An entry that cannot be rendered, or is longer than a
 * ring slot (RS_RING_SLOT_DATA), is kept without bytes: readers then take
 * that record from the store.  Returns the journal's status. */
apr_status_t rs_recorder_record(void *baton, int change, const rs_item_t *it);

/* Also carry every record in the set's open change notification of
 * outbox n (rs_notify_extend, at most max records each), in the same
 * transaction as the record: a committed record is always in the outbox.
 * n NULL: no notifications (the default). */
typedef struct rs_notify_t rs_notify_t;
void rs_recorder_notify(rs_recorder_t *rc, rs_notify_t *n, int max);

/* Records appended since the recorder was made (taking does not reset);
 * 0 for NULL. */
apr_int64_t rs_recorder_appended(const rs_recorder_t *rc);

/* Of those, the deletions (a path that stopped being listed); 0 for
 * NULL. */
apr_int64_t rs_recorder_deleted(const rs_recorder_t *rc);

/* The window, oldest first, into *recs (array of rs_record_t with seq,
 * change, datetime, lastmod_ns, size and xml/xml_len, allocated from p;
 * NULL when nothing was recorded since the last take), and empty it.
 * The entries' bytes live in the recorder's pool.
 * Returns the number of records recorded since the last take, which is
 * more than (*recs)->nelts when the window wrapped. */
apr_int64_t rs_recorder_take(rs_recorder_t *rc, apr_pool_t *p, apr_array_header_t **recs);

#endif
