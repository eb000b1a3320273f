/* SPDX-License-Identifier: Apache-2.0 */
/* test_hubreq.c - rs_hubreq and rs_hubaddr: hub subscription requests, the
 * callback address rules, the spool record and its files */
#include <string.h>
#include <arpa/inet.h>
#include <apr_file_info.h>
#include <apr_file_io.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_hubreq.h"

static const char *form(const char *body, rs_hubreq_t *r)
{
    return rs_hubreq_parse_form(ut_pool, body, strlen(body), r);
}

START_TEST(form_subscribe)
{
    rs_hubreq_t r;
    ck_assert_ptr_null(form("hub.callback=http%3A%2F%2Fsub.example.org%2Fcb%3Fa%3D1%26b%3D2"
                            "&hub.mode=subscribe&hub.topic=http://h/t&hub.lease_seconds=600"
                            "&hub.secret=a+b%25c&other=%zz&&=x",
                            &r));
    ck_assert_int_eq(r.mode, RS_HUBREQ_SUBSCRIBE);
    ck_assert_str_eq(r.callback, "http://sub.example.org/cb?a=1&b=2");
    ck_assert_str_eq(r.topic, "http://h/t");
    ck_assert_int_eq(r.lease, 600);
    ck_assert_str_eq(r.secret, "a b%c");
}
END_TEST

START_TEST(form_absent_and_empty)
{
    rs_hubreq_t r;
    ck_assert_ptr_null(
        form("hub.mode=unsubscribe&hub.secret=&hub.lease_seconds=&hub.callback", &r));
    ck_assert_int_eq(r.mode, RS_HUBREQ_UNSUBSCRIBE);
    ck_assert_ptr_null(r.callback);
    ck_assert_ptr_null(r.topic);
    ck_assert_ptr_null(r.secret);
    ck_assert_int_eq(r.lease, -1);
    ck_assert_ptr_null(form("", &r));
    ck_assert_int_eq(r.mode, RS_HUBREQ_NONE);
}
END_TEST

START_TEST(form_rejects)
{
    rs_hubreq_t r;
    char *big = apr_pcalloc(ut_pool, RS_HUBREQ_MAX_BODY + 2);
    ck_assert_str_eq(form("hub.mode=subscribe&hub.mode=subscribe", &r), "hub.mode given twice");
    ck_assert_str_eq(form("hub.callback=a&hub.call%62ack=b", &r), "hub.callback given twice");
    ck_assert_str_eq(form("hub.topic=%4", &r), "hub.topic: bad %-escape");
    ck_assert_str_eq(form("hub.topic=%g0", &r), "hub.topic: bad %-escape");
    ck_assert_str_eq(form("hub.topic=a%00b", &r), "hub.topic: NUL byte");
    ck_assert_str_eq(form("hub.mode=publish", &r), "hub.mode is not subscribe or unsubscribe");
    ck_assert_str_eq(form("hub.mode=Subscribe", &r), "hub.mode is not subscribe or unsubscribe");
    ck_assert_str_eq(form("hub.lease_seconds=-5", &r),
                     "hub.lease_seconds is not a whole number of seconds");
    ck_assert_str_eq(form("hub.lease_seconds=1e3", &r),
                     "hub.lease_seconds is not a whole number of seconds");
    memset(big, 'a', RS_HUBREQ_MAX_BODY + 1);
    ck_assert_str_eq(rs_hubreq_parse_form(ut_pool, big, RS_HUBREQ_MAX_BODY + 1, &r),
                     "request body too large");
    ck_assert_ptr_null(rs_hubreq_parse_form(ut_pool, big, RS_HUBREQ_MAX_BODY, &r));
}
END_TEST

static const char *validate(const char *body, rs_hubreq_t *r)
{
    const char *err = form(body, r);
    return err ? err : rs_hubreq_validate(ut_pool, r, 300, 86400);
}

START_TEST(validate_fields)
{
    rs_hubreq_t r;
    char *secret = apr_pcalloc(ut_pool, 201);
    ck_assert_str_eq(validate("hub.callback=http://x/&hub.topic=t", &r), "hub.mode is missing");
    ck_assert_str_eq(validate("hub.mode=subscribe&hub.topic=t", &r), "hub.callback is missing");
    ck_assert_str_eq(validate("hub.mode=subscribe&hub.callback=http://x/", &r),
                     "hub.topic is missing");
    ck_assert_str_eq(validate("hub.mode=subscribe&hub.callback=http://x/&hub.topic=a+b", &r),
                     "hub.topic is too long or holds spaces, control or non-ASCII bytes");
    memset(secret, 's', 200);
    ck_assert_str_eq(validate(apr_pstrcat(ut_pool,
                                          "hub.mode=subscribe&hub.callback=http://x/"
                                          "&hub.topic=t&hub.secret=",
                                          secret, NULL),
                              &r),
                     "hub.secret is 200 bytes or longer");
    secret[199] = '\0';
    ck_assert_ptr_null(validate(apr_pstrcat(ut_pool,
                                            "hub.mode=subscribe&hub.callback="
                                            "http://x/&hub.topic=t&hub.secret=",
                                            secret, NULL),
                                &r));
    ck_assert_uint_eq(strlen(r.secret), 199);
}
END_TEST

START_TEST(validate_lease)
{
    rs_hubreq_t r;
    const char *b = "hub.mode=subscribe&hub.callback=http://x/&hub.topic=t";
    ck_assert_ptr_null(validate(b, &r));
    ck_assert_int_eq(r.lease, 86400); /* default 10 days, clamped */
    ck_assert_ptr_null(validate(apr_pstrcat(ut_pool, b, "&hub.lease_seconds=1", NULL), &r));
    ck_assert_int_eq(r.lease, 300);
    ck_assert_ptr_null(validate(apr_pstrcat(ut_pool, b, "&hub.lease_seconds=0", NULL), &r));
    ck_assert_int_eq(r.lease, 300);
    ck_assert_ptr_null(validate(apr_pstrcat(ut_pool, b, "&hub.lease_seconds=4000", NULL), &r));
    ck_assert_int_eq(r.lease, 4000);
    ck_assert_ptr_null(validate(apr_pstrcat(ut_pool, b,
                                            "&hub.lease_seconds="
                                            "99999999999999999999999999",
                                            NULL),
                                &r));
    ck_assert_int_eq(r.lease, 86400);
    ck_assert_ptr_null(form(b, &r));
    ck_assert_ptr_null(rs_hubreq_validate(ut_pool, &r, 300, 31 * 86400));
    ck_assert_int_eq(r.lease, RS_HUBREQ_DEFAULT_LEASE);
}
END_TEST

static const char *syntax(const char *url)
{
    const char *host = NULL;
    apr_port_t port = 0;
    const char *err = rs_hubreq_callback_syntax(ut_pool, url, &host, &port);
    return err ? err : apr_psprintf(ut_pool, "%s %d", host, port);
}

START_TEST(callback_syntax)
{
    ck_assert_str_eq(syntax("http://sub.example.org/cb?x=1"), "sub.example.org 80");
    ck_assert_str_eq(syntax("HTTPS://sub.example.org:8443/"), "sub.example.org 8443");
    ck_assert_str_eq(syntax("https://sub.example.org"), "sub.example.org 443");
    ck_assert_str_eq(syntax("http://[2001:db8::1]:81/"), "2001:db8::1 81");
    ck_assert_str_eq(syntax("ftp://x/"), "hub.callback is not an http or https URL");
    ck_assert_str_eq(syntax("file:///etc/passwd"), "hub.callback is not an http or https URL");
    ck_assert_str_eq(syntax("/cb"), "hub.callback is not an absolute URL");
    ck_assert_str_eq(syntax("http:/x/cb"), "hub.callback has no host");
    ck_assert_str_eq(syntax("http:///cb"), "hub.callback has no host");
    ck_assert_str_eq(syntax("http://u:p@x/"),
                     "hub.callback holds user information (user:password@)");
    ck_assert_str_eq(syntax("http://u@x/"), "hub.callback holds user information (user:password@)");
    ck_assert_str_eq(syntax("http://x/#f"), "hub.callback holds a fragment");
    ck_assert_str_eq(syntax("http://x/a b"),
                     "hub.callback holds spaces, control or non-ASCII bytes");
    ck_assert_str_eq(syntax("http://x:0/"), "hub.callback has an invalid port");
    ck_assert_str_eq(syntax(apr_pstrcat(ut_pool, "http://x/",
                                        memset(apr_pcalloc(ut_pool, 2100), 'a', 2048), NULL)),
                     "hub.callback is too long");
}
END_TEST

static const char *cls(const char *ip)
{
    unsigned char b[16];
    int len = 16;
    if (inet_pton(AF_INET, ip, b) == 1) {
        len = 4;
    }
    else {
        ck_assert_int_eq(inet_pton(AF_INET6, ip, b), 1);
    }
    return rs_hubaddr_class(b, len);
}

START_TEST(addr_classes)
{
    ck_assert_str_eq(cls("127.0.0.1"), "loopback");
    ck_assert_str_eq(cls("127.255.1.2"), "loopback");
    ck_assert_str_eq(cls("0.0.0.0"), "unspecified");
    ck_assert_str_eq(cls("10.200.0.1"), "private");
    ck_assert_str_eq(cls("172.16.0.1"), "private");
    ck_assert_str_eq(cls("172.31.255.255"), "private");
    ck_assert_ptr_null(cls("172.32.0.1"));
    ck_assert_ptr_null(cls("172.15.255.255"));
    ck_assert_str_eq(cls("192.168.1.1"), "private");
    ck_assert_str_eq(cls("100.64.0.1"), "shared (carrier-grade NAT)");
    ck_assert_str_eq(cls("100.127.255.255"), "shared (carrier-grade NAT)");
    ck_assert_ptr_null(cls("100.128.0.0"));
    ck_assert_str_eq(cls("169.254.169.254"), "link-local");
    ck_assert_str_eq(cls("224.0.0.1"), "multicast");
    ck_assert_str_eq(cls("255.255.255.255"), "reserved");
    ck_assert_ptr_null(cls("8.8.8.8"));
    ck_assert_ptr_null(cls("93.184.216.34"));
    ck_assert_str_eq(cls("::1"), "loopback");
    ck_assert_str_eq(cls("::"), "unspecified");
    ck_assert_str_eq(cls("fe80::1"), "link-local");
    ck_assert_str_eq(cls("febf::1"), "link-local");
    ck_assert_str_eq(cls("fc00::1"), "private");
    ck_assert_str_eq(cls("fd12:3456::1"), "private");
    ck_assert_str_eq(cls("ff02::1"), "multicast");
    ck_assert_str_eq(cls("::ffff:127.0.0.1"), "loopback");
    ck_assert_str_eq(cls("::ffff:10.0.0.1"), "private");
    ck_assert_ptr_null(cls("::ffff:8.8.8.8"));
    ck_assert_str_eq(cls("::127.0.0.1"), "loopback");
    ck_assert_str_eq(cls("64:ff9b::192.168.0.1"), "private");
    ck_assert_str_eq(cls("2002:a9fe:a9fe::1"), "link-local"); /* 6to4 of 169.254.169.254 */
    ck_assert_str_eq(cls("2001:db8::1"), "documentation");
    ck_assert_ptr_null(cls("2001:4860:4860::8888"));
    ck_assert_ptr_null(cls("2a00:1450::1"));
}
END_TEST

static apr_array_header_t *allow_list(const char *const *items)
{
    apr_array_header_t *a = apr_array_make(ut_pool, 4, sizeof(rs_hubaddr_allow_t));
    for (; *items; items++) {
        ck_assert_int_eq(rs_hubaddr_allow_parse(ut_pool, *items, apr_array_push(a)), 1);
    }
    return a;
}

static int allowed(const apr_array_header_t *a, const char *ip)
{
    unsigned char b[16];
    if (inet_pton(AF_INET, ip, b) == 1) {
        return rs_hubaddr_allow_addr(a, b, 4);
    }
    ck_assert_int_eq(inet_pton(AF_INET6, ip, b), 1);
    return rs_hubaddr_allow_addr(a, b, 16);
}

START_TEST(allow_lists)
{
    static const char *const items[] = { "127.0.0.1", "10.1.2.3/8", "fd00::/8", "Hooks.Example.ORG",
                                         NULL };
    apr_array_header_t *a = allow_list(items);
    rs_hubaddr_allow_t e;
    ck_assert_int_eq(allowed(a, "127.0.0.1"), 1);
    ck_assert_int_eq(allowed(a, "127.0.0.2"), 0);
    ck_assert_int_eq(allowed(a, "10.9.9.9"), 1);
    ck_assert_int_eq(allowed(a, "::ffff:10.9.9.9"), 1);
    ck_assert_int_eq(allowed(a, "::ffff:127.0.0.1"), 1);
    ck_assert_int_eq(allowed(a, "11.0.0.1"), 0);
    ck_assert_int_eq(allowed(a, "fd99::1"), 1);
    ck_assert_int_eq(allowed(a, "fc00::1"), 0);
    ck_assert_int_eq(allowed(a, "::1"), 0);
    ck_assert_int_eq(rs_hubaddr_allow_addr(NULL, (const unsigned char *)"\x7f\0\0\1", 4), 0);
    ck_assert_int_eq(rs_hubaddr_allow_host(a, "hooks.example.org"), 1);
    ck_assert_int_eq(rs_hubaddr_allow_host(a, "example.org"), 0);
    ck_assert_int_eq(rs_hubaddr_allow_host(a, "127.0.0.1"), 0);
    ck_assert_int_eq(rs_hubaddr_allow_parse(ut_pool, "10.1.2.3/8", &e), 1);
    ck_assert_int_eq(e.len, 4);
    ck_assert_int_eq(e.bits, 8);
    ck_assert_int_eq(memcmp(e.addr, "\x0a\0\0\0", 4), 0);
    ck_assert_int_eq(rs_hubaddr_allow_parse(ut_pool, "::1", &e), 1);
    ck_assert_int_eq(e.bits, 128);
    ck_assert_int_eq(rs_hubaddr_allow_parse(ut_pool, "10.0.0.0/33", &e), 0);
    ck_assert_int_eq(rs_hubaddr_allow_parse(ut_pool, "::/129", &e), 0);
    ck_assert_int_eq(rs_hubaddr_allow_parse(ut_pool, "10.0.0.0/", &e), 0);
    ck_assert_int_eq(rs_hubaddr_allow_parse(ut_pool, "10.0.0.0/-1", &e), 0);
    ck_assert_int_eq(rs_hubaddr_allow_parse(ut_pool, "/8", &e), 0);
    ck_assert_int_eq(rs_hubaddr_allow_parse(ut_pool, "host/8", &e), 0);
    ck_assert_int_eq(rs_hubaddr_allow_parse(ut_pool, "a b", &e), 0);
    ck_assert_int_eq(rs_hubaddr_allow_parse(ut_pool, "", &e), 0);
    ck_assert_int_eq(rs_hubaddr_allow_parse(ut_pool, "-x", &e), 0);
}
END_TEST

/* The child's check never asks a resolver: literal addresses in every
 * spelling are judged, names pass (the watcher judges what they resolve
 * to when it connects), and the client learns only that an address is
 * not allowed. */
START_TEST(check_callback_without_resolver)
{
    static const char *const lo[] = { "127.0.0.1", NULL };
    static const char *const name[] = { "localhost", NULL };
    static const char *const spellings[] = { "127.0.0.2",       "127.2",      "2130706434",
                                             "0x7f000002",      "0177.0.0.2", "[::ffff:127.0.0.2]",
                                             "[::ffff:7f00:2]", NULL };
    const char *detail;
    int i;

    ck_assert_str_eq(rs_hubreq_check_callback(ut_pool, "http://127.0.0.1:9/cb", NULL, &detail),
                     "hub.callback address not allowed");
    ck_assert_str_eq(detail, "address 127.0.0.1 is loopback");
    ck_assert_str_eq(rs_hubreq_check_callback(ut_pool, "http://[::1]/cb", NULL, &detail),
                     "hub.callback address not allowed");
    ck_assert_str_eq(detail, "address ::1 is loopback");
    ck_assert_str_eq(rs_hubreq_check_callback(ut_pool, "http://10.0.0.1/", NULL, &detail),
                     "hub.callback address not allowed");
    ck_assert_str_eq(detail, "address 10.0.0.1 is private");
    for (i = 0; spellings[i]; i++) {
        const char *u = apr_psprintf(ut_pool, "http://%s:8080/cb", spellings[i]);
        ck_assert_msg(rs_hubreq_check_callback(ut_pool, u, NULL, &detail) != NULL, "%s", u);
        ck_assert_str_eq(detail, spellings[i][0] == '[' ? "address ::ffff:127.0.0.2 is loopback"
                                                        : "address 127.0.0.2 is loopback");
    }
    ck_assert_ptr_null(
        rs_hubreq_check_callback(ut_pool, "http://127.0.0.1:9/cb", allow_list(lo), &detail));
    ck_assert_ptr_null(detail);
    ck_assert_ptr_null(rs_hubreq_check_callback(ut_pool, "http://8.8.8.8/cb", NULL, &detail));
    ck_assert_ptr_null(
        rs_hubreq_check_callback(ut_pool, "http://LOCALHOST/cb", allow_list(name), &detail));
    /* Names are not looked up here: one that does not resolve, or that
     * resolves to loopback, passes. */
    ck_assert_ptr_null(
        rs_hubreq_check_callback(ut_pool, "http://no-such-host.invalid/", NULL, &detail));
    ck_assert_ptr_null(rs_hubreq_check_callback(ut_pool, "http://localhost/", NULL, &detail));
    ck_assert_ptr_null(rs_hubreq_check_callback(ut_pool, "http://1.2.3.4.example/", NULL, &detail));
    ck_assert_str_eq(rs_hubreq_check_callback(ut_pool, "gopher://x/", NULL, &detail),
                     "hub.callback is not an http or https URL");
    ck_assert_ptr_null(detail);
}
END_TEST

/* Literal addresses as the resolver reads them, and the keys limits
 * count by. */
START_TEST(literals_and_keys)
{
    unsigned char a[16];
    int len;

    ck_assert_int_eq(rs_hubaddr_literal("0177.0.0.2", a, &len), 1);
    ck_assert_int_eq(len, 4);
    ck_assert_int_eq(memcmp(a, "\x7f\0\0\2", 4), 0);
    ck_assert_int_eq(rs_hubaddr_literal("0x7f.1", a, &len), 1);
    ck_assert_int_eq(memcmp(a, "\x7f\0\0\1", 4), 0);
    ck_assert_int_eq(rs_hubaddr_literal("2001:db8::1", a, &len), 1);
    ck_assert_int_eq(len, 16);
    ck_assert_int_eq(rs_hubaddr_literal("example.org", a, &len), 0);
    ck_assert_int_eq(rs_hubaddr_literal("1.2.3.4.example", a, &len), 0);
    ck_assert_int_eq(rs_hubaddr_literal("127.0.0.1 ", a, &len), 0);
    ck_assert_int_eq(rs_hubaddr_literal("", a, &len), 0);
    ck_assert_str_eq(rs_hubaddr_key_text(ut_pool, "127.0.0.2"), "127.0.0.2");
    ck_assert_str_eq(rs_hubaddr_key_text(ut_pool, "::ffff:127.0.0.2"), "127.0.0.2");
    ck_assert_str_eq(rs_hubaddr_key_text(ut_pool, "2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64");
    ck_assert_str_eq(rs_hubaddr_key_text(ut_pool, "2001:db8:1:2::ff"), "2001:db8:1:2::/64");
    ck_assert_str_eq(rs_hubaddr_key_text(ut_pool, "2001:db8:1:3::ff"), "2001:db8:1:3::/64");
    ck_assert_ptr_null(rs_hubaddr_key_text(ut_pool, "localhost"));
    ck_assert_ptr_null(rs_hubaddr_key_text(ut_pool, NULL));
    ck_assert_str_eq(rs_hubaddr_host_key(ut_pool, "2130706434"), "127.0.0.2");
    ck_assert_str_eq(rs_hubaddr_host_key(ut_pool, "::ffff:127.0.0.2"), "127.0.0.2");
    ck_assert_str_eq(rs_hubaddr_host_key(ut_pool, "Hooks.Example.ORG."), "hooks.example.org");
}
END_TEST

static rs_hubreq_t sample(void)
{
    rs_hubreq_t r;
    memset(&r, 0, sizeof(r));
    r.mode = RS_HUBREQ_SUBSCRIBE;
    r.callback = "https://sub.example.org/cb?x=%41&y=1";
    r.topic = "http://h/resourcesync/data/notify/change";
    r.lease = 3600;
    r.secret = "s3cr\xc3\xa9t with\nnewline=%";
    r.set = "data";
    r.kind = "change";
    r.client = "2001:db8::7";
    r.received = APR_INT64_C(1700000000123456);
    return r;
}

static void same(const rs_hubreq_t *a, const rs_hubreq_t *b)
{
    ck_assert_int_eq(a->mode, b->mode);
    ck_assert_str_eq(a->callback, b->callback);
    ck_assert_str_eq(a->topic, b->topic);
    ck_assert_int_eq(a->lease, b->lease);
    if (a->secret) {
        ck_assert_str_eq(a->secret, b->secret);
    }
    else {
        ck_assert_ptr_null(b->secret);
    }
    ck_assert_str_eq(a->set, b->set);
    ck_assert_str_eq(a->kind, b->kind);
    ck_assert_str_eq(a->client, b->client);
    ck_assert_int_eq(a->deny, b->deny);
    ck_assert_int_eq(a->received, b->received);
}

START_TEST(record_round_trip)
{
    rs_hubreq_t r = sample(), back;
    const char *rec = rs_hubreq_record_format(ut_pool, &r);
    ck_assert_str_eq(rec, "rs-hubreq 2\nmode=subscribe\n"
                          "callback=https://sub.example.org/cb?x=%2541&y=1\n"
                          "topic=http://h/resourcesync/data/notify/change\nlease=3600\n"
                          "secret=s3cr%C3%A9t%20with%0Anewline=%25\nset=data\nkind=change\n"
                          "client=2001:db8::7\nreceived=1700000000123456\n");
    ck_assert_ptr_null(rs_hubreq_record_parse(ut_pool, rec, strlen(rec), &back));
    same(&r, &back);
    r.secret = NULL;
    r.mode = RS_HUBREQ_UNSUBSCRIBE;
    rec = rs_hubreq_record_format(ut_pool, &r);
    ck_assert_ptr_null(rs_hubreq_record_parse(ut_pool, rec, strlen(rec), &back));
    same(&r, &back);
}
END_TEST

/* Records of version 1, left in a spool by the previous module, are read:
 * no client, a deny key. */
START_TEST(record_version_1)
{
    static const char rec[] = "rs-hubreq 1\nmode=subscribe\ncallback=http://x/\ntopic=t\n"
                              "lease=1\nset=\nkind=\ndeny=1\nreceived=5\n";
    rs_hubreq_t back;
    ck_assert_ptr_null(rs_hubreq_record_parse(ut_pool, rec, strlen(rec), &back));
    ck_assert_int_eq(back.deny, 1);
    ck_assert_str_eq(back.client, "");
}
END_TEST

static const char *bad(const char *rec)
{
    rs_hubreq_t r;
    const char *why = rs_hubreq_record_parse(ut_pool, rec, strlen(rec), &r);
    ck_assert_ptr_nonnull(why);
    return why;
}

#define REC_TAIL "topic=t\nlease=1\nset=a\nkind=change\nclient=1.2.3.4\nreceived=5\n"

START_TEST(record_rejects)
{
    ck_assert_str_eq(bad(""), "no 'rs-hubreq 2' (or 1) first line");
    ck_assert_str_eq(bad("rs-hubreq 3\n"), "no 'rs-hubreq 2' (or 1) first line");
    ck_assert_str_eq(bad("rs-hubreq 2\nmode=subscribe\ncallback=http://x/\n" REC_TAIL "extra=1\n"),
                     "unknown line");
    ck_assert_str_eq(
        bad("rs-hubreq 2\nmode=subscribe\ncallback=http://x/\n" REC_TAIL "client=1.2.3.4\n"),
        "client twice");
    ck_assert_str_eq(bad("rs-hubreq 2\nmode=subscribe\ncallback=http://x/\n" REC_TAIL "deny=0\n"),
                     "unknown line");
    ck_assert_str_eq(bad("rs-hubreq 1\nmode=subscribe\ncallback=http://x/\n" REC_TAIL), "no deny");
    ck_assert_str_eq(bad("rs-hubreq 2\nmode=subscribe\n" REC_TAIL), "no callback");
    ck_assert_str_eq(bad("rs-hubreq 2\nmode=publish\ncallback=http://x/\n" REC_TAIL), "bad mode");
    ck_assert_str_eq(bad("rs-hubreq 2\nmode=subscribe\ncallback=http://x/\n" REC_TAIL "secret=abc"),
                     "last line unterminated");
    ck_assert_str_eq(bad("rs-hubreq 2\nmode=subscribe\ncallback=http://x/\nsecret=a%0\n" REC_TAIL),
                     "secret: bad value");
    ck_assert_str_eq(bad("rs-hubreq 2\nmode=subscribe\ncallback=http://x/\nsecret=a b\n" REC_TAIL),
                     "secret: bad value");
    ck_assert_str_eq(bad("rs-hubreq 2\nmode=subscribe\ncallback=ftp://x/\n" REC_TAIL),
                     "hub.callback is not an http or https URL");
    ck_assert_str_eq(bad("rs-hubreq 1\nmode=subscribe\ncallback=http://x/\n"
                         "topic=t\nlease=1\nset=a\nkind=change\ndeny=2\nreceived=5\n"),
                     "bad number");
    ck_assert_str_eq(bad("rs-hubreq 2\nmode=subscribe\ncallback=http://x/\n"
                         "topic=t\nlease=-1\nset=a\nkind=change\nclient=\nreceived=5\n"),
                     "bad number");
    ck_assert_str_eq(bad("rs-hubreq 2\nmode=subscribe\ncallback=http://x/\n"
                         "topic=t\nlease=1\nset=a\nkind=other\nclient=\nreceived=5\n"),
                     "bad kind");
    ck_assert_str_eq(bad("rs-hubreq 2\nmode=subscribe\ncallback=http://x/\n"
                         "topic=t\nlease=1\nset=\nkind=change\nclient=\nreceived=5\n"),
                     "no set");
}
END_TEST

START_TEST(spool_write_read)
{
    char *dir = ut_path(ut_tempdir("hub"), "hub/spool");
    rs_hubreq_t r = sample(), back;
    const char *name, *why, *base;
    apr_size_t size;
    apr_dir_t *d;
    apr_finfo_t fi;
    int files = 0;

    ck_assert_int_eq(
        rs_hubreq_spool_write(ut_pool, dir, rs_hubreq_record_format(ut_pool, &r), &name),
        APR_SUCCESS);
    base = strrchr(name, '/') + 1;
    ck_assert_uint_eq(strlen(base), 20 + 1 + 16 + 4);
    ck_assert_int_eq(rs_hubreq_spool_is_req(base), 1);
    ck_assert_int_eq(rs_hubreq_spool_is_req("tmp-abc.req"), 0);
    ck_assert_int_eq(rs_hubreq_spool_is_req("tmp-Ab12Cd"), 0);
    ck_assert_int_eq(rs_hubreq_spool_is_req(".req"), 0);
    ck_assert_int_eq(apr_dir_open(&d, dir, ut_pool), APR_SUCCESS);
    while (apr_dir_read(&fi, APR_FINFO_NAME, d) == APR_SUCCESS) {
        if (strcmp(fi.name, ".") && strcmp(fi.name, "..")) {
            ck_assert_str_eq(fi.name, base); /* no temporary file left */
            files++;
        }
    }
    apr_dir_close(d);
    ck_assert_int_eq(files, 1);
    /* Created for the run user alone: rwx------, and its files rw-------. */
    ck_assert_int_eq(apr_stat(&fi, dir, APR_FINFO_PROT, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(fi.protection, APR_FPROT_UREAD | APR_FPROT_UWRITE | APR_FPROT_UEXECUTE);
    ck_assert_int_eq(apr_stat(&fi, name, APR_FINFO_PROT, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(fi.protection, APR_FPROT_UREAD | APR_FPROT_UWRITE);
    ck_assert_int_eq(rs_hubreq_spool_read(ut_pool, name, &back, &why, &size), APR_SUCCESS);
    ck_assert_ptr_null(why);
    ck_assert_uint_eq(size, strlen(rs_hubreq_record_format(ut_pool, &r)));
    same(&r, &back);
    ck_assert_int_eq(APR_STATUS_IS_ENOENT(
                         rs_hubreq_spool_read(ut_pool, ut_path(dir, "x.req"), &back, &why, NULL)),
                     1);
    ck_assert_ptr_null(why);
}
END_TEST

START_TEST(spool_read_malformed)
{
    char *dir = ut_tempdir("hubbad"), *path = ut_path(dir, "1-2.req");
    rs_hubreq_t back;
    const char *why;
    apr_file_t *f;
    apr_size_t size;
    ck_assert_int_eq(
        apr_file_open(&f, path, APR_FOPEN_CREATE | APR_FOPEN_WRITE, APR_FPROT_OS_DEFAULT, ut_pool),
        APR_SUCCESS);
    apr_file_puts("rs-hubreq 2\nmode=subscribe\n", f);
    apr_file_close(f);
    ck_assert_int_eq(rs_hubreq_spool_read(ut_pool, path, &back, &why, &size), APR_EGENERAL);
    ck_assert_str_eq(why, "no callback");
    ck_assert_uint_eq(size, 27);
}
END_TEST

Suite *hubreq_suite(void)
{
    Suite *s = suite_create("rs_hubreq");
    TCase *tc = ut_tcase("form", 10);
    tcase_add_test(tc, form_subscribe);
    tcase_add_test(tc, form_absent_and_empty);
    tcase_add_test(tc, form_rejects);
    tcase_add_test(tc, validate_fields);
    tcase_add_test(tc, validate_lease);
    tcase_add_test(tc, callback_syntax);
    suite_add_tcase(s, tc);
    tc = ut_tcase("addr", 20);
    tcase_add_test(tc, addr_classes);
    tcase_add_test(tc, allow_lists);
    tcase_add_test(tc, check_callback_without_resolver);
    tcase_add_test(tc, literals_and_keys);
    suite_add_tcase(s, tc);
    tc = ut_tcase("spool", 10);
    tcase_add_test(tc, record_round_trip);
    tcase_add_test(tc, record_version_1);
    tcase_add_test(tc, record_rejects);
    tcase_add_test(tc, spool_write_read);
    tcase_add_test(tc, spool_read_malformed);
    suite_add_tcase(s, tc);
    return s;
}
