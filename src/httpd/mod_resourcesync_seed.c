/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_seed.c - the seed of the status segment, read from the
 * state directory by the run user.
 *
 * Why a seed: the status segment is new at every restart, and the new
 * watcher needs a moment (a full scan on a large set) before it publishes
 * anything.  Seeded with what is on disk, each set's entry lets children
 * keep serving the previous Resource List, Change Lists and dumps across
 * the restart: only the documents of the history named by
 * <statedir>/history (rs_history.h), which the watcher writes before any
 * document of a new history; without that file nothing is seeded.
 *
 * Who reads: the run user owns the state directory and can put anything
 * under any name there (a FIFO at history would hang its reader; a
 * symbolic link to a file only root may read; a file of gigabytes), so
 * the httpd parent (root) reads none of it.  rs_seed_fill forks a
 * short-lived process ("rs-seed") that drops to User and Group as the
 * watcher does, fills the set entries of the new segment (anonymous
 * shared memory created just before, inherited through the fork and not
 * yet seen by any child or watcher, so no lock is needed) and exits.
 * Every file it reads is opened with rs_file_read_small (no symbolic link
 * followed, never waiting on a FIFO, a regular file of the run user,
 * bounded); directories are only listed.
 *
 * Lifecycle (post_config, real pass, at every start and restart): the
 * parent waits for the process at most RS_SEED_WAIT (the end of the pipe
 * it holds tells when it is gone) and kills it past that.  When it was
 * killed or failed, every entry is emptied again (a killed process may
 * have left one half written) and the generation starts without a seed:
 * children answer 503 for the documents until the watcher has published
 * them; one warning says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include <apr_file_info.h>
#include <apr_thread_proc.h>
#include <mpm_common.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_seed.h"
#include "mod_resourcesync_status.h"
#include "rs_capture.h"
#include "rs_cdump.h"
#include "rs_dumppkg.h"
#include "rs_file.h"
#include "rs_history.h"
#include "rs_snapshot.h"
#include "rs_snapinfo.h"
#include "rs_statedir.h"
#include "rs_time.h"

/* How long the parent waits for the seed: it reads a few small files and
 * lists a few directories per set, usually in milliseconds; past this the
 * restart goes on without it. */
#define RS_SEED_WAIT apr_time_from_sec(10)

/* Exit code of a seed process that could not drop its privileges. */
#define RS_SEED_NOUSER 78

/* Newest complete snapshot of a set on disk (gen stays 0 if none).
 * 0 if the set has no snapshot directory yet. */
static int seed_snapshot(apr_pool_t *p, const rs_set_t *set, rs_status_set_t *e)
{
    apr_dir_t *d;
    apr_finfo_t fi;

    if (apr_dir_open(&d, set->snap_dir, p) != APR_SUCCESS) {
        return 0;
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        rs_snapshot_info_t info;
        char *end;
        apr_uint64_t gen;
        if (fi.filetype != APR_DIR || !apr_isdigit(fi.name[0])) {
            continue;
        }
        gen = apr_strtoi64(fi.name, &end, 10);
        if (*end || gen <= e->gen) {
            continue;
        }
        if (rs_snapinfo_read(rs_statedir_gen(p, set->snap_dir, gen), p, &info) == APR_SUCCESS
            && info.gen == gen) {
            e->gen = gen;
            e->at = info.at;
            e->completed = info.completed;
            e->entries = info.entries;
            e->parts = info.parts;
            e->consistent = info.at;
            e->bytes = info.bytes;
        }
    }
    apr_dir_close(d);
    return 1;
}

/* The newest Resource Dump on disk whose URLs belong to the entry's
 * history, so children serve it right after a restart while the new
 * watcher decides whether to rebuild (reusing its packages). */
static void seed_dump(apr_pool_t *p, const rs_set_t *set, rs_status_set_t *e)
{
    apr_array_header_t *gens;
    int i;

    if (!set->rdump) {
        return;
    }
    gens = rs_dumppkg_gens(p, set->rdump_dir);
    for (i = 0; i < gens->nelts; i++) {
        const char *dir = APR_ARRAY_IDX(gens, i, const char *);
        char h[RS_HISTORY_LEN + 1];
        if (rs_history_read(p, rs_statedir_dump_history(p, dir), h) == APR_SUCCESS
            && !strcmp(h, e->history) && rs_file_exists(p, rs_statedir_dump_file(p, dir))) {
            e->dump_gen = (apr_uint64_t)apr_atoi64(strrchr(dir, '/') + 1);
            return;
        }
    }
}

/* The Change Dump on disk: changedump.xml of this history (the watcher
 * removes the Change Dumps of a history before it writes a new history
 * file, so one that is there belongs to the history on disk), served
 * right after a restart until the watcher's first job rewrites it; the
 * disk use as that job would report it (the packages' lengths, the
 * captures' bytes). */
static void seed_cdump(apr_pool_t *p, const rs_set_t *set, rs_status_set_t *e)
{
    if (!set->cdump
        || !rs_file_exists(p, rs_statedir_cdump_file(p, set->cdump_dir, e->history, 0, 0))) {
        return;
    }
    e->cdump_bytes = rs_cdump_bytes(set->cdump_dir, p);
    e->capture_bytes = rs_capture_bytes(set->capture_dir, p);
    e->cdump_ready = 1;
}

/* The open Change List's id: the one after the highest closed list of the
 * entry's history on disk (not ready to be served before the watcher says
 * what it holds). */
static void seed_open_list(apr_pool_t *p, const rs_set_t *set, rs_status_set_t *e)
{
    apr_dir_t *d;
    apr_finfo_t fi;

    if (apr_dir_open(&d, set->cl_dir, p) != APR_SUCCESS) {
        return;
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        char h[RS_HISTORY_LEN + 1];
        apr_int64_t id;
        if (fi.filetype == APR_REG && rs_statedir_is_cl_list(fi.name, h, &id)
            && !strcmp(h, e->history) && id + 1 > e->cl_open_id) {
            e->cl_open_id = id + 1; /* closed: the next is open */
        }
    }
    apr_dir_close(d);
}

/* Whether the set's documents on disk were written with other base URLs
 * than its configuration's (<statedir>/base/<set>, rs_statecheck.h): then
 * they name a scheme, host, port or path the server no longer has, and
 * nothing of them is seeded (the watcher starts a new history).  A set
 * without the file (never started, or by a version that did not write
 * it) is taken to have them. */
static int seed_base_changed(apr_pool_t *p, const rs_set_t *set)
{
    apr_size_t len = strlen(set->base), got = 0;
    char *buf = NULL;
    apr_status_t rv = rs_file_read_small(p, rs_statedir_setbase(p, rs_global.state_dir, set->name),
                                         len + 1, &buf, &got);

    if (APR_STATUS_IS_ENOENT(rv)) {
        return 0;
    }
    return rv != APR_SUCCESS || got != len || memcmp(buf, set->base, len);
}

/* In the seed process, as the run user: every set's entry from disk. */
static void seed_sets(apr_pool_t *p, rs_status_set_t *sets)
{
    char history[RS_HISTORY_LEN + 1];
    int i;

    if (rs_history_read(p, rs_statedir_history(p, rs_global.state_dir), history) != APR_SUCCESS) {
        return;
    }
    for (i = 0; i < rs_global.sets->nelts; i++) {
        const rs_set_t *set = APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *);
        /* An entry without a history serves nothing of any (the topics
         * too: mod_resourcesync_handler.c) until the watcher adopts one. */
        if (seed_base_changed(p, set)) {
            continue;
        }
        apr_cpystrn(sets[i].history, history, sizeof(sets[i].history));
        /* A set without a snapshot directory has never been scanned:
         * nothing of it is seeded. */
        if (seed_snapshot(p, set, &sets[i])) {
            seed_open_list(p, set, &sets[i]);
            seed_dump(p, set, &sets[i]);
            seed_cdump(p, set, &sets[i]);
        }
    }
}

/* The seed process: never returns. */
static void seed_main(apr_pool_t *pconf, server_rec *s, rs_status_set_t *sets)
{
    apr_pool_t *p;

    prctl(PR_SET_NAME, "rs-seed", 0, 0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (geteuid() == 0 && ap_run_drop_privileges(pconf, s) != OK) {
        _exit(RS_SEED_NOUSER);
    }
    apr_pool_create(&p, pconf);
    seed_sets(p, sets);
    /* _exit: never run the parent's atexit handlers or pool cleanups. */
    _exit(0);
}

/* Parent: wait until the process holding the other end of rfd is gone,
 * at most until deadline (rs_time_mono).  1 if it is. */
static int wait_gone(int rfd, apr_time_t deadline)
{
    struct pollfd pfd;
    char c;

    for (;;) {
        apr_time_t left = deadline - rs_time_mono();
        int rc;
        if (left <= 0) {
            return 0;
        }
        pfd.fd = rfd;
        pfd.events = POLLIN;
        pfd.revents = 0;
        rc = poll(&pfd, 1, (int)apr_time_as_msec(left) + 1);
        if (rc < 0 && errno != EINTR) {
            return 0;
        }
        /* Nothing is written: readable means the end of the pipe. */
        if (rc > 0 && read(rfd, &c, 1) <= 0 && errno != EINTR) {
            return 1;
        }
    }
}

/* Parent: the seed process's outcome; NULL if it filled the entries,
 * else why not (in p). */
static const char *seed_outcome(apr_pool_t *p, pid_t pid, int rfd)
{
    int status = 0;
    pid_t w;

    if (!wait_gone(rfd, rs_time_mono() + RS_SEED_WAIT)) {
        kill(pid, SIGKILL);
        /* Reaped now, or (stuck in the kernel) by the MPM when it ends. */
        if (wait_gone(rfd, rs_time_mono() + apr_time_from_sec(1))) {
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
        }
        return apr_psprintf(p, "it did not finish within %d s and was killed",
                            (int)apr_time_sec(RS_SEED_WAIT));
    }
    while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    if (w < 0) {
        return apr_psprintf(p, "cannot wait for it: %s", strerror(errno));
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        return NULL;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == RS_SEED_NOUSER) {
        return "it could not drop its privileges";
    }
    return WIFSIGNALED(status) ? apr_psprintf(p, "it ended by signal %d", WTERMSIG(status))
                               : apr_psprintf(p, "it exited with status %d", WEXITSTATUS(status));
}

void rs_seed_fill(apr_pool_t *pconf, server_rec *s, rs_status_set_t *sets, int nsets)
{
    const char *why = NULL;
    apr_proc_t proc;
    apr_pool_t *p;
    apr_status_t rv;
    char buf[256];
    int fds[2], i;

    apr_pool_create(&p, pconf);
    if (pipe2(fds, O_CLOEXEC) != 0) {
        why = apr_psprintf(p, "cannot create a pipe: %s", strerror(errno));
    }
    else if ((rv = apr_proc_fork(&proc, p)) == APR_INCHILD) {
        close(fds[0]);
        seed_main(pconf, s, sets); /* holds fds[1] until it exits */
    }
    else if (rv != APR_INPARENT) {
        why = apr_psprintf(p, "cannot fork: %s", apr_strerror(rv, buf, sizeof(buf)));
        close(fds[0]);
        close(fds[1]);
    }
    else {
        close(fds[1]);
        why = seed_outcome(p, proc.pid, fds[0]);
        close(fds[0]);
    }
    if (why) {
        for (i = 0; i < nsets; i++) {
            char name[sizeof(sets[i].name)];
            memcpy(name, sets[i].name, sizeof(name));
            memset(&sets[i], 0, sizeof(sets[i]));
            memcpy(sets[i].name, name, sizeof(name));
        }
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
                     RS_TAG "cannot read what "
                            "ResourceSyncStateDir '%s' holds as the run user (%s): the documents "
                            "are served again once the watcher has published them",
                     rs_global.state_dir, why);
    }
    apr_pool_destroy(p);
}
