/* SPDX-License-Identifier: Apache-2.0 */
/* rs_linkscan.h - the links of a set's first scan, collected from its
 * walk and resolved from memory (see rs_linkkeep.h for the links kept as
 * single rows are written, rs_linkpass.h for the pass over the store).
 *
 * Data flow: for a set whose rules may name its own files, the first scan
 * (its baseline: journaled by no record, in no snapshot yet) hands every
 * listed row to rs_linkscan_row (rs_scan_opts_t.links_scan) before it is
 * written.  A row that no rule can make a target (rs_links_may_be_target)
 * and whose rules name no local target - most rows - is written with its
 * final links at once (links that need no lookup: URL and origin path
 * targets), and nothing of it is kept.  Every other row is *kept*: its
 * path, the attributes a link carries (size, mtime, type, encoding,
 * hashes) and the local targets its rules name, in memory; and *held*:
 * the scan does not write it until its directory is complete (the scan
 * hands a directory's rows together, then the next directory's).  Then
 * the held rows are written with their links resolved from what was
 * handed so far: their own directory's rows and those of the directories
 * before, which holds every link between files of one directory (a
 * record and its metadata side by side).  A kept row written before a
 * row it depends on was handed (a target listed later, a source naming
 * it later) is marked, and once the scan succeeded rs_linkscan_run
 * writes the set's dependencies and resolves only the marked rows again,
 * from memory (no read of the inventory), in the store's key order.  So
 * most rows are written once, with their final links; the result is
 * exactly that of rs_linkpass_run on the same rows.
 *
 * Bounds: the collection stops and is dropped when what it keeps passes
 * its bound (RS_LINKSCAN_MAX_BYTES): the rows it holds are written
 * without links, and so are the other kept rows after them.  Then, or
 * when the scan did not hand every listed row (a set that had rows:
 * stats.fresh 0, the scan calls no hook), rs_linkscan_run runs
 * rs_linkpass_run instead, which reads the store.
 *
 * Threads and memory: everything lives in a pool with an allocator of its
 * own, made by rs_linkscan_create and given back to the system by
 * rs_linkscan_destroy (none of it is kept by the caller's allocator).
 * rs_linkscan_row runs on the scan's store writer thread (or the thread
 * that ends the scan, for its last call), the other calls on the
 * caller's; they never run at the same time (the scan joins its writer
 * before it returns), so nothing is locked.
 */
#ifndef RS_LINKSCAN_H
#define RS_LINKSCAN_H

#include <apr_pools.h>
#include "rs_db.h"
#include "rs_inventory.h"
#include "rs_links.h"
#include "rs_scanopts.h"

/* The most a collection keeps (an estimate of its bytes: per kept row
 * about 300 with md5, and 300 more while it is held; some 200 000
 * sources and targets), past which it is dropped and the pass reads the
 * store instead: a first scan of a huge set keeps the memory of the pass
 * over the store (pages of rows and its candidate targets) rather than
 * all of its sources. */
#define RS_LINKSCAN_MAX_BYTES ((apr_size_t)64 * 1024 * 1024)

typedef struct rs_linkscan_t rs_linkscan_t;

/* A collection for set's first scan under rules l (digest fp, stored with
 * the result), with the set's root URL url_base (escaped, ends with "/");
 * max_bytes: its bound (0: RS_LINKSCAN_MAX_BYTES).  NULL when no rule of
 * l names a local target (the walk resolves those rows by itself:
 * rs_linkkeep_row looks nothing up). */
rs_linkscan_t *rs_linkscan_create(const rs_links_t *l, const char *set, const char *url_base,
                                  const char *fp, apr_size_t max_bytes);

/* rs_scan_opts_t.links_scan (baton: the rs_linkscan_t): set it->links to
 * the row's final links when nothing else can change them (returns 0:
 * the scan writes it); else keep what the pass needs of it and hold it
 * (returns 1) until its directory is complete: the first row of another
 * directory, or the last call (it NULL), hands the held rows back to the
 * scan through emit, each with its links.  Past the bound, rows are
 * written at once without links. */
int rs_linkscan_row(void *baton, rs_item_t *it, rs_scan_emit_fn *emit, void *emit_baton);

/* After the scan succeeded (fresh: its stats.fresh): the set's
 * dependencies rebuilt and the marked rows' links resolved again, in one
 * transaction of its own (none may be open), from the collection; or
 * every listed row's through rs_linkpass_run when it was dropped or the
 * scan not fresh; *changed: the rows updated.  No row is marked relinked
 * (a baseline is in no snapshot yet).  Its memory is the collection's. */
apr_status_t rs_linkscan_run(rs_linkscan_t *ls, rs_db_t *db, int fresh, apr_int64_t *changed);

/* How many rows the collection keeps; -1 when it was dropped past its
 * bound (what the tests look at). */
int rs_linkscan_kept(const rs_linkscan_t *ls);

/* Give ls's memory back (NULL: nothing). */
void rs_linkscan_destroy(rs_linkscan_t *ls);

#endif
