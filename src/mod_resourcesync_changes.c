/* mod_resourcesync_changes.c - the journal and Change Lists in the watcher.
 *
 * Lifecycle: after every scan of a set the watcher calls
 * rs_changes_update(): it closes the open Change List when it reached
 * ResourceSyncMaxEntries (at a record boundary) or its period ended,
 * drops closed lists older than ResourceSyncJournalRetention, and rewrites
 * the documents that changed, as files below <statedir>/changelists/<set>:
 *   index.xml    the Change List Index (closed lists, then the open one)
 *   <id>.xml     each closed Change List, written once when it closes and
 *                never again (byte-identical forever)
 * Every file appears by an atomic rename of a synced temporary file, so a
 * child serves either the old or the new bytes, never a mixture.  Records
 * themselves are written by the scan, in its transaction, through the
 * set's recorder (rs_changes_recorder); the files are derived from the store and rebuilt
 * at startup if missing, so a crash at any point loses nothing.
 *
 * The open Change List is not a file.  After each commit the watcher puts
 * the new records into the ring of the status segment and publishes the
 * open list's extent (id, from, first and last sequence) in the set's
 * entry (rs_changes_publish); children answer its ETag, 304s and HEAD
 * from that entry alone and stream its body from the ring, falling back
 * to the store (a read connection per child) for what has left the ring
 * (rs_changes_serve_open).  The extent read with the status is the range
 * of the body, so a body always matches its ETag.
 */
#include <stdlib.h>
#include <string.h>
#include <apr_strings.h>
#include <apr_file_io.h>
#include <apr_thread_mutex.h>
#include <http_protocol.h>
#include <http_request.h>
#include <util_filter.h>
#include "mod_resourcesync.h"
#include "rs_changelist.h"
#include "rs_file.h"
#include "rs_journal.h"
#include "rs_recorder.h"
#include "rs_statedir.h"

static void opts_of(apr_pool_t *p, const rs_set_t *set, rs_changelist_opts_t *o);

/* A renderer of the set's entries, with its options, from p (NULL on
 * failure). */
static rs_entry_renderer_t *renderer_of(apr_pool_t *p, const rs_set_t *set)
{
    rs_changelist_opts_t *o = apr_palloc(p, sizeof(*o));
    opts_of(p, set, o);
    return rs_entry_renderer_create(p, &o->entry);
}

rs_recorder_t *rs_changes_recorder(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set)
{
    rs_changelist_opts_t *o = apr_palloc(p, sizeof(*o));
    opts_of(p, set, o);
    return rs_recorder_create(p, j, set->name, &o->entry,
                              rs_global.recent > 0 ? rs_global.recent : RS_DEFAULT_RECENT);
}

void rs_changes_publish(apr_pool_t *p, rs_recorder_t *rc, const rs_set_t *set)
{
    rs_status_set_t cur;
    apr_array_header_t *recs;
    apr_int64_t n;

    if (!rc || !(n = rs_recorder_take(rc, p, &recs)) || !recs) {
        return;
    }
    rs_status_read_set(set->slot, &cur);
    if (cur.cl_ready) {
        const rs_record_t *last = &APR_ARRAY_IDX(recs, recs->nelts - 1, rs_record_t);
        cur.cl_last_seq = last->seq;
        cur.cl_count += n;
        cur.cl_last_dt = last->datetime;
    }
    /* Not ready: rs_changes_update sets the extent from the store. */
    rs_status_publish(set->slot, recs, &cur);
}

/* The open list's extent in the set's status entry. */
static void publish_extent(const rs_set_t *set, const rs_changelist_t *openl, apr_time_t last_dt)
{
    rs_status_set_t cur;
    rs_status_read_set(set->slot, &cur);
    if (cur.cl_ready && cur.cl_open_id == openl->id && cur.cl_from == openl->from
        && cur.cl_first_seq == openl->first_seq && cur.cl_last_seq == openl->last_seq
        && cur.cl_count == openl->count) {
        return;
    }
    cur.cl_ready = 1;
    cur.cl_open_id = openl->id;
    cur.cl_from = openl->from;
    cur.cl_first_seq = openl->first_seq;
    cur.cl_last_seq = openl->last_seq;
    cur.cl_count = openl->count;
    cur.cl_last_dt = openl->count ? last_dt : 0;
    rs_status_write_set(set->slot, &cur);
}

static void opts_of(apr_pool_t *p, const rs_set_t *set, rs_changelist_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->set = set->name;
    o->entry.url_base = set->root_url;
    o->capability_url = set->capability_url;
    o->index_url = set->cl_index_url;
    o->list_url_prefix = apr_pstrcat(p, set->doc_base, "changelist/", NULL);
    o->entry.hashes = set->hashes;
    o->entry.spec10 = set->spec10;
}

/* The records of a list: from the ring (rendered already) while it holds
 * them, then, from the first one it does not hold on, from the store
 * through `more` (appending to out).  The ring has only committed records
 * and the watcher is their only writer, so both give the same records:
 * the watcher writes closed lists this way, children the open list. */
typedef apr_status_t more_fn(void *baton, apr_pool_t *p, apr_int64_t next, apr_int64_t last,
                             int limit, apr_array_header_t *out);
typedef struct {
    const rs_set_t *set;
    int from_store;          /* the ring no longer holds the rest */
    more_fn *more;
    void *baton;
    apr_status_t err;        /* of `more` */
} ringsrc_t;

static void ringsrc_init(ringsrc_t *s, const rs_set_t *set, more_fn *more, void *baton)
{
    memset(s, 0, sizeof(*s));
    s->set = set;
    s->more = more;
    s->baton = baton;
}

static apr_status_t ring_source(void *baton, apr_pool_t *p, apr_int64_t next, apr_int64_t last,
                                int limit, apr_array_header_t **out)
{
    ringsrc_t *s = baton;
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

static void append_records(apr_array_header_t *out, const apr_array_header_t *more)
{
    int i;
    for (i = 0; i < more->nelts; i++) {
        *(rs_record_t *)apr_array_push(out) = APR_ARRAY_IDX(more, i, rs_record_t);
    }
}

/* more_fn of the watcher: its own journal. */
typedef struct {
    rs_journal_t *j;
    const rs_set_t *set;
} wmore_t;

static apr_status_t watcher_more(void *baton, apr_pool_t *p, apr_int64_t next, apr_int64_t last,
                                 int limit, apr_array_header_t *out)
{
    wmore_t *w = baton;
    apr_array_header_t *more;
    apr_status_t rv = rs_journal_records(w->j, p, w->set->name, next, last, limit, &more);
    if (rv == APR_SUCCESS) {
        append_records(out, more);
    }
    return rv;
}

/* What one Change List file holds: the Change List Index (closed != NULL)
 * or the closed list cl, its records from the ring while it holds them,
 * from the journal otherwise. */
typedef struct {
    rs_journal_t *j;
    const rs_set_t *set;
    const rs_changelist_opts_t *o;
    const rs_changelist_t *cl;
    const apr_array_header_t *closed;
} clfile_t;

static apr_status_t write_clfile(void *baton, apr_file_t *f, apr_pool_t *p)
{
    clfile_t *c = baton;
    rs_xml_t *w = rs_xml_open_file(p, f);
    wmore_t wm;
    ringsrc_t rsrc;

    if (!w) {
        return APR_ENOMEM;
    }
    if (c->closed) {
        return rs_changelist_write_index(c->o, c->closed, c->cl, w, p);
    }
    wm.j = c->j;
    wm.set = c->set;
    ringsrc_init(&rsrc, c->set, watcher_more, &wm);
    return rs_changelist_write_from(ring_source, &rsrc, c->o, c->cl, w, p);
}

/* Write a Change List file (atomically: rs_file_replace). */
static apr_status_t publish_file(apr_pool_t *p, const char *path, rs_journal_t *j,
                                 const rs_set_t *set, const rs_changelist_opts_t *o,
                                 const rs_changelist_t *cl, const apr_array_header_t *closed)
{
    clfile_t c;
    c.j = j;
    c.set = set;
    c.o = o;
    c.cl = cl;
    c.closed = closed;
    return rs_file_replace(p, path, write_clfile, &c);
}

/* Which sets' indexes this watcher has written (by slot). */
static unsigned char *index_written;

static int set_index_written(const rs_set_t *set)
{
    return index_written && set->slot >= 0 && index_written[set->slot];
}

static void set_index_mark(const rs_set_t *set)
{
    if (!index_written) {
        index_written = calloc((apr_size_t)rs_global.sets->nelts + 1, 1);
    }
    if (index_written && set->slot >= 0 && set->slot < rs_global.sets->nelts) {
        index_written[set->slot] = 1;
    }
}

apr_status_t rs_changes_update(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                               int changed, const rs_logger_t *log)
{
    rs_changelist_opts_t o;
    apr_array_header_t *closed, *dropped;
    rs_changelist_t openl, done;
    apr_time_t now = apr_time_now();
    apr_status_t rv;
    int i, index_dirty = 0, guard;

    opts_of(p, set, &o);
    apr_dir_make_recursive(set->cl_dir, APR_FPROT_OS_DEFAULT, p);

    /* Close at ResourceSyncMaxEntries (record boundaries), then on time. */
    for (guard = 0; guard < 100000; guard++) {
        apr_array_header_t *recs;
        if ((rv = rs_journal_lists(j, p, set->name, &closed, &openl)) != APR_SUCCESS) {
            return rv;
        }
        if (openl.count <= set->max_entries) {
            break;
        }
        rv = rs_journal_records(j, p, set->name, openl.first_seq, -1, set->max_entries + 1,
                                &recs);
        if (rv != APR_SUCCESS || recs->nelts <= set->max_entries) {
            break;
        }
        rv = rs_journal_close(j, p, set->name,
                              APR_ARRAY_IDX(recs, set->max_entries - 1, rs_record_t).seq,
                              set->max_entries,
                              APR_ARRAY_IDX(recs, set->max_entries, rs_record_t).datetime,
                              &done);
        if (rv != APR_SUCCESS || !done.id) {
            break;
        }
        index_dirty = 1;
    }
    if ((rv = rs_journal_lists(j, p, set->name, &closed, &openl)) != APR_SUCCESS) {
        return rv;
    }
    if (openl.count > 0 && (openl.count >= set->max_entries || now - openl.from >= set->cl_period)) {
        if (rs_journal_close(j, p, set->name, -1, 0, now, &done) == APR_SUCCESS && done.id) {
            index_dirty = 1;
        }
    }

    /* Retention. */
    if (rs_journal_expire(j, p, set->name, now - set->retention, &dropped) == APR_SUCCESS
        && dropped->nelts) {
        for (i = 0; i < dropped->nelts; i++) {
            apr_file_remove(rs_statedir_cl_list(p, set->cl_dir,
                                                APR_ARRAY_IDX(dropped, i, apr_int64_t)), p);
        }
        rs_log_emit(log, RS_LOG_INFO, 0, "set %s: %d Change Lists expired", set->name,
                    dropped->nelts);
        index_dirty = 1;
    }

    if ((rv = rs_journal_lists(j, p, set->name, &closed, &openl)) != APR_SUCCESS) {
        return rv;
    }
    /* Closed lists: written once (also after a crash left one unwritten). */
    for (i = 0; i < closed->nelts; i++) {
        const rs_changelist_t *cl = &APR_ARRAY_IDX(closed, i, rs_changelist_t);
        const char *path = rs_statedir_cl_list(p, set->cl_dir, cl->id);
        if (!rs_file_exists(p, path)
            && (rv = publish_file(p, path, j, set, &o, cl, NULL)) != APR_SUCCESS) {
            rs_log_emit(log, RS_LOG_ERR, rv, "set %s: cannot write Change List %s",
                        set->name, path);
            return rv;
        }
    }
    /* The open list's extent before the index: a client that reads the
     * new index (a list closed, the next one open) must find the closed
     * list served from its file and the next one served open.  (With the
     * old index, a list it thinks open is served closed, with `until`:
     * stale, never contradictory.) */
    {
        apr_time_t last_dt = 0;
        if (openl.count) {
            apr_array_header_t *recs;
            if (rs_journal_records(j, p, set->name, openl.last_seq, openl.last_seq, 1, &recs)
                == APR_SUCCESS && recs->nelts) {
                last_dt = APR_ARRAY_IDX(recs, 0, rs_record_t).datetime;
            }
        }
        publish_extent(set, &openl, last_dt);
    }
    /* The index changes only when lists close or expire (the open list's
     * entry has no until).  Each watcher also writes it once, at its first
     * update of the set: an earlier watcher may have been killed between
     * closing a list in the store and writing the index, which would
     * otherwise stay stale until the next close. */
    if (index_dirty || !set_index_written(set)
        || !rs_file_exists(p, rs_statedir_cl_index(p, set->cl_dir))) {
        rv = publish_file(p, rs_statedir_cl_index(p, set->cl_dir), j, set, &o, &openl, closed);
        if (rv != APR_SUCCESS) {
            rs_log_emit(log, RS_LOG_ERR, rv, "set %s: cannot write its Change List Index",
                        set->name);
            return rv;
        }
        set_index_mark(set);
    }
    return APR_SUCCESS;
}

apr_status_t rs_changes_seed(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set)
{
    apr_array_header_t *closed;
    rs_changelist_t openl;
    apr_time_t last_dt = 0;
    apr_dir_t *d;
    apr_finfo_t fi;
    apr_status_t rv;

    /* Files of the open list from before it was served from the ring. */
    if (apr_dir_open(&d, set->cl_dir, p) == APR_SUCCESS) {
        while (apr_dir_read(&fi, APR_FINFO_NAME, d) == APR_SUCCESS) {
            if (rs_statedir_is_cl_legacy(fi.name)) {
                apr_file_remove(apr_pstrcat(p, set->cl_dir, "/", fi.name, NULL), p);
            }
        }
        apr_dir_close(d);
    }
    if ((rv = rs_journal_lists(j, p, set->name, &closed, &openl)) != APR_SUCCESS) {
        return rv;
    }
    if (!openl.from) {
        return APR_SUCCESS;      /* the journal has not started yet */
    }
    if (openl.count) {
        apr_array_header_t *recs;
        if (rs_journal_records(j, p, set->name, openl.last_seq, openl.last_seq, 1, &recs)
            == APR_SUCCESS && recs->nelts) {
            last_dt = APR_ARRAY_IDX(recs, 0, rs_record_t).datetime;
        }
    }
    publish_extent(set, &openl, last_dt);
    return APR_SUCCESS;
}

void rs_changes_seed_ring(apr_pool_t *p, rs_journal_t *j, const rs_logger_t *log)
{
    apr_int64_t after = rs_journal_last_seq(j) - rs_global.recent, put = 0;
    apr_hash_t *rr = apr_hash_make(p), *sets = apr_hash_make(p);
    apr_pool_t *pp;
    int i;

    /* The ring covers the sequences (head - slots, head]: every record in
     * that range must be put (in order), or readers would take a missing
     * one for a number never used.  So: every record after
     * last - slots, whatever its set; records of sets no longer
     * configured are put without an entry (readers never ask for them). */
    for (i = 0; i < rs_global.sets->nelts; i++) {
        const rs_set_t *set = APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *);
        apr_hash_set(sets, set->name, APR_HASH_KEY_STRING, set);
    }
    apr_pool_create(&pp, p);
    for (;;) {
        apr_array_header_t *recs, *names;
        int *slots;
        apr_pool_clear(pp);
        if (rs_journal_recent(j, pp, after, 2000, &recs, &names) != APR_SUCCESS) {
            rs_log_emit(log, RS_LOG_WARN, 0, "cannot read the newest journal records: "
                        "open Change Lists are served from the store");
            break;
        }
        if (!recs->nelts) {
            break;
        }
        slots = apr_palloc(pp, sizeof(int) * (apr_size_t)recs->nelts);
        for (i = 0; i < recs->nelts; i++) {
            rs_record_t *r = &APR_ARRAY_IDX(recs, i, rs_record_t);
            const char *name = APR_ARRAY_IDX(names, i, const char *);
            const rs_set_t *set = apr_hash_get(sets, name, APR_HASH_KEY_STRING);
            rs_entry_renderer_t *x = NULL;
            const char *xml;
            apr_size_t len;
            slots[i] = set ? set->slot : -1;
            if (set && !(x = apr_hash_get(rr, name, APR_HASH_KEY_STRING))
                && (x = renderer_of(p, set))) {
                apr_hash_set(rr, set->name, APR_HASH_KEY_STRING, x);
            }
            if (x && (xml = rs_entry_render(x, r, &len))) {
                r->xml = apr_pmemdup(pp, xml, len);
                r->xml_len = len;
            }
            after = r->seq;
        }
        rs_status_ring_fill(recs, slots);
        put += recs->nelts;
    }
    apr_pool_destroy(pp);
    rs_log_emit(log, RS_LOG_DEBUG, 0, "%" APR_INT64_T_FMT " journal records put into the "
                "ring of recent changes", put);
}

/* ------------------------------------------------------------ children */

/* A child's read connection to the store, for open-list ranges that have
 * left the ring.  Opened on first use, shared by the child's threads
 * under a mutex, dropped after an error so the next request opens it
 * again.  The connection only reads: the watcher is the only writer, and
 * SQLite's WAL lets readers run beside it. */
static apr_thread_mutex_t *child_lock;
static apr_pool_t *child_pool;
static apr_pool_t *child_store_pool;
static rs_store_t *child_store;
static rs_journal_t *child_journal;
static int child_failed_logged;

void rs_changes_child_init(apr_pool_t *p)
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
} open_src_t;

/* more_fn of a child: its read connection to the store. */
static apr_status_t store_records(void *baton, apr_pool_t *p, apr_int64_t next,
                                  apr_int64_t last, int limit, apr_array_header_t *out)
{
    open_src_t *s = baton;
    static rs_logger_t log;
    apr_array_header_t *more = NULL;
    apr_status_t rv;

    if (child_lock) {
        apr_thread_mutex_lock(child_lock);
    }
    if (!child_store) {
        log.fn = child_log;
        log.baton = s->r->server;
        apr_pool_create(&child_store_pool, child_pool);
        rv = rs_store_open(&child_store, child_store_pool, RS_STATEDIR_DB_DRIVER,
                           rs_statedir_db(child_store_pool, rs_global.state_dir), &log);
        if (rv == APR_SUCCESS) {
            rv = rs_journal_open(&child_journal, child_store, child_store_pool);
        }
        if (rv != APR_SUCCESS) {
            child_store = NULL;
            apr_pool_destroy(child_store_pool);
        }
    }
    rv = child_store ? rs_journal_records(child_journal, p, s->set->name, next, last, limit, &more)
                     : APR_EGENERAL;
    if (rv != APR_SUCCESS && child_store) {
        child_store = NULL;
        apr_pool_destroy(child_store_pool);
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
    append_records(out, more);
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

int rs_changes_serve_open(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur)
{
    rs_changelist_opts_t o;
    rs_changelist_t cl;
    open_src_t src;
    ringsrc_t rsrc;
    sink_t k;
    rs_xml_t *w;
    apr_status_t rv;
    int rc;

    /* Everything a poll needs is in the status entry: no store, no file.
     * The body is a function of the list's extent and of the configuration
     * (URLs, hashes, spec version), so the strong ETag is made of those:
     * it survives restarts that change nothing, and changes with any
     * directive. */
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
    if ((rc = ap_meets_conditions(r)) != OK) {
        return rc;
    }
    if (r->header_only) {
        return OK;
    }
    memset(&cl, 0, sizeof(cl));
    cl.id = cur->cl_open_id;
    cl.from = cur->cl_from;
    cl.first_seq = cur->cl_first_seq;
    cl.last_seq = cur->cl_last_seq;
    cl.count = cur->cl_count;
    opts_of(r->pool, set, &o);
    memset(&src, 0, sizeof(src));
    src.r = r;
    src.set = set;
    ringsrc_init(&rsrc, set, store_records, &src);
    k.f = r->output_filters;
    k.bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    w = rs_xml_open(r->pool, to_brigade, &k);
    if (!w) {
        return HTTP_SERVICE_UNAVAILABLE;
    }
    rv = rs_changelist_write_from(ring_source, &rsrc, &o, &cl, w, r->pool);
    if (rv != APR_SUCCESS) {
        if (rsrc.err != APR_SUCCESS && !r->sent_bodyct) {
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
