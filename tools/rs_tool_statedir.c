/* SPDX-License-Identifier: Apache-2.0 */
/* rs_tool_statedir.c - see rs_tool_statedir.h */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include "rs_schema.h"
#include "rs_statedir.h"
#include "rs_tool_err.h"
#include "rs_tool_owner.h"
#include "rs_tool_statedir.h"

static const rs_storecfg_t *tool_store;

void rs_tool_store_use(const rs_storecfg_t *store)
{
    tool_store = store;
}

int rs_tool_check_statedir(apr_pool_t *p, const char *cmd, const char *statedir,
                           const char **dbpath)
{
    struct stat sb;
    int rc;
    if ((rc = rs_tool_as_owner(cmd, "state directory", statedir, 1)) != RS_TOOL_OK) {
        return rc;
    }
    if (stat(statedir, &sb) != 0) {
        return rs_tool_err(RS_TOOL_USAGE, "%s: state directory '%s': %s", cmd, statedir,
                           strerror(errno));
    }
    if (!S_ISDIR(sb.st_mode)) {
        return rs_tool_err(RS_TOOL_USAGE, "%s: state directory '%s' is not a directory", cmd,
                           statedir);
    }
    if (rs_storecfg_is_pgsql(tool_store)) {
        *dbpath = rs_storecfg_describe(tool_store, p, statedir);
        return RS_TOOL_OK;
    }
    *dbpath = rs_statedir_db(p, statedir);
    if (lstat(*dbpath, &sb) != 0) {
        return rs_tool_err(RS_TOOL_USAGE, "%s: no state store in '%s': %s: %s", cmd, statedir,
                           *dbpath, strerror(errno));
    }
    if (!S_ISREG(sb.st_mode)) {
        /* A FIFO would hang SQLite's open; a link is nobody's store. */
        return rs_tool_err(RS_TOOL_USAGE,
                           "%s: no state store in '%s': %s is not a regular "
                           "file",
                           cmd, statedir, *dbpath);
    }
    return RS_TOOL_OK;
}

int rs_tool_store_open(apr_pool_t *p, const char *cmd, const char *path, int mode, rs_db_t **out)
{
    const char *err = NULL;
    int v;

    const char *driver = RS_STATEDIR_DB_DRIVER, *dsn = path;

    if (rs_storecfg_is_pgsql(tool_store)) {
        driver = tool_store->driver;
        dsn = tool_store->dsn;
    }
    if (rs_schema_open_ex(out, p, driver, dsn, mode, NULL, &err) != APR_SUCCESS) {
        return rs_tool_err(RS_TOOL_FAIL, "%s: cannot open '%s': %s", cmd, path,
                           err ? err : "unknown error");
    }
    if ((v = rs_db_schema_version(*out)) > RS_SCHEMA_VERSION) {
        return rs_tool_err(RS_TOOL_FAIL,
                           "%s: '%s' has schema version %d, newer than "
                           "version %d that this rs-tool knows",
                           cmd, path, v, RS_SCHEMA_VERSION);
    }
    return RS_TOOL_OK;
}
