/* SPDX-License-Identifier: Apache-2.0 */
/* rs_time.c - see rs_time.h */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <apr_lib.h>
#include "rs_time.h"

/* Days from 1970-01-01 to the given civil date (proleptic Gregorian). */
static apr_int64_t days_from_civil(apr_int64_t y, unsigned m, unsigned d)
{
    apr_int64_t era;
    unsigned yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = (unsigned)(y - era * 400);
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (apr_int64_t)doe - 719468;
}

/* Civil date of a day number counted from 1970-01-01 (inverse of
 * days_from_civil). */
static void civil_from_days(apr_int64_t z, apr_int64_t *y, unsigned *m, unsigned *d)
{
    apr_int64_t era;
    unsigned doe, yoe, doy, mp;

    z += 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = (unsigned)(z - era * 146097);
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (apr_int64_t)yoe + era * 400 + (*m <= 2);
}

/* Seconds of 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the range of
 * four-digit years. */
#define MIN_SECS (-62167219200LL)
#define MAX_SECS 253402300799LL

/* v in exactly width decimal digits (v < 10^width). */
static int put_digits(char *buf, unsigned v, int width)
{
    int i;
    for (i = width - 1; i >= 0; i--) {
        buf[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return width;
}

/* Format secs (since the epoch) plus frac nanoseconds (0 .. 10^9-1, a
 * whole number of microseconds: at most six digits are written). */
static char *format(char *buf, apr_int64_t secs, apr_int64_t frac)
{
    apr_int64_t days, sod, y;
    unsigned m, d;
    int n;

    if (secs < MIN_SECS) {
        secs = MIN_SECS;
        frac = 0;
    }
    else if (secs > MAX_SECS) {
        secs = MAX_SECS;
        frac = 0;
    }
    days = (secs >= 0 ? secs : secs - 86399) / 86400;
    sod = secs - days * 86400;
    civil_from_days(days, &y, &m, &d);
    /* "%04d-%02u-%02uT%02d:%02d:%02d" by hand (every list entry has one:
     * snprintf was a tenth of writing a list); y is 0 .. 9999. */
    n = put_digits(buf, (unsigned)y, 4);
    buf[n++] = '-';
    n += put_digits(buf + n, m, 2);
    buf[n++] = '-';
    n += put_digits(buf + n, d, 2);
    buf[n++] = 'T';
    n += put_digits(buf + n, (unsigned)(sod / 3600), 2);
    buf[n++] = ':';
    n += put_digits(buf + n, (unsigned)(sod / 60 % 60), 2);
    buf[n++] = ':';
    n += put_digits(buf + n, (unsigned)(sod % 60), 2);
    if (frac) {
        char f[8];
        int len = 6;
        put_digits(f, (unsigned)(frac / 1000), 6);
        while (len > 1 && f[len - 1] == '0') {
            len--;
        }
        buf[n++] = '.';
        memcpy(buf + n, f, (size_t)len);
        n += len;
    }
    buf[n++] = 'Z';
    buf[n] = '\0';
    return buf;
}

char *rs_time_format_ns(char *buf, apr_int64_t ns)
{
    apr_int64_t secs = ns / 1000000000, frac = ns % 1000000000;

    if (frac < 0) {
        frac += 1000000000;
        secs -= 1;
    }
    /* Documents carry at most six fractional digits (parsers built on
     * strptime's %f take no more): the time is truncated to the
     * microsecond below it, never rounded up into a later one. */
    return format(buf, secs, frac - frac % 1000);
}

char *rs_time_format(char *buf, apr_time_t t)
{
    /* Not through nanoseconds: t * 1000 would overflow beyond 1677..2262. */
    apr_int64_t secs = t / APR_USEC_PER_SEC, frac = t % APR_USEC_PER_SEC;

    if (frac < 0) {
        frac += APR_USEC_PER_SEC;
        secs -= 1;
    }
    return format(buf, secs, frac * 1000);
}

static int days_in_month(int y, int m)
{
    static const unsigned char dm[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    if (m == 2 && y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) {
        return 29;
    }
    return dm[m - 1];
}

static int digits(const char **s, int n, int *out)
{
    int v = 0;
    while (n--) {
        if (!apr_isdigit(**s)) {
            return 0;
        }
        v = v * 10 + (**s - '0');
        (*s)++;
    }
    *out = v;
    return 1;
}

apr_status_t rs_time_parse(const char *s, apr_time_t *out)
{
    int y, mo, d, h, mi, se, oh = 0, om = 0, sign = 0;
    apr_int64_t usec = 0, scale = 100000, days;

    if (!digits(&s, 4, &y) || *s++ != '-' || !digits(&s, 2, &mo) || *s++ != '-'
        || !digits(&s, 2, &d) || *s++ != 'T' || !digits(&s, 2, &h) || *s++ != ':'
        || !digits(&s, 2, &mi) || *s++ != ':' || !digits(&s, 2, &se)) {
        return APR_EINVAL;
    }
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || se > 60) {
        return APR_EINVAL;
    }
    if (*s == '.') {
        s++;
        if (!apr_isdigit(*s)) {
            return APR_EINVAL;
        }
        while (apr_isdigit(*s)) {
            usec += (*s - '0') * scale;
            scale /= 10;
            s++;
        }
    }
    if (*s == 'Z') {
        s++;
    }
    else if (*s == '+' || *s == '-') {
        sign = (*s == '-') ? -1 : 1;
        s++;
        if (!digits(&s, 2, &oh) || *s++ != ':' || !digits(&s, 2, &om) || oh > 23 || om > 59) {
            return APR_EINVAL;
        }
    }
    else {
        return APR_EINVAL;
    }
    if (*s) {
        return APR_EINVAL;
    }
    days = days_from_civil(y, (unsigned)mo, (unsigned)d);
    *out =
        ((((days * 24 + h) * 60 + mi) * 60 + se) - sign * (oh * 3600 + om * 60)) * APR_USEC_PER_SEC
        + usec;
    return APR_SUCCESS;
}

apr_time_t rs_time_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (apr_time_t)ts.tv_sec * APR_USEC_PER_SEC + ts.tv_nsec / 1000;
}
