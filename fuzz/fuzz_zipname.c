/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_zipname.c - file names as dump package member names.
 *
 * The input is a path relative to a set's root: arbitrary bytes (no NUL,
 * which no file name holds); inputs that cannot be a relative path (an
 * empty, "." or ".." component) are passed over.  Its member name
 * (rs_zip_member_name, as the Resource Dump names members) must be
 * accepted by rs_zip_name_ok and be either "resources/" + the path
 * literally -- then valid UTF-8 holding no backslash, colon, control
 * character or other character a Windows extractor refuses or reads as
 * something else, and no component ending with '.' or ' ' -- or
 * "encoded/" + an encoding of only letters, digits, "-._~%" and '/',
 * whose components end with neither '.' nor ' ' and name no Windows
 * device, and which percent-decodes to the path exactly.
 */
#include <apr_lib.h>
#include <apr_strings.h>
#include "fuzz.h"
#include "rs_uri.h"
#include "rs_utf8.h"
#include "rs_zip.h"

/* No component of name ends with '.' or ' '. */
static void check_ends(const char *name)
{
    const char *s;
    for (s = name; *s; s++) {
        FUZZ_CHECK(!((*s == '.' || *s == ' ') && (s[1] == '/' || !s[1])),
                   "a component of '%s' ends with '%c'", name, *s);
    }
}

static void check_literal(const char *rel)
{
    const unsigned char *s = (const unsigned char *)rel;
    while (*s) {
        int n = rs_utf8_seq(s);
        FUZZ_CHECK(n > 0, "literal '%s' is not UTF-8", rel);
        FUZZ_CHECK(*s >= 0x20 && *s != 0x7f && !strchr("\\:*?\"<>|", *s),
                   "literal '%s' holds 0x%02x", rel, *s);
        FUZZ_CHECK(!(s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f), "literal '%s' holds a C1", rel);
        s += n;
    }
    check_ends(rel);
}

static void check_encoded(apr_pool_t *p, const char *enc, const char *rel)
{
    const char *s, *c = enc;
    char *dec;

    for (s = enc; *s; s++) {
        FUZZ_CHECK(apr_isalnum(*s) || strchr("-._~%/", *s), "encoded '%s' holds 0x%02x", enc,
                   (unsigned char)*s);
    }
    check_ends(enc);
    for (;;) {
        const char *e = strchr(c, '/');
        apr_size_t n = e ? (apr_size_t)(e - c) : strlen(c), b = 0;
        char low[8];
        while (b < n && c[b] != '.') {
            b++;
        }
        if (b >= 3 && b <= 7) {
            apr_size_t i;
            for (i = 0; i < b; i++) {
                low[i] = (char)apr_tolower(c[i]);
            }
            low[b] = '\0';
            FUZZ_CHECK(strcmp(low, "con") && strcmp(low, "prn") && strcmp(low, "aux")
                           && strcmp(low, "nul")
                           && !(b == 4 && (!strncmp(low, "com", 3) || !strncmp(low, "lpt", 3))
                                && apr_isdigit(low[3])),
                       "encoded '%s' names a device", enc);
        }
        if (!e) {
            break;
        }
        c = e + 1;
    }
    dec = rs_uri_unescape(p, enc);
    FUZZ_CHECK(dec && !strcmp(dec, rel), "encoded '%s' decodes to '%s'", enc, dec ? dec : "?");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    const char *rel = fuzz_str(data, size, 0), *name;

    if (rel && fuzz_relative_path(rel)) {
        name = rs_zip_member_name(p, "resources/", "encoded/", rel);
        FUZZ_CHECK(rs_zip_name_ok(name), "'%s' refused by rs_zip_name_ok", name);
        if (!strncmp(name, "resources/", 10)) {
            FUZZ_CHECK(!strcmp(name + 10, rel), "'%s' for '%s'", name, rel);
            check_literal(rel);
        }
        else {
            FUZZ_CHECK(!strncmp(name, "encoded/", 8), "'%s' has no prefix", name);
            check_encoded(p, name + 8, rel);
        }
    }
    fuzz_done();
    return 0;
}
