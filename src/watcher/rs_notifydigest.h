/* SPDX-License-Identifier: Apache-2.0 */
/* rs_notifydigest.h - what a set's framework topic announces at a watcher
 * start: the first start of a set announces its Capability List
 * (created) and the Source Description (created when it is new too, else
 * updated); a later start announces those whose bytes changed since the
 * previous one, compared by the SHA-256 digests recorded in
 * <statedir>/notify/<set>/documents.digest (rs_statedir_notify_digests),
 * and the Capability Lists the Source Description listed then and lists
 * no more (sets removed from the configuration: deleted).  The file holds
 * "capabilitylist <hex>\ndescription <hex>\n" and a line "set <url>" per
 * Capability List the Source Description lists; it is replaced by the
 * caller only after the notification is stored, so a crash in between
 * announces the change again at the next start, never loses it.  A set
 * with framework notifications but no file (written by an older module)
 * records the digests without announcing anything; a file without "set"
 * lines (an older module's) announces no deletion.
 */
#ifndef RS_NOTIFYDIGEST_H
#define RS_NOTIFYDIGEST_H

#include <apr_pools.h>
#include <apr_tables.h>

/* Flags returned by rs_notifydigest_decide. */
#define RS_NOTIFYDIGEST_CL_CREATED 1  /* announce the Capability List, created */
#define RS_NOTIFYDIGEST_CL_UPDATED 2  /* announce the Capability List, updated */
#define RS_NOTIFYDIGEST_SD_UPDATED 4  /* announce the Source Description, updated */
#define RS_NOTIFYDIGEST_RECORD     8  /* then record the current digests */
#define RS_NOTIFYDIGEST_SD_CREATED 16 /* announce the Source Description, created */
#define RS_NOTIFYDIGEST_CL_GONE    32 /* announce rs_notifydigest_gone's, deleted */

/* The longest digests file read (a line per set). */
#define RS_NOTIFYDIGEST_MAX (1024 * 1024)

/* The digests text of the Capability List's bytes and the Source
 * Description's, and the URLs (const char *; NULL: none) of the
 * Capability Lists the Source Description lists, from p. */
const char *rs_notifydigest_text(apr_pool_t *p, const char *cl, apr_size_t cl_len, const char *sd,
                                 apr_size_t sd_len, const apr_array_header_t *listed);

/* The digests recorded in the file at path into *text (from p; NULL when
 * the file does not exist); the cause of any other failure (a file that
 * is not a regular one of this user or longer than RS_NOTIFYDIGEST_MAX
 * included: rs_file_read_small). */
apr_status_t rs_notifydigest_read(apr_pool_t *p, const char *path, const char **text);

/* What to announce: has_framework 0 (the set's first start: no framework
 * notification in the store) announces both and records, the Source
 * Description created when sd_new (no set of its virtual host announced
 * anything before: its very first start), else updated; else with no
 * recorded digests (old NULL) only records; with the same digests does
 * nothing (0); otherwise announces what differs, the Capability Lists
 * listed no more (RS_NOTIFYDIGEST_CL_GONE), and records. */
int rs_notifydigest_decide(apr_pool_t *p, int has_framework, int sd_new, const char *old,
                           const char *cur);

/* The Capability List URLs (const char *) the "set" lines of old name and
 * those of cur do not, in old's order, from p. */
apr_array_header_t *rs_notifydigest_gone(apr_pool_t *p, const char *old, const char *cur);

#endif
