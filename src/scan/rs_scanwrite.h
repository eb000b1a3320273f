/* SPDX-License-Identifier: Apache-2.0 */
/* rs_scanwrite.h - a scan's writes to the store, done at once on the
 * thread that holds the store (the walk's, or the writer thread of
 * rs_scanpipe.c): a file's new row and what it means for the listing, an
 * access file's row, a row dropped; each counted, the transaction
 * committed in batches, the first failure kept (rs_scanctx.h).
 */
#ifndef RS_SCANWRITE_H
#define RS_SCANWRITE_H

#include "rs_scanctx.h"

/* Note the result rv of a store call: the scan stops with the first
 * failure's status (its cause, e.g. "No space left on device", reaches
 * the log).  Returns 1 if rv is a failure. */
int rs_scanwrite_failed(rs_scan_ctx_t *sc, apr_status_t rv);

/* Write the rows a full scan's batch holds (sc->batch; nothing without
 * one), before anything else uses the set's rows on the store and before
 * a commit; its failure is kept as any store call's.  After a failure
 * (sc->err) they are dropped: the transaction is rolled back at its end.
 * discard: drop them (before a rollback). */
void rs_scanwrite_flush(rs_scan_ctx_t *sc);
void rs_scanwrite_discard(rs_scan_ctx_t *sc);

/* Count one write in the open transaction; every few thousand writes the
 * transaction is committed and a new one begun. */
void rs_scanwrite_count(rs_scan_ctx_t *sc);

/* Tell the caller (on_change) of a change; its failure (with its cause)
 * stops the scan. */
void rs_scanwrite_notify(rs_scan_ctx_t *sc, int change, const rs_item_t *it);

/* Once the row dir/name was written (gone 0) or deleted (gone 1) and its
 * change reported: the rows whose links depend on it are resolved again
 * (rs_scan_opts_t.links_done; nothing without it). */
void rs_scanwrite_links_done(rs_scan_ctx_t *sc, const char *dir, const char *name, int gone);

/* row: store the new row of a file (old: its stored row or NULL) with its
 * links (rs_scan_opts_t.links_row, or links_scan, which may hold it to be
 * written later), report what it means for the listing and for the links
 * that depend on it, count it (hashed: bytes read for it).
 * access: store an access file's row.  drop: delete the row of dir/name
 * (row: as stored), reporting a listed one as deleted.  Each counts one
 * write (rs_scanwrite_count). */
void rs_scanwrite_row(rs_scan_ctx_t *sc, const rs_item_t *it, const rs_item_t *old,
                      apr_int64_t hashed);
void rs_scanwrite_access(rs_scan_ctx_t *sc, const rs_item_t *it);

/* Once every row of a fresh full scan was handed to the store: the rows
 * links_scan still holds are written (rs_scan_opts_t.links_scan). */
void rs_scanwrite_links_end(rs_scan_ctx_t *sc);
void rs_scanwrite_drop(rs_scan_ctx_t *sc, const char *dir, const char *name, const rs_item_t *row);

#endif
