/* mod_resourcesync_changes.c - the journal and Change Lists in the watcher.
 *
 * Lifecycle: after every scan of a set the watcher publishes the records
 * the scan committed (rs_changes_publish) and calls rs_changes_update():
 * it closes the open Change List when it reached ResourceSyncMaxEntries
 * (at a record boundary) or its period ended, drops closed lists older
 * than ResourceSyncJournalRetention, and rewrites the documents that
 * changed, as files below <statedir>/changelists/<set>:
 *   index.xml    the Change List Index (closed lists, then the open one)
 *   <id>.xml     each closed Change List, written once when it closes and
 *                never again (byte-identical forever)
 * Every file appears by an atomic rename of a synced temporary file, so a
 * child serves either the old or the new bytes, never a mixture.  Records
 * themselves are written by the scan, in its transaction, through the
 * set's recorder (rs_changes_recorder); the files are derived from the
 * store and rebuilt at startup if missing, so a crash at any point loses
 * nothing.
 *
 * The open Change List is not a file: its extent (id, from, first and
 * last sequence) is published in the set's entry of the status segment,
 * its newest records in the ring, and children serve it from both
 * (mod_resourcesync_openlist.c).  The watcher owns the set's entry: every
 * function here updates the watcher's own copy (`own`) and publishes it;
 * none reads the segment back.
 */
#include <stdlib.h>
#include <string.h>
#include <apr_strings.h>
#include <apr_file_io.h>
#include "mod_resourcesync.h"
#include "rs_changelist.h"
#include "rs_file.h"
#include "rs_journal.h"
#include "rs_recorder.h"
#include "rs_statedir.h"

rs_recorder_t *rs_changes_recorder(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set)
{
    rs_changelist_opts_t *o = apr_palloc(p, sizeof(*o));
    rs_clsource_opts(p, set, "", o);     /* entries only: no list URL */
    return rs_recorder_create(p, j, set->name, &o->entry,
                              rs_global.recent > 0 ? rs_global.recent : RS_DEFAULT_RECENT);
}

/* Add the rendered bytes of recs to the open list's count (unknown once a
 * record comes without its bytes). */
static void add_bytes(rs_status_set_t *own, const apr_array_header_t *recs)
{
    int i;
    for (i = 0; i < recs->nelts && own->cl_bytes >= 0; i++) {
        const rs_record_t *r = &APR_ARRAY_IDX(recs, i, rs_record_t);
        own->cl_bytes = r->xml ? own->cl_bytes + (apr_int64_t)r->xml_len : -1;
    }
}

void rs_changes_publish(apr_pool_t *p, rs_recorder_t *rc, const rs_set_t *set,
                        rs_status_set_t *own)
{
    apr_array_header_t *recs;
    apr_int64_t n;

    if (!rc || !(n = rs_recorder_take(rc, p, &recs)) || !recs) {
        return;
    }
    if (own->cl_ready) {
        const rs_record_t *last = &APR_ARRAY_IDX(recs, recs->nelts - 1, rs_record_t);
        own->cl_last_seq = last->seq;
        own->cl_count += n;
        own->cl_last_dt = last->datetime;
        add_bytes(own, recs);
    }
    /* Not ready: rs_changes_update sets the extent from the store. */
    rs_status_publish(set->slot, recs, own);
}

apr_status_t rs_changes_resync(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                               rs_status_set_t *own)
{
    apr_int64_t after = own->cl_ready ? own->cl_last_seq : rs_status_ring_head();
    rs_entry_renderer_t *x = rs_clsource_renderer(p, set);
    apr_pool_t *pp;
    apr_status_t rv;
    int i;

    apr_pool_create(&pp, p);
    for (;;) {
        apr_array_header_t *recs;
        const rs_record_t *last;
        apr_pool_clear(pp);
        rv = rs_journal_records(j, pp, set->name, after + 1, -1, 1000, &recs);
        if (rv != APR_SUCCESS || !recs->nelts) {
            break;
        }
        for (i = 0; i < recs->nelts; i++) {
            rs_record_t *r = &APR_ARRAY_IDX(recs, i, rs_record_t);
            const char *xml;
            apr_size_t len;
            if (x && (xml = rs_entry_render(x, r, &len))) {
                r->xml = apr_pmemdup(pp, xml, len);
                r->xml_len = len;
            }
        }
        last = &APR_ARRAY_IDX(recs, recs->nelts - 1, rs_record_t);
        after = last->seq;
        if (own->cl_ready) {
            own->cl_last_seq = last->seq;
            own->cl_count += recs->nelts;
            own->cl_last_dt = last->datetime;
            add_bytes(own, recs);
        }
        /* Records below the ring's head are put all the same: the extent
         * that covers them is published with them, in one critical
         * section, so no reader looked for them before. */
        rs_status_publish(set->slot, recs, own);
    }
    apr_pool_destroy(pp);
    return rv;
}

/* The rendered bytes of the open list's entries, read from the store
 * (once per watcher start or close, while the extent changed under it):
 * -1 when they cannot be read. */
static apr_int64_t open_bytes(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                              const rs_changelist_t *openl)
{
    rs_entry_renderer_t *x;
    apr_int64_t next = openl->first_seq, bytes = 0;
    apr_pool_t *pp;

    if (!openl->count) {
        return 0;
    }
    apr_pool_create(&pp, p);
    if (!(x = rs_clsource_renderer(p, set))) {
        bytes = -1;
    }
    while (bytes >= 0 && next <= openl->last_seq) {
        apr_array_header_t *recs;
        int i;
        apr_pool_clear(pp);
        if (rs_journal_records(j, pp, set->name, next, openl->last_seq, 1000, &recs)
            != APR_SUCCESS || !recs->nelts) {
            bytes = -1;
            break;
        }
        for (i = 0; i < recs->nelts && bytes >= 0; i++) {
            apr_size_t len;
            bytes = rs_entry_render(x, &APR_ARRAY_IDX(recs, i, rs_record_t), &len)
                    ? bytes + (apr_int64_t)len : -1;
        }
        next = APR_ARRAY_IDX(recs, recs->nelts - 1, rs_record_t).seq + 1;
    }
    apr_pool_destroy(pp);
    return bytes;
}

/* The open list's extent in the set's status entry (published only when
 * it changed). */
static void publish_extent(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                           const rs_changelist_t *openl, apr_time_t last_dt,
                           rs_status_set_t *own)
{
    if (own->cl_ready && own->cl_open_id == openl->id && own->cl_from == openl->from
        && own->cl_first_seq == openl->first_seq && own->cl_last_seq == openl->last_seq
        && own->cl_count == openl->count) {
        return;
    }
    own->cl_ready = 1;
    own->cl_open_id = openl->id;
    own->cl_from = openl->from;
    own->cl_first_seq = openl->first_seq;
    own->cl_last_seq = openl->last_seq;
    own->cl_count = openl->count;
    own->cl_last_dt = openl->count ? last_dt : 0;
    own->cl_bytes = open_bytes(p, j, set, openl);
    rs_status_write_set(set->slot, own);
}

/* The datetime of the open list's newest record (0: none, or unknown). */
static apr_time_t open_last_dt(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                               const rs_changelist_t *openl)
{
    apr_array_header_t *recs;
    if (openl->count
        && rs_journal_records(j, p, set->name, openl->last_seq, openl->last_seq, 1, &recs)
           == APR_SUCCESS && recs->nelts) {
        return APR_ARRAY_IDX(recs, 0, rs_record_t).datetime;
    }
    return 0;
}

/* rs_clsource_more_fn of the watcher: its own journal. */
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
        rs_clsource_append(out, more);
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
    rs_clsource_t rsrc;

    if (!w) {
        return APR_ENOMEM;
    }
    if (c->closed) {
        return rs_changelist_write_index(c->o, c->closed, c->cl, w, p);
    }
    wm.j = c->j;
    wm.set = c->set;
    rs_clsource_init(&rsrc, c->set, watcher_more, &wm);
    return rs_changelist_write_from(rs_clsource_read, &rsrc, c->o, c->cl, w, p);
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

/* Records read at a time while looking for where a full list ends. */
#define CUT_PAGE 1000

/* Where the first n records of the set from sequence first on end: the
 * sequence of the n-th one (*last_seq), and the datetime of the next
 * (*until), which opens the next list; *last_seq stays 0 when there are
 * no more than n.  Read a page at a time, each page in a pool cleared for
 * the next: memory does not grow with n (ResourceSyncMaxEntries). */
static apr_status_t cut_at(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                           apr_int64_t first, int n, apr_int64_t *last_seq, apr_time_t *until)
{
    apr_pool_t *pp;
    apr_status_t rv = APR_SUCCESS;
    int seen = 0, i;

    *last_seq = 0;
    apr_pool_create(&pp, p);
    while (seen <= n) {
        apr_array_header_t *recs;
        apr_pool_clear(pp);
        if ((rv = rs_journal_records(j, pp, set->name, first, -1, CUT_PAGE, &recs))
            != APR_SUCCESS || !recs->nelts) {
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
        *last_seq = 0;         /* no record after the n-th: nothing to close */
    }
    apr_pool_destroy(pp);
    return rv;
}

/* Close the open list at ResourceSyncMaxEntries, at record boundaries,
 * as often as it holds more than that (each round in a pool cleared for
 * the next).  *closed_some: a list closed. */
static apr_status_t close_full(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
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
        if ((rv = rs_journal_lists(j, rp, set->name, &closed, &openl)) != APR_SUCCESS) {
            break;
        }
        if (openl.count <= set->max_entries
            || cut_at(rp, j, set, openl.first_seq, set->max_entries, &last_seq, &until)
               != APR_SUCCESS || !last_seq
            || rs_journal_close(j, rp, set->name, last_seq, set->max_entries, until, &done)
               != APR_SUCCESS || !done.id) {
            break;
        }
        *closed_some = 1;
    }
    apr_pool_destroy(rp);
    return rv;
}

/* Close the whole open list when it is full or its period ended. */
static apr_status_t close_on_time(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                                  apr_time_t now, int *closed_some)
{
    apr_array_header_t *closed;
    rs_changelist_t openl, done;
    apr_status_t rv;

    if ((rv = rs_journal_lists(j, p, set->name, &closed, &openl)) != APR_SUCCESS) {
        return rv;
    }
    if (openl.count > 0 && (openl.count >= set->max_entries || now - openl.from >= set->cl_period)
        && rs_journal_close(j, p, set->name, -1, 0, now, &done) == APR_SUCCESS && done.id) {
        *closed_some = 1;
    }
    return APR_SUCCESS;
}

/* Retention: drop closed lists older than ResourceSyncJournalRetention,
 * and their files.  *dropped_some: a list went. */
static void expire(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set, const char *history,
                   apr_time_t now, const rs_logger_t *log, int *dropped_some)
{
    apr_array_header_t *dropped;
    int i;

    if (rs_journal_expire(j, p, set->name, now - set->retention, &dropped) != APR_SUCCESS
        || !dropped->nelts) {
        return;
    }
    for (i = 0; i < dropped->nelts; i++) {
        apr_file_remove(rs_statedir_cl_list(p, set->cl_dir, history,
                                            APR_ARRAY_IDX(dropped, i, apr_int64_t)), p);
    }
    rs_log_emit(log, RS_LOG_INFO, 0, "set %s: %d Change Lists expired", set->name,
                dropped->nelts);
    *dropped_some = 1;
}

/* Closed lists: each written once (also after a crash left one
 * unwritten); each looked at in a pool cleared for the next, as a
 * retained journal may have thousands. */
static apr_status_t write_closed(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                                 const char *history, const rs_changelist_opts_t *o,
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
        path = rs_statedir_cl_list(lp, set->cl_dir, history, cl->id);
        if (!rs_file_exists(lp, path)
            && (rv = publish_file(lp, path, j, set, o, cl, NULL)) != APR_SUCCESS) {
            rs_log_emit(log, RS_LOG_ERR, rv, "set %s: cannot write Change List %s",
                        set->name, path);
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
static apr_status_t write_index(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                                const rs_changelist_opts_t *o, const rs_changelist_t *openl,
                                const apr_array_header_t *closed, int dirty,
                                const rs_logger_t *log)
{
    const char *path = rs_statedir_cl_index(p, set->cl_dir);
    apr_status_t rv;

    if (!dirty && set_index_written(set) && rs_file_exists(p, path)) {
        return APR_SUCCESS;
    }
    if ((rv = publish_file(p, path, j, set, o, openl, closed)) != APR_SUCCESS) {
        rs_log_emit(log, RS_LOG_ERR, rv, "set %s: cannot write its Change List Index",
                    set->name);
        return rv;
    }
    set_index_mark(set);
    return APR_SUCCESS;
}

apr_status_t rs_changes_update(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                               rs_status_set_t *own, const rs_logger_t *log)
{
    rs_changelist_opts_t o;
    apr_array_header_t *closed;
    rs_changelist_t openl;
    apr_time_t now = apr_time_now();
    apr_status_t rv;
    int index_dirty = 0;

    if (!*own->history) {
        return APR_EINVAL;      /* no history yet: nothing may be published */
    }
    rs_clsource_opts(p, set, own->history, &o);
    apr_dir_make_recursive(set->cl_dir, APR_FPROT_OS_DEFAULT, p);
    if ((rv = close_full(p, j, set, &index_dirty)) != APR_SUCCESS
        || (rv = close_on_time(p, j, set, now, &index_dirty)) != APR_SUCCESS) {
        return rv;
    }
    expire(p, j, set, own->history, now, log, &index_dirty);
    if ((rv = rs_journal_lists(j, p, set->name, &closed, &openl)) != APR_SUCCESS
        || (rv = write_closed(p, j, set, own->history, &o, closed, log)) != APR_SUCCESS) {
        return rv;
    }
    /* The open list's extent before the index: a client that reads the
     * new index (a list closed, the next one open) must find the closed
     * list served from its file and the next one served open.  (With the
     * old index, a list it thinks open is served closed, with `until`:
     * stale, never contradictory.) */
    publish_extent(p, j, set, &openl, open_last_dt(p, j, set, &openl), own);
    return write_index(p, j, set, &o, &openl, closed, index_dirty, log);
}

/* Files of the open list from before it was served from the ring. */
static void remove_legacy(apr_pool_t *p, const rs_set_t *set)
{
    apr_dir_t *d;
    apr_finfo_t fi;

    if (apr_dir_open(&d, set->cl_dir, p) != APR_SUCCESS) {
        return;
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME, d) == APR_SUCCESS) {
        if (rs_statedir_is_cl_legacy(fi.name)) {
            apr_file_remove(apr_pstrcat(p, set->cl_dir, "/", fi.name, NULL), p);
        }
    }
    apr_dir_close(d);
}

apr_status_t rs_changes_seed(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                             rs_status_set_t *own)
{
    apr_array_header_t *closed;
    rs_changelist_t openl;
    apr_status_t rv;

    remove_legacy(p, set);
    if ((rv = rs_journal_lists(j, p, set->name, &closed, &openl)) != APR_SUCCESS) {
        return rv;
    }
    if (!openl.from) {
        return APR_SUCCESS;      /* the journal has not started yet */
    }
    publish_extent(p, j, set, &openl, open_last_dt(p, j, set, &openl), own);
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
        apr_status_t rv;
        int *slots;
        apr_pool_clear(pp);
        if ((rv = rs_journal_recent(j, pp, after, 2000, &recs, &names)) != APR_SUCCESS) {
            rs_log_emit(log, RS_LOG_WARN, rv, "cannot read the newest journal records: "
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
                && (x = rs_clsource_renderer(p, set))) {
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
