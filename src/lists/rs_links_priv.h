/* SPDX-License-Identifier: Apache-2.0 */
/* rs_links_priv.h - the rules of rs_links_t as its two files share them
 * (not part of the API: only rs_links.c, which builds the rules, and
 * rs_linkres.c, which resolves them, include it).
 *
 * A rule's target template is parsed once, at rs_links_add, into pieces:
 * literal bytes and group references.  The kind of the target is decided
 * there too, from the template's leading literal only, so that no file
 * name substituted into a group can turn a local target into a URL or an
 * origin path (a group is data, never syntax).
 */
#ifndef RS_LINKS_PRIV_H
#define RS_LINKS_PRIV_H

#include "rs_links.h"

#define RS_LINKS_URL    1 /* absolute URL: groups percent-encoded */
#define RS_LINKS_ORIGIN 2 /* "/path" on the set's own origin */
#define RS_LINKS_LOCAL  3 /* set-relative path: a file of the set */

/* One piece of a template: a literal (group 0) or group 1..9. */
typedef struct rs_links_piece_t {
    int group;
    const char *lit;
    apr_size_t len;
} rs_links_piece_t;

typedef struct rs_links_rule_t {
    int kind;            /* RS_LINKS_* */
    const char *rel;     /* lower case for a registered name */
    const char *inverse; /* the relation of the inverse link, or NULL */
    void *re;
    int ngroups;
    const char *pattern; /* as written (rs_links_describe) */
    const char *target;  /* the template as written */
    rs_links_piece_t *pieces;
    int npieces;
    const char *type; /* NULL: none */
    int pri;          /* 0: none */
    int if_exists;
} rs_links_rule_t;

/* The ResourceSyncLink rules (resolved into what rows store) and the
 * mirrors (rendered from here, never stored), each in the order given. */
struct rs_links_t {
    rs_links_match_fn *match;
    apr_array_header_t *rules;   /* rs_links_rule_t */
    apr_array_header_t *mirrors; /* rs_links_mirror_t */
    int has_local;
};

#endif
