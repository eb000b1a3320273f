/* SPDX-License-Identifier: Apache-2.0 */
/* rs_scanwrite.c - see rs_scanwrite.h */
#include <string.h>
#include "rs_invbatch.h"
#include "rs_scanwrite.h"

#define RS_SCAN_BATCH 20000 /* writes per transaction */

/* Note a failed store call: the scan stops with the first failure's
 * status (its cause, e.g. "No space left on device", reaches the log).
 * Returns 1 if rv is a failure. */
int rs_scanwrite_failed(rs_scan_ctx_t *sc, apr_status_t rv)
{
    if (rv == APR_SUCCESS) {
        return 0;
    }
    if (sc->err == APR_SUCCESS) {
        sc->err = rv;
    }
    return 1;
}

void rs_scanwrite_flush(rs_scan_ctx_t *sc)
{
    /* After a failure the transaction is rolled back at its end: what
     * waits is dropped, not sent to fail (and be logged) again. */
    if (sc->batch && sc->err != APR_SUCCESS) {
        rs_invbatch_discard(sc->batch);
    }
    else if (sc->batch) {
        rs_scanwrite_failed(sc, rs_invbatch_flush(sc->batch));
    }
}

void rs_scanwrite_discard(rs_scan_ctx_t *sc)
{
    if (sc->batch) {
        rs_invbatch_discard(sc->batch);
    }
}

/* Store row it: into the full scan's batch, or at once. */
static void put(rs_scan_ctx_t *sc, const rs_item_t *it)
{
    rs_scanwrite_failed(sc, sc->batch ? rs_invbatch_put(sc->batch, it)
                                      : rs_inventory_put(sc->st, sc->o->set, it));
}

void rs_scanwrite_count(rs_scan_ctx_t *sc)
{
    /* Under the mass-deletion guard, nothing is committed after the first
     * deletion: the whole rest may have to be rolled back. */
    if (++sc->pending >= RS_SCAN_BATCH && !(sc->o->max_deleted && sc->stats->deleted)) {
        rs_scanwrite_flush(sc);
        if (!rs_scanwrite_failed(sc, rs_db_commit(sc->st))) {
            rs_scanwrite_failed(sc, rs_db_begin_set(sc->st, sc->o->set));
        }
        sc->pending = 0;
    }
}

/* Two strings that may be NULL (none) are the same. */
static int same_str(const char *a, const char *b)
{
    return a ? b && !strcmp(a, b) : !b;
}

static int same_hashes(const rs_item_t *a, const rs_item_t *b)
{
    int i;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        const char *x = a->hash[i], *y = b->hash[i];
        if (x && y && strcmp(x, y)) {
            return 0;
        }
    }
    return 1;
}

/* Tell the caller of a change; its failure (with its cause) stops the
 * scan. */
void rs_scanwrite_notify(rs_scan_ctx_t *sc, int change, const rs_item_t *it)
{
    apr_status_t rv;
    if (change == RS_CHANGE_DELETED) {
        sc->stats->deleted++;
    }
    if (sc->o->on_change && sc->err == APR_SUCCESS
        && (rv = sc->o->on_change(sc->o->change_baton, change, it)) != APR_SUCCESS) {
        sc->err = rv;
    }
}

/* What a new row means for the listing, given the stored one. */
static void notify_row(rs_scan_ctx_t *sc, const rs_item_t *old, const rs_item_t *now)
{
    if (now->listed && (!old || !old->listed)) {
        rs_scanwrite_notify(sc, RS_CHANGE_CREATED, now);
    }
    else if (now->listed) {
        if (old->size != now->size || old->mtime_ns != now->mtime_ns || !same_hashes(old, now)
            || !same_str(old->type, now->type) || !same_str(old->encoding, now->encoding)) {
            rs_scanwrite_notify(sc, RS_CHANGE_UPDATED, now);
        }
    }
    else if (old && old->listed) {
        rs_scanwrite_notify(sc, RS_CHANGE_DELETED, old);
    }
}

void rs_scanwrite_links_done(rs_scan_ctx_t *sc, const char *dir, const char *name, int gone)
{
    if (sc->o->links_done && sc->err == APR_SUCCESS) {
        rs_scanwrite_flush(sc); /* it reads the rows */
        rs_scanwrite_failed(sc, sc->o->links_done(sc->o->links_baton, dir, name, gone));
    }
}

/* Store row it (old: as stored) and report it. */
static void put_row(rs_scan_ctx_t *sc, const rs_item_t *it, const rs_item_t *old)
{
    put(sc, it);
    notify_row(sc, old, it);
    rs_scanwrite_links_done(sc, it->dir, it->name, 0);
    rs_scanwrite_count(sc);
}

/* rs_scan_emit_fn: a row links_scan held, new (a fresh scan has no
 * stored row). */
static void emit_row(void *emit_baton, const rs_item_t *it)
{
    put_row(emit_baton, it, NULL);
}

void rs_scanwrite_row(rs_scan_ctx_t *sc, const rs_item_t *it, const rs_item_t *old,
                      apr_int64_t hashed)
{
    rs_item_t row;
    int held = 0;

    /* Its links first, so that the row and its record carry them. */
    if (sc->o->links_row) {
        rs_scanwrite_flush(sc); /* it reads the rows */
        row = *it;
        if (rs_scanwrite_failed(sc,
                                sc->o->links_row(sc->o->links_baton, &row, old && old->listed))) {
            return;
        }
        it = &row;
    }
    else if (sc->o->links_scan && sc->fresh && it->listed) {
        row = *it;
        held = sc->o->links_scan(sc->o->links_scan_baton, &row, emit_row, sc);
        it = &row;
    }
    sc->stats->written++;
    sc->stats->listed += it->listed;
    sc->stats->hashed += hashed;
    if (!held) {
        put_row(sc, it, old);
    }
}

void rs_scanwrite_links_end(rs_scan_ctx_t *sc)
{
    if (sc->o->links_scan && sc->fresh && sc->err == APR_SUCCESS) {
        (void)sc->o->links_scan(sc->o->links_scan_baton, NULL, emit_row, sc);
    }
}

void rs_scanwrite_access(rs_scan_ctx_t *sc, const rs_item_t *it)
{
    put(sc, it);
    sc->stats->written++;
    rs_scanwrite_count(sc);
}

void rs_scanwrite_drop(rs_scan_ctx_t *sc, const char *dir, const char *name, const rs_item_t *row)
{
    /* A delete commutes with the waiting rows unless one is this. */
    if (sc->batch && rs_invbatch_holds(sc->batch, dir, name)) {
        rs_scanwrite_flush(sc);
    }
    rs_scanwrite_failed(sc, rs_inventory_delete(sc->st, sc->o->set, dir, name));
    if (row->listed) {
        rs_scanwrite_notify(sc, RS_CHANGE_DELETED, row);
        rs_scanwrite_links_done(sc, dir, name, 1);
    }
    sc->stats->removed++;
    rs_scanwrite_count(sc);
}
