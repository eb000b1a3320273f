/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_follow.c - the Change Lists of the sets another node
 * writes, served by this one byte-identical, fed by LISTEN/NOTIFY.
 *
 * A set written elsewhere (mod_resourcesync_writer.c) has its documents
 * emptied; its Change Lists come back as this node follows the writer's
 * journal in the shared store (rs_changes_follow: the closed lists' and
 * the index's files written from the store as the writer writes them,
 * the open list's records put in the ring and its extent published, as
 * rs_changes_resync does).  Lifecycle:
 *
 *   - the LISTEN session: one libpq connection of the watcher's own
 *     (rs_listen, the store's DSN, channel RS_JOURNAL_CHANNEL), opened
 *     while some set is written elsewhere and the store is PostgreSQL,
 *     closed when none is.  Its socket is in the event loop's poll set:
 *     a notification (sent by the writer's transaction, delivered at its
 *     commit) wakes the loop at once, and the set it names becomes due;
 *   - the set's turn (rs_follow_set, from rs_writer_poll): when due, the
 *     store's records after the published extent and its lists are read;
 *     a set whose documents were emptied (cl_ready 0: a watcher start, a
 *     set just lost to another node) is seeded first;
 *   - failure: a session that cannot be opened or is lost (the server
 *     restarted, pg_terminate_backend) is said once, at warn; every
 *     followed set is then read each second, and the session is opened
 *     again after a backoff (1 s, doubling up to 30 s); once it is back
 *     (said at notice) every followed set is read once more, since a
 *     notification sent while no session listened is lost.
 *
 * Races: PostgreSQL delivers a notification after its transaction
 * committed, and every read here is a statement of its own (a snapshot
 * taken after the notification), so the rows are there when it is read.
 * A notification may name records read already (the poll, or two commits
 * before one read): nothing is found after the extent, nothing is
 * published.  A transaction of the writer that commits while this node
 * reads is found at its own notification.  A set taken over by this node
 * stops being followed at once (it is no longer elsewhere); its writer's
 * first update writes the index again (index_written cleared here), and
 * the takeover reads the ring and the extent from the store
 * (rs_writer_poll).  A set lost to another node has its documents
 * emptied (cl_ready 0) and is seeded again here.
 */
#include <apr_strings.h>
#include "mod_resourcesync_follow.h"
#include "rs_blob.h"
#include "rs_listen.h"
#include "rs_listfollow.h"
#include "rs_storecfg.h"

/* A followed set's state. */
typedef struct {
    rs_listfollow_t lf;
    int due;
    apr_time_t retry_at; /* after a failed read (monotonic) */
    apr_uint64_t docs;   /* notifications of its stored documents (RS_BLOB_NOTIFY) */
} fset_t;

#define POLL_EVERY  apr_time_from_sec(1)
#define BACKOFF_MIN apr_time_from_sec(1)
#define BACKOFF_MAX apr_time_from_sec(30)

/* The watcher's follower (driver's thread). */
static struct {
    fset_t *sets;     /* per set, as d->ws */
    rs_listen_t *l;   /* the LISTEN session, NULL: none */
    apr_pool_t *pool; /* its connection's */
    apr_time_t retry_at;
    apr_interval_time_t backoff;
    apr_time_t poll_at; /* while there is no session */
    int said;           /* the failure was said (this episode) */
} F;

static fset_t *fset(const wset_t *ws)
{
    if (!F.sets) {
        F.sets = apr_pcalloc(ws->d->pool, sizeof(*F.sets) * (apr_size_t)ws->d->nsets);
    }
    return &F.sets[ws - ws->d->ws];
}

static void all_due(rs_drive_t *d)
{
    int i;
    for (i = 0; i < d->nsets; i++) {
        fset(&d->ws[i])->due = 1;
        fset(&d->ws[i])->docs++;
    }
}

static int following(const rs_drive_t *d)
{
    int i;
    for (i = 0; i < d->nsets; i++) {
        if (d->ws[i].elsewhere) {
            return 1;
        }
    }
    return 0;
}

static void session_close(void)
{
    rs_listen_close(F.l);
    F.l = NULL;
    if (F.pool) {
        apr_pool_clear(F.pool);
    }
}

/* The session failed (why, libpq's message): said once per episode, the
 * store polled, a new session tried after the backoff. */
static void session_failed(rs_drive_t *d, apr_status_t rv, const char *why, apr_time_t now)
{
    if (!F.said) {
        rs_log_emit(&d->log, RS_LOG_WARN, rv,
                    "cannot LISTEN for the changes of the sets other nodes write (%s): "
                    "reading them from the store every second, connecting again",
                    *why ? why : "no message");
        F.said = 1;
    }
    F.backoff = F.backoff ? F.backoff * 2 : BACKOFF_MIN;
    if (F.backoff > BACKOFF_MAX) {
        F.backoff = BACKOFF_MAX;
    }
    F.retry_at = now + F.backoff;
    F.poll_at = now;
}

static void session_open(rs_drive_t *d, apr_time_t now)
{
    char err[256] = "";
    apr_status_t rv;

    if (!F.pool) {
        apr_pool_create(&F.pool, d->pool);
    }
    rv = rs_listen_open(&F.l, F.pool, rs_storecfg_dsn(&rs_global.store, F.pool, NULL),
                        RS_JOURNAL_CHANNEL, err, sizeof(err));
    if (rv != APR_SUCCESS) {
        session_close();
        session_failed(d, rv, err, now);
        return;
    }
    if (F.said) {
        rs_log_emit(&d->log, RS_LOG_NOTICE, 0,
                    "LISTENing again for the changes of the sets other nodes write");
        F.said = 0;
    }
    F.backoff = 0;
    all_due(d); /* what was sent while no session listened */
}

int rs_follow_prepare(rs_drive_t *d, struct pollfd *pfd, apr_time_t now, apr_time_t *next)
{
    if (!rs_storecfg_is_pgsql(&rs_global.store) || !following(d)) {
        if (F.l) {
            session_close();
        }
        return 0;
    }
    if (!F.l && now >= F.retry_at) {
        session_open(d, now);
    }
    if (!F.l) {
        if (now >= F.poll_at) {
            all_due(d);
            F.poll_at = now + POLL_EVERY;
        }
        *next = F.poll_at < *next ? F.poll_at : *next;
        *next = F.retry_at < *next ? F.retry_at : *next;
        return 0;
    }
    pfd->fd = rs_listen_fd(F.l);
    pfd->events = POLLIN;
    pfd->revents = 0;
    return 1;
}

/* rs_listen_fn: the set a notification names is due (its journal), or
 * its stored documents are to be looked at (RS_BLOB_NOTIFY). */
static void notified(void *baton, const char *payload)
{
    rs_drive_t *d = baton;
    size_t n = strlen(RS_BLOB_NOTIFY);
    int docs = !strncmp(payload, RS_BLOB_NOTIFY, n), i;

    for (i = 0; i < d->nsets; i++) {
        if (!strcmp(d->ws[i].set->name, docs ? payload + n : payload)) {
            if (docs) {
                fset(&d->ws[i])->docs++;
            }
            else {
                fset(&d->ws[i])->due = 1;
            }
        }
    }
}

int rs_follow_look(wset_t *ws, apr_uint64_t *seen, apr_time_t *next, apr_interval_time_t every,
                   apr_time_t now)
{
    fset_t *f = fset(ws);

    if (*seen != f->docs) {
        *seen = f->docs;
    }
    else if (now < *next) {
        return 0;
    }
    /* While the session listens, the writer's commits wake the look;
     * the slow poll only covers a notification lost with a session. */
    *next = now + (F.l ? RS_FOLLOW_LOOK_IDLE : every);
    return 1;
}

void rs_follow_readable(rs_drive_t *d, apr_time_t now)
{
    apr_status_t rv = rs_listen_read(F.l, notified, d, NULL);

    if (rv != APR_SUCCESS) {
        const char *why = apr_pstrdup(d->iter, rs_listen_error(F.l));
        session_close();
        F.backoff = 0;
        session_failed(d, rv, why, now);
        F.retry_at = now; /* a first new try at once */
    }
}

void rs_follow_set(wset_t *ws, apr_pool_t *p, apr_time_t now)
{
    fset_t *f;
    apr_status_t rv;

    if (!rs_storecfg_is_pgsql(&rs_global.store)) {
        return;
    }
    f = fset(ws);
    if ((ws->status.cl_ready && !f->due) || now < f->retry_at) {
        return;
    }
    f->due = 0;
    rv = rs_changes_follow(p, ws->d->journal, ws->set, &f->lf, &ws->status, ws->log);
    apr_pool_clear(p);
    if (rv != APR_SUCCESS && rv != APR_EINVAL) {
        rs_log_emit(ws->log, RS_LOG_WARN, rv,
                    "set %s: cannot follow its Change Lists in the store; trying again",
                    ws->set->name);
        f->due = 1;
        f->retry_at = now + POLL_EVERY;
    }
    /* Should this node take the set over, it writes the index again. */
    ws->listclose.index_written = 0;
}
