/* SPDX-License-Identifier: Apache-2.0 */
/* rs_followdump.c - see rs_followdump.h */
#include <string.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "rs_dumppkg.h"
#include "rs_followdump.h"
#include "rs_followsnap.h"
#include "rs_statedir.h"

static const char *gen_key(apr_pool_t *p, const char *set)
{
    return apr_pstrcat(p, "dump-gen:", set, NULL);
}

apr_uint64_t rs_followdump_stored_gen(rs_db_t *db, apr_pool_t *p, const char *set)
{
    const char *g = NULL;

    rs_db_meta_get(db, p, gen_key(p, set), &g);
    return g ? (apr_uint64_t)apr_atoi64(g) : 0;
}

typedef struct {
    rs_db_t *db;
    const char *set;
    const char *gendir;
    apr_uint64_t gen;
    apr_array_header_t *gens; /* the dump's generation directories, newest first */
    apr_hash_t *rows;         /* generation (its directory) -> its stored rows by name */
    apr_pool_t *p;
} origin_t;

/* The stored rows of the generation in directory dir, by name (cached). */
static apr_hash_t *rows_of(origin_t *o, const char *dir)
{
    apr_hash_t *rows = apr_hash_get(o->rows, dir, APR_HASH_KEY_STRING);
    apr_array_header_t *files;
    int i;

    if (!rows) {
        rows = apr_hash_make(o->p);
        if (rs_blob_files(o->db, o->p, o->set, RS_FOLLOWDUMP_KIND,
                          (apr_uint64_t)apr_atoi64(strrchr(dir, '/') + 1), &files)
            == APR_SUCCESS) {
            for (i = 0; i < files->nelts; i++) {
                rs_blob_file_t *f = &APR_ARRAY_IDX(files, i, rs_blob_file_t);
                apr_hash_set(rows, f->name, APR_HASH_KEY_STRING, f);
            }
        }
        apr_hash_set(o->rows, dir, APR_HASH_KEY_STRING, rows);
    }
    return rows;
}

/* rs_blob_origin_fn: a file with other links (a kept package's,
 * rs_dumppkg_reuse) is the file of the same name and inode in the newest
 * earlier generation on disk; the reference goes to the source of that
 * generation's stored row (rs_blob_put refers only to a source the store
 * holds with the file's size and mtime). */
static const char *kept_origin(void *baton, apr_pool_t *p, const char *name, apr_uint64_t *gen)
{
    origin_t *o = baton;
    apr_finfo_t fi, ei;
    int i;

    if (apr_stat(&fi, apr_pstrcat(p, o->gendir, "/", name, NULL), APR_FINFO_IDENT | APR_FINFO_NLINK,
                 p)
            != APR_SUCCESS
        || fi.nlink < 2) {
        return NULL;
    }
    for (i = 0; i < o->gens->nelts; i++) {
        const char *dir = APR_ARRAY_IDX(o->gens, i, const char *);
        const rs_blob_file_t *row;
        if (!strcmp(dir, o->gendir)
            || apr_stat(&ei, apr_pstrcat(p, dir, "/", name, NULL), APR_FINFO_IDENT, p)
                   != APR_SUCCESS
            || ei.inode != fi.inode || ei.device != fi.device) {
            continue;
        }
        if ((row = apr_hash_get(rows_of(o, dir), name, APR_HASH_KEY_STRING))
            && row->src_gen < o->gen) {
            *gen = row->src_gen;
            return row->src_name;
        }
    }
    return NULL;
}

apr_status_t rs_followdump_record(rs_db_t *db, apr_pool_t *p, const char *set, const char *dumpset,
                                  const char *dir, apr_uint64_t gen, rs_blob_stats_t *st)
{
    apr_status_t rv;
    origin_t o;

    if ((rv = rs_db_begin_set(db, set)) != APR_SUCCESS) {
        return rv;
    }
    rv = rs_db_meta_put(db, gen_key(p, set), apr_psprintf(p, "%" APR_UINT64_T_FMT, gen));
    if (rv == APR_SUCCESS && !rs_db_one_node(db)) {
        o.db = db;
        o.set = set;
        o.gen = gen;
        o.gendir = dir;
        o.gens = rs_dumppkg_gens(p, dumpset);
        o.rows = apr_hash_make(p);
        o.p = p;
        rv = rs_blob_put(db, p, set, RS_FOLLOWDUMP_KIND, gen, o.gendir, kept_origin, &o, st);
    }
    return rs_db_end(db, rv);
}

apr_status_t rs_followdump_prune(rs_db_t *db, apr_pool_t *p, const char *set, const char *dumpset,
                                 apr_uint64_t current, int *dropped)
{
    return rs_blob_prune(db, p, set, RS_FOLLOWDUMP_KIND, dumpset, current, dropped);
}

/* rs_blob_local_fn: this node's copy of a kept file: the same name in
 * any of its generations (newest first), with the row's size and mtime
 * (a key names its bytes; the mtime tells the writer's copy). */
static const char *local_kept(void *baton, apr_pool_t *p, const rs_blob_file_t *f)
{
    const apr_array_header_t *gens = baton;
    apr_finfo_t fi;
    int i;

    if (!strcmp(f->name, f->src_name) && f->src_gen) {
        for (i = 0; i < gens->nelts; i++) {
            const char *path =
                apr_pstrcat(p, APR_ARRAY_IDX(gens, i, const char *), "/", f->name, NULL);
            if (apr_stat(&fi, path, APR_FINFO_SIZE | APR_FINFO_MTIME, p) == APR_SUCCESS
                && fi.size == f->size && fi.mtime == f->mtime) {
                return path;
            }
        }
    }
    return NULL;
}

apr_status_t rs_followdump_copy(rs_db_t *db, apr_pool_t *p, const char *set, const char *dumpset,
                                apr_uint64_t gen, rs_blob_stats_t *st)
{
    rs_followsnap_how_t how = { RS_FOLLOWDUMP_KIND, dumpset,
                                "resourcedump.xml", NULL,
                                local_kept,         rs_dumppkg_gens(p, dumpset) };

    return rs_followsnap_gen(db, p, set, gen, &how, st);
}
