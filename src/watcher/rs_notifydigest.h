/* SPDX-License-Identifier: Apache-2.0 */
/* rs_notifydigest.h - what a set's framework topic announces at a watcher
 * start: the first start of a set announces its Capability List
 * (created) and the Source Description (updated); a later start announces
 * those whose bytes changed since the previous one, compared by the
 * SHA-256 digests recorded in <statedir>/notify/<set>/documents.digest
 * (rs_statedir_notify_digests).  The file holds
 * "capabilitylist <hex>\ndescription <hex>\n"; it is replaced by the
 * caller only after the notification is stored, so a crash in between
 * announces the change again at the next start, never loses it.  A set
 * with framework notifications but no file (written by an older module)
 * records the digests without announcing anything.
 */
#ifndef RS_NOTIFYDIGEST_H
#define RS_NOTIFYDIGEST_H

#include <apr_pools.h>

/* Flags returned by rs_notifydigest_decide. */
#define RS_NOTIFYDIGEST_CL_CREATED 1 /* announce the Capability List, created */
#define RS_NOTIFYDIGEST_CL_UPDATED 2 /* announce the Capability List, updated */
#define RS_NOTIFYDIGEST_SD_UPDATED 4 /* announce the Source Description, updated */
#define RS_NOTIFYDIGEST_RECORD     8 /* then record the current digests */

/* The digests text of the Capability List's bytes and the Source
 * Description's, from p. */
const char *rs_notifydigest_text(apr_pool_t *p, const char *cl, apr_size_t cl_len, const char *sd,
                                 apr_size_t sd_len);

/* The digests recorded in the file at path into *text (from p; NULL when
 * the file does not exist); the cause of any other failure. */
apr_status_t rs_notifydigest_read(apr_pool_t *p, const char *path, const char **text);

/* What to announce: has_framework 0 (the set's first start: no framework
 * notification in the store) announces both and records; else with no
 * recorded digests (old NULL) only records; with the same digests does
 * nothing (0); otherwise announces what differs and records. */
int rs_notifydigest_decide(apr_pool_t *p, int has_framework, const char *old, const char *cur);

#endif
