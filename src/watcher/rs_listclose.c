/* SPDX-License-Identifier: Apache-2.0 */
/* rs_listclose.c - closing a set's Change Lists, retention, and their
 * files (see rs_listclose.h). */
#include <apr_strings.h>
#include <apr_file_io.h>
#include "rs_listclose.h"
#include "rs_file.h"
#include "rs_statedir.h"
#include "rs_xml.h"

int rs_listclose_due(const rs_listclose_conf_t *c, const rs_changelist_t *openl, apr_time_t now)
{
    return openl->count > 0 && (openl->count >= c->max_entries || now - openl->from >= c->period);
}

int rs_listclose_batch_due(int max_entries, int known, apr_int64_t count)
{
    return !known || count >= max_entries;
}

/* Records read at a time while looking for where a full list ends. */
#define CUT_PAGE 1000

apr_status_t rs_listclose_cut(apr_pool_t *p, rs_journal_t *j, const char *set, apr_int64_t first,
                              int n, apr_int64_t *last_seq, apr_time_t *until)
{
    apr_pool_t *pp;
    apr_status_t rv = APR_SUCCESS;
    int seen = 0, i;

    *last_seq = 0;
    apr_pool_create(&pp, p);
    while (seen <= n) {
        apr_array_header_t *recs;
        apr_pool_clear(pp);
        if ((rv = rs_journal_records(j, pp, set, first, -1, CUT_PAGE, &recs)) != APR_SUCCESS
            || !recs->nelts) {
            break;
        }
        for (i = 0; i < recs->nelts && seen <= n; i++, seen++) {
            const rs_record_t *r = &APR_ARRAY_IDX(recs, i, rs_record_t);
            if (seen == n - 1) {
                *last_seq = r->seq;
            }
            else if (seen == n) {
                *until = r->datetime;
            }
            first = r->seq + 1;
        }
    }
    if (seen <= n) {
        *last_seq = 0; /* no record after the n-th: nothing to close */
    }
    apr_pool_destroy(pp);
    return rv;
}

apr_status_t rs_listclose_full(apr_pool_t *p, rs_journal_t *j, const rs_listclose_conf_t *c,
                               int *closed_some)
{
    apr_array_header_t *closed;
    rs_changelist_t openl, done;
    apr_status_t rv = APR_SUCCESS;
    apr_pool_t *rp;
    int guard;

    apr_pool_create(&rp, p);
    for (guard = 0; guard < 100000; guard++) {
        apr_int64_t last_seq;
        apr_time_t until = 0;
        apr_pool_clear(rp);
        if ((rv = rs_journal_lists(j, rp, c->set, &closed, &openl)) != APR_SUCCESS) {
            break;
        }
        if (openl.count <= c->max_entries
            || rs_listclose_cut(rp, j, c->set, openl.first_seq, c->max_entries, &last_seq, &until)
                   != APR_SUCCESS
            || !last_seq
            || rs_journal_close(j, rp, c->set, last_seq, c->max_entries, until, &done)
                   != APR_SUCCESS
            || !done.id) {
            break;
        }
        *closed_some = 1;
    }
    apr_pool_destroy(rp);
    return rv;
}

apr_status_t rs_listclose_on_time(apr_pool_t *p, rs_journal_t *j, const rs_listclose_conf_t *c,
                                  apr_time_t now, int *closed_some)
{
    apr_array_header_t *closed;
    rs_changelist_t openl, done;
    apr_status_t rv;

    if ((rv = rs_journal_lists(j, p, c->set, &closed, &openl)) != APR_SUCCESS) {
        return rv;
    }
    if (rs_listclose_due(c, &openl, now)
        && rs_journal_close(j, p, c->set, -1, 0, now, &done) == APR_SUCCESS && done.id) {
        *closed_some = 1;
    }
    return APR_SUCCESS;
}

void rs_listclose_expire(apr_pool_t *p, rs_journal_t *j, const rs_listclose_conf_t *c,
                         const char *history, apr_time_t now, const rs_logger_t *log,
                         int *dropped_some)
{
    apr_array_header_t *dropped;
    int i;

    if (rs_journal_expire(j, p, c->set, now - c->retention, &dropped) != APR_SUCCESS
        || !dropped->nelts) {
        return;
    }
    for (i = 0; i < dropped->nelts; i++) {
        apr_file_remove(
            rs_statedir_cl_list(p, c->dir, history, APR_ARRAY_IDX(dropped, i, apr_int64_t)), p);
    }
    rs_log_emit(log, RS_LOG_INFO, 0, "set %s: %d Change Lists expired", c->set, dropped->nelts);
    *dropped_some = 1;
}

/* What one file holds: the Change List Index (closed != NULL) or the
 * closed list cl, its records from io. */
typedef struct {
    const rs_changelist_opts_t *o;
    const rs_listclose_io_t *io;
    const rs_changelist_t *cl;
    const apr_array_header_t *closed;
} clfile_t;

static apr_status_t write_clfile(void *baton, apr_file_t *f, apr_pool_t *p)
{
    clfile_t *c = baton;
    rs_xml_t *w = rs_xml_open_file(p, f);

    if (!w) {
        return APR_ENOMEM;
    }
    if (c->closed) {
        return rs_changelist_write_index(c->o, c->closed, c->cl, w, p);
    }
    return rs_changelist_write_from(c->io->read, c->io->source(c->io->baton, p), c->o, c->cl, w, p);
}

/* Write a Change List file (atomically: rs_file_replace). */
static apr_status_t publish_file(apr_pool_t *p, const char *path, const rs_changelist_opts_t *o,
                                 const rs_listclose_io_t *io, const rs_changelist_t *cl,
                                 const apr_array_header_t *closed)
{
    clfile_t c;
    c.o = o;
    c.io = io;
    c.cl = cl;
    c.closed = closed;
    return rs_file_replace(p, path, write_clfile, &c);
}

apr_status_t rs_listclose_write_closed(apr_pool_t *p, const rs_listclose_conf_t *c,
                                       const char *history, const rs_changelist_opts_t *o,
                                       const rs_listclose_io_t *io,
                                       const apr_array_header_t *closed, const rs_logger_t *log)
{
    apr_status_t rv = APR_SUCCESS;
    apr_pool_t *lp;
    int i;

    apr_pool_create(&lp, p);
    for (i = 0; i < closed->nelts && rv == APR_SUCCESS; i++) {
        const rs_changelist_t *cl = &APR_ARRAY_IDX(closed, i, rs_changelist_t);
        const char *path;
        apr_pool_clear(lp);
        path = rs_statedir_cl_list(lp, c->dir, history, cl->id);
        if (!rs_file_exists(lp, path)
            && (rv = publish_file(lp, path, o, io, cl, NULL)) != APR_SUCCESS) {
            rs_log_emit(log, RS_LOG_ERR, rv, "set %s: cannot write Change List %s", c->set, path);
        }
    }
    apr_pool_destroy(lp);
    return rv;
}

/* The index changes only when lists close or expire (the open list's
 * entry has no until).  Each watcher also writes it once, at its first
 * update of the set: an earlier watcher may have been killed between
 * closing a list in the store and writing the index, which would
 * otherwise stay stale until the next close. */
apr_status_t rs_listclose_write_index(rs_listclose_t *lc, apr_pool_t *p,
                                      const rs_listclose_conf_t *c, const rs_changelist_opts_t *o,
                                      const rs_changelist_t *openl,
                                      const apr_array_header_t *closed, int dirty,
                                      const rs_logger_t *log)
{
    const char *path = rs_statedir_cl_index(p, c->dir);
    apr_status_t rv;

    if (!dirty && lc->index_written && rs_file_exists(p, path)) {
        return APR_SUCCESS;
    }
    if ((rv = publish_file(p, path, o, NULL, openl, closed)) != APR_SUCCESS) {
        rs_log_emit(log, RS_LOG_ERR, rv, "set %s: cannot write its Change List Index", c->set);
        return rv;
    }
    lc->index_written = 1;
    return APR_SUCCESS;
}

apr_status_t rs_listclose_update(rs_listclose_t *lc, apr_pool_t *p, rs_journal_t *j,
                                 const rs_listclose_conf_t *c, const char *history,
                                 const rs_changelist_opts_t *o, const rs_listclose_io_t *io,
                                 apr_time_t now, const rs_logger_t *log)
{
    apr_array_header_t *closed;
    rs_changelist_t openl;
    apr_status_t rv;
    int index_dirty = 0;

    apr_dir_make_recursive(c->dir, APR_FPROT_OS_DEFAULT, p);
    if ((rv = rs_listclose_full(p, j, c, &index_dirty)) != APR_SUCCESS
        || (rv = rs_listclose_on_time(p, j, c, now, &index_dirty)) != APR_SUCCESS) {
        return rv;
    }
    rs_listclose_expire(p, j, c, history, now, log, &index_dirty);
    if ((rv = rs_journal_lists(j, p, c->set, &closed, &openl)) != APR_SUCCESS
        || (rv = rs_listclose_write_closed(p, c, history, o, io, closed, log)) != APR_SUCCESS) {
        return rv;
    }
    if (io->publish) {
        io->publish(io->baton, p, &openl);
    }
    return rs_listclose_write_index(lc, p, c, o, &openl, closed, index_dirty, log);
}

void rs_listclose_remove_legacy(apr_pool_t *p, const char *dir)
{
    apr_dir_t *d;
    apr_finfo_t fi;

    if (apr_dir_open(&d, dir, p) != APR_SUCCESS) {
        return;
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME, d) == APR_SUCCESS) {
        if (rs_statedir_is_cl_legacy(fi.name)) {
            apr_file_remove(apr_pstrcat(p, dir, "/", fi.name, NULL), p);
        }
    }
    apr_dir_close(d);
}
