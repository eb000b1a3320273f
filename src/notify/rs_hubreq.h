/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubreq.h - subscription requests of the built-in WebSub hub.
 *
 * Lifecycle of a request (see docs/ARCHITECTURE.md, "Built-in hub:
 * requests"):
 *   1. A child receives the form POST and parses it (rs_hubreq_parse_form),
 *      checks its fields (rs_hubreq_validate) and the callback without a
 *      resolver (rs_hubreq_check_callback: a literal address is judged, a
 *      name is left to the watcher, which judges every address it connects
 *      to), and refuses a topic that is not one of this server's.
 *   2. The child writes the request to the spool directory
 *      (rs_hubreq_spool_write): a temporary file "tmp-*" renamed, once
 *      complete and synced, to "<time>-<rand>.req".  Readers never see a
 *      partial record: they only look at "*.req" names.
 *   3. The watcher reads each "*.req" file (rs_hubreq_spool_read), verifies
 *      the subscriber's intent, stores the outcome and removes the file.
 *      A file that does not parse is malformed (never written by a child of
 *      this version) and is removed with a log line.
 *
 * The spool record is text, one "key=value" per line after a first line
 * "rs-hubreq 2"; values are %-encoded (every byte outside '!'..'~', and
 * '%' itself), so a record never holds a newline or control byte of a
 * value.  Keys: mode, callback, topic, lease, secret (only when given),
 * set and kind (the topic's set and "change"/"framework"; the set names
 * the server that received the request: sets belong to the server that
 * declares them), client (the requesting client's address, as text),
 * received (microseconds since the epoch).  Each key appears at most
 * once; unknown keys make the record malformed.  Records of version 1
 * (written before the hub refused unknown topics itself) have no client
 * but a key deny (0 or 1, 1: set and kind empty); they are still read.
 *
 * Engine code: APR only.
 */
#ifndef RS_HUBREQ_H
#define RS_HUBREQ_H

#include <apr_file_info.h>
#include <apr_network_io.h>
#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>
#include "rs_hubaddr.h"

#define RS_HUBREQ_MAX_BODY      8192   /* bytes of a form body */
#define RS_HUBREQ_MAX_URL       2048   /* bytes of hub.callback, hub.topic */
#define RS_HUBREQ_MAX_SECRET    199    /* hub.secret: under 200 bytes */
#define RS_HUBREQ_MAX_RECORD    16384  /* bytes of a spool record */
#define RS_HUBREQ_DEFAULT_LEASE 864000 /* s, when hub.lease_seconds is absent */

typedef enum rs_hubreq_mode_t {
    RS_HUBREQ_NONE = 0,
    RS_HUBREQ_SUBSCRIBE,
    RS_HUBREQ_UNSUBSCRIBE
} rs_hubreq_mode_t;

/* One subscription request.  Strings are NUL-terminated, from the pool of
 * the function that filled it. */
typedef struct rs_hubreq_t {
    rs_hubreq_mode_t mode;
    const char *callback; /* as given (query string preserved) */
    const char *topic;
    apr_int64_t lease;  /* seconds; -1: not given (form only) */
    const char *secret; /* NULL: none */
    const char *set;    /* topic's set, "" when deny */
    const char *kind;   /* "change", "framework", "" when deny */
    const char *client; /* address of the client that sent it ("" in
                                 * records of version 1) */
    int deny;           /* version 1 only: not one of the server's
                                 * topics (never written now) */
    apr_time_t received;
} rs_hubreq_t;

/* The mode's word ("subscribe", "unsubscribe"; "" for none). */
const char *rs_hubreq_mode_name(rs_hubreq_mode_t mode);

/* Parse an application/x-www-form-urlencoded body of len bytes (NUL bytes
 * allowed; at most RS_HUBREQ_MAX_BODY) into out.  '+' is a space, %XX a
 * byte.  Unknown parameters are ignored; an empty value counts as absent;
 * a hub.* parameter given twice, a bad %-escape or a NUL byte in a hub.*
 * parameter is an error (a request whose meaning is unclear is refused,
 * not guessed).  Returns NULL, or a short reason (from p) for a 400. */
const char *rs_hubreq_parse_form(apr_pool_t *p, const char *body, apr_size_t len, rs_hubreq_t *out);

/* Check a parsed request: mode, callback syntax (rs_hubreq_callback_syntax),
 * topic present and at most RS_HUBREQ_MAX_URL bytes, secret size; clamp
 * the lease to [lease_min, lease_max] seconds (absent: the default,
 * clamped too).  Returns NULL or a short reason (from p). */
const char *rs_hubreq_validate(apr_pool_t *p, rs_hubreq_t *req, apr_int64_t lease_min,
                               apr_int64_t lease_max);

/* The syntax of a callback URL: absolute http or https, a host, no
 * user information, no fragment, printable ASCII only, at most
 * RS_HUBREQ_MAX_URL bytes.  On success *host and *port (default of the
 * scheme when absent) are set, host without IPv6 brackets.  Returns NULL
 * or a short reason (from p). */
const char *rs_hubreq_callback_syntax(apr_pool_t *p, const char *url, const char **host,
                                      apr_port_t *port);

/* Check the callback's syntax, then its host without any resolver: a
 * host named in allow passes; an IP address written literally
 * (rs_hubaddr_literal, every spelling) passes when rs_hubaddr_check
 * allows it; any other name passes, its addresses being judged when the
 * callback is called (at connect time, by the watcher).  Returns NULL, or
 * a short reason for the client (from p) in general terms: "hub.callback
 * address not allowed" for a refused address, never the address or its
 * class.  *detail (may be NULL) gets, for a refused address only, what
 * was refused and why ("address 127.0.0.1 is loopback"), for the log;
 * NULL otherwise. */
const char *rs_hubreq_check_callback(apr_pool_t *p, const char *url,
                                     const apr_array_header_t *allow, const char **detail);

/* The spool record of req (see above), from p. */
const char *rs_hubreq_record_format(apr_pool_t *p, const rs_hubreq_t *req);

/* Parse a spool record of len bytes into out.  Returns NULL, or why the
 * record is malformed (from p). */
const char *rs_hubreq_record_parse(apr_pool_t *p, const char *buf, apr_size_t len,
                                   rs_hubreq_t *out);

/* The spool directory's mode when it is created (by a child or the
 * watcher, as the run user; children make it when the watcher has not
 * yet, under httpd's umask): the run user only, rwx------. */
#define RS_HUBREQ_DIR_PERMS (APR_FPROT_UREAD | APR_FPROT_UWRITE | APR_FPROT_UEXECUTE)

/* Write a record (rs_hubreq_record_format) into the spool directory dir
 * (created if missing): a temporary "tmp-*" file, flushed and synced,
 * renamed to "<time>-<rand>.req" (time: 20 digits of microseconds, so
 * names sort by arrival).  *name gets the final path.  Returns the cause
 * of a failure (the temporary file removed). */
apr_status_t rs_hubreq_spool_write(apr_pool_t *p, const char *dir, const char *record,
                                   const char **name);

/* Whether an entry name of the spool directory is a complete request. */
int rs_hubreq_spool_is_req(const char *name);

/* Read and parse the spool file path.  Returns APR_SUCCESS (*why NULL),
 * the cause of a read error (*why NULL), or APR_EGENERAL with *why saying
 * why the file is malformed.  *size (may be NULL) gets the bytes read
 * (what the file holds in the spool's gate, rs_hubgate.h), also for a
 * malformed file. */
apr_status_t rs_hubreq_spool_read(apr_pool_t *p, const char *path, rs_hubreq_t *out,
                                  const char **why, apr_size_t *size);

#endif
