/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_watcher.c - the watcher process's lifecycle.
 *
 * What the watcher does is the driver's (mod_resourcesync_drive.c); this
 * file only makes sure exactly one watcher runs per server generation.
 *
 * Lifecycle (mod_cgid style): post_config of the real start forks one
 * watcher per server generation.  The parent registers it as an "other
 * child" of the MPM and notes it as a subprocess of pconf, so:
 *   - a restart (graceful or not) clears pconf, which SIGTERMs the watcher
 *     (SIGKILL after a timeout); the new generation forks a new one;
 *   - if the watcher dies otherwise (crash, kill -9), the MPM reports the
 *     death to watcher_maint(), which forks a replacement unless the server
 *     is stopping or the watcher exited with RS_WATCHER_FATAL (a startup
 *     failure that a respawn would only repeat), after a delay that grows
 *     while replacements die quickly.  A watcher that found its state
 *     store deleted or replaced ends with RS_WATCHER_RESTART: it is
 *     replaced like a crashed one, with a notice instead of a warning.
 *
 * In the child: name the process, ask the kernel for SIGTERM when the
 * parent dies, restore default signal dispositions, close the listeners,
 * attach to the status mutex, drop privileges, set the umask to 077
 * (everything it creates is private to the run user), announce the pid in
 * the status segment, wait out the respawn delay, then run the driver: it
 * opens the store, reconciles every set against the stored inventory and
 * follows inotify events until the parent is gone.  The process always
 * ends with _exit.
 */
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <apr_signal.h>
#include <apr_strings.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>
#include <ap_listen.h>
#include <ap_mpm.h>
#include <http_main.h>
#include <mpm_common.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_status.h"
#include "mod_resourcesync_drive.h"
#include "mod_resourcesync_watcher.h"
#include "rs_db.h"
#include "rs_time.h"

#define RS_WATCHER_FATAL   78 /* EX_CONFIG: do not respawn */
#define RS_WATCHER_RESTART 75 /* EX_TEMPFAIL: respawn, said already */

/* Respawn throttling (parent side; a forked watcher inherits the delay):
 * a watcher that dies within RS_QUICK_DEATH of its start makes the next
 * one wait 1, 2, 4 ... up to 60 s before it starts working, so a watcher
 * that crashes at once cannot spin the parent. */
#define RS_QUICK_DEATH apr_time_from_sec(10)
#define RS_MAX_DELAY   apr_time_from_sec(60)

static struct {
    server_rec *s;        /* the main server of this generation */
    apr_time_t last_fork; /* rs_time_mono() */
    int quick_deaths;
    apr_interval_time_t start_delay;
} wd;

/* Child: the parent's handlers are inherited through fork: restore the
 * defaults, so that any of the signals httpd sends on stop or restart
 * simply ends the watcher.  That is safe at any point: store writes are
 * transactions and snapshots appear by an atomic rename. */
static void watcher_signals(void)
{
    apr_signal(SIGTERM, SIG_DFL);
    apr_signal(SIGHUP, SIG_DFL);
    apr_signal(SIGINT, SIG_DFL);
    apr_signal(SIGUSR1, SIG_DFL);
    apr_signal(SIGWINCH, SIG_DFL);
    apr_signal(SIGPIPE, SIG_IGN);
    apr_signal_unblock(SIGTERM);
    apr_signal_unblock(SIGHUP);
    apr_signal_unblock(SIGUSR1);
}

static void watcher_main(apr_pool_t *pool, server_rec *s)
{
    rs_status_t *st = rs_status_get();

    prctl(PR_SET_NAME, "rs-watcher", 0, 0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
    watcher_signals();
    ap_close_listeners();
    if (rs_global.mutex) {
        rs_status_child_init(pool, s);
    }
    if (geteuid() == 0 && ap_run_drop_privileges(pool, s) != OK) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, RS_TAG "watcher: cannot drop privileges");
        _exit(RS_WATCHER_FATAL);
    }
    /* Everything the watcher creates is in the state directory and is the
     * run user's alone (the store holds subscribers' secrets): files 0600
     * and directories 0700 at most, whatever umask httpd started with.
     * Children (the same user) read them. */
    umask(077);
    if (st) {
        st->watcher_pid = getpid();
        st->heartbeat = apr_time_now();
        st->state = RS_STATE_STARTING;
    }
    if (wd.start_delay) {
        apr_sleep(wd.start_delay);
    }
    /* Every store connection of the watcher is one thread's at a time
     * (the driver's, handed to a scan's writer and back; the job, hashing,
     * delivery and hub threads each open their own). */
    rs_db_one_thread_per_connection();
    switch (rs_drive_run(pool, s)) {
    case APR_SUCCESS:
        break;
    case RS_DRIVE_RESTART:
        _exit(RS_WATCHER_RESTART); /* the store changed under it: logged */
    default:
        _exit(RS_WATCHER_FATAL); /* logged by the driver */
    }
    /* _exit: never run the parent's atexit handlers or pool cleanups. */
    _exit(0);
}

static apr_status_t fork_watcher(apr_pool_t *pconf, server_rec *s);

/* Parent: the delay before the next watcher starts working. */
static void throttle(void)
{
    if (rs_time_mono() - wd.last_fork < RS_QUICK_DEATH) {
        wd.quick_deaths++;
    }
    else {
        wd.quick_deaths = 0;
    }
    wd.start_delay = wd.quick_deaths
                         ? apr_time_from_sec(1 << (wd.quick_deaths > 6 ? 6 : wd.quick_deaths - 1))
                         : 0;
    if (wd.start_delay > RS_MAX_DELAY) {
        wd.start_delay = RS_MAX_DELAY;
    }
}

/* Parent: the watcher died while the server runs. */
static void watcher_died(int reason, apr_proc_t *proc, apr_wait_t status)
{
    int mpm_state = AP_MPMQ_STARTING;
    char delay[32] = "";

    if (ap_mpm_query(AP_MPMQ_MPM_STATE, &mpm_state) == APR_SUCCESS
        && mpm_state == AP_MPMQ_STOPPING) {
        return;
    }
    /* The MPMs pass the exit code, or the number of the signal that
     * ended the process (no signal has the number 78). */
    if (reason == APR_OC_REASON_DEATH && status == RS_WATCHER_FATAL) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, wd.s,
                     RS_TAG "watcher "
                            "(pid %d) could not start; not restarting it until the next "
                            "server restart",
                     (int)proc->pid);
        return;
    }
    throttle();
    if (wd.start_delay) {
        apr_snprintf(delay, sizeof(delay), " in %d s", (int)apr_time_sec(wd.start_delay));
    }
    if (reason == APR_OC_REASON_DEATH && status == RS_WATCHER_RESTART) {
        /* It found its state store deleted or replaced, and said so. */
        ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, wd.s,
                     RS_TAG "watcher (pid %d) ended "
                            "for a new state store; starting a new one%s",
                     (int)proc->pid, delay);
        fork_watcher(rs_global.pconf, wd.s);
        return;
    }
    ap_log_error(APLOG_MARK, APLOG_WARNING, 0, wd.s,
                 RS_TAG "watcher "
                        "(pid %d) died (exit status or signal %d); starting a new one%s",
                 (int)proc->pid, (int)status, delay);
    fork_watcher(rs_global.pconf, wd.s);
}

static void watcher_maint(int reason, void *data, apr_wait_t status)
{
    apr_proc_t *proc = data;

    switch (reason) {
    case APR_OC_REASON_DEATH:
    case APR_OC_REASON_LOST:
        apr_proc_other_child_unregister(data);
        watcher_died(reason, proc, status);
        break;
    case APR_OC_REASON_RESTART:
        apr_proc_other_child_unregister(data);
        kill(proc->pid, SIGTERM);
        break;
    case APR_OC_REASON_UNREGISTER:
        kill(proc->pid, SIGTERM);
        break;
    default:
        break;
    }
}

static apr_status_t fork_watcher(apr_pool_t *pconf, server_rec *s)
{
    apr_proc_t *proc = apr_pcalloc(pconf, sizeof(*proc));
    apr_status_t rv;

    wd.last_fork = rs_time_mono();
    rv = apr_proc_fork(proc, pconf);

    if (rv == APR_INCHILD) {
        apr_pool_t *wpool;
        apr_allocator_t *alloc;
        apr_thread_mutex_t *amutex;
        /* Own allocator: the watcher's memory is not tied to pconf's.
         * It has a mutex: threads of the watcher create and destroy
         * pools below the driver's at the same time as the driver (a
         * full scan's store writer runs each statement in a pool below
         * the store's while the walk makes and frees its own), and an
         * allocator without one corrupts its free lists and a parent's
         * list of children under that.  One pool is still one thread's
         * at a time. */
        apr_allocator_create(&alloc);
        apr_allocator_max_free_set(alloc, 4 * 1024 * 1024);
        apr_pool_create_ex(&wpool, NULL, NULL, alloc);
        apr_allocator_owner_set(alloc, wpool);
        if (apr_thread_mutex_create(&amutex, APR_THREAD_MUTEX_DEFAULT, wpool) != APR_SUCCESS) {
            ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s,
                         RS_TAG "watcher: cannot create "
                                "its memory allocator's mutex");
            _exit(RS_WATCHER_FATAL);
        }
        apr_allocator_mutex_set(alloc, amutex);
        watcher_main(wpool, s);
        _exit(0);
    }
    if (rv != APR_INPARENT) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, RS_TAG "cannot fork the watcher");
        return rv;
    }
    apr_pool_note_subprocess(pconf, proc, APR_KILL_AFTER_TIMEOUT);
    apr_proc_other_child_register(proc, watcher_maint, proc, NULL, pconf);
    return APR_SUCCESS;
}

int rs_watcher_start(apr_pool_t *pconf, server_rec *s)
{
    wd.s = s;
    if (!rs_global.sets->nelts) {
        return OK;
    }
    return fork_watcher(pconf, s) == APR_SUCCESS ? OK : !OK;
}
