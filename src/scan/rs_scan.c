/* SPDX-License-Identifier: Apache-2.0 */
/* rs_scan.c - see rs_scan.h: the full reconciliation walk (rs_scan_set)
 * and the pieces it is made of, shared with rs_scantargets.c through
 * rs_scan_priv.h. */
#include <dirent.h>
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
#include "rs_invbatch.h"
#include "rs_path.h"
#include "rs_scan.h"
#include "rs_scan_priv.h"
#include "rs_scanaccess.h"
#include "rs_scanahead.h"
#include "rs_scanfile.h"
#include "rs_scanpipe.h"
#include "rs_scanwrite.h"

/* Resolve a symlink; returns the target if it is a regular file inside the
 * set's root, else NULL. */
static const char *resolve_link(rs_scan_ctx_t *sc, apr_pool_t *p, const char *relpath,
                                struct stat *sb)
{
    char buf[PATH_MAX];
    const char *full = apr_pstrcat(p, sc->o->root, "/", relpath, NULL);

    if (!realpath(full, buf)) {
        return NULL;
    }
    if (strncmp(buf, sc->realroot, sc->realroot_len) != 0
        || (buf[sc->realroot_len] != '/' && buf[sc->realroot_len] != '\0')) {
        return NULL;
    }
    if (stat(buf, sb) != 0 || !S_ISREG(sb->st_mode)) {
        return NULL;
    }
    return apr_pstrdup(p, buf);
}

/* Pass 2 and 3 of a directory: the expensive per-file work, possibly on
 * several threads, then the results, written by this thread only. */
void rs_scan_finish_jobs(rs_scan_ctx_t *sc, apr_pool_t *p, int dfd, const char *dir,
                         apr_array_header_t *jobs)
{
    const rs_scan_opts_t *o = sc->o;
    int i;

    if (!sc->crew_tried && jobs->nelts >= 8) {
        sc->crew = rs_scanfile_crew_start(o, sc->vpool);
        sc->crew_tried = 1;
    }
    rs_scanfile_run(o, sc->crew, p, dfd, dir, (rs_scanfile_job_t *)jobs->elts, jobs->nelts);
    for (i = 0; i < jobs->nelts && sc->err == APR_SUCCESS; i++) {
        rs_scanfile_job_t *j = &APR_ARRAY_IDX(jobs, i, rs_scanfile_job_t);
        if (j->gone) {
            sc->stats->files--;
            continue;
        }
        if (j->deferred) {
            /* Hashed elsewhere: the stored row (if any) stays until the
             * digests are ready and the file is reconciled again. */
            sc->stats->deferred++;
            continue;
        }
        if (j->rc != 0) {
            rs_log_emit(o->log, RS_LOG_WARN, j->rc,
                        "set %s: cannot read '%s', not listed until it is readable", o->set,
                        j->relpath);
        }
        rs_scanpipe_row(sc, &j->it, j->row, j->hashed);
    }
}

typedef struct {
    char *name;
    unsigned char type;
} dent_t;

/* Classify entry `name` of the directory open as dfd (relpath: its path
 * from the root).  For RS_SCAN_ENT_FILE, *sb describes the file (a link's
 * target) and *target is the resolved target of a link (NULL for a
 * plain file), from p. */
/* 1 when entry name (relpath) is never listed whatever it is: an access
 * file, hidden, or excluded. */
static int name_skipped(rs_scan_ctx_t *sc, const char *name, const char *relpath)
{
    const rs_scan_opts_t *o = sc->o;
    return rs_scan_is_access_name(o, name) || rs_glob_hidden(name, o->dotfiles)
           || rs_glob_match(o->excludes, relpath);
}

int rs_scan_classify(rs_scan_ctx_t *sc, apr_pool_t *p, int dfd, const char *name,
                     const char *relpath, struct stat *sb, const char **target)
{
    *target = NULL;
    if (name_skipped(sc, name, relpath) || fstatat(dfd, name, sb, AT_SYMLINK_NOFOLLOW) != 0) {
        return RS_SCAN_ENT_NONE; /* (fstatat: vanished since readdir) */
    }
    if (S_ISLNK(sb->st_mode)) {
        /* Only links to regular files inside the root are followed. */
        *target = resolve_link(sc, p, relpath, sb);
        return *target ? RS_SCAN_ENT_FILE : RS_SCAN_ENT_NONE;
    }
    return S_ISDIR(sb->st_mode)   ? RS_SCAN_ENT_DIR
           : S_ISREG(sb->st_mode) ? RS_SCAN_ENT_FILE
                                  : RS_SCAN_ENT_OTHER;
}

/* Would the caller serve directory relpath (the check callback)? */
int rs_scan_dir_checked(rs_scan_ctx_t *sc, apr_pool_t *p, const char *relpath)
{
    const rs_scan_opts_t *o = sc->o;
    void *baton = (o->workers > 1 && o->check_batons) ? o->check_batons[0] : o->check_baton;
    return !o->check || o->check(baton, p, relpath, RS_SCAN_CHECK_DIR, NULL);
}

/* A regular file seen: count it, and queue the per-file work unless its
 * stored row still describes it.  name and relpath must live as long as
 * jobs. */
void rs_scan_file_seen(rs_scan_ctx_t *sc, apr_array_header_t *jobs, const char *name,
                       const char *relpath, const char *target, const struct stat *sb,
                       const rs_item_t *row)
{
    rs_scanfile_job_t *j;

    sc->stats->files++;
    if (sb && !sc->recheck && rs_scanfile_unchanged(sc->o, row, sb)) {
        sc->stats->listed += row->listed;
        return;
    }
    j = apr_array_push(jobs);
    memset(j, 0, sizeof(*j));
    j->name = name;
    j->relpath = relpath;
    j->target = target;
    if (sb) {
        j->sb = *sb;
    }
    j->need_stat = !sb;
    j->row = row;
}

/* The entries of the directory open as dfd, but "." and "..", from p;
 * NULL (logged) when it cannot be read. */
static apr_array_header_t *read_entries(rs_scan_ctx_t *sc, apr_pool_t *p, int dfd, const char *dir)
{
    int fd2 = dup(dfd);
    DIR *d = fd2 >= 0 ? fdopendir(fd2) : NULL;
    apr_array_header_t *ents;
    struct dirent *de;

    if (!d) {
        rs_log_emit(sc->o->log, RS_LOG_WARN, errno, "set %s: cannot read directory '%s'",
                    sc->o->set, *dir ? dir : "/");
        if (fd2 >= 0) {
            close(fd2);
        }
        return NULL;
    }
    ents = apr_array_make(p, 64, sizeof(dent_t));
    while ((de = readdir(d)) != NULL) {
        dent_t *e;
        if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2]))) {
            continue;
        }
        e = apr_array_push(ents);
        e->name = apr_pstrdup(p, de->d_name);
        e->type = de->d_type;
    }
    closedir(d);
    return ents;
}

/* Pass 1 of a directory: classify the entries; collect the files that
 * need work (jobs) and the subdirectories to descend into (subdirs).  The
 * rows of the files seen leave `rows`, so that it ends with the rows whose
 * file is gone. */
static void classify_entries(rs_scan_ctx_t *sc, apr_pool_t *p, int dfd, const char *dir,
                             const apr_array_header_t *ents, apr_hash_t *rows,
                             apr_array_header_t *jobs, apr_array_header_t *subdirs)
{
    apr_pool_t *ep;
    int i;

    apr_pool_create(&ep, p);
    for (i = 0; i < ents->nelts && sc->err == APR_SUCCESS; i++) {
        const dent_t *e = &APR_ARRAY_IDX(ents, i, dent_t);
        const char *relpath = rs_path_join(ep, dir, e->name);
        const char *target;
        struct stat sb;

        if (sc->fresh && e->type == DT_REG && !name_skipped(sc, e->name, relpath)) {
            /* A first scan: no row to compare with, so nothing here needs
             * the metadata of a plain file; it is taken after the access
             * decision, where the file is read (rs_scanfile.h, need_stat):
             * from the descriptor it hashes, or by fstatat next to the
             * check that the run user can read it. */
            rs_scan_file_seen(sc, jobs, e->name, apr_pstrdup(p, relpath), NULL, NULL, NULL);
            apr_pool_clear(ep);
            continue;
        }
        switch (rs_scan_classify(sc, p, dfd, e->name, relpath, &sb, &target)) {
        case RS_SCAN_ENT_DIR:
            if (rs_scan_dir_checked(sc, ep, relpath)) {
                APR_ARRAY_PUSH(subdirs, const char *) = e->name;
            }
            else {
                rs_scan_access_watch(sc, dfd, e->name, relpath);
            }
            break;
        case RS_SCAN_ENT_FILE:
            rs_scan_file_seen(sc, jobs, e->name, apr_pstrdup(p, relpath), target, &sb,
                              apr_hash_get(rows, e->name, APR_HASH_KEY_STRING));
            apr_hash_set(rows, e->name, APR_HASH_KEY_STRING, NULL);
            break;
        default:
            break;
        }
        apr_pool_clear(ep);
    }
    apr_pool_destroy(ep);
}

/* The subdirectories of dir (open as dfd), depth first. */
static void walk_subdirs(rs_scan_ctx_t *sc, apr_pool_t *p, int dfd, const char *dir,
                         const apr_array_header_t *subdirs)
{
    int i;

    for (i = 0; i < subdirs->nelts && sc->err == APR_SUCCESS; i++) {
        const char *name = APR_ARRAY_IDX(subdirs, i, const char *);
        const char *relpath = rs_path_join(p, dir, name);
        int cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (cfd < 0) {
            rs_log_emit(sc->o->log, RS_LOG_WARN, errno, "set %s: cannot open directory '%s'",
                        sc->o->set, relpath);
            continue;
        }
        rs_scan_walk(sc, cfd, relpath, p);
        close(cfd);
    }
}

/* Remove the rows of dir left in `rows` (their file is gone, or is no
 * longer a listable file). */
static void drop_rows(rs_scan_ctx_t *sc, apr_pool_t *p, const char *dir, apr_hash_t *rows)
{
    apr_hash_index_t *hi;

    for (hi = apr_hash_first(p, rows); hi && sc->err == APR_SUCCESS; hi = apr_hash_next(hi)) {
        const void *key;
        void *val;
        apr_hash_this(hi, &key, NULL, &val);
        rs_scanpipe_drop(sc, dir, key, val);
    }
}

/* Reconcile directory dir (open as dfd) and everything below it: read its
 * entries, classify them against its stored rows, do the per-file work,
 * descend, then drop the rows of what is gone. */
void rs_scan_walk(rs_scan_ctx_t *sc, int dfd, const char *dir, apr_pool_t *parent)
{
    const rs_scan_opts_t *o = sc->o;
    apr_pool_t *p;
    apr_hash_t *rows;
    apr_array_header_t *ents, *jobs, *subdirs;
    apr_status_t rv;
    int recheck = sc->recheck;
    rs_scanahead_mark_t mark;

    if (sc->ahead) {
        rs_scanahead_mark(&mark);
    }
    apr_pool_create(&p, parent);
    sc->stats->dirs++;
    if (o->on_dir) {
        /* Before readdir: see rs_scan_opts_t.on_dir. */
        o->on_dir(o->dir_baton, dir, dfd);
    }
    apr_hash_set(sc->visited, apr_pstrdup(sc->vpool, dir), APR_HASH_KEY_STRING, "");
    if (!(ents = read_entries(sc, p, dfd, dir))) {
        apr_pool_destroy(p);
        return;
    }
    if ((rv = rs_scanpipe_load(sc, p, dir, &rows)) != APR_SUCCESS) {
        sc->err = rv;
        apr_pool_destroy(p);
        return;
    }
    jobs = apr_array_make(p, 16, sizeof(rs_scanfile_job_t));
    subdirs = apr_array_make(p, 8, sizeof(const char *));
    if (rs_scan_access_changed(sc, p, dfd, dir, rows)) {
        sc->recheck = 1; /* for this directory's subtree only */
    }
    classify_entries(sc, p, dfd, dir, ents, rows, jobs, subdirs);
    rs_scan_finish_jobs(sc, p, dfd, dir, jobs);
    if (sc->ahead) {
        rs_scanahead_note(sc->ahead, &mark, ents->nelts, sc->stats->files);
    }
    if (o->progress) {
        o->progress(o->progress_baton, sc->stats->files);
    }
    walk_subdirs(sc, p, dfd, dir, subdirs);
    drop_rows(sc, p, dir, rows);
    sc->recheck = recheck;
    apr_pool_destroy(p);
}

/* End a scan's transaction: roll it back when the mass-deletion guard
 * holds its deletions (RS_SCAN_EMASSDEL), otherwise commit it (a commit
 * that fails, a full disk, reports its own cause).  Returns the scan's
 * result. */
apr_status_t rs_scan_end(rs_scan_ctx_t *sc)
{
    const rs_scan_opts_t *o = sc->o;

    if (sc->err == APR_SUCCESS && o->max_deleted && sc->stats->deleted > o->max_deleted) {
        sc->err = RS_SCAN_EMASSDEL;
        rs_scanwrite_discard(sc);
        rs_db_rollback(sc->st);
        return sc->err;
    }
    rs_scanwrite_flush(sc);
    rs_scanwrite_failed(sc, rs_db_commit(sc->st));
    return sc->err;
}

int rs_scan_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 4 ? 4 : (int)n;
}

void rs_scan_ctx_init(rs_scan_ctx_t *sc, rs_db_t *st, const rs_scan_opts_t *o,
                      rs_scan_stats_t *stats, apr_pool_t *vpool)
{
    memset(stats, 0, sizeof(*stats));
    memset(sc, 0, sizeof(*sc));
    sc->st = st;
    sc->o = o;
    sc->stats = stats;
    sc->vpool = vpool;
    sc->visited = apr_hash_make(vpool);
    sc->recheck = o->recheck;
}

/* The walk's pool, below p, with its own allocator: while the writer
 * thread runs, on_change (on the writer) may allocate from p's. */
static apr_pool_t *walk_pool(apr_pool_t *p)
{
    apr_allocator_t *alloc;
    apr_pool_t *sp;

    apr_allocator_create(&alloc);
    apr_allocator_max_free_set(alloc, 4 * 1024 * 1024);
    apr_pool_create_ex(&sp, p, NULL, alloc);
    apr_allocator_owner_set(alloc, sp);
    return sp;
}

/* Open the set's root (into *rootfd) and resolve it (sc->realroot), in
 * the scan's transaction; on failure it is rolled back and nothing of the
 * set changes: a missing root is no reason to delete anything (an
 * unmounted file system would make a mirror delete everything). */
static apr_status_t open_root(rs_scan_ctx_t *sc, apr_pool_t *sp, int *rootfd)
{
    const rs_scan_opts_t *o = sc->o;
    char buf[PATH_MAX];
    apr_status_t rv;

    *rootfd = open(o->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*rootfd < 0 || !realpath(o->root, buf)) {
        rv = errno;
        if (*rootfd >= 0) {
            close(*rootfd);
        }
        rs_log_emit(o->log, RS_LOG_ERR, rv,
                    "set %s: cannot open root directory %s; "
                    "nothing of the set changes until it is back",
                    o->set, o->root);
        rs_db_rollback(sc->st);
        return rv;
    }
    sc->realroot = apr_pstrdup(sp, buf);
    sc->realroot_len = strlen(buf);
    if ((rv = rs_inventory_any(sc->st, o->set, &sc->fresh)) != APR_SUCCESS) {
        close(*rootfd);
        rs_db_rollback(sc->st);
        return rv;
    }
    sc->fresh = !sc->fresh;
    sc->stats->fresh = sc->fresh;
    return APR_SUCCESS;
}

apr_status_t rs_scan_set(rs_db_t *st, const rs_scan_opts_t *o, apr_pool_t *p,
                         rs_scan_stats_t *stats)
{
    rs_scan_ctx_t sc;
    apr_pool_t *sp = walk_pool(p);
    apr_status_t rv;
    int rootfd;

    rs_scan_ctx_init(&sc, st, o, stats, sp);
    if ((rv = rs_db_begin_set(st, o->set)) != APR_SUCCESS
        || (rv = open_root(&sc, sp, &rootfd)) != APR_SUCCESS) {
        apr_pool_destroy(sp);
        return rv;
    }
    /* The rows of a full scan, several to a statement (one round trip
     * each on a server); the batch goes with the store, to the pipe's
     * writer and back. */
    sc.batch = rs_invbatch_create(sp, st, o->set);
    if (rs_scanpipe_allowed(p, rs_db_pool(st))) {
        rs_scanpipe_start(&sc, sp); /* on failure the walk writes itself */
    }
    if (!o->hashes && o->readahead >= 0) {
        sc.ahead = rs_scanahead_start(sp, rootfd, o->readahead > 0);
    }
    rs_scan_walk(&sc, rootfd, "", sp);
    rs_scanahead_stop(sc.ahead, &stats->ahead_dirs);
    sc.ahead = NULL;
    rs_scanfile_crew_stop(sc.crew);
    sc.crew = NULL;
    close(rootfd);
    if (sc.pipe) {
        rs_scanpipe_finish(&sc);
    }
    rs_scanwrite_links_end(&sc); /* the rows it held, in this transaction */
    rs_scanwrite_flush(&sc);     /* before the rows are read for what is gone */

    /* Directories that hold rows but were not walked are gone (or are no
     * longer served): drop their rows. */
    if (sc.err == APR_SUCCESS && !sc.fresh) {
        rs_scan_drop_unvisited(&sc, sp, "");
    }
    rs_scan_end(&sc);
    /* Rows from nothing: the listings that follow (the Resource List)
     * are planned with statistics that know them.  Its failure is logged
     * and changes nothing else. */
    if (sc.fresh && sc.err == APR_SUCCESS && stats->written) {
        (void)rs_inventory_analyze(st);
    }
    if (o->progress) {
        o->progress(o->progress_baton, stats->files);
    }
    apr_pool_destroy(sp);
    return sc.err;
}

/* Drop the rows directly in directory d, reporting listed ones as deleted. */
void rs_scan_drop_dir_rows(rs_scan_ctx_t *sc, apr_pool_t *p, const char *d)
{
    const rs_scan_opts_t *o = sc->o;
    apr_int64_t n = 0;
    apr_pool_t *dp;

    apr_hash_t *gone = NULL;
    apr_hash_index_t *gi;

    apr_pool_create(&dp, p);
    if (o->on_change || o->links_done) {
        if (rs_scanwrite_failed(sc, rs_inventory_dir_load(sc->st, dp, o->set, d, &gone))) {
            apr_pool_destroy(dp);
            return;
        }
        for (gi = apr_hash_first(dp, gone); gi; gi = apr_hash_next(gi)) {
            void *val;
            apr_hash_this(gi, NULL, NULL, &val);
            if (((rs_item_t *)val)->listed) {
                rs_scanwrite_notify(sc, RS_CHANGE_DELETED, val);
            }
        }
    }
    rs_scanwrite_failed(sc, rs_inventory_delete_dir(sc->st, o->set, d, &n));
    sc->stats->removed += n;
    /* Once the rows are gone: the links that depended on them. */
    for (gi = gone && o->links_done ? apr_hash_first(dp, gone) : NULL; gi; gi = apr_hash_next(gi)) {
        void *val;
        apr_hash_this(gi, NULL, NULL, &val);
        if (((rs_item_t *)val)->listed) {
            rs_scanwrite_links_done(sc, d, ((rs_item_t *)val)->name, 1);
        }
    }
    apr_pool_destroy(dp);
}

/* Rows in directories strictly below dir ("" = the whole set) that the
 * walk did not visit: the directory is gone or no longer served. */
void rs_scan_drop_unvisited(rs_scan_ctx_t *sc, apr_pool_t *p, const char *dir)
{
    apr_array_header_t *dirs;
    int i;

    if (rs_scanwrite_failed(sc, rs_inventory_dirs_under(sc->st, p, sc->o->set, dir, &dirs))) {
        return;
    }
    for (i = 0; i < dirs->nelts && sc->err == APR_SUCCESS; i++) {
        const char *d = APR_ARRAY_IDX(dirs, i, const char *);
        if (!apr_hash_get(sc->visited, d, APR_HASH_KEY_STRING)) {
            rs_scan_drop_dir_rows(sc, p, d);
        }
    }
}
