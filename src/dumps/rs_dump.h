/* SPDX-License-Identifier: Apache-2.0 */
/* rs_dump.h - a Resource Dump: ZIP packages of a set's listed files.
 *
 * rs_dump_write reads the set's listed inventory rows in listing order,
 * cuts them into packages (rs_partition) and writes, into a generation
 * directory being built (rs_generation, rs_statedir):
 *   <key>.zip          a package, rs_zip: manifest.xml first, then one
 *                      stored member per file; key names what it holds
 *                      (rs_dumppkg.h)
 *   <key>.xml          a byte-identical copy of the package's manifest
 *   <key>.rec          the package's record (length, at, completed, hash)
 *   resourcedump.xml   the Resource Dump (<urlset>, capability
 *                      resourcedump), one <url> per package, written last;
 *                      when there are more than o->list_max packages or
 *                      their entries pass the bytes of one document, a
 *                      Resource Dump Index (<sitemapindex>, one <sitemap>
 *                      per part) instead, and
 *   part-<n>.xml       part n (1-based) of the index: a <urlset> of up to
 *                      list_max packages with rs:ln index to the index,
 *                      each part as full as list_max and RS_XML_MAX_BYTES
 *                      (o->doc_max_bytes) allow, so ceil(packages /
 *                      list_max) parts while the entries are small
 *
 * Reuse: a package whose key a generation in o->dumpset still holds is
 * hard-linked from there instead of written (rs_dumppkg_reuse), so a
 * rebuild reads and writes only the packages whose files changed, and an
 * unchanged package keeps its URL, bytes and ETag.  A package's manifest
 * and its <url> in resourcedump.xml carry the at/completed of the build
 * that wrote it; resourcedump.xml's own at/completed are the snapshot's.
 *
 * Member names (rs_zip_member_name): RS_DUMP_MEMBER_DIR followed by the
 * file's path relative to the set's root, as the bytes on disk; a path
 * that is not valid UTF-8 or holds control characters is percent-encoded
 * below RS_DUMP_ENCODED_DIR instead.  The fixed prefix keeps a file named
 * manifest.xml at the root from colliding with the manifest.  A manifest
 * entry's rs:md path is "/" and the member name, literally; its rs:ln up
 * is the Capability List (section 11.2).
 *
 * Durability and order: a package is written, then published after the
 * next one is written (its write-back overlaps that writing): its
 * manifest copy and the package are fsynced, the package renamed from
 * its temporary name, then its record written; resourcedump.xml only
 * after every package is published.  A failed build leaves no temporary
 * package behind (the caller drops the directory anyway).
 *
 * Memory: one package's rows and libzip's per-member state; the manifest
 * is streamed to <key>.xml and copied into the package from there.
 *
 * Consistency: every member is the file and version its inventory row
 * describes.  Before a row is cut into a package (also a package that is
 * then reused), its path is walked below the root without following a
 * link (rs_beneath.h: a directory swapped for a link to another one
 * since the scan fails the walk) and the file found must have the row's
 * device, inode, size and mtime; rs_zip opens it the same way when it is
 * copied and checks the same again, on the descriptor it reads.  When a
 * file is not the one listed, the write fails with RS_ZIP_ECHANGED and
 * the caller drops the whole directory and tries again later (the scan
 * that sees the change makes a new snapshot, and so a new dump, due).
 * A row whose file the check callback (o->check, when set) says is not
 * served now -- denied since the scan, by an access file or a section
 * the watcher has not reconciled yet -- is left out of the dump
 * (info->withheld): nothing is packaged on the strength of a stale row.
 * Nothing here publishes: the caller renames the directory into place
 * (rs_generation_publish).
 */
#ifndef RS_DUMP_H
#define RS_DUMP_H

#include <apr_pools.h>
#include <apr_time.h>
#include "rs_db.h"
#include "rs_links.h"
#include "rs_log.h"
#include "rs_scan.h"

#define RS_DUMP_MEMBER_DIR  "resources/"
#define RS_DUMP_ENCODED_DIR "encoded/" /* names that are not plain UTF-8 (rs_zip_member_name) */

typedef struct rs_dump_opts_t {
    const char *set;                    /* the set's name in the store */
    const char *root;                   /* the set's directory on disk, no trailing "/" */
    const char *url_base;               /* absolute URL of the set's root, ends with "/" */
    const char *capability_url;         /* rs:ln up of the dump */
    const char *dump_url;               /* resourcedump.xml (rs:ln index of index parts) */
    const char *pkg_url_prefix;         /* a package is at <prefix><key>.zip, its
                                   * manifest at <prefix><key>.xml */
    const char *dumpset;                /* generations to reuse packages from, or NULL */
    const char *part_url_prefix;        /* part n of an index is at <prefix><n>.xml */
    int list_max;                       /* packages per document (ResourceSyncMaxEntries) */
    apr_int64_t doc_max_bytes;          /* bytes per document; 0: RS_XML_MAX_BYTES */
    unsigned hashes;                    /* RS_HASH_* listed and computed */
    const rs_links_t *links;            /* the set's rules: every manifest entry
                                         * carries their mirrors (NULL: none) */
    apr_int64_t max_entries, max_bytes; /* per package */
    apr_time_t at;                      /* start of the snapshot the dump reflects */
    apr_time_t completed;               /* its end */
    /* Would an anonymous GET serve the file now (called on the writing
     * thread, with a pool cleared when the directory changes; flags
     * RS_SCAN_CHECK_LINK for a listed link)?  NULL: every row is. */
    rs_scan_check_fn *check;
    void *check_baton;
} rs_dump_opts_t;

typedef struct rs_dump_info_t {
    int packages;
    int reused; /* packages linked from an earlier generation */
    int parts;  /* of the Resource Dump Index, 0: no index */
    apr_int64_t entries;
    apr_int64_t bytes;  /* of all packages */
    int withheld;       /* rows left out: not served now (o->check) */
    const char *failed; /* on RS_ZIP_ECHANGED etc.: rs_zip_error's text */
} rs_dump_info_t;

/* Write the dump of o->set from store into the existing directory dir
 * (not one of o->dumpset's published generations).  Returns APR_SUCCESS, RS_ZIP_ECHANGED (a file changed
 * while packaged), or the cause of the failure; info->failed says more
 * when a package failed. */
apr_status_t rs_dump_write(rs_db_t *store, const rs_dump_opts_t *o, const char *dir, apr_pool_t *p,
                           rs_dump_info_t *info);

#endif
