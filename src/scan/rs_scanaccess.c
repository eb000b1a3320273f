/* SPDX-License-Identifier: Apache-2.0 */
/* rs_scanaccess.c - see rs_scanaccess.h: following the access files
 * (.htaccess, AccessFileName) of a set.
 *
 * An access file changes what httpd serves in its directory and below it
 * without changing any of the files there, so a scan that skips a file
 * whose row still describes it would keep listing what became denied and
 * keep unlisted what became allowed.  Each access file therefore has an
 * inventory row of its own: never listed, never journaled, holding only
 * the file's size, times, device and inode.  When a walk reaches a
 * directory it compares its access files with their rows first; if one
 * appeared, changed or vanished, every file at and below that directory
 * gets its access check again (rs_scan_ctx_t.recheck), keeping its hashes
 * unless its content changed too.  The rows make this work across
 * restarts: a change made while the server was stopped is noticed by the
 * startup scan like any other.
 *
 * A directory that is not served is still handed to on_dir (watched,
 * never read): its own access file may be what denies it, and only its
 * watch reports that file's removal.
 *
 * An access file is followed through a symbolic link (httpd opens it so);
 * only its stat is compared, its content is never read.  A name that is
 * an access file is never listed itself.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "rs_scanaccess.h"
#include "rs_scanpipe.h"
#include "rs_scanfile.h"

int rs_scan_is_access_name(const rs_scan_opts_t *o, const char *name)
{
    int i;

    for (i = 0; o->access_files && i < o->access_files->nelts; i++) {
        if (!strcmp(APR_ARRAY_IDX(o->access_files, i, const char *), name)) {
            return 1;
        }
    }
    return 0;
}

/* The row an access file `name` of dir described by sb should have. */
static void access_row(const rs_scan_opts_t *o, rs_item_t *it, const char *dir, const char *name,
                       const struct stat *sb)
{
    memset(it, 0, sizeof(*it));
    it->dir = dir;
    it->name = name;
    it->size = sb->st_size;
    it->mtime_ns = rs_scanfile_mtime_ns(sb);
    it->ctime_ns = rs_scanfile_ctime_ns(sb);
    it->dev = (apr_int64_t)sb->st_dev;
    it->ino = (apr_int64_t)sb->st_ino;
    it->cfg = o->cfg;
    it->listed = 0;
}

static int same_stat(const rs_item_t *a, const rs_item_t *b)
{
    return a->size == b->size && a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns
           && a->dev == b->dev && a->ino == b->ino;
}

void rs_scan_access_watch(rs_scan_ctx_t *sc, int dfd, const char *name, const char *relpath)
{
    const rs_scan_opts_t *o = sc->o;
    int fd;

    if (!o->on_dir || !o->access_files || !o->access_files->nelts) {
        return;
    }
    fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        o->on_dir(o->dir_baton, relpath, fd);
        close(fd);
    }
}

int rs_scan_access_changed(rs_scan_ctx_t *sc, apr_pool_t *p, int dfd, const char *dir,
                           apr_hash_t *rows)
{
    const rs_scan_opts_t *o = sc->o;
    int i, changed = 0;

    (void)p;
    for (i = 0; o->access_files && i < o->access_files->nelts && sc->err == APR_SUCCESS; i++) {
        const char *name = APR_ARRAY_IDX(o->access_files, i, const char *);
        const rs_item_t *row = apr_hash_get(rows, name, APR_HASH_KEY_STRING);
        struct stat sb;
        rs_item_t it;

        if (fstatat(dfd, name, &sb, 0) != 0) {
            /* Gone (or never there): a row left in rows is dropped with
             * the other rows of what is gone; it was never listed. */
            changed |= row != NULL;
            continue;
        }
        apr_hash_set(rows, name, APR_HASH_KEY_STRING, NULL);
        access_row(o, &it, dir, name, &sb);
        if (row && same_stat(row, &it)) {
            continue;
        }
        changed = 1;
        rs_scanpipe_access(sc, &it);
    }
    return changed;
}
