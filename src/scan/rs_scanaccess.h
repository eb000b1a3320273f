/* SPDX-License-Identifier: Apache-2.0 */
/* rs_scanaccess.h - the rows of a directory's access files in a scan
 * (see rs_scanaccess.c). */
#ifndef RS_SCANACCESS_H
#define RS_SCANACCESS_H

#include <apr_hash.h>
#include <apr_pools.h>
#include "rs_scanctx.h"

/* 1 if name is one of the set's access file names (opts->access_files). */
int rs_scan_is_access_name(const rs_scan_opts_t *o, const char *name);

/* Compare the access files of directory dir (open as dfd) with their
 * rows in rows (the directory's stored rows, name -> rs_item_t): writes
 * the row of each access file that is new or changed, and takes the rows
 * of those present out of rows (what stays there is dropped as gone).
 * Returns 1 if any access file appeared, changed or vanished (see
 * rs_scanaccess.c). */
int rs_scan_access_changed(rs_scan_ctx_t *sc, apr_pool_t *p, int dfd, const char *dir,
                           apr_hash_t *rows);

/* A directory that is not served (entry name of the directory open as
 * dfd, relpath from the root): when the set has access files, hand it to
 * on_dir all the same, without reading it, so that the watcher hears of a
 * change of its own access file (which may serve it again). */
void rs_scan_access_watch(rs_scan_ctx_t *sc, int dfd, const char *name, const char *relpath);

#endif
