/* SPDX-License-Identifier: Apache-2.0 */
/* rs_listclose.c - closing a set's Change Lists, retention, and their
 * files (see rs_listclose.h). */
#include <string.h>
#include <sys/stat.h>
#include <apr_strings.h>
#include <apr_file_io.h>
#include <apr_portable.h>
#include "rs_listclose.h"
#include "rs_cdump.h"
#include "rs_file.h"
#include "rs_statedir.h"
#include "rs_xml.h"

int rs_listclose_due(const rs_listclose_conf_t *c, const rs_changelist_t *openl, apr_time_t now)
{
    return openl->count > 0 && (openl->count >= c->max_entries || now - openl->from >= c->period);
}

int rs_listclose_batch_due(int max_entries, int known, apr_int64_t count, apr_int64_t bytes,
                           apr_int64_t max_bytes)
{
    return !known || count >= max_entries || (max_bytes > 0 && bytes > max_bytes);
}

/* Longest times: a microsecond fraction of six digits. */
#define LONG_FROM  1
#define LONG_UNTIL 2

apr_int64_t rs_listclose_budget(const rs_changelist_opts_t *o, apr_pool_t *p)
{
    rs_changelist_frame_t fr;
    rs_changelist_t cl;

    memset(&cl, 0, sizeof(cl));
    cl.from = LONG_FROM;
    cl.until = LONG_UNTIL;
    if (rs_changelist_frame(o, &cl, p, &fr) != APR_SUCCESS
        || fr.head_len + fr.tail_len >= RS_XML_MAX_BYTES) {
        return 0;
    }
    return RS_XML_MAX_BYTES - (apr_int64_t)(fr.head_len + fr.tail_len);
}

/* The bytes of a Change List Index naming `closed` lists of the longest
 * id and times, and the open one. */
static apr_int64_t index_bytes(const rs_changelist_opts_t *o, int closed, apr_pool_t *p)
{
    rs_xml_membuf_t mb = { p, NULL, 0, 0 };
    rs_xml_t *w = rs_xml_open(p, rs_xml_membuf_sink, &mb);
    apr_array_header_t *lists = apr_array_make(p, 1, sizeof(rs_changelist_t));
    rs_changelist_t *cl, open;

    memset(&open, 0, sizeof(open));
    open.id = APR_INT64_MAX;
    open.from = LONG_FROM;
    if (closed) {
        cl = apr_array_push(lists);
        *cl = open;
        cl->until = LONG_UNTIL;
    }
    if (!w || rs_changelist_write_index(o, lists, &open, w, p) != APR_SUCCESS) {
        return -1;
    }
    return (apr_int64_t)mb.len;
}

int rs_listclose_index_cap(const rs_changelist_opts_t *o, int max_entries, apr_pool_t *p)
{
    apr_int64_t one = index_bytes(o, 0, p), two = index_bytes(o, 1, p), fit;
    int cap = max_entries < RS_XML_MAX_ENTRIES ? max_entries : RS_XML_MAX_ENTRIES;

    if (one < 0 || two <= one) {
        return cap > 1 ? cap : 1;
    }
    /* one: the frame and the open list's entry; each closed list's entry
     * is at most two - one bytes. */
    fit = 1 + (RS_XML_MAX_BYTES - one) / (two - one);
    if (fit < cap) {
        cap = (int)fit;
    }
    return cap > 1 ? cap : 1;
}

/* Records read at a time while looking for where a full list ends. */
#define CUT_PAGE 1000

apr_status_t rs_listclose_cut(apr_pool_t *p, rs_journal_t *j, const char *set, apr_int64_t first,
                              int n, rs_entry_renderer_t *rr, int paths, apr_int64_t max_bytes,
                              rs_listclose_cut_t *out)
{
    apr_pool_t *pp;
    apr_status_t rv = APR_SUCCESS;
    apr_int64_t prev = 0;
    int i, done = 0;

    memset(out, 0, sizeof(*out));
    apr_pool_create(&pp, p);
    while (!done && rv == APR_SUCCESS) {
        apr_array_header_t *recs;
        apr_pool_clear(pp);
        if ((rv = rs_journal_records(j, pp, set, first, -1, CUT_PAGE, &recs)) != APR_SUCCESS
            || !recs->nelts) {
            break;
        }
        for (i = 0; i < recs->nelts && !done; i++) {
            const rs_record_t *r = &APR_ARRAY_IDX(recs, i, rs_record_t);
            apr_size_t len = 0;
            if (rr && !rs_entry_render(rr, r, &len)) {
                rv = APR_ENOMEM;
                break;
            }
            if (rr && paths) {
                len += (apr_size_t)rs_cdump_path_len(pp, r);
            }
            /* The list ends before this record: it holds n, or this
             * entry would take it past max_bytes. */
            if (out->count == n
                || (rr && out->count && out->bytes + (apr_int64_t)len > max_bytes)) {
                out->last_seq = prev;
                out->until = r->datetime;
                done = 1;
                break;
            }
            out->bytes += (apr_int64_t)len;
            out->count++;
            prev = r->seq;
            first = r->seq + 1;
        }
    }
    apr_pool_destroy(pp);
    return rv;
}

apr_status_t rs_listclose_full(apr_pool_t *p, rs_journal_t *j, const rs_listclose_conf_t *c,
                               apr_int64_t *open_bytes, int *closed_some)
{
    apr_array_header_t *closed;
    rs_changelist_t openl, done;
    apr_status_t rv = APR_SUCCESS;
    rs_entry_renderer_t *rr = NULL;
    apr_pool_t *rp;
    int guard;

    if (c->max_bytes > 0 && c->entry && !(rr = rs_entry_renderer_create(p, c->entry))) {
        return APR_ENOMEM;
    }
    apr_pool_create(&rp, p);
    for (guard = 0; guard < 100000; guard++) {
        rs_listclose_cut_t cut;
        int by_bytes = rr && (*open_bytes < 0 || *open_bytes > c->max_bytes);
        apr_pool_clear(rp);
        if ((rv = rs_journal_lists(j, rp, c->set, &closed, &openl)) != APR_SUCCESS) {
            break;
        }
        if ((openl.count <= c->max_entries && !by_bytes)
            || rs_listclose_cut(rp, j, c->set, openl.first_seq, c->max_entries, rr,
                                c->manifest_paths, c->max_bytes, &cut)
                   != APR_SUCCESS) {
            break;
        }
        if (!cut.last_seq) {
            if (rr) {
                *open_bytes = cut.bytes; /* the whole open list, measured */
            }
            break;
        }
        if (rs_journal_close(j, rp, c->set, cut.last_seq, cut.count, cut.until, &done)
                != APR_SUCCESS
            || !done.id) {
            break;
        }
        if (*open_bytes >= 0) {
            *open_bytes -= cut.bytes;
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

/* The cutoff that drops the oldest closed lists beyond keep, of those
 * that end at or after cutoff (0: none to drop).  A list's until is the
 * next one's from, so untils strictly increase. */
static apr_time_t count_cutoff(const apr_array_header_t *lists, apr_time_t cutoff, int keep)
{
    int i, n = 0;

    for (i = 0; i < lists->nelts; i++) {
        n += APR_ARRAY_IDX(lists, i, rs_changelist_t).until >= cutoff;
    }
    if (n <= keep) {
        return 0;
    }
    return APR_ARRAY_IDX(lists, lists->nelts - keep - 1, rs_changelist_t).until + 1;
}

/* Remove the files of the dropped lists and say so. */
static void expired(apr_pool_t *p, const rs_listclose_conf_t *c, const char *history,
                    const apr_array_header_t *dropped, const rs_logger_t *log, const char *why)
{
    int i;

    for (i = 0; i < dropped->nelts; i++) {
        apr_file_remove(
            rs_statedir_cl_list(p, c->dir, history, APR_ARRAY_IDX(dropped, i, apr_int64_t)), p);
    }
    if (why) {
        rs_log_emit(log, RS_LOG_INFO, 0, "set %s: %d Change Lists %s", c->set, dropped->nelts, why);
    }
    else {
        rs_log_emit(log, RS_LOG_INFO, 0, "set %s: %d Change Lists expired", c->set, dropped->nelts);
    }
}

/* Drop the closed lists that ended before cutoff (rs_journal_expire) and
 * note the time of the drop (rs_journal_drop_note) in the same
 * transaction: the index's mtime moves with it. */
static apr_status_t drop(apr_pool_t *p, rs_journal_t *j, const rs_listclose_conf_t *c,
                         apr_time_t cutoff, apr_time_t now, apr_array_header_t **dropped)
{
    apr_status_t rv = rs_journal_expire(j, p, c->set, cutoff, dropped);
    if (rv == APR_SUCCESS && (*dropped)->nelts) {
        rv = rs_journal_drop_note(j, p, c->set, now);
    }
    return rv;
}

apr_status_t rs_listclose_expire(apr_pool_t *p, rs_journal_t *j, const rs_listclose_conf_t *c,
                                 const char *history, apr_time_t now, const rs_logger_t *log,
                                 int *dropped_some)
{
    apr_array_header_t *dropped, *lists;
    rs_changelist_t openl;
    apr_time_t cutoff = now - c->retention, by_count;
    int cap = c->index_max > 0 ? c->index_max : c->max_entries;
    apr_status_t rv;

    if ((rv = drop(p, j, c, cutoff, now, &dropped)) != APR_SUCCESS) {
        return rv;
    }
    if (dropped->nelts) {
        expired(p, c, history, dropped, log, NULL);
        *dropped_some = 1;
    }
    /* Count retention: the index names the open list and at most
     * cap - 1 closed ones (ResourceSync 1.1 section 7, 50,000 items per
     * document: the Change List Index is a document too). */
    if (rs_journal_lists(j, p, c->set, &lists, &openl) != APR_SUCCESS
        || !(by_count = count_cutoff(lists, cutoff, cap > 1 ? cap - 1 : 0))) {
        return APR_SUCCESS;
    }
    if ((rv = drop(p, j, c, by_count, now, &dropped)) != APR_SUCCESS || !dropped->nelts) {
        return rv;
    }
    expired(p, c, history, dropped, log,
            apr_psprintf(p, "left the Change List Index (it names at most %d lists)", cap));
    *dropped_some = 1;
    return APR_SUCCESS;
}

/* What one file holds: the Change List Index (closed != NULL) or the
 * closed list cl, its records from io. */
typedef struct {
    const rs_changelist_opts_t *o;
    const rs_listclose_io_t *io;
    const rs_changelist_t *cl;
    const apr_array_header_t *closed;
    apr_time_t mtime; /* rs_listclose_mtime or rs_listclose_index_mtime */
} clfile_t;

apr_time_t rs_listclose_mtime(const rs_changelist_t *cl)
{
    return cl->until;
}

apr_time_t rs_listclose_index_mtime(const rs_changelist_t *openl, apr_time_t dropped)
{
    return dropped > openl->from ? dropped : openl->from;
}

/* Give the file f, written in full, the modification time t (µs): the
 * bytes are flushed first, so nothing written later moves it. */
static apr_status_t set_mtime(apr_file_t *f, apr_time_t t)
{
    struct timespec ts[2];
    apr_os_file_t fd;
    apr_status_t rv;

    if ((rv = apr_file_flush(f)) != APR_SUCCESS || (rv = apr_os_file_get(&fd, f)) != APR_SUCCESS) {
        return rv;
    }
    ts[0].tv_sec = ts[1].tv_sec = (time_t)apr_time_sec(t);
    ts[0].tv_nsec = ts[1].tv_nsec = (long)apr_time_usec(t) * 1000;
    return futimens(fd, ts) ? APR_FROM_OS_ERROR(errno) : APR_SUCCESS;
}

/* The file's bytes, then its mtime (rs_listclose_mtime,
 * rs_listclose_index_mtime): the same on every node that writes the file
 * from the same store. */
static apr_status_t write_clfile(void *baton, apr_file_t *f, apr_pool_t *p)
{
    clfile_t *c = baton;
    rs_xml_t *w = rs_xml_open_file(p, f);
    apr_status_t rv;

    if (!w) {
        return APR_ENOMEM;
    }
    if (c->closed) {
        rv = rs_changelist_write_index(c->o, c->closed, c->cl, w, p);
    }
    else {
        rv = rs_changelist_write_from(c->io->read, c->io->source(c->io->baton, p), c->o, c->cl, w,
                                      p);
    }
    return rv == APR_SUCCESS ? set_mtime(f, c->mtime) : rv;
}

/* Write a Change List file (atomically: rs_file_replace). */
static apr_status_t publish_file(apr_pool_t *p, const char *path, const rs_changelist_opts_t *o,
                                 const rs_listclose_io_t *io, const rs_changelist_t *cl,
                                 const apr_array_header_t *closed, apr_time_t mtime)
{
    clfile_t c;
    c.o = o;
    c.io = io;
    c.cl = cl;
    c.closed = closed;
    c.mtime = mtime;
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
            && (rv = publish_file(lp, path, o, io, cl, NULL, rs_listclose_mtime(cl)))
                   != APR_SUCCESS) {
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
                                      const apr_array_header_t *closed, apr_time_t dropped,
                                      int dirty, const rs_logger_t *log)
{
    const char *path = rs_statedir_cl_index(p, c->dir);
    apr_status_t rv;

    if (!dirty && lc->index_written && rs_file_exists(p, path)) {
        return APR_SUCCESS;
    }
    if ((rv = publish_file(p, path, o, NULL, openl, closed,
                           rs_listclose_index_mtime(openl, dropped)))
        != APR_SUCCESS) {
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
    apr_time_t dropped;
    apr_status_t rv;
    int index_dirty = 0;

    apr_int64_t open_bytes = io->open_bytes;

    apr_dir_make_recursive(c->dir, APR_FPROT_OS_DEFAULT, p);
    lc->max_bytes = c->entry ? c->max_bytes : 0;
    if (c->fence && (rv = rs_db_begin_set(c->fence, c->set)) != APR_SUCCESS) {
        return rv;
    }
    if ((rv = rs_listclose_full(p, j, c, &open_bytes, &index_dirty)) == APR_SUCCESS
        && (rv = rs_listclose_on_time(p, j, c, now, &index_dirty)) == APR_SUCCESS) {
        rv = rs_listclose_expire(p, j, c, history, now, log, &index_dirty);
    }
    if (c->fence) { /* committed before any document shows the lists */
        rv = rs_db_end(c->fence, rv);
    }
    if (rv != APR_SUCCESS) {
        return rv;
    }
    if ((rv = rs_journal_lists(j, p, c->set, &closed, &openl)) != APR_SUCCESS
        || (rv = rs_journal_drop_time(j, p, c->set, &dropped)) != APR_SUCCESS
        || (rv = rs_listclose_write_closed(p, c, history, o, io, closed, log)) != APR_SUCCESS) {
        return rv;
    }
    if (io->publish) {
        io->publish(io->baton, p, &openl);
    }
    return rs_listclose_write_index(lc, p, c, o, &openl, closed, dropped, index_dirty, log);
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
