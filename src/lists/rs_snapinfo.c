/* SPDX-License-Identifier: Apache-2.0 */
/* rs_snapinfo.c - see rs_snapinfo.h */
#include <errno.h>
#include <string.h>
#include <apr_strings.h>
#include "rs_file.h"
#include "rs_snapinfo.h"
#include "rs_statedir.h"

/* One field of the info file: decimal digits, at most max, followed by
 * sep.  Returns the position after sep, or NULL. */
static const char *info_field(const char *s, apr_uint64_t max, char sep, apr_uint64_t *out)
{
    apr_uint64_t v = 0;
    const char *start = s;

    while (*s >= '0' && *s <= '9') {
        apr_uint64_t d = (apr_uint64_t)(*s++ - '0');
        if (v > (max - d) / 10) {
            return NULL; /* out of range: never wrapped */
        }
        v = v * 10 + d;
    }
    if (s == start || *s != sep) {
        return NULL;
    }
    *out = v;
    return s + 1;
}

apr_status_t rs_snapinfo_read(const char *dir, apr_pool_t *p, rs_snapshot_info_t *info)
{
    char *buf;
    apr_size_t n;
    apr_uint64_t gen, at, completed, entries, parts, bytes = 0;
    const char *s, *rest;
    apr_status_t rv;

    /* Six numbers of at most 20 digits: far below 256 bytes. */
    rv = rs_file_read_small(p, rs_statedir_gen_info(p, dir), 255, &buf, &n);
    if (APR_TO_OS_ERROR(rv) == EFBIG) {
        return APR_EINVAL; /* malformed: longer than any */
    }
    if (rv != APR_SUCCESS) {
        return rv;
    }
    /* Written by rs_snapshot_write as five non-negative decimal numbers and
     * a newline, with a sixth (bytes) before the newline since it was
     * added; anything else (a torn write, an editor, a sign, a number that
     * does not fit) is an incomplete snapshot, never a wrapped value. */
    if (!(s = info_field(buf, APR_UINT64_MAX, ' ', &gen)) || gen < 1
        || !(s = info_field(s, APR_INT64_MAX, ' ', &at))
        || !(s = info_field(s, APR_INT64_MAX, ' ', &completed)) || completed < at
        || !(s = info_field(s, APR_INT64_MAX, ' ', &entries))) {
        return APR_EINVAL;
    }
    if ((rest = info_field(s, APR_INT32_MAX, '\n', &parts))) {
        s = rest;
        info->bytes = -1; /* five fields: unknown */
    }
    else if (!(s = info_field(s, APR_INT32_MAX, ' ', &parts))
             || !(s = info_field(s, APR_INT64_MAX, '\n', &bytes))) {
        return APR_EINVAL;
    }
    else {
        info->bytes = (apr_int64_t)bytes;
    }
    if (*s) {
        return APR_EINVAL;
    }
    info->gen = gen;
    info->at = (apr_time_t)at;
    info->completed = (apr_time_t)completed;
    info->entries = (apr_int64_t)entries;
    info->parts = (int)parts;
    return APR_SUCCESS;
}
