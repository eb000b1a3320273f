/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_os.c - the state directory on disk: whether it can be
 * used, its creation, its ownership and its modes.
 *
 * Who does what (the boundary between root and the run user):
 *   - root (the httpd parent) creates the state directory and its missing
 *     parents, and gives the directory itself to the run user, mode 0700.
 *     It never opens, creates, reads or changes anything inside it: the
 *     run user owns the directory and could put a symbolic link, a FIFO or
 *     a huge file under any name there.  The directory itself is opened
 *     without following a symbolic link at its last component (O_NOFOLLOW
 *     | O_DIRECTORY) and changed through that descriptor (fchown, fchmod),
 *     so nothing else is ever given away; its parents are root's (the
 *     operator's) and are followed as configured.
 *   - the watcher, already the run user, prepares the inside at its start:
 *     every directory 0700 and every file 0600 (an older version's 0644
 *     store, or files made under another umask), and snapshots/.  The
 *     directory's own entries at every start, before the store is opened
 *     (rs_os_statedir_prepare); everything below once per store, after it
 *     is opened (rs_os_statedir_private: the store records it, since this
 *     version creates nothing that is not private).  Its umask is 077
 *     (mod_resourcesync_watcher.c), so whatever it creates later is
 *     private too; everything else inside is created by its writer as it
 *     goes (children: the hub's spool, 0700 and 0600).
 *
 * Lifecycle: check_config asks rs_os_statedir_check, which looks without
 * changing anything (it also runs under `httpd -t`, which must not create
 * directories), so that `apachectl configtest` reports a state directory
 * that the real start could not create or write.  post_config (both passes,
 * while httpd is still root) calls rs_os_statedir_make, which creates it and
 * gives it to the run user.  What the check cannot see (a file system that
 * fills or turns read-only between the test and the start) is still
 * reported by the creation.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <apr_strings.h>
#include <unixd.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_os.h"
#include "rs_db.h"
#include "rs_file.h"
#include "rs_statedir.h"

/* Parents root creates for the state directory: the operator's, not the
 * run user's (0755 at most, whatever the umask). */
#define PARENT_PERMS                                                           \
    (APR_FPROT_UREAD | APR_FPROT_UWRITE | APR_FPROT_UEXECUTE | APR_FPROT_GREAD \
     | APR_FPROT_GEXECUTE | APR_FPROT_WREAD | APR_FPROT_WEXECUTE)

/* NULL if path (absolute) is a usable directory or could be created: it
 * exists as a directory (not a symbolic link to one) this process may
 * write into, or the nearest existing ancestor is such a directory.  Else
 * why not, in p.  As root, access() ignores mode bits but still refuses a
 * read-only file system (EROFS) and an immutable inode (EPERM), which stop
 * the creation and the chown of the start. */
static const char *usable(apr_pool_t *p, const char *path)
{
    char *at = apr_pstrdup(p, path);
    struct stat st;
    int self = 1;

    for (;;) {
        if ((self ? lstat(at, &st) : stat(at, &st)) == 0) {
            if (self && S_ISLNK(st.st_mode)) {
                return apr_psprintf(p, "'%s' is a symbolic link: name the directory itself", at);
            }
            if (!S_ISDIR(st.st_mode)) {
                return self ? apr_psprintf(p, "'%s' exists and is not a directory", at)
                            : apr_psprintf(p, "cannot create '%s': '%s' is not a directory", path,
                                           at);
            }
            if (access(at, W_OK | X_OK) != 0) {
                return self ? apr_psprintf(p, "'%s' is not writable: %s", at, strerror(errno))
                            : apr_psprintf(p, "cannot create '%s' in '%s': %s", path, at,
                                           strerror(errno));
            }
            return NULL;
        }
        if (errno != ENOENT && errno != ENOTDIR) {
            return apr_psprintf(p, "cannot create '%s': '%s': %s", path, at, strerror(errno));
        }
        self = 0;
        if (!strcmp(at, "/")) {
            return NULL;
        }
        *strrchr(at, '/') = '\0';
        if (!*at) {
            at[0] = '/';
            at[1] = '\0';
        }
    }
}

const char *rs_os_statedir_check(apr_pool_t *ptemp, const char *dir)
{
    return usable(ptemp, dir);
}

/* Open the state directory dir, whose last component is name in the
 * directory open at pfd, creating it (mode 0700) when missing; never
 * through a symbolic link.  The descriptor, or -1 with *why set. */
static int open_statedir(apr_pool_t *p, int pfd, const char *dir, const char *name,
                         const char **why)
{
    struct stat st;
    int fd, err;

    if (mkdirat(pfd, name, 0700) != 0 && errno != EEXIST) {
        *why = apr_psprintf(p, "cannot create '%s': %s", dir, strerror(errno));
        return -1;
    }
    fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
        return fd;
    }
    err = errno;
    if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
        *why = apr_psprintf(p, "'%s' is a symbolic link: name the directory itself", dir);
    }
    else if (err == ENOTDIR) {
        *why = apr_psprintf(p, "'%s' exists and is not a directory", dir);
    }
    else {
        *why = apr_psprintf(p, "cannot open '%s': %s", dir, strerror(err));
    }
    return -1;
}

const char *rs_os_statedir_make(apr_pool_t *ptemp, const char *dir)
{
    const char *slash = strrchr(dir, '/'), *name, *parent, *why = NULL;
    struct stat st;
    apr_status_t rv;
    char buf[256];
    int pfd, fd;

    if (!slash || !slash[1]) {
        return apr_psprintf(ptemp, "'%s' cannot be the state directory", dir);
    }
    name = slash + 1;
    parent = slash == dir ? "/" : apr_pstrndup(ptemp, dir, (apr_size_t)(slash - dir));
    rv = apr_dir_make_recursive(parent, PARENT_PERMS, ptemp);
    if (rv != APR_SUCCESS) {
        return apr_psprintf(ptemp, "cannot create '%s': %s", dir,
                            apr_strerror(rv, buf, sizeof(buf)));
    }
    if ((pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        return apr_psprintf(ptemp, "cannot create '%s': '%s': %s", dir, parent, strerror(errno));
    }
    fd = open_statedir(ptemp, pfd, dir, name, &why);
    close(pfd);
    if (fd < 0) {
        return why;
    }
    if (fstat(fd, &st) != 0) {
        why = apr_psprintf(ptemp, "cannot look at '%s': %s", dir, strerror(errno));
    }
    else if (geteuid() == 0) {
        /* Given through the descriptor: whatever the name points to by
         * now, only the directory opened is changed.  Done at every start,
         * also when nothing changes, so that an inode that cannot be
         * changed (immutable, read-only) is reported by the start. */
        if (fchown(fd, ap_unixd_config.user_id, ap_unixd_config.group_id) != 0) {
            why = apr_psprintf(ptemp, "cannot give '%s' to user %s: %s", dir,
                               ap_unixd_config.user_name, strerror(errno));
        }
    }
    else if (st.st_uid != geteuid()) {
        /* Started by its run user: the directory must be that user's, or
         * its owner could change what the watcher writes. */
        why = apr_psprintf(ptemp,
                           "'%s' belongs to uid %ld, not to the user httpd runs as "
                           "(uid %ld)",
                           dir, (long)st.st_uid, (long)geteuid());
    }
    if (!why && fchmod(fd, 0700) != 0) {
        why = apr_psprintf(ptemp, "cannot make '%s' mode 0700: %s", dir, strerror(errno));
    }
    close(fd);
    return why;
}

/* The store's meta key saying that the whole state directory was made
 * private (by this version: whatever it creates is private already). */
#define PRIVATE_META "statedir-private"

/* Make the state directory private down to depth levels; log what it did. */
static apr_status_t make_private(apr_pool_t *p, server_rec *s, int depth)
{
    const char *dir = rs_global.state_dir;
    rs_file_restrict_t r;
    apr_status_t rv = rs_file_restrict_tree(p, dir, depth, &r);

    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, rv, s,
                     RS_TAG
                     "watcher: cannot make every "
                     "entry of ResourceSyncStateDir '%s' private to the run user (directories "
                     "0700, files 0600)",
                     dir);
    }
    else if (r.changed) {
        ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, s,
                     RS_TAG "watcher: %" APR_INT64_T_FMT
                            " entries of ResourceSyncStateDir '%s' made private to the run user "
                            "(directories 0700, files 0600)",
                     r.changed, dir);
    }
    if (r.foreign || r.other) {
        ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, s,
                     RS_TAG "watcher: ResourceSyncStateDir "
                            "'%s' holds %" APR_INT64_T_FMT
                            " entries of other users and %" APR_INT64_T_FMT
                            " that are neither files nor directories; left as they "
                            "are",
                     dir, r.foreign, r.other);
    }
    return rv;
}

void rs_os_statedir_prepare(apr_pool_t *p, server_rec *s)
{
    const char *snap = rs_statedir_snapshots(p, rs_global.state_dir);

    /* The directory's own entries now: the store's -wal and -shm are made
     * with state.db's mode when SQLite opens it. */
    make_private(p, s, 1);
    if (mkdir(snap, 0700) != 0 && errno != EEXIST) {
        /* The snapshot job says it again with its own cause if it fails. */
        ap_log_error(APLOG_MARK, APLOG_DEBUG, APR_FROM_OS_ERROR(errno), s,
                     RS_TAG "watcher: cannot create '%s'", snap);
    }
}

void rs_os_statedir_private(apr_pool_t *p, server_rec *s, rs_db_t *store)
{
    const char *done = NULL;

    /* Everything below, once per store: a store of this version has the
     * key, and all that this version writes is private from the start.
     * A store without it (new, or of an older version) gets the walk. */
    if (rs_db_meta_get(store, p, PRIVATE_META, &done) != APR_SUCCESS || done) {
        return;
    }
    if (make_private(p, s, RS_FILE_ALL_LEVELS) == APR_SUCCESS) {
        rs_db_meta_put(store, PRIVATE_META, "1");
    }
}
