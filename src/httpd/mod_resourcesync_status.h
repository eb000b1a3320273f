/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_status.h - the declarations of mod_resourcesync_status.c. */
#ifndef MOD_RESOURCESYNC_STATUS_H
#define MOD_RESOURCESYNC_STATUS_H

#include "mod_resourcesync.h"
#include "rs_history.h"
#include "rs_hubgate.h"
#include "rs_journal.h"
#include "rs_ring.h"
#include "rs_scanrate.h"

/* mod_resourcesync_status.c: see that file for the segment's layout. */
#define RS_STATE_STARTING 0
#define RS_STATE_SCANNING 1
#define RS_STATE_WATCHING 2
#define RS_STATE_DEGRADED 3

typedef struct rs_status_set_t {
    char name[RS_SET_NAME_MAX + 1];
    /* The history (rs_history.h) of every document below: part and closed
     * list URLs carry it, and a child serves one only when it matches.
     * "" while unknown (no history on disk, the watcher not started). */
    char history[RS_HISTORY_LEN + 1];
    apr_uint64_t gen; /* current snapshot, 0: none yet */
    apr_time_t at;
    apr_time_t completed;
    apr_int64_t entries;
    apr_int32_t parts;
    apr_time_t consistent;  /* inventory consistent as of */
    apr_int64_t cl_open_id; /* id of the open Change List, 0: none yet */
    apr_int32_t mode;       /* RS_MODE_* */
    /* The open Change List, set by the watcher (cl_ready) from the store at
     * its start, then after every commit of records and every close. */
    apr_int32_t cl_ready;
    apr_time_t cl_from;
    apr_int64_t cl_first_seq;
    apr_int64_t cl_last_seq; /* cl_first_seq - 1: empty */
    apr_int64_t cl_count;
    apr_time_t cl_last_dt; /* datetime of its newest record */
    apr_int64_t cl_bytes;  /* its entries' rendered bytes, -1: unknown
                                     * (HEAD then renders the list to count) */
    /* With Change Dumps: the bytes their manifest entries add
     * (rs_cdump_path_len), the watcher's only; -1: unknown. */
    apr_int64_t cl_paths;
    /* Set by the watcher (rs_massdel.h): the set cannot be
     * listed (root missing, unmounted, URL-path elsewhere); its documents
     * but the Capability List answer 503 while it is. */
    apr_int32_t unavailable;
    char why[256];         /* why, while unavailable */
    apr_int64_t held;      /* deletions waiting for a confirming scan */
    apr_uint64_t dump_gen; /* current Resource Dump, 0: none */
    /* Change Dumps (mod_resourcesync_cdumpjob.c): changedump.xml was
     * written by this history; bytes of the listed packages and of the
     * captured versions when it was last written. */
    apr_int32_t cdump_ready;
    apr_int64_t cdump_bytes;
    apr_int64_t capture_bytes;
    /* For the status page: the current snapshot's bytes (sum of its
     * files' sizes, -1: unknown), and the set's inotify watches when the
     * driver last wrote this entry (rs_drive_status_put). */
    apr_int64_t bytes;
    apr_int64_t watches;
    /* A set another node writes (RS_MODE_ELSEWHERE): 1 once this node's
     * notification topic files are the writer's versions, copied from the
     * store (mod_resourcesync_followtopic.c), so children serve them;
     * emptied with the other documents when the set becomes elsewhere. */
    apr_int32_t topics;
} rs_status_set_t;

#define RS_STATUS_PATH_MAX 512 /* rs_status_t.hash_path */
#define RS_STATUS_ERR_MAX  512 /* rs_status_t.last_err */

#define RS_MODE_STARTING 0 /* no full scan yet */
#define RS_MODE_WATCHING 1 /* inotify follows the whole tree */
#define RS_MODE_RESCANS  2 /* degraded: periodic full rescans */
/* Another node writes the set (its store lock is held elsewhere,
 * mod_resourcesync_writer.c): this node's watcher does not. */
#define RS_MODE_ELSEWHERE 3

typedef struct rs_status_t {
    apr_uint32_t magic;
    apr_uint32_t layout;
    volatile apr_int32_t watcher_pid;
    volatile apr_uint32_t state;
    volatile apr_time_t heartbeat;
    volatile apr_int64_t scan_files;
    volatile apr_int32_t scan_set; /* slot being scanned, -1 none */
    apr_uint32_t nsets;
    /* The hashing lane (mod_resourcesync_hashlane.c), written by its
     * thread: the large file being hashed ("set: relpath", "" none; under
     * the mutex, rs_status_hashing_put), its size, the bytes read so far
     * and the files waiting (single words, read without the lock). */
    char hash_path[RS_STATUS_PATH_MAX];
    volatile apr_int64_t hash_size;
    volatile apr_int64_t hash_done;
    volatile apr_int32_t hash_queue;
    volatile apr_int32_t store_err; /* store failing: its cause, 0: works */
    /* The full scan in progress (mod_resourcesync_progress.c, single
     * words written by the driver): when it started, the files it is
     * expected to see (-1: unknown) and where that figure comes from
     * (RS_SCAN_TOTAL_*). */
    volatile apr_time_t scan_start;
    volatile apr_int64_t scan_total;
    volatile apr_int32_t scan_total_src;
    /* The watcher's newest warning or error and its time (under the
     * mutex: rs_status_error_put, rs_status_error_get). */
    apr_time_t last_err_time;
    char last_err[RS_STATUS_ERR_MAX];
    /* The built-in hub's spool gate (rs_hubgate.h): the requests waiting
     * in the spool and their bytes (reserved by children, given back by
     * the watcher, which sets them from a listing at its start), and the
     * request rates per client (under the mutex: rs_status_hub_rate). */
    rs_hubgate_t hub;
    rs_status_set_t sets[1]; /* nsets entries */
} rs_status_t;

int rs_status_pre(apr_pool_t *pconf);
int rs_status_create(apr_pool_t *pconf, server_rec *s);

void rs_status_child_init(apr_pool_t *p, server_rec *s);
rs_status_t *rs_status_get(void);
/* Copy a set's entry (under the mutex). */
void rs_status_read_set(int slot, rs_status_set_t *out);
/* Publish a set's entry (under the mutex). */
void rs_status_write_set(int slot, const rs_status_set_t *in);
/* Put journal records (array of rs_record_t, committed) into the ring and
 * publish the set's entry, in one critical section. */
void rs_status_publish(int slot, const apr_array_header_t *recs, const rs_status_set_t *in);
/* The hashing lane's file (NULL: none) and its size, under the mutex; the
 * bytes read go to status->hash_done directly. */
void rs_status_hashing_put(const char *set, const char *relpath, apr_int64_t size);
/* Copy the hashing lane's file into buf (RS_STATUS_PATH_MAX bytes; ""
 * none), under the mutex. */
void rs_status_hashing_get(char *buf);
/* Record the watcher's newest warning or error (msg is cut to
 * RS_STATUS_ERR_MAX - 1 bytes), under the mutex. */
void rs_status_error_put(const char *msg);
/* Copy the newest warning or error into buf (RS_STATUS_ERR_MAX bytes, ""
 * none) and its time into *when (0: none), under the mutex. */
void rs_status_error_get(char *buf, apr_time_t *when);
/* The highest journal sequence put into the ring (0: none since the start). */
apr_int64_t rs_status_ring_head(void);
/* Put records (rs_record_t with their entries, increasing sequences) of
 * various sets (slots[i] is record i's set) into the ring, under the
 * mutex, without touching the set entries. */
void rs_status_ring_fill(const apr_array_header_t *recs, const int *slots);
/* Copy records of a set from the ring: see rs_ring_get. */
int rs_status_ring_get(int slot, apr_int64_t from, apr_int64_t last, int max, apr_pool_t *p,
                       apr_array_header_t *out, apr_int64_t *next);
/* Where the last `need` bytes of a set's entries first .. last start, from
 * the ring, under the mutex: see rs_ring_seek. */
int rs_status_ring_seek(int slot, apr_int64_t first, apr_int64_t last, apr_int64_t need,
                        apr_int64_t *seq, apr_int64_t *bytes);

/* Empty the ring (a new history: its sequences may restart), under the
 * mutex. */
void rs_status_ring_reset(void);
/* The hub's spool gate in the segment (NULL: no segment). */
rs_hubgate_t *rs_status_hub_gate(void);
/* rs_hubgate_rate on the segment's table, under the mutex: 0 when the
 * client may send a request now, else the seconds until it may. */
apr_int64_t rs_status_hub_rate(const char *client, apr_time_t now, apr_int64_t n,
                               apr_interval_time_t per);

#endif
