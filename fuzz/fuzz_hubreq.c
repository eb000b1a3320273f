/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_hubreq.c - hub subscription requests (rs_hubreq): the form parser
 * and the spool record reader.
 *
 * The input is parsed as a form body; a request that parses and passes
 * rs_hubreq_validate has its callback checked (no resolver) and is
 * written as a spool record, which must parse back to the same fields.
 * The input is also read as a spool file (the spool directory is the
 * module's own, but its files outlive crashes and full disks): whatever
 * the reader accepts must format to a record that parses back to the
 * same fields (but a version 1 record marked deny: it is never written).
 */
#include "fuzz.h"
#include <apr_strings.h>
#include "rs_hubreq.h"

static void check_same(const rs_hubreq_t *a, const rs_hubreq_t *b)
{
    FUZZ_CHECK(a->mode == b->mode && a->lease == b->lease && a->deny == b->deny
                   && a->received == b->received,
               "fields differ");
    FUZZ_CHECK(!strcmp(a->callback, b->callback) && !strcmp(a->topic, b->topic)
                   && !strcmp(a->set, b->set) && !strcmp(a->kind, b->kind)
                   && !strcmp(a->client, b->client),
               "strings differ");
    FUZZ_CHECK((!a->secret && !b->secret)
                   || (a->secret && b->secret && !strcmp(a->secret, b->secret)),
               "secret differs");
}

/* Format r and parse the record back: the same request. */
static void round_trip(apr_pool_t *p, const rs_hubreq_t *r)
{
    const char *rec = rs_hubreq_record_format(p, r), *why;
    rs_hubreq_t back;
    why = rs_hubreq_record_parse(p, rec, strlen(rec), &back);
    FUZZ_CHECK(!why, "own record refused: %s: %s", why, rec);
    check_same(r, &back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    const char *dir, *why, *detail;
    rs_hubreq_t r;
    apr_status_t rv;

    if (!rs_hubreq_parse_form(p, (const char *)data, size, &r)
        && !rs_hubreq_validate(p, &r, 300, 86400)) {
        FUZZ_CHECK(r.lease >= 300 && r.lease <= 86400, "lease not clamped");
        why = rs_hubreq_check_callback(p, r.callback, NULL, &detail);
        FUZZ_CHECK(!detail || (why && !strcmp(why, "hub.callback address not allowed")),
                   "an address refusal without the general reason");
        r.set = "data";
        r.kind = "change";
        r.client = "192.0.2.1";
        r.received = 1;
        round_trip(p, &r);
    }
    dir = fuzz_file("1-2.req", data, size);
    rv = rs_hubreq_spool_read(p, apr_pstrcat(p, dir, "/1-2.req", NULL), &r, &why, NULL);
    FUZZ_CHECK(rv == APR_SUCCESS || (rv == APR_EGENERAL && why), "unexpected status %d", rv);
    /* A version 1 record marked deny is dropped by the watcher, never
     * written again. */
    if (rv == APR_SUCCESS && !r.deny) {
        round_trip(p, &r);
    }
    fuzz_done();
    return 0;
}
