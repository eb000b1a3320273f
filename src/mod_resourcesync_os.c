/* mod_resourcesync_os.c - the state directory on disk: whether it can be
 * used, its creation and its ownership.
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
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <apr_strings.h>
#include <unixd.h>
#include "mod_resourcesync.h"
#include "rs_statedir.h"

/* NULL if path (absolute) is a usable directory or could be created: it
 * exists as a directory this process may write into, or the nearest
 * existing ancestor is such a directory.  Else why not, in p.  As root,
 * access() ignores mode bits but still refuses a read-only file system
 * (EROFS) and an immutable inode (EPERM), which stop the creation and the
 * chown of the start. */
static const char *usable(apr_pool_t *p, const char *path)
{
    char *at = apr_pstrdup(p, path);
    struct stat st;
    int self = 1;

    for (;;) {
        if (stat(at, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                return self ? apr_psprintf(p, "'%s' exists and is not a directory", at)
                            : apr_psprintf(p, "cannot create '%s': '%s' is not a directory",
                                           path, at);
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
    const char *why = usable(ptemp, dir);

    return why ? why : usable(ptemp, rs_statedir_snapshots(ptemp, dir));
}

const char *rs_os_statedir_make(apr_pool_t *ptemp, const char *dir)
{
    const char *paths[2];
    apr_status_t rv;
    char buf[256];
    int i;

    paths[0] = dir;
    paths[1] = rs_statedir_snapshots(ptemp, dir);
    rv = apr_dir_make_recursive(paths[1], APR_FPROT_OS_DEFAULT, ptemp);
    if (rv != APR_SUCCESS) {
        return apr_psprintf(ptemp, "cannot create '%s': %s", dir,
                            apr_strerror(rv, buf, sizeof(buf)));
    }
    if (geteuid() != 0) {
        /* Started by its run user: nothing to give away, but the watcher
         * (the same user) must be able to write. */
        if (access(dir, W_OK | X_OK) != 0) {
            return apr_psprintf(ptemp, "'%s' is not writable by this user: %s", dir,
                                strerror(errno));
        }
        return NULL;
    }
    for (i = 0; i < 2; i++) {
        if (chown(paths[i], ap_unixd_config.user_id, ap_unixd_config.group_id) != 0) {
            return apr_psprintf(ptemp, "cannot give '%s' to user %s: %s", paths[i],
                                ap_unixd_config.user_name, strerror(errno));
        }
    }
    if (chmod(dir, 0750) != 0) {
        return apr_psprintf(ptemp, "cannot make '%s' mode 0750: %s", dir, strerror(errno));
    }
    return NULL;
}
