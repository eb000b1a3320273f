/* fuzz_request.c - request paths below the prefix and part/list ids
 * (rs_parse_request_path, rs_parse_part, rs_parse_id).
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
        FUZZ_CHECK((rp.arg != NULL) == (rp.kind == RS_DOC_RESOURCELIST_PART
                                        || rp.kind == RS_DOC_CHANGELIST_PART), "arg");
        if (rp.arg) {
            FUZZ_CHECK(rp.arg > rest && rp.arg <= rest + size, "arg outside the input");
        }
    }
    /* The part and id parsers see any string, not only what follows
     * "resourcelist/" or "changelist/". */
    check_part(rest);
    check_id(rest);
    fuzz_done();
    return 0;
}
