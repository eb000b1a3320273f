/* SPDX-License-Identifier: Apache-2.0 */
/* rs_scanrate.h - a full scan's progress as figures: its rate and the
 * time left, and where its expected total comes from.
 *
 * The watcher logs them while a scan runs (mod_resourcesync_progress.c)
 * and the status page shows them from the segment's entry: both compute
 * them here, so neither calls the other.
 */
#ifndef RS_SCANRATE_H
#define RS_SCANRATE_H

#include <apr.h>
#include <apr_time.h>

/* Where a scan's expected total (the segment's scan_total_src) comes
 * from. */
#define RS_SCAN_TOTAL_UNKNOWN  0 /* no estimate */
#define RS_SCAN_TOTAL_PREVIOUS 1 /* the files the store knows from before */
#define RS_SCAN_TOTAL_COUNTED  2 /* a count of the tree's names (first scan) */

/* A scan's rate (files/s) after elapsed, and the seconds left to reach
 * total (-1: total unknown or no rate yet). */
void rs_scanrate_estimate(apr_int64_t files, apr_int64_t total, apr_interval_time_t elapsed,
                          double *rate, double *left);

/* The name of an RS_SCAN_TOTAL_* source: "previous-scan", "name-count",
 * "unknown". */
const char *rs_scanrate_source(apr_int32_t src);

#endif
