/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_statusfmt.c - the status model (rs_statmodel_t,
 * mod_resourcesync_statusmodel.c) rendered three ways, and the
 * ResourceSync section of mod_status' server-status.
 *
 *   HTML   a table of the watcher's fields, one per set, one of the hub's
 *          and delivery's lines; every key and value escaped
 *          (ap_escape_html).
 *   auto   mod_status' machine format: one "Key: value" line each, keys
 *          without spaces; "Set: <name>" opens a set's lines, whose keys
 *          start with "Set" (SetFiles, SetMode, ...); hub and delivery
 *          lines last, keys may repeat; "-" for no value.  In
 *          server-status every key is prefixed with "ResourceSync".
 *   JSON   {"global": {...}, "sets": {"<name>": {...}, ...},
 *          "lines": [["Key", "value"], ...]}: decimal values as numbers,
 *          no value as null, other values as strings (rs_json_str).
 */
#include <apr_strings.h>
#include <http_protocol.h>
#include <mod_status.h>
#include "mod_resourcesync_statusfmt.h"
#include "mod_resourcesync_status.h"
#include "rs_json.h"

static const char *html(request_rec *r, const char *s)
{
    return s ? ap_escape_html(r->pool, s) : "-";
}

static void html_table(request_rec *r, const apr_array_header_t *kv)
{
    int i;

    ap_rputs("<table border=\"1\">\n", r);
    for (i = 0; i < kv->nelts; i++) {
        const rs_statkv_t *e = &APR_ARRAY_IDX(kv, i, rs_statkv_t);
        ap_rprintf(r, "<tr><th align=\"left\">%s</th><td>%s</td></tr>\n", html(r, e->key),
                   html(r, e->val));
    }
    ap_rputs("</table>\n", r);
}

void rs_statusfmt_html(request_rec *r, const rs_statmodel_t *m, int page)
{
    int i;

    if (page) {
        ap_rputs(DOCTYPE_HTML_4_01 "<html><head>\n<title>ResourceSync status</title>\n"
                                   "</head><body>\n<h1>ResourceSync status</h1>\n",
                 r);
    }
    else {
        ap_rputs("<hr /><h2>ResourceSync</h2>\n", r);
    }
    html_table(r, m->global);
    for (i = 0; i < m->sets->nelts; i++) {
        const rs_statgroup_t *g = &APR_ARRAY_IDX(m->sets, i, rs_statgroup_t);
        ap_rprintf(r, "<h%d>Set %s</h%d>\n", page ? 2 : 3, html(r, g->name), page ? 2 : 3);
        html_table(r, g->kv);
    }
    if (m->lines->nelts) {
        ap_rprintf(r, "<h%d>Hub and notifications</h%d>\n", page ? 2 : 3, page ? 2 : 3);
        html_table(r, m->lines);
    }
    if (page) {
        ap_rputs("</body></html>\n", r);
    }
}

/* Lines of kv, keys prefixed by prefix and pre2; values never carry a
 * line break (a stray one becomes a space). */
static void auto_lines(request_rec *r, const apr_array_header_t *kv, const char *prefix,
                       const char *pre2)
{
    int i;

    for (i = 0; i < kv->nelts; i++) {
        const rs_statkv_t *e = &APR_ARRAY_IDX(kv, i, rs_statkv_t);
        char *v = apr_pstrdup(r->pool, e->val ? e->val : "-"), *c;
        for (c = v; *c; c++) {
            if (*c == '\n' || *c == '\r') {
                *c = ' ';
            }
        }
        ap_rprintf(r, "%s%s%s: %s\n", prefix, pre2, e->key, v);
    }
}

void rs_statusfmt_auto(request_rec *r, const rs_statmodel_t *m, const char *prefix)
{
    int i;

    auto_lines(r, m->global, prefix, "");
    for (i = 0; i < m->sets->nelts; i++) {
        const rs_statgroup_t *g = &APR_ARRAY_IDX(m->sets, i, rs_statgroup_t);
        ap_rprintf(r, "%sSet: %s\n", prefix, g->name);
        auto_lines(r, g->kv, prefix, "Set");
    }
    auto_lines(r, m->lines, prefix, "");
}

static const char *json_val(apr_pool_t *p, const char *v)
{
    return !v ? "null" : rs_json_is_number(v) ? v : rs_json_str(p, v);
}

/* kv as the members of a JSON object (without braces). */
static void json_members(request_rec *r, const apr_array_header_t *kv, const char *indent)
{
    int i;

    for (i = 0; i < kv->nelts; i++) {
        const rs_statkv_t *e = &APR_ARRAY_IDX(kv, i, rs_statkv_t);
        ap_rprintf(r, "%s%s: %s%s\n", indent, rs_json_str(r->pool, e->key),
                   json_val(r->pool, e->val), i + 1 < kv->nelts ? "," : "");
    }
}

void rs_statusfmt_json(request_rec *r, const rs_statmodel_t *m)
{
    int i;

    ap_rputs("{\n  \"global\": {\n", r);
    json_members(r, m->global, "    ");
    ap_rputs("  },\n  \"sets\": {\n", r);
    for (i = 0; i < m->sets->nelts; i++) {
        const rs_statgroup_t *g = &APR_ARRAY_IDX(m->sets, i, rs_statgroup_t);
        ap_rprintf(r, "    %s: {\n", rs_json_str(r->pool, g->name));
        json_members(r, g->kv, "      ");
        ap_rprintf(r, "    }%s\n", i + 1 < m->sets->nelts ? "," : "");
    }
    ap_rputs("  },\n  \"lines\": [\n", r);
    for (i = 0; i < m->lines->nelts; i++) {
        const rs_statkv_t *e = &APR_ARRAY_IDX(m->lines, i, rs_statkv_t);
        ap_rprintf(r, "    [%s, %s]%s\n", rs_json_str(r->pool, e->key), json_val(r->pool, e->val),
                   i + 1 < m->lines->nelts ? "," : "");
    }
    ap_rputs("  ]\n}\n", r);
}

int rs_statusfmt_hook(request_rec *r, int flags)
{
    rs_statmodel_t *m;

    if (!rs_status_get()) {
        return OK; /* no set configured: no section */
    }
    m = rs_statusmodel_build(r);
    if (flags & AP_STATUS_SHORT) {
        rs_statusfmt_auto(r, m, "ResourceSync");
    }
    else {
        rs_statusfmt_html(r, m, 0);
    }
    return OK;
}
