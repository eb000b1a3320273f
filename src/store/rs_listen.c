/* SPDX-License-Identifier: Apache-2.0 */
/* rs_listen.c - see rs_listen.h */
#include <string.h>
#include <apr_strings.h>
#include <libpq-fe.h>
#include "rs_listen.h"

struct rs_listen_t {
    PGconn *conn;
    apr_pool_t *pool;
    char err[256];
};

/* libpq's messages go to rs_listen_error, never to stderr. */
static void quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* The first line of libpq's message msg into buf (len bytes). */
static void first_line(char *buf, apr_size_t len, const char *msg)
{
    apr_size_t n = msg ? strcspn(msg, "\n") : 0;
    if (n >= len) {
        n = len - 1;
    }
    if (len) {
        memcpy(buf, msg ? msg : "", n);
        buf[n] = '\0';
    }
}

static apr_status_t cleanup(void *baton)
{
    rs_listen_t *l = baton;
    if (l->conn) {
        PQfinish(l->conn);
        l->conn = NULL;
    }
    return APR_SUCCESS;
}

apr_status_t rs_listen_open(rs_listen_t **out, apr_pool_t *p, const char *dsn, const char *channel,
                            char *err, apr_size_t errlen)
{
    /* connect_timeout first: the DSN's own, expanded after it, wins. */
    const char *const keys[] = { "connect_timeout", "dbname", NULL };
    const char *const vals[] = { RS_LISTEN_CONNECT_TIMEOUT, dsn, NULL };
    rs_listen_t *l = apr_pcalloc(p, sizeof(*l));
    PGresult *r;
    char *ident, *sql;

    *out = NULL;
    l->pool = p;
    l->conn = PQconnectdbParams(keys, vals, 1);
    apr_pool_cleanup_register(p, l, cleanup, apr_pool_cleanup_null);
    if (!l->conn || PQstatus(l->conn) != CONNECTION_OK) {
        first_line(err, errlen, l->conn ? PQerrorMessage(l->conn) : "out of memory");
        rs_listen_close(l);
        return APR_ECONNREFUSED;
    }
    PQsetNoticeProcessor(l->conn, quiet, NULL);
    if (!(ident = PQescapeIdentifier(l->conn, channel, strlen(channel)))) {
        first_line(err, errlen, PQerrorMessage(l->conn));
        rs_listen_close(l);
        return APR_EGENERAL;
    }
    sql = apr_pstrcat(p, "LISTEN ", ident, NULL);
    PQfreemem(ident);
    r = PQexec(l->conn, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        first_line(err, errlen, PQerrorMessage(l->conn));
        PQclear(r);
        rs_listen_close(l);
        return APR_EGENERAL;
    }
    PQclear(r);
    PQsetnonblocking(l->conn, 1);
    *out = l;
    return APR_SUCCESS;
}

int rs_listen_fd(const rs_listen_t *l)
{
    return l && l->conn ? PQsocket(l->conn) : -1;
}

int rs_listen_backend(const rs_listen_t *l)
{
    return l && l->conn ? PQbackendPID(l->conn) : 0;
}

apr_status_t rs_listen_read(rs_listen_t *l, rs_listen_fn *fn, void *baton, int *n)
{
    PGnotify *nf;
    int got = 0;

    if (n) {
        *n = 0;
    }
    if (!l || !l->conn) {
        return APR_ECONNRESET;
    }
    if (!PQconsumeInput(l->conn) || PQstatus(l->conn) != CONNECTION_OK) {
        first_line(l->err, sizeof(l->err), PQerrorMessage(l->conn));
        return APR_ECONNRESET;
    }
    while ((nf = PQnotifies(l->conn))) {
        if (fn) {
            fn(baton, nf->extra ? nf->extra : "");
        }
        PQfreemem(nf);
        got++;
    }
    if (n) {
        *n = got;
    }
    return APR_SUCCESS;
}

const char *rs_listen_error(const rs_listen_t *l)
{
    return l ? l->err : "";
}

void rs_listen_close(rs_listen_t *l)
{
    if (l) {
        apr_pool_cleanup_kill(l->pool, l, cleanup);
        cleanup(l);
    }
}
