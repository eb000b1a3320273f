/* SPDX-License-Identifier: Apache-2.0 */
/* rs_parse.h - parsers of outside input: request paths and directive values.
 *
 * Everything a client puts in a URL below the prefix, and every value an
 * operator writes in a directive, goes through one of these functions
 * before the glue acts on it.  They are pure (no I/O, no state, no httpd)
 * so that unit tests and the fuzz harnesses in fuzz/ can call them
 * directly.  Each returns 1 (or RS_PARSE_OK) for valid input and leaves
 * its outputs untouched otherwise; error messages stay with the caller,
 * which knows the directive or the request.
 */
#ifndef RS_PARSE_H
#define RS_PARSE_H

#include <apr.h>
#include <apr_time.h>

/* ---- Request paths ---------------------------------------------------- */

/* What a URL below "<prefix>/<set>/" names. */
typedef enum rs_doc_kind_t {
    RS_DOC_NONE = 0,          /* nothing: 404 */
    RS_DOC_CAPABILITY,        /* capabilitylist.xml */
    RS_DOC_RESOURCELIST,      /* resourcelist.xml (a list or an index) */
    RS_DOC_RESOURCELIST_PART, /* resourcelist/<arg>: see rs_parse_part */
    RS_DOC_CHANGELIST,        /* changelist.xml (the Change List Index) */
    RS_DOC_CHANGELIST_PART,   /* changelist/<arg>: see rs_parse_id */
    RS_DOC_RESOURCEDUMP,      /* resourcedump.xml */
    RS_DOC_RESOURCEDUMP_PART, /* resourcedump/<arg>: see rs_parse_dump_part */
    RS_DOC_CHANGEDUMP,        /* changedump.xml */
    RS_DOC_CHANGEDUMP_PART,   /* changedump/<arg>: see rs_parse_cdump_part */
    RS_DOC_NOTIFY             /* notify/<arg>: arg "change" or "framework" (a topic) */
} rs_doc_kind_t;

/* A request path below the prefix, split.  set points into the parsed
 * string and is not NUL-terminated (set_len bytes); arg points into it
 * too (the rest after "resourcelist/" or "changelist/"), else NULL. */
typedef struct rs_request_path_t {
    const char *set;
    apr_size_t set_len;
    rs_doc_kind_t kind;
    const char *arg;
} rs_request_path_t;

/* Split rest, the URL-path after the prefix ("/<set>/<document>"), into
 * the set name and the document.  Returns 0 when rest does not have that
 * shape (no leading "/" or no second "/"); otherwise 1, with out->kind
 * RS_DOC_NONE when the document is not one a set has.  The set name is
 * not checked: the caller looks it up among its sets. */
int rs_parse_request_path(const char *rest, rs_request_path_t *out);

/* Parse "<gen>-<n>.xml", a Resource List part: both numbers decimal
 * without sign or leading zeros, gen 1 to 18 digits, n 1 to 9 digits
 * (so neither is 0), nothing after ".xml".  Returns 1 or 0. */
int rs_parse_part(const char *s, apr_uint64_t *gen, int *n);

/* Parse "<key>.zip" (a Resource Dump package, *manifest = 0) or
 * "<key>.xml" (its manifest copy, *manifest = 1): key exactly
 * RS_PARSE_DUMP_KEY_LEN lowercase hexadecimal digits (rs_dumppkg.h),
 * copied to key (at least RS_PARSE_DUMP_KEY_LEN + 1 bytes).  Returns 1
 * or 0 (key untouched). */
#define RS_PARSE_DUMP_KEY_LEN 16
int rs_parse_dump_part(const char *s, char *key, int *manifest);

/* Parse "<id>.zip" (the Change Dump package of closed Change List id,
 * *manifest = 0) or "<id>.xml" (its manifest copy, *manifest = 1), id as
 * for rs_parse_id (1 to 15 digits, never 0), *rev = 0; or
 * "<id>-<rev>.zip" / "<id>-<rev>.xml", a package rebuilt under a new name
 * (rs_cdump.h: a withdrawal), rev 1 to 9 digits without a leading zero.
 * Returns 1 or 0 (outputs untouched). */
int rs_parse_cdump_part(const char *s, apr_int64_t *id, int *rev, int *manifest);

/* Parse "part-<n>.xml", part n of a Change Dump Index (rs_cdump.h), n 1
 * to 9 digits without a leading zero.  Returns 1 or 0 (*n untouched). */
int rs_parse_cdump_index_part(const char *s, int *n);

/* A history id: the random identifier of one history of the state store
 * (rs_history.h), RS_HISTORY_LEN lowercase hexadecimal digits.  It leads
 * the names of the documents that never change (closed Change Lists and
 * Resource List parts: "<history>-<id>.xml", "<history>-<gen>-<n>.xml"),
 * so a state store that starts over never serves one of those URLs with
 * other content. */
#define RS_HISTORY_LEN 8

/* Parse "<history>-" at the start of s: exactly RS_HISTORY_LEN digits
 * 0-9a-f, then '-'.  Returns the rest of s after the '-', with out (at
 * least RS_HISTORY_LEN + 1 bytes) holding the id, or NULL (out untouched). */
const char *rs_parse_history(const char *s, char *out);

/* Whether s is exactly a history id (nothing before or after). */
int rs_parse_history_id(const char *s);

/* Parse "<id><suffix>" (a Change List: "<id>.xml"): id decimal, 1 to 15
 * digits, without sign or leading zeros (so never 0), followed by exactly
 * suffix.  Returns 1 or 0. */
int rs_parse_id(const char *s, const char *suffix, apr_int64_t *out);

/* ---- Directive values --------------------------------------------------- */

/* A whole number from min to max, as apr_strtoi64 reads base 10 (leading
 * white space and one sign allowed, leading zeros allowed), nothing after
 * the digits.  Out-of-range values, including ones beyond 64 bits, are
 * rejected.  Returns 1 or 0. */
int rs_parse_int(const char *s, apr_int64_t min, apr_int64_t max, apr_int64_t *out);

/* A positive duration: a whole number of seconds, optionally followed by
 * one unit letter s, m, h or d ("90", "90s", "15m", "12h", "30d"), at most
 * 3650 days.  Returns 1 or 0. */
int rs_parse_duration(const char *s, apr_interval_time_t *out);

/* A short delay from 0 to one hour: whole milliseconds with the unit
 * "ms" ("100ms", "0ms"), "0", or a duration as above ("2s", "1m").
 * Returns 1 or 0. */
int rs_parse_delay(const char *s, apr_interval_time_t *out);

/* Outcome of rs_parse_hashes. */
typedef enum rs_parse_hash_rc_t {
    RS_PARSE_OK = 0,
    RS_PARSE_HASH_EMPTY,      /* no word at all */
    RS_PARSE_HASH_NONE_MIXED, /* "none" given with other words; *bad is its index */
    RS_PARSE_HASH_UNKNOWN     /* *bad is the index of an unknown name */
} rs_parse_hash_rc_t;

/* A list of digest names ("md5 sha-256", case-insensitive, see rs_hash.h)
 * or the single word "none" (mask 0).  Words are checked in order; the
 * first problem is reported.  On RS_PARSE_OK *mask holds the RS_HASH_*
 * bits. */
rs_parse_hash_rc_t rs_parse_hashes(int argc, const char *const argv[], unsigned *mask, int *bad);

/* A set name: 1 to max_len letters, digits, '-', '_' or '.', not starting
 * with '.' (it is a URL segment and a file name).  Returns 1 or 0. */
int rs_parse_set_name(const char *name, apr_size_t max_len);

/* An absolute URL-path ("/data") without dot segments, empty segments,
 * query, fragment, '%' escapes, control or non-ASCII bytes, spaces or
 * '"', '<', '>', '\\'.  Returns 1 or 0. */
int rs_parse_url_path(const char *s);

/* An absolute http or https URL with a host, without query or fragment
 * and without characters that must be escaped in a URL.  Returns 1 or 0. */
int rs_parse_url(const char *u);

/* A base URL (ResourceSyncBaseURL): rs_parse_url, and its path, if any,
 * passes rs_parse_url_path.  Returns 1 or 0. */
int rs_parse_base_url(const char *u);

#endif
