/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_fingerprint.h - the declarations of mod_resourcesync_fingerprint.c. */
#ifndef MOD_RESOURCESYNC_FINGERPRINT_H
#define MOD_RESOURCESYNC_FINGERPRINT_H

#include "mod_resourcesync.h"

/* mod_resourcesync_fingerprint.c */
/* Hex MD5 (in p) of the parsed configuration tree without the directives
 * that cannot change an access decision, a media type or a URL (logging,
 * process tuning, ServerTokens...; the rule is in the file).  Inventory
 * rows decided under another fingerprint are checked again. */
const char *rs_fingerprint_compute(apr_pool_t *p, const ap_directive_t *tree);

#endif
