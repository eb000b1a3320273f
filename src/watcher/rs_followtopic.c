/* SPDX-License-Identifier: Apache-2.0 */
/* rs_followtopic.c - see rs_followtopic.h */
#include <apr_strings.h>
#include "rs_blob.h"
#include "rs_file.h"
#include "rs_followtopic.h"

/* rs_blob's kind of a topic's versions. */
static const char *kind_of(apr_pool_t *p, const char *topic)
{
    return apr_pstrcat(p, "topic-", topic, NULL);
}

apr_status_t rs_followtopic_store(rs_db_t *db, apr_pool_t *p, const char *set, const char *topic,
                                  apr_uint64_t id, const char *path)
{
    const char *kind = kind_of(p, topic);
    apr_array_header_t *gens;
    apr_status_t rv = rs_db_begin_set(db, set);
    int i;

    if (rv != APR_SUCCESS) {
        return rv;
    }
    /* Every version held, the same id too (a new writer writes the newest
     * notification again): one version per (set, topic). */
    rv = rs_blob_gens(db, p, set, kind, &gens);
    for (i = 0; rv == APR_SUCCESS && i < gens->nelts; i++) {
        rv = rs_blob_drop(db, set, kind, APR_ARRAY_IDX(gens, i, apr_uint64_t));
    }
    if (rv == APR_SUCCESS) {
        rv = rs_blob_put_file(db, p, set, kind, id, path, "topic.xml", NULL);
    }
    return rs_db_end(db, rv);
}

apr_status_t rs_followtopic_copy(rs_db_t *db, apr_pool_t *p, const char *set, const char *topic,
                                 const char *path, int *changed)
{
    const char *kind = kind_of(p, topic);
    rs_blob_file_t f;
    apr_uint64_t gen;
    apr_finfo_t fi;
    int none;
    apr_status_t rv = rs_blob_latest(db, p, set, kind, &f, &gen);

    changed = changed ? changed : &none;
    *changed = 0;
    if (rv == APR_ENOENT) {
        if (apr_stat(&fi, path, APR_FINFO_TYPE | APR_FINFO_LINK, p) == APR_SUCCESS
            && (rv = apr_file_remove(path, p)) == APR_SUCCESS) {
            *changed = 1;
            rv = APR_ENOENT;
        }
        return rv;
    }
    return rv == APR_SUCCESS ? rs_blob_place(db, p, set, kind, &f, path, changed) : rv;
}

apr_status_t rs_followtopic_take(rs_db_t *db, apr_pool_t *p, const char *set, const char *topic,
                                 const char *path)
{
    rs_blob_file_t f;
    apr_uint64_t gen;
    apr_status_t rv = rs_blob_latest(db, p, set, kind_of(p, topic), &f, &gen);

    if (rv == APR_ENOENT) {
        return rs_file_exists(p, path) ? rs_followtopic_store(db, p, set, topic, 0, path)
                                       : APR_SUCCESS;
    }
    return rv == APR_SUCCESS ? rs_followtopic_copy(db, p, set, topic, path, NULL) : rv;
}
