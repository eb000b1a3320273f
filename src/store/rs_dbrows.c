/* SPDX-License-Identifier: Apache-2.0 */
/* rs_dbrows.c - rs_db_each: a select's rows streamed with typed columns
 * (see rs_db.h). */
#include <string.h>
#include <apr_strings.h>
#include "rs_db.h"
#include "rs_db_priv.h"

const char *rs_db_row_text(const rs_db_row_t *row, int i)
{
    if (row->native) {
        return (const char *)sqlite3_column_text(row->native, i);
    }
    return i < row->ncols ? row->cols[i] : NULL;
}

apr_int64_t rs_db_row_int64(const rs_db_row_t *row, int i)
{
    const char *v;
    if (row->native) {
        return sqlite3_column_int64(row->native, i);
    }
    v = i < row->ncols ? row->cols[i] : NULL;
    return v ? apr_atoi64(v) : 0;
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

/* SQLite's statement for s: apr_dbd's markers (%s, %d, %lld) become
 * "?" parameters, their types kept for binding. */
static apr_status_t native_prepare(rs_db_t *db, rs_db_stmt_t *s)
{
    sqlite3 *conn = apr_dbd_native_handle(db->drv, db->h);
    apr_size_t n = strlen(s->sql);
    char *q = apr_palloc(db->pool, n + 1), *d = q;
    const char *c;
    int rc;

    s->types = apr_palloc(db->pool, n / 2 + 1);
    s->nargs = 0;
    for (c = s->sql; *c;) {
        if (c[0] == '%' && (c[1] == 's' || c[1] == 'd')) {
            s->types[s->nargs++] = c[1];
            *d++ = '?';
            c += 2;
        }
        else if (!strncmp(c, "%lld", 4)) {
            s->types[s->nargs++] = 'l';
            *d++ = '?';
            c += 4;
        }
        else if (c[0] == '%') {
            rs_log_emit(db->log, RS_LOG_ERR, APR_ENOTIMPL,
                        "state store: unsupported marker "
                        "in \"%s\"",
                        s->sql);
            return APR_ENOTIMPL;
        }
        else {
            *d++ = *c++;
        }
    }
    *d = '\0';
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
        else {
            rc = sqlite3_bind_int64(s->native, i + 1, *(const apr_int64_t *)a);
        }
    }
    return rc;
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
        row.cols = cols;
        row.ncols = ncols;
        e->stopped = e->fn(e->baton, &row);
    }
}

apr_status_t rs_db_each(rs_db_t *db, rs_db_stmt_t *s, const void **args, rs_db_each_fn *fn,
                        void *baton)
{
    apr_status_t rv = APR_SUCCESS;
    rs_db_row_t row;
    int rc;

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
