/* SPDX-License-Identifier: Apache-2.0 */
/* test_zip.c - rs_zip: dump packages written with libzip, read back with
 * libzip, with a small reader of the central directory (flags, DOS times,
 * extra fields), and with `unzip -t` / `python3 -m zipfile -t` when they
 * are installed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <zip.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_zip.h"

#define MANIFEST "<?xml version=\"1.0\"?><urlset/>\n"
#define T0_NS    1700000000123456789LL /* 2023-11-14T22:13:20Z */

/* A file with given bytes and mtime (ns). */
static char *mkfile(const char *dir, const char *name, const char *data, size_t len,
                    apr_int64_t mtime_ns)
{
    char *path = ut_path(dir, name);
    struct timespec ts[2];
    ut_write(path, data, len);
    ts[0].tv_sec = ts[1].tv_sec = (time_t)(mtime_ns / 1000000000);
    ts[0].tv_nsec = ts[1].tv_nsec = (long)(mtime_ns % 1000000000);
    ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
    return path;
}

static apr_int64_t mtime_of(const char *path)
{
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    return (apr_int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
}

/* Names in dir starting with prefix. */
static int count_prefixed(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    ck_assert_ptr_nonnull(d);
    while ((de = readdir(d))) {
        n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
    }
    closedir(d);
    return n;
}

static unsigned u16(const unsigned char *p)
{
    return p[0] | (unsigned)p[1] << 8;
}

static apr_uint32_t u32(const unsigned char *p)
{
    return u16(p) | (apr_uint32_t)u16(p + 2) << 16;
}

/* One central directory record, as written. */
typedef struct cd_t {
    unsigned flags, dtime, ddate, method;
    apr_uint32_t extattr;
    const unsigned char *extra;
    unsigned extra_len;
} cd_t;

/* The central directory record of member name (no ZIP64: small packages). */
static int cd_find(const char *data, size_t len, const char *name, cd_t *out)
{
    const unsigned char *b = (const unsigned char *)data, *e = NULL, *p;
    size_t i, n, count;
    for (i = len - 22 + 1; i-- > 0;) {
        if (u32(b + i) == 0x06054b50) {
            e = b + i;
            break;
        }
    }
    ck_assert_ptr_nonnull(e);
    count = u16(e + 10);
    p = b + u32(e + 16);
    for (n = 0; n < count; n++) {
        unsigned nl = u16(p + 28), xl = u16(p + 30), cl = u16(p + 32);
        ck_assert_uint_eq(u32(p), 0x02014b50);
        if (nl == strlen(name) && memcmp(p + 46, name, nl) == 0) {
            out->flags = u16(p + 8);
            out->method = u16(p + 10);
            out->dtime = u16(p + 12);
            out->ddate = u16(p + 14);
            out->extattr = u32(p + 38);
            out->extra = p + 46 + nl;
            out->extra_len = xl;
            return 1;
        }
        p += 46 + nl + xl + cl;
    }
    return 0;
}

/* Value of the extended timestamp (0x5455) in a record's extra field. */
static int cd_ut_mtime(const cd_t *c, long long *mtime)
{
    const unsigned char *p = c->extra, *end = c->extra + c->extra_len;
    while (p + 4 <= end) {
        unsigned id = u16(p), sz = u16(p + 2);
        if (id == 0x5455 && sz >= 5 && (p[4] & 1)) {
            *mtime = (apr_int32_t)u32(p + 5);
            return 1;
        }
        p += 4 + sz;
    }
    return 0;
}

/* The bytes of member idx, read with libzip. */
static char *zip_member(zip_t *za, zip_uint64_t idx, zip_uint64_t *len)
{
    zip_stat_t st;
    zip_file_t *zf;
    char *buf;
    ck_assert_int_eq(zip_stat_index(za, idx, 0, &st), 0);
    buf = apr_palloc(ut_pool, st.size + 1);
    zf = zip_fopen_index(za, idx, 0);
    ck_assert_ptr_nonnull(zf);
    ck_assert_int_eq(zip_fread(zf, buf, st.size), (zip_int64_t)st.size);
    zip_fclose(zf);
    buf[st.size] = 0;
    *len = st.size;
    return buf;
}

/* Exit status of an outside reader, or -1 when it is not installed. */
static int outside_check(const char *probe, const char *fmt, const char *path)
{
    if (system(probe) != 0) {
        return -1;
    }
    return system(apr_psprintf(ut_pool, fmt, path));
}

static void outside_readers_accept(const char *path)
{
    int rc = outside_check("unzip -v >/dev/null 2>&1", "unzip -tqq '%s' >/dev/null 2>&1", path);
    ck_assert_msg(rc == -1 || rc == 0, "unzip -t failed on %s", path);
    rc = outside_check("python3 -c 'import zipfile' >/dev/null 2>&1",
                       "python3 -m zipfile -t '%s' >/dev/null 2>&1", path);
    ck_assert_msg(rc == -1 || rc == 0, "python3 -m zipfile -t failed on %s", path);
}

typedef struct pkg_t {
    const char *dir, *a, *b, *u, *x;
} pkg_t;

static void pkg_files(pkg_t *k, const char *tag)
{
    k->dir = ut_tempdir(tag);
    k->a = mkfile(k->dir, "a.txt", "alpha\n", 6, T0_NS);
    k->b = mkfile(k->dir, "b c.txt", "", 0, T0_NS + 2000000000LL);
    k->u = mkfile(k->dir, "\xc3\xa9t\xc3\xa9.txt", "summer", 6, T0_NS);
    k->x = mkfile(k->dir, "bad\xff.txt", "latin", 5, 315532799LL * 1000000000);
}

/* Build the package of pkg_t's four files at target. */
static apr_status_t pkg_build(const pkg_t *k, const char *target, rs_zip_result_t *res)
{
    rs_zip_t *z;
    apr_status_t rv = rs_zip_create(&z, target, MANIFEST, strlen(MANIFEST), T0_NS, ut_pool);
    if (rv == APR_SUCCESS) {
        rv = rs_zip_add_path(z, "d/a.txt", k->a, 6, mtime_of(k->a));
    }
    if (rv == APR_SUCCESS) {
        rv = rs_zip_add_path(z, "d/b c.txt", k->b, 0, mtime_of(k->b));
    }
    if (rv == APR_SUCCESS) {
        rv = rs_zip_add_path(z, "d/\xc3\xa9t\xc3\xa9.txt", k->u, 6, mtime_of(k->u));
    }
    if (rv == APR_SUCCESS) {
        rv = rs_zip_add_path(z, "bad\xff.txt", k->x, 5, mtime_of(k->x));
    }
    return rv == APR_SUCCESS ? rs_zip_finish(z, RS_HASH_MD5 | RS_HASH_SHA256, res) : rv;
}

/* Manifest first, members with their bytes, stored, UTF-8 flag only on the
 * non-ASCII UTF-8 name, times from the mtime in UTC, length and digests of
 * the published file, no temporary file left. */
START_TEST(package_layout)
{
    pkg_t k;
    rs_zip_result_t res;
    char *target, *data, hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    size_t len;
    zip_t *za;
    zip_uint64_t mlen;
    int err;
    cd_t c;
    long long ut;

    pkg_files(&k, "zip-layout");
    target = ut_path(k.dir, "p1.zip");
    ck_assert_int_eq(pkg_build(&k, target, &res), APR_SUCCESS);
    ck_assert_uint_eq(res.members, 5);
    data = ut_read(target, &len);
    ck_assert_int_eq(res.length, (apr_off_t)len);
    rs_hash_buf(data, len, RS_HASH_MD5 | RS_HASH_SHA256, hex);
    ck_assert_str_eq(res.hex[0], hex[0]);
    ck_assert_str_eq(res.hex[2], hex[2]);
    ck_assert_int_eq(count_prefixed(k.dir, ".tmp-"), 0);

    za = zip_open(target, ZIP_RDONLY | ZIP_CHECKCONS, &err);
    ck_assert_ptr_nonnull(za);
    ck_assert_int_eq(zip_get_num_entries(za, 0), 5);
    ck_assert_str_eq(zip_get_name(za, 0, ZIP_FL_ENC_RAW), "manifest.xml");
    ck_assert_str_eq(zip_member(za, 0, &mlen), MANIFEST);
    ck_assert_str_eq(zip_get_name(za, 1, ZIP_FL_ENC_RAW), "d/a.txt");
    ck_assert_str_eq(zip_member(za, 1, &mlen), "alpha\n");
    ck_assert_str_eq(zip_get_name(za, 2, ZIP_FL_ENC_RAW), "d/b c.txt");
    ck_assert_uint_eq((zip_member(za, 2, &mlen), mlen), 0);
    ck_assert_str_eq(zip_get_name(za, 3, ZIP_FL_ENC_RAW), "d/\xc3\xa9t\xc3\xa9.txt");
    ck_assert_str_eq(zip_member(za, 3, &mlen), "summer");
    ck_assert_str_eq(zip_get_name(za, 4, ZIP_FL_ENC_RAW), "bad\xff.txt");
    ck_assert_str_eq(zip_member(za, 4, &mlen), "latin");
    zip_close(za);

    /* Flags: bit 11 (UTF-8) only on the UTF-8 name; stored; 0644. */
    ck_assert(cd_find(data, len, "manifest.xml", &c));
    ck_assert_uint_eq(c.flags & 0x800, 0);
    ck_assert_uint_eq(c.method, 0);
    ck_assert(cd_find(data, len, "d/\xc3\xa9t\xc3\xa9.txt", &c));
    ck_assert_uint_eq(c.flags & 0x800, 0x800);
    ck_assert(cd_find(data, len, "bad\xff.txt", &c));
    ck_assert_uint_eq(c.flags & 0x800, 0);
    ck_assert(cd_find(data, len, "d/a.txt", &c));
    ck_assert_uint_eq(c.flags & 0x800, 0);
    ck_assert_uint_eq(c.method, 0);
    ck_assert_uint_eq(c.extattr >> 16, 0100644);
    /* 2023-11-14 22:13:20 UTC, whatever the local time zone. */
    ck_assert_uint_eq(c.ddate, ((2023 - 1980) << 9) | (11 << 5) | 14);
    ck_assert_uint_eq(c.dtime, (22 << 11) | (13 << 5) | (20 / 2));
    ck_assert(cd_ut_mtime(&c, &ut));
    ck_assert_int_eq(ut, 1700000000);
    ck_assert(cd_find(data, len, "d/b c.txt", &c));
    ck_assert_uint_eq(c.dtime, (22 << 11) | (13 << 5) | (22 / 2));
    ck_assert(cd_ut_mtime(&c, &ut));
    ck_assert_int_eq(ut, 1700000002);
    /* Before 1980: the DOS time is clamped, the UTC field keeps the truth. */
    ck_assert(cd_find(data, len, "bad\xff.txt", &c));
    ck_assert_uint_eq(c.ddate, (0 << 9) | (1 << 5) | 1);
    ck_assert_uint_eq(c.dtime, 0);
    ck_assert(cd_ut_mtime(&c, &ut));
    ck_assert_int_eq(ut, 315532799);

    outside_readers_accept(target);
}
END_TEST

/* The same files give the same bytes, in another time zone too, and a
 * package replaces an older one at the target. */
START_TEST(rebuild_is_identical)
{
    pkg_t k;
    rs_zip_result_t r1, r2, r3;
    char *d1, *d2, *d3;
    size_t l1, l2, l3;
    const char *tz = getenv("TZ");

    pkg_files(&k, "zip-determ");
    ck_assert_int_eq(pkg_build(&k, ut_path(k.dir, "one.zip"), &r1), APR_SUCCESS);
    setenv("TZ", "America/Los_Angeles", 1);
    tzset();
    ck_assert_int_eq(pkg_build(&k, ut_path(k.dir, "two.zip"), &r2), APR_SUCCESS);
    setenv("TZ", "Asia/Tokyo", 1);
    tzset();
    ck_assert_int_eq(pkg_build(&k, ut_path(k.dir, "one.zip"), &r3), APR_SUCCESS);
    if (tz) {
        setenv("TZ", tz, 1);
    }
    else {
        unsetenv("TZ");
    }
    tzset();
    d1 = ut_read(ut_path(k.dir, "one.zip"), &l1);
    d2 = ut_read(ut_path(k.dir, "two.zip"), &l2);
    ck_assert_uint_eq(l1, l2);
    ck_assert(memcmp(d1, d2, l1) == 0);
    ck_assert_str_eq(r1.hex[2], r2.hex[2]);
    ck_assert_str_eq(r1.hex[2], r3.hex[2]);
    (void)d3;
    d3 = ut_read(ut_path(k.dir, "one.zip"), &l3);
    ck_assert_uint_eq(l3, l1);
    ck_assert_int_eq(count_prefixed(k.dir, ".tmp-"), 0);
}
END_TEST

START_TEST(names)
{
    static const char *const bad[] = {
        "",  "/a",  "a//b",  "a/",  "..",   "../a",      "a/../b", "a/..",
        ".", "./a", "a/./b", "a/.", "a\\b", "..\\..\\x", "c:x",    "d/C:/x",
    };
    static const char *const good[] = {
        "a", "a/b", "..a", "a..", "a/.b/c", "a b/%23?#'\"", "\xff",
    };
    const char *dir = ut_tempdir("zip-names");
    const char *f = mkfile(dir, "f", "x", 1, T0_NS);
    rs_zip_t *z;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(!rs_zip_name_ok(bad[i]), "accepted: '%s'", bad[i]);
    }
    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        ck_assert_msg(rs_zip_name_ok(good[i]), "refused: '%s'", good[i]);
    }
    ck_assert(!rs_zip_name_utf8("plain/ascii"));
    ck_assert(rs_zip_name_utf8("caf\xc3\xa9"));
    ck_assert(rs_zip_name_utf8("\xf0\x9f\x98\x80"));
    ck_assert(!rs_zip_name_utf8("caf\xe9"));          /* Latin-1 */
    ck_assert(!rs_zip_name_utf8("\xc0\xaf"));         /* overlong '/' */
    ck_assert(!rs_zip_name_utf8("\xed\xa0\x80"));     /* surrogate */
    ck_assert(!rs_zip_name_utf8("\xf4\x90\x80\x80")); /* past U+10FFFF */
    ck_assert(!rs_zip_name_utf8("\xc3"));             /* cut short */

    /* Member names: literal when portable UTF-8, else encoded below their
     * own prefix (so "a%FF" and "a\xff" cannot collide). */
    ck_assert_str_eq(rs_zip_member_name(ut_pool, "r/", "e/", "a b/100% #'&;=+,(x).txt"),
                     "r/a b/100% #'&;=+,(x).txt");
    ck_assert_str_eq(rs_zip_member_name(ut_pool, "r/", "e/", "caf\xc3\xa9/\xe6\x97\xa5"),
                     "r/caf\xc3\xa9/\xe6\x97\xa5");
    ck_assert_str_eq(rs_zip_member_name(ut_pool, "r/", "e/", "a%FF"), "r/a%FF");
    ck_assert_str_eq(rs_zip_member_name(ut_pool, "r/", "e/", "a\xff"), "e/a%FF");
    ck_assert_str_eq(rs_zip_member_name(ut_pool, "r/", "e/", "d/caf\xe9 x"), "e/d/caf%E9%20x");
    ck_assert_str_eq(rs_zip_member_name(ut_pool, "r/", "e/", "tab\there"), "e/tab%09here");
    ck_assert_str_eq(rs_zip_member_name(ut_pool, "r/", "e/", "del\x7f"), "e/del%7F");
    ck_assert_str_eq(rs_zip_member_name(ut_pool, "r/", "e/", "c1\xc2\x85"), "e/c1%C2%85");

    ck_assert_int_eq(rs_zip_create(&z, ut_path(dir, "p.zip"), "m", 1, T0_NS, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_zip_add_path(z, "../f", f, 1, T0_NS), APR_EINVAL);
    ck_assert_ptr_nonnull(strstr(rs_zip_error(z), "../f"));
    ck_assert_int_eq(rs_zip_add_path(z, "/f", f, 1, T0_NS), APR_EINVAL);
    ck_assert_int_eq(rs_zip_add_path(z, "f", f, 1, T0_NS), APR_SUCCESS);
    ck_assert_int_eq(rs_zip_add_path(z, "f", f, 1, T0_NS), APR_EEXIST);
    ck_assert_int_eq(rs_zip_add_path(z, "manifest.xml", f, 1, T0_NS), APR_EEXIST);
    rs_zip_abort(z);
    ck_assert(!ut_exists(ut_path(dir, "p.zip")));
    ck_assert_int_eq(count_prefixed(dir, ".tmp-"), 0);
}
END_TEST

/* Names a Windows or macOS extractor reads as a separator, a drive, a
 * stream or a device, or rewrites, go below the encoded prefix, as ASCII
 * that no extractor reads differently. */
START_TEST(names_portable)
{
    static const char *const cases[][2] = {
        { "x\\..\\..\\Windows\\System32\\evil.bat",
          "e/x%5C..%5C..%5CWindows%5CSystem32%5Cevil.bat" },
        { "C:evil.bat", "e/C%3Aevil.bat" },
        { "d/C:/x", "e/d/C%3A/x" },
        { "file.txt:stream", "e/file.txt%3Astream" },
        { "a b/100% #?'\"<&>.txt", "e/a%20b/100%25%20%23%3F%27%22%3C%26%3E.txt" },
        { "a|b*c", "e/a%7Cb%2Ac" },
        { "x.", "e/x%2E" },
        { "d/. ./f", "e/d/.%20%2E/f" },
        { "d/.../f", "e/d/%2E%2E%2E/f" },
        { "a /b", "e/a%20/b" },
        { "CON", "e/%43ON" },
        { "dir/nul.txt", "e/dir/%6Eul.txt" },
        { "Com1.tar.gz", "e/%43om1.tar.gz" },
        { "nul/x", "e/%6Eul/x" },
        { "con .txt", "e/%63on%20.txt" },
        { "conin$", "e/%63onin%24" },
        { "LPT\xc2\xb9.txt", "e/%4CPT%C2%B9.txt" },
        { "a\xef\xbc\x8f..\xef\xbc\x8f"
          "b",
          "e/a%EF%BC%8F..%EF%BC%8Fb" },
        { "\xef\xbc\xbcwin", "e/%EF%BC%BCwin" },
        { "yen\xc2\xa5.txt", "e/yen%C2%A5.txt" },
        { "won\xe2\x82\xa9", "e/won%E2%82%A9" },
        { "\xef\xbc\x8e\xef\xbc\x8e", "e/%EF%BC%8E%EF%BC%8E" },
        /* Portable: kept literally. */
        { "console.txt", "r/console.txt" },
        { "com10", "r/com10" },
        { "auxiliary/lpt", "r/auxiliary/lpt" },
        { ".hidden/..a/a..b", "r/.hidden/..a/a..b" },
        { " lead", "r/ lead" },
        { "caf\xc3\xa9 \xe2\x82\xac.txt", "r/caf\xc3\xa9 \xe2\x82\xac.txt" },
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = rs_zip_member_name(ut_pool, "r/", "e/", cases[i][0]);
        ck_assert_msg(!strcmp(got, cases[i][1]), "'%s' -> '%s', not '%s'", cases[i][0], got,
                      cases[i][1]);
        ck_assert_msg(rs_zip_name_ok(got), "'%s' refused", got);
        if (got[0] == 'e') {
            /* ASCII letters, digits, -._~% and '/': nothing to misread. */
            ck_assert_msg(strspn(got, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "0123456789-._~%/")
                              == strlen(got),
                          "'%s'", got);
        }
    }
}
END_TEST

/* A member that is not the version described fails the whole package with
 * RS_ZIP_ECHANGED, naming it; nothing is published. */
static void expect_changed(const char *dir, const char *path, apr_off_t size, apr_int64_t mtime_ns,
                           const char *why)
{
    rs_zip_t *z;
    rs_zip_result_t res;
    const char *target = ut_path(dir, "c.zip");

    ck_assert_int_eq(rs_zip_create(&z, target, "m", 1, T0_NS, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_zip_add_path(z, "ok", path, size, mtime_ns), APR_SUCCESS);
    ck_assert_int_eq(rs_zip_finish(z, RS_HASH_MD5, &res), RS_ZIP_ECHANGED);
    ck_assert_msg(strstr(rs_zip_error(z), why) != NULL, "%s", rs_zip_error(z));
    ck_assert_ptr_nonnull(strstr(rs_zip_error(z), "member ok"));
    ck_assert(!ut_exists(target));
    ck_assert_int_eq(count_prefixed(dir, ".tmp-"), 0);
}

START_TEST(changed_file_fails)
{
    const char *dir = ut_tempdir("zip-changed");
    const char *f = mkfile(dir, "f", "0123456789", 10, T0_NS);

    expect_changed(dir, f, 9, T0_NS, "not the version described");
    expect_changed(dir, f, 11, T0_NS, "not the version described");
    expect_changed(dir, f, 10, T0_NS + 1, "not the version described");
    expect_changed(dir, ut_path(dir, "gone"), 10, T0_NS, "file gone");
}
END_TEST

/* A writer keeps changing the file while the package is written.  With
 * content == 1 it rewrites bytes in place and puts the mtime back after
 * each write (same size, same mtime: only the inode change time tells);
 * with content == 0 it toggles the mode, which moves the change time the
 * same way without any moment where size or mtime differ, so only the
 * check after the copy can see it.  Either way the package is refused and
 * nothing is published. */
typedef struct scribbler_t {
    const char *path;
    int content;
    volatile int stop;
    volatile unsigned writes;
} scribbler_t;

static void *scribble(void *arg)
{
    scribbler_t *s = arg;
    struct timespec ts[2];
    int fd = open(s->path, O_WRONLY);
    unsigned n = 0;
    ts[0].tv_sec = ts[1].tv_sec = (time_t)(T0_NS / 1000000000);
    ts[0].tv_nsec = ts[1].tv_nsec = (long)(T0_NS % 1000000000);
    while (!s->stop && fd >= 0) {
        char c = (char)('a' + n++ % 26);
        if (s->content) {
            if (pwrite(fd, &c, 1, (off_t)(n * 4099 % (32 << 20))) != 1) {
                break;
            }
            futimens(fd, ts);
        }
        else if (fchmod(fd, n % 2 ? 0640 : 0644) != 0) {
            break;
        }
        s->writes = n;
    }
    if (fd >= 0) {
        close(fd);
    }
    return NULL;
}

static void scribbled_package_refused(int content)
{
    const char *dir = ut_tempdir("zip-scribble");
    size_t big = 32 << 20;
    char *bytes = calloc(1, big);
    const char *f;
    scribbler_t s = { NULL, content, 0, 0 };
    pthread_t th;
    rs_zip_t *z;
    rs_zip_result_t res;
    const char *target = ut_path(dir, "s.zip");

    f = mkfile(dir, "f", bytes, big, T0_NS);
    free(bytes);
    s.path = f;
    ck_assert_int_eq(rs_zip_create(&z, target, "m", 1, T0_NS, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_zip_add_path(z, "f", f, (apr_off_t)big, T0_NS), APR_SUCCESS);
    ck_assert_int_eq(pthread_create(&th, NULL, scribble, &s), 0);
    while (s.writes == 0) {
        sched_yield(); /* the writer is under way */
    }
    ck_assert_int_eq(rs_zip_finish(z, RS_HASH_MD5, &res), RS_ZIP_ECHANGED);
    s.stop = 1;
    pthread_join(th, NULL);
    ck_assert(!ut_exists(target));
    ck_assert_int_eq(count_prefixed(dir, ".tmp-"), 0);
}

START_TEST(rewritten_while_read_fails)
{
    scribbled_package_refused(1);
}
END_TEST

START_TEST(changed_during_copy_fails)
{
    scribbled_package_refused(0);
    /* Only the check after the copy could see this one. */
}
END_TEST

/* Members from open files: read from offset 0 whatever the file offset. */
START_TEST(member_from_open_file)
{
    const char *dir = ut_tempdir("zip-fd");
    const char *f = mkfile(dir, "f", "0123456789", 10, T0_NS);
    const char *target = ut_path(dir, "fd.zip");
    apr_file_t *af;
    apr_off_t off = 4;
    rs_zip_t *z;
    rs_zip_result_t res;
    zip_t *za;
    zip_uint64_t len;
    int err;

    ck_assert_int_eq(apr_file_open(&af, f, APR_FOPEN_READ, 0, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(apr_file_seek(af, APR_SET, &off), APR_SUCCESS);
    ck_assert_int_eq(rs_zip_create(&z, target, "m", 1, T0_NS, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_zip_add_file(z, "x/f", af, 10, T0_NS), APR_SUCCESS);
    /* The path is renamed away: the open file is what is read. */
    ck_assert_int_eq(rename(f, ut_path(dir, "g")), 0);
    ck_assert_int_eq(rs_zip_finish(z, 0, &res), APR_SUCCESS);
    za = zip_open(target, ZIP_RDONLY | ZIP_CHECKCONS, &err);
    ck_assert_ptr_nonnull(za);
    ck_assert_str_eq(zip_member(za, 1, &len), "0123456789");
    zip_close(za);
}
END_TEST

/* More than 65,535 members: ZIP64 end records, every reader agrees. */
START_TEST(zip64_many_members)
{
    const char *dir = ut_tempdir("zip-many");
    const char *f = mkfile(dir, "f", "z", 1, T0_NS);
    const char *target = ut_path(dir, "many.zip");
    rs_zip_t *z;
    rs_zip_result_t res;
    zip_t *za;
    zip_uint64_t len;
    int i, err;
    char *data, name[32];
    size_t dlen;
    const unsigned char *e = NULL;

    ck_assert_int_eq(rs_zip_create(&z, target, "m", 1, T0_NS, ut_pool), APR_SUCCESS);
    for (i = 0; i < 70000; i++) {
        snprintf(name, sizeof(name), "d%02d/%05d", i % 97, i);
        ck_assert_int_eq(rs_zip_add_path(z, name, f, 1, T0_NS), APR_SUCCESS);
    }
    ck_assert_int_eq(rs_zip_finish(z, RS_HASH_SHA256, &res), APR_SUCCESS);
    ck_assert_uint_eq(res.members, 70001);
    za = zip_open(target, ZIP_RDONLY | ZIP_CHECKCONS, &err);
    ck_assert_ptr_nonnull(za);
    ck_assert_int_eq(zip_get_num_entries(za, 0), 70001);
    ck_assert_str_eq(zip_get_name(za, 0, 0), "manifest.xml");
    ck_assert_str_eq(zip_get_name(za, 70000, 0), "d62/69999");
    ck_assert_str_eq(zip_member(za, 70000, &len), "z");
    zip_close(za);
    /* The ZIP64 end of central directory record and its locator. */
    data = ut_read(target, &dlen);
    for (i = (int)dlen - 22; i >= 0 && !e; i--) {
        if (u32((const unsigned char *)data + i) == 0x06054b50) {
            e = (const unsigned char *)data + i;
        }
    }
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(u16(e + 10), 0xffff);
    ck_assert_uint_eq(u32(e - 20), 0x07064b50);
    outside_readers_accept(target);
    /* Python's zipfile reads the ZIP64 end records: every member, in
     * order, the last one's bytes. */
    i = outside_check(
        "python3 -c 'import zipfile' >/dev/null 2>&1",
        "python3 -c 'import sys,zipfile; z = zipfile.ZipFile(sys.argv[1]); "
        "n = z.namelist(); sys.exit(not (len(n) == 70001 and n[0] == \"manifest.xml\" "
        "and n[70000] == \"d62/69999\" and z.read(n[70000]) == b\"z\"))' '%s'",
        target);
    ck_assert_msg(i == -1 || i == 0, "python3 zipfile does not read the 70,001 members of %s",
                  target);
}
END_TEST

/* DOS fields are the UTC fields in a zone with DST too: around its
 * changes, on both sides of the hour that repeats, and next to the hour
 * that is skipped. */
START_TEST(dos_time_around_dst_changes)
{
    static const struct {
        long long sec;
        unsigned date, time;
    } t[] = {
        { 1699147800LL, ((2023 - 1980) << 9) | (11 << 5) | 5, (1 << 11) | (30 << 5) },
        { 1699151400LL, ((2023 - 1980) << 9) | (11 << 5) | 5, (2 << 11) | (30 << 5) },
        { 1678586398LL, ((2023 - 1980) << 9) | (3 << 5) | 12, (1 << 11) | (59 << 5) | 29 },
        { 1678591800LL, ((2023 - 1980) << 9) | (3 << 5) | 12, (3 << 11) | (30 << 5) },
    };
    const char *dir = ut_tempdir("zip-dst");
    const char *target = ut_path(dir, "dst.zip");
    const char *tz = getenv("TZ");
    rs_zip_t *z;
    rs_zip_result_t res;
    char name[8], *data;
    size_t i, len;
    cd_t c;

    setenv("TZ", "America/Los_Angeles", 1);
    tzset();
    ck_assert_int_eq(rs_zip_create(&z, target, "m", 1, T0_NS, ut_pool), APR_SUCCESS);
    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        const char *f;
        snprintf(name, sizeof(name), "f%d", (int)i);
        f = mkfile(dir, name, "x", 1, t[i].sec * 1000000000LL);
        ck_assert_int_eq(rs_zip_add_path(z, name, f, 1, t[i].sec * 1000000000LL), APR_SUCCESS);
    }
    ck_assert_int_eq(rs_zip_finish(z, 0, &res), APR_SUCCESS);
    if (tz) {
        setenv("TZ", tz, 1);
    }
    else {
        unsetenv("TZ");
    }
    tzset();
    data = ut_read(target, &len);
    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        snprintf(name, sizeof(name), "f%d", (int)i);
        ck_assert(cd_find(data, len, name, &c));
        ck_assert_uint_eq(c.ddate, t[i].date);
        ck_assert_uint_eq(c.dtime, t[i].time);
    }
}
END_TEST

/* A write that fails keeps its cause (RLIMIT_FSIZE: EFBIG, the path of a
 * full disk) and leaves nothing at the target or beside it. */
START_TEST(write_failure_publishes_nothing)
{
    const char *dir = ut_tempdir("zip-full");
    char *bytes = calloc(1, 200000);
    const char *f = mkfile(dir, "f", bytes, 200000, T0_NS);
    const char *target = ut_path(dir, "full.zip");
    struct rlimit rl;
    rs_zip_t *z;
    rs_zip_result_t res;

    free(bytes);
    if (!ut_forking) {
        return; /* the limit would outlive the test */
    }
    ut_write_str(target, "old package");
    signal(SIGXFSZ, SIG_IGN);
    rl.rlim_cur = rl.rlim_max = 65536;
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    ck_assert_int_eq(rs_zip_create(&z, target, "m", 1, T0_NS, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_zip_add_path(z, "f", f, 200000, T0_NS), APR_SUCCESS);
    ck_assert_int_eq(rs_zip_finish(z, RS_HASH_MD5, &res), APR_FROM_OS_ERROR(EFBIG));
    {
        size_t len;
        ck_assert_str_eq(ut_read(target, &len), "old package");
    }
    ck_assert_int_eq(count_prefixed(dir, ".tmp-"), 0);
}
END_TEST

/* rs_zip_create_path, rs_zip_write, rs_zip_publish: the manifest member
 * is the file's bytes; after the write only the temporary file exists,
 * after publishing only the target, with the digests and length of its
 * bytes; a written package dropped (abort, or its pool destroyed) leaves
 * nothing. */
START_TEST(write_then_publish)
{
    const char *dir = ut_tempdir("zip-twostep");
    const char *man = mkfile(dir, "m.xml", "<urlset/>", 9, T0_NS);
    const char *a = mkfile(dir, "a", "alpha\n", 6, T0_NS);
    const char *target = ut_path(dir, "p.zip");
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    rs_zip_t *z;
    rs_zip_result_t res;
    apr_uint64_t members = 0;
    apr_pool_t *zp;
    zip_t *za;
    zip_uint64_t len;
    size_t flen;
    char *bytes;
    int e;

    ck_assert_int_eq(rs_zip_create_path(&z, target, man, T0_NS, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_zip_add_path(z, "a", a, 6, mtime_of(a)), APR_SUCCESS);
    ck_assert_int_eq(rs_zip_write(z, RS_HASH_MD5, &members), APR_SUCCESS);
    ck_assert_int_eq((int)members, 2);
    ck_assert(!ut_exists(target));
    ck_assert_int_eq(count_prefixed(dir, ".tmp-"), 1);
    memset(&res, 0, sizeof(res));
    ck_assert_int_eq(rs_zip_publish(z, RS_HASH_MD5, &res), APR_SUCCESS);
    ck_assert_int_eq(count_prefixed(dir, ".tmp-"), 0);
    bytes = ut_read(target, &flen);
    ck_assert_int_eq((long long)res.length, (long long)flen);
    rs_hash_buf(bytes, flen, RS_HASH_MD5, hex);
    ck_assert_str_eq(res.hex[0], hex[0]);
    za = zip_open(target, ZIP_RDONLY, &e);
    ck_assert_ptr_nonnull(za);
    ck_assert_str_eq(zip_get_name(za, 0, 0), RS_ZIP_MANIFEST);
    ck_assert_str_eq(zip_member(za, 0, &len), "<urlset/>");
    ck_assert_str_eq(zip_member(za, 1, &len), "alpha\n");
    zip_close(za);

    /* Written, then dropped: by rs_zip_abort, or with its pool. */
    ck_assert_int_eq(rs_zip_create_path(&z, ut_path(dir, "q.zip"), man, T0_NS, ut_pool),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_zip_write(z, RS_HASH_MD5, NULL), APR_SUCCESS);
    ck_assert_int_eq(count_prefixed(dir, ".tmp-"), 1);
    rs_zip_abort(z);
    ck_assert_int_eq(count_prefixed(dir, ".tmp-"), 0);
    apr_pool_create(&zp, ut_pool);
    ck_assert_int_eq(rs_zip_create_path(&z, ut_path(dir, "q.zip"), man, T0_NS, zp), APR_SUCCESS);
    ck_assert_int_eq(rs_zip_write(z, RS_HASH_MD5, NULL), APR_SUCCESS);
    apr_pool_destroy(zp);
    ck_assert_int_eq(count_prefixed(dir, ".tmp-"), 0);
    ck_assert(!ut_exists(ut_path(dir, "q.zip")));
}
END_TEST

/* A manifest file that changes before the package is written is not
 * packaged: the package fails as for any member. */
START_TEST(manifest_file_changed_fails)
{
    const char *dir = ut_tempdir("zip-manchg");
    const char *man = mkfile(dir, "m.xml", "<urlset/>", 9, T0_NS);
    rs_zip_t *z;
    rs_zip_result_t res;

    ck_assert_int_eq(rs_zip_create_path(&z, ut_path(dir, "p.zip"), man, T0_NS, ut_pool),
                     APR_SUCCESS);
    ut_write_str(man, "<urlset></urlset>");
    ck_assert_int_eq(rs_zip_finish(z, RS_HASH_MD5, &res), RS_ZIP_ECHANGED);
    ck_assert(!ut_exists(ut_path(dir, "p.zip")));
    ck_assert_int_eq(count_prefixed(dir, ".tmp-"), 0);
}
END_TEST

Suite *zip_suite(void)
{
    Suite *s = suite_create("rs_zip");
    TCase *tc = ut_tcase("zip", 60);
    tcase_add_test(tc, package_layout);
    tcase_add_test(tc, rebuild_is_identical);
    tcase_add_test(tc, names);
    tcase_add_test(tc, names_portable);
    tcase_add_test(tc, changed_file_fails);
    tcase_add_test(tc, rewritten_while_read_fails);
    tcase_add_test(tc, changed_during_copy_fails);
    tcase_add_test(tc, member_from_open_file);
    tcase_add_test(tc, zip64_many_members);
    tcase_add_test(tc, write_failure_publishes_nothing);
    tcase_add_test(tc, write_then_publish);
    tcase_add_test(tc, manifest_file_changed_fails);
    tcase_add_test(tc, dos_time_around_dst_changes);
    suite_add_tcase(s, tc);
    return s;
}
