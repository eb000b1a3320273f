/* SPDX-License-Identifier: Apache-2.0 */
/* rs_scanpipe.c - see rs_scanpipe.h: the store writer of a full scan.
 *
 * A full scan does two kinds of work per file: reading the tree (readdir,
 * fstatat, the checks, hashing) and writing the store (a row, a journal
 * record).  Each costs about as much as the other, so rs_scan_set runs
 * them on two threads: the walk stays on the calling thread and hands
 * every store write to a writer thread, in order, through a queue of
 * batches.
 *
 * Lifecycle: rs_scanpipe_start (before the walk; the store's transaction
 * is already begun) starts the writer with a context of its own: the
 * same store, options and transaction, its own stats and error.  While
 * the pipe runs, the walking thread never touches the store: the rows
 * of a directory it needs are loaded by the writer on request
 * (rs_scanpipe_load), between two batches.  rs_scanpipe_finish drains
 * the queue, joins the writer and hands the store back with the writer's
 * counts, error and transaction state.
 *
 * Ordering: the writer runs the operations in the order the walk issued
 * them, so the journal sees exactly the sequence of a scan without the
 * pipe.  A load may overtake queued writes: that is safe because every
 * queued operation is about a directory the walk has already loaded, and
 * the walk loads each directory once (rs_scan_set never walks a
 * directory twice), so no queued write touches the rows being loaded.
 *
 * Threads and allocators: the writer makes and frees a pool below the
 * store's for every statement, and on_change allocates from the
 * caller's pools, while the walk's callbacks (the checks, the progress)
 * allocate from the caller's pools too.  That is safe only when the
 * allocators of the store's pool and the caller's have a mutex (APR's
 * global one has; a process that makes its own allocator must set one):
 * rs_scan_set runs no pipe otherwise (rs_scanpipe_allowed).  The walk's
 * own pools have an allocator of their own, which the writer uses only
 * for a load, while the walk waits for it.
 *
 * Memory: the walk fills a batch in a pool of its own (unmanaged, with
 * its own allocator), which the writer clears after running it and hands
 * back on a free list for the walk to fill again (destroying it would
 * give its pages back to the system, and every new batch would map,
 * fault in and zero them again, with a TLB shootdown on the other
 * processor at every unmap: a tenth of a first scan's time); at
 * most RS_SCANPIPE_QUEUE batches of RS_SCANPIPE_OPS operations wait, and
 * the walk blocks beyond that.  The on_change callback runs on the
 * writer, one call at a time, as before.
 */
#include <string.h>
#include <apr_allocator.h>
#include <apr_strings.h>
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>
#include "rs_scanpipe.h"
#include "rs_scanwrite.h"

#define RS_SCANPIPE_OPS   512 /* operations per batch */
#define RS_SCANPIPE_QUEUE 16  /* batches queued at most */

typedef struct rs_scanpipe_t rs_scanpipe_t;

enum { OP_ROW, OP_ACCESS, OP_DROP };

typedef struct op_t {
    int kind;
    rs_item_t it;  /* the new row; OP_DROP: the row dropped */
    rs_item_t old; /* OP_ROW: the stored row, when has_old */
    int has_old;
    apr_int64_t hashed;
} op_t;

typedef struct batch_t {
    struct batch_t *next;
    apr_pool_t *pool; /* the batch's own: unmanaged, own allocator */
    apr_array_header_t *ops;
} batch_t;

struct rs_scanpipe_t {
    rs_scan_ctx_t w; /* the writer's context */
    rs_scan_stats_t wstats;
    apr_thread_t *thread;
    apr_thread_mutex_t *lock;
    apr_thread_cond_t *cond; /* broadcast on every change below */
    batch_t *head, *tail;
    int queued;
    int closing;
    apr_status_t err; /* the writer's first failure */
    /* A load request: state 1 asked, 2 answered. */
    int load_state;
    const char *load_dir;
    apr_pool_t *load_pool;
    apr_hash_t *load_rows;
    apr_status_t load_rv;
    batch_t *cur; /* being filled (walking thread only) */
    /* Pools of batches that ran, cleared, for the walk's next batches
     * (under lock); destroyed by rs_scanpipe_finish. */
    apr_pool_t *spare[RS_SCANPIPE_QUEUE + 2];
    int nspare;
};

static void copy_item(apr_pool_t *p, rs_item_t *to, const rs_item_t *from)
{
    int i;

    *to = *from;
    to->dir = from->dir ? apr_pstrdup(p, from->dir) : NULL;
    to->name = from->name ? apr_pstrdup(p, from->name) : NULL;
    to->type = from->type ? apr_pstrdup(p, from->type) : NULL;
    to->encoding = from->encoding ? apr_pstrdup(p, from->encoding) : NULL;
    to->links = from->links ? apr_pstrdup(p, from->links) : NULL;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        to->hash[i] = from->hash[i] ? apr_pstrdup(p, from->hash[i]) : NULL;
    }
    /* cfg is the scan options' own string: it outlives the pipe. */
}

static void run_batch(rs_scanpipe_t *pp, batch_t *b)
{
    int i;

    for (i = 0; i < b->ops->nelts && pp->w.err == APR_SUCCESS; i++) {
        op_t *op = &APR_ARRAY_IDX(b->ops, i, op_t);
        switch (op->kind) {
        case OP_ROW:
            rs_scanwrite_row(&pp->w, &op->it, op->has_old ? &op->old : NULL, op->hashed);
            break;
        case OP_ACCESS:
            rs_scanwrite_access(&pp->w, &op->it);
            break;
        default:
            rs_scanwrite_drop(&pp->w, op->it.dir, op->it.name, &op->it);
            break;
        }
    }
}

static void *APR_THREAD_FUNC writer_main(apr_thread_t *t, void *data)
{
    rs_scanpipe_t *pp = data;

    apr_thread_mutex_lock(pp->lock);
    for (;;) {
        if (pp->load_state == 1) {
            apr_hash_t *rows = NULL;
            apr_status_t rv;
            /* The walk waits for this answer: its pool is ours until
             * then. */
            apr_thread_mutex_unlock(pp->lock);
            rs_scanwrite_flush(&pp->w); /* the rows written so far first */
            rv = rs_inventory_dir_load(pp->w.st, pp->load_pool, pp->w.o->set, pp->load_dir, &rows);
            apr_thread_mutex_lock(pp->lock);
            pp->load_rows = rows;
            pp->load_rv = rv;
            pp->load_state = 2;
            apr_thread_cond_broadcast(pp->cond);
        }
        else if (pp->head) {
            batch_t *b = pp->head;
            pp->head = b->next;
            if (!pp->head) {
                pp->tail = NULL;
            }
            pp->queued--;
            apr_thread_cond_broadcast(pp->cond);
            apr_thread_mutex_unlock(pp->lock);
            run_batch(pp, b);
            {
                apr_pool_t *bp = b->pool;
                apr_pool_clear(bp); /* b is gone with it */
                apr_thread_mutex_lock(pp->lock);
                if (pp->nspare < (int)(sizeof(pp->spare) / sizeof(pp->spare[0]))) {
                    pp->spare[pp->nspare++] = bp;
                }
                else {
                    apr_pool_destroy(bp);
                }
            }
            if (pp->w.err != APR_SUCCESS && pp->err == APR_SUCCESS) {
                pp->err = pp->w.err;
            }
        }
        else if (pp->closing) {
            break;
        }
        else {
            apr_thread_cond_wait(pp->cond, pp->lock);
        }
    }
    apr_thread_mutex_unlock(pp->lock);
    (void)t;
    return NULL;
}

static int pool_thread_safe(apr_pool_t *p)
{
    apr_allocator_t *a = apr_pool_allocator_get(p);
    return a && apr_allocator_mutex_get(a) != NULL;
}

int rs_scanpipe_allowed(apr_pool_t *caller, apr_pool_t *store)
{
    return pool_thread_safe(caller) && pool_thread_safe(store);
}

apr_status_t rs_scanpipe_start(rs_scan_ctx_t *sc, apr_pool_t *p)
{
    rs_scanpipe_t *pp;
    apr_status_t rv;

    pp = apr_pcalloc(p, sizeof(*pp));

    pp->w = *sc;
    pp->w.pipe = NULL;
    pp->w.stats = &pp->wstats;
    if ((rv = apr_thread_mutex_create(&pp->lock, APR_THREAD_MUTEX_DEFAULT, p)) != APR_SUCCESS
        || (rv = apr_thread_cond_create(&pp->cond, p)) != APR_SUCCESS
        || (rv = apr_thread_create(&pp->thread, NULL, writer_main, pp, p)) != APR_SUCCESS) {
        return rv; /* the scan runs without the pipe */
    }
    sc->pipe = pp;
    return APR_SUCCESS;
}

/* Queue the batch being filled (walking thread). */
static void flush(rs_scan_ctx_t *sc)
{
    rs_scanpipe_t *pp = sc->pipe;
    batch_t *b = pp->cur;

    apr_thread_mutex_lock(pp->lock);
    if (b) {
        pp->cur = NULL;
        while (pp->queued >= RS_SCANPIPE_QUEUE && pp->err == APR_SUCCESS) {
            apr_thread_cond_wait(pp->cond, pp->lock);
        }
        if (pp->tail) {
            pp->tail->next = b;
        }
        else {
            pp->head = b;
        }
        pp->tail = b;
        pp->queued++;
        apr_thread_cond_broadcast(pp->cond);
    }
    if (pp->err != APR_SUCCESS && sc->err == APR_SUCCESS) {
        sc->err = pp->err; /* the walk stops at the writer's failure */
    }
    apr_thread_mutex_unlock(pp->lock);
}

static op_t *add_op(rs_scan_ctx_t *sc, int kind)
{
    rs_scanpipe_t *pp = sc->pipe;
    op_t *op;

    if (!pp->cur) {
        apr_pool_t *bp = NULL;
        apr_thread_mutex_lock(pp->lock);
        if (pp->nspare > 0) {
            bp = pp->spare[--pp->nspare];
        }
        apr_thread_mutex_unlock(pp->lock);
        if (!bp) {
            apr_allocator_t *alloc;
            apr_allocator_create(&alloc);
            apr_pool_create_unmanaged_ex(&bp, NULL, alloc);
            apr_allocator_owner_set(alloc, bp);
        }
        pp->cur = apr_pcalloc(bp, sizeof(*pp->cur));
        pp->cur->pool = bp;
        pp->cur->ops = apr_array_make(bp, RS_SCANPIPE_OPS, sizeof(op_t));
    }
    op = apr_array_push(pp->cur->ops);
    memset(op, 0, sizeof(*op));
    op->kind = kind;
    return op;
}

static void added(rs_scan_ctx_t *sc)
{
    if (sc->pipe->cur->ops->nelts >= RS_SCANPIPE_OPS) {
        flush(sc);
    }
}

void rs_scanpipe_row(rs_scan_ctx_t *sc, const rs_item_t *it, const rs_item_t *old,
                     apr_int64_t hashed)
{
    op_t *op;
    apr_pool_t *bp;

    if (!sc->pipe) {
        rs_scanwrite_row(sc, it, old, hashed);
        return;
    }
    op = add_op(sc, OP_ROW);
    bp = sc->pipe->cur->pool;
    copy_item(bp, &op->it, it);
    if (old) {
        copy_item(bp, &op->old, old);
        op->has_old = 1;
    }
    op->hashed = hashed;
    added(sc);
}

void rs_scanpipe_access(rs_scan_ctx_t *sc, const rs_item_t *it)
{
    op_t *op;

    if (!sc->pipe) {
        rs_scanwrite_access(sc, it);
        return;
    }
    op = add_op(sc, OP_ACCESS);
    copy_item(sc->pipe->cur->pool, &op->it, it);
    added(sc);
}

void rs_scanpipe_drop(rs_scan_ctx_t *sc, const char *dir, const char *name, const rs_item_t *row)
{
    op_t *op;
    apr_pool_t *bp;

    if (!sc->pipe) {
        rs_scanwrite_drop(sc, dir, name, row);
        return;
    }
    op = add_op(sc, OP_DROP);
    bp = sc->pipe->cur->pool;
    copy_item(bp, &op->it, row);
    op->it.dir = apr_pstrdup(bp, dir);
    op->it.name = apr_pstrdup(bp, name);
    added(sc);
}

apr_status_t rs_scanpipe_load(rs_scan_ctx_t *sc, apr_pool_t *p, const char *dir, apr_hash_t **rows)
{
    rs_scanpipe_t *pp = sc->pipe;
    apr_status_t rv;

    if (sc->fresh) {
        *rows = apr_hash_make(p);
        return APR_SUCCESS;
    }
    if (!pp) {
        rs_scanwrite_flush(sc); /* the rows written so far first */
        return rs_inventory_dir_load(sc->st, p, sc->o->set, dir, rows);
    }
    apr_thread_mutex_lock(pp->lock);
    pp->load_dir = dir;
    pp->load_pool = p;
    pp->load_state = 1;
    apr_thread_cond_broadcast(pp->cond);
    while (pp->load_state != 2) {
        apr_thread_cond_wait(pp->cond, pp->lock);
    }
    pp->load_state = 0;
    *rows = pp->load_rows;
    rv = pp->load_rv;
    apr_thread_mutex_unlock(pp->lock);
    return rv;
}

void rs_scanpipe_finish(rs_scan_ctx_t *sc)
{
    rs_scanpipe_t *pp = sc->pipe;
    rs_scan_stats_t *s = sc->stats, *w = &pp->wstats;
    apr_status_t trv;

    flush(sc);
    apr_thread_mutex_lock(pp->lock);
    pp->closing = 1;
    apr_thread_cond_broadcast(pp->cond);
    apr_thread_mutex_unlock(pp->lock);
    apr_thread_join(&trv, pp->thread);
    while (pp->nspare > 0) {
        apr_pool_destroy(pp->spare[--pp->nspare]);
    }
    sc->pipe = NULL;
    s->written += w->written;
    s->removed += w->removed;
    s->listed += w->listed;
    s->hashed += w->hashed;
    s->deleted += w->deleted;
    s->deferred += w->deferred;
    sc->pending = pp->w.pending;
    if (pp->w.err != APR_SUCCESS && sc->err == APR_SUCCESS) {
        sc->err = pp->w.err;
    }
}
