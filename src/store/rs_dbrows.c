/* SPDX-License-Identifier: Apache-2.0 */
/* rs_dbrows.c - rs_db_each: a select's rows streamed with typed columns
 * (see rs_db.h); PostgreSQL's statements on the native connection. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <apr_strings.h>
#include "rs_db.h"
#include "rs_db_priv.h"

const char *rs_db_row_text(const rs_db_row_t *row, int i)
{
    if (row->native) {
        return (const char *)sqlite3_column_text(row->native, i);
    }
    if (row->pg) {
        return i < PQnfields(row->pg) && !PQgetisnull(row->pg, 0, i) ? PQgetvalue(row->pg, 0, i)
                                                                     : NULL;
    }
    return i < row->ncols ? row->cols[i] : NULL;
}

/* A binary integer of PostgreSQL's (int2, int4, int8: big-endian). */
static apr_int64_t pg_binary_int(const unsigned char *v, int len)
{
    apr_uint64_t u = 0;
    int k;
    for (k = 0; k < len; k++) {
        u = (u << 8) | v[k];
    }
    /* Sign-extend the narrower integers. */
    if (len > 0 && len < 8 && (v[0] & 0x80)) {
        u |= ~(apr_uint64_t)0 << (8 * len);
    }
    return (apr_int64_t)u;
}

apr_int64_t rs_db_row_int64(const rs_db_row_t *row, int i)
{
    const char *v;
    if (row->native) {
        return sqlite3_column_int64(row->native, i);
    }
    v = row->pg ? rs_db_row_text(row, i) : i < row->ncols ? row->cols[i] : NULL;
    if (v && row->pg && PQfformat(row->pg, i) == 1) {
        return pg_binary_int((const unsigned char *)v, PQgetlength(row->pg, 0, i));
    }
    return v ? apr_atoi64(v) : 0;
}

const void *rs_db_row_blob(const rs_db_row_t *row, int i, apr_size_t *len)
{
    const void *v = NULL;
    *len = 0;
    if (row->native) {
        v = sqlite3_column_blob(row->native, i);
        *len = (apr_size_t)sqlite3_column_bytes(row->native, i);
        /* A zero-length BLOB reads as NULL: an empty value is not SQL
         * NULL. */
        return v || sqlite3_column_type(row->native, i) == SQLITE_NULL ? v : "";
    }
    if (row->pg && PQfformat(row->pg, i) == 1 && (v = rs_db_row_text(row, i))) {
        *len = (apr_size_t)PQgetlength(row->pg, 0, i);
    }
    return row->pg && PQfformat(row->pg, i) == 1 ? v : NULL;
}

/* Pool cleanup: finalize the native statements of rs_db_each. */
static apr_status_t rows_close(void *data)
{
    rs_db_t *db = data;
    int i;

    for (i = 0; db->natives && i < db->natives->nelts; i++) {
        sqlite3_finalize(APR_ARRAY_IDX(db->natives, i, sqlite3_stmt *));
    }
    db->natives = NULL;
    return APR_SUCCESS;
}

/* SQLite's statement for s, "?" parameters. */
static apr_status_t native_prepare(rs_db_t *db, rs_db_stmt_t *s)
{
    sqlite3 *conn = apr_dbd_native_handle(db->drv, db->h);
    char *q = rs_db_drv_markers(db, s, 0);
    int rc;

    if (!q) {
        return APR_ENOTIMPL;
    }
    rc = sqlite3_prepare_v2(conn, q, -1, &s->native, NULL);
    if (rc != SQLITE_OK) {
        char what[512];
        sqlite3_finalize(s->native);
        s->native = NULL;
        apr_snprintf(what, sizeof(what), "preparing \"%s\"", s->sql);
        return rs_db_fail(db, rc, what);
    }
    if (!db->natives) {
        /* Registered after the connection's own cleanup (rs_db_open), so
         * it runs before it: every statement is finalized before the
         * connection is closed. */
        db->natives = apr_array_make(db->pool, 4, sizeof(void *));
        apr_pool_cleanup_register(db->pool, db, rows_close, apr_pool_cleanup_null);
    }
    APR_ARRAY_PUSH(db->natives, sqlite3_stmt *) = s->native;
    return APR_SUCCESS;
}

/* Bind args to s's native statement (they outlive the run). */
static int native_bind(rs_db_stmt_t *s, const void **args)
{
    int i, rc = SQLITE_OK;
    for (i = 0; rc == SQLITE_OK && i < s->nargs; i++) {
        const void *a = args[i];
        if (!a) {
            rc = sqlite3_bind_null(s->native, i + 1);
        }
        else if (s->types[i] == 's') {
            rc = sqlite3_bind_text(s->native, i + 1, a, -1, SQLITE_STATIC);
        }
        else if (s->types[i] == 'd') {
            rc = sqlite3_bind_int(s->native, i + 1, *(const int *)a);
        }
        else if (s->types[i] == 'b') {
            const rs_db_blob_t *b = a;
            /* (a NULL pointer would bind SQL NULL, not an empty value) */
            rc =
                sqlite3_bind_blob64(s->native, i + 1, b->len ? b->data : "", b->len, SQLITE_STATIC);
        }
        else {
            rc = sqlite3_bind_int64(s->native, i + 1, *(const apr_int64_t *)a);
        }
    }
    return rc;
}

apr_status_t rs_db_native_exec(rs_db_t *db, rs_db_stmt_t *s, const void **args, int *nrows)
{
    sqlite3 *conn = apr_dbd_native_handle(db->drv, db->h);
    apr_status_t rv = APR_SUCCESS;
    int rc;

    if (!s->native && (rv = native_prepare(db, s)) != APR_SUCCESS) {
        return rv;
    }
    rc = native_bind(s, args);
    while (rc == SQLITE_OK && (rc = sqlite3_step(s->native)) == SQLITE_ROW) {
        rc = SQLITE_OK; /* (a RETURNING row: dropped) */
    }
    if (rc != SQLITE_DONE) {
        rv = rs_db_fail(db, rc, s->sql);
        if (db->txn) { /* apr_dbd did not see it: its transaction rolls back too */
            apr_dbd_transaction_mode_set(db->drv, db->txn, APR_DBD_TRANSACTION_ROLLBACK);
        }
    }
    else if (nrows) {
        *nrows = sqlite3_changes(conn);
    }
    sqlite3_reset(s->native);
    sqlite3_clear_bindings(s->native);
    return rv;
}

/* rs_db_query's rows on PostgreSQL: each row's columns as text. */
typedef struct {
    rs_db_row_fn *fn;
    void *baton;
    apr_pool_t *p, *cp;
    const char **cols;
    int cap;
} query_t;

static int query_row(void *baton, const rs_db_row_t *row)
{
    query_t *q = baton;
    int i, n = PQnfields(row->pg);
    if (n > q->cap) {
        q->cols = apr_palloc(q->cp, sizeof(*q->cols) * n);
        q->cap = n;
    }
    for (i = 0; i < n; i++) {
        q->cols[i] = rs_db_row_text(row, i);
    }
    q->fn(q->baton, q->p, q->cols, n);
    return 0;
}

apr_status_t rs_db_query(rs_db_t *db, apr_pool_t *p, rs_db_stmt_t *s, const void **args,
                         rs_db_row_fn *fn, void *baton)
{
    apr_dbd_results_t *res = NULL;
    apr_dbd_row_t *row = NULL;
    apr_pool_t *cp, *rp;
    const char **cols = NULL;
    apr_status_t rv = APR_SUCCESS;
    int rc, n, i, cap = 0;

    apr_pool_create(&cp, db->pool);
    if (db->kind == DB_PGSQL) {
        query_t q = { fn, baton, p, cp, NULL, 0 };
        rv = rs_db_pg_run(db, s, args, query_row, &q, NULL);
        apr_pool_destroy(cp);
        return rv;
    }
    rc = apr_dbd_pbselect(db->drv, cp, db->h, &res, s->prep, 0, args);
    if (rc) {
        rv = rs_db_fail(db, rc, s->sql);
        apr_pool_destroy(cp);
        return rv;
    }
    /* Drivers that fetch row by row allocate each row: a pool per row.
     * The number of columns is asked at every row: apr_dbd's pgsql
     * driver knows it only once a row was read. */
    apr_pool_create(&rp, cp);
    while ((rc = apr_dbd_get_row(db->drv, rp, res, &row, -1)) == 0) {
        if ((n = apr_dbd_num_cols(db->drv, res)) > cap) {
            cols = apr_pcalloc(cp, sizeof(*cols) * n);
            cap = n;
        }
        for (i = 0; i < n; i++) {
            cols[i] = apr_dbd_get_entry(db->drv, row, i);
        }
        fn(baton, p, cols, n);
        apr_pool_clear(rp);
    }
    if (rc != -1) {
        rv = rs_db_fail(db, rc, s->sql);
    }
    apr_pool_destroy(cp);
    return rv;
}

/* rs_db_row_fn of rs_db_each on other drivers. */
typedef struct {
    rs_db_each_fn *fn;
    void *baton;
    int stopped;
} each_t;

static void each_row(void *baton, apr_pool_t *p, const char *const *cols, int ncols)
{
    each_t *e = baton;
    rs_db_row_t row;
    (void)p;
    if (!e->stopped) {
        row.native = NULL;
        row.pg = NULL;
        row.cols = cols;
        row.ncols = ncols;
        e->stopped = e->fn(e->baton, &row);
    }
}

/* ------------------------------------------------ PostgreSQL */

/* Fail a statement of PostgreSQL's: inside a transaction, the driver's
 * transaction is marked to roll back too (apr_dbd did not see the
 * failure, and the server has aborted the transaction). */
static apr_status_t pg_fail(rs_db_t *db, const char *what)
{
    apr_status_t rv = rs_db_fail(db, PGRES_FATAL_ERROR, what);
    if (db->txn) {
        apr_dbd_transaction_mode_set(db->drv, db->txn, APR_DBD_TRANSACTION_ROLLBACK);
    }
    return rv;
}

/* Prepare s on the server under a name of its own (the connection's
 * count): every later run sends the name and the values only, and the
 * server plans it once (or chooses a generic plan after five runs). */
apr_status_t rs_db_pg_prepare(rs_db_t *db, rs_db_stmt_t *s)
{
    PGconn *conn = apr_dbd_native_handle(db->drv, db->h);
    char *q = rs_db_drv_markers(db, s, 1);
    char name[32];
    PGresult *r;
    int ok;

    if (!q) {
        return APR_ENOTIMPL;
    }
    apr_snprintf(name, sizeof(name), "rs%d", db->pg_stmts + 1);
    r = PQprepare(conn, name, q, s->nargs, NULL);
    ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok) {
        char what[512];
        apr_snprintf(what, sizeof(what), "preparing \"%s\"", s->sql);
        return pg_fail(db, what);
    }
    db->pg_stmts++;
    s->pg_name = apr_pstrdup(db->pool, name);
    return APR_SUCCESS;
}

/* The parameters of s for libpq (in cp): text, except bytes, which go
 * as binary parameters with their lengths (*lengths and *formats stay
 * NULL for a statement without). */
static const char **pg_values(apr_pool_t *cp, const rs_db_stmt_t *s, const void **args,
                              int **lengths, int **formats)
{
    const char **values = apr_pcalloc(cp, sizeof(*values) * (s->nargs + 1));
    int i;

    if (s->blobs) {
        *lengths = apr_pcalloc(cp, sizeof(**lengths) * (s->nargs + 1));
        *formats = apr_pcalloc(cp, sizeof(**formats) * (s->nargs + 1));
    }
    for (i = 0; i < s->nargs; i++) {
        const void *a = args[i];
        if (a && s->types[i] == 'b') {
            const rs_db_blob_t *b = a;
            values[i] = b->len ? b->data : "";
            (*lengths)[i] = (int)b->len;
            (*formats)[i] = 1;
            continue;
        }
        values[i] = !a                   ? NULL
                    : s->types[i] == 's' ? a
                    : s->types[i] == 'd'
                        ? apr_itoa(cp, *(const int *)a)
                        : apr_psprintf(cp, "%" APR_INT64_T_FMT, *(const apr_int64_t *)a);
    }
    return values;
}

apr_status_t rs_db_pg_run(rs_db_t *db, rs_db_stmt_t *s, const void **args, rs_db_each_fn *fn,
                          void *baton, int *nrows)
{
    PGconn *conn = apr_dbd_native_handle(db->drv, db->h);
    const char **values;
    int *lengths = NULL, *formats = NULL;
    apr_pool_t *cp;
    PGresult *r;
    rs_db_row_t row;
    apr_status_t rv;
    int failed = 0, stopped = 0;

    if (!s->pg_name && (rv = rs_db_pg_prepare(db, s)) != APR_SUCCESS) {
        return rv;
    }
    apr_pool_create(&cp, db->pool);
    values = pg_values(cp, s, args, &lengths, &formats);
    if (!PQsendQueryPrepared(conn, s->pg_name, s->nargs, values, lengths, formats, s->binary)) {
        apr_pool_destroy(cp);
        return pg_fail(db, s->sql);
    }
    /* One result per row: memory stays that of one row, however many
     * the select returns. */
    if (fn) {
        PQsetSingleRowMode(conn);
    }
    memset(&row, 0, sizeof(row));
    /* Read to the end, also after fn stopped: the connection takes its
     * next statement only then.  (A cancel request would end a long
     * select sooner, but it may reach the server after the select
     * ended and cancel the next statement instead, and inside a
     * transaction it would abort the transaction.) */
    while ((r = PQgetResult(conn))) {
        switch (PQresultStatus(r)) {
        case PGRES_SINGLE_TUPLE:
            if (fn && !stopped && !failed) {
                row.pg = r;
                stopped = fn(baton, &row);
            }
            break;
        case PGRES_TUPLES_OK:
            break;
        case PGRES_COMMAND_OK:
            if (nrows) {
                *nrows = atoi(PQcmdTuples(r));
            }
            break;
        default:
            failed = 1;
            break;
        }
        PQclear(r);
    }
    apr_pool_destroy(cp);
    return failed || PQstatus(conn) == CONNECTION_BAD ? pg_fail(db, s->sql) : APR_SUCCESS;
}

apr_status_t rs_db_each(rs_db_t *db, rs_db_stmt_t *s, const void **args, rs_db_each_fn *fn,
                        void *baton)
{
    apr_status_t rv = APR_SUCCESS;
    rs_db_row_t row;
    int rc;

    if (db->kind == DB_PGSQL) {
        return rs_db_pg_run(db, s, args, fn, baton, NULL);
    }
    /* Outside apr_dbd's mutex only with a SQLite built to serialize its
     * connections (the default); else through the driver. */
    if (db->kind != DB_SQLITE || !sqlite3_threadsafe()) {
        each_t e = { fn, baton, 0 };
        return rs_db_query(db, NULL, s, args, each_row, &e);
    }
    if (!s->native && (rv = native_prepare(db, s)) != APR_SUCCESS) {
        return rv;
    }
    row.native = s->native;
    row.pg = NULL;
    row.cols = NULL;
    row.ncols = 0;
    rc = native_bind(s, args);
    while (rc == SQLITE_OK && (rc = sqlite3_step(s->native)) == SQLITE_ROW) {
        if (fn(baton, &row)) {
            rc = SQLITE_DONE;
        }
        else {
            rc = SQLITE_OK;
        }
    }
    if (rc != SQLITE_DONE) {
        rv = rs_db_fail(db, rc, s->sql);
    }
    /* Ends the read snapshot; bound strings are not used after this. */
    sqlite3_reset(s->native);
    sqlite3_clear_bindings(s->native);
    return rv;
}
