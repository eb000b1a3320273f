/* SPDX-License-Identifier: Apache-2.0 */
/* rs_uri.h - percent-encoding of path segments (RFC 3986).
 *
 * File names are bytes.  Every byte other than an RFC 3986 "unreserved"
 * character (ALPHA / DIGIT / "-" / "." / "_" / "~") is percent-encoded, so
 * spaces, "%", "#", "?", "&", quotes, non-ASCII UTF-8 and byte sequences that
 * are not UTF-8 at all all yield an unambiguous absolute URI.  "/" separates
 * segments and is kept.
 */
#ifndef RS_URI_H
#define RS_URI_H

#include <apr_pools.h>

/* Encode a relative path ("a/b c.txt" -> "a/b%20c.txt"). */
char *rs_uri_escape_path(apr_pool_t *p, const char *path);

/* Encode into buf (size at least 3*strlen(path)+1); returns the length. */
apr_size_t rs_uri_escape_path_buf(char *buf, const char *path);

/* The length of path once encoded, without encoding it. */
apr_size_t rs_uri_escaped_len(const char *path);

/* Decode %XX sequences.  Returns NULL for a malformed escape or an
 * encoded NUL. */
char *rs_uri_unescape(apr_pool_t *p, const char *s);

#endif
