/* SPDX-License-Identifier: Apache-2.0 */
/* rs_json.h - the one JSON helper of the module: string literals.
 *
 * The status page's ?json format is written by hand (a handful of
 * objects); what needs care is only the escaping of strings, which may
 * hold file names, error messages and URLs.
 */
#ifndef RS_JSON_H
#define RS_JSON_H

#include <apr_pools.h>

/* s as a JSON string literal, with its quotes, allocated from p: '"' and
 * '\\' escaped, control characters as \b \f \n \r \t or \u00XX, DEL as
 * \u007f; bytes >= 0x80 are copied (UTF-8 passes through) except that a
 * byte which does not start or continue a valid UTF-8 sequence becomes
 * U+FFFD, so the result is always valid JSON in UTF-8. */
const char *rs_json_str(apr_pool_t *p, const char *s);

/* Whether s is a JSON number as the status page writes them: an optional
 * '-', digits without a leading zero (or a single 0), an optional
 * fraction of digits; no exponent. */
int rs_json_is_number(const char *s);

#endif
