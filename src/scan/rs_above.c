/* SPDX-License-Identifier: Apache-2.0 */
/* rs_above.c - see rs_above.h */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <apr_strings.h>
#include "rs_above.h"

#define META_PREFIX "access-above:"

apr_array_header_t *rs_above_dirs(apr_pool_t *p, const char *root)
{
    apr_array_header_t *out = apr_array_make(p, 8, sizeof(const char *));
    const char *s;

    if (root[0] != '/' || !root[1]) {
        return out; /* "/" has nothing above it */
    }
    APR_ARRAY_PUSH(out, const char *) = "/";
    for (s = strchr(root + 1, '/'); s; s = strchr(s + 1, '/')) {
        APR_ARRAY_PUSH(out, const char *) = apr_pstrndup(p, root, (apr_size_t)(s - root));
    }
    return out;
}

const char *rs_above_state(apr_pool_t *p, const apr_array_header_t *dirs,
                           const apr_array_header_t *names)
{
    apr_array_header_t *lines = apr_array_make(p, 8, sizeof(const char *));
    int i, j;

    for (i = 0; i < dirs->nelts; i++) {
        const char *dir = APR_ARRAY_IDX(dirs, i, const char *);
        for (j = 0; names && j < names->nelts; j++) {
            const char *path = apr_pstrcat(p, strcmp(dir, "/") ? dir : "", "/",
                                           APR_ARRAY_IDX(names, j, const char *), NULL);
            struct stat sb;
            const char *what;

            if (stat(path, &sb) == 0) {
                /* (APR's formatter knows no "ll": its own 64-bit ones.) */
                what = apr_psprintf(p,
                                    "%" APR_UINT64_T_FMT " %" APR_UINT64_T_FMT " %" APR_INT64_T_FMT
                                    " %" APR_INT64_T_FMT ".%09ld %" APR_INT64_T_FMT ".%09ld",
                                    (apr_uint64_t)sb.st_dev, (apr_uint64_t)sb.st_ino,
                                    (apr_int64_t)sb.st_size, (apr_int64_t)sb.st_mtim.tv_sec,
                                    (long)sb.st_mtim.tv_nsec, (apr_int64_t)sb.st_ctim.tv_sec,
                                    (long)sb.st_ctim.tv_nsec);
            }
            else if (errno == ENOENT || errno == ENOTDIR) {
                what = "-"; /* as httpd takes it: no access file */
            }
            else {
                what = apr_psprintf(p, "!%d", errno);
            }
            APR_ARRAY_PUSH(lines, const char *) = apr_pstrcat(p, path, "\t", what, "\n", NULL);
        }
    }
    return apr_array_pstrcat(p, lines, '\0');
}

const char *rs_above_diff(apr_pool_t *p, const char *a, const char *b)
{
    const char *first;
    apr_size_t n;

    if (a && b && !strcmp(a, b)) {
        return NULL;
    }
    if (!a || !b) {
        /* Never stored: the first file of the other; nothing to follow
         * (no directory, no name) needs no decision. */
        first = a ? a : b ? b : "";
        n = strcspn(first, "\t");
        return n ? apr_pstrndup(p, first, n) : NULL;
    }
    /* The first line that differs, by the path it names. */
    for (;;) {
        apr_size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
        if (!*a && !*b) {
            return ""; /* (not reached: a and b differ) */
        }
        if (la != lb || memcmp(a, b, la)) {
            first = la ? a : b;
            return apr_pstrndup(p, first, strcspn(first, "\t"));
        }
        a += la + (a[la] != '\0');
        b += lb + (b[lb] != '\0');
    }
}

apr_status_t rs_above_load(rs_db_t *db, apr_pool_t *p, const char *set, const char **state)
{
    *state = NULL;
    return rs_db_meta_get(db, p, apr_pstrcat(p, META_PREFIX, set, NULL), state);
}

apr_status_t rs_above_save(rs_db_t *db, apr_pool_t *p, const char *set, const char *state)
{
    return rs_db_meta_put_set(db, set, apr_pstrcat(p, META_PREFIX, set, NULL), state);
}
