/* SPDX-License-Identifier: Apache-2.0 */
/* rs_history.h - the history of a state store, and its record on disk.
 *
 * A history is one unbroken life of the state store: its journal
 * sequences, Change List ids and snapshot generations only grow within
 * it.  Each history has a random id (RS_HISTORY_LEN hex digits, see
 * rs_parse.h), created together with the store and kept in its meta table
 * (key RS_HISTORY_META).  The id leads the names of the documents that
 * never change (closed Change Lists, Resource List parts), in their URLs
 * and their file names, so that a store which does not continue the
 * previous one (deleted, restored from a backup, rolled back) publishes
 * under new URLs and never serves an old URL with other content.
 *
 * The history file, <statedir>/history (rs_statedir_history), records the
 * id of the history whose documents are on disk.  Lifecycle: written by
 * the watcher when it starts a history, after the documents of any other
 * history are gone and before it writes any of the new one; read by
 * the seed of the status segment (mod_resourcesync_seed.c, as the run
 * user) and by the watcher at its start, which compares it with the store's id.
 */
#ifndef RS_HISTORY_H
#define RS_HISTORY_H

#include <apr_pools.h>
#include "rs_parse.h"

/* The store's meta key of the history id. */
#define RS_HISTORY_META "history"

/* A new random history id into out (RS_HISTORY_LEN + 1 bytes, with its
 * NUL).  Returns the cause when the system has no random bytes. */
apr_status_t rs_history_new(char *out);

/* Read the history file path into out (RS_HISTORY_LEN + 1 bytes), with
 * rs_file_read_small: only a regular file of this process's user, never
 * through a symbolic link, never waiting on a FIFO.  Returns APR_SUCCESS,
 * the cause of a failed open (APR_ENOENT: no file), the refusal of
 * rs_file_read_small, or APR_EINVAL when it does not hold exactly one id
 * (and a newline). */
apr_status_t rs_history_read(apr_pool_t *p, const char *path, char *out);

/* Replace the history file path with id (atomically, synced). */
apr_status_t rs_history_write(apr_pool_t *p, const char *path, const char *id);

#endif
