/* SPDX-License-Identifier: Apache-2.0 */
/* rs_setconf.h - whether two nodes declare a set alike.
 *
 * With a store several nodes share, every node declares the same sets,
 * and a node serves the documents the writing node wrote.  Its own
 * configuration still shapes what it serves beside them (the Capability
 * List and Source Description it rendered at startup, the Link header on
 * the resources), and the writer's shapes the lists: when the two differ
 * (another base URL, other digests, other dumps), a destination would be
 * told two different things by one Source.  So the writer records its
 * set's options in the store when it takes the set (the glue:
 * mod_resourcesync_setconf.c), and a node whose own differ refuses to
 * serve the set and says which option differs.
 *
 * The options are items (name, value), the name the directive's an
 * operator would change.  They are encoded as lines "name=value" in the
 * order given; a value's newline and backslash are escaped, so any value
 * makes one line.  APR only.
 */
#ifndef RS_SETCONF_H
#define RS_SETCONF_H

#include <apr_pools.h>
#include <apr_tables.h>

typedef struct rs_setconf_item_t {
    const char *name;  /* no "=" or newline */
    const char *value; /* any bytes but NUL */
} rs_setconf_item_t;

/* Append the item (name, value) to items (an array of rs_setconf_item_t);
 * value NULL is the empty string. */
void rs_setconf_add(apr_array_header_t *items, const char *name, const char *value);

/* The items as lines "name=value\n" (in p). */
const char *rs_setconf_encode(apr_pool_t *p, const apr_array_header_t *items);

/* NULL when mine and theirs (both from rs_setconf_encode) hold the same
 * items; else a sentence (in p) naming the first item that differs, in
 * mine's order and then theirs': "NAME is VALUE here, VALUE on NODE"
 * (a value missing on one side is "(not set)"; a value longer than 200
 * bytes is cut with "..."). */
const char *rs_setconf_diff(apr_pool_t *p, const char *mine, const char *theirs, const char *node);

#endif
