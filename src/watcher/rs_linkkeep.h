/* SPDX-License-Identifier: Apache-2.0 */
/* rs_linkkeep.h - a set's links kept in its inventory rows (rs_links.h
 * for the rules and their resolution, rs_linkdep.h for the dependencies).
 *
 * Data flow: whenever a scan writes a file's row, rs_linkkeep_row
 * resolves the row's links first (forward links in rule order, then the
 * inverse links of the listed resources that link to it) so that the row
 * and its journal record carry them, and replaces the row's dependencies
 * (the local targets its rules name).  Once the row is written (or
 * deleted) and its change journaled, rs_linkkeep_done resolves again the
 * rows whose links depend on it: the sources that link to it (their
 * forward links carry its attributes, or vanish with if-exists) and its
 * own targets, old and new (their inverse links name it).  A row whose
 * encoded links changed is updated (rs_inventory_set_links) and recorded
 * as relinked (rs_journal_relink), so that the next Resource List
 * rewrites the part that holds it; no journal record is made: a link is
 * not a change of the resource.  Only listed rows have links and
 * dependencies.
 *
 * Configuration: rs_linkpass_start, at the watcher's start, compares the
 * rules' digest with the one stored for the set (meta links:<set>); when
 * they differ, one pass over the listed rows rebuilds the dependencies,
 * resolves every row's links again and updates (and marks relinked) only
 * those whose encoded links changed, then stores the new digest.
 *
 * Threads and transactions: every call runs on the thread that holds
 * the store connection db, in its open transaction (the scan's), one at
 * a time (the scan's writer thread or the driver's); the keeper's
 * scratch memory is cleared at each call, so a string it hands out (a
 * row's links) is valid until its next call.  A set without rules has no
 * keeper (rs_linkkeep_create returns NULL) and costs nothing.
 */
#ifndef RS_LINKKEEP_H
#define RS_LINKKEEP_H

#include <apr_pools.h>
#include "rs_db.h"
#include "rs_inventory.h"
#include "rs_journal.h"
#include "rs_links.h"

typedef struct rs_linkkeep_t rs_linkkeep_t;

/* The keeper of set's links under rules l (NULL or without rules: none,
 * NULL is returned), with the set's root URL url_base (escaped, ends with
 * "/").  From p, which must outlive it; its scratch pool is a child of p,
 * whose allocator must be thread-safe when the keeper is used from a
 * scan's writer thread (as the scan requires of its caller's pools). */
rs_linkkeep_t *rs_linkkeep_create(apr_pool_t *p, const rs_links_t *l, const char *set,
                                  const char *url_base);

/* Before the row it of a file is written (listed or not; was_listed: its
 * stored row was listed): set it->links (valid until the keeper's next
 * call) and its dependencies.  A row that is not listed gets no links
 * and has none.  The dependencies of a listed row depend on its path
 * and the rules only, which do not change while a watcher runs: they
 * are written when the row becomes listed, and go when it stops being
 * listed or is deleted (rs_linkpass_start rebuilds them all when the
 * rules changed). */
apr_status_t rs_linkkeep_row(rs_linkkeep_t *lk, rs_db_t *db, rs_item_t *it, int was_listed);

/* After the row dir/name was written (gone 0: rs_linkkeep_row was called
 * for it just before) or deleted (gone 1), and its change journaled:
 * resolve again the listed rows that depend on it, update those whose
 * links changed and mark them relinked in j.  *relinked (may be NULL) is
 * increased by their number. */
apr_status_t rs_linkkeep_done(rs_linkkeep_t *lk, rs_db_t *db, rs_journal_t *j, const char *dir,
                              const char *name, int gone, apr_int64_t *relinked);

#endif
