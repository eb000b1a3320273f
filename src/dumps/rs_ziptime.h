/* SPDX-License-Identifier: Apache-2.0 */
/* rs_ziptime.h - a member's time in a package, independent of the time
 * zone: its DOS date and time show the UTC fields of its modification
 * time (clamped to the DOS range), and an extended timestamp ("UT" extra
 * field, local and central) holds the second itself when it fits 32 bits.
 * So a package built from the same files has the same bytes on any host
 * and in any TZ (rs_zip.h).
 */
#ifndef RS_ZIPTIME_H
#define RS_ZIPTIME_H

#include <zip.h>
#include <apr.h>

/* Set the time of member idx of za from mtime_ns (nanoseconds since the
 * epoch, negative too).  0, or -1 with libzip's error in za. */
int rs_ziptime_set(zip_t *za, zip_uint64_t idx, apr_int64_t mtime_ns);

#endif
