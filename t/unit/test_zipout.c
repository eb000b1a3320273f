/* SPDX-License-Identifier: Apache-2.0 */
/* test_zipout.c - rs_zipout: the buffered write source libzip writes a
 * package through.  Driven directly with libzip's source calls against a
 * model of the file, and through rs_zip with a member larger than the
 * buffer (the header rewrite lands before the buffer). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zip.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_zip.h"
#include "rs_zipout.h"

/* Write len bytes of pattern c at the source's position, and in model. */
static void put(zip_source_t *src, unsigned char *model, zip_uint64_t at, size_t len, int c)
{
    unsigned char *b = malloc(len);
    size_t i;
    for (i = 0; i < len; i++) {
        b[i] = (unsigned char)(c + i * 7);
    }
    ck_assert_int_eq(zip_source_tell_write(src), (zip_int64_t)at);
    ck_assert_int_eq(zip_source_write(src, b, len), (zip_int64_t)len);
    memcpy(model + at, b, len);
    free(b);
}

/* Commit the write, free the source, and check the file is the model;
 * returns the file's bytes. */
static char *commit_and_compare(zip_source_t *src, zip_error_t *ze, const char *path,
                                const unsigned char *model, size_t total)
{
    size_t len;
    char *data;

    ck_assert_int_eq(zip_source_commit_write(src), 0);
    zip_source_free(src);
    zip_error_fini(ze);
    data = ut_read(path, &len);
    ck_assert_uint_eq(len, total);
    ck_assert(memcmp(data, model, total) == 0);
    return data;
}

/* Appends across several buffer fills, rewrites inside the kept bytes,
 * before them (the file itself) and at the start, then appends again:
 * the file is the model, byte for byte. */
START_TEST(writes_and_seeks_match_the_model)
{
    const char *dir = ut_tempdir("zipout-model");
    const char *path = ut_path(dir, "out");
    size_t total = 3 * RS_ZIPOUT_BUF + 12345;
    unsigned char *model = calloc(1, total);
    zip_error_t ze;
    zip_source_t *src;
    zip_uint64_t at = 0;

    zip_error_init(&ze);
    src = rs_zipout_source(path, ut_pool, &ze, NULL);
    ck_assert_ptr_nonnull(src);
    ck_assert_int_eq(zip_source_begin_write(src), 0);
    while (at < total - 12345 - 100) {
        size_t n = (at / 1000) % 3 ? 30 : 9000; /* headers and data */
        put(src, model, at, n, (int)at);
        at += n;
    }
    /* back into the kept bytes, then to the end */
    ck_assert_int_eq(zip_source_seek_write(src, (zip_int64_t)at - 5000, SEEK_SET), 0);
    put(src, model, at - 5000, 30, 'k');
    ck_assert_int_eq(zip_source_seek_write(src, 0, SEEK_END), 0);
    /* before the buffer, and at the very start */
    ck_assert_int_eq(zip_source_seek_write(src, (zip_int64_t)RS_ZIPOUT_BUF / 2, SEEK_SET), 0);
    put(src, model, RS_ZIPOUT_BUF / 2, 30, 'h');
    ck_assert_int_eq(zip_source_seek_write(src, 0, SEEK_SET), 0);
    put(src, model, 0, 4, 'P');
    ck_assert_int_eq(zip_source_seek_write(src, (zip_int64_t)at, SEEK_SET), 0);
    put(src, model, at, total - at, 'e');
    commit_and_compare(src, &ze, path, model, total);
    free(model);
}
END_TEST

/* Digests taken on the way out: header rewrites inside the kept bytes
 * leave them valid (they equal the file's); a rewrite before the bytes
 * already written out gives them up, and rs_zipout_digests says so. */
static void digest_run(int far_seek)
{
    const char *dir = ut_tempdir(far_seek ? "zipout-hash-far" : "zipout-hash");
    const char *path = ut_path(dir, "out");
    size_t total = 3 * RS_ZIPOUT_BUF + 777;
    unsigned char *model = calloc(1, total);
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX], want[RS_HASH_COUNT][RS_HASH_HEXMAX], *data;
    zip_error_t ze;
    zip_source_t *src;
    rs_zipout_t *o = NULL;
    zip_uint64_t at = 0;
    apr_off_t n = -1;

    zip_error_init(&ze);
    src = rs_zipout_source(path, ut_pool, &ze, &o);
    ck_assert_ptr_nonnull(src);
    ck_assert_ptr_nonnull(o);
    rs_zipout_hash(o, RS_HASH_MD5 | RS_HASH_SHA256);
    ck_assert_int_eq(zip_source_begin_write(src), 0);
    while (at + 5030 + 100 < total) {
        /* a member: its header, its data, then the header rewritten */
        zip_uint64_t hdr = at;
        put(src, model, at, 30, 'H');
        put(src, model, at + 30, 5000, (int)at);
        at += 5030;
        ck_assert_int_eq(zip_source_seek_write(src, (zip_int64_t)hdr, SEEK_SET), 0);
        put(src, model, hdr, 30, 'R');
        ck_assert_int_eq(zip_source_seek_write(src, 0, SEEK_END), 0);
    }
    if (far_seek) {
        ck_assert_int_eq(zip_source_seek_write(src, 10, SEEK_SET), 0);
        put(src, model, 10, 4, 'F');
        ck_assert_int_eq(zip_source_seek_write(src, 0, SEEK_END), 0);
    }
    put(src, model, at, total - at, 'e');
    data = commit_and_compare(src, &ze, path, model, total);
    rs_hash_buf(data, total, RS_HASH_MD5 | RS_HASH_SHA256, want);
    if (far_seek) {
        ck_assert_int_eq(rs_zipout_digests(o, hex, &n), 0);
    }
    else {
        ck_assert_int_eq(rs_zipout_digests(o, hex, &n), 1);
        ck_assert_int_eq(n, (apr_off_t)total);
        ck_assert_str_eq(hex[0], want[0]);
        ck_assert_str_eq(hex[2], want[2]);
    }
    free(model);
}

START_TEST(digests_on_the_way_out)
{
    digest_run(0);
    digest_run(1);
}
END_TEST

/* A write that is rolled back, or never committed, leaves no file. */
START_TEST(rollback_and_free_remove_the_file)
{
    const char *dir = ut_tempdir("zipout-rollback");
    const char *path = ut_path(dir, "out");
    zip_error_t ze;
    zip_source_t *src;

    zip_error_init(&ze);
    src = rs_zipout_source(path, ut_pool, &ze, NULL);
    ck_assert_int_eq(zip_source_begin_write(src), 0);
    ck_assert_int_eq(zip_source_write(src, "abc", 3), 3);
    ck_assert(ut_exists(path));
    zip_source_rollback_write(src);
    ck_assert(!ut_exists(path));
    ck_assert_int_eq(zip_source_begin_write(src), 0);
    ck_assert_int_eq(zip_source_write(src, "abc", 3), 3);
    zip_source_free(src);
    ck_assert(!ut_exists(path));
    zip_error_fini(&ze);
}
END_TEST

/* A file that cannot be created keeps its errno. */
START_TEST(create_failure_keeps_errno)
{
    const char *dir = ut_tempdir("zipout-nodir");
    zip_error_t ze;
    zip_source_t *src;

    zip_error_init(&ze);
    src = rs_zipout_source(ut_path(dir, "missing/out"), ut_pool, &ze, NULL);
    ck_assert_int_eq(zip_source_begin_write(src), -1);
    ck_assert_int_eq(zip_error_code_zip(zip_source_error(src)), ZIP_ER_OPEN);
    ck_assert_int_eq(zip_error_code_system(zip_source_error(src)), ENOENT);
    zip_source_free(src);
    zip_error_fini(&ze);
}
END_TEST

/* Through rs_zip: small members around one larger than the buffer (its
 * local header is rewritten after the buffer moved past it); libzip's
 * consistency check and every member's bytes agree. */
START_TEST(package_with_a_member_larger_than_the_buffer)
{
    const char *dir = ut_tempdir("zipout-big");
    const char *target = ut_path(dir, "p.zip");
    size_t big = 2 * RS_ZIPOUT_BUF + 777, i, n;
    char *bytes = malloc(big);
    const char *small = ut_path(dir, "s"), *large = ut_path(dir, "l");
    struct stat sb;
    rs_zip_t *z;
    rs_zip_result_t res;
    zip_t *za;
    zip_file_t *zf;
    apr_int64_t ms, ml;
    int err;
    char *got;

    for (i = 0; i < big; i++) {
        bytes[i] = (char)(i * 13 + i / 4096);
    }
    ut_write(large, bytes, big);
    ut_write_str(small, "small member\n");
    ck_assert_int_eq(stat(small, &sb), 0);
    ms = (apr_int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    ck_assert_int_eq(stat(large, &sb), 0);
    ml = (apr_int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    ck_assert_int_eq(rs_zip_create(&z, target, "m", 1, ms, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_zip_add_path(z, "a", small, 13, ms), APR_SUCCESS);
    ck_assert_int_eq(rs_zip_add_path(z, "b", large, (apr_off_t)big, ml), APR_SUCCESS);
    ck_assert_int_eq(rs_zip_add_path(z, "c", small, 13, ms), APR_SUCCESS);
    ck_assert_int_eq(rs_zip_finish(z, RS_HASH_MD5, &res), APR_SUCCESS);
    {
        /* The large member's header is rewritten after it was written
         * out: the digests come from reading the package back. */
        size_t plen;
        char *pkg = ut_read(target, &plen), hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
        rs_hash_buf(pkg, plen, RS_HASH_MD5, hex);
        ck_assert_int_eq(res.length, (apr_off_t)plen);
        ck_assert_str_eq(res.hex[0], hex[0]);
    }

    za = zip_open(target, ZIP_RDONLY | ZIP_CHECKCONS, &err);
    ck_assert_ptr_nonnull(za);
    ck_assert_int_eq(zip_get_num_entries(za, 0), 4);
    got = malloc(big);
    zf = zip_fopen(za, "b", 0); /* libzip checks the CRC at the end */
    ck_assert_ptr_nonnull(zf);
    for (n = 0; n < big;) {
        zip_int64_t r = zip_fread(zf, got + n, big - n);
        ck_assert_int_gt(r, 0);
        n += (size_t)r;
    }
    ck_assert_int_eq(zip_fread(zf, got, 1), 0);
    zip_fclose(zf);
    ck_assert(memcmp(got, bytes, big) == 0);
    zf = zip_fopen(za, "c", 0);
    ck_assert_int_eq(zip_fread(zf, got, 100), 13);
    ck_assert(memcmp(got, "small member\n", 13) == 0);
    zip_fclose(zf);
    zip_close(za);
    free(got);
    free(bytes);
}
END_TEST

Suite *zipout_suite(void)
{
    Suite *s = suite_create("rs_zipout");
    TCase *tc = ut_tcase("zipout", 30);
    tcase_add_test(tc, writes_and_seeks_match_the_model);
    tcase_add_test(tc, rollback_and_free_remove_the_file);
    tcase_add_test(tc, digests_on_the_way_out);
    tcase_add_test(tc, create_failure_keeps_errno);
    tcase_add_test(tc, package_with_a_member_larger_than_the_buffer);
    suite_add_tcase(s, tc);
    return s;
}
