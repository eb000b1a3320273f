/* SPDX-License-Identifier: Apache-2.0 */
/* rs_websubmsg.c - see rs_websubmsg.h */
#include <string.h>
#include <apr_general.h>
#include <apr_strings.h>
#include "rs_websubmsg.h"

#define CHALLENGE_BYTES 16

/* Whether r has what its kind needs. */
static int complete(const rs_websub_req_t *r)
{
    if ((r->kind == RS_WEBSUB_PING || r->kind == RS_WEBSUB_VERIFY || r->kind == RS_WEBSUB_DENY)
        && !r->topic) {
        return 0;
    }
    if (r->kind == RS_WEBSUB_VERIFY && !r->mode) {
        return 0;
    }
    if ((r->kind == RS_WEBSUB_FAT || r->kind == RS_WEBSUB_DELIVER) && !r->body && r->body_len) {
        return 0;
    }
    if (r->kind == RS_WEBSUB_DELIVER && r->secret && !rs_websub_sig_known(r->sig_algo)) {
        return 0;
    }
    return r->kind <= RS_WEBSUB_DENY;
}

/* The caller's header lines (FAT, DELIVER, PING). */
static void extra_headers(const rs_websub_req_t *r, rs_websubmsg_t *m)
{
    const char *const *h;

    for (h = r->headers; h && *h; h++) {
        m->hdrs = curl_slist_append(m->hdrs, *h);
    }
}

/* FAT and DELIVER: the payload as it is, with the caller's header lines
 * and, for a delivery with a secret, its signature. */
static void payload(apr_pool_t *p, const rs_websub_req_t *r, rs_websubmsg_t *m)
{
    m->body = r->body_borrowed && r->body ? r->body
                                          : apr_pmemdup(p, r->body ? r->body : "", r->body_len);
    m->body_len = r->body_len;
    m->hdrs = curl_slist_append(m->hdrs, "Content-Type: application/xml");
    extra_headers(r, m);
    if (r->kind == RS_WEBSUB_DELIVER && r->secret) {
        m->hdrs = curl_slist_append(
            m->hdrs,
            apr_pstrcat(p, "X-Hub-Signature: ",
                        rs_websub_sign(p, r->sig_algo, r->secret, m->body, m->body_len), NULL));
    }
}

/* PING: hub.mode=publish with the topic and its URL, form-encoded, with
 * the caller's header lines (the topic's Link header, as a fat POST
 * has). */
static void ping(apr_pool_t *p, const rs_websub_req_t *r, rs_websubmsg_t *m)
{
    m->body = apr_pstrcat(p, "hub.mode=publish&hub.topic=", rs_websub_urlencode(p, r->topic),
                          "&hub.url=", rs_websub_urlencode(p, r->ping_url ? r->ping_url : r->topic),
                          NULL);
    m->body_len = strlen(m->body);
    m->hdrs = curl_slist_append(m->hdrs, "Content-Type: application/x-www-form-urlencoded");
    extra_headers(r, m);
}

/* The callback URL without its fragment, and the separator its query
 * goes on with (the callback's own query string is kept). */
static const char *callback_base(apr_pool_t *p, const char *url, const char **sep)
{
    const char *frag = strchr(url, '#');
    const char *base = frag ? apr_pstrmemdup(p, url, frag - url) : url;
    *sep = strchr(base, '?') ? "&" : "?";
    return base;
}

/* VERIFY: a GET of the callback with the mode, topic, a fresh challenge
 * and the lease. */
static apr_status_t verify(apr_pool_t *p, const rs_websub_req_t *r, rs_websubmsg_t *m)
{
    unsigned char rnd[CHALLENGE_BYTES];
    const char *sep, *base = callback_base(p, m->url, &sep);
    apr_status_t rv;

    if ((rv = apr_generate_random_bytes(rnd, sizeof(rnd))) != APR_SUCCESS) {
        return rv;
    }
    m->challenge = rs_websub_hex(p, rnd, sizeof(rnd));
    m->url = apr_pstrcat(
        p, base, sep, "hub.mode=", rs_websub_urlencode(p, r->mode),
        "&hub.topic=", rs_websub_urlencode(p, r->topic), "&hub.challenge=", m->challenge,
        r->lease_seconds >= 0
            ? apr_psprintf(p, "&hub.lease_seconds=%" APR_INT64_T_FMT, r->lease_seconds)
            : "",
        NULL);
    return APR_SUCCESS;
}

/* DENY: a GET of the callback with hub.mode=denied, the topic and the
 * reason. */
static void deny(apr_pool_t *p, const rs_websub_req_t *r, rs_websubmsg_t *m)
{
    const char *sep, *base = callback_base(p, m->url, &sep);

    m->url = apr_pstrcat(
        p, base, sep, "hub.mode=denied&hub.topic=", rs_websub_urlencode(p, r->topic),
        r->reason ? "&hub.reason=" : "", r->reason ? rs_websub_urlencode(p, r->reason) : "", NULL);
}

apr_status_t rs_websubmsg_build(apr_pool_t *p, const rs_websub_req_t *r, rs_websubmsg_t *m)
{
    apr_status_t rv = APR_SUCCESS;

    memset(m, 0, sizeof(*m));
    if (!r->url) {
        return APR_EINVAL;
    }
    if (strncasecmp(r->url, "http://", 7) && strncasecmp(r->url, "https://", 8)) {
        return APR_EBADPATH;
    }
    if (!complete(r)) {
        return APR_EINVAL;
    }
    m->url = apr_pstrdup(p, r->url);
    switch (r->kind) {
    case RS_WEBSUB_FAT:
    case RS_WEBSUB_DELIVER:
        payload(p, r, m);
        break;
    case RS_WEBSUB_PING:
        ping(p, r, m);
        break;
    case RS_WEBSUB_VERIFY:
        rv = verify(p, r, m);
        break;
    case RS_WEBSUB_DENY:
        deny(p, r, m);
        break;
    }
    if (rv != APR_SUCCESS) {
        if (m->hdrs) {
            curl_slist_free_all(m->hdrs);
        }
        memset(m, 0, sizeof(*m));
        return rv;
    }
    /* No "Expect: 100-continue" round trip before small bodies. */
    m->hdrs = curl_slist_append(m->hdrs, "Expect:");
    return APR_SUCCESS;
}
