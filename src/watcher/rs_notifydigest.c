/* SPDX-License-Identifier: Apache-2.0 */
/* rs_notifydigest.c - the documents' digests between watcher starts (see
 * rs_notifydigest.h). */
#include <string.h>
#include <apr_file_io.h>
#include <apr_strings.h>
#include "rs_hash.h"
#include "rs_notifydigest.h"

const char *rs_notifydigest_text(apr_pool_t *p, const char *cl, apr_size_t cl_len, const char *sd,
                                 apr_size_t sd_len)
{
    char c[RS_HASH_COUNT][RS_HASH_HEXMAX], s[RS_HASH_COUNT][RS_HASH_HEXMAX];
    rs_hash_buf(cl, cl_len, RS_HASH_SHA256, c);
    rs_hash_buf(sd, sd_len, RS_HASH_SHA256, s);
    return apr_psprintf(p, "capabilitylist %s\ndescription %s\n", c[2], s[2]);
}

apr_status_t rs_notifydigest_read(apr_pool_t *p, const char *path, const char **text)
{
    char buf[512];
    apr_size_t n = sizeof(buf) - 1;
    apr_file_t *f;
    apr_status_t rv;

    *text = NULL;
    rv = apr_file_open(&f, path, APR_FOPEN_READ, APR_FPROT_OS_DEFAULT, p);
    if (APR_STATUS_IS_ENOENT(rv)) {
        return APR_SUCCESS;
    }
    if (rv != APR_SUCCESS) {
        return rv;
    }
    rv = apr_file_read_full(f, buf, n, &n);
    apr_file_close(f);
    if (rv != APR_SUCCESS && !APR_STATUS_IS_EOF(rv)) {
        return rv;
    }
    buf[n] = '\0';
    *text = apr_pstrdup(p, buf);
    return APR_SUCCESS;
}

/* Whether the line "<name> <hex>" differs between two digests texts. */
static int differs(apr_pool_t *p, const char *old, const char *cur, const char *name)
{
    const char *key = apr_pstrcat(p, name, " ", NULL);
    const char *a = strstr(old, key), *b = strstr(cur, key);
    return !a || !b || strcspn(a, "\n") != strcspn(b, "\n") || strncmp(a, b, strcspn(b, "\n"));
}

int rs_notifydigest_decide(apr_pool_t *p, int has_framework, const char *old, const char *cur)
{
    if (!has_framework) {
        return RS_NOTIFYDIGEST_CL_CREATED | RS_NOTIFYDIGEST_SD_UPDATED | RS_NOTIFYDIGEST_RECORD;
    }
    if (!old) {
        return RS_NOTIFYDIGEST_RECORD;
    }
    if (!strcmp(old, cur)) {
        return 0;
    }
    return RS_NOTIFYDIGEST_RECORD
           | (differs(p, old, cur, "capabilitylist") ? RS_NOTIFYDIGEST_CL_UPDATED : 0)
           | (differs(p, old, cur, "description") ? RS_NOTIFYDIGEST_SD_UPDATED : 0);
}
