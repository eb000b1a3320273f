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
 *                         capture is missing or short (the list itself
 *                         still describes the change)
 *   changedump.xml        the Change Dump: the packages with a .sum,
 *                         oldest first
 *
 * Every file appears by rename of a synced temporary file (rs_zip,
 * rs_file_replace), so a crash leaves complete files or `.tmp-` names,
 * which rs_cdump_prune removes.  A package rebuilt from the same records
 * and captures has the same bytes (member times are the captures'
 * mtimes, which are the versions' mtimes; the manifest's is the list's
 * until).
 */
#ifndef RS_CDUMP_H
#define RS_CDUMP_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "rs_journal.h"

/* A package was not built: a capture it needs is missing or short. */
#define RS_CDUMP_EMISSING (APR_OS_START_USERERR + 50)

/* Member names are RS_CDUMP_MEMBER_DIR "<sequence>/<relative path>". */
#define RS_CDUMP_MEMBER_DIR "changes/"

typedef struct rs_cdump_opts_t {
    const char *set;              /* the set's name in the store */
    const char *dir;              /* <statedir>/changedumps/<set> */
    const char *capture_dir;      /* <statedir>/capture/<set> */
    const char *history;          /* of the documents */
    const char *url_base;         /* absolute URL of the set's root, ends "/" */
    const char *capability_url;   /* rs:ln up of changedump.xml */
    const char *pkg_url_prefix;   /* package of list id: <prefix><id>.zip */
    unsigned hashes;              /* RS_HASH_* of the set */
} rs_cdump_opts_t;

/* Whether the package of closed list id is complete (.sum) or was
 * given up (.skip). */
int rs_cdump_done(const rs_cdump_opts_t *o, apr_int64_t id, apr_pool_t *p);

/* Build the package of closed list cl from j's records (on any thread,
 * with the caller's connection).  APR_SUCCESS: published (its .sum
 * written), *bytes its length.  RS_CDUMP_EMISSING: a capture is missing
 * or short; a .skip marker is written and *missing names the record.
 * Other failures (ENOSPC...) publish nothing and mark nothing. */
apr_status_t rs_cdump_package(rs_journal_t *j, const rs_cdump_opts_t *o,
                              const rs_changelist_t *cl, apr_pool_t *p, apr_off_t *bytes,
                              const char **missing);

/* Write changedump.xml for the retained closed lists `closed` (array of
 * rs_changelist_t, oldest first): every list whose package is complete.
 * `from` is the first listed package's from, else open_from (no package
 * yet: coverage starts with the open list); no until (packages are still
 * added).  *bytes gets the total length of the listed packages. */
apr_status_t rs_cdump_index(const rs_cdump_opts_t *o, const apr_array_header_t *closed,
                            apr_time_t open_from, apr_pool_t *p, apr_int64_t *bytes);

/* Remove the files of the directory that belong to no list of `closed`
 * in o->history (lists dropped by retention, another history) and
 * temporary files left by a crash.  Returns the number removed. */
int rs_cdump_prune(const rs_cdump_opts_t *o, const apr_array_header_t *closed,
                    apr_pool_t *p);

#endif
