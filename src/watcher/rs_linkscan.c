/* SPDX-License-Identifier: Apache-2.0 */
/* rs_linkscan.c - see rs_linkscan.h */
#include <stdlib.h>
#include <string.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "rs_linkdep.h"
#include "rs_linkkeep_priv.h"
#include "rs_linkpass.h"
#include "rs_linkscan.h"

/* What the collection keeps of freed memory (the rows' scratch, a
 * collection dropped past its bound) while it lives. */
#define LS_MAX_FREE (1024 * 1024)

/* What an entry of an apr_hash_t costs besides its key (the entry and
 * its share of the bucket array), for the collection's estimate. */
#define LS_HASH_ENTRY 48

/* A kept row: a source (ndeps > 0), a candidate target (target), or
 * both; only what a link carries of it (rs_links.h's link_from_item) and
 * what its rules name. */
typedef struct kept_t {
    const char *path;
    int dir_len; /* path's directory: its first dir_len bytes (0: the root) */
    apr_int64_t size, mtime_ns;
    const char *type, *encoding;     /* interned; NULL: none */
    const char *hash[RS_HASH_COUNT]; /* NULL: none */
    const char **deps;               /* the local targets its rules name */
    int ndeps;
    int target;              /* in the map: may be a target */
    apr_array_header_t *src; /* a target's listed sources (kept_t *), by
                               * path: made by the pass */
} kept_t;

struct rs_linkscan_t {
    const rs_links_t *l;
    const char *set, *url_base, *fp;
    apr_size_t max_bytes;     /* the bound */
    apr_size_t bytes;         /* the collection's estimate */
    int dropped;              /* past the bound: collected no more */
    apr_pool_t *pool;         /* rs_linkkeep_own_pool: everything below */
    apr_pool_t *keep;         /* the collection (cleared when dropped) */
    apr_pool_t *row;          /* a row's scratch, cleared at each */
    apr_hash_t *map;          /* path -> kept_t *: the candidate targets */
    apr_hash_t *names;        /* types and encodings, each kept once */
    apr_array_header_t *rows; /* kept_t *, in the order written */
    const kept_t *cur;        /* the target whose inverse links are resolved */
};

static void collect_begin(rs_linkscan_t *ls)
{
    ls->map = apr_hash_make(ls->keep);
    ls->names = apr_hash_make(ls->keep);
    ls->rows = apr_array_make(ls->keep, 1024, sizeof(kept_t *));
    ls->bytes = 0;
}

/* Past the bound, or not wanted: the collection goes (rs_linkscan_run
 * then reads the store). */
static void collect_drop(rs_linkscan_t *ls)
{
    ls->dropped = 1;
    ls->map = ls->names = NULL;
    ls->rows = NULL;
    apr_pool_clear(ls->keep);
}

rs_linkscan_t *rs_linkscan_create(const rs_links_t *l, const char *set, const char *url_base,
                                  const char *fp, apr_size_t max_bytes)
{
    rs_linkscan_t *ls;
    apr_pool_t *pool;

    if (!rs_links_has_local(l)) {
        return NULL;
    }
    pool = rs_linkkeep_own_pool(LS_MAX_FREE);
    ls = apr_pcalloc(pool, sizeof(*ls));
    ls->pool = pool;
    ls->l = l;
    ls->set = apr_pstrdup(pool, set);
    ls->url_base = apr_pstrdup(pool, url_base);
    ls->fp = apr_pstrdup(pool, fp ? fp : "");
    ls->max_bytes = max_bytes ? max_bytes : RS_LINKSCAN_MAX_BYTES;
    apr_pool_create(&ls->keep, pool);
    apr_pool_create(&ls->row, pool);
    collect_begin(ls);
    return ls;
}

void rs_linkscan_destroy(rs_linkscan_t *ls)
{
    if (ls) {
        apr_pool_destroy(ls->pool);
    }
}

int rs_linkscan_kept(const rs_linkscan_t *ls)
{
    return ls->dropped ? -1 : ls->rows->nelts;
}

/* s (NULL or "": none) as kept: one copy per distinct value. */
static const char *intern(rs_linkscan_t *ls, const char *s)
{
    char *v;

    if (!s || !*s) {
        return NULL;
    }
    if (!(v = apr_hash_get(ls->names, s, APR_HASH_KEY_STRING))) {
        v = apr_pstrdup(ls->keep, s);
        apr_hash_set(ls->names, v, APR_HASH_KEY_STRING, v);
        ls->bytes += strlen(v) + 1 + LS_HASH_ENTRY;
    }
    return v;
}

/* A copy of s counted in the estimate. */
static const char *keep_str(rs_linkscan_t *ls, const char *s)
{
    apr_size_t n = strlen(s) + 1;

    ls->bytes += n;
    return apr_pmemdup(ls->keep, s, n);
}

/* Keep row it at path (deps: the local targets its rules name; target:
 * it may be one); drop the collection past its bound. */
static void keep_row(rs_linkscan_t *ls, const char *path, const rs_item_t *it,
                     const apr_array_header_t *deps, int target)
{
    kept_t *k = apr_pcalloc(ls->keep, sizeof(*k));
    int i;

    ls->bytes += sizeof(*k) + sizeof(k);
    k->path = keep_str(ls, path);
    k->dir_len = (int)strlen(it->dir);
    k->size = it->size;
    k->mtime_ns = it->mtime_ns;
    k->type = intern(ls, it->type);
    k->encoding = intern(ls, it->encoding);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        /* As the store gives them back: "" is none. */
        k->hash[i] = it->hash[i] && *it->hash[i] ? keep_str(ls, it->hash[i]) : NULL;
    }
    if (deps->nelts) {
        k->ndeps = deps->nelts;
        k->deps = apr_palloc(ls->keep, (apr_size_t)k->ndeps * sizeof(*k->deps));
        ls->bytes += (apr_size_t)k->ndeps * sizeof(*k->deps);
        for (i = 0; i < k->ndeps; i++) {
            k->deps[i] = keep_str(ls, APR_ARRAY_IDX(deps, i, const char *));
        }
    }
    if (target) {
        k->target = 1;
        apr_hash_set(ls->map, k->path, APR_HASH_KEY_STRING, k);
        ls->bytes += LS_HASH_ENTRY;
    }
    APR_ARRAY_PUSH(ls->rows, kept_t *) = k;
    if (ls->bytes > ls->max_bytes) {
        collect_drop(ls);
    }
}

void rs_linkscan_row(void *baton, rs_item_t *it)
{
    rs_linkscan_t *ls = baton;
    apr_array_header_t *links = NULL, *deps = NULL;
    const char *path;
    int target;

    /* Nothing of a row that is neither source nor target outlives this
     * call but the string of its links, in the scratch pool. */
    apr_pool_clear(ls->row);
    path = rs_linkkeep_join(ls->row, it->dir, it->name);
    target = rs_links_may_be_target(ls->l, path);
    /* Without lookups: every local target gives a dependency and no
     * attribute (rs_linkkeep_lookup_none never fails). */
    (void)rs_links_forward(ls->l, ls->row, ls->url_base, path, rs_linkkeep_lookup_none, NULL,
                           &links, &deps);
    if (!target && !deps->nelts) {
        /* Its links are final: none of them names a file of the set, and
         * no file names it. */
        it->links = rs_links_encode(ls->row, links);
        return;
    }
    it->links = NULL; /* resolved by rs_linkscan_run */
    if (!ls->dropped) {
        keep_row(ls, path, it, deps, target);
    }
}

/* What a link to k carries (rs_links_lookup_fn's row). */
static void kept_item(rs_item_t *out, const kept_t *k)
{
    int i;

    memset(out, 0, sizeof(*out));
    out->size = k->size;
    out->mtime_ns = k->mtime_ns;
    out->type = k->type;
    out->encoding = k->encoding;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        out->hash[i] = k->hash[i];
    }
    out->listed = 1;
}

/* rs_links_lookup_fn of forward links: the candidate targets, every one
 * a listed row (no rule can name a row outside the map). */
static int map_lookup(void *baton, apr_pool_t *p, const char *path, rs_item_t *out)
{
    const kept_t *k = apr_hash_get(((rs_linkscan_t *)baton)->map, path, APR_HASH_KEY_STRING);

    (void)p;
    if (!k) {
        return 0;
    }
    kept_item(out, k);
    return 1;
}

static int kept_cmp(const void *a, const void *b)
{
    return strcmp((*(const kept_t *const *)a)->path, (*(const kept_t *const *)b)->path);
}

/* rs_links_lookup_fn of inverse links: the sources the current target
 * was handed (sorted by path). */
static int src_lookup(void *baton, apr_pool_t *p, const char *path, rs_item_t *out)
{
    const kept_t *t = ((rs_linkscan_t *)baton)->cur;
    kept_t key, *kp = &key, **hit;

    (void)p;
    key.path = path;
    hit = bsearch(&kp, t->src->elts, (size_t)t->src->nelts, sizeof(kept_t *), kept_cmp);
    if (!hit) {
        return 0;
    }
    kept_item(out, *hit);
    return 1;
}

/* The order of a listing, the store's (dir, then name, each compared
 * as bytes, a prefix first): the pass writes rows where the inventory
 * keeps them next to each other (its key), not all over it. */
static int listing_cmp(const void *a, const void *b)
{
    const kept_t *x = *(const kept_t *const *)a, *y = *(const kept_t *const *)b;
    int c = memcmp(x->path, y->path, (size_t)(x->dir_len < y->dir_len ? x->dir_len : y->dir_len));

    if (c || x->dir_len != y->dir_len) {
        return c ? c : x->dir_len < y->dir_len ? -1 : 1;
    }
    return strcmp(x->path + x->dir_len + (x->dir_len > 0), y->path + y->dir_len + (y->dir_len > 0));
}

/* Every kept row's dependencies, written RS_LINKDEP_BATCH to a statement,
 * and each source handed to its listed targets. */
static apr_status_t run_deps(rs_linkscan_t *ls, rs_db_t *db)
{
    const char *dt[RS_LINKDEP_BATCH], *ds[RS_LINKDEP_BATCH];
    apr_status_t rv = APR_SUCCESS;
    int i, d, n = 0;

    for (i = 0; rv == APR_SUCCESS && i < ls->rows->nelts; i++) {
        kept_t *k = APR_ARRAY_IDX(ls->rows, i, kept_t *);
        for (d = 0; rv == APR_SUCCESS && d < k->ndeps; d++) {
            kept_t *t = apr_hash_get(ls->map, k->deps[d], APR_HASH_KEY_STRING);
            dt[n] = k->deps[d];
            ds[n++] = k->path;
            if (n == RS_LINKDEP_BATCH) {
                rv = rs_linkdep_add_pairs(db, ls->set, dt, ds, n);
                n = 0;
            }
            if (t) {
                if (!t->src) {
                    t->src = apr_array_make(ls->keep, 1, sizeof(kept_t *));
                }
                APR_ARRAY_PUSH(t->src, kept_t *) = k;
            }
        }
    }
    if (rv == APR_SUCCESS && n) {
        rv = rs_linkdep_add_pairs(db, ls->set, dt, ds, n);
    }
    return rv;
}

/* The encoded links of kept row k (NULL: none): its forward links from
 * the map, then, for a target, the inverse links of its sources. */
static const char *resolve(rs_linkscan_t *ls, apr_pool_t *p, kept_t *k)
{
    apr_array_header_t *links = NULL, *names;
    int i;

    (void)rs_links_forward(ls->l, p, ls->url_base, k->path, map_lookup, ls, &links, NULL);
    if (k->target && k->src) {
        qsort(k->src->elts, (size_t)k->src->nelts, sizeof(kept_t *), kept_cmp);
        names = apr_array_make(p, k->src->nelts, sizeof(const char *));
        for (i = 0; i < k->src->nelts; i++) {
            APR_ARRAY_PUSH(names, const char *) = APR_ARRAY_IDX(k->src, i, kept_t *)->path;
        }
        ls->cur = k;
        (void)rs_links_inverse(ls->l, p, ls->url_base, k->path, names, src_lookup, ls, links);
    }
    return rs_links_encode(p, links);
}

typedef struct {
    rs_linkscan_t *ls;
    rs_db_t *db;
    apr_int64_t *changed;
} run_t;

/* rs_linkkeep_rebuild's work: the dependencies, then the sources (their
 * targets' attributes are all known), then the targets (their sources
 * are all known); a row was written without links, so only one whose
 * links are not empty is updated. */
static apr_status_t run_all(void *baton)
{
    run_t *r = baton;
    rs_linkscan_t *ls = r->ls;
    apr_status_t rv;
    int i, targets;

    qsort(ls->rows->elts, (size_t)ls->rows->nelts, sizeof(kept_t *), listing_cmp);
    rv = run_deps(ls, r->db);

    for (targets = 0; targets < 2; targets++) {
        for (i = 0; rv == APR_SUCCESS && i < ls->rows->nelts; i++) {
            kept_t *k = APR_ARRAY_IDX(ls->rows, i, kept_t *);
            const char *enc, *dir;
            if (k->target != targets) {
                continue;
            }
            apr_pool_clear(ls->row);
            if (!(enc = resolve(ls, ls->row, k))) {
                continue;
            }
            dir = apr_pstrmemdup(ls->row, k->path, (apr_size_t)k->dir_len);
            if ((rv = rs_inventory_set_links(r->db, ls->set, dir,
                                             k->path + k->dir_len + (k->dir_len > 0), enc))
                == APR_SUCCESS) {
                ++*r->changed;
            }
        }
    }
    return rv;
}

apr_status_t rs_linkscan_run(rs_linkscan_t *ls, rs_db_t *db, int fresh, apr_int64_t *changed)
{
    run_t r = { ls, db, changed };
    apr_status_t rv;

    *changed = 0;
    if (!fresh || ls->dropped) {
        /* Rows this scan did not write, or too many to keep: the pass
         * over the store. */
        collect_drop(ls);
        return rs_linkpass_run(db, NULL, ls->pool, ls->set, ls->l, ls->url_base, ls->fp, changed);
    }
    if ((rv = rs_linkkeep_rebuild(db, ls->pool, ls->set, ls->fp, run_all, &r)) != APR_SUCCESS) {
        *changed = 0;
    }
    return rv;
}
