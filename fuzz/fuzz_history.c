/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_history.c - the history file (rs_history_read).
 *
 * <statedir>/history outlives crashes, full disks and operators with
 * editors.  Whatever it holds, the reader either fails cleanly or yields a
 * valid history id; a valid id written back (rs_history_write) reads back
 * unchanged.  The input is written as <tmpdir>/history.
 */
#include <apr_strings.h>
#include "fuzz.h"
#include "rs_history.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    const char *path = apr_pstrcat(p, fuzz_file("history", data, size), "/history", NULL);
    char id[RS_HISTORY_LEN + 1], back[RS_HISTORY_LEN + 1];
    apr_status_t rv;

    rv = rs_history_read(p, path, id);
    FUZZ_CHECK(rv == APR_SUCCESS || rv == APR_EINVAL, "unexpected status %d", rv);
    if (rv == APR_SUCCESS) {
        FUZZ_CHECK(rs_parse_history_id(id), "an invalid id was read: %s", id);
        FUZZ_CHECK(rs_history_write(p, path, id) == APR_SUCCESS, "write back");
        FUZZ_CHECK(rs_history_read(p, path, back) == APR_SUCCESS && !strcmp(id, back),
                   "the id does not read back");
    }
    fuzz_done();
    return 0;
}
