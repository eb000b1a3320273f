/* SPDX-License-Identifier: Apache-2.0 */
/* rs_zip.h - one dump package: a ZIP file built with libzip.
 *
 * A package is `manifest.xml` (bytes given by the caller) as its first
 * member, at the top level, then one STORED member per resource, in the
 * order they were added.  Lifecycle:
 *
 *   rs_zip_create   names the target and takes the manifest
 *   rs_zip_add_*    records members; nothing is read yet (libzip reads
 *                   every source only while the package is written)
 *   rs_zip_finish   writes, checks, syncs and publishes the package; or
 *   rs_zip_write    writes and checks it (and starts its write-back), then
 *   rs_zip_publish  syncs and publishes it, so that a caller can write
 *                   the next package while this one reaches the disk
 *   rs_zip_abort    (or destroying the pool) drops an unfinished package
 *
 * Memory: what libzip keeps per member until the package is written
 * (about 390 bytes with libzip 1.7: its entry, directory entry, source
 * and name) and this module's member state (the member's name and path)
 * live until rs_zip_write returns; a written package waiting for
 * rs_zip_publish holds only its paths and digests.
 *
 * Atomic and durable: libzip writes `<dir>/.tmp-<name>` through a
 * buffered write source (rs_zipout: large writes, its header rewrites
 * patched in memory), rs_zip_finish fsyncs that file, renames it over the
 * target and fsyncs the directory.  The target is either absent/old or
 * complete; a failure leaves no temporary file behind (a crash may: such
 * names start with ".tmp-" and belong to whoever prunes the directory).
 *
 * Deterministic: every member's time comes from the caller (the file's
 * mtime, the manifest's own time), never from the clock; DOS date/time is
 * computed from UTC (clamped to 1980..2107) and an extended timestamp extra
 * field (0x5455, UTC mtime) is added when the time fits 32 signed bits.
 * (libzip keeps the time as a time_t and writes its local DOS fields: the
 * time_t given is the one whose local fields are those UTC fields, found
 * with localtime_r; only for a local time a DST change skips does libzip's
 * mktime pick it, and then the hour may move.)
 * Attributes are fixed (Unix, regular file 0644).  Building a package
 * twice from the same files and manifest gives identical bytes.
 *
 * One version per member: a member is read from offset 0 with exactly the
 * size the caller names.  When the file's size or mtime at open is not the
 * one the caller gives, it ends early, has bytes past that size, or its
 * inode change time moved during the copy, rs_zip_finish fails with
 * RS_ZIP_ECHANGED and names the member (rs_zip_error): the package never
 * holds a version its manifest does not describe.  The caller retries.
 *
 * Names: not empty, no leading '/', no empty, "." or ".." segment (so no
 * trailing '/'), no backslash or ':' (a separator or a drive to Windows
 * readers), refused with APR_EINVAL.  A name that is valid UTF-8 with
 * non-ASCII characters gets the language-encoding flag (bit 11); an ASCII
 * name needs none; a name that is not valid UTF-8 keeps its bytes and
 * leaves the flag off (readers may then show it as CP437; the manifest's
 * percent-encoded path names the bytes exactly).  A name used twice (also
 * "manifest.xml") is refused with APR_EEXIST.
 *
 * ZIP64 records are written by libzip when a package passes 4 GiB or
 * 65,535 members.
 */
#ifndef RS_ZIP_H
#define RS_ZIP_H

#include <apr_pools.h>
#include <apr_file_io.h>
#include "rs_beneath.h"
#include "rs_hash.h"

/* A member's file is not the version the caller described (see above). */
#define RS_ZIP_ECHANGED (APR_OS_START_USERERR + 40)
/* libzip failed without a system cause (rs_zip_error has its message). */
#define RS_ZIP_ELIBZIP (APR_OS_START_USERERR + 41)

/* Name of the manifest member. */
#define RS_ZIP_MANIFEST "manifest.xml"

typedef struct rs_zip_t rs_zip_t;

/* What rs_zip_finish reports about the published package. */
typedef struct rs_zip_result_t {
    apr_off_t length;                        /* bytes of the package */
    apr_uint64_t members;                    /* with the manifest */
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX]; /* digests, per algorithm bit */
} rs_zip_result_t;

/* Start the package that will be published at target (an absolute or
 * relative path whose directory exists).  manifest (len bytes) is copied;
 * mtime_ns is the manifest member's time (nanoseconds since the epoch).
 * The package lives in p; destroying p aborts it. */
apr_status_t rs_zip_create(rs_zip_t **z, const char *target, const void *manifest, apr_size_t len,
                           apr_int64_t mtime_ns, apr_pool_t *p);

/* The same with the manifest read from the file at path (when the package
 * is written, like any member: it must not change meanwhile), so that a
 * manifest of any size is never held in memory. */
apr_status_t rs_zip_create_path(rs_zip_t **z, const char *target, const char *manifest,
                                apr_int64_t mtime_ns, apr_pool_t *p);

/* Whether name may be a member name (see above). */
int rs_zip_name_ok(const char *name);

/* Whether name is valid UTF-8 with at least one non-ASCII character (the
 * member gets the language-encoding flag). */
int rs_zip_name_utf8(const char *name);

/* The member name of a file at rel (its path relative to a root, as the
 * bytes on disk) in a package: prefix + rel when rel is "portable", so
 * that the manifest's rs:md path names it literally ("/" + the member
 * name, as the specification shows it) and every common extractor makes
 * of it the same relative path; else escaped_prefix + rel percent-encoded
 * like a URI path (ASCII, so every reader shows the same name, and an
 * XML attribute can hold it), with the first character of a Windows
 * device name and the trailing dots of a segment encoded too.  rel is
 * portable when it is valid UTF-8 and holds no control character (C0,
 * DEL, C1), none of \ : * ? " < > | (Windows separators, drives,
 * streams and characters it refuses), none of the characters Windows'
 * best-fit conversion turns into those or into '.' or '/' (fullwidth
 * and small forms, solidus look-alikes, the yen and won signs), no
 * segment that ends with '.' or ' ' (Windows drops them: ". ." is "..")
 * and no segment that names a Windows device (CON, PRN, AUX, NUL,
 * COM0-9, LPT0-9, CONIN$, CONOUT$, CLOCK$, in any case, also before an
 * extension).  Distinct prefixes keep an encoded name from colliding
 * with a file whose name is literally that encoding.  The manifest's
 * <loc> names the resource either way. */
const char *rs_zip_member_name(apr_pool_t *p, const char *prefix, const char *escaped_prefix,
                               const char *rel);

/* Add a member read from path (opened when the package is written, closed
 * right after its copy, so any number of members may be added).  size and
 * mtime_ns describe the version the manifest lists. */
apr_status_t rs_zip_add_path(rs_zip_t *z, const char *name, const char *path, apr_off_t size,
                             apr_int64_t mtime_ns);

/* Add a member read from the file rel below tree (rs_beneath.h: no link
 * followed on the way, a FIFO or device never opened), opened when the
 * package is written; it must be the file a row lists -- device dev,
 * inode ino, size and mtime_ns -- else the package fails with
 * RS_ZIP_ECHANGED like a file changed while read.  tree must stay open
 * until the package is written. */
apr_status_t rs_zip_add_beneath(rs_zip_t *z, const char *name, rs_beneath_t *tree, const char *rel,
                                apr_off_t size, apr_int64_t mtime_ns, apr_int64_t dev,
                                apr_int64_t ino);

/* Add a member read from the open file f (read with pread from offset 0;
 * its offset is not used or moved).  f must stay open until rs_zip_finish
 * or rs_zip_abort returns. */
apr_status_t rs_zip_add_file(rs_zip_t *z, const char *name, apr_file_t *f, apr_off_t size,
                             apr_int64_t mtime_ns);

/* Write the package, fsync it, rename it over the target and fsync the
 * directory; res gets the digests of the published bytes with every
 * algorithm in hash_mask (RS_HASH_*), taken as the bytes were written
 * (rs_zipout.h), or by reading the package back when a member larger than
 * rs_zipout's buffer had its header rewritten after it.  On failure nothing is published, the temporary
 * files are removed and the cause is returned: the errno of a failed read
 * or write (ENOSPC, EFBIG, EIO...), RS_ZIP_ECHANGED, or RS_ZIP_ELIBZIP.
 * The package is done either way (add no more members). */
apr_status_t rs_zip_finish(rs_zip_t *z, unsigned hash_mask, rs_zip_result_t *res);

/* rs_zip_finish in two steps.  rs_zip_write writes the temporary file
 * (digesting it with every algorithm in hash_mask on the way out), frees
 * the members' state, and asks the kernel to start writing it back
 * (sync_file_range); *members (when not NULL) gets the member count.  On
 * failure it is like rs_zip_finish's.  rs_zip_publish, after a successful
 * rs_zip_write (any time later, from the same thread or another one
 * while nothing else uses z), fsyncs, renames over the target and fsyncs
 * the directory, filling res; on failure the temporary file is removed.
 * Either way the package is done (add no more members). */
apr_status_t rs_zip_write(rs_zip_t *z, unsigned hash_mask, apr_uint64_t *members);
apr_status_t rs_zip_publish(rs_zip_t *z, unsigned hash_mask, rs_zip_result_t *res);

/* Drop an unfinished package, written or not (no-op when finished). */
void rs_zip_abort(rs_zip_t *z);

/* A sentence about the last failure ("member x: changed while read",
 * libzip's message...), or NULL when there was none. */
const char *rs_zip_error(const rs_zip_t *z);

#endif
