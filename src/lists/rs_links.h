/* SPDX-License-Identifier: Apache-2.0 */
/* rs_links.h - the rs:ln relations of a set's resources (ResourceSync 1.1
 * section 14): rules from the configuration, resolved per resource.
 *
 * Rules (ResourceSyncLink), in the order given:
 *   rel      an IANA-registered relation name or an absolute URI
 *            (rs_links_rel_check);
 *   pattern  a regular expression on the set-relative path ("d/f.txt"),
 *            compiled by the caller and matched through its match
 *            function (httpd's ap_regexec in the module, POSIX regexec in
 *            the unit tests), so this file needs no regex library;
 *   target   a template with $1..$9 (the pattern's groups) and $$ (a
 *            "$"); after substitution it is
 *              - an absolute URL (it begins with a scheme and ":"): each
 *                substituted group is percent-encoded as a path is;
 *              - a path beginning with "/": a URL-path on the set's own
 *                origin (scheme://host:port of the URL base), never a
 *                file of the set;
 *              - otherwise a set-relative path: a *local* target.  Its
 *                href is the set's URL base followed by the path
 *                percent-encoded; a result with an empty, "." or ".."
 *                segment, or the resource's own path, gives no link.
 *            The kind is decided from the template's leading literal
 *            (a template that begins with $n is local): no substituted
 *            file name can turn a local target into a URL.
 *   type     type= for a target that is not local (a local target's link
 *            carries the target's own type);
 *   pri      1..999999, 0: none;
 *   if-exists  (local targets only) the link is there only while the
 *            target is a listed file of the set.
 * Mirrors (ResourceSyncMirror URL-PREFIX [pri=N]), in the order given,
 * apart from the rules: every resource has rel="duplicate" to
 * URL-PREFIX followed by its path percent-encoded (its <loc> after the
 * set's URL base), and pri.  That is a function of the path and the
 * configuration alone, so it is never resolved or stored: the entry
 * renderer (rs_entry) writes the mirrors from here (rs_links_mirrors)
 * after the stored links, in every document.
 *
 * Resolution of one resource S (set-relative path) by the rules:
 *   forward  every rule whose pattern matches S, in rule order; a local
 *            target T that is a listed file of the set gives the link
 *            T's type, encoding, length, modified (T's mtime) and hashes
 *            (the renderer lists those of the set's hash mask);
 *   inverse  for every S' that has a forward link to S with a relation
 *            that has an inverse (describedby <-> describes, alternate
 *            <-> canonical), while S' is a listed file: a link with the
 *            inverse relation to S' carrying S''s attributes.  Inverse
 *            links follow the forward ones, ordered by S' path, then
 *            rule order.
 * The caller keeps the dependencies (rs_links_forward's deps: every
 * local target a rule names for S, listed or not) so that when T
 * appears, changes or disappears the resources linking to it are
 * resolved again, and so that the inverse of T can be found.
 *
 * Encoded form: the resolved links of one resource as one string (NULL or
 * "" when it has none), kept with the resource's inventory row and
 * journal record and decoded by the one entry renderer (rs_entry), so
 * every document that lists the resource carries the same <rs:ln> bytes.
 * An entry's links are the forward links in rule order, then the inverse
 * links, then (rendered, not stored) the mirrors in the order given.
 */
#ifndef RS_LINKS_H
#define RS_LINKS_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "rs_hash.h"
#include "rs_inventory.h"

/* Offsets of a match: whole match and groups; -1 for a group that did not
 * take part. */
typedef struct rs_links_span_t {
    int so, eo;
} rs_links_span_t;

/* Match path against the compiled pattern re; fill m[0..nmatch-1]. Returns
 * 1 on a match, 0 on none. */
typedef int rs_links_match_fn(void *re, const char *path, int nmatch, rs_links_span_t *m);

/* A set's rules and mirrors, in order (allocated from the pool given to
 * create; they are read-only once the configuration is read, and shared
 * by every process forked after it). */
typedef struct rs_links_t rs_links_t;

rs_links_t *rs_links_create(apr_pool_t *p, rs_links_match_fn *match);

/* NULL when rel may be used on a resource's entry, else why not. */
const char *rs_links_rel_check(apr_pool_t *p, const char *rel);

/* Add a rule (see above); re has ngroups capture groups.  Returns NULL, or
 * an error message naming the bad value (an unknown relation, "$3" past
 * the groups, pri outside 1..999999, if-exists on a target that is not
 * local). */
const char *rs_links_add(rs_links_t *l, apr_pool_t *p, const char *rel, void *re, int ngroups,
                         const char *pattern, const char *target, const char *type, int pri,
                         int if_exists);

/* Add a mirror: rel="duplicate" to url_prefix followed by the path.
 * Returns NULL, or an error message naming the bad value (not an
 * absolute URL of printable ASCII without query or fragment, pri outside
 * 1..999999). */
const char *rs_links_add_mirror(rs_links_t *l, apr_pool_t *p, const char *url_prefix, int pri);

/* Number of rules, mirrors not counted (0 for NULL): the links a row
 * stores come from these alone. */
int rs_links_count(const rs_links_t *l);

/* One mirror. */
typedef struct rs_links_mirror_t {
    const char *prefix; /* an absolute URL ending with "/": printable ASCII
                         * without space, quotes, "<", ">" or "\" */
    int pri;            /* 0: none */
} rs_links_mirror_t;

/* The mirrors of l in the order given (valid as long as l), *n of them;
 * NULL and 0 for none (or NULL l). */
const rs_links_mirror_t *rs_links_mirrors(const rs_links_t *l, int *n);

/* 1 when some rule may name a local target (the caller must then keep
 * dependencies and look targets up). */
int rs_links_has_local(const rs_links_t *l);

/* A text that changes whenever the rules do (their arguments, in order;
 * "" without rules): the digest of what rows store (rs_set_t.links_fp).
 * Mirrors are not in it. */
const char *rs_links_describe(const rs_links_t *l, apr_pool_t *p);

/* The same for the mirrors ("" without): what every rendered entry
 * carries besides its stored links (snapshot and dump package keys, the
 * open Change List's ETag). */
const char *rs_links_mirrors_describe(const rs_links_t *l, apr_pool_t *p);

/* 1 when path may be the local target of some rule (a cheap test on the
 * templates' literal parts: 0 means no rule can name it, so no lookup of
 * the resources linking to it is needed). */
int rs_links_may_be_target(const rs_links_t *l, const char *path);

/* One resolved link. */
typedef struct rs_link_t {
    const char *rel;
    const char *href;                /* absolute URL, escaped */
    int pri;                         /* 0: none */
    const char *type;                /* NULL: none */
    const char *encoding;            /* NULL: none */
    apr_int64_t length;              /* -1: none */
    apr_int64_t modified_ns;         /* -1: none */
    const char *hash[RS_HASH_COUNT]; /* hex or NULL */
} rs_link_t;

/* Append to links (rs_link_t) a link with rel and href and no other
 * attribute (pri 0, length and modified -1, NULL strings); returns it. */
rs_link_t *rs_links_push(apr_array_header_t *links, const char *rel, const char *href);

/* The listed row of a set-relative path: 1 and *out filled (from p) when
 * path is a listed file of the set, 0 when it is not (absent, or known
 * but not served), -1 on a store error. */
typedef int rs_links_lookup_fn(void *baton, apr_pool_t *p, const char *path, rs_item_t *out);

/* Forward links of the resource at path (rs_link_t, in rule order; no
 * mirror) into *links; every local target its rules name, listed or not, into *deps
 * (const char *, no duplicates; NULL: not wanted).  url_base: the set's
 * root URL (escaped, ends with "/").  Returns 0, or -1 when lookup failed. */
int rs_links_forward(const rs_links_t *l, apr_pool_t *p, const char *url_base, const char *path,
                     rs_links_lookup_fn *lookup, void *baton, apr_array_header_t **links,
                     apr_array_header_t **deps);

/* Inverse links of the resource at path, given the paths that depend on
 * it (sources: const char *, any order; those that no longer link to it
 * are skipped), appended to *links.  Returns 0, or -1 when lookup failed. */
int rs_links_inverse(const rs_links_t *l, apr_pool_t *p, const char *url_base, const char *path,
                     const apr_array_header_t *sources, rs_links_lookup_fn *lookup, void *baton,
                     apr_array_header_t *links);

/* The encoded form of links (rs_link_t); NULL when there are none. */
const char *rs_links_encode(apr_pool_t *p, const apr_array_header_t *links);

/* Decode s (NULL or "": none) into rs_link_t; NULL when s is malformed. */
apr_array_header_t *rs_links_decode(apr_pool_t *p, const char *s);

/* rs_links_decode without allocating (for the renderer's fast path):
 * buf, a copy of the encoded form, is decoded in place (its values are
 * unescaped where they stand and the strings of links[] point into it)
 * into links[0..max-1].  Returns the number of links, -1 when buf is
 * malformed, -2 when it holds more than max (rs_links_parse_count says
 * how many). */
int rs_links_parse(char *buf, rs_link_t *links, int max);

/* The number of links in the encoded s (0 for NULL or ""), malformed or
 * not: an upper bound for rs_links_parse's max. */
int rs_links_parse_count(const char *s);

#endif
