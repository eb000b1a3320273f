/* SPDX-License-Identifier: Apache-2.0 */
/* rs_log.c - see rs_log.h */
#include <stdarg.h>
#include <apr_strings.h>
#include "rs_log.h"

void rs_log_emit(const rs_logger_t *lg, int level, apr_status_t rv, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    if (!lg || !lg->fn) {
        return;
    }
    va_start(ap, fmt);
    apr_vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    lg->fn(lg->baton, level, rv, buf);
}
