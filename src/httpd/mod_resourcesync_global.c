/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_global.c - rs_global, the process-wide state of one
 * server generation (mod_resourcesync.h).
 *
 * Defined here, apart from the code that fills it, so that every glue
 * file can use it without depending on the configuration code (and the
 * configuration code on none of them): rs_config_pre resets it before
 * each configuration pass, the directives fill it (mod_resourcesync_cmd.c),
 * rs_config_resolve completes it, post_config adds the segment and the
 * mutex, and children and the watcher inherit it with the fork.
 */
#include "mod_resourcesync.h"

rs_global_t rs_global;
