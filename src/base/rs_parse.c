/* SPDX-License-Identifier: Apache-2.0 */
/* rs_parse.c - see rs_parse.h */
#include <string.h>
#include <apr_lib.h>
#include <apr_pools.h>
#include <apr_strings.h>
#include <apr_uri.h>
#include "rs_hash.h"
#include "rs_parse.h"

int rs_parse_request_path(const char *rest, rs_request_path_t *out)
{
    const char *slash, *doc;

    if (*rest != '/' || !(slash = strchr(rest + 1, '/'))) {
        return 0;
    }
    out->set = rest + 1;
    out->set_len = (apr_size_t)(slash - rest - 1);
    out->kind = RS_DOC_NONE;
    out->arg = NULL;
    doc = slash + 1;
    if (!strcmp(doc, "capabilitylist.xml")) {
        out->kind = RS_DOC_CAPABILITY;
    }
    else if (!strcmp(doc, "resourcelist.xml")) {
        out->kind = RS_DOC_RESOURCELIST;
    }
    else if (!strncmp(doc, "resourcelist/", 13)) {
        out->kind = RS_DOC_RESOURCELIST_PART;
        out->arg = doc + 13;
    }
    else if (!strcmp(doc, "changelist.xml")) {
        out->kind = RS_DOC_CHANGELIST;
    }
    else if (!strncmp(doc, "changelist/", 11)) {
        out->kind = RS_DOC_CHANGELIST_PART;
        out->arg = doc + 11;
    }
    else if (!strcmp(doc, "resourcedump.xml")) {
        out->kind = RS_DOC_RESOURCEDUMP;
    }
    else if (!strncmp(doc, "resourcedump/", 13)) {
        out->kind = RS_DOC_RESOURCEDUMP_PART;
        out->arg = doc + 13;
    }
    else if (!strcmp(doc, "changedump.xml")) {
        out->kind = RS_DOC_CHANGEDUMP;
    }
    else if (!strncmp(doc, "changedump/", 11)) {
        out->kind = RS_DOC_CHANGEDUMP_PART;
        out->arg = doc + 11;
    }
    else if (!strcmp(doc, "notify/change") || !strcmp(doc, "notify/framework")) {
        out->kind = RS_DOC_NOTIFY;
        out->arg = doc + 7;
    }
    return 1;
}

/* Read 1 to max_digits decimal digits without a leading zero from *sp
 * into *v, advancing *sp.  max_digits <= 18 keeps *v below 10^18. */
static int read_positive(const char **sp, int max_digits, apr_uint64_t *v)
{
    const char *s = *sp;
    apr_uint64_t k = 0;
    int digits = 0;

    if (*s == '0' || !apr_isdigit(*s)) {
        return 0;
    }
    while (apr_isdigit(*s)) {
        if (++digits > max_digits) {
            return 0;
        }
        k = k * 10 + (apr_uint64_t)(*s++ - '0');
    }
    *sp = s;
    *v = k;
    return 1;
}

int rs_parse_part(const char *s, apr_uint64_t *gen, int *n)
{
    apr_uint64_t g, k;

    if (!read_positive(&s, 18, &g) || *s++ != '-' || !read_positive(&s, 9, &k)
        || strcmp(s, ".xml")) {
        return 0;
    }
    *gen = g;
    *n = (int)k;
    return 1;
}

int rs_parse_dump_part(const char *s, char *key, int *manifest)
{
    const char *k = s;
    int m, i;

    for (i = 0; i < RS_PARSE_DUMP_KEY_LEN; i++) {
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) {
            return 0;
        }
    }
    s += RS_PARSE_DUMP_KEY_LEN;
    if (!strcmp(s, ".zip")) {
        m = 0;
    }
    else if (!strcmp(s, ".xml")) {
        m = 1;
    }
    else {
        return 0;
    }
    memcpy(key, k, RS_PARSE_DUMP_KEY_LEN);
    key[RS_PARSE_DUMP_KEY_LEN] = '\0';
    *manifest = m;
    return 1;
}

int rs_parse_cdump_part(const char *s, apr_int64_t *id, int *rev, int *manifest)
{
    apr_uint64_t k, r = 0;
    int m;

    if (!read_positive(&s, 15, &k) || (*s == '-' && (++s, !read_positive(&s, 9, &r)))) {
        return 0;
    }
    if (!strcmp(s, ".zip")) {
        m = 0;
    }
    else if (!strcmp(s, ".xml")) {
        m = 1;
    }
    else {
        return 0;
    }
    *id = (apr_int64_t)k;
    *rev = (int)r;
    *manifest = m;
    return 1;
}

int rs_parse_cdump_index_part(const char *s, int *n)
{
    apr_uint64_t k;

    if (strncmp(s, "part-", 5)) {
        return 0;
    }
    s += 5;
    if (!read_positive(&s, 9, &k) || strcmp(s, ".xml")) {
        return 0;
    }
    *n = (int)k;
    return 1;
}

const char *rs_parse_history(const char *s, char *out)
{
    int i;

    for (i = 0; i < RS_HISTORY_LEN; i++) {
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) {
            return NULL;
        }
    }
    if (s[RS_HISTORY_LEN] != '-') {
        return NULL;
    }
    memcpy(out, s, RS_HISTORY_LEN);
    out[RS_HISTORY_LEN] = '\0';
    return s + RS_HISTORY_LEN + 1;
}

int rs_parse_history_id(const char *s)
{
    char buf[RS_HISTORY_LEN + 2], id[RS_HISTORY_LEN + 1];

    if (strlen(s) != RS_HISTORY_LEN) {
        return 0;
    }
    memcpy(buf, s, RS_HISTORY_LEN);
    buf[RS_HISTORY_LEN] = '-';
    buf[RS_HISTORY_LEN + 1] = '\0';
    return rs_parse_history(buf, id) != NULL;
}

int rs_parse_id(const char *s, const char *suffix, apr_int64_t *out)
{
    apr_uint64_t v;

    if (!read_positive(&s, 15, &v) || strcmp(s, suffix)) {
        return 0;
    }
    *out = (apr_int64_t)v;
    return 1;
}

int rs_parse_int(const char *s, apr_int64_t min, apr_int64_t max, apr_int64_t *out)
{
    char *end;
    apr_int64_t v = apr_strtoi64(s, &end, 10);

    /* On overflow apr_strtoi64 returns the extreme value of the sign
     * (errno ERANGE); the range check rejects it unless min or max is
     * that extreme itself, which no caller uses. */
    if (*end || end == s || v < min || v > max) {
        return 0;
    }
    *out = v;
    return 1;
}

int rs_parse_duration(const char *s, apr_interval_time_t *out)
{
    char *end;
    apr_int64_t v = apr_strtoi64(s, &end, 10), mul;

    if (end == s || v <= 0) {
        return 0;
    }
    switch (*end) {
    case '\0':
    case 's':
        mul = 1;
        break;
    case 'm':
        mul = 60;
        break;
    case 'h':
        mul = 3600;
        break;
    case 'd':
        mul = 86400;
        break;
    default:
        return 0;
    }
    if (*end && end[1]) {
        return 0;
    }
    if (v > (apr_int64_t)3650 * 86400 / mul) {
        return 0;
    }
    *out = apr_time_from_sec(v * mul);
    return 1;
}

int rs_parse_delay(const char *s, apr_interval_time_t *out)
{
    size_t n = strlen(s), i;
    apr_int64_t ms = 0;
    apr_interval_time_t d;

    if (n > 2 && n <= 9 && !strcmp(s + n - 2, "ms")) {
        for (i = 0; i < n - 2; i++) {
            if (!apr_isdigit(s[i])) {
                return 0;
            }
            ms = ms * 10 + (s[i] - '0');
        }
        if (ms > 3600 * 1000) {
            return 0;
        }
        *out = (apr_interval_time_t)ms * 1000;
        return 1;
    }
    if (!strcmp(s, "0")) {
        *out = 0;
        return 1;
    }
    if (!rs_parse_duration(s, &d) || d > apr_time_from_sec(3600)) {
        return 0;
    }
    *out = d;
    return 1;
}

rs_parse_hash_rc_t rs_parse_hashes(int argc, const char *const argv[], unsigned *mask, int *bad)
{
    unsigned m = 0, bit;
    int i;

    if (argc < 1) {
        return RS_PARSE_HASH_EMPTY;
    }
    for (i = 0; i < argc; i++) {
        if (!strcasecmp(argv[i], "none")) {
            if (argc > 1) {
                *bad = i;
                return RS_PARSE_HASH_NONE_MIXED;
            }
            continue;
        }
        if (!(bit = rs_hash_bit(argv[i]))) {
            *bad = i;
            return RS_PARSE_HASH_UNKNOWN;
        }
        m |= bit;
    }
    *mask = m;
    return RS_PARSE_OK;
}

int rs_parse_set_name(const char *name, apr_size_t max_len)
{
    const char *s;

    for (s = name; *s; s++) {
        if (!apr_isalnum(*s) && *s != '-' && *s != '_' && *s != '.') {
            return 0;
        }
    }
    return *name && name[0] != '.' && (apr_size_t)(s - name) <= max_len;
}

int rs_parse_url_path(const char *s)
{
    if (*s != '/' || strstr(s, "/../") || strstr(s, "/./") || strstr(s, "//")) {
        return 0;
    }
    for (; *s; s++) {
        if ((unsigned char)*s <= ' ' || *s == '?' || *s == '#' || *s == '%' || *s == '"'
            || *s == '<' || *s == '>' || *s == '\\' || (unsigned char)*s >= 0x7f) {
            return 0;
        }
    }
    return 1;
}

/* Parse u as an http(s) URL into *uri (allocated from p); 1 if it has a
 * host and neither query nor fragment nor characters to escape. */
static int parse_http_url(apr_pool_t *p, const char *u, apr_uri_t *uri)
{
    if (strncasecmp(u, "http://", 7) && strncasecmp(u, "https://", 8)) {
        return 0;
    }
    return apr_uri_parse(p, u, uri) == APR_SUCCESS && uri->hostname && *uri->hostname && !uri->query
           && !uri->fragment && !strpbrk(u, " \t\"<>\\^`{|}");
}

int rs_parse_url(const char *u)
{
    apr_uri_t uri;
    apr_pool_t *p;
    int ok;

    if (apr_pool_create(&p, NULL) != APR_SUCCESS) {
        return 0;
    }
    ok = parse_http_url(p, u, &uri);
    apr_pool_destroy(p);
    return ok;
}

int rs_parse_base_url(const char *u)
{
    apr_uri_t uri;
    apr_pool_t *p;
    int ok;

    if (apr_pool_create(&p, NULL) != APR_SUCCESS) {
        return 0;
    }
    ok = parse_http_url(p, u, &uri) && (!uri.path || rs_parse_url_path(uri.path));
    apr_pool_destroy(p);
    return ok;
}
