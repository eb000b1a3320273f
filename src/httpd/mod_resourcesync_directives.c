/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_directives.c - the directive table, and the directives
 * that need more than a shared setter.
 *
 * Each entry says where the directive may stand and which field it sets
 * (mod_resourcesync_cmd.h); numbers, sizes, durations, delays and words
 * are parsed by the shared setter from their description in the table,
 * lists by an element parser.  The functions here are the rest: the
 * state directory, the set registry (ResourceSyncSet), the mass-deletion
 * guard, hash lists, and the URL values.  The hub's, the notifications'
 * and the links' own functions live with their options
 * (mod_resourcesync_hubconf.c, mod_resourcesync_notifyconf.c,
 * mod_resourcesync_linkconf.c).  Checks that need the whole
 * configuration run later, in rs_config_resolve; to that end the set
 * options record every use in a directory section (rs_cmd_misplaced) and
 * ResourceSyncSet registers each set in its server's config and in
 * rs_global.sets.
 */
#include <string.h>
#include <apr_fnmatch.h>
#include <apr_strings.h>
#include "mod_resourcesync_cmd.h"
#include "mod_resourcesync_hubconf.h"
#include "mod_resourcesync_linkconf.h"
#include "mod_resourcesync_notifyconf.h"
#include "mod_resourcesync_storeconf.h"
#include "rs_glob.h"
#include "rs_hubaddr.h"
#include "rs_parse.h"
#include "rs_path.h"

static const char *set_state_dir(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                 const char *const argv[])
{
    rs_global_t *g = conf;
    const char *arg = argv[0], *path;

    if (!*arg) {
        return "ResourceSyncStateDir: empty path";
    }
    /* One state directory per httpd instance: a second one is a mistake
     * (two files both setting it), not an override. */
    if (g->state_dir) {
        return apr_psprintf(cmd->pool,
                            "ResourceSyncStateDir '%s': already set to '%s' at %s "
                            "(one state directory per httpd instance)",
                            arg, g->state_dir_arg, g->state_dir_where);
    }
    /* NULL when APR rejects the path (e.g. longer than APR_PATH_MAX). */
    path = ap_server_root_relative(cmd->pool, arg);
    if (!path) {
        return apr_psprintf(cmd->pool, "ResourceSyncStateDir: invalid path '%s'", arg);
    }
    g->state_dir = rs_path_strip_slash(cmd->pool, path);
    g->state_dir_arg = arg;
    g->state_dir_where = rs_cmd_where(cmd);
    return NULL;
}

/* ResourceSyncMassDeletion off | <percent>% [<files>] */
static const char *set_massdel(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                               const char *const argv[])
{
    static const rs_confval_t files = { RS_NUMBER(1, APR_INT64_C(1000000000), "files") };
    rs_global_t *g = conf;
    const char *share = argv[0], *min = argc > 1 ? argv[1] : NULL, *err;
    apr_size_t n = strlen(share);
    apr_int64_t v, m = RS_DEFAULT_MASSDEL_MIN;

    if (g->massdel_share != RS_UNSET) {
        return "ResourceSyncMassDeletion: given twice";
    }
    if (!strcasecmp(share, "off")) {
        if (min) {
            return apr_psprintf(cmd->pool, "ResourceSyncMassDeletion: '%s' after off", min);
        }
        g->massdel_share = 0;
        return NULL;
    }
    if (n < 2 || share[n - 1] != '%'
        || !rs_parse_int(apr_pstrndup(cmd->pool, share, n - 1), 1, 99, &v)) {
        return apr_psprintf(cmd->pool,
                            "ResourceSyncMassDeletion: '%s' is not off or a "
                            "share from 1%% to 99%%",
                            share);
    }
    if (min && (err = rs_cmd_parse(cmd, &files, min, &m))) {
        return err;
    }
    g->massdel_share = (int)v;
    g->massdel_min = m;
    return NULL;
}

/* ResourceSyncSet in a <Directory> section (rs_cmd_t scope RS_SET_SECTION)
 * with a plain absolute path (sets are roots the watcher walks), at most
 * one set per section. */
static const char *check_set_section(cmd_parms *cmd, const rs_dir_conf *dc, const char *name)
{
    if (apr_fnmatch_test(cmd->path) || cmd->path[0] != '/') {
        return apr_psprintf(cmd->pool,
                            "ResourceSyncSet %s: <Directory \"%s\"> must be "
                            "a plain absolute path (no wildcards or regular expressions)",
                            name, cmd->path);
    }
    if (dc->set) {
        return apr_psprintf(cmd->pool,
                            "ResourceSyncSet %s: this <Directory> already "
                            "holds set '%s'",
                            name, dc->set->name);
    }
    return NULL;
}

/* A set name is a URL segment and a file name in the state directory. */
static const char *check_set_name(cmd_parms *cmd, const char *name)
{
    if (!rs_parse_set_name(name, RS_SET_NAME_MAX)) {
        return apr_psprintf(cmd->pool,
                            "ResourceSyncSet: invalid set name '%s' (use 1 to "
                            "%d letters, digits, '-', '_' or '.', not starting with '.')",
                            name, RS_SET_NAME_MAX);
    }
    return NULL;
}

/* Against every set declared so far (all servers): a unique name, no
 * directory inside another's, and room in the status segment. */
static const char *check_set_unique(cmd_parms *cmd, const rs_set_t *set)
{
    int i;

    for (i = 0; i < rs_global.sets->nelts; i++) {
        rs_set_t *o = APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *);
        if (!strcmp(o->name, set->name)) {
            return apr_psprintf(cmd->pool,
                                "ResourceSyncSet: duplicate set name '%s' "
                                "(already used at %s)",
                                set->name, o->where);
        }
        if (rs_path_within(set->dir, o->dir) || rs_path_within(o->dir, set->dir)) {
            return apr_psprintf(cmd->pool,
                                "ResourceSyncSet %s: directory '%s' overlaps "
                                "set '%s' (%s, at %s)",
                                set->name, set->dir, o->name, o->dir, o->where);
        }
    }
    if (rs_global.sets->nelts >= RS_MAX_SETS) {
        return apr_psprintf(cmd->pool, "ResourceSyncSet %s: at most %d sets", set->name,
                            RS_MAX_SETS);
    }
    return NULL;
}

/* ResourceSyncSet <name> [<URL-path>] */
static const char *set_set(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                           const char *const argv[])
{
    rs_dir_conf *dc = conf;
    const char *name = argv[0], *url = argc > 1 ? argv[1] : NULL, *err;
    rs_set_t *set;

    if ((err = check_set_section(cmd, dc, name)) || (err = check_set_name(cmd, name))) {
        return err;
    }
    if (url && !rs_parse_url_path(url)) {
        return apr_psprintf(cmd->pool,
                            "ResourceSyncSet %s: invalid URL-path '%s' (an "
                            "absolute path such as /data, without query, fragment, "
                            "'%%' or spaces)",
                            name, url);
    }
    set = apr_pcalloc(cmd->pool, sizeof(*set));
    set->name = apr_pstrdup(cmd->pool, name);
    set->dir = rs_path_strip_slash(cmd->pool, cmd->path);
    set->url_arg = url ? rs_path_strip_slash(cmd->pool, url) : NULL;
    set->s = cmd->server;
    set->section = dc;
    set->where = rs_cmd_where(cmd);
    if ((err = check_set_unique(cmd, set))) {
        return err;
    }
    dc->set = set;
    APR_ARRAY_PUSH(rs_global.sets, rs_set_t *) = set;
    APR_ARRAY_PUSH(rs_cmd_server(cmd)->sets, rs_set_t *) = set;
    return NULL;
}

static const char *set_prefix(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                              const char *const argv[])
{
    rs_srv_conf *sc = conf;
    const char *arg = argv[0];

    if (!rs_parse_url_path(arg) || !strcmp(arg, "/") || arg[strlen(arg) - 1] == '/') {
        return apr_psprintf(cmd->pool,
                            "ResourceSyncPrefix: invalid URL-path '%s' (an "
                            "absolute path such as /resourcesync, without a trailing '/')",
                            arg);
    }
    sc->prefix = arg;
    return NULL;
}

static const char *set_base_url(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                const char *const argv[])
{
    rs_srv_conf *sc = conf;
    const char *arg = argv[0];

    /* A path is allowed for servers published below a prefix by a reverse
     * proxy: every absolute URL is then <base><URL-path>. */
    if (!rs_parse_base_url(arg)) {
        return apr_psprintf(cmd->pool,
                            "ResourceSyncBaseURL: invalid URL '%s' (give "
                            "scheme://host[:port][/path], e.g. https://data.example.org)",
                            arg);
    }
    sc->base_url = rs_path_strip_slash(cmd->pool, arg);
    if (sc->base_url[strlen(sc->base_url) - 1] == '/') {
        sc->base_url = apr_pstrndup(cmd->pool, sc->base_url, strlen(sc->base_url) - 1);
    }
    return NULL;
}

/* "none" given with algorithms: name what it was combined with
 * ("none md5" -> 'md5'). */
static const char *hash_none_error(cmd_parms *cmd, int argc, const char *const argv[], int none)
{
    const char *others = NULL;
    int j;

    for (j = 0; j < argc; j++) {
        if (j != none) {
            others = others ? apr_pstrcat(cmd->pool, others, " ", argv[j], NULL) : argv[j];
        }
    }
    return apr_psprintf(cmd->pool,
                        "ResourceSyncHash: '%s' cannot be combined "
                        "with algorithms ('%s')",
                        argv[none], others);
}

static const char *set_hash(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                            const char *const argv[])
{
    rs_dir_conf *dc = conf;
    unsigned mask = 0;
    int bad = 0;

    switch (rs_parse_hashes(argc, argv, &mask, &bad)) {
    case RS_PARSE_OK:
        break;
    case RS_PARSE_HASH_EMPTY:
        return "ResourceSyncHash: give one or more of md5 sha-1 sha-256 sha-512, or none";
    case RS_PARSE_HASH_NONE_MIXED:
        return hash_none_error(cmd, argc, argv, bad);
    case RS_PARSE_HASH_UNKNOWN:
        return apr_psprintf(cmd->pool,
                            "ResourceSyncHash: unknown algorithm '%s' "
                            "(known: md5 sha-1 sha-256 sha-512, or none)",
                            argv[bad]);
    }
    dc->hashes = (int)mask;
    return NULL;
}

/* One ResourceSyncExclude pattern (rs_cmd_list). */
static const char *exclude_pattern(cmd_parms *cmd, int argc, const char *const argv[], void *elem)
{
    const char *err = rs_glob_check(cmd->pool, argv[0]);

    if (err) {
        return apr_psprintf(cmd->pool, "ResourceSyncExclude: invalid pattern '%s': %s", argv[0],
                            err);
    }
    *(const char **)elem = argv[0];
    return NULL;
}

/* At set level the set's, at server level the Source's (never a default
 * for the sets: see resolve_set_options). */
static const char *set_describedby(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                   const char *const argv[])
{
    rs_dir_conf *dc = conf;

    if (!rs_parse_url(argv[0])) {
        return apr_psprintf(cmd->pool,
                            "ResourceSyncDescribedBy: '%s' is not an absolute "
                            "http(s) URL",
                            argv[0]);
    }
    if (cmd->path) {
        dc->describedby = argv[0];
    }
    else {
        rs_cmd_server(cmd)->describedby = argv[0];
    }
    return NULL;
}

/* The words of ResourceSyncAccessCheck, by value (RS_ACCESS_*), and of
 * ResourceSyncSpecVersion, by rs_dir_conf.spec10. */
static const char *const access_words[] = { "auto", "per-file", NULL };
static const char *const spec_words[] = { "1.1", "1.0", NULL };

#define DURATION_EG "(e.g. 3600, 90m, 12h, 1d)"

const command_rec rs_cmds[] = {
    AP_INIT_TAKE1("ResourceSyncStateDir", rs_cmd_take1, RS_CMD_FN(RS_MAIN, set_state_dir),
                  RSRC_CONF, "Directory for the state store and generated documents"),
    AP_INIT_TAKE12("ResourceSyncStore", rs_cmd_take2, RS_CMD_FN(RS_MAIN, rs_storeconf_set_store),
                   RSRC_CONF,
                   "The state store: sqlite (default, in ResourceSyncStateDir) or pgsql "
                   "and a libpq connection string"),
    AP_INIT_TAKE1("ResourceSyncNodeName", rs_cmd_take1, RS_CMD_FN(RS_MAIN, rs_storeconf_set_node),
                  RSRC_CONF,
                  "This node's name on the status page and in logs (default: host name)"),
    AP_INIT_TAKE1("ResourceSyncFailover", rs_cmd_take1,
                  RS_CMD_FN(RS_MAIN, rs_storeconf_set_failover), RSRC_CONF,
                  "How long a set's lease lasts without a renewal before another node "
                  "takes the set over (default 10s)"),
    AP_INIT_TAKE1(
        "ResourceSyncRescanInterval", rs_cmd_take1,
        RS_CMD_VALUE(RS_MAIN, rescan, RS_NUMBER(1, 86400, "seconds"), .scale = APR_USEC_PER_SEC),
        RSRC_CONF, "Seconds between rescans of every set (default 60)"),
    AP_INIT_TAKE1("ResourceSyncLargeFileSize", rs_cmd_take1,
                  RS_CMD_VALUE(RS_MAIN, large_file, RS_NUMBER(1, RS_MAX_LARGE, "MiB"), .off = 1,
                               .scale = APR_INT64_C(1) << 20),
                  RSRC_CONF,
                  "MiB from which files are hashed on the hashing lane, or off "
                  "(default 64)"),
    AP_INIT_TAKE1("ResourceSyncVerifyInterval", rs_cmd_take1,
                  RS_CMD_VALUE(RS_MAIN, verify,
                               RS_DURATION("is not 'off' nor a duration " DURATION_EG), .off = 1),
                  RSRC_CONF,
                  "Duration between verification passes over every file of every "
                  "set, or off (default 1d)"),
    AP_INIT_TAKE1("ResourceSyncRecentChanges", rs_cmd_take1,
                  RS_CMD_VALUE(RS_MAIN, recent, RS_NUMBER(RS_MIN_RECENT, RS_MAX_RECENT, "changes")),
                  RSRC_CONF,
                  "Most recent changes kept in shared memory for the open Change "
                  "Lists (default 4096)"),
    AP_INIT_TAKE12("ResourceSyncMassDeletion", rs_cmd_take2, RS_CMD_FN(RS_MAIN, set_massdel),
                   RSRC_CONF,
                   "Share of a set's files (and number of files) above which "
                   "deletions wait for a confirming scan: off, or e.g. 50% 100 (default)"),
    AP_INIT_TAKE12("ResourceSyncSet", rs_cmd_take2, RS_CMD_FN(RS_SET_SECTION, set_set), ACCESS_CONF,
                   "Set name, and the URL-path of the directory if not below DocumentRoot"),
    AP_INIT_TAKE1("ResourceSyncPrefix", rs_cmd_take1, RS_CMD_FN(RS_SERVER, set_prefix), RSRC_CONF,
                  "URL-path under which the documents are served (default /resourcesync)"),
    AP_INIT_TAKE1(
        "ResourceSyncAccessCheck", rs_cmd_take1,
        RS_CMD_VALUE(RS_SERVER, access_check, RS_WORDS(access_words, "is not auto or per-file")),
        RSRC_CONF,
        "auto (one request per directory and kind of file where the "
        "configuration allows it) or per-file"),
    AP_INIT_TAKE1("ResourceSyncBaseURL", rs_cmd_take1, RS_CMD_FN(RS_SERVER, set_base_url),
                  RSRC_CONF, "scheme://host[:port] used in absolute URLs (behind a proxy)"),
    AP_INIT_TAKE_ARGV("ResourceSyncHash", rs_cmd_argv, RS_CMD_FN(RS_SET_OPTION, set_hash),
                      RSRC_CONF | ACCESS_CONF,
                      "Digests to list: md5 sha-1 sha-256 sha-512, or none"),
    AP_INIT_TAKE1("ResourceSyncMaxEntries", rs_cmd_take1,
                  RS_CMD_VALUE(RS_SET_OPTION, max_entries, RS_NUMBER(2, 50000, "")),
                  RSRC_CONF | ACCESS_CONF,
                  "Entries per document before splitting into an index (2-50000)"),
    AP_INIT_ITERATE("ResourceSyncExclude", rs_cmd_take1,
                    RS_CMD_LIST(RS_SET_OPTION, excludes, exclude_pattern, const char *),
                    RSRC_CONF | ACCESS_CONF, "Glob patterns of files and directories never listed"),
    AP_INIT_TAKE1("ResourceSyncDescribedBy", rs_cmd_take1,
                  RS_CMD_FN(RS_SET_OPTION, set_describedby), RSRC_CONF | ACCESS_CONF,
                  "URL of a document describing the source (server) or the set (directory)"),
    AP_INIT_TAKE_ARGV("ResourceSyncLink", rs_cmd_argv, RS_CMD_FN(RS_SET_ONLY, rs_linkconf_set_link),
                      RSRC_CONF | ACCESS_CONF,
                      "A relation of the set's resources: REL PATTERN TARGET [type=MEDIA] "
                      "[pri=N] [if-exists]"),
    AP_INIT_TAKE12("ResourceSyncMirror", rs_cmd_take2,
                   RS_CMD_FN(RS_SET_ONLY, rs_linkconf_set_mirror), RSRC_CONF | ACCESS_CONF,
                   "A mirror of the set's resources (rel=\"duplicate\"): URL-PREFIX [pri=N]"),
    AP_INIT_TAKE1(
        "ResourceSyncChangeListPeriod", rs_cmd_take1,
        RS_CMD_VALUE(RS_SET_OPTION, cl_period, RS_DURATION("is not a duration " DURATION_EG)),
        RSRC_CONF | ACCESS_CONF, "Time after which the open Change List closes (default 1d)"),
    AP_INIT_TAKE1(
        "ResourceSyncJournalRetention", rs_cmd_take1,
        RS_CMD_VALUE(RS_SET_OPTION, retention, RS_DURATION("is not a duration (e.g. 30d, 12h)")),
        RSRC_CONF | ACCESS_CONF,
        "How long closed Change Lists and their records are kept (default 30d)"),
    AP_INIT_TAKE1("ResourceSyncResourceDump", rs_cmd_take1,
                  RS_CMD_VALUE(RS_SET_OPTION, rdump,
                               RS_DURATION("is not a duration " DURATION_EG " or off"), .off = 1),
                  RSRC_CONF | ACCESS_CONF,
                  "Build a Resource Dump after every Resource List snapshot (between "
                  "builds as long as the last took, at most duration), or off (default)"),
    AP_INIT_TAKE1("ResourceSyncDumpMaxEntries", rs_cmd_take1,
                  RS_CMD_VALUE(RS_SET_OPTION, dump_entries, RS_NUMBER(1, RS_MAX_DUMP_ENTRIES, "")),
                  RSRC_CONF | ACCESS_CONF, "Files per Resource Dump package (default 50000)"),
    AP_INIT_TAKE1("ResourceSyncDumpMaxSize", rs_cmd_take1,
                  RS_CMD_VALUE(RS_SET_OPTION, dump_size, RS_NUMBER(1, RS_MAX_LARGE, "MiB"),
                               .scale = APR_INT64_C(1) << 20),
                  RSRC_CONF | ACCESS_CONF,
                  "MiB per Resource Dump package; a larger file "
                  "gets one alone (default 1024)"),
    AP_INIT_TAKE1(
        "ResourceSyncDumpGrace", rs_cmd_take1,
        RS_CMD_VALUE(RS_SET_OPTION, dump_grace, RS_DURATION("is not a duration " DURATION_EG)),
        RSRC_CONF | ACCESS_CONF,
        "How long a package that left the Resource Dump "
        "stays downloadable (default 1d)"),
    AP_INIT_TAKE1("ResourceSyncChangeDump", rs_cmd_take1,
                  RS_CMD_VALUE(RS_SET_OPTION, cdump, RS_FLAG("is not On or Off")),
                  RSRC_CONF | ACCESS_CONF,
                  "One Change Dump package per closed Change List: on or off (default)"),
    AP_INIT_TAKE1("ResourceSyncNotify", rs_cmd_take1,
                  RS_CMD_VALUE(RS_SET_OPTION, notify, RS_FLAG("is not On or Off")),
                  RSRC_CONF | ACCESS_CONF,
                  "Change and Framework Notifications of the set: on or off (default)"),
    AP_INIT_TAKE1("ResourceSyncNotifyDelay", rs_cmd_take1,
                  RS_CMD_VALUE(RS_SET_OPTION, notify_delay,
                               RS_DELAY(0, apr_time_from_sec(3600),
                                        "is not a delay from 0 to 1h (e.g. 100ms, 2s)")),
                  RSRC_CONF | ACCESS_CONF,
                  "How long a change notification waits for more changes (default 100ms)"),
    AP_INIT_TAKE12("ResourceSyncNotifyHub", rs_cmd_take2,
                   RS_CMD_LIST(RS_SET_OPTION, notify_pub, rs_notifyconf_parse_hub, rs_notify_hub_t),
                   RSRC_CONF | ACCESS_CONF,
                   "A WebSub hub the set's notifications are "
                   "published to, and fat (default) or ping"),
    AP_INIT_TAKE1("ResourceSyncNotifyRetry", rs_cmd_take1,
                  RS_CMD_VALUE(RS_SET_OPTION, notify_retry,
                               RS_DURATION("is not a duration (e.g. 3600, 30m, 12h, 1d)")),
                  RSRC_CONF | ACCESS_CONF,
                  "How long a notification is retried at a hub "
                  "before it is skipped (default 1d)"),
    AP_INIT_TAKE1("ResourceSyncNotifyTimeout", rs_cmd_take1,
                  RS_CMD_VALUE(RS_MAIN, notify_timeout,
                               RS_DELAY(apr_time_from_sec(1), apr_time_from_sec(600),
                                        "is not a duration from 1s to 10m")),
                  RSRC_CONF,
                  "How long one delivery of a notification may take, to a hub or a "
                  "subscriber (default 30s)"),
    AP_INIT_TAKE1(
        "ResourceSyncHubSignature", rs_cmd_take1,
        RS_CMD_VALUE(RS_SERVER, hub_sig,
                     RS_WORDS(rs_notifyconf_sig_names, "is not sha1, sha256, sha384 or sha512")),
        RSRC_CONF,
        "X-Hub-Signature algorithm of the hub's deliveries: sha1, sha256 "
        "(default), sha384 or sha512"),
    AP_INIT_TAKE1("ResourceSyncSpecVersion", rs_cmd_take1,
                  RS_CMD_VALUE(RS_SET_OPTION, spec10, RS_WORDS(spec_words, "is not 1.1 or 1.0")),
                  RSRC_CONF | ACCESS_CONF,
                  "ResourceSync version of the Change Lists: 1.1 (default) or 1.0"),
    AP_INIT_TAKE1("ResourceSyncIncludeDotfiles", rs_cmd_take1,
                  RS_CMD_VALUE(RS_SET_OPTION, dotfiles, RS_FLAG("is not On or Off")),
                  RSRC_CONF | ACCESS_CONF, "List files whose names start with '.' (never .ht*)"),
    AP_INIT_TAKE1("ResourceSyncHub", rs_cmd_take1,
                  RS_CMD_VALUE(RS_SERVER, hub, RS_FLAG("is not on or off")), RSRC_CONF,
                  "Built-in WebSub hub at <prefix>/hub: on or off (default)"),
    AP_INIT_TAKE2("ResourceSyncHubLease", rs_cmd_take2, RS_CMD_FN(RS_SERVER, rs_hubconf_set_lease),
                  RSRC_CONF,
                  "Shortest and longest subscription lease of the hub (default "
                  "300 31d)"),
    AP_INIT_ITERATE("ResourceSyncHubAllowCallback", rs_cmd_take1,
                    RS_CMD_LIST(RS_SERVER, hub_allow, rs_hubconf_parse_allow, rs_hubaddr_allow_t),
                    RSRC_CONF,
                    "Hosts and CIDR blocks of private addresses hub callbacks may "
                    "use"),
    AP_INIT_TAKE1(
        "ResourceSyncHubMaxBacklog", rs_cmd_take1,
        RS_CMD_VALUE(RS_SERVER, hub_backlog, RS_NUMBER(1, RS_HUB_MAX_COUNT, "notifications")),
        RSRC_CONF, "Undelivered notifications after which a subscription ends (default 1000)"),
    AP_INIT_TAKE_ARGV("ResourceSyncHubMaxSubscriptions", rs_cmd_argv,
                      RS_CMD_FN(RS_SERVER, rs_hubconf_set_max_subs), RSRC_CONF,
                      "Hub subscriptions in total, per callback address and per client "
                      "address (default 10000 100 100)"),
    AP_INIT_TAKE12("ResourceSyncHubSpoolLimit", rs_cmd_take2,
                   RS_CMD_FN(RS_MAIN, rs_hubconf_set_spool), RSRC_CONF,
                   "Subscription requests waiting for the hub's intake, and their KiB "
                   "(default 1000 4096)"),
    AP_INIT_TAKE2("ResourceSyncHubRequestRate", rs_cmd_take2,
                  RS_CMD_FN(RS_MAIN, rs_hubconf_set_rate), RSRC_CONF,
                  "Subscription requests one client address may send per duration "
                  "(default 60 1m)"),
    AP_INIT_TAKE1("ResourceSyncHubVerifyTimeout", rs_cmd_take1,
                  RS_CMD_VALUE(RS_MAIN, hub_verify_timeout,
                               RS_DELAY(apr_time_from_msec(100), apr_time_from_sec(600),
                                        "is not a duration from 100ms to 10m")),
                  RSRC_CONF,
                  "How long the hub waits for a callback's answer to a "
                  "verification of intent (default 5s)"),
    AP_INIT_TAKE1("ResourceSyncRobots", rs_cmd_take1,
                  RS_CMD_VALUE(RS_SERVER, robots, RS_FLAG("is not On or Off")), RSRC_CONF,
                  "A Sitemap line per set of the server appended to /robots.txt: on or off "
                  "(default)"),
    AP_INIT_TAKE1("ResourceSyncHostMeta", rs_cmd_take1,
                  RS_CMD_VALUE(RS_SERVER, host_meta, RS_FLAG("is not On or Off")), RSRC_CONF,
                  "/.well-known/host-meta and host-meta.json linking to the Source "
                  "Description: on or off (default)"),
    { NULL }
};
