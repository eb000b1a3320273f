/* SPDX-License-Identifier: Apache-2.0 */
/* rs_glob.c - see rs_glob.h */
#include <string.h>
#include <apr_fnmatch.h>
#include <apr_strings.h>
#include "rs_glob.h"

const char *rs_glob_check(apr_pool_t *p, const char *pattern)
{
    const char *s;

    if (!*pattern || (pattern[0] == '/' && !pattern[1])) {
        return "empty pattern";
    }
    for (s = pattern; *s; s++) {
        if (*s == '\\') {
            if (!s[1]) {
                return "trailing backslash";
            }
            s++;
        }
        else if (*s == '[') {
            /* A bracket expression as apr_fnmatch reads it: "!" or "^"
             * negates, a "]" right after the opening (or after the
             * negation) is a member, "\\" escapes, and a later "]" ends
             * it ("[[]" and "[]a]" are complete). */
            const char *q = s + 1;
            if (*q == '!' || *q == '^') {
                q++;
            }
            if (*q == ']') {
                q++;
            }
            while (*q && *q != ']') {
                if (*q == '\\' && q[1]) {
                    q++;
                }
                q++;
            }
            if (!*q) {
                return apr_psprintf(p, "unterminated '[' in '%s'", pattern);
            }
            s = q;
        }
    }
    return NULL;
}

int rs_glob_match(const apr_array_header_t *patterns, const char *relpath)
{
    const char *base;
    int i;

    if (!patterns || !patterns->nelts) {
        return 0;
    }
    base = strrchr(relpath, '/');
    base = base ? base + 1 : relpath;
    for (i = 0; i < patterns->nelts; i++) {
        const char *pat = APR_ARRAY_IDX(patterns, i, const char *);
        if (strchr(pat, '/')) {
            if (*pat == '/') {
                pat++;
            }
            if (apr_fnmatch(pat, relpath, APR_FNM_PATHNAME) == APR_SUCCESS) {
                return 1;
            }
        }
        else if (apr_fnmatch(pat, base, 0) == APR_SUCCESS) {
            return 1;
        }
    }
    return 0;
}

int rs_glob_hidden(const char *basename, int dotfiles)
{
    if (basename[0] != '.') {
        return 0;
    }
    if (!strncmp(basename, ".ht", 3)) {
        return 1;
    }
    return !dotfiles;
}
