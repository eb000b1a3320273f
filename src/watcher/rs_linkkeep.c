/* SPDX-License-Identifier: Apache-2.0 */
/* rs_linkkeep.c - see rs_linkkeep.h */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <apr_allocator.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "rs_linkdep.h"
#include "rs_linkkeep.h"
#include "rs_linkkeep_priv.h"

/* The baton of a lookup: the store connection of the call, and the
 * cause of a failed lookup. */
typedef struct {
    rs_linkkeep_t *lk;
    rs_db_t *db;
    apr_status_t rv;
} look_t;

rs_linkkeep_t *rs_linkkeep_create(apr_pool_t *p, const rs_links_t *l, const char *set,
                                  const char *url_base)
{
    rs_linkkeep_t *lk;

    if (!rs_links_count(l)) {
        return NULL;
    }
    lk = apr_pcalloc(p, sizeof(*lk));
    lk->l = l;
    lk->set = apr_pstrdup(p, set);
    lk->url_base = apr_pstrdup(p, url_base);
    lk->local = rs_links_has_local(l);
    apr_pool_create(&lk->pool, p);
    return lk;
}

const char *rs_linkkeep_join(apr_pool_t *p, const char *dir, const char *name)
{
    return *dir ? apr_pstrcat(p, dir, "/", name, NULL) : name;
}

void rs_linkkeep_split(apr_pool_t *p, const char *path, const char **dir, const char **name)
{
    const char *slash = strrchr(path, '/');

    *dir = slash ? apr_pstrmemdup(p, path, (apr_size_t)(slash - path)) : "";
    *name = slash ? slash + 1 : path;
}

/* rs_links_lookup_fn: the listed row of path (the row being written
 * from itself, any other from the store). */
static int lookup(void *baton, apr_pool_t *p, const char *path, rs_item_t *out)
{
    look_t *lb = baton;
    const char *dir, *name;
    rs_item_t *row = NULL;

    if (lb->lk->written && !strcmp(path, lb->lk->path)) {
        *out = lb->lk->row;
        return out->listed;
    }
    rs_linkkeep_split(p, path, &dir, &name);
    if ((lb->rv = rs_inventory_get(lb->db, p, lb->lk->set, dir, name, &row)) != APR_SUCCESS) {
        return -1;
    }
    if (!row || !row->listed) {
        return 0;
    }
    *out = *row;
    return 1;
}

int rs_linkkeep_lookup_none(void *baton, apr_pool_t *p, const char *path, rs_item_t *out)
{
    (void)baton;
    (void)p;
    (void)path;
    (void)out;
    return 0;
}

/* The local targets the rules name for path (listed or not; NULL: none):
 * they depend on the path and the rules only, so no target is looked
 * up. */
static apr_array_header_t *targets_of(rs_linkkeep_t *lk, apr_pool_t *p, const char *path)
{
    apr_array_header_t *links = NULL, *deps = NULL;

    if (!lk->local
        || rs_links_forward(lk->l, p, lk->url_base, path, rs_linkkeep_lookup_none, NULL, &links,
                            &deps)
               != 0) {
        return NULL; /* lookup_none never fails */
    }
    return deps;
}

apr_pool_t *rs_linkkeep_own_pool(apr_size_t max_free)
{
    apr_allocator_t *alloc = NULL;
    apr_pool_t *p;

    if (apr_allocator_create(&alloc) != APR_SUCCESS) {
        alloc = NULL; /* then the pool makes one itself, keeping all */
    }
    if (alloc) {
        apr_allocator_max_free_set(alloc, max_free);
    }
    apr_pool_create_unmanaged_ex(&p, NULL, alloc);
    if (alloc) {
        apr_allocator_owner_set(alloc, p);
    }
    return p;
}

/* The encoded links of the listed resource at path (*enc, NULL: none),
 * the local targets its rules name (*deps, when deps is not NULL) and the
 * sources that name it (*sources, when not NULL; NULL when it cannot be
 * a target). */
static apr_status_t resolve(rs_linkkeep_t *lk, rs_db_t *db, apr_pool_t *p, const char *path,
                            const char **enc, apr_array_header_t **deps,
                            apr_array_header_t **sources)
{
    look_t lb = { lk, db, APR_SUCCESS };
    apr_array_header_t *links = NULL, *src = NULL;
    apr_status_t rv;

    *enc = NULL;
    if (deps) {
        *deps = NULL;
    }
    if (sources) {
        *sources = NULL;
    }
    if (!lk->l) {
        return APR_SUCCESS;
    }
    if (rs_links_forward(lk->l, p, lk->url_base, path, lookup, &lb, &links, deps) != 0) {
        return lb.rv != APR_SUCCESS ? lb.rv : APR_EGENERAL;
    }
    if (lk->local && rs_links_may_be_target(lk->l, path)) {
        if ((rv = rs_linkdep_sources(db, p, lk->set, path, &src)) != APR_SUCCESS) {
            return rv;
        }
        if (src->nelts
            && rs_links_inverse(lk->l, p, lk->url_base, path, src, lookup, &lb, links) != 0) {
            return lb.rv != APR_SUCCESS ? lb.rv : APR_EGENERAL;
        }
    }
    if (sources) {
        *sources = src;
    }
    *enc = links ? rs_links_encode(p, links) : NULL;
    return APR_SUCCESS;
}

int rs_linkkeep_same(const char *a, const char *b)
{
    return (a && *a) ? b && !strcmp(a, b) : !(b && *b);
}

apr_status_t rs_linkkeep_row(rs_linkkeep_t *lk, rs_db_t *db, rs_item_t *it, int was_listed)
{
    apr_pool_t *p = lk->pool;
    apr_array_header_t *deps = NULL;
    apr_status_t rv;
    const char *path;

    apr_pool_clear(p);
    lk->targets = lk->sources = NULL;
    lk->written = 0;
    lk->path = path = rs_linkkeep_join(p, it->dir, it->name);
    it->links = NULL;
    if (it->listed
        && (rv = resolve(lk, db, p, path, &it->links, &deps, &lk->sources)) != APR_SUCCESS) {
        return rv;
    }
    /* Read by the lookups of rs_linkkeep_done, while the scan's row is
     * still there (the scan calls it before it lets go of the row). */
    lk->row = *it;
    lk->written = 1;
    if (!lk->local) {
        return APR_SUCCESS;
    }
    /* A listed row has the dependencies its path and the rules give (the
     * rules do not change while the watcher runs): written when it
     * becomes listed, gone when it stops being listed. */
    if (!it->listed) {
        deps = was_listed ? targets_of(lk, p, path) : NULL;
    }
    if (deps && deps->nelts && it->listed != was_listed
        && (rv = it->listed ? rs_linkdep_add(db, lk->set, path, deps)
                            : rs_linkdep_drop(db, lk->set, path))
               != APR_SUCCESS) {
        return rv;
    }
    /* Their inverse links name this row: resolved again once it is
     * written (rs_linkkeep_done). */
    lk->targets = deps;
    return APR_SUCCESS;
}

/* Resolve the listed row at path again; update it and mark it relinked
 * when its links changed. */
static apr_status_t relink(rs_linkkeep_t *lk, rs_db_t *db, rs_journal_t *j, apr_pool_t *p,
                           const char *path, apr_int64_t *n)
{
    const char *dir, *name, *enc;
    rs_item_t *row = NULL;
    apr_status_t rv;

    rs_linkkeep_split(p, path, &dir, &name);
    if ((rv = rs_inventory_get(db, p, lk->set, dir, name, &row)) != APR_SUCCESS || !row
        || !row->listed) {
        return rv;
    }
    if ((rv = resolve(lk, db, p, path, &enc, NULL, NULL)) != APR_SUCCESS
        || rs_linkkeep_same(enc, row->links)) {
        return rv;
    }
    if ((rv = rs_inventory_set_links(db, lk->set, dir, name, enc)) == APR_SUCCESS
        && (rv = rs_journal_relink(j, lk->set, dir, name)) == APR_SUCCESS && n) {
        ++*n;
    }
    return rv;
}

/* Append the paths of a (may be NULL) not seen yet to out. */
static void add_new(apr_array_header_t *out, apr_hash_t *seen, const apr_array_header_t *a)
{
    int i;

    for (i = 0; a && i < a->nelts; i++) {
        const char *x = APR_ARRAY_IDX(a, i, const char *);
        if (!apr_hash_get(seen, x, APR_HASH_KEY_STRING)) {
            apr_hash_set(seen, x, APR_HASH_KEY_STRING, "");
            APR_ARRAY_PUSH(out, const char *) = x;
        }
    }
}

apr_status_t rs_linkkeep_done(rs_linkkeep_t *lk, rs_db_t *db, rs_journal_t *j, const char *dir,
                              const char *name, int gone, apr_int64_t *relinked)
{
    apr_array_header_t *targets = lk->targets, *sources = lk->sources, *todo;
    apr_hash_t *seen;
    apr_pool_t *p = lk->pool;
    apr_status_t rv = APR_SUCCESS;
    const char *path;
    int i, after_row;

    if (!lk->local) {
        return APR_SUCCESS; /* no local target: nothing depends on a row */
    }
    path = rs_linkkeep_join(p, dir, name);
    after_row = !gone && lk->written && !strcmp(lk->path, path);
    lk->written = after_row; /* the row's lookups answered from it */
    lk->targets = lk->sources = NULL;
    if (!after_row) {
        /* A listed row deleted (or a call without rs_linkkeep_row): its
         * dependencies go. */
        targets = targets_of(lk, p, path);
        sources = NULL;
        if (gone && targets && targets->nelts
            && (rv = rs_linkdep_drop(db, lk->set, path)) != APR_SUCCESS) {
            return rv;
        }
    }
    if (!sources && rs_links_may_be_target(lk->l, path)
        && (rv = rs_linkdep_sources(db, p, lk->set, path, &sources)) != APR_SUCCESS) {
        return rv;
    }
    seen = apr_hash_make(p);
    apr_hash_set(seen, path, APR_HASH_KEY_STRING, "");
    todo = apr_array_make(p, 4, sizeof(const char *));
    add_new(todo, seen, targets);
    add_new(todo, seen, sources);
    for (i = 0; rv == APR_SUCCESS && i < todo->nelts; i++) {
        rv = relink(lk, db, j, p, APR_ARRAY_IDX(todo, i, const char *), relinked);
    }
    lk->written = 0;
    lk->path = NULL;
    return rv;
}
