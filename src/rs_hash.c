/* rs_hash.c - see rs_hash.h */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <apr_strings.h>
#include "rs_hash.h"

static const char *const names[RS_HASH_COUNT] = { "md5", "sha-1", "sha-256", "sha-512" };

static const EVP_MD *md_of(int i)
{
    switch (i) {
    case 0: return EVP_md5();
    case 1: return EVP_sha1();
    case 2: return EVP_sha256();
    default: return EVP_sha512();
    }
}

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

typedef struct {
    EVP_MD_CTX *ctx[RS_HASH_COUNT];
} ctxs_t;

static void ctxs_init(ctxs_t *c, unsigned mask)
{
    int i;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        c->ctx[i] = NULL;
        if (mask & (1u << i)) {
            c->ctx[i] = EVP_MD_CTX_new();
            EVP_DigestInit_ex(c->ctx[i], md_of(i), NULL);
        }
    }
}

static void ctxs_update(ctxs_t *c, const void *data, size_t len)
{
    int i;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        if (c->ctx[i]) {
            EVP_DigestUpdate(c->ctx[i], data, len);
        }
    }
}

static void ctxs_final(ctxs_t *c, char hex[RS_HASH_COUNT][RS_HASH_HEXMAX], int ok)
{
    int i;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        if (c->ctx[i]) {
            unsigned char d[EVP_MAX_MD_SIZE];
            unsigned n = 0;
            EVP_DigestFinal_ex(c->ctx[i], d, &n);
            if (ok) {
                to_hex(hex[i], d, n);
            }
            EVP_MD_CTX_free(c->ctx[i]);
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
    /* 64 KiB sequential reads into a stack buffer: no shared state, so
     * hashing may run on several threads at once. */
    unsigned char buf[1 << 16];
    ctxs_t c;
    apr_off_t total = 0;
    apr_status_t rv = APR_SUCCESS;
    int werr = 0;

    ctxs_init(&c, mask);
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
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
        ctxs_update(&c, buf, (size_t)n);
        if (outfd >= 0 && !werr) {
            werr = write_all(outfd, buf, (size_t)n);
        }
        total += n;
        if (progress) {
            *progress = total;
        }
    }
    ctxs_final(&c, hex, rv == APR_SUCCESS);
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
    ctxs_t c;
    ctxs_init(&c, mask);
    ctxs_update(&c, data, len);
    ctxs_final(&c, hex, 1);
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
