/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz.h - shared helpers of the libFuzzer harnesses in this directory.
 *
 * Every harness gets a NUL-terminated copy of the input (inputs with a NUL
 * byte inside are skipped where the real input cannot hold one: URLs,
 * directive arguments, file names) and one APR pool, cleared after each
 * input.  FUZZ_CHECK aborts with a message, which libFuzzer reports as a
 * crash with the input that caused it.
 */
#ifndef RS_FUZZ_H
#define RS_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <apr_general.h>
#include <apr_pools.h>
#include <unistd.h>

#define FUZZ_CHECK(cond, ...)                                                        \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
            abort();                                                                 \
        }                                                                            \
    } while (0)

/* The pool for one input: created on first use, cleared by fuzz_done. */
static inline apr_pool_t *fuzz_pool(void)
{
    static apr_pool_t *pool;
    if (!pool) {
        if (apr_initialize() != APR_SUCCESS || apr_pool_create(&pool, NULL) != APR_SUCCESS) {
            abort();
        }
    }
    return pool;
}

/* Whether path can be a file's path relative to a set's root, as the
 * inventory keeps it: components that are not empty, "." or "..". */
static inline int fuzz_relative_path(const char *path)
{
    const char *c = path;
    for (;;) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (!n || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.')) {
            return 0;
        }
        if (!e) {
            return 1;
        }
        c = e + 1;
    }
}

static inline void fuzz_done(void)
{
    apr_pool_clear(fuzz_pool());
}

/* NUL-terminated copy of data in the pool; NULL when data holds a NUL
 * and nul_ok is 0. */
static inline char *fuzz_str(const uint8_t *data, size_t size, int nul_ok)
{
    char *s;
    if (!nul_ok && memchr(data, 0, size)) {
        return NULL;
    }
    s = apr_palloc(fuzz_pool(), size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* The input as the file <tmpdir>/name (tmpdir: one directory per process
 * below /tmp, removed with the file when libFuzzer exits): for readers of
 * the module's own files.  Returns the directory. */
static char fuzz_dir_[] = "/tmp/rs-fuzz-XXXXXX";
static char fuzz_file_[sizeof(fuzz_dir_) + 64];

static inline void fuzz_remove_dir_(void)
{
    unlink(fuzz_file_);
    rmdir(fuzz_dir_);
}

static inline const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
    static int made;
    FILE *f;

    if (!made) {
        if (!mkdtemp(fuzz_dir_)) {
            abort();
        }
        made = 1;
        atexit(fuzz_remove_dir_);
    }
    snprintf(fuzz_file_, sizeof(fuzz_file_), "%s/%s", fuzz_dir_, name);
    if (!(f = fopen(fuzz_file_, "wb")) || (size && fwrite(data, 1, size, f) != size)
        || fclose(f) != 0) {
        abort();
    }
    return fuzz_dir_;
}

#endif
