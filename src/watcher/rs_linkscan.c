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
 * its share of the bucket arrays), for the collection's estimate. */
#define LS_HASH_ENTRY 56

/* Where a kept row is: held (handed, not written yet), written with the
 * links it has now, or written and resolved again at the end (a row it
 * depends on was handed after it was written). */
enum { HELD, WRITTEN, DIRTY };

struct kept_t;

/* A source that names a path, in that path's list. */
typedef struct src_t {
    struct kept_t *s;
    struct src_t *next;
} src_t;

/* A path that a kept row is, or that a kept row's rules name: the row
 * handed at that path when it may be a target (NULL: none yet), the
 * sources handed that name it. */
typedef struct node_t {
    struct kept_t *row;
    src_t *srcs;
    int nsrcs;
} node_t;

/* A kept row: a source (ndeps > 0), a candidate target (node), or both;
 * what a link carries of it (rs_links.h's link_from_item, the strings as
 * the scan gave them) and what its rules name.  One block of strings,
 * one after another: its path, the local targets its rules name (ndeps),
 * its hashes (those in hmask, by index). */
typedef struct kept_t {
    const char *path;
    const char *type, *encoding; /* interned; NULL: none */
    apr_int64_t size, mtime_ns;
    node_t *node; /* its own, when it may be a target */
    apr_uint16_t ndeps;
    apr_uint16_t dir_len; /* path's directory: its first dir_len bytes (0: the root) */
    unsigned char state, hmask;
} kept_t;

/* A held row: what the scan writes besides what is kept. */
typedef struct {
    kept_t *k;
    apr_int64_t ctime_ns, dev, ino;
    const char *cfg; /* the scan's options' string: it outlives the scan */
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
    apr_hash_t *nodes;        /* path -> node_t */
    apr_hash_t *names;        /* types and encodings, each kept once */
    apr_array_header_t *rows; /* kept_t *, in the order handed */
    apr_array_header_t *held; /* held_t: the rows of held_dir */
    const char *held_dir;
    apr_size_t held_bytes;
    const apr_array_header_t *cur; /* the sources whose inverse links are resolved */
};

static void collect_begin(rs_linkscan_t *ls)
{
    ls->nodes = apr_hash_make(ls->keep);
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

/* The string after s in a kept row's block. */
static const char *next_str(const char *s)
{
    return s + strlen(s) + 1;
}

/* The node of path (made, its key path, when make), NULL: none. */
static node_t *node_of(rs_linkscan_t *ls, const char *path, int make)
{
    node_t *n = apr_hash_get(ls->nodes, path, APR_HASH_KEY_STRING);

    if (!n && make) {
        n = apr_pcalloc(ls->keep, sizeof(*n));
        apr_hash_set(ls->nodes, path, APR_HASH_KEY_STRING, n);
        ls->bytes += LS_HASH_ENTRY + sizeof(*n);
    }
    return n;
}

/* Note that source k names path; a target already written whose inverse
 * links it changes is resolved again at the end. */
static void add_source(rs_linkscan_t *ls, kept_t *k, const char *path)
{
    node_t *n = node_of(ls, path, 1);
    src_t *sc = apr_palloc(ls->keep, sizeof(*sc));

    sc->s = k;
    sc->next = n->srcs;
    n->srcs = sc;
    n->nsrcs++;
    ls->bytes += sizeof(*sc);
    if (n->row && n->row->state == WRITTEN) {
        n->row->state = DIRTY;
    }
}

/* Note candidate target k; the sources already written that name it (a
 * link to a file not listed yet) are resolved again at the end. */
static void add_target(rs_linkscan_t *ls, kept_t *k)
{
    src_t *sc;

    k->node = node_of(ls, k->path, 1);
    k->node->row = k;
    for (sc = k->node->srcs; sc; sc = sc->next) {
        if (sc->s->state == WRITTEN) {
            sc->s->state = DIRTY;
        }
    }
}

/* Keep row it at path (deps: the local targets its rules name; target:
 * it may be one), held until its directory is complete. */
static kept_t *keep_row(rs_linkscan_t *ls, const char *path, const rs_item_t *it,
                        const apr_array_header_t *deps, int target)
{
    kept_t *k = apr_pcalloc(ls->keep, sizeof(*k));
    apr_size_t n = strlen(path) + 1;
    const char *dep;
    char *b;
    int i;

    for (i = 0; i < deps->nelts; i++) {
        n += strlen(APR_ARRAY_IDX(deps, i, const char *)) + 1;
    }
    for (i = 0; i < RS_HASH_COUNT; i++) {
        n += it->hash[i] ? strlen(it->hash[i]) + 1 : 0;
    }
    k->path = b = apr_palloc(ls->keep, n);
    ls->bytes += sizeof(*k) + sizeof(k) + n;
    b = apr_cpystrn(b, path, strlen(path) + 1) + 1;
    for (i = 0; i < deps->nelts; i++) {
        const char *d = APR_ARRAY_IDX(deps, i, const char *);
        b = apr_cpystrn(b, d, strlen(d) + 1) + 1;
    }
    for (i = 0; i < RS_HASH_COUNT; i++) {
        if (it->hash[i]) {
            b = apr_cpystrn(b, it->hash[i], strlen(it->hash[i]) + 1) + 1;
            k->hmask |= (unsigned char)(1u << i);
        }
    }
    k->ndeps = (apr_uint16_t)deps->nelts;
    k->dir_len = (apr_uint16_t)strlen(it->dir);
    k->state = HELD;
    k->size = it->size;
    k->mtime_ns = it->mtime_ns;
    k->type = intern(ls, it->type);
    k->encoding = intern(ls, it->encoding);
    for (i = 0, dep = next_str(k->path); i < k->ndeps; i++, dep = next_str(dep)) {
        add_source(ls, k, dep);
    }
    if (target) {
        add_target(ls, k);
    }
    APR_ARRAY_PUSH(ls->rows, kept_t *) = k;
    return k;
}

/* The hashes of k, as the scan gave them (NULL: none). */
static void kept_hashes(const kept_t *k, const char *hash[RS_HASH_COUNT])
{
    const char *h = k->path;
    int i;

    for (i = 0; i <= k->ndeps; i++) {
        h = next_str(h);
    }
    for (i = 0; i < RS_HASH_COUNT; i++) {
        hash[i] = (k->hmask & (1u << i)) ? h : NULL;
        h = hash[i] ? next_str(h) : h;
    }
}

/* Hold it (kept as k) until its directory is complete. */
static void hold(rs_linkscan_t *ls, kept_t *k, const rs_item_t *it)
{
    held_t *h;

    if (!ls->held->nelts) {
        ls->held_dir = apr_pstrdup(ls->dirp, it->dir);
    }
    h = apr_array_push(ls->held);
    h->k = k;
    h->ctime_ns = it->ctime_ns;
    h->dev = it->dev;
    h->ino = it->ino;
    h->cfg = it->cfg;
    ls->held_bytes += 2 * sizeof(*h); /* the array doubles in its pool */
}

/* The row of a held row, as the scan gave it (from p). */
static rs_item_t *held_row(rs_linkscan_t *ls, apr_pool_t *p, const held_t *h)
{
    rs_item_t *it = apr_pcalloc(p, sizeof(*it));
    const kept_t *k = h->k;

    it->dir = ls->held_dir;
    it->name = k->path + k->dir_len + (k->dir_len > 0);
    it->size = k->size;
    it->mtime_ns = k->mtime_ns;
    it->ctime_ns = h->ctime_ns;
    it->dev = h->dev;
    it->ino = h->ino;
    it->type = k->type;
    it->encoding = k->encoding;
    kept_hashes(k, it->hash);
    it->listed = 1; /* only listed rows are handed */
    it->cfg = h->cfg;
    return it;
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
    kept_hashes(k, out->hash);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        out->hash[i] = out->hash[i] && *out->hash[i] ? out->hash[i] : NULL;
    }
    out->listed = 1;
}

/* rs_links_lookup_fn of forward links: the candidate targets handed so
 * far, every one a listed row (no rule can name a row outside them). */
static int map_lookup(void *baton, apr_pool_t *p, const char *path, rs_item_t *out)
{
    const node_t *n = node_of(baton, path, 0);

    (void)p;
    if (!n || !n->row) {
        return 0;
    }
    kept_item(out, n->row);
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
 * far: its forward links from the candidate targets, then, for a target,
 * the inverse links of its sources. */
static const char *resolve(rs_linkscan_t *ls, apr_pool_t *p, kept_t *k)
{
    apr_array_header_t *links = NULL, *names, *a;
    const src_t *sc;
    int i;

    (void)rs_links_forward(ls->l, p, ls->url_base, k->path, map_lookup, ls, &links, NULL);
    if (k->node && k->node->srcs) {
        a = apr_array_make(p, k->node->nsrcs, sizeof(kept_t *));
        for (sc = k->node->srcs; sc; sc = sc->next) {
            APR_ARRAY_PUSH(a, kept_t *) = sc->s;
        }
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
    const kept_t *x = ((const held_t *)a)->k, *y = ((const held_t *)b)->k;

    return strcmp(x->path + x->dir_len + (x->dir_len > 0), y->path + y->dir_len + (y->dir_len > 0));
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
        rs_item_t *row;
        apr_pool_clear(ls->row);
        row = held_row(ls, ls->row, h);
        if (!ls->dropped) {
            row->links = resolve(ls, ls->row, h->k);
            h->k->state = WRITTEN;
        }
        emit(emit_baton, row);
    }
    apr_pool_clear(ls->dirp);
    ls->held = apr_array_make(ls->dirp, 64, sizeof(held_t));
    ls->held_bytes = 0;
}

/* The collection goes: rs_linkscan_run reads the store instead. */
static void forget(rs_linkscan_t *ls)
{
    ls->dropped = 1;
    ls->nodes = ls->names = NULL;
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
        const char *dep = next_str(k->path);
        for (d = 0; rv == APR_SUCCESS && d < k->ndeps; d++, dep = next_str(dep)) {
            dt[n] = dep;
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
