/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_openlist.c - the open Change List, served by children.
 *
 * The open Change List is not a file.  After each commit the watcher puts
 * the new records into the ring of the status segment and publishes the
 * open list's extent (id, from, first and last sequence) in the set's
 * entry (mod_resourcesync_changes.c).  A child answers the list's ETag
 * and 304s from that entry alone, and streams its body from the ring,
 * falling back to the store (a read connection per child) for what has
 * left the ring.  The extent read with the status is the range of the
 * body, so a body always matches its ETag.  HEAD gives the exact
 * Content-Length from the frame of the list and the entries' byte count
 * the watcher keeps with the extent.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <apr_md5.h>
#include <apr_strings.h>
#include <apr_thread_mutex.h>
#include <http_protocol.h>
#include <http_request.h>
#include <util_filter.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_childstore.h"
#include "mod_resourcesync_clsource.h"
#include "mod_resourcesync_openlist.h"
#include "mod_resourcesync_status.h"
#include "rs_changelist.h"
#include "rs_journal.h"
#include "rs_statedir.h"
#include "rs_history.h"
#include "rs_schema.h"
#include "rs_range.h"

typedef struct {
    request_rec *r;
    const rs_set_t *set;
    const char *history; /* of the list being served */
} open_src_t;

/* rs_clsource_more_fn of a child: its read connection to the store. */
static apr_status_t store_records(void *baton, apr_pool_t *p, apr_int64_t next, apr_int64_t last,
                                  int limit, apr_array_header_t *out)
{
    open_src_t *s = baton;
    apr_array_header_t *more = NULL;
    apr_status_t rv =
        rs_childstore_records(s->r, p, s->history, s->set->name, next, last, limit, &more);

    if (rv != APR_SUCCESS) {
        return rv; /* logged */
    }
    rs_clsource_append(out, more);
    return APR_SUCCESS;
}

typedef struct {
    ap_filter_t *f;
    apr_bucket_brigade *bb;
} sink_t;

static int to_brigade(void *baton, const char *buf, apr_size_t len)
{
    sink_t *k = baton;
    /* apr_brigade_write passes full buffers down the chain as it goes:
     * memory stays bounded whatever the list's length. */
    return apr_brigade_write(k->bb, ap_filter_flush, k->f, buf, len) == APR_SUCCESS ? 0 : -1;
}

/* The digest (12 hexadecimal digits) of what the open list's bytes
 * depend on besides its extent: its documents' options for history (the
 * set, its URL base and the list, index and capability URLs, which
 * hashes are listed, the spec version).  Node-local configuration
 * (paths, ports, the state directory, the node's name) goes into none of
 * them, so every node that serves the set from one store gives the same
 * ETag; the configuration's whole fingerprint (rs_global.fingerprint,
 * which hashes every directive) would differ between nodes. */
static const char *docs_digest(apr_pool_t *p, const rs_set_t *set, const char *history)
{
    const char *parts[6];
    rs_changelist_opts_t o;
    unsigned char d[APR_MD5_DIGESTSIZE];
    apr_md5_ctx_t c;
    char *hex = apr_palloc(p, 13);
    int i;

    rs_clsource_opts(p, set, history, &o);
    parts[0] = o.set;
    parts[1] = o.entry.url_base;
    parts[2] = o.capability_url;
    parts[3] = o.index_url;
    parts[4] = o.list_url_prefix;
    parts[5] = apr_psprintf(p, "%x %d", o.entry.hashes, o.entry.spec10);
    apr_md5_init(&c);
    for (i = 0; i < 6; i++) {
        apr_md5_update(&c, parts[i] ? parts[i] : "", parts[i] ? strlen(parts[i]) + 1 : 1);
    }
    apr_md5_final(d, &c);
    for (i = 0; i < 6; i++) {
        apr_snprintf(hex + 2 * i, 3, "%02x", d[i]);
    }
    return hex;
}

/* The headers of the open list whose extent is cur: everything a poll
 * needs is in the status entry, no store, no file.  The body is a
 * function of the list's extent and of the set's documents' options
 * (URLs, hashes, spec version: docs_digest; the set's mirrors, which
 * every entry renders from the configuration: their own digest, when
 * there are mirrors), so the strong ETag is made of those: it survives
 * restarts that change nothing, changes with any directive that changes
 * the bytes, and is the same on every node that serves the set.
 * Returns OK, or the status of a conditional request (304, 412). */
static const char *etag_of(apr_pool_t *p, const rs_set_t *set, const char *history, apr_uint64_t id,
                           apr_uint64_t first, apr_uint64_t last, apr_uint64_t from)
{
    return apr_psprintf(p,
                        "\"o%" APR_UINT64_T_HEX_FMT "-%" APR_UINT64_T_HEX_FMT
                        "-%" APR_UINT64_T_HEX_FMT "-%" APR_UINT64_T_HEX_FMT "-%s%s%.12s\"",
                        id, first, last, from, docs_digest(p, set, history),
                        *set->mirrors_fp ? "-m" : "", set->mirrors_fp);
}

static int set_headers(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur)
{
    ap_set_content_type(r, "application/xml");
    apr_table_setn(r->headers_out, "ETag",
                   etag_of(r->pool, set, cur->history, (apr_uint64_t)cur->cl_open_id,
                           (apr_uint64_t)cur->cl_first_seq, (apr_uint64_t)cur->cl_last_seq,
                           (apr_uint64_t)cur->cl_from));
    ap_update_mtime(r, cur->cl_count && cur->cl_last_dt ? cur->cl_last_dt : cur->cl_from);
    ap_set_last_modified(r);
    apr_table_setn(r->headers_out, "Cache-Control", "no-cache");
    return ap_meets_conditions(r);
}

/* The options and the record source (ring, then store) for rendering
 * the list of extent cur; src and rsrc live on the caller's stack. */
static void source_init(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur,
                        rs_changelist_opts_t *o, open_src_t *src, rs_clsource_t *rsrc)
{
    rs_clsource_opts(r->pool, set, cur->history, o);
    memset(src, 0, sizeof(*src));
    src->r = r;
    src->set = set;
    src->history = cur->history;
    rs_clsource_init(rsrc, set, store_records, src);
}

/* Render the list of extent cur into the writer w: records cl_first_seq ..
 * cl_last_seq of that extent, from the ring, then the store.  On failure
 * *store_err tells whether the store could not be read. */
static apr_status_t render(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur,
                           rs_xml_t *w, apr_status_t *store_err)
{
    rs_changelist_opts_t o;
    rs_changelist_t cl;
    open_src_t src;
    rs_clsource_t rsrc;
    apr_status_t rv;

    memset(&cl, 0, sizeof(cl));
    cl.id = cur->cl_open_id;
    cl.from = cur->cl_from;
    cl.first_seq = cur->cl_first_seq;
    cl.last_seq = cur->cl_last_seq;
    cl.count = cur->cl_count;
    source_init(r, set, cur, &o, &src, &rsrc);
    rv = rs_changelist_write_from(rs_clsource_read, &rsrc, &o, &cl, w, r->pool);
    *store_err = rsrc.err;
    return rv;
}

/* The whole document's sink: never more than the length it announced
 * (length -1: none announced, the body is chunked). */
typedef struct {
    sink_t k;
    apr_off_t sent, length;
    int over; /* a write past length was refused */
} body_sink_t;

static int to_body(void *baton, const char *buf, apr_size_t len)
{
    body_sink_t *b = baton;

    if (b->length >= 0 && b->sent + (apr_off_t)len > b->length) {
        b->over = 1;
        return -1;
    }
    b->sent += (apr_off_t)len;
    return to_brigade(&b->k, buf, len);
}

/* Stream the body of the list of extent cur: exactly length bytes when
 * length is not -1.  A body that would not be (the entries' byte count
 * kept with the extent was wrong) is cut, with an error line: a client
 * sees a short answer, never a document that is not the one announced. */
static int send_body(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur,
                     apr_off_t length)
{
    body_sink_t b;
    rs_xml_t *w;
    apr_status_t store_err;
    apr_status_t rv;

    b.k.f = r->output_filters;
    b.k.bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    b.sent = 0;
    b.length = length;
    b.over = 0;
    if (!(w = rs_xml_open(r->pool, to_body, &b))) {
        return HTTP_SERVICE_UNAVAILABLE;
    }
    rv = render(r, set, cur, w, &store_err);
    if (b.over || (rv == APR_SUCCESS && length >= 0 && b.sent != length)) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r,
                      RS_TAG "set %s: the open Change List %" APR_INT64_T_FMT
                             " is longer or shorter than its count of %" APR_OFF_T_FMT
                             " bytes; the answer is cut",
                      set->name, (apr_int64_t)cur->cl_open_id, length);
        r->connection->aborted = 1;
        return OK;
    }
    if (rv != APR_SUCCESS) {
        if (store_err != APR_SUCCESS && !r->sent_bodyct) {
            /* Nothing sent yet: the store could not be read. */
            apr_brigade_cleanup(b.k.bb);
            apr_table_setn(r->err_headers_out, "Retry-After", "5");
            return HTTP_SERVICE_UNAVAILABLE;
        }
        /* Part of the body is out: all we can do is cut the connection. */
        r->connection->aborted = 1;
        return OK;
    }
    APR_BRIGADE_INSERT_TAIL(b.k.bb, apr_bucket_eos_create(b.k.bb->bucket_alloc));
    return ap_pass_brigade(r->output_filters, b.k.bb) == APR_SUCCESS ? OK : AP_FILTER_ERROR;
}

static int count_bytes(void *baton, const char *buf, apr_size_t len)
{
    (void)buf;
    *(apr_off_t *)baton += (apr_off_t)len;
    return 0;
}

/* HEAD: the Content-Length a GET of the same extent sends.  The body is
 * the list's frame (root, links, rs:md: a function of the extent's id and
 * `from` and of the configuration) with the entries' rendered bytes
 * inserted as they are.  The watcher keeps the entries' byte count with
 * the extent (cl_bytes), so HEAD renders only the frame; when the count is
 * unknown it renders the whole list into the counter, which costs what a
 * GET costs. */
static int send_length(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur)
{
    apr_off_t n = 0;
    apr_status_t store_err;
    rs_status_set_t frame = *cur;
    rs_xml_t *w = rs_xml_open(r->pool, count_bytes, &n);

    if (cur->cl_bytes >= 0) {
        frame.cl_last_seq = frame.cl_first_seq - 1; /* no entries */
        frame.cl_count = 0;
    }
    if (!w || render(r, set, &frame, w, &store_err) != APR_SUCCESS) {
        apr_table_setn(r->err_headers_out, "Retry-After", "5");
        return HTTP_SERVICE_UNAVAILABLE;
    }
    ap_set_content_length(r, n + (cur->cl_bytes >= 0 ? (apr_off_t)cur->cl_bytes : 0));
    return OK;
}

/* ------------------------------------------------------- byte ranges
 *
 * A destination following the open list reads only what was added since
 * its last read: a Range from its old length minus the closing tag on.
 * That works because the list's bytes before the closing tag only grow
 * while it is open (rs_changelist_frame: the head depends on the list's
 * `from` only, and entries are only appended).  So a Range is honoured
 * with an If-Range naming the current state OR an earlier state of the
 * same open list: same id, first sequence, `from` and documents'
 * digest, and a last sequence not after the current one.  Such a
 * reader's bytes are a prefix of the current document's (up to its
 * closing tag), so its offsets are still good.  This is our reading of
 * "the validator matches" for a document that only grows; anything else
 * (the list closed and is a file now, another list, a weak tag, a date, a
 * malformed value) gets the whole current document with 200. */

/* Whether the If-Range of r (none: yes) allows a Range on the list of
 * extent cur. */
static int if_range_allows(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur)
{
    const char *v = apr_table_get(r->headers_in, "If-Range");
    uint64_t id, first, last, from;
    int used = 0;

    if (!v) {
        return 1;
    }
    if (sscanf(v, "\"o%" SCNx64 "-%" SCNx64 "-%" SCNx64 "-%" SCNx64 "-%n", &id, &first, &last,
               &from, &used)
            != 4
        || !used) {
        return 0;
    }
    /* The value must be exactly a tag we would send, with this
     * configuration's documents' digest (and mirrors). */
    if (strcmp(v, etag_of(r->pool, set, cur->history, id, first, last, from))) {
        return 0;
    }
    return id == (uint64_t)cur->cl_open_id && first == (uint64_t)cur->cl_first_seq
           && from == (uint64_t)cur->cl_from && (apr_int64_t)last >= cur->cl_first_seq - 1
           && (apr_int64_t)last <= cur->cl_last_seq;
}

/* Passes the bytes of the document at [pos, pos + len) that fall in
 * [first, last] to the brigade. */
typedef struct {
    sink_t k;
    apr_off_t pos, first, last;
} range_sink_t;

static int to_range(void *baton, const char *buf, apr_size_t len)
{
    range_sink_t *rs = baton;
    apr_off_t a = rs->pos, b = rs->pos + (apr_off_t)len; /* [a, b) */

    rs->pos = b;
    if (b > rs->first && a <= rs->last) {
        apr_off_t from = a < rs->first ? rs->first : a;
        apr_off_t to = b - 1 > rs->last ? rs->last : b - 1;
        if (to_brigade(&rs->k, buf + (from - a), (apr_size_t)(to - from + 1)) < 0) {
            return -1;
        }
    }
    return rs->pos > rs->last ? 1 : 0;
}

/* The entries of extent cur that hold bytes first .. of the document,
 * into rs (rs->pos set to where they start).  A tail reader asks for the
 * end: the ring tells, walking back from the newest record, where its
 * bytes start (rs_status_ring_seek), so only those entries are read.
 * When the ring no longer holds them all, the entries are read from the
 * list's first record on and skipped up to `first`: that costs what a
 * whole GET costs (a reader that fell behind the ring). */
static apr_status_t range_entries(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur,
                                  apr_off_t head_len, range_sink_t *rs, apr_status_t *store_err)
{
    rs_changelist_opts_t o;
    open_src_t src;
    rs_clsource_t rsrc;
    apr_int64_t start = cur->cl_first_seq, seq, bytes;
    apr_status_t rv;

    rs->pos = head_len;
    if (rs->first > head_len) {
        apr_int64_t need = cur->cl_bytes - (rs->first - head_len);
        if (rs_status_ring_seek(set->slot, cur->cl_first_seq, cur->cl_last_seq, need, &seq, &bytes)
                == 0
            && bytes >= need && bytes <= cur->cl_bytes
            && (seq != cur->cl_first_seq || bytes == cur->cl_bytes)) {
            start = seq;
            rs->pos = head_len + (cur->cl_bytes - bytes);
        }
    }
    source_init(r, set, cur, &o, &src, &rsrc);
    rv = rs_changelist_write_entries(rs_clsource_read, &rsrc, &o, start, cur->cl_last_seq, to_range,
                                     rs, r->pool);
    *store_err = rsrc.err;
    return rv;
}

/* 206: bytes first .. last of the list of extent cur, whose frame is fr
 * and whose entries have cur->cl_bytes bytes. */
static int send_range(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur,
                      const rs_changelist_frame_t *fr, apr_off_t first, apr_off_t last)
{
    apr_off_t head_len = (apr_off_t)fr->head_len, end = head_len + cur->cl_bytes;
    apr_status_t store_err = APR_SUCCESS;
    range_sink_t rs;

    r->status = HTTP_PARTIAL_CONTENT;
    apr_table_setn(r->headers_out, "Content-Range",
                   apr_psprintf(r->pool,
                                "bytes %" APR_OFF_T_FMT "-%" APR_OFF_T_FMT "/%" APR_OFF_T_FMT,
                                first, last, end + (apr_off_t)fr->tail_len));
    ap_set_content_length(r, last - first + 1);
    rs.k.f = r->output_filters;
    rs.k.bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    rs.first = first;
    rs.last = last;
    rs.pos = 0;
    if (first < head_len && to_range(&rs, fr->head, fr->head_len) < 0) {
        goto cut;
    }
    if (first < end && last >= head_len) {
        if (range_entries(r, set, cur, head_len, &rs, &store_err) != APR_SUCCESS) {
            if (store_err != APR_SUCCESS && !r->sent_bodyct) {
                apr_brigade_cleanup(rs.k.bb);
                r->status = HTTP_OK;
                apr_table_unset(r->headers_out, "Content-Range");
                apr_table_setn(r->err_headers_out, "Retry-After", "5");
                return HTTP_SERVICE_UNAVAILABLE;
            }
            goto cut;
        }
        /* The entries must have been exactly cl_bytes long, or the bytes
         * sent are not those of the document the length promised. */
        if (rs.pos <= last && rs.pos != end) {
            goto cut;
        }
    }
    if (last >= end) {
        rs.pos = end;
        if (to_range(&rs, fr->tail, fr->tail_len) < 0) {
            goto cut;
        }
    }
    APR_BRIGADE_INSERT_TAIL(rs.k.bb, apr_bucket_eos_create(rs.k.bb->bucket_alloc));
    return ap_pass_brigade(r->output_filters, rs.k.bb) == APR_SUCCESS ? OK : AP_FILTER_ERROR;
cut:
    /* Part of the answer may be out: all we can do is cut the connection. */
    r->connection->aborted = 1;
    return OK;
}

/* The whole document's length, and its frame in *fr: the frame's bytes
 * and the entries' byte count the watcher keeps with the extent.  -1 when
 * that count is unknown. */
static apr_off_t whole_length(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur,
                              rs_changelist_frame_t *fr)
{
    rs_changelist_opts_t o;
    rs_changelist_t cl;

    if (cur->cl_bytes < 0) {
        return -1;
    }
    memset(&cl, 0, sizeof(cl));
    cl.id = cur->cl_open_id;
    cl.from = cur->cl_from;
    rs_clsource_opts(r->pool, set, cur->history, &o);
    if (rs_changelist_frame(&o, &cl, r->pool, fr) != APR_SUCCESS) {
        return -1;
    }
    return (apr_off_t)fr->head_len + cur->cl_bytes + (apr_off_t)fr->tail_len;
}

/* A GET with a Range: 206, 416, or -1 to send the whole document. */
static int serve_range(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur)
{
    rs_changelist_frame_t fr;
    apr_off_t first, last, total;

    if (!if_range_allows(r, set, cur) || (total = whole_length(r, set, cur, &fr)) < 0) {
        return -1; /* a stale If-Range, or the entries' length unknown */
    }
    switch (rs_range_parse(apr_table_get(r->headers_in, "Range"), total, &first, &last)) {
    case RS_RANGE_OK:
        return send_range(r, set, cur, &fr, first, last);
    case RS_RANGE_UNSATISFIABLE:
        apr_table_setn(r->err_headers_out, "Content-Range",
                       apr_psprintf(r->pool, "bytes */%" APR_OFF_T_FMT, total));
        return HTTP_RANGE_NOT_SATISFIABLE;
    default:
        return -1;
    }
}

int rs_openlist_serve(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur)
{
    int rc = set_headers(r, set, cur);
    if (rc != OK) {
        return rc; /* 304, 412: before anything is rendered */
    }
    /* httpd's ap_meets_conditions never answers 304 to a request with
     * If-Range; RFC 9110 13.2.2 evaluates If-None-Match first, and a
     * tail-following reader sends both: its poll of an unchanged list
     * is then a 304, not a 206 of the closing tag. */
    if (r->method_number == M_GET && apr_table_get(r->headers_in, "If-Range")
        && ap_condition_if_none_match(r, r->headers_out) >= AP_CONDITION_WEAK) {
        return HTTP_NOT_MODIFIED;
    }
    apr_table_setn(r->headers_out, "Accept-Ranges", "bytes");
    if (r->header_only) {
        /* Range is for GET only (RFC 9110 14.2): HEAD gives the whole
         * document's length. */
        return send_length(r, set, cur);
    }
    if (r->method_number == M_GET && apr_table_get(r->headers_in, "Range")
        && (rc = serve_range(r, set, cur)) >= 0) {
        return rc;
    }
    /* The whole document: keep httpd's byte-range filter from cutting a
     * Range we chose not to honour (several ranges, a stale If-Range). */
    apr_table_unset(r->headers_in, "Range");
    apr_table_unset(r->headers_in, "Request-Range");
    /* Its length, as a file's: no chunked coding, and a client sees a
     * body cut short (send_body's cut connection) by its length. */
    {
        rs_changelist_frame_t fr;
        apr_off_t total = whole_length(r, set, cur, &fr);
        if (total >= 0) {
            ap_set_content_length(r, total);
        }
        return send_body(r, set, cur, total);
    }
}
