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

char *rs_time_format_ns(char *buf, apr_int64_t ns)
{
    apr_int64_t secs = ns / 1000000000;
    apr_int64_t frac = ns % 1000000000;
    struct tm tm;
    time_t tt;
    size_t n;

    if (frac < 0) {
        frac += 1000000000;
        secs -= 1;
    }
    tt = (time_t)secs;
    gmtime_r(&tt, &tm);
    n = strftime(buf, RS_TIME_BUFSIZE, "%Y-%m-%dT%H:%M:%S", &tm);
    if (frac) {
        char f[16];
        int len;
        snprintf(f, sizeof(f), "%09ld", (long)frac);
        len = 9;
        while (len > 1 && f[len - 1] == '0') {
            len--;
        }
        buf[n++] = '.';
        memcpy(buf + n, f, (size_t)len);
        n += (size_t)len;
    }
    buf[n++] = 'Z';
    buf[n] = '\0';
    return buf;
}

char *rs_time_format(char *buf, apr_time_t t)
{
    return rs_time_format_ns(buf, (apr_int64_t)t * 1000);
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

    if (!digits(&s, 4, &y) || *s++ != '-' || !digits(&s, 2, &mo)
        || *s++ != '-' || !digits(&s, 2, &d) || *s++ != 'T'
        || !digits(&s, 2, &h) || *s++ != ':' || !digits(&s, 2, &mi)
        || *s++ != ':' || !digits(&s, 2, &se)) {
        return APR_EINVAL;
    }
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) {
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
        if (!digits(&s, 2, &oh) || *s++ != ':' || !digits(&s, 2, &om)) {
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
    *out = ((((days * 24 + h) * 60 + mi) * 60 + se) - sign * (oh * 3600 + om * 60))
           * APR_USEC_PER_SEC + usec;
    return APR_SUCCESS;
}
