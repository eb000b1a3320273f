/* SPDX-License-Identifier: Apache-2.0 */
/* rs_ring.c - see rs_ring.h */
#include <string.h>
#include <apr_strings.h>
#include "rs_ring.h"

#define RING_MAGIC 0x52535247u /* "RSRG" */

typedef struct {
    apr_int64_t seq; /* 0: empty */
    apr_int64_t datetime;
    apr_int64_t lastmod_ns;
    apr_int64_t size;
    apr_int32_t set;
    apr_int16_t change;
    apr_int16_t overlong; /* no entry kept: readers use the store */
    apr_uint32_t len;     /* bytes of the rendered entry */
    char data[RS_RING_SLOT_DATA];
} slot_t;

/* A slot is 2 KiB (RS_RING_SLOT_DATA). */
typedef char rs_ring_slot_is_2k[sizeof(slot_t) == 2048 ? 1 : -1];

struct rs_ring_t {
    apr_uint32_t magic;
    apr_uint32_t nslots;
    apr_int64_t base; /* the first sequence put (0: none) */
    apr_int64_t head;
    slot_t slots[1];
};

apr_size_t rs_ring_size(apr_uint32_t nslots)
{
    return sizeof(rs_ring_t) + (apr_size_t)(nslots ? nslots - 1 : 0) * sizeof(slot_t);
}

rs_ring_t *rs_ring_init(void *mem, apr_uint32_t nslots)
{
    rs_ring_t *r = mem;
    memset(r, 0, rs_ring_size(nslots));
    r->magic = RING_MAGIC;
    r->nslots = nslots ? nslots : 1;
    return r;
}

apr_int64_t rs_ring_head(const rs_ring_t *r)
{
    return r ? r->head : 0;
}

void rs_ring_put(rs_ring_t *r, int set, const rs_record_t *rec)
{
    slot_t *s = &r->slots[(apr_uint64_t)rec->seq % r->nslots];

    if (r->head && rec->seq <= r->head - (apr_int64_t)r->nslots) {
        /* Out of the window already (another set's newer records were
         * put first): its slot holds a live record, readers take this one
         * from the store. */
        return;
    }
    s->seq = rec->seq;
    s->datetime = rec->datetime;
    s->lastmod_ns = rec->lastmod_ns;
    s->size = rec->size;
    s->set = set;
    s->change = (apr_int16_t)rec->change;
    s->overlong = !rec->xml || rec->xml_len > sizeof(s->data);
    s->len = s->overlong ? 0 : (apr_uint32_t)rec->xml_len;
    if (s->len) {
        memcpy(s->data, rec->xml, s->len);
    }
    if (rec->seq > r->head) {
        r->head = rec->seq;
    }
    if (!r->base) {
        r->base = rec->seq;
    }
}

int rs_ring_get(const rs_ring_t *r, int set, apr_int64_t from, apr_int64_t last, int max,
                apr_pool_t *p, apr_array_header_t *out, apr_int64_t *next)
{
    apr_int64_t seq;
    int n = 0;

    *next = from;
    if (!r || r->magic != RING_MAGIC) {
        return -1;
    }
    for (seq = from; seq <= last && n < max; seq++) {
        const slot_t *s = &r->slots[(apr_uint64_t)seq % r->nslots];
        rs_record_t *rec;

        *next = seq;
        if (seq <= r->head - (apr_int64_t)r->nslots || seq > r->head || seq < r->base || !r->base) {
            return -1; /* overwritten by now, or never put here
                                     * (published before a restart) */
        }
        if (s->seq != seq) {
            continue; /* a sequence never put */
        }
        if (s->set != set) {
            continue;
        }
        if (s->overlong) {
            return -1;
        }
        rec = apr_array_push(out);
        memset(rec, 0, sizeof(*rec));
        rec->seq = s->seq;
        rec->datetime = s->datetime;
        rec->lastmod_ns = s->lastmod_ns;
        rec->size = s->size;
        rec->change = s->change;
        rec->xml = apr_pmemdup(p, s->data, s->len ? s->len : 1);
        rec->xml_len = s->len;
        n++;
    }
    *next = seq;
    return n;
}

int rs_ring_seek(const rs_ring_t *r, int set, apr_int64_t first, apr_int64_t last, apr_int64_t need,
                 apr_int64_t *seq, apr_int64_t *bytes)
{
    apr_int64_t s, sum = 0;

    if (!r || r->magic != RING_MAGIC) {
        return -1;
    }
    for (s = last; s >= first; s--) {
        const slot_t *sl = &r->slots[(apr_uint64_t)s % r->nslots];
        if (s <= r->head - (apr_int64_t)r->nslots || s > r->head || s < r->base || !r->base) {
            return -1;
        }
        if (sl->seq != s || sl->set != set) {
            continue;
        }
        if (sl->overlong) {
            return -1;
        }
        sum += sl->len;
        if (sum >= need) {
            *seq = s;
            *bytes = sum;
            return 0;
        }
    }
    *seq = first;
    *bytes = sum;
    return 0;
}
