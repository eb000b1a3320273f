/* SPDX-License-Identifier: Apache-2.0 */
/* rs_cdump.h - Change Dump packages and the Change Dump document.
 *
 * One package per closed Change List, built from the journal's records
 * of that list and the captured bytes of each created/updated version
 * (rs_capture.h).  Files in the set's Change Dump directory
 * (<statedir>/changedumps/<set>, rs_statedir_cdump_file):
 *
 *   <history>-<id>.zip    the package: manifest.xml first (capability
 *                         changedump-manifest, the list's from/until,
 *                         entries in journal order), then one STORED
 *                         member per created/updated record, named
 *                         changes/<sequence>/<relative path> (percent-
 *                         encoded when not plain UTF-8, rs_zip_member_name)
 *   <history>-<id>.xml    a byte-identical copy of the manifest
 *   <history>-<id>.sum    "length hash-attribute": the package's length
 *                         and digests; written last, so a package is
 *                         listed only once all three files are complete
 *   <history>-<id>.skip   the package cannot be built: a version's
 *                         capture is missing or short, and the file at
 *                         its path no longer has its bytes (the list
 *                         itself still describes the change; the Change
 *                         Dump's coverage starts after it, rs_cdumpdoc_write)
 *   <history>-<id>.rev    the revision of the list's package, when it is
 *                         not 0: a package that was withdrawn
 *                         (rs_cdump_withdraw) is built again under the
 *                         name <history>-<id>-<rev>.zip (.xml), so that
 *                         no URL ever names two byte strings
 *   changedump.xml        the Change Dump, and
 *   <history>-part-<n>.xml the parts of a Change Dump Index (rs_cdumpdoc.h)
 *
 * Every file appears by rename of a synced temporary file (rs_zip,
 * rs_file_replace), so a crash leaves complete files or `.tmp-` names,
 * which rs_cdump_prune removes (with the files of a revision that is no
 * longer the list's).  A package rebuilt from the same records, captures
 * and journal has the same bytes (member times are the captures' mtimes,
 * which are the versions' mtimes; the manifest's is the list's until).
 *
 * Withheld versions: a package built after a path stopped being listed
 * (a later `deleted` record of the path: denied, excluded, removed,
 * renamed away) holds no version of it from before that: each such
 * created/updated record is written as a deletion at its datetime, with
 * no member and no bytes.  The specification requires a path (a
 * bitstream) for every created/updated entry, so the entry cannot stay
 * one without bytes; and it cannot be left out, because a destination
 * that also reads the Change Lists takes a change no package explains
 * from there, and fetches a resource that is no longer served.  As a
 * deletion it tells such a destination the one thing the Source still
 * stands by, that the resource is not to be kept, and the (loc,
 * datetime) pair stays that of the Change List's entry, so both
 * describe one change.  The same holds for a record whose file exists
 * but that the check callback (o->check) says is not served now: denied
 * since, before the watcher journals it.
 */
#ifndef RS_CDUMP_H
#define RS_CDUMP_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "rs_journal.h"
#include "rs_links.h"
#include "rs_scan.h"

/* A package was not built: a capture it needs is missing or short. */
#define RS_CDUMP_EMISSING (APR_OS_START_USERERR + 50)

/* Member names are RS_CDUMP_MEMBER_DIR "<sequence>/<relative path>". */
#define RS_CDUMP_MEMBER_DIR "changes/"

/* The most bytes a record's entry in a Change Dump Manifest takes beyond
 * its entry in the Change List (rs_entry): the path attribute naming its
 * member, escaped, and RS_CDUMP_ENTRY_SLACK for the times' forms (its
 * rs:ln links are the Change List entry's, written by rs_entry_links_write,
 * so they add nothing; a withheld version's entry has none).  A
 * manifest's head and tail take at most RS_CDUMP_FRAME_SLACK more than
 * the closed list's.  The watcher closes the lists of a set with Change
 * Dumps on these, so that a manifest stays within 50 MB as its list does
 * (ResourceSync 1.1 section 7). */
#define RS_CDUMP_ENTRY_SLACK 16
#define RS_CDUMP_FRAME_SLACK 64
apr_int64_t rs_cdump_path_len(apr_pool_t *p, const rs_record_t *r);

typedef struct rs_cdump_opts_t {
    const char *set;             /* the set's name in the store */
    const char *dir;             /* <statedir>/changedumps/<set> */
    const char *capture_dir;     /* <statedir>/capture/<set> */
    const char *history;         /* of the documents */
    const char *url_base;        /* absolute URL of the set's root, ends "/" */
    const char *capability_url;  /* rs:ln up of changedump.xml */
    const char *pkg_url_prefix;  /* package of list id: <prefix><id>.zip */
    unsigned hashes;             /* RS_HASH_* of the set */
    const rs_links_t *links;     /* the set's rules: manifest entries carry
                                  * their mirrors as the lists do (NULL: none) */
    int spec10;                  /* ResourceSync 1.0 manifests (see manifest_entry) */
    const char *index_url;       /* changedump.xml (rs:ln index of index parts) */
    const char *part_url_prefix; /* part n of an index is at <prefix><n>.xml; NULL: no index */
    int list_max;                /* packages per document (ResourceSyncMaxEntries), 0: any */
    apr_int64_t max_bytes;       /* bytes per document, 0: RS_CDUMPDOC_MAX_BYTES */
    /* Would an anonymous GET serve the file at its path now?  Asked for
     * every created/updated record whose path exists below root (the
     * set's directory) when a package is built; NULL: not asked. */
    const char *root;
    rs_scan_check_fn *check;
    void *check_baton;
} rs_cdump_opts_t;

/* What rs_cdump_package reports. */
typedef struct rs_cdump_result_t {
    apr_off_t bytes;     /* the published package's length */
    const char *missing; /* RS_CDUMP_EMISSING: the record without bytes */
    int withheld;        /* created/updated records written as deletions */
    int recaptured;      /* lost captures made again from the current file */
} rs_cdump_result_t;

/* Whether the package of closed list id is complete (.sum) or was
 * given up (.skip). */
int rs_cdump_done(const rs_cdump_opts_t *o, apr_int64_t id, apr_pool_t *p);

/* Build the package of closed list cl from j's records (on any thread,
 * with the caller's connection), under the list's current revision.
 * A version whose capture is missing or short is captured again from
 * the file at its path (below o->root, when set) when that file still
 * has the version's length and SHA-256 digest (res->recaptured).
 * APR_SUCCESS: published (its .sum written), res->bytes its length.
 * RS_CDUMP_EMISSING: a capture a kept version needs is missing or short;
 * a .skip marker is written and res->missing names the record.  Other
 * failures (ENOSPC...) publish nothing and mark nothing. */
apr_status_t rs_cdump_package(rs_journal_t *j, const rs_cdump_opts_t *o, const rs_changelist_t *cl,
                              apr_pool_t *p, rs_cdump_result_t *res);

/* The revision of list id's package (0 unless withdrawn, see above). */
int rs_cdump_rev(const rs_cdump_opts_t *o, apr_int64_t id, apr_pool_t *p);

/* Withdraw every package of the retained closed lists `closed` (array of
 * rs_changelist_t, oldest first) that holds a version of a path: seqs
 * (apr_int64_t, ascending) are the sequences of its created/updated
 * records (rs_journal_path_versions).  The list's revision is raised
 * (its .rev written, synced), then the package, its manifest copy and
 * its .sum (or .skip) are removed, so that its URLs answer 404 at once
 * and rs_cdump_done says it is to be built -- under the new revision's
 * name, without that path's versions once the journal has the path's
 * deletion.  A list whose built package holds none of the versions (it
 * was built again after the path's deletion: its manifest names no
 * member of theirs) is left as it is, so withdrawing twice changes no
 * name.  Needs only o->dir and o->history (a tool may call it).
 * *ids gets the ids of the lists withdrawn (array of apr_int64_t).
 * Returns the cause of a failure (what was withdrawn before it stays
 * withdrawn). */
apr_status_t rs_cdump_withdraw(const rs_cdump_opts_t *o, const apr_array_header_t *closed,
                               const apr_array_header_t *seqs, apr_pool_t *p,
                               apr_array_header_t **ids);

/* The length and hash attribute of list id's complete package (its
 * .sum), from p.  Returns 0 when it has none. */
int rs_cdump_sum(const rs_cdump_opts_t *o, apr_int64_t id, apr_pool_t *p, apr_int64_t *length,
                 const char **hash);

/* Collect the set's captures (rs_capture_gc): the SHA-256 digest of
 * every retained created/updated version that is not withheld is kept;
 * the capture of a withheld version goes now, unless a kept version
 * names it too or it was captured again after the path's deletion;
 * other files go once their inode is older than `young` (apr time).
 * Asks the journal about each capture in turn (rs_journal_digest_use):
 * memory does not grow with the journal or the captures.  *removed and
 * *bytes (may be NULL): files removed, bytes that remain. */
apr_status_t rs_cdump_gc(rs_journal_t *j, const rs_cdump_opts_t *o, apr_time_t young, apr_pool_t *p,
                         int *removed, apr_int64_t *bytes);

/* Remove the files of the directory that belong to no list of `closed`
 * in o->history (lists dropped by retention, another history), the
 * packages of a revision that is not their list's, and temporary files
 * left by a crash.  Returns the number removed. */
int rs_cdump_prune(const rs_cdump_opts_t *o, const apr_array_header_t *closed, apr_pool_t *p);

/* The bytes of the packages (the ".zip" files) in the Change Dump
 * directory dir: its disk use as the status page reports it, for a node
 * that did not write them (a restart before the first job, a follower's
 * copy).  0 without a directory. */
apr_int64_t rs_cdump_bytes(const char *dir, apr_pool_t *p);

#endif
