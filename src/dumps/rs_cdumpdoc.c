/* SPDX-License-Identifier: Apache-2.0 */
/* rs_cdumpdoc.c - see rs_cdumpdoc.h */
#include <string.h>
#include <apr_file_info.h>
#include <apr_file_io.h>
#include <apr_lib.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "rs_cdumpdoc.h"
#include "rs_file.h"
#include "rs_hash.h"
#include "rs_parse.h"
#include "rs_statedir.h"
#include "rs_time.h"
#include "rs_xml.h"

/* One <url> of a Change Dump: the package of list cl at revision rev. */
static int index_entry(rs_xml_t *w, apr_pool_t *p, const rs_cdump_opts_t *o,
                       const rs_changelist_t *cl, int rev, apr_int64_t length, const char *hash)
{
    char from[RS_TIME_BUFSIZE], until[RS_TIME_BUFSIZE], len[32];
    rs_xml_attr_t md[5], ln[1];
    const char *base =
        rev ? apr_psprintf(p, "%s%" APR_INT64_T_FMT "-%d", o->pkg_url_prefix, cl->id, rev)
            : apr_psprintf(p, "%s%" APR_INT64_T_FMT, o->pkg_url_prefix, cl->id);

    apr_snprintf(len, sizeof(len), "%" APR_INT64_T_FMT, length);
    md[0].name = "type";
    md[0].value = "application/zip";
    md[1].name = "length";
    md[1].value = len;
    md[2].name = "hash";
    md[2].value = hash;
    md[3].name = "from";
    md[3].value = rs_time_format(from, cl->from);
    md[4].name = "until";
    md[4].value = rs_time_format(until, cl->until);
    ln[0].name = "type";
    ln[0].value = "application/xml";
    return rs_xml_entry_begin(w, apr_pstrcat(p, base, ".zip", NULL), NULL) < 0
                   || rs_xml_md(w, md, 5) < 0
                   || rs_xml_ln(w, "contents", apr_pstrcat(p, base, ".xml", NULL), ln, 1) < 0
                   || rs_xml_entry_end(w) < 0
               ? -1
               : 0;
}

/* One document being written: changedump.xml (a Change Dump, or with
 * nparts > 0 the Change Dump Index), or part `part` of the index.  The
 * lists it covers are closed[first..end). */
typedef struct {
    const rs_cdump_opts_t *o;
    const apr_array_header_t *closed;
    int first, end;
    apr_time_t from;    /* of the document */
    apr_time_t until;   /* of a part all of whose lists are closed, else 0 */
    int part;           /* 0: changedump.xml */
    const int *bounds;  /* index: part k covers closed[bounds[k]..bounds[k+1]) */
    const int *numbers; /* index: part k's number */
    int nparts;         /* index: 0: a plain Change Dump */
    rs_cdumpdoc_t *out;
} cdoc_t;

/* The head of a Change Dump document (or of the index). */
static int doc_head(rs_xml_t *w, const cdoc_t *d, const char *root)
{
    char from[RS_TIME_BUFSIZE], until[RS_TIME_BUFSIZE];

    /* Section 13.1: "In case a Change Dump Index exists, a recommended
     * <rs:ln> child element of <urlset> points to it with the relation
     * type index." */
    return !w
           || rs_xml_head(w, root, d->o->capability_url, d->part ? d->o->index_url : NULL,
                          "changedump", "from", rs_time_format(from, d->from), "until",
                          d->until ? rs_time_format(until, d->until) : NULL)
                  < 0;
}

/* The <sitemap> of each part (section 12.2, which section 13.1 refers
 * to: "<rs:md> ... with the from and possibly until attributes"; until
 * for a closed part only). */
static int doc_parts(rs_xml_t *w, apr_pool_t *p, const cdoc_t *d)
{
    char from[RS_TIME_BUFSIZE], until[RS_TIME_BUFSIZE];
    rs_xml_attr_t md[2];
    int k, bad = 0;

    for (k = 0; !bad && k < d->nparts; k++) {
        const rs_changelist_t *a = &APR_ARRAY_IDX(d->closed, d->bounds[k], rs_changelist_t);
        const rs_changelist_t *z = &APR_ARRAY_IDX(d->closed, d->bounds[k + 1] - 1, rs_changelist_t);
        md[0].name = "from";
        md[0].value = rs_time_format(from, a->from);
        md[1].name = "until";
        md[1].value = rs_time_format(until, z->until);
        bad = rs_xml_entry_begin(
                  w, apr_psprintf(p, "%s%d.xml", d->o->part_url_prefix, d->numbers[k]), NULL)
                  < 0
              || rs_xml_md(w, md, k + 1 < d->nparts ? 2 : 1) < 0 || rs_xml_entry_end(w) < 0;
    }
    return bad;
}

static apr_status_t cdoc_write(void *baton, apr_file_t *f, apr_pool_t *p)
{
    cdoc_t *d = baton;
    rs_xml_t *w = rs_xml_open_file(p, f);
    apr_int64_t length;
    apr_pool_t *lp; /* per list: a journal may retain thousands */
    const char *hash;
    int i, bad;

    apr_pool_create(&lp, p);
    bad = doc_head(w, d, d->nparts ? "sitemapindex" : "urlset");
    if (!bad && d->nparts) {
        bad = doc_parts(w, lp, d);
    }
    for (i = d->first; !bad && !d->nparts && i < d->end; i++) {
        const rs_changelist_t *cl = &APR_ARRAY_IDX(d->closed, i, rs_changelist_t);
        apr_pool_clear(lp);
        if (rs_cdump_sum(d->o, cl->id, lp, &length, &hash)) {
            d->out->bytes += length;
            d->out->packages++;
            bad = index_entry(w, lp, d->o, cl, rs_cdump_rev(d->o, cl->id, lp), length, hash) < 0;
        }
    }
    apr_pool_destroy(lp);
    if (bad || rs_xml_end(w) < 0) {
        return w && rs_xml_error(w) != APR_SUCCESS ? rs_xml_error(w) : APR_ENOMEM;
    }
    return APR_SUCCESS;
}

/* The first list of the Change Dump's coverage: the one after the newest
 * closed list without a complete package (*gap its index, -1: none). */
static int coverage_start(const rs_cdump_opts_t *o, const apr_array_header_t *closed,
                          apr_pool_t *lp, int *gap)
{
    apr_int64_t length;
    const char *hash;
    int i;

    for (i = closed->nelts - 1; i >= 0; i--) {
        apr_pool_clear(lp);
        if (!rs_cdump_sum(o, APR_ARRAY_IDX(closed, i, rs_changelist_t).id, lp, &length, &hash)) {
            break;
        }
    }
    *gap = i;
    return i + 1;
}

/* The bytes a document's head and one <url> can take at most: rendered
 * with the longest values (id of 15 digits, revision of 9, times with
 * microseconds, a 19-digit length, the set's hashes). */
static void doc_sizes(const rs_cdump_opts_t *o, apr_pool_t *p, apr_size_t *head, apr_size_t *entry)
{
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    const char *hx[RS_HASH_COUNT];
    rs_changelist_t cl;
    rs_xml_membuf_t a = { p, NULL, 0, 0 }, b = { p, NULL, 0, 0 };
    rs_xml_t *wa = rs_xml_open(p, rs_xml_membuf_sink, &a), *wb;
    cdoc_t d;
    int i;

    memset(&d, 0, sizeof(d));
    d.o = o;
    d.part = o->index_url ? 1 : 0;
    d.from = d.until = apr_time_from_sec(4102444799) + 999999; /* 2099-12-31T23:59:59.999999 */
    memset(&cl, 0, sizeof(cl));
    cl.id = 999999999999999;
    cl.from = cl.until = d.from;
    rs_hash_buf("", 0, o->hashes, hex);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        hx[i] = hex[i];
    }
    doc_head(wa, &d, "urlset");
    rs_xml_end(wa);
    wb = rs_xml_open(p, rs_xml_membuf_sink, &b);
    doc_head(wb, &d, "urlset");
    index_entry(wb, p, o, &cl, 999999999, APR_INT64_MAX, rs_hash_attr(p, o->hashes, hx));
    rs_xml_end(wb);
    *head = a.len;
    *entry = b.len > a.len ? b.len - a.len : 0;
}

/* The most packages one document may list: ResourceSyncMaxEntries, and
 * fewer when that many entries could pass the byte limit. */
static apr_int64_t per_document(const rs_cdump_opts_t *o, apr_pool_t *p)
{
    apr_int64_t max = o->list_max > 0 ? o->list_max : APR_INT64_MAX;
    apr_int64_t bytes = o->max_bytes > 0 ? o->max_bytes : RS_CDUMPDOC_MAX_BYTES, fit;
    apr_size_t head, entry;

    doc_sizes(o, p, &head, &entry);
    fit = entry && (apr_int64_t)head < bytes ? (bytes - (apr_int64_t)head) / (apr_int64_t)entry : 1;
    return fit < 1 ? 1 : fit < max ? fit : max;
}

/* Remove the part files of o->history that are not parts 1..nparts of
 * numbers (all of them when nparts is 0); *created gets the numbers of
 * the parts that had no file. */
static void parts_sync(const rs_cdump_opts_t *o, const int *numbers, int nparts, apr_pool_t *p,
                       apr_array_header_t *created)
{
    const char *prefix = apr_pstrcat(p, o->history, "-", NULL);
    apr_hash_t *keep = apr_hash_make(p);
    apr_dir_t *dir;
    apr_finfo_t fi;
    int k, n;

    for (k = 0; k < nparts; k++) {
        const char *path = rs_statedir_cdump_part(p, o->dir, o->history, numbers[k]);
        apr_hash_set(keep, apr_filepath_name_get(path), APR_HASH_KEY_STRING, "");
        if (created && !rs_file_exists(p, path)) {
            APR_ARRAY_PUSH(created, int) = numbers[k];
        }
    }
    if (created || apr_dir_open(&dir, o->dir, p) != APR_SUCCESS) {
        return;
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, dir) == APR_SUCCESS) {
        if (fi.filetype == APR_REG && !strncmp(fi.name, prefix, strlen(prefix))
            && rs_parse_cdump_index_part(fi.name + strlen(prefix), &n)
            && !apr_hash_get(keep, fi.name, APR_HASH_KEY_STRING)) {
            apr_file_remove(apr_pstrcat(p, o->dir, "/", fi.name, NULL), p);
        }
    }
    apr_dir_close(dir);
}

int rs_cdumpdoc_part_of(const rs_cdumpdoc_t *ix, apr_int64_t id)
{
    return ix->parts ? (int)((id - 1) / ix->per_part) + 1 : 0;
}

/* The parts of the index d (lists closed[first..) of d's coverage):
 * their bounds and numbers into d, each part written.  Section 13.1: "If
 * a Source needs to publish multiple Change Dumps, it must group them in
 * a Change Dump Index, in a manner similar to what was described in
 * Section 12.2."  Part n holds the packages of list ids
 * (n-1)*per_part+1 .. n*per_part: a package stays in its part whatever
 * retention or a hole drops before it. */
static apr_status_t write_parts(cdoc_t *d, int first, apr_pool_t *p)
{
    const apr_array_header_t *closed = d->closed;
    rs_cdumpdoc_t *out = d->out;
    int *bounds = apr_palloc(p, sizeof(int) * (closed->nelts - first + 1));
    int *numbers = apr_palloc(p, sizeof(int) * (closed->nelts - first + 1));
    apr_status_t rv;
    int i, k;

    for (i = first; i < closed->nelts; i++) {
        int n = (int)((APR_ARRAY_IDX(closed, i, rs_changelist_t).id - 1) / out->per_part) + 1;
        if (i == first || n != numbers[out->parts - 1]) {
            bounds[out->parts] = i;
            numbers[out->parts++] = n;
        }
    }
    bounds[out->parts] = closed->nelts;
    parts_sync(d->o, numbers, out->parts, p, out->created);
    for (k = 0; k < out->parts; k++) {
        cdoc_t pd = *d;
        pd.part = numbers[k];
        pd.first = bounds[k];
        pd.end = bounds[k + 1];
        pd.from = APR_ARRAY_IDX(closed, pd.first, rs_changelist_t).from;
        /* The newest part still gets packages: no until. */
        pd.until = k + 1 < out->parts ? APR_ARRAY_IDX(closed, pd.end - 1, rs_changelist_t).until
                                      : 0;
        if ((rv = rs_file_replace(p, rs_statedir_cdump_part(p, d->o->dir, d->o->history, pd.part),
                                  cdoc_write, &pd))
            != APR_SUCCESS) {
            return rv;
        }
    }
    d->bounds = bounds;
    d->numbers = numbers;
    d->nparts = out->parts;
    return APR_SUCCESS;
}

apr_status_t rs_cdumpdoc_write(const rs_cdump_opts_t *o, const apr_array_header_t *closed,
                               apr_time_t open_from, apr_pool_t *p, rs_cdumpdoc_t *out)
{
    cdoc_t d;
    apr_pool_t *lp;
    int gap, first;
    apr_status_t rv;

    memset(out, 0, sizeof(*out));
    out->created = apr_array_make(p, 2, sizeof(int));
    apr_dir_make_recursive(o->dir, APR_FPROT_OS_DEFAULT, p);
    apr_pool_create(&lp, p);
    /* Section 13.1: the Change Dump's from has the semantics "explained
     * in detail for Change Lists"; section 7, from: "all changes that
     * occurred to the set of resources at the Source since the datetime
     * expressed ... are included in the document"; section 13.2:
     * "bitstream for all resource changes that occurred during the
     * specified interval must be included" in a package.  So the
     * packages listed are the unbroken run of complete ones up to the
     * newest closed list, and from is the first one's: a list without a
     * package (its captures lost, .skip; withdrawn and not built again
     * yet) ends the coverage before it, and the packages older than it
     * are not listed. */
    first = coverage_start(o, closed, lp, &gap);
    apr_pool_destroy(lp);
    out->gap = gap >= 0 ? APR_ARRAY_IDX(closed, gap, rs_changelist_t).id : 0;
    out->from = first < closed->nelts ? APR_ARRAY_IDX(closed, first, rs_changelist_t).from
                : gap >= 0            ? APR_ARRAY_IDX(closed, gap, rs_changelist_t).until
                                      : open_from;
    out->first_id = first < closed->nelts ? APR_ARRAY_IDX(closed, first, rs_changelist_t).id : 0;
    out->per_part = per_document(o, p);
    memset(&d, 0, sizeof(d));
    d.o = o;
    d.closed = closed;
    d.out = out;
    d.from = out->from;
    d.first = first;
    d.end = closed->nelts;
    if (closed->nelts - first > out->per_part && o->part_url_prefix && o->index_url
        && (rv = write_parts(&d, first, p)) != APR_SUCCESS) {
        return rv;
    }
    rv = rs_file_replace(p, rs_statedir_cdump_file(p, o->dir, o->history, 0, 0), cdoc_write, &d);
    if (rv == APR_SUCCESS) {
        /* Parts no longer in the layout go once changedump.xml no
         * longer names them. */
        parts_sync(o, d.numbers, d.nparts, p, NULL);
    }
    return rv;
}
