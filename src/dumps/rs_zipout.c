/* SPDX-License-Identifier: Apache-2.0 */
/* rs_zipout.c - see rs_zipout.h */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <apr_strings.h>
#include "rs_zipout.h"

/* The source's state.  The buffer holds the file's bytes [base, base +
 * len), all written by libzip and not yet written out; everything before
 * base is in the file.  pos (the write position) is always within
 * [base, base + len], so the buffered bytes are contiguous. */
struct rs_zipout_t {
    apr_pool_t *pool;
    const char *path;
    int fd; /* -1 unless between BEGIN_WRITE and COMMIT/ROLLBACK */
    unsigned char *buf;
    zip_uint64_t base, len, pos;
    zip_uint64_t size; /* bytes of the file, flushed or not */
    zip_error_t error;
    /* Digests of the file's bytes [0, hashed), all written out and final
     * so far; hashing stops (mask 0) when a write lands before hashed. */
    unsigned mask;
    rs_hash_ctx_t hc;
    zip_uint64_t hashed;
    unsigned wanted; /* the mask asked for (rs_zipout_hash) */
    /* The hasher thread (see hasher_put): started at the first write-out
     * with digests asked for, joined before the digests are ended.  hbuf
     * holds one chunk handed over (hfull) until the thread has digested
     * it; hc belongs to the thread while it runs. */
    int hrun;
    pthread_t ht;
    pthread_mutex_t hm;
    pthread_cond_t hcv;
    unsigned char *hbuf;
    apr_size_t hlen;
    int hfull, hquit;
    int committed;
    int done; /* hex holds the digests of the whole file */
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
};
typedef struct rs_zipout_t zipout_t;

static void *hasher_main(void *data)
{
    zipout_t *o = data;

    pthread_mutex_lock(&o->hm);
    for (;;) {
        while (!o->hfull && !o->hquit) {
            pthread_cond_wait(&o->hcv, &o->hm);
        }
        if (!o->hfull) {
            break;
        }
        pthread_mutex_unlock(&o->hm);
        rs_hash_update(&o->hc, o->hbuf, o->hlen);
        pthread_mutex_lock(&o->hm);
        o->hfull = 0;
        pthread_cond_broadcast(&o->hcv);
    }
    pthread_mutex_unlock(&o->hm);
    return NULL;
}

/* Digest n bytes written out.  The digest runs on a thread of its own
 * (a second core) while libzip goes on writing: the bytes are copied
 * into hbuf once the thread has taken the previous chunk, so digests see
 * every byte in file order.  Without a thread, digested here. */
static void hasher_put(zipout_t *o, const unsigned char *data, apr_size_t n)
{
    if (!o->hrun && o->hbuf) {
        if (pthread_mutex_init(&o->hm, NULL) == 0) {
            if (pthread_cond_init(&o->hcv, NULL) == 0) {
                o->hfull = o->hquit = 0;
                if (pthread_create(&o->ht, NULL, hasher_main, o) == 0) {
                    o->hrun = 1;
                }
                else {
                    pthread_cond_destroy(&o->hcv);
                }
            }
            if (!o->hrun) {
                pthread_mutex_destroy(&o->hm);
            }
        }
        if (!o->hrun) {
            o->hbuf = NULL; /* no thread: digest here from now on */
        }
    }
    if (!o->hrun) {
        rs_hash_update(&o->hc, data, n);
        return;
    }
    pthread_mutex_lock(&o->hm);
    while (o->hfull) {
        pthread_cond_wait(&o->hcv, &o->hm);
    }
    memcpy(o->hbuf, data, n);
    o->hlen = n;
    o->hfull = 1;
    pthread_cond_broadcast(&o->hcv);
    pthread_mutex_unlock(&o->hm);
}

/* Wait until every chunk handed over is digested, and end the thread. */
static void hasher_join(zipout_t *o)
{
    if (!o->hrun) {
        return;
    }
    pthread_mutex_lock(&o->hm);
    o->hquit = 1;
    pthread_cond_broadcast(&o->hcv);
    pthread_mutex_unlock(&o->hm);
    pthread_join(o->ht, NULL);
    pthread_cond_destroy(&o->hcv);
    pthread_mutex_destroy(&o->hm);
    o->hrun = 0;
}

/* Give up the digests (a write before what they cover). */
static void hash_stop(zipout_t *o)
{
    hasher_join(o);
    if (o->mask) {
        rs_hash_end(&o->hc, o->hex, 0);
        o->mask = 0;
    }
}

static zip_int64_t sys_fail(zipout_t *o, int ze, int err)
{
    zip_error_set(&o->error, ze, err);
    return -1;
}

/* Write buffered bytes [0, n) out at base; the rest moves to the front. */
static int flush(zipout_t *o, zip_uint64_t n)
{
    zip_uint64_t done = 0;

    if (o->mask) {
        /* In file order only: [base, base + n) follows what is digested. */
        if (o->base == o->hashed) {
            hasher_put(o, o->buf, (apr_size_t)n);
            o->hashed += n;
        }
        else {
            hash_stop(o);
        }
    }
    while (done < n) {
        ssize_t w = pwrite(o->fd, o->buf + done, (size_t)(n - done), (off_t)(o->base + done));
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return (int)sys_fail(o, ZIP_ER_WRITE, w < 0 ? errno : EIO);
        }
        done += (zip_uint64_t)w;
    }
    if (n < o->len) {
        memmove(o->buf, o->buf + n, (size_t)(o->len - n));
    }
    o->base += n;
    o->len -= n;
    return 0;
}

static zip_int64_t out_write(zipout_t *o, const unsigned char *data, zip_uint64_t n)
{
    zip_uint64_t left = n;

    while (left > 0) {
        zip_uint64_t off = o->pos - o->base, chunk;
        if (off == RS_ZIPOUT_BUF) {
            /* Full: keep the newest bytes, where the next seek back lands. */
            if (flush(o, RS_ZIPOUT_BUF - RS_ZIPOUT_KEEP) < 0) {
                return -1;
            }
            off = o->pos - o->base;
        }
        chunk = RS_ZIPOUT_BUF - off < left ? RS_ZIPOUT_BUF - off : left;
        memcpy(o->buf + off, data, (size_t)chunk);
        data += chunk;
        left -= chunk;
        o->pos += chunk;
        if (o->pos - o->base > o->len) {
            o->len = o->pos - o->base;
        }
        if (o->pos > o->size) {
            o->size = o->pos;
        }
    }
    return (zip_int64_t)n;
}

static zip_int64_t out_seek(zipout_t *o, void *data, zip_uint64_t len)
{
    zip_int64_t to = zip_source_seek_compute_offset(o->pos, o->size, data, len, &o->error);

    if (to < 0) {
        return -1;
    }
    if ((zip_uint64_t)to < o->base || (zip_uint64_t)to > o->base + o->len) {
        /* Outside the buffer: write it out, go on at the new position. */
        if (flush(o, o->len) < 0) {
            return -1;
        }
        o->base = (zip_uint64_t)to;
        if ((zip_uint64_t)to < o->hashed) {
            hash_stop(o); /* bytes already digested are rewritten */
        }
    }
    o->pos = (zip_uint64_t)to;
    return 0;
}

static zip_int64_t out_begin(zipout_t *o)
{
    o->fd = open(o->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (o->fd < 0) {
        return sys_fail(o, ZIP_ER_OPEN, errno);
    }
    o->base = o->len = o->pos = o->size = o->hashed = 0;
    return 0;
}

static zip_int64_t out_commit(zipout_t *o)
{
    int fd = o->fd;

    if (flush(o, o->len) < 0) {
        return -1;
    }
    hasher_join(o);
    if (o->mask && o->hashed == o->size) {
        rs_hash_end(&o->hc, o->hex, 1);
        o->mask = 0;
        o->done = 1;
    }
    hash_stop(o);
    o->committed = 1;
    o->fd = -1;
    if (close(fd) != 0) {
        return sys_fail(o, ZIP_ER_WRITE, errno);
    }
    return 0;
}

/* Drop a file being written. */
static void out_drop(zipout_t *o)
{
    if (o->fd >= 0) {
        close(o->fd);
        o->fd = -1;
        unlink(o->path);
    }
}

static zip_int64_t out_cb(void *baton, void *data, zip_uint64_t len, zip_source_cmd_t cmd)
{
    zipout_t *o = baton;

    switch (cmd) {
    case ZIP_SOURCE_BEGIN_WRITE:
        return out_begin(o);
    case ZIP_SOURCE_WRITE:
        return out_write(o, data, len);
    case ZIP_SOURCE_SEEK_WRITE:
        return out_seek(o, data, len);
    case ZIP_SOURCE_TELL_WRITE:
        return (zip_int64_t)o->pos;
    case ZIP_SOURCE_COMMIT_WRITE:
        return out_commit(o);
    case ZIP_SOURCE_ROLLBACK_WRITE:
        out_drop(o);
        return 0;
    case ZIP_SOURCE_REMOVE:
        out_drop(o);
        if (unlink(o->path) != 0 && errno != ENOENT) {
            return sys_fail(o, ZIP_ER_REMOVE, errno);
        }
        return 0;
    case ZIP_SOURCE_STAT:
        /* Always a new archive: zip_open_from_source takes a read
         * error with ENOENT for "no such archive yet". */
        return sys_fail(o, ZIP_ER_READ, ENOENT);
    case ZIP_SOURCE_ERROR:
        return zip_error_to_data(&o->error, data, len);
    case ZIP_SOURCE_FREE:
        out_drop(o);
        hash_stop(o);
        zip_error_fini(&o->error);
        return 0;
    case ZIP_SOURCE_SUPPORTS:
        return ZIP_SOURCE_SUPPORTS_WRITABLE;
    default:
        /* OPEN, READ, SEEK, TELL...: a new archive is never read. */
        return sys_fail(o, ZIP_ER_OPNOTSUPP, 0);
    }
}

/* Pool cleanup: digest contexts of a source libzip never freed. */
static apr_status_t zipout_cleanup(void *data)
{
    hash_stop(data);
    return APR_SUCCESS;
}

zip_source_t *rs_zipout_source(const char *path, apr_pool_t *p, zip_error_t *ze, rs_zipout_t **out)
{
    zipout_t *o = apr_pcalloc(p, sizeof(*o));
    zip_source_t *src;

    o->path = apr_pstrdup(p, path);
    o->fd = -1;
    o->buf = apr_palloc(p, RS_ZIPOUT_BUF);
    zip_error_init(&o->error);
    src = zip_source_function_create(out_cb, o, ze);
    if (!src) {
        zip_error_fini(&o->error);
        return NULL;
    }
    o->pool = p;
    if (out) {
        *out = o;
    }
    return src;
}

void rs_zipout_hash(rs_zipout_t *o, unsigned mask)
{
    if (mask && !o->mask && !o->done && o->size == 0) {
        o->mask = o->wanted = mask;
        rs_hash_begin(&o->hc, mask);
        o->hbuf = apr_palloc(o->pool, RS_ZIPOUT_BUF);
        apr_pool_cleanup_register(o->pool, o, zipout_cleanup, apr_pool_cleanup_null);
    }
}

int rs_zipout_digests(const rs_zipout_t *o, char hex[RS_HASH_COUNT][RS_HASH_HEXMAX], apr_off_t *len)
{
    if (!o->committed || (o->wanted && !o->done)) {
        return 0;
    }
    if (o->wanted) {
        memcpy(hex, o->hex, sizeof(o->hex));
    }
    *len = (apr_off_t)o->size;
    return 1;
}
