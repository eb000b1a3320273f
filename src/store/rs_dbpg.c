/* SPDX-License-Identifier: Apache-2.0 */
/* rs_dbpg.c - PostgreSQL's own part of rs_dbdriver.c (see rs_db_priv.h):
 * the session's settings, the SQL_ASCII check, the causes of failures
 * (SQLSTATE), the translation of the units' DDL, a DSN shown without its
 * password.  It calls nothing of rs_db's other files: rs_dbdriver.c
 * dispatches to it. */
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <errno.h>
#include <apr_strings.h>
#include <apr_dbd.h>
#include "rs_db.h"
#include "rs_db_priv.h"

/* Whether a conninfo value must be quoted to be read back as one. */
static int needs_quotes(const char *v)
{
    if (!*v) {
        return 1;
    }
    for (; *v; v++) {
        if (isspace((unsigned char)*v) || *v == '\'' || *v == '\\') {
            return 1;
        }
    }
    return 0;
}

const char *rs_db_dsn_display(apr_pool_t *p, const char *driver, const char *dsn)
{
    PQconninfoOption *opts, *o;
    char *err = NULL;
    const char *out = "";

    if (!driver || strcmp(driver, "pgsql")) {
        return dsn;
    }
    /* libpq's own parser reads both forms (key=value and URI), so a
     * password is found wherever the DSN puts it; the DSN is shown as
     * the keywords it sets. */
    if (!(opts = PQconninfoParse(dsn, &err))) {
        PQfreemem(err);
        return "(a PostgreSQL DSN that libpq cannot parse)";
    }
    for (o = opts; o->keyword; o++) {
        const char *v = o->val;
        if (!v) {
            continue;
        }
        if (!strcmp(o->keyword, "password")) {
            v = "***";
        }
        else if (needs_quotes(v)) {
            char *q = apr_palloc(p, 2 * strlen(v) + 3), *d = q;
            *d++ = '\'';
            for (; *v; v++) {
                if (*v == '\'' || *v == '\\') {
                    *d++ = '\\';
                }
                *d++ = *v;
            }
            *d++ = '\'';
            *d = '\0';
            v = q;
        }
        out = apr_pstrcat(p, out, *out ? " " : "", o->keyword, "=", v, NULL);
    }
    PQconninfoFree(opts);
    return out;
}

apr_status_t rs_db_pg_opened(rs_db_t *db)
{
    PGconn *conn = apr_dbd_native_handle(db->drv, db->h);
    const char *enc = conn ? PQparameterStatus(conn, "server_encoding") : NULL;
    /* File names are bytes: only SQL_ASCII stores every byte
     * sequence as it is (UTF8 rejects invalid sequences, others
     * convert). */
    if (!enc || strcmp(enc, "SQL_ASCII")) {
        apr_snprintf(db->errmsg, sizeof(db->errmsg),
                     "the database's server_encoding is %s, not SQL_ASCII (file names are "
                     "bytes): create it with ENCODING 'SQL_ASCII' LC_COLLATE 'C' "
                     "LC_CTYPE 'C' TEMPLATE template0",
                     enc ? enc : "unknown");
        rs_log_emit(db->log, RS_LOG_ERR, APR_EGENERAL, "state store: cannot use '%s': %s",
                    rs_db_dsn_display(db->pool, "pgsql", db->dsn), db->errmsg);
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

/* Run one setting of the session (no result); its failure logged. */
static apr_status_t pg_set(rs_db_t *db, const char *sql)
{
    int n, rc = apr_dbd_query(db->drv, db->h, &n, sql);
    apr_status_t rv;
    if (!rc) {
        return APR_SUCCESS;
    }
    rs_db_pg_error(db, apr_dbd_error(db->drv, db->h, rc));
    rv = rs_db_pg_status(db);
    rs_log_emit(db->log, RS_LOG_ERR, rv, "state store: %s failed: %s", sql, db->errmsg);
    return rv;
}

apr_status_t rs_db_pg_lock_timeout(rs_db_t *db, int ms)
{
    /* lock_timeout 0 waits for ever: "at once" is 1 ms.  The setting is
     * the session's, a statement rolled back keeps it. */
    char sql[64];
    apr_snprintf(sql, sizeof(sql), "SET lock_timeout = %d", ms > 0 ? ms : 1);
    return pg_set(db, sql);
}

/* name: the code's own constant, a word (never outside input). */
apr_status_t rs_db_pg_xact_lock(rs_db_t *db, const char *name)
{
    char sql[160];
    apr_snprintf(sql, sizeof(sql),
                 "SELECT pg_advisory_xact_lock(hashtextextended('resourcesync:%s:' || "
                 "current_schema(), 0))",
                 name);
    return pg_set(db, sql);
}

apr_status_t rs_db_pg_idle_limit(rs_db_t *db, int ms)
{
    char sql[80];
    apr_snprintf(sql, sizeof(sql), "SET idle_in_transaction_session_timeout = %d", ms > 0 ? ms : 0);
    return pg_set(db, sql);
}

/* libpq's notices (a NOTICE or WARNING the server sends) go to the
 * store's log instead of stderr; client_min_messages keeps NOTICEs from
 * being sent at all. */
static void pg_notice(void *arg, const char *message)
{
    rs_db_t *db = arg;
    apr_size_t n = strlen(message);
    while (n > 0 && message[n - 1] == '\n') {
        n--;
    }
    rs_log_emit(db->log, RS_LOG_WARN, APR_SUCCESS, "state store: PostgreSQL says: %.*s", (int)n,
                message);
}

apr_status_t rs_db_pg_configure(rs_db_t *db, int mode)
{
    PGconn *conn = apr_dbd_native_handle(db->drv, db->h);
    apr_status_t rv;

    PQsetNoticeProcessor(conn, pg_notice, db);
    /* Messages with their SQLSTATE: rs_db_drv_error reads the cause from
     * it (apr_dbd clears the result that holds it). */
    PQsetErrorVerbosity(conn, PQERRORS_VERBOSE);
    if ((rv = pg_set(db, "SET client_min_messages = warning")) != APR_SUCCESS
        || (rv = rs_db_pg_lock_timeout(db, 10000)) != APR_SUCCESS) {
        return rv;
    }
    if (mode == RS_DB_READONLY) {
        rv = pg_set(db, "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY");
    }
    return rv;
}

void rs_db_pg_error(rs_db_t *db, const char *msg)
{
    db->sqlstate[0] = '\0';
    if (!msg) {
        db->errmsg[0] = '\0';
    }
    /* Verbose: "ERROR:  40P01: deadlock detected\nDETAIL: ...".  The
         * message is its first line without severity and code; the code
         * is kept apart. */
    const char *c = strstr(msg, ":  ");
    const char *end;
    if (c && strlen(c + 3) > 6 && c[8] == ':' && c[9] == ' ') {
        memcpy(db->sqlstate, c + 3, 5);
        db->sqlstate[5] = '\0';
        msg = c + 10;
    }
    end = strchr(msg, '\n');
    apr_cpystrn(db->errmsg, msg,
                end && (apr_size_t)(end - msg) < sizeof(db->errmsg) ? (apr_size_t)(end - msg) + 1
                                                                    : sizeof(db->errmsg));
}

/* The cause of a PostgreSQL failure: from its SQLSTATE (classes and
 * codes of PostgreSQL's appendix A), or the connection's state when the
 * failure has none (libpq's own: the server went away). */
apr_status_t rs_db_pg_status(rs_db_t *db)
{
    PGconn *conn = apr_dbd_native_handle(db->drv, db->h);
    const char *st = db->sqlstate;

    if (!conn || PQstatus(conn) == CONNECTION_BAD) {
        return APR_ECONNRESET;
    }
    if (!strcmp(st, "40P01") || !strcmp(st, "40001") || !strcmp(st, "55P03") || !strcmp(st, "57014")
        || !strcmp(st, "53300")) {
        return APR_EBUSY; /* deadlock, serialization, lock or statement timeout, slots */
    }
    if (!strcmp(st, "53100")) {
        return APR_ENOSPC;
    }
    if (!strcmp(st, "53200")) {
        return APR_FROM_OS_ERROR(ENOMEM);
    }
    if (!strcmp(st, "25006")) {
        return APR_EROFS;
    }
    if (!strcmp(st, "42501") || !strncmp(st, "28", 2)) {
        return APR_EACCES;
    }
    if (!strncmp(st, "08", 2) || !strcmp(st, "57P01") || !strcmp(st, "57P02")
        || !strcmp(st, "57P03")) {
        return APR_ECONNRESET; /* connection failure, server shut down */
    }
    if (!strcmp(st, "58030")) {
        return APR_EIO;
    }
    return APR_EGENERAL;
}

apr_status_t rs_db_pg_open_status(const char *dsn)
{
    PQconninfoOption *opts;
    char *err = NULL;
    /* A DSN that cannot be parsed stays wrong; anything else (no
         * server, no database or role yet, too many connections) may
         * pass: the caller retries. */
    if (!(opts = PQconninfoParse(dsn, &err))) {
        PQfreemem(err);
        return APR_EINVAL;
    }
    PQconninfoFree(opts);
    return APR_ECONNREFUSED;
}

/* Whether the word w (length n) is at s, a whole word. */
static int word_at(const char *start, const char *s, const char *w)
{
    apr_size_t n = strlen(w);
    return (s == start || !(isalnum((unsigned char)s[-1]) || s[-1] == '_')) && !strncmp(s, w, n)
           && !(isalnum((unsigned char)s[n]) || s[n] == '_');
}

/* The units write their DDL for SQLite, whose existing stores must see
 * it unchanged.  For PostgreSQL, CREATE TABLE and ALTER TABLE are
 * translated here, word by word outside quotes:
 *   INTEGER PRIMARY KEY  -> BIGINT GENERATED BY DEFAULT AS IDENTITY
 *                           PRIMARY KEY (SQLite's rowid alias: a new
 *                           row's key is assigned when none is given)
 *   INTEGER              -> BIGINT (SQLite's integers are 64 bit)
 *   BLOB                 -> TEXT (the units bind what they store there
 *                           as text: a notification's payload)
 *   TEXT                 -> TEXT COLLATE "C" (names compare as bytes, as
 *                           in SQLite: listings, the ranges of a
 *                           directory and the walk's merge rely on it)
 *   WITHOUT ROWID        -> nothing (a table's rows are in a heap; the
 *                           primary key's index orders them)
 * Other statements (indexes, copies of rows) run as they are. */
const char *rs_db_pg_ddl(apr_pool_t *p, const char *sql)
{
    static const struct {
        const char *from, *to;
    } words[] = { { "INTEGER PRIMARY KEY", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY" },
                  { "INTEGER", "BIGINT" },
                  { "BLOB", "TEXT COLLATE \"C\"" },
                  { "TEXT", "TEXT COLLATE \"C\"" },
                  { " WITHOUT ROWID", "" },
                  { NULL, NULL } };
    apr_size_t len = strlen(sql);
    char *out, *d;
    const char *c;
    char quote = 0;
    int i;

    if (strncmp(sql, "CREATE TABLE ", 13) && strncmp(sql, "ALTER TABLE ", 12)) {
        return sql;
    }
    /* Each replacement at most 40 bytes longer than what it replaces,
     * and every word of it at least 4 bytes long. */
    d = out = apr_palloc(p, len + (len / 4 + 1) * 48 + 1);
    for (c = sql; *c;) {
        if (quote) {
            quote = *c == quote ? 0 : quote;
            *d++ = *c++;
            continue;
        }
        if (*c == '\'' || *c == '"') {
            quote = *c;
            *d++ = *c++;
            continue;
        }
        for (i = 0; words[i].from; i++) {
            const char *w = words[i].from[0] == ' ' ? words[i].from + 1 : words[i].from;
            const char *at = words[i].from[0] == ' ' && *c == ' ' ? c + 1 : c;
            if ((at != c || words[i].from[0] != ' ') && word_at(sql, at, w)) {
                break;
            }
        }
        if (words[i].from) {
            apr_size_t n = strlen(words[i].to);
            memcpy(d, words[i].to, n);
            d += n;
            c += strlen(words[i].from);
        }
        else {
            *d++ = *c++;
        }
    }
    *d = '\0';
    return out;
}
