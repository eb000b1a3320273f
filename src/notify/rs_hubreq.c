/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubreq.c - subscription requests of the built-in hub: the form, its
 * checks, the spool record and its file (see rs_hubreq.h). */
#include <stdio.h>
#include <string.h>
#include <apr_file_io.h>
#include <apr_general.h>
#include <apr_lib.h>
#include <apr_network_io.h>
#include <apr_strings.h>
#include <apr_uri.h>
#include "rs_file.h"
#include "rs_hubreq.h"

#define RECORD_MAGIC   "rs-hubreq 2"
#define RECORD_MAGIC_1 "rs-hubreq 1"

const char *rs_hubreq_mode_name(rs_hubreq_mode_t mode)
{
    return mode == RS_HUBREQ_SUBSCRIBE     ? "subscribe"
           : mode == RS_HUBREQ_UNSUBSCRIBE ? "unsubscribe"
                                           : "";
}

static int hexval(char c)
{
    return apr_isdigit(c) ? c - '0' : apr_isxdigit(c) ? (apr_tolower(c) - 'a' + 10) : -1;
}

/* Decode the n bytes of a %-encoded form value ('+' a space when plus)
 * into a string from p; *len gets its length (it may hold NUL bytes).
 * NULL on a bad %-escape. */
static char *unescape(apr_pool_t *p, const char *s, apr_size_t n, int plus, apr_size_t *len)
{
    char *out = apr_palloc(p, n + 1), *o = out;
    apr_size_t i;
    for (i = 0; i < n; i++) {
        if (s[i] == '%') {
            int hi, lo;
            if (i + 2 >= n) {
                return NULL;
            }
            hi = hexval(s[i + 1]);
            lo = hexval(s[i + 2]);
            if (hi < 0 || lo < 0) {
                return NULL;
            }
            *o++ = (char)(hi * 16 + lo);
            i += 2;
        }
        else {
            *o++ = plus && s[i] == '+' ? ' ' : s[i];
        }
    }
    *o = '\0';
    *len = (apr_size_t)(o - out);
    return out;
}

static const char *const form_keys[] = { "hub.callback", "hub.mode", "hub.topic",
                                         "hub.lease_seconds", "hub.secret" };
#define NKEYS (sizeof(form_keys) / sizeof(form_keys[0]))

/* Store one decoded pair in vals (the value of form_keys[i]). */
static const char *form_pair(apr_pool_t *p, const char *s, apr_size_t n, const char **vals)
{
    const char *eq = memchr(s, '=', n);
    apr_size_t klen = eq ? (apr_size_t)(eq - s) : n, vlen, kdec;
    char *key = unescape(p, s, klen, 1, &kdec), *val;
    size_t i;

    if (!key || strlen(key) != kdec) {
        return NULL; /* an unknown parameter: ignored whatever it holds */
    }
    for (i = 0; i < NKEYS && strcmp(key, form_keys[i]); i++) {
    }
    if (i == NKEYS) {
        return NULL;
    }
    if (vals[i]) {
        return apr_psprintf(p, "%s given twice", key);
    }
    val = eq ? unescape(p, eq + 1, n - klen - 1, 1, &vlen) : "";
    if (!val) {
        return apr_psprintf(p, "%s: bad %%-escape", key);
    }
    if (eq && strlen(val) != vlen) {
        return apr_psprintf(p, "%s: NUL byte", key);
    }
    vals[i] = val;
    return NULL;
}

static const char *form_lease(const char *v, apr_int64_t *out)
{
    char *end;
    const char *c;
    *out = -1;
    if (!*v) {
        return NULL;
    }
    for (c = v; *c; c++) {
        if (!apr_isdigit(*c)) {
            return "hub.lease_seconds is not a whole number of seconds";
        }
    }
    /* Very long numbers are clamped to the maximum later. */
    *out = strlen(v) > 12 ? APR_INT64_C(999999999999) : apr_strtoi64(v, &end, 10);
    return NULL;
}

const char *rs_hubreq_parse_form(apr_pool_t *p, const char *body, apr_size_t len, rs_hubreq_t *out)
{
    const char *vals[NKEYS] = { NULL };
    apr_size_t i = 0;
    const char *err;

    memset(out, 0, sizeof(*out));
    out->lease = -1;
    out->set = out->kind = "";
    if (len > RS_HUBREQ_MAX_BODY) {
        return "request body too large";
    }
    while (i < len) {
        const char *amp = memchr(body + i, '&', len - i);
        apr_size_t n = amp ? (apr_size_t)(amp - (body + i)) : len - i;
        if (n && (err = form_pair(p, body + i, n, vals))) {
            return err;
        }
        i += n + 1;
    }
    out->callback = vals[0] && *vals[0] ? vals[0] : NULL;
    out->topic = vals[2] && *vals[2] ? vals[2] : NULL;
    out->secret = vals[4] && *vals[4] ? vals[4] : NULL;
    if (vals[1] && !strcmp(vals[1], "subscribe")) {
        out->mode = RS_HUBREQ_SUBSCRIBE;
    }
    else if (vals[1] && !strcmp(vals[1], "unsubscribe")) {
        out->mode = RS_HUBREQ_UNSUBSCRIBE;
    }
    else if (vals[1] && *vals[1]) {
        return "hub.mode is not subscribe or unsubscribe";
    }
    return vals[3] ? form_lease(vals[3], &out->lease) : NULL;
}

/* Printable ASCII without space: what a URL may hold unescaped. */
static int url_bytes(const char *s)
{
    for (; *s; s++) {
        if (*s <= ' ' || *s > '~') {
            return 0;
        }
    }
    return 1;
}

const char *rs_hubreq_callback_syntax(apr_pool_t *p, const char *url, const char **host,
                                      apr_port_t *port)
{
    apr_uri_t u;

    if (strlen(url) > RS_HUBREQ_MAX_URL) {
        return "hub.callback is too long";
    }
    if (!url_bytes(url)) {
        return "hub.callback holds spaces, control or non-ASCII bytes";
    }
    if (apr_uri_parse(p, url, &u) != APR_SUCCESS || !u.scheme) {
        return "hub.callback is not an absolute URL";
    }
    if (strcasecmp(u.scheme, "http") && strcasecmp(u.scheme, "https")) {
        return "hub.callback is not an http or https URL";
    }
    if (!u.hostname || !*u.hostname || strncmp(url + strlen(u.scheme), "://", 3)) {
        return "hub.callback has no host";
    }
    if (u.user || u.password || strchr(u.hostinfo ? u.hostinfo : "", '@')) {
        return "hub.callback holds user information (user:password@)";
    }
    if (u.fragment || strchr(url, '#')) {
        return "hub.callback holds a fragment";
    }
    if (u.port_str && (!*u.port_str || !u.port)) {
        return "hub.callback has an invalid port";
    }
    *host = u.hostname;
    *port = u.port ? u.port : apr_uri_port_of_scheme(apr_pstrdup(p, u.scheme));
    if (!*port) {
        *port = strcasecmp(u.scheme, "https") ? 80 : 443;
    }
    return NULL;
}

const char *rs_hubreq_validate(apr_pool_t *p, rs_hubreq_t *req, apr_int64_t lease_min,
                               apr_int64_t lease_max)
{
    const char *host, *err;
    apr_port_t port;

    if (req->mode == RS_HUBREQ_NONE) {
        return "hub.mode is missing";
    }
    if (!req->callback) {
        return "hub.callback is missing";
    }
    if (!req->topic) {
        return "hub.topic is missing";
    }
    if (strlen(req->topic) > RS_HUBREQ_MAX_URL || !url_bytes(req->topic)) {
        return "hub.topic is too long or holds spaces, control or non-ASCII bytes";
    }
    if (req->secret && strlen(req->secret) > RS_HUBREQ_MAX_SECRET) {
        return "hub.secret is 200 bytes or longer";
    }
    if ((err = rs_hubreq_callback_syntax(p, req->callback, &host, &port))) {
        return err;
    }
    if (req->lease < 0) {
        req->lease = RS_HUBREQ_DEFAULT_LEASE;
    }
    req->lease = req->lease < lease_min   ? lease_min
                 : req->lease > lease_max ? lease_max
                                          : req->lease;
    return NULL;
}

const char *rs_hubreq_check_callback(apr_pool_t *p, const char *url,
                                     const apr_array_header_t *allow, const char **detail)
{
    const char *host, *err, *why;
    apr_port_t port;
    unsigned char addr[16];
    int len;

    if (detail) {
        *detail = NULL;
    }
    if ((err = rs_hubreq_callback_syntax(p, url, &host, &port))) {
        return err;
    }
    if (rs_hubaddr_allow_host(allow, host) || !rs_hubaddr_literal(host, addr, &len)
        || !(why = rs_hubaddr_check(allow, addr, len))) {
        return NULL;
    }
    if (detail) {
        *detail = apr_psprintf(p, "address %s is %s", rs_hubaddr_text(p, addr, len), why);
    }
    return "hub.callback address not allowed";
}

/* value %-encoded: every byte outside '!'..'~', and '%'. */
static const char *encode(apr_pool_t *p, const char *s)
{
    char *out = apr_palloc(p, strlen(s) * 3 + 1), *o = out;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c <= ' ' || c > '~' || c == '%') {
            o += sprintf(o, "%%%02X", c);
        }
        else {
            *o++ = (char)c;
        }
    }
    *o = '\0';
    return out;
}

const char *rs_hubreq_record_format(apr_pool_t *p, const rs_hubreq_t *req)
{
    return apr_psprintf(
        p,
        RECORD_MAGIC "\nmode=%s\ncallback=%s\ntopic=%s\nlease=%" APR_INT64_T_FMT
                     "\n%s%s%sset=%s\nkind=%s\nclient=%s\nreceived=%" APR_INT64_T_FMT "\n",
        rs_hubreq_mode_name(req->mode), encode(p, req->callback), encode(p, req->topic), req->lease,
        req->secret ? "secret=" : "", req->secret ? encode(p, req->secret) : "",
        req->secret ? "\n" : "", encode(p, req->set), encode(p, req->kind),
        encode(p, req->client ? req->client : ""), (apr_int64_t)req->received);
}

/* The keys of a record; K_DENY only in version 1, K_CLIENT only in
 * version 2, K_SECRET optional. */
enum {
    K_MODE,
    K_CALLBACK,
    K_TOPIC,
    K_LEASE,
    K_SECRET,
    K_SET,
    K_KIND,
    K_DENY,
    K_RECEIVED,
    K_CLIENT,
    NREC
};
static const char *const rec_keys[NREC] = { "mode", "callback", "topic", "lease",    "secret",
                                            "set",  "kind",     "deny",  "received", "client" };

/* Whether the n bytes of an encoded value are all in '!'..'~'. */
static int raw_value(const char *s, apr_size_t n)
{
    apr_size_t i;
    for (i = 0; i < n; i++) {
        if (s[i] <= ' ' || s[i] > '~') {
            return 0;
        }
    }
    return 1;
}

/* Split the record's lines into vals (decoded); *version gets 1 or 2.
 * NULL or why not. */
static const char *record_lines(apr_pool_t *p, const char *buf, apr_size_t len, const char **vals,
                                int *version)
{
    apr_size_t i = sizeof(RECORD_MAGIC); /* magic and its newline */

    if (len >= i && !memcmp(buf, RECORD_MAGIC "\n", i)) {
        *version = 2;
    }
    else if (len >= i && !memcmp(buf, RECORD_MAGIC_1 "\n", i)) {
        *version = 1;
    }
    else {
        return "no 'rs-hubreq 2' (or 1) first line";
    }
    while (i < len) {
        const char *nl = memchr(buf + i, '\n', len - i), *eq;
        apr_size_t n, vlen;
        int k;
        char *v;
        if (!nl) {
            return "last line unterminated";
        }
        n = (apr_size_t)(nl - (buf + i));
        eq = memchr(buf + i, '=', n);
        for (k = 0; eq && k < NREC; k++) {
            if ((apr_size_t)(eq - (buf + i)) == strlen(rec_keys[k])
                && !memcmp(buf + i, rec_keys[k], strlen(rec_keys[k]))) {
                break;
            }
        }
        if (!eq || k == NREC) {
            return "unknown line";
        }
        if (vals[k]) {
            return apr_psprintf(p, "%s twice", rec_keys[k]);
        }
        v = unescape(p, eq + 1, (apr_size_t)(nl - eq - 1), 0, &vlen);
        if (!v || strlen(v) != vlen || !raw_value(eq + 1, (apr_size_t)(nl - eq - 1))) {
            return apr_psprintf(p, "%s: bad value", rec_keys[k]);
        }
        vals[k] = v;
        i += n + 1;
    }
    return NULL;
}

static int record_int(const char *s, apr_int64_t min, apr_int64_t max, apr_int64_t *out)
{
    char *end;
    const char *c;
    if (!s || !*s || strlen(s) > 18) {
        return 0;
    }
    for (c = s; *c; c++) {
        if (!apr_isdigit(*c)) {
            return 0;
        }
    }
    *out = apr_strtoi64(s, &end, 10);
    return *out >= min && *out <= max;
}

const char *rs_hubreq_record_parse(apr_pool_t *p, const char *buf, apr_size_t len, rs_hubreq_t *out)
{
    const char *vals[NREC] = { NULL }, *err, *host;
    apr_int64_t deny = 0, received;
    apr_port_t port;
    int k, version = 0;

    memset(out, 0, sizeof(*out));
    if (len > RS_HUBREQ_MAX_RECORD) {
        return "too large";
    }
    if ((err = record_lines(p, buf, len, vals, &version))) {
        return err;
    }
    for (k = 0; k < NREC; k++) {
        int wanted = k == K_DENY ? version == 1 : k == K_CLIENT ? version == 2 : k != K_SECRET;
        if (!vals[k] && wanted) {
            return apr_psprintf(p, "no %s", rec_keys[k]);
        }
        if (vals[k] && !wanted && k != K_SECRET) {
            return "unknown line";
        }
    }
    out->mode = !strcmp(vals[K_MODE], "subscribe")     ? RS_HUBREQ_SUBSCRIBE
                : !strcmp(vals[K_MODE], "unsubscribe") ? RS_HUBREQ_UNSUBSCRIBE
                                                       : RS_HUBREQ_NONE;
    out->callback = vals[K_CALLBACK];
    out->topic = vals[K_TOPIC];
    out->secret = vals[K_SECRET];
    out->set = vals[K_SET];
    out->kind = vals[K_KIND];
    out->client = vals[K_CLIENT] ? vals[K_CLIENT] : "";
    if (out->mode == RS_HUBREQ_NONE) {
        return "bad mode";
    }
    if (!record_int(vals[K_LEASE], 0, APR_INT64_C(999999999999), &out->lease)
        || (vals[K_DENY] && !record_int(vals[K_DENY], 0, 1, &deny))
        || !record_int(vals[K_RECEIVED], 0, APR_INT64_C(999999999999999999), &received)) {
        return "bad number";
    }
    out->deny = (int)deny;
    out->received = (apr_time_t)received;
    if (!*out->topic || strlen(out->topic) > RS_HUBREQ_MAX_URL
        || (out->secret && (!*out->secret || strlen(out->secret) > RS_HUBREQ_MAX_SECRET))) {
        return "bad topic or secret";
    }
    if (!out->deny && strcmp(out->kind, "change") && strcmp(out->kind, "framework")) {
        return "bad kind";
    }
    if (!out->deny && !*out->set) {
        return "no set";
    }
    if ((err = rs_hubreq_callback_syntax(p, out->callback, &host, &port))) {
        return err;
    }
    return NULL;
}

int rs_hubreq_spool_is_req(const char *name)
{
    apr_size_t n = strlen(name);
    return n > 4 && name[0] != '.' && strncmp(name, "tmp-", 4) && !strcmp(name + n - 4, ".req");
}

/* Write the record into a new temporary file of dir; *tmp gets its path. */
static apr_status_t write_tmp(apr_pool_t *p, const char *dir, const char *rec, char **tmp)
{
    apr_file_t *f;
    apr_size_t n = strlen(rec);
    apr_status_t rv;

    *tmp = apr_pstrcat(p, dir, "/tmp-XXXXXX", NULL);
    rv = apr_file_mktemp(&f, *tmp, APR_FOPEN_CREATE | APR_FOPEN_WRITE | APR_FOPEN_EXCL, p);
    if (rv == APR_ENOENT) {
        if ((rv = apr_dir_make_recursive(dir, RS_HUBREQ_DIR_PERMS, p)) != APR_SUCCESS
            && !APR_STATUS_IS_EEXIST(rv)) {
            return rv;
        }
        *tmp = apr_pstrcat(p, dir, "/tmp-XXXXXX", NULL);
        rv = apr_file_mktemp(&f, *tmp, APR_FOPEN_CREATE | APR_FOPEN_WRITE | APR_FOPEN_EXCL, p);
    }
    if (rv != APR_SUCCESS) {
        return rv;
    }
    if ((rv = apr_file_write_full(f, rec, n, NULL)) != APR_SUCCESS) {
        apr_file_close(f);
        apr_file_remove(*tmp, p);
        return rv;
    }
    if ((rv = rs_file_finish(f)) != APR_SUCCESS) {
        apr_file_remove(*tmp, p);
    }
    return rv;
}

apr_status_t rs_hubreq_spool_write(apr_pool_t *p, const char *dir, const char *record,
                                   const char **name)
{
    unsigned char rnd[8];
    char *tmp;
    apr_status_t rv;

    if ((rv = apr_generate_random_bytes(rnd, sizeof(rnd))) != APR_SUCCESS
        || (rv = write_tmp(p, dir, record, &tmp)) != APR_SUCCESS) {
        return rv;
    }
    *name = apr_psprintf(p, "%s/%020" APR_INT64_T_FMT "-%02x%02x%02x%02x%02x%02x%02x%02x.req", dir,
                         (apr_int64_t)apr_time_now(), rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
                         rnd[5], rnd[6], rnd[7]);
    if ((rv = apr_file_rename(tmp, *name, p)) != APR_SUCCESS) {
        apr_file_remove(tmp, p);
        return rv;
    }
    return rs_file_sync_dir(dir);
}

apr_status_t rs_hubreq_spool_read(apr_pool_t *p, const char *path, rs_hubreq_t *out,
                                  const char **why, apr_size_t *size)
{
    apr_file_t *f;
    apr_finfo_t fi;
    char *buf;
    apr_size_t n = RS_HUBREQ_MAX_RECORD + 1;
    apr_status_t rv;

    *why = NULL;
    if (size) {
        *size = 0;
    }
    if ((rv = apr_file_open(&f, path, APR_FOPEN_READ, APR_FPROT_OS_DEFAULT, p)) != APR_SUCCESS) {
        return rv;
    }
    /* A record is usually far below the limit; one past the limit is
     * enough to see that a file is over it. */
    if (apr_file_info_get(&fi, APR_FINFO_SIZE, f) == APR_SUCCESS && fi.size >= 0
        && (apr_size_t)fi.size < n) {
        n = fi.size ? (apr_size_t)fi.size : 1;
    }
    buf = apr_palloc(p, n);
    rv = apr_file_read_full(f, buf, n, &n);
    apr_file_close(f);
    if (rv != APR_SUCCESS && !APR_STATUS_IS_EOF(rv)) {
        return rv;
    }
    if (size) {
        *size = n;
    }
    if ((*why = rs_hubreq_record_parse(p, buf, n, out))) {
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}
