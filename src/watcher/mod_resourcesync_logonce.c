/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_logonce.c - the watcher's once-only log.
 *
 * Warnings and errors of the engine are logged once per watcher lifetime:
 * a rescan meets the same unreadable directory or missing root every
 * time, and the error log must not repeat it every interval.  Repeats go
 * to the debug level.  The set of messages seen is bounded (forgotten as
 * a whole past RS_LOGONCE_MEMORY entries) and lives in a subpool of the
 * watcher's pool, made by rs_logonce_init; before that, every message is
 * logged as it comes.  Only the driver's thread uses it (the job thread
 * logs through rs_jobs_logger).
 */
#include <apr_hash.h>
#include <apr_strings.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_jobs.h"
#include "mod_resourcesync_logonce.h"
#include "mod_resourcesync_status.h"

#define RS_LOGONCE_MEMORY 10000

static apr_pool_t *seen_pool;
static apr_hash_t *seen;

void rs_logonce_init(apr_pool_t *pool)
{
    apr_pool_create(&seen_pool, pool);
    seen = apr_hash_make(seen_pool);
}

void rs_logonce_forget(void)
{
    if (seen) {
        apr_pool_clear(seen_pool);
        seen = apr_hash_make(seen_pool);
    }
}

/* The message with its cause, as the error log shows it. */
void rs_logonce_note(apr_status_t rv, const char *msg)
{
    char cause[120], line[RS_STATUS_ERR_MAX];

    if (rv) {
        apr_snprintf(line, sizeof(line), "%s: %s", msg, apr_strerror(rv, cause, sizeof(cause)));
        rs_status_error_put(line);
    }
    else {
        rs_status_error_put(msg);
    }
}

void rs_logonce_log(void *baton, int level, apr_status_t rv, const char *msg)
{
    if (level <= RS_LOG_WARN) {
        /* The status page's last error: repeats too (it is the newest). */
        rs_logonce_note(rv, msg);
    }
    if (level <= RS_LOG_WARN && seen) {
        if (apr_hash_get(seen, msg, APR_HASH_KEY_STRING)) {
            level = RS_LOG_DEBUG;
        }
        else {
            if (apr_hash_count(seen) >= RS_LOGONCE_MEMORY) {
                rs_logonce_forget();
            }
            apr_hash_set(seen, apr_pstrdup(seen_pool, msg), APR_HASH_KEY_STRING, "");
        }
    }
    ap_log_error(APLOG_MARK, level, rv, (server_rec *)baton, RS_TAG "%s", msg);
}
