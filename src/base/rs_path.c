/* SPDX-License-Identifier: Apache-2.0 */
/* rs_path.c - see rs_path.h */
#include <string.h>
#include <apr_strings.h>
#include "rs_path.h"

int rs_path_within(const char *a, const char *b)
{
    apr_size_t n = strlen(b);
    if (!strcmp(b, "/")) {
        return 1;
    }
    return !strncmp(a, b, n) && (a[n] == '/' || a[n] == '\0');
}

const char *rs_path_strip_slash(apr_pool_t *p, const char *path)
{
    apr_size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') {
        n--;
    }
    return apr_pstrndup(p, path, n);
}

const char *rs_path_join(apr_pool_t *p, const char *dir, const char *name)
{
    return *dir ? apr_pstrcat(p, dir, "/", name, NULL) : name;
}
