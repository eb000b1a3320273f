/* mod_resourcesync_avail.c - never publish a set emptied by mistake.
 *
 * Runs in the watcher, on the driver's thread, on the driver's per-set
 * state (wset_t).  Two guards:
 *
 * Availability.  Before every full scan (startup, ticks, a lost event
 * queue, a changed root, a mount table change) the driver asks
 * rs_avail_check whether the set can be listed at all: its root opens,
 * it is not an empty directory on another device than the one it had
 * when last listed (a file system that is no longer mounted leaves the
 * empty directory below it), and its URL-path maps to it.  If not, the
 * set is "unavailable": nothing is scanned or journaled, its status entry
 * says why, and children answer 503 with Retry-After for its documents
 * (mod_resourcesync_handler.c).  The check runs again at every tick and
 * mount table change; when it passes, the full scan that follows
 * reconciles the inventory - untouched meanwhile - with the tree.  The
 * device is remembered in the store (root-dev:<set>), so an unmount while
 * httpd was stopped is noticed at the next start.
 *
 * Mass deletions.  Every scan runs with a limit (rs_avail_max_deleted,
 * from ResourceSyncMassDeletion and the set's listed files): a scan or an
 * event batch that would delete more is rolled back by rs_scan
 * (RS_SCAN_EMASSDEL).  rs_avail_hold then logs one warning and schedules
 * a confirming full scan RS_AVAIL_CONFIRM later, which runs without the
 * limit: it deletes what is still gone then, and nothing if the files are
 * back.  Until it runs, the set's events are left to it.
 *
 * Mounts.  inotify reports no mount or unmount; the driver polls the mount
 * table (rs_mounts) and rs_avail_mounts_changed marks the sets a mount
 * point that appeared or went is in, at or above, for a full scan - which
 * checks availability first, then walks into mounted file systems (scans
 * cross mount points: httpd serves the files there).
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "rs_time.h"

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
static const char *root_problem(wset_t *ws, apr_pool_t *p, apr_uint64_t *dev)
{
    const char *dir = ws->set->dir;
    char err[120];
    struct stat sb;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), empty;

    if (fd < 0 || fstat(fd, &sb) != 0) {
        apr_status_t rv = errno;
        if (fd >= 0) {
            close(fd);
        }
        return apr_psprintf(p, "root missing: %s: %s", dir, apr_strerror(rv, err,
                                                                         sizeof(err)));
    }
    *dev = (apr_uint64_t)sb.st_dev;
    empty = ws->root_dev && *dev != ws->root_dev && dir_empty(fd);
    close(fd);
    if (empty) {
        return apr_psprintf(p, "root %s is an empty directory on another file system "
                            "(device %" APR_UINT64_T_FMT ", was %" APR_UINT64_T_FMT
                            "): not mounted?", dir, *dev, ws->root_dev);
    }
    return NULL;
}

/* Why the URL-path does not map to the root (from p), or NULL. */
static const char *url_problem(wset_t *ws, apr_pool_t *p)
{
    const char *why = rs_access_verify_root(ws->acc[0], p);
    const char *tag = why ? apr_pstrcat(p, "set ", ws->set->name, ": ", NULL) : NULL;

    if (why && !strncmp(why, tag, strlen(tag))) {
        why += strlen(tag);
    }
    return why;
}

/* Remember the root's device (memory and store) once it is listable. */
static void note_dev(wset_t *ws, apr_pool_t *p, apr_uint64_t dev)
{
    apr_status_t rv;

    if (dev == ws->root_dev) {
        return;
    }
    ws->root_dev = dev;
    rv = rs_db_meta_put(ws->d->store, apr_pstrcat(p, "root-dev:", ws->set->name, NULL),
                        apr_psprintf(p, "%" APR_UINT64_T_FMT, dev));
    if (rv != APR_SUCCESS) {
        rs_log_emit(ws->log, RS_LOG_WARN, rv, "set %s: cannot record the device of its "
                    "root", ws->set->name);
    }
}

void rs_avail_init(wset_t *ws, apr_pool_t *p)
{
    const char *v = NULL;

    if (rs_db_meta_get(ws->d->store, p, apr_pstrcat(p, "root-dev:", ws->set->name, NULL),
                       &v) == APR_SUCCESS && v) {
        ws->root_dev = (apr_uint64_t)apr_atoi64(v);
    }
    /* A previous watcher of this generation may have left the set
     * unavailable: that stands until the first check decides again (and
     * logs the end of the episode).  Deletions it held are judged anew by
     * this watcher's first scan. */
    if (ws->status.held) {
        ws->status.held = 0;
        rs_drive_status_put(ws);
    }
}

int rs_avail_check(wset_t *ws, apr_pool_t *p)
{
    apr_uint64_t dev = 0;
    const char *why = root_problem(ws, p, &dev);

    if (!why) {
        why = url_problem(ws, p);
    }
    if (why) {
        if (!ws->status.unavailable || strcmp(ws->status.why, why)) {
            ap_log_error(APLOG_MARK, APLOG_ERR, 0, ws->d->s, RS_TAG "set %s: %s; the set "
                         "is unavailable: its documents answer 503 and nothing is recorded "
                         "until it is back", ws->set->name, why);
            ws->status.unavailable = 1;
            apr_cpystrn(ws->status.why, why, sizeof(ws->status.why));
            rs_drive_status_put(ws);
        }
        return 0;
    }
    note_dev(ws, p, dev);
    if (ws->status.unavailable) {
        ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, ws->d->s, RS_TAG "set %s is available "
                     "again; reconciling it with a full scan", ws->set->name);
        ws->status.unavailable = 0;
        ws->status.why[0] = '\0';
        rs_drive_status_put(ws);
    }
    return 1;
}

/* The share is taken of the files of the Resource List in service (the
 * status entry's count): counting the inventory at every event batch
 * would cost O(set) per batch, and the list is at most one rescan
 * interval behind. */
apr_int64_t rs_avail_max_deleted(wset_t *ws)
{
    apr_int64_t limit;

    if (!rs_global.massdel_share || ws->confirming) {
        return 0;
    }
    ws->listed = ws->status.entries;
    limit = ws->listed * rs_global.massdel_share / 100;
    return limit < rs_global.massdel_min ? rs_global.massdel_min : limit;
}

void rs_avail_hold(wset_t *ws, apr_int64_t deleted)
{
    if (!ws->confirm_at) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, ws->d->s, RS_TAG "set %s: %"
                     APR_INT64_T_FMT " of its %" APR_INT64_T_FMT " listed files are gone "
                     "(more than ResourceSyncMassDeletion %d%% and %" APR_INT64_T_FMT
                     " files); nothing is deleted unless a full scan in %d s finds them "
                     "gone too", ws->set->name, deleted, ws->listed, rs_global.massdel_share,
                     rs_global.massdel_min, (int)apr_time_sec(RS_AVAIL_CONFIRM));
        ws->confirm_at = rs_time_mono() + RS_AVAIL_CONFIRM;
    }
    ws->status.held = deleted;
    rs_drive_status_put(ws);
}

void rs_avail_confirmed(wset_t *ws, const rs_scan_stats_t *stats, apr_status_t rv)
{
    if (rv != APR_SUCCESS) {
        /* Failed (logged by the driver): the deletions stay held, and are
         * confirmed by the next try. */
        ws->confirm_at = rs_time_mono() + RS_AVAIL_CONFIRM;
        return;
    }
    ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, ws->d->s, RS_TAG "set %s: the confirming scan "
                 "found %" APR_INT64_T_FMT " of the %" APR_INT64_T_FMT " files gone; %s",
                 ws->set->name, stats->deleted, ws->status.held,
                 stats->deleted ? "their deletions are recorded" : "nothing is deleted");
    ws->confirm_at = 0;
    ws->status.held = 0;
    rs_drive_status_put(ws);
}

void rs_avail_mounts_open(rs_drive_t *d)
{
    apr_status_t rv = rs_mounts_open(&d->mounts, d->pool, "/proc/self/mountinfo");

    if (rv != APR_SUCCESS) {
        d->mounts = NULL;
        ap_log_error(APLOG_MARK, APLOG_WARNING, rv, d->s, RS_TAG "watcher: cannot follow the "
                     "mount table (/proc/self/mountinfo); mounts and unmounts inside sets "
                     "are found by the next full scan");
    }
}

void rs_avail_mounts_changed(rs_drive_t *d)
{
    apr_array_header_t *mps;
    apr_status_t rv;
    int i, k;

    if ((rv = rs_mounts_changed(d->mounts, d->iter, &mps)) != APR_SUCCESS) {
        rs_log_emit(&d->log, RS_LOG_WARN, rv, "cannot read the mount table; mounts and "
                    "unmounts inside sets are found by the next full scan");
        return;
    }
    for (i = 0; i < d->nsets; i++) {
        wset_t *ws = &d->ws[i];
        for (k = 0; k < mps->nelts && !ws->remount; k++) {
            const char *mp = APR_ARRAY_IDX(mps, k, const char *);
            if (rs_mounts_affects(mp, ws->set->dir)) {
                ws->remount = 1;
                rs_log_emit(&d->log, RS_LOG_NOTICE, 0, "set %s: %s was mounted or "
                            "unmounted; reconciling the set with a full scan",
                            ws->set->name, mp);
            }
        }
    }
    apr_pool_clear(d->iter);
}
