/* mod_resourcesync_directives.c - the directives and their arguments.
 *
 * Each handler runs while httpd reads the configuration (twice at startup,
 * once per restart; rs_config_pre has reset rs_global before each pass).
 * It checks its context (ap_check_cmd_context) and its arguments, and
 * stores them in the server config, the per-directory config or rs_global,
 * leaving the unset sentinel wherever the directive is absent.  Checks
 * that need the whole configuration run later, in rs_config_resolve; to
 * that end the handlers of set options record every use in a directory
 * section (rs_global.option_uses) and ResourceSyncSet registers each set
 * in its server's config and in rs_global.sets.
 */
#include <string.h>
#include <apr_fnmatch.h>
#include <apr_strings.h>
#include "mod_resourcesync.h"
#include "rs_glob.h"
#include "rs_parse.h"
#include "rs_path.h"

/* "file:line" of the directive being read, for messages. */
static const char *where(cmd_parms *cmd)
{
    if (cmd->directive && cmd->directive->filename) {
        return apr_psprintf(cmd->pool, "%s:%d", cmd->directive->filename,
                            cmd->directive->line_num);
    }
    return "(command line)";
}

static const char *set_state_dir(cmd_parms *cmd, void *mconfig, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    const char *path;
    (void)mconfig;
    if (err) {
        return err;
    }
    if (!*arg) {
        return "ResourceSyncStateDir: empty path";
    }
    /* One state directory per httpd instance: a second one is a mistake
     * (two files both setting it), not an override. */
    if (rs_global.state_dir) {
        return apr_psprintf(cmd->pool, "ResourceSyncStateDir '%s': already set to '%s' at %s "
                            "(one state directory per httpd instance)", arg,
                            rs_global.state_dir_arg, rs_global.state_dir_where);
    }
    /* NULL when APR rejects the path (e.g. longer than APR_PATH_MAX). */
    path = ap_server_root_relative(cmd->pool, arg);
    if (!path) {
        return apr_psprintf(cmd->pool, "ResourceSyncStateDir: invalid path '%s'", arg);
    }
    rs_global.state_dir = rs_path_strip_slash(cmd->pool, path);
    rs_global.state_dir_arg = arg;
    rs_global.state_dir_where = where(cmd);
    return NULL;
}

/* A whole number from min to max, or an error naming the directive and
 * the value ("... is not a number of <what> from min to max"). */
static const char *int_arg(cmd_parms *cmd, const char *arg, apr_int64_t min, apr_int64_t max,
                           const char *what, apr_int64_t *out)
{
    if (!rs_parse_int(arg, min, max, out)) {
        return apr_psprintf(cmd->pool, "%s: '%s' is not a number%s%s from %" APR_INT64_T_FMT
                            " to %" APR_INT64_T_FMT, cmd->cmd->name, arg, *what ? " of " : "",
                            what, min, max);
    }
    return NULL;
}

static const char *set_rescan(cmd_parms *cmd, void *mconfig, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    apr_int64_t v;
    (void)mconfig;
    if (err || (err = int_arg(cmd, arg, 1, 86400, "seconds", &v))) {
        return err;
    }
    rs_global.rescan = apr_time_from_sec(v);
    return NULL;
}

/* ResourceSyncMassDeletion off | <percent>% [<files>] */
static const char *set_massdel(cmd_parms *cmd, void *mconfig, const char *share,
                               const char *min)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    apr_size_t n = strlen(share);
    apr_int64_t v, m = RS_DEFAULT_MASSDEL_MIN;
    (void)mconfig;
    if (err) {
        return err;
    }
    if (rs_global.massdel_share != RS_UNSET) {
        return "ResourceSyncMassDeletion: given twice";
    }
    if (!strcasecmp(share, "off")) {
        if (min) {
            return apr_psprintf(cmd->pool, "ResourceSyncMassDeletion: '%s' after off", min);
        }
        rs_global.massdel_share = 0;
        return NULL;
    }
    if (n < 2 || share[n - 1] != '%'
        || !rs_parse_int(apr_pstrndup(cmd->pool, share, n - 1), 1, 99, &v)) {
        return apr_psprintf(cmd->pool, "ResourceSyncMassDeletion: '%s' is not off or a "
                            "share from 1%% to 99%%", share);
    }
    if (min && (err = int_arg(cmd, min, 1, APR_INT64_C(1000000000), "files", &m))) {
        return err;
    }
    rs_global.massdel_share = (int)v;
    rs_global.massdel_min = m;
    return NULL;
}

static const char *set_recent(cmd_parms *cmd, void *mconfig, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    apr_int64_t v;
    (void)mconfig;
    if (err || (err = int_arg(cmd, arg, RS_MIN_RECENT, RS_MAX_RECENT, "changes", &v))) {
        return err;
    }
    rs_global.recent = (int)v;
    return NULL;
}

static const char *set_large_file(cmd_parms *cmd, void *mconfig, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    apr_int64_t v;
    (void)mconfig;
    if (err) {
        return err;
    }
    if (!strcasecmp(arg, "off")) {
        rs_global.large_file = 0;
        return NULL;
    }
    if (!rs_parse_int(arg, 1, RS_MAX_LARGE, &v)) {
        return apr_psprintf(cmd->pool, "ResourceSyncLargeFileSize: '%s' is not 'off' nor a "
                            "number of MiB from 1 to %d", arg, RS_MAX_LARGE);
    }
    rs_global.large_file = v << 20;
    return NULL;
}

static const char *set_verify(cmd_parms *cmd, void *mconfig, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    (void)mconfig;
    if (err) {
        return err;
    }
    if (!strcasecmp(arg, "off")) {
        rs_global.verify = 0;
        return NULL;
    }
    if (!rs_parse_duration(arg, &rs_global.verify)) {
        return apr_psprintf(cmd->pool, "ResourceSyncVerifyInterval: '%s' is not 'off' nor a "
                            "duration (e.g. 3600, 90m, 12h, 1d)", arg);
    }
    return NULL;
}

/* ResourceSyncSet belongs in a <Directory> section with a plain absolute
 * path (sets are roots the watcher walks), at most one set per section. */
static const char *check_set_section(cmd_parms *cmd, const rs_dir_conf *dc, const char *name)
{
    const char *err = ap_check_cmd_context(cmd, NOT_IN_LOCATION | NOT_IN_FILES);

    if (err) {
        return err;
    }
    if (!cmd->path || !cmd->directive->parent
        || strcasecmp(cmd->directive->parent->directive, "<Directory")) {
        return "ResourceSyncSet must be used inside a <Directory> section";
    }
    if (apr_fnmatch_test(cmd->path) || cmd->path[0] != '/') {
        return apr_psprintf(cmd->pool, "ResourceSyncSet %s: <Directory \"%s\"> must be "
                            "a plain absolute path (no wildcards or regular expressions)",
                            name, cmd->path);
    }
    if (dc->set) {
        return apr_psprintf(cmd->pool, "ResourceSyncSet %s: this <Directory> already "
                            "holds set '%s'", name, dc->set->name);
    }
    return NULL;
}

/* A set name is a URL segment and a file name in the state directory. */
static const char *check_set_name(cmd_parms *cmd, const char *name)
{
    if (!rs_parse_set_name(name, RS_SET_NAME_MAX)) {
        return apr_psprintf(cmd->pool, "ResourceSyncSet: invalid set name '%s' (use 1 to "
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
            return apr_psprintf(cmd->pool, "ResourceSyncSet: duplicate set name '%s' "
                                "(already used at %s)", set->name, o->where);
        }
        if (rs_path_within(set->dir, o->dir) || rs_path_within(o->dir, set->dir)) {
            return apr_psprintf(cmd->pool, "ResourceSyncSet %s: directory '%s' overlaps "
                                "set '%s' (%s, at %s)", set->name, set->dir, o->name, o->dir,
                                o->where);
        }
    }
    if (rs_global.sets->nelts >= RS_MAX_SETS) {
        return apr_psprintf(cmd->pool, "ResourceSyncSet %s: at most %d sets", set->name,
                            RS_MAX_SETS);
    }
    return NULL;
}

static const char *set_set(cmd_parms *cmd, void *mconfig, const char *name,
                           const char *url)
{
    rs_dir_conf *dc = mconfig;
    rs_srv_conf *sc = ap_get_module_config(cmd->server->module_config, &resourcesync_module);
    const char *err;
    rs_set_t *set;

    if ((err = check_set_section(cmd, dc, name)) || (err = check_set_name(cmd, name))) {
        return err;
    }
    if (url && !rs_parse_url_path(url)) {
        return apr_psprintf(cmd->pool, "ResourceSyncSet %s: invalid URL-path '%s' (an "
                            "absolute path such as /data, without query, fragment, "
                            "'%%' or spaces)", name, url);
    }
    set = apr_pcalloc(cmd->pool, sizeof(*set));
    set->name = apr_pstrdup(cmd->pool, name);
    set->dir = rs_path_strip_slash(cmd->pool, cmd->path);
    set->url_arg = url ? rs_path_strip_slash(cmd->pool, url) : NULL;
    set->s = cmd->server;
    set->section = dc;
    set->where = where(cmd);
    if ((err = check_set_unique(cmd, set))) {
        return err;
    }
    dc->set = set;
    APR_ARRAY_PUSH(rs_global.sets, rs_set_t *) = set;
    APR_ARRAY_PUSH(sc->sets, rs_set_t *) = set;
    return NULL;
}

static const char *set_prefix(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_srv_conf *sc = ap_get_module_config(cmd->server->module_config, &resourcesync_module);
    (void)mconfig;
    if (!rs_parse_url_path(arg) || !strcmp(arg, "/") || arg[strlen(arg) - 1] == '/') {
        return apr_psprintf(cmd->pool, "ResourceSyncPrefix: invalid URL-path '%s' (an "
                            "absolute path such as /resourcesync, without a trailing '/')",
                            arg);
    }
    sc->prefix = arg;
    return NULL;
}

static const char *set_base_url(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_srv_conf *sc = ap_get_module_config(cmd->server->module_config, &resourcesync_module);
    (void)mconfig;
    /* A path is allowed for servers published below a prefix by a reverse
     * proxy: every absolute URL is then <base><URL-path>. */
    if (!rs_parse_base_url(arg)) {
        return apr_psprintf(cmd->pool, "ResourceSyncBaseURL: invalid URL '%s' (give "
                            "scheme://host[:port][/path], e.g. https://data.example.org)",
                            arg);
    }
    sc->base_url = rs_path_strip_slash(cmd->pool, arg);
    if (sc->base_url[strlen(sc->base_url) - 1] == '/') {
        sc->base_url = apr_pstrndup(cmd->pool, sc->base_url, strlen(sc->base_url) - 1);
    }
    return NULL;
}

/* Context check of every set option.  A use inside a directory section
 * is recorded (rs_option_use_t): whether that section holds a set is only
 * known once the whole configuration is read (rs_config_resolve). */
static const char *option_context(cmd_parms *cmd, void *mconfig)
{
    const char *err = ap_check_cmd_context(cmd, NOT_IN_LOCATION | NOT_IN_FILES);
    if (err) {
        return err;
    }
    if (cmd->path) {
        rs_option_use_t *u;
        if (!rs_global.option_uses) {
            rs_global.option_uses = apr_array_make(rs_global.pconf, 8, sizeof(rs_option_use_t));
        }
        u = apr_array_push(rs_global.option_uses);
        u->mconfig = mconfig;
        u->directive = cmd->cmd->name;
        u->where = where(cmd);
    }
    return NULL;
}

const char *rs_directives_option_context(cmd_parms *cmd, void *mconfig)
{
    return option_context(cmd, mconfig);
}

/* "none" given with algorithms: name what it was combined with
 * ("none md5" -> 'md5'). */
static const char *hash_none_error(cmd_parms *cmd, int argc, char *const argv[], int none)
{
    const char *others = NULL;
    int j;

    for (j = 0; j < argc; j++) {
        if (j != none) {
            others = others ? apr_pstrcat(cmd->pool, others, " ", argv[j], NULL) : argv[j];
        }
    }
    return apr_psprintf(cmd->pool, "ResourceSyncHash: '%s' cannot be combined "
                        "with algorithms ('%s')", argv[none], others);
}

static const char *set_hash(cmd_parms *cmd, void *mconfig, int argc, char *const argv[])
{
    rs_dir_conf *dc = mconfig;
    unsigned mask = 0;
    int bad = 0;
    const char *err = option_context(cmd, mconfig);

    if (err) {
        return err;
    }
    switch (rs_parse_hashes(argc, (const char *const *)argv, &mask, &bad)) {
    case RS_PARSE_OK:
        break;
    case RS_PARSE_HASH_EMPTY:
        return "ResourceSyncHash: give one or more of md5 sha-1 sha-256 sha-512, or none";
    case RS_PARSE_HASH_NONE_MIXED:
        return hash_none_error(cmd, argc, argv, bad);
    case RS_PARSE_HASH_UNKNOWN:
        return apr_psprintf(cmd->pool, "ResourceSyncHash: unknown algorithm '%s' "
                            "(known: md5 sha-1 sha-256 sha-512, or none)", argv[bad]);
    }
    dc->hashes = (int)mask;
    return NULL;
}

static const char *set_max_entries(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_dir_conf *dc = mconfig;
    apr_int64_t v;
    const char *err = option_context(cmd, mconfig);

    if (err || (err = int_arg(cmd, arg, 1, 50000, "", &v))) {
        return err;
    }
    dc->max_entries = (int)v;
    return NULL;
}

static const char *set_exclude(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_dir_conf *dc = mconfig;
    const char *err = option_context(cmd, mconfig);

    if (err) {
        return err;
    }
    err = rs_glob_check(cmd->pool, arg);
    if (err) {
        return apr_psprintf(cmd->pool, "ResourceSyncExclude: invalid pattern '%s': %s",
                            arg, err);
    }
    if (!dc->excludes) {
        dc->excludes = apr_array_make(cmd->pool, 4, sizeof(const char *));
    }
    APR_ARRAY_PUSH(dc->excludes, const char *) = arg;
    return NULL;
}

static const char *set_describedby(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_dir_conf *dc = mconfig;
    const char *err = option_context(cmd, mconfig);

    if (err) {
        return err;
    }
    if (!rs_parse_url(arg)) {
        return apr_psprintf(cmd->pool, "ResourceSyncDescribedBy: '%s' is not an absolute "
                            "http(s) URL", arg);
    }
    if (cmd->path) {
        dc->describedby = arg;   /* set level */
    }
    else {
        rs_srv_conf *sc = ap_get_module_config(cmd->server->module_config,
                                               &resourcesync_module);
        sc->describedby = arg;   /* source level */
    }
    return NULL;
}

static const char *set_access_check(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_srv_conf *sc = ap_get_module_config(cmd->server->module_config, &resourcesync_module);

    (void)mconfig;
    if (!strcasecmp(arg, "auto")) {
        sc->access_check = RS_ACCESS_AUTO;
    }
    else if (!strcasecmp(arg, "per-file")) {
        sc->access_check = RS_ACCESS_PER_FILE;
    }
    else {
        return apr_psprintf(cmd->pool, "ResourceSyncAccessCheck: '%s' is not auto or "
                            "per-file", arg);
    }
    return NULL;
}

/* A flag taken as TAKE1 (not AP_INIT_FLAG, whose error does not say
 * what was given), so the error can echo the value. */
static const char *set_dotfiles(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_dir_conf *dc = mconfig;
    const char *err = option_context(cmd, mconfig);

    if (err) {
        return err;
    }
    if (!strcasecmp(arg, "on")) {
        dc->dotfiles = 1;
    }
    else if (!strcasecmp(arg, "off")) {
        dc->dotfiles = 0;
    }
    else {
        return apr_psprintf(cmd->pool, "ResourceSyncIncludeDotfiles: '%s' is not On or Off",
                            arg);
    }
    return NULL;
}

static const char *set_period(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_dir_conf *dc = mconfig;
    const char *err = option_context(cmd, mconfig);
    if (err) {
        return err;
    }
    if (!rs_parse_duration(arg, &dc->cl_period)) {
        return apr_psprintf(cmd->pool, "ResourceSyncChangeListPeriod: '%s' is not a duration "
                            "(e.g. 3600, 90m, 12h, 1d)", arg);
    }
    return NULL;
}

static const char *set_retention(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_dir_conf *dc = mconfig;
    const char *err = option_context(cmd, mconfig);
    if (err) {
        return err;
    }
    if (!rs_parse_duration(arg, &dc->retention)) {
        return apr_psprintf(cmd->pool, "ResourceSyncJournalRetention: '%s' is not a duration "
                            "(e.g. 30d, 12h)", arg);
    }
    return NULL;
}

static const char *set_resource_dump(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_dir_conf *dc = mconfig;
    const char *err = option_context(cmd, mconfig);
    if (err) {
        return err;
    }
    if (!strcasecmp(arg, "off")) {
        dc->rdump = 0;
    }
    else if (!rs_parse_duration(arg, &dc->rdump)) {
        return apr_psprintf(cmd->pool, "ResourceSyncResourceDump: '%s' is not a duration "
                            "(e.g. 3600, 90m, 12h, 1d) or off", arg);
    }
    return NULL;
}

static const char *set_dump_entries(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_dir_conf *dc = mconfig;
    const char *err = option_context(cmd, mconfig);
    if (err) {
        return err;
    }
    if (!rs_parse_int(arg, 1, RS_MAX_DUMP_ENTRIES, &dc->dump_entries)) {
        return apr_psprintf(cmd->pool, "ResourceSyncDumpMaxEntries: '%s' is not a number from "
                            "1 to %d", arg, RS_MAX_DUMP_ENTRIES);
    }
    return NULL;
}

static const char *set_dump_size(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_dir_conf *dc = mconfig;
    const char *err = option_context(cmd, mconfig);
    apr_int64_t v;
    if (err) {
        return err;
    }
    if (!rs_parse_int(arg, 1, RS_MAX_LARGE, &v)) {
        return apr_psprintf(cmd->pool, "ResourceSyncDumpMaxSize: '%s' is not a number of MiB "
                            "from 1 to %d", arg, RS_MAX_LARGE);
    }
    dc->dump_size = v << 20;
    return NULL;
}

static const char *set_dump_grace(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_dir_conf *dc = mconfig;
    const char *err = option_context(cmd, mconfig);
    if (err) {
        return err;
    }
    if (!rs_parse_duration(arg, &dc->dump_grace)) {
        return apr_psprintf(cmd->pool, "ResourceSyncDumpGrace: '%s' is not a duration "
                            "(e.g. 3600, 90m, 12h, 1d)", arg);
    }
    return NULL;
}

static const char *set_change_dump(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_dir_conf *dc = mconfig;
    const char *err = option_context(cmd, mconfig);
    if (err) {
        return err;
    }
    if (!strcasecmp(arg, "on")) {
        dc->cdump = 1;
    }
    else if (!strcasecmp(arg, "off")) {
        dc->cdump = 0;
    }
    else {
        return apr_psprintf(cmd->pool, "ResourceSyncChangeDump: '%s' is not On or Off", arg);
    }
    return NULL;
}

static const char *set_notify(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_dir_conf *dc = mconfig;
    const char *err = option_context(cmd, mconfig);
    if (err) {
        return err;
    }
    if (!strcasecmp(arg, "on")) {
        dc->notify = 1;
    }
    else if (!strcasecmp(arg, "off")) {
        dc->notify = 0;
    }
    else {
        return apr_psprintf(cmd->pool, "ResourceSyncNotify: '%s' is not On or Off", arg);
    }
    return NULL;
}

static const char *set_notify_delay(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_dir_conf *dc = mconfig;
    const char *err = option_context(cmd, mconfig);
    if (err) {
        return err;
    }
    if (!rs_parse_delay(arg, &dc->notify_delay)) {
        return apr_psprintf(cmd->pool, "ResourceSyncNotifyDelay: '%s' is not a delay from 0 "
                            "to 1h (e.g. 100ms, 2s)", arg);
    }
    return NULL;
}

static const char *set_spec_version(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_dir_conf *dc = mconfig;
    const char *err = option_context(cmd, mconfig);
    if (err) {
        return err;
    }
    if (!strcmp(arg, "1.1")) {
        dc->spec10 = 0;
    }
    else if (!strcmp(arg, "1.0")) {
        dc->spec10 = 1;
    }
    else {
        return apr_psprintf(cmd->pool, "ResourceSyncSpecVersion: '%s' is not 1.1 or 1.0", arg);
    }
    return NULL;
}

const command_rec rs_cmds[] = {
    AP_INIT_TAKE1("ResourceSyncStateDir", set_state_dir, NULL, RSRC_CONF,
                  "Directory for the state store and generated documents"),
    AP_INIT_TAKE1("ResourceSyncRescanInterval", set_rescan, NULL, RSRC_CONF,
                  "Seconds between rescans of every set (default 60)"),
    AP_INIT_TAKE1("ResourceSyncLargeFileSize", set_large_file, NULL, RSRC_CONF,
                  "MiB from which files are hashed on the hashing lane, or off "
                  "(default 64)"),
    AP_INIT_TAKE1("ResourceSyncVerifyInterval", set_verify, NULL, RSRC_CONF,
                  "Duration between verification passes over every file of every set, "
                  "or off (default 1d)"),
    AP_INIT_TAKE1("ResourceSyncRecentChanges", set_recent, NULL, RSRC_CONF,
                  "Most recent changes kept in shared memory for the open Change Lists "
                  "(default 4096)"),
    AP_INIT_TAKE12("ResourceSyncMassDeletion", set_massdel, NULL, RSRC_CONF,
                   "Share of a set's files (and number of files) above which deletions "
                   "wait for a confirming scan: off, or e.g. 50% 100 (default)"),
    AP_INIT_TAKE12("ResourceSyncSet", set_set, NULL, ACCESS_CONF,
                   "Set name, and the URL-path of the directory if not below DocumentRoot"),
    AP_INIT_TAKE1("ResourceSyncPrefix", set_prefix, NULL, RSRC_CONF,
                  "URL-path under which the documents are served (default /resourcesync)"),
    AP_INIT_TAKE1("ResourceSyncAccessCheck", set_access_check, NULL, RSRC_CONF,
                  "auto (one request per directory and kind of file where the "
                  "configuration allows it) or per-file"),
    AP_INIT_TAKE1("ResourceSyncBaseURL", set_base_url, NULL, RSRC_CONF,
                  "scheme://host[:port] used in absolute URLs (behind a proxy)"),
    AP_INIT_TAKE_ARGV("ResourceSyncHash", set_hash, NULL, RSRC_CONF | ACCESS_CONF,
                      "Digests to list: md5 sha-1 sha-256 sha-512, or none"),
    AP_INIT_TAKE1("ResourceSyncMaxEntries", set_max_entries, NULL, RSRC_CONF | ACCESS_CONF,
                  "Entries per document before splitting into an index (1-50000)"),
    AP_INIT_ITERATE("ResourceSyncExclude", set_exclude, NULL, RSRC_CONF | ACCESS_CONF,
                    "Glob patterns of files and directories never listed"),
    AP_INIT_TAKE1("ResourceSyncDescribedBy", set_describedby, NULL, RSRC_CONF | ACCESS_CONF,
                  "URL of a document describing the source (server) or the set (directory)"),
    AP_INIT_TAKE1("ResourceSyncChangeListPeriod", set_period, NULL, RSRC_CONF | ACCESS_CONF,
                  "Time after which the open Change List closes (default 1d)"),
    AP_INIT_TAKE1("ResourceSyncJournalRetention", set_retention, NULL, RSRC_CONF | ACCESS_CONF,
                  "How long closed Change Lists and their records are kept (default 30d)"),
    AP_INIT_TAKE1("ResourceSyncResourceDump", set_resource_dump, NULL, RSRC_CONF | ACCESS_CONF,
                  "Build a Resource Dump at most once per duration while the set changes, "
                  "or off (default)"),
    AP_INIT_TAKE1("ResourceSyncDumpMaxEntries", set_dump_entries, NULL, RSRC_CONF | ACCESS_CONF,
                  "Files per Resource Dump package (default 50000)"),
    AP_INIT_TAKE1("ResourceSyncDumpMaxSize", set_dump_size, NULL, RSRC_CONF | ACCESS_CONF,
                  "MiB per Resource Dump package; a larger file gets one alone (default 1024)"),
    AP_INIT_TAKE1("ResourceSyncDumpGrace", set_dump_grace, NULL, RSRC_CONF | ACCESS_CONF,
                  "How long a package that left the Resource Dump stays downloadable "
                  "(default 1d)"),
    AP_INIT_TAKE1("ResourceSyncChangeDump", set_change_dump, NULL, RSRC_CONF | ACCESS_CONF,
                  "One Change Dump package per closed Change List: on or off (default)"),
    AP_INIT_TAKE1("ResourceSyncNotify", set_notify, NULL, RSRC_CONF | ACCESS_CONF,
                  "Change and Framework Notifications of the set: on or off (default)"),
    AP_INIT_TAKE1("ResourceSyncNotifyDelay", set_notify_delay, NULL, RSRC_CONF | ACCESS_CONF,
                  "How long a change notification waits for more changes (default 100ms)"),
    AP_INIT_TAKE12("ResourceSyncNotifyHub", rs_notifyconf_set_hub, NULL, RSRC_CONF | ACCESS_CONF,
                   "A WebSub hub the set's notifications are published to, and fat "
                   "(default) or ping"),
    AP_INIT_TAKE1("ResourceSyncNotifyRetry", rs_notifyconf_set_retry, NULL,
                  RSRC_CONF | ACCESS_CONF,
                  "How long a notification is retried at a hub before it is skipped "
                  "(default 1d)"),
    AP_INIT_TAKE1("ResourceSyncHubSignature", rs_notifyconf_set_sig, NULL, RSRC_CONF,
                  "X-Hub-Signature algorithm of the hub's deliveries: sha1, sha256 "
                  "(default), sha384 or sha512"),
    AP_INIT_TAKE1("ResourceSyncSpecVersion", set_spec_version, NULL, RSRC_CONF | ACCESS_CONF,
                  "ResourceSync version of the Change Lists: 1.1 (default) or 1.0"),
    AP_INIT_TAKE1("ResourceSyncIncludeDotfiles", set_dotfiles, NULL, RSRC_CONF | ACCESS_CONF,
                 "List files whose names start with '.' (never .ht*)"),
    AP_INIT_TAKE1("ResourceSyncHub", rs_hubconf_set_hub, NULL, RSRC_CONF,
                  "Built-in WebSub hub at <prefix>/hub: on or off (default)"),
    AP_INIT_TAKE2("ResourceSyncHubLease", rs_hubconf_set_lease, NULL, RSRC_CONF,
                  "Shortest and longest subscription lease of the hub (default 300 31d)"),
    AP_INIT_ITERATE("ResourceSyncHubAllowCallback", rs_hubconf_set_allow, NULL, RSRC_CONF,
                    "Hosts and CIDR blocks of private addresses hub callbacks may use"),
    AP_INIT_TAKE1("ResourceSyncHubMaxBacklog", rs_hubconf_set_backlog, NULL, RSRC_CONF,
                  "Undelivered notifications after which a subscription ends (default 1000)"),
    AP_INIT_TAKE_ARGV("ResourceSyncHubMaxSubscriptions", rs_hubconf_set_max_subs, NULL,
                      RSRC_CONF, "Hub subscriptions in total, per callback address and per "
                      "client address (default 10000 100 100)"),
    AP_INIT_TAKE12("ResourceSyncHubSpoolLimit", rs_hubconf_set_spool, NULL, RSRC_CONF,
                   "Subscription requests waiting for the hub's intake, and their KiB "
                   "(default 1000 4096)"),
    AP_INIT_TAKE2("ResourceSyncHubRequestRate", rs_hubconf_set_rate, NULL, RSRC_CONF,
                  "Subscription requests one client address may send per duration "
                  "(default 60 1m)"),
    AP_INIT_TAKE1("ResourceSyncHubVerifyTimeout", rs_hubconf_set_verify_timeout, NULL,
                  RSRC_CONF, "How long the hub waits for a callback's answer to a "
                  "verification of intent (default 5s)"),
    { NULL }
};
