/* SPDX-License-Identifier: Apache-2.0 */
/* rs_tool_owner.c - who rs-tool acts as inside a state directory.
 *
 * The state directory belongs to the user httpd runs as (the module gives
 * it to User/Group at every start), and that user can put anything under
 * any name in it: a symbolic link at a lock file, at a set's directory or
 * at a temporary file's name would make a tool running as root change,
 * remove or write whatever it points to.  So rs-tool, run as root, first
 * becomes the owner of the directory (its uid, its gid, that user's
 * supplementary groups), for good, before it opens anything inside it:
 * whatever it then does there, the owner could have done itself.  The
 * directory is opened without following a symbolic link (O_NOFOLLOW |
 * O_DIRECTORY) and its owner read from that descriptor.
 *
 * A state directory that belongs to root is left to root only when
 * nothing in it belongs to another user (one the module has never started
 * with, or a copy made by root); otherwise the tool refuses and says what
 * to do.  (The directory of an engine command's STATE.db, root's, may
 * hold anything: those commands touch only the files they are given.)
 * Run by any other user, the tool stays that user.
 *
 * backup writes its FILE as the invoking user: it keeps that identity in
 * a parent process and lets a child become the owner (rs_tool_state.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include <sys/stat.h>
#include "rs_tool_err.h"
#include "rs_tool_owner.h"

/* Why a root-owned directory open at fd must not be used as root: the
 * first entry of another owner, as "'name' belongs to uid N"; NULL if
 * none.  Static storage. */
static const char *foreign_entry(int fd)
{
    static char why[300];
    int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
    struct dirent *e;
    struct stat st;

    why[0] = '\0';
    if (!d) {
        if (dfd >= 0) {
            close(dfd);
        }
        return NULL;
    }
    while (!why[0] && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")
            && fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid != 0) {
            snprintf(why, sizeof(why), "'%.200s' in it belongs to uid %ld", e->d_name,
                     (long)st.st_uid);
        }
    }
    closedir(d);
    return why[0] ? why : NULL;
}

int rs_tool_as_owner(const char *cmd, const char *what, const char *dir, int whole)
{
    struct passwd *pw;
    struct stat st;
    const char *why;
    int fd, err;

    if (geteuid() != 0) {
        return RS_TOOL_OK;
    }
    if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        err = errno;
        if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode)) {
            return rs_tool_err(RS_TOOL_USAGE,
                               "%s: %s '%s' is a symbolic link: name the "
                               "directory itself",
                               cmd, what, dir);
        }
        return rs_tool_err(RS_TOOL_USAGE, "%s: %s '%s': %s", cmd, what, dir,
                           err == ENOTDIR ? "not a directory" : strerror(err));
    }
    if (fstat(fd, &st) != 0) {
        err = errno;
        close(fd);
        return rs_tool_err(RS_TOOL_FAIL, "%s: %s '%s': %s", cmd, what, dir, strerror(err));
    }
    if (st.st_uid == 0) {
        why = whole ? foreign_entry(fd) : NULL;
        close(fd);
        return !why ? RS_TOOL_OK
                    : rs_tool_err(
                        RS_TOOL_FAIL,
                        "%s: %s '%s' belongs to root, but %s: give the "
                        "directory to the user httpd runs as (httpd does at its start), or "
                        "run rs-tool as that user",
                        cmd, what, dir, why);
    }
    close(fd);
    /* The owner's supplementary groups (none when it has no passwd
     * entry), then its gid and uid: for good, real and effective. */
    pw = getpwuid(st.st_uid);
    if ((pw ? initgroups(pw->pw_name, st.st_gid) : setgroups(0, NULL)) != 0
        || setgid(st.st_gid) != 0 || setuid(st.st_uid) != 0 || geteuid() != st.st_uid
        || getuid() != st.st_uid) {
        return rs_tool_err(RS_TOOL_FAIL, "%s: cannot act as uid %ld, the owner of %s '%s': %s", cmd,
                           (long)st.st_uid, what, dir, strerror(errno));
    }
    return RS_TOOL_OK;
}
