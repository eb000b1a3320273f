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

/* What the collection keeps of freed memory (the rows' scratch, the held
 * rows of a directory, a collection dropped past its bound) while it
 * lives. */
#define LS_MAX_FREE (1024 * 1024)

/* What an entry of an apr_hash_t costs besides its key (the entry and
 * its share of the bucket array), for the collection's estimate. */
#define LS_HASH_ENTRY 48

/* Where a kept row is: held (handed, not written yet), written with the
 * links it has now, or written and resolved again at the end (a row it
 * depends on was handed after it was written). */
enum { HELD, WRITTEN, DIRTY };

/* A kept row: a source (ndeps > 0), a candidate target (target), or
 * both; what a link carries of it (rs_links.h's link_from_item, the
 * strings as the scan gave them) and what its rules name. */
typedef struct kept_t {
    const char *path;
    int dir_len; /* path's directory: its first dir_len bytes (0: the root) */
    int state;
    apr_int64_t size, mtime_ns;
    const char *type, *encoding;     /* interned; NULL: none */
    const char *hash[RS_HASH_COUNT]; /* NULL: none */
    const char **deps;               /* the local targets its rules name */
    int ndeps;
    int target; /* in the map: may be a target */
} kept_t;

/* A held row as the scan will write it (its strings the kept_t's). */
typedef struct {
    kept_t *k;
    rs_item_t row;
} held_t;

struct rs_linkscan_t {
    const rs_links_t *l;
    const char *set, *url_base, *fp;
    apr_size_t max_bytes;     /* the bound */
    apr_size_t bytes;         /* the collection's estimate */
    int dropped;              /* past the bound: collected no more */
    apr_pool_t *pool;         /* rs_linkkeep_own_pool: everything below */
    apr_pool_t *keep;         /* the collection (cleared when dropped) */
    apr_pool_t *row;          /* a row's scratch, cleared at each */
    apr_pool_t *dirp;         /* the held rows, cleared when written */
    apr_hash_t *map;          /* path -> kept_t *: the candidate targets */
    apr_hash_t *srcs;         /* path -> array of kept_t *: the sources naming it */
    apr_hash_t *names;        /* types and encodings, each kept once */
    apr_array_header_t *rows; /* kept_t *, in the order handed */
    apr_array_header_t *held; /* held_t: the rows of held_dir */
    const char *held_dir;
    apr_size_t held_bytes;
    const apr_array_header_t *cur; /* the sources whose inverse links are resolved */
};

static void collect_begin(rs_linkscan_t *ls)
{
    ls->map = apr_hash_make(ls->keep);
    ls->srcs = apr_hash_make(ls->keep);
    ls->names = apr_hash_make(ls->keep);
    ls->rows = apr_array_make(ls->keep, 1024, sizeof(kept_t *));
    ls->held = apr_array_make(ls->dirp, 64, sizeof(held_t));
    ls->bytes = 0;
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
    apr_pool_create(&ls->dirp, pool);
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

/* s (NULL: none) as kept: one copy per distinct value. */
static const char *intern(rs_linkscan_t *ls, const char *s)
{
    char *v;

    if (!s) {
        return NULL;
    }
    if (!(v = apr_hash_get(ls->names, s, APR_HASH_KEY_STRING))) {
        v = apr_pstrdup(ls->keep, s);
        apr_hash_set(ls->names, v, APR_HASH_KEY_STRING, v);
        ls->bytes += strlen(v) + 1 + LS_HASH_ENTRY;
    }
    return v;
}

/* A copy of s (NULL: none) counted in the estimate. */
static const char *keep_str(rs_linkscan_t *ls, const char *s)
{
    apr_size_t n = s ? strlen(s) + 1 : 0;

    ls->bytes += n;
    return s ? apr_pmemdup(ls->keep, s, n) : NULL;
}

/* Note that k names path (its sources' index); a target already written
 * whose inverse links it changes is resolved again at the end. */
static void add_source(rs_linkscan_t *ls, kept_t *k, const char *path)
{
    apr_array_header_t *a = apr_hash_get(ls->srcs, path, APR_HASH_KEY_STRING);
    kept_t *t = apr_hash_get(ls->map, path, APR_HASH_KEY_STRING);

    if (!a) {
        a = apr_array_make(ls->keep, 1, sizeof(kept_t *));
        apr_hash_set(ls->srcs, path, APR_HASH_KEY_STRING, a);
        ls->bytes += LS_HASH_ENTRY + sizeof(*a);
    }
    APR_ARRAY_PUSH(a, kept_t *) = k;
    ls->bytes += sizeof(k);
    if (t && t->state == WRITTEN) {
        t->state = DIRTY;
    }
}

/* Note candidate target k; the sources already written that name it (a
 * link to a file not listed yet) are resolved again at the end. */
static void add_target(rs_linkscan_t *ls, kept_t *k)
{
    const apr_array_header_t *a = apr_hash_get(ls->srcs, k->path, APR_HASH_KEY_STRING);
    int i;

    k->target = 1;
    apr_hash_set(ls->map, k->path, APR_HASH_KEY_STRING, k);
    ls->bytes += LS_HASH_ENTRY;
    for (i = 0; a && i < a->nelts; i++) {
        kept_t *s = APR_ARRAY_IDX(a, i, kept_t *);
        if (s->state == WRITTEN) {
            s->state = DIRTY;
        }
    }
}

/* Keep row it at path (deps: the local targets its rules name; target:
 * it may be one), held until its directory is complete. */
static kept_t *keep_row(rs_linkscan_t *ls, const char *path, const rs_item_t *it,
                        const apr_array_header_t *deps, int target)
{
    kept_t *k = apr_pcalloc(ls->keep, sizeof(*k));
    int i;

    ls->bytes += sizeof(*k) + sizeof(k);
    k->path = keep_str(ls, path);
    k->dir_len = (int)strlen(it->dir);
    k->state = HELD;
    k->size = it->size;
    k->mtime_ns = it->mtime_ns;
    k->type = intern(ls, it->type);
    k->encoding = intern(ls, it->encoding);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        k->hash[i] = keep_str(ls, it->hash[i]);
    }
    if (deps->nelts) {
        k->ndeps = deps->nelts;
        k->deps = apr_palloc(ls->keep, (apr_size_t)k->ndeps * sizeof(*k->deps));
        ls->bytes += (apr_size_t)k->ndeps * sizeof(*k->deps);
        for (i = 0; i < k->ndeps; i++) {
            k->deps[i] = keep_str(ls, APR_ARRAY_IDX(deps, i, const char *));
            add_source(ls, k, k->deps[i]);
        }
    }
    if (target) {
        add_target(ls, k);
    }
    APR_ARRAY_PUSH(ls->rows, kept_t *) = k;
    return k;
}

/* Hold it (kept as k) until its directory is complete. */
static void hold(rs_linkscan_t *ls, kept_t *k, const rs_item_t *it)
{
    held_t *h;
    int i;

    if (!ls->held->nelts) {
        ls->held_dir = apr_pstrdup(ls->dirp, it->dir);
    }
    h = apr_array_push(ls->held);
    h->k = k;
    h->row = *it; /* its numbers and cfg (the scan's options' string) */
    h->row.dir = ls->held_dir;
    h->row.name = k->path + k->dir_len + (k->dir_len > 0);
    h->row.type = k->type;
    h->row.encoding = k->encoding;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        h->row.hash[i] = k->hash[i];
    }
    h->row.links = NULL;
    ls->held_bytes += 2 * sizeof(*h); /* the array doubles in its pool */
}

/* What a link to k carries (rs_links_lookup_fn's row, "" as none, as the
 * store gives it back). */
static void kept_item(rs_item_t *out, const kept_t *k)
{
    int i;

    memset(out, 0, sizeof(*out));
    out->size = k->size;
    out->mtime_ns = k->mtime_ns;
    out->type = k->type && *k->type ? k->type : NULL;
    out->encoding = k->encoding && *k->encoding ? k->encoding : NULL;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        out->hash[i] = k->hash[i] && *k->hash[i] ? k->hash[i] : NULL;
    }
    out->listed = 1;
}

/* rs_links_lookup_fn of forward links: the candidate targets handed so
 * far, every one a listed row (no rule can name a row outside the map). */
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

/* rs_links_lookup_fn of inverse links: the sources handed so far that
 * name the target being resolved (sorted by path). */
static int src_lookup(void *baton, apr_pool_t *p, const char *path, rs_item_t *out)
{
    const apr_array_header_t *a = ((rs_linkscan_t *)baton)->cur;
    kept_t key, *kp = &key, **hit;

    (void)p;
    key.path = path;
    hit = bsearch(&kp, a->elts, (size_t)a->nelts, sizeof(kept_t *), kept_cmp);
    if (!hit) {
        return 0;
    }
    kept_item(out, *hit);
    return 1;
}

/* The encoded links of kept row k (NULL: none) from what was handed so
 * far: its forward links from the map, then, for a target, the inverse
 * links of its sources. */
static const char *resolve(rs_linkscan_t *ls, apr_pool_t *p, kept_t *k)
{
    apr_array_header_t *links = NULL, *names, *a;
    int i;

    (void)rs_links_forward(ls->l, p, ls->url_base, k->path, map_lookup, ls, &links, NULL);
    a = k->target ? apr_hash_get(ls->srcs, k->path, APR_HASH_KEY_STRING) : NULL;
    if (a) {
        qsort(a->elts, (size_t)a->nelts, sizeof(kept_t *), kept_cmp);
        names = apr_array_make(p, a->nelts, sizeof(const char *));
        for (i = 0; i < a->nelts; i++) {
            APR_ARRAY_PUSH(names, const char *) = APR_ARRAY_IDX(a, i, kept_t *)->path;
        }
        ls->cur = a;
        (void)rs_links_inverse(ls->l, p, ls->url_base, k->path, names, src_lookup, ls, links);
    }
    return rs_links_encode(p, links);
}

static int held_cmp(const void *a, const void *b)
{
    return strcmp(((const held_t *)a)->row.name, ((const held_t *)b)->row.name);
}

/* Hand the held rows back to the scan, each with its links from what was
 * handed so far (every row of their directory, and the directories
 * before): those of a row handed later are resolved again at the end.
 * Without a collection (dropped), without links.  By name: the store's
 * key order within their directory, so that a large directory's rows go
 * where the inventory keeps them next to each other. */
static void write_held(rs_linkscan_t *ls, rs_scan_emit_fn *emit, void *emit_baton)
{
    int i;

    qsort(ls->held->elts, (size_t)ls->held->nelts, sizeof(held_t), held_cmp);
    for (i = 0; i < ls->held->nelts; i++) {
        held_t *h = &APR_ARRAY_IDX(ls->held, i, held_t);
        apr_pool_clear(ls->row);
        if (!ls->dropped) {
            h->row.links = resolve(ls, ls->row, h->k);
            h->k->state = WRITTEN;
        }
        emit(emit_baton, &h->row);
    }
    apr_pool_clear(ls->dirp);
    ls->held = apr_array_make(ls->dirp, 64, sizeof(held_t));
    ls->held_bytes = 0;
}

/* The collection goes: rs_linkscan_run reads the store instead. */
static void forget(rs_linkscan_t *ls)
{
    ls->dropped = 1;
    ls->map = ls->srcs = ls->names = NULL;
    ls->rows = NULL;
    apr_pool_clear(ls->keep);
}

int rs_linkscan_row(void *baton, rs_item_t *it, rs_scan_emit_fn *emit, void *emit_baton)
{
    rs_linkscan_t *ls = baton;
    apr_array_header_t *links = NULL, *deps = NULL;
    const char *path;
    kept_t *k;
    int target;

    if (!it || (ls->held->nelts && strcmp(it->dir, ls->held_dir))) {
        write_held(ls, emit, emit_baton); /* a directory is complete */
    }
    if (!it) {
        return 0;
    }
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
        return 0;
    }
    it->links = NULL; /* without a collection: rs_linkpass_run resolves it */
    if (ls->dropped) {
        return 0;
    }
    k = keep_row(ls, path, it, deps, target);
    if (ls->bytes + ls->held_bytes > ls->max_bytes) {
        /* Past the bound: the held rows are written without links, and
         * so are the rest. */
        ls->dropped = 1;
        write_held(ls, emit, emit_baton);
        forget(ls);
        return 0;
    }
    hold(ls, k, it);
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

typedef struct {
    rs_linkscan_t *ls;
    rs_db_t *db;
    apr_int64_t *changed;
} run_t;

/* rs_linkkeep_rebuild's work, in the store's key order: every kept row's
 * dependencies, RS_LINKDEP_BATCH to a statement; then the rows written
 * before a row they depend on was handed, resolved again and updated. */
static apr_status_t run_all(void *baton)
{
    run_t *r = baton;
    rs_linkscan_t *ls = r->ls;
    const char *dt[RS_LINKDEP_BATCH], *ds[RS_LINKDEP_BATCH], *dir;
    apr_status_t rv = APR_SUCCESS;
    int i, d, n = 0;

    qsort(ls->rows->elts, (size_t)ls->rows->nelts, sizeof(kept_t *), listing_cmp);
    for (i = 0; rv == APR_SUCCESS && i < ls->rows->nelts; i++) {
        kept_t *k = APR_ARRAY_IDX(ls->rows, i, kept_t *);
        for (d = 0; rv == APR_SUCCESS && d < k->ndeps; d++) {
            dt[n] = k->deps[d];
            ds[n++] = k->path;
            if (n == RS_LINKDEP_BATCH) {
                rv = rs_linkdep_add_pairs(r->db, ls->set, dt, ds, n);
                n = 0;
            }
        }
    }
    if (rv == APR_SUCCESS && n) {
        rv = rs_linkdep_add_pairs(r->db, ls->set, dt, ds, n);
    }
    for (i = 0; rv == APR_SUCCESS && i < ls->rows->nelts; i++) {
        kept_t *k = APR_ARRAY_IDX(ls->rows, i, kept_t *);
        if (k->state != DIRTY) {
            continue;
        }
        apr_pool_clear(ls->row);
        dir = apr_pstrmemdup(ls->row, k->path, (apr_size_t)k->dir_len);
        if ((rv = rs_inventory_set_links(r->db, ls->set, dir,
                                         k->path + k->dir_len + (k->dir_len > 0),
                                         resolve(ls, ls->row, k)))
            == APR_SUCCESS) {
            ++*r->changed;
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
        forget(ls);
        return rs_linkpass_run(db, NULL, ls->pool, ls->set, ls->l, ls->url_base, ls->fp, changed);
    }
    if ((rv = rs_linkkeep_rebuild(db, ls->pool, ls->set, ls->fp, run_all, &r)) != APR_SUCCESS) {
        *changed = 0;
    }
    return rv;
}
