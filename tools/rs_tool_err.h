/* SPDX-License-Identifier: Apache-2.0 */
/* rs_tool_err.h - rs-tool's exit codes and error messages, shared by
 * every part of the tool.
 *
 * Exit codes: 0 success, 1 a result the operator must act on (differences
 * found, a set in use, a failed operation), 2 misuse (unknown command,
 * missing or wrong argument, a state directory or set that does not
 * exist).
 */
#ifndef RS_TOOL_ERR_H
#define RS_TOOL_ERR_H

#ifndef RS_VERSION
#define RS_VERSION "unknown"
#endif

/* The state directory of the packaged configuration
 * (/etc/apache2/mods-available/resourcesync.conf). */
#define RS_TOOL_STATEDIR "/var/lib/apache2/resourcesync"

/* The longest set name (the module's RS_SET_NAME_MAX). */
#define RS_TOOL_SET_NAME_MAX 64

#define RS_TOOL_OK    0
#define RS_TOOL_FAIL  1
#define RS_TOOL_USAGE 2

/* Print "rs-tool: " and the message to stderr; return code. */
int rs_tool_err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
