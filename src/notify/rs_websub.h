/* SPDX-License-Identifier: Apache-2.0 */
/* rs_websub.h - WebSub sender: outgoing HTTP requests over one libcurl
 * multi handle.
 *
 * Used for both directions of the notification machinery: publishing to
 * hubs (fat POSTs and WebSub "publish" pings) and the built-in hub's
 * delivery to subscribers (signed fat POSTs, verification-of-intent GETs).
 *
 * Model.  Every request is submitted under a destination KEY, a string the
 * caller chooses (e.g. "<topic>|<url>").  Requests of one key form a FIFO
 * queue and at most ONE of them is in flight at any time; requests of
 * different keys run concurrently, up to max_parallel transfers in total.
 * A key whose request is slow therefore never delays another key.  Keys
 * that become ready are served in the order they became ready (fair).
 *
 * Lifecycle and threads.  A sender belongs to ONE owner thread: create,
 * submit, run, pending and destroy are called only from it.  The owner
 * drives everything with rs_websub_run(), which waits up to a timeout for
 * network activity (curl_multi_poll) and invokes the completion callback
 * for each finished request, from inside rs_websub_run on the owner
 * thread.  The callback may submit new requests (also to the same key);
 * it must not destroy the sender.
 * The ONLY call allowed from another thread is rs_websub_wakeup(), which
 * makes a concurrent rs_websub_run return early (curl_multi_wakeup), e.g.
 * after the other thread queued work the owner should pick up.
 *
 * libcurl's global initialisation (curl_global_init) is performed once per
 * process by the first rs_websub_create, under pthread_once; it is not
 * thread-safe against other libcurl users starting at the same moment, so
 * the first sender should be created before other threads use libcurl.
 *
 * Memory.  Each queued request copies its data into its own subpool,
 * destroyed right after its completion callback returns; easy handles are
 * reused (curl_easy_reset) from a free list; destinations without queued
 * or in-flight requests are freed.  A long-running sender's memory is flat.
 *
 * Transfers: http and https only, redirects never followed, never through
 * a proxy (not even one named by http_proxy, HTTPS_PROXY or ALL_PROXY in
 * the environment), no signals (CURLOPT_NOSIGNAL), total and connect
 * timeouts from the options; connections are kept and reused by the
 * multi handle.
 */
#ifndef RS_WEBSUB_H
#define RS_WEBSUB_H

#include <apr_pools.h>
#include <apr_errno.h>
#include "rs_log.h"

typedef struct rs_websub_t rs_websub_t;

/* Request kinds. */
typedef enum {
    RS_WEBSUB_FAT = 0, /* POST body, Content-Type: application/xml */
    RS_WEBSUB_PING,    /* POST hub.mode=publish&hub.topic=..&hub.url=.. */
    RS_WEBSUB_DELIVER, /* FAT plus X-Hub-Signature when secret is set */
    RS_WEBSUB_VERIFY,  /* GET callback?...&hub.mode=..&hub.challenge=.. */
    RS_WEBSUB_DENY     /* GET callback?...&hub.mode=denied&hub.topic=..
                            * &hub.reason=.. (WebSub 5.2) */
} rs_websub_kind_e;

/* Outcomes. */
typedef enum {
    RS_WEBSUB_OK = 0,    /* 2xx */
    RS_WEBSUB_RETRY,     /* network error, timeout, 5xx, 429 */
    RS_WEBSUB_PERMANENT, /* any other status (1xx, 3xx, 4xx but 410/429) */
    RS_WEBSUB_GONE       /* 410 */
} rs_websub_outcome_e;

/* One request.  Everything is copied by rs_websub_submit, except the
 * body with body_borrowed. */
typedef struct rs_websub_req_t {
    rs_websub_kind_e kind;
    const char *url;  /* hub URL (FAT, PING) or callback URL */
    const char *body; /* FAT, DELIVER: body bytes */
    apr_size_t body_len;
    int body_borrowed;          /* the body is not copied: the caller keeps
                                   * it unchanged until the completion (one
                                   * payload shared by many requests) */
    const char *const *headers; /* FAT, DELIVER, PING: NULL-terminated extra header
                                   * lines, e.g. "Link: <..>; rel=\"hub\"" */
    const char *topic;          /* PING, VERIFY, DENY: hub.topic */
    const char *ping_url;       /* PING: hub.url (NULL: same as topic) */
    const char *secret;         /* DELIVER: hub.secret (NULL: unsigned) */
    const char *sig_algo;       /* DELIVER: sha1|sha256|sha384|sha512
                                   * (NULL: sha256) */
    const char *mode;           /* VERIFY: subscribe|unsubscribe */
    apr_int64_t lease_seconds;  /* VERIFY: < 0 leaves hub.lease_seconds out */
    const char *reason;         /* DENY: hub.reason (NULL: left out) */
    void *baton;                /* handed back in the result */
    /* Address filter (NULL: none), checked after DNS, at connect time:
     * for every address a new connection of this request is about to use
     * (a refused one lets libcurl try the name's next address), and then
     * for the address of the connection the request is sent on, new or
     * kept from an earlier request (which may have had other rules), right
     * before a byte of it is sent.  So a name re-pointed between an
     * earlier check and the call (DNS rebinding) is caught, whatever the
     * resolver or a cache answered before.  It gets the address (len 4 or
     * 16 bytes, network order) and returns NULL to allow it or why not; a
     * refused address fails the request with RS_WEBSUB_PERMANENT, status
     * 0 and error "address refused: <why>".  filter_baton must live until
     * the completion. */
    const char *(*addr_filter)(void *filter_baton, const unsigned char *addr, int len);
    void *filter_baton;
} rs_websub_req_t;

/* A completion.  Pointers are valid only during the callback. */
typedef struct rs_websub_result_t {
    const char *key;
    rs_websub_kind_e kind;
    void *baton;
    rs_websub_outcome_e outcome;
    long status;       /* HTTP status; 0 when no response */
    const char *error; /* curl error text, "" when none */
    const char *body;  /* response body, NUL-terminated, at most
                                   * body_max bytes kept (truncated beyond) */
    apr_size_t body_len;
    const char *challenge;   /* VERIFY: the hub.challenge sent */
    int challenge_ok;        /* VERIFY: 2xx and body == challenge */
    apr_int64_t retry_after; /* seconds from Retry-After; -1: none */
    const char *primary_ip;  /* the address the request was sent to
                                   * (text, as libcurl gives it); "" when
                                   * the transfer failed */
} rs_websub_result_t;

typedef void rs_websub_done_fn(void *baton, const rs_websub_result_t *res);

/* Options; zero fields take the defaults in brackets. */
typedef struct rs_websub_opts_t {
    int max_parallel;        /* total transfers in flight [8] */
    long timeout_ms;         /* whole transfer [30000] */
    long connect_timeout_ms; /* connect phase [10000] */
    apr_size_t body_max;     /* response bytes kept [4096] */
    const char *user_agent;  /* [mod_resourcesync] */
} rs_websub_opts_t;

/* Create a sender in pool p (its cleanup destroys the sender).  done(baton,
 * result) is called for every completed request.  Returns APR_SUCCESS, or
 * APR_EGENERAL when libcurl could not be initialised (logged). */
apr_status_t rs_websub_create(rs_websub_t **out, apr_pool_t *p, const rs_websub_opts_t *o,
                              rs_websub_done_fn *done, void *baton, const rs_logger_t *lg);

/* Queue a request under key.  Returns APR_SUCCESS, APR_EINVAL for a
 * request missing what its kind needs, or APR_EBADPATH for a URL that is
 * not http:// or https://. */
apr_status_t rs_websub_submit(rs_websub_t *ws, const char *key, const rs_websub_req_t *req);

/* Start what may start, wait up to timeout_ms for activity (0: do not
 * wait), and report completions through the callback.  Returns the number
 * of requests still queued or in flight after the call. */
int rs_websub_run(rs_websub_t *ws, int timeout_ms);

/* A file descriptor (fd >= 0; -1: none) that rs_websub_run also waits
 * for (readable): its owner reads it after the run returns, e.g. an
 * inotify descriptor that brings work.  Owner thread only. */
void rs_websub_poll_fd(rs_websub_t *ws, int fd);

/* Make a concurrent or the next rs_websub_run return early.  The only
 * function callable from a thread other than the owner. */
void rs_websub_wakeup(rs_websub_t *ws);

/* Requests queued or in flight for key (NULL: all keys). */
int rs_websub_pending(rs_websub_t *ws, const char *key);

/* Requests in flight right now (all keys). */
int rs_websub_inflight(rs_websub_t *ws);

/* Keys currently held (with requests queued or in flight); keys without
 * any are freed, so this returns to 0 when all is done. */
int rs_websub_keys(rs_websub_t *ws);

/* Free everything; queued and in-flight requests are dropped without a
 * callback.  Also run by the pool cleanup; calling it twice is harmless. */
void rs_websub_destroy(rs_websub_t *ws);

/* Whether algo names a signature algorithm rs_websub_sign knows (sha1,
 * sha256, sha384, sha512; NULL: sha256). */
int rs_websub_sig_known(const char *algo);

/* n bytes as lower-case hex, from p. */
char *rs_websub_hex(apr_pool_t *p, const unsigned char *d, apr_size_t n);

/* The X-Hub-Signature value "<algo>=<hex HMAC of data keyed with secret>"
 * for algo sha1|sha256|sha384|sha512 (NULL: sha256), allocated in p; NULL
 * for an unknown algorithm. */
char *rs_websub_sign(apr_pool_t *p, const char *algo, const char *secret, const void *data,
                     apr_size_t len);

/* Percent-encode s for application/x-www-form-urlencoded and query strings
 * (RFC 3986 unreserved characters kept, everything else %XX). */
char *rs_websub_urlencode(apr_pool_t *p, const char *s);

/* Retry delay for the given attempt (1 = first retry): exponential with
 * full jitter, a value in [0, min(cap, base * 2^(attempt-1))] chosen by
 * rnd (uniform 32-bit random).  Units are the caller's (e.g. seconds). */
apr_int64_t rs_websub_backoff(apr_int64_t base, apr_int64_t cap, unsigned attempt,
                              apr_uint32_t rnd);

/* Parse a Retry-After value (delta-seconds or HTTP-date, the latter
 * relative to now_sec); -1 when absent or unparsable. */
apr_int64_t rs_websub_retry_after(const char *value, apr_int64_t now_sec);

#endif
