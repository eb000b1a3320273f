/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_access.h - the declarations of mod_resourcesync_access.c. */
#ifndef MOD_RESOURCESYNC_ACCESS_H
#define MOD_RESOURCESYNC_ACCESS_H

#include "mod_resourcesync.h"
#include "mod_resourcesync_uniform.h"
#include "rs_scanopts.h"

/* mod_resourcesync_access.c */
typedef struct rs_access_t rs_access_t;
rs_access_t *rs_access_create(apr_pool_t *p, const rs_set_t *set);
/* The scanner's check callback (rs_scan_check_fn; flags RS_SCAN_CHECK_*).
 * With the set's analysis (rs_set_t.uniform), regular files of a
 * directory without access files in it or above it are answered from a
 * cache of the directory's earlier answers by key (rs_uniform_key); the
 * cache lives as long as the pool p of the first file it holds. */
int rs_access_check(void *baton, apr_pool_t *p, const char *relpath, int flags,
                    rs_scan_media_t *media);
int rs_access_post_perdir(request_rec *r);
int rs_access_map_to_storage(request_rec *r);
/* Whether r is one of the watcher's internal access-check requests (or a
 * sub-request of one). */
int rs_access_internal(const request_rec *r);
/* NULL if the set's URL-path maps to its directory, else why not. */
const char *rs_access_verify_root(rs_access_t *a, apr_pool_t *p);
/* The access file names (AccessFileName, e.g. ".htaccess") of the
 * checker's set's server, as an array of char*: what the scans follow
 * (rs_scan_opts_t.access_files).  Lives as long as the checker. */
const apr_array_header_t *rs_access_files(const rs_access_t *a);
/* The directories above the checker's set's root (absolute, no trailing
 * '/', from "/" down) whose access files httpd reads, as its directory
 * walk of the root tells (the open_htaccess hook below); *complete is 0
 * when that walk did not reach the root, and then every directory above
 * it is returned.  From p. */
apr_array_header_t *rs_access_above(rs_access_t *a, apr_pool_t *p, int *complete);
/* open_htaccess hook (declining): notes the directories rs_access_above's
 * walk tries access files in. */
apr_status_t rs_access_open_htaccess(request_rec *r, const char *dir_name, const char *access_name,
                                     ap_configfile_t **conffile, const char **full_name);
/* Drop the answers the checker shares between directories (an access
 * file above the set's root changed). */
void rs_access_forget(rs_access_t *a);

#endif
