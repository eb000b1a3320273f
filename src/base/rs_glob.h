/* SPDX-License-Identifier: Apache-2.0 */
/* rs_glob.h - exclusion patterns (ResourceSyncExclude) and dotfile rules.
 *
 * A pattern without "/" matches the base name of a file or directory at any
 * depth ("*.tmp", "cache").  A pattern with a slash matches the path relative to
 * the set's root ("private/<star>", "/drafts": a leading slash anchors at the
 * root and is ignored otherwise).  "*" and "?" do not cross "/"; "**" is
 * not special.  An excluded directory excludes everything beneath it.
 */
#ifndef RS_GLOB_H
#define RS_GLOB_H

#include <apr_pools.h>
#include <apr_tables.h>

/* Check a pattern's syntax; returns NULL or an error message. */
const char *rs_glob_check(apr_pool_t *p, const char *pattern);

/* 1 if relpath (no leading "/") or its base name matches any pattern. */
int rs_glob_match(const apr_array_header_t *patterns, const char *relpath);

/* 1 if a name is never listed: ".ht*" always, other names starting with
 * "." unless dotfiles is non-zero. */
int rs_glob_hidden(const char *basename, int dotfiles);

#endif
