/* SPDX-License-Identifier: Apache-2.0 */
/* rs_listen.h - a session that LISTENs on a PostgreSQL channel, for the
 * nodes that follow sets another node writes.
 *
 * Lifecycle: rs_listen_open connects (libpq, the store's DSN, at most
 * RS_LISTEN_CONNECT_TIMEOUT seconds unless the DSN says otherwise) and
 * sends LISTEN; the connection lives until rs_listen_close or the pool
 * given to rs_listen_open is cleared.  Its socket (rs_listen_fd) goes
 * into the caller's poll set; when it is readable, rs_listen_read takes
 * what arrived without blocking and hands each notification's payload
 * to a callback.  Notifications are delivered by the server when the
 * notifying transaction commits, in commit order; one sent while no
 * session listened is lost, so a caller that (re)connects must read
 * what it follows once after LISTEN (the store, not the notifications,
 * is the truth).  A lost connection (the server restarted,
 * pg_terminate_backend, the network) is reported by rs_listen_read as
 * APR_ECONNRESET with the server's message (rs_listen_error): close it
 * and open a new one.
 *
 * Engine unit: APR and libpq, no httpd; one thread at a time.
 */
#ifndef RS_LISTEN_H
#define RS_LISTEN_H

#include <apr_pools.h>

/* Seconds a connection attempt may take (libpq's connect_timeout; 2 is
 * libpq's least): the event loop waits for it. */
#define RS_LISTEN_CONNECT_TIMEOUT "2"

typedef struct rs_listen_t rs_listen_t;

/* A notification's payload (valid during the call only). */
typedef void rs_listen_fn(void *baton, const char *payload);

/* Connect to dsn (a libpq conninfo string or URI) and LISTEN on channel
 * (an identifier: quoted as one).  On failure *out is NULL and err
 * (errlen bytes) gets libpq's message, its first line; the cause is
 * APR_ECONNREFUSED for a failed connection, APR_EGENERAL for a failed
 * LISTEN. */
apr_status_t rs_listen_open(rs_listen_t **out, apr_pool_t *p, const char *dsn, const char *channel,
                            char *err, apr_size_t errlen);

/* The connection's socket, for poll (POLLIN). */
int rs_listen_fd(const rs_listen_t *l);

/* The server's process id of the session (pg_backend_pid). */
int rs_listen_backend(const rs_listen_t *l);

/* Read what arrived without blocking and call fn for each notification,
 * in order.  Returns the number of notifications in *n (may be NULL),
 * and APR_SUCCESS, or APR_ECONNRESET when the connection is lost
 * (rs_listen_error says why). */
apr_status_t rs_listen_read(rs_listen_t *l, rs_listen_fn *fn, void *baton, int *n);

/* libpq's message of the last failure ("" before any), its first line. */
const char *rs_listen_error(const rs_listen_t *l);

/* Close the connection (also done when the pool is cleared). */
void rs_listen_close(rs_listen_t *l);

#endif
