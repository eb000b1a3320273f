/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubgate.c - see rs_hubgate.h */
#include <string.h>
#include <apr_atomic.h>
#include "rs_hubgate.h"

void rs_hubgate_init(rs_hubgate_t *g, apr_uint64_t seed)
{
    memset(g, 0, sizeof(*g));
    g->seed = seed;
}

/* Subtract n from *w, stopping at zero (a release that meets a count set
 * from a listing meanwhile must not wrap around). */
static void sub_floor(volatile apr_uint32_t *w, apr_uint32_t n)
{
    apr_uint32_t cur, next;
    do {
        cur = apr_atomic_read32(w);
        next = cur > n ? cur - n : 0;
    } while (apr_atomic_cas32(w, next, cur) != cur);
}

int rs_hubgate_reserve(rs_hubgate_t *g, apr_uint32_t n, apr_uint32_t max_count,
                       apr_uint32_t max_bytes)
{
    apr_uint32_t c, b;

    if (n > max_bytes) {
        return 0;
    }
    c = apr_atomic_add32(&g->count, 1);
    b = apr_atomic_add32(&g->bytes, n);

    if (c >= max_count || b > max_bytes || n > max_bytes - b) {
        sub_floor(&g->count, 1);
        sub_floor(&g->bytes, n);
        return 0;
    }
    return 1;
}

void rs_hubgate_release(rs_hubgate_t *g, apr_uint32_t count, apr_uint32_t n)
{
    sub_floor(&g->count, count);
    sub_floor(&g->bytes, n);
}

void rs_hubgate_set(rs_hubgate_t *g, apr_uint32_t count, apr_uint32_t bytes)
{
    apr_atomic_set32(&g->count, count);
    apr_atomic_set32(&g->bytes, bytes);
}

int rs_hubgate_full(rs_hubgate_t *g)
{
    return apr_atomic_cas32(&g->full, 1, 0) == 0;
}

int rs_hubgate_eased(rs_hubgate_t *g, apr_uint32_t n, apr_uint32_t max_count,
                     apr_uint32_t max_bytes)
{
    apr_uint64_t c, b;

    if (!apr_atomic_read32(&g->full)) {
        return 0;
    }
    /* The counts before this reservation. */
    c = apr_atomic_read32(&g->count);
    b = apr_atomic_read32(&g->bytes);
    c = c ? c - 1 : 0;
    b = b > n ? b - n : 0;
    if (c * 4 > (apr_uint64_t)max_count * 3 || b * 4 > (apr_uint64_t)max_bytes * 3) {
        return 0;
    }
    return apr_atomic_cas32(&g->full, 0, 1) == 1;
}

/* FNV-1a over the seed's bytes, then the key's; never 0 (a free slot). */
static apr_uint64_t hash(apr_uint64_t seed, const char *key)
{
    apr_uint64_t h = APR_UINT64_C(14695981039346656037);
    int i;
    for (i = 0; i < 8; i++) {
        h = (h ^ ((seed >> (8 * i)) & 0xff)) * APR_UINT64_C(1099511628211);
    }
    for (; *key; key++) {
        h = (h ^ (unsigned char)*key) * APR_UINT64_C(1099511628211);
    }
    h ^= h >> 29;
    return h ? h : 1;
}

apr_int64_t rs_hubgate_rate(rs_hubgate_t *g, const char *client, apr_time_t now, apr_int64_t n,
                            apr_interval_time_t per)
{
    apr_uint64_t k = hash(g->seed, client);
    rs_hubgate_slot_t *set = &g->rate[(k % (RS_HUBGATE_SLOTS / RS_HUBGATE_WAYS)) * RS_HUBGATE_WAYS];
    rs_hubgate_slot_t *s = NULL;
    apr_interval_time_t step = n > 0 ? per / n : per;
    apr_time_t tat;
    int i;

    for (i = 0; i < RS_HUBGATE_WAYS && !s; i++) {
        if (set[i].key == k) {
            s = &set[i];
        }
    }
    /* No slot of its own: its bucket is full.  Take a slot whose bucket
     * is full again, else the one closest to full. */
    for (i = 0; i < RS_HUBGATE_WAYS && !s; i++) {
        if (!set[i].key || set[i].tat <= now) {
            s = &set[i];
            s->key = k;
            s->tat = now;
        }
    }
    if (!s) {
        s = &set[0];
        for (i = 1; i < RS_HUBGATE_WAYS; i++) {
            if (set[i].tat < s->tat) {
                s = &set[i];
            }
        }
        s->key = k;
        s->tat = now;
    }
    tat = (s->tat > now ? s->tat : now) + step;
    if (tat - now > per) {
        apr_interval_time_t wait = tat - now - per;
        return (wait + APR_USEC_PER_SEC - 1) / APR_USEC_PER_SEC > 0
                   ? (wait + APR_USEC_PER_SEC - 1) / APR_USEC_PER_SEC
                   : 1;
    }
    s->tat = tat;
    return 0;
}
