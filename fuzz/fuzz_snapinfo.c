/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_snapinfo.c - the snapshot "info" file reader (rs_snapinfo_read).
 *
 * The state directory is the module's own, but its files outlive crashes,
 * disks that fill up and operators with editors: the reader must take any
 * content without crashing or reading past what it read.  The input is
 * written as <tmpdir>/info (fuzz_file) and read back.
 */
#include "fuzz.h"
#include "rs_snapshot.h"
#include "rs_snapinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    const char *dir = fuzz_file("info", data, size);
    rs_snapshot_info_t info;
    apr_status_t rv;

    memset(&info, 0, sizeof(info));
    rv = rs_snapinfo_read(dir, p, &info);
    /* Malformed, empty or too long: APR_EINVAL (APR_EOF: an older reader). */
    FUZZ_CHECK(rv == APR_SUCCESS || rv == APR_EINVAL || rv == APR_EOF, "unexpected status %d", rv);
    if (rv == APR_SUCCESS) {
        /* What is accepted is what rs_snapshot_write writes: no sign, no
         * wrap, completed not before at, and exactly the file's bytes. */
        char line[128];
        FUZZ_CHECK(info.gen >= 1 && info.at >= 0 && info.completed >= info.at && info.entries >= 0
                       && info.parts >= 0,
                   "out of range");
        snprintf(line, sizeof(line),
                 "%" APR_UINT64_T_FMT " %" APR_INT64_T_FMT " %" APR_INT64_T_FMT " %" APR_INT64_T_FMT
                 " %d\n",
                 info.gen, info.at, info.completed, info.entries, info.parts);
        FUZZ_CHECK(strlen(line) <= size, "shorter than what was read");
    }
    fuzz_done();
    return 0;
}
