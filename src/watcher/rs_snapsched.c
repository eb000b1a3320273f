/* SPDX-License-Identifier: Apache-2.0 */
/* rs_snapsched.c - see rs_snapsched.h */
#include <string.h>
#include <apr_strings.h>
#include "rs_followsnap.h"
#include "rs_history.h"
#include "rs_log.h"
#include "rs_snapsched.h"

void rs_snapsched_changed(rs_snapsched_t *s, apr_time_t now)
{
    s->dirty = 1;
    s->last = now;
    if (!s->first) {
        s->first = now;
    }
}

apr_time_t rs_snapsched_due(const rs_snapsched_t *s)
{
    apr_time_t due;

    /* A failing write is retried at the tick, not every second. */
    if (!s->dirty || !s->first || s->failing) {
        return 0;
    }
    due = s->last + RS_SNAPSCHED_QUIET;
    if (due > s->first + RS_SNAPSCHED_MAXWAIT) {
        due = s->first + RS_SNAPSCHED_MAXWAIT;
    }
    return due < s->next ? s->next : due;
}

int rs_snapsched_poll(rs_snapsched_t *s, apr_time_t now, int busy)
{
    apr_time_t due = rs_snapsched_due(s);

    if (!due || now < due) {
        return 0;
    }
    /* The job thread runs another job: never wait for it on the driver's
     * thread. */
    if (busy) {
        s->next = now + RS_SNAPSCHED_RETRY;
        return 0;
    }
    return 1;
}

int rs_snapsched_outlived(rs_snapsched_t *s, apr_time_t jstart, apr_time_t at)
{
    if (!at || jstart <= at) {
        return 0;
    }
    s->dirty = 1;
    return 1;
}

void rs_snapsched_started(rs_snapsched_t *s)
{
    s->dirty = 0;
    s->first = s->last = 0;
}

void rs_snapsched_ended(rs_snapsched_t *s, apr_time_t t0, apr_time_t now)
{
    s->next = now + (t0 && now > t0 ? now - t0 : 0);
}

int rs_snapsched_failed(rs_snapsched_t *s)
{
    s->dirty = 1;
    return s->failing++ ? RS_LOG_DEBUG : RS_LOG_ERR;
}

int rs_snapsched_recovered(rs_snapsched_t *s)
{
    int was = s->failing != 0;

    s->failing = 0;
    return was;
}

const char *rs_snapsched_meta_key(apr_pool_t *p, const char *what, const char *name)
{
    return apr_pstrcat(p, "snapshot-", what, ":", name, NULL);
}

apr_uint64_t rs_snapsched_stored_gen(rs_db_t *store, apr_pool_t *p, const char *name)
{
    const char *g = NULL;

    rs_db_meta_get(store, p, rs_snapsched_meta_key(p, "gen", name), &g);
    return g ? (apr_uint64_t)apr_atoi64(g) : 0;
}

int rs_snapsched_same_key(rs_db_t *store, apr_pool_t *p, const char *name, const char *key)
{
    const char *old = NULL;

    rs_db_meta_get(store, p, rs_snapsched_meta_key(p, "key", name), &old);
    return old && !strcmp(old, key);
}

void rs_snapsched_gen_floor(rs_db_t *store, apr_pool_t *p, const char *name, apr_uint64_t gen)
{
    const char *g = NULL;

    if (gen && rs_db_meta_get(store, p, rs_snapsched_meta_key(p, "gen", name), &g) == APR_SUCCESS
        && (!g || (apr_uint64_t)apr_atoi64(g) < gen)) {
        rs_db_meta_put(store, rs_snapsched_meta_key(p, "gen", name),
                       apr_psprintf(p, "%" APR_UINT64_T_FMT, gen));
    }
}

apr_status_t rs_snapsched_record(rs_db_t *store, apr_pool_t *p, const char *name, apr_uint64_t gen,
                                 const char *key, apr_int64_t seq, const char *gendir)
{
    apr_status_t rv;

    /* One transaction; if it fails, the store fails: the set is
     * reconciled and gets a new snapshot, recorded, once it works. */
    if ((rv = rs_db_begin_set(store, name)) == APR_SUCCESS) {
        rs_db_meta_put(store, rs_snapsched_meta_key(p, "gen", name),
                       apr_psprintf(p, "%" APR_UINT64_T_FMT, gen));
        rs_db_meta_put(store, rs_snapsched_meta_key(p, "key", name), key);
        rs_db_meta_put(store, rs_snapsched_meta_key(p, "seq", name),
                       apr_psprintf(p, "%" APR_INT64_T_FMT, seq));
        rv = gendir && !rs_db_one_node(store)
                 ? rs_followsnap_store(store, p, name, gen, gendir, NULL)
                 : APR_SUCCESS;
        rv = rs_db_end(store, rv);
    }
    return rv;
}

apr_status_t rs_snapsched_write(rs_db_t *store, rs_snapshot_opts_t *sn, const char *tmp,
                                apr_uint64_t gen, const char *history, apr_pool_t *p,
                                rs_snapshot_info_t *info, int *other_store)
{
    const char *h = NULL;
    apr_status_t rv = rs_db_meta_get(store, p, RS_HISTORY_META, &h);

    /* The job thread's connection opens the store at its first job: if
     * the store was deleted or replaced meanwhile, it reads another
     * inventory (an empty one) than the driver's.  Nothing of it is
     * published; the driver notices the new store and restarts. */
    if (rv == APR_SUCCESS && (!h || strcmp(h, history))) {
        *other_store = 1;
        return APR_ENOENT;
    }
    /* Parts no change touched are kept from the generation in service;
     * the job's connection reads the journal for what changed. */
    if (rv == APR_SUCCESS && sn->prev_dir
        && rs_journal_open(&sn->journal, store, p) != APR_SUCCESS) {
        sn->journal = NULL; /* every part is written */
    }
    return rv == APR_SUCCESS ? rs_snapshot_write(store, sn, tmp, gen, p, info) : rv;
}
