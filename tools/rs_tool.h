/* SPDX-License-Identifier: Apache-2.0 */
/* rs_tool.h - the commands of rs-tool that work on a state directory,
 * called by the dispatcher.
 *
 * rs-tool is the operator's command-line tool.  Its parts, none calling
 * back into one above it: rs_tool.c (dispatch, and the engine commands
 * scan/list/dump) calls the commands (rs_tool_state.c: status, backup;
 * rs_tool_forget.c: forget-set; rs_tool_verify.c: verify;
 * rs_tool_withdraw.c: withdraw), which reach the state through
 * rs_tool_statedir.c, which acts as the state directory's owner through
 * rs_tool_owner.c; all of them print errors and exit codes through
 * rs_tool_err.c.
 */
#ifndef RS_TOOL_H
#define RS_TOOL_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "rs_tool_err.h"

/* Subcommands: args are what follows the command name (options removed),
 * statedir the -d / --state-dir value or the default. */
int rs_tool_status(apr_pool_t *p, const char *statedir, const char *url);
int rs_tool_forget(apr_pool_t *p, const char *statedir, const char *set);
int rs_tool_backup(apr_pool_t *p, const char *statedir, const char *file);
int rs_tool_verify(apr_pool_t *p, const char *statedir, const char *set, const char *root,
                   const apr_array_header_t *excludes, int dotfiles);
/* rs_tool_withdraw.c: record the withdrawal of path from set and wait
 * (at most wait seconds) for the watcher to apply it, or remove the
 * packages when no watcher serves the set. */
int rs_tool_withdraw(apr_pool_t *p, const char *statedir, const char *set, const char *path,
                     int wait);

#endif
