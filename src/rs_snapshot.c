/* rs_snapshot.c - see rs_snapshot.h */
#include <stdio.h>
#include <string.h>
#include <apr_file_io.h>
#include <apr_strings.h>
#include "rs_file.h"
#include "rs_snapshot.h"
#include "rs_statedir.h"
#include "rs_time.h"
#include "rs_xml.h"

#define PAGE_ROWS 5000

/* Large writes: besides being cheaper to write, a file written in big
 * chunks is laid out in fewer extents and is faster to serve.  Every file
 * is finished (flushed, synced, closed) before the next one: a snapshot
 * is published by renaming its directory, and must be complete on disk
 * before that. */
#define OUT_BUFSIZE (1024 * 1024)

/* Header of a Resource List (or part): rs:ln up [, index], rs:md. */
static int list_head(rs_xml_t *w, const rs_snapshot_opts_t *o, int with_index)
{
    char at[RS_TIME_BUFSIZE], done[RS_TIME_BUFSIZE];
    rs_xml_attr_t md[3];

    md[0].name = "capability"; md[0].value = "resourcelist";
    md[1].name = "at"; md[1].value = rs_time_format(at, o->at);
    md[2].name = "completed"; md[2].value = rs_time_format(done, o->completed);
    if (rs_xml_begin(w, "urlset") < 0
        || rs_xml_ln(w, "up", o->capability_url, NULL, 0) < 0
        || (with_index && rs_xml_ln(w, "index", o->list_url, NULL, 0) < 0)
        || rs_xml_md(w, md, 3) < 0) {
        return -1;
    }
    return 0;
}

/* One snapshot being written.  Lifecycle: one document (file) open at a
 * time, in `fp`, cleared when it is finished; per-entry memory in `ep`.
 * Every failure keeps its cause: the writer on the file remembers why a
 * write failed (rs_xml_error). */
typedef struct {
    const rs_snapshot_opts_t *o;
    const char *dir;
    apr_uint64_t gen;
    apr_int64_t max;              /* entries per document */
    int indexed;                  /* an index and parts, not one list */
    int part;                     /* the part being written (indexed) */
    apr_int64_t in_part;          /* entries in it */
    apr_pool_t *fp, *ep;
    apr_file_t *f;
    rs_xml_t *w;                  /* NULL: no document open */
    rs_snapshot_info_t *info;
} swriter_t;

/* Open document n of the snapshot (0: resourcelist.xml) for writing. */
static apr_status_t doc_open(swriter_t *sw, int n)
{
    apr_status_t rv = rs_file_create(&sw->f, rs_statedir_gen_file(sw->fp, sw->dir, n),
                                     OUT_BUFSIZE, sw->fp);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    sw->w = rs_xml_open_file(sw->fp, sw->f);
    return sw->w ? APR_SUCCESS : APR_ENOMEM;
}

/* Close the open document and finish its file (complete on disk). */
static apr_status_t doc_close(swriter_t *sw)
{
    apr_status_t rv, xe = APR_SUCCESS;

    if (rs_xml_end(sw->w) < 0) {
        xe = rs_xml_error(sw->w);
    }
    sw->w = NULL;
    rv = rs_file_finish(sw->f);
    /* A failed write says more than the close after it. */
    if (xe != APR_SUCCESS && (xe != APR_EGENERAL || rv == APR_SUCCESS)) {
        rv = xe;
    }
    apr_pool_clear(sw->fp);
    return rv;
}

/* Start the document that takes the next entry: the single list, or the
 * next part once the current one is full. */
static apr_status_t next_doc(swriter_t *sw)
{
    apr_status_t rv;

    if (sw->w && (!sw->indexed || sw->in_part < sw->max)) {
        return APR_SUCCESS;
    }
    if (sw->w && (rv = doc_close(sw)) != APR_SUCCESS) {
        return rv;
    }
    sw->part += sw->indexed;
    sw->in_part = 0;
    if ((rv = doc_open(sw, sw->part)) != APR_SUCCESS) {
        return rv;
    }
    return list_head(sw->w, sw->o, sw->indexed) < 0 ? rs_xml_error(sw->w) : APR_SUCCESS;
}

/* Write the entry of inventory row it. */
static apr_status_t put_row(swriter_t *sw, const rs_item_t *it)
{
    rs_record_t r;
    apr_status_t rv = next_doc(sw);
    int rc;

    if (rv != APR_SUCCESS) {
        return rv;
    }
    rs_entry_from_item(&r, it);
    rc = rs_entry_write(sw->w, sw->ep, &sw->o->entry, &r);
    apr_pool_clear(sw->ep);
    if (rc < 0) {
        return rs_xml_error(sw->w);
    }
    sw->in_part++;
    sw->info->entries++;
    sw->info->bytes += it->size;
    return APR_SUCCESS;
}

/* Every listed row of the set, a page at a time, into the list or its
 * parts; the last document is finished. */
static apr_status_t write_rows(rs_db_t *st, swriter_t *sw, apr_pool_t *p)
{
    apr_pool_t *pp;
    const char *after_dir = NULL, *after_name = NULL;
    apr_status_t rv = APR_SUCCESS;
    int i;

    apr_pool_create(&pp, p);   /* per page of rows */
    for (;;) {
        apr_array_header_t *rows;
        apr_pool_clear(pp);
        rv = rs_inventory_page(st, pp, sw->o->set, after_dir, after_name, PAGE_ROWS, &rows);
        for (i = 0; rv == APR_SUCCESS && i < rows->nelts; i++) {
            rv = put_row(sw, &APR_ARRAY_IDX(rows, i, rs_item_t));
        }
        if (rv != APR_SUCCESS || rows->nelts < PAGE_ROWS) {
            break;
        }
        after_dir = apr_pstrdup(p, APR_ARRAY_IDX(rows, rows->nelts - 1, rs_item_t).dir);
        after_name = apr_pstrdup(p, APR_ARRAY_IDX(rows, rows->nelts - 1, rs_item_t).name);
    }
    apr_pool_destroy(pp);
    /* An empty set still has its (empty) single list. */
    if (rv == APR_SUCCESS && !sw->indexed) {
        rv = next_doc(sw);
    }
    /* After a failure the open document goes with its pool. */
    return rv == APR_SUCCESS && sw->w ? doc_close(sw) : rv;
}

/* The Resource List Index: one entry per part, in resourcelist.xml. */
static apr_status_t write_index(swriter_t *sw, int nparts)
{
    char at[RS_TIME_BUFSIZE], done[RS_TIME_BUFSIZE];
    rs_xml_attr_t md[3];
    apr_status_t rv;
    int i;

    if ((rv = doc_open(sw, 0)) != APR_SUCCESS) {
        return rv;
    }
    md[0].name = "capability"; md[0].value = "resourcelist";
    md[1].name = "at"; md[1].value = rs_time_format(at, sw->o->at);
    md[2].name = "completed"; md[2].value = rs_time_format(done, sw->o->completed);
    if (rs_xml_begin(sw->w, "sitemapindex") < 0
        || rs_xml_ln(sw->w, "up", sw->o->capability_url, NULL, 0) < 0
        || rs_xml_md(sw->w, md, 3) < 0) {
        return rs_xml_error(sw->w);
    }
    for (i = 1; i <= nparts; i++) {
        const char *loc = apr_psprintf(sw->ep, "%s%" APR_UINT64_T_FMT "-%d.xml",
                                       sw->o->part_url_prefix, sw->gen, i);
        int rc = rs_xml_entry_begin(sw->w, loc, NULL) < 0 || rs_xml_md(sw->w, md + 1, 2) < 0
                 || rs_xml_entry_end(sw->w) < 0;
        apr_pool_clear(sw->ep);
        if (rc) {
            return rs_xml_error(sw->w);
        }
    }
    return doc_close(sw);
}

/* The info file, written last: its presence says the snapshot is
 * complete. */
static apr_status_t write_info(swriter_t *sw)
{
    const rs_snapshot_info_t *info = sw->info;
    const char *s = apr_psprintf(sw->fp, "%" APR_UINT64_T_FMT " %" APR_TIME_T_FMT " %"
                                 APR_TIME_T_FMT " %" APR_INT64_T_FMT " %d %" APR_INT64_T_FMT "\n",
                                 info->gen, info->at, info->completed, info->entries,
                                 info->parts, info->bytes);
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

apr_status_t rs_snapshot_write(rs_db_t *st, const rs_snapshot_opts_t *o,
                               const char *dir, apr_uint64_t gen, apr_pool_t *p,
                               rs_snapshot_info_t *info)
{
    swriter_t sw;
    apr_int64_t total = 0;
    apr_status_t rv;
    int nparts;

    memset(info, 0, sizeof(*info));
    if ((rv = rs_inventory_count(st, o->set, &total)) != APR_SUCCESS) {
        return rv;
    }
    memset(&sw, 0, sizeof(sw));
    sw.o = o;
    sw.dir = dir;
    sw.gen = gen;
    sw.info = info;
    sw.max = o->max_entries > 0 ? o->max_entries : 50000;
    sw.indexed = total > sw.max;
    nparts = sw.indexed ? (int)((total + sw.max - 1) / sw.max) : 0;
    apr_pool_create(&sw.fp, p);   /* per output file */
    apr_pool_create(&sw.ep, p);   /* per entry */

    rv = write_rows(st, &sw, p);
    /* The count and the pages come from one writer (the watcher) with no
     * write in between, so they agree; a mismatch means a bug. */
    if (rv == APR_SUCCESS && sw.indexed && sw.part != nparts) {
        rv = APR_EGENERAL;
    }
    if (rv == APR_SUCCESS && sw.indexed) {
        rv = write_index(&sw, nparts);
    }
    if (rv == APR_SUCCESS) {
        info->gen = gen;
        info->at = o->at;
        info->completed = o->completed;
        info->parts = nparts;
        rv = write_info(&sw);
    }
    apr_pool_destroy(sw.ep);
    apr_pool_destroy(sw.fp);
    return rv;
}

/* One field of the info file: decimal digits, at most max, followed by
 * sep.  Returns the position after sep, or NULL. */
static const char *info_field(const char *s, apr_uint64_t max, char sep, apr_uint64_t *out)
{
    apr_uint64_t v = 0;
    const char *start = s;

    while (*s >= '0' && *s <= '9') {
        apr_uint64_t d = (apr_uint64_t)(*s++ - '0');
        if (v > (max - d) / 10) {
            return NULL;                /* out of range: never wrapped */
        }
        v = v * 10 + d;
    }
    if (s == start || *s != sep) {
        return NULL;
    }
    *out = v;
    return s + 1;
}

apr_status_t rs_snapshot_read_info(const char *dir, apr_pool_t *p, rs_snapshot_info_t *info)
{
    apr_file_t *f;
    char buf[256];
    apr_size_t n = sizeof(buf) - 1;
    apr_uint64_t gen, at, completed, entries, parts, bytes = 0;
    const char *s, *rest;
    apr_status_t rv;

    rv = apr_file_open(&f, rs_statedir_gen_info(p, dir), APR_FOPEN_READ,
                       APR_FPROT_OS_DEFAULT, p);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    rv = apr_file_read(f, buf, &n);
    apr_file_close(f);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    buf[n] = '\0';
    /* Written by rs_snapshot_write as five non-negative decimal numbers and
     * a newline, with a sixth (bytes) before the newline since it was
     * added; anything else (a torn write, an editor, a sign, a number that
     * does not fit) is an incomplete snapshot, never a wrapped value. */
    if (!(s = info_field(buf, APR_UINT64_MAX, ' ', &gen)) || gen < 1
        || !(s = info_field(s, APR_INT64_MAX, ' ', &at))
        || !(s = info_field(s, APR_INT64_MAX, ' ', &completed)) || completed < at
        || !(s = info_field(s, APR_INT64_MAX, ' ', &entries))) {
        return APR_EINVAL;
    }
    if ((rest = info_field(s, APR_INT32_MAX, '\n', &parts))) {
        s = rest;
        info->bytes = -1;                         /* five fields: unknown */
    }
    else if (!(s = info_field(s, APR_INT32_MAX, ' ', &parts))
             || !(s = info_field(s, APR_INT64_MAX, '\n', &bytes))) {
        return APR_EINVAL;
    }
    else {
        info->bytes = (apr_int64_t)bytes;
    }
    if (*s) {
        return APR_EINVAL;
    }
    info->gen = gen;
    info->at = (apr_time_t)at;
    info->completed = (apr_time_t)completed;
    info->entries = (apr_int64_t)entries;
    info->parts = (int)parts;
    return APR_SUCCESS;
}
