/* SPDX-License-Identifier: Apache-2.0 */
/* rs_zipout.h - where libzip writes a package: a buffered write source.
 *
 * libzip writes an archive through a write source.  Its own file source
 * goes through stdio, and for every member libzip writes the local
 * header and the data, seeks back to rewrite the header once the CRC is
 * known, then seeks to the end again: each seek an lseek(2) plus a
 * read(2) refilling stdio's buffer, about seven system calls a member.
 * This source keeps the newest bytes written in memory (up to
 * RS_ZIPOUT_BUF): a seek back into them patches memory, and the file is
 * written with a few large pwrite(2) calls.  A seek before the buffer (a
 * member larger than what the buffer keeps) writes the buffer out and
 * goes on at the new position, so any archive is written correctly.
 *
 * Lifecycle: rs_zipout_source makes the source and opens nothing; hand
 * it to zip_open_from_source (ZIP_CREATE | ZIP_TRUNCATE: it reports the
 * file as absent).  libzip's BEGIN_WRITE (in zip_close) creates path
 * (truncated, mode 0644), WRITE / SEEK_WRITE / TELL_WRITE fill it,
 * COMMIT_WRITE writes out the buffer and closes the file, ROLLBACK_WRITE
 * closes and removes it.  Durability is the caller's (rs_zip fsyncs
 * before it publishes).  libzip frees the source with the archive (FREE
 * closes and removes a file still open: a write that was never
 * committed).  A failed write keeps its errno in libzip's error
 * (ZIP_ER_WRITE, a system error), so ENOSPC and EIO reach the caller.
 *
 * Digests on the way out: the bytes are digested as they are written out,
 * in file order.  Bytes written out are final unless libzip later seeks
 * before them (a header rewrite of a member larger than the buffer); then
 * the digests are given up and rs_zipout_digests says so, and the caller
 * reads the file back.  So a package of small members is read once, from
 * its members, and never from itself.  The digests run on a thread of
 * their own, started at the first write-out (a package larger than
 * RS_ZIPOUT_BUF - RS_ZIPOUT_KEEP) and joined before COMMIT_WRITE returns
 * or the digests are given up: each written-out chunk is copied for it
 * (one chunk in flight), so the digest takes a second core while libzip
 * goes on copying members.  Nothing of the thread outlives the write.
 */
#ifndef RS_ZIPOUT_H
#define RS_ZIPOUT_H

#include <zip.h>
#include <apr_pools.h>
#include "rs_hash.h"

#define RS_ZIPOUT_BUF  (1024 * 1024) /* bytes kept in memory */
#define RS_ZIPOUT_KEEP (256 * 1024)  /* kept after the buffer is written out */

typedef struct rs_zipout_t rs_zipout_t;

/* A write source for the archive at path; its state and buffer live in
 * p, which must outlive the archive; *out (when not NULL) is the handle
 * for rs_zipout_hash and rs_zipout_digests.  NULL (error set in ze) when
 * libzip cannot make the source. */
zip_source_t *rs_zipout_source(const char *path, apr_pool_t *p, zip_error_t *ze, rs_zipout_t **out);

/* Digest what is written with every algorithm in mask; call before the
 * write begins (zip_close), at most once. */
void rs_zipout_hash(rs_zipout_t *o, unsigned mask);

/* After a committed write: 1 with the digests of the whole file in hex
 * and its length in *len, or 0 when they were given up (see above) or
 * the write was not committed. */
int rs_zipout_digests(const rs_zipout_t *o, char hex[RS_HASH_COUNT][RS_HASH_HEXMAX],
                      apr_off_t *len);

#endif
