/* SPDX-License-Identifier: Apache-2.0 */
/* test_ring.c - rs_ring: the ring of recent journal records */
#include <string.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_hash.h"
#include "rs_journal.h"
#include "rs_ring.h"

#define REC(a, i) (&APR_ARRAY_IDX((a), (i), rs_record_t))

static rs_ring_t *new_ring(apr_uint32_t nslots)
{
    apr_size_t size = rs_ring_size(nslots);
    void *mem = apr_palloc(ut_pool, size);
    /* Formatting must not depend on what the memory held. */
    memset(mem, 0xa5, size);
    return rs_ring_init(mem, nslots);
}

/* The ring keeps a record's rendered entry (xml), not its path, type and
 * hashes.  Here the "entry" is those fields run together, so its length is
 * theirs: the slot limits below read as limits on what a record carries. */
static const char *xml_of(const rs_record_t *r)
{
    const char *x = apr_pstrcat(ut_pool, r->dir ? r->dir : "", r->name ? r->name : "",
                                r->type ? r->type : "", NULL);
    int i;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        if (r->hash[i]) {
            x = apr_pstrcat(ut_pool, x, r->hash[i], NULL);
        }
    }
    return x;
}

static void ring_put(rs_ring_t *r, int set, const rs_record_t *rec)
{
    rs_record_t c = *rec;
    c.xml = xml_of(rec);
    c.xml_len = strlen(c.xml);
    rs_ring_put(r, set, &c);
}

/* A record with every field derived from seq. */
static rs_record_t mkrec(apr_int64_t seq, const char *dir, const char *name)
{
    rs_record_t r;
    memset(&r, 0, sizeof(r));
    r.seq = seq;
    r.dir = dir;
    r.name = name;
    r.change = (int)(seq % 3) + RS_CHANGE_CREATED;
    r.datetime = 1700000000000000LL + seq;
    r.lastmod_ns = 1600000000000000000LL + seq;
    r.size = 5000000000LL + seq;
    r.type = "text/plain";
    r.hash[0] = apr_psprintf(ut_pool, "%032" APR_INT64_T_FMT, seq);
    return r;
}

static void put(rs_ring_t *r, int set, apr_int64_t seq)
{
    rs_record_t rec = mkrec(seq, "d", apr_psprintf(ut_pool, "f%" APR_INT64_T_FMT, seq));
    ring_put(r, set, &rec);
}

static apr_array_header_t *out_array(void)
{
    return apr_array_make(ut_pool, 2, sizeof(rs_record_t));
}

/* Get and return the copied sequences joined with ",", e.g. "1,2,3". */
static const char *get(const rs_ring_t *r, int set, apr_int64_t from, apr_int64_t last, int max,
                       int *n, apr_int64_t *next)
{
    apr_array_header_t *out = out_array();
    char *s = "";
    int i;

    *next = -12345;
    *n = rs_ring_get(r, set, from, last, max, ut_pool, out, next);
    for (i = 0; i < out->nelts; i++) {
        s = apr_psprintf(ut_pool, "%s%s%" APR_INT64_T_FMT, s, i ? "," : "", REC(out, i)->seq);
    }
    if (*n >= 0) {
        ck_assert_int_eq(*n, out->nelts);
    }
    return s;
}

static void assert_same(const rs_record_t *got, const rs_record_t *want)
{
    const char *x = xml_of(want);
    int i;
    ck_assert_int_eq(got->seq, want->seq);
    ck_assert_int_eq(got->change, want->change);
    ck_assert_int_eq(got->datetime, want->datetime);
    ck_assert_int_eq(got->lastmod_ns, want->lastmod_ns);
    ck_assert_int_eq(got->size, want->size);
    /* The entry's bytes, exactly (not NUL-terminated by contract). */
    ck_assert_ptr_nonnull(got->xml);
    ck_assert_uint_eq(got->xml_len, strlen(x));
    ck_assert_int_eq(memcmp(got->xml, x, got->xml_len), 0);
    /* What is rendered is not kept apart. */
    ck_assert_ptr_null(got->dir);
    ck_assert_ptr_null(got->name);
    ck_assert_ptr_null(got->type);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        ck_assert_ptr_null(got->hash[i]);
    }
}

static char *repeat(char c, apr_size_t n)
{
    char *s = apr_palloc(ut_pool, n + 1);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

START_TEST(size_and_init)
{
    apr_size_t slot = rs_ring_size(2) - rs_ring_size(1);
    rs_ring_t *r;
    apr_int64_t next;
    int n;
    void *mem;

    /* One more slot costs one slot; a slot holds at least its data. */
    ck_assert_uint_ge(slot, RS_RING_SLOT_DATA);
    ck_assert_uint_eq(rs_ring_size(100) - rs_ring_size(1), 99 * slot);
    ck_assert_uint_gt(rs_ring_size(1), slot);
    /* Zero slots is formatted as one. */
    ck_assert_uint_eq(rs_ring_size(0), rs_ring_size(1));
    r = new_ring(0);
    ck_assert_int_eq(rs_ring_head(r), 0);
    put(r, 0, 1);
    put(r, 0, 2);
    ck_assert_str_eq(get(r, 0, 1, 2, 10, &n, &next), "");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 1);
    ck_assert_str_eq(get(r, 0, 2, 2, 10, &n, &next), "2");
    ck_assert_int_eq(next, 3);

    /* Formatting again empties a used ring. */
    mem = r;
    r = rs_ring_init(mem, 0);
    ck_assert_ptr_eq(r, mem);
    ck_assert_int_eq(rs_ring_head(r), 0);
    ck_assert_str_eq(get(r, 0, 2, 2, 10, &n, &next), "");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 2);

    /* No ring, or memory that was never formatted: the store. */
    ck_assert_int_eq(rs_ring_head(NULL), 0);
    ck_assert_str_eq(get(NULL, 0, 7, 9, 10, &n, &next), "");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 7);
    mem = apr_pcalloc(ut_pool, rs_ring_size(4));
    ck_assert_str_eq(get(mem, 0, 1, 1, 10, &n, &next), "");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 1);
}
END_TEST

START_TEST(empty)
{
    rs_ring_t *r = new_ring(8);
    apr_int64_t next;
    int n;

    ck_assert_int_eq(rs_ring_head(r), 0);
    /* Nothing was put: every record is in the store only. */
    ck_assert_str_eq(get(r, 0, 1, 10, 100, &n, &next), "");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 1);
    /* An empty range, or no room: nothing to do, not a fallback. */
    ck_assert_str_eq(get(r, 0, 5, 4, 100, &n, &next), "");
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(next, 5);
    ck_assert_str_eq(get(r, 0, 1, 10, 0, &n, &next), "");
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(next, 1);
}
END_TEST

START_TEST(put_get_in_order)
{
    rs_ring_t *r = new_ring(8);
    apr_array_header_t *out;
    apr_int64_t next, seq;
    int n;

    for (seq = 1; seq <= 5; seq++) {
        put(r, 0, seq);
        ck_assert_int_eq(rs_ring_head(r), seq);
    }
    ck_assert_str_eq(get(r, 0, 1, 5, 100, &n, &next), "1,2,3,4,5");
    ck_assert_int_eq(n, 5);
    ck_assert_int_eq(next, 6);
    ck_assert_str_eq(get(r, 0, 3, 5, 100, &n, &next), "3,4,5");
    ck_assert_int_eq(next, 6);
    ck_assert_str_eq(get(r, 0, 2, 3, 100, &n, &next), "2,3");
    ck_assert_int_eq(next, 4);
    ck_assert_str_eq(get(r, 0, 4, 4, 100, &n, &next), "4");
    ck_assert_int_eq(next, 5);

    /* max, and continuing from *next. */
    ck_assert_str_eq(get(r, 0, 1, 5, 2, &n, &next), "1,2");
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(next, 3);
    ck_assert_str_eq(get(r, 0, next, 5, 2, &n, &next), "3,4");
    ck_assert_int_eq(next, 5);
    ck_assert_str_eq(get(r, 0, next, 5, 2, &n, &next), "5");
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(next, 6);
    ck_assert_str_eq(get(r, 0, next, 5, 2, &n, &next), "");
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(next, 6);

    /* Past the head: what the ring has, then the store from head + 1. */
    ck_assert_str_eq(get(r, 0, 4, 9, 100, &n, &next), "4,5");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 6);
    ck_assert_str_eq(get(r, 0, 6, 9, 100, &n, &next), "");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 6);

    /* Records are appended to what out already holds. */
    out = out_array();
    ck_assert_int_eq(rs_ring_get(r, 0, 1, 2, 100, ut_pool, out, &next), 2);
    ck_assert_int_eq(rs_ring_get(r, 0, 5, 5, 100, ut_pool, out, &next), 1);
    ck_assert_int_eq(out->nelts, 3);
    ck_assert_int_eq(REC(out, 0)->seq, 1);
    ck_assert_int_eq(REC(out, 1)->seq, 2);
    ck_assert_int_eq(REC(out, 2)->seq, 5);
    {
        rs_record_t want = mkrec(5, "d", "f5");
        assert_same(REC(out, 2), &want);
    }
}
END_TEST

START_TEST(sets_interleaved)
{
    rs_ring_t *r = new_ring(16);
    apr_int64_t next, seq;
    int n;

    for (seq = 1; seq <= 9; seq++) {
        put(r, seq % 3 == 0 ? 2 : (int)(seq % 2), seq);
    }
    /* set 1: 1 5 7; set 0: 2 4 8; set 2: 3 6 9 */
    ck_assert_str_eq(get(r, 1, 1, 9, 100, &n, &next), "1,5,7");
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(next, 10);
    ck_assert_str_eq(get(r, 0, 1, 9, 100, &n, &next), "2,4,8");
    ck_assert_int_eq(next, 10);
    ck_assert_str_eq(get(r, 2, 1, 9, 100, &n, &next), "3,6,9");
    ck_assert_int_eq(next, 10);
    ck_assert_str_eq(get(r, 3, 1, 9, 100, &n, &next), "");
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(next, 10);

    /* max counts the set's records; *next is just after the last one
     * copied, and the next call skips the other sets' records. */
    ck_assert_str_eq(get(r, 0, 1, 9, 2, &n, &next), "2,4");
    ck_assert_int_eq(next, 5);
    ck_assert_str_eq(get(r, 0, next, 9, 2, &n, &next), "8");
    ck_assert_int_eq(next, 10);
    ck_assert_str_eq(get(r, 1, 2, 6, 100, &n, &next), "5");
    ck_assert_int_eq(next, 7);

    /* An overlong record of another set does not matter to this one. */
    {
        rs_record_t big = mkrec(10, repeat('x', RS_RING_SLOT_DATA), "big");
        ring_put(r, 1, &big);
        put(r, 0, 11);
    }
    ck_assert_str_eq(get(r, 0, 1, 11, 100, &n, &next), "2,4,8,11");
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(next, 12);
    ck_assert_str_eq(get(r, 1, 1, 11, 100, &n, &next), "1,5,7");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 10);
}
END_TEST

/* One node writes set 0 and follows set 1, whose records (sequences
 * global in the store) it learns of after newer ones of its own: they
 * are put late, the window's ones readable, and one already out of the
 * window is not put over a live record of set 0. */
START_TEST(followed_set_put_late)
{
    rs_ring_t *r = new_ring(4);
    apr_int64_t next;
    int n;

    put(r, 0, 1);
    put(r, 0, 4);
    put(r, 0, 5); /* 2 and 3 are set 1's, not put yet */
    ck_assert_str_eq(get(r, 0, 1, 5, 100, &n, &next), "");
    ck_assert_int_eq(n, -1); /* 1 is out of the window (2..5) */
    ck_assert_str_eq(get(r, 0, 4, 5, 100, &n, &next), "4,5");
    put(r, 1, 2);
    put(r, 1, 3);
    ck_assert_str_eq(get(r, 1, 2, 3, 100, &n, &next), "2,3");
    ck_assert_str_eq(get(r, 0, 2, 5, 100, &n, &next), "4,5");
    ck_assert_int_eq(rs_ring_head(r), 5);
    /* Set 0 goes on to 8: the window is 5..8; set 1's 4th-slot record
     * 4 (never its: say it was) is out of it, and must not take slot 0,
     * which holds 8. */
    put(r, 0, 6);
    put(r, 0, 7);
    put(r, 0, 8);
    put(r, 1, 4);
    ck_assert_str_eq(get(r, 0, 5, 8, 100, &n, &next), "5,6,7,8");
    ck_assert_int_eq(n, 4);
    ck_assert_str_eq(get(r, 1, 4, 4, 100, &n, &next), "");
    ck_assert_int_eq(n, -1); /* from the store */
}
END_TEST

START_TEST(wrap_around)
{
    rs_ring_t *r = new_ring(4);
    apr_array_header_t *out;
    apr_int64_t next, seq;
    int n;

    for (seq = 1; seq <= 10; seq++) {
        put(r, 0, seq);
    }
    ck_assert_int_eq(rs_ring_head(r), 10);
    /* It holds 7..10. */
    ck_assert_str_eq(get(r, 0, 7, 10, 100, &n, &next), "7,8,9,10");
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(next, 11);
    ck_assert_str_eq(get(r, 0, 6, 10, 100, &n, &next), "");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 6);
    ck_assert_str_eq(get(r, 0, 1, 10, 100, &n, &next), "");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 1);
    ck_assert_str_eq(get(r, 0, 2, 2, 100, &n, &next), "");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 2);

    /* A reader paging through while the writer goes on: what it needs
     * next has left the ring, the store takes over at *next. */
    ck_assert_str_eq(get(r, 0, 7, 10, 2, &n, &next), "7,8");
    ck_assert_int_eq(next, 9);
    put(r, 0, 11);
    put(r, 0, 12);
    put(r, 0, 13);
    ck_assert_str_eq(get(r, 0, next, 13, 2, &n, &next), "");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 9);
    ck_assert_str_eq(get(r, 0, 10, 13, 100, &n, &next), "10,11,12,13");
    ck_assert_int_eq(next, 14);

    /* Slots hold the newest records, with their own fields. */
    out = out_array();
    ck_assert_int_eq(rs_ring_get(r, 0, 12, 12, 1, ut_pool, out, &next), 1);
    {
        rs_record_t want = mkrec(12, "d", "f12");
        assert_same(REC(out, 0), &want);
    }
}
END_TEST

START_TEST(gaps)
{
    rs_ring_t *r = new_ring(4);
    apr_int64_t next;
    int n;

    /* 3 is never put (a rolled-back transaction), nor 7 and 8. */
    put(r, 0, 1);
    put(r, 0, 2);
    put(r, 0, 4);
    ck_assert_str_eq(get(r, 0, 1, 4, 100, &n, &next), "1,2,4");
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(next, 5);
    ck_assert_str_eq(get(r, 0, 3, 4, 100, &n, &next), "4");
    ck_assert_int_eq(next, 5);
    ck_assert_str_eq(get(r, 0, 3, 3, 100, &n, &next), "");
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(next, 4);

    /* After wrapping: a slot that holds an older sequence, or none, is a
     * gap inside the window too. */
    put(r, 0, 5);
    put(r, 0, 6);
    put(r, 0, 9); /* slot 1, which held 5 */
    ck_assert_int_eq(rs_ring_head(r), 9);
    /* Window: 6..9; 7 (slot 3 is empty) and 8 (slot 0 holds 4) are gaps. */
    ck_assert_str_eq(get(r, 0, 6, 9, 100, &n, &next), "6,9");
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(next, 10);
    ck_assert_str_eq(get(r, 0, 7, 8, 100, &n, &next), "");
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(next, 9);
    ck_assert_str_eq(get(r, 0, 5, 9, 100, &n, &next), "");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 5);
    /* max with a gap in between. */
    ck_assert_str_eq(get(r, 0, 6, 9, 1, &n, &next), "6");
    ck_assert_int_eq(next, 7);
    ck_assert_str_eq(get(r, 0, next, 9, 1, &n, &next), "9");
    ck_assert_int_eq(next, 10);
}
END_TEST

START_TEST(first_put_after_restart)
{
    rs_ring_t *r = new_ring(8);
    apr_int64_t next;
    int n;

    /* The journal already had 1..99 before this ring was made. */
    put(r, 0, 100);
    put(r, 0, 101);
    ck_assert_str_eq(get(r, 0, 98, 101, 100, &n, &next), "");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 98);
    ck_assert_str_eq(get(r, 0, 99, 101, 100, &n, &next), "");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 99);
    ck_assert_str_eq(get(r, 0, 100, 101, 100, &n, &next), "100,101");
    ck_assert_int_eq(next, 102);
}
END_TEST

START_TEST(overlong)
{
    rs_ring_t *r = new_ring(8);
    rs_record_t rec;
    apr_array_header_t *out;
    apr_int64_t next;
    int n;
    const char *h[RS_HASH_COUNT] = {
        "0123456789abcdef0123456789abcdef",
        "0123456789abcdef0123456789abcdef01234567",
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
         "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
    };
    const apr_size_t hlen = 32 + 40 + 64 + 128;

    put(r, 0, 1);
    /* 2: exactly RS_RING_SLOT_DATA bytes of dir, name, type and hashes. */
    rec = mkrec(2, repeat('d', 300), repeat('n', 300));
    rec.type = repeat('t', RS_RING_SLOT_DATA - 600 - hlen);
    memcpy(rec.hash, h, sizeof(h));
    ring_put(r, 0, &rec);
    /* 3: one byte more, in the path. */
    rec = mkrec(3, repeat('d', 300), repeat('n', 301));
    rec.type = repeat('t', RS_RING_SLOT_DATA - 600 - hlen);
    memcpy(rec.hash, h, sizeof(h));
    ring_put(r, 0, &rec);
    put(r, 0, 4);

    out = out_array();
    n = rs_ring_get(r, 0, 1, 4, 100, ut_pool, out, &next);
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 3);
    ck_assert_int_eq(out->nelts, 2);
    ck_assert_int_eq(REC(out, 0)->seq, 1);
    rec = mkrec(2, repeat('d', 300), repeat('n', 300));
    rec.type = repeat('t', RS_RING_SLOT_DATA - 600 - hlen);
    memcpy(rec.hash, h, sizeof(h));
    assert_same(REC(out, 1), &rec);
    /* The record after it is still there. */
    ck_assert_str_eq(get(r, 0, 4, 4, 100, &n, &next), "4");
    ck_assert_int_eq(next, 5);
    /* max reached before the overlong record: no fallback yet. */
    ck_assert_str_eq(get(r, 0, 1, 4, 2, &n, &next), "1,2");
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(next, 3);
    ck_assert_str_eq(get(r, 0, 3, 4, 2, &n, &next), "");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 3);

    /* Too long by its name, its type or its hashes alone. */
    rec = mkrec(5, "", repeat('n', RS_RING_SLOT_DATA + 1));
    rec.type = NULL;
    rec.hash[0] = NULL;
    ring_put(r, 0, &rec);
    rec = mkrec(6, "", "x");
    rec.type = repeat('t', RS_RING_SLOT_DATA);
    ring_put(r, 0, &rec);
    rec = mkrec(7, "", "x");
    rec.type = NULL;
    rec.hash[0] = repeat('0', RS_RING_SLOT_DATA / 2);
    rec.hash[3] = repeat('1', RS_RING_SLOT_DATA / 2);
    ring_put(r, 0, &rec);
    put(r, 0, 8);
    ck_assert_str_eq(get(r, 0, 5, 8, 100, &n, &next), "");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 5);
    ck_assert_str_eq(get(r, 0, 6, 8, 100, &n, &next), "");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 6);
    ck_assert_str_eq(get(r, 0, 7, 8, 100, &n, &next), "");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 7);
    ck_assert_str_eq(get(r, 0, 8, 8, 100, &n, &next), "8");
    ck_assert_int_eq(next, 9);

    /* A slot reused by a short record after an overlong one is whole. */
    put(r, 0, 11); /* 11 mod 8 = 3: the slot of overlong record 3 */
    out = out_array();
    ck_assert_int_eq(rs_ring_get(r, 0, 11, 11, 100, ut_pool, out, &next), 1);
    rec = mkrec(11, "d", "f11");
    assert_same(REC(out, 0), &rec);
}
END_TEST

/* A record put without a rendered entry cannot be served from the ring. */
START_TEST(no_entry_falls_back)
{
    rs_ring_t *r = new_ring(8);
    rs_record_t rec = mkrec(2, "d", "f2");
    apr_int64_t next;
    int n;

    put(r, 0, 1);
    rs_ring_put(r, 0, &rec); /* rec.xml is NULL */
    put(r, 0, 3);
    ck_assert_str_eq(get(r, 0, 1, 3, 100, &n, &next), "1");
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(next, 2);
    ck_assert_str_eq(get(r, 0, 3, 3, 100, &n, &next), "3");
    ck_assert_int_eq(n, 1);
}
END_TEST

START_TEST(fields_round_trip)
{
    rs_ring_t *r = new_ring(8);
    rs_record_t in[4];
    apr_array_header_t *out;
    apr_int64_t next;
    int i;

    /* Every hash, UTF-8 and spaces in the path. */
    in[0] = mkrec(1, "a dir/sub", "n\xc3\xa4me with space.txt");
    in[0].change = RS_CHANGE_UPDATED;
    in[0].type = "application/xml; charset=utf-8";
    in[0].hash[0] = "d41d8cd98f00b204e9800998ecf8427e";
    in[0].hash[1] = "da39a3ee5e6b4b0d3255bfef95601890afd80709";
    in[0].hash[2] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    in[0].hash[3] = "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
                    "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e";
    /* The root directory, no type, some hashes missing (a deletion). */
    in[1] = mkrec(2, "", "gone");
    in[1].change = RS_CHANGE_DELETED;
    in[1].type = NULL;
    in[1].hash[0] = NULL;
    in[1].hash[2] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    in[1].size = 0;
    in[1].lastmod_ns = -1;
    /* No hash at all, extreme numbers. */
    in[2] = mkrec(3, "x", "y");
    in[2].change = RS_CHANGE_CREATED;
    in[2].hash[0] = NULL;
    in[2].size = APR_INT64_MAX;
    in[2].lastmod_ns = APR_INT64_MIN;
    in[2].datetime = 0;
    /* A NULL dir is the root; an empty type reads back as none (as from
     * the store). */
    in[3] = mkrec(4, NULL, "z");
    in[3].type = "";
    in[3].hash[1] = "abc";

    for (i = 0; i < 4; i++) {
        ring_put(r, 7, &in[i]);
    }
    out = out_array();
    ck_assert_int_eq(rs_ring_get(r, 7, 1, 4, 100, ut_pool, out, &next), 4);
    ck_assert_int_eq(next, 5);
    for (i = 0; i < 4; i++) {
        assert_same(REC(out, i), &in[i]);
    }
    ck_assert_int_eq(strncmp(REC(out, 0)->xml, "a dir/subn\xc3\xa4me with space.txt",
                             strlen("a dir/subn\xc3\xa4me with space.txt")),
                     0);
    /* The copies are the reader's: they survive the slot being reused. */
    for (i = 9; i <= 12; i++) {
        put(r, 7, i);
    }
    assert_same(REC(out, 0), &in[0]);
    assert_same(REC(out, 1), &in[1]);
}
END_TEST

/* A record of seq whose rendered entry has len bytes (NULL: none). */
static void put_len(rs_ring_t *r, int set, apr_int64_t seq, apr_size_t len)
{
    rs_record_t rec = mkrec(seq, "d", "f");
    rec.xml = len ? repeat('x', len) : NULL;
    rec.xml_len = len;
    rs_ring_put(r, set, &rec);
}

/* Seeking back from the end of a list: the latest record from which on the
 * entries are at least `need` bytes, other sets' and unused sequences
 * skipped; -1 as soon as a needed record is not in the ring. */
START_TEST(seek_from_the_end)
{
    rs_ring_t *r = new_ring(8);
    apr_int64_t seq = -1, bytes = -1;

    put_len(r, 0, 3, 10);
    put_len(r, 1, 4, 500); /* another set */
    put_len(r, 0, 5, 20);  /* 6 never used */
    put_len(r, 0, 7, 30);
    /* Entries 3, 5, 7: 10 + 20 + 30 bytes. */
    ck_assert_int_eq(rs_ring_seek(r, 0, 3, 7, 0, &seq, &bytes), 0);
    ck_assert_int_eq(seq, 7);
    ck_assert_int_eq(bytes, 30);
    ck_assert_int_eq(rs_ring_seek(r, 0, 3, 7, 30, &seq, &bytes), 0);
    ck_assert_int_eq(seq, 7);
    ck_assert_int_eq(bytes, 30);
    ck_assert_int_eq(rs_ring_seek(r, 0, 3, 7, 31, &seq, &bytes), 0);
    ck_assert_int_eq(seq, 5);
    ck_assert_int_eq(bytes, 50);
    ck_assert_int_eq(rs_ring_seek(r, 0, 3, 7, 51, &seq, &bytes), 0);
    ck_assert_int_eq(seq, 3);
    ck_assert_int_eq(bytes, 60);
    /* More than all of them: from the first, with their sum. */
    ck_assert_int_eq(rs_ring_seek(r, 0, 3, 7, 1000, &seq, &bytes), 0);
    ck_assert_int_eq(seq, 3);
    ck_assert_int_eq(bytes, 60);
    /* An empty list. */
    ck_assert_int_eq(rs_ring_seek(r, 0, 8, 7, 0, &seq, &bytes), 0);
    ck_assert_int_eq(seq, 8);
    ck_assert_int_eq(bytes, 0);
    /* The other set. */
    ck_assert_int_eq(rs_ring_seek(r, 1, 3, 7, 1, &seq, &bytes), 0);
    ck_assert_int_eq(seq, 4);
    ck_assert_int_eq(bytes, 500);
    /* Needing a record from before the ring's first: not in the ring. */
    ck_assert_int_eq(rs_ring_seek(r, 0, 1, 7, 1000, &seq, &bytes), -1);
    /* An overlong record on the way back; one after the need is met is
     * never looked at. */
    put_len(r, 0, 8, 0);
    put_len(r, 0, 9, 40);
    ck_assert_int_eq(rs_ring_seek(r, 0, 3, 9, 40, &seq, &bytes), 0);
    ck_assert_int_eq(seq, 9);
    ck_assert_int_eq(rs_ring_seek(r, 0, 3, 9, 41, &seq, &bytes), -1);
    /* Wrapped: 3 .. 5 have left an 8-slot ring whose head is 13. */
    put_len(r, 0, 13, 5);
    ck_assert_int_eq(rs_ring_seek(r, 0, 9, 13, 45, &seq, &bytes), 0);
    ck_assert_int_eq(seq, 9);
    ck_assert_int_eq(bytes, 45);
    ck_assert_int_eq(rs_ring_seek(r, 0, 3, 13, 1000, &seq, &bytes), -1);
    ck_assert_int_eq(rs_ring_seek(NULL, 0, 3, 13, 1, &seq, &bytes), -1);
}
END_TEST

Suite *ring_suite(void)
{
    Suite *s = suite_create("rs_ring");
    TCase *tc = ut_tcase("ring", 30);
    tcase_add_test(tc, size_and_init);
    tcase_add_test(tc, empty);
    tcase_add_test(tc, put_get_in_order);
    tcase_add_test(tc, sets_interleaved);
    tcase_add_test(tc, wrap_around);
    tcase_add_test(tc, followed_set_put_late);
    tcase_add_test(tc, gaps);
    tcase_add_test(tc, first_put_after_restart);
    tcase_add_test(tc, overlong);
    tcase_add_test(tc, fields_round_trip);
    tcase_add_test(tc, no_entry_falls_back);
    tcase_add_test(tc, seek_from_the_end);
    suite_add_tcase(s, tc);
    return s;
}
