/* rs_store.h - the state store: inventory of every set, through apr_dbd.
 *
 * Lifecycle: the watcher process is the only writer.  It opens the store
 * after it has dropped privileges, so the database files belong to the run
 * user.  SQLite runs in WAL mode with synchronous=NORMAL: a committed scan
 * survives a crash of any process; a power loss may cost the last
 * transactions, which the next startup reconciliation re-derives from the
 * files themselves.  The SQL is the common subset of SQLite and PostgreSQL
 * (INSERT ... ON CONFLICT, row-value comparison, no driver functions).
 *
 * Paths are kept as (dir, name): dir is the directory relative to the set's
 * root ("" for the root itself, "a/b" below it), name the entry's base name,
 * both as the bytes on disk.  Listing order is (dir, name) in byte order.
 */
#ifndef RS_STORE_H
#define RS_STORE_H

#include <apr_pools.h>
#include <apr_hash.h>
#include <apr_tables.h>
#include "rs_hash.h"
#include "rs_log.h"

typedef struct rs_store_t rs_store_t;

/* One inventory row. */
typedef struct rs_item_t {
    const char *dir;
    const char *name;
    apr_int64_t size;
    apr_int64_t mtime_ns;
    apr_int64_t ctime_ns;                 /* inode change time */
    apr_int64_t dev;
    apr_int64_t ino;
    const char *type;                     /* media type or NULL */
    const char *hash[RS_HASH_COUNT];      /* hex or NULL */
    int listed;                           /* 0: known but not served */
    const char *cfg;                      /* config fingerprint of checks */
} rs_item_t;

/* Open (creating the schema if needed).  driver is an apr_dbd driver name
 * ("sqlite3"), params its connection string (the database file).  The
 * store lives as long as pool p. */
apr_status_t rs_store_open(rs_store_t **out, apr_pool_t *p, const char *driver,
                           const char *params, const rs_logger_t *log);

/* Transactions group a scan's writes; nesting is not supported.  If any
 * statement failed inside the transaction, the driver rolls it back and
 * rs_store_commit returns an error. */
apr_status_t rs_store_begin(rs_store_t *st);
apr_status_t rs_store_commit(rs_store_t *st);

/* Load the rows of one directory into *out (name -> rs_item_t*). */
apr_status_t rs_store_dir_load(rs_store_t *st, apr_pool_t *p, const char *set,
                               const char *dir, apr_hash_t **out);

/* Insert or replace one row. */
apr_status_t rs_store_put(rs_store_t *st, const char *set, const rs_item_t *it);

/* Delete one row. */
apr_status_t rs_store_delete(rs_store_t *st, const char *set, const char *dir,
                             const char *name);

/* Delete every row at or below dir. */
apr_status_t rs_store_delete_tree(rs_store_t *st, const char *set, const char *dir);

/* Delete the rows directly in dir (not below); *nrows gets their number. */
apr_status_t rs_store_delete_dir(rs_store_t *st, const char *set, const char *dir,
                                 apr_int64_t *nrows);

/* Delete every row of a set. */
apr_status_t rs_store_delete_set(rs_store_t *st, const char *set);

/* The distinct directories that hold rows of a set (array of char*). */
apr_status_t rs_store_dirs(rs_store_t *st, apr_pool_t *p, const char *set,
                           apr_array_header_t **out);

/* The distinct directories strictly below dir that hold rows (array of
 * char*); every directory of the set when dir is "". */
apr_status_t rs_store_dirs_under(rs_store_t *st, apr_pool_t *p, const char *set,
                                 const char *dir, apr_array_header_t **out);

/* One row, or *out = NULL if there is none. */
apr_status_t rs_store_get(rs_store_t *st, apr_pool_t *p, const char *set, const char *dir,
                          const char *name, rs_item_t **out);

/* Number of listed rows of a set. */
apr_status_t rs_store_count(rs_store_t *st, const char *set, apr_int64_t *n);

/* Up to limit listed rows after (after_dir, after_name) in listing order;
 * pass NULLs for the first page.  *out is an array of rs_item_t. */
apr_status_t rs_store_page(rs_store_t *st, apr_pool_t *p, const char *set,
                           const char *after_dir, const char *after_name,
                           int limit, apr_array_header_t **out);

/* Small key/value table for bookkeeping. */
apr_status_t rs_store_meta_get(rs_store_t *st, apr_pool_t *p, const char *key,
                               const char **value);
apr_status_t rs_store_meta_put(rs_store_t *st, const char *key, const char *value);

/* Generic prepared statements, for other engine units that keep their own
 * tables in the store (rs_journal).  sql uses apr_dbd's %s / %lld / %d
 * markers; arguments are passed as for apr_dbd_pbquery (pointers to
 * values, NULL for SQL NULL). */
typedef struct rs_store_stmt_t rs_store_stmt_t;

/* Run DDL or any statement without arguments. */
apr_status_t rs_store_ddl(rs_store_t *st, const char *sql);
apr_status_t rs_store_prepare(rs_store_t *st, const char *sql, rs_store_stmt_t **out);
apr_status_t rs_store_exec(rs_store_t *st, rs_store_stmt_t *s, const void **args,
                           int *nrows);

/* Each result row is handed to fn with its column values as strings
 * (NULL for SQL NULL) allocated from p. */
typedef void rs_store_row_fn(void *baton, apr_pool_t *p, const char *const *cols, int ncols);
apr_status_t rs_store_query(rs_store_t *st, apr_pool_t *p, rs_store_stmt_t *s,
                            const void **args, rs_store_row_fn *fn, void *baton);

#endif
