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
 *                        plain http(s) URL or whose host does not resolve
 *   403 + reason         a callback whose address is loopback, private,
 *                        link-local... and not allowed by
 *                        ResourceSyncHubAllowCallback
 *   503 + Retry-After    the spool file cannot be written (disk full...)
 *   202                  spooled; a topic that is not one of this server's
 *                        is spooled too, marked deny (the watcher then
 *                        tells the callback hub.mode=denied, §5.2)
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
#include "rs_hubreq.h"
#include "rs_statedir.h"

#define FORM_TYPE       "application/x-www-form-urlencoded"
#define RETRY_AFTER     "60"

/* Set while a spool write failed in this child and none succeeded since:
 * the failure is logged once per episode (disk full: every request
 * would fail the same way). */
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

/* Mark req with its set and kind when its topic is one of this server's
 * (as <canonical base><prefix>/<set>/notify/change|framework, or the same
 * path under the scheme and host the request came with), else deny. */
static void match_topic(request_rec *r, const rs_srv_conf *sc, rs_hubreq_t *req)
{
    static const char *const kinds[] = { "change", "framework" };
    int i, k;

    req->deny = 1;
    req->set = req->kind = "";
    for (i = 0; i < sc->sets->nelts; i++) {
        const rs_set_t *set = APR_ARRAY_IDX(sc->sets, i, rs_set_t *);
        for (k = 0; k < 2; k++) {
            const char *path = apr_pstrcat(r->pool, rs_config_prefix(sc), "/", set->name,
                                           "/notify/", kinds[k], NULL);
            if (!strcmp(req->topic, apr_pstrcat(r->pool, sc->canonical, path, NULL))
                || !strcmp(req->topic, ap_construct_url(r->pool, path, r))) {
                req->deny = 0;
                req->set = set->name;
                req->kind = kinds[k];
                return;
            }
        }
    }
}

/* Write req to the spool; 202, or 503 when it cannot be written. */
static int spool(request_rec *r, const rs_hubreq_t *req)
{
    const char *dir = rs_statedir_hubspool(r->pool, rs_global.state_dir), *name;
    apr_status_t rv = rs_hubreq_spool_write(r->pool, dir, req, &name);

    if (rv != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, spool_failing ? APLOG_DEBUG : APLOG_ERR, rv, r,
                      RS_TAG "hub: cannot write a subscription request into %s "
                      "(answering 503 until it works again)", dir);
        spool_failing = 1;
        apr_table_setn(r->err_headers_out, "Retry-After", RETRY_AFTER);
        return reply(r, HTTP_SERVICE_UNAVAILABLE, "the hub cannot take requests now");
    }
    if (spool_failing) {
        ap_log_rerror(APLOG_MARK, APLOG_NOTICE, 0, r, RS_TAG "hub: subscription requests "
                      "are written again");
        spool_failing = 0;
    }
    ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, RS_TAG "hub: %s of %s to %s%s spooled as %s",
                  rs_hubreq_mode_name(req->mode), req->callback, req->topic,
                  req->deny ? " (unknown topic: denied)" : "", name);
    return reply(r, HTTP_ACCEPTED, "accepted: the hub verifies the callback's intent next");
}

/* The request's body, parsed and checked, into req; OK or a response. */
static int take_request(request_rec *r, const rs_srv_conf *sc, rs_hubreq_t *req)
{
    char *body;
    apr_size_t len;
    const char *why;
    apr_status_t rv;
    int rc;

    if ((rc = read_body(r, &body, &len)) != OK) {
        return rc;
    }
    if ((why = rs_hubreq_parse_form(r->pool, body, len, req))
        || (why = rs_hubreq_validate(r->pool, req, rs_hubconf_lease_min(sc),
                                     rs_hubconf_lease_max(sc)))) {
        return reply(r, HTTP_BAD_REQUEST, why);
    }
    if ((why = rs_hubreq_check_callback(r->pool, req->callback, sc->hub_allow, &rv))) {
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, rv, r, RS_TAG "hub: callback refused: %s", why);
        return reply(r, rv == APR_SUCCESS ? HTTP_FORBIDDEN : HTTP_BAD_REQUEST, why);
    }
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
    if (!rs_hubconf_on(sc) || strcmp(r->uri, apr_pstrcat(r->pool, rs_config_prefix(sc),
                                                         "/hub", NULL))) {
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
    if ((rc = take_request(r, sc, &req)) != DONE) {
        return rc;
    }
    match_topic(r, sc, &req);
    req.received = apr_time_now();
    return spool(r, &req);
}
