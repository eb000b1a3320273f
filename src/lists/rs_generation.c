/* SPDX-License-Identifier: Apache-2.0 */
/* rs_generation.c - see rs_generation.h */
#include <string.h>
#include <apr_strings.h>
#include <apr_file_io.h>
#include <apr_file_info.h>
#include "rs_file.h"
#include "rs_generation.h"
#include "rs_statedir.h"

apr_status_t rs_generation_begin(apr_pool_t *p, const char *snapset, apr_uint64_t stored,
                                 apr_uint64_t current, rs_generation_t *g)
{
    apr_uint64_t gen = stored > current ? stored : current;

    gen++;
    apr_dir_make_recursive(snapset, APR_FPROT_OS_DEFAULT, p);
    /* A writer killed between publishing a generation and recording it
     * leaves that generation on disk: never reuse it. */
    while (rs_file_exists(p, rs_statedir_gen(p, snapset, gen))) {
        gen++;
    }
    g->gen = gen;
    g->tmp = rs_statedir_gen_tmp(p, snapset, gen);
    g->final = rs_statedir_gen(p, snapset, gen);
    rs_file_remove_tree(p, g->tmp);
    return apr_dir_make(g->tmp, APR_FPROT_OS_DEFAULT, p);
}

apr_status_t rs_generation_publish(apr_pool_t *p, const char *snapset, const rs_generation_t *g)
{
    apr_status_t rv = apr_file_rename(g->tmp, g->final, p);

    if (rv == APR_SUCCESS) {
        rs_file_sync_dir(snapset);
    }
    return rv;
}

void rs_generation_abandon(apr_pool_t *p, const rs_generation_t *g)
{
    rs_file_remove_tree(p, g->tmp);
}

/* One entry of snapset that is not the current generation. */
static void prune_one(apr_pool_t *p, const char *path, apr_interval_time_t keep, apr_time_t now)
{
    const char *marker = rs_statedir_gen_superseded(p, path);
    apr_finfo_t sf;

    if (apr_stat(&sf, marker, APR_FINFO_MTIME, p) != APR_SUCCESS) {
        rs_file_touch(p, marker);
    }
    else if (now - sf.mtime > keep) {
        rs_file_remove_tree(p, path);
    }
}

void rs_generation_prune(apr_pool_t *p, const char *snapset, apr_uint64_t current,
                         apr_interval_time_t keep, apr_time_t now)
{
    apr_dir_t *d;
    apr_finfo_t fi;

    if (apr_dir_open(&d, snapset, p) != APR_SUCCESS) {
        return;
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        const char *path;
        if (fi.filetype != APR_DIR || !strcmp(fi.name, ".") || !strcmp(fi.name, "..")) {
            continue;
        }
        path = apr_pstrcat(p, snapset, "/", fi.name, NULL);
        if (rs_statedir_is_gen_tmp(fi.name)) {
            rs_file_remove_tree(p, path);
        }
        else if ((apr_uint64_t)apr_atoi64(fi.name) != current) {
            prune_one(p, path, keep, now);
        }
    }
    apr_dir_close(d);
}
