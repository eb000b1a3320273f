/* SPDX-License-Identifier: Apache-2.0 */
/* rs_entryln.c - see rs_entry.h: the <rs:ln> elements of an entry as the
 * writer puts them (the stored links, then the set's mirrors), for
 * rs_entry_write and both dumps' manifests, and the bound of their bytes
 * for the limits that measure entries without rendering them.  The
 * renderer's fast path (rs_entry.c) gives the same bytes by hand. */
#include <string.h>
#include <apr_strings.h>
#include "rs_entry.h"
#include "rs_hash.h"
#include "rs_links.h"
#include "rs_time.h"
#include "rs_uri.h"

/* The attributes of link k after rel and href, in the one order (see
 * rs_entry.h); the buffers hold the numbers. */
#define LINK_ATTRS 6
static void link_attrs(apr_pool_t *p, unsigned hashes, const rs_link_t *k,
                       rs_xml_attr_t a[LINK_ATTRS], char pri[16], char mod[RS_TIME_BUFSIZE],
                       char len[32])
{
    a[0].name = "pri";
    a[0].value = NULL;
    if (k->pri > 0) {
        apr_snprintf(pri, 16, "%d", k->pri);
        a[0].value = pri;
    }
    a[1].name = "modified";
    a[1].value = k->modified_ns != -1 ? rs_time_format_ns(mod, k->modified_ns) : NULL;
    a[2].name = "hash";
    a[2].value = rs_hash_attr(p, hashes, k->hash);
    a[3].name = "length";
    a[3].value = NULL;
    if (k->length >= 0) {
        apr_snprintf(len, 32, "%" APR_INT64_T_FMT, k->length);
        a[3].value = len;
    }
    a[4].name = "type";
    a[4].value = k->type;
    a[5].name = "encoding";
    a[5].value = k->encoding;
}

/* The mirrors of rules, after the stored links: rel="duplicate", href
 * the mirror's prefix followed by epath, and pri, nothing else (ResourceSync
 * 1.1 section 14.2: the other attributes "should be omitted"). */
static int mirrors_write(rs_xml_t *w, apr_pool_t *p, const rs_links_t *rules, const char *epath)
{
    int i, n;
    const rs_links_mirror_t *m = rs_links_mirrors(rules, &n);

    for (i = 0; i < n; i++) {
        char pri[16];
        rs_xml_attr_t a = { "pri", NULL };
        if (m[i].pri > 0) {
            apr_snprintf(pri, sizeof(pri), "%d", m[i].pri);
            a.value = pri;
        }
        if (rs_xml_ln(w, "duplicate", apr_pstrcat(p, m[i].prefix, epath, NULL), &a, 1) < 0) {
            return -1;
        }
    }
    return 0;
}

int rs_entry_links_write(rs_xml_t *w, apr_pool_t *p, unsigned hashes, const rs_links_t *rules,
                         const char *links, const char *epath)
{
    apr_array_header_t *a;
    int i;

    if (links && *links && (a = rs_links_decode(p, links))) {
        for (i = 0; i < a->nelts; i++) {
            const rs_link_t *k = &APR_ARRAY_IDX(a, i, rs_link_t);
            rs_xml_attr_t attrs[LINK_ATTRS];
            char pri[16], mod[RS_TIME_BUFSIZE], len[32];
            link_attrs(p, hashes, k, attrs, pri, mod, len);
            if (rs_xml_ln(w, k->rel, k->href, attrs, LINK_ATTRS) < 0) {
                return -1;
            }
        }
    }
    return mirrors_write(w, p, rules, epath);
}

/* Bytes of the encoded string field [s, e) once written as an attribute
 * value: 1 a byte that needs no escaping, at most 6 any other ("&quot;",
 * "&#xHH;"). */
static apr_int64_t field_len(const char *s, const char *e)
{
    apr_int64_t n = 0;
    while (s < e) {
        unsigned char c = (unsigned char)*s;
        if (c == '\\') { /* an escaped byte: a control byte, or "\\" as it is */
            n += e - s >= 3 && !strncmp(s, "\\5C", 3) ? 1 : 6;
            s += e - s >= 3 ? 3 : e - s;
            continue;
        }
        n += c < 0x20 || c > 0x7e || c == '<' || c == '>' || c == '&' || c == '"' ? 6 : 1;
        s++;
    }
    return n;
}

/* Bytes of the time field [s, e) (decimal nanoseconds) once formatted. */
static apr_int64_t time_len(const char *s, const char *e)
{
    char buf[RS_TIME_BUFSIZE], num[24];
    if (e - s >= (apr_int64_t)sizeof(num)) {
        return RS_TIME_BUFSIZE - 1;
    }
    memcpy(num, s, (apr_size_t)(e - s));
    num[e - s] = '\0';
    return (apr_int64_t)strlen(rs_time_format_ns(buf, apr_atoi64(num)));
}

/* The element's bytes without attribute values: "    <rs:ln", each
 * attribute's ' name=""', "/>\n". */
#define LN_FIXED (sizeof("    <rs:ln rel=\"\" href=\"\"/>\n") - 1)

/* The bytes of the mirrors' elements for the set-relative path (exact:
 * a prefix is escaped as rs_xml_escaped_len counts, the escaped path is
 * plain). */
static apr_int64_t mirrors_len(const rs_links_t *rules, const char *path)
{
    apr_int64_t n = 0, epath;
    int i, nm;
    const rs_links_mirror_t *m = rs_links_mirrors(rules, &nm);

    if (!nm) {
        return 0;
    }
    epath = (apr_int64_t)rs_uri_escaped_len(path);
    for (i = 0; i < nm; i++) {
        char pri[16];
        n += LN_FIXED + (apr_int64_t)sizeof("duplicate") - 1 + rs_xml_escaped_len(m[i].prefix, 1)
             + epath;
        if (m[i].pri > 0) {
            n += (apr_int64_t)sizeof(" pri=\"\"") - 1
                 + apr_snprintf(pri, sizeof(pri), "%d", m[i].pri);
        }
    }
    return n;
}

/* The bytes of the stored links (encoded). */
static apr_int64_t stored_len(unsigned hashes, const char *links)
{
    apr_int64_t n = 0;
    const char *s = links;
    int field = 0, hashed = 0;

    if (!links || !*links) {
        return 0;
    }
    /* One pass over the encoded form (rs_linkenc.c: fields rel, href,
     * pri, type, encoding, length, modified, then one per hash), not
     * decoded: a bound needs no allocation. */
    n += LN_FIXED;
    while (1) {
        const char *e = s + strcspn(s, "\x1e\x1f");
        if (e > s) {
            switch (field) {
            case 0:
            case 1:
                n += field_len(s, e);
                break;
            case 2:
                n += (apr_int64_t)sizeof(" pri=\"\"") - 1 + (e - s);
                break;
            case 3:
                n += (apr_int64_t)sizeof(" type=\"\"") - 1 + field_len(s, e);
                break;
            case 4:
                n += (apr_int64_t)sizeof(" encoding=\"\"") - 1 + field_len(s, e);
                break;
            case 5:
                n += (apr_int64_t)sizeof(" length=\"\"") - 1 + (e - s);
                break;
            case 6:
                n += (apr_int64_t)sizeof(" modified=\"\"") - 1 + time_len(s, e);
                break;
            default:
                if (field - 7 < RS_HASH_COUNT && (hashes & (1u << (field - 7)))) {
                    n += (hashed++ ? 1 : (apr_int64_t)sizeof(" hash=\"\"") - 1)
                         + (apr_int64_t)strlen(rs_hash_name(field - 7)) + 1 + field_len(s, e);
                }
            }
        }
        if (!*e) {
            return n;
        }
        if (*e == '\x1e') {
            n += LN_FIXED;
            field = 0;
            hashed = 0;
        }
        else {
            field++;
        }
        s = e + 1;
    }
}

apr_int64_t rs_entry_links_len(unsigned hashes, const rs_links_t *rules, const char *links,
                               const char *path)
{
    return stored_len(hashes, links) + mirrors_len(rules, path);
}
