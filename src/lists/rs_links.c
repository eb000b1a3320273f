/* SPDX-License-Identifier: Apache-2.0 */
/* rs_links.c - see rs_links.h: the rules (construction, checks, the text
 * that describes them, the cheap target filter).  Resolution is in
 * rs_linkres.c, the encoded form in rs_linkenc.c. */
#include <string.h>
#include <apr_strings.h>
#include <apr_lib.h>
#include "rs_links_priv.h"

/* Relation names of the IANA "Link Relations" registry (RFC 8288) that a
 * resource's entry may carry: every one ResourceSync 1.1 section 14 uses,
 * and the rest of the registry but for those that mean something else in
 * a ResourceSync document (see refused[]); each between spaces. */
static const char registered[] =
    " about acl alternate amphtml appendix apple-touch-icon apple-touch-startup-image "
    "archives author blocked-by bookmark c2pa-manifest canonical chapter cite-as collection "
    "compression-dictionary convertedfrom copyright create-form current deprecation "
    "describedby describes disclosure dns-prefetch duplicate edit edit-form edit-media "
    "enclosure external first geofeed glossary help hosts hub ice-server icon intervalafter "
    "intervalbefore intervalcontains intervaldisjoint intervalduring intervalequals "
    "intervalfinishedby intervalfinishes intervalin intervalmeets intervalmetby "
    "intervaloverlappedby intervaloverlaps intervalstartedby intervalstarts item last "
    "latest-version license linkset lrdd manifest mask-icon me media-feed memento micropub "
    "modulepreload monitor monitor-group next next-archive nofollow noopener noreferrer "
    "opener openid2.local_id openid2.provider original p3pv1 payment pingback preconnect "
    "predecessor-version prefetch preload prerender prev prev-archive preview previous "
    "privacy-policy profile publication related replies restconf ruleinput search section "
    "self service service-desc service-doc service-meta sip-trunking-capability sponsored "
    "start status stylesheet subsection successor-version sunset tag terms-of-service "
    "timegate timemap type ugc version-history via webmention working-copy working-copy-of ";

/* Registered, but with another meaning in ResourceSync: "up" and "index"
 * link a document to its parent and index (sections 10, 11), "contents"
 * a dump to its manifest (sections 12, 13). */
static const char refused[] = " contents index up ";

/* The relation of the inverse link (section 14). */
static const char *const inverse_pairs[][2] = { { "describedby", "describes" },
                                                { "describes", "describedby" },
                                                { "alternate", "canonical" },
                                                { "canonical", "alternate" } };

/* Whether s begins with an RFC 3986 scheme and ":"; *len gets the length
 * up to and including ":". */
static int has_scheme(const char *s, apr_size_t len, apr_size_t *schemelen)
{
    apr_size_t i;
    if (len == 0 || !apr_isalpha(s[0])) {
        return 0;
    }
    for (i = 1; i < len; i++) {
        if (s[i] == ':') {
            *schemelen = i + 1;
            return 1;
        }
        if (!apr_isalnum(s[i]) && s[i] != '+' && s[i] != '-' && s[i] != '.') {
            return 0;
        }
    }
    return 0;
}

/* Whether every byte of s is printable ASCII other than space, quotes,
 * "<", ">", "\" and "`": what may stand in a URI reference or a relation
 * without any escaping or quoting question (RFC 3986 section 2). */
static int uri_chars(const char *s, apr_size_t len)
{
    apr_size_t i;
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\'' || c == '<' || c == '>' || c == '\\'
            || c == '`' || c == '{' || c == '}' || c == '|' || c == '^') {
            return 0;
        }
    }
    return 1;
}

/* An absolute URI: a scheme, ":", something after it, only uri_chars. */
static int absolute_uri(const char *s)
{
    apr_size_t len = strlen(s), sl;
    return has_scheme(s, len, &sl) && sl < len && uri_chars(s, len);
}

/* The canonical form of a valid rel (registered names in lower case). */
static const char *rel_canonical(apr_pool_t *p, const char *rel, const char **why)
{
    char *key = apr_pstrcat(p, " ", rel, " ", NULL), *c;
    const char *hit;

    for (c = key + 1; c[1]; c++) {
        *c = (char)apr_tolower(*c);
    }
    /* A name between spaces; "a b" would match two neighbours. */
    if (!strchr(rel, ' ') && strstr(refused, key)) {
        *why = apr_psprintf(p,
                            "relation \"%s\" means something else in ResourceSync and may "
                            "not be used on a resource's entry",
                            rel);
        return NULL;
    }
    if (!strchr(rel, ' ') && (hit = strstr(registered, key))) {
        return apr_pstrmemdup(p, hit + 1, strlen(rel));
    }
    if (absolute_uri(rel)) {
        return rel;
    }
    *why = apr_psprintf(p,
                        "unknown relation \"%s\" (an IANA-registered relation name or an "
                        "absolute URI)",
                        rel);
    return NULL;
}

const char *rs_links_rel_check(apr_pool_t *p, const char *rel)
{
    const char *why = NULL;
    if (!rel || !*rel) {
        return "empty relation";
    }
    return rel_canonical(p, rel, &why) ? NULL : why;
}

rs_links_t *rs_links_create(apr_pool_t *p, rs_links_match_fn *match)
{
    rs_links_t *l = apr_pcalloc(p, sizeof(*l));
    l->match = match;
    l->rules = apr_array_make(p, 4, sizeof(rs_links_rule_t));
    l->mirrors = apr_array_make(p, 1, sizeof(rs_links_mirror_t));
    return l;
}

/* Parse template t into pieces: literals, $1..$9 (at most ngroups), $$.
 * Returns NULL or why not. */
static const char *parse_template(apr_pool_t *p, const char *t, int ngroups,
                                  rs_links_piece_t **pieces, int *npieces)
{
    apr_size_t n = strlen(t);
    /* At most one piece per byte of the template. */
    rs_links_piece_t *pc = apr_pcalloc(p, (n + 1) * sizeof(*pc));
    char *lit = apr_palloc(p, n + 1);
    int np = 0;
    const char *s;

    for (s = t; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f) {
            return apr_psprintf(p, "target \"%s\" has a control character", t);
        }
        if (c == '$') {
            if (s[1] == '$') {
                s++;
            }
            else if (s[1] >= '1' && s[1] <= '9') {
                int g = s[1] - '0';
                if (g > ngroups) {
                    return apr_psprintf(p, "target \"%s\": $%d but the pattern has %d group%s", t,
                                        g, ngroups, ngroups == 1 ? "" : "s");
                }
                pc[np++].group = g;
                s++;
                continue;
            }
            else {
                return apr_psprintf(p,
                                    "target \"%s\": \"$\" must be followed by 1..9 or by "
                                    "\"$\"",
                                    t);
            }
        }
        /* A literal byte: extend the literal piece in progress. */
        if (np == 0 || pc[np - 1].group) {
            pc[np].lit = lit;
            pc[np++].len = 0;
        }
        *lit++ = *s;
        pc[np - 1].len++;
    }
    *pieces = pc;
    *npieces = np;
    return NULL;
}

/* r->kind from the template's leading literal alone (rs_links_priv.h),
 * and the checks that depend on it: NULL, or why the rule is refused. */
static const char *rule_kind(apr_pool_t *p, rs_links_rule_t *r, const char *target,
                             const char *type, int if_exists)
{
    apr_size_t sl;
    int i;

    if (r->pieces[0].group == 0 && has_scheme(r->pieces[0].lit, r->pieces[0].len, &sl)) {
        r->kind = RS_LINKS_URL;
    }
    else if (r->pieces[0].group == 0 && r->pieces[0].lit[0] == '/') {
        r->kind = RS_LINKS_ORIGIN;
    }
    else {
        r->kind = RS_LINKS_LOCAL;
    }
    if (r->kind != RS_LINKS_LOCAL) {
        /* The literals stand in the href as they are (groups are escaped
         * when substituted): they must be URI characters already. */
        for (i = 0; i < r->npieces; i++) {
            if (!r->pieces[i].group && !uri_chars(r->pieces[i].lit, r->pieces[i].len)) {
                return apr_psprintf(p,
                                    "target \"%s\": a URL may hold only printable ASCII "
                                    "without spaces, quotes, \"<\", \">\", \"\\\" (percent-"
                                    "encode the others)",
                                    target);
            }
        }
        if (if_exists) {
            return apr_psprintf(p,
                                "if-exists applies to targets that are files of the set, "
                                "not to \"%s\"",
                                target);
        }
    }
    else if (type) {
        return apr_psprintf(p,
                            "type= applies to targets that are not files of the set, not to "
                            "\"%s\" (a file's link carries its own type)",
                            target);
    }
    if (type && (!*type || !strchr(type, '/') || !uri_chars(type, strlen(type)))) {
        return apr_psprintf(p, "type \"%s\" is not a media type (type/subtype)", type);
    }
    return NULL;
}

const char *rs_links_add(rs_links_t *l, apr_pool_t *p, const char *rel, void *re, int ngroups,
                         const char *pattern, const char *target, const char *type, int pri,
                         int if_exists)
{
    rs_links_rule_t r;
    const char *why = NULL;
    int i;

    memset(&r, 0, sizeof(r));
    if (!rel || !*rel) {
        return "empty relation";
    }
    if (!(r.rel = rel_canonical(p, rel, &why))) {
        return why;
    }
    if (!re || ngroups < 0 || ngroups > 9) {
        return apr_psprintf(p, "pattern \"%s\": at most 9 groups can be used",
                            pattern ? pattern : "");
    }
    if (!target || !*target) {
        return "empty target";
    }
    if (pri < 0 || pri > 999999) {
        return apr_psprintf(p, "pri=%d outside 1..999999", pri);
    }
    if ((why = parse_template(p, target, ngroups, &r.pieces, &r.npieces))) {
        return why;
    }
    if ((why = rule_kind(p, &r, target, type, if_exists))) {
        return why;
    }
    r.re = re;
    r.ngroups = ngroups;
    r.pattern = apr_pstrdup(p, pattern ? pattern : "");
    r.target = apr_pstrdup(p, target);
    r.type = type ? apr_pstrdup(p, type) : NULL;
    r.pri = pri;
    r.if_exists = if_exists;
    for (i = 0; i < (int)(sizeof(inverse_pairs) / sizeof(*inverse_pairs)); i++) {
        if (!strcmp(r.rel, inverse_pairs[i][0])) {
            r.inverse = inverse_pairs[i][1];
        }
    }
    if (r.kind == RS_LINKS_LOCAL) {
        l->has_local = 1;
    }
    *(rs_links_rule_t *)apr_array_push(l->rules) = r;
    return NULL;
}

const char *rs_links_add_mirror(rs_links_t *l, apr_pool_t *p, const char *url_prefix, int pri)
{
    rs_links_mirror_t *m;
    apr_size_t n;

    if (!url_prefix || !absolute_uri(url_prefix) || strpbrk(url_prefix, "?#")) {
        return apr_psprintf(p,
                            "mirror \"%s\" is not an absolute URL without query or fragment "
                            "(printable ASCII, percent-encoded)",
                            url_prefix ? url_prefix : "");
    }
    if (pri < 0 || pri > 999999) {
        return apr_psprintf(p, "pri=%d outside 1..999999", pri);
    }
    n = strlen(url_prefix);
    m = apr_array_push(l->mirrors);
    m->prefix = url_prefix[n - 1] == '/' ? apr_pstrdup(p, url_prefix)
                                         : apr_pstrcat(p, url_prefix, "/", NULL);
    m->pri = pri;
    return NULL;
}

int rs_links_count(const rs_links_t *l)
{
    return l ? l->rules->nelts : 0;
}

const rs_links_mirror_t *rs_links_mirrors(const rs_links_t *l, int *n)
{
    *n = l ? l->mirrors->nelts : 0;
    return *n ? (const rs_links_mirror_t *)l->mirrors->elts : NULL;
}

int rs_links_has_local(const rs_links_t *l)
{
    return l ? l->has_local : 0;
}

/* "<length>:<bytes>": a field no byte of it can be mistaken for the end of. */
static void describe_field(apr_array_header_t *parts, apr_pool_t *p, const char *s)
{
    APR_ARRAY_PUSH(parts, const char *) =
        apr_psprintf(p, "%" APR_SIZE_T_FMT ":%s", strlen(s ? s : ""), s ? s : "");
}

const char *rs_links_describe(const rs_links_t *l, apr_pool_t *p)
{
    apr_array_header_t *parts;
    int i;

    if (!rs_links_count(l)) {
        return "";
    }
    parts = apr_array_make(p, 8 * l->rules->nelts, sizeof(const char *));
    for (i = 0; i < l->rules->nelts; i++) {
        const rs_links_rule_t *r = &APR_ARRAY_IDX(l->rules, i, rs_links_rule_t);
        describe_field(parts, p, "link");
        describe_field(parts, p, r->rel);
        describe_field(parts, p, r->pattern);
        describe_field(parts, p, r->target);
        describe_field(parts, p, r->type);
        describe_field(parts, p, apr_itoa(p, r->pri));
        describe_field(parts, p, r->if_exists ? "if-exists" : "");
    }
    return apr_array_pstrcat(p, parts, 0);
}

const char *rs_links_mirrors_describe(const rs_links_t *l, apr_pool_t *p)
{
    apr_array_header_t *parts;
    int i, n;
    const rs_links_mirror_t *m = rs_links_mirrors(l, &n);

    if (!n) {
        return "";
    }
    parts = apr_array_make(p, 3 * n, sizeof(const char *));
    for (i = 0; i < n; i++) {
        describe_field(parts, p, "mirror");
        describe_field(parts, p, m[i].prefix);
        describe_field(parts, p, apr_itoa(p, m[i].pri));
    }
    return apr_array_pstrcat(p, parts, 0);
}

int rs_links_may_be_target(const rs_links_t *l, const char *path)
{
    apr_size_t plen = strlen(path);
    int i;

    if (!rs_links_has_local(l)) {
        return 0;
    }
    for (i = 0; i < l->rules->nelts; i++) {
        const rs_links_rule_t *r = &APR_ARRAY_IDX(l->rules, i, rs_links_rule_t);
        const rs_links_piece_t *first, *last;
        apr_size_t lits = 0;
        int j;

        if (r->kind != RS_LINKS_LOCAL) {
            continue;
        }
        for (j = 0; j < r->npieces; j++) {
            lits += r->pieces[j].group ? 0 : r->pieces[j].len;
        }
        first = &r->pieces[0];
        last = &r->pieces[r->npieces - 1];
        if (r->npieces == 1 && !first->group) {
            /* No group: exactly the literal. */
            if (plen == first->len && !memcmp(path, first->lit, plen)) {
                return 1;
            }
            continue;
        }
        /* Groups: the literals all stand in the path; the leading and
         * the trailing literal at its ends. */
        if (lits > plen || (!first->group && memcmp(path, first->lit, first->len))
            || (!last->group && memcmp(path + plen - last->len, last->lit, last->len))) {
            continue;
        }
        return 1;
    }
    return 0;
}
