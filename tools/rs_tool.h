/* rs_tool.h - what the parts of rs-tool share.
 *
 * rs-tool is the operator's command-line tool (rs_tool.c: dispatch, the
 * engine commands scan/list/dump; rs_tool_state.c: status, forget-set,
 * backup; rs_tool_verify.c: verify; rs_tool_owner.c: run as root, it acts
 * as the owner of the state directory).  Exit codes: 0 success, 1 a result
 * the operator must act on (differences found, a set in use, a failed
 * operation), 2 misuse (unknown command, missing or wrong argument, a
 * state directory or set that does not exist).
 */
#ifndef RS_TOOL_H
#define RS_TOOL_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "rs_db.h"

#ifndef RS_VERSION
#define RS_VERSION "unknown"
#endif

/* The state directory of the packaged configuration
 * (/etc/apache2/mods-available/resourcesync.conf). */
#define RS_TOOL_STATEDIR "/var/lib/apache2/resourcesync"

/* The longest set name (the module's RS_SET_NAME_MAX). */
#define RS_TOOL_SET_NAME_MAX 64

#define RS_TOOL_OK 0
#define RS_TOOL_FAIL 1
#define RS_TOOL_USAGE 2

/* Print "rs-tool: " and the message to stderr; return code. */
int rs_tool_err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Run as root, become the owner of dir for good (rs_tool_owner.c) before
 * anything inside it is touched; any other user stays who it is.  what
 * names dir in messages ("state directory").  whole: dir is a state
 * directory, all of it the module's (one of root must then hold nothing
 * of another user).  Returns RS_TOOL_OK or the error printed: exit 2 for
 * a dir that is not a directory (a symbolic link included), 1 for a
 * failed switch or (whole) a directory of root holding another user's
 * entries. */
int rs_tool_as_owner(const char *cmd, const char *what, const char *dir, int whole);

/* The state directory argument checked: an existing directory with a
 * state.db in it; run as root, the tool is its owner from then on
 * (rs_tool_as_owner).  Returns RS_TOOL_OK or the error printed (exit 2). */
int rs_tool_check_statedir(apr_pool_t *p, const char *cmd, const char *statedir,
                           const char **dbpath);

/* Open the state store at path through the engine (rs_schema_open_ex)
 * without migrating it (the module does, at its start): mode
 * RS_DB_READONLY (nothing written; it reads while the watcher writes) or
 * RS_DB_AS_IS (rows written, schema and settings left as they are); a
 * lock of another connection is waited for (the busy timeout).  Refuses
 * a store of a newer schema than this tool knows.  The connection lives
 * as long as pool p: the command destroys p to close it, also after an
 * error.  Returns RS_TOOL_OK or the error printed. */
int rs_tool_store_open(apr_pool_t *p, const char *cmd, const char *path, int mode,
                       rs_db_t **out);

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
