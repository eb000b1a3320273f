/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_links.c - the decoder of a resource's encoded links
 * (rs_links_decode).
 *
 * The encoded links stand in the store's rows (inventory and journal),
 * which outlive crashes and may be edited or damaged: the decoder must
 * take any bytes without crashing, and what it accepts must be exactly
 * what the encoder writes (decoding and encoding again gives the input),
 * with every value in range - the renderer writes what it decodes.
 */
#include "fuzz.h"
#include "rs_links.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    char *s = fuzz_str(data, size, 0);
    apr_array_header_t *links;
    int i;

    if (!s) {
        return 0; /* a NUL inside: no stored text holds one */
    }
    links = rs_links_decode(p, s);
    if (links) {
        const char *again = rs_links_encode(p, links);
        FUZZ_CHECK(*s ? again && !strcmp(again, s) : !again, "not the encoder's form");
        for (i = 0; i < links->nelts; i++) {
            const rs_link_t *k = &APR_ARRAY_IDX(links, i, rs_link_t);
            FUZZ_CHECK(k->rel && *k->rel && k->href && *k->href, "link %d without rel or href", i);
            FUZZ_CHECK(k->pri >= 0 && k->pri <= 999999 && k->length >= -1, "link %d out of range",
                       i);
        }
    }
    fuzz_done();
    return 0;
}
