/* SPDX-License-Identifier: Apache-2.0 */
/* rs_linkkeep_priv.h - what rs_linkkeep (a set's links kept as rows are
 * written) and rs_linkpass (one pass over every listed row) share: the
 * keeper's state and three small helpers.  Not for other units. */
#ifndef RS_LINKKEEP_PRIV_H
#define RS_LINKKEEP_PRIV_H

#include "rs_linkkeep.h"

#define META_PREFIX "links:" /* links:<set>: the digest of the rules last resolved */

struct rs_linkkeep_t {
    const rs_links_t *l; /* NULL: no rules (every row loses its links) */
    const char *set;
    const char *url_base;
    int local;        /* rules may name local targets: dependencies kept */
    apr_pool_t *pool; /* scratch, cleared at each call */
    /* The row of the last rs_linkkeep_row, the local targets it names (or
     * named, when it stopped being listed) and the sources that name it
     * (NULL: none, or not asked), for rs_linkkeep_done. */
    const char *path;
    apr_array_header_t *targets, *sources;
    /* From rs_linkkeep_row to rs_linkkeep_done: that row as it is being
     * written (lookups of it need not ask the store). */
    int written;
    rs_item_t row;
};

/* dir "/" name, or name at the root (dir ""). */
const char *rs_linkkeep_join(apr_pool_t *p, const char *dir, const char *name);

/* dir and name of a set-relative path (*name points into path). */
void rs_linkkeep_split(apr_pool_t *p, const char *path, const char **dir, const char **name);

/* Two encoded links (NULL or "": none) are the same. */
int rs_linkkeep_same(const char *a, const char *b);

/* rs_links_lookup_fn for what wants only the dependencies of a path (the
 * local targets its rules name): no target is looked up, none is listed. */
int rs_linkkeep_lookup_none(void *baton, apr_pool_t *p, const char *path, rs_item_t *out);

/* A pool of its own allocator (max_free: what it keeps of freed memory),
 * child of no other: what a pass over a whole set allocates goes back to
 * the system when it is destroyed, not to the caller's allocator (the
 * watcher's keeps 4 MiB of freed blocks for ever). */
apr_pool_t *rs_linkkeep_own_pool(apr_size_t max_free);

/* The frame of a pass that rebuilds a set's links: in one transaction of
 * its own (none may be open), the set's dependencies emptied, fn(baton)
 * (which writes them again and resolves the rows), then fp stored as the
 * digest resolved (meta links:<set>); everything rolled back when one of
 * them fails.  p: scratch. */
apr_status_t rs_linkkeep_rebuild(rs_db_t *db, apr_pool_t *p, const char *set, const char *fp,
                                 apr_status_t (*fn)(void *baton), void *baton);

#endif
