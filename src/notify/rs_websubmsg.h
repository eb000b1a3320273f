/* SPDX-License-Identifier: Apache-2.0 */
/* rs_websubmsg.h - what one WebSub request sends: its URL, body and
 * header lines, by kind (rs_websub.h): a publish ping, a fat ping, a
 * delivery (signed when it has a secret), a verification of intent (with
 * a fresh challenge) or a denial, the request checked first.
 *
 * The sender (rs_websub.c) builds each queued request with
 * rs_websubmsg_build and hands the result to libcurl unchanged; nothing
 * here touches the network.
 */
#ifndef RS_WEBSUBMSG_H
#define RS_WEBSUBMSG_H

#include <curl/curl.h>
#include <apr_pools.h>
#include "rs_websub.h"

typedef struct rs_websubmsg_t {
    const char *url;  /* VERIFY and DENY: with their query */
    const char *body; /* NULL: none (GET) */
    apr_size_t body_len;
    struct curl_slist *hdrs; /* the caller frees it (curl_slist_free_all) */
    const char *challenge;   /* VERIFY: hub.challenge, NULL otherwise */
} rs_websubmsg_t;

/* Build request r's message in p.  APR_EINVAL: a field its kind needs is
 * missing (a topic, a mode, a body of its length) or a signature
 * algorithm is unknown; APR_EBADPATH: the URL is not http or https; or
 * the cause of a failed random challenge.  On failure *m holds nothing to
 * free. */
apr_status_t rs_websubmsg_build(apr_pool_t *p, const rs_websub_req_t *r, rs_websubmsg_t *m);

#endif
