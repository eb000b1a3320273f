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

#endif
