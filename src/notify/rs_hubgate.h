/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubgate.h - the gate of the built-in hub's spool: how many requests
 * may wait in it (count and bytes), and how fast one client may add to
 * it.
 *
 * A subscription request costs the hub a spool file, a file read and a
 * verification GET; whoever can send POSTs can send many.  The gate keeps
 * that bounded in what an attacker cannot multiply for free:
 *
 *   Bounds.  Every spool file holds a reservation of one request and its
 *   bytes.  A child reserves BEFORE it writes the file
 *   (rs_hubgate_reserve) and gives the reservation back when the write
 *   fails; the watcher gives it back when it removes the file
 *   (rs_hubgate_release), and sets the counts from a listing of the spool
 *   when it starts (rs_hubgate_set: the segment is new in every server
 *   generation, and a child or watcher killed between its two steps
 *   leaves a reservation behind).  Reservations are atomic additions with
 *   no lock, so children never wait for one another; releases never go
 *   below zero.  The counts are therefore exact but for requests being
 *   written while the watcher lists the spool at its start (a few, at
 *   most the number of children): the bounds hold within that.
 *
 *   Episodes.  A full spool is logged once per episode, not once per
 *   refused request: rs_hubgate_full tells exactly one caller that an
 *   episode starts, rs_hubgate_eased exactly one that it has ended (a
 *   reservation made with the counts at three quarters of the bounds or
 *   below, so a spool that hovers at its bound does not log at every
 *   request).
 *
 *   Rates.  A token bucket per client address (GCRA: one "theoretical
 *   arrival time" per client; n requests at once, then one every per/n),
 *   in a fixed table of RS_HUBGATE_SLOTS slots, RS_HUBGATE_WAYS-way set
 *   associative, keyed by a hash of the client's key salted with a
 *   random seed (an attacker cannot aim at another client's slots).  A
 *   client whose bucket is full again needs no slot; when all slots of a
 *   set are busy, the one closest to full is taken over (its client
 *   starts with a full bucket: the table may forget, never refuse
 *   wrongly).  rs_hubgate_rate is not atomic: its callers serialize it
 *   (the status segment's mutex).
 *
 * The structure lives in shared memory (the status segment): fixed size,
 * no pointers.  Engine code: APR only.
 */
#ifndef RS_HUBGATE_H
#define RS_HUBGATE_H

#include <apr.h>
#include <apr_time.h>

#define RS_HUBGATE_SLOTS 4096
#define RS_HUBGATE_WAYS  4

typedef struct rs_hubgate_slot_t {
    apr_uint64_t key; /* 0: free */
    apr_time_t tat;   /* theoretical arrival time */
} rs_hubgate_slot_t;

typedef struct rs_hubgate_t {
    volatile apr_uint32_t count; /* requests reserved or in the spool */
    volatile apr_uint32_t bytes; /* their bytes */
    volatile apr_uint32_t full;  /* 1 during a "spool full" episode */
    apr_uint32_t pad;
    apr_uint64_t seed; /* salt of the rate table's hash */
    rs_hubgate_slot_t rate[RS_HUBGATE_SLOTS];
} rs_hubgate_t;

/* Empty counts and rate table, with the hash seed (random, per segment). */
void rs_hubgate_init(rs_hubgate_t *g, apr_uint64_t seed);

/* Reserve one request of n bytes: 1 when the count stays at most
 * max_count and the bytes at most max_bytes (both counted), else 0
 * (nothing counted).  Any process, no lock. */
int rs_hubgate_reserve(rs_hubgate_t *g, apr_uint32_t n, apr_uint32_t max_count,
                       apr_uint32_t max_bytes);

/* Give back count requests of n bytes in all (never below zero). */
void rs_hubgate_release(rs_hubgate_t *g, apr_uint32_t count, apr_uint32_t n);

/* Set the counts (the watcher, from a listing of the spool). */
void rs_hubgate_set(rs_hubgate_t *g, apr_uint32_t count, apr_uint32_t bytes);

/* A reservation was refused: 1 for the one caller that starts a "full"
 * episode (it logs it), 0 for every other while it lasts. */
int rs_hubgate_full(rs_hubgate_t *g);

/* A reservation of n bytes succeeded: 1 for the one caller that ends a
 * "full" episode (without this reservation, the counts at most three
 * quarters of the bounds), else 0. */
int rs_hubgate_eased(rs_hubgate_t *g, apr_uint32_t n, apr_uint32_t max_count,
                     apr_uint32_t max_bytes);

/* One request of the client with key `client` (e.g. rs_hubaddr_key of
 * its address) at now, allowed n per interval per (n at once): 0 when
 * allowed (counted), else the whole seconds (at least 1) until it would
 * be.  Callers serialize calls on one table. */
apr_int64_t rs_hubgate_rate(rs_hubgate_t *g, const char *client, apr_time_t now, apr_int64_t n,
                            apr_interval_time_t per);

#endif
