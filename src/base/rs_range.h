/* SPDX-License-Identifier: Apache-2.0 */
/* rs_range.h - one byte range of an HTTP Range header (RFC 9110 14.1.2).
 *
 * For documents the module generates itself (the open Change List), whose
 * length it knows before it writes them.  Only one range is honoured: a
 * header naming several ranges is answered with the whole document (a
 * server may always ignore Range), as is one it cannot read.
 */
#ifndef RS_RANGE_H
#define RS_RANGE_H

#include <apr.h>

typedef enum {
    RS_RANGE_NONE = 0,     /* no usable Range: send the whole document */
    RS_RANGE_OK,           /* send bytes *first .. *last (inclusive) */
    RS_RANGE_UNSATISFIABLE /* 416: no byte of the document is in range */
} rs_range_e;

/* Read the Range header value hdr (NULL: none) against a document of
 * total bytes.  "bytes=K-", "bytes=K-L" (L beyond the end is cut to the
 * last byte) and "bytes=-N" (the last N bytes, or all of them) give
 * RS_RANGE_OK with [*first, *last]; K at or beyond the end, or a suffix of
 * 0 bytes, gives RS_RANGE_UNSATISFIABLE.  Another unit than bytes, several
 * ranges, L < K and any malformed value give RS_RANGE_NONE (RFC 9110: a
 * server ignores a Range it cannot or does not want to honour). */
rs_range_e rs_range_parse(const char *hdr, apr_off_t total, apr_off_t *first, apr_off_t *last);

#endif
