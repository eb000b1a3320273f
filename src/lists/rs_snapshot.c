/* SPDX-License-Identifier: Apache-2.0 */
/* rs_snapshot.c - see rs_snapshot.h */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <apr_file_io.h>
#include <apr_file_info.h>
#include <apr_strings.h>
#include "rs_file.h"
#include "rs_partition.h"
#include "rs_snapdoc.h"
#include "rs_snapparts.h"
#include "rs_snapshot.h"
#include "rs_statedir.h"
#include "rs_xml.h"

#define PAGE_ROWS 5000
/* More changed paths than this since the previous snapshot: every part
 * is written (the sorted paths are held in memory). */
#define CHANGES_MAX 100000

/* Large writes: cheaper, in fewer extents, faster to serve.  A snapshot
 * is complete on disk before its directory's rename publishes it: parts
 * are closed with their writeback started (rs_file_finish_later) and
 * synced together (rs_snapparts_sync) before the part table, the index
 * and the info file (each synced in turn; the info file, last, says the
 * snapshot is complete), so the disk writes a part while the next ones
 * are made instead of the writer waiting once per part. */
#define OUT_BUFSIZE (1024 * 1024)

/* One snapshot being written.  Lifecycle: one document (file) open at a
 * time, in `fp`, cleared when it is finished; per-entry memory in `ep`;
 * the index's part table (and each part's last key) in `p`, one element
 * per part.  Every failure keeps its cause: the writer on the file
 * remembers why a write failed (rs_xml_error). */
typedef struct {
    const rs_snapshot_opts_t *o;
    const char *dir;
    apr_uint64_t gen;
    apr_int64_t max;           /* entries per document */
    apr_int64_t max_bytes;     /* bytes of a document's entries (frame_bytes) */
    apr_int64_t max_parts;     /* parts the index may name (index_cap) */
    apr_uint64_t interval;     /* the parts' cut interval (pick_interval) */
    int indexed;               /* an index and parts, not one list */
    int too_big;               /* the single list passed max_bytes */
    apr_int64_t doc_bytes;     /* entries' bytes of the open document */
    rs_partition_t pt;         /* the cuts of the parts (indexed) */
    apr_array_header_t *parts; /* rs_snappart_t of the index, in order */
    rs_snappart_t *cur;        /* the part being written (indexed) */
    apr_pool_t *p, *fp, *ep;
    apr_file_t *f;
    rs_xml_t *w;             /* NULL: no document open */
    rs_entry_renderer_t *rr; /* renders each entry (from p) */
    rs_snapshot_info_t *info;
    char *key; /* the last entry written: dir, NUL, name, NUL */
    apr_size_t dlen, cap;
} swriter_t;

/* Open document n of the snapshot (0: resourcelist.xml) for writing. */
static apr_status_t doc_open(swriter_t *sw, int n)
{
    apr_status_t rv =
        rs_file_create(&sw->f, rs_statedir_gen_file(sw->fp, sw->dir, n), OUT_BUFSIZE, sw->fp);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    sw->w = rs_xml_open_file(sw->fp, sw->f);
    return sw->w ? APR_SUCCESS : APR_ENOMEM;
}

/* Close the open document and finish its file: complete on disk, or
 * (later) with its writeback started, to be synced by rs_snapparts_sync. */
static apr_status_t doc_close(swriter_t *sw, int later)
{
    apr_status_t rv, xe = APR_SUCCESS;

    if (rs_xml_end(sw->w) < 0) {
        xe = rs_xml_error(sw->w);
    }
    sw->w = NULL;
    rv = later ? rs_file_finish_later(sw->f) : rs_file_finish(sw->f);
    /* A failed write says more than the close after it. */
    if (xe != APR_SUCCESS && (xe != APR_EGENERAL || rv == APR_SUCCESS)) {
        rv = xe;
    }
    apr_pool_clear(sw->fp);
    return rv;
}

/* Finish the part being written, whose last entry is the last one
 * written (sw->key). */
static apr_status_t part_close(swriter_t *sw)
{
    sw->cur->last_dir = apr_pstrmemdup(sw->p, sw->key, sw->dlen);
    sw->cur->last_name = apr_pstrdup(sw->p, sw->key + sw->dlen + 1);
    sw->cur = NULL;
    return doc_close(sw, 1);
}

/* Remember row it as the last entry written (the key grows from the
 * writer's pool only when a longer one comes). */
static void keep_key(swriter_t *sw, const char *dir, const char *name)
{
    apr_size_t dl = strlen(dir), nl = strlen(name);

    if (dl + nl + 2 > sw->cap) {
        sw->cap = 2 * (dl + nl + 2) > 256 ? 2 * (dl + nl + 2) : 256;
        sw->key = apr_palloc(sw->p, sw->cap);
    }
    memcpy(sw->key, dir, dl + 1);
    memcpy(sw->key + dl + 1, name, nl + 1);
    sw->dlen = dl;
}

/* Start the document that takes the next entry: the single list, or a
 * new part of this generation (numbered by its place in the index). */
static apr_status_t next_doc(swriter_t *sw)
{
    apr_status_t rv;

    if (sw->w) {
        return APR_SUCCESS;
    }
    if (sw->indexed) {
        sw->cur = apr_array_push(sw->parts);
        memset(sw->cur, 0, sizeof(*sw->cur));
        sw->cur->gen = sw->gen;
        sw->cur->n = sw->parts->nelts;
        sw->cur->at = sw->o->at;
        sw->cur->completed = sw->o->completed;
        if (!sw->info->first_new) {
            sw->info->first_new = sw->cur->n;
        }
    }
    if ((rv = doc_open(sw, sw->indexed ? sw->cur->n : 0)) != APR_SUCCESS) {
        return rv;
    }
    sw->doc_bytes = 0;
    return rs_snapdoc_head(sw->w, sw->o, sw->indexed) < 0 ? rs_xml_error(sw->w) : APR_SUCCESS;
}

/* Write the entry of inventory row it; *cut is set when it ends its part
 * (which is then finished).  A part also ends before an entry that would
 * take its entries past max_bytes; the single list then stops with
 * too_big set (written again as an index). */
static apr_status_t put_row(swriter_t *sw, const rs_item_t *it, int *cut)
{
    rs_record_t r;
    apr_status_t rv;
    const char *ent;
    apr_size_t len = 0;
    unsigned c = 0;

    *cut = 0;
    /* The entry's bytes from the one renderer, written as they are. */
    rs_entry_from_item(&r, it);
    if (!(ent = rs_entry_render(sw->rr, &r, &len))) {
        return APR_ENOMEM;
    }
    if (sw->indexed) {
        /* Content-defined cuts: the path's hash (of dir/name); entries
         * and their rendered bytes as the limits. */
        char buf[1024];
        apr_size_t dl = strlen(it->dir), nl = strlen(it->name), pl = dl + nl + 1;
        char *path = pl + 1 <= sizeof(buf) ? buf : apr_palloc(sw->ep, pl + 1);
        if (dl) {
            memcpy(path, it->dir, dl);
            path[dl] = '/';
        }
        else {
            pl = nl;
        }
        memcpy(path + (dl ? dl + 1 : 0), it->name, nl + 1);
        c = rs_partition_add(&sw->pt, path, pl, (apr_int64_t)len);
        if (path != buf) {
            apr_pool_clear(sw->ep);
        }
        if ((c & RS_PARTITION_CUT_BEFORE) && sw->w && (rv = part_close(sw)) != APR_SUCCESS) {
            return rv;
        }
    }
    else if (sw->doc_bytes + (apr_int64_t)len > sw->max_bytes) {
        sw->too_big = 1;
        return APR_EGENERAL;
    }
    if ((rv = next_doc(sw)) != APR_SUCCESS) {
        return rv;
    }
    if (rs_xml_raw(sw->w, ent, len) < 0) {
        return rs_xml_error(sw->w);
    }
    sw->doc_bytes += (apr_int64_t)len;
    keep_key(sw, it->dir, it->name);
    sw->info->entries++;
    sw->info->bytes += it->size;
    if (!sw->indexed) {
        return APR_SUCCESS;
    }
    sw->cur->entries++;
    sw->cur->bytes += it->size;
    *cut = (c & RS_PARTITION_CUT_AFTER) != 0;
    return *cut ? part_close(sw) : APR_SUCCESS;
}

/* Where a stream of rows stops: at the end of the listing (stop NULL), or
 * (stop) right after a cut at a key stop accepts. */
typedef int rs_stop_fn(void *baton, const rs_item_t *it);

/* One page of rows streamed from the store into the documents.  The
 * rows are not copied: each is written while the store reads it, and
 * only the key of the last one is kept (in key, grown from the
 * writer's pool), since the page's row is gone after its call. */
typedef struct {
    swriter_t *sw;
    rs_stop_fn *stop;
    void *baton;
    apr_status_t rv; /* the first failure */
    int n;           /* rows of this page */
    int stopped;
} rows_t;

/* rs_inventory_each_fn: write the row; stop at a failure or where stop
 * accepts a cut. */
static int take_row(void *baton, const rs_item_t *it)
{
    rows_t *r = baton;
    int cut;

    r->n++;
    if ((r->rv = put_row(r->sw, it, &cut)) != APR_SUCCESS) {
        return 1;
    }
    r->stopped = cut && r->stop && r->stop(r->baton, it);
    return r->stopped;
}

/* The listed rows of the set after (*adir, *aname) (NULL: from the
 * first), a page at a time, into the list or new parts, from a fresh
 * partition state, until stop accepts a cut (returns 1, the position is
 * then that row) or the listing ends (returns 0, the last document
 * finished). */
static apr_status_t write_rows(rs_db_t *st, swriter_t *sw, const char **adir, const char **aname,
                               rs_stop_fn *stop, void *baton, int *stopped)
{
    apr_status_t rv = APR_SUCCESS;
    rows_t r;

    memset(&r, 0, sizeof(r));
    r.sw = sw;
    r.stop = stop;
    r.baton = baton;
    rs_partition_init(&sw->pt, sw->max, sw->max_bytes, sw->interval);
    for (;;) {
        r.n = 0;
        rv = rs_inventory_each(st, sw->o->set, *adir, *aname, PAGE_ROWS, RS_INVENTORY_LISTING,
                               take_row, &r);
        if (rv == APR_SUCCESS) {
            rv = r.rv;
        }
        if (rv == APR_SUCCESS && r.n) {
            *adir = apr_pstrmemdup(sw->p, sw->key, sw->dlen);
            *aname = apr_pstrdup(sw->p, sw->key + sw->dlen + 1);
        }
        if (rv != APR_SUCCESS || r.stopped || r.n < PAGE_ROWS) {
            break;
        }
    }
    *stopped = r.stopped;
    /* An empty set still has its (empty) single list. */
    if (rv == APR_SUCCESS && !*stopped && !sw->indexed) {
        rv = next_doc(sw);
    }
    /* After a failure the open document goes with its pool.  The last
     * row is the saved position: it may point into a page already
     * cleared (when the listing ends on a page boundary the last page
     * read is empty). */
    if (rv == APR_SUCCESS && !*stopped && sw->w) {
        rv = sw->indexed ? part_close(sw) : doc_close(sw, 0);
    }
    return rv;
}

/* resourcelist.xml as the Resource List Index. */
static apr_status_t write_index(swriter_t *sw)
{
    apr_status_t rv;

    if ((rv = doc_open(sw, 0)) != APR_SUCCESS) {
        return rv;
    }
    if (rs_snapdoc_index(sw->o, sw->w, sw->parts, sw->ep) < 0) {
        return rs_xml_error(sw->w);
    }
    return doc_close(sw, 0);
}

/* The info file, written last: its presence says the snapshot is
 * complete. */
static apr_status_t write_info(swriter_t *sw)
{
    const rs_snapshot_info_t *info = sw->info;
    const char *s = apr_psprintf(sw->fp,
                                 "%" APR_UINT64_T_FMT " %" APR_TIME_T_FMT " %" APR_TIME_T_FMT
                                 " %" APR_INT64_T_FMT " %d %" APR_INT64_T_FMT "\n",
                                 info->gen, info->at, info->completed, info->entries, info->parts,
                                 info->bytes);
    apr_file_t *f;
    apr_status_t rv, frv;

    if ((rv = rs_file_create(&f, rs_statedir_gen_info(sw->fp, sw->dir), OUT_BUFSIZE, sw->fp))
        != APR_SUCCESS) {
        return rv;
    }
    rv = apr_file_write_full(f, s, strlen(s), NULL);
    frv = rs_file_finish(f);
    return rv != APR_SUCCESS ? rv : frv;
}

/* No content-defined cut: every part full (max entries or bytes). */
#define NO_CUTS (APR_UINT64_C(1) << 63)

static apr_status_t start_over(swriter_t *sw);

/* Every part from scratch: the single list or the parts, cut at the
 * interval for the set's size (unless sw->interval is set already); a
 * single list that passes max_bytes is written again as an index. */
static apr_status_t write_all(rs_db_t *st, swriter_t *sw)
{
    const char *adir = NULL, *aname = NULL;
    apr_int64_t total = 0;
    apr_status_t rv;
    int stopped;

    if ((rv = rs_inventory_count(st, sw->o->set, &total)) != APR_SUCCESS) {
        return rv;
    }
    sw->indexed = total > sw->max;
    if (!sw->interval) {
        sw->interval = rs_snapdoc_interval(sw->max, sw->max_parts, total);
    }
    rv = write_rows(st, sw, &adir, &aname, NULL, NULL, &stopped);
    if (rv != APR_SUCCESS && sw->too_big) {
        sw->too_big = 0;
        if ((rv = start_over(sw)) == APR_SUCCESS) {
            sw->indexed = 1;
            adir = aname = NULL;
            rv = write_rows(st, sw, &adir, &aname, NULL, NULL, &stopped);
        }
    }
    return rv;
}

/* The part table, the index (if any), then the info file. */
static apr_status_t write_tail(swriter_t *sw)
{
    rs_snapparts_t t;
    apr_status_t rv = APR_SUCCESS;

    sw->info->gen = sw->gen;
    sw->info->at = sw->o->at;
    sw->info->completed = sw->o->completed;
    sw->info->parts = sw->indexed ? sw->parts->nelts : 0;
    if (sw->indexed) {
        if ((rv = rs_snapparts_sync(sw->ep, sw->dir, sw->parts, sw->gen)) != APR_SUCCESS) {
            return rv;
        }
        t.seq = sw->o->seq;
        t.at = sw->o->at;
        t.ident = rs_snapparts_ident(sw->p, sw->o->ident, sw->interval);
        t.parts = sw->parts;
        if ((rv = rs_snapparts_write(sw->fp, sw->dir, &t)) == APR_SUCCESS) {
            rv = write_index(sw);
        }
    }
    return rv == APR_SUCCESS ? write_info(sw) : rv;
}

/* Incremental writing.  The walk over the previous generation's parts
 * (old, in index order) and the changed paths (keys, sorted): at an
 * aligned position (the start, or right after a boundary both
 * partitionings share) the next old part is kept when no changed path
 * falls in its range (the last part's range is open to the end);
 * otherwise rows are written from there with a fresh partition state
 * until a new cut lands on an old boundary (aligned again: from then on
 * the cuts of the old partitioning and of one from scratch agree, since
 * rs_partition depends on nothing before a cut) or the listing ends.
 * So the parts are exactly those a write from scratch would cut. */
typedef struct {
    const apr_array_header_t *old; /* rs_snappart_t */
    int i;                         /* the next old part */
} walk_t;

static int key_cmp(const rs_snappart_t *s, const char *dir, const char *name)
{
    return rs_snapparts_cmp(s->last_dir, s->last_name, dir, name);
}

/* rs_stop_fn: a new cut after row it; aligned when an old part (not the
 * last: its end is the listing's) ends there too. */
static int aligned(void *baton, const rs_item_t *it)
{
    walk_t *wk = baton;
    int m = wk->old->nelts;

    while (wk->i < m - 1
           && key_cmp(&APR_ARRAY_IDX(wk->old, wk->i, rs_snappart_t), it->dir, it->name) < 0) {
        wk->i++;
    }
    if (wk->i < m - 1
        && !key_cmp(&APR_ARRAY_IDX(wk->old, wk->i, rs_snappart_t), it->dir, it->name)) {
        wk->i++;
        return 1;
    }
    return 0;
}

/* Keep old part s: a hard link into the new generation, same inode. */
static apr_status_t keep_part(swriter_t *sw, const rs_snappart_t *s)
{
    const char *from = s->gen == sw->o->prev_gen
                           ? rs_statedir_gen_file(sw->ep, sw->o->prev_dir, s->n)
                           : rs_statedir_gen_kept(sw->ep, sw->o->prev_dir, s->gen, s->n);
    const char *to = rs_statedir_gen_kept(sw->ep, sw->dir, s->gen, s->n);
    apr_status_t rv = apr_file_link(from, to);

    apr_pool_clear(sw->ep);
    if (rv == APR_SUCCESS) {
        *(rs_snappart_t *)apr_array_push(sw->parts) = *s;
        sw->info->entries += s->entries;
        sw->info->bytes += s->bytes;
        sw->info->reused++;
    }
    return rv;
}

/* Forget what an incremental attempt wrote: the directory is emptied and
 * the counts start over. */
static apr_status_t start_over(swriter_t *sw)
{
    apr_dir_t *d;
    apr_finfo_t fi;
    apr_status_t rv;

    sw->parts->nelts = 0;
    sw->w = NULL; /* its file goes with fp, cleared below */
    sw->cur = NULL;
    sw->info->entries = sw->info->bytes = 0;
    sw->info->reused = sw->info->first_new = 0;
    if ((rv = apr_dir_open(&d, sw->dir, sw->fp)) != APR_SUCCESS) {
        return rv;
    }
    while (rv == APR_SUCCESS
           && apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        if (fi.filetype == APR_REG) {
            rv = apr_file_remove(apr_pstrcat(sw->fp, sw->dir, "/", fi.name, NULL), sw->fp);
        }
    }
    apr_dir_close(d);
    apr_pool_clear(sw->fp);
    return rv;
}

/* The walk (see walk_t).  *full: the previous generation cannot be
 * built on (none, other options or history, the journal cannot say
 * what changed, or the list no longer needs an index). */
static apr_status_t write_changed(rs_db_t *st, swriter_t *sw, int *full)
{
    const rs_snapshot_opts_t *o = sw->o;
    rs_snapparts_t prev;
    apr_array_header_t *keys;
    const char *adir = NULL, *aname = NULL;
    apr_status_t rv = APR_SUCCESS;
    walk_t wk;
    int ci = 0, stopped;

    *full = 1;
    if (!o->prev_dir || !o->journal || !o->ident
        || rs_snapparts_read(sw->p, o->prev_dir, &prev) != APR_SUCCESS
        || !(sw->interval = rs_snapparts_interval(o->ident, prev.ident, sw->max))
        || prev.seq > o->seq
        || rs_snapparts_changes(o->journal, sw->p, o->set, prev.seq, o->seq, prev.at, CHANGES_MAX,
                                &keys)
               != APR_SUCCESS) {
        return APR_SUCCESS;
    }
    *full = 0;
    sw->indexed = 1;
    wk.old = prev.parts;
    wk.i = 0;
    while (rv == APR_SUCCESS && wk.i < prev.parts->nelts) {
        const rs_snappart_t *s = &APR_ARRAY_IDX(prev.parts, wk.i, rs_snappart_t);
        const rs_snapkey_t *k;
        while (adir && ci < keys->nelts && (k = &APR_ARRAY_IDX(keys, ci, rs_snapkey_t))
               && rs_snapparts_cmp(k->dir, k->name, adir, aname) <= 0) {
            ci++;
        }
        k = ci < keys->nelts ? &APR_ARRAY_IDX(keys, ci, rs_snapkey_t) : NULL;
        if (!k || (wk.i < prev.parts->nelts - 1 && key_cmp(s, k->dir, k->name) < 0)) {
            if ((rv = keep_part(sw, s)) != APR_SUCCESS) {
                *full = 1; /* cannot link: write it all */
                return start_over(sw) == APR_SUCCESS ? APR_SUCCESS : rv;
            }
            adir = s->last_dir;
            aname = s->last_name;
            wk.i++;
            continue;
        }
        rv = write_rows(st, sw, &adir, &aname, aligned, &wk, &stopped);
        if (!stopped) {
            break;
        }
    }
    if (rv == APR_SUCCESS && sw->info->entries <= sw->max) {
        *full = 1; /* a single list now */
        rv = start_over(sw);
    }
    return rv;
}

apr_status_t rs_snapshot_write(rs_db_t *st, const rs_snapshot_opts_t *o, const char *dir,
                               apr_uint64_t gen, apr_pool_t *p, rs_snapshot_info_t *info)
{
    swriter_t sw;
    apr_status_t rv;
    int full;

    memset(info, 0, sizeof(*info));
    memset(&sw, 0, sizeof(sw));
    sw.o = o;
    sw.dir = dir;
    sw.gen = gen;
    sw.info = info;
    sw.p = p;
    sw.max = o->max_entries > 0 ? o->max_entries : RS_XML_MAX_ENTRIES;
    /* ResourceSync 1.1 section 7: "the limit is 50,000 items per document
     * and a document size of 50 MB", the index included. */
    sw.max_bytes = rs_snapdoc_entry_budget(o, p);
    if (!sw.max_bytes) {
        sw.max_bytes = rs_snapdoc_max_bytes(o);
    }
    sw.max_parts = rs_snapdoc_index_cap(o, p);
    sw.parts = apr_array_make(p, 16, sizeof(rs_snappart_t));
    apr_pool_create(&sw.fp, p); /* per output file */
    apr_pool_create(&sw.ep, p); /* per entry */
    sw.rr = rs_entry_renderer_create(p, &o->entry);

    rv = sw.rr ? write_changed(st, &sw, &full) : APR_ENOMEM;
    if (rv == APR_SUCCESS && full) {
        sw.interval = 0;
        rv = write_all(st, &sw);
    }
    /* Too many parts for the index: every part as full as the limits
     * allow (no content-defined cut). */
    if (rv == APR_SUCCESS && sw.indexed && sw.parts->nelts > sw.max_parts && sw.interval != NO_CUTS
        && (rv = start_over(&sw)) == APR_SUCCESS) {
        sw.interval = NO_CUTS;
        rv = write_all(st, &sw);
    }
    /* Still too many (more than max_entries parts of max_entries): more
     * parts than max_entries, up to what the index may hold at the
     * community limits; beyond that no Resource List can be written. */
    if (rv == APR_SUCCESS && sw.indexed && sw.parts->nelts > sw.max_parts) {
        rs_snapshot_opts_t lo = *o;
        lo.max_entries = RS_XML_MAX_ENTRIES;
        if (sw.parts->nelts > rs_snapdoc_index_cap(&lo, p)) {
            rv = APR_FROM_OS_ERROR(EFBIG);
        }
    }
    if (rv == APR_SUCCESS) {
        rv = write_tail(&sw);
    }
    apr_pool_destroy(sw.ep);
    apr_pool_destroy(sw.fp);
    return rv;
}
