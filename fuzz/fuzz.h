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

#define FUZZ_CHECK(cond, ...) do {                                      \
        if (!(cond)) {                                                  \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__,      \
                    __LINE__, #cond);                                   \
            fprintf(stderr, __VA_ARGS__);                               \
            fputc('\n', stderr);                                        \
            abort();                                                    \
        }                                                               \
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

#endif
