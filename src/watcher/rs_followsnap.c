/* SPDX-License-Identifier: Apache-2.0 */
/* rs_followsnap.c - see rs_followsnap.h */
#include <stdio.h>
#include <string.h>
#include <apr_strings.h>
#include "rs_file.h"
#include "rs_followsnap.h"
#include "rs_generation.h"
#include "rs_snapinfo.h"
#include "rs_statedir.h"

/* rs_blob_origin_fn: a kept part "part-<g>-<n>.xml" is generation g's
 * "part-<n>.xml" (rs_snapparts). */
static const char *part_origin(void *baton, apr_pool_t *p, const char *name, apr_uint64_t *gen)
{
    apr_uint64_t g;
    unsigned n;
    int end = 0;

    (void)baton;
    if (sscanf(name, "part-%" APR_UINT64_T_FMT "-%u.xml%n", &g, &n, &end) == 2 && end > 0
        && !name[end]) {
        *gen = g;
        return apr_psprintf(p, "part-%u.xml", n);
    }
    return NULL;
}

apr_status_t rs_followsnap_store(rs_db_t *db, apr_pool_t *p, const char *set, apr_uint64_t gen,
                                 const char *gendir, rs_blob_stats_t *st)
{
    return rs_blob_put(db, p, set, RS_FOLLOWSNAP_KIND, gen, gendir, part_origin, NULL, st);
}

apr_status_t rs_followsnap_prune(rs_db_t *db, apr_pool_t *p, const char *set, const char *snapset,
                                 apr_uint64_t current, int *dropped)
{
    apr_array_header_t *gens;
    apr_status_t rv = rs_blob_gens(db, p, set, RS_FOLLOWSNAP_KIND, &gens);
    int i, none;

    dropped = dropped ? dropped : &none;
    *dropped = 0;
    for (i = 0; rv == APR_SUCCESS && i < gens->nelts; i++) {
        apr_uint64_t g = APR_ARRAY_IDX(gens, i, apr_uint64_t);
        apr_finfo_t fi;
        if (g == current
            || apr_stat(&fi, rs_statedir_gen(p, snapset, g), APR_FINFO_TYPE, p) == APR_SUCCESS) {
            continue;
        }
        if ((rv = rs_db_begin_set(db, set)) == APR_SUCCESS
            && (rv = rs_db_end(db, rs_blob_drop(db, set, RS_FOLLOWSNAP_KIND, g))) == APR_SUCCESS) {
            ++*dropped;
        }
    }
    return rv;
}

typedef struct {
    const char *snapset;
    apr_uint64_t have;
} local_t;

/* rs_blob_local_fn: this node's copy of a kept part, from the generation
 * that wrote it, else under the same name in the generation it serves. */
static const char *local_part(void *baton, apr_pool_t *p, const rs_blob_file_t *f)
{
    const local_t *l = baton;
    const char *own =
        apr_pstrcat(p, rs_statedir_gen(p, l->snapset, f->src_gen), "/", f->src_name, NULL);
    if (rs_file_exists(p, own) || !l->have) {
        return own;
    }
    return apr_pstrcat(p, rs_statedir_gen(p, l->snapset, l->have), "/", f->name, NULL);
}

/* Whether gendir's info file is the one the store holds for it (its
 * size and mtime: written by the same writer at the same moment). */
static int same_info(apr_pool_t *p, const char *gendir, const apr_array_header_t *files)
{
    apr_finfo_t fi;
    int i;

    if (apr_stat(&fi, apr_pstrcat(p, gendir, "/info", NULL), APR_FINFO_SIZE | APR_FINFO_MTIME, p)
        != APR_SUCCESS) {
        return 0;
    }
    for (i = 0; i < files->nelts; i++) {
        const rs_blob_file_t *f = &APR_ARRAY_IDX(files, i, rs_blob_file_t);
        if (!strcmp(f->name, "info")) {
            return f->size == fi.size && f->mtime == fi.mtime;
        }
    }
    return 0;
}

apr_status_t rs_followsnap_copy(rs_db_t *db, apr_pool_t *p, const char *set, const char *snapset,
                                apr_uint64_t gen, apr_uint64_t have, rs_snapshot_info_t *info,
                                rs_blob_stats_t *st)
{
    local_t l = { snapset, have };
    apr_array_header_t *files;
    rs_generation_t g;
    apr_status_t rv;

    if (st) {
        memset(st, 0, sizeof(*st));
    }
    g.gen = gen;
    g.tmp = rs_statedir_gen_tmp(p, snapset, gen);
    g.final = rs_statedir_gen(p, snapset, gen);
    if ((rv = rs_blob_files(db, p, set, RS_FOLLOWSNAP_KIND, gen, &files)) != APR_SUCCESS) {
        return rv;
    }
    if (!files->nelts) {
        return APR_ENOENT;
    }
    /* Complete already, the writer's: this node wrote it (it wrote the set
     * before) or copied it before a restart. */
    if (same_info(p, g.final, files) && rs_snapinfo_read(g.final, p, info) == APR_SUCCESS
        && info->gen == gen) {
        return APR_SUCCESS;
    }
    if (rs_file_exists(p, g.final)) {
        /* Incomplete, or another node's writing under the same number (a
         * writer killed before it recorded it): never served, since a
         * generation is followed only when it is newer than the one in
         * service. */
        rs_file_remove_tree(p, g.final);
    }
    rs_generation_abandon(p, &g); /* a leftover of an interrupted copy */
    if ((rv = apr_dir_make_recursive(snapset, APR_FPROT_OS_DEFAULT, p)) != APR_SUCCESS
        || (rv = apr_dir_make(g.tmp, APR_FPROT_OS_DEFAULT, p)) != APR_SUCCESS) {
        return rv;
    }
    rv = rs_blob_replay(db, p, set, RS_FOLLOWSNAP_KIND, gen, g.tmp, local_part, &l, st);
    if (rv == APR_SUCCESS && (rv = rs_snapinfo_read(g.tmp, p, info)) == APR_SUCCESS
        && info->gen != gen) {
        rv = APR_EINVAL; /* another generation's files */
    }
    if (rv == APR_SUCCESS) {
        rv = rs_generation_publish(p, snapset, &g);
    }
    if (rv != APR_SUCCESS) {
        rs_generation_abandon(p, &g);
    }
    return rv;
}
