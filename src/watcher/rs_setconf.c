/* SPDX-License-Identifier: Apache-2.0 */
/* rs_setconf.c - whether two nodes declare a set alike (rs_setconf.h). */
#include <string.h>
#include <apr_strings.h>
#include "rs_setconf.h"

#define SHOWN_MAX 200 /* bytes of a value a sentence shows */

void rs_setconf_add(apr_array_header_t *items, const char *name, const char *value)
{
    rs_setconf_item_t *it = apr_array_push(items);
    it->name = name;
    it->value = value ? value : "";
}

/* value with "\" as "\\" and a newline as "\n". */
static const char *escape(apr_pool_t *p, const char *value)
{
    apr_size_t n = 0;
    const char *s;
    char *out, *o;

    for (s = value; *s; s++) {
        n += (*s == '\\' || *s == '\n') ? 2 : 1;
    }
    o = out = apr_palloc(p, n + 1);
    for (s = value; *s; s++) {
        if (*s == '\\' || *s == '\n') {
            *o++ = '\\';
            *o++ = *s == '\n' ? 'n' : '\\';
        }
        else {
            *o++ = *s;
        }
    }
    *o = '\0';
    return out;
}

const char *rs_setconf_encode(apr_pool_t *p, const apr_array_header_t *items)
{
    apr_array_header_t *parts = apr_array_make(p, items->nelts * 4 + 1, sizeof(const char *));
    int i;

    for (i = 0; i < items->nelts; i++) {
        const rs_setconf_item_t *it = &APR_ARRAY_IDX(items, i, rs_setconf_item_t);
        APR_ARRAY_PUSH(parts, const char *) = it->name;
        APR_ARRAY_PUSH(parts, const char *) = "=";
        APR_ARRAY_PUSH(parts, const char *) = escape(p, it->value);
        APR_ARRAY_PUSH(parts, const char *) = "\n";
    }
    return apr_array_pstrcat(p, parts, '\0');
}

/* The value of the line named name in enc (escaped, as stored), or NULL. */
static const char *lookup(apr_pool_t *p, const char *enc, const char *name, apr_size_t nlen)
{
    const char *line = enc;

    while (line && *line) {
        const char *end = strchr(line, '\n');
        apr_size_t len = end ? (apr_size_t)(end - line) : strlen(line);
        if (len > nlen && line[nlen] == '=' && !strncmp(line, name, nlen)) {
            return apr_pstrmemdup(p, line + nlen + 1, len - nlen - 1);
        }
        line = end ? end + 1 : NULL;
    }
    return NULL;
}

static const char *shown(apr_pool_t *p, const char *v)
{
    if (!v) {
        return "(not set)";
    }
    if (!*v) {
        return "(empty)";
    }
    return strlen(v) > SHOWN_MAX ? apr_pstrcat(p, apr_pstrndup(p, v, SHOWN_MAX), "...", NULL) : v;
}

/* The first line of a whose value in b differs (or is missing), as the
 * sentence; NULL when every line of a is in b alike.  mine_first says
 * which of the two is this node's. */
static const char *first_diff(apr_pool_t *p, const char *a, const char *b, int a_is_mine,
                              const char *node)
{
    const char *line = a;

    while (line && *line) {
        const char *end = strchr(line, '\n');
        apr_size_t len = end ? (apr_size_t)(end - line) : strlen(line);
        const char *eq = memchr(line, '=', len);
        if (eq) {
            apr_size_t nlen = (apr_size_t)(eq - line);
            const char *name = apr_pstrmemdup(p, line, nlen);
            const char *va = apr_pstrmemdup(p, eq + 1, len - nlen - 1);
            const char *vb = lookup(p, b, name, nlen);
            if (!vb || strcmp(va, vb)) {
                const char *mine = a_is_mine ? va : vb, *theirs = a_is_mine ? vb : va;
                return apr_psprintf(p, "%s is %s here, %s on %s", name, shown(p, mine),
                                    shown(p, theirs), node);
            }
        }
        line = end ? end + 1 : NULL;
    }
    return NULL;
}

const char *rs_setconf_diff(apr_pool_t *p, const char *mine, const char *theirs, const char *node)
{
    const char *d;

    if (!strcmp(mine, theirs)) {
        return NULL;
    }
    if ((d = first_diff(p, mine, theirs, 1, node)) || (d = first_diff(p, theirs, mine, 0, node))) {
        return d;
    }
    return NULL; /* the same lines in another order or with duplicates */
}
