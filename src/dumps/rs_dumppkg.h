/* SPDX-License-Identifier: Apache-2.0 */
/* rs_dumppkg.h - a Resource Dump package's identity and its reuse.
 *
 * A package is named by a key derived from what it holds: the ordered
 * list of its entries (member name, size, mtime, type, encoding,
 * digests) and the options that shape its manifest (URL base, manifest's
 * rs:ln up, digest algorithms).  Two builds that cut the same entries
 * into a package give it the same key, and so the same URL
 * (<history>-<key>.zip).
 *
 * Files of a package in a dump generation directory (rs_statedir.h):
 *   <key>.zip   the package
 *   <key>.xml   a byte-identical copy of its manifest
 *   <key>.rec   its record: length, at, completed and the rs:md hash
 *               attribute, the facts resourcedump.xml lists about it,
 *               written last
 *
 * Reuse: a rebuild looks for the key in the generations still on disk
 * (newest first) and, when all three files are there, hard-links them
 * into the generation being built: no file of the set is read and the
 * package keeps its bytes, inode and mtime (so its ETag, which the
 * server derives from inode, size and mtime).  Because a key found on
 * disk is always reused, a URL never names two different byte strings
 * while both are on disk.  A package's manifest carries the at/completed
 * of the build that wrote it, kept in its record.
 */
#ifndef RS_DUMPPKG_H
#define RS_DUMPPKG_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>

#define RS_DUMPPKG_KEY_LEN 16 /* hex digits of a key */

/* Incremental computation of a key.  Lifecycle: init, then the manifest
 * options once (key_opts, key_mirrors), then every entry in package
 * order (key_entry, key_links), then final. */
typedef struct rs_dumppkg_key_t {
    void *ctx; /* EVP_MD_CTX (SHA-256) */
} rs_dumppkg_key_t;

/* Start a key; returns APR_ENOMEM if no digest context can be made. */
apr_status_t rs_dumppkg_key_init(rs_dumppkg_key_t *k);

/* Options shaping the manifest (url_base, its rs:ln up, hashes mask). */
void rs_dumppkg_key_opts(rs_dumppkg_key_t *k, const char *url_base, const char *up_url,
                         unsigned hashes);

/* The set's mirrors (rs_links_mirrors_describe; NULL or "": none), after
 * the options: every manifest entry carries them, so a change of the
 * mirrors gives every package another key.  A set without mirrors adds
 * nothing: its packages keep their keys. */
void rs_dumppkg_key_mirrors(rs_dumppkg_key_t *k, const char *mirrors);

/* One entry: member name, size, mtime (ns), type and encoding (each may
 * be NULL) and the hex digests listed (n of them, NULL ones skipped).  An
 * entry without an encoding gives the key it gave before encodings were
 * listed, so packages of such entries keep their keys. */
void rs_dumppkg_key_entry(rs_dumppkg_key_t *k, const char *member, apr_int64_t size,
                          apr_int64_t mtime_ns, const char *type, const char *encoding,
                          const char *const *hex, int n);

/* The links of the entry just added (its encoded rs:ln relations, NULL or
 * "" when it has none): its manifest entry writes them, so a package whose
 * files are unchanged but whose links changed (a target appeared, changed
 * or went; the rules changed) gets another key and is written again.  An
 * entry without links adds nothing: such packages keep their keys. */
void rs_dumppkg_key_links(rs_dumppkg_key_t *k, const char *links);

/* The key, RS_DUMPPKG_KEY_LEN lowercase hex digits, into out (at least
 * RS_DUMPPKG_KEY_LEN + 1 bytes); frees the context. */
void rs_dumppkg_key_final(rs_dumppkg_key_t *k, char *out);

/* A package's record (the <key>.rec file). */
typedef struct rs_dumppkg_rec_t {
    apr_off_t length;
    apr_time_t at, completed;
    const char *hash; /* rs:md hash attribute, NULL if none */
} rs_dumppkg_rec_t;

/* Write the record of package key into dir (fsynced).  Returns the
 * cause of a failure. */
apr_status_t rs_dumppkg_rec_write(apr_pool_t *p, const char *dir, const char *key,
                                  const rs_dumppkg_rec_t *rec);

/* Read the record of package key in dir.  APR_ENOENT when there is
 * none, APR_EGENERAL when it is malformed. */
apr_status_t rs_dumppkg_rec_read(apr_pool_t *p, const char *dir, const char *key,
                                 rs_dumppkg_rec_t *rec);

/* The published generation directories of dumpset, newest first (the
 * candidates for reuse and the places a package URL is looked up);
 * temporary directories are left out.  An unreadable dumpset gives an
 * empty array. */
apr_array_header_t *rs_dumppkg_gens(apr_pool_t *p, const char *dumpset);

/* Reuse package key: when one of the directories in gens holds its
 * three files, hard-link them into dir and fill rec from its record.
 * Returns APR_SUCCESS, APR_ENOENT (no complete copy anywhere: build it),
 * or the cause of a failed link (then nothing of it is left in dir). */
apr_status_t rs_dumppkg_reuse(apr_pool_t *p, const apr_array_header_t *gens, const char *dir,
                              const char *key, rs_dumppkg_rec_t *rec);

/* Withdraw every package that holds the member named member (its
 * manifest <key>.xml lists `path="/<member>"`), in every published
 * generation of dumpset: its three files are removed, so its URL
 * answers 404 at once, and the next build cannot reuse it (it writes a
 * package under another key when the file is no longer listed).
 * *removed gets the number of packages (counted once per key).  Returns
 * the cause of a failed removal. */
apr_status_t rs_dumppkg_withdraw(apr_pool_t *p, const char *dumpset, const char *member,
                                 int *removed);

/* Bytes on disk of every file in every directory of dumpset (published
 * generations and ones being built), a file with several links (a
 * package shared by generations) counted once.  0 if there is none. */
apr_int64_t rs_dumppkg_disk_bytes(apr_pool_t *p, const char *dumpset);

#endif
