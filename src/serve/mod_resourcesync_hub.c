/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_hub.c - the subscription endpoint of the built-in hub,
 * <prefix>/hub (ResourceSyncHub on).
 *
 * W3C WebSub §5.1: a subscriber POSTs a form (hub.callback, hub.mode,
 * hub.topic, hub.lease_seconds, hub.secret).  A child checks it here and
 * answers at once; the verification of intent (a GET to the callback),
 * the stored subscription and the deliveries are the watcher's, which
 * reads the request from the spool directory (rs_hubreq.h):
 *
 *   405 (Allow: POST)    any other method
 *   415                  not application/x-www-form-urlencoded
 *   413                  a body over RS_HUBREQ_MAX_BODY bytes
 *   400 + reason         a malformed request, a callback that is not a
 *                        plain http(s) URL, a topic that is not one of
 *                        this server's (WebSub lets the hub refuse at
 *                        once: nothing is sent anywhere)
 *   403 + reason         a callback whose host is an address written
 *                        literally (any spelling) that is loopback,
 *                        private, link-local... and not allowed by
 *                        ResourceSyncHubAllowCallback
 *   429 + Retry-After    the client sent more than
 *                        ResourceSyncHubRequestRate allows
 *   503 + Retry-After    the spool is full (ResourceSyncHubSpoolLimit) or
 *                        cannot be written (disk full...)
 *   202                  spooled
 *
 * Reasons name what was wrong with the request in general terms
 * ("hub.callback address not allowed"), never an address; the log has
 * the detail.  A child never resolves a name: a callback named by a host
 * name is spooled, and the watcher judges every address it connects to
 * (rebinding-proof, rs_websub's address filter).
 *
 * The translate_name hook of the documents (rs_handler_translate) claims
 * the URL; this handler runs before rs_handler_handle.  Like every
 * handler it runs after access control, so <Location> sections with
 * Require restrict it.  Client input never gives a 500.
 */
#include <errno.h>
#include <string.h>
#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_handler.h"
#include "mod_resourcesync_hub.h"
#include "mod_resourcesync_hubconf.h"
#include "mod_resourcesync_status.h"
#include "rs_hubaddr.h"
#include "rs_hubgate.h"
#include "rs_hubreq.h"
#include "rs_statedir.h"

#define FORM_TYPE   "application/x-www-form-urlencoded"
#define RETRY_AFTER "60"

/* Set while a spool write failed in this child and none succeeded since:
 * the failure is logged once per episode (disk full: every request
 * would fail the same way).  A full spool is logged once per episode by
 * all children together (rs_hubgate_full). */
static int spool_failing;

static int reply(request_rec *r, int status, const char *text)
{
    r->status = status;
    ap_set_content_type(r, "text/plain; charset=utf-8");
    apr_table_setn(r->headers_out, "Cache-Control", "no-store");
    ap_rprintf(r, "%s\n", text);
    return OK;
}

/* Whether r's Content-Type is the form type (parameters allowed). */
static int form_type(request_rec *r)
{
    const char *ct = apr_table_get(r->headers_in, "Content-Type");
    apr_size_t n = sizeof(FORM_TYPE) - 1;
    if (!ct || strncasecmp(ct, FORM_TYPE, n)) {
        return 0;
    }
    ct += n;
    while (*ct == ' ' || *ct == '\t') {
        ct++;
    }
    return !*ct || *ct == ';';
}

/* Read the body into *body, at most RS_HUBREQ_MAX_BODY bytes.  Returns OK,
 * HTTP_REQUEST_ENTITY_TOO_LARGE, or httpd's status for a broken body. */
static int read_body(request_rec *r, char **body, apr_size_t *len)
{
    char *buf = apr_palloc(r->pool, RS_HUBREQ_MAX_BODY + 1);
    apr_size_t got = 0;
    long n;
    int rc;

    if ((rc = ap_setup_client_block(r, REQUEST_CHUNKED_DECHUNK)) != OK) {
        return rc;
    }
    if (r->remaining > RS_HUBREQ_MAX_BODY) {
        return HTTP_REQUEST_ENTITY_TOO_LARGE;
    }
    if (ap_should_client_block(r)) {
        while ((n = ap_get_client_block(r, buf + got, RS_HUBREQ_MAX_BODY + 1 - got)) > 0) {
            got += (apr_size_t)n;
            if (got > RS_HUBREQ_MAX_BODY) {
                return HTTP_REQUEST_ENTITY_TOO_LARGE;
            }
        }
        if (n < 0) {
            return HTTP_BAD_REQUEST;
        }
    }
    buf[got] = '\0';
    *body = buf;
    *len = got;
    return OK;
}

/* Whether req's topic is one of this server's (as <canonical
 * base><prefix>/<set>/notify/change|framework, or the same path under the
 * scheme and host the request came with); if so, req gets its set and
 * kind.  Only sets with ResourceSyncNotify on have topics (a set without
 * serves none, 404, and publishes nothing): a subscription to the topic
 * path of any other set is refused like an unknown topic. */
static int match_topic(request_rec *r, const rs_srv_conf *sc, rs_hubreq_t *req)
{
    static const char *const kinds[] = { "change", "framework" };
    int i, k;

    for (i = 0; i < sc->sets->nelts; i++) {
        const rs_set_t *set = APR_ARRAY_IDX(sc->sets, i, rs_set_t *);
        for (k = 0; set->notify && k < 2; k++) {
            const char *path = apr_pstrcat(r->pool, rs_config_prefix(sc), "/", set->name,
                                           "/notify/", kinds[k], NULL);
            if (!strcmp(req->topic, apr_pstrcat(r->pool, sc->canonical, path, NULL))
                || !strcmp(req->topic, ap_construct_url(r->pool, path, r))) {
                req->set = set->name;
                req->kind = kinds[k];
                return 1;
            }
        }
    }
    return 0;
}

/* DECLINED when the client may send one more request
 * (ResourceSyncHubRequestRate), else the answer: 429 with Retry-After. */
static int rate(request_rec *r, const rs_hubreq_t *req)
{
    apr_interval_time_t per;
    apr_int64_t n = rs_hubconf_rate(&per), wait;
    const char *key = rs_hubaddr_key_text(r->pool, req->client);

    wait = rs_status_hub_rate(key ? key : req->client, apr_time_now(), n, per);
    if (!wait) {
        return DECLINED;
    }
    ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r,
                  RS_TAG "hub: %s sent more than %" APR_INT64_T_FMT " requests in %" APR_TIME_T_FMT
                         " s "
                         "(ResourceSyncHubRequestRate): 429",
                  req->client, n, apr_time_sec(per));
    apr_table_setn(r->err_headers_out, "Retry-After", apr_ltoa(r->pool, (long)wait));
    return reply(r, HTTP_TOO_MANY_REQUESTS, "too many requests from this address");
}

/* DECLINED when room in the spool for a record of len bytes
 * (ResourceSyncHubSpoolLimit) is reserved in the gate; else the answer:
 * 503 with Retry-After, the episode logged once by all children. */
static int reserve(request_rec *r, rs_hubgate_t *g, apr_size_t len)
{
    apr_uint32_t max = rs_hubconf_spool_max(), bytes = rs_hubconf_spool_bytes();

    if (g && len <= bytes && rs_hubgate_reserve(g, (apr_uint32_t)len, max, bytes)) {
        if (rs_hubgate_eased(g, (apr_uint32_t)len, max, bytes)) {
            ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r,
                          RS_TAG "hub: the spool of "
                                 "subscription requests takes requests again");
        }
        return DECLINED;
    }
    if (!g || rs_hubgate_full(g)) {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                      RS_TAG "hub: the spool of "
                             "subscription requests is full (%u requests, %u bytes; "
                             "ResourceSyncHubSpoolLimit %u %u KiB): answering 503 until the "
                             "watcher has taken some",
                      g ? g->count : 0, g ? g->bytes : 0, max, bytes / 1024);
    }
    apr_table_setn(r->err_headers_out, "Retry-After", RETRY_AFTER);
    return reply(r, HTTP_SERVICE_UNAVAILABLE, "the hub cannot take requests now");
}

/* Write req to the spool; 202, or 503 when it cannot be written. */
static int spool(request_rec *r, const rs_hubreq_t *req)
{
    const char *dir = rs_statedir_hubspool(r->pool, rs_global.state_dir), *name;
    const char *rec = rs_hubreq_record_format(r->pool, req);
    rs_hubgate_t *g = rs_status_hub_gate();
    apr_size_t len = strlen(rec);
    apr_status_t rv;
    int rc;

    if ((rc = reserve(r, g, len)) != DECLINED) {
        return rc;
    }
    if ((rv = rs_hubreq_spool_write(r->pool, dir, rec, &name)) != APR_SUCCESS) {
        rs_hubgate_release(g, 1, (apr_uint32_t)len);
        ap_log_rerror(APLOG_MARK, spool_failing ? APLOG_DEBUG : APLOG_ERR, rv, r,
                      RS_TAG "hub: cannot write a subscription request into %s "
                             "(answering 503 until it works again)",
                      dir);
        spool_failing = 1;
        apr_table_setn(r->err_headers_out, "Retry-After", RETRY_AFTER);
        return reply(r, HTTP_SERVICE_UNAVAILABLE, "the hub cannot take requests now");
    }
    if (spool_failing) {
        ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r,
                      RS_TAG "hub: subscription requests "
                             "are written again");
        spool_failing = 0;
    }
    ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, RS_TAG "hub: %s of %s to %s spooled as %s",
                  rs_hubreq_mode_name(req->mode), req->callback, req->topic, name);
    return reply(r, HTTP_ACCEPTED, "accepted: the hub verifies the callback's intent next");
}

/* The request's body, parsed and checked, into req; OK or a response. */
static int take_request(request_rec *r, const rs_srv_conf *sc, rs_hubreq_t *req)
{
    char *body;
    apr_size_t len;
    const char *why, *detail;
    int rc;

    if ((rc = read_body(r, &body, &len)) != OK) {
        return rc;
    }
    if ((why = rs_hubreq_parse_form(r->pool, body, len, req))
        || (why = rs_hubreq_validate(r->pool, req, rs_hubconf_lease_min(sc),
                                     rs_hubconf_lease_max(sc)))) {
        return reply(r, HTTP_BAD_REQUEST, why);
    }
    if ((why = rs_hubreq_check_callback(r->pool, req->callback, sc->hub_allow, &detail))) {
        if (!detail) {
            return reply(r, HTTP_BAD_REQUEST, why);
        }
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                      RS_TAG "hub: callback %s refused: %s "
                             "(not allowed by ResourceSyncHubAllowCallback)",
                      req->callback, detail);
        return reply(r, HTTP_FORBIDDEN, why);
    }
    if (!match_topic(r, sc, req)) {
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r,
                      RS_TAG "hub: %s of %s refused: %s is not "
                             "a topic of this server",
                      rs_hubreq_mode_name(req->mode), req->callback, req->topic);
        return reply(r, HTTP_BAD_REQUEST, "hub.topic is not a topic of this hub");
    }
    req->client = r->useragent_ip;
    return DONE;
}

int rs_hub_handle(request_rec *r)
{
    rs_srv_conf *sc;
    rs_hubreq_t req;
    int rc;

    if (!r->handler || strcmp(r->handler, RS_HANDLER)) {
        return DECLINED;
    }
    sc = ap_get_module_config(r->server->module_config, &resourcesync_module);
    if (!rs_hubconf_on(sc)
        || strcmp(r->uri, apr_pstrcat(r->pool, rs_config_prefix(sc), "/hub", NULL))) {
        return DECLINED;
    }
    r->allowed = AP_METHOD_BIT << M_POST;
    ap_allow_methods(r, REPLACE_ALLOW, "POST", NULL);
    if (r->method_number != M_POST) {
        return HTTP_METHOD_NOT_ALLOWED;
    }
    if (!form_type(r)) {
        if ((rc = ap_discard_request_body(r)) != OK) {
            return rc;
        }
        return reply(r, HTTP_UNSUPPORTED_MEDIA_TYPE,
                     "the body must be " FORM_TYPE " (W3C WebSub 5.1)");
    }
    if ((rc = take_request(r, sc, &req)) != DONE || (rc = rate(r, &req)) != DECLINED) {
        return rc;
    }
    req.received = apr_time_now();
    return spool(r, &req);
}
