/* SPDX-License-Identifier: Apache-2.0 */
/* rs_followcdump.c - see rs_followcdump.h */
#include <string.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "rs_file.h"
#include "rs_followcdump.h"

static const char *gen_key(apr_pool_t *p, const char *set)
{
    return apr_pstrcat(p, "cdump-gen:", set, NULL);
}

apr_status_t rs_followcdump_gen(rs_db_t *db, apr_pool_t *p, const char *set, apr_uint64_t *gen)
{
    const char *g = NULL;
    apr_status_t rv = rs_db_meta_get(db, p, gen_key(p, set), &g);

    *gen = rv == APR_SUCCESS && g ? (apr_uint64_t)apr_atoi64(g) : 0;
    return rv;
}

/* rs_blob_origin_fn: a file the previous generation held under the same
 * name is that row's source (rs_blob_put stores a reference only when
 * the source has the file's size and mtime). */
static const char *same_name(void *baton, apr_pool_t *p, const char *name, apr_uint64_t *gen)
{
    const rs_blob_file_t *f = apr_hash_get(baton, name, APR_HASH_KEY_STRING);

    (void)p;
    if (!f) {
        return NULL;
    }
    *gen = f->src_gen;
    return f->src_name;
}

/* The files of generation gen by name (in p). */
static apr_status_t files_by_name(rs_db_t *db, apr_pool_t *p, const char *set, apr_uint64_t gen,
                                  apr_hash_t **out)
{
    apr_array_header_t *files;
    apr_status_t rv = rs_blob_files(db, p, set, RS_FOLLOWCDUMP_KIND, gen, &files);
    int i;

    *out = apr_hash_make(p);
    for (i = 0; rv == APR_SUCCESS && i < files->nelts; i++) {
        rs_blob_file_t *f = &APR_ARRAY_IDX(files, i, rs_blob_file_t);
        apr_hash_set(*out, f->name, APR_HASH_KEY_STRING, f);
    }
    return rv;
}

/* Inside the fenced transaction: the next generation, the earlier ones
 * dropped, the number recorded. */
static apr_status_t store_next(rs_db_t *db, apr_pool_t *p, const char *set, const char *dir,
                               apr_uint64_t *gen, rs_blob_stats_t *st)
{
    apr_array_header_t *gens;
    apr_hash_t *prev;
    apr_status_t rv;
    int i;

    if ((rv = rs_followcdump_gen(db, p, set, gen)) != APR_SUCCESS
        || (rv = files_by_name(db, p, set, *gen, &prev)) != APR_SUCCESS) {
        return rv;
    }
    ++*gen;
    rv = rs_blob_put(db, p, set, RS_FOLLOWCDUMP_KIND, *gen, dir, same_name, prev, st);
    if (rv == APR_SUCCESS) {
        rv = rs_blob_gens(db, p, set, RS_FOLLOWCDUMP_KIND, &gens);
    }
    for (i = 0; rv == APR_SUCCESS && i < gens->nelts; i++) {
        apr_uint64_t g = APR_ARRAY_IDX(gens, i, apr_uint64_t);
        if (g != *gen) {
            rv = rs_blob_drop(db, set, RS_FOLLOWCDUMP_KIND, g);
        }
    }
    if (rv == APR_SUCCESS) {
        rv = rs_db_meta_put(db, gen_key(p, set), apr_psprintf(p, "%" APR_UINT64_T_FMT, *gen));
    }
    return rv;
}

apr_status_t rs_followcdump_store(rs_db_t *db, apr_pool_t *p, const char *set, const char *dir,
                                  apr_uint64_t *gen, rs_blob_stats_t *st)
{
    apr_uint64_t none;
    apr_status_t rv = rs_db_begin_set(db, set);

    gen = gen ? gen : &none;
    if (rv != APR_SUCCESS) {
        return rv;
    }
    return rs_db_end(db, store_next(db, p, set, dir, gen, st));
}

/* ------------------------------------------------------------ follower */

/* changedump.xml and the index parts: written after what they list. */
static int listing(const char *name)
{
    return !strcmp(name, "changedump.xml") || strstr(name, "-part-") != NULL;
}

/* File f of the generation in dir: written unless already there. */
static apr_status_t place(rs_db_t *db, apr_pool_t *p, const char *set, const char *dir,
                          const rs_blob_file_t *f, rs_blob_stats_t *st)
{
    apr_status_t rv;
    int written;

    if (!*f->name || f->name[0] == '.' || strchr(f->name, '/')) {
        return APR_EINVAL;
    }
    rv = rs_blob_place(db, p, set, RS_FOLLOWCDUMP_KIND, f, apr_pstrcat(p, dir, "/", f->name, NULL),
                       &written);
    if (rv == APR_SUCCESS && written) {
        st->bytes += f->size;
    }
    else if (rv == APR_SUCCESS) {
        st->refs++;
    }
    return rv;
}

/* Remove dir's regular files that gen does not hold (names starting with
 * '.' aside). */
static apr_status_t remove_others(apr_pool_t *p, const char *dir, apr_hash_t *keep, int *removed)
{
    apr_pool_t *fp;
    apr_dir_t *d;
    apr_finfo_t fi;
    apr_status_t rv = apr_dir_open(&d, dir, p);

    if (rv != APR_SUCCESS) {
        return rv;
    }
    apr_pool_create(&fp, p);
    while (rv == APR_SUCCESS
           && apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        apr_pool_clear(fp);
        if (fi.filetype != APR_REG || fi.name[0] == '.'
            || apr_hash_get(keep, fi.name, APR_HASH_KEY_STRING)) {
            continue;
        }
        if ((rv = apr_file_remove(apr_pstrcat(fp, dir, "/", fi.name, NULL), fp)) == APR_SUCCESS) {
            ++*removed;
        }
    }
    apr_pool_destroy(fp);
    apr_dir_close(d);
    return rv == APR_SUCCESS && *removed ? rs_file_sync_dir(dir) : rv;
}

apr_status_t rs_followcdump_copy(rs_db_t *db, apr_pool_t *p, const char *set, const char *dir,
                                 apr_uint64_t gen, rs_blob_stats_t *st, int *removed)
{
    rs_blob_stats_t none;
    apr_array_header_t *files;
    apr_hash_t *keep = apr_hash_make(p);
    int i, pass, gone;
    apr_status_t rv;

    st = st ? st : &none;
    removed = removed ? removed : &gone;
    memset(st, 0, sizeof(*st));
    *removed = 0;
    if ((rv = rs_blob_files(db, p, set, RS_FOLLOWCDUMP_KIND, gen, &files)) != APR_SUCCESS) {
        return rv;
    }
    if (!files->nelts) {
        return APR_ENOENT;
    }
    if ((rv = apr_dir_make_recursive(dir, APR_FPROT_OS_DEFAULT, p)) != APR_SUCCESS) {
        return rv;
    }
    /* Pass 0: packages, manifest copies, markers; pass 1: the index
     * parts; pass 2: changedump.xml, which lists them. */
    for (pass = 0; rv == APR_SUCCESS && pass < 3; pass++) {
        for (i = 0; rv == APR_SUCCESS && i < files->nelts; i++) {
            const rs_blob_file_t *f = &APR_ARRAY_IDX(files, i, rs_blob_file_t);
            int which = !listing(f->name) ? 0 : strcmp(f->name, "changedump.xml") ? 1 : 2;
            if (which != pass) {
                continue;
            }
            apr_hash_set(keep, f->name, APR_HASH_KEY_STRING, f);
            st->files++;
            rv = place(db, p, set, dir, f, st);
        }
    }
    return rv == APR_SUCCESS ? remove_others(p, dir, keep, removed) : rv;
}
