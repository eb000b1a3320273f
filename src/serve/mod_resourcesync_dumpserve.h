/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_dumpserve.h - the declarations of
 * mod_resourcesync_dumpserve.c. */
#ifndef MOD_RESOURCESYNC_DUMPSERVE_H
#define MOD_RESOURCESYNC_DUMPSERVE_H

#include "mod_resourcesync.h"

/* The Resource Dump of set (part NULL: resourcedump.xml; else a part of
 * its index, a package or a manifest copy, by the rest of the URL). */
int rs_dumpserve_rdump(request_rec *r, const rs_set_t *set, const char *part);

/* The Change Dump of set (part NULL: changedump.xml; else a part of its
 * index, a package or a manifest copy). */
int rs_dumpserve_cdump(request_rec *r, const rs_set_t *set, const char *part);

#endif
