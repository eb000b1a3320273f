/* rs_scan.c - see rs_scan.h */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "rs_glob.h"
#include "rs_scan.h"

#define RS_SCAN_BATCH 20000   /* writes per transaction */

typedef struct {
    rs_store_t *st;
    const rs_scan_opts_t *o;
    rs_scan_stats_t *stats;
    apr_hash_t *visited;      /* dirs walked (relpath -> "") */
    apr_pool_t *vpool;        /* for visited */
    const char *realroot;
    apr_size_t realroot_len;
    apr_int64_t pending;      /* writes in the open transaction */
    apr_status_t err;
} scan_t;

static apr_int64_t mtime_ns(const struct stat *sb)
{
    return (apr_int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
}

static apr_int64_t ctime_ns(const struct stat *sb)
{
    return (apr_int64_t)sb->st_ctim.tv_sec * 1000000000 + sb->st_ctim.tv_nsec;
}

static void wrote(scan_t *sc)
{
    if (++sc->pending >= RS_SCAN_BATCH) {
        rs_store_commit(sc->st);
        rs_store_begin(sc->st);
        sc->pending = 0;
    }
}

static int same_version(const rs_item_t *row, const struct stat *sb)
{
    return row->size == (apr_int64_t)sb->st_size && row->mtime_ns == mtime_ns(sb)
        && row->dev == (apr_int64_t)sb->st_dev && row->ino == (apr_int64_t)sb->st_ino;
}

static int has_hashes(const rs_item_t *row, unsigned mask)
{
    int i;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        if ((mask & (1u << i)) && !row->hash[i]) {
            return 0;
        }
    }
    return 1;
}

/* Open a file for reading: relative to its directory, or through the
 * resolved target for a symlink. */
static int open_file(int dfd, const char *name, const char *target)
{
    if (target) {
        return open(target, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    }
    return openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);
}

/* Fill it with hashes of the file's current content.  sb is updated to
 * the metadata of the version read.  Returns 0, or an errno. */
static int hash_file(scan_t *sc, apr_pool_t *p, int dfd, const char *name,
                     const char *target, struct stat *sb, rs_item_t *it)
{
    int attempt;
    for (attempt = 0; attempt < 3; attempt++) {
        char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
        struct stat after;
        apr_off_t n = 0;
        int i, fd = open_file(dfd, name, target);
        apr_status_t rv;

        if (fd < 0) {
            return errno;
        }
        if (fstat(fd, sb) != 0 || !S_ISREG(sb->st_mode)) {
            close(fd);
            return EINVAL;
        }
        if (!sc->o->hashes) {
            close(fd);
            return 0;
        }
#ifdef POSIX_FADV_SEQUENTIAL
        posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
        rv = rs_hash_fd(fd, sc->o->hashes, hex, &n);
        if (rv == APR_SUCCESS && fstat(fd, &after) == 0
            && after.st_size == sb->st_size && n == after.st_size
            && mtime_ns(&after) == mtime_ns(sb)) {
            close(fd);
            sc->stats->hashed += n;
            for (i = 0; i < RS_HASH_COUNT; i++) {
                it->hash[i] = (sc->o->hashes & (1u << i)) ? apr_pstrdup(p, hex[i]) : NULL;
            }
            return 0;
        }
        close(fd);
        if (rv != APR_SUCCESS) {
            return rv;
        }
    }
    /* The file keeps changing: no hash now, the next scan retries. */
    memset(it->hash, 0, sizeof(it->hash));
    return 0;
}

/* Resolve a symlink; returns the target if it is a regular file inside the
 * set's root, else NULL. */
static const char *resolve_link(scan_t *sc, apr_pool_t *p, const char *relpath,
                                struct stat *sb)
{
    char buf[PATH_MAX];
    const char *full = apr_pstrcat(p, sc->o->root, "/", relpath, NULL);

    if (!realpath(full, buf)) {
        return NULL;
    }
    if (strncmp(buf, sc->realroot, sc->realroot_len) != 0
        || (buf[sc->realroot_len] != '/' && buf[sc->realroot_len] != '\0')) {
        return NULL;
    }
    if (stat(buf, sb) != 0 || !S_ISREG(sb->st_mode)) {
        return NULL;
    }
    return apr_pstrdup(p, buf);
}

static void visit_file(scan_t *sc, apr_pool_t *p, int dfd, const char *dir,
                       const char *name, const char *relpath, struct stat *sb,
                       const char *target, rs_item_t *row)
{
    const rs_scan_opts_t *o = sc->o;
    rs_item_t it;
    int rc;

    sc->stats->files++;
    if (row && same_version(row, sb) && row->ctime_ns == ctime_ns(sb)
        && row->cfg && o->cfg && !strcmp(row->cfg, o->cfg)
        && (!row->listed || has_hashes(row, o->hashes))) {
        sc->stats->listed += row->listed;
        return;
    }
    memset(&it, 0, sizeof(it));
    it.dir = dir;
    it.name = name;
    it.cfg = o->cfg;
    it.listed = 1;
    if (o->check && !o->check(o->check_baton, p, relpath, 0, &it.type)) {
        it.listed = 0;
    }
    if (it.listed) {
        if (row && same_version(row, sb) && has_hashes(row, o->hashes)) {
            /* Same content (only the inode's status changed, e.g. chmod):
             * keep the hashes, but make sure the file is still readable. */
            int fd = open_file(dfd, name, target);
            rc = fd < 0 ? errno : 0;
            if (fd >= 0) {
                close(fd);
            }
            memcpy(it.hash, row->hash, sizeof(it.hash));
        }
        else {
            rc = hash_file(sc, p, dfd, name, target, sb, &it);
        }
        if (rc != 0) {
            it.listed = 0;
            memset(it.hash, 0, sizeof(it.hash));
            rs_log_emit(o->log, RS_LOG_WARN, rc,
                        "set %s: cannot read '%s', not listed until it is readable",
                        o->set, relpath);
        }
    }
    it.size = sb->st_size;
    it.mtime_ns = mtime_ns(sb);
    it.ctime_ns = ctime_ns(sb);
    it.dev = (apr_int64_t)sb->st_dev;
    it.ino = (apr_int64_t)sb->st_ino;
    if (rs_store_put(sc->st, o->set, &it) != APR_SUCCESS) {
        sc->err = APR_EGENERAL;
    }
    sc->stats->written++;
    sc->stats->listed += it.listed;
    wrote(sc);
}

typedef struct {
    char *name;
    unsigned char type;
} dent_t;

static void walk(scan_t *sc, int dfd, const char *dir, apr_pool_t *parent)
{
    const rs_scan_opts_t *o = sc->o;
    apr_pool_t *p, *ep;
    apr_hash_t *rows;
    apr_array_header_t *ents;
    apr_hash_index_t *hi;
    DIR *d;
    struct dirent *de;
    int i, fd2;

    apr_pool_create(&p, parent);
    apr_pool_create(&ep, p);
    sc->stats->dirs++;
    apr_hash_set(sc->visited, apr_pstrdup(sc->vpool, dir), APR_HASH_KEY_STRING, "");

    fd2 = dup(dfd);
    d = fd2 >= 0 ? fdopendir(fd2) : NULL;
    if (!d) {
        rs_log_emit(o->log, RS_LOG_WARN, errno, "set %s: cannot read directory '%s'",
                    o->set, *dir ? dir : "/");
        if (fd2 >= 0) {
            close(fd2);
        }
        apr_pool_destroy(p);
        return;
    }
    ents = apr_array_make(p, 64, sizeof(dent_t));
    while ((de = readdir(d)) != NULL) {
        dent_t *e;
        if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2]))) {
            continue;
        }
        e = apr_array_push(ents);
        e->name = apr_pstrdup(p, de->d_name);
        e->type = de->d_type;
    }
    closedir(d);

    if (rs_store_dir_load(sc->st, p, o->set, dir, &rows) != APR_SUCCESS) {
        sc->err = APR_EGENERAL;
        apr_pool_destroy(p);
        return;
    }

    for (i = 0; i < ents->nelts && sc->err == APR_SUCCESS; i++) {
        dent_t *e = &APR_ARRAY_IDX(ents, i, dent_t);
        const char *relpath = *dir ? apr_pstrcat(ep, dir, "/", e->name, NULL) : e->name;
        rs_item_t *row = apr_hash_get(rows, e->name, APR_HASH_KEY_STRING);
        const char *target = NULL;
        struct stat sb;

        if (rs_glob_hidden(e->name, o->dotfiles) || rs_glob_match(o->excludes, relpath)) {
            apr_pool_clear(ep);
            continue;
        }
        if (fstatat(dfd, e->name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
            apr_pool_clear(ep);
            continue;     /* vanished since readdir */
        }
        if (S_ISLNK(sb.st_mode)) {
            target = resolve_link(sc, ep, relpath, &sb);
            if (!target) {
                apr_pool_clear(ep);
                continue;
            }
        }
        if (S_ISDIR(sb.st_mode)) {
            int cfd;
            if (o->check && !o->check(o->check_baton, ep, relpath, 1, NULL)) {
                apr_pool_clear(ep);
                continue;
            }
            cfd = openat(dfd, e->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (cfd < 0) {
                rs_log_emit(o->log, RS_LOG_WARN, errno,
                            "set %s: cannot open directory '%s'", o->set, relpath);
            }
            else {
                walk(sc, cfd, apr_pstrdup(p, relpath), p);
                close(cfd);
            }
        }
        else if (S_ISREG(sb.st_mode)) {
            apr_hash_set(rows, e->name, APR_HASH_KEY_STRING, NULL);
            visit_file(sc, ep, dfd, dir, e->name, relpath, &sb, target, row);
            if (o->progress && (sc->stats->files % 4096) == 0) {
                o->progress(o->progress_baton, sc->stats->files);
            }
        }
        apr_pool_clear(ep);
    }

    /* Rows whose file is gone (or is no longer a listable file). */
    for (hi = apr_hash_first(p, rows); hi && sc->err == APR_SUCCESS; hi = apr_hash_next(hi)) {
        const void *key;
        apr_hash_this(hi, &key, NULL, NULL);
        if (rs_store_delete(sc->st, o->set, dir, key) != APR_SUCCESS) {
            sc->err = APR_EGENERAL;
        }
        sc->stats->removed++;
        wrote(sc);
    }
    apr_pool_destroy(p);
}

apr_status_t rs_scan_set(rs_store_t *st, const rs_scan_opts_t *o, apr_pool_t *p,
                         rs_scan_stats_t *stats)
{
    scan_t sc;
    apr_array_header_t *dirs;
    apr_pool_t *sp;
    char buf[PATH_MAX];
    int rootfd, i;

    memset(stats, 0, sizeof(*stats));
    memset(&sc, 0, sizeof(sc));
    apr_pool_create(&sp, p);
    sc.st = st;
    sc.o = o;
    sc.stats = stats;
    sc.vpool = sp;
    sc.visited = apr_hash_make(sp);

    if (rs_store_begin(st) != APR_SUCCESS) {
        apr_pool_destroy(sp);
        return APR_EGENERAL;
    }
    rootfd = open(o->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0 || !realpath(o->root, buf)) {
        apr_status_t rv = errno;
        rs_log_emit(o->log, RS_LOG_ERR, rv, "set %s: cannot open root directory %s; "
                    "the set is listed empty until it is back", o->set, o->root);
        if (rootfd >= 0) {
            close(rootfd);
        }
        rs_store_delete_set(st, o->set);
        rs_store_commit(st);
        apr_pool_destroy(sp);
        return APR_SUCCESS;
    }
    sc.realroot = apr_pstrdup(sp, buf);
    sc.realroot_len = strlen(buf);
    walk(&sc, rootfd, "", sp);
    close(rootfd);

    /* Directories that hold rows but were not walked are gone (or are no
     * longer served): drop their rows. */
    if (sc.err == APR_SUCCESS && rs_store_dirs(st, sp, o->set, &dirs) == APR_SUCCESS) {
        for (i = 0; i < dirs->nelts; i++) {
            const char *d = APR_ARRAY_IDX(dirs, i, const char *);
            if (!apr_hash_get(sc.visited, d, APR_HASH_KEY_STRING)) {
                rs_store_delete_tree(st, o->set, d);
                stats->removed++;
            }
        }
    }
    if (rs_store_commit(st) != APR_SUCCESS) {
        sc.err = APR_EGENERAL;
    }
    if (o->progress) {
        o->progress(o->progress_baton, stats->files);
    }
    apr_pool_destroy(sp);
    return sc.err;
}
