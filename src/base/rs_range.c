/* SPDX-License-Identifier: Apache-2.0 */
/* rs_range.c - see rs_range.h */
#include <apr_lib.h>
#include <apr_strings.h>
#include "rs_range.h"

/* Skip optional whitespace (OWS: spaces and tabs). */
static const char *ows(const char *s)
{
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    return s;
}

/* A non-negative decimal at *s (at least one digit, no sign), advanced
 * past it.  0 when there is none or it does not fit an apr_off_t. */
static int number(const char **s, apr_off_t *out)
{
    apr_off_t v = 0;
    const char *p = *s;

    if (!apr_isdigit(*p)) {
        return 0;
    }
    while (apr_isdigit(*p)) {
        int d = *p++ - '0';
        if (v > (APR_INT64_MAX - d) / 10) {
            return 0;
        }
        v = v * 10 + d;
    }
    *s = p;
    *out = v;
    return 1;
}

rs_range_e rs_range_parse(const char *hdr, apr_off_t total, apr_off_t *first, apr_off_t *last)
{
    const char *s;
    apr_off_t a = -1, b = -1;

    if (!hdr || strncasecmp((s = ows(hdr)), "bytes", 5)) {
        return RS_RANGE_NONE;
    }
    s = ows(s + 5);
    if (*s++ != '=') {
        return RS_RANGE_NONE;
    }
    s = ows(s);
    if (*s == '-') {
        s++;
        if (!number(&s, &b)) {
            return RS_RANGE_NONE;
        }
    }
    else {
        if (!number(&s, &a) || *s++ != '-') {
            return RS_RANGE_NONE;
        }
        if (apr_isdigit(*s) && !number(&s, &b)) {
            return RS_RANGE_NONE;
        }
    }
    if (*ows(s)) {
        return RS_RANGE_NONE; /* several ranges, or trailing junk */
    }
    if (a < 0) { /* suffix: the last b bytes */
        if (b == 0 || total <= 0) {
            return RS_RANGE_UNSATISFIABLE;
        }
        *first = b >= total ? 0 : total - b;
        *last = total - 1;
        return RS_RANGE_OK;
    }
    if (b >= 0 && b < a) {
        return RS_RANGE_NONE;
    }
    if (a >= total) {
        return RS_RANGE_UNSATISFIABLE;
    }
    *first = a;
    *last = b < 0 || b >= total ? total - 1 : b;
    return RS_RANGE_OK;
}
