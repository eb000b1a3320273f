/* SPDX-License-Identifier: Apache-2.0 */
/* rs_linkres.c - see rs_links.h: the resolution of a resource's links
 * (forward links by the rules, inverse links from the resources that
 * link to it).  The rules come from rs_links.c (rs_links_priv.h). */
#include <stdlib.h>
#include <string.h>
#include <apr_strings.h>
#include "rs_links_priv.h"
#include "rs_uri.h"

/* The template of r with the groups of m (matched on path) put in:
 * percent-encoded as a path is when escape, as they are otherwise (a
 * group that took no part is empty). */
static char *substitute(apr_pool_t *p, const rs_links_rule_t *r, const char *path,
                        const rs_links_span_t *m, int escape)
{
    apr_size_t n = 0;
    char *out, *d;
    int i;

    for (i = 0; i < r->npieces; i++) {
        const rs_links_piece_t *pc = &r->pieces[i];
        if (!pc->group) {
            n += pc->len;
        }
        else if (m[pc->group].so >= 0) {
            n += (apr_size_t)(m[pc->group].eo - m[pc->group].so) * (escape ? 3 : 1);
        }
    }
    d = out = apr_palloc(p, n + 1);
    for (i = 0; i < r->npieces; i++) {
        const rs_links_piece_t *pc = &r->pieces[i];
        const rs_links_span_t *s = &m[pc->group];
        if (!pc->group) {
            memcpy(d, pc->lit, pc->len);
            d += pc->len;
        }
        else if (s->so >= 0 && s->eo > s->so) {
            char *g = apr_pstrmemdup(p, path + s->so, (apr_size_t)(s->eo - s->so));
            if (escape) {
                d += rs_uri_escape_path_buf(d, g);
            }
            else {
                memcpy(d, g, (apr_size_t)(s->eo - s->so));
                d += s->eo - s->so;
            }
        }
    }
    *d = '\0';
    return out;
}

/* Whether t is a set-relative path: segments separated by single "/",
 * none of them empty, "." or "..". */
static int local_path_ok(const char *t)
{
    const char *s = t;
    while (1) {
        const char *e = strchr(s, '/');
        apr_size_t n = e ? (apr_size_t)(e - s) : strlen(s);
        if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) {
            return 0;
        }
        if (!e) {
            return 1;
        }
        s = e + 1;
    }
}

/* scheme://authority of url_base (no trailing "/"). */
static const char *origin_of(apr_pool_t *p, const char *url_base)
{
    const char *a = strstr(url_base, "://");
    const char *slash = a ? strchr(a + 3, '/') : NULL;
    apr_size_t n = slash ? (apr_size_t)(slash - url_base) : strlen(url_base);
    while (!slash && n && url_base[n - 1] == '/') {
        n--;
    }
    return apr_pstrmemdup(p, url_base, n);
}

/* A link to a listed file of the set: its attributes. */
static void link_from_item(rs_link_t *k, const rs_item_t *it)
{
    int i;
    k->type = it->type;
    k->encoding = it->encoding;
    k->length = it->size;
    k->modified_ns = it->mtime_ns;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        k->hash[i] = it->hash[i] && *it->hash[i] ? it->hash[i] : NULL;
    }
}

rs_link_t *rs_links_push(apr_array_header_t *links, const char *rel, const char *href)
{
    rs_link_t *k = apr_array_push(links);
    memset(k, 0, sizeof(*k));
    k->rel = rel;
    k->href = href;
    k->length = -1;
    k->modified_ns = -1;
    return k;
}

static rs_link_t *push_link(apr_array_header_t *links, const char *rel, const char *href, int pri)
{
    rs_link_t *k = rs_links_push(links, rel, href);
    k->pri = pri;
    return k;
}

static void push_dep(apr_array_header_t *deps, const char *t)
{
    int i;
    for (i = 0; i < deps->nelts; i++) {
        if (!strcmp(APR_ARRAY_IDX(deps, i, const char *), t)) {
            return;
        }
    }
    APR_ARRAY_PUSH(deps, const char *) = t;
}

/* The local target rule r names for path (matched: m), or NULL when the
 * substitution gives no set-relative path or names path itself. */
static const char *local_target(apr_pool_t *p, const rs_links_rule_t *r, const char *path,
                                const rs_links_span_t *m)
{
    char *t = substitute(p, r, path, m, 0);
    return local_path_ok(t) && strcmp(t, path) ? t : NULL;
}

int rs_links_forward(const rs_links_t *l, apr_pool_t *p, const char *url_base, const char *path,
                     rs_links_lookup_fn *lookup, void *baton, apr_array_header_t **links,
                     apr_array_header_t **deps)
{
    rs_links_span_t m[10];
    const char *origin = NULL;
    int i, nrules = rs_links_count(l);

    *links = apr_array_make(p, nrules ? nrules : 1, sizeof(rs_link_t));
    if (deps) {
        *deps = apr_array_make(p, 2, sizeof(const char *));
    }
    for (i = 0; i < nrules; i++) {
        const rs_links_rule_t *r = &APR_ARRAY_IDX(l->rules, i, rs_links_rule_t);
        const char *t;
        rs_item_t it;
        int rc;

        if (!l->match(r->re, path, r->ngroups + 1, m)) {
            continue;
        }
        if (r->kind == RS_LINKS_URL) {
            push_link(*links, r->rel, substitute(p, r, path, m, 1), r->pri)->type = r->type;
            continue;
        }
        if (r->kind == RS_LINKS_ORIGIN) {
            if (!origin) {
                origin = origin_of(p, url_base);
            }
            push_link(*links, r->rel, apr_pstrcat(p, origin, substitute(p, r, path, m, 1), NULL),
                      r->pri)
                ->type = r->type;
            continue;
        }
        if (!(t = local_target(p, r, path, m))) {
            continue;
        }
        if (deps) {
            push_dep(*deps, t);
        }
        memset(&it, 0, sizeof(it));
        if ((rc = lookup(baton, p, t, &it)) < 0) {
            return -1;
        }
        if (rc == 0 && r->if_exists) {
            continue;
        }
        {
            rs_link_t *k = push_link(
                *links, r->rel, apr_pstrcat(p, url_base, rs_uri_escape_path(p, t), NULL), r->pri);
            if (rc == 1) {
                link_from_item(k, &it);
            }
        }
    }
    return 0;
}

static int path_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int rs_links_inverse(const rs_links_t *l, apr_pool_t *p, const char *url_base, const char *path,
                     const apr_array_header_t *sources, rs_links_lookup_fn *lookup, void *baton,
                     apr_array_header_t *links)
{
    rs_links_span_t m[10];
    const char **src;
    int i, j, n;

    if (!rs_links_has_local(l) || !sources || !sources->nelts) {
        return 0;
    }
    /* By source path, each once. */
    n = sources->nelts;
    src = apr_pmemdup(p, sources->elts, (apr_size_t)n * sizeof(*src));
    qsort(src, (size_t)n, sizeof(*src), path_cmp);
    for (i = 0; i < n; i++) {
        const char *s = src[i], *href = NULL;
        const char *done[4]; /* inverse relations given to s already */
        int ndone = 0, looked = 0;
        rs_item_t it;

        if ((i && !strcmp(s, src[i - 1])) || !strcmp(s, path)) {
            continue;
        }
        for (j = 0; j < l->rules->nelts; j++) {
            const rs_links_rule_t *r = &APR_ARRAY_IDX(l->rules, j, rs_links_rule_t);
            const char *t;
            rs_link_t *k;
            int d, dup = 0;

            if (!r->inverse || r->kind != RS_LINKS_LOCAL || !l->match(r->re, s, r->ngroups + 1, m)
                || !(t = local_target(p, r, s, m)) || strcmp(t, path)) {
                continue;
            }
            for (d = 0; d < ndone; d++) {
                dup |= !strcmp(done[d], r->inverse);
            }
            if (dup) {
                continue;
            }
            if (!looked) {
                int rc;
                memset(&it, 0, sizeof(it));
                if ((rc = lookup(baton, p, s, &it)) < 0) {
                    return -1;
                }
                looked = rc == 1 ? 1 : -1;
                href = apr_pstrcat(p, url_base, rs_uri_escape_path(p, s), NULL);
            }
            if (looked < 0) {
                break; /* s is not a listed file: it links to nothing */
            }
            k = push_link(links, r->inverse, href, 0);
            link_from_item(k, &it);
            if (ndone < (int)(sizeof(done) / sizeof(*done))) {
                done[ndone++] = r->inverse;
            }
        }
    }
    return 0;
}
