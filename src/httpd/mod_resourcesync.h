/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync.h - shared declarations of the httpd glue.
 *
 * The glue is split by concern:
 *   mod_resourcesync.c            module record, hook registration
 *   mod_resourcesync_global.c     rs_global, the state of a server generation
 *   mod_resourcesync_config.c     config records, merges, post_config checks
 *   mod_resourcesync_cmd.c        the directive machinery: contexts, records,
 *                                 shared setters (mod_resourcesync_cmd.h)
 *   mod_resourcesync_directives.c the directive table, set registry
 *   mod_resourcesync_status.c     shared-memory status segment + mutex
 *   mod_resourcesync_watcher.c    watcher process lifecycle (fork, respawn,
 *                                 privileges)
 *   mod_resourcesync_drive.c      the watcher's work: per-set state, event
 *                                 loop, scheduling of ticks and jobs
 *   mod_resourcesync_reconcile.c  full scans and event batches of a set,
 *                                 publishing what they changed
 *   mod_resourcesync_massdel.c    unavailable sets, held mass deletions,
 *                                 the mount table
 *   mod_resourcesync_hashlane.c   large files hashed on a thread of their own
 *   mod_resourcesync_history.c    the store's history (state loss)
 *   mod_resourcesync_snapjob.c    Resource List snapshots as background jobs
 *   mod_resourcesync_jobs.c       the watcher's background jobs (own thread,
 *                                 own store connection)
 *   mod_resourcesync_logonce.c    the watcher's once-only log of warnings
 *   mod_resourcesync_os.c         the state directory on disk: check,
 *                                 creation, ownership
 *   mod_resourcesync_storefail.c  the watcher when the state store fails
 *   mod_resourcesync_access.c     "would an anonymous GET serve this?"
 *   mod_resourcesync_docs.c       Source Description / Capability Lists
 *   mod_resourcesync_handler.c    URL mapping, handler, Link header
 *   mod_resourcesync_changes.c    the journal's Change Lists, their files and
 *                                 the open list's extent (watcher side)
 *   mod_resourcesync_clsource.c   Change List options, ring-first records
 *   mod_resourcesync_openlist.c   the open Change List (children)
 *   mod_resourcesync_statuspage.c "SetHandler resourcesync-status"
 *   mod_resourcesync_hubconf.c    the built-in hub's directives
 *   mod_resourcesync_hub.c        the built-in hub's subscription endpoint
 */
#ifndef MOD_RESOURCESYNC_H
#define MOD_RESOURCESYNC_H

#include <httpd.h>
#include <http_config.h>
#include <http_log.h>
#include <apr_global_mutex.h>
#include <apr_shm.h>
#include "rs_changelist.h"
#include "rs_entry.h"
#include "rs_hubgate.h"
#include "rs_journal.h"
#include "rs_log.h"
#include "rs_parse.h"
#include "rs_recorder.h"
#include "rs_ring.h"
#include "rs_scanrate.h"

#ifndef RS_MODULE_MAIN       /* AP_DECLARE_MODULE declares it there */
APLOG_USE_MODULE(resourcesync);
#endif
extern module AP_MODULE_DECLARE_DATA resourcesync_module;

/* Stable tag carried by every message of the module. */
#define RS_TAG "mod_resourcesync: "

#define RS_UNSET            (-1)
#define RS_DEFAULT_PREFIX   "/resourcesync"
#define RS_DEFAULT_MAX      50000
#define RS_DEFAULT_RESCAN   60
#define RS_DEFAULT_RECENT   4096     /* ResourceSyncRecentChanges */
#define RS_DEFAULT_LARGE    64       /* ResourceSyncLargeFileSize, MiB */
#define RS_MAX_LARGE        1048576  /* MiB: 1 TiB */
#define RS_DEFAULT_DUMP_ENTRIES 50000    /* ResourceSyncDumpMaxEntries */
#define RS_MAX_DUMP_ENTRIES 10000000     /* ... its largest value */
#define RS_DEFAULT_DUMP_SIZE 1024        /* ResourceSyncDumpMaxSize, MiB */
#define RS_DEFAULT_DUMP_GRACE apr_time_from_sec(86400)  /* ResourceSyncDumpGrace */
#define RS_DEFAULT_VERIFY   apr_time_from_sec(86400)  /* ResourceSyncVerifyInterval */
#define RS_MIN_RECENT       16
#define RS_MAX_RECENT       262144
#define RS_DEFAULT_MASSDEL_SHARE 50  /* ResourceSyncMassDeletion: percent */
#define RS_DEFAULT_MASSDEL_MIN   100 /* ... and files */
#define RS_DEFAULT_NOTIFY_DELAY apr_time_from_msec(100)
#define RS_DEFAULT_PERIOD   apr_time_from_sec(86400)
#define RS_DEFAULT_RETENTION apr_time_from_sec(30 * 86400)
#define RS_WELL_KNOWN       "/.well-known/resourcesync"
#define RS_HANDLER          "resourcesync"
#define RS_SET_NAME_MAX     64
#define RS_MAX_SETS         256
#define RS_DEFAULT_HUB_LEASE_MIN    300             /* ResourceSyncHubLease, s */
#define RS_DEFAULT_HUB_LEASE_MAX    (31 * 86400)
#define RS_DEFAULT_HUB_BACKLOG      1000            /* ResourceSyncHubMaxBacklog */
#define RS_DEFAULT_HUB_MAX_SUBS     10000           /* ResourceSyncHubMaxSubscriptions */
#define RS_DEFAULT_HUB_MAX_PER_ADDR 100             /* ... per callback address */
#define RS_DEFAULT_HUB_MAX_PER_CLIENT 100           /* ... per client address */
#define RS_HUB_MAX_COUNT            10000000        /* largest of those limits */
#define RS_DEFAULT_HUB_SPOOL        1000            /* ResourceSyncHubSpoolLimit: requests */
#define RS_DEFAULT_HUB_SPOOL_KIB    4096            /* ... and KiB */
#define RS_DEFAULT_HUB_RATE         60              /* ResourceSyncHubRequestRate: requests */
#define RS_DEFAULT_HUB_RATE_PER     apr_time_from_sec(60)   /* ... per */
#define RS_DEFAULT_HUB_VERIFY_TIMEOUT apr_time_from_sec(5)  /* ResourceSyncHubVerifyTimeout */

typedef struct rs_dir_conf rs_dir_conf;

/* One ResourceSyncSet.  Created while the configuration is read; the
 * fields below "resolved" are filled in post_config. */
typedef struct rs_set_t {
    const char *name;
    const char *dir;            /* absolute, canonical, no trailing "/" */
    const char *url_arg;        /* optional second argument */
    server_rec *s;              /* server (vhost) the set was declared in */
    rs_dir_conf *section;       /* config of its <Directory> section */
    const char *where;          /* "file:line" for messages */
    /* resolved */
    const char *url_path;       /* unescaped URL-path of dir, ends with "/" */
    unsigned hashes;            /* RS_HASH_* mask: the digests listed */
    /* The digests computed and kept in the store: hashes, and SHA-256
     * with Change Dumps (the name of a capture, rs_capture.h). */
    unsigned digests;
    int max_entries;
    apr_array_header_t *excludes;
    const char *describedby;
    int dotfiles;
    apr_interval_time_t cl_period;  /* ResourceSyncChangeListPeriod */
    apr_interval_time_t retention;  /* ResourceSyncJournalRetention */
    int spec10;                 /* ResourceSyncSpecVersion 1.0 */
    apr_interval_time_t rdump;  /* ResourceSyncResourceDump: 0 off, else min interval */
    const char *rdump_dir;      /* <statedir>/dumps/<name> */
    apr_int64_t dump_entries;   /* ResourceSyncDumpMaxEntries */
    apr_int64_t dump_size;      /* ResourceSyncDumpMaxSize, bytes */
    apr_interval_time_t dump_grace;  /* ResourceSyncDumpGrace */
    int cdump;                  /* ResourceSyncChangeDump on */
    const char *capture_dir;    /* <statedir>/capture/<name> */
    const char *cdump_dir;      /* <statedir>/changedumps/<name> */
    int notify;                 /* ResourceSyncNotify on */
    apr_interval_time_t notify_delay;   /* ResourceSyncNotifyDelay */
    /* ResourceSyncNotifyHub (rs_notify_hub_t), section's after the
     * server's; NULL: none.  ResourceSyncNotifyRetry. */
    apr_array_header_t *notify_pub;
    apr_interval_time_t notify_retry;
    const char *notify_dir;     /* <statedir>/notify/<name> */
    /* URLs (const char *) of the hubs the topics advertise (Link header,
     * Capability List), filled at post_config before the documents are
     * rendered; NULL or empty: none. */
    apr_array_header_t *notify_hubs;
    const char *cl_dir;         /* <statedir>/changelists/<name> */
    const char *cl_index_url;   /* .../changelist.xml */
    const char *root_url;       /* absolute URL of dir, escaped, ends "/" */
    const char *doc_base;       /* absolute URL of <prefix>/<name>/ */
    const char *capability_url;
    const char *list_url;
    const char *snap_dir;       /* <statedir>/snapshots/<name> */
    int slot;                   /* index in the status segment */
    const char *cl_body;        /* pre-rendered Capability List */
    apr_size_t cl_len;
    const char *cl_etag;
    /* Access checks per directory (mod_resourcesync_uniform.c): the
     * analysis, or NULL when every file gets its own request, and why. */
    const struct rs_uniform_t *uniform;
    const char *uniform_why;
} rs_set_t;

struct rs_dir_conf {
    rs_set_t *set;              /* NULL: not inside a set */
    int hashes;                 /* RS_UNSET or RS_HASH_* mask (0 = none) */
    int max_entries;            /* RS_UNSET or 1..50000 */
    apr_array_header_t *excludes;   /* NULL: unset */
    const char *describedby;    /* NULL: unset */
    int dotfiles;               /* RS_UNSET, 0, 1 */
    apr_interval_time_t cl_period;  /* RS_UNSET or > 0 */
    apr_interval_time_t retention;  /* RS_UNSET or > 0 */
    int spec10;                 /* RS_UNSET, 0 (1.1), 1 (1.0) */
    apr_interval_time_t rdump;  /* RS_UNSET, 0 (off) or > 0 */
    apr_int64_t dump_entries;   /* RS_UNSET or 1..RS_MAX_DUMP_ENTRIES */
    apr_int64_t dump_size;      /* RS_UNSET or bytes (MiB given) */
    apr_interval_time_t dump_grace;  /* RS_UNSET or > 0 */
    int cdump;                  /* RS_UNSET, 0 (off), 1 (on) */
    int notify;                 /* RS_UNSET, 0 (off), 1 (on) */
    apr_interval_time_t notify_delay;   /* RS_UNSET or 0..1 h */
    apr_array_header_t *notify_pub;     /* rs_notify_hub_t; NULL: unset */
    apr_interval_time_t notify_retry;   /* RS_UNSET or > 0 */
};

/* One ResourceSyncNotifyHub: a hub the set publishes to. */
typedef struct rs_notify_hub_t {
    const char *url;            /* absolute http/https */
    int ping;                   /* 1: ping mode, 0: fat */
    /* Who may be connected to when publishing there (rs_notifyconf_resolve,
     * from the set's server): trusted when the URL's host is named in
     * ResourceSyncHubAllowCallback; else an address must pass that
     * server's callback policy (allow) or be the address the URL names
     * literally (lit, lit_len 4 or 16; 0: a name). */
    int trusted;
    const apr_array_header_t *allow;
    unsigned char lit[16];
    int lit_len;
} rs_notify_hub_t;

typedef struct rs_srv_conf {
    const char *prefix;         /* NULL: unset */
    const char *base_url;       /* NULL: unset */
    const char *describedby;    /* source-level; NULL: unset */
    apr_array_header_t *sets;   /* rs_set_t* declared in this server */
    /* The built-in hub (mod_resourcesync_hubconf.c): RS_UNSET or a value. */
    int hub;                    /* ResourceSyncHub: 0, 1 */
    apr_int64_t hub_lease_min;  /* ResourceSyncHubLease, seconds */
    apr_int64_t hub_lease_max;
    apr_array_header_t *hub_allow;  /* ResourceSyncHubAllowCallback:
                                     * rs_hubaddr_allow_t, NULL unset */
    apr_int64_t hub_backlog;    /* ResourceSyncHubMaxBacklog */
    apr_int64_t hub_max_subs;   /* ResourceSyncHubMaxSubscriptions total */
    apr_int64_t hub_max_per_addr;   /* ... per callback address */
    apr_int64_t hub_max_per_client; /* ... per client address */
    int hub_sig;                /* ResourceSyncHubSignature: RS_UNSET or an
                                 * index of rs_notifyconf_sig_names */
    /* resolved in post_config */
    const char *canonical;      /* scheme://host[:port] */
    const char *sd_body;        /* pre-rendered Source Description */
    apr_size_t sd_len;
    const char *sd_etag;
    int access_check;           /* ResourceSyncAccessCheck: RS_UNSET,
                                 * RS_ACCESS_AUTO, RS_ACCESS_PER_FILE */
} rs_srv_conf;

#define RS_ACCESS_AUTO     0
#define RS_ACCESS_PER_FILE 1

/* Process-wide state of one server generation (reset in pre_config). */
typedef struct rs_global_t {
    apr_pool_t *pconf;
    const char *state_dir;      /* ResourceSyncStateDir, absolute */
    const char *state_dir_arg;  /* ... as given (maybe relative to ServerRoot) */
    const char *state_dir_where;    /* ... "file:line" */
    apr_interval_time_t rescan; /* ResourceSyncRescanInterval */
    int recent;                 /* ResourceSyncRecentChanges: ring slots */
    int massdel_share;          /* ResourceSyncMassDeletion: RS_UNSET, 0 (off), 1..99 % */
    apr_int64_t massdel_min;    /* ... and more than this many files */
    apr_int64_t large_file;     /* ResourceSyncLargeFileSize in bytes, 0: off */
    apr_interval_time_t verify; /* ResourceSyncVerifyInterval, 0: off */
    apr_array_header_t *sets;   /* every rs_set_t*, all servers */
    apr_time_t config_time;     /* Last-Modified of config documents */
    const char *fingerprint;    /* of the httpd configuration */
    apr_shm_t *shm;
    apr_global_mutex_t *mutex;
    apr_array_header_t *option_uses;  /* set options in directory sections
                                       * (mod_resourcesync_cmd.c) */
    int restart;                /* an earlier generation of this httpd really started */
    int state_unusable;         /* restart: state directory unusable, no watcher */
    /* The built-in hub's global limits (mod_resourcesync_hubconf.c); 0:
     * unset (the defaults are applied where they are read). */
    apr_int64_t hub_spool_max;  /* ResourceSyncHubSpoolLimit: requests */
    apr_int64_t hub_spool_kib;  /* ... KiB */
    apr_int64_t hub_rate;       /* ResourceSyncHubRequestRate: requests */
    apr_interval_time_t hub_rate_per;   /* ... per */
    apr_interval_time_t hub_verify_timeout; /* ResourceSyncHubVerifyTimeout */
} rs_global_t;

extern rs_global_t rs_global;

/* mod_resourcesync_directives.c: the directive table. */
extern const command_rec rs_cmds[];
/* A table entry's cmd_data (mod_resourcesync_cmd.h). */
typedef struct rs_cmd_t rs_cmd_t;

/* mod_resourcesync_config.c */
void *rs_config_create_dir(apr_pool_t *p, char *dir);
void *rs_config_merge_dir(apr_pool_t *p, void *base, void *add);
void *rs_config_create_srv(apr_pool_t *p, server_rec *s);
void *rs_config_merge_srv(apr_pool_t *p, void *base, void *add);
int rs_config_pre(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp);
/* Check the whole configuration (create == 0, from check_config, so that
 * `apachectl -t` reports it) or check and resolve it, creating the state
 * directory (create == 1, post_config). */
int rs_config_resolve(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s, int create);
/* Remember (across restarts, in httpd's retained data) that a server
 * generation really started: the next configuration pass is a restart,
 * on which an unusable state directory is logged instead of stopping
 * httpd.  Called by post_config's real pass. */
#define RS_STARTED_KEY "mod_resourcesync-started"
void rs_config_started(void);
/* The server's ResourceSyncPrefix, or the default. */
const char *rs_config_prefix(const rs_srv_conf *sc);
/* The set named name, of any server (its `s` is the server that declares
 * it), or NULL. */
const rs_set_t *rs_config_find_set(const char *name);

/* mod_resourcesync_fingerprint.c */
/* Hex MD5 (in p) of the parsed configuration tree without the directives
 * that cannot change an access decision, a media type or a URL (logging,
 * process tuning, ServerTokens...; the rule is in the file).  Inventory
 * rows decided under another fingerprint are checked again. */
const char *rs_fingerprint_compute(apr_pool_t *p, const ap_directive_t *tree);

/* mod_resourcesync_os.c (who may do what in the state directory: see
 * that file) */
/* NULL if the state directory dir (absolute) exists as a writable
 * directory (not a symbolic link) or could be created; else why not (in
 * ptemp).  Changes nothing on disk (it runs under `httpd -t`). */
const char *rs_os_statedir_check(apr_pool_t *ptemp, const char *dir);
/* Create dir (and missing parents, 0755) and, when root, give it to the
 * run user; mode 0700.  Nothing inside it is touched, and a symbolic link
 * at dir is refused, never followed.  NULL, or what failed with its cause
 * (in ptemp). */
const char *rs_os_statedir_make(apr_pool_t *ptemp, const char *dir);
/* The watcher's first step, as the run user, before the store is opened:
 * the state directory's own entries private (directories 0700, files
 * 0600; nothing followed), snapshots/ created.  Logs what it changed, and
 * a failure. */
void rs_os_statedir_prepare(apr_pool_t *p, server_rec *s);
/* Right after the store is opened: everything below the state directory
 * private, unless the store records that this was done (then it is set). */
void rs_os_statedir_private(apr_pool_t *p, server_rec *s, rs_db_t *store);

/* mod_resourcesync_docs.c */
int rs_docs_render(apr_pool_t *pconf, server_rec *s);

/* mod_resourcesync_status.c: see that file for the segment's layout. */
#define RS_STATE_STARTING  0
#define RS_STATE_SCANNING  1
#define RS_STATE_WATCHING  2
#define RS_STATE_DEGRADED  3

typedef struct rs_status_set_t {
    char name[RS_SET_NAME_MAX + 1];
    /* The history (rs_history.h) of every document below: part and closed
     * list URLs carry it, and a child serves one only when it matches.
     * "" while unknown (no history on disk, the watcher not started). */
    char history[RS_HISTORY_LEN + 1];
    apr_uint64_t gen;               /* current snapshot, 0: none yet */
    apr_time_t at;
    apr_time_t completed;
    apr_int64_t entries;
    apr_int32_t parts;
    apr_time_t consistent;          /* inventory consistent as of */
    apr_int64_t cl_open_id;         /* id of the open Change List, 0: none yet */
    apr_int32_t mode;               /* RS_MODE_* */
    /* The open Change List, set by the watcher (cl_ready) from the store at
     * its start, then after every commit of records and every close. */
    apr_int32_t cl_ready;
    apr_time_t cl_from;
    apr_int64_t cl_first_seq;
    apr_int64_t cl_last_seq;        /* cl_first_seq - 1: empty */
    apr_int64_t cl_count;
    apr_time_t cl_last_dt;          /* datetime of its newest record */
    apr_int64_t cl_bytes;           /* its entries' rendered bytes, -1: unknown
                                     * (HEAD then renders the list to count) */
    /* Set by the watcher (rs_massdel.h): the set cannot be
     * listed (root missing, unmounted, URL-path elsewhere); its documents
     * but the Capability List answer 503 while it is. */
    apr_int32_t unavailable;
    char why[256];                  /* why, while unavailable */
    apr_int64_t held;               /* deletions waiting for a confirming scan */
    apr_uint64_t dump_gen;          /* current Resource Dump, 0: none */
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
} rs_status_set_t;

#define RS_STATUS_PATH_MAX 512     /* rs_status_t.hash_path */
#define RS_STATUS_ERR_MAX  512     /* rs_status_t.last_err */

#define RS_MODE_STARTING  0         /* no full scan yet */
#define RS_MODE_WATCHING  1         /* inotify follows the whole tree */
#define RS_MODE_RESCANS   2         /* degraded: periodic full rescans */

typedef struct rs_status_t {
    apr_uint32_t magic;
    apr_uint32_t layout;
    volatile apr_int32_t watcher_pid;
    volatile apr_uint32_t state;
    volatile apr_time_t heartbeat;
    volatile apr_int64_t scan_files;
    volatile apr_int32_t scan_set;  /* slot being scanned, -1 none */
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
    rs_status_set_t sets[1];        /* nsets entries */
} rs_status_t;

int rs_status_pre(apr_pool_t *pconf);
int rs_status_create(apr_pool_t *pconf, server_rec *s);

/* mod_resourcesync_seed.c */
/* Fill the nsets entries of a status segment that no other process uses
 * yet (each with its set's name) from what the state directory holds,
 * read by a short-lived process of the run user; waits for it a bounded
 * time.  Entries it could not fill are left empty (logged). */
void rs_seed_fill(apr_pool_t *pconf, server_rec *s, rs_status_set_t *sets, int nsets);
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

/* mod_resourcesync_clsource.c: a set's Change List documents - their
 * options, and their records from the ring first, then the store. */
/* The entry options of set's change entries: the same for Change Lists,
 * Change Dump manifests and change notifications, so one change is the
 * same <url> bytes everywhere. */
void rs_clsource_entry_opts(const rs_set_t *set, rs_entry_opts_t *eo);
/* The options of set's Change List documents of history (the list URLs
 * are "<doc_base>changelist/<history>-<id>.xml"). */
void rs_clsource_opts(apr_pool_t *p, const rs_set_t *set, const char *history,
                      rs_changelist_opts_t *o);
/* A renderer of set's entries, with its options, from p (NULL on failure). */
rs_entry_renderer_t *rs_clsource_renderer(apr_pool_t *p, const rs_set_t *set);
/* Records next..last (at most limit) read from the store, appended to out
 * (an array of rs_record_t). */
typedef apr_status_t rs_clsource_more_fn(void *baton, apr_pool_t *p, apr_int64_t next,
                                         apr_int64_t last, int limit, apr_array_header_t *out);
/* A ring-first source: one per document written. */
typedef struct rs_clsource_t {
    const rs_set_t *set;
    int from_store;             /* the ring no longer holds the rest */
    rs_clsource_more_fn *more;
    void *baton;
    apr_status_t err;           /* of `more`: the store failed */
} rs_clsource_t;
/* Prepare s for a document of set, `more` reading the store. */
void rs_clsource_init(rs_clsource_t *s, const rs_set_t *set, rs_clsource_more_fn *more,
                      void *baton);
/* rs_changelist_source_fn (baton: an rs_clsource_t): the ring while it
 * holds the records, then the store through `more`. */
apr_status_t rs_clsource_read(void *baton, apr_pool_t *p, apr_int64_t next, apr_int64_t last,
                              int limit, apr_array_header_t **out);
/* Append the records of `more` to out (arrays of rs_record_t). */
void rs_clsource_append(apr_array_header_t *out, const apr_array_header_t *more);

/* mod_resourcesync_changes.c: the watcher's side of the journal and the
 * Change Lists.  `own` is the watcher's own copy of the set's status
 * entry: these functions update it and publish it, never read the
 * segment. */
/* The recorder of a scan of set (rs_scan's on_change: rs_recorder_record),
 * from p (the scan's pool): journal records with their entries rendered
 * for the ring, a window as large as the ring. */
rs_recorder_t *rs_changes_recorder(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set);
/* After the transaction with rc's records committed: put them in the ring
 * and publish the open list's new extent (rc NULL: nothing to do). */
void rs_changes_publish(apr_pool_t *p, rs_recorder_t *rc, const rs_set_t *set,
                        rs_status_set_t *own);
/* After a failed scan: put the set's records that are committed but not
 * published yet (those after own's extent, from the store) into the ring
 * and publish the extent that covers them.  Records of a rolled-back
 * transaction are not in the store, so they never reach the ring. */
apr_status_t rs_changes_resync(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                               rs_status_set_t *own);
/* Close the open list when full or at the end of its period, expire old
 * lists, write the closed lists' files and the index that changed, and
 * publish the open list's extent (rs_listclose_update, with lc the set's
 * state for the watcher's life). */
struct rs_listclose_t;
apr_status_t rs_changes_update(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                               struct rs_listclose_t *lc, rs_status_set_t *own,
                               const rs_logger_t *log);
/* At watcher start: publish the open list's extent from the store. */
apr_status_t rs_changes_seed(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                             rs_status_set_t *own);
/* At watcher start, after rs_changes_seed of every set: put the newest
 * journal records (as many as the ring holds, every set), rendered, into
 * the ring. */
void rs_changes_seed_ring(apr_pool_t *p, rs_journal_t *j, const rs_logger_t *log);

/* mod_resourcesync_openlist.c: children serve the open Change List. */
/* Per child: the lock of its read connection to the store. */
void rs_openlist_child_init(apr_pool_t *p);
/* Serve the open Change List of a set, whose extent is cur (handler). */
int rs_openlist_serve(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur);

/* mod_resourcesync_watcher.c */
/* post_config (real pass): fork this generation's watcher, registered as
 * an other child of the MPM, respawned if it dies.  No sets: no watcher. */
int rs_watcher_start(apr_pool_t *pconf, server_rec *s);

/* mod_resourcesync_drive.c */
/* In the watcher process, as the run user: open the store, reconcile
 * every set, then follow changes until the parent is gone (returns
 * APR_SUCCESS).  Returns the cause, logged, when the watcher cannot start
 * (the store or the journal cannot be opened for a cause that does not go
 * away by itself; transient ones are retried): a respawn would only
 * repeat it. */
apr_status_t rs_drive_run(apr_pool_t *pool, server_rec *s);
/* What rs_drive_run returns when the state store was deleted or replaced
 * under the running watcher: a new watcher must start (a new history). */
#define RS_DRIVE_RESTART APR_EAGAIN

/* mod_resourcesync_jobs.c: background work of the watcher, one job at a
 * time, on one thread with a store connection of its own (see that file
 * for a job's lifecycle). */
typedef struct rs_job_t rs_job_t;
/* Runs the job, on the job thread (or inline on the driver's thread);
 * store is the connection of the thread that runs it, p the job's pool.
 * Its result is passed to the finish function. */
typedef apr_status_t rs_job_run_fn(void *baton, rs_db_t *store, apr_pool_t *p);
/* Runs on the driver's thread once the job is done (rv: the run's
 * result); the job's pool p is destroyed right after. */
typedef void rs_job_finish_fn(void *baton, apr_status_t rv, apr_pool_t *p);
/* In the watcher, before the first job: the pool of the job thread and
 * its lock, the server for the thread's log lines, and the driver's store
 * connection (for jobs run inline). */
void rs_jobs_init(apr_pool_t *pool, server_rec *s, rs_db_t *store);
/* Close the job thread's store connection (opened again at its next job)
 * and forget the driver's, after finishing the job in progress: the
 * driver replaces its connection.  SQLite shares a file's locks and
 * shared-memory index among the connections of a process, so a
 * connection opened read-only (an immutable file) must be closed before
 * a writable one can be had. */
void rs_jobs_close_store(void);
/* The logger of the job thread (no once-only memory: that is the
 * driver's). */
const rs_logger_t *rs_jobs_logger(void);

/* A store connection for a thread of the watcher (the job thread, the
 * delivery and hub intake threads): *pool is a pool on an allocator of
 * its own holding it (destroyed again on failure, *out then NULL);
 * messages go to log.  Returns the cause of a failure. */
apr_status_t rs_jobs_store_open(rs_db_t **out, apr_pool_t **pool, const rs_logger_t *log);
/* A new job with a pool of its own (on an allocator of its own, so the
 * job thread may use it), returned in *pool for the job's input. */
rs_job_t *rs_jobs_create(apr_pool_t **pool);
/* Run job j: first finish the job in progress (waiting for it), then hand
 * j to the job thread (async, when it can be started), or run it inline
 * and finish it before returning. */
void rs_jobs_submit(rs_job_t *j, rs_job_run_fn *run, rs_job_finish_fn *finish, void *baton,
                    int async);
/* Give up job j before it ran: finish(baton, rv), then destroy its pool. */
void rs_jobs_drop(rs_job_t *j, rs_job_finish_fn *finish, void *baton, apr_status_t rv);
/* Driver's thread: finish the job in progress if it is done (wait: wait
 * for it first).  No job in progress: nothing. */
void rs_jobs_reap(int wait);
/* Driver's thread: whether a job is in progress (submitted, not finished). */
int rs_jobs_busy(void);
/* Job thread: APR_SUCCESS when store still holds history (the driver's
 * when the job was prepared); APR_ENOENT when the store was deleted or
 * replaced meanwhile (it holds another inventory and journal: nothing
 * of it may be published; the driver notices and restarts); else the
 * cause of the failed read. */
apr_status_t rs_jobs_same_store(rs_db_t *store, apr_pool_t *p, const char *history);


/* mod_resourcesync_logonce.c: the driver's logger (an rs_logger_t fn,
 * baton: the server_rec); warnings and errors once per watcher life. */
void rs_logonce_init(apr_pool_t *pool);
void rs_logonce_log(void *baton, int level, apr_status_t rv, const char *msg);
/* Forget the messages seen: the next occurrence of each is logged again. */
void rs_logonce_forget(void);
/* A warning or error (with its cause, rv != 0) becomes the status page's
 * last error; any thread of the watcher. */
void rs_logonce_note(apr_status_t rv, const char *msg);

/* mod_resourcesync_uniform.c */
typedef struct rs_uniform_t rs_uniform_t;
/* post_config: can files of one directory of set (declared in server s)
 * differ in their access answer only by their key?  Sets set->uniform
 * (NULL: no, or per_file) and set->uniform_why (NULL, or why not). */
void rs_uniform_resolve(apr_pool_t *pconf, server_rec *s, rs_set_t *set, int per_file);
/* The key of the file filename (absolute) served at uri (unescaped, no
 * "//"): files of one directory with equal keys get the same answer.
 * Allocated from p. */
const char *rs_uniform_key(const rs_uniform_t *u, apr_pool_t *p, const char *filename,
                           const char *uri);
/* The same key from the file's name (base) alone, into buf of n bytes,
 * when the set's configuration has no section whose match depends on more
 * than the name's extensions: its length, or -1 when the full key is
 * needed (rs_uniform_key) or does not fit. */
int rs_uniform_name_key(const rs_uniform_t *u, const char *base, char *buf, apr_size_t n);
/* Which of the server's <Directory> sections apply to directory dir
 * (absolute, no trailing '/'), as a string: directories of the set with
 * equal signatures, and no access file at or above them, have the same
 * configuration, so a file key's answer in one holds in the others.
 * NULL when a section's path has wildcards (answers stay per directory).
 * Allocated from p. */
const char *rs_uniform_dir_sig(const rs_uniform_t *u, apr_pool_t *p, const char *dir);

/* mod_resourcesync_access.c */
typedef struct rs_access_t rs_access_t;
rs_access_t *rs_access_create(apr_pool_t *p, const rs_set_t *set);
/* The scanner's check callback (rs_scan_check_fn; flags RS_SCAN_CHECK_*).
 * With the set's analysis (rs_set_t.uniform), regular files of a
 * directory without access files in it or above it are answered from a
 * cache of the directory's earlier answers by key (rs_uniform_key); the
 * cache lives as long as the pool p of the first file it holds. */
int rs_access_check(void *baton, apr_pool_t *p, const char *relpath, int flags,
                    const char **type);
int rs_access_post_perdir(request_rec *r);
int rs_access_map_to_storage(request_rec *r);
/* Whether r is one of the watcher's internal access-check requests (or a
 * sub-request of one). */
int rs_access_internal(const request_rec *r);
/* NULL if the set's URL-path maps to its directory, else why not. */
const char *rs_access_verify_root(rs_access_t *a, apr_pool_t *p);
/* The access file names (AccessFileName, e.g. ".htaccess") of the
 * checker's set's server, as an array of char*: what the scans follow
 * (rs_scan_opts_t.access_files).  Lives as long as the checker. */
const apr_array_header_t *rs_access_files(const rs_access_t *a);
/* The directories above the checker's set's root (absolute, no trailing
 * '/', from "/" down) whose access files httpd reads, as its directory
 * walk of the root tells (the open_htaccess hook below); *complete is 0
 * when that walk did not reach the root, and then every directory above
 * it is returned.  From p. */
apr_array_header_t *rs_access_above(rs_access_t *a, apr_pool_t *p, int *complete);
/* open_htaccess hook (declining): notes the directories rs_access_above's
 * walk tries access files in. */
apr_status_t rs_access_open_htaccess(request_rec *r, const char *dir_name,
                                     const char *access_name, ap_configfile_t **conffile,
                                     const char **full_name);
/* Drop the answers the checker shares between directories (an access
 * file above the set's root changed). */
void rs_access_forget(rs_access_t *a);

/* mod_resourcesync_handler.c */
int rs_handler_translate(request_rec *r);
int rs_handler_map(request_rec *r);
int rs_handler_handle(request_rec *r);
int rs_handler_link(request_rec *r);

/* mod_resourcesync_statuspage.c */
int rs_statuspage_handle(request_rec *r);

/* mod_resourcesync_hubconf.c: the hub's directives (server level). */
/* Every hub field of a new server config to its unset sentinel. */
void rs_hubconf_init(rs_srv_conf *c);
/* The hub fields of c: add's where set, else base's. */
void rs_hubconf_merge(rs_srv_conf *c, const rs_srv_conf *base, const rs_srv_conf *add);
/* ResourceSyncHub on in this server. */
int rs_hubconf_on(const rs_srv_conf *sc);
/* The values in force (the default where unset): lease bounds in
 * seconds, backlog in notifications, subscription limits. */
apr_int64_t rs_hubconf_lease_min(const rs_srv_conf *sc);
apr_int64_t rs_hubconf_lease_max(const rs_srv_conf *sc);
apr_int64_t rs_hubconf_backlog(const rs_srv_conf *sc);
apr_int64_t rs_hubconf_max_subs(const rs_srv_conf *sc);
apr_int64_t rs_hubconf_max_per_addr(const rs_srv_conf *sc);
apr_int64_t rs_hubconf_max_per_client(const rs_srv_conf *sc);
/* The global limits in force: requests and bytes in the spool, requests
 * per client (n per `per`), the verification's timeout. */
apr_uint32_t rs_hubconf_spool_max(void);
apr_uint32_t rs_hubconf_spool_bytes(void);
apr_int64_t rs_hubconf_rate(apr_interval_time_t *per);
apr_interval_time_t rs_hubconf_verify_timeout(void);
/* The callback policy of server sc at connect time, an rs_websub address
 * filter (baton: the rs_srv_conf): NULL when the address may be called
 * (public, or in a CIDR block of its ResourceSyncHubAllowCallback), else
 * why not. */
const char *rs_hubconf_filter(void *baton, const unsigned char *addr, int len);
/* Whether url's host is named in sc's ResourceSyncHubAllowCallback (then
 * called wherever it resolves to, without a filter). */
int rs_hubconf_host_allowed(apr_pool_t *p, const rs_srv_conf *sc, const char *url);
/* The directives' functions (rs_cmd_fn, mod_resourcesync_cmd.h):
 * ResourceSyncHubLease (conf: the rs_srv_conf), ResourceSyncHubMaxSubscriptions
 * (rs_srv_conf), ResourceSyncHubSpoolLimit and ResourceSyncHubRequestRate
 * (rs_global); and one ResourceSyncHubAllowCallback entry
 * (rs_cmd_elem_fn: an rs_hubaddr_allow_t). */
const char *rs_hubconf_set_lease(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                 const char *const argv[]);
const char *rs_hubconf_set_max_subs(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                    const char *const argv[]);
const char *rs_hubconf_set_spool(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                 const char *const argv[]);
const char *rs_hubconf_set_rate(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                const char *const argv[]);
const char *rs_hubconf_parse_allow(cmd_parms *cmd, int argc, const char *const argv[],
                                   void *elem);

/* mod_resourcesync_notifyconf.c: the publishing directives
 * (ResourceSyncNotifyHub and ResourceSyncNotifyRetry, set options;
 * ResourceSyncHubSignature, server level). */
#define RS_DEFAULT_NOTIFY_RETRY apr_time_from_sec(86400)
/* One ResourceSyncNotifyHub (rs_cmd_elem_fn: URL and optional mode into an
 * rs_notify_hub_t). */
const char *rs_notifyconf_parse_hub(cmd_parms *cmd, int argc, const char *const argv[],
                                    void *elem);
/* The algorithms of ResourceSyncHubSignature, NULL-terminated: the
 * directive stores the index of the one given. */
extern const char *const rs_notifyconf_sig_names[];
/* The signature algorithm of the hub's deliveries (default sha256). */
const char *rs_notifyconf_sig(const rs_srv_conf *sc);
/* The address filter of publishing to a hub (rs_websub; baton: its
 * rs_notify_hub_t): the address the URL names literally, or one that
 * passes the set's server's callback policy. */
const char *rs_notifyconf_filter(void *baton, const unsigned char *addr, int len);
/* Fill set->notify_hubs (the URLs of set->notify_pub, then the built-in
 * hub's absolute URL, <canonical base><prefix>/hub, when its server has
 * ResourceSyncHub on; prefix: that server's ResourceSyncPrefix in force)
 * and apply the default of set->notify_retry; after the set's options and
 * URLs are resolved, before the documents are rendered. */
void rs_notifyconf_resolve(apr_pool_t *pconf, rs_set_t *set, const char *prefix);
/* The value of a topic's Link header, on the topic's answers (children)
 * and on what the delivery thread sends (the watcher):
 * "<topic URL>; rel=\"self\"" and ", <hub>; rel=\"hub\"" for each of
 * set->notify_hubs (topic: "change" or "framework"). */
const char *rs_notifyconf_link_header(apr_pool_t *p, const rs_set_t *set, const char *topic);

/* mod_resourcesync_hub.c: the hub's endpoint <prefix>/hub (a handler
 * hook that runs before rs_handler_handle, after access control). */
int rs_hub_handle(request_rec *r);

#endif
