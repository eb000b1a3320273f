/* SPDX-License-Identifier: Apache-2.0 */
/* rs_massdel.c - never publish a set emptied by mistake (see rs_massdel.h).
 *
 * Runs on the driver's thread only; every deadline is computed from the
 * caller's `now`.  The published fields (unavailable, why, held) change
 * here only, each change followed by hooks->publish.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <apr_strings.h>
#include "rs_lease.h"
#include "rs_massdel.h"
#include "rs_scan.h"

static void publish(rs_massdel_t *md)
{
    if (md->h && md->h->publish) {
        md->h->publish(md->h->baton, md);
    }
}

static const rs_logger_t *log_of(const rs_massdel_t *md)
{
    return md->h ? md->h->log : NULL;
}

static const rs_logger_t *episodes_of(const rs_massdel_t *md)
{
    return md->h ? md->h->episodes : NULL;
}

void rs_massdel_init(rs_massdel_t *md, const rs_massdel_hooks_t *h, const char *name,
                     const char *dir, int share, apr_int64_t min)
{
    memset(md, 0, sizeof(*md));
    md->h = h;
    md->name = name;
    md->dir = dir;
    md->share = share;
    md->min = min;
}

void rs_massdel_adopt(rs_massdel_t *md, rs_db_t *store, apr_pool_t *p, int unavailable,
                      const char *why, apr_int64_t held)
{
    const char *v = NULL;

    if (rs_db_meta_get(store, p, apr_pstrcat(p, "root-dev:", md->name, NULL), &v) == APR_SUCCESS
        && v) {
        md->root_dev = (apr_uint64_t)apr_atoi64(v);
    }
    md->unavailable = unavailable;
    apr_cpystrn(md->why, why ? why : "", sizeof(md->why));
    md->held = held;
    /* A previous watcher of this generation may have left the set
     * unavailable: that stands until the first check decides again (and
     * logs the end of the episode).  Deletions it held are judged anew by
     * this watcher's first scan. */
    if (md->held) {
        md->held = 0;
        publish(md);
    }
}

/* 1 if the directory open as fd has no entry but "." and "..". */
static int dir_empty(int fd)
{
    int fd2 = dup(fd), empty = 1;
    DIR *d = fd2 >= 0 ? fdopendir(fd2) : NULL;
    struct dirent *de;

    if (!d) {
        if (fd2 >= 0) {
            close(fd2);
        }
        return 0;
    }
    while (empty && (de = readdir(d)) != NULL) {
        empty = de->d_name[0] == '.'
                && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2]));
    }
    closedir(d);
    return empty;
}

/* Why the root cannot be listed (from p), or NULL; *dev: its device. */
static const char *root_problem(const rs_massdel_t *md, apr_pool_t *p, apr_uint64_t *dev)
{
    const char *dir = md->dir;
    char err[120];
    struct stat sb;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), empty;

    if (fd < 0 || fstat(fd, &sb) != 0) {
        apr_status_t rv = errno;
        if (fd >= 0) {
            close(fd);
        }
        return apr_psprintf(p, "root missing: %s: %s", dir, apr_strerror(rv, err, sizeof(err)));
    }
    *dev = (apr_uint64_t)sb.st_dev;
    empty = md->root_dev && *dev != md->root_dev && dir_empty(fd);
    close(fd);
    if (empty) {
        return apr_psprintf(p,
                            "root %s is an empty directory on another file system "
                            "(device %" APR_UINT64_T_FMT ", was %" APR_UINT64_T_FMT
                            "): not mounted?",
                            dir, *dev, md->root_dev);
    }
    return NULL;
}

/* Remember the root's device (memory and store) once it is listable. */
static void note_dev(rs_massdel_t *md, rs_db_t *store, apr_pool_t *p, apr_uint64_t dev)
{
    apr_status_t rv;

    if (dev == md->root_dev) {
        return;
    }
    md->root_dev = dev;
    /* With the set's fence: refused (RS_LEASE_LOST) on a node that no
     * longer writes the set, which the scan's own fenced transactions
     * then find and note. */
    rv = rs_db_meta_put_set(store, md->name, apr_pstrcat(p, "root-dev:", md->name, NULL),
                            apr_psprintf(p, "%" APR_UINT64_T_FMT, dev));
    if (rv != APR_SUCCESS && rv != RS_LEASE_LOST) {
        rs_log_emit(log_of(md), RS_LOG_WARN, rv,
                    "set %s: cannot record the device of its "
                    "root",
                    md->name);
    }
}

int rs_massdel_check(rs_massdel_t *md, rs_db_t *store, apr_pool_t *p)
{
    apr_uint64_t dev = 0;
    const char *why = root_problem(md, p, &dev);

    if (!why && md->h && md->h->verify_root) {
        why = md->h->verify_root(md->h->baton, p);
    }
    if (why) {
        if (!md->unavailable || strcmp(md->why, why)) {
            rs_log_emit(episodes_of(md), RS_LOG_ERR, 0,
                        "set %s: %s; the set is unavailable: "
                        "its documents answer 503 and nothing is recorded until it is back",
                        md->name, why);
            md->unavailable = 1;
            apr_cpystrn(md->why, why, sizeof(md->why));
            publish(md);
        }
        return 0;
    }
    note_dev(md, store, p, dev);
    if (md->unavailable) {
        rs_log_emit(episodes_of(md), RS_LOG_NOTICE, 0,
                    "set %s is available again; "
                    "reconciling it with a full scan",
                    md->name);
        md->unavailable = 0;
        md->why[0] = '\0';
        publish(md);
    }
    return 1;
}

void rs_massdel_unlisted(rs_massdel_t *md)
{
    md->confirm_at = 0;
    md->held = 0;
    publish(md);
}

/* The share is taken of the files of the Resource List in service (the
 * status entry's count): counting the inventory at every event batch
 * would cost O(set) per batch, and the list is at most one rescan
 * interval behind. */
apr_int64_t rs_massdel_limit(rs_massdel_t *md, apr_int64_t listed)
{
    apr_int64_t limit;

    if (!md->share || md->confirming) {
        return 0;
    }
    md->listed = listed;
    limit = md->listed * md->share / 100;
    return limit < md->min ? md->min : limit;
}

/* The confirming scan ran (rv, deleted): say what it found; the hold
 * ends.  A failed one leaves the deletions held and tries again later. */
static void confirmed(rs_massdel_t *md, apr_status_t rv, apr_int64_t deleted, apr_time_t now)
{
    if (rv != APR_SUCCESS) {
        /* Failed (logged by the driver): the deletions stay held, and are
         * confirmed by the next try. */
        md->confirm_at = now + RS_MASSDEL_CONFIRM;
        return;
    }
    rs_log_emit(episodes_of(md), RS_LOG_NOTICE, 0,
                "set %s: the confirming scan found %" APR_INT64_T_FMT " of the %" APR_INT64_T_FMT
                " files gone; %s",
                md->name, deleted, md->held,
                deleted ? "their deletions are recorded" : "nothing is deleted");
    md->confirm_at = 0;
    md->held = 0;
    publish(md);
}

static void hold(rs_massdel_t *md, apr_int64_t deleted, apr_time_t now)
{
    if (!md->confirm_at) {
        rs_log_emit(episodes_of(md), RS_LOG_WARN, 0,
                    "set %s: %" APR_INT64_T_FMT " of its %" APR_INT64_T_FMT
                    " listed files are gone (more than "
                    "ResourceSyncMassDeletion %d%% and %" APR_INT64_T_FMT " files); nothing "
                    "is deleted unless a full scan in %d s finds them gone too",
                    md->name, deleted, md->listed, md->share, md->min,
                    (int)apr_time_sec(RS_MASSDEL_CONFIRM));
        md->confirm_at = now + RS_MASSDEL_CONFIRM;
    }
    md->held = deleted;
    publish(md);
}

int rs_massdel_scanned(rs_massdel_t *md, apr_status_t rv, apr_int64_t deleted, apr_time_t now)
{
    if (md->confirming) {
        confirmed(md, rv, deleted, now);
    }
    if (rv == RS_SCAN_EMASSDEL) {
        hold(md, deleted, now);
        return 1;
    }
    return 0;
}

int rs_massdel_waiting(const rs_massdel_t *md)
{
    return md->confirm_at != 0;
}

apr_time_t rs_massdel_next(const rs_massdel_t *md)
{
    return md->confirm_at;
}

int rs_massdel_due(const rs_massdel_t *md, apr_time_t now)
{
    return (md->confirm_at && now >= md->confirm_at) || md->remount;
}

void rs_massdel_recheck_begin(rs_massdel_t *md, apr_time_t now)
{
    md->confirming = md->confirm_at && now >= md->confirm_at;
    md->remount = 0;
}

void rs_massdel_recheck_end(rs_massdel_t *md, apr_time_t now)
{
    if (md->confirming && md->confirm_at && md->confirm_at <= now) {
        /* The scan did not run (the journal could not be read): the held
         * deletions are still to be confirmed, a little later. */
        md->confirm_at = now + RS_MASSDEL_CONFIRM;
    }
    md->confirming = 0;
}

apr_status_t rs_massdel_mounts_open(rs_mounts_t **out, apr_pool_t *p, const char *path,
                                    const rs_logger_t *log)
{
    apr_status_t rv = rs_mounts_open(out, p, path);

    if (rv != APR_SUCCESS) {
        *out = NULL;
        rs_log_emit(log, RS_LOG_WARN, rv,
                    "watcher: cannot follow the mount table (%s); "
                    "mounts and unmounts inside sets are found by the next full scan",
                    path);
    }
    return rv;
}

apr_array_header_t *rs_massdel_mounts_read(rs_mounts_t *m, apr_pool_t *p, const rs_logger_t *log)
{
    apr_array_header_t *mps;
    apr_status_t rv = rs_mounts_changed(m, p, &mps);

    if (rv != APR_SUCCESS) {
        rs_log_emit(log, RS_LOG_WARN, rv,
                    "cannot read the mount table; mounts and "
                    "unmounts inside sets are found by the next full scan");
        return NULL;
    }
    return mps;
}

int rs_massdel_mounts_changed(rs_massdel_t *md, const apr_array_header_t *mps)
{
    int k;

    for (k = 0; k < mps->nelts && !md->remount; k++) {
        const char *mp = APR_ARRAY_IDX(mps, k, const char *);
        if (rs_mounts_affects(mp, md->dir)) {
            md->remount = 1;
            rs_log_emit(log_of(md), RS_LOG_NOTICE, 0,
                        "set %s: %s was mounted or unmounted; "
                        "reconciling the set with a full scan",
                        md->name, mp);
        }
    }
    return md->remount;
}
