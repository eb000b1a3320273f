/* SPDX-License-Identifier: Apache-2.0 */
/* rs_verifypass.c - the verification pass of a set (see rs_verifypass.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <apr_strings.h>
#include "rs_inventory.h"
#include "rs_verifypass.h"

/* 1 if the file at path no longer is the version row describes. */
static int differs(const char *path, const rs_item_t *row)
{
    struct stat sb;

    if (stat(path, &sb) != 0) {
        return 1; /* gone (or unreachable): the target says which */
    }
    return row->size != (apr_int64_t)sb.st_size
           || row->mtime_ns != (apr_int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec
           || row->ctime_ns != (apr_int64_t)sb.st_ctim.tv_sec * 1000000000 + sb.st_ctim.tv_nsec
           || row->dev != (apr_int64_t)sb.st_dev || row->ino != (apr_int64_t)sb.st_ino;
}

/* Move the cursor to (dir, name) (NULLs: back to the first row).  The
 * only place the cursor's strings are freed. */
static void set_cursor(rs_verifypass_t *vp, const char *dir, const char *name)
{
    free(vp->dir);
    free(vp->name);
    vp->dir = dir ? strdup(dir) : NULL;
    vp->name = name ? strdup(name) : NULL;
}

static apr_status_t cursor_cleanup(void *data)
{
    set_cursor(data, NULL, NULL);
    return APR_SUCCESS;
}

void rs_verifypass_init(rs_verifypass_t *vp, apr_pool_t *pool, apr_interval_time_t interval,
                        apr_time_t now)
{
    memset(vp, 0, sizeof(*vp));
    vp->interval = interval;
    vp->next = now + interval;
    apr_pool_cleanup_register(pool, vp, cursor_cleanup, apr_pool_cleanup_null);
}

/* The pass is over: say what it found, and schedule the next one. */
static void pass_done(rs_verifypass_t *vp, const char *set, const rs_logger_t *log, apr_time_t now)
{
    rs_log_emit(log, vp->differ ? RS_LOG_INFO : RS_LOG_DEBUG, 0,
                "set %s: verified %" APR_INT64_T_FMT " files; %" APR_INT64_T_FMT
                " had changed without a change notification and were reconciled",
                set, vp->seen, vp->differ);
    vp->active = 0;
    vp->next = now + vp->interval;
    set_cursor(vp, NULL, NULL);
}

int rs_verifypass_slice(rs_verifypass_t *vp, rs_db_t *db, apr_pool_t *p, const char *set,
                        const char *root, const rs_logger_t *log, apr_time_t now,
                        rs_scan_target_t **out, int *more)
{
    apr_array_header_t *rows, *targets;
    apr_status_t rv;
    int i;

    *more = 0;
    *out = NULL;
    if (!vp->interval || (!vp->active && now < vp->next)) {
        return 0;
    }
    if (!vp->active) {
        vp->active = 1;
        vp->seen = vp->differ = 0;
        set_cursor(vp, NULL, NULL);
    }
    rv = rs_inventory_page(db, p, set, vp->dir, vp->name, RS_VERIFYPASS_SLICE, &rows);
    if (rv != APR_SUCCESS) {
        rs_log_emit(log, RS_LOG_ERR, rv,
                    "set %s: cannot read its inventory for the "
                    "verification pass; next try in %d s",
                    set, (int)apr_time_sec(vp->interval));
        pass_done(vp, set, log, now);
        return 0;
    }
    targets = apr_array_make(p, 4, sizeof(rs_scan_target_t));
    for (i = 0; i < rows->nelts; i++) {
        const rs_item_t *row = &APR_ARRAY_IDX(rows, i, rs_item_t);
        const char *path = *row->dir ? apr_pstrcat(p, root, "/", row->dir, "/", row->name, NULL)
                                     : apr_pstrcat(p, root, "/", row->name, NULL);
        if (differs(path, row)) {
            rs_scan_target_t *t = apr_array_push(targets);
            apr_array_header_t *names = apr_array_make(p, 1, sizeof(const char *));
            APR_ARRAY_PUSH(names, const char *) = row->name;
            t->dir = row->dir;
            t->names = names;
        }
    }
    vp->seen += rows->nelts;
    vp->differ += targets->nelts;
    if (rows->nelts < RS_VERIFYPASS_SLICE) {
        pass_done(vp, set, log, now);
    }
    else {
        const rs_item_t *last = &APR_ARRAY_IDX(rows, rows->nelts - 1, rs_item_t);
        set_cursor(vp, last->dir, last->name);
        *more = 1;
    }
    *out = (rs_scan_target_t *)targets->elts;
    return targets->nelts;
}

apr_time_t rs_verifypass_wake(const rs_verifypass_t *vp, apr_time_t now)
{
    return vp->active ? now + RS_VERIFYPASS_PAUSE : 0;
}
