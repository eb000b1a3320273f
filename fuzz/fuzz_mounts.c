/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_mounts.c - one line of /proc/self/mountinfo (rs_mounts_parse_line).
 *
 * The kernel writes that file, but its mount points are names chosen by
 * whoever mounts: spaces, newlines and backslashes come escaped as octal
 * (\040), and the parser must take any line without reading past its end.
 * Checks: a result is an absolute path no longer than the field it came
 * from, with no unescaped space or newline.
 */
#include "fuzz.h"
#include "rs_mounts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = fuzz_str(data, size, 0);
    const char *mp;
    long id = 0;

    if (!line) {
        return 0;
    }
    mp = rs_mounts_parse_line(fuzz_pool(), line, &id);
    if (mp) {
        size_t n = strlen(mp);
        FUZZ_CHECK(mp[0] == '/', "not absolute: %s", mp);
        FUZZ_CHECK(n <= size, "longer than the line: %zu > %zu", n, size);
        /* Spaces and newlines end the field: they can only come from an
         * escape, so the result has at most as many as the line has "\0". */
        if (!strstr(line, "\\0")) {
            FUZZ_CHECK(!strchr(mp, ' ') && !strchr(mp, '\n'), "unescaped separator");
        }
    }
    fuzz_done();
    return 0;
}
