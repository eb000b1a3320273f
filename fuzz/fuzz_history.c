/* fuzz_history.c - the history file (rs_history_read).
 *
 * <statedir>/history outlives crashes, full disks and operators with
 * editors.  Whatever it holds, the reader either fails cleanly or yields a
 * valid history id; a valid id written back (rs_history_write) reads back
 * unchanged.  The input is written as <tmpdir>/history.
 */
#include <unistd.h>
#include <apr_file_io.h>
#include <apr_strings.h>
#include "fuzz.h"
#include "rs_history.h"

static char dir[] = "/tmp/rs-fuzz-history-XXXXXX";
static int made;

static void remove_dir(void)
{
    char path[sizeof(dir) + 16];
    snprintf(path, sizeof(path), "%s/history", dir);
    unlink(path);
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    const char *path;
    apr_file_t *f;
    apr_size_t n = size;
    char id[RS_HISTORY_LEN + 1], back[RS_HISTORY_LEN + 1];
    apr_status_t rv;

    if (!made) {
        if (!mkdtemp(dir)) {
            abort();
        }
        made = 1;
        atexit(remove_dir);
    }
    path = apr_pstrcat(p, dir, "/history", NULL);
    rv = apr_file_open(&f, path, APR_FOPEN_WRITE | APR_FOPEN_CREATE | APR_FOPEN_TRUNCATE,
                       APR_FPROT_OS_DEFAULT, p);
    FUZZ_CHECK(rv == APR_SUCCESS, "cannot create the history file: %d", rv);
    FUZZ_CHECK(apr_file_write_full(f, data, size, &n) == APR_SUCCESS, "write");
    apr_file_close(f);
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
