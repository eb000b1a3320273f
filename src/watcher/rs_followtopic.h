/* SPDX-License-Identifier: Apache-2.0 */
/* rs_followtopic.h - the notification topics' files on the nodes that do
 * not write a set: the writer's newest version of each through the store.
 *
 * The writer of a set replaces a topic's file (<statedir>/notify/<set>/
 * <topic>.xml) after every seal; children serve it with the strong ETag
 * of its size and mtime.  With a store several nodes share, the writer
 * then stores that version with rs_blob (kind "topic-<topic>", generation
 * the notification id the file ends with, which only grows per topic;
 * one file) in a transaction of its own begun with the set's fence, and
 * drops every earlier version in the same transaction: the store holds at
 * most one version per (set, topic).  A follower copies the store's
 * version over its own file (temporary file, fsync, rename, directory
 * fsync), with the writer's mtime, so its children serve the same bytes
 * under the same ETag and Last-Modified; a topic the store holds no
 * version of has no file (an empty body, as the writer serves then).
 *
 * Races: a follower reads the newest row and then its chunks in two
 * statements; a writer that replaced the version in between leaves the
 * chunks gone (APR_EINCOMPLETE): the next look copies the newer one.
 */
#ifndef RS_FOLLOWTOPIC_H
#define RS_FOLLOWTOPIC_H

#include <apr_pools.h>
#include "rs_db.h"

/* Writer: store the topic file at path as version id of (set, topic), in
 * a transaction of its own that begins with the set's fence
 * (rs_db_begin_set) and drops the versions stored before it.
 * RS_LEASE_LOST (nothing written) when another node writes the set now;
 * another failure's cause otherwise (rolled back: the store keeps the
 * version it had). */
apr_status_t rs_followtopic_store(rs_db_t *db, apr_pool_t *p, const char *set, const char *topic,
                                  apr_uint64_t id, const char *path);

/* Follower: make path the store's version of (set, topic): nothing done
 * when path is a regular file of its size and mtime already (*changed 0),
 * else replaced by its bytes with its mtime (*changed 1).  APR_ENOENT
 * when the store holds no version: path is removed (*changed 1 if it
 * was there).  Another failure leaves path as it was (changed may be
 * NULL). */
apr_status_t rs_followtopic_copy(rs_db_t *db, apr_pool_t *p, const char *set, const char *topic,
                                 const char *path, int *changed);

/* A node that takes the set over (the writer now): what it serves until
 * it writes a new version must be what the store holds.  The store's
 * version is copied over path when it has one (rs_followtopic_copy: the
 * previous writer's, newer than this node's copy when it stored it less
 * than a poll before it stopped); else this node's own file, if any (its
 * earlier writing, kept across a restart), is stored as version 0
 * (rs_followtopic_store), so that the other nodes serve it too. */
apr_status_t rs_followtopic_take(rs_db_t *db, apr_pool_t *p, const char *set, const char *topic,
                                 const char *path);

#endif
