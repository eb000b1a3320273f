/* SPDX-License-Identifier: Apache-2.0 */
/* rs_storeretry.h - the watcher when the state store fails, and its retry.
 *
 * A write to the store can fail for reasons that go away without a
 * restart: a full disk, a read-only or immutable file, a file system
 * remounted read-only, an I/O error.  The failed transaction is rolled
 * back, so the inventory still holds what it held before: a full scan
 * finds the lost changes again.  The rule:
 *
 *   1. a failed transaction of a set puts the set in the "store failing"
 *      state (rs_storeretry_note); its caller publishes nothing of the set
 *      and lets its ticks wait meanwhile;
 *   2. the retry is due RS_STORERETRY_FIRST after the first failure, the
 *      delay doubling with every further failure up to RS_STORERETRY_MAX
 *      (rs_storeretry_due); the caller then opens a new connection
 *      (rs_storeretry_reopen) and reconciles the set by a full scan;
 *   3. that scan's success ends the set's state (rs_storeretry_ok).
 *
 * The watcher-wide episode (rs_storeretry_episode_t) runs from the first
 * failing set to the last one that works again; it is said once: one line
 * at error when it starts ("store failing: <cause> ..."), one at notice
 * when it ends ("store works again"), and its cause is handed to the
 * caller's publish callback (APR_SUCCESS at the end).  The same back-off
 * applies to opening the store at the watcher's start
 * (rs_storeretry_open).
 *
 * Times are on the monotonic clock and always arguments.  One thread (the
 * watcher's driver) uses the state; nothing here locks.
 */
#ifndef RS_STORERETRY_H
#define RS_STORERETRY_H

#include <apr_pools.h>
#include <apr_time.h>
#include "rs_db.h"
#include "rs_journal.h"
#include "rs_log.h"
#include "rs_storecfg.h"

/* The back-off: the first delay, and the longest. */
#define RS_STORERETRY_FIRST apr_time_from_sec(2)
#define RS_STORERETRY_MAX   apr_time_from_sec(30)

/* One set's state.  All zero: the set's store works. */
typedef struct rs_storeretry_t {
    apr_status_t err;          /* cause of the last failed transaction, until a
                                * full scan succeeds; APR_SUCCESS: none */
    apr_time_t at;             /* when the retry is due (monotonic) */
    apr_interval_time_t delay; /* the last delay of the back-off (0: none yet) */
    int resync;                /* committed records of a failed scan are not
                                * published yet (the caller's flag) */
} rs_storeretry_t;

/* What the episode asks of the caller; any member may be NULL. */
typedef struct rs_storeretry_cb_t {
    /* The episode's cause: rv when it starts, APR_SUCCESS when it ends
     * (before "store works again" is logged). */
    void (*publish)(void *baton, apr_status_t cause);
    /* The episode ended (after its notice line): what was logged once
     * may be logged again in a later one. */
    void (*ended)(void *baton);
    /* rs_storeretry_open: sleep for delay; 0 when the watcher is to end
     * instead (NULL: never wait, give up at once). */
    int (*wait)(void *baton, apr_interval_time_t delay);
    void *baton;
} rs_storeretry_cb_t;

/* The driver's episode.  Fill state_dir, log and cb (rs_storeretry_init),
 * and for another store than SQLite in state_dir, store and store_shown
 * (rs_storeretry_use); nfailing and err are the engine's. */
typedef struct rs_storeretry_episode_t {
    int nfailing;          /* sets whose store writes fail */
    apr_status_t err;      /* cause of the episode, APR_SUCCESS: none */
    const char *state_dir; /* named in the error line */
    /* The store opened (NULL: SQLite in state_dir) and its name in the
     * error line instead of state_dir's, never with a password. */
    const rs_storecfg_t *store;
    const char *store_shown;
    const rs_logger_t *log; /* the episode's two lines (not once-only) */
    const rs_storeretry_cb_t *cb;
} rs_storeretry_episode_t;

/* Prepare ep (no episode) for the store in state_dir; log and cb are kept
 * (they must live as long as ep). */
void rs_storeretry_init(rs_storeretry_episode_t *ep, const char *state_dir, const rs_logger_t *log,
                        const rs_storeretry_cb_t *cb);

/* ep opens store (kept; NULL: SQLite in state_dir), named shown in its
 * error line (kept; NULL: the state directory is named). */
void rs_storeretry_use(rs_storeretry_episode_t *ep, const rs_storecfg_t *store, const char *shown);

/* The next delay of the back-off after delay (0: the first). */
apr_interval_time_t rs_storeretry_next_delay(apr_interval_time_t delay);

/* A transaction of set `name` failed with cause rv (APR_SUCCESS counts as
 * APR_EGENERAL) while doing `what`, at now: enter the failing state, or
 * stay in it backing off.  A set entering it logs one debug line to
 * setlog ("set <name>: <what> failed; ..."), and the first failing set
 * starts the episode.  Returns 1 when the set entered the state, 0 when it
 * was in it already. */
int rs_storeretry_note(rs_storeretry_t *sr, rs_storeretry_episode_t *ep, apr_status_t rv,
                       const char *name, const char *what, apr_time_t now,
                       const rs_logger_t *setlog);

/* Whether the set fails and its retry is due at now. */
int rs_storeretry_due(const rs_storeretry_t *sr, apr_time_t now);

/* A full scan of the set succeeded: leave the failing state (nothing when
 * the set was not in it); the last failing set ends the episode.  Returns
 * 1 when the set left the state. */
int rs_storeretry_ok(rs_storeretry_t *sr, rs_storeretry_episode_t *ep);

/* Open ep's store (rs_storecfg_open) and its journal in a new subpool of
 * parent (*pool; on failure none is left and the three are NULL).
 * storelog is the store's own logger. */
apr_status_t rs_storeretry_connect(const rs_storeretry_episode_t *ep, apr_pool_t *parent,
                                   const rs_logger_t *storelog, apr_pool_t **pool, rs_db_t **store,
                                   rs_journal_t **journal);

/* Replace a connection by a new one (one opened read-only while the file
 * was immutable stays read-only): the old *pool (NULL: none) with its
 * store and journal goes first, then rs_storeretry_connect.  The caller
 * closes every other connection of the process before (SQLite shares a
 * file's locks and -shm index among them).  On failure there is none,
 * and the caller notes each set failing. */
apr_status_t rs_storeretry_reopen(const rs_storeretry_episode_t *ep, apr_pool_t *parent,
                                  const rs_logger_t *storelog, apr_pool_t **pool, rs_db_t **store,
                                  rs_journal_t **journal);

/* Open the store at the watcher's start (rs_storeretry_connect), retrying
 * while the cause is transient (rs_db_transient) with the back-off
 * (ep->cb->wait sleeps between tries).  The first transient failure
 * starts the episode, the success after it ends it.  Returns the cause of
 * a failure that is not transient, or the last one when wait says to end. */
apr_status_t rs_storeretry_open(rs_storeretry_episode_t *ep, apr_pool_t *parent,
                                const rs_logger_t *storelog, apr_pool_t **pool, rs_db_t **store,
                                rs_journal_t **journal);

#endif
