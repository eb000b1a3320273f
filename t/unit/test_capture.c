/* SPDX-License-Identifier: Apache-2.0 */
/* test_capture.c - rs_capture: bytes of journaled versions, captured by
 * the scan's own read, content-addressed, garbage-collected. */
#include <stdio.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_capture.h"
#include "rs_hash.h"
#include "rs_schema.h"
#include "rs_scan.h"

typedef struct {
    rs_db_t *st;
    ut_log_t ul;
    rs_scan_opts_t o;
    rs_scan_stats_t s;
    const char *root, *cap;
} fx_t;

static void fx_init(fx_t *f)
{
    const char *base = ut_tempdir("capture");
    memset(f, 0, sizeof(*f));
    f->root = ut_path(base, "root");
    f->cap = ut_path(base, "capture/s"); /* made by the first capture */
    ut_mkdir(f->root);
    ck_assert_int_eq(
        rs_schema_open(&f->st, ut_pool, "sqlite3", ut_path(base, "state.db"), ut_log_init(&f->ul)),
        APR_SUCCESS);
    f->o.set = "s";
    f->o.root = f->root;
    f->o.hashes = RS_HASH_MD5 | RS_HASH_SHA256;
    f->o.cfg = "cfg1";
    f->o.log = &f->ul.logger;
    f->o.capture_dir = f->cap;
}

/* The name of the capture of len bytes at s: their SHA-256 digest. */
static const char *sha256_of_n(const char *s, size_t len)
{
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    rs_hash_buf(s, len, RS_HASH_SHA256, hex);
    return apr_pstrdup(ut_pool, hex[2]);
}

static const char *sha256_of(const char *s)
{
    return sha256_of_n(s, strlen(s));
}

/* rs_capture_use_fn of the tests: the digests in keep are kept, those
 * in withdrawn (apr_time_t *) were withdrawn at that time; every call is
 * counted; fail (when set) is returned at the call after `fail_after`. */
typedef struct {
    apr_hash_t *keep, *withdrawn;
    int calls, fail_after;
    apr_status_t fail;
} uses_t;

static uses_t *uses(apr_hash_t *keep)
{
    uses_t *u = apr_pcalloc(ut_pool, sizeof(*u));
    u->keep = keep;
    u->withdrawn = apr_hash_make(ut_pool);
    return u;
}

static apr_status_t use_of(void *baton, apr_pool_t *p, const char *key, int *kept,
                           apr_time_t *withdrawn)
{
    uses_t *u = baton;
    const apr_time_t *w = apr_hash_get(u->withdrawn, key, APR_HASH_KEY_STRING);
    ck_assert_ptr_nonnull(p);
    if (u->fail && u->calls >= u->fail_after) {
        u->calls++;
        return u->fail;
    }
    u->calls++;
    *kept = apr_hash_get(u->keep, key, APR_HASH_KEY_STRING) != NULL;
    *withdrawn = w ? *w : 0;
    return APR_SUCCESS;
}

static void scan(fx_t *f)
{
    ck_assert_int_eq(rs_scan_set(f->st, &f->o, ut_pool, &f->s), APR_SUCCESS);
}

/* The capture of the n bytes at s exists and holds exactly them. */
static void assert_captured_n(fx_t *f, const char *s, size_t n)
{
    size_t len;
    const char *path = rs_capture_path(ut_pool, f->cap, sha256_of_n(s, n));
    char *got;
    ck_assert_msg(ut_exists(path), "no capture named %s", sha256_of_n(s, n));
    got = ut_read(path, &len);
    ck_assert_uint_eq(len, n);
    ck_assert_mem_eq(got, s, len);
}

static void assert_captured(fx_t *f, const char *s)
{
    assert_captured_n(f, s, strlen(s));
}

START_TEST(versions_captured_by_the_scan)
{
    fx_t f;
    apr_hash_t *keep = apr_hash_make(ut_pool);
    int removed = -1;
    apr_int64_t bytes = -1;
    struct timespec ts[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

    fx_init(&f);
    ut_write_str(ut_path(f.root, "a.txt"), "version one");
    scan(&f);
    assert_captured(&f, "version one");
    ut_write_str(ut_path(f.root, "a.txt"), "version two!");
    ck_assert_int_eq(utimensat(AT_FDCWD, ut_path(f.root, "a.txt"), ts, 0), 0);
    scan(&f);
    assert_captured(&f, "version one"); /* kept until collected */
    assert_captured(&f, "version two!");
    /* The capture carries the version's mtime (deterministic members). */
    {
        struct stat sb;
        ck_assert_int_eq(stat(rs_capture_path(ut_pool, f.cap, sha256_of("version two!")), &sb), 0);
        ck_assert_int_eq(sb.st_mtime, 1000000000);
    }
    /* A temporary file left by a crash, and a version no record names. */
    ut_write_str(ut_path(f.cap, ".tmp-abcdef"), "partial");
    apr_hash_set(keep, sha256_of("version two!"), APR_HASH_KEY_STRING, "");
    ck_assert_int_eq(rs_capture_gc(f.cap, use_of, uses(keep), 0, ut_pool, &removed, &bytes),
                     APR_SUCCESS);
    ck_assert_int_eq(removed, 2);
    ck_assert_int_eq(bytes, (apr_int64_t)strlen("version two!"));
    ck_assert(!ut_exists(rs_capture_path(ut_pool, f.cap, sha256_of("version one"))));
    ck_assert(!ut_exists(ut_path(f.cap, ".tmp-abcdef")));
    assert_captured(&f, "version two!");
    /* Files younger than the limit stay, whatever their name. */
    ut_write_str(ut_path(f.cap, ".tmp-young"), "being written");
    ck_assert_int_eq(rs_capture_gc(f.cap, use_of, uses(keep),
                                   apr_time_now() - apr_time_from_sec(3600), ut_pool, &removed,
                                   NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(removed, 0);
    ck_assert(ut_exists(ut_path(f.cap, ".tmp-young")));
    ck_assert_int_eq(rs_capture_bytes(f.cap, ut_pool),
                     (apr_int64_t)(strlen("version two!") + strlen("being written")));
    ck_assert_int_eq(rs_capture_bytes(ut_path(f.cap, "none"), ut_pool), 0);
    /* A missing directory is nothing to collect. */
    ck_assert_int_eq(
        rs_capture_gc(ut_path(f.cap, "none"), use_of, uses(keep), 0, ut_pool, &removed, NULL),
        APR_SUCCESS);
}
END_TEST

START_TEST(stored_digests_without_capture_are_read_again)
{
    fx_t f;
    fx_init(&f);
    ut_write_str(ut_path(f.root, "b.txt"), "kept digests");
    f.o.capture_dir = NULL;
    scan(&f);
    ck_assert(!rs_capture_has(f.cap, sha256_of("kept digests")));
    /* Only the inode's status changes: the stored digests stay valid,
     * but the version has no capture, so it is read once more. */
    ck_assert_int_eq(chmod(ut_path(f.root, "b.txt"), 0640), 0);
    f.o.capture_dir = f.cap;
    scan(&f);
    assert_captured(&f, "kept digests");
    ck_assert_int_eq(f.s.hashed, (apr_int64_t)strlen("kept digests"));
}
END_TEST

/* Two contents with the same MD5 digest (the collision of Wang et al.,
 * 2004): a set that lists MD5 only still names each capture by its
 * SHA-256 digest, so each keeps its own bytes. */
static const char collision_hex[2][257] = {
    "d131dd02c5e6eec4693d9a0698aff95c2fcab58712467eab4004583eb8fb7f89"
    "55ad340609f4b30283e488832571415a085125e8f7cdc99fd91dbdf280373c5b"
    "d8823e3156348f5bae6dacd436c919c6dd53e2b487da03fd02396306d248cda0"
    "e99f33420f577ee8ce54b67080a80d1ec69821bcb6a8839396f9652b6ff72a70",
    "d131dd02c5e6eec4693d9a0698aff95c2fcab50712467eab4004583eb8fb7f89"
    "55ad340609f4b30283e4888325f1415a085125e8f7cdc99fd91dbd7280373c5b"
    "d8823e3156348f5bae6dacd436c919c6dd53e23487da03fd02396306d248cda0"
    "e99f33420f577ee8ce54b67080280d1ec69821bcb6a8839396f965ab6ff72a70",
};

static void unhex(const char *hex, char *out, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        unsigned v;
        ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
        out[i] = (char)v;
    }
}

START_TEST(md5_collision_gets_two_captures)
{
    fx_t f;
    char a[128], b[128], ha[RS_HASH_COUNT][RS_HASH_HEXMAX], hb[RS_HASH_COUNT][RS_HASH_HEXMAX];

    unhex(collision_hex[0], a, sizeof(a));
    unhex(collision_hex[1], b, sizeof(b));
    rs_hash_buf(a, sizeof(a), RS_HASH_MD5, ha);
    rs_hash_buf(b, sizeof(b), RS_HASH_MD5, hb);
    ck_assert_str_eq(ha[0], hb[0]);          /* the same MD5 ... */
    ck_assert(memcmp(a, b, sizeof(a)) != 0); /* ... of other bytes */
    fx_init(&f);
    ut_write(ut_path(f.root, "a.bin"), a, sizeof(a));
    ut_write(ut_path(f.root, "b.bin"), b, sizeof(b));
    scan(&f);
    assert_captured_n(&f, a, sizeof(a));
    assert_captured_n(&f, b, sizeof(b));
    ck_assert(!rs_capture_has(f.cap, ha[0])); /* nothing named by MD5 */
}
END_TEST

/* Without a SHA-256 digest there is no name to trust: nothing is kept. */
START_TEST(no_capture_without_sha256)
{
    fx_t f;
    fx_init(&f);
    f.o.hashes = RS_HASH_MD5 | RS_HASH_SHA1;
    ut_write_str(ut_path(f.root, "c.txt"), "no sha-256");
    scan(&f);
    ck_assert_int_eq(rs_capture_bytes(f.cap, ut_pool), 0);
}
END_TEST

START_TEST(keep_and_drop)
{
    rs_capture_tmp_t t;
    const char *dir = ut_path(ut_tempdir("capkeep"), "c");
    const char *s256 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    const char *hex[RS_HASH_COUNT] = { "0123456789abcdef0123456789abcdef", "sha1", s256, NULL };
    const char *md5only[RS_HASH_COUNT] = { "0123456789abcdef0123456789abcdef", NULL, NULL, NULL };
    const char *bad[RS_HASH_COUNT] = { NULL, NULL,
                                       "../0123456789abcdef0123456789abcdef"
                                       "0123456789abcdef01234567890",
                                       NULL };

    ck_assert_str_eq(rs_capture_key(hex), s256);
    ck_assert_ptr_null(rs_capture_key(md5only));
    ck_assert_ptr_null(rs_capture_key(bad));
    ck_assert_int_eq(rs_capture_open(&t, dir), 0);
    ck_assert_int_eq(write(t.fd, "xy", 2), 2);
    ck_assert_int_eq(rs_capture_keep(&t, "00ff", 5000000000LL), 0);
    ck_assert(rs_capture_has(dir, "00ff"));
    ck_assert_int_eq(rs_capture_open(&t, dir), 0);
    rs_capture_drop(&t);
    ck_assert_int_eq(rs_capture_open(&t, dir), 0);
    ck_assert_int_eq(rs_capture_keep(&t, "../evil", 0), EINVAL);
    {
        apr_hash_t *keep = apr_hash_make(ut_pool);
        apr_int64_t bytes;
        int removed;
        apr_hash_set(keep, "00ff", APR_HASH_KEY_STRING, "");
        ck_assert_int_eq(rs_capture_gc(dir, use_of, uses(keep), 0, ut_pool, &removed, &bytes),
                         APR_SUCCESS);
        ck_assert_int_eq(removed, 0); /* dropped files left nothing behind */
        ck_assert_int_eq(bytes, 2);
    }
}
END_TEST

/* A capture of content in dir; its inode changes now (the limits of the
 * test below are set around it). */
static const char *put_capture(const char *dir, const char *content)
{
    const char *key = sha256_of(content);
    ut_write_str(rs_capture_path(ut_pool, dir, key), content);
    return key;
}

/* Each capture is decided by asking once about its own name: kept, or
 * withdrawn before it was captured again, or withdrawn and gone while
 * young, or old and needed by nothing (also a name that is no digest);
 * temporary files are not asked about.  A failure to answer stops the
 * collection and is returned. */
START_TEST(collection_asks_about_each_capture)
{
    const char *dir = ut_tempdir("capuse");
    apr_time_t before = apr_time_now() - apr_time_from_sec(60);
    apr_time_t after = apr_time_now() + apr_time_from_sec(60);
    apr_hash_t *keep = apr_hash_make(ut_pool);
    uses_t *u = uses(keep);
    const char *kept = put_capture(dir, "kept"), *both = put_capture(dir, "kept and withdrawn");
    const char *again = put_capture(dir, "withdrawn, captured again");
    const char *gone = put_capture(dir, "withdrawn");
    const char *plain = put_capture(dir, "needed by nothing");
    int removed = -1;
    apr_int64_t bytes = -1;

    ut_write_str(ut_path(dir, ".tmp-young"), "being written");
    ut_write_str(ut_path(dir, "not-a-digest"), "left by an older version");
    apr_hash_set(keep, kept, APR_HASH_KEY_STRING, "");
    apr_hash_set(keep, both, APR_HASH_KEY_STRING, "");
    apr_hash_set(u->withdrawn, both, APR_HASH_KEY_STRING, &after);
    apr_hash_set(u->withdrawn, again, APR_HASH_KEY_STRING, &before);
    apr_hash_set(u->withdrawn, gone, APR_HASH_KEY_STRING, &after);
    /* Everything is young: only the capture withdrawn after its inode
     * changed goes. */
    ck_assert_int_eq(rs_capture_gc(dir, use_of, u, before, ut_pool, &removed, &bytes), APR_SUCCESS);
    ck_assert_int_eq(u->calls, 6);
    ck_assert_int_eq(removed, 1);
    ck_assert(!rs_capture_has(dir, gone));
    ck_assert(rs_capture_has(dir, kept) && rs_capture_has(dir, both) && rs_capture_has(dir, again)
              && rs_capture_has(dir, plain));
    ck_assert_int_eq(bytes, rs_capture_bytes(dir, ut_pool));
    /* Everything is old: what is kept stays. */
    u->calls = 0;
    ck_assert_int_eq(rs_capture_gc(dir, use_of, u, after, ut_pool, &removed, NULL), APR_SUCCESS);
    ck_assert_int_eq(u->calls, 5);
    ck_assert_int_eq(removed, 4); /* again, plain, the temporary file, not-a-digest */
    ck_assert(rs_capture_has(dir, kept) && rs_capture_has(dir, both));
    ck_assert(!rs_capture_has(dir, again) && !rs_capture_has(dir, plain));
    ck_assert(!ut_exists(ut_path(dir, ".tmp-young")) && !ut_exists(ut_path(dir, "not-a-digest")));
    /* A question that cannot be answered: nothing more is removed. */
    apr_hash_clear(keep);
    u->calls = 0;
    u->fail = APR_EGENERAL;
    u->fail_after = 0;
    ck_assert_int_eq(rs_capture_gc(dir, use_of, u, after, ut_pool, &removed, NULL), APR_EGENERAL);
    ck_assert_int_eq(u->calls, 1);
    ck_assert_int_eq(removed, 0);
    ck_assert(rs_capture_has(dir, kept) && rs_capture_has(dir, both));
}
END_TEST

Suite *capture_suite(void)
{
    Suite *s = suite_create("rs_capture");
    TCase *tc = ut_tcase("capture", 30);
    tcase_add_test(tc, versions_captured_by_the_scan);
    tcase_add_test(tc, stored_digests_without_capture_are_read_again);
    tcase_add_test(tc, keep_and_drop);
    tcase_add_test(tc, collection_asks_about_each_capture);
    tcase_add_test(tc, md5_collision_gets_two_captures);
    tcase_add_test(tc, no_capture_without_sha256);
    suite_add_tcase(s, tc);
    return s;
}
