/* SPDX-License-Identifier: Apache-2.0 */
/* rs_linkdep.c - see rs_linkdep.h */
#include <apr_strings.h>
#include "rs_linkdep.h"

enum { L_SOURCES, L_TARGETS, L_DEL_SOURCE, L_ADD, L_CLEAR, L_ADD_BATCH, L_MAX };

/* RS_LINKDEP_BATCH rows of VALUES. */
#define ROW    "(%s, %s, %s)"
#define ROWS4  ROW ", " ROW ", " ROW ", " ROW
#define ROWS16 ROWS4 ", " ROWS4 ", " ROWS4 ", " ROWS4
#define ROWS32 ROWS16 ", " ROWS16

static const char *const sql[L_MAX] = {
    "SELECT source FROM linkdep WHERE setname = %s AND target = %s ORDER BY source",
    "SELECT target FROM linkdep WHERE setname = %s AND source = %s ORDER BY target",
    "DELETE FROM linkdep WHERE setname = %s AND source = %s",
    "INSERT INTO linkdep (setname, target, source) VALUES (%s, %s, %s) "
    "ON CONFLICT (setname, target, source) DO NOTHING",
    "DELETE FROM linkdep WHERE setname = %s",
    "INSERT INTO linkdep (setname, target, source) VALUES " ROWS32
    " ON CONFLICT (setname, target, source) DO NOTHING",
};

/* Version 7: clustered by (set, target) for the sources of a target (a
 * table WITHOUT ROWID in SQLite, see rs_inventory.c), indexed by (set,
 * source) for the targets of a source. */
static const char *const schema_v7[] = {
    "CREATE TABLE IF NOT EXISTS linkdep (setname TEXT NOT NULL, target TEXT NOT NULL,"
    " source TEXT NOT NULL, PRIMARY KEY (setname, target, source)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS linkdep_set_source ON linkdep (setname, source)", NULL
};

const char *const *rs_linkdep_schema(int version)
{
    return version == 7 ? schema_v7 : NULL;
}

const char *const *rs_linkdep_tables(void)
{
    static const char *const tables[] = { "linkdep", NULL };
    return tables;
}

static apr_status_t exec(rs_db_t *db, int which, const void **args)
{
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, sql[which], &s);
    return rv == APR_SUCCESS ? rs_db_exec(db, s, args, NULL) : rv;
}

static void add_path(void *baton, apr_pool_t *p, const char *const *c, int n)
{
    if (n > 0 && c[0]) {
        APR_ARRAY_PUSH((apr_array_header_t *)baton, const char *) = apr_pstrdup(p, c[0]);
    }
}

static apr_status_t paths(rs_db_t *db, apr_pool_t *p, int which, const char *set, const char *path,
                          apr_array_header_t **out)
{
    const void *args[] = { set, path };
    rs_db_stmt_t *s;
    apr_status_t rv = rs_db_stmt(db, sql[which], &s);

    *out = apr_array_make(p, 4, sizeof(const char *));
    return rv == APR_SUCCESS ? rs_db_query(db, p, s, args, add_path, *out) : rv;
}

apr_status_t rs_linkdep_sources(rs_db_t *db, apr_pool_t *p, const char *set, const char *target,
                                apr_array_header_t **out)
{
    return paths(db, p, L_SOURCES, set, target, out);
}

apr_status_t rs_linkdep_targets(rs_db_t *db, apr_pool_t *p, const char *set, const char *source,
                                apr_array_header_t **out)
{
    return paths(db, p, L_TARGETS, set, source, out);
}

apr_status_t rs_linkdep_add(rs_db_t *db, const char *set, const char *source,
                            const apr_array_header_t *targets)
{
    apr_status_t rv = APR_SUCCESS;
    int i;

    for (i = 0; rv == APR_SUCCESS && targets && i < targets->nelts; i++) {
        const void *add[] = { set, APR_ARRAY_IDX(targets, i, const char *), source };
        rv = exec(db, L_ADD, add);
    }
    return rv;
}

apr_status_t rs_linkdep_drop(rs_db_t *db, const char *set, const char *source)
{
    const void *del[] = { set, source };
    return exec(db, L_DEL_SOURCE, del);
}

apr_status_t rs_linkdep_clear(rs_db_t *db, const char *set)
{
    const void *args[] = { set };
    return exec(db, L_CLEAR, args);
}

apr_status_t rs_linkdep_add_pairs(rs_db_t *db, const char *set, const char *const *targets,
                                  const char *const *sources, int n)
{
    const void *args[3 * RS_LINKDEP_BATCH];
    apr_status_t rv = APR_SUCCESS;
    int i = 0, k;

    for (; rv == APR_SUCCESS && n - i >= RS_LINKDEP_BATCH; i += RS_LINKDEP_BATCH) {
        for (k = 0; k < RS_LINKDEP_BATCH; k++) {
            args[3 * k] = set;
            args[3 * k + 1] = targets[i + k];
            args[3 * k + 2] = sources[i + k];
        }
        rv = exec(db, L_ADD_BATCH, args);
    }
    for (; rv == APR_SUCCESS && i < n; i++) {
        const void *add[] = { set, targets[i], sources[i] };
        rv = exec(db, L_ADD, add);
    }
    return rv;
}
