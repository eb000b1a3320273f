/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_changes.c - the journal and Change Lists in the watcher.
 *
 * Lifecycle: after every scan of a set the watcher publishes the records
 * the scan committed (rs_changes_publish) and calls rs_changes_update():
 * the engine unit rs_listclose closes the open Change List when it
 * reached ResourceSyncMaxEntries (at a record boundary) or its period
 * ended, drops closed lists older than ResourceSyncJournalRetention, and
 * rewrites the files that changed below <statedir>/changelists/<set>
 * (see rs_listclose.h); this file gives it the set's settings, the
 * ring-first record source of the closed lists' files and the
 * publication of the open list's extent.  Records themselves are written
 * by the scan, in its transaction, through the set's recorder
 * (rs_changes_recorder); the files are derived from the store and rebuilt
 * at startup if missing, so a crash at any point loses nothing.
 *
 * The open Change List is not a file: its extent (id, from, first and
 * last sequence) is published in the set's entry of the status segment,
 * its newest records in the ring, and children serve it from both
 * (mod_resourcesync_openlist.c).  The watcher owns the set's entry: every
 * function here updates the watcher's own copy (`own`) and publishes it;
 * none reads the segment back.
 */
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_changes.h"
#include "mod_resourcesync_clsource.h"
#include "mod_resourcesync_status.h"
#include "rs_cdump.h"
#include "rs_changelist.h"
#include "rs_journal.h"
#include "rs_listclose.h"
#include "rs_listfollow.h"
#include "rs_recorder.h"

rs_recorder_t *rs_changes_recorder(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set)
{
    rs_changelist_opts_t *o = apr_palloc(p, sizeof(*o));
    rs_recorder_t *rc;
    rs_clsource_opts(p, set, "", o); /* entries only: no list URL */
    rc = rs_recorder_create(p, j, set->name, &o->entry,
                            rs_global.recent > 0 ? rs_global.recent : RS_DEFAULT_RECENT);
    if (set->cdump) {
        rs_recorder_manifest_paths(rc);
    }
    return rc;
}

/* Add the rendered bytes of recs to the open list's count (unknown once a
 * record comes without its bytes), and for a set with Change Dumps what
 * their manifest entries add. */
static void add_bytes(apr_pool_t *p, const rs_set_t *set, rs_status_set_t *own,
                      const apr_array_header_t *recs)
{
    int i;
    for (i = 0; i < recs->nelts && own->cl_bytes >= 0; i++) {
        const rs_record_t *r = &APR_ARRAY_IDX(recs, i, rs_record_t);
        own->cl_bytes = r->xml ? own->cl_bytes + (apr_int64_t)r->xml_len : -1;
        if (set->cdump && own->cl_paths >= 0) {
            own->cl_paths = r->manifest_extra ? own->cl_paths + r->manifest_extra
                            : r->name         ? own->cl_paths + rs_cdump_path_len(p, r)
                                              : -1;
        }
    }
}

static apr_int64_t range_bytes(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                               apr_int64_t first, apr_int64_t last, apr_int64_t *paths);

void rs_changes_publish(apr_pool_t *p, rs_journal_t *j, rs_recorder_t *rc, const rs_set_t *set,
                        rs_status_set_t *own)
{
    apr_array_header_t *recs;
    apr_int64_t n;

    if (!rc || !(n = rs_recorder_take(rc, p, &recs)) || !recs) {
        return;
    }
    if (own->cl_ready) {
        const rs_record_t *last = &APR_ARRAY_IDX(recs, recs->nelts - 1, rs_record_t);
        if (n > recs->nelts && own->cl_bytes >= 0) {
            /* The window wrapped: the batch's records before it are in
             * the journal only, and their bytes count as much. */
            apr_int64_t paths = 0,
                        b = range_bytes(p, j, set, own->cl_last_seq + 1,
                                        APR_ARRAY_IDX(recs, 0, rs_record_t).seq - 1, &paths);
            own->cl_bytes = b < 0 ? -1 : own->cl_bytes + b;
            own->cl_paths = b < 0 || own->cl_paths < 0 ? -1 : own->cl_paths + paths;
        }
        own->cl_last_seq = last->seq;
        own->cl_count += n;
        own->cl_last_dt = last->datetime;
        add_bytes(p, set, own, recs);
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
            add_bytes(pp, set, own, recs);
        }
        /* Records below the ring's head are put all the same: the extent
         * that covers them is published with them, in one critical
         * section, so no reader looked for them before. */
        rs_status_publish(set->slot, recs, own);
    }
    apr_pool_destroy(pp);
    return rv;
}

/* The rendered bytes of the set's records first .. last, read from the
 * store, and in *paths, for a set with Change Dumps, what their manifest
 * entries add: -1 when they cannot be read. */
static apr_int64_t range_bytes(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                               apr_int64_t first, apr_int64_t last, apr_int64_t *paths)
{
    rs_entry_renderer_t *x;
    apr_int64_t next = first, bytes = 0;
    apr_pool_t *pp;

    *paths = 0;
    apr_pool_create(&pp, p);
    if (!(x = rs_clsource_renderer(p, set))) {
        bytes = -1;
    }
    while (bytes >= 0 && next <= last) {
        apr_array_header_t *recs;
        int i;
        apr_pool_clear(pp);
        if (rs_journal_records(j, pp, set->name, next, last, 1000, &recs) != APR_SUCCESS
            || !recs->nelts) {
            bytes = -1; /* the range's records are not all there */
            break;
        }
        for (i = 0; i < recs->nelts && bytes >= 0; i++) {
            apr_size_t len;
            bytes = rs_entry_render(x, &APR_ARRAY_IDX(recs, i, rs_record_t), &len)
                        ? bytes + (apr_int64_t)len
                        : -1;
            *paths += set->cdump ? rs_cdump_path_len(pp, &APR_ARRAY_IDX(recs, i, rs_record_t)) : 0;
        }
        next = APR_ARRAY_IDX(recs, recs->nelts - 1, rs_record_t).seq + 1;
    }
    apr_pool_destroy(pp);
    return bytes;
}

/* The rendered bytes of the open list's entries, read from the store
 * (once per watcher start or close, while the extent changed under it),
 * and their manifest entries' in *paths: -1 when they cannot be read. */
static apr_int64_t open_bytes(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                              const rs_changelist_t *openl, apr_int64_t *paths)
{
    if (!openl->count) {
        *paths = 0;
        return 0;
    }
    return range_bytes(p, j, set, openl->first_seq, openl->last_seq, paths);
}

/* The open list's extent in the set's status entry (published only when
 * it changed). */
static void publish_extent(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                           const rs_changelist_t *openl, apr_time_t last_dt, rs_status_set_t *own)
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
    own->cl_bytes = open_bytes(p, j, set, openl, &own->cl_paths);
    if (own->cl_bytes < 0) {
        own->cl_paths = -1;
    }
    rs_status_write_set(set->slot, own);
}

/* The datetime of the open list's newest record (0: none, or unknown). */
static apr_time_t open_last_dt(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                               const rs_changelist_t *openl)
{
    apr_array_header_t *recs;
    if (openl->count
        && rs_journal_records(j, p, set->name, openl->last_seq, openl->last_seq, 1, &recs)
               == APR_SUCCESS
        && recs->nelts) {
        return APR_ARRAY_IDX(recs, 0, rs_record_t).datetime;
    }
    return 0;
}

/* The baton of rs_changes_update's callbacks: the watcher's own journal
 * (watcher_more: the rs_clsource_more_fn of the list files), the set and
 * its status entry (watcher_publish). */
typedef struct {
    rs_journal_t *j;
    const rs_set_t *set;
    rs_status_set_t *own;
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

/* rs_listclose_io_t's source: a closed list's records from the ring while
 * it holds them, from the journal otherwise (one source per file). */
static void *watcher_source(void *baton, apr_pool_t *p)
{
    wmore_t *w = baton;
    rs_clsource_t *rsrc = apr_palloc(p, sizeof(*rsrc));
    rs_clsource_init(rsrc, w->set, watcher_more, w);
    return rsrc;
}

/* A follower's source of a closed list's records: the store alone.  The
 * ring may miss records of a set this node follows (a list closed
 * before this node learnt of its records, whose slots, in the window of
 * the sets it writes, hold other sequences: a reader would take them for
 * numbers never used). */
static void *follower_source(void *baton, apr_pool_t *p)
{
    rs_clsource_t *rsrc = watcher_source(baton, p);
    rsrc->from_store = 1;
    return rsrc;
}

/* rs_listclose_io_t's publish: the open list's extent in the status
 * entry. */
static void watcher_publish(void *baton, apr_pool_t *p, const rs_changelist_t *openl)
{
    wmore_t *w = baton;
    publish_extent(p, w->j, w->set, openl, open_last_dt(p, w->j, w->set, openl), w->own);
}

/* The set's settings for rs_listclose, for its documents' options o. */
static void listclose_conf(apr_pool_t *p, const rs_set_t *set, const rs_changelist_opts_t *o,
                           rs_listclose_conf_t *c)
{
    memset(c, 0, sizeof(*c));
    c->set = set->name;
    c->max_entries = set->max_entries;
    c->period = set->cl_period;
    c->retention = set->retention;
    c->dir = set->cl_dir;
    c->max_bytes = rs_listclose_budget(o, p);
    c->entry = &o->entry;
    /* With Change Dumps a closed list's manifest must fit too: its entries
     * count their paths, its frame a little more (rs_cdump.h). */
    c->manifest_paths = set->cdump;
    if (set->cdump && c->max_bytes > RS_CDUMP_FRAME_SLACK) {
        c->max_bytes -= RS_CDUMP_FRAME_SLACK;
    }
    c->index_max = rs_listclose_index_cap(o, set->max_entries, p);
}

/* What the writer's and a follower's lists share: set's Change List
 * options and close rule for own's history, and the io's store reads;
 * APR_EINVAL while own has no history (nothing may be published). */
static apr_status_t lists_setup(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                                rs_status_set_t *own, rs_changelist_opts_t *o,
                                rs_listclose_conf_t *c, wmore_t *w, rs_listclose_io_t *io)
{
    if (!*own->history) {
        return APR_EINVAL;
    }
    rs_clsource_opts(p, set, own->history, o);
    listclose_conf(p, set, o, c);
    w->j = j;
    w->set = set;
    w->own = own;
    io->read = rs_clsource_read;
    io->baton = w;
    return APR_SUCCESS;
}

apr_status_t rs_changes_update(apr_pool_t *p, rs_db_t *db, rs_journal_t *j, const rs_set_t *set,
                               struct rs_listclose_t *lc, rs_status_set_t *own,
                               const rs_logger_t *log)
{
    rs_changelist_opts_t o;
    rs_listclose_conf_t c;
    rs_listclose_io_t io;
    wmore_t w;
    apr_status_t rv = lists_setup(p, j, set, own, &o, &c, &w, &io);

    if (rv != APR_SUCCESS) {
        return rv;
    }
    c.fence = db;
    io.source = watcher_source;
    io.publish = watcher_publish;
    io.open_bytes = own->cl_ready ? rs_changes_close_bytes(set, own) : -1;
    return rs_listclose_update(lc, p, j, &c, own->history, &o, &io, apr_time_now(), log);
}

/* rs_listfollow's publish: the open list openl on a follower.  A list
 * other than the one published (a close, or the first publication) is
 * published empty, then its records are put in the ring and its extent
 * grows with them (rs_changes_resync: ring and extent in one critical
 * section, so no reader looks for a record that is not in the ring yet,
 * whatever the ring's head, which the sets this node writes move on). */
static void follower_publish(void *baton, apr_pool_t *p, const rs_changelist_t *openl)
{
    wmore_t *w = baton;
    rs_status_set_t *own = w->own;
    int fresh = !own->cl_ready || own->cl_open_id != openl->id || own->cl_from != openl->from
                || own->cl_first_seq != openl->first_seq;

    if (fresh) {
        own->cl_ready = 1;
        own->cl_open_id = openl->id;
        own->cl_from = openl->from;
        own->cl_first_seq = openl->first_seq;
        own->cl_last_seq = openl->first_seq - 1;
        own->cl_count = 0;
        own->cl_last_dt = 0;
        own->cl_bytes = own->cl_paths = 0;
    }
    rs_changes_resync(p, w->j, w->set, own);
    if (fresh && own->cl_last_seq < openl->first_seq) {
        rs_status_write_set(w->set->slot, own); /* an empty list */
    }
}

apr_status_t rs_changes_follow(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                               struct rs_listfollow_t *lf, rs_status_set_t *own,
                               const rs_logger_t *log)
{
    rs_changelist_opts_t o;
    rs_listclose_conf_t c;
    rs_listclose_io_t io;
    wmore_t w;
    apr_status_t rv = lists_setup(p, j, set, own, &o, &c, &w, &io);

    if (rv != APR_SUCCESS) {
        return rv;
    }
    io.source = follower_source;
    io.publish = follower_publish;
    io.open_bytes = -1;
    return rs_listfollow_update(lf, p, j, &c, own->history, &o, &io, !own->cl_ready, log);
}

apr_int64_t rs_changes_close_bytes(const rs_set_t *set, const rs_status_set_t *own)
{
    return own->cl_bytes < 0 || !set->cdump ? own->cl_bytes
           : own->cl_paths < 0              ? -1
                                            : own->cl_bytes + own->cl_paths;
}

apr_status_t rs_changes_seed(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                             rs_status_set_t *own)
{
    apr_array_header_t *closed;
    rs_changelist_t openl;
    apr_status_t rv;

    rs_listclose_remove_legacy(p, set->cl_dir);
    if ((rv = rs_journal_lists(j, p, set->name, &closed, &openl)) != APR_SUCCESS) {
        return rv;
    }
    if (!openl.from) {
        return APR_SUCCESS; /* the journal has not started yet */
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
            rs_log_emit(log, RS_LOG_WARN, rv,
                        "cannot read the newest journal records: "
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
    rs_log_emit(log, RS_LOG_DEBUG, 0,
                "%" APR_INT64_T_FMT " journal records put into the "
                "ring of recent changes",
                put);
}
