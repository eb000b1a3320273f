/* SPDX-License-Identifier: Apache-2.0 */
/* test_inventory.c - rs_inventory: the inventory table on rs_db (SQLite) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include <apr_time.h>
#include "unit.h"
#include "rs_inventory.h"
#include "rs_invbatch.h"
#include "rs_schema.h"

static rs_db_t *open_store(ut_log_t *ul)
{
    rs_db_t *st = NULL;
    const char *db = ut_path(ut_tempdir("store"), "state.db");
    apr_status_t rv = rs_schema_open(&st, ut_pool, ut_driver, ut_store(db), ut_log_init(ul));
    ck_assert_msg(rv == APR_SUCCESS, "rs_db_open: %d", rv);
    ck_assert_ptr_nonnull(st);
    return st;
}

static rs_item_t item(const char *dir, const char *name, apr_int64_t size, int listed)
{
    rs_item_t it;
    memset(&it, 0, sizeof(it));
    it.dir = dir;
    it.name = name;
    it.size = size;
    it.mtime_ns = 1700000000123456789LL + size;
    it.ctime_ns = 1700000001000000000LL + size;
    it.dev = 2049;
    it.ino = 1000 + size;
    it.type = "text/plain";
    it.hash[0] = "900150983cd24fb0d6963f7d28e17f72";
    it.hash[2] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    it.listed = listed;
    it.cfg = "fp1";
    return it;
}

static void put(rs_db_t *st, const char *set, rs_item_t it)
{
    ck_assert_int_eq(rs_inventory_put(st, set, &it), APR_SUCCESS);
}

static apr_int64_t count(rs_db_t *st, const char *set)
{
    apr_int64_t n = -1;
    ck_assert_int_eq(rs_inventory_count(st, set, &n), APR_SUCCESS);
    return n;
}

static rs_item_t *get(rs_db_t *st, const char *set, const char *dir, const char *name)
{
    apr_hash_t *h = NULL;
    ck_assert_int_eq(rs_inventory_dir_load(st, ut_pool, set, dir, &h), APR_SUCCESS);
    ck_assert_ptr_nonnull(h);
    return apr_hash_get(h, name, APR_HASH_KEY_STRING);
}

static int dir_rows(rs_db_t *st, const char *set, const char *dir)
{
    apr_hash_t *h = NULL;
    ck_assert_int_eq(rs_inventory_dir_load(st, ut_pool, set, dir, &h), APR_SUCCESS);
    return (int)apr_hash_count(h);
}

static void assert_same(const rs_item_t *a, const rs_item_t *b)
{
    int i;
    ck_assert_str_eq(a->dir, b->dir);
    ck_assert_str_eq(a->name, b->name);
    ck_assert_int_eq(a->size, b->size);
    ck_assert_int_eq(a->mtime_ns, b->mtime_ns);
    ck_assert_int_eq(a->ctime_ns, b->ctime_ns);
    ck_assert_int_eq(a->dev, b->dev);
    ck_assert_int_eq(a->ino, b->ino);
    ck_assert_pstr_eq(a->type, b->type);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        ck_assert_pstr_eq(a->hash[i], b->hash[i]);
    }
    ck_assert_int_eq(a->listed, b->listed);
    ck_assert_pstr_eq(a->cfg, b->cfg);
}

START_TEST(put_and_load)
{
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);
    rs_item_t a = item("", "a.txt", 5, 1), b = item("sub", "b.txt", 7, 1), *r;

    /* Values beyond 32 bits and before 1970 survive. */
    a.dev = 0x7fffffff12345678LL;
    a.ino = 1LL << 40;
    a.mtime_ns = -1234567890123456789LL;
    a.hash[1] = "a9993e364706816aba3e25717850c26c9cd0d89d";
    a.hash[3] = "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f";
    put(st, "s", a);
    put(st, "s", b);

    r = get(st, "s", "", "a.txt");
    ck_assert_ptr_nonnull(r);
    assert_same(r, &a);
    ck_assert_int_eq(dir_rows(st, "s", ""), 1);
    r = get(st, "s", "sub", "b.txt");
    ck_assert_ptr_nonnull(r);
    assert_same(r, &b);
    ck_assert_int_eq(dir_rows(st, "s", "nope"), 0);
    ck_assert_int_eq(dir_rows(st, "other", ""), 0);
    ck_assert_int_eq(count(st, "s"), 2);
    ck_assert_int_eq(count(st, "other"), 0);
    ck_assert_int_eq(ul.nerr, 0);
}
END_TEST

/* rs_inventory_any: a set with only an unlisted row has rows. */
START_TEST(any_rows)
{
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);
    int any = -1;

    ck_assert_int_eq(rs_inventory_any(st, "s", &any), APR_SUCCESS);
    ck_assert_int_eq(any, 0);
    put(st, "s", item("d", "hidden", 1, 0));
    ck_assert_int_eq(rs_inventory_any(st, "s", &any), APR_SUCCESS);
    ck_assert_int_eq(any, 1);
    ck_assert_int_eq(rs_inventory_any(st, "t", &any), APR_SUCCESS);
    ck_assert_int_eq(any, 0);
    ck_assert_int_eq(count(st, "s"), 0);
    ck_assert_int_eq(ul.nerr, 0);
}
END_TEST

START_TEST(upsert)
{
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);
    rs_item_t a = item("d", "a.txt", 5, 1), *r;

    put(st, "s", a);
    a.size = 99;
    a.mtime_ns = 1;
    a.ctime_ns = 2;
    a.ino = 3;
    a.type = "image/png";
    a.hash[0] = NULL;
    a.hash[2] = "00";
    a.listed = 0;
    a.cfg = "fp2";
    put(st, "s", a);
    ck_assert_int_eq(dir_rows(st, "s", "d"), 1);
    r = get(st, "s", "d", "a.txt");
    assert_same(r, &a);
    ck_assert_int_eq(count(st, "s"), 0); /* unlisted now */
    a.listed = 1;
    put(st, "s", a);
    ck_assert_int_eq(count(st, "s"), 1);
}
END_TEST

/* rs_inventory_each_fn: the row's encoding into *baton. */
static int encoding_of(void *baton, const rs_item_t *it)
{
    *(const char **)baton = it->encoding ? apr_pstrdup(ut_pool, it->encoding) : NULL;
    return 0;
}

START_TEST(null_fields)
{
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);
    rs_item_t a = item("", "n", 0, 1), *r;
    int i;

    a.type = NULL;
    a.encoding = NULL;
    a.cfg = NULL;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        a.hash[i] = NULL;
    }
    put(st, "s", a);
    r = get(st, "s", "", "n");
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_null(r->type);
    ck_assert_ptr_null(r->encoding);
    ck_assert_ptr_null(r->cfg);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        ck_assert_ptr_null(r->hash[i]);
    }
    ck_assert_int_eq(r->size, 0);
    ck_assert_int_eq(r->listed, 1);

    /* And back to values. */
    a.type = "text/html";
    a.encoding = "gzip";
    a.hash[3] = "ff";
    put(st, "s", a);
    r = get(st, "s", "", "n");
    ck_assert_str_eq(r->type, "text/html");
    ck_assert_str_eq(r->encoding, "gzip");
    ck_assert_ptr_null(r->hash[0]);
    ck_assert_str_eq(r->hash[3], "ff");
    /* every way of reading a row gives the content coding */
    {
        apr_array_header_t *page;
        int fields;
        ck_assert_int_eq(rs_inventory_page(st, ut_pool, "s", NULL, NULL, 10, &page), APR_SUCCESS);
        ck_assert_int_eq(page->nelts, 1);
        ck_assert_str_eq(APR_ARRAY_IDX(page, 0, rs_item_t).encoding, "gzip");
        ck_assert_str_eq(APR_ARRAY_IDX(page, 0, rs_item_t).hash[3], "ff");
        for (fields = RS_INVENTORY_ROW; fields <= RS_INVENTORY_LISTING; fields++) {
            const char *seen = NULL;
            ck_assert_int_eq(rs_inventory_each(st, "s", NULL, NULL, 10, fields, encoding_of, &seen),
                             APR_SUCCESS);
            ck_assert_pstr_eq(seen, "gzip");
        }
        /* and back to none */
        a.encoding = NULL;
        put(st, "s", a);
        ck_assert_ptr_null(get(st, "s", "", "n")->encoding);
    }
}
END_TEST

START_TEST(byte_names)
{
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);
    static const char *const names[] = {
        "caf\xC3\xA9.txt", "caf\xE9.txt", "\xFF\xFE", "a b&c<d>\"e'f", "100%.txt", "x\x01y", NULL
    };
    int i;
    for (i = 0; names[i]; i++) {
        put(st, "s", item("d\xE9r", names[i], i, 1));
    }
    ck_assert_int_eq(dir_rows(st, "s", "d\xE9r"), i);
    for (i = 0; names[i]; i++) {
        rs_item_t *r = get(st, "s", "d\xE9r", names[i]);
        ck_assert_msg(r != NULL, "row %d missing", i);
        ck_assert_str_eq(r->name, names[i]);
        ck_assert_str_eq(r->dir, "d\xE9r");
        ck_assert_int_eq(r->size, i);
    }
}
END_TEST

START_TEST(delete_rows)
{
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);

    put(st, "s", item("", "a", 1, 1));
    put(st, "s", item("", "b", 2, 1));
    put(st, "s", item("d", "a", 3, 1));
    put(st, "t", item("", "a", 4, 1));
    ck_assert_int_eq(rs_inventory_delete(st, "s", "", "a"), APR_SUCCESS);
    ck_assert_ptr_null(get(st, "s", "", "a"));
    ck_assert_ptr_nonnull(get(st, "s", "", "b"));
    ck_assert_ptr_nonnull(get(st, "s", "d", "a"));
    ck_assert_ptr_nonnull(get(st, "t", "", "a"));
    ck_assert_int_eq(count(st, "s"), 2);
    /* Deleting what is not there is not an error. */
    ck_assert_int_eq(rs_inventory_delete(st, "s", "", "a"), APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_delete(st, "nope", "x", "y"), APR_SUCCESS);

    ck_assert_int_eq(rs_inventory_delete_set(st, "s"), APR_SUCCESS);
    ck_assert_int_eq(count(st, "s"), 0);
    ck_assert_int_eq(dir_rows(st, "s", "d"), 0);
    ck_assert_int_eq(count(st, "t"), 1);
}
END_TEST

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The set's directories, sorted and joined with "|". */
static const char *dirs_of(rs_db_t *st, const char *set)
{
    apr_array_header_t *d = NULL;
    ck_assert_int_eq(rs_inventory_dirs(st, ut_pool, set, &d), APR_SUCCESS);
    qsort(d->elts, (size_t)d->nelts, sizeof(char *), cmp_str);
    return apr_array_pstrcat(ut_pool, d, '|');
}

START_TEST(delete_tree_and_dirs)
{
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);
    static const char *const dirs[] = { "",    "a",  "a/b", "a/b/c", "a/\xE9", "a.b", "a-b",
                                        "a b", "a0", "ab",  "a\xE9", "b/a",    "x/a", NULL };
    int i;

    for (i = 0; dirs[i]; i++) {
        put(st, "s", item(dirs[i], "f1", i, 1));
        put(st, "s", item(dirs[i], "f2", i, i % 2));
    }
    put(st, "t", item("a", "f", 0, 1));
    /* Each directory once, also those with only unlisted rows. */
    ck_assert_str_eq(dirs_of(st, "s"), "|a|a b|a-b|a.b|a/b|a/b/c|a/\xE9|a0|ab|a\xE9|b/a|x/a");
    ck_assert_int_eq(count(st, "s"), 13 + 6);

    ck_assert_int_eq(rs_inventory_delete_tree(st, "s", "a"), APR_SUCCESS);
    ck_assert_str_eq(dirs_of(st, "s"), "|a b|a-b|a.b|a0|ab|a\xE9|b/a|x/a");
    ck_assert_int_eq(dir_rows(st, "s", "a/b/c"), 0);
    ck_assert_int_eq(dir_rows(st, "s", "a.b"), 2);
    ck_assert_int_eq(dir_rows(st, "t", "a"), 1); /* other set untouched */

    /* "b" takes "b/a" only; a directory without rows is no error. */
    ck_assert_int_eq(rs_inventory_delete_tree(st, "s", "b"), APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_delete_tree(st, "s", "nope"), APR_SUCCESS);
    ck_assert_str_eq(dirs_of(st, "s"), "|a b|a-b|a.b|a0|ab|a\xE9|x/a");

    /* "" is the root: everything goes. */
    ck_assert_int_eq(rs_inventory_delete_tree(st, "s", ""), APR_SUCCESS);
    ck_assert_str_eq(dirs_of(st, "s"), "");
    ck_assert_int_eq(count(st, "s"), 0);
    ck_assert_int_eq(count(st, "t"), 1);
}
END_TEST

typedef struct {
    const char *dir, *name;
} ukey_t;

static int cmp_key(const void *a, const void *b)
{
    const ukey_t *x = a, *y = b;
    int c = strcmp(x->dir, y->dir);
    return c ? c : strcmp(x->name, y->name);
}

START_TEST(paging)
{
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);
    static const char *const dirs[] = { "", "a", "a b", "a/b", "B", "\xC3\xA9", "\xE9", NULL };
    static const char *const names[] = { "z",        "a",    "B",    "_", "Z", "a b", "a.txt",
                                         "\xC3\xA9", "\xE9", "\xFF", "0", "~", NULL };
    ukey_t want[7 * 12];
    int nwant = 0, i, j, limit;
    apr_int64_t sz = 0;

    ck_assert_int_eq(rs_db_begin(st), APR_SUCCESS);
    for (i = 0; dirs[i]; i++) {
        for (j = 0; names[j]; j++) {
            int listed = (i + j) % 5 != 0;
            put(st, "s", item(dirs[i], names[j], sz++, listed));
            if (listed) {
                want[nwant].dir = dirs[i];
                want[nwant].name = names[j];
                nwant++;
            }
        }
    }
    put(st, "other", item("a", "m", 0, 1));
    ck_assert_int_eq(rs_db_commit(st), APR_SUCCESS);
    qsort(want, (size_t)nwant, sizeof(ukey_t), cmp_key);
    ck_assert_int_eq(count(st, "s"), nwant);

    for (limit = 1; limit <= nwant + 1; limit += (limit < 5 ? 1 : 17)) {
        const char *ad = NULL, *an = NULL;
        int got = 0;
        for (;;) {
            apr_array_header_t *rows = NULL;
            ck_assert_int_eq(rs_inventory_page(st, ut_pool, "s", ad, an, limit, &rows),
                             APR_SUCCESS);
            ck_assert_int_le(rows->nelts, limit);
            for (i = 0; i < rows->nelts; i++) {
                const rs_item_t *it = &APR_ARRAY_IDX(rows, i, rs_item_t);
                ck_assert_int_lt(got, nwant);
                ck_assert_msg(!strcmp(it->dir, want[got].dir) && !strcmp(it->name, want[got].name),
                              "limit %d, row %d: got (%s,%s), want (%s,%s)", limit, got, it->dir,
                              it->name, want[got].dir, want[got].name);
                ck_assert_int_eq(it->listed, 1);
                ck_assert_str_eq(it->type, "text/plain");
                got++;
            }
            if (rows->nelts < limit) {
                break;
            }
            ad = APR_ARRAY_IDX(rows, rows->nelts - 1, rs_item_t).dir;
            an = APR_ARRAY_IDX(rows, rows->nelts - 1, rs_item_t).name;
        }
        ck_assert_int_eq(got, nwant);
    }
}
END_TEST

START_TEST(page_after_last)
{
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);
    apr_array_header_t *rows = NULL;

    ck_assert_int_eq(rs_inventory_page(st, ut_pool, "s", NULL, NULL, 10, &rows), APR_SUCCESS);
    ck_assert_int_eq(rows->nelts, 0);
    put(st, "s", item("d", "x", 1, 1));
    put(st, "s", item("d", "y", 2, 1));
    ck_assert_int_eq(rs_inventory_page(st, ut_pool, "s", "d", "y", 10, &rows), APR_SUCCESS);
    ck_assert_int_eq(rows->nelts, 0);
    ck_assert_int_eq(rs_inventory_page(st, ut_pool, "s", "d", "x", 10, &rows), APR_SUCCESS);
    ck_assert_int_eq(rows->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(rows, 0, rs_item_t).name, "y");
    ck_assert_int_eq(APR_ARRAY_IDX(rows, 0, rs_item_t).size, 2);
    /* A key between rows. */
    ck_assert_int_eq(rs_inventory_page(st, ut_pool, "s", "c", "zzz", 10, &rows), APR_SUCCESS);
    ck_assert_int_eq(rows->nelts, 2);
    ck_assert_int_eq(rs_inventory_page(st, ut_pool, "s", "d", "", 1, &rows), APR_SUCCESS);
    ck_assert_int_eq(rows->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(rows, 0, rs_item_t).name, "x");
}
END_TEST

/* Rows of rs_inventory_each, copied (their strings live for the call). */
typedef struct {
    apr_array_header_t *rows;
    int stop_at;
} each_t;

static int each_item(void *baton, const rs_item_t *it)
{
    each_t *e = baton;
    rs_item_t *c = apr_array_push(e->rows);
    int i;
    *c = *it;
    c->dir = apr_pstrdup(ut_pool, it->dir);
    c->name = apr_pstrdup(ut_pool, it->name);
    c->type = it->type ? apr_pstrdup(ut_pool, it->type) : NULL;
    c->cfg = it->cfg ? apr_pstrdup(ut_pool, it->cfg) : NULL;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        c->hash[i] = it->hash[i] ? apr_pstrdup(ut_pool, it->hash[i]) : NULL;
    }
    return e->rows->nelts == e->stop_at;
}

/* rs_inventory_each: the listed rows in listing order with every column
 * as written (integers beyond a double's precision, empty strings as
 * NULL), after a key, up to a limit, and stopped by the callback. */
START_TEST(each_streams_listed_rows)
{
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);
    rs_item_t a = item("d", "b", 1, 1), b = item("", "z", 2, 1), c = item("d", "a", 3, 1);
    rs_item_t hidden = item("d", "c", 4, 0), *r;
    each_t e;

    a.size = 9007199254740993LL;
    a.type = "";
    a.hash[1] = "";
    b.mtime_ns = -1;
    put(st, "s", a);
    put(st, "s", b);
    put(st, "s", c);
    put(st, "s", hidden);
    put(st, "t", item("d", "a", 5, 1));
    e.rows = apr_array_make(ut_pool, 4, sizeof(rs_item_t));
    e.stop_at = 0;
    ck_assert_int_eq(rs_inventory_each(st, "s", NULL, NULL, 10, RS_INVENTORY_ROW, each_item, &e),
                     APR_SUCCESS);
    ck_assert_int_eq(e.rows->nelts, 3);
    assert_same(&APR_ARRAY_IDX(e.rows, 0, rs_item_t), &b);
    a.type = NULL;
    a.hash[1] = NULL;
    assert_same(&APR_ARRAY_IDX(e.rows, 1, rs_item_t), &c);
    assert_same(&APR_ARRAY_IDX(e.rows, 2, rs_item_t), &a);

    apr_array_clear(e.rows);
    ck_assert_int_eq(rs_inventory_each(st, "s", "", "z", 1, RS_INVENTORY_ROW, each_item, &e),
                     APR_SUCCESS);
    ck_assert_int_eq(e.rows->nelts, 1);
    r = &APR_ARRAY_IDX(e.rows, 0, rs_item_t);
    assert_same(r, &c);

    /* What a document lists: the rest is left out. */
    apr_array_clear(e.rows);
    ck_assert_int_eq(rs_inventory_each(st, "s", "d", "a", 10, RS_INVENTORY_LISTING, each_item, &e),
                     APR_SUCCESS);
    ck_assert_int_eq(e.rows->nelts, 1);
    r = &APR_ARRAY_IDX(e.rows, 0, rs_item_t);
    ck_assert_str_eq(r->dir, "d");
    ck_assert_str_eq(r->name, "b");
    ck_assert(r->size == 9007199254740993LL);
    ck_assert(r->mtime_ns == a.mtime_ns);
    ck_assert_ptr_null(r->type);
    ck_assert_str_eq(r->hash[0], a.hash[0]);
    ck_assert_ptr_null(r->hash[1]);
    ck_assert_str_eq(r->hash[2], a.hash[2]);
    ck_assert_ptr_null(r->hash[3]);
    ck_assert(r->ctime_ns == 0 && r->dev == 0 && r->ino == 0);
    ck_assert_int_eq(r->listed, 1);
    ck_assert_ptr_null(r->cfg);

    apr_array_clear(e.rows);
    e.stop_at = 2;
    ck_assert_int_eq(rs_inventory_each(st, "s", NULL, NULL, 10, RS_INVENTORY_ROW, each_item, &e),
                     APR_SUCCESS);
    ck_assert_int_eq(e.rows->nelts, 2);
}
END_TEST

START_TEST(transactions_and_reopen)
{
    ut_log_t ul;
    const char *db = ut_path(ut_tempdir("store"), "state.db");
    apr_pool_t *p1, *p2;
    rs_db_t *st = NULL, *st2 = NULL;
    rs_item_t *r;

    /* Commit without a transaction is a no-op. */
    ck_assert_int_eq(apr_pool_create(&p1, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_schema_open(&st, p1, ut_driver, ut_store(db), ut_log_init(&ul)),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(st), APR_SUCCESS);
    ck_assert_int_eq(rs_db_begin(st), APR_SUCCESS);
    put(st, "s", item("d", "a", 1, 1));
    put(st, "s", item("d", "b", 2, 0));
    ck_assert_int_eq(rs_db_meta_put(st, "gen", "7"), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(st), APR_SUCCESS);
    ck_assert_int_eq(rs_db_begin(st), APR_SUCCESS);
    put(st, "s", item("d", "c", 3, 1));
    ck_assert_int_eq(rs_db_commit(st), APR_SUCCESS);
    apr_pool_destroy(p1); /* closes the database */

    ck_assert_int_eq(apr_pool_create(&p2, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_schema_open(&st2, p2, ut_driver, ut_store(db), ut_log_init(&ul)),
                     APR_SUCCESS);
    ck_assert_int_eq(count(st2, "s"), 2);
    ck_assert_int_eq(dir_rows(st2, "s", "d"), 3);
    r = get(st2, "s", "d", "b");
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->listed, 0);
    {
        const char *v = NULL;
        ck_assert_int_eq(rs_db_meta_get(st2, ut_pool, "gen", &v), APR_SUCCESS);
        ck_assert_str_eq(v, "7");
    }
    apr_pool_destroy(p2);
    ck_assert_int_eq(ul.nerr, 0);
}
END_TEST

START_TEST(failed_statement_fails_commit)
{
    /* A statement that fails inside a transaction makes the driver roll
     * the whole transaction back; the commit must say so. */
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);
    rs_item_t bad = item("d", "x", 9, 1);

    ck_assert_int_eq(rs_db_begin(st), APR_SUCCESS);
    put(st, "s", item("d", "a", 1, 1));
    bad.name = NULL; /* violates NOT NULL */
    ck_assert_int_ne(rs_inventory_put(st, "s", &bad), APR_SUCCESS);
    ck_assert_int_ne(rs_db_commit(st), APR_SUCCESS);
    ck_assert_int_eq(count(st, "s"), 0); /* the good row went too */
    ck_assert_int_gt(ul.nerr, 0);

    /* The next transaction starts clean. */
    ck_assert_int_eq(rs_db_begin(st), APR_SUCCESS);
    put(st, "s", item("d", "a", 1, 1));
    ck_assert_int_eq(rs_db_commit(st), APR_SUCCESS);
    ck_assert_int_eq(count(st, "s"), 1);
}
END_TEST

START_TEST(delete_dir_counts)
{
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);
    apr_int64_t n = -1;

    put(st, "s", item("a", "1", 1, 1));
    put(st, "s", item("a", "2", 2, 0));
    put(st, "s", item("a/b", "3", 3, 1));
    put(st, "t", item("a", "4", 4, 1));
    ck_assert_int_eq(rs_inventory_delete_dir(st, "s", "a", &n), APR_SUCCESS);
    ck_assert_int_eq(n, 2); /* listed or not, not a/b */
    ck_assert_int_eq(dir_rows(st, "s", "a/b"), 1);
    ck_assert_int_eq(dir_rows(st, "t", "a"), 1);
    ck_assert_int_eq(rs_inventory_delete_dir(st, "s", "a", &n), APR_SUCCESS);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(ul.nerr, 0);
}
END_TEST

START_TEST(two_handles)
{
    /* A reader handle sees what the writer committed (WAL mode). */
    ut_log_t ul;
    const char *db = ut_path(ut_tempdir("store"), "state.db");
    rs_db_t *w = NULL, *r = NULL;

    ck_assert_int_eq(rs_schema_open(&w, ut_pool, ut_driver, ut_store(db), ut_log_init(&ul)),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_schema_open(&r, ut_pool, ut_driver, ut_store(db), &ul.logger), APR_SUCCESS);
    ck_assert_int_eq(rs_db_begin(w), APR_SUCCESS);
    put(w, "s", item("", "a", 1, 1));
    ck_assert_int_eq(count(r, "s"), 0);
    ck_assert_int_eq(rs_db_commit(w), APR_SUCCESS);
    ck_assert_int_eq(count(r, "s"), 1);
}
END_TEST

static int copy_all(void *baton, const rs_item_t *it)
{
    apr_array_header_t *out = baton;
    rs_item_t *c = apr_array_push(out);
    *c = *it;
    c->name = apr_pstrdup(ut_pool, it->name);
    c->cfg = it->cfg ? apr_pstrdup(ut_pool, it->cfg) : NULL;
    return 0;
}

/* The status of a store: its sets in byte order (one lookup each), each
 * set's listed files, bytes and newest modification; every row of a set,
 * listed or not, with every column (a copy of the set). */
START_TEST(sets_summary_and_every_row)
{
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);
    apr_array_header_t *sets, *all = apr_array_make(ut_pool, 4, sizeof(rs_item_t));
    rs_inventory_summary_t s;
    const rs_item_t *r;

    ck_assert_int_eq(rs_inventory_sets(st, ut_pool, &sets), APR_SUCCESS);
    ck_assert_int_eq(sets->nelts, 0);
    put(st, "b", item("", "x", 10, 1));
    put(st, "b", item("d", "y", 20, 1));
    put(st, "b", item("", "z", 40, 0));
    put(st, "B", item("", "x", 1, 0));
    put(st, "a-1", item("", "x", 2, 1));
    ck_assert_int_eq(rs_inventory_sets(st, ut_pool, &sets), APR_SUCCESS);
    ck_assert_int_eq(sets->nelts, 3);
    ck_assert_str_eq(APR_ARRAY_IDX(sets, 0, const char *), "B");
    ck_assert_str_eq(APR_ARRAY_IDX(sets, 1, const char *), "a-1");
    ck_assert_str_eq(APR_ARRAY_IDX(sets, 2, const char *), "b");

    ck_assert_int_eq(rs_inventory_summary(st, "b", &s), APR_SUCCESS);
    ck_assert_int_eq(s.files, 2);
    ck_assert_int_eq(s.bytes, 30);
    ck_assert_int_eq(s.newest, 1);
    ck_assert_int_eq(s.newest_mtime_ns, 1700000000123456789LL + 20);
    ck_assert_int_eq(rs_inventory_summary(st, "B", &s), APR_SUCCESS);
    ck_assert_int_eq(s.files, 0);
    ck_assert_int_eq(s.bytes, 0);
    ck_assert_int_eq(s.newest, 0);

    ck_assert_int_eq(rs_inventory_each_all(st, "b", copy_all, all), APR_SUCCESS);
    ck_assert_int_eq(all->nelts, 3);
    r = &APR_ARRAY_IDX(all, 0, rs_item_t);
    ck_assert_str_eq(r->name, "x");
    r = &APR_ARRAY_IDX(all, 1, rs_item_t);
    ck_assert_str_eq(r->name, "z");
    ck_assert_int_eq(r->listed, 0);
    ck_assert_int_eq(r->ino, 1000 + 40);
    ck_assert_int_eq(r->ctime_ns, 1700000001000000000LL + 40);
    ck_assert_str_eq(r->cfg, "fp1");
    r = &APR_ARRAY_IDX(all, 2, rs_item_t);
    ck_assert_str_eq(r->name, "y");
}
END_TEST

static int note_links(void *baton, const rs_item_t *it)
{
    APR_ARRAY_PUSH((apr_array_header_t *)baton, const char *) =
        it->links ? apr_pstrdup(ut_pool, it->links) : "none";
    return 0;
}

/* Links round-trip through every read (a directory, one row, pages,
 * listings, every row); rs_inventory_set_links changes them and nothing
 * else, and a row put again without them has none. */
START_TEST(links_round_trip)
{
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);
    rs_item_t a = item("records", "1.pdf", 10, 1), b = item("meta", "1.xml", 20, 1), *got;
    apr_array_header_t *seen = apr_array_make(ut_pool, 8, sizeof(const char *)), *pg;

    a.links = "L-a";
    put(st, "s", a);
    put(st, "s", b);
    ck_assert_str_eq(get(st, "s", "records", "1.pdf")->links, "L-a");
    ck_assert_ptr_null(get(st, "s", "meta", "1.xml")->links);
    ck_assert_int_eq(rs_inventory_get(st, ut_pool, "s", "records", "1.pdf", &got), APR_SUCCESS);
    ck_assert_str_eq(got->links, "L-a");
    ck_assert_int_eq(rs_inventory_page(st, ut_pool, "s", NULL, NULL, 10, &pg), APR_SUCCESS);
    ck_assert_int_eq(pg->nelts, 2);
    ck_assert_ptr_null(APR_ARRAY_IDX(pg, 0, rs_item_t).links);
    ck_assert_str_eq(APR_ARRAY_IDX(pg, 1, rs_item_t).links, "L-a");
    ck_assert_int_eq(rs_inventory_set_links(st, "s", "meta", "1.xml", "L-b"), APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_set_links(st, "s", "records", "1.pdf", NULL), APR_SUCCESS);
    ck_assert_int_eq(
        rs_inventory_each(st, "s", NULL, NULL, 10, RS_INVENTORY_LISTING, note_links, seen),
        APR_SUCCESS);
    ck_assert_int_eq(
        rs_inventory_each(st, "s", "meta", "1.xml", 10, RS_INVENTORY_ROW, note_links, seen),
        APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_each_all(st, "s", note_links, seen), APR_SUCCESS);
    ck_assert_str_eq(apr_array_pstrcat(ut_pool, seen, ' '), "L-b none none L-b none");
    /* Only the links changed. */
    got = get(st, "s", "meta", "1.xml");
    b.links = "L-b";
    assert_same(got, &b);
    ck_assert_str_eq(got->links, "L-b");
    b.links = NULL;
    put(st, "s", b);
    ck_assert_ptr_null(get(st, "s", "meta", "1.xml")->links);
}
END_TEST

/* The directories strictly below one, in byte order (both drivers). */
/* rs_inventory_analyze: PostgreSQL's statistics know the rows (a table
 * never analyzed has reltuples -1); SQLite's store is left as it is. */
START_TEST(analyze_after_filling)
{
    const char *db = ut_path(ut_tempdir("store"), "state.db");
    const char *dsn = ut_store(db);
    ut_log_t ul;
    rs_db_t *st = NULL;
    int i;

    ck_assert_int_eq(rs_schema_open(&st, ut_pool, ut_driver, dsn, ut_log_init(&ul)), APR_SUCCESS);
    ck_assert_int_eq(rs_db_begin(st), APR_SUCCESS);
    for (i = 0; i < 500; i++) {
        put(st, "s", item("d", apr_psprintf(ut_pool, "f%03d", i), i, 1));
    }
    ck_assert_int_eq(rs_db_commit(st), APR_SUCCESS);
    if (ut_pg()) {
        const char *q = "SELECT reltuples FROM pg_class WHERE oid = 'inventory'::regclass";
        ck_assert_int_lt(atof(ut_pg_exec(dsn, q)), 1);
        ck_assert_int_eq(rs_inventory_analyze(st), APR_SUCCESS);
        ck_assert_int_eq((int)atof(ut_pg_exec(dsn, q)), 500);
    }
    else {
        ck_assert_int_eq(rs_inventory_analyze(st), APR_SUCCESS);
    }
    ck_assert_int_eq(ul.nerr, 0);
    ck_assert_int_eq(count(st, "s"), 500);
}
END_TEST

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

START_TEST(dirs_under)
{
    static const char *const dirs[] = { "a", "a-b", "a.b", "a/b", "a/b/c", "a/c", "a0", "b" };
    ut_log_t ul;
    rs_db_t *st = open_store(&ul);
    apr_array_header_t *out;
    int i;

    for (i = 0; i < 8; i++) {
        rs_item_t it = item(dirs[i], "f", 1, 1);
        ck_assert_int_eq(rs_inventory_put(st, "s", &it), APR_SUCCESS);
    }
    ck_assert_int_eq(rs_inventory_dirs_under(st, ut_pool, "s", "a", &out), APR_SUCCESS);
    ck_assert_int_eq(out->nelts, 3);
    ck_assert_str_eq(APR_ARRAY_IDX(out, 0, char *), "a/b");
    ck_assert_str_eq(APR_ARRAY_IDX(out, 1, char *), "a/b/c");
    ck_assert_str_eq(APR_ARRAY_IDX(out, 2, char *), "a/c");
    ck_assert_int_eq(rs_inventory_dirs_under(st, ut_pool, "s", "", &out), APR_SUCCESS);
    ck_assert_int_eq(out->nelts, 8);
    /* At or below: dir itself too, never a sibling that shares its
     * prefix ("a-b", "a.b", "a0"). */
    ck_assert_int_eq(rs_inventory_dirs_at(st, ut_pool, "s", "a", &out), APR_SUCCESS);
    qsort(out->elts, (size_t)out->nelts, sizeof(char *), by_str);
    ck_assert_int_eq(out->nelts, 4);
    ck_assert_str_eq(APR_ARRAY_IDX(out, 0, char *), "a");
    ck_assert_str_eq(APR_ARRAY_IDX(out, 1, char *), "a/b");
    ck_assert_str_eq(APR_ARRAY_IDX(out, 2, char *), "a/b/c");
    ck_assert_str_eq(APR_ARRAY_IDX(out, 3, char *), "a/c");
    ck_assert_int_eq(rs_inventory_dirs_at(st, ut_pool, "s", "a/b/c", &out), APR_SUCCESS);
    ck_assert_int_eq(out->nelts, 1);
    ck_assert_int_eq(rs_inventory_dirs_at(st, ut_pool, "s", "a-b", &out), APR_SUCCESS);
    ck_assert_int_eq(out->nelts, 1);
    ck_assert_int_eq(rs_inventory_dirs_at(st, ut_pool, "s", "a/x", &out), APR_SUCCESS);
    ck_assert_int_eq(out->nelts, 0);
    ck_assert_int_eq(rs_inventory_dirs_at(st, ut_pool, "t", "a", &out), APR_SUCCESS);
    ck_assert_int_eq(out->nelts, 0);
    ck_assert_int_eq(rs_inventory_dirs_at(st, ut_pool, "s", "", &out), APR_SUCCESS);
    ck_assert_int_eq(out->nelts, 8);
}
END_TEST

static int count_each(void *baton, const rs_item_t *it)
{
    (void)it;
    ++*(int *)baton;
    return 0;
}

/* Write n rows into set (in transactions of 1000, as a scan does): one
 * statement per row (batched 0), or through an rs_invbatch_t.  Returns
 * the seconds it took. */
static double timed_inserts(rs_db_t *st, const char *set, int n, int batched)
{
    apr_time_t t0 = apr_time_now();
    rs_invbatch_t *b = batched ? rs_invbatch_create(ut_pool, st, set) : NULL;
    apr_pool_t *p;
    int i;

    apr_pool_create(&p, ut_pool);
    for (i = 0; i < n; i++) {
        rs_item_t it =
            item(apr_psprintf(p, "d%03d", i / 1000), apr_psprintf(p, "%07d.pdf", i), i, 1);
        if (i % 1000 == 0) {
            ck_assert_int_eq(rs_db_begin(st), APR_SUCCESS);
        }
        ck_assert_int_eq(b ? rs_invbatch_put(b, &it) : rs_inventory_put(st, set, &it), APR_SUCCESS);
        if (i % 1000 == 999 || i == n - 1) {
            ck_assert_int_eq(b ? rs_invbatch_flush(b) : APR_SUCCESS, APR_SUCCESS);
            ck_assert_int_eq(rs_db_commit(st), APR_SUCCESS);
            apr_pool_clear(p);
        }
    }
    apr_pool_destroy(p);
    return (double)(apr_time_now() - t0) / APR_USEC_PER_SEC;
}

/* Read every listed row of set s in pages of 5000, as a Resource List
 * does; returns the seconds it took. */
static double timed_pages(rs_db_t *st, int n)
{
    apr_time_t t0 = apr_time_now();
    apr_pool_t *p;
    const char *adir = NULL, *aname = NULL;
    apr_array_header_t *page;
    int got = 0;

    apr_pool_create(&p, ut_pool);
    do {
        apr_pool_t *np;
        apr_pool_create(&np, ut_pool);
        ck_assert_int_eq(rs_inventory_page(st, np, "s", adir, aname, 5000, &page), APR_SUCCESS);
        got += page->nelts;
        if (page->nelts) {
            const rs_item_t *last = &APR_ARRAY_IDX(page, page->nelts - 1, rs_item_t);
            apr_pool_clear(p);
            adir = apr_pstrdup(p, last->dir);
            aname = apr_pstrdup(p, last->name);
        }
        apr_pool_destroy(np);
    } while (page->nelts == 5000);
    ck_assert_int_eq(got, n);
    apr_pool_destroy(p);
    return (double)(apr_time_now() - t0) / APR_USEC_PER_SEC;
}

/* Timing (no assertion on time): RS_STORE_TIMING=N writes N inventory
 * rows through a batch (rs_invbatch) into one store, N one statement
 * each into another, and streams the latter back with rs_inventory_each_all
 * and in pages of 5000 (as a Resource List reads them) before and after
 * rs_inventory_analyze, on each driver the suite runs on; the rates go to
 * stderr. */
START_TEST(timing)
{
    const char *env = getenv("RS_STORE_TIMING");
    int n = env ? atoi(env) : 0, got = 0;
    ut_log_t ul;
    rs_db_t *st;
    apr_time_t t2;
    double one, batched, each, pages, analyzed;

    if (n <= 0) {
        return; /* timing only when asked */
    }
    /* Each into a store of its own: neither finds the other's rows. */
    st = open_store(&ul);
    one = timed_inserts(st, "s", n, 0);
    batched = timed_inserts(open_store(&ul), "s", n, 1);
    t2 = apr_time_now();
    ck_assert_int_eq(rs_inventory_each_all(st, "s", count_each, &got), APR_SUCCESS);
    each = (double)(apr_time_now() - t2) / APR_USEC_PER_SEC;
    ck_assert_int_eq(got, n);
    pages = timed_pages(st, n);
    ck_assert_int_eq(rs_inventory_analyze(st), APR_SUCCESS);
    analyzed = timed_pages(st, n);
    fprintf(stderr, "store timing %s: pages of 5000: %.3f s, after rs_inventory_analyze %.3f s\n",
            ut_driver, pages, analyzed);
    fprintf(stderr,
            "store timing %s: %d rows, insert %.0f rows/s, batched insert %.0f rows/s, "
            "rs_db_each %.0f rows/s\n",
            ut_driver, n, n / one, n / batched, n / (each + 1e-9));
}
END_TEST

Suite *inventory_suite(void)
{
    Suite *s = suite_create("rs_inventory");
    TCase *tc = ut_tcase("inventory", 60);
    tcase_add_test(tc, put_and_load);
    tcase_add_test(tc, any_rows);
    tcase_add_test(tc, upsert);
    tcase_add_test(tc, null_fields);
    tcase_add_test(tc, byte_names);
    tcase_add_test(tc, delete_rows);
    tcase_add_test(tc, delete_tree_and_dirs);
    tcase_add_test(tc, paging);
    tcase_add_test(tc, page_after_last);
    tcase_add_test(tc, each_streams_listed_rows);
    tcase_add_test(tc, transactions_and_reopen);
    tcase_add_test(tc, two_handles);
    tcase_add_test(tc, failed_statement_fails_commit);
    tcase_add_test(tc, delete_dir_counts);
    tcase_add_test(tc, sets_summary_and_every_row);
    tcase_add_test(tc, links_round_trip);
    tcase_add_test(tc, dirs_under);
    tcase_add_test(tc, analyze_after_filling);
    tcase_add_test(tc, timing);
    suite_add_tcase(s, tc);
    return s;
}
