/* SPDX-License-Identifier: Apache-2.0 */
/* rs_time.h - W3C Datetime (ISO 8601 profile) formatting in UTC.
 *
 * ResourceSync documents carry `at`, `completed`, `from`, `until`,
 * `datetime` and `<lastmod>` as W3C Datetimes; we always emit the complete
 * form YYYY-MM-DDThh:mm:ss[.f]Z recommended by the specification.
 */
#ifndef RS_TIME_H
#define RS_TIME_H

#include <apr.h>
#include <apr_time.h>

/* Large enough for "YYYY-MM-DDThh:mm:ss.nnnnnnZ" and a NUL (with room). */
#define RS_TIME_BUFSIZE 40

/* Format a time given in nanoseconds since the epoch.  The fraction has
 * at most six digits (microseconds): the time is truncated (floor, also
 * before 1970) to the microsecond, so two times that differ only below a
 * microsecond format alike; callers that must tell them apart compare
 * the nanoseconds, never the strings.  The fraction is omitted when zero
 * and otherwise trimmed of trailing zeros.  Years have
 * four digits; times outside 0000-01-01T00:00:00Z .. 9999-12-31T23:59:59Z
 * are clamped to that range.  Returns buf. */
char *rs_time_format_ns(char *buf, apr_int64_t ns);

/* Same for an apr_time_t (microseconds since the epoch). */
char *rs_time_format(char *buf, apr_time_t t);

/* Parse "YYYY-MM-DDThh:mm:ss[.f](Z|+hh:mm|-hh:mm)" into microseconds since
 * the epoch (digits below a microsecond are dropped).  Dates that do not
 * exist (2023-02-29) and offsets beyond 23:59 are malformed.  Returns
 * APR_SUCCESS or APR_EINVAL. */
apr_status_t rs_time_parse(const char *s, apr_time_t *out);

/* Microseconds on the monotonic clock (CLOCK_MONOTONIC; its origin means
 * nothing).  For deadlines and durations: a step of the wall clock, which
 * apr_time_now() follows, does not move it. */
apr_time_t rs_time_mono(void);

#endif
