/* SPDX-License-Identifier: Apache-2.0 */
/* rs_websub.c - see rs_websub.h */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include <apr_time.h>
#include "rs_websub.h"
#include "rs_websubmsg.h"

typedef struct dest_t dest_t;

/* One queued request, in its own pool (destroyed after completion). */
typedef struct item_t {
    struct item_t *next;
    apr_pool_t *pool;
    dest_t *dest;
    rs_websub_kind_e kind;
    const char *url; /* final URL (VERIFY: with the query) */
    const char *body;
    apr_size_t body_len;
    struct curl_slist *hdrs;
    const char *challenge;
    void *baton;
    char *resp; /* response body, resp_max + 1 bytes, allocated at
                                   * the first byte (most answers have none) */
    apr_size_t resp_len, resp_max;
    apr_int64_t retry_after;
    CURL *easy;
    char errbuf[CURL_ERROR_SIZE];
    const char *(*addr_filter)(void *, const unsigned char *, int);
    void *filter_baton;
    const char *refused; /* why the filter refused an address */
} item_t;

/* A destination key: FIFO of items, at most one in flight.  malloc'd,
 * freed when it has neither (so the set of keys does not grow forever). */
struct dest_t {
    char *key;
    item_t *head, *tail; /* queued, not started */
    item_t *inflight;
    int queued;
    int in_ready; /* on the ready list */
    int held;     /* its completion callback is running */
    dest_t *ready_next;
};

struct rs_websub_t {
    apr_pool_t *pool;
    CURLM *multi;
    rs_websub_opts_t o;
    rs_websub_done_fn *done;
    void *baton;
    rs_logger_t lg;
    apr_hash_t *dests; /* key -> dest_t */
    dest_t *ready_head, *ready_tail;
    CURL **free_easy; /* reusable easy handles */
    int nfree_easy;
    int inflight;
    int pending;
    int poll_fd; /* also waited for by rs_websub_run; -1: none */
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_FAILED_INIT;

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---- curl callbacks ---------------------------------------------------- */

/* The body of an answer without one (never written to). */
static char empty_resp[1] = "";

static size_t on_write(char *ptr, size_t sz, size_t n, void *ud)
{
    item_t *it = ud;
    apr_size_t len = sz * n;
    apr_size_t room = it->resp_max > it->resp_len ? it->resp_max - it->resp_len : 0;
    apr_size_t take = len < room ? len : room;

    if (take && it->resp == empty_resp) {
        it->resp = apr_palloc(it->pool, it->resp_max + 1);
    }
    if (!take) {
        return len;
    }
    memcpy(it->resp + it->resp_len, ptr, take);
    it->resp_len += take;
    it->resp[it->resp_len] = '\0';
    return len; /* the rest is read and dropped: the connection stays usable */
}

static size_t on_header(char *buf, size_t sz, size_t n, void *ud)
{
    item_t *it = ud;
    apr_size_t len = sz * n;
    static const char name[] = "retry-after:";

    if (len > sizeof(name) - 1 && !strncasecmp(buf, name, sizeof(name) - 1)) {
        char *v = apr_pstrmemdup(it->pool, buf + sizeof(name) - 1, len - (sizeof(name) - 1));
        it->retry_after = rs_websub_retry_after(v, apr_time_sec(apr_time_now()));
    }
    return len;
}

/* ---- destinations and items -------------------------------------------- */

static void ready_push(rs_websub_t *ws, dest_t *d)
{
    if (d->in_ready || d->inflight || !d->head) {
        return;
    }
    d->in_ready = 1;
    d->ready_next = NULL;
    if (ws->ready_tail) {
        ws->ready_tail->ready_next = d;
    }
    else {
        ws->ready_head = d;
    }
    ws->ready_tail = d;
}

static dest_t *ready_pop(rs_websub_t *ws)
{
    dest_t *d = ws->ready_head;
    if (d) {
        ws->ready_head = d->ready_next;
        if (!ws->ready_head) {
            ws->ready_tail = NULL;
        }
        d->in_ready = 0;
    }
    return d;
}

/* Free d when it holds nothing (not queued, nothing in flight). */
static void dest_release(rs_websub_t *ws, dest_t *d)
{
    if (d->head || d->inflight || d->in_ready || d->held) {
        return;
    }
    apr_hash_set(ws->dests, d->key, APR_HASH_KEY_STRING, NULL);
    free(d->key);
    free(d);
}

static void item_free(item_t *it)
{
    if (it->hdrs) {
        curl_slist_free_all(it->hdrs);
    }
    apr_pool_destroy(it->pool);
}

/* Build the item of a request in its own subpool; NULL with *rv set. */
static item_t *item_make(rs_websub_t *ws, const rs_websub_req_t *r, apr_status_t *rv)
{
    rs_websubmsg_t m;
    apr_pool_t *p;
    item_t *it;

    apr_pool_create(&p, ws->pool);
    if ((*rv = rs_websubmsg_build(p, r, &m)) != APR_SUCCESS) {
        apr_pool_destroy(p);
        return NULL;
    }
    it = apr_pcalloc(p, sizeof(*it));
    it->pool = p;
    it->kind = r->kind;
    it->baton = r->baton;
    it->url = m.url;
    it->body = m.body;
    it->body_len = m.body_len;
    it->hdrs = m.hdrs;
    it->challenge = m.challenge;
    it->retry_after = -1;
    it->addr_filter = r->addr_filter;
    it->filter_baton = r->filter_baton;
    it->resp_max = ws->o.body_max;
    it->resp = empty_resp;
    return it;
}

apr_status_t rs_websub_submit(rs_websub_t *ws, const char *key, const rs_websub_req_t *req)
{
    apr_status_t rv;
    item_t *it = item_make(ws, req, &rv);
    dest_t *d;

    if (!it) {
        return rv;
    }
    d = apr_hash_get(ws->dests, key, APR_HASH_KEY_STRING);
    if (!d) {
        d = calloc(1, sizeof(*d));
        d->key = strdup(key);
        if (!d->key) {
            abort();
        }
        apr_hash_set(ws->dests, d->key, APR_HASH_KEY_STRING, d);
    }
    it->dest = d;
    if (d->tail) {
        d->tail->next = it;
    }
    else {
        d->head = it;
    }
    d->tail = it;
    d->queued++;
    ws->pending++;
    ready_push(ws, d);
    return APR_SUCCESS;
}

/* ---- transfers --------------------------------------------------------- */

#define RS_WEBSUB_RECV_BUFFER 4096L
#define RS_WEBSUB_SEND_BUFFER 16384L /* libcurl's minimum */

static CURL *easy_get(rs_websub_t *ws)
{
    if (ws->nfree_easy > 0) {
        return ws->free_easy[--ws->nfree_easy];
    }
    return curl_easy_init();
}

static void easy_put(rs_websub_t *ws, CURL *e)
{
    if (ws->nfree_easy < ws->o.max_parallel) {
        /* Reset at once: the handle must not keep pointers into the item
         * (error buffer, header list, body) that is about to be freed.
         * Connections live in the multi handle's cache and stay. */
        curl_easy_reset(e);
        ws->free_easy[ws->nfree_easy++] = e;
    }
    else {
        curl_easy_cleanup(e);
    }
}

/* Whether the request's filter refuses the address (len 4 or 16; NULL:
 * not an IP address); it->refused gets why, NULL when it is allowed. */
static int refused(item_t *it, const unsigned char *addr, int len)
{
    it->refused = addr ? it->addr_filter(it->filter_baton, addr, len) : "not an IP address";
    return it->refused != NULL;
}

/* CURLOPT_OPENSOCKETFUNCTION of a request with an address filter. */
static curl_socket_t open_socket(void *clientp, curlsocktype purpose, struct curl_sockaddr *a)
{
    item_t *it = clientp;
    const unsigned char *addr = NULL;
    int len = 0;
    (void)purpose;

    if (a->family == AF_INET) {
        addr = (const unsigned char *)&((const struct sockaddr_in *)&a->addr)->sin_addr;
        len = 4;
    }
    else if (a->family == AF_INET6) {
        addr = (const unsigned char *)&((const struct sockaddr_in6 *)&a->addr)->sin6_addr;
        len = 16;
    }
    if (refused(it, addr, len)) {
        return CURL_SOCKET_BAD;
    }
    return socket(a->family, a->socktype, a->protocol);
}

/* CURLOPT_PREREQFUNCTION of a request with an address filter: called once
 * the connection the request will use is established, a new one or one
 * kept from an earlier request, right before the request is sent.  The
 * address it is connected to is checked again: a kept connection may have
 * been opened by a request under other rules (another filter, or none). */
static int prereq(void *clientp, char *primary_ip, char *local_ip, int primary_port, int local_port)
{
    item_t *it = clientp;
    unsigned char addr[16];
    int len = 0;
    (void)local_ip;
    (void)primary_port;
    (void)local_port;

    if (inet_pton(AF_INET, primary_ip, addr) == 1) {
        len = 4;
    }
    else if (inet_pton(AF_INET6, primary_ip, addr) == 1) {
        len = 16;
    }
    return refused(it, len ? addr : NULL, len) ? CURL_PREREQFUNC_ABORT : CURL_PREREQFUNC_OK;
}

static int item_start(rs_websub_t *ws, item_t *it)
{
    CURL *e = easy_get(ws);
    if (!e) {
        return -1;
    }
    it->easy = e;
    it->errbuf[0] = '\0';
    curl_easy_setopt(e, CURLOPT_URL, it->url);
    curl_easy_setopt(e, CURLOPT_PRIVATE, it);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    /* Never through a proxy, not even one named by the environment
     * (http_proxy, HTTPS_PROXY, ALL_PROXY): the address filter judges the
     * address connected to, which would be the proxy's. */
    curl_easy_setopt(e, CURLOPT_PROXY, "");
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, ws->o.timeout_ms);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, ws->o.connect_timeout_ms);
    curl_easy_setopt(e, CURLOPT_USERAGENT, ws->o.user_agent);
    /* Small transfer buffers: hundreds of requests may be in flight, and
     * libcurl's defaults (16 KB down, 64 KB up, allocated per handle)
     * would make the sender's memory grow with the subscribers.  Answers
     * are short and bodies are sent from the shared payload. */
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, RS_WEBSUB_RECV_BUFFER);
    curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, RS_WEBSUB_SEND_BUFFER);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, it->errbuf);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, it);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, it);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, it->hdrs);
    if (it->addr_filter) {
        /* Every address a new connection tries (a refused one lets curl
         * try the name's next address), then the one the request really
         * goes out on, new or reused. */
        curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, open_socket);
        curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, it);
        curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, prereq);
        curl_easy_setopt(e, CURLOPT_PREREQDATA, it);
    }
    if (it->kind == RS_WEBSUB_VERIFY || it->kind == RS_WEBSUB_DENY) {
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    }
    else {
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)it->body_len);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, it->body);
    }
    if (curl_multi_add_handle(ws->multi, e) != CURLM_OK) {
        easy_put(ws, e);
        it->easy = NULL;
        return -1;
    }
    ws->inflight++;
    return 0;
}

/* Start the next item of ready destinations while under the cap. */
static void start_ready(rs_websub_t *ws)
{
    dest_t *d;
    while (ws->inflight < ws->o.max_parallel && (d = ready_pop(ws)) != NULL) {
        item_t *it = d->head;
        d->head = it->next;
        if (!d->head) {
            d->tail = NULL;
        }
        it->next = NULL;
        d->queued--;
        d->inflight = it;
        if (item_start(ws, it) != 0) {
            /* Could not even start: put it back and try on the next run. */
            d->inflight = NULL;
            it->next = d->head;
            d->head = it;
            if (!d->tail)
                d->tail = it;
            d->queued++;
            ready_push(ws, d);
            rs_log_emit(&ws->lg, RS_LOG_WARN, APR_EGENERAL,
                        "websub: could not start a request to %s", it->url);
            return;
        }
    }
}

static rs_websub_outcome_e classify(CURLcode cc, long status)
{
    if (cc != CURLE_OK)
        return RS_WEBSUB_RETRY;
    if (status >= 200 && status < 300)
        return RS_WEBSUB_OK;
    if (status == 410)
        return RS_WEBSUB_GONE;
    if (status == 429 || status >= 500)
        return RS_WEBSUB_RETRY;
    return RS_WEBSUB_PERMANENT;
}

static void finish(rs_websub_t *ws, CURL *e, CURLcode cc)
{
    item_t *it = NULL;
    dest_t *d;
    rs_websub_result_t res;
    long status = 0;
    char *ip = NULL;

    curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&it);
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    /* Copied before the handle is reset for reuse. */
    if (curl_easy_getinfo(e, CURLINFO_PRIMARY_IP, &ip) != CURLE_OK || !ip) {
        ip = "";
    }
    ip = apr_pstrdup(it->pool, ip);
    curl_multi_remove_handle(ws->multi, e);
    easy_put(ws, e);
    ws->inflight--;
    ws->pending--;
    d = it->dest;
    d->inflight = NULL;
    ready_push(ws, d); /* the next of this key may start */

    memset(&res, 0, sizeof(res));
    res.key = d->key;
    res.kind = it->kind;
    res.baton = it->baton;
    res.status = cc == CURLE_OK ? status : 0;
    res.outcome = classify(cc, res.status);
    res.error = cc == CURLE_OK ? "" : (it->errbuf[0] ? it->errbuf : curl_easy_strerror(cc));
    if (it->refused && cc != CURLE_OK) {
        res.outcome = RS_WEBSUB_PERMANENT;
        res.error = apr_pstrcat(it->pool, "address refused: ", it->refused, NULL);
    }
    res.primary_ip = cc == CURLE_OK ? ip : "";
    res.body = it->resp;
    res.body_len = it->resp_len;
    res.challenge = it->challenge;
    res.challenge_ok = it->challenge && res.outcome == RS_WEBSUB_OK
                       && !strcmp(it->resp, it->challenge);
    res.retry_after = res.outcome == RS_WEBSUB_RETRY ? it->retry_after : -1;
    /* The key is still held (d is alive) during the callback: the
     * callback may submit to it; it is freed afterwards if idle. */
    d->held = 1;
    ws->done(ws->baton, &res);
    d->held = 0;
    item_free(it);
    dest_release(ws, d);
}

int rs_websub_run(rs_websub_t *ws, int timeout_ms)
{
    int running = 0, left;
    CURLMsg *m;

    start_ready(ws);
    curl_multi_perform(ws->multi, &running);
    if (timeout_ms > 0) {
        struct curl_waitfd w;
        w.fd = ws->poll_fd;
        w.events = CURL_WAIT_POLLIN;
        w.revents = 0;
        curl_multi_poll(ws->multi, ws->poll_fd >= 0 ? &w : NULL, ws->poll_fd >= 0 ? 1 : 0,
                        timeout_ms, NULL);
        curl_multi_perform(ws->multi, &running);
    }
    while ((m = curl_multi_info_read(ws->multi, &left)) != NULL) {
        if (m->msg == CURLMSG_DONE) {
            finish(ws, m->easy_handle, m->data.result);
        }
    }
    start_ready(ws);
    curl_multi_perform(ws->multi, &running);
    return ws->pending;
}

void rs_websub_poll_fd(rs_websub_t *ws, int fd)
{
    ws->poll_fd = fd;
}

void rs_websub_wakeup(rs_websub_t *ws)
{
    curl_multi_wakeup(ws->multi);
}

int rs_websub_pending(rs_websub_t *ws, const char *key)
{
    dest_t *d;
    if (!key) {
        return ws->pending;
    }
    d = apr_hash_get(ws->dests, key, APR_HASH_KEY_STRING);
    return d ? d->queued + (d->inflight != NULL) : 0;
}

int rs_websub_inflight(rs_websub_t *ws)
{
    return ws->inflight;
}

int rs_websub_keys(rs_websub_t *ws)
{
    return (int)apr_hash_count(ws->dests);
}

static void dest_drop(rs_websub_t *ws, dest_t *d)
{
    item_t *it, *next;
    if (d->inflight) {
        curl_multi_remove_handle(ws->multi, d->inflight->easy);
        curl_easy_cleanup(d->inflight->easy);
        item_free(d->inflight);
    }
    for (it = d->head; it; it = next) {
        next = it->next;
        item_free(it);
    }
    free(d->key);
    free(d);
}

void rs_websub_destroy(rs_websub_t *ws)
{
    apr_hash_index_t *hi;
    if (!ws->multi) {
        return;
    }
    for (hi = apr_hash_first(NULL, ws->dests); hi; hi = apr_hash_next(hi)) {
        dest_drop(ws, apr_hash_this_val(hi));
    }
    apr_hash_clear(ws->dests);
    while (ws->nfree_easy > 0) {
        curl_easy_cleanup(ws->free_easy[--ws->nfree_easy]);
    }
    curl_multi_cleanup(ws->multi);
    ws->multi = NULL;
    ws->ready_head = ws->ready_tail = NULL;
    ws->pending = ws->inflight = 0;
}

static apr_status_t cleanup(void *data)
{
    rs_websub_destroy(data);
    return APR_SUCCESS;
}

apr_status_t rs_websub_create(rs_websub_t **out, apr_pool_t *p, const rs_websub_opts_t *o,
                              rs_websub_done_fn *done, void *baton, const rs_logger_t *lg)
{
    rs_websub_t *ws = apr_pcalloc(p, sizeof(*ws));

    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK) {
        rs_log_emit(lg, RS_LOG_ERR, APR_EGENERAL, "websub: curl_global_init failed: %s",
                    curl_easy_strerror(global_rc));
        return APR_EGENERAL;
    }
    ws->pool = p;
    if (o)
        ws->o = *o;
    if (ws->o.max_parallel <= 0)
        ws->o.max_parallel = 8;
    if (ws->o.timeout_ms <= 0)
        ws->o.timeout_ms = 30000;
    if (ws->o.connect_timeout_ms <= 0)
        ws->o.connect_timeout_ms = 10000;
    if (ws->o.body_max == 0)
        ws->o.body_max = 4096;
    if (!ws->o.user_agent)
        ws->o.user_agent = "mod_resourcesync";
    ws->done = done;
    ws->baton = baton;
    if (lg)
        ws->lg = *lg;
    ws->dests = apr_hash_make(p);
    ws->poll_fd = -1;
    ws->free_easy = apr_pcalloc(p, sizeof(CURL *) * ws->o.max_parallel);
    ws->multi = curl_multi_init();
    if (!ws->multi) {
        rs_log_emit(lg, RS_LOG_ERR, APR_EGENERAL, "websub: curl_multi_init failed");
        return APR_EGENERAL;
    }
    curl_multi_setopt(ws->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)ws->o.max_parallel);
    apr_pool_cleanup_register(p, ws, cleanup, apr_pool_cleanup_null);
    *out = ws;
    return APR_SUCCESS;
}
