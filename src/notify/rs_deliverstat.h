/* SPDX-License-Identifier: Apache-2.0 */
/* rs_deliverstat.h - the delivery thread's status file, read by the
 * status page.
 *
 * <statedir>/notify/delivery.txt (rs_statedir_delivery) holds one line
 * per notification topic (its newest notification) and per delivery
 * destination (hub rows: backlog and last outcome; subscribers: pending
 * deliveries and failures).  The delivery thread, in the watcher, renews
 * it every few seconds when its text changed (rs_file_replace: temporary
 * file, rename), so the status page, in a child, shows it without
 * touching the store; a missing or stale file only makes the page older,
 * never wrong about the segment.  The file is the only thing the two
 * sides share here: neither calls the other.
 */
#ifndef RS_DELIVERSTAT_H
#define RS_DELIVERSTAT_H

#include <apr_pools.h>
#include <apr_time.h>
#include "rs_notify.h"
#include "rs_notifydest.h"

/* The line of topic (RS_NOTIFY_CHANGE or RS_NOTIFY_FRAMEWORK) of set: its
 * newest notification in box, "" when none can be read. */
const char *rs_deliverstat_topic(apr_pool_t *p, rs_notify_t *box, const char *set,
                                 const char *topic);

/* The line of destination row: last_at its last try (0: none), count its
 * backlog (hubs) or pending deliveries (subscribers). */
const char *rs_deliverstat_line(apr_pool_t *p, const rs_notifydest_t *row, apr_time_t last_at,
                                apr_int64_t count);

/* Replace the file below statedir with text unless it equals *prev
 * (malloc'd; updated once the file is written). */
void rs_deliverstat_write(apr_pool_t *p, const char *statedir, const char *text, char **prev);

/* The file's text (at most 16 MiB), NULL when there is none. */
const char *rs_deliverstat_read(apr_pool_t *p, const char *statedir);

#endif
