/* test_capture.c - rs_capture: bytes of journaled versions, captured by
 * the scan's own read, content-addressed, garbage-collected. */
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
    f->cap = ut_path(base, "capture/s");   /* made by the first capture */
    ut_mkdir(f->root);
    ck_assert_int_eq(rs_schema_open(&f->st, ut_pool, "sqlite3", ut_path(base, "state.db"),
                                    ut_log_init(&f->ul)), APR_SUCCESS);
    f->o.set = "s";
    f->o.root = f->root;
    f->o.hashes = RS_HASH_MD5 | RS_HASH_SHA256;
    f->o.cfg = "cfg1";
    f->o.log = &f->ul.logger;
    f->o.capture_dir = f->cap;
}

static const char *md5_of(const char *s)
{
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    rs_hash_buf(s, strlen(s), RS_HASH_MD5, hex);
    return apr_pstrdup(ut_pool, hex[0]);
}

static void scan(fx_t *f)
{
    ck_assert_int_eq(rs_scan_set(f->st, &f->o, ut_pool, &f->s), APR_SUCCESS);
}

/* The capture of content s exists and holds exactly s. */
static void assert_captured(fx_t *f, const char *s)
{
    size_t len;
    const char *path = rs_capture_path(ut_pool, f->cap, md5_of(s));
    char *got;
    ck_assert_msg(ut_exists(path), "no capture of '%s'", s);
    got = ut_read(path, &len);
    ck_assert_uint_eq(len, strlen(s));
    ck_assert_mem_eq(got, s, len);
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
    assert_captured(&f, "version one");     /* kept until collected */
    assert_captured(&f, "version two!");
    /* The capture carries the version's mtime (deterministic members). */
    {
        struct stat sb;
        ck_assert_int_eq(stat(rs_capture_path(ut_pool, f.cap, md5_of("version two!")), &sb),
                         0);
        ck_assert_int_eq(sb.st_mtime, 1000000000);
    }
    /* A temporary file left by a crash, and a version no record names. */
    ut_write_str(ut_path(f.cap, ".tmp-abcdef"), "partial");
    apr_hash_set(keep, md5_of("version two!"), APR_HASH_KEY_STRING, "");
    ck_assert_int_eq(rs_capture_gc(f.cap, keep, 0, ut_pool, &removed, &bytes), APR_SUCCESS);
    ck_assert_int_eq(removed, 2);
    ck_assert_int_eq(bytes, (apr_int64_t)strlen("version two!"));
    ck_assert(!ut_exists(rs_capture_path(ut_pool, f.cap, md5_of("version one"))));
    ck_assert(!ut_exists(ut_path(f.cap, ".tmp-abcdef")));
    assert_captured(&f, "version two!");
    /* Files younger than the limit stay, whatever their name. */
    ut_write_str(ut_path(f.cap, ".tmp-young"), "being written");
    ck_assert_int_eq(rs_capture_gc(f.cap, keep, apr_time_now() - apr_time_from_sec(3600),
                                   ut_pool, &removed, NULL), APR_SUCCESS);
    ck_assert_int_eq(removed, 0);
    ck_assert(ut_exists(ut_path(f.cap, ".tmp-young")));
    ck_assert_int_eq(rs_capture_bytes(f.cap, ut_pool),
                     (apr_int64_t)(strlen("version two!") + strlen("being written")));
    ck_assert_int_eq(rs_capture_bytes(ut_path(f.cap, "none"), ut_pool), 0);
    /* A missing directory is nothing to collect. */
    ck_assert_int_eq(rs_capture_gc(ut_path(f.cap, "none"), keep, 0, ut_pool, &removed, NULL),
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
    ck_assert(!rs_capture_has(f.cap, md5_of("kept digests")));
    /* Only the inode's status changes: the stored digests stay valid,
     * but the version has no capture, so it is read once more. */
    ck_assert_int_eq(chmod(ut_path(f.root, "b.txt"), 0640), 0);
    f.o.capture_dir = f.cap;
    scan(&f);
    assert_captured(&f, "kept digests");
    ck_assert_int_eq(f.s.hashed, (apr_int64_t)strlen("kept digests"));
}
END_TEST

START_TEST(keep_and_drop)
{
    rs_capture_tmp_t t;
    const char *dir = ut_path(ut_tempdir("capkeep"), "c");
    const char *hex[RS_HASH_COUNT] = { NULL, "sha1", "sha256", NULL };

    ck_assert_str_eq(rs_capture_key(RS_HASH_SHA1 | RS_HASH_SHA256, hex), "sha1");
    ck_assert_ptr_null(rs_capture_key(RS_HASH_MD5, hex));
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
        ck_assert_int_eq(rs_capture_gc(dir, keep, 0, ut_pool, &removed, &bytes), APR_SUCCESS);
        ck_assert_int_eq(removed, 0);      /* dropped files left nothing behind */
        ck_assert_int_eq(bytes, 2);
    }
}
END_TEST

Suite *capture_suite(void)
{
    Suite *s = suite_create("rs_capture");
    TCase *tc = ut_tcase("capture", 30);
    tcase_add_test(tc, versions_captured_by_the_scan);
    tcase_add_test(tc, stored_digests_without_capture_are_read_again);
    tcase_add_test(tc, keep_and_drop);
    suite_add_tcase(s, tc);
    return s;
}
