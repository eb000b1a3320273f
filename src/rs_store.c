/* rs_store.c - see rs_store.h */
#include <string.h>
#include <apr_strings.h>
#include <apr_dbd.h>
#include "rs_store.h"

enum {
    ST_DIR_LOAD, ST_PUT, ST_DEL, ST_DEL_TREE, ST_DEL_SET, ST_DIRS, ST_COUNT,
    ST_PAGE_FIRST, ST_PAGE, ST_META_GET, ST_META_PUT, ST_DEL_DIR, ST_GET, ST_DIRS_UNDER,
    ST_MAX
};

#define COLS "dir, name, size, mtime_ns, ctime_ns, dev, ino, type, md5, sha1, sha256, sha512, listed, cfg"

static const char *const sql[ST_MAX] = {
    "SELECT " COLS " FROM inventory WHERE setname = %s AND dir = %s",
    "INSERT INTO inventory (setname, " COLS ") VALUES "
    "(%s, %s, %s, %lld, %lld, %lld, %lld, %lld, %s, %s, %s, %s, %s, %d, %s) "
    "ON CONFLICT (setname, dir, name) DO UPDATE SET size = excluded.size, "
    "mtime_ns = excluded.mtime_ns, ctime_ns = excluded.ctime_ns, dev = excluded.dev, ino = excluded.ino, "
    "type = excluded.type, md5 = excluded.md5, sha1 = excluded.sha1, "
    "sha256 = excluded.sha256, sha512 = excluded.sha512, "
    "listed = excluded.listed, cfg = excluded.cfg",
    "DELETE FROM inventory WHERE setname = %s AND dir = %s AND name = %s",
    /* dir itself, or below it: dir || '/' <= x < dir || '0' ('0' follows '/') */
    "DELETE FROM inventory WHERE setname = %s AND (dir = %s OR (dir >= %s AND dir < %s))",
    "DELETE FROM inventory WHERE setname = %s",
    "SELECT DISTINCT dir FROM inventory WHERE setname = %s",
    "SELECT COUNT(*) FROM inventory WHERE setname = %s AND listed = 1",
    "SELECT " COLS " FROM inventory WHERE setname = %s AND listed = 1 "
    "ORDER BY dir, name LIMIT %d",
    "SELECT " COLS " FROM inventory WHERE setname = %s AND listed = 1 "
    "AND dir >= %s AND (dir > %s OR (dir = %s AND name > %s)) ORDER BY dir, name LIMIT %d",
    "SELECT v FROM meta WHERE k = %s",
    "INSERT INTO meta (k, v) VALUES (%s, %s) ON CONFLICT (k) DO UPDATE SET v = excluded.v",
    "DELETE FROM inventory WHERE setname = %s AND dir = %s",
    "SELECT " COLS " FROM inventory WHERE setname = %s AND dir = %s AND name = %s",
    /* below dir: dir || '/' <= x < dir || '0' */
    "SELECT DISTINCT dir FROM inventory WHERE setname = %s AND dir >= %s AND dir < %s",
};

static const char *const schema[] = {
    "CREATE TABLE IF NOT EXISTS inventory ("
    " setname TEXT NOT NULL, dir TEXT NOT NULL, name TEXT NOT NULL,"
    " size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL, ctime_ns BIGINT NOT NULL, dev BIGINT NOT NULL,"
    " ino BIGINT NOT NULL, type TEXT, md5 TEXT, sha1 TEXT, sha256 TEXT,"
    " sha512 TEXT, listed INTEGER NOT NULL, cfg TEXT,"
    " PRIMARY KEY (setname, dir, name))",
    "CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)",
    /* The tables of rs_journal.  Every table is created here, before any
     * statement is prepared: apr_dbd's SQLite driver prepares with the
     * legacy API, whose statements fail once the schema has changed. */

    "CREATE TABLE IF NOT EXISTS journal ("
    " seq BIGINT PRIMARY KEY, setname TEXT NOT NULL, dir TEXT NOT NULL, name TEXT NOT NULL,"
    " change INTEGER NOT NULL, dt BIGINT NOT NULL, lastmod_ns BIGINT NOT NULL,"
    " size BIGINT NOT NULL, type TEXT, md5 TEXT, sha1 TEXT, sha256 TEXT, sha512 TEXT)",
    "CREATE INDEX IF NOT EXISTS journal_set_seq ON journal (setname, seq)",
    "CREATE TABLE IF NOT EXISTS changelists ("
    " setname TEXT NOT NULL, id BIGINT NOT NULL, from_dt BIGINT NOT NULL,"
    " until_dt BIGINT NOT NULL, first_seq BIGINT NOT NULL, last_seq BIGINT NOT NULL,"
    " count BIGINT NOT NULL, PRIMARY KEY (setname, id))",
    "CREATE TABLE IF NOT EXISTS journal_sets (setname TEXT PRIMARY KEY, started BIGINT NOT NULL,"
    " open_id BIGINT NOT NULL)",
    NULL
};

struct rs_store_t {
    apr_pool_t *pool;
    const apr_dbd_driver_t *drv;
    apr_dbd_t *h;
    apr_dbd_transaction_t *txn;
    apr_dbd_prepared_t *st[ST_MAX];
    int txn_failed;     /* a statement failed inside the open transaction */
    const rs_logger_t *log;
    int sqlite;
};

static apr_status_t fail(rs_store_t *st, int rc, const char *what)
{
    if (st->txn) {
        st->txn_failed = 1;   /* the driver will roll back at the end */
    }
    rs_log_emit(st->log, RS_LOG_ERR, APR_EGENERAL, "state store: %s failed: %s",
                what, apr_dbd_error(st->drv, st->h, rc));
    return APR_EGENERAL;
}

static apr_status_t store_close(void *data)
{
    rs_store_t *st = data;
    if (st->h) {
        apr_dbd_close(st->drv, st->h);
        st->h = NULL;
    }
    return APR_SUCCESS;
}

apr_status_t rs_store_open(rs_store_t **out, apr_pool_t *p, const char *driver,
                           const char *params, const rs_logger_t *log)
{
    rs_store_t *st = apr_pcalloc(p, sizeof(*st));
    const char *err = NULL;
    apr_status_t rv;
    int i, n;

    st->pool = p;
    st->log = log;
    apr_dbd_init(p);
    rv = apr_dbd_get_driver(p, driver, &st->drv);
    if (rv != APR_SUCCESS) {
        rs_log_emit(log, RS_LOG_ERR, rv, "state store: no apr_dbd driver '%s'", driver);
        return rv;
    }
    rv = apr_dbd_open_ex(st->drv, p, params, &st->h, &err);
    if (rv != APR_SUCCESS) {
        rs_log_emit(log, RS_LOG_ERR, rv, "state store: cannot open '%s': %s",
                    params, err ? err : "unknown error");
        return rv;
    }
    apr_pool_cleanup_register(p, st, store_close, apr_pool_cleanup_null);
    st->sqlite = !strcmp(driver, "sqlite3");
    if (st->sqlite) {
        apr_dbd_results_t *res = NULL;
        apr_dbd_row_t *row = NULL;
        /* WAL lets children read while the watcher writes; NORMAL syncs at
         * checkpoints, which keeps a committed transaction across a crash
         * of any process (not necessarily across a power loss). */
        apr_dbd_select(st->drv, p, st->h, &res, "PRAGMA journal_mode=WAL", 0);
        while (res && apr_dbd_get_row(st->drv, p, res, &row, -1) == 0) {
        }
        apr_dbd_query(st->drv, st->h, &n, "PRAGMA synchronous=NORMAL");
        apr_dbd_query(st->drv, st->h, &n, "PRAGMA busy_timeout=10000");
    }
    for (i = 0; schema[i]; i++) {
        int rc = apr_dbd_query(st->drv, st->h, &n, schema[i]);
        if (rc) {
            return fail(st, rc, "creating the schema");
        }
    }
    for (i = 0; i < ST_MAX; i++) {
        int rc = apr_dbd_prepare(st->drv, p, st->h, sql[i], NULL, &st->st[i]);
        if (rc) {
            return fail(st, rc, apr_psprintf(p, "preparing \"%s\"", sql[i]));
        }
    }
    *out = st;
    return APR_SUCCESS;
}

apr_status_t rs_store_begin(rs_store_t *st)
{
    int rc;
    st->txn_failed = 0;
    rc = apr_dbd_transaction_start(st->drv, st->pool, st->h, &st->txn);
    return rc ? fail(st, rc, "BEGIN") : APR_SUCCESS;
}

apr_status_t rs_store_commit(rs_store_t *st)
{
    int rc;
    if (!st->txn) {
        return APR_SUCCESS;
    }
    rc = apr_dbd_transaction_end(st->drv, st->pool, st->txn);
    st->txn = NULL;
    if (st->txn_failed) {
        /* apr_dbd rolled the transaction back and reports success. */
        st->txn_failed = 0;
        rs_log_emit(st->log, RS_LOG_ERR, APR_EGENERAL, "state store: a transaction was "
                    "rolled back after a failed statement");
        return APR_EGENERAL;
    }
    return rc ? fail(st, rc, "COMMIT") : APR_SUCCESS;
}

static apr_status_t exec(rs_store_t *st, int which, const void **args)
{
    int n, rc = apr_dbd_pbquery(st->drv, st->pool, st->h, &n, st->st[which], args);
    return rc ? fail(st, rc, sql[which]) : APR_SUCCESS;
}

static apr_int64_t col_int(rs_store_t *st, apr_dbd_row_t *row, int c)
{
    const char *v = apr_dbd_get_entry(st->drv, row, c);
    return v ? apr_atoi64(v) : 0;
}

static const char *col_str(rs_store_t *st, apr_pool_t *p, apr_dbd_row_t *row, int c)
{
    const char *v = apr_dbd_get_entry(st->drv, row, c);
    return (v && *v) ? apr_pstrdup(p, v) : NULL;
}

static void row_item(rs_store_t *st, apr_pool_t *p, apr_dbd_row_t *row, rs_item_t *it)
{
    int i;
    it->dir = apr_pstrdup(p, apr_dbd_get_entry(st->drv, row, 0));
    it->name = apr_pstrdup(p, apr_dbd_get_entry(st->drv, row, 1));
    it->size = col_int(st, row, 2);
    it->mtime_ns = col_int(st, row, 3);
    it->ctime_ns = col_int(st, row, 4);
    it->dev = col_int(st, row, 5);
    it->ino = col_int(st, row, 6);
    it->type = col_str(st, p, row, 7);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        it->hash[i] = col_str(st, p, row, 8 + i);
    }
    it->listed = (int)col_int(st, row, 12);
    it->cfg = col_str(st, p, row, 13);
}

/* Run a prepared select and hand each row to fn. */
static apr_status_t select_rows(rs_store_t *st, apr_pool_t *p, int which, const void **args,
                                void (*fn)(rs_store_t *, apr_pool_t *, apr_dbd_row_t *, void *),
                                void *baton)
{
    apr_dbd_results_t *res = NULL;
    apr_dbd_row_t *row = NULL;
    int rc = apr_dbd_pbselect(st->drv, p, st->h, &res, st->st[which], 0, args);
    if (rc) {
        return fail(st, rc, sql[which]);
    }
    while ((rc = apr_dbd_get_row(st->drv, p, res, &row, -1)) == 0) {
        fn(st, p, row, baton);
    }
    return rc == -1 ? APR_SUCCESS : fail(st, rc, sql[which]);
}

static void add_to_hash(rs_store_t *st, apr_pool_t *p, apr_dbd_row_t *row, void *baton)
{
    rs_item_t *it = apr_pcalloc(p, sizeof(*it));
    row_item(st, p, row, it);
    apr_hash_set(baton, it->name, APR_HASH_KEY_STRING, it);
}

apr_status_t rs_store_dir_load(rs_store_t *st, apr_pool_t *p, const char *set,
                               const char *dir, apr_hash_t **out)
{
    const void *args[] = { set, dir };
    *out = apr_hash_make(p);
    return select_rows(st, p, ST_DIR_LOAD, args, add_to_hash, *out);
}

apr_status_t rs_store_put(rs_store_t *st, const char *set, const rs_item_t *it)
{
    const void *args[] = {
        set, it->dir, it->name, &it->size, &it->mtime_ns, &it->ctime_ns, &it->dev, &it->ino,
        it->type, it->hash[0], it->hash[1], it->hash[2], it->hash[3],
        &it->listed, it->cfg
    };
    return exec(st, ST_PUT, args);
}

apr_status_t rs_store_delete(rs_store_t *st, const char *set, const char *dir,
                             const char *name)
{
    const void *args[] = { set, dir, name };
    return exec(st, ST_DEL, args);
}

apr_status_t rs_store_delete_tree(rs_store_t *st, const char *set, const char *dir)
{
    apr_pool_t *p;
    apr_status_t rv;
    const void *args[4];

    if (!*dir) {
        return rs_store_delete_set(st, set);
    }
    apr_pool_create(&p, st->pool);
    args[0] = set;
    args[1] = dir;
    args[2] = apr_pstrcat(p, dir, "/", NULL);
    args[3] = apr_pstrcat(p, dir, "0", NULL);
    rv = exec(st, ST_DEL_TREE, args);
    apr_pool_destroy(p);
    return rv;
}

apr_status_t rs_store_delete_dir(rs_store_t *st, const char *set, const char *dir,
                                 apr_int64_t *nrows)
{
    const void *args[] = { set, dir };
    int n = 0, rc = apr_dbd_pbquery(st->drv, st->pool, st->h, &n, st->st[ST_DEL_DIR], args);
    if (rc) {
        return fail(st, rc, sql[ST_DEL_DIR]);
    }
    if (nrows) {
        *nrows = n;
    }
    return APR_SUCCESS;
}

apr_status_t rs_store_delete_set(rs_store_t *st, const char *set)
{
    const void *args[] = { set };
    return exec(st, ST_DEL_SET, args);
}

static void add_dir(rs_store_t *st, apr_pool_t *p, apr_dbd_row_t *row, void *baton)
{
    APR_ARRAY_PUSH((apr_array_header_t *)baton, const char *) =
        apr_pstrdup(p, apr_dbd_get_entry(st->drv, row, 0));
}

apr_status_t rs_store_dirs(rs_store_t *st, apr_pool_t *p, const char *set,
                           apr_array_header_t **out)
{
    const void *args[] = { set };
    *out = apr_array_make(p, 64, sizeof(const char *));
    return select_rows(st, p, ST_DIRS, args, add_dir, *out);
}

apr_status_t rs_store_dirs_under(rs_store_t *st, apr_pool_t *p, const char *set,
                                 const char *dir, apr_array_header_t **out)
{
    const void *args[3];
    *out = apr_array_make(p, 8, sizeof(const char *));
    if (!*dir) {
        return rs_store_dirs(st, p, set, out);
    }
    args[0] = set;
    args[1] = apr_pstrcat(p, dir, "/", NULL);
    args[2] = apr_pstrcat(p, dir, "0", NULL);
    return select_rows(st, p, ST_DIRS_UNDER, args, add_dir, *out);
}

static void get_one(rs_store_t *st, apr_pool_t *p, apr_dbd_row_t *row, void *baton)
{
    rs_item_t **it = baton;
    *it = apr_pcalloc(p, sizeof(**it));
    row_item(st, p, row, *it);
}

apr_status_t rs_store_get(rs_store_t *st, apr_pool_t *p, const char *set, const char *dir,
                          const char *name, rs_item_t **out)
{
    const void *args[] = { set, dir, name };
    *out = NULL;
    return select_rows(st, p, ST_GET, args, get_one, out);
}

static void get_count(rs_store_t *st, apr_pool_t *p, apr_dbd_row_t *row, void *baton)
{
    (void)p;
    *(apr_int64_t *)baton = col_int(st, row, 0);
}

apr_status_t rs_store_count(rs_store_t *st, const char *set, apr_int64_t *n)
{
    const void *args[] = { set };
    apr_pool_t *p;
    apr_status_t rv;
    *n = 0;
    apr_pool_create(&p, st->pool);
    rv = select_rows(st, p, ST_COUNT, args, get_count, n);
    apr_pool_destroy(p);
    return rv;
}

static void add_item(rs_store_t *st, apr_pool_t *p, apr_dbd_row_t *row, void *baton)
{
    rs_item_t *it = apr_array_push(baton);
    row_item(st, p, row, it);
}

apr_status_t rs_store_page(rs_store_t *st, apr_pool_t *p, const char *set,
                           const char *after_dir, const char *after_name,
                           int limit, apr_array_header_t **out)
{
    *out = apr_array_make(p, limit > 0 && limit < 65536 ? limit : 1024, sizeof(rs_item_t));
    if (!after_dir) {
        const void *args[] = { set, &limit };
        return select_rows(st, p, ST_PAGE_FIRST, args, add_item, *out);
    }
    else {
        /* "dir >= ?" is implied by the rest, but it lets the planner seek
         * in the primary key instead of walking the set from its start on
         * every page (which made writing a list quadratic). */
        const void *args[] = { set, after_dir, after_dir, after_dir, after_name, &limit };
        return select_rows(st, p, ST_PAGE, args, add_item, *out);
    }
}

static void get_str(rs_store_t *st, apr_pool_t *p, apr_dbd_row_t *row, void *baton)
{
    *(const char **)baton = col_str(st, p, row, 0);
}

apr_status_t rs_store_meta_get(rs_store_t *st, apr_pool_t *p, const char *key,
                               const char **value)
{
    const void *args[] = { key };
    *value = NULL;
    return select_rows(st, p, ST_META_GET, args, get_str, value);
}

apr_status_t rs_store_meta_put(rs_store_t *st, const char *key, const char *value)
{
    const void *args[] = { key, value };
    return exec(st, ST_META_PUT, args);
}

/* ------------------------------------------------ generic statements */

struct rs_store_stmt_t {
    apr_dbd_prepared_t *prep;
    const char *sql;
};

apr_status_t rs_store_ddl(rs_store_t *st, const char *q)
{
    int n, rc = apr_dbd_query(st->drv, st->h, &n, q);
    return rc ? fail(st, rc, q) : APR_SUCCESS;
}

apr_status_t rs_store_prepare(rs_store_t *st, const char *q, rs_store_stmt_t **out)
{
    rs_store_stmt_t *s = apr_pcalloc(st->pool, sizeof(*s));
    int rc = apr_dbd_prepare(st->drv, st->pool, st->h, q, NULL, &s->prep);
    if (rc) {
        return fail(st, rc, q);
    }
    s->sql = q;
    *out = s;
    return APR_SUCCESS;
}

apr_status_t rs_store_exec(rs_store_t *st, rs_store_stmt_t *s, const void **args, int *nrows)
{
    int n = 0, rc = apr_dbd_pbquery(st->drv, st->pool, st->h, &n, s->prep, args);
    if (rc) {
        return fail(st, rc, s->sql);
    }
    if (nrows) {
        *nrows = n;
    }
    return APR_SUCCESS;
}

apr_status_t rs_store_query(rs_store_t *st, apr_pool_t *p, rs_store_stmt_t *s,
                            const void **args, rs_store_row_fn *fn, void *baton)
{
    apr_dbd_results_t *res = NULL;
    apr_dbd_row_t *row = NULL;
    const char *cols[32];
    int rc = apr_dbd_pbselect(st->drv, p, st->h, &res, s->prep, 0, args), n, i;

    if (rc) {
        return fail(st, rc, s->sql);
    }
    n = apr_dbd_num_cols(st->drv, res);
    if (n > 32) {
        n = 32;
    }
    while ((rc = apr_dbd_get_row(st->drv, p, res, &row, -1)) == 0) {
        for (i = 0; i < n; i++) {
            const char *v = apr_dbd_get_entry(st->drv, row, i);
            cols[i] = v ? apr_pstrdup(p, v) : NULL;
        }
        fn(baton, p, cols, n);
    }
    return rc == -1 ? APR_SUCCESS : fail(st, rc, s->sql);
}
