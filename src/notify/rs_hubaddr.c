/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubaddr.c - address classes and allow lists of hub callbacks (see
 * rs_hubaddr.h). */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include "rs_hubaddr.h"

/* A block of addresses that is not an ordinary public destination. */
typedef struct special_t {
    int len;
    unsigned char net[16];
    int bits;
    const char *name;
} special_t;

static const special_t special4[] = {
    { 4, { 0 }, 8, "unspecified" }, /* 0.0.0.0/8 "this network" */
    { 4, { 10 }, 8, "private" },
    { 4, { 100, 64 }, 10, "shared (carrier-grade NAT)" },
    { 4, { 127 }, 8, "loopback" },
    { 4, { 169, 254 }, 16, "link-local" },
    { 4, { 172, 16 }, 12, "private" },
    { 4, { 192, 0, 0 }, 24, "reserved" }, /* IETF protocol assignments */
    { 4, { 192, 0, 2 }, 24, "documentation" },
    { 4, { 192, 168 }, 16, "private" },
    { 4, { 198, 18 }, 15, "benchmarking" },
    { 4, { 198, 51, 100 }, 24, "documentation" },
    { 4, { 203, 0, 113 }, 24, "documentation" },
    { 4, { 224 }, 4, "multicast" },
    { 4, { 240 }, 4, "reserved" }, /* and 255.255.255.255 */
};

static const special_t special6[] = {
    { 16, { 0 }, 128, "unspecified" },
    { 16, { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 }, 128, "loopback" },
    { 16, { 0x00, 0x64, 0xff, 0x9b, 0, 1 }, 48, "private" }, /* local-use NAT64 */
    { 16, { 0x01, 0x00 }, 64, "reserved" },                  /* discard-only */
    { 16, { 0x20, 0x01, 0x0d, 0xb8 }, 32, "documentation" },
    { 16, { 0x20, 0x01, 0x00, 0x00 }, 32, "tunnel (Teredo)" },
    { 16, { 0xfc }, 7, "private" }, /* unique local */
    { 16, { 0xfe, 0x80 }, 10, "link-local" },
    { 16, { 0xfe, 0xc0 }, 10, "private" }, /* site-local */
    { 16, { 0xff }, 8, "multicast" },
};

/* Whether the first bits of a and b are equal. */
static int prefix_eq(const unsigned char *a, const unsigned char *b, int bits)
{
    int whole = bits / 8, rest = bits % 8;
    if (memcmp(a, b, (size_t)whole)) {
        return 0;
    }
    if (rest) {
        unsigned char mask = (unsigned char)(0xff << (8 - rest));
        return (a[whole] & mask) == (b[whole] & mask);
    }
    return 1;
}

static const char *lookup(const special_t *t, size_t n, const unsigned char *addr)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (prefix_eq(addr, t[i].net, t[i].bits)) {
            return t[i].name;
        }
    }
    return NULL;
}

/* The IPv4 address an IPv6 address stands for (mapped ::ffff:0:0/96,
 * compatible ::/96, NAT64 64:ff9b::/96, 6to4 2002::/16), or NULL. */
static const unsigned char *embedded_v4(const unsigned char *a)
{
    static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    static const unsigned char zero[12] = { 0 };
    static const unsigned char nat64[12] = { 0x00, 0x64, 0xff, 0x9b };
    if (!memcmp(a, mapped, 12) || !memcmp(a, nat64, 12)) {
        return a + 12;
    }
    /* ::/96 but :: and ::1 themselves (classed as IPv6). */
    if (!memcmp(a, zero, 12) && (a[12] || a[13] || a[14] || a[15] > 1)) {
        return a + 12;
    }
    if (a[0] == 0x20 && a[1] == 0x02) {
        return a + 2;
    }
    return NULL;
}

const char *rs_hubaddr_class(const unsigned char *addr, int len)
{
    const unsigned char *v4;
    if (len == 4) {
        return lookup(special4, sizeof(special4) / sizeof(special4[0]), addr);
    }
    if (len != 16) {
        return "unknown family";
    }
    if ((v4 = embedded_v4(addr))) {
        return lookup(special4, sizeof(special4) / sizeof(special4[0]), v4);
    }
    return lookup(special6, sizeof(special6) / sizeof(special6[0]), addr);
}

static int host_name(const char *s)
{
    const char *c;
    if (!*s || strlen(s) > 253 || *s == '.' || *s == '-') {
        return 0;
    }
    for (c = s; *c; c++) {
        if (!apr_isalnum(*c) && *c != '-' && *c != '.') {
            return 0;
        }
    }
    return 1;
}

int rs_hubaddr_allow_parse(apr_pool_t *p, const char *s, rs_hubaddr_allow_t *out)
{
    const char *slash = strchr(s, '/');
    char *ip = slash ? apr_pstrndup(p, s, (apr_size_t)(slash - s)) : apr_pstrdup(p, s);
    apr_int64_t bits;
    int i;

    memset(out, 0, sizeof(*out));
    if (inet_pton(AF_INET, ip, out->addr) == 1) {
        out->len = 4;
    }
    else if (inet_pton(AF_INET6, ip, out->addr) == 1) {
        out->len = 16;
    }
    else if (!slash && host_name(s)) {
        out->host = apr_pstrdup(p, s);
        return 1;
    }
    else {
        return 0;
    }
    out->bits = out->len * 8;
    if (slash) {
        char *end;
        if (!apr_isdigit(slash[1]) || strlen(slash + 1) > 3) {
            return 0;
        }
        bits = apr_strtoi64(slash + 1, &end, 10);
        if (*end || bits > out->len * 8) {
            return 0;
        }
        out->bits = (int)bits;
    }
    /* Host bits cleared: 10.1.2.3/8 stands for 10.0.0.0/8. */
    for (i = 0; i < out->len; i++) {
        int keep = out->bits - i * 8;
        if (keep <= 0) {
            out->addr[i] = 0;
        }
        else if (keep < 8) {
            out->addr[i] &= (unsigned char)(0xff << (8 - keep));
        }
    }
    return 1;
}

int rs_hubaddr_allow_addr(const apr_array_header_t *allow, const unsigned char *addr, int len)
{
    static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    const unsigned char *v4 =
        len == 4 ? addr : (len == 16 && !memcmp(addr, mapped, 12) ? addr + 12 : NULL);
    int i;

    for (i = 0; allow && i < allow->nelts; i++) {
        const rs_hubaddr_allow_t *a = &APR_ARRAY_IDX(allow, i, rs_hubaddr_allow_t);
        if (a->host) {
            continue;
        }
        if ((a->len == len && prefix_eq(addr, a->addr, a->bits))
            || (a->len == 4 && v4 && prefix_eq(v4, a->addr, a->bits))) {
            return 1;
        }
    }
    return 0;
}

int rs_hubaddr_allow_host(const apr_array_header_t *allow, const char *host)
{
    int i;
    for (i = 0; allow && i < allow->nelts; i++) {
        const rs_hubaddr_allow_t *a = &APR_ARRAY_IDX(allow, i, rs_hubaddr_allow_t);
        if (a->host && !strcasecmp(a->host, host)) {
            return 1;
        }
    }
    return 0;
}

const char *rs_hubaddr_check(const apr_array_header_t *allow, const unsigned char *addr, int len)
{
    const char *why = rs_hubaddr_class(addr, len);
    return why && !rs_hubaddr_allow_addr(allow, addr, len) ? why : NULL;
}

int rs_hubaddr_literal(const char *host, unsigned char *addr, int *len)
{
    struct in_addr a4;
    const char *c;

    memset(addr, 0, 16);
    if (inet_pton(AF_INET6, host, addr) == 1) {
        *len = 16;
        return 1;
    }
    /* inet_aton stops at white space; a host never holds any, but the
     * text must be the address and nothing else. */
    for (c = host; *c; c++) {
        if (apr_isspace(*c)) {
            return 0;
        }
    }
    if (*host && inet_aton(host, &a4)) {
        memcpy(addr, &a4, 4);
        *len = 4;
        return 1;
    }
    return 0;
}

const char *rs_hubaddr_key(apr_pool_t *p, const unsigned char *addr, int len)
{
    static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    char buf[INET6_ADDRSTRLEN + 4];
    unsigned char net[16] = { 0 };

    if (len == 16 && !memcmp(addr, mapped, 12)) {
        addr += 12;
        len = 4;
    }
    if (len == 4) {
        return apr_psprintf(p, "%u.%u.%u.%u", addr[0], addr[1], addr[2], addr[3]);
    }
    memcpy(net, addr, 8);
    if (len != 16 || !inet_ntop(AF_INET6, net, buf, sizeof(buf))) {
        return "?";
    }
    return apr_pstrcat(p, buf, "/64", NULL);
}

const char *rs_hubaddr_text(apr_pool_t *p, const unsigned char *addr, int len)
{
    char buf[INET6_ADDRSTRLEN];
    if ((len != 4 && len != 16)
        || !inet_ntop(len == 4 ? AF_INET : AF_INET6, addr, buf, sizeof(buf))) {
        return "?";
    }
    return apr_pstrdup(p, buf);
}

const char *rs_hubaddr_key_text(apr_pool_t *p, const char *text)
{
    unsigned char addr[16];

    if (text && inet_pton(AF_INET, text, addr) == 1) {
        return rs_hubaddr_key(p, addr, 4);
    }
    if (text && inet_pton(AF_INET6, text, addr) == 1) {
        return rs_hubaddr_key(p, addr, 16);
    }
    return NULL;
}

const char *rs_hubaddr_host_key(apr_pool_t *p, const char *host)
{
    unsigned char addr[16];
    char *name, *c;
    apr_size_t n;
    int len;

    if (rs_hubaddr_literal(host, addr, &len)) {
        return rs_hubaddr_key(p, addr, len);
    }
    name = apr_pstrdup(p, host);
    for (c = name; *c; c++) {
        *c = (char)apr_tolower(*c);
    }
    n = strlen(name);
    if (n > 1 && name[n - 1] == '.') {
        name[n - 1] = '\0';
    }
    return name;
}
