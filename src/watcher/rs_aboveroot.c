/* SPDX-License-Identifier: Apache-2.0 */
/* rs_aboveroot.c - see rs_aboveroot.h */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <apr_strings.h>
#include "rs_above.h"
#include "rs_aboveroot.h"

/* Replace *slot (malloc'd or NULL) by a copy of text (NULL: none). */
static void keep(char **slot, const char *text)
{
    free(*slot);
    *slot = text ? strdup(text) : NULL;
}

static apr_status_t free_states(void *data)
{
    rs_aboveroot_t *ab = data;
    keep(&ab->state, NULL);
    keep(&ab->next, NULL);
    return APR_SUCCESS;
}

/* Watch every directory above the root (when the set has an inotify
 * instance).  Out of watches (ENOSPC, ENOMEM), the set is degraded like
 * when a directory of its tree cannot be watched; a directory that cannot
 * be watched for a reason of its own (EACCES: the run user cannot read
 * it) is logged (once per watcher life and directory: the caller's
 * log), and found at the ticks; one that is not there (then neither is
 * the root: the set is unavailable, which says so itself) is not logged. */
static void watch_dirs(rs_aboveroot_t *ab, rs_watch_t *w)
{
    int i;

    for (i = 0; w && i < ab->dirs->nelts; i++) {
        const char *dir = APR_ARRAY_IDX(ab->dirs, i, const char *);
        int err = rs_watch_above(w, dir, ab->names);
        if (err == ENOSPC || err == ENOMEM) {
            ab->h->watch_failed(ab->h->baton, dir, err);
        }
        else if (err && err != ENOENT) {
            rs_log_emit(ab->log, RS_LOG_WARN, err,
                        "set %s: cannot watch directory %s "
                        "above its root for changes of its access files; they are "
                        "compared every %d s (ResourceSyncRescanInterval) instead",
                        ab->name, dir, ab->rescan);
        }
    }
}

void rs_aboveroot_init(rs_aboveroot_t *ab, apr_pool_t *pool, const rs_aboveroot_hooks_t *h,
                       const char *name, const char *root, const apr_array_header_t *dirs,
                       int complete, const apr_array_header_t *names, int rescan,
                       const rs_logger_t *log, rs_db_t *store, apr_pool_t *p)
{
    const char *stored = NULL;
    apr_status_t rv;

    memset(ab, 0, sizeof(*ab));
    ab->h = h;
    ab->name = name;
    ab->dirs = dirs;
    ab->names = names;
    ab->rescan = rescan;
    ab->log = log;
    apr_pool_cleanup_register(pool, ab, free_states, apr_pool_cleanup_null);
    if (!complete) {
        rs_log_emit(log, RS_LOG_INFO, 0,
                    "set %s: httpd's directory walk does not "
                    "reach its root %s; following the access files of every directory "
                    "above it",
                    name, root);
    }
    rs_log_emit(log, RS_LOG_INFO, 0,
                "set %s: access files above its root followed in "
                "%d director%s%s%s",
                name, dirs->nelts, dirs->nelts == 1 ? "y" : "ies", dirs->nelts ? ": " : "",
                apr_array_pstrcat(p, dirs, ' '));
    if ((rv = rs_above_load(store, p, name, &stored)) != APR_SUCCESS) {
        /* Taken as never stored: the startup scan decides everything. */
        rs_log_emit(log, RS_LOG_DEBUG, rv,
                    "set %s: cannot read the state of the access "
                    "files above its root",
                    name);
    }
    keep(&ab->state, stored);
}

int rs_aboveroot_begin(rs_aboveroot_t *ab, rs_watch_t *w, apr_pool_t *p)
{
    const char *now, *path;

    watch_dirs(ab, w);
    now = rs_above_state(p, ab->dirs, ab->names);
    keep(&ab->next, now);
    if (!(path = rs_above_diff(p, ab->state, now))) {
        return 0;
    }
    if (ab->state) {
        rs_log_emit(ab->log, RS_LOG_NOTICE, 0,
                    "set %s: access file %s above its root "
                    "changed; deciding every file of the set again",
                    ab->name, path);
    }
    ab->h->forget(ab->h->baton);
    return 1;
}

void rs_aboveroot_end(rs_aboveroot_t *ab, rs_db_t *store, apr_pool_t *p)
{
    apr_status_t rv;

    if (!ab->next || !rs_above_diff(p, ab->state, ab->next)) {
        return;
    }
    if ((rv = rs_above_save(store, p, ab->name, ab->next)) != APR_SUCCESS) {
        /* The next watcher decides everything again: wasted work, never
         * a stale answer. */
        rs_log_emit(ab->log, RS_LOG_DEBUG, rv,
                    "set %s: cannot store the state of the access "
                    "files above its root",
                    ab->name);
    }
    keep(&ab->state, ab->next);
}

int rs_aboveroot_changed(rs_aboveroot_t *ab, rs_watch_t *w, apr_pool_t *p)
{
    watch_dirs(ab, w);
    return rs_above_diff(p, ab->state, rs_above_state(p, ab->dirs, ab->names)) != NULL;
}
