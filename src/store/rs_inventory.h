/* SPDX-License-Identifier: Apache-2.0 */
/* rs_inventory.h - the inventory table: what the store knows of every set's files.
 *
 * One row per file a set holds (listed or not), on top of rs_db.  The
 * watcher is the only writer; it groups a scan's writes in a transaction
 * (rs_db_begin / rs_db_commit).  After a power loss the last transactions
 * may be gone: the next startup reconciliation re-derives them from the
 * files themselves.
 *
 * Paths are kept as (dir, name): dir is the directory relative to the set's
 * root ("" for the root itself, "a/b" below it), name the entry's base name,
 * both as the bytes on disk.  Listing order is (dir, name) in byte order.
 */
#ifndef RS_INVENTORY_H
#define RS_INVENTORY_H

#include <apr_pools.h>
#include <apr_hash.h>
#include <apr_tables.h>
#include "rs_hash.h"
#include "rs_db.h"

/* One inventory row. */
typedef struct rs_item_t {
    const char *dir;
    const char *name;
    apr_int64_t size;
    apr_int64_t mtime_ns;
    apr_int64_t ctime_ns; /* inode change time */
    apr_int64_t dev;
    apr_int64_t ino;
    const char *type;                /* media type or NULL */
    const char *encoding;            /* content coding(s) or NULL */
    const char *hash[RS_HASH_COUNT]; /* hex or NULL */
    const char *links;               /* rs:ln relations, encoded (rs_links.h); NULL: none */
    int listed;                      /* 0: known but not served */
    const char *cfg;                 /* config fingerprint of checks */
} rs_item_t;

/* Load the rows of one directory into *out (name -> rs_item_t*). */
apr_status_t rs_inventory_dir_load(rs_db_t *db, apr_pool_t *p, const char *set, const char *dir,
                                   apr_hash_t **out);

/* A copy of row from into *to, its strings in p. */
void rs_inventory_item_copy(apr_pool_t *p, rs_item_t *to, const rs_item_t *from);

/* Insert or replace one row (many rows at once: rs_invbatch.h). */
apr_status_t rs_inventory_put(rs_db_t *db, const char *set, const rs_item_t *it);

/* Set the links (encoded, rs_links.h; NULL: none) of the row dir/name,
 * and nothing else of it (a row whose links were resolved again: no
 * attribute of the resource changed).  No row: nothing. */
apr_status_t rs_inventory_set_links(rs_db_t *db, const char *set, const char *dir, const char *name,
                                    const char *links);

/* Delete one row. */
apr_status_t rs_inventory_delete(rs_db_t *db, const char *set, const char *dir, const char *name);

/* Delete every row at or below dir. */
apr_status_t rs_inventory_delete_tree(rs_db_t *db, const char *set, const char *dir);

/* Delete the rows directly in dir (not below); *nrows gets their number. */
apr_status_t rs_inventory_delete_dir(rs_db_t *db, const char *set, const char *dir,
                                     apr_int64_t *nrows);

/* Delete every row of a set. */
apr_status_t rs_inventory_delete_set(rs_db_t *db, const char *set);

/* The distinct directories that hold rows of a set (array of char*). */
apr_status_t rs_inventory_dirs(rs_db_t *db, apr_pool_t *p, const char *set,
                               apr_array_header_t **out);

/* The distinct directories strictly below dir that hold rows (array of
 * char*); every directory of the set when dir is "". */
apr_status_t rs_inventory_dirs_under(rs_db_t *db, apr_pool_t *p, const char *set, const char *dir,
                                     apr_array_header_t **out);

/* The distinct directories at or below dir that hold rows (array of
 * char*): dir itself when it holds any, and those below it, in one
 * statement; every directory of the set when dir is "". */
apr_status_t rs_inventory_dirs_at(rs_db_t *db, apr_pool_t *p, const char *set, const char *dir,
                                  apr_array_header_t **out);

/* One row, or *out = NULL if there is none. */
apr_status_t rs_inventory_get(rs_db_t *db, apr_pool_t *p, const char *set, const char *dir,
                              const char *name, rs_item_t **out);

/* Number of listed rows of a set. */
apr_status_t rs_inventory_count(rs_db_t *db, const char *set, apr_int64_t *n);

/* *any = 1 when set has at least one row (listed or not), else 0. */
apr_status_t rs_inventory_any(rs_db_t *db, const char *set, int *any);

/* Up to limit listed rows after (after_dir, after_name) in listing order;
 * pass NULLs for the first page.  *out is an array of rs_item_t, copied
 * into p (rs_inventory_each, below, does without the copies). */
apr_status_t rs_inventory_page(rs_db_t *db, apr_pool_t *p, const char *set, const char *after_dir,
                               const char *after_name, int limit, apr_array_header_t **out);

/* What rs_inventory_each reads of a row: every column, or what a
 * document lists (dir, name, size, mtime_ns, type, encoding, hashes, links; ctime_ns,
 * dev and ino are then 0, cfg NULL, listed 1): fewer columns read per
 * row when a Resource List is written. */
#define RS_INVENTORY_ROW     0
#define RS_INVENTORY_LISTING 1

/* The listed rows after (after_dir, after_name) in listing order (NULLs:
 * from the first), at most limit, each handed to fn as it is read from
 * the store, without copies: the row and its strings are valid during
 * the call only, and fn must not use db meanwhile (rs_db_each).  fn
 * returns non-zero to stop there.  fields: RS_INVENTORY_ROW or
 * RS_INVENTORY_LISTING.  Integer columns are read as integers; an empty
 * string reads as NULL, as in every other read of this unit. */
typedef int rs_inventory_each_fn(void *baton, const rs_item_t *it);
apr_status_t rs_inventory_each(rs_db_t *db, const char *set, const char *after_dir,
                               const char *after_name, int limit, int fields,
                               rs_inventory_each_fn *fn, void *baton);

/* Every row of set, listed or not, with every column, in listing order,
 * handed to fn as rs_inventory_each does (no copies; fn must not use db
 * meanwhile; non-zero stops): a copy of the set's rows (rs-tool verify). */
apr_status_t rs_inventory_each_all(rs_db_t *db, const char *set, rs_inventory_each_fn *fn,
                                   void *baton);

/* The sets that have rows, in byte order (array of const char *, in p):
 * one lookup in the key per set. */
apr_status_t rs_inventory_sets(rs_db_t *db, apr_pool_t *p, apr_array_header_t **out);

/* What a set's listed rows sum up to (rs-tool status). */
typedef struct rs_inventory_summary_t {
    apr_int64_t files;           /* listed rows */
    apr_int64_t bytes;           /* their sizes */
    int newest;                  /* 0: no listed row ... */
    apr_int64_t newest_mtime_ns; /* ... else the newest modification */
} rs_inventory_summary_t;
apr_status_t rs_inventory_summary(rs_db_t *db, const char *set, rs_inventory_summary_t *s);

/* After a set's rows were written from nothing (a first scan): the
 * database's statistics of the table brought up to date (rs_db_analyze),
 * outside a transaction. */
apr_status_t rs_inventory_analyze(rs_db_t *db);

/* The DDL that brings the inventory to schema version `version` from the
 * version before (NULL-terminated; NULL if that version changes nothing
 * here).  Used by rs_schema. */
const char *const *rs_inventory_schema(int version);

/* The tables of this unit (NULL-terminated, static), each keyed by set
 * (a column setname).  Used by rs_schema. */
const char *const *rs_inventory_tables(void);

#endif
