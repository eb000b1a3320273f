/* SPDX-License-Identifier: Apache-2.0 */
/* rs_notifydigest.c - the documents' digests between watcher starts (see
 * rs_notifydigest.h). */
#include <string.h>
#include <apr_file_io.h>
#include <apr_strings.h>
#include "rs_file.h"
#include "rs_hash.h"
#include "rs_notifydigest.h"

const char *rs_notifydigest_text(apr_pool_t *p, const char *cl, apr_size_t cl_len, const char *sd,
                                 apr_size_t sd_len, const apr_array_header_t *listed)
{
    char c[RS_HASH_COUNT][RS_HASH_HEXMAX], s[RS_HASH_COUNT][RS_HASH_HEXMAX];
    const char *text;
    int i;

    rs_hash_buf(cl, cl_len, RS_HASH_SHA256, c);
    rs_hash_buf(sd, sd_len, RS_HASH_SHA256, s);
    text = apr_psprintf(p, "capabilitylist %s\ndescription %s\n", c[2], s[2]);
    for (i = 0; listed && i < listed->nelts; i++) {
        text = apr_pstrcat(p, text, "set ", APR_ARRAY_IDX(listed, i, const char *), "\n", NULL);
    }
    return text;
}

apr_status_t rs_notifydigest_read(apr_pool_t *p, const char *path, const char **text)
{
    char *buf;
    apr_size_t n;
    apr_status_t rv = rs_file_read_small(p, path, RS_NOTIFYDIGEST_MAX, &buf, &n);

    *text = rv == APR_SUCCESS ? buf : NULL;
    return APR_STATUS_IS_ENOENT(rv) ? APR_SUCCESS : rv;
}

/* Whether the line "<name> <hex>" differs between two digests texts. */
static int differs(apr_pool_t *p, const char *old, const char *cur, const char *name)
{
    const char *key = apr_pstrcat(p, name, " ", NULL);
    const char *a = strstr(old, key), *b = strstr(cur, key);
    return !a || !b || strcspn(a, "\n") != strcspn(b, "\n") || strncmp(a, b, strcspn(b, "\n"));
}

/* Whether text has the line "set <url>". */
static int lists(apr_pool_t *p, const char *text, const char *url)
{
    const char *line = apr_pstrcat(p, "\nset ", url, "\n", NULL);
    return strstr(text, line) != NULL;
}

apr_array_header_t *rs_notifydigest_gone(apr_pool_t *p, const char *old, const char *cur)
{
    apr_array_header_t *gone = apr_array_make(p, 2, sizeof(const char *));
    const char *a = old;

    while (a && (a = strstr(a, "\nset ")) != NULL) {
        const char *url = apr_pstrmemdup(p, a + 5, strcspn(a + 5, "\n"));
        a += 5;
        if (*url && !lists(p, cur, url)) {
            APR_ARRAY_PUSH(gone, const char *) = url;
        }
    }
    return gone;
}

int rs_notifydigest_decide(apr_pool_t *p, int has_framework, int sd_new, const char *old,
                           const char *cur)
{
    if (!has_framework) {
        return RS_NOTIFYDIGEST_CL_CREATED
               | (sd_new ? RS_NOTIFYDIGEST_SD_CREATED : RS_NOTIFYDIGEST_SD_UPDATED)
               | RS_NOTIFYDIGEST_RECORD;
    }
    if (!old) {
        return RS_NOTIFYDIGEST_RECORD;
    }
    if (!strcmp(old, cur)) {
        return 0;
    }
    return RS_NOTIFYDIGEST_RECORD
           | (differs(p, old, cur, "capabilitylist") ? RS_NOTIFYDIGEST_CL_UPDATED : 0)
           | (differs(p, old, cur, "description") ? RS_NOTIFYDIGEST_SD_UPDATED : 0)
           | (rs_notifydigest_gone(p, old, cur)->nelts ? RS_NOTIFYDIGEST_CL_GONE : 0);
}
