/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hash.c - see rs_hash.h */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <apr_atomic.h>
#include <apr_strings.h>
#include "rs_hash.h"

static const char *const names[RS_HASH_COUNT] = { "md5", "sha-1", "sha-256", "sha-512" };

static const EVP_MD *md_legacy(int i)
{
    switch (i) {
    case 0:
        return EVP_md5();
    case 1:
        return EVP_sha1();
    case 2:
        return EVP_sha256();
    default:
        return EVP_sha512();
    }
}

#if OPENSSL_VERSION_NUMBER >= 0x30000000L
/* The algorithms fetched once per process: with OpenSSL 3 a digest
 * named by EVP_sha256() and the like is looked up again (under a lock)
 * at every EVP_DigestInit_ex, which costs more than digesting a small
 * file.  A slot is filled once and never freed (it lives as long as the
 * process); two threads racing for it keep the first and free the
 * other. */
static volatile void *fetched[RS_HASH_COUNT];
static const char *const ossl_names[RS_HASH_COUNT] = { "MD5", "SHA1", "SHA256", "SHA512" };

static const EVP_MD *md_of(int i)
{
    EVP_MD *md = (EVP_MD *)fetched[i];

    if (!md) {
        if (!(md = EVP_MD_fetch(NULL, ossl_names[i], NULL))) {
            return md_legacy(i); /* e.g. a provider without it: the old way */
        }
        if (apr_atomic_casptr(&fetched[i], md, NULL) != NULL) {
            EVP_MD_free(md);
            md = (EVP_MD *)fetched[i];
        }
    }
    return md;
}

static apr_status_t forget_fetched(void *data)
{
    int i;

    (void)data;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        EVP_MD *md = (EVP_MD *)apr_atomic_xchgptr(&fetched[i], NULL);
        if (md) {
            EVP_MD_free(md);
        }
    }
    return APR_SUCCESS;
}

void rs_hash_forget_on(apr_pool_t *p)
{
    apr_pool_cleanup_register(p, NULL, forget_fetched, apr_pool_cleanup_null);
}
#else
#define md_of md_legacy

void rs_hash_forget_on(apr_pool_t *p)
{
    (void)p;
}
#endif

const char *rs_hash_name(int i)
{
    return (i >= 0 && i < RS_HASH_COUNT) ? names[i] : NULL;
}

unsigned rs_hash_bit(const char *name)
{
    int i;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        if (!strcasecmp(name, names[i])) {
            return 1u << i;
        }
    }
    return 0;
}

static void to_hex(char *out, const unsigned char *d, unsigned n)
{
    static const char hex[] = "0123456789abcdef";
    unsigned i;
    for (i = 0; i < n; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[2 * n] = '\0';
}

void rs_hash_begin(rs_hash_ctx_t *c, unsigned mask)
{
    int i;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        c->md[i] = NULL;
        if (mask & (1u << i)) {
            EVP_MD_CTX *ctx = EVP_MD_CTX_new();
            EVP_DigestInit_ex(ctx, md_of(i), NULL);
            c->md[i] = ctx;
        }
    }
}

void rs_hash_update(rs_hash_ctx_t *c, const void *data, apr_size_t len)
{
    int i;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        if (c->md[i]) {
            EVP_DigestUpdate((EVP_MD_CTX *)c->md[i], data, len);
        }
    }
}

void rs_hash_end(rs_hash_ctx_t *c, char hex[RS_HASH_COUNT][RS_HASH_HEXMAX], int ok)
{
    int i;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        if (c->md[i]) {
            unsigned char d[EVP_MAX_MD_SIZE];
            unsigned n = 0;
            EVP_DigestFinal_ex((EVP_MD_CTX *)c->md[i], d, &n);
            if (ok) {
                to_hex(hex[i], d, n);
            }
            EVP_MD_CTX_free((EVP_MD_CTX *)c->md[i]);
            c->md[i] = NULL;
        }
    }
}

apr_status_t rs_hash_fd(int fd, unsigned mask, char hex[RS_HASH_COUNT][RS_HASH_HEXMAX],
                        apr_off_t *nread)
{
    return rs_hash_fd_progress(fd, mask, hex, nread, NULL);
}

apr_status_t rs_hash_fd_progress(int fd, unsigned mask, char hex[RS_HASH_COUNT][RS_HASH_HEXMAX],
                                 apr_off_t *nread, volatile apr_int64_t *progress)
{
    return rs_hash_fd_tee(fd, mask, hex, nread, progress, -1, NULL);
}

/* Write all of buf to fd; 0 or an errno. */
static int write_all(int fd, const unsigned char *buf, size_t len)
{
    while (len) {
        ssize_t w = write(fd, buf, len);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

apr_status_t rs_hash_fd_tee(int fd, unsigned mask, char hex[RS_HASH_COUNT][RS_HASH_HEXMAX],
                            apr_off_t *nread, volatile apr_int64_t *progress, int outfd,
                            int *copy_err)
{
    return rs_hash_fd_upto(fd, mask, hex, -1, nread, progress, outfd, copy_err);
}

apr_status_t rs_hash_fd_upto(int fd, unsigned mask, char hex[RS_HASH_COUNT][RS_HASH_HEXMAX],
                             apr_off_t expect, apr_off_t *nread, volatile apr_int64_t *progress,
                             int outfd, int *copy_err)
{
    /* 64 KiB sequential reads into a stack buffer: no shared state, so
     * hashing may run on several threads at once. */
    unsigned char buf[1 << 16];
    rs_hash_ctx_t c;
    apr_off_t total = 0;
    apr_status_t rv = APR_SUCCESS;
    int werr = 0;

    rs_hash_begin(&c, mask);
    for (;;) {
        ssize_t n;
        if (expect >= 0 && total == expect) {
            break;
        }
        n = read(fd, buf, sizeof(buf));
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            rv = errno;
            break;
        }
        if (n == 0) {
            break;
        }
        rs_hash_update(&c, buf, (size_t)n);
        if (outfd >= 0 && !werr) {
            werr = write_all(outfd, buf, (size_t)n);
        }
        total += n;
        if (progress) {
            *progress = total;
        }
    }
    rs_hash_end(&c, hex, rv == APR_SUCCESS);
    if (nread) {
        *nread = total;
    }
    if (copy_err) {
        *copy_err = werr;
    }
    return rv;
}

void rs_hash_buf(const void *data, apr_size_t len, unsigned mask,
                 char hex[RS_HASH_COUNT][RS_HASH_HEXMAX])
{
    rs_hash_ctx_t c;
    rs_hash_begin(&c, mask);
    rs_hash_update(&c, data, len);
    rs_hash_end(&c, hex, 1);
}

char *rs_hash_attr(apr_pool_t *p, unsigned mask, const char *const hex[RS_HASH_COUNT])
{
    char *out = NULL;
    int i;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        if ((mask & (1u << i)) && hex[i] && *hex[i]) {
            out = out ? apr_pstrcat(p, out, " ", names[i], ":", hex[i], NULL)
                      : apr_pstrcat(p, names[i], ":", hex[i], NULL);
        }
    }
    return out;
}
