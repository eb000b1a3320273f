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
    return rs_blob_prune(db, p, set, RS_FOLLOWSNAP_KIND, snapset, current, dropped);
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

/* Whether gendir's file mark is the one the store holds for it (its
 * size and mtime: written by the same writer at the same moment). */
static int same_mark(apr_pool_t *p, const char *gendir, const char *mark,
                     const apr_array_header_t *files)
{
    apr_finfo_t fi;
    int i;

    if (apr_stat(&fi, apr_pstrcat(p, gendir, "/", mark, NULL), APR_FINFO_SIZE | APR_FINFO_MTIME, p)
        != APR_SUCCESS) {
        return 0;
    }
    for (i = 0; i < files->nelts; i++) {
        const rs_blob_file_t *f = &APR_ARRAY_IDX(files, i, rs_blob_file_t);
        if (!strcmp(f->name, mark)) {
            return f->size == fi.size && f->mtime == fi.mtime;
        }
    }
    return 0;
}

apr_status_t rs_followsnap_gen(rs_db_t *db, apr_pool_t *p, const char *set, apr_uint64_t gen,
                               const rs_followsnap_how_t *how, rs_blob_stats_t *st)
{
    apr_array_header_t *files;
    rs_generation_t g;
    apr_status_t rv;

    if (st) {
        memset(st, 0, sizeof(*st));
    }
    g.gen = gen;
    g.tmp = rs_statedir_gen_tmp(p, how->dir, gen);
    g.final = rs_statedir_gen(p, how->dir, gen);
    if ((rv = rs_blob_files(db, p, set, how->kind, gen, &files)) != APR_SUCCESS) {
        return rv;
    }
    if (!files->nelts) {
        return APR_ENOENT;
    }
    /* Complete already, the writer's: this node wrote it (it wrote the set
     * before) or copied it before a restart. */
    if (same_mark(p, g.final, how->mark, files)
        && (!how->check || how->check(how->baton, p, g.final) == APR_SUCCESS)) {
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
    if ((rv = apr_dir_make_recursive(how->dir, APR_FPROT_OS_DEFAULT, p)) != APR_SUCCESS
        || (rv = apr_dir_make(g.tmp, APR_FPROT_OS_DEFAULT, p)) != APR_SUCCESS) {
        return rv;
    }
    rv = rs_blob_replay(db, p, set, how->kind, gen, g.tmp, how->local, how->baton, st);
    if (rv == APR_SUCCESS && how->check) {
        rv = how->check(how->baton, p, g.tmp);
    }
    if (rv == APR_SUCCESS) {
        rv = rs_generation_publish(p, how->dir, &g);
    }
    if (rv != APR_SUCCESS) {
        rs_generation_abandon(p, &g);
    }
    return rv;
}

typedef struct {
    local_t l;
    apr_uint64_t gen;
    rs_snapshot_info_t *info;
} snapcopy_t;

/* The generation's info names it (else: another generation's files). */
static apr_status_t info_check(void *baton, apr_pool_t *p, const char *gendir)
{
    snapcopy_t *c = baton;
    apr_status_t rv = rs_snapinfo_read(gendir, p, c->info);
    return rv == APR_SUCCESS && c->info->gen != c->gen ? APR_EINVAL : rv;
}

static const char *local_snap(void *baton, apr_pool_t *p, const rs_blob_file_t *f)
{
    return local_part(&((snapcopy_t *)baton)->l, p, f);
}

apr_status_t rs_followsnap_copy(rs_db_t *db, apr_pool_t *p, const char *set, const char *snapset,
                                apr_uint64_t gen, apr_uint64_t have, rs_snapshot_info_t *info,
                                rs_blob_stats_t *st)
{
    snapcopy_t c = { { snapset, have }, gen, info };
    rs_followsnap_how_t how = { RS_FOLLOWSNAP_KIND, snapset, "info", info_check, local_snap, &c };

    return rs_followsnap_gen(db, p, set, gen, &how, st);
}
