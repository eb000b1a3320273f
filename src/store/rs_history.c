/* SPDX-License-Identifier: Apache-2.0 */
/* rs_history.c - see rs_history.h */
#include <errno.h>
#include <string.h>
#include <apr_file_io.h>
#include <apr_general.h>
#include <apr_strings.h>
#include "rs_file.h"
#include "rs_history.h"

apr_status_t rs_history_new(char *out)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[RS_HISTORY_LEN / 2];
    apr_status_t rv = apr_generate_random_bytes(raw, sizeof(raw));
    apr_size_t i;

    if (rv != APR_SUCCESS) {
        return rv;
    }
    for (i = 0; i < sizeof(raw); i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 15];
    }
    out[RS_HISTORY_LEN] = '\0';
    return APR_SUCCESS;
}

apr_status_t rs_history_read(apr_pool_t *p, const char *path, char *out)
{
    char *buf;
    apr_size_t n;
    /* An id and its newline, or one byte more: too long either way. */
    apr_status_t rv = rs_file_read_small(p, path, RS_HISTORY_LEN + 2, &buf, &n);

    if (APR_TO_OS_ERROR(rv) == EFBIG) {
        return APR_EINVAL;
    }
    if (rv != APR_SUCCESS) {
        return rv;
    }
    if (n && buf[n - 1] == '\n') {
        buf[--n] = '\0';
    }
    if (!rs_parse_history_id(buf)) {
        return APR_EINVAL;
    }
    memcpy(out, buf, RS_HISTORY_LEN + 1);
    return APR_SUCCESS;
}

static apr_status_t write_id(void *baton, apr_file_t *f, apr_pool_t *p)
{
    const char *line = apr_pstrcat(p, (const char *)baton, "\n", NULL);
    return apr_file_write_full(f, line, strlen(line), NULL);
}

apr_status_t rs_history_write(apr_pool_t *p, const char *path, const char *id)
{
    return rs_file_replace(p, path, write_id, (void *)id);
}
