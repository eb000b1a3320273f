/* SPDX-License-Identifier: Apache-2.0 */
/* rs_snapinfo.h - reading a snapshot generation's info file, which the
 * snapshot writer (rs_snapshot.c) writes last: the status segment's seed,
 * the watcher's snapshot job and rs-tool read it back.  The file is
 * outside input to its readers (the run user's, in the state directory):
 * it is read with bounds and parsed strictly (fuzz/fuzz_snapinfo.c).
 */
#ifndef RS_SNAPINFO_H
#define RS_SNAPINFO_H

#include <apr_pools.h>
#include "rs_snapshot.h"

/* Read a snapshot directory's info file (rs_file_read_small: a regular
 * file of this process's user, not through a symbolic link, never
 * waiting on a FIFO).  Returns APR_SUCCESS or an error when it is
 * missing, refused or malformed (an incomplete snapshot). */
apr_status_t rs_snapinfo_read(const char *dir, apr_pool_t *p, rs_snapshot_info_t *info);

#endif
