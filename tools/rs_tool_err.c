/* SPDX-License-Identifier: Apache-2.0 */
/* rs_tool_err.c - see rs_tool_err.h */
#include <stdarg.h>
#include <stdio.h>
#include "rs_tool_err.h"

int rs_tool_err(int code, const char *fmt, ...)
{
    va_list ap;
    fputs("rs-tool: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}
