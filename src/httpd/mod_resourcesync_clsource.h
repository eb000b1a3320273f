/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_clsource.h - the declarations of mod_resourcesync_clsource.c. */
#ifndef MOD_RESOURCESYNC_CLSOURCE_H
#define MOD_RESOURCESYNC_CLSOURCE_H

#include "mod_resourcesync.h"
#include "rs_changelist.h"
#include "rs_entry.h"
#include "mod_resourcesync_status.h"

/* mod_resourcesync_clsource.c: a set's Change List documents - their
 * options, and their records from the ring first, then the store. */
/* The entry options of set's change entries: the same for Change Lists,
 * Change Dump manifests and change notifications, so one change is the
 * same <url> bytes everywhere. */
void rs_clsource_entry_opts(const rs_set_t *set, rs_entry_opts_t *eo);
/* The options of set's Change List documents of history (the list URLs
 * are "<doc_base>changelist/<history>-<id>.xml"). */
void rs_clsource_opts(apr_pool_t *p, const rs_set_t *set, const char *history,
                      rs_changelist_opts_t *o);
/* A renderer of set's entries, with its options, from p (NULL on failure). */
rs_entry_renderer_t *rs_clsource_renderer(apr_pool_t *p, const rs_set_t *set);
/* Records next..last (at most limit) read from the store, appended to out
 * (an array of rs_record_t). */
typedef apr_status_t rs_clsource_more_fn(void *baton, apr_pool_t *p, apr_int64_t next,
                                         apr_int64_t last, int limit, apr_array_header_t *out);
/* A ring-first source: one per document written. */
typedef struct rs_clsource_t {
    const rs_set_t *set;
    int from_store; /* the ring no longer holds the rest */
    rs_clsource_more_fn *more;
    void *baton;
    apr_status_t err; /* of `more`: the store failed */
} rs_clsource_t;
/* Prepare s for a document of set, `more` reading the store. */
void rs_clsource_init(rs_clsource_t *s, const rs_set_t *set, rs_clsource_more_fn *more,
                      void *baton);
/* rs_changelist_source_fn (baton: an rs_clsource_t): the ring while it
 * holds the records, then the store through `more`. */
apr_status_t rs_clsource_read(void *baton, apr_pool_t *p, apr_int64_t next, apr_int64_t last,
                              int limit, apr_array_header_t **out);
/* Append the records of `more` to out (arrays of rs_record_t). */
void rs_clsource_append(apr_array_header_t *out, const apr_array_header_t *more);

#endif
