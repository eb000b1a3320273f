/* SPDX-License-Identifier: Apache-2.0 */
/* rs_linkpass.h - one pass over a set's listed rows that resolves every
 * row's links again (a set's first scan, a change of its link rules);
 * see rs_linkkeep.h for the links kept as single rows are written, and
 * docs/ARCHITECTURE.md "Links in the store". */
#ifndef RS_LINKPASS_H
#define RS_LINKPASS_H

#include "rs_linkkeep.h"

/* One pass over the listed rows of set (rules l, NULL: none; digest fp;
 * url_base as for create): its dependencies rebuilt, every row's links
 * resolved again and updated where they changed (*changed: how many;
 * each marked relinked in j, none when j is NULL), fp stored as the
 * digest resolved; in one transaction of its own (none may be open).
 * No lookup asks the store: one read of the listed rows that may be
 * targets (rs_links_may_be_target) into a map, one read of every listed
 * row in listing order that resolves its forward links from the map,
 * writes its dependencies in batches and hands the row to its listed
 * targets, then the targets with their inverse links.  Memory: per
 * listed candidate target its row and the attributes of the listed
 * sources that name it, in a pool of the pass's own allocator, given
 * back to the system when it ends (not to p's).  After a set's first
 * scan whose walk's collection was dropped (rs_linkscan.h) this pass
 * resolves all of its links at a fraction of what resolving each row as
 * the walk writes it costs.  p: a few bytes of scratch. */
apr_status_t rs_linkpass_run(rs_db_t *db, rs_journal_t *j, apr_pool_t *p, const char *set,
                             const rs_links_t *l, const char *url_base, const char *fp,
                             apr_int64_t *changed);

/* At the watcher's start, for set with rules l (NULL: none) of digest fp
 * ("" without rules): when fp differs from the one stored (none stored
 * counts as ""), rebuild the set's dependencies and resolve every listed
 * row's links again, updating and marking relinked those whose encoded
 * links changed (*changed gets their number), then store fp; in one
 * transaction of its own (none may be open).  *ran: 1 when the pass ran
 * and there was something to say (a digest was stored before, or some
 * row's links changed), 0 when fp was the stored one (nothing done) or
 * when the first pass of a set changed nothing.  url_base as for create;
 * scratch allocations from p. */
apr_status_t rs_linkpass_start(rs_db_t *db, rs_journal_t *j, apr_pool_t *p, const char *set,
                               const rs_links_t *l, const char *url_base, const char *fp, int *ran,
                               apr_int64_t *changed);

#endif
