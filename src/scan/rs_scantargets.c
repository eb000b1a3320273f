/* SPDX-License-Identifier: Apache-2.0 */
/* rs_scantargets.c - see rs_scan.h: rs_scan_targets, the reconciliation
 * of the parts of a set's tree that change notifications name, built from
 * the pieces of the full walk (rs_scan_priv.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "rs_glob.h"
#include "rs_path.h"
#include "rs_scan.h"
#include "rs_scan_priv.h"
#include "rs_scanaccess.h"
#include "rs_scanfile.h"
#include "rs_scanpipe.h"
#include "rs_scanwrite.h"

/* Everything at and below relpath is gone (or no longer served).  forget:
 * also tell on_drop (the watcher forgets the watches at and below
 * relpath): for a name that is no longer a directory; not for a directory
 * that is only not served, whose watch must go on reporting a change of
 * its own access file (which may serve it again). */
static void drop_tree(rs_scan_ctx_t *sc, apr_pool_t *p, const char *relpath, int forget)
{
    apr_array_header_t *dirs;
    const char **d;
    int i;

    /* One statement finds them (in the usual case, none: a file's name
     * was no directory); relpath's own rows go last, after those below. */
    if (rs_scanwrite_failed(sc, rs_inventory_dirs_at(sc->st, p, sc->o->set, relpath, &dirs))) {
        return;
    }
    for (i = 0, d = (const char **)dirs->elts; i + 1 < dirs->nelts; i++) {
        if (!strcmp(d[i], relpath)) {
            d[i] = d[dirs->nelts - 1];
            d[dirs->nelts - 1] = relpath;
        }
    }
    for (i = 0; i < dirs->nelts && sc->err == APR_SUCCESS; i++) {
        rs_scan_drop_dir_rows(sc, p, APR_ARRAY_IDX(dirs, i, const char *));
    }
    if (forget && sc->o->on_drop) {
        sc->o->on_drop(sc->o->dir_baton, relpath);
    }
}

/* Drop one file's row. */
static void drop_file(rs_scan_ctx_t *sc, const rs_item_t *row)
{
    rs_scanwrite_failed(sc, rs_inventory_delete(sc->st, sc->o->set, row->dir, row->name));
    if (row->listed) {
        rs_scanwrite_notify(sc, RS_CHANGE_DELETED, row);
        rs_scanwrite_links_done(sc, row->dir, row->name, 1);
    }
    sc->stats->removed++;
    rs_scanwrite_count(sc);
}

/* Is the directory relpath (inside dir, entry name) one the walk would
 * descend into?  Hidden, excluded and not served directories are not. */
static int dir_served(rs_scan_ctx_t *sc, apr_pool_t *p, const char *name, const char *relpath)
{
    const rs_scan_opts_t *o = sc->o;
    if (rs_glob_hidden(name, o->dotfiles) || rs_glob_match(o->excludes, relpath)) {
        return 0;
    }
    return rs_scan_dir_checked(sc, p, relpath);
}

/* Open directory relpath below the root, refusing what the walk would not
 * descend into (symlinks, hidden, excluded, not served).  -1 if not. */
static int open_served(rs_scan_ctx_t *sc, apr_pool_t *p, int rootfd, const char *relpath)
{
    char *copy = apr_pstrdup(p, relpath), *last, *comp;
    const char *sofar = "";
    int fd = dup(rootfd);

    for (comp = apr_strtok(copy, "/", &last); comp && fd >= 0;
         comp = apr_strtok(NULL, "/", &last)) {
        int next;
        sofar = *sofar ? apr_pstrcat(p, sofar, "/", comp, NULL) : comp;
        if (!dir_served(sc, p, comp, sofar)) {
            close(fd);
            return -1;
        }
        next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(fd);
        fd = next;
    }
    return fd;
}

/* Walk the subtree at relpath (open as dfd) and drop what it no longer
 * holds. */
static void walk_subtree(rs_scan_ctx_t *sc, apr_pool_t *p, int dfd, const char *relpath)
{
    rs_scan_walk(sc, dfd, relpath, p);
    if (sc->err == APR_SUCCESS) {
        rs_scan_drop_unvisited(sc, p, relpath);
    }
}

/* Reconcile entry `name` of directory dir (open as dfd): a file is queued
 * in jobs, a directory walked, and the rows of whatever the name no
 * longer is go. */
static void scan_name(rs_scan_ctx_t *sc, apr_pool_t *p, int dfd, const char *dir, const char *name,
                      apr_array_header_t *jobs)
{
    const char *relpath = rs_path_join(p, dir, name);
    const char *target;
    rs_item_t *row = NULL;
    struct stat sb;
    apr_status_t rv;
    int kind, cfd = -1;

    if ((rv = rs_inventory_get(sc->st, p, sc->o->set, dir, name, &row)) != APR_SUCCESS) {
        sc->err = rv;
        return;
    }
    kind = rs_scan_classify(sc, p, dfd, name, relpath, &sb, &target);
    if (kind != RS_SCAN_ENT_FILE && row) {
        drop_file(sc, row);
    }
    if (kind == RS_SCAN_ENT_DIR) {
        if (dir_served(sc, p, name, relpath)) {
            cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (cfd >= 0) {
            walk_subtree(sc, p, cfd, relpath);
            close(cfd);
        }
        else {
            drop_tree(sc, p, relpath, 0);
            rs_scan_access_watch(sc, dfd, name, relpath);
        }
        return;
    }
    /* A file, or nothing: rows of a directory that had this name go. */
    drop_tree(sc, p, relpath, 1);
    if (kind == RS_SCAN_ENT_FILE) {
        rs_scan_file_seen(sc, jobs, name, relpath, target, &sb, row);
    }
}

/* 1 if relpath (below the root, open as rootfd) is a directory, not a
 * link to one. */
static int is_dir(int rootfd, const char *relpath)
{
    struct stat sb;
    return !*relpath
           || (fstatat(rootfd, relpath, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode));
}

/* 1 if names (or NULL) holds the name of an access file. */
static int names_access(const rs_scan_opts_t *o, const apr_array_header_t *names)
{
    int i;
    for (i = 0; names && i < names->nelts; i++) {
        if (rs_scan_is_access_name(o, APR_ARRAY_IDX(names, i, const char *))) {
            return 1;
        }
    }
    return 0;
}

/* Reconcile named entries of directory dir (open as dfd).  An access file
 * among them may change what is served anywhere below dir: then dir is
 * walked with everything below it (which covers the other names), and
 * the walk re-checks every file when the access file's row differs. */
static void scan_names(rs_scan_ctx_t *sc, apr_pool_t *p, int dfd, const char *dir,
                       const apr_array_header_t *names)
{
    apr_array_header_t *jobs = apr_array_make(p, names->nelts, sizeof(rs_scanfile_job_t));
    apr_hash_t *seen = apr_hash_make(p);
    int i;

    if (names_access(sc->o, names)) {
        walk_subtree(sc, p, dfd, dir);
        return;
    }
    for (i = 0; i < names->nelts && sc->err == APR_SUCCESS; i++) {
        const char *name = APR_ARRAY_IDX(names, i, const char *);
        if (!*name || strchr(name, '/') || apr_hash_get(seen, name, APR_HASH_KEY_STRING)) {
            continue;
        }
        apr_hash_set(seen, name, APR_HASH_KEY_STRING, "");
        scan_name(sc, p, dfd, dir, name, jobs);
    }
    if (sc->err == APR_SUCCESS) {
        rs_scan_finish_jobs(sc, p, dfd, dir, jobs);
    }
}

apr_status_t rs_scan_targets(rs_db_t *st, const rs_scan_opts_t *o, apr_pool_t *p,
                             const rs_scan_target_t *targets, int ntargets, rs_scan_stats_t *stats)
{
    rs_scan_ctx_t sc;
    apr_pool_t *sp, *tp;
    char buf[PATH_MAX];
    apr_status_t rv;
    int rootfd, i;

    memset(stats, 0, sizeof(*stats));
    rootfd = open(o->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0 || !realpath(o->root, buf)) {
        rv = errno ? errno : APR_EGENERAL;
        if (rootfd >= 0) {
            close(rootfd);
        }
        return rv;
    }
    apr_pool_create(&sp, p);
    apr_pool_create(&tp, sp);
    rs_scan_ctx_init(&sc, st, o, stats, sp);
    sc.realroot = apr_pstrdup(sp, buf);
    sc.realroot_len = strlen(buf);
    if ((rv = rs_db_begin_set(st, o->set)) != APR_SUCCESS) {
        close(rootfd);
        apr_pool_destroy(sp);
        return rv;
    }
    for (i = 0; i < ntargets && sc.err == APR_SUCCESS; i++) {
        const rs_scan_target_t *t = &targets[i];
        int dfd = open_served(&sc, tp, rootfd, t->dir);
        if (dfd < 0) {
            drop_tree(&sc, tp, t->dir, !is_dir(rootfd, t->dir));
        }
        else {
            if (t->names) {
                if (o->on_dir) {
                    /* Watch it again: it may be a directory that was moved. */
                    o->on_dir(o->dir_baton, t->dir, dfd);
                }
                scan_names(&sc, tp, dfd, t->dir, t->names);
            }
            else {
                walk_subtree(&sc, tp, dfd, t->dir);
            }
            close(dfd);
        }
        apr_pool_clear(tp);
    }
    close(rootfd);
    rs_scanfile_crew_stop(sc.crew);
    rs_scan_end(&sc);
    apr_pool_destroy(sp);
    return sc.err;
}
