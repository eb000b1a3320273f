/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_docs.c - Source Descriptions and Capability Lists.
 *
 * Both depend on the configuration only, so they are rendered once per
 * server generation in post_config, into pconf, with a strong ETag (an MD5
 * of the bytes).  Serving them is a memory copy; a conditional request is
 * answered without rendering anything.
 */
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_docs.h"
#include "rs_hash.h"
#include "rs_xml.h"

/* Growing buffer in a pool (documents here are a few KB). */
typedef struct {
    apr_pool_t *p;
    char *elts;
    apr_size_t nelts, cap;
} buf_t;

static buf_t *buf_make(apr_pool_t *p)
{
    buf_t *b = apr_pcalloc(p, sizeof(*b));
    b->p = p;
    b->cap = 4096;
    b->elts = apr_palloc(p, b->cap);
    return b;
}

static int buf_sink(void *baton, const char *data, apr_size_t len)
{
    buf_t *b = baton;
    if (b->nelts + len > b->cap) {
        char *n;
        while (b->nelts + len > b->cap) {
            b->cap *= 2;
        }
        n = apr_palloc(b->p, b->cap);
        memcpy(n, b->elts, b->nelts);
        b->elts = n;
    }
    memcpy(b->elts + b->nelts, data, len);
    b->nelts += len;
    return 0;
}

const char *rs_docs_etag(apr_pool_t *p, const char *body, apr_size_t len)
{
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    rs_hash_buf(body, len, RS_HASH_MD5, hex);
    return apr_psprintf(p, "\"%.24s\"", hex[0]);
}

/* The writer lives in its own pool (wp), destroyed here: rendering happens
 * in the parent, and children exit without destroying pconf, so a writer
 * left there would be reported as a leak. */
static int finish(apr_pool_t *p, apr_pool_t *wp, rs_xml_t *w, buf_t *a, const char **body,
                  apr_size_t *len, const char **etag)
{
    int rc = rs_xml_end(w);
    apr_pool_destroy(wp);
    if (rc < 0) {
        return -1;
    }
    *body = a->elts;
    *len = a->nelts;
    *etag = rs_docs_etag(p, *body, *len);
    return 0;
}

/* The entries of the notification topics, each with rel="hub" links
 * (Change Notification 1.0.1, Example 7). */
static int topics(rs_xml_t *w, apr_pool_t *p, const rs_set_t *set)
{
    static const char *const names[] = { "change", "framework" };
    int t, i;

    for (t = 0; set->notify && t < 2; t++) {
        rs_xml_attr_t md = { "capability", t ? "framework-notification" : "change-notification" };
        if (rs_xml_entry_begin(w, apr_pstrcat(p, set->doc_base, "notify/", names[t], NULL), NULL)
            < 0) {
            return -1;
        }
        for (i = 0; set->notify_hubs && i < set->notify_hubs->nelts; i++) {
            if (rs_xml_ln(w, "hub", APR_ARRAY_IDX(set->notify_hubs, i, const char *), NULL, 0)
                < 0) {
                return -1;
            }
        }
        if (rs_xml_md(w, &md, 1) < 0 || rs_xml_entry_end(w) < 0) {
            return -1;
        }
    }
    return 0;
}

static int render_capability_list(apr_pool_t *p, const rs_srv_conf *sc, rs_set_t *set)
{
    buf_t *a = buf_make(p);
    apr_pool_t *wp;
    rs_xml_t *w = (apr_pool_create(&wp, p), rs_xml_open(wp, buf_sink, a));
    rs_xml_attr_t md = { "capability", "capabilitylist" };
    rs_xml_attr_t rl = { "capability", "resourcelist" };
    rs_xml_attr_t cls = { "capability", "changelist" };
    rs_xml_attr_t rd = { "capability", "resourcedump" };
    rs_xml_attr_t cd = { "capability", "changedump" };
    const char *sd = apr_pstrcat(p, sc->canonical, RS_WELL_KNOWN, NULL);

    if (!w || rs_xml_begin(w, "urlset") < 0
        || (set->describedby && rs_xml_ln(w, "describedby", set->describedby, NULL, 0) < 0)
        || rs_xml_ln(w, "up", sd, NULL, 0) < 0 || rs_xml_md(w, &md, 1) < 0
        || rs_xml_entry_begin(w, set->list_url, NULL) < 0 || rs_xml_md(w, &rl, 1) < 0
        || rs_xml_entry_end(w) < 0 || rs_xml_entry_begin(w, set->cl_index_url, NULL) < 0
        || rs_xml_md(w, &cls, 1) < 0 || rs_xml_entry_end(w) < 0
        || (set->rdump
            && (rs_xml_entry_begin(w, apr_pstrcat(p, set->doc_base, "resourcedump.xml", NULL), NULL)
                    < 0
                || rs_xml_md(w, &rd, 1) < 0 || rs_xml_entry_end(w) < 0))
        || (set->cdump
            && (rs_xml_entry_begin(w, apr_pstrcat(p, set->doc_base, "changedump.xml", NULL), NULL)
                    < 0
                || rs_xml_md(w, &cd, 1) < 0 || rs_xml_entry_end(w) < 0))
        || topics(w, p, set) < 0) {
        apr_pool_destroy(wp);
        return -1;
    }
    return finish(p, wp, w, a, &set->cl_body, &set->cl_len, &set->cl_etag);
}

static int render_description(apr_pool_t *p, rs_srv_conf *sc)
{
    buf_t *a = buf_make(p);
    apr_pool_t *wp;
    rs_xml_t *w = (apr_pool_create(&wp, p), rs_xml_open(wp, buf_sink, a));
    rs_xml_attr_t md = { "capability", "description" };
    rs_xml_attr_t cl = { "capability", "capabilitylist" };
    int i;

    if (!w || rs_xml_begin(w, "urlset") < 0
        || (sc->describedby && rs_xml_ln(w, "describedby", sc->describedby, NULL, 0) < 0)
        || rs_xml_md(w, &md, 1) < 0) {
        return -1;
    }
    for (i = 0; i < sc->sets->nelts; i++) {
        rs_set_t *set = APR_ARRAY_IDX(sc->sets, i, rs_set_t *);
        if (rs_xml_entry_begin(w, set->capability_url, NULL) < 0 || rs_xml_md(w, &cl, 1) < 0
            || (set->describedby && rs_xml_ln(w, "describedby", set->describedby, NULL, 0) < 0)
            || rs_xml_entry_end(w) < 0) {
            return -1;
        }
    }
    return finish(p, wp, w, a, &sc->sd_body, &sc->sd_len, &sc->sd_etag);
}

int rs_docs_render(apr_pool_t *pconf, server_rec *s0)
{
    server_rec *s;
    int i;

    for (s = s0; s; s = s->next) {
        rs_srv_conf *sc = ap_get_module_config(s->module_config, &resourcesync_module);
        if (!sc->sets->nelts) {
            continue;
        }
        if (render_description(pconf, sc) < 0) {
            ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s,
                         RS_TAG "cannot render the Source "
                                "Description");
            return !OK;
        }
        for (i = 0; i < sc->sets->nelts; i++) {
            if (render_capability_list(pconf, sc, APR_ARRAY_IDX(sc->sets, i, rs_set_t *)) < 0) {
                ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s,
                             RS_TAG "cannot render a "
                                    "Capability List");
                return !OK;
            }
        }
    }
    return OK;
}
