/* rs_zipname.c - member names of a package (see rs_zip.h): which names
 * are accepted, which get the UTF-8 flag, and how a file's path becomes
 * a member name. */
#include <string.h>
#include <apr_strings.h>
#include "rs_uri.h"
#include "rs_zip.h"

int rs_zip_name_ok(const char *name)
{
    const char *s = name, *e;
    if (!name || !*name || *name == '/') {
        return 0;
    }
    for (;;) {
        e = strchr(s, '/');
        if (!e) {
            e = s + strlen(s);
        }
        if (e == s || (e - s == 1 && s[0] == '.') || (e - s == 2 && s[0] == '.' && s[1] == '.')) {
            return 0;
        }
        if (!*e) {
            return 1;
        }
        s = e + 1;
    }
}

/* Length of the UTF-8 sequence at s (shortest form, no surrogates, at most
 * U+10FFFF), 0 when invalid. */
static int utf8_seq(const unsigned char *s)
{
    unsigned c = s[0];
    int n, i;
    unsigned cp;
    if (c < 0x80) {
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2, cp = c & 0x1f;
    }
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3, cp = c & 0x0f;
    }
    else if (c >= 0xf0 && c <= 0xf4) {
        n = 4, cp = c & 0x07;
    }
    else {
        return 0;
    }
    for (i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))
        || (n == 4 && (cp < 0x10000 || cp > 0x10ffff))) {
        return 0;
    }
    return n;
}

int rs_zip_name_utf8(const char *name)
{
    const unsigned char *s = (const unsigned char *)name;
    int wide = 0, n;
    while (*s) {
        n = utf8_seq(s);
        if (!n) {
            return 0;
        }
        wide |= n > 1;
        s += n;
    }
    return wide;
}

const char *rs_zip_member_name(apr_pool_t *p, const char *prefix, const char *escaped_prefix,
                               const char *rel)
{
    const unsigned char *s = (const unsigned char *)rel;
    int n;
    while (*s) {
        n = utf8_seq(s);
        if (!n || *s < 0x20 || *s == 0x7f) {
            return apr_pstrcat(p, escaped_prefix, rs_uri_escape_path(p, rel), NULL);
        }
        s += n;
    }
    return apr_pstrcat(p, prefix, rel, NULL);
}
