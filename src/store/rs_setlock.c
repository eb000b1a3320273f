/* SPDX-License-Identifier: Apache-2.0 */
/* rs_setlock.c - see rs_setlock.h */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "rs_setlock.h"
#include "rs_statedir.h"

/* Open (create) the set's lock file, creating <statedir>/locks first;
 * mode O_RDONLY for a shared lock, O_RDWR for an exclusive one.  Both are
 * the run user's only: the watcher and rs-tool (which acts as the state
 * directory's owner) create them as that user. */
static int open_lock(apr_pool_t *p, const char *statedir, const char *set, int mode)
{
    const char *path = rs_statedir_setlock(p, statedir, set);
    const char *dir = rs_statedir_locks(p, statedir);
    int fd = open(path, mode | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

    if (fd < 0 && errno == ENOENT) {
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            return -1;
        }
        fd = open(path, mode | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    }
    return fd;
}

static void whole_file(struct flock *fl, short type)
{
    memset(fl, 0, sizeof(*fl));
    fl->l_type = type;
    fl->l_whence = SEEK_SET;
}

apr_status_t rs_setlock_hold(apr_pool_t *p, const char *statedir, const char *set)
{
    struct flock fl;
    int rc, fd = open_lock(p, statedir, set, O_RDONLY);

    if (fd < 0) {
        return errno;
    }
    whole_file(&fl, F_RDLCK);
    do {
        rc = fcntl(fd, F_SETLKW, &fl);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        rc = errno;
        close(fd);
        return rc;
    }
    return APR_SUCCESS;
}

apr_status_t rs_setlock_take(apr_pool_t *p, const char *statedir, const char *set, int *fd,
                             long *holder)
{
    struct flock fl;
    int rc;

    *holder = 0;
    if ((*fd = open_lock(p, statedir, set, O_RDWR)) < 0) {
        return errno;
    }
    whole_file(&fl, F_WRLCK);
    if (fcntl(*fd, F_SETLK, &fl) == 0) {
        return APR_SUCCESS;
    }
    rc = errno;
    if (rc == EAGAIN || rc == EACCES) {
        whole_file(&fl, F_WRLCK);
        if (fcntl(*fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK) {
            *holder = (long)fl.l_pid;
        }
        rc = APR_EAGAIN;
    }
    close(*fd);
    *fd = -1;
    return rc;
}
