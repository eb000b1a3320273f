/* SPDX-License-Identifier: Apache-2.0 */
/* rs_scanfile.h - the per-file work of a scan (rs_scan's own helper).
 *
 * A scan (rs_scan.c) walks a directory on one thread and queues the files
 * whose stored row no longer describes them as jobs; this file does the
 * work that dominates a first scan - the check callback and hashing - on
 * up to opts->workers threads, each with its own pool and allocator.
 * Jobs only read the file system and write their own result; the caller
 * writes the results to the store afterwards, on its own thread.
 */
#ifndef RS_SCANFILE_H
#define RS_SCANFILE_H

#include <sys/stat.h>
#include <apr_pools.h>
#include "rs_scan.h"
#include "rs_inventory.h"

/* A file that needs the check callback and/or hashing. */
typedef struct rs_scanfile_job_t {
    const char *name;
    const char *relpath;
    const char *target; /* resolved symlink target or NULL */
    struct stat sb;
    const rs_item_t *row; /* stored row or NULL */
    rs_item_t it;         /* result */
    int rc;               /* errno of a failed read, else 0 */
    apr_int64_t hashed;   /* bytes read for hashing */
    int deferred;         /* a large file not hashed yet: leave its row */
    /* sb is not filled yet (a plain file of a first scan): the thread
     * that reads the file fills it, from the descriptor it hashes (one
     * path lookup fewer per file) or by fstatat; gone: it vanished or is
     * no regular file any more, no row. */
    int need_stat;
    int gone;
} rs_scanfile_job_t;

/* Modification and inode change times of sb, in ns. */
apr_int64_t rs_scanfile_mtime_ns(const struct stat *sb);
apr_int64_t rs_scanfile_ctime_ns(const struct stat *sb);

/* 1 if the stored row (or NULL) still describes the file sb under the
 * scan's configuration: same version, same check fingerprint, and the
 * hashes the configuration asks for. */
int rs_scanfile_unchanged(const rs_scan_opts_t *o, const rs_item_t *row, const struct stat *sb);

/* The worker threads of a whole scan, started once instead of once per
 * directory (thread creation, and the fresh memory each new thread
 * touches, cost more than the work of a small directory).  NULL when
 * the options want no threads (no hashes and checks that must stay on
 * one thread) or none could be started: rs_scanfile_run then does the
 * work on the calling thread.  Memory from p; stop it before p goes. */
typedef struct rs_scanfile_crew_t rs_scanfile_crew_t;
rs_scanfile_crew_t *rs_scanfile_crew_start(const rs_scan_opts_t *o, apr_pool_t *p);
void rs_scanfile_crew_stop(rs_scanfile_crew_t *crew);

/* Run the jobs of directory dir (open as dfd): fill each job's `it`
 * (row to store), `rc` and `hashed`, on the crew's threads when there is
 * one and at least 8 jobs, else on the calling thread.  Results are
 * allocated from p or from the crew's pools, and stay valid until p is
 * cleared or the next call with the same crew, whichever comes first. */
void rs_scanfile_run(const rs_scan_opts_t *o, rs_scanfile_crew_t *crew, apr_pool_t *p, int dfd,
                     const char *dir, rs_scanfile_job_t *jobs, int njobs);

#endif
