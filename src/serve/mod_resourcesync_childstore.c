/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_childstore.c - a child's read connection to the
 * store: the open Change List's records that have left the ring
 * (mod_resourcesync_openlist.c), and, where another node writes a set,
 * whether the store holds a dump file this node has not copied yet
 * (mod_resourcesync_dumpserve.c). */
#include <string.h>
#include <apr_strings.h>
#include <apr_thread_mutex.h>
#include <httpd.h>
#include <http_log.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_childstore.h"
#include "rs_blob.h"
#include "rs_history.h"
#include "rs_journal.h"
#include "rs_storecfg.h"

/* A child's read connection to the store, for open-list ranges that have
 * left the ring.  Opened on first use, shared by the child's threads
 * under a mutex, dropped after an error so the next request opens it
 * again.  The connection only reads: the watcher is the only writer, and
 * SQLite's WAL lets readers run beside it.  A connection keeps reading the
 * file it opened, also after the store was deleted or replaced (a new
 * history): before each read it checks that the store's history is the
 * one of the list being served, and opens the store again if not. */
static apr_thread_mutex_t *child_lock;
static apr_pool_t *child_pool;
static apr_pool_t *child_store_pool;
static rs_db_t *child_store;
static rs_journal_t *child_journal;
static int child_failed_logged;

void rs_childstore_init(apr_pool_t *p)
{
    child_pool = p;
    apr_thread_mutex_create(&child_lock, APR_THREAD_MUTEX_DEFAULT, p);
}

static void child_log(void *baton, int level, apr_status_t rv, const char *msg)
{
    /* The store's own messages: at debug, the caller logs the failure. */
    ap_log_error(APLOG_MARK, APLOG_DEBUG, rv, (server_rec *)baton, RS_TAG "%s", msg);
    (void)level;
}


static void child_drop(void)
{
    child_store = NULL;
    apr_pool_destroy(child_store_pool);
}

/* Under child_lock: make child_store a connection to the store of
 * history (opened, or opened again when the one held is of another). */
static apr_status_t child_connect(server_rec *srv, apr_pool_t *p, const char *history)
{
    static rs_logger_t log;
    apr_status_t rv;
    int tries;

    for (tries = 0; tries < 2; tries++) {
        const char *h = NULL;
        if (!child_store) {
            log.fn = child_log;
            log.baton = srv;
            apr_pool_create(&child_store_pool, child_pool);
            rv = rs_storecfg_open(&child_store, child_store_pool, &rs_global.store,
                                  rs_global.state_dir, &log);
            if (rv == APR_SUCCESS) {
                rv = rs_journal_open(&child_journal, child_store, child_store_pool);
            }
            if (rv != APR_SUCCESS) {
                child_drop();
                return rv;
            }
        }
        if ((rv = rs_db_meta_get(child_store, p, RS_HISTORY_META, &h)) != APR_SUCCESS) {
            child_drop();
            return rv;
        }
        if (h && !strcmp(h, history)) {
            return APR_SUCCESS;
        }
        child_drop();
    }
    return APR_ENOENT; /* the store holds another history than the list */
}

apr_status_t rs_childstore_records(request_rec *r, apr_pool_t *p, const char *history,
                                   const char *set, apr_int64_t next, apr_int64_t last, int limit,
                                   apr_array_header_t **more)
{
    apr_status_t rv;

    if (child_lock) {
        apr_thread_mutex_lock(child_lock);
    }
    rv = child_connect(r->server, p, history);
    if (rv == APR_SUCCESS
        && (rv = rs_journal_records(child_journal, p, set, next, last, limit, more))
               != APR_SUCCESS) {
        child_drop();
    }
    if (child_lock) {
        apr_thread_mutex_unlock(child_lock);
    }
    if (rv != APR_SUCCESS) {
        if (!child_failed_logged++) {
            ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r,
                          RS_TAG "cannot read the journal "
                                 "in the state store of ResourceSyncStateDir '%s'",
                          rs_global.state_dir);
        }
        return rv;
    }
    child_failed_logged = 0;
    return APR_SUCCESS;
}

apr_status_t rs_childstore_stored(request_rec *r, const char *history, const char *set,
                                  const char *kind, const char *name, int *found)
{
    apr_status_t rv;

    *found = 0;
    if (child_lock) {
        apr_thread_mutex_lock(child_lock);
    }
    rv = child_connect(r->server, r->pool, history);
    if (rv == APR_SUCCESS
        && (rv = rs_blob_named(child_store, set, kind, name, found)) != APR_SUCCESS) {
        child_drop();
    }
    if (child_lock) {
        apr_thread_mutex_unlock(child_lock);
    }
    return rv;
}
