/* fuzz_config.c - directive values: whole numbers, durations, hash lists,
 * exclusion globs, set names, URL-paths and URLs (rs_parse, rs_glob).
 *
 * The first input byte chooses the parser, the rest is the argument as
 * httpd would hand it over (no NUL inside).  Checks beyond "does not
 * crash":
 *   - an accepted number lies in its range; an accepted duration is a
 *     whole number of seconds from 1 s to 3650 days;
 *   - a hash list gives a mask of known bits, 0 only for a lone "none",
 *     and a reported bad word is one of the words;
 *   - a glob accepted by rs_glob_check matches; one without any special
 *     character and without "/" matches itself;
 *   - a valid set name makes a valid URL-path below a valid prefix; a
 *     valid base URL is a valid URL.
 */
#include <apr_strings.h>
#include "fuzz.h"
#include "rs_glob.h"
#include "rs_hash.h"
#include "rs_parse.h"

#define MAX_WORDS 16

static void check_int(const char *s)
{
    apr_int64_t v = 0;
    if (rs_parse_int(s, 1, 50000, &v)) {
        FUZZ_CHECK(v >= 1 && v <= 50000, "'%s' gave %" APR_INT64_T_FMT, s, v);
    }
    if (rs_parse_int(s, 16, 262144, &v)) {
        FUZZ_CHECK(v >= 16 && v <= 262144, "'%s' gave %" APR_INT64_T_FMT, s, v);
    }
}

static void check_duration(const char *s)
{
    apr_interval_time_t d = 0;
    if (rs_parse_duration(s, &d)) {
        FUZZ_CHECK(d >= apr_time_from_sec(1) && d <= apr_time_from_sec(3650LL * 86400)
                   && d % APR_USEC_PER_SEC == 0, "'%s' gave %" APR_INT64_T_FMT, s, d);
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
        FUZZ_CHECK(bad >= 0 && bad < argc && argc > 1 && !strcasecmp(argv[bad], "none"),
                   "bad %d", bad);
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
    case 0: check_int(s); break;
    case 1: check_duration(s); break;
    case 2: check_hashes(s); break;
    case 3: check_glob(s); break;
    case 4: check_names(s); break;
    case 5: check_urls(s); break;
    }
    fuzz_done();
    return 0;
}
