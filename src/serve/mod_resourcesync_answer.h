/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_answer.h - the declarations of mod_resourcesync_answer.c:
 * the answers the handler's documents share (mod_resourcesync_handler.c,
 * mod_resourcesync_dumpserve.c). */
#ifndef MOD_RESOURCESYNC_ANSWER_H
#define MOD_RESOURCESYNC_ANSWER_H

#include "mod_resourcesync.h"
#include "mod_resourcesync_status.h"

/* Content-Type type, the strong ETag etag and Last-Modified mtime. */
void rs_answer_validators(request_rec *r, const char *type, const char *etag, apr_time_t mtime);

/* Serve the state file path like a static file (sendfile and mmap as the
 * core's EnableSendfile and EnableMMAP say, Range, a strong ETag
 * "size-mtime" and Last-Modified; 304 or 412 from the conditions before
 * anything is sent); 404 when it cannot be opened (pruned).  immutable:
 * 0 a document that changes (no-cache), 1 a Resource List part (an hour),
 * 2 a closed Change List or a manifest copy, 3 a dump package (a ZIP
 * file): never changes. */
int rs_answer_file(request_rec *r, const char *path, int immutable);

/* 503 with Retry-After when the watcher found the set unavailable (cur),
 * else 0. */
int rs_answer_unavailable(request_rec *r, const rs_status_set_t *cur);

/* A document newer than the entry cur knows: 404 where this node writes
 * the set, 503 with Retry-After where another node does. */
int rs_answer_not_here_yet(request_rec *r, const rs_status_set_t *cur);

/* The rest of a part or list name after "<history>-", when history is
 * cur's; NULL otherwise. */
const char *rs_answer_history_rest(const rs_status_set_t *cur, const char *arg);

#endif
