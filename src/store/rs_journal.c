/* SPDX-License-Identifier: Apache-2.0 */
/* rs_journal.c - see rs_journal.h */
#include <stdlib.h>
#include <string.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "rs_journal.h"
#include "rs_journal_sql.h"
#include "rs_journal_priv.h"

static apr_status_t exec(rs_journal_t *j, int which, const void **args)
{
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(j->db, rs_journal_sql[which], &s);
    return rv == APR_SUCCESS ? rs_db_exec(j->db, s, args, NULL) : rv;
}

static apr_status_t query(rs_journal_t *j, apr_pool_t *p, int which, const void **args,
                          rs_db_row_fn *fn, void *baton)
{
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(j->db, rs_journal_sql[which], &s);
    return rv == APR_SUCCESS ? rs_db_query(j->db, p, s, args, fn, baton) : rv;
}

static apr_int64_t num(const char *v)
{
    return v ? apr_atoi64(v) : 0;
}

static const char *str(apr_pool_t *p, const char *v)
{
    return (v && *v) ? apr_pstrdup(p, v) : NULL;
}

/* The integers of a row, as many as it has (NULL: 0; at most 4). */
static void get_ints(void *baton, apr_pool_t *p, const char *const *cols, int n)
{
    apr_int64_t *v = baton;
    int i;
    (void)p;
    for (i = 0; i < n && i < 4; i++) {
        v[i] = num(cols[i]);
    }
}

/* The last sequence from the journal's highest (v[0]) and the floor kept
 * at expiry (v[1]; retention may have removed the newest records too:
 * sequence numbers go on from the high-water mark), valid in the current
 * transaction. */
static void keep_seq(rs_journal_t *j, const apr_int64_t *v)
{
    j->seq = v[1] > v[0] ? v[1] : v[0];
    j->seq_serial = rs_db_txn_serial(j->db);
}

/* The last sequence, read from the store (one statement). */
static apr_status_t load_seq(rs_journal_t *j)
{
    const void *args[] = { SEQ_FLOOR };
    apr_int64_t v[2] = { 0, 0 };
    apr_status_t rv = query(j, NULL, J_MAXSEQ, args, get_ints, v);
    if (rv == APR_SUCCESS) {
        keep_seq(j, v);
    }
    return rv;
}

/* j->seq, read again unless it is known in the current transaction. */
static apr_status_t fresh_seq(rs_journal_t *j)
{
    apr_uint64_t serial = rs_db_txn_serial(j->db);
    return (serial && serial == j->seq_serial) ? APR_SUCCESS : load_seq(j);
}

apr_status_t rs_journal_open(rs_journal_t **out, rs_db_t *db, apr_pool_t *p)
{
    rs_journal_t *j = apr_pcalloc(p, sizeof(*j));

    j->db = db;
    j->pool = p;
    j->last_dt = apr_hash_make(p);
    *out = j;
    return load_seq(j);
}

const char *rs_journal_change_name(int change)
{
    switch (change) {
    case RS_CHANGE_CREATED:
        return "created";
    case RS_CHANGE_UPDATED:
        return "updated";
    case RS_CHANGE_DELETED:
        return "deleted";
    default:
        return NULL;
    }
}

/* The set's entry of j->last_dt (made at first use, for the journal's
 * lifetime). */
static last_dt_t *set_entry(rs_journal_t *j, const char *set)
{
    last_dt_t *l = apr_hash_get(j->last_dt, set, APR_HASH_KEY_STRING);
    if (!l) {
        l = apr_pcalloc(j->pool, sizeof(*l));
        apr_hash_set(j->last_dt, apr_pstrdup(j->pool, set), APR_HASH_KEY_STRING, l);
    }
    return l;
}

/* The set's last datetime: its newest record's, the until of its last
 * closed list, or its mark, whichever is latest; read again unless it is
 * known in the current transaction.  The same statement reads the last
 * sequence (keep_seq): a transaction's first record costs one read. */
static apr_status_t last_dt(rs_journal_t *j, const char *set, apr_time_t **out)
{
    last_dt_t *l = set_entry(j, set);
    apr_uint64_t serial = rs_db_txn_serial(j->db);
    apr_int64_t v[4] = { 0, 0, 0, 0 }; /* datetime, mark, sequence, floor */
    apr_status_t rv;
    apr_pool_t *p;

    if (serial && serial == l->serial) {
        *out = &l->t;
        return APR_SUCCESS;
    }
    apr_pool_create(&p, j->pool);
    /* Sequences are shared by every set, which nodes of a shared store
     * write at once: the journal's lock, held to the commit. */
    if ((rv = rs_db_xact_lock(j->db, "journal")) == APR_SUCCESS) {
        const void *args[] = { apr_pstrcat(p, MARK, set, NULL), SEQ_FLOOR, set, set };
        rv = query(j, NULL, J_LASTDT, args, get_ints, v);
    }
    apr_pool_destroy(p);
    if (rv == APR_SUCCESS) {
        l->t = v[1] > v[0] ? v[1] : v[0];
        l->serial = serial;
        keep_seq(j, v + 2);
    }
    else {
        l->serial = 0;
    }
    *out = &l->t;
    return rv;
}

apr_status_t rs_journal_append(rs_journal_t *j, const char *set, rs_record_t *rec)
{
    apr_time_t *last, now = apr_time_now();
    apr_status_t rv;
    const void *args[15];

    /* last_dt first: when it reads, it reads the sequence too. */
    if ((rv = last_dt(j, set, &last)) != APR_SUCCESS || (rv = fresh_seq(j)) != APR_SUCCESS) {
        return rv;
    }
    rec->datetime = now > *last ? now : *last + 1;
    rec->seq = j->seq + 1;
    args[0] = &rec->seq;
    args[1] = rec->dir;
    args[2] = rec->name;
    args[3] = &rec->change;
    args[4] = &rec->datetime;
    args[5] = &rec->lastmod_ns;
    args[6] = &rec->size;
    args[7] = rec->type;
    args[8] = rec->hash[0];
    args[9] = rec->hash[1];
    args[10] = rec->hash[2];
    args[11] = rec->hash[3];
    args[12] = rec->encoding;
    /* A deleted resource has no links (its entry carries none). */
    args[13] = rec->change == RS_CHANGE_DELETED || (rec->links && !*rec->links) ? NULL : rec->links;
    args[14] = set;
    rv = exec(j, J_APPEND, args);
    if (rv == APR_SUCCESS) {
        j->seq = rec->seq;
        *last = rec->datetime;
        rv = rs_db_notify(j->db, RS_JOURNAL_CHANNEL, set);
    }
    return rv;
}

apr_status_t rs_journal_mark(rs_journal_t *j, const char *set, apr_time_t *at)
{
    apr_time_t *last, now = apr_time_now(), t;
    apr_pool_t *p;
    apr_status_t rv;

    if ((rv = last_dt(j, set, &last)) != APR_SUCCESS) {
        return rv;
    }
    t = now > *last ? now : *last + 1;
    apr_pool_create(&p, j->pool);
    /* Later records get at least last + 1 = t. */
    rv = rs_db_meta_put(j->db, apr_pstrcat(p, MARK, set, NULL),
                        apr_psprintf(p, "%" APR_INT64_T_FMT, (apr_int64_t)(t - 1)));
    apr_pool_destroy(p);
    if (rv == APR_SUCCESS) {
        *last = t - 1;
        *at = t;
    }
    return rv;
}

/* started and the id the open list has when no closed list remains. */
static apr_status_t set_row(rs_journal_t *j, apr_pool_t *p, const char *set, apr_int64_t v[2])
{
    const void *args[] = { set };
    v[0] = 0;
    v[1] = 1;
    return query(j, p, J_START_GET, args, get_ints, v);
}

apr_status_t rs_journal_start(rs_journal_t *j, const char *set, apr_time_t *start)
{
    apr_int64_t v[2];
    apr_status_t rv = set_row(j, NULL, set, v); /* get_ints allocates nothing */
    *start = v[0];
    return rv;
}

apr_status_t rs_journal_begin_set(rs_journal_t *j, const char *set, apr_time_t t)
{
    const void *args[] = { set, &t };
    return exec(j, J_START_PUT, args);
}

static void add_list(void *baton, apr_pool_t *p, const char *const *c, int n)
{
    rs_changelist_t *cl = apr_array_push(baton);
    (void)p;
    (void)n;
    cl->id = num(c[0]);
    cl->from = num(c[1]);
    cl->until = num(c[2]);
    cl->first_seq = num(c[3]);
    cl->last_seq = num(c[4]);
    cl->count = num(c[5]);
}

typedef struct {
    apr_int64_t count, max_seq, max_dt;
} stats_t;

static void get_stats(void *baton, apr_pool_t *p, const char *const *c, int n)
{
    stats_t *s = baton;
    (void)p;
    if (n >= 3) {
        s->count = num(c[0]);
        s->max_seq = num(c[1]);
        s->max_dt = num(c[2]);
    }
}

apr_status_t rs_journal_lists(rs_journal_t *j, apr_pool_t *p, const char *set,
                              apr_array_header_t **closed, rs_changelist_t *open)
{
    const void *args[] = { set };
    apr_status_t rv;
    stats_t s = { 0, 0, 0 };

    *closed = apr_array_make(p, 8, sizeof(rs_changelist_t));
    rv = query(j, p, J_LISTS, args, add_list, *closed);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    memset(open, 0, sizeof(*open));
    if ((*closed)->nelts) {
        const rs_changelist_t *last =
            &APR_ARRAY_IDX(*closed, (*closed)->nelts - 1, rs_changelist_t);
        open->id = last->id + 1;
        open->from = last->until;
        open->first_seq = last->last_seq + 1;
    }
    else {
        apr_int64_t v[2];
        if ((rv = set_row(j, p, set, v)) != APR_SUCCESS) {
            return rv;
        }
        open->id = v[1];
        open->from = v[0];
        open->first_seq = 1; /* older records went with their lists */
    }
    {
        const void *a2[] = { set, &open->first_seq };
        rv = query(j, p, J_OPEN_STATS, a2, get_stats, &s);
    }
    open->count = s.count;
    open->last_seq = s.count ? s.max_seq : open->first_seq - 1;
    return rv;
}

static void add_record(void *baton, apr_pool_t *p, const char *const *c, int n)
{
    rs_record_t *r = apr_array_push(baton);
    int i;
    (void)n;
    r->seq = num(c[0]);
    r->dir = apr_pstrdup(p, c[1] ? c[1] : "");
    r->name = apr_pstrdup(p, c[2] ? c[2] : "");
    r->change = (int)num(c[3]);
    r->datetime = num(c[4]);
    r->lastmod_ns = num(c[5]);
    r->size = num(c[6]);
    r->type = str(p, c[7]);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        r->hash[i] = str(p, c[8 + i]);
    }
    r->encoding = str(p, c[12]);
    r->links = str(p, c[13]);
}

apr_status_t rs_journal_records(rs_journal_t *j, apr_pool_t *p, const char *set, apr_int64_t first,
                                apr_int64_t last, int limit, apr_array_header_t **out)
{
    *out = apr_array_make(p, limit > 0 && limit < 4096 ? limit : 256, sizeof(rs_record_t));
    if (last < 0) {
        const void *args[] = { set, &first, &limit };
        return query(j, p, J_RECORDS_ALL, args, add_record, *out);
    }
    else {
        const void *args[] = { set, &first, &last, &limit };
        return query(j, p, J_RECORDS, args, add_record, *out);
    }
}

typedef struct {
    apr_array_header_t *recs, *sets;
} recent_t;

static void add_recent(void *baton, apr_pool_t *p, const char *const *c, int n)
{
    recent_t *r = baton;
    add_record(r->recs, p, c, n);
    *(const char **)apr_array_push(r->sets) = apr_pstrdup(p, c[14] ? c[14] : "");
}

apr_status_t rs_journal_recent(rs_journal_t *j, apr_pool_t *p, apr_int64_t after, int limit,
                               apr_array_header_t **out, apr_array_header_t **sets)
{
    const void *args[] = { &after, &limit };
    recent_t r;
    r.recs = *out = apr_array_make(p, limit > 0 && limit < 4096 ? limit : 256, sizeof(rs_record_t));
    r.sets = *sets = apr_array_make(p, r.recs->nalloc, sizeof(const char *));
    return query(j, p, J_RECENT, args, add_recent, &r);
}

static void add_version(void *baton, apr_pool_t *p, const char *const *c, int n)
{
    rs_journal_version_t *v = apr_array_push(baton);
    (void)n;
    v->seq = num(c[0]);
    v->sha256 = str(p, c[1]);
    v->deleted = num(c[2]);
}

apr_status_t rs_journal_versions(rs_journal_t *j, apr_pool_t *p, const char *set, apr_int64_t first,
                                 apr_int64_t last, int limit, apr_array_header_t **out)
{
    apr_int64_t upto = last < 0 ? APR_INT64_MAX : last;
    const void *args[] = { set, &first, &upto, &limit };
    *out = apr_array_make(p, limit > 0 && limit < 4096 ? limit : 256, sizeof(rs_journal_version_t));
    return query(j, p, J_VERSIONS, args, add_version, *out);
}

static void add_seq(void *baton, apr_pool_t *p, const char *const *c, int n)
{
    (void)p;
    (void)n;
    APR_ARRAY_PUSH((apr_array_header_t *)baton, apr_int64_t) = num(c[0]);
}

apr_status_t rs_journal_path_versions(rs_journal_t *j, apr_pool_t *p, const char *set,
                                      const char *dir, const char *name, apr_array_header_t **seqs)
{
    const void *args[] = { set, dir, name };
    *seqs = apr_array_make(p, 8, sizeof(apr_int64_t));
    return query(j, p, J_PATH_SEQS, args, add_seq, *seqs);
}

apr_status_t rs_journal_digest_use(rs_journal_t *j, apr_pool_t *p, const char *set,
                                   const char *sha256, int *kept, apr_time_t *deleted)
{
    const void *args[] = { set, sha256 };
    stats_t s = { 0, 0, 0 }; /* records, deleted later, latest deletion */
    apr_status_t rv = query(j, p, J_DIGEST, args, get_stats, &s);

    *kept = rv == APR_SUCCESS && s.count > s.max_seq;
    *deleted = rv == APR_SUCCESS ? s.max_dt : 0;
    return rv;
}

apr_status_t rs_journal_newest(rs_journal_t *j, apr_pool_t *p, const char *set, apr_int64_t *seq)
{
    const void *args[] = { set };
    *seq = 0;
    return query(j, p, J_NEWEST, args, get_ints, seq);
}

apr_status_t rs_journal_relink(rs_journal_t *j, const char *set, const char *dir, const char *name)
{
    const void *args[] = { set, dir, name, &j->seq };
    apr_status_t rv = fresh_seq(j);
    return rv == APR_SUCCESS ? exec(j, J_RELINK, args) : rv;
}

static void add_key(void *baton, apr_pool_t *p, const char *const *c, int n)
{
    rs_journal_path_t *k = apr_array_push(baton);
    k->dir = apr_pstrdup(p, c[0] ? c[0] : "");
    k->name = apr_pstrdup(p, c[1] ? c[1] : "");
}

apr_status_t rs_journal_relinked(rs_journal_t *j, apr_pool_t *p, const char *set, apr_int64_t from,
                                 int limit, apr_array_header_t **out)
{
    const void *args[] = { set, &from, &limit };
    *out = apr_array_make(p, 16, sizeof(rs_journal_path_t));
    return query(j, p, J_RELINKED, args, add_key, *out);
}

apr_status_t rs_journal_reset(rs_journal_t *j)
{
    static const char *const del[] = { "DELETE FROM journal", "DELETE FROM changelists",
                                       "DELETE FROM journal_sets", "DELETE FROM relinked", NULL };
    apr_status_t rv = rs_db_begin(j->db);
    int i;

    for (i = 0; rv == APR_SUCCESS && del[i]; i++) {
        rv = rs_db_run(j->db, del[i]);
    }
    if (rv != APR_SUCCESS) {
        rs_db_rollback(j->db);
        return rv;
    }
    if ((rv = rs_db_commit(j->db)) != APR_SUCCESS) {
        return rv;
    }
    apr_hash_clear(j->last_dt);
    return load_seq(j);
}

apr_int64_t rs_journal_last_seq(const rs_journal_t *j)
{
    return j->seq;
}

apr_status_t rs_journal_close(rs_journal_t *j, apr_pool_t *p, const char *set, apr_int64_t last_seq,
                              apr_int64_t count, apr_time_t until, rs_changelist_t *closed)
{
    apr_array_header_t *lists;
    rs_changelist_t open;
    apr_status_t rv = rs_journal_lists(j, p, set, &lists, &open);
    apr_time_t *last;
    const void *args[7];

    memset(closed, 0, sizeof(*closed));
    if (rv != APR_SUCCESS) {
        return rv;
    }
    if (last_seq < 0) {
        /* The whole open list, closed now (after its last record). */
        if ((rv = last_dt(j, set, &last)) != APR_SUCCESS) {
            return rv;
        }
        if (until <= *last) {
            until = *last + 1;
        }
    }
    else {
        open.last_seq = last_seq;
        open.count = count;
    }
    if (until <= open.from) {
        return APR_SUCCESS;
    }
    open.until = until;
    args[0] = set;
    args[1] = &open.id;
    args[2] = &open.from;
    args[3] = &open.until;
    args[4] = &open.first_seq;
    args[5] = &open.last_seq;
    args[6] = &open.count;
    rv = exec(j, J_CLOSE, args);
    if (rv == APR_SUCCESS && (rv = rs_db_notify(j->db, RS_JOURNAL_CHANNEL, set)) == APR_SUCCESS) {
        *closed = open;
        if (last_seq < 0) {
            /* The next list starts at until: no later record may be older. */
            *last = until;
        }
    }
    return rv;
}

apr_status_t rs_journal_expire(rs_journal_t *j, apr_pool_t *p, const char *set, apr_time_t cutoff,
                               apr_array_header_t **dropped)
{
    apr_array_header_t *lists;
    rs_changelist_t open;
    apr_int64_t upto = 0;
    apr_time_t until = 0;
    apr_int64_t next_id = 1;
    apr_status_t rv = rs_journal_lists(j, p, set, &lists, &open);
    int i;

    *dropped = apr_array_make(p, 4, sizeof(apr_int64_t));
    if (rv != APR_SUCCESS) {
        return rv;
    }
    for (i = 0; i < lists->nelts; i++) {
        const rs_changelist_t *cl = &APR_ARRAY_IDX(lists, i, rs_changelist_t);
        if (cl->until >= cutoff) {
            break;
        }
        APR_ARRAY_PUSH(*dropped, apr_int64_t) = cl->id;
        upto = cl->last_seq;
        until = cl->until;
        next_id = cl->id + 1;
    }
    if ((*dropped)->nelts) {
        const void *a1[] = { set, &cutoff };
        const void *a2[] = { set, &upto };
        const void *a3[] = { &until, &next_id, set };
        /* The journal now starts where the last dropped list ended, and
         * list ids go on from there. */
        /* The high-water mark is read before the records go. */
        if ((rv = fresh_seq(j)) == APR_SUCCESS && (rv = exec(j, J_EXPIRE_LISTS, a1)) == APR_SUCCESS
            && (rv = exec(j, J_EXPIRE_RECORDS, a2)) == APR_SUCCESS
            && (rv = exec(j, J_EXPIRE_RELINKED, a2)) == APR_SUCCESS) {
            rv = exec(j, J_START_MOVE, a3);
        }
        if (rv == APR_SUCCESS) {
            rv = rs_db_meta_put(j->db, SEQ_FLOOR, apr_psprintf(p, "%" APR_INT64_T_FMT, j->seq));
        }
        if (rv == APR_SUCCESS) {
            rv = rs_db_notify(j->db, RS_JOURNAL_CHANNEL, set);
        }
    }
    return rv;
}

static void add_set(void *baton, apr_pool_t *p, const char *const *c, int n)
{
    if (n > 0 && c[0]) {
        APR_ARRAY_PUSH((apr_array_header_t *)baton, const char *) = apr_pstrdup(p, c[0]);
    }
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

apr_status_t rs_journal_sets(rs_journal_t *j, apr_pool_t *p, apr_array_header_t **out)
{
    apr_status_t rv;
    *out = apr_array_make(p, 8, sizeof(const char *));
    rv = query(j, p, J_SETS, NULL, add_set, *out);
    qsort((*out)->elts, (size_t)(*out)->nelts, sizeof(const char *), by_name);
    return rv;
}

apr_status_t rs_journal_summary(rs_journal_t *j, const char *set, apr_int64_t *count,
                                apr_time_t *newest)
{
    stats_t s = { 0, 0, 0 };
    apr_int64_t from = 0;
    const void *args[] = { set, &from };
    /* The open list's statistics, from the first sequence on. */
    apr_status_t rv = query(j, NULL, J_OPEN_STATS, args, get_stats, &s);
    *count = s.count;
    *newest = s.count ? s.max_dt : 0;
    return rv;
}
