/* SPDX-License-Identifier: Apache-2.0 */
/* rs_invbatch.c - see rs_invbatch.h */
#include <stdlib.h>
#include <string.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "rs_invbatch.h"
#include "rs_inventory_sql.h"

/* The statements of 64, 32, ..., 2 rows (one row: rs_inventory_put's). */
#define R2  PUT_ROW ", " PUT_ROW
#define R4  R2 ", " R2
#define R8  R4 ", " R4
#define R16 R8 ", " R8
#define R32 R16 ", " R16
#define R64 R32 ", " R32

#define SIZES 6
static const int sizes[SIZES] = { 64, 32, 16, 8, 4, 2 };
static const char *const sql[SIZES] = { PUT_ROWS(R64), PUT_ROWS(R32), PUT_ROWS(R16),
                                        PUT_ROWS(R8),  PUT_ROWS(R4),  PUT_ROWS(R2) };

#if RS_INVBATCH_ROWS != 64
#error "RS_INVBATCH_ROWS must be the size of the largest statement"
#endif

struct rs_invbatch_t {
    rs_db_t *db;
    const char *set;
    apr_pool_t *own;    /* the batch's, on an allocator of its own */
    apr_pool_t *copies; /* the waiting rows' strings, cleared at each flush */
    apr_hash_t *keys;   /* "dir\0name" of the waiting rows (in own; cleared) */
    rs_item_t rows[RS_INVBATCH_ROWS];
    int n; /* rows waiting */
    apr_int64_t statements;
    const void *args[RS_INVBATCH_ROWS * RS_INVENTORY_PUT_ARGS];
};

rs_invbatch_t *rs_invbatch_create(apr_pool_t *p, rs_db_t *db, const char *set)
{
    apr_allocator_t *alloc;
    apr_pool_t *own;
    rs_invbatch_t *b;

    apr_allocator_create(&alloc);
    apr_pool_create_ex(&own, p, NULL, alloc);
    apr_allocator_owner_set(alloc, own);
    b = apr_pcalloc(own, sizeof(*b));
    b->db = db;
    b->set = apr_pstrdup(own, set);
    b->own = own;
    apr_pool_create(&b->copies, own);
    b->keys = apr_hash_make(own);
    return b;
}

/* The key of dir/name into buf (of size cap), or malloc'd when it does
 * not fit (*len: its length). */
static char *key_of(char *buf, apr_size_t cap, const char *dir, const char *name, apr_size_t *len)
{
    apr_size_t dl = strlen(dir), nl = strlen(name);
    char *k = dl + nl + 2 <= cap ? buf : malloc(dl + nl + 2);
    if (k) {
        memcpy(k, dir, dl + 1);
        memcpy(k + dl + 1, name, nl + 1);
    }
    *len = dl + nl + 1;
    return k;
}

int rs_invbatch_holds(const rs_invbatch_t *b, const char *dir, const char *name)
{
    char buf[1024], *k;
    apr_size_t len;
    int held;

    if (!b->n) {
        return 0;
    }
    /* Without memory to ask, it may be held: the caller flushes. */
    if (!(k = key_of(buf, sizeof(buf), dir, name, &len))) {
        return 1;
    }
    held = apr_hash_get(b->keys, k, (apr_ssize_t)len) != NULL;
    if (k != buf) {
        free(k);
    }
    return held;
}

void rs_invbatch_discard(rs_invbatch_t *b)
{
    b->n = 0;
    apr_hash_clear(b->keys);
    apr_pool_clear(b->copies);
}

/* Write rows [from, from + size) in one statement (size > 1). */
static apr_status_t write_rows(rs_invbatch_t *b, int from, int size, const char *q)
{
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(b->db, q, &s);
    int i;

    if (rv != APR_SUCCESS) {
        return rv;
    }
    for (i = 0; i < size; i++) {
        rs_inventory_put_args(b->set, &b->rows[from + i], b->args + i * RS_INVENTORY_PUT_ARGS);
    }
    b->statements++;
    return rs_db_exec(b->db, s, b->args, NULL);
}

apr_status_t rs_invbatch_flush(rs_invbatch_t *b)
{
    apr_status_t rv = APR_SUCCESS;
    int i = 0, k;

    /* The largest statements first: a tail of t rows takes one statement
     * per bit of t. */
    for (k = 0; k < SIZES && rv == APR_SUCCESS; k++) {
        while (rv == APR_SUCCESS && b->n - i >= sizes[k]) {
            rv = write_rows(b, i, sizes[k], sql[k]);
            i += sizes[k];
        }
    }
    if (rv == APR_SUCCESS && i < b->n) {
        b->statements++;
        rv = rs_inventory_put(b->db, b->set, &b->rows[i]);
    }
    rs_invbatch_discard(b);
    /* A large directory is one transaction: its lease renewed as it goes. */
    return rv == APR_SUCCESS ? rs_db_fence_again(b->db) : rv;
}

apr_status_t rs_invbatch_put(rs_invbatch_t *b, const rs_item_t *it)
{
    apr_status_t rv = APR_SUCCESS;
    apr_size_t len;
    char *k;

    /* One statement holds a key once: the waiting row goes first. */
    if (rs_invbatch_holds(b, it->dir, it->name) && (rv = rs_invbatch_flush(b)) != APR_SUCCESS) {
        return rv;
    }
    rs_inventory_item_copy(b->copies, &b->rows[b->n], it);
    /* The key in the row's own copies: dir and name, side by side. */
    len = strlen(it->dir) + strlen(it->name) + 1;
    k = apr_palloc(b->copies, len + 1);
    memcpy(k, it->dir, strlen(it->dir) + 1);
    memcpy(k + strlen(it->dir) + 1, it->name, strlen(it->name) + 1);
    apr_hash_set(b->keys, k, (apr_ssize_t)len, "");
    if (++b->n == RS_INVBATCH_ROWS) {
        rv = rs_invbatch_flush(b);
    }
    return rv;
}

apr_int64_t rs_invbatch_statements(const rs_invbatch_t *b)
{
    return b->statements;
}
