/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_clsource.c - where a set's Change List documents come
 * from: their options (from the set's configuration) and their records.
 *
 * Used by both sides: the watcher writes closed lists into files
 * (mod_resourcesync_changes.c), children stream the open list
 * (mod_resourcesync_openlist.c).  Records are taken from the ring of the
 * status segment (rendered already) while it holds them, then, from the
 * first one it does not hold on, from the store through the caller's
 * `more` function.  The ring has only committed records and the watcher is
 * their only writer, so both give the same records, and a list is the
 * same bytes whichever source its records came from.
 */
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_clsource.h"
#include "mod_resourcesync_status.h"

void rs_clsource_entry_opts(const rs_set_t *set, rs_entry_opts_t *eo)
{
    memset(eo, 0, sizeof(*eo));
    eo->url_base = set->root_url;
    eo->hashes = set->hashes;
    eo->spec10 = set->spec10;
    eo->links = set->links;
}

void rs_clsource_opts(apr_pool_t *p, const rs_set_t *set, const char *history,
                      rs_changelist_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->set = set->name;
    rs_clsource_entry_opts(set, &o->entry);
    o->capability_url = set->capability_url;
    o->index_url = set->cl_index_url;
    o->list_url_prefix = apr_pstrcat(p, set->doc_base, "changelist/", history, "-", NULL);
}

rs_entry_renderer_t *rs_clsource_renderer(apr_pool_t *p, const rs_set_t *set)
{
    rs_changelist_opts_t *o = apr_palloc(p, sizeof(*o));
    rs_clsource_opts(p, set, "", o); /* entries only: no list URL */
    return rs_entry_renderer_create(p, &o->entry);
}

void rs_clsource_init(rs_clsource_t *s, const rs_set_t *set, rs_clsource_more_fn *more, void *baton)
{
    memset(s, 0, sizeof(*s));
    s->set = set;
    s->more = more;
    s->baton = baton;
}

apr_status_t rs_clsource_read(void *baton, apr_pool_t *p, apr_int64_t next, apr_int64_t last,
                              int limit, apr_array_header_t **out)
{
    rs_clsource_t *s = baton;
    *out = apr_array_make(p, limit < 256 ? limit : 256, sizeof(rs_record_t));
    if (!s->from_store) {
        apr_int64_t cont;
        if (rs_status_ring_get(s->set->slot, next, last, limit, p, *out, &cont) >= 0) {
            return APR_SUCCESS;
        }
        s->from_store = 1;
        next = cont;
    }
    if ((*out)->nelts >= limit || next > last) {
        return APR_SUCCESS;
    }
    s->err = s->more(s->baton, p, next, last, limit - (*out)->nelts, *out);
    return s->err;
}

void rs_clsource_append(apr_array_header_t *out, const apr_array_header_t *more)
{
    int i;
    for (i = 0; i < more->nelts; i++) {
        *(rs_record_t *)apr_array_push(out) = APR_ARRAY_IDX(more, i, rs_record_t);
    }
}
