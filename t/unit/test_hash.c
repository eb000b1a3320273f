/* SPDX-License-Identifier: Apache-2.0 */
/* test_hash.c - rs_hash: digests and the rs:md hash attribute */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "unit.h"
#include "rs_hash.h"

#define ALL (RS_HASH_MD5 | RS_HASH_SHA1 | RS_HASH_SHA256 | RS_HASH_SHA512)

static const char *const empty_hex[RS_HASH_COUNT] = {
    "d41d8cd98f00b204e9800998ecf8427e",
    "da39a3ee5e6b4b0d3255bfef95601890afd80709",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
};

static const char *const abc_hex[RS_HASH_COUNT] = {
    "900150983cd24fb0d6963f7d28e17f72",
    "a9993e364706816aba3e25717850c26c9cd0d89d",
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
};

/* "The quick brown fox jumps over the lazy dog" */
static const char fox[] = "The quick brown fox jumps over the lazy dog";
static const char *const fox_hex[RS_HASH_COUNT] = {
    "9e107d9d372bb6826bd81d3542a419d6",
    "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12",
    "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592",
    "07e547d9586f6a73f73fbac0435ed76951218fb7d0c8d788a309d785436bbb642e93a252a954f23912547d1e8a3b5ed6e1bfd7097821233fa0538f3db854fee6",
};

static void fill(char hex[RS_HASH_COUNT][RS_HASH_HEXMAX])
{
    int i;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        strcpy(hex[i], "untouched");
    }
}

START_TEST(names_and_bits)
{
    ck_assert_str_eq(rs_hash_name(0), "md5");
    ck_assert_str_eq(rs_hash_name(1), "sha-1");
    ck_assert_str_eq(rs_hash_name(2), "sha-256");
    ck_assert_str_eq(rs_hash_name(3), "sha-512");
    ck_assert_ptr_null(rs_hash_name(-1));
    ck_assert_ptr_null(rs_hash_name(RS_HASH_COUNT));

    ck_assert_uint_eq(rs_hash_bit("md5"), RS_HASH_MD5);
    ck_assert_uint_eq(rs_hash_bit("sha-1"), RS_HASH_SHA1);
    ck_assert_uint_eq(rs_hash_bit("sha-256"), RS_HASH_SHA256);
    ck_assert_uint_eq(rs_hash_bit("sha-512"), RS_HASH_SHA512);
    ck_assert_uint_eq(rs_hash_bit("SHA-256"), RS_HASH_SHA256);
    ck_assert_uint_eq(rs_hash_bit("Md5"), RS_HASH_MD5);
    ck_assert_uint_eq(rs_hash_bit("sha256"), 0);
    ck_assert_uint_eq(rs_hash_bit("sha1"), 0);
    ck_assert_uint_eq(rs_hash_bit("sha"), 0);
    ck_assert_uint_eq(rs_hash_bit("md5 "), 0);
    ck_assert_uint_eq(rs_hash_bit(""), 0);
    ck_assert_uint_eq(rs_hash_bit("sha-384"), 0);
}
END_TEST

START_TEST(vectors_buf)
{
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    int i;

    fill(hex);
    rs_hash_buf("", 0, ALL, hex);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        ck_assert_str_eq(hex[i], empty_hex[i]);
    }
    fill(hex);
    rs_hash_buf("abc", 3, ALL, hex);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        ck_assert_str_eq(hex[i], abc_hex[i]);
    }
    fill(hex);
    rs_hash_buf(fox, strlen(fox), ALL, hex);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        ck_assert_str_eq(hex[i], fox_hex[i]);
    }
    /* Only the digest length plus the NUL is written. */
    ck_assert_uint_eq(strlen(hex[3]), RS_HASH_HEXMAX - 1);
}
END_TEST

START_TEST(mask_subset)
{
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];

    fill(hex);
    rs_hash_buf("abc", 3, RS_HASH_SHA256, hex);
    ck_assert_str_eq(hex[0], "untouched");
    ck_assert_str_eq(hex[1], "untouched");
    ck_assert_str_eq(hex[2], abc_hex[2]);
    ck_assert_str_eq(hex[3], "untouched");

    fill(hex);
    rs_hash_buf("abc", 3, RS_HASH_MD5 | RS_HASH_SHA512, hex);
    ck_assert_str_eq(hex[0], abc_hex[0]);
    ck_assert_str_eq(hex[1], "untouched");
    ck_assert_str_eq(hex[2], "untouched");
    ck_assert_str_eq(hex[3], abc_hex[3]);

    fill(hex);
    rs_hash_buf("abc", 3, 0, hex);
    ck_assert_str_eq(hex[0], "untouched");
    ck_assert_str_eq(hex[3], "untouched");
}
END_TEST

START_TEST(hash_fd_file)
{
    const char *dir = ut_tempdir("hash");
    const char *path = ut_path(dir, "big.bin");
    apr_size_t len = 200000 + 17; /* several 64 KiB reads, odd tail */
    unsigned char *data = apr_palloc(ut_pool, len);
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX], want[RS_HASH_COUNT][RS_HASH_HEXMAX];
    apr_off_t n = -1;
    apr_size_t i;
    int fd, k;

    for (i = 0; i < len; i++) {
        data[i] = (unsigned char)((i * 2654435761u) >> 13);
    }
    ut_write(path, data, len);
    rs_hash_buf(data, len, ALL, want);

    fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    fill(hex);
    ck_assert_int_eq(rs_hash_fd(fd, ALL, hex, &n), APR_SUCCESS);
    close(fd);
    ck_assert_int_eq(n, (apr_off_t)len);
    for (k = 0; k < RS_HASH_COUNT; k++) {
        ck_assert_str_eq(hex[k], want[k]);
    }

    /* Digests the file from its current offset; nread may be NULL. */
    ut_write_str(path, "123abc");
    fd = open(path, O_RDONLY);
    ck_assert_int_eq(lseek(fd, 3, SEEK_SET), 3);
    fill(hex);
    ck_assert_int_eq(rs_hash_fd(fd, RS_HASH_MD5 | RS_HASH_SHA1, hex, &n), APR_SUCCESS);
    ck_assert_int_eq(n, 3);
    ck_assert_str_eq(hex[0], abc_hex[0]);
    ck_assert_str_eq(hex[1], abc_hex[1]);
    ck_assert_str_eq(hex[2], "untouched");
    ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
    ck_assert_int_eq(rs_hash_fd(fd, RS_HASH_SHA256, hex, NULL), APR_SUCCESS);
    close(fd);

    /* Empty file. */
    ut_write(path, "", 0);
    fd = open(path, O_RDONLY);
    ck_assert_int_eq(rs_hash_fd(fd, ALL, hex, &n), APR_SUCCESS);
    close(fd);
    ck_assert_int_eq(n, 0);
    for (k = 0; k < RS_HASH_COUNT; k++) {
        ck_assert_str_eq(hex[k], empty_hex[k]);
    }
}
END_TEST

/* rs_hash_fd_upto: with the size known it stops after that many bytes,
 * without the read that would find the end (a pipe whose writer is
 * still open would block that read); more bytes than expected are all
 * read. */
START_TEST(hash_fd_upto)
{
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    apr_off_t n = -1;
    int fds[2];

    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(write(fds[1], "abc", 3), 3);
    fill(hex);
    ck_assert_int_eq(rs_hash_fd_upto(fds[0], RS_HASH_MD5, hex, 3, &n, NULL, -1, NULL), APR_SUCCESS);
    ck_assert_int_eq(n, 3);
    ck_assert_str_eq(hex[0], abc_hex[0]);
    ck_assert_int_eq(write(fds[1], "abc", 3), 3);
    close(fds[1]);
    ck_assert_int_eq(rs_hash_fd_upto(fds[0], RS_HASH_MD5, hex, 2, &n, NULL, -1, NULL), APR_SUCCESS);
    ck_assert_int_eq(n, 3);
    ck_assert_str_eq(hex[0], abc_hex[0]);
    close(fds[0]);
}
END_TEST

START_TEST(hash_fd_errors)
{
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    const char *dir = ut_tempdir("hash");
    apr_off_t n = -1;
    int fd;

    /* A read error is returned as its errno and leaves hex alone. */
    fd = open(dir, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge(fd, 0);
    fill(hex);
    ck_assert_int_eq(rs_hash_fd(fd, ALL, hex, &n), EISDIR);
    close(fd);
    ck_assert_int_eq(n, 0);
    ck_assert_str_eq(hex[0], "untouched");
    ck_assert_str_eq(hex[2], "untouched");

    fill(hex);
    ck_assert_int_eq(rs_hash_fd(-1, RS_HASH_SHA256, hex, NULL), EBADF);
    ck_assert_str_eq(hex[2], "untouched");
}
END_TEST

START_TEST(attr_format)
{
    const char *hex[RS_HASH_COUNT] = { "aa", "bb", "cc", "dd" };
    const char *some[RS_HASH_COUNT] = { "aa", NULL, "", "dd" };

    ck_assert_str_eq(rs_hash_attr(ut_pool, ALL, hex), "md5:aa sha-1:bb sha-256:cc sha-512:dd");
    ck_assert_str_eq(rs_hash_attr(ut_pool, RS_HASH_SHA256, hex), "sha-256:cc");
    /* Fixed table order whatever the mask's order. */
    ck_assert_str_eq(rs_hash_attr(ut_pool, RS_HASH_SHA512 | RS_HASH_MD5, hex), "md5:aa sha-512:dd");
    ck_assert_str_eq(rs_hash_attr(ut_pool, RS_HASH_SHA256 | RS_HASH_SHA1, hex),
                     "sha-1:bb sha-256:cc");
    /* NULL and empty digests are skipped; nothing left gives NULL. */
    ck_assert_str_eq(rs_hash_attr(ut_pool, ALL, some), "md5:aa sha-512:dd");
    ck_assert_str_eq(rs_hash_attr(ut_pool, RS_HASH_SHA1 | RS_HASH_SHA512, some), "sha-512:dd");
    ck_assert_ptr_null(rs_hash_attr(ut_pool, RS_HASH_SHA1 | RS_HASH_SHA256, some));
    ck_assert_ptr_null(rs_hash_attr(ut_pool, 0, hex));
}
END_TEST

START_TEST(attr_of_digests)
{
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    const char *h[RS_HASH_COUNT];
    int i;

    rs_hash_buf("abc", 3, RS_HASH_MD5 | RS_HASH_SHA256, hex);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        h[i] = (i == 0 || i == 2) ? hex[i] : NULL;
    }
    ck_assert_str_eq(rs_hash_attr(ut_pool, RS_HASH_MD5 | RS_HASH_SHA256, h),
                     "md5:900150983cd24fb0d6963f7d28e17f72 "
                     "sha-256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
END_TEST

Suite *hash_suite(void)
{
    Suite *s = suite_create("rs_hash");
    TCase *tc = ut_tcase("digests", 10);
    tcase_add_test(tc, names_and_bits);
    tcase_add_test(tc, vectors_buf);
    tcase_add_test(tc, mask_subset);
    tcase_add_test(tc, hash_fd_file);
    tcase_add_test(tc, hash_fd_errors);
    tcase_add_test(tc, hash_fd_upto);
    suite_add_tcase(s, tc);
    tc = ut_tcase("attribute", 10);
    tcase_add_test(tc, attr_format);
    tcase_add_test(tc, attr_of_digests);
    suite_add_tcase(s, tc);
    return s;
}
