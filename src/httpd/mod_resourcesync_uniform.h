/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_uniform.h - the declarations of mod_resourcesync_uniform.c. */
#ifndef MOD_RESOURCESYNC_UNIFORM_H
#define MOD_RESOURCESYNC_UNIFORM_H

#include "mod_resourcesync.h"

/* mod_resourcesync_uniform.c */
typedef struct rs_uniform_t rs_uniform_t;
/* post_config: can files of one directory of set (declared in server s)
 * differ in their access answer only by their key?  Sets set->uniform
 * (NULL: no, or per_file) and set->uniform_why (NULL, or why not). */
void rs_uniform_resolve(apr_pool_t *pconf, server_rec *s, rs_set_t *set, int per_file);
/* The key of the file filename (absolute) served at uri (unescaped, no
 * "//"): files of one directory with equal keys get the same answer.
 * Allocated from p. */
const char *rs_uniform_key(const rs_uniform_t *u, apr_pool_t *p, const char *filename,
                           const char *uri);
/* The same key from the file's name (base) alone, into buf of n bytes,
 * when the set's configuration has no section whose match depends on more
 * than the name's extensions: its length, or -1 when the full key is
 * needed (rs_uniform_key) or does not fit. */
int rs_uniform_name_key(const rs_uniform_t *u, const char *base, char *buf, apr_size_t n);
/* Which of the server's <Directory> sections apply to directory dir
 * (absolute, no trailing '/'), as a string: directories of the set with
 * equal signatures, and no access file at or above them, have the same
 * configuration, so a file key's answer in one holds in the others.
 * NULL when a section's path has wildcards (answers stay per directory).
 * Allocated from p. */
const char *rs_uniform_dir_sig(const rs_uniform_t *u, apr_pool_t *p, const char *dir);

#endif
