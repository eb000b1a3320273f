/* SPDX-License-Identifier: Apache-2.0 */
/* rs_tool_owner.h - who rs-tool acts as inside a state directory (see
 * rs_tool_owner.c). */
#ifndef RS_TOOL_OWNER_H
#define RS_TOOL_OWNER_H

/* Run as root, become the owner of dir for good (rs_tool_owner.c) before
 * anything inside it is touched; any other user stays who it is.  what
 * names dir in messages ("state directory").  whole: dir is a state
 * directory, all of it the module's (one of root must then hold nothing
 * of another user).  Returns RS_TOOL_OK or the error printed: exit 2 for
 * a dir that is not a directory (a symbolic link included), 1 for a
 * failed switch or (whole) a directory of root holding another user's
 * entries. */
int rs_tool_as_owner(const char *cmd, const char *what, const char *dir, int whole);

#endif
