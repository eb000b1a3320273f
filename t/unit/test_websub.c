/* SPDX-License-Identifier: Apache-2.0 */
/* test_websub.c - rs_websub against a real HTTP server.
 *
 * Each test of the "http" case starts t/unit/websub_server.py (a
 * threaded HTTP/1.1 server on 127.0.0.1, see its header) and talks to it
 * over real sockets; the server logs every request with a shared counter
 * taken at arrival and before answering, which the tests read back to
 * check headers, bodies, order per key and one-in-flight per key.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <apr_strings.h>
#include <apr_time.h>
#include "unit.h"
#include "rs_websub.h"
#include "rs_websubmsg.h"
#include "rs_hubaddr.h"

/* ---- the server ---------------------------------------------------------- */

static char *srv_base; /* "http://127.0.0.1:PORT" */
static char *srv_logfile;

static void srv_start(void)
{
    ut_setup();
    srv_base = ut_peer_start(&srv_logfile);
}

static void srv_stop(void)
{
    ut_peer_stop();
    ut_teardown();
}

static char *url(const char *path)
{
    return apr_pstrcat(ut_pool, srv_base, path, NULL);
}

/* One logged request. */
typedef struct {
    int begin, end, port;
    char *method, *target, *ct, *link, *sig, *body;
} rec_t;

static char *pct_decode(const char *s)
{
    char *out = apr_pstrdup(ut_pool, s), *o = out;
    if (!strcmp(s, "-")) {
        return "";
    }
    for (; *s; s++) {
        if (*s == '%' && s[1] && s[2]) {
            char hx[3] = { s[1], s[2], 0 };
            *o++ = (char)strtol(hx, NULL, 16);
            s += 2;
        }
        else {
            *o++ = *s;
        }
    }
    *o = '\0';
    return out;
}

/* Read the log; returns the number of records (at most max). */
static int srv_log(rec_t *r, int max)
{
    FILE *f = fopen(srv_logfile, "r");
    char line[65536];
    int n = 0;

    ck_assert_ptr_nonnull(f);
    while (n < max && fgets(line, sizeof(line), f)) {
        char *save = NULL, *tok[9];
        int i;
        line[strcspn(line, "\n")] = '\0';
        for (i = 0; i < 9; i++) {
            tok[i] = strtok_r(i ? NULL : line, " ", &save);
            ck_assert_ptr_nonnull(tok[i]);
        }
        r[n].begin = atoi(tok[0]);
        r[n].end = atoi(tok[1]);
        r[n].method = apr_pstrdup(ut_pool, tok[2]);
        r[n].target = pct_decode(tok[3]);
        r[n].ct = pct_decode(tok[4]);
        r[n].link = pct_decode(tok[5]);
        r[n].sig = pct_decode(tok[6]);
        r[n].body = pct_decode(tok[7]);
        r[n].port = atoi(tok[8]);
        n++;
    }
    fclose(f);
    return n;
}

/* ---- completions ---------------------------------------------------------- */

typedef struct {
    char *key;
    int tag;
    rs_websub_outcome_e outcome;
    long status;
    char *error, *body, *challenge;
    int challenge_ok;
    apr_int64_t retry_after;
    char *primary_ip;
    int inflight_key; /* rs_websub_pending(key) seen in the callback */
} done_t;

static done_t done[64];
static int ndone;
static int max_inflight;
static rs_websub_t *cur_ws;

static void on_done(void *baton, const rs_websub_result_t *r)
{
    done_t *d;
    ck_assert_int_lt(ndone, 64);
    d = &done[ndone++];
    d->key = apr_pstrdup(ut_pool, r->key);
    d->tag = (int)(intptr_t)r->baton;
    d->outcome = r->outcome;
    d->status = r->status;
    d->error = apr_pstrdup(ut_pool, r->error);
    d->body = apr_pstrmemdup(ut_pool, r->body, r->body_len);
    d->challenge = r->challenge ? apr_pstrdup(ut_pool, r->challenge) : NULL;
    d->challenge_ok = r->challenge_ok;
    d->retry_after = r->retry_after;
    d->primary_ip = apr_pstrdup(ut_pool, r->primary_ip);
}

static rs_websub_t *mk(int max_parallel, long timeout_ms)
{
    rs_websub_t *ws = NULL;
    rs_websub_opts_t o = { 0 };
    o.max_parallel = max_parallel;
    o.timeout_ms = timeout_ms;
    ndone = 0;
    max_inflight = 0;
    ck_assert_int_eq(rs_websub_create(&ws, ut_pool, &o, on_done, NULL, NULL), APR_SUCCESS);
    cur_ws = ws;
    return ws;
}

/* Run until n completions (deadline 20 s: a failure, not a timing assertion). */
static void run_until(rs_websub_t *ws, int n)
{
    apr_time_t deadline = apr_time_now() + apr_time_from_sec(20);
    while (ndone < n) {
        ck_assert_msg(apr_time_now() < deadline, "only %d of %d completions", ndone, n);
        rs_websub_run(ws, 100);
        if (rs_websub_inflight(ws) > max_inflight) {
            max_inflight = rs_websub_inflight(ws);
        }
    }
}

static void fat(rs_websub_t *ws, const char *key, const char *path, const char *body, int tag)
{
    static const char *const hdrs[] = { "Link: <http://ex.org/hub>; rel=\"hub\"", NULL };
    rs_websub_req_t q = { 0 };
    q.kind = RS_WEBSUB_FAT;
    q.url = url(path);
    q.body = body;
    q.body_len = strlen(body);
    q.headers = hdrs;
    q.baton = (void *)(intptr_t)tag;
    ck_assert_int_eq(rs_websub_submit(ws, key, &q), APR_SUCCESS);
}

/* ---- pure helpers --------------------------------------------------------- */

/* RFC 4231 test case 2 (and RFC 2202 test case 2 for sha1). */
START_TEST(sign_vectors)
{
    const char *d = "what do ya want for nothing?";
    ck_assert_str_eq(rs_websub_sign(ut_pool, "sha256", "Jefe", d, strlen(d)),
                     "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    ck_assert_str_eq(rs_websub_sign(ut_pool, NULL, "Jefe", d, strlen(d)),
                     "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    ck_assert_str_eq(rs_websub_sign(ut_pool, "sha384", "Jefe", d, strlen(d)),
                     "sha384=af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e"
                     "8e2240ca5e69e2c78b3239ecfab21649");
    ck_assert_str_eq(rs_websub_sign(ut_pool, "sha512", "Jefe", d, strlen(d)),
                     "sha512=164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea250554"
                     "9758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737");
    ck_assert_str_eq(rs_websub_sign(ut_pool, "sha1", "Jefe", d, strlen(d)),
                     "sha1=effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
    ck_assert_ptr_null(rs_websub_sign(ut_pool, "md5", "Jefe", d, strlen(d)));
}
END_TEST

START_TEST(backoff_full_jitter)
{
    ck_assert_int_eq(rs_websub_backoff(10, 1000, 1, 0), 0);
    ck_assert_int_eq(rs_websub_backoff(10, 1000, 1, 0xFFFFFFFFu), 10);
    ck_assert_int_eq(rs_websub_backoff(10, 1000, 2, 0xFFFFFFFFu), 20);
    ck_assert_int_eq(rs_websub_backoff(10, 1000, 4, 0xFFFFFFFFu), 80);
    ck_assert_int_eq(rs_websub_backoff(10, 1000, 4, 0x80000000u), 40);
    ck_assert_int_eq(rs_websub_backoff(10, 1000, 8, 0xFFFFFFFFu), 1000);
    ck_assert_int_eq(rs_websub_backoff(10, 1000, 4000000000u, 0xFFFFFFFFu), 1000);
    ck_assert_int_eq(rs_websub_backoff(0, 1000, 3, 0xFFFFFFFFu), 0);
}
END_TEST

START_TEST(retry_after_and_encoding)
{
    ck_assert_int_eq(rs_websub_retry_after(" 120\r\n", 0), 120);
    ck_assert_int_eq(rs_websub_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 1445412470), 10);
    ck_assert_int_eq(rs_websub_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 1445412490), 0);
    ck_assert_int_eq(rs_websub_retry_after("soon", 0), -1);
    ck_assert_int_eq(rs_websub_retry_after("12x", 0), -1);
    ck_assert_int_eq(rs_websub_retry_after(NULL, 0), -1);
    ck_assert_str_eq(rs_websub_urlencode(ut_pool, "http://ex.org/a b?c=d&e~_.-"),
                     "http%3A%2F%2Fex.org%2Fa%20b%3Fc%3Dd%26e~_.-");
}
END_TEST

START_TEST(submit_rejects)
{
    rs_websub_t *ws = mk(2, 1000);
    rs_websub_req_t q = { 0 };
    q.kind = RS_WEBSUB_FAT;
    q.url = "ftp://ex.org/x";
    ck_assert_int_eq(rs_websub_submit(ws, "k", &q), APR_EBADPATH);
    q.url = "file:///etc/passwd";
    ck_assert_int_eq(rs_websub_submit(ws, "k", &q), APR_EBADPATH);
    q.url = "http://ex.org/";
    q.kind = RS_WEBSUB_PING; /* no topic */
    ck_assert_int_eq(rs_websub_submit(ws, "k", &q), APR_EINVAL);
    q.kind = RS_WEBSUB_DELIVER;
    q.secret = "s";
    q.sig_algo = "md5";
    ck_assert_int_eq(rs_websub_submit(ws, "k", &q), APR_EINVAL);
    ck_assert_int_eq(rs_websub_pending(ws, NULL), 0);
}
END_TEST

/* ---- over HTTP ------------------------------------------------------------ */

START_TEST(fat_post_headers)
{
    rs_websub_t *ws = mk(4, 10000);
    rec_t r[4];

    fat(ws, "t|a", "/ok/fat", "<urlset>x</urlset>", 1);
    run_until(ws, 1);
    ck_assert_int_eq(done[0].outcome, RS_WEBSUB_OK);
    ck_assert_int_eq(done[0].status, 200);
    ck_assert_str_eq(done[0].key, "t|a");
    ck_assert_int_eq(done[0].tag, 1);
    ck_assert_str_eq(done[0].error, "");
    ck_assert_int_eq(srv_log(r, 4), 1);
    ck_assert_str_eq(r[0].method, "POST");
    ck_assert_str_eq(r[0].ct, "application/xml");
    ck_assert_str_eq(r[0].link, "<http://ex.org/hub>; rel=\"hub\"");
    ck_assert_str_eq(r[0].sig, "");
    ck_assert_str_eq(r[0].body, "<urlset>x</urlset>");
    ck_assert_int_eq(rs_websub_pending(ws, NULL), 0);
}
END_TEST

START_TEST(ping_form)
{
    rs_websub_t *ws = mk(4, 10000);
    rs_websub_req_t q = { 0 };
    rec_t r[4];

    q.kind = RS_WEBSUB_PING;
    q.url = url("/ok/hub");
    q.topic = "http://ex.org/set a/change.xml";
    ck_assert_int_eq(rs_websub_submit(ws, "ping", &q), APR_SUCCESS);
    run_until(ws, 1);
    ck_assert_int_eq(done[0].outcome, RS_WEBSUB_OK);
    ck_assert_int_eq(srv_log(r, 4), 1);
    ck_assert_str_eq(r[0].method, "POST");
    ck_assert_str_eq(r[0].ct, "application/x-www-form-urlencoded");
    ck_assert_str_eq(r[0].body, "hub.mode=publish"
                                "&hub.topic=http%3A%2F%2Fex.org%2Fset%20a%2Fchange.xml"
                                "&hub.url=http%3A%2F%2Fex.org%2Fset%20a%2Fchange.xml");
}
END_TEST

START_TEST(signed_delivery)
{
    rs_websub_t *ws = mk(4, 10000);
    const char *d = "what do ya want for nothing?";
    static const char *const algos[] = { "sha256", "sha1", "sha384", "sha512" };
    static const char *const want[] = {
        "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
        "sha1=effcdf6ae5eb2fa2d27416d5f184df9c259a7c79",
        "sha384=af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e"
        "8e2240ca5e69e2c78b3239ecfab21649",
        "sha512=164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea250554"
        "9758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"
    };
    rec_t r[8];
    int i;

    for (i = 0; i < 4; i++) {
        rs_websub_req_t q = { 0 };
        q.kind = RS_WEBSUB_DELIVER;
        q.url = url("/ok/cb");
        q.body = d;
        q.body_len = strlen(d);
        q.secret = "Jefe";
        q.sig_algo = algos[i];
        ck_assert_int_eq(rs_websub_submit(ws, "sub", &q), APR_SUCCESS);
    }
    { /* no secret: no signature */
        rs_websub_req_t q = { 0 };
        q.kind = RS_WEBSUB_DELIVER;
        q.url = url("/ok/cb");
        q.body = d;
        q.body_len = strlen(d);
        ck_assert_int_eq(rs_websub_submit(ws, "sub", &q), APR_SUCCESS);
    }
    run_until(ws, 5);
    ck_assert_int_eq(srv_log(r, 8), 5);
    for (i = 0; i < 4; i++) {
        ck_assert_str_eq(r[i].sig, want[i]);
        ck_assert_str_eq(r[i].ct, "application/xml");
        ck_assert_str_eq(r[i].body, d);
    }
    ck_assert_str_eq(r[4].sig, "");
}
END_TEST

START_TEST(outcomes_by_status)
{
    rs_websub_t *ws = mk(8, 10000);
    static const struct {
        const char *path;
        rs_websub_outcome_e oc;
        long st;
        apr_int64_t ra;
    } cases[] = {
        { "/ok/x", RS_WEBSUB_OK, 200, -1 },
        { "/status/204/x", RS_WEBSUB_OK, 204, -1 },
        { "/status/404/x", RS_WEBSUB_PERMANENT, 404, -1 },
        { "/status/400/x", RS_WEBSUB_PERMANENT, 400, -1 },
        { "/status/302/x", RS_WEBSUB_PERMANENT, 302, -1 },
        { "/status/410/x", RS_WEBSUB_GONE, 410, -1 },
        { "/status/429/x", RS_WEBSUB_RETRY, 429, 7 },
        { "/status/500/x", RS_WEBSUB_RETRY, 500, -1 },
        { "/status/503/x", RS_WEBSUB_RETRY, 503, 7 },
    };
    int i, j, n = (int)(sizeof(cases) / sizeof(cases[0]));

    for (i = 0; i < n; i++) {
        fat(ws, cases[i].path, cases[i].path, "<x/>", i);
    }
    run_until(ws, n);
    for (i = 0; i < n; i++) {
        for (j = 0; j < ndone && done[j].tag != i; j++)
            ;
        ck_assert_int_lt(j, ndone);
        ck_assert_msg(done[j].outcome == cases[i].oc, "%s: outcome %d", cases[i].path,
                      done[j].outcome);
        ck_assert_msg(done[j].status == cases[i].st, "%s: status %ld (error: %s)", cases[i].path,
                      (long)done[j].status, done[j].error);
        ck_assert_int_eq(done[j].retry_after, cases[i].ra);
        ck_assert_str_eq(done[j].error, "");
    }
}
END_TEST

START_TEST(refused_is_retry)
{
    rs_websub_t *ws = mk(2, 5000);
    /* Port 1 on loopback: nothing listens, the connect is refused. */
    rs_websub_req_t q = { 0 };
    q.kind = RS_WEBSUB_FAT;
    q.url = "http://127.0.0.1:1/x";
    ck_assert_int_eq(rs_websub_submit(ws, "k", &q), APR_SUCCESS);
    run_until(ws, 1);
    ck_assert_int_eq(done[0].outcome, RS_WEBSUB_RETRY);
    ck_assert_int_eq(done[0].status, 0);
    ck_assert_str_ne(done[0].error, "");
}
END_TEST

START_TEST(timeout_is_retry)
{
    rs_websub_t *ws = mk(2, 300);
    fat(ws, "k", "/slow/3000/x", "<x/>", 1);
    run_until(ws, 1);
    ck_assert_int_eq(done[0].outcome, RS_WEBSUB_RETRY);
    ck_assert_int_eq(done[0].status, 0);
    ck_assert_msg(strstr(done[0].error, "imed out") != NULL, "error: %s", done[0].error);
}
END_TEST

START_TEST(order_and_one_in_flight_per_key)
{
    rs_websub_t *ws = mk(8, 10000);
    rec_t r[16];
    int i, n, k;
    char *path;

    /* Two keys, five requests each, the server slow enough that a second
     * request of a key would overlap the first if the engine sent it. */
    for (i = 0; i < 5; i++) {
        path = apr_psprintf(ut_pool, "/slow/60/a?i=%d", i);
        fat(ws, "a", path, apr_psprintf(ut_pool, "a%d", i), i);
        path = apr_psprintf(ut_pool, "/slow/60/b?i=%d", i);
        fat(ws, "b", path, apr_psprintf(ut_pool, "b%d", i), 10 + i);
    }
    ck_assert_int_eq(rs_websub_pending(ws, "a"), 5);
    ck_assert_int_eq(rs_websub_pending(ws, NULL), 10);
    run_until(ws, 10);
    n = srv_log(r, 16);
    ck_assert_int_eq(n, 10);
    for (k = 0; k < 2; k++) {
        int prev_end = 0, seen = 0;
        /* The log is in completion order; walk a key's records in order. */
        for (i = 0; i < n; i++) {
            const char *want = apr_psprintf(ut_pool, "/slow/60/%c?i=%d", "ab"[k], seen);
            if (r[i].target[9] != "ab"[k]) {
                continue;
            }
            ck_assert_str_eq(r[i].target, want);
            ck_assert_str_eq(r[i].body, apr_psprintf(ut_pool, "%c%d", "ab"[k], seen));
            ck_assert_int_gt(r[i].begin, prev_end); /* one in flight per key */
            prev_end = r[i].end;
            seen++;
        }
        ck_assert_int_eq(seen, 5);
    }
    /* The keys ran concurrently: some a-request overlapped some b-request. */
    {
        int overlap = 0, j;
        for (i = 0; i < n; i++)
            for (j = 0; j < n; j++)
                if (r[i].target[9] == 'a' && r[j].target[9] == 'b' && r[i].begin < r[j].end
                    && r[j].begin < r[i].end)
                    overlap = 1;
        ck_assert_int_eq(overlap, 1);
    }
    ck_assert_int_eq(rs_websub_pending(ws, NULL), 0);
}
END_TEST

START_TEST(slow_key_does_not_delay_others)
{
    rs_websub_t *ws = mk(4, 20000);
    int i;

    fat(ws, "slow", "/slow/1500/s", "<s/>", 99);
    for (i = 0; i < 3; i++) {
        fat(ws, "fast", apr_psprintf(ut_pool, "/ok/f%d", i), "<f/>", i);
    }
    run_until(ws, 4);
    for (i = 0; i < 3; i++) {
        ck_assert_str_eq(done[i].key, "fast");
        ck_assert_int_eq(done[i].tag, i);
    }
    ck_assert_int_eq(done[3].tag, 99);
    ck_assert_int_eq(done[3].outcome, RS_WEBSUB_OK);
}
END_TEST

START_TEST(parallel_cap)
{
    rs_websub_t *ws = mk(2, 10000);
    rec_t r[8];
    int i, j, n, most = 0;

    for (i = 0; i < 6; i++) {
        fat(ws, apr_psprintf(ut_pool, "k%d", i), apr_psprintf(ut_pool, "/slow/80/%d", i), "<x/>",
            i);
    }
    run_until(ws, 6);
    ck_assert_int_le(max_inflight, 2);
    n = srv_log(r, 8);
    ck_assert_int_eq(n, 6);
    /* At any request's arrival, at most 2 requests were open at the server. */
    for (i = 0; i < n; i++) {
        int open = 0;
        for (j = 0; j < n; j++)
            if (r[j].begin <= r[i].begin && r[i].begin < r[j].end)
                open++;
        if (open > most)
            most = open;
    }
    ck_assert_int_le(most, 2);
    ck_assert_int_ge(most, 1);
}
END_TEST

/* A key's requests one after another reuse one connection. */
START_TEST(connection_reused)
{
    rs_websub_t *ws = mk(4, 10000);
    rec_t r[8];
    int i;

    for (i = 0; i < 4; i++) {
        fat(ws, "k", "/ok/reuse", "<r/>", i);
    }
    run_until(ws, 4);
    ck_assert_int_eq(srv_log(r, 8), 4);
    for (i = 1; i < 4; i++) {
        ck_assert_int_eq(r[i].port, r[0].port);
    }
}
END_TEST

/* Redirects are not followed; response bodies are capped at body_max. */
START_TEST(no_redirect_body_cap)
{
    rs_websub_t *ws = NULL;
    rs_websub_opts_t o = { 0 };
    rs_websub_req_t q = { 0 };
    rec_t r[8];

    o.body_max = 100;
    ndone = 0;
    ck_assert_int_eq(rs_websub_create(&ws, ut_pool, &o, on_done, NULL, NULL), APR_SUCCESS);
    fat(ws, "r", "/status/307/x", "<x/>", 1);
    q.kind = RS_WEBSUB_VERIFY;
    q.url = url("/big/5000/cb");
    q.topic = "t";
    q.mode = "subscribe";
    q.lease_seconds = -1;
    ck_assert_int_eq(rs_websub_submit(ws, "big", &q), APR_SUCCESS);
    run_until(ws, 2);
    ck_assert_int_eq(srv_log(r, 8), 2); /* no request to /ok/redirected */
    ck_assert_int_eq(done[0].tag == 1 ? done[0].status : done[1].status, 307);
    ck_assert_int_eq(done[0].tag == 1 ? done[0].outcome : done[1].outcome, RS_WEBSUB_PERMANENT);
    {
        done_t *b = done[0].tag == 1 ? &done[1] : &done[0];
        ck_assert_int_eq(b->outcome, RS_WEBSUB_OK);
        ck_assert_int_eq(strlen(b->body), 100);
        ck_assert_int_eq(b->challenge_ok, 0);
    }
}
END_TEST

/* Many keys and requests: keys are freed when done, nothing stays queued. */
START_TEST(keys_freed)
{
    rs_websub_t *ws = mk(4, 10000);
    int i;

    for (i = 0; i < 40; i++) {
        fat(ws, apr_psprintf(ut_pool, "key%d", i % 20), "/ok/many", "<m/>", i);
    }
    ck_assert_int_eq(rs_websub_keys(ws), 20);
    run_until(ws, 40);
    ck_assert_int_eq(rs_websub_keys(ws), 0);
    ck_assert_int_eq(rs_websub_pending(ws, NULL), 0);
    ck_assert_int_eq(rs_websub_inflight(ws), 0);
    for (i = 0; i < 40; i++) {
        ck_assert_int_eq(done[i].outcome, RS_WEBSUB_OK);
    }
}
END_TEST

static void verify(rs_websub_t *ws, const char *key, const char *path, apr_int64_t lease)
{
    rs_websub_req_t q = { 0 };
    q.kind = RS_WEBSUB_VERIFY;
    q.url = url(path);
    q.topic = "http://ex.org/n/change.xml";
    q.mode = "subscribe";
    q.lease_seconds = lease;
    ck_assert_int_eq(rs_websub_submit(ws, key, &q), APR_SUCCESS);
}

START_TEST(verification_get)
{
    rs_websub_t *ws = mk(4, 10000);
    rec_t r[4];
    char *want;

    verify(ws, "v", "/echo/cb?x=1&y=a%20b", 86400);
    run_until(ws, 1);
    ck_assert_int_eq(done[0].outcome, RS_WEBSUB_OK);
    ck_assert_int_eq(strlen(done[0].challenge), 32);
    ck_assert_str_eq(done[0].body, done[0].challenge);
    ck_assert_int_eq(done[0].challenge_ok, 1);
    ck_assert_int_eq(srv_log(r, 4), 1);
    ck_assert_str_eq(r[0].method, "GET");
    want = apr_pstrcat(ut_pool,
                       "/echo/cb?x=1&y=a%20b&hub.mode=subscribe"
                       "&hub.topic=http%3A%2F%2Fex.org%2Fn%2Fchange.xml&hub.challenge=",
                       done[0].challenge, "&hub.lease_seconds=86400", NULL);
    ck_assert_str_eq(r[0].target, want);

    verify(ws, "v", "/wrong/cb", -1);      /* 200, but not the challenge */
    verify(ws, "v", "/status/404/cb", -1); /* refused */
    run_until(ws, 3);
    ck_assert_int_eq(done[1].outcome, RS_WEBSUB_OK);
    ck_assert_int_eq(done[1].challenge_ok, 0);
    ck_assert_int_eq(done[2].outcome, RS_WEBSUB_PERMANENT);
    ck_assert_int_eq(done[2].challenge_ok, 0);
    ck_assert_str_ne(done[1].challenge, done[0].challenge);
    ck_assert_int_eq(srv_log(r, 4), 3);
    ck_assert_ptr_null(strstr(r[1].target, "lease_seconds"));
    ck_assert_ptr_nonnull(strstr(r[1].target, "/wrong/cb?hub.mode=subscribe&"));
}
END_TEST

/* A denial: a GET with hub.mode=denied, the topic and the reason, the
 * callback's query kept, no challenge. */
START_TEST(denial_get)
{
    rs_websub_t *ws = mk(4, 10000);
    rs_websub_req_t q = { 0 };
    rec_t r[4];

    q.kind = RS_WEBSUB_DENY;
    q.url = url("/ok/cb?x=1#frag");
    q.topic = "http://ex.org/n/change.xml";
    q.reason = "unknown topic";
    ck_assert_int_eq(rs_websub_submit(ws, "d", &q), APR_SUCCESS);
    q.url = url("/ok/cb2");
    q.reason = NULL;
    ck_assert_int_eq(rs_websub_submit(ws, "d", &q), APR_SUCCESS);
    q.topic = NULL;
    ck_assert_int_eq(rs_websub_submit(ws, "d", &q), APR_EINVAL);
    run_until(ws, 2);
    ck_assert_int_eq(done[0].outcome, RS_WEBSUB_OK);
    ck_assert_ptr_null(done[0].challenge);
    ck_assert_int_eq(srv_log(r, 4), 2);
    ck_assert_str_eq(r[0].method, "GET");
    ck_assert_str_eq(r[0].target,
                     "/ok/cb?x=1&hub.mode=denied"
                     "&hub.topic=http%3A%2F%2Fex.org%2Fn%2Fchange.xml&hub.reason=unknown%20topic");
    ck_assert_str_eq(r[1].target, "/ok/cb2?hub.mode=denied"
                                  "&hub.topic=http%3A%2F%2Fex.org%2Fn%2Fchange.xml");
}
END_TEST

/* The completion callback may queue the next request of the same key. */
static int chain_left;
static void on_chain(void *baton, const rs_websub_result_t *r)
{
    on_done(baton, r);
    if (chain_left-- > 0) {
        fat(cur_ws, r->key, "/ok/chain", "<c/>", 50 + chain_left);
    }
}

START_TEST(submit_from_callback)
{
    rs_websub_t *ws = NULL;
    rs_websub_opts_t o = { 0 };
    ndone = 0;
    chain_left = 3;
    ck_assert_int_eq(rs_websub_create(&ws, ut_pool, &o, on_chain, NULL, NULL), APR_SUCCESS);
    cur_ws = ws;
    fat(ws, "c", "/ok/chain", "<c/>", 0);
    run_until(ws, 4);
    ck_assert_int_eq(done[3].tag, 50);
    ck_assert_int_eq(rs_websub_pending(ws, "c"), 0);
    rs_websub_destroy(ws);
    rs_websub_destroy(ws); /* twice is harmless; the pool cleanup a third time */
}
END_TEST

static void *waker(void *arg)
{
    apr_sleep(apr_time_from_msec(100));
    rs_websub_wakeup(arg);
    return NULL;
}

START_TEST(wakeup_from_other_thread)
{
    rs_websub_t *ws = mk(2, 1000);
    pthread_t t;
    apr_time_t t0 = apr_time_now();

    ck_assert_int_eq(pthread_create(&t, NULL, waker, ws), 0);
    rs_websub_run(ws, 10000); /* returns on the wakeup, long before 10 s */
    ck_assert_int_lt(apr_time_now() - t0, apr_time_from_sec(9));
    pthread_join(t, NULL);
}
END_TEST

/* The address filter sees the address after DNS; refusing it fails the
 * request permanently and nothing reaches the server. */
static int filter_calls;
static unsigned char filter_seen[16];
static int filter_seen_len;

static const char *filter_hubaddr(void *baton, const unsigned char *addr, int len)
{
    filter_calls++;
    memcpy(filter_seen, addr, len);
    filter_seen_len = len;
    return baton ? NULL : rs_hubaddr_class(addr, len);
}

/* A delivery to path through filter_hubaddr (baton NULL: loopback
 * refused; else everything allowed). */
static void filtered(rs_websub_req_t *q, const char *path, void *baton)
{
    memset(q, 0, sizeof(*q));
    q->kind = RS_WEBSUB_DELIVER;
    q->url = url(path);
    q->body = "<urlset/>";
    q->body_len = 9;
    q->addr_filter = filter_hubaddr;
    q->filter_baton = baton;
}

START_TEST(address_filter)
{
    static const unsigned char lo[4] = { 127, 0, 0, 1 };
    rs_websub_t *ws = mk(4, 10000);
    rs_websub_req_t q;
    rec_t r[4];

    filtered(&q, "/ok/refused", NULL); /* the hub's rules: loopback refused */
    ck_assert_int_eq(rs_websub_submit(ws, "sub|a", &q), APR_SUCCESS);
    run_until(ws, 1);
    ck_assert_int_eq(done[0].outcome, RS_WEBSUB_PERMANENT);
    ck_assert_int_eq(done[0].status, 0);
    ck_assert_str_eq(done[0].error, "address refused: loopback");
    ck_assert_int_ge(filter_calls, 1);
    ck_assert_int_eq(filter_seen_len, 4);
    ck_assert_int_eq(memcmp(filter_seen, lo, 4), 0);
    ck_assert_int_eq(srv_log(r, 4), 0);

    /* Allowed by the filter: delivered. */
    filter_calls = 0;
    q.url = url("/ok/allowed");
    q.filter_baton = (void *)1;
    ck_assert_int_eq(rs_websub_submit(ws, "sub|b", &q), APR_SUCCESS);
    run_until(ws, 2);
    ck_assert_int_eq(done[1].outcome, RS_WEBSUB_OK);
    /* The new connection's address, then the address the request goes
     * out on. */
    ck_assert_int_eq(filter_calls, 2);
    ck_assert_int_eq(srv_log(r, 4), 1);
}
END_TEST

/* A connection kept from a request that was allowed is checked again
 * for a later request whose filter refuses its address: the request is
 * refused before a byte of it is sent (the connection is not trusted for
 * having been checked under other rules). */
START_TEST(address_filter_on_kept_connection)
{
    rs_websub_t *ws = mk(4, 10000);
    rs_websub_req_t q;
    rec_t r[4];

    filtered(&q, "/ok/first", (void *)1); /* allowed */
    ck_assert_int_eq(rs_websub_submit(ws, "sub|a", &q), APR_SUCCESS);
    run_until(ws, 1);
    ck_assert_int_eq(done[0].outcome, RS_WEBSUB_OK);
    ck_assert_str_eq(done[0].primary_ip, "127.0.0.1");
    /* Same host and port, the connection kept: refused by this filter. */
    filter_calls = 0;
    filtered(&q, "/ok/second", NULL); /* loopback refused */
    ck_assert_int_eq(rs_websub_submit(ws, "sub|b", &q), APR_SUCCESS);
    run_until(ws, 2);
    ck_assert_int_eq(done[1].outcome, RS_WEBSUB_PERMANENT);
    ck_assert_str_eq(done[1].error, "address refused: loopback");
    ck_assert_str_eq(done[1].primary_ip, "");
    ck_assert_int_ge(filter_calls, 1);
    ck_assert_int_eq(srv_log(r, 4), 1);
    ck_assert_str_eq(r[0].target, "/ok/first");
}
END_TEST

/* A proxy named by the environment is never used: the request goes to
 * the address of its URL (the filter judges that one). */
START_TEST(no_proxy_from_environment)
{
    rs_websub_t *ws;
    rec_t r[2];

    /* Nothing listens on port 9 (discard): a request through the proxy
     * would fail to connect. */
    setenv("http_proxy", "http://127.0.0.1:9", 1);
    setenv("HTTPS_PROXY", "http://127.0.0.1:9", 1);
    setenv("ALL_PROXY", "http://127.0.0.1:9", 1);
    ws = mk(2, 10000);
    fat(ws, "k", "/ok/direct", "<r/>", 1);
    run_until(ws, 1);
    unsetenv("http_proxy");
    unsetenv("HTTPS_PROXY");
    unsetenv("ALL_PROXY");
    ck_assert_int_eq(done[0].outcome, RS_WEBSUB_OK);
    ck_assert_int_eq(srv_log(r, 2), 1);
    ck_assert_str_eq(r[0].target, "/ok/direct");
}
END_TEST

/* Whether the header list holds line. */
static int has_header(const struct curl_slist *h, const char *line)
{
    for (; h; h = h->next) {
        if (!strcmp(h->data, line)) {
            return 1;
        }
    }
    return 0;
}

/* What each kind of request sends, and the requests refused before
 * anything is sent. */
START_TEST(message_by_kind)
{
    const char *hdrs[] = { "Link: <http://s/t>; rel=\"self\"", NULL };
    rs_websub_req_t r;
    rs_websubmsg_t m;

    memset(&r, 0, sizeof(r));
    r.kind = RS_WEBSUB_PING;
    r.url = "http://hub.example/";
    r.topic = "http://s/a b";
    r.headers = hdrs;
    ck_assert_int_eq(rs_websubmsg_build(ut_pool, &r, &m), APR_SUCCESS);
    ck_assert_str_eq(m.body, "hub.mode=publish&hub.topic=http%3A%2F%2Fs%2Fa%20b"
                             "&hub.url=http%3A%2F%2Fs%2Fa%20b");
    ck_assert_int_eq(m.body_len, strlen(m.body));
    ck_assert(has_header(m.hdrs, "Content-Type: application/x-www-form-urlencoded"));
    ck_assert(has_header(m.hdrs, "Link: <http://s/t>; rel=\"self\"")); /* the topic's Link */
    ck_assert(has_header(m.hdrs, "Expect:"));
    curl_slist_free_all(m.hdrs);

    memset(&r, 0, sizeof(r));
    r.kind = RS_WEBSUB_DELIVER;
    r.url = "https://cb.example/x";
    r.body = "<x/>";
    r.body_len = 4;
    r.headers = hdrs;
    r.secret = "s3cret";
    r.sig_algo = "sha256";
    ck_assert_int_eq(rs_websubmsg_build(ut_pool, &r, &m), APR_SUCCESS);
    ck_assert_str_eq(m.url, "https://cb.example/x");
    ck_assert_int_eq(m.body_len, 4);
    ck_assert(has_header(m.hdrs, "Content-Type: application/xml"));
    ck_assert(has_header(m.hdrs, hdrs[0]));
    ck_assert(has_header(m.hdrs, apr_pstrcat(ut_pool, "X-Hub-Signature: ",
                                             rs_websub_sign(ut_pool, "sha256", "s3cret", "<x/>", 4),
                                             NULL)));
    curl_slist_free_all(m.hdrs);

    memset(&r, 0, sizeof(r));
    r.kind = RS_WEBSUB_VERIFY;
    r.url = "http://cb.example/c?id=1#frag";
    r.mode = "subscribe";
    r.topic = "http://s/t";
    r.lease_seconds = 60;
    ck_assert_int_eq(rs_websubmsg_build(ut_pool, &r, &m), APR_SUCCESS);
    ck_assert_int_eq(strlen(m.challenge), 32);
    ck_assert_str_eq(m.url, apr_pstrcat(ut_pool,
                                        "http://cb.example/c?id=1&hub.mode=subscribe"
                                        "&hub.topic=http%3A%2F%2Fs%2Ft&hub.challenge=",
                                        m.challenge, "&hub.lease_seconds=60", NULL));
    ck_assert_ptr_null(m.body);
    curl_slist_free_all(m.hdrs);

    memset(&r, 0, sizeof(r));
    r.kind = RS_WEBSUB_DENY;
    r.url = "http://cb.example/c";
    r.topic = "http://s/t";
    r.reason = "no";
    ck_assert_int_eq(rs_websubmsg_build(ut_pool, &r, &m), APR_SUCCESS);
    ck_assert_str_eq(m.url, "http://cb.example/c?hub.mode=denied&hub.topic=http%3A%2F%2Fs%2Ft"
                            "&hub.reason=no");
    curl_slist_free_all(m.hdrs);

    /* Refused: another scheme, a ping without its topic, a verification
     * without its mode, a delivery signed with an unknown algorithm. */
    r.url = "ftp://cb.example/c";
    ck_assert_int_eq(rs_websubmsg_build(ut_pool, &r, &m), APR_EBADPATH);
    memset(&r, 0, sizeof(r));
    r.kind = RS_WEBSUB_PING;
    r.url = "http://hub.example/";
    ck_assert_int_eq(rs_websubmsg_build(ut_pool, &r, &m), APR_EINVAL);
    r.kind = RS_WEBSUB_VERIFY;
    r.topic = "http://s/t";
    ck_assert_int_eq(rs_websubmsg_build(ut_pool, &r, &m), APR_EINVAL);
    r.kind = RS_WEBSUB_DELIVER;
    r.secret = "s";
    r.sig_algo = "md4";
    ck_assert_int_eq(rs_websubmsg_build(ut_pool, &r, &m), APR_EINVAL);
    ck_assert_ptr_null(m.hdrs);
}
END_TEST

Suite *websub_suite(void)
{
    Suite *s = suite_create("websub");
    TCase *tc = ut_tcase("pure", 10);
    TCase *th = tcase_create("http");

    tcase_add_test(tc, sign_vectors);
    tcase_add_test(tc, message_by_kind);
    tcase_add_test(tc, backoff_full_jitter);
    tcase_add_test(tc, retry_after_and_encoding);
    tcase_add_test(tc, submit_rejects);
    tcase_add_test(tc, wakeup_from_other_thread);
    suite_add_tcase(s, tc);

    tcase_add_checked_fixture(th, srv_start, srv_stop);
    tcase_set_timeout(th, 40);
    tcase_add_test(th, fat_post_headers);
    tcase_add_test(th, ping_form);
    tcase_add_test(th, signed_delivery);
    tcase_add_test(th, outcomes_by_status);
    tcase_add_test(th, refused_is_retry);
    tcase_add_test(th, timeout_is_retry);
    tcase_add_test(th, order_and_one_in_flight_per_key);
    tcase_add_test(th, slow_key_does_not_delay_others);
    tcase_add_test(th, parallel_cap);
    tcase_add_test(th, keys_freed);
    tcase_add_test(th, connection_reused);
    tcase_add_test(th, no_redirect_body_cap);
    tcase_add_test(th, verification_get);
    tcase_add_test(th, denial_get);
    tcase_add_test(th, submit_from_callback);
    tcase_add_test(th, address_filter);
    tcase_add_test(th, address_filter_on_kept_connection);
    tcase_add_test(th, no_proxy_from_environment);
    suite_add_tcase(s, th);
    return s;
}
