/* SPDX-License-Identifier: Apache-2.0 */
/* rs_zip.c - see rs_zip.h */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <zip.h>
#include <apr_portable.h>
#include <apr_strings.h>
#include <apr_time.h>
#include "rs_beneath.h"
#include "rs_file.h"
#include "rs_zip.h"
#include "rs_zipout.h"
#include "rs_ziptime.h"

/* Every member's mode: a regular file, rw-r--r--, whatever the umask. */
#define FILE_MODE 0100644

/* One resource member: the libzip source callback's state.  libzip calls
 * OPEN, READ..., CLOSE while zip_close writes the package, and FREE when
 * the archive is closed or discarded. */
typedef struct member_t {
    rs_zip_t *z;
    const char *name;
    const char *path;   /* NULL: read from fd, the caller's, or below tree */
    rs_beneath_t *tree; /* with rel: opened below it (rs_beneath_open) */
    const char *rel;
    int fd;                     /* -1 when closed */
    apr_int64_t size, mtime_ns; /* of the version described (checked at open) */
    apr_int64_t dev, ino;       /* for a member below tree: the file listed */
    apr_int64_t ctime_ns;       /* at open */
    apr_int64_t done;           /* bytes handed to libzip */
    zip_error_t error;
} member_t;

/* Lifecycle: zip_begin opens the archive with the members' state (member_t,
 * the manifest's bytes, rs_zipout's buffer) in the subpool mp; rs_zip_write
 * closes the archive and destroys mp, so a written package waiting for
 * rs_zip_publish holds a few hundred bytes, not its members; publish (or
 * abort) closes fd and removes or renames tmp. */
struct rs_zip_t {
    apr_pool_t *p;
    apr_pool_t *mp; /* members' state; NULL once written or aborted */
    zip_t *za;      /* NULL once closed or discarded */
    const char *target, *tmp, *dir;
    apr_uint64_t members;
    apr_status_t cause; /* first failure seen by a member */
    const char *err;
    rs_zipout_t *out; /* where libzip writes (digests on the way out) */
    int fd;           /* tmp, written and not yet published; else -1 */
    int hashed;       /* hex/length hold the digests taken on the way out */
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    apr_off_t length;
};

static apr_int64_t ns_of(const struct timespec *ts)
{
    return (apr_int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static int fail(rs_zip_t *z, apr_status_t rv, const char *msg)
{
    if (z->cause == APR_SUCCESS) {
        z->cause = rv;
        z->err = msg;
    }
    return -1;
}

/* The member's file is not (or no longer) the version described. */
static zip_int64_t changed(member_t *m, const char *what)
{
    zip_error_set(&m->error, ZIP_ER_CHANGED, 0);
    return fail(m->z, RS_ZIP_ECHANGED, apr_psprintf(m->z->p, "member %s: %s", m->name, what));
}

static zip_int64_t sys_error(member_t *m, int ze, int err, const char *what)
{
    char buf[120];
    zip_error_set(&m->error, ze, err);
    return fail(m->z, APR_FROM_OS_ERROR(err),
                apr_psprintf(m->z->p, "member %s: %s: %s", m->name, what,
                             apr_strerror(APR_FROM_OS_ERROR(err), buf, sizeof(buf))));
}

/* Open a member below its tree: ENOENT is a file gone, a link, a
 * non-directory on the way or a non-regular file is another file than
 * the one listed (rs_beneath.h). */
static zip_int64_t member_open_beneath(member_t *m, struct stat *sb)
{
    m->fd = rs_beneath_open(m->tree, m->rel, sb);
    if (m->fd >= 0) {
        return 0;
    }
    switch (errno) {
    case ENOENT:
        return changed(m, "file gone");
    case ELOOP:
    case ENOTDIR:
    case EXDEV:
    case EINVAL:
        return changed(m, "a link or another kind of file is in its place");
    default:
        return sys_error(m, ZIP_ER_OPEN, errno, "open");
    }
}

static zip_int64_t member_open(member_t *m)
{
    struct stat sb;
    if (m->tree) {
        if (member_open_beneath(m, &sb) < 0) {
            return -1;
        }
        if (!rs_beneath_same(&sb, m->dev, m->ino, m->size, m->mtime_ns)) {
            return changed(m, "not the file listed (another device, inode, size or mtime)");
        }
    }
    else if (m->path) {
        /* Files the caller owns (captures, manifests): a link or a FIFO
         * in their place is refused, never followed or waited for. */
        m->fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        if (m->fd < 0) {
            int e = errno;
            return e == ENOENT  ? changed(m, "file gone")
                   : e == ELOOP ? changed(m, "a link is in its place")
                                : sys_error(m, ZIP_ER_OPEN, e, "open");
        }
    }
    if (fstat(m->fd, &sb) != 0) {
        return sys_error(m, ZIP_ER_READ, errno, "fstat");
    }
    if (!S_ISREG(sb.st_mode) || (apr_int64_t)sb.st_size != m->size
        || ns_of(&sb.st_mtim) != m->mtime_ns) {
        return changed(m, "not the version described");
    }
    m->ctime_ns = ns_of(&sb.st_ctim);
    m->done = 0;
    return 0;
}

/* After the last byte: nothing past size (unless the last read already
 * saw the end: eof), and no change during the copy. */
static zip_int64_t member_check_end(member_t *m, int eof)
{
    struct stat sb;
    char c;
    ssize_t n = 0;

    while (!eof) {
        n = pread(m->fd, &c, 1, (off_t)m->size);
        if (n >= 0 || errno != EINTR) {
            break;
        }
    }
    if (n < 0) {
        return sys_error(m, ZIP_ER_READ, errno, "read");
    }
    if (n > 0) {
        return changed(m, "grew while read");
    }
    if (fstat(m->fd, &sb) != 0) {
        return sys_error(m, ZIP_ER_READ, errno, "fstat");
    }
    if (ns_of(&sb.st_ctim) != m->ctime_ns || ns_of(&sb.st_mtim) != m->mtime_ns
        || (apr_int64_t)sb.st_size != m->size) {
        return changed(m, "changed while read");
    }
    return 0;
}

static zip_int64_t member_read(member_t *m, void *buf, zip_uint64_t len)
{
    apr_int64_t left = m->size - m->done;
    size_t want = len < (zip_uint64_t)left ? (size_t)len : (size_t)left;
    /* When the rest fits in libzip's buffer with a byte to spare, ask for
     * that byte too: a count short of it is the end of the file, and the
     * check after the copy needs no read of its own (most members). */
    size_t ask = (zip_uint64_t)want < len ? want + 1 : want;
    ssize_t n;

    if (want == 0) {
        return 0;
    }
    do {
        n = pread(m->fd, buf, ask, (off_t)m->done);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        return sys_error(m, ZIP_ER_READ, errno, "read");
    }
    if (n == 0) {
        return changed(m, "shrank while read");
    }
    if ((size_t)n > want) {
        return changed(m, "grew while read");
    }
    m->done += n;
    if (m->done == m->size && member_check_end(m, ask > want) < 0) {
        return -1;
    }
    return n;
}

static void member_close(member_t *m)
{
    if ((m->path || m->tree) && m->fd >= 0) {
        close(m->fd);
        m->fd = -1;
    }
}

static zip_int64_t member_cb(void *baton, void *data, zip_uint64_t len, zip_source_cmd_t cmd)
{
    member_t *m = baton;
    zip_stat_t *st;

    switch (cmd) {
    case ZIP_SOURCE_OPEN:
        return member_open(m);
    case ZIP_SOURCE_READ:
        return member_read(m, data, len);
    case ZIP_SOURCE_CLOSE:
        member_close(m);
        return 0;
    case ZIP_SOURCE_STAT:
        st = ZIP_SOURCE_GET_ARGS(zip_stat_t, data, len, &m->error);
        if (!st) {
            return -1;
        }
        zip_stat_init(st);
        st->size = (zip_uint64_t)m->size;
        st->mtime = (time_t)(m->mtime_ns / 1000000000);
        st->valid |= ZIP_STAT_SIZE | ZIP_STAT_MTIME;
        return sizeof(*st);
    case ZIP_SOURCE_ERROR:
        return zip_error_to_data(&m->error, data, len);
    case ZIP_SOURCE_FREE:
        member_close(m);
        zip_error_fini(&m->error);
        return 0;
    case ZIP_SOURCE_SUPPORTS:
        return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE,
                                              ZIP_SOURCE_STAT, ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE,
                                              -1);
    default:
        zip_error_set(&m->error, ZIP_ER_OPNOTSUPP, 0);
        return -1;
    }
}

static apr_status_t zip_status(rs_zip_t *z, zip_error_t *ze)
{
    if (z->cause != APR_SUCCESS) {
        return z->cause;
    }
    z->err = apr_pstrdup(z->p, zip_error_strerror(ze));
    if (zip_error_system_type(ze) == ZIP_ET_SYS && zip_error_code_system(ze) != 0) {
        return APR_FROM_OS_ERROR(zip_error_code_system(ze));
    }
    return zip_error_code_zip(ze) == ZIP_ER_EXISTS ? APR_EEXIST : RS_ZIP_ELIBZIP;
}

/* Store method, time and attributes of member idx: what makes the bytes
 * independent of the clock, the time zone and the umask. */
static apr_status_t set_entry(rs_zip_t *z, zip_int64_t idx, apr_int64_t mtime_ns)
{
    if (zip_set_file_compression(z->za, (zip_uint64_t)idx, ZIP_CM_STORE, 0) != 0
        || rs_ziptime_set(z->za, (zip_uint64_t)idx, mtime_ns) != 0
        || zip_file_set_external_attributes(z->za, (zip_uint64_t)idx, 0, ZIP_OPSYS_UNIX,
                                            (zip_uint32_t)FILE_MODE << 16)
               != 0) {
        return zip_status(z, zip_get_error(z->za));
    }
    return APR_SUCCESS;
}

static apr_status_t add_source(rs_zip_t *z, const char *name, zip_source_t *src,
                               apr_int64_t mtime_ns)
{
    zip_flags_t enc = rs_zip_name_utf8(name) ? ZIP_FL_ENC_UTF_8 : ZIP_FL_ENC_CP437;
    zip_int64_t idx = zip_file_add(z->za, name, src, enc);
    if (idx < 0) {
        zip_source_free(src);
        return zip_status(z, zip_get_error(z->za));
    }
    z->members++;
    return set_entry(z, idx, mtime_ns);
}

/* mp's cleanup: an archive never written is discarded (libzip frees the
 * members' sources, whose state is in mp: so before mp's memory goes). */
static apr_status_t members_cleanup(void *data)
{
    rs_zip_t *z = data;
    if (z->za) {
        zip_discard(z->za);
        z->za = NULL;
        unlink(z->tmp);
    }
    return APR_SUCCESS;
}

/* p's cleanup while a written package waits: it is removed. */
static apr_status_t written_cleanup(void *data)
{
    rs_zip_t *z = data;
    if (z->fd >= 0) {
        close(z->fd);
        z->fd = -1;
        unlink(z->tmp);
    }
    return APR_SUCCESS;
}

/* The empty archive writing to target's temporary file, in *zp. */
static apr_status_t zip_begin(rs_zip_t **zp, const char *target, apr_pool_t *p)
{
    rs_zip_t *z = apr_pcalloc(p, sizeof(*z));
    const char *slash = strrchr(target, '/');
    zip_source_t *out;
    zip_error_t ze;
    apr_status_t rv;

    z->p = p;
    z->fd = -1;
    z->target = apr_pstrdup(p, target);
    z->dir = slash ? apr_pstrndup(p, target, (apr_size_t)(slash - target)) : ".";
    if (!*z->dir) {
        z->dir = "/";
    }
    z->tmp = apr_pstrcat(p, slash ? z->dir : ".", "/.tmp-", slash ? slash + 1 : target, NULL);
    apr_file_remove(z->tmp, p); /* left by a crash */
    zip_error_init(&ze);
    apr_pool_create(&z->mp, p);
    out = rs_zipout_source(z->tmp, z->mp, &ze, &z->out);
    z->za = out ? zip_open_from_source(out, ZIP_CREATE | ZIP_TRUNCATE, &ze) : NULL;
    if (!z->za) {
        if (out) {
            zip_source_free(out);
        }
        rv = zip_status(z, &ze);
        zip_error_fini(&ze);
        apr_pool_destroy(z->mp);
        return rv;
    }
    zip_error_fini(&ze);
    apr_pool_cleanup_register(z->mp, z, members_cleanup, apr_pool_cleanup_null);
    *zp = z;
    return APR_SUCCESS;
}

apr_status_t rs_zip_create(rs_zip_t **zp, const char *target, const void *manifest, apr_size_t len,
                           apr_int64_t mtime_ns, apr_pool_t *p)
{
    rs_zip_t *z;
    zip_source_t *src;
    apr_status_t rv = zip_begin(zp, target, p);

    if (rv != APR_SUCCESS) {
        return rv;
    }
    z = *zp;
    src = zip_source_buffer(z->za, apr_pmemdup(z->mp, manifest, len), len, 0);
    rv = src ? add_source(z, RS_ZIP_MANIFEST, src, mtime_ns) : zip_status(z, zip_get_error(z->za));
    if (rv != APR_SUCCESS) {
        rs_zip_abort(z);
    }
    return rv;
}

/* A new member read from path (or fd, or below a tree: set by the
 * caller): size and mtime_ns describe the version read (checked at
 * open).  NULL when the name is refused (z->err says why). */
static member_t *member_new(rs_zip_t *z, const char *name, const char *path, int fd, apr_off_t size,
                            apr_int64_t mtime_ns)
{
    member_t *m;

    if (!z->za || size < 0) {
        return NULL;
    }
    if (!rs_zip_name_ok(name)) {
        z->err = apr_psprintf(z->p, "member name refused: %s", name ? name : "(null)");
        return NULL;
    }
    m = apr_pcalloc(z->mp, sizeof(*m));
    m->z = z;
    m->name = apr_pstrdup(z->mp, name);
    m->path = path ? apr_pstrdup(z->mp, path) : NULL;
    m->fd = fd;
    m->size = size;
    m->mtime_ns = mtime_ns;
    return m;
}

/* Add member m, whose entry's time is entry_ns. */
static apr_status_t add_member(rs_zip_t *z, member_t *m, apr_int64_t entry_ns)
{
    zip_source_t *src;

    if (!m) {
        return APR_EINVAL;
    }
    zip_error_init(&m->error);
    src = zip_source_function(z->za, member_cb, m);
    if (!src) {
        zip_error_fini(&m->error);
        return zip_status(z, zip_get_error(z->za));
    }
    return add_source(z, m->name, src, entry_ns);
}

apr_status_t rs_zip_add_path(rs_zip_t *z, const char *name, const char *path, apr_off_t size,
                             apr_int64_t mtime_ns)
{
    return add_member(z, member_new(z, name, path, -1, size, mtime_ns), mtime_ns);
}

apr_status_t rs_zip_add_beneath(rs_zip_t *z, const char *name, rs_beneath_t *tree, const char *rel,
                                apr_off_t size, apr_int64_t mtime_ns, apr_int64_t dev,
                                apr_int64_t ino)
{
    member_t *m = member_new(z, name, NULL, -1, size, mtime_ns);
    if (m) {
        m->tree = tree;
        m->rel = apr_pstrdup(z->mp, rel);
        m->dev = dev;
        m->ino = ino;
    }
    return add_member(z, m, mtime_ns);
}

apr_status_t rs_zip_add_file(rs_zip_t *z, const char *name, apr_file_t *f, apr_off_t size,
                             apr_int64_t mtime_ns)
{
    apr_os_file_t fd;
    apr_status_t rv = apr_os_file_get(&fd, f);
    return rv != APR_SUCCESS
               ? rv
               : add_member(z, member_new(z, name, NULL, fd, size, mtime_ns), mtime_ns);
}

apr_status_t rs_zip_create_path(rs_zip_t **zp, const char *target, const char *manifest,
                                apr_int64_t mtime_ns, apr_pool_t *p)
{
    struct stat sb;
    apr_status_t rv;

    if (stat(manifest, &sb) != 0) {
        return APR_FROM_OS_ERROR(errno);
    }
    if ((rv = zip_begin(zp, target, p)) != APR_SUCCESS) {
        return rv;
    }
    rv = add_member(
        *zp,
        member_new(*zp, RS_ZIP_MANIFEST, manifest, -1, (apr_off_t)sb.st_size, ns_of(&sb.st_mtim)),
        mtime_ns);
    if (rv != APR_SUCCESS) {
        rs_zip_abort(*zp);
    }
    return rv;
}

apr_status_t rs_zip_write(rs_zip_t *z, unsigned hash_mask, apr_uint64_t *members)
{
    apr_status_t rv;

    if (!z->za) {
        return APR_EINVAL;
    }
    rs_zipout_hash(z->out, hash_mask);
    if (zip_close(z->za) != 0) {
        rv = zip_status(z, zip_get_error(z->za));
        rs_zip_abort(z);
        return rv;
    }
    z->za = NULL;
    z->hashed = rs_zipout_digests(z->out, z->hex, &z->length);
    apr_pool_destroy(z->mp); /* libzip freed the sources with the archive */
    z->mp = NULL;
    if (members) {
        *members = z->members;
    }
    z->fd = open(z->tmp, O_RDONLY | O_CLOEXEC);
    if (z->fd < 0 || fchmod(z->fd, 0600) != 0) {
        rv = APR_FROM_OS_ERROR(errno);
        if (z->fd >= 0) {
            close(z->fd);
            z->fd = -1;
        }
        unlink(z->tmp);
        return rv;
    }
    apr_pool_cleanup_register(z->p, z, written_cleanup, apr_pool_cleanup_null);
    /* Start the write-back now; rs_zip_publish's fsync then waits only
     * for what is left.  Advisory: a failure here is seen by the fsync. */
    sync_file_range(z->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
    return APR_SUCCESS;
}

/* The written temporary file: fsynced, digested (read back only when the
 * digests taken while it was written were given up, rs_zipout.h), renamed
 * over the target, directory fsynced. */
apr_status_t rs_zip_publish(rs_zip_t *z, unsigned hash_mask, rs_zip_result_t *res)
{
    apr_status_t rv = APR_SUCCESS;

    if (z->fd < 0) {
        return APR_EINVAL;
    }
    res->members = z->members;
    if (fsync(z->fd) != 0) {
        rv = APR_FROM_OS_ERROR(errno);
    }
    else if (z->hashed) {
        memcpy(res->hex, z->hex, sizeof(res->hex));
        res->length = z->length;
    }
    else {
        rv = rs_hash_fd(z->fd, hash_mask, res->hex, &res->length);
    }
    close(z->fd);
    z->fd = -1;
    apr_pool_cleanup_kill(z->p, z, written_cleanup);
    if (rv == APR_SUCCESS && rename(z->tmp, z->target) != 0) {
        rv = APR_FROM_OS_ERROR(errno);
    }
    if (rv == APR_SUCCESS) {
        rv = rs_file_sync_dir(z->dir);
    }
    else {
        unlink(z->tmp);
    }
    if (rv != APR_SUCCESS && !z->err) {
        z->err = "publishing the package failed";
    }
    return rv;
}

apr_status_t rs_zip_finish(rs_zip_t *z, unsigned hash_mask, rs_zip_result_t *res)
{
    apr_status_t rv;

    memset(res, 0, sizeof(*res));
    rv = rs_zip_write(z, hash_mask, NULL);
    return rv != APR_SUCCESS ? rv : rs_zip_publish(z, hash_mask, res);
}

void rs_zip_abort(rs_zip_t *z)
{
    if (z->mp) {
        apr_pool_destroy(z->mp); /* members_cleanup discards the archive */
        z->mp = NULL;
    }
    if (z->fd >= 0) {
        apr_pool_cleanup_run(z->p, z, written_cleanup);
    }
}

const char *rs_zip_error(const rs_zip_t *z)
{
    return z->err;
}
