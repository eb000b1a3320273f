/* mod_resourcesync_verify.c - the verification pass of a set
 * (ResourceSyncVerifyInterval).
 *
 * inotify reports changes made through a watched directory entry only.
 * Some content changes without an event for the name that is listed:
 * writes through a hard link whose other name is outside the set (or in
 * another set), changes of the target of an in-tree symbolic link (the
 * event names the target, not the link), writes made through another
 * mount of the same file system or by another host (NFS), and events lost
 * to a full queue before the overflow was noticed.  The verification pass
 * catches them: every ResourceSyncVerifyInterval it stats every listed
 * file of the set (following a symbolic link, as the scan stores its
 * target's metadata) and hands the files whose size, mtime, ctime, device
 * or inode differ from the stored row, or that are gone, to an ordinary
 * targeted reconciliation: only those are re-hashed and journaled.
 *
 * Lifecycle: a pass starts when the set's next_verify (monotonic) is
 * reached and goes through the inventory in listing order, a slice of
 * VERIFY_SLICE rows at each wake-up of the event loop (which then comes
 * back within milliseconds instead of the heartbeat), so events are still
 * handled between slices and the loop is never blocked for long.  The
 * cursor is the (dir, name) of the last row looked at; rows written by the
 * reconciliations in between do not move it.  Runs on the driver's
 * thread, with the driver's connection, outside any transaction.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <apr_strings.h>
#include "mod_resourcesync_drive.h"
#include "rs_time.h"

#define VERIFY_SLICE 256

/* 1 if the file at path no longer is the version row describes. */
static int differs(const char *path, const rs_item_t *row)
{
    struct stat sb;

    if (stat(path, &sb) != 0) {
        return 1;          /* gone (or unreachable): the target says which */
    }
    return row->size != (apr_int64_t)sb.st_size
        || row->mtime_ns != (apr_int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec
        || row->ctime_ns != (apr_int64_t)sb.st_ctim.tv_sec * 1000000000 + sb.st_ctim.tv_nsec
        || row->dev != (apr_int64_t)sb.st_dev || row->ino != (apr_int64_t)sb.st_ino;
}

static void set_cursor(wset_t *ws, const char *dir, const char *name)
{
    free(ws->verify_dir);
    free(ws->verify_name);
    ws->verify_dir = dir ? strdup(dir) : NULL;
    ws->verify_name = name ? strdup(name) : NULL;
}

/* The pass is over: say what it found, and schedule the next one. */
static void pass_done(wset_t *ws, apr_time_t now)
{
    rs_log_emit(ws->log, ws->verify_differ ? RS_LOG_INFO : RS_LOG_DEBUG, 0,
                "set %s: verified %" APR_INT64_T_FMT " files; %" APR_INT64_T_FMT
                " had changed without a change notification and were reconciled",
                ws->set->name, ws->verify_seen, ws->verify_differ);
    ws->verifying = 0;
    ws->next_verify = now + rs_global.verify;
    set_cursor(ws, NULL, NULL);
}

int rs_verify_slice(wset_t *ws, apr_pool_t *p, apr_time_t now, rs_scan_target_t **out,
                    int *more)
{
    apr_array_header_t *rows, *targets;
    apr_status_t rv;
    int i;

    *more = 0;
    *out = NULL;
    if (!rs_global.verify || (!ws->verifying && now < ws->next_verify)) {
        return 0;
    }
    if (!ws->verifying) {
        ws->verifying = 1;
        ws->verify_seen = ws->verify_differ = 0;
        set_cursor(ws, NULL, NULL);
    }
    rv = rs_inventory_page(ws->d->store, p, ws->set->name, ws->verify_dir, ws->verify_name,
                           VERIFY_SLICE, &rows);
    if (rv != APR_SUCCESS) {
        rs_log_emit(ws->log, RS_LOG_ERR, rv, "set %s: cannot read its inventory for the "
                    "verification pass; next try in %d s", ws->set->name,
                    (int)apr_time_sec(rs_global.verify));
        pass_done(ws, now);
        return 0;
    }
    targets = apr_array_make(p, 4, sizeof(rs_scan_target_t));
    for (i = 0; i < rows->nelts; i++) {
        const rs_item_t *row = &APR_ARRAY_IDX(rows, i, rs_item_t);
        const char *path = *row->dir ? apr_pstrcat(p, ws->set->dir, "/", row->dir, "/",
                                                   row->name, NULL)
                                     : apr_pstrcat(p, ws->set->dir, "/", row->name, NULL);
        if (differs(path, row)) {
            rs_scan_target_t *t = apr_array_push(targets);
            apr_array_header_t *names = apr_array_make(p, 1, sizeof(const char *));
            APR_ARRAY_PUSH(names, const char *) = row->name;
            t->dir = row->dir;
            t->names = names;
        }
    }
    ws->verify_seen += rows->nelts;
    ws->verify_differ += targets->nelts;
    if (rows->nelts < VERIFY_SLICE) {
        pass_done(ws, now);
    }
    else {
        const rs_item_t *last = &APR_ARRAY_IDX(rows, rows->nelts - 1, rs_item_t);
        set_cursor(ws, last->dir, last->name);
        *more = 1;
    }
    *out = (rs_scan_target_t *)targets->elts;
    return targets->nelts;
}
