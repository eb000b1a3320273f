/* SPDX-License-Identifier: Apache-2.0 */
/* rs_tool_statedir.h - how every command of rs-tool reaches the state:
 * the state directory argument checked (as its owner), the store opened
 * through the engine. */
#ifndef RS_TOOL_STATEDIR_H
#define RS_TOOL_STATEDIR_H

#include <apr_pools.h>
#include "rs_db.h"
#include "rs_storecfg.h"

/* The store the commands below open (--store; kept, it must live as long
 * as the command).  Not called: SQLite in the state directory. */
void rs_tool_store_use(const rs_storecfg_t *store);

/* The state directory argument checked: an existing directory with a
 * state.db in it (unless the store is PostgreSQL: then *dbpath is the
 * store's name for messages, without its password); run as root, the
 * tool is its owner from then on (rs_tool_as_owner).  Returns RS_TOOL_OK
 * or the error printed (exit 2). */
int rs_tool_check_statedir(apr_pool_t *p, const char *cmd, const char *statedir,
                           const char **dbpath);

/* Open the state store at path (a PostgreSQL store: the one
 * rs_tool_store_use named, path only naming it) through the engine
 * (rs_schema_open_ex)
 * without migrating it (the module does, at its start): mode
 * RS_DB_READONLY (nothing written; it reads while the watcher writes) or
 * RS_DB_AS_IS (rows written, schema and settings left as they are); a
 * lock of another connection is waited for (the busy timeout).  Refuses
 * a store of a newer schema than this tool knows.  The connection lives
 * as long as pool p: the command destroys p to close it, also after an
 * error.  Returns RS_TOOL_OK or the error printed. */
int rs_tool_store_open(apr_pool_t *p, const char *cmd, const char *path, int mode, rs_db_t **out);

#endif
