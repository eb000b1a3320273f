/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubintake.c - the built-in hub's intake: arrival, scheduling, sweeps
 * and the status file (see rs_hubintake.h for the lifecycle). */
#include <stdlib.h>
#include <string.h>
#include <apr_file_info.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "rs_file.h"
#include "rs_hubaddr.h"
#include "rs_hubintake.h"
#include "rs_hubqueue.h"
#include "rs_hubverify.h"
#include "rs_statedir.h"

#define PER_HOST        2                     /* verifications at once for one callback host */
#define PER_CLIENT      8                     /* ... for one client */
#define TMP_AGE         apr_time_from_sec(60) /* "tmp-*" older: abandoned */
#define INTAKE_MAX_FREE (1024 * 1024)         /* bytes of freed memory the thread keeps */
#define QUEUE_TAKE      256                   /* queued rows of a set looked at per sweep */

rs_hubintake_t *rs_hubintake_create(const char *state_dir, rs_hubgate_t *gate,
                                    const rs_hubintake_hooks_t *hooks, const rs_logger_t *log)
{
    apr_allocator_t *alloc;
    apr_pool_t *pool;
    rs_hubintake_t *hi;

    apr_allocator_create(&alloc);
    apr_pool_create_ex(&pool, NULL, NULL, alloc);
    apr_allocator_owner_set(alloc, pool);
    apr_allocator_max_free_set(alloc, INTAKE_MAX_FREE);
    hi = apr_pcalloc(pool, sizeof(*hi));
    hi->pool = pool;
    hi->gate = gate;
    hi->hooks = *hooks;
    hi->log = *log;
    hi->state_dir = apr_pstrdup(pool, state_dir);
    hi->known = apr_hash_make(pool);
    hi->stuck = apr_hash_make(pool);
    hi->unstored = apr_array_make(pool, 4, sizeof(rs_hubintake_req_t *));
    hi->spool = rs_statedir_hubspool(pool, state_dir);
    hi->status_path = rs_statedir_hubintake(pool, state_dir);
    apr_pool_create(&hi->qpool, pool);
    apr_pool_create(&hi->spool_lines, pool);
    return hi;
}

/* The request req (a spool file's, or the store queue's row qid) waits
 * in the scheduler under name, by its client and its callback's host.
 * 0 when its callback cannot be called (nothing may come of it). */
static int schedule(rs_hubintake_t *hi, apr_pool_t *p, const char *name, apr_size_t size,
                    apr_int64_t qid, const rs_hubreq_t *req)
{
    apr_size_t n = strlen(name);
    const char *host = NULL, *client;
    rs_hubpending_t *pend;
    apr_port_t port;

    if (rs_hubreq_callback_syntax(p, req->callback, &host, &port)) {
        return 0;
    }
    client = rs_hubaddr_key_text(p, req->client);
    pend = malloc(sizeof(*pend) + n);
    if (!pend) {
        return 1; /* found again at the next listing, or sweep */
    }
    memcpy(pend->name, name, n + 1);
    pend->size = size;
    pend->qid = qid;
    pend->entry = rs_hubsched_add(hi->sched, client ? client : "(unknown)",
                                  rs_hubaddr_host_key(p, host), pend);
    apr_hash_set(hi->known, pend->name, APR_HASH_KEY_STRING, pend);
    return 1;
}

/* A request that arrived: read for its keys and queued, or removed when
 * nothing may come of it. */
static void arrive(rs_hubintake_t *hi, apr_pool_t *p, const char *name)
{
    const char *path = apr_pstrcat(p, hi->spool, "/", name, NULL), *why;
    apr_size_t size = 0;
    void *server = NULL;
    rs_hubreq_t req;
    apr_status_t rv;

    if (apr_hash_get(hi->known, name, APR_HASH_KEY_STRING)
        || apr_hash_get(hi->stuck, name, APR_HASH_KEY_STRING)) {
        return; /* reported twice */
    }
    rv = rs_hubreq_spool_read(p, path, &req, &why, &size);
    if (rv != APR_SUCCESS && !why) {
        if (!APR_STATUS_IS_ENOENT(rv)) {
            rs_log_emit(&hi->log, RS_LOG_ERR, rv, "hub: cannot read the spool file '%s'", path);
        }
        return;
    }
    if (why) {
        rs_log_emit(&hi->log, RS_LOG_WARN, APR_SUCCESS,
                    "hub: removed the malformed spool "
                    "file '%s': %s",
                    path, why);
    }
    else if (req.deny || !(server = hi->hooks.server_of(hi->hooks.baton, req.set))) {
        /* Nothing goes out: an unknown topic of an older child, or a set
         * no longer configured. */
        rs_log_emit(&hi->log, RS_LOG_INFO, APR_SUCCESS,
                    "hub: %s %s of '%s' for '%s': "
                    "dropped (%s)",
                    rs_hubreq_mode_name(req.mode), name, req.callback, req.topic,
                    req.deny ? "not a topic of this hub"
                             : "its set is not "
                               "configured any more");
    }
    if (!server || !schedule(hi, p, name, size, 0, &req)) {
        rs_hubstate_drop_file(hi, p, name, size);
    }
}

void rs_hubintake_drain(rs_hubintake_t *hi)
{
    apr_pool_t *p = hi->iter;
    apr_array_header_t *names = apr_array_make(p, 16, sizeof(const char *));
    rs_hubspool_census_t census;
    rs_hubsched_entry_t *e;
    apr_status_t rv;
    int i;

    if ((rv = rs_hubspool_take(hi->follow, p, names, &census)) != APR_SUCCESS) {
        rs_log_emit(&hi->log, RS_LOG_ERR, rv, "hub: cannot list the spool '%s'", hi->spool);
    }
    if (census.listed) {
        /* What the spool holds, reserved or not: the segment is new in
         * every generation, and a process killed between its two steps
         * leaves a count behind. */
        rs_hubgate_set(hi->gate, census.files,
                       census.bytes > 0xffffffffu ? 0xffffffffu : (apr_uint32_t)census.bytes);
    }
    for (i = 0; i < names->nelts; i++) {
        arrive(hi, p, APR_ARRAY_IDX(names, i, const char *));
    }
    while ((e = rs_hubsched_next(hi->sched))) {
        rs_hubverify_start(hi, rs_hubsched_item(e));
    }
    apr_pool_clear(p);
}

/* Writes in progress left by children killed mid-write: removed, their
 * reservations given back. */
static void sweep_tmp(rs_hubintake_t *hi, apr_time_t now)
{
    apr_uint32_t files;
    apr_uint64_t bytes;

    rs_hubspool_sweep(hi->follow, now, TMP_AGE, &files, &bytes);
    if (files) {
        rs_hubgate_release(hi->gate, files,
                           bytes > 0xffffffffu ? 0xffffffffu : (apr_uint32_t)bytes);
    }
}

/* Subscriptions whose lease ended: deleted. */
static void expire(rs_hubintake_t *hi, apr_pool_t *p, apr_time_t now)
{
    apr_array_header_t *gone;
    rs_db_t *db = rs_hubstate_store(hi);
    apr_status_t rv;
    int i;

    if (!db) {
        return;
    }
    if ((rv = rs_hubsub_expire(db, p, now, &gone)) != APR_SUCCESS) {
        rs_log_emit(&hi->log, RS_LOG_ERR, rv, "hub: cannot remove expired subscriptions");
        rs_hubstate_store_failed(hi, rv);
        return;
    }
    for (i = 0; i < gone->nelts; i++) {
        const rs_hubsub_t *x = &APR_ARRAY_IDX(gone, i, rs_hubsub_t);
        rs_log_emit(&hi->log, RS_LOG_INFO, APR_SUCCESS,
                    "hub: the lease of '%s' on set %s, "
                    "topic %s ended; subscription removed",
                    x->url, x->set, x->topic);
        hi->changed = 1;
    }
}

/* The rows of set queued for this node, which writes it: into the
 * scheduler like spool files (those already there skipped), in id order.
 * A malformed row is deleted (fenced). */
static void take_set(rs_hubintake_t *hi, rs_db_t *db, apr_pool_t *p, const char *set)
{
    apr_array_header_t *rows;
    apr_status_t rv;
    int i;

    if ((rv = rs_hubqueue_list(db, p, set, QUEUE_TAKE, &rows)) != APR_SUCCESS) {
        rs_log_emit(&hi->log, RS_LOG_ERR, rv, "hub: cannot read the queued requests of set %s",
                    set);
        rs_hubstate_store_failed(hi, rv);
        return;
    }
    for (i = 0; i < rows->nelts; i++) {
        const rs_hubqueue_row_t *x = &APR_ARRAY_IDX(rows, i, rs_hubqueue_row_t);
        const char *name = rs_hubstate_queued_name(p, x->id), *why;
        rs_hubreq_t req;

        if (apr_hash_get(hi->known, name, APR_HASH_KEY_STRING)) {
            continue; /* waiting or started */
        }
        why = rs_hubreq_record_parse(p, x->record, strlen(x->record), &req);
        if (why || strcmp(req.set, set) || !schedule(hi, p, name, 0, x->id, &req)) {
            rs_log_emit(&hi->log, RS_LOG_WARN, 0,
                        "hub: removed the malformed queued request %s (from node %s): %s", name,
                        x->node, why ? why : "its callback or set is not valid");
            rs_hubqueue_delete(db, set, x->id, NULL);
        }
    }
}

/* The status lines of the queue (queued: set, count). */
static const char *queue_lines(apr_pool_t *p, const apr_array_header_t *sets,
                               const apr_array_header_t *counts)
{
    const char *out = "";
    apr_int64_t total = 0;
    int i;

    for (i = 0; i < sets->nelts; i++) {
        apr_int64_t n = APR_ARRAY_IDX(counts, i, apr_int64_t);
        out = apr_psprintf(p, "%shub-queued: %s %" APR_INT64_T_FMT "\n", out,
                           APR_ARRAY_IDX(sets, i, const char *), n);
        total += n;
    }
    return apr_psprintf(p, "%shub-queued-total: %" APR_INT64_T_FMT "\n", out, total);
}

/* A shared store's queue (rs_hubqueue), at each sweep: the rows of the
 * sets this node writes taken; those of sets not configured here (nor,
 * since every node must declare the same sets, anywhere) deleted once
 * they are RS_HUBINTAKE_QUEUE_DROP old; the status lines renewed. */
static void take_queue(rs_hubintake_t *hi, apr_pool_t *p, apr_time_t now)
{
    const rs_hubintake_hooks_t *h = &hi->hooks;
    apr_array_header_t *sets, *counts;
    rs_db_t *db = rs_hubstate_store(hi);
    const char *lines;
    apr_status_t rv;
    int i, n;

    if (!db || rs_db_one_node(db)) {
        return;
    }
    if ((rv = rs_hubqueue_counts(db, p, &sets, &counts)) != APR_SUCCESS) {
        rs_log_emit(&hi->log, RS_LOG_ERR, rv, "hub: cannot read the queued requests");
        rs_hubstate_store_failed(hi, rv);
        return;
    }
    lines = queue_lines(p, sets, counts);
    if (!hi->queued || strcmp(lines, hi->queued)) {
        apr_pool_clear(hi->qpool);
        hi->queued = apr_pstrdup(hi->qpool, lines);
        hi->changed = 1;
    }
    for (i = 0; i < sets->nelts && hi->db; i++) {
        const char *set = APR_ARRAY_IDX(sets, i, const char *);
        if (!h->server_of(h->baton, set)) {
            n = 0;
            if (rs_hubqueue_forget(db, set, now - RS_HUBINTAKE_QUEUE_DROP, &n) == APR_SUCCESS
                && n > 0) {
                rs_log_emit(&hi->log, RS_LOG_INFO, 0,
                            "hub: dropped %d queued request(s) of set %s, which is not "
                            "configured",
                            n, set);
            }
        }
        else if (rs_hubstate_writes(hi, set) == 1) {
            take_set(hi, db, p, set);
        }
    }
}

/* What write_status writes. */
typedef struct status_t {
    const char *subs;
    const char *last;
    const char *queued; /* a shared store's queue, NULL */
} status_t;

/* Writes the status file's lines (rs_file_replace). */
static apr_status_t write_status(void *baton, apr_file_t *f, apr_pool_t *p)
{
    const status_t *st = baton;

    apr_file_puts(st->subs, f);
    apr_file_printf(f, "hub-last-intake: %s\n", st->last[0] ? st->last : "-");
    if (st->queued) {
        apr_file_puts(st->queued, f);
    }
    (void)p;
    return APR_SUCCESS;
}

/* The subscriptions' status lines: one per topic with subscribers, and
 * the total. */
static const char *subs_lines(apr_pool_t *p, const apr_array_header_t *counts)
{
    const char *out = "";
    apr_int64_t total = 0;
    int i;

    for (i = 0; i < counts->nelts; i++) {
        const rs_hubsub_count_t *x = &APR_ARRAY_IDX(counts, i, rs_hubsub_count_t);
        out = apr_psprintf(p, "%shub-subscriptions: %s %s %" APR_INT64_T_FMT "\n", out, x->set,
                           x->topic, x->n);
        total += x->n;
    }
    return apr_psprintf(p, "%shub-subscriptions-total: %" APR_INT64_T_FMT "\n", out, total);
}

/* The status file, rewritten when an outcome or the queue changed, or
 * the subscriptions' counts: they are counted at every sweep, since rows
 * also leave elsewhere (the delivery ends an expired or backlogged
 * subscription; another node's writer). */
static void status(rs_hubintake_t *hi, apr_pool_t *p)
{
    apr_array_header_t *counts;
    status_t st;
    rs_db_t *db = rs_hubstate_store(hi);
    const char *lines;
    apr_status_t rv;

    if (!db || rs_hubsub_counts(db, p, &counts) != APR_SUCCESS) {
        return;
    }
    lines = subs_lines(p, counts);
    if (!hi->subs || strcmp(lines, hi->subs)) {
        apr_pool_clear(hi->spool_lines);
        hi->subs = apr_pstrdup(hi->spool_lines, lines);
        hi->changed = 1;
    }
    if (!hi->changed) {
        return;
    }
    st.subs = hi->subs;
    st.last = hi->last;
    st.queued = hi->queued;
    if ((rv = rs_file_replace(p, hi->status_path, write_status, &st)) != APR_SUCCESS) {
        rs_log_emit(&hi->log, RS_LOG_ERR, rv, "hub: cannot write '%s'", hi->status_path);
        return;
    }
    hi->changed = 0;
}

void rs_hubintake_sweep(rs_hubintake_t *hi, apr_time_t now)
{
    expire(hi, hi->iter, now);
    take_queue(hi, hi->iter, now);
    if (hi->unstored->nelts) {
        rs_hubverify_retry(hi);
    }
    sweep_tmp(hi, now);
    status(hi, hi->iter);
    apr_pool_clear(hi->iter);
}

apr_status_t rs_hubintake_open(rs_hubintake_t *hi, apr_interval_time_t timeout)
{
    rs_websub_opts_t o = { 0 };
    rs_hubsched_limits_t lim;
    apr_status_t rv;

    o.max_parallel = RS_HUBINTAKE_MAX_RUNNING;
    o.timeout_ms = (long)apr_time_as_msec(timeout);
    o.connect_timeout_ms = o.timeout_ms;
    if ((rv = rs_websub_create(&hi->ws, hi->pool, &o, rs_hubverify_done, hi, &hi->log))
        != APR_SUCCESS) {
        return rv; /* logged; requests stay spooled */
    }
    if ((rv = rs_hubspool_open(&hi->follow, hi->pool, hi->spool, RS_HUBREQ_DIR_PERMS))
        != APR_SUCCESS) {
        rs_log_emit(&hi->log, RS_LOG_ERR, rv,
                    "hub: cannot follow the spool '%s'; "
                    "subscription requests stay there until the watcher restarts",
                    hi->spool);
        return rv;
    }
    rs_websub_poll_fd(hi->ws, rs_hubspool_fd(hi->follow));
    lim.total = RS_HUBINTAKE_MAX_RUNNING;
    lim.per_host = PER_HOST;
    lim.per_client = PER_CLIENT;
    hi->sched = rs_hubsched_create(hi->pool, &lim);
    apr_pool_create(&hi->iter, hi->pool);
    rs_hubstate_store(hi); /* early: before the driver is busy */
    /* The status file's directory, as the children make the spool's. */
    apr_dir_make_recursive(rs_statedir_hub(hi->iter, hi->state_dir),
                           APR_FPROT_UREAD | APR_FPROT_UWRITE | APR_FPROT_UEXECUTE, hi->iter);
    hi->changed = 1;
    return APR_SUCCESS;
}

void rs_hubintake_destroy(rs_hubintake_t *hi)
{
    apr_hash_index_t *x;

    if (hi->ws) {
        rs_websub_destroy(hi->ws);
    }
    /* The pending entries are malloc'd (arrive); their keys live in them,
     * and apr_hash_next reads none. */
    for (x = apr_hash_first(NULL, hi->known); x; x = apr_hash_next(x)) {
        free(apr_hash_this_val(x));
    }
    if (hi->db) {
        apr_pool_destroy(hi->db_pool); /* the store_open hook's */
        hi->db = NULL;
    }
    apr_pool_destroy(hi->pool);
}

int rs_hubintake_wait(rs_hubintake_t *hi, int wait_ms)
{
    return rs_websub_run(hi->ws, wait_ms);
}
