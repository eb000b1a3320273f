/* SPDX-License-Identifier: Apache-2.0 */
/* rs_log.h - logging callback used by the engine.
 *
 * The engine (src/rs_*.c) never includes httpd.h.  It reports through an
 * rs_logger_t supplied by its caller: the httpd glue forwards to
 * ap_log_error(), the unit tests collect messages.  Messages are formatted
 * into a stack buffer, so logging never allocates from a long-lived pool.
 */
#ifndef RS_LOG_H
#define RS_LOG_H

#include <apr.h>
#include <apr_errno.h>

/* Levels mirror syslog/httpd (APLOG_ERR == 3 ... APLOG_DEBUG == 7). */
#define RS_LOG_EMERG  0
#define RS_LOG_ERR    3
#define RS_LOG_WARN   4
#define RS_LOG_NOTICE 5
#define RS_LOG_INFO   6
#define RS_LOG_DEBUG  7

typedef void rs_log_fn(void *baton, int level, apr_status_t rv, const char *msg);

typedef struct rs_logger_t {
    rs_log_fn *fn; /* NULL: messages are dropped */
    void *baton;
} rs_logger_t;

/* Format and emit one message; a NULL logger or callback drops it. */
void rs_log_emit(const rs_logger_t *lg, int level, apr_status_t rv, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
