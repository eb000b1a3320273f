/* SPDX-License-Identifier: Apache-2.0 */
/* rs_json.c - see rs_json.h. */
#include <string.h>
#include <apr_strings.h>
#include "rs_json.h"
#include "rs_utf8.h"

const char *rs_json_str(apr_pool_t *p, const char *s)
{
    /* Worst case: every byte as \u00XX (6) or U+FFFD (3), quotes, NUL. */
    char *out = apr_palloc(p, strlen(s) * 6 + 3), *o = out;
    const unsigned char *u = (const unsigned char *)s;

    *o++ = '"';
    while (*u) {
        int n;
        switch (*u) {
        case '"':
            *o++ = '\\';
            *o++ = '"';
            u++;
            continue;
        case '\\':
            *o++ = '\\';
            *o++ = '\\';
            u++;
            continue;
        case '\b':
            *o++ = '\\';
            *o++ = 'b';
            u++;
            continue;
        case '\f':
            *o++ = '\\';
            *o++ = 'f';
            u++;
            continue;
        case '\n':
            *o++ = '\\';
            *o++ = 'n';
            u++;
            continue;
        case '\r':
            *o++ = '\\';
            *o++ = 'r';
            u++;
            continue;
        case '\t':
            *o++ = '\\';
            *o++ = 't';
            u++;
            continue;
        default:
            break;
        }
        if (*u < 0x20 || *u == 0x7f) {
            o += apr_snprintf(o, 7, "\\u%04x", *u);
            u++;
        }
        else if ((n = rs_utf8_seq(u)) > 0) {
            memcpy(o, u, (size_t)n);
            o += n;
            u += n;
        }
        else {
            memcpy(o, "\xef\xbf\xbd", 3); /* U+FFFD */
            o += 3;
            u++;
        }
    }
    *o++ = '"';
    *o = '\0';
    return out;
}

int rs_json_is_number(const char *s)
{
    if (*s == '-') {
        s++;
    }
    if (*s == '0') {
        s++;
    }
    else if (*s >= '1' && *s <= '9') {
        while (*s >= '0' && *s <= '9') {
            s++;
        }
    }
    else {
        return 0;
    }
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9')) {
            return 0;
        }
        while (*s >= '0' && *s <= '9') {
            s++;
        }
    }
    return *s == '\0';
}
