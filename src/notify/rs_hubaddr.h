/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubaddr.h - which callback addresses the built-in hub may call.
 *
 * A hub that POSTs to any URL a stranger gives it is a tool for reaching
 * the hub's own network (server-side request forgery).  Callbacks whose
 * host resolves to a loopback, private, link-local or otherwise special
 * address are refused unless ResourceSyncHubAllowCallback names the host
 * or a CIDR block holding the address.  These functions are pure (no
 * resolver, no I/O) so that every rule is unit-tested.
 *
 * Engine code: APR only.
 */
#ifndef RS_HUBADDR_H
#define RS_HUBADDR_H

#include <apr_pools.h>
#include <apr_tables.h>

/* One entry of ResourceSyncHubAllowCallback: a host name (compared with
 * the callback's host, case-insensitively) or a CIDR block. */
typedef struct rs_hubaddr_allow_t {
    const char *host;       /* NULL: a CIDR block */
    int len;                /* 4 or 16: bytes of addr */
    unsigned char addr[16]; /* network address (host bits zero) */
    int bits;               /* prefix length */
} rs_hubaddr_allow_t;

/* Why the address of len bytes (4: IPv4, 16: IPv6, network order) must
 * not be called back: "loopback", "private", "link-local", ... or NULL
 * for an ordinary public address.  IPv4-mapped, IPv4-compatible and
 * NAT64 (64:ff9b::/96) IPv6 addresses are judged by their IPv4 address. */
const char *rs_hubaddr_class(const unsigned char *addr, int len);

/* Parse "host" or "address/bits" or an address alone (a /32 or /128)
 * into out; host names are letters, digits, '-' and '.'.  Returns 1, or
 * 0 when s is neither. */
int rs_hubaddr_allow_parse(apr_pool_t *p, const char *s, rs_hubaddr_allow_t *out);

/* Whether the address (as for rs_hubaddr_class) lies in one of the
 * CIDR entries of allow (an array of rs_hubaddr_allow_t; NULL: empty).  An
 * IPv4-mapped IPv6 address also matches IPv4 blocks. */
int rs_hubaddr_allow_addr(const apr_array_header_t *allow, const unsigned char *addr, int len);

/* Whether host matches one of the host entries of allow. */
int rs_hubaddr_allow_host(const apr_array_header_t *allow, const char *host);

/* The callback policy for one address: NULL when it may be called (an
 * ordinary public address, or inside a CIDR entry of allow), else why
 * not (its class, as rs_hubaddr_class). */
const char *rs_hubaddr_check(const apr_array_header_t *allow, const unsigned char *addr, int len);

/* Whether host (a URL's host, IPv6 without brackets) is an IP address
 * written literally, in any form the resolver takes without asking DNS:
 * IPv6 text, or IPv4 as inet_aton(3) reads it ("127.0.0.2", "127.2",
 * "2130706434", "0x7f000002", "0177.0.0.2").  If so, addr (16 bytes)
 * gets the address and *len 4 or 16; returns 1, else 0.  No resolver is
 * used: a name is never looked up. */
int rs_hubaddr_literal(const char *host, unsigned char *addr, int *len);

/* The key under which an address counts for limits (from p): what one
 * party cannot multiply for free.  IPv4 (also written as IPv4-mapped
 * IPv6) as "a.b.c.d", every other IPv6 address as its /64
 * ("2001:db8:1:2::/64"). */
const char *rs_hubaddr_key(apr_pool_t *p, const unsigned char *addr, int len);

/* The address as text (inet_ntop), from p. */
const char *rs_hubaddr_text(apr_pool_t *p, const unsigned char *addr, int len);

/* rs_hubaddr_key of an address given as text (IPv4 dotted quad or IPv6,
 * e.g. a client's address or the address a request was sent to), or
 * NULL when text is not one. */
const char *rs_hubaddr_key_text(apr_pool_t *p, const char *text);

/* The key of a callback's host for scheduling (from p): a literal
 * address's rs_hubaddr_key (so every spelling of one address is one
 * host), else the name in lower case without a trailing dot. */
const char *rs_hubaddr_host_key(apr_pool_t *p, const char *host);

#endif
