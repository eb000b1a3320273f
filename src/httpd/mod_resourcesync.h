/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync.h - what every file of the httpd glue needs: the
 * module's tag and defaults, the configuration records (a set, a
 * server's options, the state of a server generation in rs_global), the
 * directive table and the configuration's lookups.
 *
 * Everything else has the header of its own file (src/<folder>/
 * mod_resourcesync_<file>.h): the status segment
 * (mod_resourcesync_status.h), the access check, the notification and hub
 * options, the watcher's units; docs/ARCHITECTURE.md has the file table.
 */
#ifndef MOD_RESOURCESYNC_H
#define MOD_RESOURCESYNC_H

#include <httpd.h>
#include <http_config.h>
#include <http_log.h>
#include <apr_global_mutex.h>
#include <apr_shm.h>
#include "rs_links.h"
#include "rs_log.h"
#include "rs_storecfg.h"

#ifndef RS_MODULE_MAIN /* AP_DECLARE_MODULE declares it there */
APLOG_USE_MODULE(resourcesync);
#endif
extern module AP_MODULE_DECLARE_DATA resourcesync_module;

/* Stable tag carried by every message of the module. */
#define RS_TAG "mod_resourcesync: "

#define RS_UNSET                      (-1)
#define RS_DEFAULT_PREFIX             "/resourcesync"
#define RS_DEFAULT_MAX                50000
#define RS_DEFAULT_RESCAN             60
#define RS_DEFAULT_RECENT             4096    /* ResourceSyncRecentChanges */
#define RS_DEFAULT_LARGE              64      /* ResourceSyncLargeFileSize, MiB */
#define RS_MAX_LARGE                  1048576 /* MiB: 1 TiB */
#define RS_DEFAULT_DUMP_ENTRIES       50000   /* ResourceSyncDumpMaxEntries */
#define RS_MAX_DUMP_ENTRIES           50000 /* ... its largest: a manifest's entries (RS_XML_MAX_ENTRIES) */
#define RS_DEFAULT_DUMP_SIZE          1024                     /* ResourceSyncDumpMaxSize, MiB */
#define RS_DEFAULT_DUMP_GRACE         apr_time_from_sec(86400) /* ResourceSyncDumpGrace */
#define RS_DEFAULT_VERIFY             apr_time_from_sec(86400) /* ResourceSyncVerifyInterval */
#define RS_MIN_RECENT                 16
#define RS_MAX_RECENT                 262144
#define RS_DEFAULT_MASSDEL_SHARE      50  /* ResourceSyncMassDeletion: percent */
#define RS_DEFAULT_MASSDEL_MIN        100 /* ... and files */
#define RS_DEFAULT_NOTIFY_DELAY       apr_time_from_msec(100)
#define RS_DEFAULT_PERIOD             apr_time_from_sec(86400)
#define RS_DEFAULT_RETENTION          apr_time_from_sec(30 * 86400)
#define RS_WELL_KNOWN                 "/.well-known/resourcesync"
#define RS_HANDLER                    "resourcesync"
#define RS_SET_NAME_MAX               64
#define RS_MAX_SETS                   256
#define RS_DEFAULT_HUB_LEASE_MIN      300 /* ResourceSyncHubLease, s */
#define RS_DEFAULT_HUB_LEASE_MAX      (31 * 86400)
#define RS_DEFAULT_HUB_BACKLOG        1000     /* ResourceSyncHubMaxBacklog */
#define RS_DEFAULT_HUB_MAX_SUBS       10000    /* ResourceSyncHubMaxSubscriptions */
#define RS_DEFAULT_HUB_MAX_PER_ADDR   100      /* ... per callback address */
#define RS_DEFAULT_HUB_MAX_PER_CLIENT 100      /* ... per client address */
#define RS_HUB_MAX_COUNT              10000000 /* largest of those limits */
#define RS_DEFAULT_HUB_SPOOL          1000     /* ResourceSyncHubSpoolLimit: requests */
#define RS_DEFAULT_HUB_SPOOL_KIB      4096     /* ... and KiB */
#define RS_DEFAULT_HUB_RATE           60       /* ResourceSyncHubRequestRate: requests */
#define RS_DEFAULT_HUB_RATE_PER       apr_time_from_sec(60) /* ... per */
#define RS_DEFAULT_HUB_VERIFY_TIMEOUT apr_time_from_sec(5)  /* ResourceSyncHubVerifyTimeout */
#define RS_DEFAULT_NOTIFY_TIMEOUT     apr_time_from_sec(30) /* ResourceSyncNotifyTimeout */

typedef struct rs_dir_conf rs_dir_conf;

/* One ResourceSyncSet.  Created while the configuration is read; the
 * fields below "resolved" are filled in post_config. */
typedef struct rs_set_t {
    const char *name;
    const char *dir;      /* absolute, canonical, no trailing "/" */
    const char *url_arg;  /* optional second argument */
    server_rec *s;        /* server (vhost) the set was declared in */
    rs_dir_conf *section; /* config of its <Directory> section */
    const char *where;    /* "file:line" for messages */
    /* resolved */
    const char *url_path; /* unescaped URL-path of dir, ends with "/" */
    unsigned hashes;      /* RS_HASH_* mask: the digests listed */
    /* The digests computed and kept in the store: hashes, and SHA-256
     * with Change Dumps (the name of a capture, rs_capture.h). */
    unsigned digests;
    int max_entries;
    apr_array_header_t *excludes;
    const char *describedby;
    int dotfiles;
    apr_interval_time_t cl_period;    /* ResourceSyncChangeListPeriod */
    apr_interval_time_t retention;    /* ResourceSyncJournalRetention */
    int spec10;                       /* ResourceSyncSpecVersion 1.0 */
    apr_interval_time_t rdump;        /* ResourceSyncResourceDump: 0 off, else min interval */
    const char *rdump_dir;            /* <statedir>/dumps/<name> */
    apr_int64_t dump_entries;         /* ResourceSyncDumpMaxEntries */
    apr_int64_t dump_size;            /* ResourceSyncDumpMaxSize, bytes */
    apr_interval_time_t dump_grace;   /* ResourceSyncDumpGrace */
    int cdump;                        /* ResourceSyncChangeDump on */
    const char *capture_dir;          /* <statedir>/capture/<name> */
    const char *cdump_dir;            /* <statedir>/changedumps/<name> */
    int notify;                       /* ResourceSyncNotify on */
    apr_interval_time_t notify_delay; /* ResourceSyncNotifyDelay */
    /* ResourceSyncNotifyHub (rs_notify_hub_t), section's after the
     * server's; NULL: none.  ResourceSyncNotifyRetry. */
    apr_array_header_t *notify_pub;
    apr_interval_time_t notify_retry;
    const char *notify_dir; /* <statedir>/notify/<name> */
    /* URLs (const char *) of the hubs the topics advertise (Link header,
     * Capability List), filled at post_config before the documents are
     * rendered; NULL or empty: none. */
    apr_array_header_t *notify_hubs;
    const char *cl_dir;       /* <statedir>/changelists/<name> */
    const char *cl_index_url; /* .../changelist.xml */
    const char *root_url;     /* absolute URL of dir, escaped, ends "/" */
    const char *doc_base;     /* absolute URL of <prefix>/<name>/ */
    /* root_url and doc_base, a space between: the base URLs every absolute
     * URL of the set's documents begins with; its documents on disk were
     * written with the one recorded (rs_statecheck.h). */
    const char *base;
    const char *capability_url;
    const char *list_url;
    const char *snap_dir; /* <statedir>/snapshots/<name> */
    int slot;             /* index in the status segment */
    const char *cl_body;  /* pre-rendered Capability List */
    apr_size_t cl_len;
    const char *cl_etag;
    /* Access checks per directory (mod_resourcesync_uniform.c): the
     * analysis, or NULL when every file gets its own request, and why. */
    const struct rs_uniform_t *uniform;
    const char *uniform_why;
    /* ResourceSyncLink and ResourceSyncMirror of the set's section, each
     * in the order written (NULL: none; read-only from post_config on,
     * shared by every process forked after it).  links_fp: a hex digest
     * of the stored form's version, root_url and the ResourceSyncLink
     * rules (rs_links_describe; "" without such rules): the watcher
     * compares it with the one the store recorded to re-resolve the
     * links after a change, which is why links stay out of the
     * configuration fingerprint (mod_resourcesync_linkconf.c).
     * mirrors_fp: a hex digest of the mirrors (rs_links_mirrors_describe;
     * "" without), which every entry renders and no row stores: part of
     * the snapshot key and of the open Change List's ETag. */
    rs_links_t *links;
    const char *links_fp;
    const char *mirrors_fp;
} rs_set_t;

struct rs_dir_conf {
    rs_set_t *set;                    /* NULL: not inside a set */
    int hashes;                       /* RS_UNSET or RS_HASH_* mask (0 = none) */
    int max_entries;                  /* RS_UNSET or 2..50000 */
    apr_array_header_t *excludes;     /* NULL: unset */
    const char *describedby;          /* NULL: unset */
    int dotfiles;                     /* RS_UNSET, 0, 1 */
    apr_interval_time_t cl_period;    /* RS_UNSET or > 0 */
    apr_interval_time_t retention;    /* RS_UNSET or > 0 */
    int spec10;                       /* RS_UNSET, 0 (1.1), 1 (1.0) */
    apr_interval_time_t rdump;        /* RS_UNSET, 0 (off) or > 0 */
    apr_int64_t dump_entries;         /* RS_UNSET or 1..RS_MAX_DUMP_ENTRIES */
    apr_int64_t dump_size;            /* RS_UNSET or bytes (MiB given) */
    apr_interval_time_t dump_grace;   /* RS_UNSET or > 0 */
    int cdump;                        /* RS_UNSET, 0 (off), 1 (on) */
    int notify;                       /* RS_UNSET, 0 (off), 1 (on) */
    apr_interval_time_t notify_delay; /* RS_UNSET or 0..1 h */
    apr_array_header_t *notify_pub;   /* rs_notify_hub_t; NULL: unset */
    apr_interval_time_t notify_retry; /* RS_UNSET or > 0 */
    rs_links_t *links;                /* NULL: unset; only in a set's section */
};

/* One ResourceSyncNotifyHub: a hub the set publishes to. */
typedef struct rs_notify_hub_t {
    const char *url; /* absolute http/https */
    int ping;        /* 1: ping mode, 0: fat */
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
    const char *prefix;       /* NULL: unset */
    const char *base_url;     /* NULL: unset */
    const char *describedby;  /* source-level; NULL: unset */
    apr_array_header_t *sets; /* rs_set_t* declared in this server */
    /* The built-in hub (mod_resourcesync_hubconf.c): RS_UNSET or a value. */
    int hub;                   /* ResourceSyncHub: 0, 1 */
    apr_int64_t hub_lease_min; /* ResourceSyncHubLease, seconds */
    apr_int64_t hub_lease_max;
    apr_array_header_t *hub_allow;  /* ResourceSyncHubAllowCallback:
                                     * rs_hubaddr_allow_t, NULL unset */
    apr_int64_t hub_backlog;        /* ResourceSyncHubMaxBacklog */
    apr_int64_t hub_max_subs;       /* ResourceSyncHubMaxSubscriptions total */
    apr_int64_t hub_max_per_addr;   /* ... per callback address */
    apr_int64_t hub_max_per_client; /* ... per client address */
    int hub_sig;                    /* ResourceSyncHubSignature: RS_UNSET or an
                                 * index of rs_notifyconf_sig_names */
    int robots;                     /* ResourceSyncRobots: RS_UNSET, 0 (off), 1 (on) */
    int host_meta;                  /* ResourceSyncHostMeta: RS_UNSET, 0 (off), 1 (on) */
    /* resolved in post_config */
    const char *canonical; /* scheme://host[:port] */
    const char *sd_body;   /* pre-rendered Source Description */
    apr_size_t sd_len;
    const char *sd_etag;
    /* robots.txt lines and host-meta documents (mod_resourcesync_discovery.c),
     * rendered with the Source Description; NULL: none (off, or no sets). */
    const struct rs_discovery_t *discovery;
    int access_check; /* ResourceSyncAccessCheck: RS_UNSET,
                                 * RS_ACCESS_AUTO, RS_ACCESS_PER_FILE */
} rs_srv_conf;

#define RS_ACCESS_AUTO     0
#define RS_ACCESS_PER_FILE 1

/* Process-wide state of one server generation (reset in pre_config). */
typedef struct rs_global_t {
    apr_pool_t *pconf;
    const char *state_dir;       /* ResourceSyncStateDir, absolute */
    const char *state_dir_arg;   /* ... as given (maybe relative to ServerRoot) */
    const char *state_dir_where; /* ... "file:line" */
    /* ResourceSyncStore (mod_resourcesync_storeconf.c): the kind and DSN
     * as given (NULL: unset, SQLite in the state directory) and where;
     * store: resolved by rs_storeconf_resolve, what every opener opens. */
    const char *store_kind;
    const char *store_dsn;
    const char *store_where;
    rs_storecfg_t store;
    const char *store_shown; /* NULL for SQLite, else rs_storecfg_describe */
    /* ResourceSyncNodeName; NULL: unset, the host name once resolved. */
    const char *node_name;
    /* ResourceSyncFailover as given (0: unset) and where; resolved into
     * store.failover. */
    apr_interval_time_t failover;
    const char *failover_where;
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
    apr_array_header_t *option_uses; /* set options in directory sections
                                       * (mod_resourcesync_cmd.c) */
    int restart;                     /* an earlier generation of this httpd really started */
    int state_unusable;              /* restart: state directory unusable, no watcher */
    /* The built-in hub's global limits (mod_resourcesync_hubconf.c); 0:
     * unset (the defaults are applied where they are read). */
    apr_int64_t hub_spool_max;              /* ResourceSyncHubSpoolLimit: requests */
    apr_int64_t hub_spool_kib;              /* ... KiB */
    apr_int64_t hub_rate;                   /* ResourceSyncHubRequestRate: requests */
    apr_interval_time_t hub_rate_per;       /* ... per */
    apr_interval_time_t hub_verify_timeout; /* ResourceSyncHubVerifyTimeout */
    apr_interval_time_t notify_timeout;     /* ResourceSyncNotifyTimeout; 0: unset */
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

#endif
