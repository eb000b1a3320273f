/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_config.c - directive values: whole numbers, durations, hash lists,
 * exclusion globs, set names, URL-paths and URLs (rs_parse, rs_glob).
 *
 * The first input byte chooses the parser, the rest is the argument as
 * httpd would hand it over (no NUL inside).  Checks beyond "does not
 * crash":
 *   - an accepted number lies in its range; an accepted duration is a
 *     whole number of seconds from 1 s to 3650 days;
 *   - rs_confval gives the same answer as the parser it describes, scaled,
 *     "off" as 0 where it is accepted, else an error naming the directive
 *     and quoting the value;
 *   - a hash list gives a mask of known bits, 0 only for a lone "none",
 *     and a reported bad word is one of the words;
 *   - a glob accepted by rs_glob_check matches; one without any special
 *     character and without "/" matches itself;
 *   - a valid set name makes a valid URL-path below a valid prefix; a
 *     valid base URL is a valid URL.
 */
#include <apr_strings.h>
#include "fuzz.h"
#include "rs_confval.h"
#include "rs_glob.h"
#include "rs_hash.h"
#include "rs_parse.h"

#define MAX_WORDS 16

/* rs_confval's answer for s: the value described, or an error that starts
 * with the directive's name and the quoted value. */
static void check_confval(const rs_confval_t *cv, const char *s, int accepted, apr_int64_t want)
{
    apr_int64_t got = -77;
    const char *err = rs_confval_parse(fuzz_pool(), "D", cv, s, &got);

    if (cv->off && !strcasecmp(s, "off")) {
        accepted = 1;
        want = 0;
    }
    FUZZ_CHECK((err == NULL) == (accepted != 0), "'%s': rs_confval %s", s, err ? err : "accepted");
    if (err) {
        FUZZ_CHECK(!strncmp(err, apr_psprintf(fuzz_pool(), "D: '%s' ", s), strlen(s) + 6)
                       && got == -77,
                   "'%s': %s", s, err);
    }
    else {
        FUZZ_CHECK(got == want, "'%s' gave %" APR_INT64_T_FMT, s, got);
    }
}

static void check_int(const char *s)
{
    static const rs_confval_t mib = { RS_NUMBER(1, 1048576, "MiB"), .off = 1,
                                      .scale = APR_INT64_C(1) << 20 };
    apr_int64_t v = 0;
    int ok = rs_parse_int(s, 1, 1048576, &v);

    check_confval(&mib, s, ok, v << 20);
    if (rs_parse_int(s, 1, 50000, &v)) {
        FUZZ_CHECK(v >= 1 && v <= 50000, "'%s' gave %" APR_INT64_T_FMT, s, v);
    }
    if (rs_parse_int(s, 16, 262144, &v)) {
        FUZZ_CHECK(v >= 16 && v <= 262144, "'%s' gave %" APR_INT64_T_FMT, s, v);
    }
}

static void check_duration(const char *s)
{
    static const rs_confval_t dur = { RS_DURATION("is not a duration") };
    static const rs_confval_t delay = { RS_DELAY(apr_time_from_msec(100), apr_time_from_sec(600),
                                                 "is not a delay") };
    static const rs_confval_t flag = { RS_FLAG("is not On or Off") };
    apr_interval_time_t d = 0;
    int ok;

    ok = rs_parse_delay(s, &d) && d >= apr_time_from_msec(100) && d <= apr_time_from_sec(600);
    check_confval(&delay, s, ok, d);
    ok = !strcasecmp(s, "on") || !strcasecmp(s, "off");
    check_confval(&flag, s, ok, !strcasecmp(s, "on"));
    ok = rs_parse_duration(s, &d);
    check_confval(&dur, s, ok, d);
    if (ok) {
        FUZZ_CHECK(d >= apr_time_from_sec(1) && d <= apr_time_from_sec(3650LL * 86400)
                       && d % APR_USEC_PER_SEC == 0,
                   "'%s' gave %" APR_INT64_T_FMT, s, d);
    }
}

static void check_hashes(char *s)
{
    const char *argv[MAX_WORDS];
    char *last, *w;
    unsigned mask = 0;
    int argc = 0, bad = -1;
    rs_parse_hash_rc_t rc;

    for (w = apr_strtok(s, " \t", &last); w && argc < MAX_WORDS;
         w = apr_strtok(NULL, " \t", &last)) {
        argv[argc++] = w;
    }
    rc = rs_parse_hashes(argc, argv, &mask, &bad);
    switch (rc) {
    case RS_PARSE_OK:
        FUZZ_CHECK(argc > 0 && !(mask & ~0xfu), "mask %x", mask);
        FUZZ_CHECK((mask == 0) == (argc == 1 && !strcasecmp(argv[0], "none")), "mask %x", mask);
        break;
    case RS_PARSE_HASH_EMPTY:
        FUZZ_CHECK(argc == 0, "argc %d", argc);
        break;
    case RS_PARSE_HASH_NONE_MIXED:
        FUZZ_CHECK(bad >= 0 && bad < argc && argc > 1 && !strcasecmp(argv[bad], "none"), "bad %d",
                   bad);
        break;
    case RS_PARSE_HASH_UNKNOWN:
        FUZZ_CHECK(bad >= 0 && bad < argc && !rs_hash_bit(argv[bad]), "bad %d", bad);
        break;
    }
}

/* The pattern is the text up to the first newline; the lines after it
 * are paths matched against it. */
static void check_glob(char *s)
{
    apr_pool_t *p = fuzz_pool();
    apr_array_header_t *pats = apr_array_make(p, 1, sizeof(const char *));
    char *nl = strchr(s, '\n'), *last, *path;

    if (nl) {
        *nl++ = '\0';
    }
    if (rs_glob_check(p, s)) {
        return;
    }
    APR_ARRAY_PUSH(pats, const char *) = s;
    if (!strpbrk(s, "*?[\\/")) {
        FUZZ_CHECK(rs_glob_match(pats, s) == 1, "'%s' does not match itself", s);
    }
    for (path = nl ? apr_strtok(nl, "\n", &last) : NULL; path;
         path = apr_strtok(NULL, "\n", &last)) {
        int m = rs_glob_match(pats, path);
        FUZZ_CHECK(m == 0 || m == 1, "match %d", m);
    }
}

static void check_names(const char *s)
{
    apr_pool_t *p = fuzz_pool();

    if (rs_parse_set_name(s, 64)) {
        FUZZ_CHECK(strlen(s) >= 1 && strlen(s) <= 64, "length %zu", strlen(s));
        FUZZ_CHECK(rs_parse_url_path(apr_pstrcat(p, "/resourcesync/", s, NULL)),
                   "set '%s' makes a bad URL-path", s);
    }
    (void)rs_parse_url_path(s);
}

static void check_urls(const char *s)
{
    int url = rs_parse_url(s), base = rs_parse_base_url(s);
    FUZZ_CHECK(!base || url, "base URL '%s' is not a URL", s);
    if (url) {
        FUZZ_CHECK(!strncasecmp(s, "http://", 7) || !strncasecmp(s, "https://", 8),
                   "'%s' is not http(s)", s);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s;

    if (size < 1 || !(s = fuzz_str(data + 1, size - 1, 0))) {
        return 0;
    }
    switch (data[0] % 6) {
    case 0:
        check_int(s);
        break;
    case 1:
        check_duration(s);
        break;
    case 2:
        check_hashes(s);
        break;
    case 3:
        check_glob(s);
        break;
    case 4:
        check_names(s);
        break;
    case 5:
        check_urls(s);
        break;
    }
    fuzz_done();
    return 0;
}
