/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_linkconf.h - the declarations of mod_resourcesync_linkconf.c. */
#ifndef MOD_RESOURCESYNC_LINKCONF_H
#define MOD_RESOURCESYNC_LINKCONF_H

#include "mod_resourcesync_cmd.h"

/* mod_resourcesync_linkconf.c: the relations of a set's resources
 * (rs_links.h), set options of the set's own <Directory> section only. */

/* ResourceSyncLink REL PATTERN TARGET [type=MEDIA] [pri=N] [if-exists]
 * (rs_cmd_fn, scope RS_SET_ONLY): one rule appended to the section's
 * rules (created at the first), PATTERN compiled by ap_regcomp. */
const char *rs_linkconf_set_link(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                 const char *const argv[]);
/* ResourceSyncMirror URL-PREFIX [pri=N] (rs_cmd_fn, scope RS_SET_ONLY):
 * a mirror appended to the same rules, so both directives keep the order
 * they are written in. */
const char *rs_linkconf_set_mirror(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                   const char *const argv[]);
/* set->links (the rules and mirrors of its section, NULL when it has
 * neither), set->links_fp (hex SHA-256, in pconf, of the stored form's
 * version, the set's root_url and the ResourceSyncLink rules'
 * rs_links_describe; "" without such rules) and set->mirrors_fp (of
 * rs_links_mirrors_describe; "" without mirrors); at post_config, once
 * the set's URLs are resolved. */
void rs_linkconf_resolve(apr_pool_t *pconf, rs_set_t *set);

#endif
