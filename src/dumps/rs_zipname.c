/* SPDX-License-Identifier: Apache-2.0 */
/* rs_zipname.c - member names of a package (see rs_zip.h): which names
 * are accepted, which get the UTF-8 flag, and how a file's path becomes
 * a member name.
 *
 * A member name is written literally only when every common extractor
 * makes of it the same relative path, below the directory it extracts
 * into: Info-ZIP and Python on Unix, Windows' Explorer and its
 * tar/7-Zip/WinRAR ports, macOS' Archive Utility.  Anything one of them
 * reads as a separator, a drive, a device or a name it rewrites sends
 * the whole path below the encoded prefix, percent-encoded (see
 * rs_zip_member_name). */
#include <string.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include "rs_uri.h"
#include "rs_utf8.h"
#include "rs_zip.h"

int rs_zip_name_ok(const char *name)
{
    const char *s = name, *e;
    if (!name || !*name || *name == '/' || strpbrk(name, "\\:")) {
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

/* The code point of the valid n-byte UTF-8 sequence at s. */
static unsigned code_point(const unsigned char *s, int n)
{
    unsigned c = n == 1 ? s[0] : n == 2 ? s[0] & 0x1f : n == 3 ? s[0] & 0x0f : s[0] & 0x07;
    int i;
    for (i = 1; i < n; i++) {
        c = (c << 6) | (s[i] & 0x3f);
    }
    return c;
}

/* Characters that no literal name may hold: controls (C0, DEL, C1);
 * what Windows refuses in a name or reads as a separator, a drive or a
 * stream (\ : * ? " < > |); and what its "best fit" conversion to a
 * legacy code page (an extractor using the ANSI API) turns into one of
 * those, a '.' or a '/' (the fullwidth and small forms, the solidus and
 * reverse solidus look-alikes, and the yen and won signs, which are the
 * backslash of code pages 932 and 949). */
static int char_unsafe(unsigned c)
{
    static const unsigned lookalike[] = {
        0x00a5, 0x2024, 0x2044, 0x20a9, 0x2215, 0x2216, 0x29f5, 0x29f8, 0x29f9, 0xfe52, 0xfe55,
        0xfe68, 0xff02, 0xff0a, 0xff0e, 0xff0f, 0xff1a, 0xff1c, 0xff1e, 0xff1f, 0xff3c, 0xff5c,
    };
    size_t i;

    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c < 0x80 && strchr("\\:*?\"<>|", (int)c))) {
        return 1;
    }
    for (i = 0; i < sizeof(lookalike) / sizeof(lookalike[0]); i++) {
        if (c == lookalike[i]) {
            return 1;
        }
    }
    return 0;
}

/* Whether the segment [s, s + n) is the name of a Windows device, which
 * opens the device instead of a file in any directory: CON, PRN, AUX,
 * NUL, COM0-9, LPT0-9 (also with the superscript digits 1-3), CONIN$,
 * CONOUT$, CLOCK$, in any case, alone or before an extension (spaces
 * between the two ignored). */
static int segment_device(const char *s, apr_size_t n)
{
    static const char *const dev[] = { "con",    "prn",     "aux",    "nul",
                                       "conin$", "conout$", "clock$", NULL };
    apr_size_t base = 0, i;
    char low[8];

    while (base < n && s[base] != '.') {
        base++;
    }
    while (base > 0 && s[base - 1] == ' ') {
        base--;
    }
    if (base < 3 || base > 7) {
        return 0;
    }
    for (i = 0; i < base; i++) {
        low[i] = (char)apr_tolower(s[i]);
    }
    low[base] = '\0';
    for (i = 0; dev[i]; i++) {
        if (!strcmp(low, dev[i])) {
            return 1;
        }
    }
    if (strncmp(low, "com", 3) && strncmp(low, "lpt", 3)) {
        return 0;
    }
    return (base == 4 && low[3] >= '0' && low[3] <= '9')
           || (base == 5 && (unsigned char)low[3] == 0xc2
               && ((unsigned char)low[4] == 0xb9 || (unsigned char)low[4] == 0xb2
                   || (unsigned char)low[4] == 0xb3));
}

/* Whether rel may follow the literal prefix as it is (see the top). */
static int name_portable(const char *rel)
{
    const unsigned char *s = (const unsigned char *)rel, *seg = s;
    int n;

    for (;;) {
        if (!*s || *s == '/') {
            /* The end of a segment: Windows drops a trailing dot or space
             * ("x." is "x", ". ." is ".."). */
            if (s == seg || s[-1] == '.' || s[-1] == ' '
                || segment_device((const char *)seg, (apr_size_t)(s - seg))) {
                return 0;
            }
            if (!*s) {
                return 1;
            }
            seg = ++s;
            continue;
        }
        n = rs_utf8_seq(s);
        if (!n || char_unsafe(code_point(s, n))) {
            return 0;
        }
        s += n;
    }
}

/* rel percent-encoded like a URI path, then made safe segment by
 * segment: the first character of a device name and a segment's
 * trailing dots are encoded too (the percent-encoding leaves only
 * letters, digits, "-._~%" and '/'). */
static const char *encode(apr_pool_t *p, const char *rel)
{
    char *out = apr_palloc(p, strlen(rel) * 3 + 1), *d = out;
    const char *seg = rel, *e;
    apr_size_t n, dots;

    for (;;) {
        const char *raw, *esc;
        e = strchr(seg, '/');
        raw = e ? apr_pstrndup(p, seg, (apr_size_t)(e - seg)) : seg;
        esc = rs_uri_escape_path(p, raw);
        n = strlen(esc);
        for (dots = 0; dots < n && esc[n - 1 - dots] == '.'; dots++) {
        }
        if (segment_device(raw, strlen(raw))) {
            /* The device's first letter, encoded ("CON" -> "%43ON"). */
            d += apr_snprintf(d, 4, "%%%02X", (unsigned char)esc[0]);
            esc++;
            n--;
        }
        memcpy(d, esc, n - dots);
        d += n - dots;
        for (; dots; dots--) {
            memcpy(d, "%2E", 3);
            d += 3;
        }
        if (!e) {
            break;
        }
        *d++ = '/';
        seg = e + 1;
    }
    *d = '\0';
    return out;
}

const char *rs_zip_member_name(apr_pool_t *p, const char *prefix, const char *escaped_prefix,
                               const char *rel)
{
    return name_portable(rel) ? apr_pstrcat(p, prefix, rel, NULL)
                              : apr_pstrcat(p, escaped_prefix, encode(p, rel), NULL);
}
