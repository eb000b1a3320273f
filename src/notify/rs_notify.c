/* SPDX-License-Identifier: Apache-2.0 */
/* rs_notify.c - see rs_notify.h */
#include <string.h>
#include <apr_strings.h>
#include "rs_notify.h"
#include "rs_time.h"
#include "rs_xml.h"

#define PAGE  2000
#define NCOLS "id, from_dt, until_dt, first_seq, last_seq, count, sealed"

enum {
    N_NEWEST,
    N_UPDATE,
    N_INSERT,
    N_OPEN,
    N_SEAL,
    N_AFTER,
    N_LATEST,
    N_ADD_SEALED,
    N_PRUNE,
    N_RESET,
    N_RESET_CURSORS,
    N_HAS_OPEN,
    N_WINDOW,
    N_MAX
};

static const char *const sql[N_MAX] = {
    /* The newest notification of a (set, topic). */
    "SELECT " NCOLS " FROM notifications WHERE setname = %s AND topic = %s "
    "ORDER BY id DESC LIMIT 1",
    "UPDATE notifications SET last_seq = %lld, count = count + 1, until_dt = %lld "
    "WHERE id = %lld",
    "INSERT INTO notifications (setname, topic, from_dt, until_dt, first_seq, last_seq, count,"
    " sealed) VALUES (%s, 'change', %lld, %lld, %lld, %lld, 1, 0)",
    "SELECT " NCOLS " FROM notifications WHERE setname = %s AND topic = 'change' "
    "AND sealed = 0 ORDER BY id",
    "UPDATE notifications SET sealed = 1, payload = %s WHERE id = %lld AND sealed = 0",
    "SELECT " NCOLS ", payload FROM notifications WHERE setname = %s AND topic = %s "
    "AND sealed = 1 AND id > %lld ORDER BY id LIMIT %d",
    "SELECT " NCOLS ", payload FROM notifications WHERE setname = %s AND topic = %s "
    "AND sealed = 1 ORDER BY id DESC LIMIT 1",
    "INSERT INTO notifications (setname, topic, from_dt, until_dt, first_seq, last_seq, count,"
    " sealed, payload) VALUES (%s, %s, %lld, %lld, 0, 0, %lld, 1, %s)",
    /* Passed by every destination of the (set, topic) (all, without
     * destinations), old enough, and not the newest sealed one. */
    "DELETE FROM notifications WHERE setname = %s AND topic = %s AND sealed = 1 "
    "AND until_dt < %lld "
    "AND id < (SELECT MAX(id) FROM notifications WHERE setname = %s AND topic = %s "
    "AND sealed = 1) "
    "AND id <= COALESCE((SELECT MIN(cursor) FROM notify_dests WHERE setname = %s "
    "AND topic = %s), id)",
    "DELETE FROM notifications",
    "UPDATE notify_dests SET cursor = 0, attempts = 0, next_try = 0",
    "SELECT COUNT(*) FROM notifications WHERE setname = %s AND topic = 'change' AND sealed = 0",
    /* The newest sealed change notifications from an id on. */
    "SELECT " NCOLS " FROM notifications WHERE setname = %s AND topic = 'change' "
    "AND sealed = 1 AND id >= %lld ORDER BY id DESC LIMIT %d",
};

static const char *const schema_v2[] = {
    "CREATE TABLE IF NOT EXISTS notifications ("
    " id INTEGER PRIMARY KEY, setname TEXT NOT NULL, topic TEXT NOT NULL,"
    " from_dt BIGINT NOT NULL, until_dt BIGINT NOT NULL, first_seq BIGINT NOT NULL,"
    " last_seq BIGINT NOT NULL, count BIGINT NOT NULL, sealed INTEGER NOT NULL,"
    " payload BLOB)",
    "CREATE INDEX IF NOT EXISTS notifications_set_topic ON notifications (setname, topic, id)",
    "CREATE TABLE IF NOT EXISTS notify_dests ("
    " setname TEXT NOT NULL, topic TEXT NOT NULL, kind TEXT NOT NULL, url TEXT NOT NULL,"
    " secret TEXT, lease_until BIGINT NOT NULL DEFAULT 0, cursor BIGINT NOT NULL DEFAULT 0,"
    " attempts INTEGER NOT NULL DEFAULT 0, next_try BIGINT NOT NULL DEFAULT 0,"
    " last_status INTEGER NOT NULL DEFAULT 0, last_error TEXT,"
    " PRIMARY KEY (setname, topic, kind, url))",
    NULL
};

const char *const *rs_notify_schema(int version)
{
    return version == 2 ? schema_v2 : NULL;
}

const char *const *rs_notify_tables(void)
{
    static const char *const tables[] = { "notifications", "notify_dests", NULL };
    return tables;
}

struct rs_notify_t {
    rs_db_t *db;
    rs_journal_t *j;
    apr_pool_t *pool;
};

apr_status_t rs_notify_open(rs_notify_t **out, rs_db_t *db, rs_journal_t *j, apr_pool_t *p)
{
    rs_notify_t *n = apr_pcalloc(p, sizeof(*n));
    n->db = db;
    n->j = j;
    n->pool = p;
    *out = n;
    return APR_SUCCESS;
}

static apr_status_t exec(rs_notify_t *n, int which, const void **args, int *nrows)
{
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(n->db, sql[which], &s);
    return rv == APR_SUCCESS ? rs_db_exec(n->db, s, args, nrows) : rv;
}

static apr_status_t query(rs_notify_t *n, apr_pool_t *p, int which, const void **args,
                          rs_db_row_fn *fn, void *baton)
{
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(n->db, sql[which], &s);
    return rv == APR_SUCCESS ? rs_db_query(n->db, p, s, args, fn, baton) : rv;
}

static apr_int64_t num(const char *v)
{
    return v ? apr_atoi64(v) : 0;
}

/* A row of NCOLS (and payload) into an rs_notification_t. */
static void fill(rs_notification_t *x, apr_pool_t *p, const char *const *c, int nc)
{
    x->id = num(c[0]);
    x->from = num(c[1]);
    x->until = num(c[2]);
    x->first_seq = num(c[3]);
    x->last_seq = num(c[4]);
    x->count = num(c[5]);
    x->sealed = (int)num(c[6]);
    if (nc > 7 && c[7]) {
        x->payload_len = strlen(c[7]);
        x->payload = apr_pstrmemdup(p, c[7], x->payload_len);
    }
}

static void get_one(void *baton, apr_pool_t *p, const char *const *c, int nc)
{
    fill(baton, p, c, nc);
}

static void get_all(void *baton, apr_pool_t *p, const char *const *c, int nc)
{
    rs_notification_t *x = apr_array_push(baton);
    memset(x, 0, sizeof(*x));
    fill(x, p, c, nc);
}

static void get_count(void *baton, apr_pool_t *p, const char *const *c, int nc)
{
    (void)p;
    if (nc > 0) {
        *(apr_int64_t *)baton = num(c[0]);
    }
}

/* ---------------------------------------------------------- change topic */

/* APR_EEXIST when the journal holds records of set with
 * after < seq < before (records no notification carries). */
static apr_status_t uncarried(rs_notify_t *n, const char *set, apr_int64_t after,
                              apr_int64_t before)
{
    apr_array_header_t *recs;
    apr_pool_t *p;
    apr_status_t rv;

    if (before - after <= 1) {
        return APR_SUCCESS;
    }
    apr_pool_create(&p, n->pool);
    rv = rs_journal_records(n->j, p, set, after + 1, before - 1, 1, &recs);
    if (rv == APR_SUCCESS && recs->nelts) {
        rv = APR_EEXIST;
    }
    apr_pool_destroy(p);
    return rv;
}

apr_status_t rs_notify_extend(rs_notify_t *n, const char *set, const rs_record_t *rec, int max)
{
    rs_notification_t last;
    apr_pool_t *p;
    apr_time_t until = rec->datetime + 1;
    apr_status_t rv;
    const void *args[5];

    memset(&last, 0, sizeof(last));
    apr_pool_create(&p, n->pool);
    args[0] = set;
    args[1] = RS_NOTIFY_CHANGE;
    rv = query(n, p, N_NEWEST, args, get_one, &last);
    apr_pool_destroy(p);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    if (last.id && !last.sealed && last.count < max) {
        args[0] = &rec->seq;
        args[1] = &until;
        args[2] = &last.id;
        return exec(n, N_UPDATE, args, NULL);
    }
    /* A new one continues the previous one's interval, unless records of
     * the set were journaled after the previous one's without being
     * carried (notifications were off meanwhile): then the intervals have
     * an honest gap. */
    if (last.id && (rv = uncarried(n, set, last.last_seq, rec->seq)) != APR_SUCCESS) {
        if (rv != APR_EEXIST) {
            return rv;
        }
        last.id = 0;
    }
    last.until = last.id ? last.until : rec->datetime;
    args[0] = set;
    args[1] = &last.until;
    args[2] = &until;
    args[3] = &rec->seq;
    args[4] = &rec->seq;
    return exec(n, N_INSERT, args, NULL);
}

/* The document's head: urlset, rel="up" (none when up is NULL), rs:md
 * with from and until. */
static int head(rs_xml_t *w, const char *up, const char *capability, apr_time_t from,
                apr_time_t until)
{
    char f[RS_TIME_BUFSIZE], u[RS_TIME_BUFSIZE];

    return rs_xml_head(w, "urlset", up, NULL, capability, "from", rs_time_format(f, from), "until",
                       rs_time_format(u, until));
}

/* The payload of change notification x, from the journal: the same
 * entry bytes as the Change List's (rs_entry_render). */
static apr_status_t render_change(rs_notify_t *n, apr_pool_t *p, const rs_notify_opts_t *o,
                                  const rs_notification_t *x, rs_xml_membuf_t *mb)
{
    rs_xml_t *w = rs_xml_open(p, rs_xml_membuf_sink, mb);
    rs_entry_renderer_t *rr = rs_entry_renderer_create(p, &o->entry);
    apr_int64_t next = x->first_seq;
    apr_pool_t *pp;
    apr_status_t rv = APR_SUCCESS;
    int i;

    if (!w || !rr || head(w, o->capability_url, "change-notification", x->from, x->until) < 0) {
        return APR_EGENERAL;
    }
    apr_pool_create(&pp, p);
    while (rv == APR_SUCCESS && next <= x->last_seq) {
        apr_array_header_t *recs;
        apr_pool_clear(pp);
        rv = rs_journal_records(n->j, pp, o->set, next, x->last_seq, PAGE, &recs);
        for (i = 0; rv == APR_SUCCESS && i < recs->nelts; i++) {
            const rs_record_t *r = &APR_ARRAY_IDX(recs, i, rs_record_t);
            apr_size_t len;
            const char *xml = rs_entry_render(rr, r, &len);
            if (!xml || rs_xml_raw(w, xml, len) < 0) {
                rv = APR_EGENERAL;
            }
            next = r->seq + 1;
        }
        if (rv == APR_SUCCESS && recs->nelts < PAGE) {
            break;
        }
    }
    apr_pool_destroy(pp);
    if (rv == APR_SUCCESS && rs_xml_end(w) < 0) {
        rv = APR_EGENERAL;
    }
    return rv;
}

static int is_due(const rs_notification_t *x, int last, int max, apr_time_t quiet_before)
{
    return !last || x->count >= max || x->until - 1 < quiet_before;
}

/* Seal the due ones of `open` (in id order) in the current transaction. */
static apr_status_t seal_due(rs_notify_t *n, apr_pool_t *p, const rs_notify_opts_t *o,
                             apr_array_header_t *open, apr_time_t quiet_before, int *count)
{
    int i;
    for (i = 0; i < open->nelts; i++) {
        rs_notification_t *x = &APR_ARRAY_IDX(open, i, rs_notification_t);
        rs_xml_membuf_t mb = { p, NULL, 0, 0 };
        const void *args[2];
        apr_status_t rv;

        if (!is_due(x, i == open->nelts - 1, o->max_entries, quiet_before)) {
            break;
        }
        if ((rv = render_change(n, p, o, x, &mb)) != APR_SUCCESS) {
            return rv;
        }
        args[0] = apr_pstrmemdup(p, mb.buf ? mb.buf : "", mb.len);
        args[1] = &x->id;
        if ((rv = exec(n, N_SEAL, args, NULL)) != APR_SUCCESS) {
            return rv;
        }
        (*count)++;
    }
    return APR_SUCCESS;
}

apr_status_t rs_notify_seal(rs_notify_t *n, apr_pool_t *p, const rs_notify_opts_t *o,
                            apr_time_t quiet_before, int *sealed, apr_time_t *due)
{
    apr_array_header_t *open = apr_array_make(p, 4, sizeof(rs_notification_t));
    const void *args[] = { o->set };
    apr_pool_t *sp;
    apr_status_t rv;
    int count = 0;

    if ((rv = rs_db_begin_set(n->db, o->set)) != APR_SUCCESS) {
        return rv;
    }
    apr_pool_create(&sp, p);
    rv = query(n, p, N_OPEN, args, get_all, open);
    if (rv == APR_SUCCESS) {
        rv = seal_due(n, sp, o, open, quiet_before, &count);
    }
    apr_pool_destroy(sp);
    rv = rv == APR_SUCCESS ? rs_db_commit(n->db) : (rs_db_rollback(n->db), rv);
    if (sealed) {
        *sealed = rv == APR_SUCCESS ? count : 0;
    }
    if (due) {
        *due = 0;
        if (rv == APR_SUCCESS && count < open->nelts) {
            *due = APR_ARRAY_IDX(open, open->nelts - 1, rs_notification_t).until - 1;
        }
    }
    return rv;
}

apr_status_t rs_notify_has_open(rs_notify_t *n, const char *set, int *open)
{
    apr_int64_t c = 0;
    const void *args[] = { set };
    apr_status_t rv = query(n, n->pool, N_HAS_OPEN, args, get_count, &c);
    *open = c > 0;
    return rv;
}

/* ------------------------------------------------------- framework topic */

static int fw_entry(rs_xml_t *w, const rs_notify_fw_entry_t *e)
{
    char dt[RS_TIME_BUFSIZE];
    rs_xml_attr_t md[3];

    md[0].name = "change";
    md[0].value = e->change;
    md[1].name = "capability";
    md[1].value = e->capability;
    md[2].name = "datetime";
    md[2].value = e->datetime ? rs_time_format(dt, e->datetime) : NULL;
    if (rs_xml_entry_begin(w, e->loc, NULL) < 0 || rs_xml_md(w, md, 3) < 0
        || (e->index && rs_xml_ln(w, "index", e->index, NULL, 0) < 0)) {
        return -1;
    }
    return rs_xml_entry_end(w);
}

/* The rel="up" of a framework notification of entries (Framework
 * Notification 1.0.1, section 3): the Capability List when it is about
 * capability documents (Resource List, Change List, dumps), the Source
 * Description when it is about the Capability List, none when it is
 * about the Source Description alone (the top of the framework), nor
 * when capability documents and the Capability List are announced
 * together: no one target is right for both, and the optional link is
 * left out rather than wrong for some entries. */
static const char *fw_up(const rs_notify_opts_t *o, const apr_array_header_t *entries)
{
    int docs = 0, cl = 0, i;

    for (i = 0; i < entries->nelts; i++) {
        const char *c = APR_ARRAY_IDX(entries, i, rs_notify_fw_entry_t).capability;
        if (!strcmp(c, "capabilitylist")) {
            cl = 1;
        }
        else if (strcmp(c, "description")) {
            docs = 1;
        }
    }
    if (docs) {
        return cl ? NULL : o->capability_url;
    }
    return cl ? o->description_url : NULL;
}

static apr_status_t add_framework(rs_notify_t *n, apr_pool_t *p, const rs_notify_opts_t *o,
                                  const apr_array_header_t *entries, apr_time_t at,
                                  rs_notification_t *out)
{
    rs_notification_t prev, x;
    rs_xml_membuf_t mb = { p, NULL, 0, 0 };
    rs_xml_t *w = rs_xml_open(p, rs_xml_membuf_sink, &mb);
    apr_int64_t count = entries->nelts;
    apr_status_t rv;
    const void *args[6];
    int i;

    memset(&prev, 0, sizeof(prev));
    memset(&x, 0, sizeof(x));
    args[0] = o->set;
    args[1] = RS_NOTIFY_FRAMEWORK;
    if ((rv = query(n, p, N_NEWEST, args, get_one, &prev)) != APR_SUCCESS) {
        return rv;
    }
    x.from = prev.id ? prev.until : at;
    x.until = at > x.from ? at : x.from;
    if (!w || head(w, fw_up(o, entries), "framework-notification", x.from, x.until) < 0) {
        return APR_EGENERAL;
    }
    for (i = 0; i < entries->nelts; i++) {
        if (fw_entry(w, &APR_ARRAY_IDX(entries, i, rs_notify_fw_entry_t)) < 0) {
            return APR_EGENERAL;
        }
    }
    if (rs_xml_end(w) < 0) {
        return APR_EGENERAL;
    }
    args[2] = &x.from;
    args[3] = &x.until;
    args[4] = &count;
    args[5] = apr_pstrmemdup(p, mb.buf ? mb.buf : "", mb.len);
    if ((rv = exec(n, N_ADD_SEALED, args, NULL)) == APR_SUCCESS && out) {
        rv = rs_notify_latest(n, p, o->set, RS_NOTIFY_FRAMEWORK, out);
    }
    return rv;
}

apr_status_t rs_notify_add_framework(rs_notify_t *n, apr_pool_t *p, const rs_notify_opts_t *o,
                                     const apr_array_header_t *entries, apr_time_t at,
                                     rs_notification_t *out)
{
    apr_status_t rv;

    if (rs_db_txn_serial(n->db)) { /* the caller's, fenced by it */
        return add_framework(n, p, o, entries, at, out);
    }
    /* The previous one's until read, and the new one added, in one
     * transaction that begins with the set's fence. */
    if ((rv = rs_db_begin_set(n->db, o->set)) != APR_SUCCESS) {
        return rv;
    }
    return rs_db_end(n->db, add_framework(n, p, o, entries, at, out));
}

/* ------------------------------------------------------------- delivery */

apr_status_t rs_notify_after(rs_notify_t *n, apr_pool_t *p, const char *set, const char *topic,
                             apr_int64_t after, int limit, apr_array_header_t **out)
{
    const void *args[] = { set, topic, &after, &limit };
    apr_status_t rv;
    int i;

    *out = apr_array_make(p, limit > 0 && limit < 64 ? limit : 64, sizeof(rs_notification_t));
    rv = query(n, p, N_AFTER, args, get_all, *out);
    for (i = 0; i < (*out)->nelts; i++) {
        APR_ARRAY_IDX(*out, i, rs_notification_t).topic = topic;
    }
    return rv;
}

apr_status_t rs_notify_latest(rs_notify_t *n, apr_pool_t *p, const char *set, const char *topic,
                              rs_notification_t *out)
{
    const void *args[] = { set, topic };
    apr_status_t rv;

    memset(out, 0, sizeof(*out));
    rv = query(n, p, N_LATEST, args, get_one, out);
    out->topic = topic;
    return rv;
}

apr_status_t rs_notify_prune(rs_notify_t *n, const char *set, const char *topic, apr_time_t cutoff,
                             int *deleted)
{
    const void *args[] = { set, topic, &cutoff, set, topic, set, topic };
    int nrows = 0;
    apr_status_t rv = rs_db_begin_set(n->db, set);

    if (rv == APR_SUCCESS) {
        rv = rs_db_end(n->db, exec(n, N_PRUNE, args, &nrows));
    }
    if (deleted) {
        *deleted = rv == APR_SUCCESS ? nrows : 0;
    }
    return rv;
}

apr_status_t rs_notify_reset(rs_notify_t *n)
{
    apr_status_t rv;

    if ((rv = rs_db_begin(n->db)) != APR_SUCCESS) {
        return rv;
    }
    if ((rv = exec(n, N_RESET, NULL, NULL)) == APR_SUCCESS) {
        rv = exec(n, N_RESET_CURSORS, NULL, NULL);
    }
    return rv == APR_SUCCESS ? rs_db_commit(n->db) : (rs_db_rollback(n->db), rv);
}

apr_status_t rs_notify_window(rs_notify_t *n, apr_pool_t *p, const rs_notify_opts_t *o,
                              apr_int64_t since, rs_notification_t *out)
{
    apr_array_header_t *all = apr_array_make(p, 8, sizeof(rs_notification_t));
    const void *args[] = { o->set, &since, &o->max_entries };
    rs_xml_membuf_t mb = { p, NULL, 0, 0 };
    rs_notification_t x;
    apr_status_t rv;
    int i;

    memset(out, 0, sizeof(*out));
    if ((rv = query(n, p, N_WINDOW, args, get_all, all)) != APR_SUCCESS || !all->nelts) {
        return rv;
    }
    /* Newest first: take older ones while they fit and are contiguous. */
    x = APR_ARRAY_IDX(all, 0, rs_notification_t);
    for (i = 1; i < all->nelts; i++) {
        const rs_notification_t *y = &APR_ARRAY_IDX(all, i, rs_notification_t);
        if (y->until != x.from || x.count + y->count > o->max_entries) {
            break;
        }
        x.from = y->from;
        x.first_seq = y->first_seq;
        x.count += y->count;
    }
    if ((rv = render_change(n, p, o, &x, &mb)) == APR_SUCCESS) {
        *out = x;
        out->topic = RS_NOTIFY_CHANGE;
        out->payload = mb.buf ? mb.buf : "";
        out->payload_len = mb.len;
    }
    return rv;
}
