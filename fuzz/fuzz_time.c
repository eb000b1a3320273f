/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_time.c - W3C Datetime parsing and formatting (rs_time).
 *
 * A datetime that rs_time_parse accepts is formatted by rs_time_format
 * and parsed again: within years 0000-9999 the value must come back
 * unchanged, and the formatted text must be the canonical form (parsing
 * and formatting it again gives the same text).  Outside that range the
 * formatter clamps, and the clamped text must still parse.  The first 8
 * input bytes, as microseconds, go through the same round trip.
 */
#include "fuzz.h"
#include "rs_time.h"

#define MIN_USEC (-62167219200LL * 1000000)          /* 0000-01-01T00:00:00Z */
#define MAX_USEC (253402300799LL * 1000000 + 999999) /* 9999-12-31T23:59:59.999999Z */

static void round_trip(apr_time_t t)
{
    char buf[RS_TIME_BUFSIZE], again[RS_TIME_BUFSIZE];
    apr_time_t t2 = 0, t3 = 0;

    rs_time_format(buf, t);
    FUZZ_CHECK(rs_time_parse(buf, &t2) == APR_SUCCESS, "'%s' does not parse", buf);
    if (t >= MIN_USEC && t <= MAX_USEC) {
        FUZZ_CHECK(t2 == t, "%" APR_INT64_T_FMT " came back as %" APR_INT64_T_FMT " via '%s'", t,
                   t2, buf);
    }
    rs_time_format(again, t2);
    FUZZ_CHECK(!strcmp(buf, again), "'%s' formats again as '%s'", buf, again);
    FUZZ_CHECK(rs_time_parse(again, &t3) == APR_SUCCESS && t3 == t2, "'%s'", again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_str(data, size, 1);
    apr_time_t t;

    if (rs_time_parse(s, &t) == APR_SUCCESS) {
        round_trip(t);
    }
    if (size >= 8) {
        memcpy(&t, data, 8);
        round_trip(t);
    }
    fuzz_done();
    return 0;
}
