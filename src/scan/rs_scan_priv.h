/* rs_scan_priv.h - what the two kinds of scan share (rs_scan's own helper,
 * not part of its API: only rs_scan.c and rs_scantargets.c include it).
 *
 * rs_scan.c holds the full reconciliation walk (rs_scan_set) and the
 * pieces it is made of: entry classification, the per-directory walk, the
 * writing of the per-file results, the dropping of rows of what is gone.
 * rs_scantargets.c reconciles the parts of a tree that change
 * notifications name (rs_scan_targets) with the same pieces.
 *
 * Lifecycle: one rs_scan_ctx_t per call of rs_scan_set or
 * rs_scan_targets, on that call's stack, set up after the store's
 * transaction is begun and gone when the call returns.  It is used from
 * the calling thread only (the per-file workers of rs_scanfile never see
 * it), so nothing in it is locked.
 *
 * Errors: the first failure of a store call or of the on_change callback
 * is kept in err (with its cause); the loops of the walk stop at it, and
 * rs_scan_set / rs_scan_targets return it after their commit (which the
 * store turns into a rollback of what the failed transaction held).
 */
#ifndef RS_SCAN_PRIV_H
#define RS_SCAN_PRIV_H

#include <sys/stat.h>
#include <apr_hash.h>
#include <apr_pools.h>
#include <apr_tables.h>
#include "rs_scan.h"

/* The state of one scan. */
typedef struct rs_scan_ctx_t {
    rs_db_t *st;
    const rs_scan_opts_t *o;
    rs_scan_stats_t *stats;
    apr_hash_t *visited;      /* dirs walked (relpath -> "") */
    apr_pool_t *vpool;        /* for visited */
    const char *realroot;     /* the root with links resolved (realpath) */
    apr_size_t realroot_len;
    apr_int64_t pending;      /* writes in the open transaction */
    apr_status_t err;         /* first failure; APR_SUCCESS while none */
    /* While walking a directory whose access file (or one of an
     * ancestor's, within this walk) appeared, changed or vanished: every
     * file gets its access check again, even if its row describes it.
     * Set and restored by rs_scan_walk around a directory's subtree; set
     * for the whole scan by rs_scan_opts_t.recheck. */
    int recheck;
    /* The store writer of a full scan (rs_scanpipe.c), NULL when the
     * store is written from this thread.  While it is set, this thread
     * never uses st: rows are loaded through rs_scan_dir_load and every
     * write goes through rs_scan_put_row / _put_access / _drop_row. */
    struct rs_scanpipe_t *pipe;
    /* The set had no row at all when the scan began (a first scan):
     * every directory's stored rows are then known to be none, so no
     * directory is loaded and nothing is left unvisited.  Exact because
     * only this scan writes the set's rows while it runs (the caller
     * holds the store's transaction). */
    int fresh;
    /* The threads that read and hash files (and check them, when the
     * checks may run on several threads) for the rest of the scan,
     * started by the first directory with enough work for them
     * (rs_scan_finish_jobs; crew_tried: not again after NULL) and
     * stopped when the scan ends; NULL: none (rs_scanfile.h). */
    struct rs_scanfile_crew_t *crew;
    int crew_tried;
    /* The threads reading ahead of the walk (rs_scanahead.c), NULL: none. */
    struct rs_scanahead_t *ahead;
} rs_scan_ctx_t;

/* What a directory entry is to a scan (rs_scan_classify). */
#define RS_SCAN_ENT_NONE   0    /* hidden, excluded, gone, or a link that leads out */
#define RS_SCAN_ENT_FILE   1    /* a regular file, or a link to one inside the root */
#define RS_SCAN_ENT_DIR    2    /* a directory (not a link to one) */
#define RS_SCAN_ENT_OTHER  3    /* anything else: never listed */

/* The store operations of a walk; with sc->pipe they are queued for the
 * writer thread (rs_scanpipe.c), else done at once.  put_row: store the
 * new row of a file (old: its stored row or NULL), report what it means
 * for the listing, count it (hashed: bytes read for it).  put_access:
 * store an access file's row.  drop_row: delete the row of dir/name
 * (row: as stored), reporting a listed one as deleted.  Each counts one
 * write (rs_scan_wrote). */
void rs_scan_put_row(rs_scan_ctx_t *sc, const rs_item_t *it, const rs_item_t *old,
                     apr_int64_t hashed);
void rs_scan_put_access(rs_scan_ctx_t *sc, const rs_item_t *it);
void rs_scan_drop_row(rs_scan_ctx_t *sc, const char *dir, const char *name,
                      const rs_item_t *row);

/* The stored rows of directory dir (name -> rs_item_t*), from p. */
apr_status_t rs_scan_dir_load(rs_scan_ctx_t *sc, apr_pool_t *p, const char *dir,
                              apr_hash_t **rows);

/* The writer thread of a full scan (rs_scanpipe.c; see there).  start:
 * after the scan's transaction is begun; on success sc->pipe is set,
 * otherwise the scan goes on without it.  finish: every queued write is
 * done, the writer's counts and first failure are merged into sc, and
 * sc->pipe is NULL again.  The others queue one operation or load rows,
 * as the rs_scan_* functions above do without the pipe. */
apr_status_t rs_scanpipe_start(rs_scan_ctx_t *sc, apr_pool_t *p);
/* Whether a pipe may run for a scan called with the pool caller and the
 * store's connection opened in store: both pools' allocators must have
 * a mutex (see rs_scanpipe.c; two threads on an allocator without one
 * corrupt it).  rs_scan_set starts no pipe otherwise. */
int rs_scanpipe_allowed(apr_pool_t *caller, apr_pool_t *store);
void rs_scanpipe_finish(rs_scan_ctx_t *sc);
void rs_scanpipe_row(rs_scan_ctx_t *sc, const rs_item_t *it, const rs_item_t *old,
                     apr_int64_t hashed);
void rs_scanpipe_access(rs_scan_ctx_t *sc, const rs_item_t *it);
void rs_scanpipe_drop(rs_scan_ctx_t *sc, const char *dir, const char *name,
                      const rs_item_t *row);
apr_status_t rs_scanpipe_load(rs_scan_ctx_t *sc, apr_pool_t *p, const char *dir,
                              apr_hash_t **rows);

/* Reading the tree's metadata ahead of a full scan's walk on a cold
 * cache (rs_scanahead.c; see there).  start: before the walk, with the
 * root open as rootfd (duplicated); force: read from the start instead
 * of waiting for a cold directory; NULL when no thread could start.
 * mark: the calling thread's blocks read from devices, processor time
 * and the time, before a directory; note: after each directory the walk
 * read, with the mark taken before it, its entries, and the files the
 * walk has seen.  stop: after the walk; *dirs
 * (if not NULL) gets the directories read ahead. */
typedef struct rs_scanahead_t rs_scanahead_t;
typedef struct rs_scanahead_mark_t {
    long blocks;
    apr_int64_t cpu, wall;      /* nanoseconds */
} rs_scanahead_mark_t;
void rs_scanahead_mark(rs_scanahead_mark_t *m);
rs_scanahead_t *rs_scanahead_start(apr_pool_t *p, int rootfd, int force);
void rs_scanahead_note(rs_scanahead_t *ra, const rs_scanahead_mark_t *from,
                       apr_int64_t entries, apr_int64_t walk_files);
void rs_scanahead_stop(rs_scanahead_t *ra, apr_int64_t *dirs);

/* Note the result rv of a store call: the scan stops with the first
 * failure's status (its cause, e.g. "No space left on device", reaches
 * the log).  Returns 1 if rv is a failure. */
int rs_scan_store_failed(rs_scan_ctx_t *sc, apr_status_t rv);

/* Count one write in the open transaction; every few thousand writes the
 * transaction is committed and a new one begun. */
void rs_scan_wrote(rs_scan_ctx_t *sc);

/* End the scan's transaction: rolled back when the mass-deletion guard
 * (rs_scan_opts_t.max_deleted) holds its deletions - sc->err becomes
 * RS_SCAN_EMASSDEL - otherwise committed.  Returns sc->err. */
apr_status_t rs_scan_end(rs_scan_ctx_t *sc);

/* Start a scan's context: stats zeroed, the set of visited directories
 * in vpool (which lives as long as the scan). */
void rs_scan_ctx_init(rs_scan_ctx_t *sc, rs_db_t *st, const rs_scan_opts_t *o,
                      rs_scan_stats_t *stats, apr_pool_t *vpool);

/* Tell the caller (on_change) of a change; its failure (with its cause)
 * stops the scan. */
void rs_scan_notify(rs_scan_ctx_t *sc, int change, const rs_item_t *it);

/* Pass 2 and 3 of a directory: the expensive per-file work of jobs
 * (rs_scanfile_job_t, for entries of dir, open as dfd), possibly on
 * several threads, then the results - rows written, changes notified,
 * stats counted - by the calling thread only. */
void rs_scan_finish_jobs(rs_scan_ctx_t *sc, apr_pool_t *p, int dfd, const char *dir,
                         apr_array_header_t *jobs);

/* Classify entry `name` of the directory open as dfd (relpath: its path
 * from the root) as one of RS_SCAN_ENT_*.  For RS_SCAN_ENT_FILE, *sb
 * describes the file (a link's target) and *target is the resolved target
 * of a link (NULL for a plain file), from p. */
int rs_scan_classify(rs_scan_ctx_t *sc, apr_pool_t *p, int dfd, const char *name,
                     const char *relpath, struct stat *sb, const char **target);

/* 1 if the caller would serve directory relpath (the check callback; no
 * callback: everything is served), else 0. */
int rs_scan_dir_checked(rs_scan_ctx_t *sc, apr_pool_t *p, const char *relpath);

/* A regular file seen (sb, target: as from rs_scan_classify; row: its
 * stored row or NULL): count it, and queue the per-file work in jobs
 * unless its stored row still describes it.  name and relpath must live
 * as long as jobs. */
void rs_scan_file_seen(rs_scan_ctx_t *sc, apr_array_header_t *jobs, const char *name,
                       const char *relpath, const char *target, const struct stat *sb,
                       const rs_item_t *row);

/* Reconcile directory dir (open as dfd) and everything below it: read its
 * entries, classify them against its stored rows, do the per-file work,
 * descend, then drop the rows of what is gone.  Every directory walked is
 * noted in sc->visited; its own pools come from parent and are gone when
 * it returns. */
void rs_scan_walk(rs_scan_ctx_t *sc, int dfd, const char *dir, apr_pool_t *parent);

/* Drop the rows directly in directory d, reporting listed ones as
 * deleted. */
void rs_scan_drop_dir_rows(rs_scan_ctx_t *sc, apr_pool_t *p, const char *d);

/* Drop the rows in directories strictly below dir ("" = the whole set)
 * that the walk did not visit (sc->visited): the directory is gone or no
 * longer served. */
void rs_scan_drop_unvisited(rs_scan_ctx_t *sc, apr_pool_t *p, const char *dir);

/* 1 if name is one of the set's access file names (opts->access_files). */
int rs_scan_is_access_name(const rs_scan_opts_t *o, const char *name);

/* Compare the access files of directory dir (open as dfd) with their
 * rows in rows (the directory's stored rows, name -> rs_item_t): writes
 * the row of each access file that is new or changed, and takes the rows
 * of those present out of rows (what stays there is dropped as gone).
 * Returns 1 if any access file appeared, changed or vanished (see
 * rs_scanaccess.c). */
int rs_scan_access_changed(rs_scan_ctx_t *sc, apr_pool_t *p, int dfd, const char *dir,
                           apr_hash_t *rows);

/* A directory that is not served (entry name of the directory open as
 * dfd, relpath from the root): when the set has access files, hand it to
 * on_dir all the same, without reading it, so that the watcher hears of a
 * change of its own access file (which may serve it again). */
void rs_scan_access_watch(rs_scan_ctx_t *sc, int dfd, const char *name, const char *relpath);

#endif
