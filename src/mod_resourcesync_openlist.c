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
#include <string.h>
#include <apr_strings.h>
#include <apr_thread_mutex.h>
#include <http_protocol.h>
#include <http_request.h>
#include <util_filter.h>
#include "mod_resourcesync.h"
#include "rs_changelist.h"
#include "rs_journal.h"
#include "rs_statedir.h"
#include "rs_history.h"
#include "rs_schema.h"

/* A child's read connection to the store, for open-list ranges that have
 * left the ring.  Opened on first use, shared by the child's threads
 * under a mutex, dropped after an error so the next request opens it
 * again.  The connection only reads: the watcher is the only writer, and
 * SQLite's WAL lets readers run beside it.  A connection keeps reading the
 * file it opened, also after the store was deleted or replaced (a new
 * history): before each read it checks that the store's history is the
 * one of the list being served, and opens the store again if not. */
static apr_thread_mutex_t *child_lock;
static apr_pool_t *child_pool;
static apr_pool_t *child_store_pool;
static rs_db_t *child_store;
static rs_journal_t *child_journal;
static int child_failed_logged;

void rs_openlist_child_init(apr_pool_t *p)
{
    child_pool = p;
    apr_thread_mutex_create(&child_lock, APR_THREAD_MUTEX_DEFAULT, p);
}

static void child_log(void *baton, int level, apr_status_t rv, const char *msg)
{
    /* The store's own messages: at debug, the caller logs the failure. */
    ap_log_error(APLOG_MARK, APLOG_DEBUG, rv, (server_rec *)baton, RS_TAG "%s", msg);
    (void)level;
}

typedef struct {
    request_rec *r;
    const rs_set_t *set;
    const char *history;        /* of the list being served */
} open_src_t;

static void child_drop(void)
{
    child_store = NULL;
    apr_pool_destroy(child_store_pool);
}

/* Under child_lock: make child_store a connection to the store of
 * history (opened, or opened again when the one held is of another). */
static apr_status_t child_connect(server_rec *srv, apr_pool_t *p, const char *history)
{
    static rs_logger_t log;
    apr_status_t rv;
    int tries;

    for (tries = 0; tries < 2; tries++) {
        const char *h = NULL;
        if (!child_store) {
            log.fn = child_log;
            log.baton = srv;
            apr_pool_create(&child_store_pool, child_pool);
            rv = rs_schema_open(&child_store, child_store_pool, RS_STATEDIR_DB_DRIVER,
                                rs_statedir_db(child_store_pool, rs_global.state_dir), &log);
            if (rv == APR_SUCCESS) {
                rv = rs_journal_open(&child_journal, child_store, child_store_pool);
            }
            if (rv != APR_SUCCESS) {
                child_drop();
                return rv;
            }
        }
        if ((rv = rs_db_meta_get(child_store, p, RS_HISTORY_META, &h)) != APR_SUCCESS) {
            child_drop();
            return rv;
        }
        if (h && !strcmp(h, history)) {
            return APR_SUCCESS;
        }
        child_drop();
    }
    return APR_ENOENT;     /* the store holds another history than the list */
}

/* rs_clsource_more_fn of a child: its read connection to the store. */
static apr_status_t store_records(void *baton, apr_pool_t *p, apr_int64_t next,
                                  apr_int64_t last, int limit, apr_array_header_t *out)
{
    open_src_t *s = baton;
    apr_array_header_t *more = NULL;
    apr_status_t rv;

    if (child_lock) {
        apr_thread_mutex_lock(child_lock);
    }
    rv = child_connect(s->r->server, p, s->history);
    if (rv == APR_SUCCESS
        && (rv = rs_journal_records(child_journal, p, s->set->name, next, last, limit, &more))
           != APR_SUCCESS) {
        child_drop();
    }
    if (child_lock) {
        apr_thread_mutex_unlock(child_lock);
    }
    if (rv != APR_SUCCESS) {
        if (!child_failed_logged++) {
            ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, s->r, RS_TAG "cannot read the journal "
                          "in the state store of ResourceSyncStateDir '%s'",
                          rs_global.state_dir);
        }
        return rv;
    }
    child_failed_logged = 0;
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

/* The headers of the open list whose extent is cur: everything a poll
 * needs is in the status entry, no store, no file.  The body is a
 * function of the list's extent and of the configuration (URLs, hashes,
 * spec version), so the strong ETag is made of those: it survives
 * restarts that change nothing, and changes with any directive.  Returns
 * OK, or the status of a conditional request (304, 412). */
static int set_headers(request_rec *r, const rs_status_set_t *cur)
{
    ap_set_content_type(r, "application/xml");
    apr_table_setn(r->headers_out, "ETag",
                   apr_psprintf(r->pool, "\"o%" APR_UINT64_T_HEX_FMT "-%" APR_UINT64_T_HEX_FMT
                                "-%" APR_UINT64_T_HEX_FMT "-%" APR_UINT64_T_HEX_FMT "-%.12s\"",
                                (apr_uint64_t)cur->cl_open_id,
                                (apr_uint64_t)cur->cl_first_seq, (apr_uint64_t)cur->cl_last_seq,
                                (apr_uint64_t)cur->cl_from, rs_global.fingerprint));
    ap_update_mtime(r, cur->cl_count && cur->cl_last_dt ? cur->cl_last_dt : cur->cl_from);
    ap_set_last_modified(r);
    apr_table_setn(r->headers_out, "Cache-Control", "no-cache");
    return ap_meets_conditions(r);
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
    rs_clsource_opts(r->pool, set, cur->history, &o);
    memset(&src, 0, sizeof(src));
    src.r = r;
    src.set = set;
    src.history = cur->history;
    rs_clsource_init(&rsrc, set, store_records, &src);
    rv = rs_changelist_write_from(rs_clsource_read, &rsrc, &o, &cl, w, r->pool);
    *store_err = rsrc.err;
    return rv;
}

/* Stream the body of the list of extent cur. */
static int send_body(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur)
{
    sink_t k;
    rs_xml_t *w;
    apr_status_t store_err;

    k.f = r->output_filters;
    k.bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    if (!(w = rs_xml_open(r->pool, to_brigade, &k))) {
        return HTTP_SERVICE_UNAVAILABLE;
    }
    if (render(r, set, cur, w, &store_err) != APR_SUCCESS) {
        if (store_err != APR_SUCCESS && !r->sent_bodyct) {
            /* Nothing sent yet: the store could not be read. */
            apr_brigade_cleanup(k.bb);
            apr_table_setn(r->err_headers_out, "Retry-After", "5");
            return HTTP_SERVICE_UNAVAILABLE;
        }
        /* Part of the body is out: all we can do is cut the connection. */
        r->connection->aborted = 1;
        return OK;
    }
    APR_BRIGADE_INSERT_TAIL(k.bb, apr_bucket_eos_create(k.bb->bucket_alloc));
    return ap_pass_brigade(r->output_filters, k.bb) == APR_SUCCESS ? OK : AP_FILTER_ERROR;
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
        frame.cl_last_seq = frame.cl_first_seq - 1;     /* no entries */
        frame.cl_count = 0;
    }
    if (!w || render(r, set, &frame, w, &store_err) != APR_SUCCESS) {
        apr_table_setn(r->err_headers_out, "Retry-After", "5");
        return HTTP_SERVICE_UNAVAILABLE;
    }
    ap_set_content_length(r, n + (cur->cl_bytes >= 0 ? (apr_off_t)cur->cl_bytes : 0));
    return OK;
}

int rs_openlist_serve(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur)
{
    int rc = set_headers(r, cur);
    if (rc != OK) {
        return rc;
    }
    return r->header_only ? send_length(r, set, cur) : send_body(r, set, cur);
}
