/* SPDX-License-Identifier: Apache-2.0 */
/* rs_scanopts.h - what a scan is given and what it counts: its options
 * (rs_scan_opts_t, with the callbacks through which its caller decides
 * what is served and hears of changes) and its statistics
 * (rs_scan_stats_t).  Every unit of a scan reads them; the functions
 * that scan are in rs_scan.h.
 */
#ifndef RS_SCANOPTS_H
#define RS_SCANOPTS_H

#include <apr_errno.h>
#include <sys/stat.h>
#include <apr_pools.h>
#include <apr_tables.h>
#include "rs_hash.h"
#include "rs_journal.h"
#include "rs_inventory.h"
#include "rs_log.h"

/* Flags of rs_scan_check_fn: relpath is a directory; relpath is a
 * symbolic link (to a regular file: links to directories are never
 * descended).  Neither: a regular file. */
#define RS_SCAN_CHECK_DIR  1
#define RS_SCAN_CHECK_LINK 2

/* What a GET of a served file returns about its representation, as the
 * lists give it (ResourceSync 1.1 section 7, rs:md type and encoding): the
 * media type of its Content-Type without parameters, and its
 * Content-Encoding (e.g. "gzip"); each NULL when the response has none. */
typedef struct rs_scan_media_t {
    const char *type;
    const char *encoding;
} rs_scan_media_t;

/* Decide whether an anonymous GET would serve relpath (flags: what it is,
 * RS_SCAN_CHECK_*; a non-served directory is not descended).  For files,
 * media is not NULL and holds NULLs: a served file's are set (strings
 * allocated from p); directories get NULL.  Returns 1 if served, 0 if
 * not.  For files, p is a pool of the directory's batch: it is cleared
 * before another directory's files are checked with the same baton, so a
 * callee may keep per-directory state tied to it (a cleanup registered on
 * p). */
typedef int rs_scan_check_fn(void *baton, apr_pool_t *p, const char *relpath, int flags,
                             rs_scan_media_t *media);

/* Called every few thousand entries with the running count of files. */
typedef void rs_scan_progress_fn(void *baton, apr_int64_t files);

/* The digests of a large file, hashed away from the scan (see
 * rs_scan_opts_t.defer). */
typedef struct rs_scan_digest_t {
    int rc;                                  /* errno of a failed read, else 0 */
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX]; /* "" where none (a file that
                                              * never held still) */
} rs_scan_digest_t;

/* Asked, on any scan worker thread (so it must be thread-safe), for the
 * digests of a file of at least defer_size bytes whose stored row no
 * longer describes it: relpath below the root, path the file to read (a
 * link's resolved target, or root/relpath: open it without following a
 * link), sb its version as the scan saw it.  Returns 1 when *out holds the
 * result for exactly that version (dev, inode, size, mtime, ctime); 0
 * when it is not ready: the callee hashes it elsewhere and the scan leaves
 * the file as stored (no row for a new file, the previous row for a
 * changed one), to be reconciled again when the digests are ready; -1
 * when the scan should hash the file itself after all. */
typedef int rs_scan_defer_fn(void *baton, const char *relpath, const char *path,
                             const struct stat *sb, rs_scan_digest_t *out);

/* How rs_scan_opts_t.links_scan hands back a row it held: the scan
 * writes it now, in its transaction. */
typedef void rs_scan_emit_fn(void *emit_baton, const rs_item_t *it);

typedef struct rs_scan_opts_t {
    const char *set;                    /* set name (store key) */
    const char *root;                   /* absolute directory */
    unsigned hashes;                    /* RS_HASH_* mask */
    const apr_array_header_t *excludes; /* glob patterns or NULL */
    int dotfiles;                       /* list dotfiles (not .ht*) */
    const char *cfg;                    /* fingerprint of check config */
    /* Names of access files (httpd's AccessFileName, e.g. ".htaccess"),
     * array of char*, or NULL.  Never listed; when one appears, changes
     * or vanishes, every file below its directory is checked again (and
     * a change notification naming one reconciles its whole directory). */
    const apr_array_header_t *access_files;
    /* Every file gets its check again, even where its row still describes
     * it (its digests are kept unless its content changed too): something
     * outside the tree changed what httpd serves in all of it, an access
     * file above the set's root (rs_above.h). */
    int recheck;
    rs_scan_check_fn *check; /* NULL: everything is served */
    void *check_baton;
    /* Parallel work: files that need a check or hashing are processed by
     * `workers` threads (0 or 1: inline).  Worker i calls check with
     * check_batons[i] (required when workers > 1): the callback need not
     * be thread-safe across batons, only for distinct ones. */
    int workers;
    void **check_batons;
    /* Threads that read and hash files when the checks themselves must
     * stay on one thread (workers <= 1, e.g. under a non-threaded MPM):
     * the checks of a directory's files then run on the calling thread
     * first, and only the reading and hashing, which never call back
     * into the caller except through defer, is spread over hash_workers
     * threads.  0 or 1: no such threads. */
    int hash_workers;
    /* Called, in the scan's transaction, for every change of what is
     * listed: RS_CHANGE_CREATED / _UPDATED with the new row, _DELETED with
     * the last stored row.  A non-success return stops the scan.
     * rs_recorder_record (baton: an rs_recorder_t) journals them. */
    apr_status_t (*on_change)(void *baton, int change, const rs_item_t *it);
    void *change_baton;
    /* The links of listed rows (in the watcher rs_linkkeep.h; both NULL:
     * a set without link rules, nothing is done).  Called on the thread
     * that holds the store, in the scan's transaction, one call at a
     * time: links_row before a file's row is written, with the new row,
     * whose links it sets (the string valid until the next call), and
     * whether the stored row was listed;
     * links_done once a file's row was written (gone 0) or deleted (gone
     * 1) and its change reported, for the rows whose links depend on it.
     * Access files' rows (never listed) go without.  A non-success return
     * stops the scan. */
    apr_status_t (*links_row)(void *baton, rs_item_t *it, int was_listed);
    apr_status_t (*links_done)(void *baton, const char *dir, const char *name, int gone);
    void *links_baton;
    /* The links of a set's first scan (in the watcher rs_linkscan.h;
     * NULL: none), instead of links_row and links_done, for a scan that
     * journals nothing.  Called only by rs_scan_set on a set that had no
     * row when it began (rs_scan_stats_t.fresh; then every listed row of
     * the set goes through it), on the thread that writes the store, one
     * call at a time: before every listed file's row is written, with the
     * new row, whose links it sets (the string valid until the next
     * call).  It may hold the row instead (a copy; returns 1): the scan
     * counts it but does not write it, and the hook hands it back through
     * emit(emit_baton, row) in a later call, which the scan then writes
     * (and reports) as it would have.  Once every row was handed, before
     * the scan's last commit, it is called with it NULL to hand back what
     * it holds.  It neither reads nor writes the store itself. */
    int (*links_scan)(void *baton, rs_item_t *it, rs_scan_emit_fn *emit, void *emit_baton);
    void *links_scan_baton;
    /* Called for every directory the scan is about to read, with an open
     * descriptor of it, before its entries are read: a watcher that adds
     * its watch here misses no entry created after the read.  Also called
     * for directories reached through rs_scan_targets. */
    void (*on_dir)(void *baton, const char *relpath, int dfd);
    /* Called when the rows at and below relpath are dropped because that
     * directory is gone (rs_scan_targets only).  A directory that is only
     * no longer served keeps its watch; with access_files, on_dir is
     * also called for a directory that is not served (it is not read). */
    void (*on_drop)(void *baton, const char *relpath);
    void *dir_baton;
    rs_scan_progress_fn *progress;
    void *progress_baton;
    const rs_logger_t *log;
    /* Mass-deletion guard (0: none).  A scan that would report more than
     * this many listed files deleted commits none of it from its first
     * deletion on: it rolls back and returns RS_SCAN_EMASSDEL, with the
     * full count in stats->deleted.  Until a deletion is seen, rs_scan_set
     * commits in batches as usual; after it, the rest of the scan is one
     * transaction, so that nothing deleted is committed before the count
     * is known. */
    apr_int64_t max_deleted;
    /* Large files: hashed by defer (see rs_scan_defer_fn) instead of in
     * the scan, when defer is set and defer_size > 0. */
    apr_int64_t defer_size;
    rs_scan_defer_fn *defer;
    void *defer_baton;
    /* Change capture (rs_capture.h; NULL: none): every file the scan
     * hashes is also copied, by the same read, into this directory under
     * its SHA-256 digest (hashes must hold RS_CAPTURE_HASH, else nothing
     * is captured); a listed file whose version keeps its stored digests
     * but has no capture yet is read again for one.  Set it only for
     * scans that journal. */
    const char *capture_dir;
    /* Reading ahead of the walk on a cold cache, for scans without hashes
     * (rs_scanahead.c): 0, threads that start when the walk finds the
     * disk under it; 1, threads reading from the start (tests); -1, none. */
    int readahead;
} rs_scan_opts_t;

/* Returned when opts->max_deleted stopped a scan (nothing of it from the
 * first deletion on was committed). */
#define RS_SCAN_EMASSDEL (APR_OS_START_USERERR + 1)

typedef struct rs_scan_stats_t {
    apr_int64_t files;      /* regular files seen */
    apr_int64_t dirs;       /* directories walked */
    apr_int64_t listed;     /* files listed */
    apr_int64_t written;    /* rows inserted or updated */
    apr_int64_t removed;    /* rows deleted */
    apr_int64_t hashed;     /* bytes read for hashing */
    apr_int64_t deleted;    /* listed files reported deleted */
    apr_int64_t deferred;   /* large files left for later (opts.defer) */
    apr_int64_t ahead_dirs; /* directories read ahead of the walk (opts.readahead) */
    int fresh;              /* rs_scan_set: the set had no row when it began */
} rs_scan_stats_t;

#endif
