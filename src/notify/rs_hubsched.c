/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubsched.c - see rs_hubsched.h
 *
 * Structure: a ring of clients (those with queued entries); each client
 * has a ring of its queues, one per host, each a FIFO of entries.  The
 * running counts per host are kept in a table of hosts shared by all
 * clients (a host named by two clients is one host).  A client, a queue
 * or a host is freed when nothing is queued or running under it.
 */
#include <stdlib.h>
#include <string.h>
#include <apr_hash.h>
#include "rs_hubsched.h"

typedef struct host_t {
    char *key;
    int running;
    int users; /* queues and running entries naming it */
} host_t;

typedef struct client_t client_t;

/* One client's FIFO of entries for one host. */
typedef struct queue_t {
    host_t *host;
    client_t *client;
    rs_hubsched_entry_t *head, *tail;
    struct queue_t *prev, *next; /* the client's ring */
} queue_t;

struct client_t {
    char *key;
    int running;
    queue_t *queues;       /* ring; the next to serve */
    client_t *prev, *next; /* the scheduler's ring */
    int linked;            /* in the ring (has queued entries) */
};

struct rs_hubsched_entry_t {
    void *item;
    client_t *client;
    host_t *host;
    rs_hubsched_entry_t *next; /* queued: its FIFO; running: the running list */
    rs_hubsched_entry_t *prev; /* running: the running list */
};

struct rs_hubsched_t {
    rs_hubsched_limits_t lim;
    apr_hash_t *hosts;        /* key -> host_t */
    apr_hash_t *clients;      /* key -> client_t */
    client_t *ring;           /* the next client to serve */
    rs_hubsched_entry_t *run; /* running entries (freed with the scheduler) */
    int queued, running;
};

static void *xcalloc(size_t n)
{
    void *m = calloc(1, n);
    if (!m) {
        abort();
    }
    return m;
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d) {
        abort();
    }
    return d;
}

static host_t *host_get(rs_hubsched_t *s, const char *key)
{
    host_t *h = apr_hash_get(s->hosts, key, APR_HASH_KEY_STRING);
    if (!h) {
        h = xcalloc(sizeof(*h));
        h->key = xstrdup(key);
        apr_hash_set(s->hosts, h->key, APR_HASH_KEY_STRING, h);
    }
    h->users++;
    return h;
}

static void host_put(rs_hubsched_t *s, host_t *h)
{
    if (--h->users == 0) {
        apr_hash_set(s->hosts, h->key, APR_HASH_KEY_STRING, NULL);
        free(h->key);
        free(h);
    }
}

static void client_link(rs_hubsched_t *s, client_t *c)
{
    if (c->linked) {
        return;
    }
    c->linked = 1;
    if (!s->ring) {
        s->ring = c->next = c->prev = c;
        return;
    }
    /* Last in the turn: before the one served next. */
    c->next = s->ring;
    c->prev = s->ring->prev;
    c->prev->next = c;
    s->ring->prev = c;
}

static void client_unlink(rs_hubsched_t *s, client_t *c)
{
    if (!c->linked) {
        return;
    }
    c->linked = 0;
    if (c->next == c) {
        s->ring = NULL;
    }
    else {
        c->prev->next = c->next;
        c->next->prev = c->prev;
        if (s->ring == c) {
            s->ring = c->next;
        }
    }
    c->next = c->prev = NULL;
}

/* Free c when nothing is queued or running under it. */
static void client_release(rs_hubsched_t *s, client_t *c)
{
    if (c->queues || c->running) {
        return;
    }
    client_unlink(s, c);
    apr_hash_set(s->clients, c->key, APR_HASH_KEY_STRING, NULL);
    free(c->key);
    free(c);
}

static queue_t *queue_find(client_t *c, host_t *h)
{
    queue_t *q = c->queues;
    if (q) {
        do {
            if (q->host == h) {
                return q;
            }
            q = q->next;
        } while (q != c->queues);
    }
    return NULL;
}

static void queue_unlink(rs_hubsched_t *s, queue_t *q)
{
    client_t *c = q->client;
    if (q->next == q) {
        c->queues = NULL;
    }
    else {
        q->prev->next = q->next;
        q->next->prev = q->prev;
        if (c->queues == q) {
            c->queues = q->next;
        }
    }
    host_put(s, q->host);
    free(q);
}

rs_hubsched_entry_t *rs_hubsched_add(rs_hubsched_t *s, const char *client, const char *host,
                                     void *item)
{
    client_t *c = apr_hash_get(s->clients, client, APR_HASH_KEY_STRING);
    rs_hubsched_entry_t *e = xcalloc(sizeof(*e));
    host_t *h;
    queue_t *q;

    if (!c) {
        c = xcalloc(sizeof(*c));
        c->key = xstrdup(client);
        apr_hash_set(s->clients, c->key, APR_HASH_KEY_STRING, c);
    }
    h = host_get(s, host);
    if ((q = queue_find(c, h))) {
        host_put(s, h); /* the queue holds the host already */
    }
    else {
        q = xcalloc(sizeof(*q));
        q->host = h;
        q->client = c;
        if (!c->queues) {
            c->queues = q->next = q->prev = q;
        }
        else {
            q->next = c->queues;
            q->prev = c->queues->prev;
            q->prev->next = q;
            c->queues->prev = q;
        }
    }
    e->item = item;
    e->client = c;
    e->host = h;
    if (q->tail) {
        q->tail->next = e;
    }
    else {
        q->head = e;
    }
    q->tail = e;
    s->queued++;
    client_link(s, c);
    return e;
}

/* The first queue of c, in its turn, whose host may run one more. */
static queue_t *queue_pick(const rs_hubsched_t *s, client_t *c)
{
    queue_t *q = c->queues;
    do {
        if (q->host->running < s->lim.per_host) {
            return q;
        }
        q = q->next;
    } while (q != c->queues);
    return NULL;
}

rs_hubsched_entry_t *rs_hubsched_next(rs_hubsched_t *s)
{
    client_t *c = s->ring, *first = s->ring;
    rs_hubsched_entry_t *e;
    queue_t *q = NULL;

    if (!c || s->running >= s->lim.total) {
        return NULL;
    }
    do {
        if (c->running < s->lim.per_client && (q = queue_pick(s, c))) {
            break;
        }
        c = c->next;
    } while (c != first);
    if (!q) {
        return NULL;
    }
    e = q->head;
    q->head = e->next;
    if (!q->head) {
        q->tail = NULL;
    }
    e->prev = NULL;
    e->next = s->run;
    if (s->run) {
        s->run->prev = e;
    }
    s->run = e;
    /* The host stays used by the running entry. */
    e->host->users++;
    e->host->running++;
    c->running++;
    s->queued--;
    s->running++;
    /* Turns: this client's next host, then the next client. */
    c->queues = q->next;
    if (!q->head) {
        queue_unlink(s, q);
    }
    s->ring = c->next;
    if (!c->queues) {
        client_unlink(s, c);
    }
    return e;
}

void *rs_hubsched_item(const rs_hubsched_entry_t *e)
{
    return e->item;
}

void rs_hubsched_done(rs_hubsched_t *s, rs_hubsched_entry_t *e)
{
    if (e->prev) {
        e->prev->next = e->next;
    }
    else {
        s->run = e->next;
    }
    if (e->next) {
        e->next->prev = e->prev;
    }
    e->host->running--;
    host_put(s, e->host);
    e->client->running--;
    s->running--;
    client_release(s, e->client);
    free(e);
}

int rs_hubsched_queued(const rs_hubsched_t *s)
{
    return s->queued;
}

int rs_hubsched_running(const rs_hubsched_t *s)
{
    return s->running;
}

/* Free everything left (the owner's pool goes). */
static apr_status_t cleanup(void *data)
{
    rs_hubsched_t *s = data;
    apr_hash_index_t *hi;
    apr_pool_t *p;

    /* Running entries (their items are the owner's), then queued entries
     * and their queues, clients and hosts. */
    while (s->run) {
        rs_hubsched_entry_t *e = s->run;
        s->run = e->next;
        free(e);
    }
    apr_pool_create(&p, NULL);
    for (hi = apr_hash_first(p, s->clients); hi; hi = apr_hash_next(hi)) {
        client_t *c = apr_hash_this_val(hi);
        while (c->queues) {
            queue_t *q = c->queues;
            rs_hubsched_entry_t *e, *next;
            for (e = q->head; e; e = next) {
                next = e->next;
                free(e);
            }
            q->head = q->tail = NULL;
            queue_unlink(s, q);
        }
        free(c->key);
        free(c);
    }
    for (hi = apr_hash_first(p, s->hosts); hi; hi = apr_hash_next(hi)) {
        host_t *h = apr_hash_this_val(hi);
        free(h->key);
        free(h);
    }
    apr_pool_destroy(p);
    return APR_SUCCESS;
}

rs_hubsched_t *rs_hubsched_create(apr_pool_t *p, const rs_hubsched_limits_t *limits)
{
    rs_hubsched_t *s = apr_pcalloc(p, sizeof(*s));
    s->lim = *limits;
    s->lim.total = s->lim.total > 0 ? s->lim.total : 1;
    s->lim.per_host = s->lim.per_host > 0 ? s->lim.per_host : 1;
    s->lim.per_client = s->lim.per_client > 0 ? s->lim.per_client : 1;
    s->hosts = apr_hash_make(p);
    s->clients = apr_hash_make(p);
    apr_pool_cleanup_register(p, s, cleanup, apr_pool_cleanup_null);
    return s;
}
