/* SPDX-License-Identifier: Apache-2.0 */
/* rs_linkpass.c - see rs_linkpass.h */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "rs_linkdep.h"
#include "rs_linkkeep_priv.h"
#include "rs_linkpass.h"

/* The pass over a set's listed rows (rs_linkpass_run) answers every
 * lookup from memory: one read of the listed rows that may be a target
 * (rs_links_may_be_target) into a map, then one read of every listed row
 * in listing order that resolves its forward links from the map, writes
 * its dependencies and hands each listed target a copy of the sources
 * that name it; the targets' rows, whose inverse links need all of their
 * sources, are resolved last.  Memory: for each listed candidate target
 * its row (path, type, encoding, hashes, links) and, for each listed
 * source that names it, the source's path and attributes; nothing for
 * the other rows beyond the page being read. */
#define PASS_PAGE 5000

/* A listed row that may be a target, and the listed rows that name it
 * (src_t, sorted by path before its inverse links are resolved). */
typedef struct {
    const char *path;
    rs_item_t row;
    apr_array_header_t *src;
} tgt_t;

typedef struct {
    const char *path;
    rs_item_t row; /* attributes only (what a link carries) */
} src_t;

typedef struct {
    rs_linkkeep_t *lk;
    rs_db_t *db;
    rs_journal_t *j;
    apr_pool_t *wp;            /* the pass's own (rs_linkkeep_own_pool) */
    apr_pool_t *mp;            /* the map and the sources, for the pass */
    apr_hash_t *map;           /* path -> tgt_t */
    apr_array_header_t *order; /* tgt_t *, in listing order */
    const tgt_t *cur;          /* the target whose inverse links are resolved */
    apr_int64_t *changed;
    /* Dependencies not written yet (from bp, cleared as pass_flush
     * writes them: at RS_LINKDEP_BATCH and at the end). */
    apr_pool_t *bp;
    const char *dep_t[RS_LINKDEP_BATCH], *dep_s[RS_LINKDEP_BATCH];
    int ndep;
} pass_t;

static apr_status_t pass_flush(pass_t *ps)
{
    int n = ps->ndep;

    apr_status_t rv;

    ps->ndep = 0;
    rv = n ? rs_linkdep_add_pairs(ps->db, ps->lk->set, ps->dep_t, ps->dep_s, n) : APR_SUCCESS;
    apr_pool_clear(ps->bp);
    return rv;
}

/* A copy of what a link carries of row it (link_from_item's fields). */
static void copy_attrs(apr_pool_t *p, rs_item_t *to, const rs_item_t *it)
{
    int i;

    memset(to, 0, sizeof(*to));
    to->size = it->size;
    to->mtime_ns = it->mtime_ns;
    to->type = it->type ? apr_pstrdup(p, it->type) : NULL;
    to->encoding = it->encoding ? apr_pstrdup(p, it->encoding) : NULL;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        to->hash[i] = it->hash[i] ? apr_pstrdup(p, it->hash[i]) : NULL;
    }
    to->listed = 1;
}

/* rs_links_lookup_fn of the pass's forward links: the map. */
static int pass_lookup(void *baton, apr_pool_t *p, const char *path, rs_item_t *out)
{
    const tgt_t *t = apr_hash_get(((pass_t *)baton)->map, path, APR_HASH_KEY_STRING);

    (void)p;
    if (!t) {
        return 0; /* no rule can name a row outside the map */
    }
    *out = t->row;
    return 1;
}

static int src_cmp(const void *a, const void *b)
{
    return strcmp(((const src_t *)a)->path, ((const src_t *)b)->path);
}

/* rs_links_lookup_fn of the pass's inverse links: the sources that the
 * current target was handed (every one a listed row). */
static int src_lookup(void *baton, apr_pool_t *p, const char *path, rs_item_t *out)
{
    const tgt_t *t = ((pass_t *)baton)->cur;
    src_t key, *hit;

    (void)p;
    key.path = path;
    hit = bsearch(&key, t->src->elts, (size_t)t->src->nelts, sizeof(src_t), src_cmp);
    if (!hit) {
        return 0;
    }
    *out = hit->row;
    return 1;
}

/* Store enc as the links of row it (whose stored links are it->links)
 * when they differ; mark it relinked in j (when not NULL). */
static apr_status_t pass_store(pass_t *ps, const rs_item_t *it, const char *enc)
{
    apr_status_t rv;

    if (rs_linkkeep_same(enc, it->links)) {
        return APR_SUCCESS;
    }
    if ((rv = rs_inventory_set_links(ps->db, ps->lk->set, it->dir, it->name, enc)) == APR_SUCCESS
        && (!ps->j
            || (rv = rs_journal_relink(ps->j, ps->lk->set, it->dir, it->name)) == APR_SUCCESS)) {
        ++*ps->changed;
    }
    return rv;
}

/* The listed rows of the set a page at a time in listing order, each
 * handed to fn (with its set-relative path; scratch from p, cleared per
 * page). */
typedef apr_status_t row_fn(pass_t *ps, apr_pool_t *p, const rs_item_t *it, const char *path);

static apr_status_t pass_rows(pass_t *ps, apr_pool_t *p, row_fn *fn)
{
    apr_array_header_t *page = NULL;
    const char *after_dir = NULL, *after_name = NULL;
    apr_pool_t *pp[2];
    apr_status_t rv;
    int i, k = 0;

    /* Two page pools in turn: a page's last row is the next page's key. */
    apr_pool_create(&pp[0], p);
    apr_pool_create(&pp[1], p);
    do {
        apr_pool_clear(pp[k]);
        rv = rs_inventory_page(ps->db, pp[k], ps->lk->set, after_dir, after_name, PASS_PAGE, &page);
        for (i = 0; rv == APR_SUCCESS && i < page->nelts; i++) {
            const rs_item_t *it = &APR_ARRAY_IDX(page, i, rs_item_t);
            rv = fn(ps, pp[k], it, rs_linkkeep_join(pp[k], it->dir, it->name));
        }
        if (rv == APR_SUCCESS && page->nelts) {
            const rs_item_t *last = &APR_ARRAY_IDX(page, page->nelts - 1, rs_item_t);
            after_dir = last->dir;
            after_name = last->name;
        }
        k = !k;
    } while (rv == APR_SUCCESS && page->nelts == PASS_PAGE);
    apr_pool_destroy(pp[0]);
    apr_pool_destroy(pp[1]);
    return rv;
}

/* First read: the listed rows that may be targets, into the map (from
 * the store without copies, only what a listing reads of a row). */
typedef struct {
    pass_t *ps;
    apr_pool_t *p; /* the paths of the rows, cleared now and then */
    int n;
} map_t;

static int pass_map(void *baton, const rs_item_t *it)
{
    map_t *m = baton;
    pass_t *ps = m->ps;
    const char *path;
    tgt_t *t;

    if (++m->n % PASS_PAGE == 0) {
        apr_pool_clear(m->p);
    }
    path = rs_linkkeep_join(m->p, it->dir, it->name);
    if (!rs_links_may_be_target(ps->lk->l, path)) {
        return 0;
    }
    t = apr_pcalloc(ps->mp, sizeof(*t));
    t->path = apr_pstrdup(ps->mp, path);
    copy_attrs(ps->mp, &t->row, it);
    rs_linkkeep_split(ps->mp, t->path, &t->row.dir, &t->row.name);
    t->row.links = it->links ? apr_pstrdup(ps->mp, it->links) : NULL;
    apr_hash_set(ps->map, t->path, APR_HASH_KEY_STRING, t);
    APR_ARRAY_PUSH(ps->order, tgt_t *) = t;
    return 0;
}

static apr_status_t pass_read_map(pass_t *ps, apr_pool_t *p)
{
    map_t m = { ps, NULL, 0 };
    apr_status_t rv;

    apr_pool_create(&m.p, p);
    rv = rs_inventory_each(ps->db, ps->lk->set, NULL, NULL, INT_MAX, RS_INVENTORY_LISTING, pass_map,
                           &m);
    apr_pool_destroy(m.p);
    return rv;
}

/* Second read: a row's forward links from the map, its dependencies
 * written and handed as a source to its listed targets; stored now
 * unless it is itself a target (then with its inverse links, last). */
static apr_status_t pass_row(pass_t *ps, apr_pool_t *p, const rs_item_t *it, const char *path)
{
    apr_array_header_t *links = NULL, *deps = NULL;
    apr_status_t rv;
    int i;

    if (!it->listed) {
        return APR_SUCCESS;
    }
    if (!ps->lk->l) {
        return pass_store(ps, it, NULL);
    }
    if (rs_links_forward(ps->lk->l, p, ps->lk->url_base, path, pass_lookup, ps, &links,
                         ps->lk->local ? &deps : NULL)
        != 0) {
        return APR_EGENERAL; /* pass_lookup never fails */
    }
    if (deps && deps->nelts) {
        const char *spath = apr_pstrdup(ps->bp, path), *kept = NULL;
        for (i = 0; i < deps->nelts; i++) {
            const char *dep = APR_ARRAY_IDX(deps, i, const char *);
            tgt_t *t = apr_hash_get(ps->map, dep, APR_HASH_KEY_STRING);
            src_t *sc;
            ps->dep_t[ps->ndep] = apr_pstrdup(ps->bp, dep);
            ps->dep_s[ps->ndep++] = spath;
            if (ps->ndep == RS_LINKDEP_BATCH && (rv = pass_flush(ps)) != APR_SUCCESS) {
                return rv;
            }
            if (!t) {
                continue;
            }
            if (!t->src) {
                t->src = apr_array_make(ps->mp, 1, sizeof(src_t));
            }
            sc = apr_array_push(t->src);
            sc->path = kept = kept ? kept : apr_pstrdup(ps->mp, path);
            copy_attrs(ps->mp, &sc->row, it);
        }
    }
    if (apr_hash_get(ps->map, path, APR_HASH_KEY_STRING)) {
        return APR_SUCCESS; /* a target: resolved last */
    }
    return pass_store(ps, it, links ? rs_links_encode(p, links) : NULL);
}

/* Last: the targets, forward links again (from the map), then the
 * inverse links of the sources they were handed. */
static apr_status_t pass_targets(pass_t *ps, apr_pool_t *p)
{
    apr_pool_t *rp;
    apr_status_t rv = APR_SUCCESS;
    int i;

    apr_pool_create(&rp, p);
    for (i = 0; rv == APR_SUCCESS && i < ps->order->nelts; i++) {
        tgt_t *t = APR_ARRAY_IDX(ps->order, i, tgt_t *);
        apr_array_header_t *links = NULL, *names;
        int k;

        apr_pool_clear(rp);
        if (rs_links_forward(ps->lk->l, rp, ps->lk->url_base, t->path, pass_lookup, ps, &links,
                             NULL)
            != 0) {
            rv = APR_EGENERAL;
            break;
        }
        if (t->src) {
            qsort(t->src->elts, (size_t)t->src->nelts, sizeof(src_t), src_cmp);
            names = apr_array_make(rp, t->src->nelts, sizeof(const char *));
            for (k = 0; k < t->src->nelts; k++) {
                APR_ARRAY_PUSH(names, const char *) = APR_ARRAY_IDX(t->src, k, src_t).path;
            }
            ps->cur = t;
            if (!links) {
                links = apr_array_make(rp, names->nelts, sizeof(rs_link_t));
            }
            if (rs_links_inverse(ps->lk->l, rp, ps->lk->url_base, t->path, names, src_lookup, ps,
                                 links)
                != 0) {
                rv = APR_EGENERAL;
                break;
            }
        }
        rv = pass_store(ps, &t->row, links ? rs_links_encode(rp, links) : NULL);
    }
    apr_pool_destroy(rp);
    return rv;
}

/* What the pass keeps of freed memory while it runs (its pool is
 * destroyed at the end). */
#define PASS_MAX_FREE (1024 * 1024)

apr_status_t rs_linkkeep_rebuild(rs_db_t *db, apr_pool_t *p, const char *set, const char *fp,
                                 apr_status_t (*fn)(void *baton), void *baton)
{
    apr_status_t rv;

    if ((rv = rs_db_begin_set(db, set)) != APR_SUCCESS) {
        return rv;
    }
    if ((rv = rs_linkdep_clear(db, set)) == APR_SUCCESS && (rv = fn(baton)) == APR_SUCCESS) {
        rv = rs_db_meta_put(db, apr_pstrcat(p, META_PREFIX, set, NULL), fp ? fp : "");
    }
    if (rv != APR_SUCCESS) {
        rs_db_rollback(db);
        return rv;
    }
    return rs_db_commit(db);
}

/* The pass, in rs_linkkeep_rebuild's transaction (baton: the pass_t,
 * whose pools are the pass's own). */
static apr_status_t pass_all(void *baton)
{
    pass_t *ps = baton;
    apr_status_t rv = APR_SUCCESS;

    if (ps->lk->local) {
        rv = pass_read_map(ps, ps->wp);
    }
    if (rv == APR_SUCCESS) {
        rv = pass_rows(ps, ps->wp, pass_row);
    }
    if (rv == APR_SUCCESS) {
        rv = pass_flush(ps);
    }
    if (rv == APR_SUCCESS && ps->lk->local) {
        rv = pass_targets(ps, ps->wp);
    }
    return rv;
}

apr_status_t rs_linkpass_run(rs_db_t *db, rs_journal_t *j, apr_pool_t *p, const char *set,
                             const rs_links_t *l, const char *url_base, const char *fp,
                             apr_int64_t *changed)
{
    rs_linkkeep_t lk;
    pass_t ps;
    apr_status_t rv;

    *changed = 0;
    memset(&lk, 0, sizeof(lk));
    lk.l = rs_links_count(l) ? l : NULL;
    lk.set = set;
    lk.url_base = url_base;
    lk.local = lk.l && rs_links_has_local(lk.l);
    memset(&ps, 0, sizeof(ps));
    ps.lk = &lk;
    ps.db = db;
    ps.j = j;
    ps.changed = changed;
    /* Pages, map and sources: memory of the pass's own, gone with it. */
    ps.wp = rs_linkkeep_own_pool(PASS_MAX_FREE);
    apr_pool_create(&ps.mp, ps.wp);
    apr_pool_create(&ps.bp, ps.wp);
    ps.map = apr_hash_make(ps.mp);
    ps.order = apr_array_make(ps.mp, 16, sizeof(tgt_t *));
    rv = rs_linkkeep_rebuild(db, p, set, fp, pass_all, &ps);
    apr_pool_destroy(ps.wp);
    if (rv != APR_SUCCESS) {
        *changed = 0;
    }
    return rv;
}

apr_status_t rs_linkpass_start(rs_db_t *db, rs_journal_t *j, apr_pool_t *p, const char *set,
                               const rs_links_t *l, const char *url_base, const char *fp, int *ran,
                               apr_int64_t *changed)
{
    const char *stored = NULL;
    apr_status_t rv;

    *ran = 0;
    *changed = 0;
    if ((rv = rs_db_meta_get(db, p, apr_pstrcat(p, META_PREFIX, set, NULL), &stored)) != APR_SUCCESS
        || !strcmp(stored ? stored : "", fp ? fp : "")) {
        return rv;
    }
    if ((rv = rs_linkpass_run(db, j, p, set, l, url_base, fp, changed)) == APR_SUCCESS) {
        /* A set's first start with rules, on rows of none, is no change
         * worth a word. */
        *ran = stored || *changed;
    }
    return rv;
}
