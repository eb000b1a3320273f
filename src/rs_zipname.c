/* rs_zipname.c - member names of a package (see rs_zip.h): which names
 * are accepted, which get the UTF-8 flag, and how a file's path becomes
 * a member name. */
#include <string.h>
#include <apr_strings.h>
#include "rs_uri.h"
#include "rs_utf8.h"
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

int rs_zip_name_utf8(const char *name)
{
    const unsigned char *s = (const unsigned char *)name;
    int wide = 0, n;
    while (*s) {
        n = rs_utf8_seq(s);
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
        n = rs_utf8_seq(s);
        if (!n || *s < 0x20 || *s == 0x7f) {
            return apr_pstrcat(p, escaped_prefix, rs_uri_escape_path(p, rel), NULL);
        }
        s += n;
    }
    return apr_pstrcat(p, prefix, rel, NULL);
}
