/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hash.h - content digests for rs:md/@hash, computed with OpenSSL EVP.
 *
 * The algorithm names are those of the ResourceSync specification (section
 * 7, `hash` attribute): md5, sha-1, sha-256, sha-512.  A configuration holds
 * a bit mask of RS_HASH_* values; the hash attribute lists the digests in
 * the fixed order of this table, space separated, "name:hex".
 */
#ifndef RS_HASH_H
#define RS_HASH_H

#include <apr_pools.h>
#include <apr_file_io.h>

#define RS_HASH_MD5    0x1
#define RS_HASH_SHA1   0x2
#define RS_HASH_SHA256 0x4
#define RS_HASH_SHA512 0x8
#define RS_HASH_COUNT  4
#define RS_HASH_HEXMAX 129 /* sha-512 hex + NUL */

/* Name of algorithm i (0 .. RS_HASH_COUNT-1), e.g. "sha-256". */
const char *rs_hash_name(int i);

/* Map a name (case-insensitive) to its RS_HASH_* bit; 0 if unknown. */
unsigned rs_hash_bit(const char *name);

/* Digest everything read from fd (from its current offset) with every
 * algorithm in mask.  hex[i] receives the lowercase hex digest for
 * algorithm i when bit i is set.  *nread gets the number of bytes read.
 * Returns APR_SUCCESS or the errno of a failed read. */
apr_status_t rs_hash_fd(int fd, unsigned mask, char hex[RS_HASH_COUNT][RS_HASH_HEXMAX],
                        apr_off_t *nread);

/* rs_hash_fd, and *progress (when not NULL) set to the bytes read so far
 * after every read, for another thread to watch. */
apr_status_t rs_hash_fd_progress(int fd, unsigned mask, char hex[RS_HASH_COUNT][RS_HASH_HEXMAX],
                                 apr_off_t *nread, volatile apr_int64_t *progress);

/* rs_hash_fd_progress, and every byte read also written to outfd (when
 * >= 0): a copy made by the same read.  A failed write stops the copy
 * but not the digests: *copy_err gets its errno (0: the copy is whole). */
apr_status_t rs_hash_fd_tee(int fd, unsigned mask, char hex[RS_HASH_COUNT][RS_HASH_HEXMAX],
                            apr_off_t *nread, volatile apr_int64_t *progress, int outfd,
                            int *copy_err);

/* rs_hash_fd_tee, but when expect >= 0 the reading stops as soon as
 * exactly expect bytes are read, without the read that would find the
 * end (beyond expect it reads to the end as usual): for a file whose
 * size the caller knows and checks again afterwards (a file that grew
 * meanwhile shows a new size; one that shrank ends early). */
apr_status_t rs_hash_fd_upto(int fd, unsigned mask, char hex[RS_HASH_COUNT][RS_HASH_HEXMAX],
                             apr_off_t expect, apr_off_t *nread, volatile apr_int64_t *progress,
                             int outfd, int *copy_err);

/* The digest algorithms are fetched from OpenSSL once per process and
 * kept; this frees them when pool p goes (for a process that unloads
 * the code, as httpd does with its modules at a restart or shutdown: the
 * pool is its configuration pool, cleared when no digest is being
 * computed).  A later digest fetches them again. */
void rs_hash_forget_on(apr_pool_t *p);

/* Incremental digests with every algorithm of a mask: rs_hash_begin,
 * any number of rs_hash_update, then exactly one rs_hash_end (which frees
 * the contexts; hex[i] is filled for each bit i when ok). */
typedef struct rs_hash_ctx_t {
    void *md[RS_HASH_COUNT]; /* EVP_MD_CTX *, NULL when not in the mask */
} rs_hash_ctx_t;
void rs_hash_begin(rs_hash_ctx_t *c, unsigned mask);
void rs_hash_update(rs_hash_ctx_t *c, const void *data, apr_size_t len);
void rs_hash_end(rs_hash_ctx_t *c, char hex[RS_HASH_COUNT][RS_HASH_HEXMAX], int ok);

/* Digest a memory buffer (used for document ETags and unit tests). */
void rs_hash_buf(const void *data, apr_size_t len, unsigned mask,
                 char hex[RS_HASH_COUNT][RS_HASH_HEXMAX]);

/* Build the value of a hash attribute ("md5:... sha-256:...") from hex
 * digests (NULL entries are skipped).  Returns NULL when empty. */
char *rs_hash_attr(apr_pool_t *p, unsigned mask, const char *const hex[RS_HASH_COUNT]);

#endif
