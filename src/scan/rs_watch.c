/* SPDX-License-Identifier: Apache-2.0 */
/* rs_watch.c - see rs_watch.h */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "rs_time.h"
#include "rs_watch.h"

#define MASK                                                                                      \
    (IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_MODIFY \
     | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK)

/* One watched directory.  Entries are malloc'ed: watches come and go for
 * the life of the process, and a pool would only grow. */
typedef struct {
    int wd;
    char *path; /* relative to the root, "" for the root; or,
                               * above: the absolute path (starts with '/') */
    int above;  /* a directory above the root (rs_watch_above) */
} wentry_t;

/* A settling entry (see rs_watch.h). */
typedef struct {
    const char *dir;
    const char *name;
    apr_time_t due;
} settle_t;

struct rs_watch_t {
    int fd;
    const char *root;
    long max;
    apr_hash_t *by_wd;   /* int wd -> wentry_t* */
    apr_hash_t *by_path; /* path -> wentry_t* */
    /* Work: "now" entries (dir -> apr_hash_t of names), cleared with
     * npool when taken; settling entries (relpath -> settle_t*), cleared
     * with spool when none is left. */
    apr_pool_t *npool, *spool;
    apr_hash_t *now;
    apr_hash_t *settling;
    apr_time_t next_due;
    long sgarbage; /* settling entries dropped since spool was fresh */
    unsigned flags;
    /* Directories above the root (rs_watch_above): the access file names
     * their events are filtered to, and when the change they reported is
     * due (monotonic; 0: none). */
    const apr_array_header_t *above_names;
    apr_time_t above_due;
    apr_int64_t events;
    char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
};

static apr_status_t cleanup(void *data)
{
    rs_watch_t *w = data;
    apr_hash_index_t *hi;

    for (hi = apr_hash_first(NULL, w->by_wd); hi; hi = apr_hash_next(hi)) {
        void *v;
        apr_hash_this(hi, NULL, NULL, &v);
        free(((wentry_t *)v)->path);
        free(v);
    }
    if (w->fd >= 0) {
        close(w->fd);
        w->fd = -1;
    }
    return APR_SUCCESS;
}

apr_status_t rs_watch_create(rs_watch_t **out, apr_pool_t *p, const char *root, long max_watches)
{
    rs_watch_t *w = apr_pcalloc(p, sizeof(*w));

    w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (w->fd < 0) {
        return errno;
    }
    w->root = apr_pstrdup(p, root);
    w->max = max_watches;
    w->by_wd = apr_hash_make(p);
    w->by_path = apr_hash_make(p);
    apr_pool_create(&w->npool, p);
    apr_pool_create(&w->spool, p);
    w->now = apr_hash_make(w->npool);
    w->settling = apr_hash_make(w->spool);
    apr_pool_cleanup_register(p, w, cleanup, apr_pool_cleanup_null);
    *out = w;
    return APR_SUCCESS;
}

int rs_watch_fd(const rs_watch_t *w)
{
    return w->fd;
}

long rs_watch_count(const rs_watch_t *w)
{
    return (long)apr_hash_count(w->by_wd);
}

apr_int64_t rs_watch_events(const rs_watch_t *w)
{
    return w->events;
}

static void unmap(rs_watch_t *w, wentry_t *e)
{
    if (apr_hash_get(w->by_path, e->path, APR_HASH_KEY_STRING) == e) {
        apr_hash_set(w->by_path, e->path, APR_HASH_KEY_STRING, NULL);
    }
    apr_hash_set(w->by_wd, &e->wd, sizeof(e->wd), NULL);
    free(e->path);
    free(e);
}

/* Map watch descriptor wd (just returned by inotify_add_watch) to key
 * (a path relative to the root, or an absolute one for a directory
 * above it).  Returns 0 or an errno value (the watch is then removed). */
static int map_watch(rs_watch_t *w, int wd, const char *key, int above)
{
    wentry_t *e, *old;

    old = apr_hash_get(w->by_path, key, APR_HASH_KEY_STRING);
    e = apr_hash_get(w->by_wd, &wd, sizeof(wd));
    if (!e && !old && w->max > 0 && (long)apr_hash_count(w->by_wd) >= w->max) {
        /* Only a new watch counts against the cap: a directory moved
         * inside the tree comes back with the descriptor it had. */
        inotify_rm_watch(w->fd, wd);
        return ENOSPC;
    }
    if (e && e->above != above) {
        /* One inode both inside the tree and above its root (a bind
         * mount): it stays what it was first watched as. */
        return 0;
    }
    if (e) {
        if (!strcmp(e->path, key)) {
            return 0;
        }
        /* The same directory under a new path: it was moved. */
        if (apr_hash_get(w->by_path, e->path, APR_HASH_KEY_STRING) == e) {
            apr_hash_set(w->by_path, e->path, APR_HASH_KEY_STRING, NULL);
        }
        free(e->path);
    }
    else {
        e = malloc(sizeof(*e));
        if (!e) {
            inotify_rm_watch(w->fd, wd);
            return ENOMEM;
        }
        e->wd = wd;
        e->above = above;
        apr_hash_set(w->by_wd, &e->wd, sizeof(e->wd), e);
    }
    e->path = strdup(key);
    if (!e->path) {
        inotify_rm_watch(w->fd, wd);
        apr_hash_set(w->by_wd, &e->wd, sizeof(e->wd), NULL);
        free(e);
        return ENOMEM;
    }
    if (old && old != e) {
        /* Another directory was watched under this path before (it was
         * replaced): that one is elsewhere or gone now. */
        inotify_rm_watch(w->fd, old->wd);
        unmap(w, old);
    }
    apr_hash_set(w->by_path, e->path, APR_HASH_KEY_STRING, e);
    return 0;
}

int rs_watch_add(rs_watch_t *w, const char *relpath, int dfd)
{
    char proc[64];
    int wd;

    /* Through the descriptor, so the watch is on the very directory the
     * scanner reads, whatever happened to the path meanwhile. */
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dfd);
    wd = inotify_add_watch(w->fd, proc, MASK);
    if (wd < 0 && errno == ENOENT) {
        /* No /proc: by path, not following a symlink put in its place. */
        char *full = *relpath ? apr_pstrcat(w->npool, w->root, "/", relpath, NULL)
                              : apr_pstrdup(w->npool, w->root);
        wd = inotify_add_watch(w->fd, full, MASK | IN_DONT_FOLLOW);
    }
    if (wd < 0) {
        return errno;
    }
    return map_watch(w, wd, relpath, 0);
}

int rs_watch_above(rs_watch_t *w, const char *dir, const apr_array_header_t *names)
{
    /* By path, following symbolic links: httpd reads the access files
     * through the path, wherever a link on the way leads. */
    int wd = inotify_add_watch(w->fd, dir, MASK);

    w->above_names = names;
    if (wd < 0) {
        return errno;
    }
    return map_watch(w, wd, dir, 1);
}

void rs_watch_forget(rs_watch_t *w, const char *relpath)
{
    apr_hash_index_t *hi;
    apr_size_t n = strlen(relpath);
    apr_pool_t *tp;
    apr_array_header_t *gone;
    int i;

    if (!apr_hash_get(w->by_path, relpath, APR_HASH_KEY_STRING)) {
        return;
    }
    apr_pool_create(&tp, w->npool);
    gone = apr_array_make(tp, 8, sizeof(wentry_t *));
    for (hi = apr_hash_first(tp, w->by_wd); hi; hi = apr_hash_next(hi)) {
        void *v;
        wentry_t *e;
        apr_hash_this(hi, NULL, NULL, &v);
        e = v;
        if (e->above) {
            continue; /* above the root: not part of the tree */
        }
        if (!n || (!strncmp(e->path, relpath, n) && (e->path[n] == '/' || !e->path[n]))) {
            APR_ARRAY_PUSH(gone, wentry_t *) = e;
        }
    }
    for (i = 0; i < gone->nelts; i++) {
        wentry_t *e = APR_ARRAY_IDX(gone, i, wentry_t *);
        inotify_rm_watch(w->fd, e->wd);
        unmap(w, e);
    }
    apr_pool_destroy(tp);
}

static void add_now(rs_watch_t *w, const char *dir, const char *name)
{
    apr_hash_t *names = apr_hash_get(w->now, dir, APR_HASH_KEY_STRING);
    if (!names) {
        names = apr_hash_make(w->npool);
        apr_hash_set(w->now, apr_pstrdup(w->npool, dir), APR_HASH_KEY_STRING, names);
    }
    if (!apr_hash_get(names, name, APR_HASH_KEY_STRING)) {
        apr_hash_set(names, apr_pstrdup(w->npool, name), APR_HASH_KEY_STRING, "");
    }
}

/* A change above the root becomes due at `due`, unless one is due earlier. */
static void above_due(rs_watch_t *w, apr_time_t due)
{
    if (!w->above_due || due < w->above_due) {
        w->above_due = due;
    }
}

/* 1 if name is one of the access file names of the watches above. */
static int above_name(const rs_watch_t *w, const char *name)
{
    int i;

    for (i = 0; w->above_names && i < w->above_names->nelts; i++) {
        if (!strcmp(APR_ARRAY_IDX(w->above_names, i, const char *), name)) {
            return 1;
        }
    }
    return 0;
}

/* An event of a directory above the root (e).  Only its access files
 * matter: created or written (settling, like a file of the tree), closed
 * after writing, attributes changed, deleted, renamed in or out - and
 * the directory itself gone, moved or changed (its permissions decide
 * whether httpd can read them), which the owner answers by looking at
 * every access file above again and watching the directories anew. */
static void above_event(rs_watch_t *w, wentry_t *e, const struct inotify_event *ev, apr_time_t now)
{
    if (ev->mask & IN_IGNORED) {
        unmap(w, e);
        above_due(w, now);
        return;
    }
    if (!ev->len || !ev->name[0]) {
        if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_ATTRIB | IN_UNMOUNT)) {
            above_due(w, now);
        }
        return;
    }
    if (above_name(w, ev->name)) {
        above_due(w, (ev->mask & (IN_CREATE | IN_MODIFY)) ? now + RS_WATCH_SETTLE : now);
    }
}

static void event(rs_watch_t *w, const struct inotify_event *ev, apr_time_t now)
{
    wentry_t *e;
    const char *relpath;
    char *key;

    w->events++;
    if (ev->mask & IN_Q_OVERFLOW) {
        w->flags |= RS_WATCH_OVERFLOW;
        return;
    }
    e = apr_hash_get(w->by_wd, &ev->wd, sizeof(ev->wd));
    if (!e) {
        return; /* a watch already forgotten */
    }
    if (e->above) {
        above_event(w, e, ev, now);
        return;
    }
    if (ev->mask & IN_IGNORED) {
        /* The kernel removed the watch (directory deleted, unmounted). */
        if (!*e->path) {
            w->flags |= RS_WATCH_ROOT;
        }
        unmap(w, e);
        return;
    }
    if (!ev->len || !ev->name[0]) {
        /* Events of the directory itself; its parent reports them for any
         * directory but the root. */
        if (!*e->path && (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_ATTRIB | IN_UNMOUNT))) {
            w->flags |= RS_WATCH_ROOT;
        }
        return;
    }
    relpath = *e->path ? apr_pstrcat(w->npool, e->path, "/", ev->name, NULL) : ev->name;
    if ((ev->mask & (IN_CREATE | IN_MODIFY)) && !(ev->mask & IN_ISDIR)) {
        settle_t *s;
        if (apr_hash_get(w->settling, relpath, APR_HASH_KEY_STRING)) {
            return; /* not postponed again: seen within the delay */
        }
        s = apr_palloc(w->spool, sizeof(*s));
        s->dir = apr_pstrdup(w->spool, e->path);
        s->name = apr_pstrdup(w->spool, ev->name);
        s->due = now + RS_WATCH_SETTLE;
        key = apr_pstrdup(w->spool, relpath);
        apr_hash_set(w->settling, key, APR_HASH_KEY_STRING, s);
        if (!w->next_due || s->due < w->next_due) {
            w->next_due = s->due;
        }
        return;
    }
    if (apr_hash_get(w->settling, relpath, APR_HASH_KEY_STRING)) {
        apr_hash_set(w->settling, relpath, APR_HASH_KEY_STRING, NULL);
        w->sgarbage++;
        if (!apr_hash_count(w->settling)) {
            w->next_due = 0;
        }
    }
    add_now(w, e->path, ev->name);
}

apr_status_t rs_watch_read(rs_watch_t *w)
{
    apr_time_t now = rs_time_mono();
    for (;;) {
        ssize_t n = read(w->fd, w->buf, sizeof(w->buf));
        char *ptr;
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno == EAGAIN ? APR_SUCCESS : errno;
        }
        if (n == 0) {
            return APR_SUCCESS;
        }
        for (ptr = w->buf; ptr < w->buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)ptr;
            event(w, ev, now);
            ptr += sizeof(struct inotify_event) + ev->len;
        }
    }
}

/* Free the memory of dropped settling entries: at once when none is
 * left, else by copying the live ones once enough are dead, so a steady
 * stream of creates cannot grow the pool without bound. */
static void settle_compact(rs_watch_t *w)
{
    apr_pool_t *np;
    apr_hash_t *nh;
    apr_hash_index_t *hi;

    if (!apr_hash_count(w->settling)) {
        if (w->sgarbage) {
            apr_pool_clear(w->spool);
            w->settling = apr_hash_make(w->spool);
            w->sgarbage = 0;
        }
        return;
    }
    if (w->sgarbage < 4096) {
        return;
    }
    apr_pool_create(&np, apr_pool_parent_get(w->spool));
    nh = apr_hash_make(np);
    for (hi = apr_hash_first(NULL, w->settling); hi; hi = apr_hash_next(hi)) {
        const void *k;
        void *v;
        settle_t *s = apr_palloc(np, sizeof(*s));
        apr_hash_this(hi, &k, NULL, &v);
        *s = *(settle_t *)v;
        s->dir = apr_pstrdup(np, s->dir);
        s->name = apr_pstrdup(np, s->name);
        apr_hash_set(nh, apr_pstrdup(np, k), APR_HASH_KEY_STRING, s);
    }
    apr_pool_destroy(w->spool);
    w->spool = np;
    w->settling = nh;
    w->sgarbage = 0;
}

int rs_watch_take(rs_watch_t *w, apr_pool_t *p, apr_time_t now, rs_scan_target_t **targets)
{
    apr_hash_index_t *hi;
    apr_array_header_t *out = apr_array_make(p, 8, sizeof(rs_scan_target_t));

    /* Due settling entries join the "now" ones. */
    if (w->next_due && w->next_due <= now) {
        apr_time_t next = 0;
        for (hi = apr_hash_first(p, w->settling); hi; hi = apr_hash_next(hi)) {
            const void *k;
            void *v;
            settle_t *s;
            apr_hash_this(hi, &k, NULL, &v);
            s = v;
            if (s->due <= now) {
                add_now(w, s->dir, s->name);
                apr_hash_set(w->settling, k, APR_HASH_KEY_STRING, NULL);
                w->sgarbage++;
            }
            else if (!next || s->due < next) {
                next = s->due;
            }
        }
        w->next_due = next;
    }
    settle_compact(w);
    for (hi = apr_hash_first(p, w->now); hi; hi = apr_hash_next(hi)) {
        const void *k;
        void *v;
        apr_hash_index_t *ni;
        rs_scan_target_t *t;
        apr_array_header_t *names;
        apr_hash_this(hi, &k, NULL, &v);
        names = apr_array_make(p, (int)apr_hash_count(v), sizeof(const char *));
        for (ni = apr_hash_first(p, v); ni; ni = apr_hash_next(ni)) {
            const void *nk;
            apr_hash_this(ni, &nk, NULL, NULL);
            APR_ARRAY_PUSH(names, const char *) = apr_pstrdup(p, nk);
        }
        t = apr_array_push(out);
        t->dir = apr_pstrdup(p, k);
        t->names = names;
    }
    apr_pool_clear(w->npool);
    w->now = apr_hash_make(w->npool);
    *targets = (rs_scan_target_t *)out->elts;
    return out->nelts;
}

unsigned rs_watch_take_flags(rs_watch_t *w)
{
    unsigned f = w->flags;
    w->flags = 0;
    return f;
}

apr_time_t rs_watch_next_due(const rs_watch_t *w)
{
    if (w->above_due && (!w->next_due || w->above_due < w->next_due)) {
        return w->above_due;
    }
    return w->next_due;
}

int rs_watch_take_above(rs_watch_t *w, apr_time_t now)
{
    if (!w->above_due || w->above_due > now) {
        return 0;
    }
    w->above_due = 0;
    return 1;
}
