/* SPDX-License-Identifier: Apache-2.0 */
/* rs_storelock.c - see rs_storelock.h */
#include <string.h>
#include <openssl/evp.h>
#include <apr_strings.h>
#include "rs_storelock.h"

/* The held guard's lock in pg_locks: classid and objid are the key's
 * high and low 32 bits, objsubid 1 for a 64-bit key.  Taken only when
 * the session does not hold it already (a session-level advisory lock
 * counts, and would need as many releases as takes). */
static const char *const try_sql =
    "SELECT CASE WHEN EXISTS (SELECT 1 FROM pg_catalog.pg_locks WHERE locktype = 'advisory'"
    " AND pid = pg_backend_pid() AND granted AND objsubid = 1"
    " AND CAST(classid AS BIGINT) = CAST(%lld AS BIGINT)"
    " AND CAST(objid AS BIGINT) = CAST(%lld AS BIGINT))"
    " THEN TRUE ELSE pg_try_advisory_lock(CAST(%lld AS BIGINT)) END";
static const char *const release_sql =
    "SELECT pg_advisory_unlock(CAST(%lld AS BIGINT)) FROM pg_catalog.pg_locks"
    " WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted AND objsubid = 1"
    " AND CAST(classid AS BIGINT) = CAST(%lld AS BIGINT)"
    " AND CAST(objid AS BIGINT) = CAST(%lld AS BIGINT)";
static const char *const schema_sql = "SELECT current_schema()";

static void first_col(void *baton, apr_pool_t *p, const char *const *cols, int n)
{
    char *out = baton;
    apr_cpystrn(out, n > 0 && cols[0] ? cols[0] : "", 256);
    (void)p;
}

/* The set's key and its halves as pg_locks shows them. */
static apr_status_t key_of(rs_db_t *db, const char *set, apr_int64_t k[3])
{
    static const char prefix[] = "resourcesync:";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    char schema[256] = "";
    rs_db_stmt_t *s;
    apr_uint64_t key = 0;
    EVP_MD_CTX *ctx;
    apr_status_t rv;
    int i, ok;

    if ((rv = rs_db_stmt(db, schema_sql, &s)) != APR_SUCCESS
        || (rv = rs_db_query(db, NULL, s, NULL, first_col, schema)) != APR_SUCCESS) {
        return rv;
    }
    if (!(ctx = EVP_MD_CTX_new())) {
        return APR_ENOMEM;
    }
    ok = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)
         && EVP_DigestUpdate(ctx, prefix, sizeof(prefix) - 1)
         && EVP_DigestUpdate(ctx, schema, strlen(schema) + 1)
         && EVP_DigestUpdate(ctx, set, strlen(set)) && EVP_DigestFinal_ex(ctx, md, &mdlen);
    EVP_MD_CTX_free(ctx);
    if (!ok || mdlen < 8) {
        return APR_EGENERAL;
    }
    for (i = 0; i < 8; i++) {
        key = key << 8 | md[i];
    }
    k[0] = (apr_int64_t)key;
    k[1] = (apr_int64_t)(key >> 32);
    k[2] = (apr_int64_t)(key & 0xffffffffu);
    return APR_SUCCESS;
}

static void get_bool(void *baton, apr_pool_t *p, const char *const *cols, int n)
{
    *(int *)baton = n > 0 && cols[0] && cols[0][0] == 't';
    (void)p;
}

static int is_pgsql(const rs_db_t *db)
{
    return !strcmp(rs_db_driver(db), "pgsql");
}

apr_status_t rs_storelock_try(rs_db_t *db, const char *set, int *held)
{
    apr_int64_t k[3];
    const void *args[3];
    rs_db_stmt_t *s;
    apr_status_t rv;

    *held = 0;
    if (!is_pgsql(db)) {
        *held = 1; /* one node: rs_setlock serves */
        return APR_SUCCESS;
    }
    if ((rv = key_of(db, set, k)) != APR_SUCCESS
        || (rv = rs_db_stmt(db, try_sql, &s)) != APR_SUCCESS) {
        return rv;
    }
    args[0] = &k[1];
    args[1] = &k[2];
    args[2] = &k[0];
    return rs_db_query(db, NULL, s, args, get_bool, held);
}

apr_status_t rs_storelock_release(rs_db_t *db, const char *set)
{
    apr_int64_t k[3];
    const void *args[3];
    rs_db_stmt_t *s;
    apr_status_t rv;
    int released = 0;

    if (!is_pgsql(db)) {
        return APR_SUCCESS;
    }
    if ((rv = key_of(db, set, k)) != APR_SUCCESS
        || (rv = rs_db_stmt(db, release_sql, &s)) != APR_SUCCESS) {
        return rv;
    }
    args[0] = &k[0];
    args[1] = &k[1];
    args[2] = &k[2];
    return rs_db_query(db, NULL, s, args, get_bool, &released);
}
