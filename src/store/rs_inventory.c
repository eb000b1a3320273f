/* SPDX-License-Identifier: Apache-2.0 */
/* rs_inventory.c - see rs_inventory.h */
#include <stdlib.h>
#include <string.h>
#include <apr_strings.h>
#include "rs_inventory.h"
#include "rs_inventory_sql.h"

enum {
    ST_DIR_LOAD,
    ST_PUT,
    ST_DEL,
    ST_DEL_TREE,
    ST_DEL_SET,
    ST_DIRS,
    ST_COUNT,
    ST_PAGE_FIRST,
    ST_PAGE,
    ST_DEL_DIR,
    ST_GET,
    ST_DIRS_UNDER,
    ST_LIST_FIRST,
    ST_LIST,
    ST_ANY,
    ST_NEXT_SET,
    ST_SUMMARY,
    ST_ALL,
    ST_LINKS,
    ST_DIRS_AT,
    ST_MAX
};

/* Pages of rs_inventory_each: what a document lists first (LIST_COLS,
 * RS_INVENTORY_LISTING reads only these), then the rest of the row. */
#define LIST_COLS_OF(enc, ln) \
    "dir, name, size, mtime_ns, type, md5, sha1, sha256, sha512, " enc ", " ln
#define PAGE_COLS_OF(enc, ln) LIST_COLS_OF(enc, ln) ", ctime_ns, dev, ino, listed, cfg"
#define PAGE_COLS             PAGE_COLS_OF("encoding", "links")
#define DIR_LOAD(cols)        "SELECT " cols " FROM inventory WHERE setname = %s AND dir = %s"
#define GET(cols)             "SELECT " cols " FROM inventory WHERE setname = %s AND dir = %s AND name = %s"
#define ALL(cols)             "SELECT " cols " FROM inventory WHERE setname = %s ORDER BY dir, name"
#define PAGE_FIRST(cols)                                                \
    "SELECT " cols " FROM inventory WHERE setname = %s AND listed = 1 " \
    "ORDER BY dir, name LIMIT %d"
#define PAGE_AFTER(cols)                                                \
    "SELECT " cols " FROM inventory WHERE setname = %s AND listed = 1 " \
    "AND dir >= %s AND (dir > %s OR (dir = %s AND name > %s)) ORDER BY dir, name LIMIT %d"

static const char *const sql[ST_MAX] = {
    DIR_LOAD(COLS),
    PUT_ROWS(PUT_ROW),
    "DELETE FROM inventory WHERE setname = %s AND dir = %s AND name = %s",
    /* dir itself, or below it: dir || '/' <= x < dir || '0' ('0' follows '/') */
    "DELETE FROM inventory WHERE setname = %s AND (dir = %s OR (dir >= %s AND dir < %s))",
    "DELETE FROM inventory WHERE setname = %s",
    "SELECT DISTINCT dir FROM inventory WHERE setname = %s",
    "SELECT COUNT(*) FROM inventory WHERE setname = %s AND listed = 1",
    PAGE_FIRST(PAGE_COLS),
    PAGE_AFTER(PAGE_COLS),
    "DELETE FROM inventory WHERE setname = %s AND dir = %s",
    GET(COLS),
    /* below dir: dir || '/' <= x < dir || '0' */
    "SELECT DISTINCT dir FROM inventory WHERE setname = %s AND dir >= %s AND dir < %s",
    PAGE_FIRST(LIST_COLS_OF("encoding", "links")),
    PAGE_AFTER(LIST_COLS_OF("encoding", "links")),
    "SELECT COUNT(*) FROM (SELECT 1 FROM inventory WHERE setname = %s LIMIT 1) AS t",
    /* One seek in the primary key per set, not a walk of every row. */
    "SELECT MIN(setname) FROM inventory WHERE setname > %s",
    "SELECT COUNT(*), COALESCE(SUM(size), 0), MAX(mtime_ns) FROM inventory "
    "WHERE setname = %s AND listed = 1",
    ALL(PAGE_COLS),
    "UPDATE inventory SET links = %s WHERE setname = %s AND dir = %s AND name = %s",
    /* dir itself or below it, in one range of the key: dir <= x < dir || '0' */
    "SELECT DISTINCT dir FROM inventory WHERE setname = %s AND dir >= %s AND dir < %s "
    "AND (dir = %s OR dir >= %s)",
};

/* The reads of a store older than schema version 7 (without the column
 * links) and 6 (without encoding either): rows read from it have none;
 * NULL: as in sql.  Only a store opened as it is can be older: rs_db_open
 * migrates. */
#define NONE           "NULL"
#define ENCODING_SINCE 6 /* the schema version that added the column encoding */
#define LINKS_SINCE    7 /* ... and links */
#define COMPAT(enc, ln)                                                                       \
    {                                                                                         \
        [ST_DIR_LOAD] = DIR_LOAD(COLS_OF(enc, ln)),                                           \
        [ST_PAGE_FIRST] = PAGE_FIRST(PAGE_COLS_OF(enc, ln)),                                  \
        [ST_PAGE] = PAGE_AFTER(PAGE_COLS_OF(enc, ln)), [ST_GET] = GET(COLS_OF(enc, ln)),      \
        [ST_LIST_FIRST] = PAGE_FIRST(LIST_COLS_OF(enc, ln)),                                  \
        [ST_LIST] = PAGE_AFTER(LIST_COLS_OF(enc, ln)), [ST_ALL] = ALL(PAGE_COLS_OF(enc, ln)), \
    }
static const char *const sql_v5[ST_MAX] = COMPAT(NONE, NONE);
static const char *const sql_v6[ST_MAX] = COMPAT("encoding", NONE);

/* The statement `which` for db's schema version. */
static const char *sql_for(rs_db_t *db, int which)
{
    int v = rs_db_schema_version(db);
    const char *const *compat = v < ENCODING_SINCE ? sql_v5 : v < LINKS_SINCE ? sql_v6 : NULL;
    return compat && compat[which] ? compat[which] : sql[which];
}

static const char *const schema_v1[] = {
    "CREATE TABLE IF NOT EXISTS inventory ("
    " setname TEXT NOT NULL, dir TEXT NOT NULL, name TEXT NOT NULL,"
    " size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL, ctime_ns BIGINT NOT NULL, dev BIGINT NOT NULL,"
    " ino BIGINT NOT NULL, type TEXT, md5 TEXT, sha1 TEXT, sha256 TEXT,"
    " sha512 TEXT, listed INTEGER NOT NULL, cfg TEXT,"
    " PRIMARY KEY (setname, dir, name))",
    NULL
};

/* Version 3: the table is clustered by its key (SQLite's WITHOUT ROWID):
 * a listing in (dir, name) order reads the rows in the order they are
 * stored, instead of walking the key's index and looking every row up in
 * the table, and the key is no longer stored twice.  The rows are copied
 * into the new table inside the migration's transaction.  (PostgreSQL
 * would create the table without the clause: its listing reads through
 * the primary key's index.) */
#define INVENTORY_V3_COLS                                                                       \
    "setname, dir, name, size, mtime_ns, ctime_ns, dev, ino, type, md5, sha1, sha256, sha512, " \
    "listed, cfg"
static const char *const schema_v3[] = {
    "CREATE TABLE inventory_v3 ("
    " setname TEXT NOT NULL, dir TEXT NOT NULL, name TEXT NOT NULL,"
    " size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL, ctime_ns BIGINT NOT NULL, dev BIGINT NOT NULL,"
    " ino BIGINT NOT NULL, type TEXT, md5 TEXT, sha1 TEXT, sha256 TEXT,"
    " sha512 TEXT, listed INTEGER NOT NULL, cfg TEXT,"
    " PRIMARY KEY (setname, dir, name)) WITHOUT ROWID",
    "INSERT INTO inventory_v3 (" INVENTORY_V3_COLS ") SELECT " INVENTORY_V3_COLS " FROM inventory",
    "DROP TABLE inventory", "ALTER TABLE inventory_v3 RENAME TO inventory", NULL
};

/* Version 6: the content coding httpd sends a file with (its
 * Content-Encoding, e.g. "gzip"; NULL: none), listed as rs:md encoding
 * next to the media type.  Rows written before it have none until they
 * are decided again (the configuration fingerprint makes the first scan
 * of a newer module decide every file again). */
static const char *const schema_v6[] = { "ALTER TABLE inventory ADD COLUMN encoding TEXT", NULL };

/* Version 7: the resource's rs:ln relations, resolved by the watcher and
 * encoded (rs_links.h; NULL: none).  Rows written before it have none
 * until the watcher resolves them (a set with links: the configuration's
 * links fingerprint, stored per set, differs at its first start). */
static const char *const schema_v7[] = { "ALTER TABLE inventory ADD COLUMN links TEXT", NULL };

const char *const *rs_inventory_schema(int version)
{
    return version == 1   ? schema_v1
           : version == 3 ? schema_v3
           : version == 6 ? schema_v6
           : version == 7 ? schema_v7
                          : NULL;
}

apr_status_t rs_inventory_analyze(rs_db_t *db)
{
    return rs_db_analyze(db, "inventory");
}

const char *const *rs_inventory_tables(void)
{
    static const char *const tables[] = { "inventory", NULL };
    return tables;
}

static apr_status_t exec(rs_db_t *db, int which, const void **args, int *nrows)
{
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, sql_for(db, which), &s);
    return rv == APR_SUCCESS ? rs_db_exec(db, s, args, nrows) : rv;
}

static apr_status_t query(rs_db_t *db, apr_pool_t *p, int which, const void **args,
                          rs_db_row_fn *fn, void *baton)
{
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, sql_for(db, which), &s);
    return rv == APR_SUCCESS ? rs_db_query(db, p, s, args, fn, baton) : rv;
}

static apr_int64_t col_int(const char *v)
{
    return v ? apr_atoi64(v) : 0;
}

static const char *col_str(apr_pool_t *p, const char *v)
{
    return (v && *v) ? apr_pstrdup(p, v) : NULL;
}

static void row_item(apr_pool_t *p, const char *const *c, int n, rs_item_t *it)
{
    int i;
    (void)n; /* every select of this file has the COLS */
    it->dir = apr_pstrdup(p, c[0] ? c[0] : "");
    it->name = apr_pstrdup(p, c[1] ? c[1] : "");
    it->size = col_int(c[2]);
    it->mtime_ns = col_int(c[3]);
    it->ctime_ns = col_int(c[4]);
    it->dev = col_int(c[5]);
    it->ino = col_int(c[6]);
    it->type = col_str(p, c[7]);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        it->hash[i] = col_str(p, c[8 + i]);
    }
    it->listed = (int)col_int(c[12]);
    it->cfg = col_str(p, c[13]);
    it->encoding = col_str(p, c[14]);
    it->links = col_str(p, c[15]);
}

static void add_to_hash(void *baton, apr_pool_t *p, const char *const *c, int n)
{
    rs_item_t *it = apr_pcalloc(p, sizeof(*it));
    row_item(p, c, n, it);
    apr_hash_set(baton, it->name, APR_HASH_KEY_STRING, it);
}

apr_status_t rs_inventory_dir_load(rs_db_t *db, apr_pool_t *p, const char *set, const char *dir,
                                   apr_hash_t **out)
{
    const void *args[] = { set, dir };
    *out = apr_hash_make(p);
    return query(db, p, ST_DIR_LOAD, args, add_to_hash, *out);
}

void rs_inventory_put_args(const char *set, const rs_item_t *it, const void **args)
{
    const void *a[RS_INVENTORY_PUT_ARGS] = {
        set,         it->dir,     it->name, &it->size,    &it->mtime_ns, &it->ctime_ns,
        &it->dev,    &it->ino,    it->type, it->hash[0],  it->hash[1],   it->hash[2],
        it->hash[3], &it->listed, it->cfg,  it->encoding, it->links
    };
    memcpy(args, a, sizeof(a));
}

apr_status_t rs_inventory_put(rs_db_t *db, const char *set, const rs_item_t *it)
{
    const void *args[RS_INVENTORY_PUT_ARGS];
    rs_inventory_put_args(set, it, args);
    return exec(db, ST_PUT, args, NULL);
}

apr_status_t rs_inventory_set_links(rs_db_t *db, const char *set, const char *dir, const char *name,
                                    const char *links)
{
    const void *args[] = { links, set, dir, name };
    return exec(db, ST_LINKS, args, NULL);
}

apr_status_t rs_inventory_delete(rs_db_t *db, const char *set, const char *dir, const char *name)
{
    const void *args[] = { set, dir, name };
    return exec(db, ST_DEL, args, NULL);
}

apr_status_t rs_inventory_delete_tree(rs_db_t *db, const char *set, const char *dir)
{
    const void *args[4];
    apr_size_t len = strlen(dir);
    apr_status_t rv;
    char *lo;

    if (!*dir) {
        return rs_inventory_delete_set(db, set);
    }
    /* The bounds dir "/" and dir "0" in one buffer, freed at once: the
     * connection's pool must not grow with each call. */
    if (!(lo = malloc(2 * (len + 2)))) {
        return APR_ENOMEM;
    }
    memcpy(lo, dir, len);
    memcpy(lo + len, "/", 2);
    memcpy(lo + len + 2, dir, len);
    memcpy(lo + 2 * len + 2, "0", 2);
    args[0] = set;
    args[1] = dir;
    args[2] = lo;
    args[3] = lo + len + 2;
    rv = exec(db, ST_DEL_TREE, args, NULL);
    free(lo);
    return rv;
}

apr_status_t rs_inventory_delete_dir(rs_db_t *db, const char *set, const char *dir,
                                     apr_int64_t *nrows)
{
    const void *args[] = { set, dir };
    int n = 0;
    apr_status_t rv = exec(db, ST_DEL_DIR, args, &n);
    if (rv == APR_SUCCESS && nrows) {
        *nrows = n;
    }
    return rv;
}

apr_status_t rs_inventory_delete_set(rs_db_t *db, const char *set)
{
    const void *args[] = { set };
    return exec(db, ST_DEL_SET, args, NULL);
}

static void add_dir(void *baton, apr_pool_t *p, const char *const *c, int n)
{
    (void)n;
    APR_ARRAY_PUSH((apr_array_header_t *)baton, const char *) = apr_pstrdup(p, c[0] ? c[0] : "");
}

apr_status_t rs_inventory_dirs(rs_db_t *db, apr_pool_t *p, const char *set,
                               apr_array_header_t **out)
{
    const void *args[] = { set };
    *out = apr_array_make(p, 64, sizeof(const char *));
    return query(db, p, ST_DIRS, args, add_dir, *out);
}

apr_status_t rs_inventory_dirs_under(rs_db_t *db, apr_pool_t *p, const char *set, const char *dir,
                                     apr_array_header_t **out)
{
    const void *args[3];
    *out = apr_array_make(p, 8, sizeof(const char *));
    if (!*dir) {
        return rs_inventory_dirs(db, p, set, out);
    }
    args[0] = set;
    args[1] = apr_pstrcat(p, dir, "/", NULL);
    args[2] = apr_pstrcat(p, dir, "0", NULL);
    return query(db, p, ST_DIRS_UNDER, args, add_dir, *out);
}

apr_status_t rs_inventory_dirs_at(rs_db_t *db, apr_pool_t *p, const char *set, const char *dir,
                                  apr_array_header_t **out)
{
    const char *below, *after;
    *out = apr_array_make(p, 4, sizeof(const char *));
    if (!*dir) {
        return rs_inventory_dirs(db, p, set, out);
    }
    below = apr_pstrcat(p, dir, "/", NULL);
    after = apr_pstrcat(p, dir, "0", NULL);
    {
        const void *args[] = { set, dir, after, dir, below };
        return query(db, p, ST_DIRS_AT, args, add_dir, *out);
    }
}

static void get_one(void *baton, apr_pool_t *p, const char *const *c, int n)
{
    rs_item_t **it = baton;
    *it = apr_pcalloc(p, sizeof(**it));
    row_item(p, c, n, *it);
}

apr_status_t rs_inventory_get(rs_db_t *db, apr_pool_t *p, const char *set, const char *dir,
                              const char *name, rs_item_t **out)
{
    const void *args[] = { set, dir, name };
    *out = NULL;
    return query(db, p, ST_GET, args, get_one, out);
}

static void get_count(void *baton, apr_pool_t *p, const char *const *c, int n)
{
    (void)p;
    *(apr_int64_t *)baton = n > 0 ? col_int(c[0]) : 0;
}

apr_status_t rs_inventory_count(rs_db_t *db, const char *set, apr_int64_t *n)
{
    const void *args[] = { set };
    *n = 0;
    /* get_count allocates nothing: no pool of the caller's is needed. */
    return query(db, NULL, ST_COUNT, args, get_count, n);
}

apr_status_t rs_inventory_any(rs_db_t *db, const char *set, int *any)
{
    const void *args[] = { set };
    apr_int64_t n = 0;
    apr_status_t rv = query(db, NULL, ST_ANY, args, get_count, &n);
    *any = n > 0;
    return rv;
}

/* The row of a page (PAGE_COLS, or LIST_COLS only) as it is read:
 * pointers into the row. */
static void item_of_row(const rs_db_row_t *row, int fields, rs_item_t *it)
{
    const char *v;
    int i;
    v = rs_db_row_text(row, 0);
    it->dir = v ? v : "";
    v = rs_db_row_text(row, 1);
    it->name = v ? v : "";
    it->size = rs_db_row_int64(row, 2);
    it->mtime_ns = rs_db_row_int64(row, 3);
    v = rs_db_row_text(row, 4);
    it->type = v && *v ? v : NULL;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        v = rs_db_row_text(row, 5 + i);
        it->hash[i] = v && *v ? v : NULL;
    }
    v = rs_db_row_text(row, 9);
    it->encoding = v && *v ? v : NULL;
    v = rs_db_row_text(row, 10);
    it->links = v && *v ? v : NULL;
    if (fields == RS_INVENTORY_LISTING) {
        it->ctime_ns = it->dev = it->ino = 0;
        it->listed = 1;
        it->cfg = NULL;
        return;
    }
    it->ctime_ns = rs_db_row_int64(row, 11);
    it->dev = rs_db_row_int64(row, 12);
    it->ino = rs_db_row_int64(row, 13);
    it->listed = (int)rs_db_row_int64(row, 14);
    v = rs_db_row_text(row, 15);
    it->cfg = v && *v ? v : NULL;
}

typedef struct {
    rs_inventory_each_fn *fn;
    void *baton;
    int fields;
} each_t;

static int each_row(void *baton, const rs_db_row_t *row)
{
    each_t *e = baton;
    rs_item_t it;
    item_of_row(row, e->fields, &it);
    return e->fn(e->baton, &it);
}

apr_status_t rs_inventory_each(rs_db_t *db, const char *set, const char *after_dir,
                               const char *after_name, int limit, int fields,
                               rs_inventory_each_fn *fn, void *baton)
{
    each_t e = { fn, baton, fields };
    int which = fields == RS_INVENTORY_LISTING ? (after_dir ? ST_LIST : ST_LIST_FIRST)
                                               : (after_dir ? ST_PAGE : ST_PAGE_FIRST);
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, sql_for(db, which), &s);

    if (rv != APR_SUCCESS) {
        return rv;
    }
    if (!after_dir) {
        const void *args[] = { set, &limit };
        return rs_db_each(db, s, args, each_row, &e);
    }
    else {
        /* "dir >= ?" is implied by the rest, but it lets the planner seek
         * in the primary key instead of walking the set from its start on
         * every page (which made writing a list quadratic). */
        const void *args[] = { set, after_dir, after_dir, after_dir, after_name, &limit };
        return rs_db_each(db, s, args, each_row, &e);
    }
}

/* Copies of a page's rows. */
typedef struct {
    apr_pool_t *p;
    apr_array_header_t *out;
} page_t;

void rs_inventory_item_copy(apr_pool_t *p, rs_item_t *to, const rs_item_t *from)
{
    int i;
    *to = *from;
    to->dir = apr_pstrdup(p, from->dir);
    to->name = apr_pstrdup(p, from->name);
    to->type = from->type ? apr_pstrdup(p, from->type) : NULL;
    to->encoding = from->encoding ? apr_pstrdup(p, from->encoding) : NULL;
    to->links = from->links ? apr_pstrdup(p, from->links) : NULL;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        to->hash[i] = from->hash[i] ? apr_pstrdup(p, from->hash[i]) : NULL;
    }
    to->cfg = from->cfg ? apr_pstrdup(p, from->cfg) : NULL;
}

static int copy_item(void *baton, const rs_item_t *src)
{
    page_t *pg = baton;
    rs_inventory_item_copy(pg->p, apr_array_push(pg->out), src);
    return 0;
}

apr_status_t rs_inventory_page(rs_db_t *db, apr_pool_t *p, const char *set, const char *after_dir,
                               const char *after_name, int limit, apr_array_header_t **out)
{
    page_t pg;
    *out = apr_array_make(p, limit > 0 && limit < 65536 ? limit : 1024, sizeof(rs_item_t));
    pg.p = p;
    pg.out = *out;
    return rs_inventory_each(db, set, after_dir, after_name, limit, RS_INVENTORY_ROW, copy_item,
                             &pg);
}

static void get_str(void *baton, apr_pool_t *p, const char *const *c, int n)
{
    *(const char **)baton = n > 0 && c[0] ? apr_pstrdup(p, c[0]) : NULL;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

apr_status_t rs_inventory_sets(rs_db_t *db, apr_pool_t *p, apr_array_header_t **out)
{
    const char *after = "", *next = NULL;
    const void *args[1];
    apr_status_t rv;

    *out = apr_array_make(p, 8, sizeof(const char *));
    for (;;) {
        args[0] = after;
        if ((rv = query(db, p, ST_NEXT_SET, args, get_str, &next)) != APR_SUCCESS || !next) {
            break;
        }
        APR_ARRAY_PUSH(*out, const char *) = after = next;
        next = NULL;
    }
    /* The database's collation may differ from byte order (PostgreSQL). */
    qsort((*out)->elts, (size_t)(*out)->nelts, sizeof(const char *), by_name);
    return rv;
}

static void get_summary(void *baton, apr_pool_t *p, const char *const *c, int n)
{
    rs_inventory_summary_t *s = baton;
    (void)p;
    if (n >= 3) {
        s->files = col_int(c[0]);
        s->bytes = col_int(c[1]);
        s->newest = c[2] != NULL;
        s->newest_mtime_ns = col_int(c[2]);
    }
}

apr_status_t rs_inventory_summary(rs_db_t *db, const char *set, rs_inventory_summary_t *s)
{
    const void *args[] = { set };
    memset(s, 0, sizeof(*s));
    return query(db, NULL, ST_SUMMARY, args, get_summary, s);
}

apr_status_t rs_inventory_each_all(rs_db_t *db, const char *set, rs_inventory_each_fn *fn,
                                   void *baton)
{
    each_t e = { fn, baton, RS_INVENTORY_ROW };
    const void *args[] = { set };
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, sql_for(db, ST_ALL), &s);
    return rv == APR_SUCCESS ? rs_db_each(db, s, args, each_row, &e) : rv;
}
