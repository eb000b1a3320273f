/* SPDX-License-Identifier: Apache-2.0 */
/* rs_linkenc.c - see rs_links.h: the encoded form of a resource's links.
 *
 * Links are separated by RS (0x1e), the fields of a link by US (0x1f), in
 * this order:
 *   rel US href US pri US type US encoding US length US modified
 *       US md5 US sha-1 US sha-256 US sha-512
 * An absent value is an empty field (pri 0, length and modified -1, NULL
 * strings).  Numbers are decimal.  In the strings every control byte
 * (0x00-0x1f, 0x7f) and "\" is written "\" and two upper-case hex digits,
 * so no value can hold a separator; the decoder undoes that and checks
 * every field (it reads what the store holds: a damaged or forged value
 * gives NULL).  The decoder takes the one form the encoder writes and
 * nothing else, so that decoding and encoding again gives the same
 * bytes (the fuzz harness fuzz_links checks it). */
#include <string.h>
#include <apr_strings.h>
#include <apr_lib.h>
#include "rs_links.h"

#define RS_SEP_LINK  '\x1e'
#define RS_SEP_FIELD '\x1f'
#define NFIELDS      (7 + RS_HASH_COUNT)

static int needs_escape(unsigned char c)
{
    return c < 0x20 || c == 0x7f || c == '\\';
}

static apr_size_t escaped_len(const char *s)
{
    apr_size_t n = 0;
    for (; s && *s; s++) {
        n += needs_escape((unsigned char)*s) ? 3 : 1;
    }
    return n;
}

static char *put_escaped(char *d, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (needs_escape(c)) {
            *d++ = '\\';
            *d++ = hex[c >> 4];
            *d++ = hex[c & 0xf];
        }
        else {
            *d++ = (char)c;
        }
    }
    return d;
}

const char *rs_links_encode(apr_pool_t *p, const apr_array_header_t *links)
{
    apr_size_t n = 0;
    char *out, *d;
    int i, h;

    if (!links || !links->nelts) {
        return NULL;
    }
    for (i = 0; i < links->nelts; i++) {
        const rs_link_t *k = &APR_ARRAY_IDX(links, i, rs_link_t);
        n += escaped_len(k->rel) + escaped_len(k->href) + escaped_len(k->type)
             + escaped_len(k->encoding) + 3 * 24 + NFIELDS;
        for (h = 0; h < RS_HASH_COUNT; h++) {
            n += escaped_len(k->hash[h]);
        }
    }
    d = out = apr_palloc(p, n + 1);
    for (i = 0; i < links->nelts; i++) {
        const rs_link_t *k = &APR_ARRAY_IDX(links, i, rs_link_t);
        if (i) {
            *d++ = RS_SEP_LINK;
        }
        d = put_escaped(d, k->rel);
        *d++ = RS_SEP_FIELD;
        d = put_escaped(d, k->href);
        *d++ = RS_SEP_FIELD;
        if (k->pri > 0) {
            d += apr_snprintf(d, 24, "%d", k->pri);
        }
        *d++ = RS_SEP_FIELD;
        d = put_escaped(d, k->type);
        *d++ = RS_SEP_FIELD;
        d = put_escaped(d, k->encoding);
        *d++ = RS_SEP_FIELD;
        if (k->length >= 0) {
            d += apr_snprintf(d, 24, "%" APR_INT64_T_FMT, k->length);
        }
        *d++ = RS_SEP_FIELD;
        if (k->modified_ns != -1) {
            d += apr_snprintf(d, 24, "%" APR_INT64_T_FMT, k->modified_ns);
        }
        for (h = 0; h < RS_HASH_COUNT; h++) {
            *d++ = RS_SEP_FIELD;
            d = put_escaped(d, k->hash[h]);
        }
    }
    *d = '\0';
    return out;
}

/* A hex digit as the encoder writes it. */
static int upper_hex(char c)
{
    return apr_isdigit(c) || (c >= 'A' && c <= 'F');
}

/* Field [s, e) unescaped in place and NUL-terminated (NULL when empty:
 * *ok stays); *ok = 0 when malformed. */
static const char *field_str(char *s, char *e, int *ok)
{
    char *out = s, *d;
    if (s == e) {
        return NULL;
    }
    /* Most values have no escape: they stay where they are. */
    while (s < e && !needs_escape((unsigned char)*s)) {
        s++;
    }
    d = s;
    while (s < e) {
        unsigned char c = (unsigned char)*s;
        if (c == '\\') {
            int v;
            if (e - s < 3 || !upper_hex(s[1]) || !upper_hex(s[2])) {
                *ok = 0;
                return NULL;
            }
            v = (apr_isdigit(s[1]) ? s[1] - '0' : s[1] - 'A' + 10) * 16
                + (apr_isdigit(s[2]) ? s[2] - '0' : s[2] - 'A' + 10);
            if (!v || !needs_escape((unsigned char)v)) {
                *ok = 0; /* an encoded NUL, or an escape the encoder never writes */
                return NULL;
            }
            *d++ = (char)v;
            s += 3;
        }
        else if (needs_escape(c)) {
            *ok = 0;
            return NULL;
        }
        else {
            *d++ = (char)c;
            s++;
        }
    }
    *d = '\0';
    return out;
}

/* Field [s, e) as a decimal number min..max in its one form (no "+",
 * no leading zero, no "-0"); absent: dflt. */
static apr_int64_t field_num(const char *s, const char *e, apr_int64_t min, apr_int64_t max,
                             apr_int64_t dflt, int *ok)
{
    apr_uint64_t v = 0;
    apr_int64_t r;
    int neg = 0;
    if (s == e) {
        return dflt;
    }
    if (*s == '-') {
        neg = 1;
        s++;
    }
    if (s == e || e - s > 19 || (*s == '0' && e - s > 1) || (neg && *s == '0')) {
        *ok = 0;
        return dflt;
    }
    for (; s < e; s++) {
        if (!apr_isdigit(*s)) {
            *ok = 0;
            return dflt;
        }
        v = v * 10 + (apr_uint64_t)(*s - '0');
    }
    if (v > (apr_uint64_t)APR_INT64_MAX) { /* 19 digits fit apr_uint64_t */
        *ok = 0;
        return dflt;
    }
    r = neg ? -(apr_int64_t)v : (apr_int64_t)v;
    if (r < min || r > max) {
        *ok = 0;
        return dflt;
    }
    return r;
}

/* Field [s, e) as a lower-case hex digest, NUL-terminated in place
 * (absent: NULL). */
static const char *field_hex(char *s, char *e, int *ok)
{
    const char *c;
    if (s == e) {
        return NULL;
    }
    if (e - s >= RS_HASH_HEXMAX) {
        *ok = 0;
        return NULL;
    }
    for (c = s; c < e; c++) {
        if (!apr_isdigit(*c) && !(*c >= 'a' && *c <= 'f')) {
            *ok = 0;
            return NULL;
        }
    }
    *e = '\0';
    return s;
}

/* One link from [s, e), in place; 0 when malformed. */
static int decode_one(char *s, char *e, rs_link_t *k)
{
    char *f[NFIELDS + 1];
    int n = 0, ok = 1, h;
    char *c;

    f[n++] = s;
    for (c = s; (c = memchr(c, RS_SEP_FIELD, (apr_size_t)(e - c))); c++) {
        if (n == NFIELDS) {
            return 0;
        }
        f[n++] = c + 1;
    }
    if (n != NFIELDS) {
        return 0;
    }
    f[NFIELDS] = e + 1;
#define END(i) (f[(i) + 1] - 1)
    /* Numbers first: the strings' NULs go where the separators were. */
    k->pri = (int)field_num(f[2], END(2), 1, 999999, 0, &ok);
    k->length = field_num(f[5], END(5), 0, APR_INT64_MAX, -1, &ok);
    k->modified_ns = field_num(f[6], END(6), -APR_INT64_MAX, APR_INT64_MAX, -1, &ok);
    if (f[6] != END(6) && k->modified_ns == -1) {
        ok = 0; /* -1 is "none", written as an empty field */
    }
    k->rel = field_str(f[0], END(0), &ok);
    k->href = field_str(f[1], END(1), &ok);
    k->type = field_str(f[3], END(3), &ok);
    k->encoding = field_str(f[4], END(4), &ok);
    for (h = 0; h < RS_HASH_COUNT; h++) {
        k->hash[h] = field_hex(f[7 + h], END(7 + h), &ok);
    }
#undef END
    return ok && k->rel && k->href;
}

int rs_links_parse(char *buf, rs_link_t *links, int max)
{
    char *s = buf, *e;
    int n = 0;

    if (!*s) {
        return 0;
    }
    while (1) {
        int last;
        e = strchr(s, RS_SEP_LINK);
        if (!e) {
            e = s + strlen(s);
        }
        last = !*e;
        if (n == max) {
            return -2;
        }
        if (!decode_one(s, e, &links[n++])) {
            return -1;
        }
        if (last) {
            return n;
        }
        s = e + 1;
    }
}

int rs_links_parse_count(const char *s)
{
    int n = 1;
    if (!s || !*s) {
        return 0;
    }
    while ((s = strchr(s, RS_SEP_LINK))) {
        n++;
        s++;
    }
    return n;
}

apr_array_header_t *rs_links_decode(apr_pool_t *p, const char *s)
{
    int n = rs_links_parse_count(s);
    apr_array_header_t *links = apr_array_make(p, n ? n : 1, sizeof(rs_link_t));

    if (n && (links->nelts = rs_links_parse(apr_pstrdup(p, s), (rs_link_t *)links->elts, n)) < 0) {
        return NULL;
    }
    return links;
}
