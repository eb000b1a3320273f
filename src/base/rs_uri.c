/* SPDX-License-Identifier: Apache-2.0 */
/* rs_uri.c - see rs_uri.h */
#include <string.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include "rs_uri.h"

static int keep(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'
           || c == '.' || c == '_' || c == '~' || c == '/';
}

apr_size_t rs_uri_escape_path_buf(char *buf, const char *path)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *s = (const unsigned char *)path;
    char *d = buf;

    for (; *s; s++) {
        if (keep(*s)) {
            *d++ = (char)*s;
        }
        else {
            *d++ = '%';
            *d++ = hex[*s >> 4];
            *d++ = hex[*s & 15];
        }
    }
    *d = '\0';
    return (apr_size_t)(d - buf);
}

apr_size_t rs_uri_escaped_len(const char *path)
{
    const unsigned char *s = (const unsigned char *)path;
    apr_size_t n = 0;

    for (; *s; s++) {
        n += keep(*s) ? 1 : 3;
    }
    return n;
}

char *rs_uri_escape_path(apr_pool_t *p, const char *path)
{
    char *buf = apr_palloc(p, strlen(path) * 3 + 1);
    rs_uri_escape_path_buf(buf, path);
    return buf;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

char *rs_uri_unescape(apr_pool_t *p, const char *s)
{
    char *out = apr_palloc(p, strlen(s) + 1), *d = out;

    while (*s) {
        if (*s == '%') {
            int hi = hexval(s[1]), lo = hi < 0 ? -1 : hexval(s[2]);
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                return NULL;
            }
            *d++ = (char)(hi * 16 + lo);
            s += 3;
        }
        else {
            *d++ = *s++;
        }
    }
    *d = '\0';
    return out;
}
