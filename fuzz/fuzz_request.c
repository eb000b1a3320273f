/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_request.c - request paths below the prefix, history ids and
 * part/list ids (rs_parse_request_path, rs_parse_history, rs_parse_part,
 * rs_parse_dump_part (package keys), rs_parse_cdump_part, rs_parse_cdump_index_part,
 * rs_parse_id).
 *
 * Checks beyond "does not crash": the split set name lies inside the
 * input and holds no "/"; an accepted part or id is canonical, i.e. the
 * numbers printed back give exactly the input (no sign, no leading zero,
 * nothing trailing), and never 0.
 */
#include <apr_strings.h>
#include "fuzz.h"
#include "rs_parse.h"

static void check_part(const char *arg)
{
    apr_uint64_t gen = 0;
    int n = 0;
    char buf[64];

    if (rs_parse_part(arg, &gen, &n)) {
        FUZZ_CHECK(gen > 0 && n > 0, "gen %" APR_UINT64_T_FMT " n %d", gen, n);
        apr_snprintf(buf, sizeof(buf), "%" APR_UINT64_T_FMT "-%d.xml", gen, n);
        FUZZ_CHECK(!strcmp(buf, arg), "'%s' read as '%s'", arg, buf);
    }
}

static void check_dump_part(const char *arg)
{
    char key[RS_PARSE_DUMP_KEY_LEN + 1], buf[64];
    int m = -1, i;

    memset(key, 0, sizeof(key));
    if (rs_parse_dump_part(arg, key, &m)) {
        FUZZ_CHECK(m == 0 || m == 1, "m %d", m);
        FUZZ_CHECK(strlen(key) == RS_PARSE_DUMP_KEY_LEN, "key '%s'", key);
        for (i = 0; key[i]; i++) {
            FUZZ_CHECK((key[i] >= '0' && key[i] <= '9') || (key[i] >= 'a' && key[i] <= 'f'),
                       "key '%s'", key);
        }
        apr_snprintf(buf, sizeof(buf), "%s.%s", key, m ? "xml" : "zip");
        FUZZ_CHECK(!strcmp(buf, arg), "'%s' read as '%s'", arg, buf);
    }
}

static void check_cdump_part(const char *arg)
{
    apr_int64_t id = 0;
    int m = -1, rev = -1;
    char buf[64];

    if (rs_parse_cdump_part(arg, &id, &rev, &m)) {
        FUZZ_CHECK(id > 0 && rev >= 0 && (m == 0 || m == 1), "id %" APR_INT64_T_FMT " rev %d m %d",
                   id, rev, m);
        if (rev) {
            apr_snprintf(buf, sizeof(buf), "%" APR_INT64_T_FMT "-%d.%s", id, rev,
                         m ? "xml" : "zip");
        }
        else {
            apr_snprintf(buf, sizeof(buf), "%" APR_INT64_T_FMT ".%s", id, m ? "xml" : "zip");
        }
        FUZZ_CHECK(!strcmp(buf, arg), "'%s' read as '%s'", arg, buf);
    }
}

/* A part of a Change Dump Index: round-trips, and is never also a
 * package's name (the handler tries it first). */
static void check_cdump_index_part(const char *arg)
{
    apr_int64_t id = 0;
    int n = -1, m, rev;
    char buf[64];

    if (rs_parse_cdump_index_part(arg, &n)) {
        FUZZ_CHECK(n > 0, "part %d", n);
        apr_snprintf(buf, sizeof(buf), "part-%d.xml", n);
        FUZZ_CHECK(!strcmp(buf, arg), "'%s' read as '%s'", arg, buf);
        FUZZ_CHECK(!rs_parse_cdump_part(arg, &id, &rev, &m), "'%s' is a part and a package", arg);
    }
}

static void check_id(const char *arg)
{
    apr_int64_t id = 0;
    char buf[64];

    if (rs_parse_id(arg, ".xml", &id)) {
        FUZZ_CHECK(id > 0, "id %" APR_INT64_T_FMT, id);
        apr_snprintf(buf, sizeof(buf), "%" APR_INT64_T_FMT ".xml", id);
        FUZZ_CHECK(!strcmp(buf, arg), "'%s' read as '%s'", arg, buf);
    }
}

/* "<history>-" then a part or an id, as the handler reads them: the id
 * is copied exactly, and the rest starts right after its '-'. */
static void check_history(const char *arg)
{
    char h[RS_HISTORY_LEN + 1];
    const char *rest = rs_parse_history(arg, h);

    if (rest) {
        FUZZ_CHECK(rest == arg + RS_HISTORY_LEN + 1, "rest not after the id");
        FUZZ_CHECK(strlen(h) == RS_HISTORY_LEN && !strncmp(h, arg, RS_HISTORY_LEN)
                       && rs_parse_history_id(h),
                   "id '%s' of '%s'", h, arg);
        check_part(rest);
        check_dump_part(rest);
        check_cdump_part(rest);
        check_cdump_index_part(rest);
        check_id(rest);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *rest = fuzz_str(data, size, 0);
    rs_request_path_t rp;

    if (!rest) {
        return 0;
    }
    if (rs_parse_request_path(rest, &rp)) {
        FUZZ_CHECK(rp.set == rest + 1 && rp.set_len < size, "set outside the input");
        FUZZ_CHECK(!memchr(rp.set, '/', rp.set_len), "set name holds '/'");
        FUZZ_CHECK(rest[1 + rp.set_len] == '/', "set not followed by '/'");
        FUZZ_CHECK((rp.arg != NULL)
                       == (rp.kind == RS_DOC_RESOURCELIST_PART || rp.kind == RS_DOC_CHANGELIST_PART
                           || rp.kind == RS_DOC_RESOURCEDUMP_PART
                           || rp.kind == RS_DOC_CHANGEDUMP_PART || rp.kind == RS_DOC_NOTIFY),
                   "arg");
        if (rp.kind == RS_DOC_NOTIFY) {
            FUZZ_CHECK(!strcmp(rp.arg, "change") || !strcmp(rp.arg, "framework"), "topic '%s'",
                       rp.arg);
        }
        else if (rp.arg) {
            FUZZ_CHECK(rp.arg > rest && rp.arg <= rest + size, "arg outside the input");
            check_history(rp.arg);
        }
    }
    /* The part and id parsers see any string, not only what follows
     * "resourcelist/" or "changelist/". */
    check_part(rest);
    check_dump_part(rest);
    check_cdump_part(rest);
    check_cdump_index_part(rest);
    check_id(rest);
    check_history(rest);
    fuzz_done();
    return 0;
}
