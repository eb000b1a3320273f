/* SPDX-License-Identifier: Apache-2.0 */
/* rs_listfollow.c - a follower's Change List files (see rs_listfollow.h). */
#include <string.h>
#include <apr_file_io.h>
#include <apr_strings.h>
#include "rs_listfollow.h"
#include "rs_parse.h"
#include "rs_statedir.h"

/* Whether id is one of closed's (sorted by id). */
static int holds(const apr_array_header_t *closed, apr_int64_t id)
{
    int lo = 0, hi = closed->nelts - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        apr_int64_t m = APR_ARRAY_IDX(closed, mid, rs_changelist_t).id;
        if (m == id) {
            return 1;
        }
        if (m < id) {
            lo = mid + 1;
        }
        else {
            hi = mid - 1;
        }
    }
    return 0;
}

int rs_listfollow_prune(apr_pool_t *p, const rs_listclose_conf_t *c, const char *history,
                        const apr_array_header_t *closed)
{
    char h[RS_HISTORY_LEN + 1];
    apr_finfo_t fi;
    apr_dir_t *d;
    apr_int64_t id;
    apr_pool_t *lp;
    int gone = 0;

    if (apr_dir_open(&d, c->dir, p) != APR_SUCCESS) {
        return 0;
    }
    apr_pool_create(&lp, p);
    while (apr_dir_read(&fi, APR_FINFO_NAME, d) == APR_SUCCESS) {
        if (rs_statedir_is_cl_list(fi.name, h, &id) && !strcmp(h, history) && !holds(closed, id)) {
            apr_pool_clear(lp);
            gone += apr_file_remove(apr_pstrcat(lp, c->dir, "/", fi.name, NULL), lp) == APR_SUCCESS;
        }
    }
    apr_dir_close(d);
    apr_pool_destroy(lp);
    return gone;
}

/* Whether the lists, or the time of the last drop, differ from what lf
 * last saw. */
static int changed(const rs_listfollow_t *lf, const apr_array_header_t *closed,
                   const rs_changelist_t *openl, apr_time_t dropped)
{
    const rs_changelist_t *first = closed->nelts ? &APR_ARRAY_IDX(closed, 0, rs_changelist_t)
                                                 : NULL;
    const rs_changelist_t *last =
        closed->nelts ? &APR_ARRAY_IDX(closed, closed->nelts - 1, rs_changelist_t) : NULL;
    return !lf->known || lf->dropped != dropped || lf->nclosed != closed->nelts
           || lf->open_id != openl->id || lf->open_from != openl->from
           || lf->first_id != (first ? first->id : 0) || lf->last_id != (last ? last->id : 0);
}

static void remember(rs_listfollow_t *lf, const apr_array_header_t *closed,
                     const rs_changelist_t *openl, apr_time_t dropped)
{
    lf->known = 1;
    lf->dropped = dropped;
    lf->nclosed = closed->nelts;
    lf->first_id = closed->nelts ? APR_ARRAY_IDX(closed, 0, rs_changelist_t).id : 0;
    lf->last_id = closed->nelts ? APR_ARRAY_IDX(closed, closed->nelts - 1, rs_changelist_t).id : 0;
    lf->open_id = openl->id;
    lf->open_from = openl->from;
}

apr_status_t rs_listfollow_update(rs_listfollow_t *lf, apr_pool_t *p, rs_journal_t *j,
                                  const rs_listclose_conf_t *c, const char *history,
                                  const rs_changelist_opts_t *o, const rs_listclose_io_t *io,
                                  int seeding, const rs_logger_t *log)
{
    apr_array_header_t *closed;
    rs_changelist_t openl;
    apr_time_t dropped;
    apr_status_t rv;

    if (seeding) {
        memset(lf, 0, sizeof(*lf));
    }
    /* The drop's time before the lists, in statements of their own: an
     * expiry committed between the two gives the new lists with the old
     * time, until the expiry's notification (sent at its commit, which
     * came after the first read: it is taken at a later turn, or the
     * next poll reads the store) finds the time changed and the index is
     * written again with the writer's mtime; meanwhile a client may get
     * a 304 by date, as the writer gave before the expiry, or the new
     * bytes with the old date, which a later revalidation fetches again.
     * The other order could give the old lists with the new time: a
     * client that took them would be answered 304 for the new bytes for
     * good. */
    if ((rv = rs_journal_drop_time(j, p, c->set, &dropped)) != APR_SUCCESS
        || (rv = rs_journal_lists(j, p, c->set, &closed, &openl)) != APR_SUCCESS) {
        return rv;
    }
    if (!openl.from) {
        return APR_SUCCESS; /* the writer has not started the journal yet */
    }
    if (!changed(lf, closed, &openl, dropped)) {
        io->publish(io->baton, p, &openl);
        return APR_SUCCESS;
    }
    apr_dir_make_recursive(c->dir, APR_FPROT_OS_DEFAULT, p);
    rs_listfollow_prune(p, c, history, closed);
    if ((rv = rs_listclose_write_closed(p, c, history, o, io, closed, log)) != APR_SUCCESS) {
        return rv;
    }
    if (!seeding) {
        io->publish(io->baton, p, &openl);
    }
    if ((rv = rs_listclose_write_index(&lf->lc, p, c, o, &openl, closed, dropped, 1, log))
        != APR_SUCCESS) {
        return rv;
    }
    if (seeding) {
        io->publish(io->baton, p, &openl);
    }
    remember(lf, closed, &openl, dropped);
    return APR_SUCCESS;
}
