/* SPDX-License-Identifier: Apache-2.0 */
/* rs_scanrate.c - see rs_scanrate.h */
#include "rs_scanrate.h"

void rs_scanrate_estimate(apr_int64_t files, apr_int64_t total, apr_interval_time_t elapsed,
                          double *rate, double *left)
{
    *rate = elapsed > 0 ? (double)files * APR_USEC_PER_SEC / (double)elapsed : 0.0;
    *left = total >= 0 && *rate > 0 ? (double)(total > files ? total - files : 0) / *rate : -1.0;
}

const char *rs_scanrate_source(apr_int32_t src)
{
    switch (src) {
    case RS_SCAN_TOTAL_PREVIOUS:
        return "previous-scan";
    case RS_SCAN_TOTAL_COUNTED:
        return "name-count";
    default:
        return "unknown";
    }
}
