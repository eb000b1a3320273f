/* SPDX-License-Identifier: Apache-2.0 */
/* rs_blob.h - the files of a published generation directory, kept in the
 * store so that other nodes can serve them byte-identical.
 *
 * With a store several nodes share (PostgreSQL) one node writes a set and
 * every node serves its documents: same URL, same bytes, same strong ETag
 * (size and mtime, see rs_answer_file).  A document such as a
 * Resource List cannot be derived on another node (its `at`, the
 * inventory read, the parts' cuts are the writer's), so the writer puts
 * every file of a generation directory (snapshots/<set>/<gen>/) into the
 * store and the other nodes copy them out into their own state
 * directory.  Tables (schema version 10), keyed by set and kind (the area
 * of the state directory: "snap" for Resource List snapshots, "dump" for
 * Resource Dumps, "cdump" for the Change Dump directory (rs_followcdump),
 * "topic-<topic>" for the notification topics):
 *
 *   blobfiles   one row per file of a generation: name, size, mtime (µs),
 *               and where its bytes are: (src_gen, src_name), the
 *               generation and name whose chunks hold them: the file
 *               itself (src_gen = gen, src_name = name), or a file of an
 *               earlier generation it is the same file as (a Resource
 *               List part kept by a hard link: a reference, no bytes
 *               again);
 *   blobchunks  the bytes of a file, in chunks of at most RS_BLOB_CHUNK
 *               bytes numbered from 0 (none for an empty file), BYTEA on
 *               PostgreSQL, BLOB on SQLite, passed as binary values.
 *
 * Why references and not digests: a kept part is known as such by its
 * writer (the hard link rs_snapparts made), so storing a generation reads
 * and sends only the files written anew: its cost is the changed parts',
 * like the snapshot's own.  A digest would read every byte of every kept
 * part at every generation to find it unchanged.
 *
 * Lifecycle: rs_blob_put in the writer's transaction that records the
 * generation (the same commit: a reader never sees a generation without
 * its files); rs_blob_drop when the writer removes the generation's
 * directory, also in a fenced transaction: its rows go, and the chunks
 * of every file no remaining row names as (src_gen, src_name); so the
 * rows are bounded by the generations on the writer's disk plus the kept
 * files they name.  Readers (rs_blob_files, rs_blob_copy, rs_blob_replay)
 * hold one chunk in memory at a time, as does rs_blob_put.
 *
 * Invariant: a row names a source whose chunks exist, and chunks exist
 * only while some row names them (rs_blob_put refers only to a source
 * that some row names, with the same size and mtime).
 */
#ifndef RS_BLOB_H
#define RS_BLOB_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_file_io.h>
#include "rs_db.h"

/* A put tells the other nodes at its commit (rs_db_notify on
 * RS_JOURNAL_CHANNEL, the channel their LISTEN session follows) with the
 * payload RS_BLOB_NOTIFY "<set>": the set's stored documents changed, so
 * a follower looks at once instead of waiting for its next poll. */
#define RS_BLOB_NOTIFY "docs:"

/* The largest chunk of bytes in one row. */
#define RS_BLOB_CHUNK (1024 * 1024)

/* One file of a stored generation. */
typedef struct rs_blob_file_t {
    const char *name;
    apr_off_t size;
    apr_time_t mtime; /* µs, as apr_stat gives it */
    apr_uint64_t src_gen;
    const char *src_name;
} rs_blob_file_t;

/* What a put or replay did (counts and bytes of the files). */
typedef struct rs_blob_stats_t {
    int files;       /* files in the generation */
    int refs;        /* of them: stored as a reference / copied as a hard link */
    apr_off_t bytes; /* bytes sent to the store / read from it */
} rs_blob_stats_t;

/* The tables' DDL of schema version (rs_schema.h), NULL for versions
 * without a step; the tables. */
const char *const *rs_blob_schema(int version);
const char *const *rs_blob_tables(void);

/* For a file name of the directory being stored: the generation and name
 * of an earlier generation's file it is the same file as (*gen set), or
 * NULL when it is none's. */
typedef const char *rs_blob_origin_fn(void *baton, apr_pool_t *p, const char *name,
                                      apr_uint64_t *gen);

/* Store every regular file of dir (not starting with '.') as generation
 * gen of (set, kind), inside the caller's open transaction (fenced: the
 * writer's).  A file that origin names as an earlier file is stored as a
 * reference when the store holds that file with the same size and mtime;
 * any other file's bytes are read and stored in chunks.  st (may be NULL)
 * gets what was done.  A file that cannot be read fails it (the caller
 * rolls back). */
apr_status_t rs_blob_put(rs_db_t *db, apr_pool_t *p, const char *set, const char *kind,
                         apr_uint64_t gen, const char *dir, rs_blob_origin_fn *origin, void *baton,
                         rs_blob_stats_t *st);

/* Store the one regular file at path as the file name of generation gen
 * of (set, kind), inside the caller's open (fenced) transaction: its row
 * (the file's size and mtime now) and its bytes in chunks.  *bytes (may
 * be NULL) gets the bytes sent. */
apr_status_t rs_blob_put_file(rs_db_t *db, apr_pool_t *p, const char *set, const char *kind,
                              apr_uint64_t gen, const char *path, const char *name,
                              apr_off_t *bytes);

/* The file of the newest generation of (set, kind) (the first by name
 * when it has several), in p; *gen its generation.  APR_ENOENT when the
 * store holds no file of (set, kind). */
apr_status_t rs_blob_latest(rs_db_t *db, apr_pool_t *p, const char *set, const char *kind,
                            rs_blob_file_t *out, apr_uint64_t *gen);

/* The files of generation gen of (set, kind), rs_blob_file_t in name
 * order (in p); an empty array when the store has none. */
apr_status_t rs_blob_files(rs_db_t *db, apr_pool_t *p, const char *set, const char *kind,
                           apr_uint64_t gen, apr_array_header_t **out);

/* Write the bytes of file f (its source's chunks, in order) to out.
 * APR_EINCOMPLETE when the chunks are missing or do not add up to
 * f->size (a source dropped meanwhile). */
apr_status_t rs_blob_copy(rs_db_t *db, const char *set, const char *kind, const rs_blob_file_t *f,
                          apr_file_t *out);

/* Whether path is a regular file (no link followed) of f's size and mtime:
 * the file f names, written already. */
int rs_blob_is_file(apr_pool_t *p, const char *path, const rs_blob_file_t *f);

/* Make path file f of (set, kind): nothing when it is already
 * (rs_blob_is_file, *written 0), else f's bytes and mtime written over it
 * atomically (temporary file, fsync, rename: rs_file_replace; *written 1),
 * so a reader sees the old file or the new one.  APR_EINCOMPLETE when the
 * store no longer holds all of f (a writer replaced it meanwhile). */
apr_status_t rs_blob_place(rs_db_t *db, apr_pool_t *p, const char *set, const char *kind,
                           const rs_blob_file_t *f, const char *path, int *written);

/* For a file about to be replayed: the path of this node's own copy of
 * it (or of its source), or NULL.  rs_blob_replay links it only when it
 * is a regular file of the row's size and mtime. */
typedef const char *rs_blob_local_fn(void *baton, apr_pool_t *p, const rs_blob_file_t *f);

/* Write every file of generation gen of (set, kind) into dir (an empty
 * directory): a hard link to local's file where it has one, else the
 * bytes from the store; each file gets the row's mtime and is fsynced,
 * then dir is.  APR_ENOENT when the store holds no file of gen; a name
 * that is not a plain file name (a '/', a leading '.') is refused
 * (APR_EINVAL).  On failure dir holds part of it: the caller removes
 * it. */
apr_status_t rs_blob_replay(rs_db_t *db, apr_pool_t *p, const char *set, const char *kind,
                            apr_uint64_t gen, const char *dir, rs_blob_local_fn *local, void *baton,
                            rs_blob_stats_t *st);

/* The generations of (set, kind) the store holds files of, apr_uint64_t
 * in ascending order (in p). */
apr_status_t rs_blob_gens(rs_db_t *db, apr_pool_t *p, const char *set, const char *kind,
                          apr_array_header_t **out);

/* Drop generation gen of (set, kind) inside the caller's open (fenced)
 * transaction: its rows, and the chunks of every file (of gen or
 * earlier) that no remaining row names as its source. */
apr_status_t rs_blob_drop(rs_db_t *db, const char *set, const char *kind, apr_uint64_t gen);

/* The writer, after pruning its directories: every stored generation of
 * (set, kind) other than current whose directory below dir (dir/<gen>)
 * is gone has its rows dropped (rs_blob_drop), each in a transaction of
 * its own that begins with the set's fence.  Returns the first failure
 * (RS_LEASE_LOST: another node writes the set now; nothing more
 * dropped); *dropped (may be NULL) gets how many generations went. */
apr_status_t rs_blob_prune(rs_db_t *db, apr_pool_t *p, const char *set, const char *kind,
                           const char *dir, apr_uint64_t current, int *dropped);

/* Whether any generation of (set, kind) has a file named name: *found
 * (a node that lacks a file asks whether the writer stored it: not copied
 * yet, or gone). */
apr_status_t rs_blob_named(rs_db_t *db, const char *set, const char *kind, const char *name,
                           int *found);

/* The rows of set (every kind): files and chunks (the tests' and the
 * status's measure). */
apr_status_t rs_blob_count(rs_db_t *db, const char *set, apr_int64_t *files, apr_int64_t *chunks);

#endif
