/* SPDX-License-Identifier: Apache-2.0 */
/* rs_websub_util.c - the pure helpers of rs_websub's interface (declared in
 * rs_websub.h): request signing (X-Hub-Signature), form encoding, the
 * retry backoff and Retry-After.  No libcurl here, no state. */
#include <ctype.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <apr_date.h>
#include <apr_strings.h>
#include <apr_time.h>
#include "rs_websub.h"

static const EVP_MD *algo_md(const char *algo)
{
    if (!algo || !strcmp(algo, "sha256"))
        return EVP_sha256();
    if (!strcmp(algo, "sha1"))
        return EVP_sha1();
    if (!strcmp(algo, "sha384"))
        return EVP_sha384();
    if (!strcmp(algo, "sha512"))
        return EVP_sha512();
    return NULL;
}

int rs_websub_sig_known(const char *algo)
{
    return algo_md(algo) != NULL;
}

char *rs_websub_hex(apr_pool_t *p, const unsigned char *d, apr_size_t n)
{
    static const char hx[] = "0123456789abcdef";
    char *s = apr_palloc(p, 2 * n + 1);
    apr_size_t i;
    for (i = 0; i < n; i++) {
        s[2 * i] = hx[d[i] >> 4];
        s[2 * i + 1] = hx[d[i] & 15];
    }
    s[2 * n] = '\0';
    return s;
}

char *rs_websub_sign(apr_pool_t *p, const char *algo, const char *secret, const void *data,
                     apr_size_t len)
{
    const EVP_MD *md = algo_md(algo);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mlen = 0;

    if (!md || !secret) {
        return NULL;
    }
    if (!HMAC(md, secret, (int)strlen(secret), data, len, mac, &mlen)) {
        return NULL;
    }
    return apr_pstrcat(p, algo ? algo : "sha256", "=", rs_websub_hex(p, mac, mlen), NULL);
}

char *rs_websub_urlencode(apr_pool_t *p, const char *s)
{
    static const char hx[] = "0123456789ABCDEF";
    char *out = apr_palloc(p, 3 * strlen(s) + 1), *o = out;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
            *o++ = (char)c;
        }
        else {
            *o++ = '%';
            *o++ = hx[c >> 4];
            *o++ = hx[c & 15];
        }
    }
    *o = '\0';
    return out;
}

apr_int64_t rs_websub_backoff(apr_int64_t base, apr_int64_t cap, unsigned attempt, apr_uint32_t rnd)
{
    apr_int64_t ceil = base;
    unsigned i;

    if (base <= 0 || cap <= 0) {
        return 0;
    }
    for (i = 1; i < attempt && ceil < cap; i++) {
        ceil *= 2; /* stops at cap: no overflow */
    }
    if (ceil > cap) {
        ceil = cap;
    }
    /* Full jitter: uniform in [0, ceil]. */
    return (apr_int64_t)(((apr_uint64_t)rnd * (apr_uint64_t)(ceil + 1)) >> 32);
}

apr_int64_t rs_websub_retry_after(const char *v, apr_int64_t now_sec)
{
    const char *q;
    apr_time_t t;

    if (!v) {
        return -1;
    }
    while (*v == ' ' || *v == '\t')
        v++;
    for (q = v; *q >= '0' && *q <= '9'; q++)
        ;
    if (q > v && q - v < 10) {
        while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n')
            q++;
        if (!*q) {
            return apr_atoi64(v);
        }
        return -1;
    }
    t = apr_date_parse_http(v);
    if (t == APR_DATE_BAD) {
        return -1;
    }
    return apr_time_sec(t) > now_sec ? apr_time_sec(t) - now_sec : 0;
}
