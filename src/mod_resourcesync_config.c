/* mod_resourcesync_config.c - directives, merges and the set registry.
 *
 * Lifecycle: pre_config resets rs_global for the configuration pass about
 * to be read (httpd reads it twice at startup and once per restart).  Each
 * ResourceSyncSet creates an rs_set_t in pconf, attached to the per-directory
 * config of its <Directory> section and registered both in its server's
 * config and in rs_global.sets, so the watcher knows every root.  Checks
 * that need the whole configuration (URL paths below DocumentRoot, the state
 * directory) run in post_config (rs_config_resolve).
 *
 * Every field has an unset sentinel (RS_UNSET or NULL) and the merges are
 * explicit: a set's options are its section's values over the server-level
 * values over the defaults.
 */
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <apr_fnmatch.h>
#include <apr_md5.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include <http_core.h>
#include <http_main.h>
#include <util_cfgtree.h>
#include <unixd.h>
#include "mod_resourcesync.h"
#include "rs_glob.h"
#include "rs_hash.h"
#include "rs_uri.h"

rs_global_t rs_global;

void *rs_config_create_dir(apr_pool_t *p, char *dir)
{
    rs_dir_conf *c = apr_pcalloc(p, sizeof(*c));
    (void)dir;
    c->hashes = RS_UNSET;
    c->max_entries = RS_UNSET;
    c->dotfiles = RS_UNSET;
    c->cl_period = RS_UNSET;
    c->retention = RS_UNSET;
    c->spec10 = RS_UNSET;
    return c;
}

void *rs_config_merge_dir(apr_pool_t *p, void *basev, void *addv)
{
    rs_dir_conf *base = basev, *add = addv, *c = apr_pcalloc(p, sizeof(*c));

    c->set = add->set ? add->set : base->set;
    c->hashes = add->hashes != RS_UNSET ? add->hashes : base->hashes;
    c->max_entries = add->max_entries != RS_UNSET ? add->max_entries : base->max_entries;
    if (add->excludes && base->excludes) {
        c->excludes = apr_array_append(p, base->excludes, add->excludes);
    }
    else {
        c->excludes = add->excludes ? add->excludes : base->excludes;
    }
    c->describedby = add->describedby ? add->describedby : base->describedby;
    c->dotfiles = add->dotfiles != RS_UNSET ? add->dotfiles : base->dotfiles;
    c->cl_period = add->cl_period != RS_UNSET ? add->cl_period : base->cl_period;
    c->retention = add->retention != RS_UNSET ? add->retention : base->retention;
    c->spec10 = add->spec10 != RS_UNSET ? add->spec10 : base->spec10;
    return c;
}

void *rs_config_create_srv(apr_pool_t *p, server_rec *s)
{
    rs_srv_conf *c = apr_pcalloc(p, sizeof(*c));
    (void)s;
    c->sets = apr_array_make(p, 4, sizeof(rs_set_t *));
    return c;
}

void *rs_config_merge_srv(apr_pool_t *p, void *basev, void *addv)
{
    rs_srv_conf *base = basev, *add = addv, *c = apr_pcalloc(p, sizeof(*c));

    c->prefix = add->prefix ? add->prefix : base->prefix;
    /* Not inherited: a vhost's absolute URLs use its own name unless it
     * sets ResourceSyncBaseURL itself. */
    c->base_url = add->base_url;
    c->describedby = add->describedby ? add->describedby : base->describedby;
    c->sets = add->sets;    /* sets belong to the server that declares them */
    return c;
}

const char *rs_config_prefix(const rs_srv_conf *sc)
{
    return sc->prefix ? sc->prefix : RS_DEFAULT_PREFIX;
}

int rs_config_pre(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp)
{
    (void)plog;
    (void)ptemp;
    memset(&rs_global, 0, sizeof(rs_global));
    rs_global.pconf = pconf;
    rs_global.rescan = RS_UNSET;
    rs_global.recent = RS_UNSET;
    rs_global.sets = apr_array_make(pconf, 8, sizeof(rs_set_t *));
    return OK;
}

/* ---------------------------------------------------------------- helpers */

static const char *where(cmd_parms *cmd)
{
    if (cmd->directive && cmd->directive->filename) {
        return apr_psprintf(cmd->pool, "%s:%d", cmd->directive->filename,
                            cmd->directive->line_num);
    }
    return "(command line)";
}

static const char *strip_slash(apr_pool_t *p, const char *path)
{
    apr_size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') {
        n--;
    }
    return apr_pstrndup(p, path, n);
}

/* 1 if a is b or below b (both without trailing "/"). */
static int path_within(const char *a, const char *b)
{
    apr_size_t n = strlen(b);
    if (!strcmp(b, "/")) {
        return 1;
    }
    return !strncmp(a, b, n) && (a[n] == '/' || a[n] == '\0');
}

static int valid_url(const char *u)
{
    apr_uri_t uri;
    apr_pool_t *p;
    int ok;
    if (strncasecmp(u, "http://", 7) && strncasecmp(u, "https://", 8)) {
        return 0;
    }
    apr_pool_create(&p, NULL);
    ok = apr_uri_parse(p, u, &uri) == APR_SUCCESS && uri.hostname && *uri.hostname
         && !uri.query && !uri.fragment && !strpbrk(u, " \t\"<>\\^`{|}");
    apr_pool_destroy(p);
    return ok;
}

static int valid_url_path(const char *s)
{
    if (*s != '/' || strstr(s, "/../") || strstr(s, "/./") || strstr(s, "//")) {
        return 0;
    }
    for (; *s; s++) {
        if ((unsigned char)*s <= ' ' || *s == '?' || *s == '#' || *s == '%'
            || *s == '"' || *s == '<' || *s == '>' || *s == '\\' || (unsigned char)*s >= 0x7f) {
            return 0;
        }
    }
    return 1;
}

/* ------------------------------------------------------------- directives */

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
    /* NULL when APR rejects the path (e.g. longer than APR_PATH_MAX). */
    path = ap_server_root_relative(cmd->pool, arg);
    if (!path) {
        return apr_psprintf(cmd->pool, "ResourceSyncStateDir: invalid path '%s'", arg);
    }
    rs_global.state_dir = strip_slash(cmd->pool, path);
    return NULL;
}

/* A whole number from min to max, or an error naming the directive and
 * the value ("... is not a number of <what> from min to max"). */
static const char *int_arg(cmd_parms *cmd, const char *arg, apr_int64_t min, apr_int64_t max,
                           const char *what, apr_int64_t *out)
{
    char *end;
    apr_int64_t v = apr_strtoi64(arg, &end, 10);
    if (*end || end == arg || v < min || v > max) {
        return apr_psprintf(cmd->pool, "%s: '%s' is not a number%s%s from %" APR_INT64_T_FMT
                            " to %" APR_INT64_T_FMT, cmd->cmd->name, arg, *what ? " of " : "",
                            what, min, max);
    }
    *out = v;
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
    const char *s;

    for (s = name; *s; s++) {
        if (!apr_isalnum(*s) && *s != '-' && *s != '_' && *s != '.') {
            break;
        }
    }
    if (*s || !*name || name[0] == '.' || strlen(name) > RS_SET_NAME_MAX) {
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
        if (path_within(set->dir, o->dir) || path_within(o->dir, set->dir)) {
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
    if (url && !valid_url_path(url)) {
        return apr_psprintf(cmd->pool, "ResourceSyncSet %s: invalid URL-path '%s' (an "
                            "absolute path such as /data, without query, fragment, "
                            "'%%' or spaces)", name, url);
    }
    set = apr_pcalloc(cmd->pool, sizeof(*set));
    set->name = apr_pstrdup(cmd->pool, name);
    set->dir = strip_slash(cmd->pool, cmd->path);
    set->url_arg = url ? strip_slash(cmd->pool, url) : NULL;
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
    if (!valid_url_path(arg) || !strcmp(arg, "/") || arg[strlen(arg) - 1] == '/') {
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
    apr_uri_t uri;
    (void)mconfig;
    /* A path is allowed for servers published below a prefix by a reverse
     * proxy: every absolute URL is then <base><URL-path>. */
    if (!valid_url(arg) || apr_uri_parse(cmd->pool, arg, &uri) != APR_SUCCESS
        || (uri.path && !valid_url_path(uri.path))) {
        return apr_psprintf(cmd->pool, "ResourceSyncBaseURL: invalid URL '%s' (give "
                            "scheme://host[:port][/path], e.g. https://data.example.org)",
                            arg);
    }
    sc->base_url = strip_slash(cmd->pool, arg);
    if (sc->base_url[strlen(sc->base_url) - 1] == '/') {
        sc->base_url = apr_pstrndup(cmd->pool, sc->base_url, strlen(sc->base_url) - 1);
    }
    return NULL;
}

/* Set options apply where the watcher reads them: the <Directory> section
 * that holds ResourceSyncSet, or server level.  Anywhere else they would be
 * silently ignored, so their place is recorded here and checked once the
 * whole configuration is known (rs_config_resolve). */
typedef struct {
    const void *mconfig;
    const char *directive;
    const char *where;
} option_use_t;

static const char *option_context(cmd_parms *cmd, void *mconfig)
{
    const char *err = ap_check_cmd_context(cmd, NOT_IN_LOCATION | NOT_IN_FILES);
    if (err) {
        return err;
    }
    if (cmd->path) {
        option_use_t *u;
        if (!rs_global.option_uses) {
            rs_global.option_uses = apr_array_make(rs_global.pconf, 8, sizeof(option_use_t));
        }
        u = apr_array_push(rs_global.option_uses);
        u->mconfig = mconfig;
        u->directive = cmd->cmd->name;
        u->where = where(cmd);
    }
    return NULL;
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
    int i, mask = 0;
    const char *err = option_context(cmd, mconfig);

    if (err) {
        return err;
    }

    if (argc < 1) {
        return "ResourceSyncHash: give one or more of md5 sha-1 sha-256 sha-512, or none";
    }
    for (i = 0; i < argc; i++) {
        unsigned bit = rs_hash_bit(argv[i]);
        if (!strcasecmp(argv[i], "none")) {
            if (argc > 1) {
                return hash_none_error(cmd, argc, argv, i);
            }
            continue;
        }
        if (!bit) {
            return apr_psprintf(cmd->pool, "ResourceSyncHash: unknown algorithm '%s' "
                                "(known: md5 sha-1 sha-256 sha-512, or none)", argv[i]);
        }
        mask |= (int)bit;
    }
    dc->hashes = mask;
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
    if (!valid_url(arg)) {
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

static const char *set_dotfiles(cmd_parms *cmd, void *mconfig, int on)
{
    rs_dir_conf *dc = mconfig;
    const char *err = option_context(cmd, mconfig);

    if (err) {
        return err;
    }
    dc->dotfiles = on;
    return NULL;
}

/* "90" (seconds), "90s", "15m", "12h", "30d". */
static int parse_duration(const char *arg, apr_interval_time_t *out)
{
    char *end;
    apr_int64_t v = apr_strtoi64(arg, &end, 10), mul = 1;

    if (end == arg || v <= 0) {
        return 0;
    }
    switch (*end) {
    case '\0': case 's': mul = 1; break;
    case 'm': mul = 60; break;
    case 'h': mul = 3600; break;
    case 'd': mul = 86400; break;
    default: return 0;
    }
    if (*end && end[1]) {
        return 0;
    }
    if (v > (apr_int64_t)3650 * 86400 / mul) {
        return 0;
    }
    *out = apr_time_from_sec(v * mul);
    return 1;
}

static const char *set_period(cmd_parms *cmd, void *mconfig, const char *arg)
{
    rs_dir_conf *dc = mconfig;
    const char *err = option_context(cmd, mconfig);
    if (err) {
        return err;
    }
    if (!parse_duration(arg, &dc->cl_period)) {
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
    if (!parse_duration(arg, &dc->retention)) {
        return apr_psprintf(cmd->pool, "ResourceSyncJournalRetention: '%s' is not a duration "
                            "(e.g. 30d, 12h)", arg);
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
    AP_INIT_TAKE1("ResourceSyncRecentChanges", set_recent, NULL, RSRC_CONF,
                  "Most recent changes kept in shared memory for the open Change Lists "
                  "(default 4096)"),
    AP_INIT_TAKE12("ResourceSyncSet", set_set, NULL, ACCESS_CONF,
                   "Set name, and the URL-path of the directory if not below DocumentRoot"),
    AP_INIT_TAKE1("ResourceSyncPrefix", set_prefix, NULL, RSRC_CONF,
                  "URL-path under which the documents are served (default /resourcesync)"),
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
    AP_INIT_TAKE1("ResourceSyncSpecVersion", set_spec_version, NULL, RSRC_CONF | ACCESS_CONF,
                  "ResourceSync version of the Change Lists: 1.1 (default) or 1.0"),
    AP_INIT_FLAG("ResourceSyncIncludeDotfiles", set_dotfiles, NULL, RSRC_CONF | ACCESS_CONF,
                 "List files whose names start with '.' (never .ht*)"),
    { NULL }
};

/* ------------------------------------------------------------ post_config */

static const char *canonical_base(apr_pool_t *p, server_rec *s, const rs_srv_conf *sc)
{
    const char *scheme = s->server_scheme;
    apr_port_t port = s->port;
    int dflt;

    if (sc->base_url) {
        return sc->base_url;
    }
    if (!port && s->addrs && s->addrs->host_port) {
        port = s->addrs->host_port;
    }
    if (!scheme) {
        /* Without "ServerName https://...", port 443 means TLS. */
        scheme = port == 443 ? "https" : "http";
    }
    if (!port) {
        port = strcasecmp(scheme, "https") ? 80 : 443;
    }
    dflt = (port == 80 && !strcasecmp(scheme, "http"))
        || (port == 443 && !strcasecmp(scheme, "https"));
    return dflt ? apr_psprintf(p, "%s://%s", scheme, s->server_hostname)
                : apr_psprintf(p, "%s://%s:%u", scheme, s->server_hostname, port);
}

/* Fingerprint of the parsed configuration: every directive and its
 * arguments.  Inventory rows remember the fingerprint under which their
 * access and media type were decided; a different configuration makes the
 * watcher decide again (hashes are kept). */
static void fp_tree(apr_md5_ctx_t *ctx, const ap_directive_t *d)
{
    for (; d; d = d->next) {
        apr_md5_update(ctx, d->directive, strlen(d->directive) + 1);
        if (d->args) {
            apr_md5_update(ctx, d->args, strlen(d->args) + 1);
        }
        fp_tree(ctx, d->first_child);
    }
}

static const char *fingerprint(apr_pool_t *p)
{
    apr_md5_ctx_t ctx;
    unsigned char d[APR_MD5_DIGESTSIZE];
    char *hex = apr_palloc(p, 2 * APR_MD5_DIGESTSIZE + 1);
    int i;
    apr_md5_init(&ctx);
    fp_tree(&ctx, ap_conftree);
    apr_md5_final(d, &ctx);
    for (i = 0; i < APR_MD5_DIGESTSIZE; i++) {
        apr_snprintf(hex + 2 * i, 3, "%02x", d[i]);
    }
    return hex;
}

static int fatal(server_rec *s, const char *msg)
{
    ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, RS_TAG "%s", msg);
    return !OK;
}

/* Defaults of the global directives, and the Last-Modified time of the
 * documents rendered from this configuration (whole seconds, as HTTP dates
 * carry no more). */
static void resolve_globals(void)
{
    if (rs_global.rescan == RS_UNSET) {
        rs_global.rescan = apr_time_from_sec(RS_DEFAULT_RESCAN);
    }
    if (rs_global.recent == RS_UNSET) {
        rs_global.recent = RS_DEFAULT_RECENT;
    }
    rs_global.config_time = apr_time_sec(apr_time_now()) * APR_USEC_PER_SEC;
}

/* Every set option recorded in a <Directory> section (option_context)
 * must be in the section of a set, the only place the watcher reads it. */
static int check_option_uses(apr_pool_t *ptemp, server_rec *s0)
{
    int i, j;

    for (i = 0; rs_global.option_uses && i < rs_global.option_uses->nelts; i++) {
        const option_use_t *u = &APR_ARRAY_IDX(rs_global.option_uses, i, option_use_t);
        int found = 0;
        for (j = 0; j < rs_global.sets->nelts && !found; j++) {
            found = APR_ARRAY_IDX(rs_global.sets, j, rs_set_t *)->section == u->mconfig;
        }
        if (!found) {
            return fatal(s0, apr_psprintf(ptemp, "%s (%s) is in a <Directory> section "
                                           "without ResourceSyncSet, where it has no effect: "
                                           "put set options in the section that holds "
                                           "ResourceSyncSet, or at server level",
                                           u->directive, u->where));
        }
    }
    return OK;
}

/* DocumentRoot of s without a trailing "/": its own, else the main
 * server's (s0); NULL if neither has one. */
static const char *server_docroot(apr_pool_t *ptemp, server_rec *s, server_rec *s0)
{
    core_server_config *core = ap_get_core_module_config(s->module_config);

    if (!core->ap_document_root && s != s0) {
        core = ap_get_core_module_config(s0->module_config);
    }
    return core->ap_document_root ? strip_slash(ptemp, core->ap_document_root) : NULL;
}

/* set->url_path: the second argument of ResourceSyncSet, else the set's
 * directory relative to DocumentRoot; always ending with "/". */
static int resolve_url_path(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s,
                            rs_set_t *set, const char *docroot)
{
    if (set->url_arg) {
        set->url_path = set->url_arg;
    }
    else if (docroot && path_within(set->dir, docroot)) {
        set->url_path = set->dir + (strcmp(docroot, "/") ? strlen(docroot) : 0);
        if (!*set->url_path) {
            set->url_path = "/";
        }
    }
    else {
        return fatal(s, apr_psprintf(ptemp, "ResourceSyncSet %s: directory '%s' is "
                                     "not below DocumentRoot '%s'; give its URL-path "
                                     "as the second argument (%s)", set->name,
                                     set->dir, docroot ? docroot : "(none)", set->where));
    }
    if (strcmp(set->url_path, "/")) {
        set->url_path = apr_pstrcat(pconf, set->url_path, "/", NULL);
    }
    return OK;
}

/* The documents' URLs must not hide the set's files: its URL-path may be
 * neither inside the prefix nor cover the well-known URI. */
static int check_url_path(apr_pool_t *ptemp, server_rec *s, const rs_set_t *set,
                          const char *prefix)
{
    apr_size_t n = strlen(prefix);

    if (!strncmp(set->url_path, prefix, n)
        && (set->url_path[n] == '/' || !set->url_path[n])) {
        return fatal(s, apr_psprintf(ptemp, "ResourceSyncSet %s: its URL-path '%s' is "
                                     "inside ResourceSyncPrefix '%s' (%s)", set->name,
                                     set->url_path, prefix, set->where));
    }
    if (!strncmp(RS_WELL_KNOWN, set->url_path, strlen(set->url_path))
        && strcmp(set->url_path, "/")) {
        return fatal(s, apr_psprintf(ptemp, "ResourceSyncSet %s: its URL-path '%s' "
                                     "covers %s (%s)", set->name, set->url_path,
                                     RS_WELL_KNOWN, set->where));
    }
    return OK;
}

/* A set's effective options: its section's values over the server-level
 * values (defaults) over the built-in defaults. */
static void resolve_set_options(apr_pool_t *pconf, rs_set_t *set, rs_dir_conf *defaults)
{
    const rs_dir_conf *eff = rs_config_merge_dir(pconf, defaults, set->section);

    set->hashes = eff->hashes == RS_UNSET ? RS_HASH_MD5 : (unsigned)eff->hashes;
    set->max_entries = eff->max_entries == RS_UNSET ? RS_DEFAULT_MAX : eff->max_entries;
    set->excludes = eff->excludes;
    set->describedby = set->section->describedby;
    set->dotfiles = eff->dotfiles == 1;
    set->cl_period = eff->cl_period == RS_UNSET ? RS_DEFAULT_PERIOD : eff->cl_period;
    set->retention = eff->retention == RS_UNSET ? RS_DEFAULT_RETENTION : eff->retention;
    set->spec10 = eff->spec10 == 1;
}

/* A set's absolute URLs (from its server's canonical base) and its
 * directories in the state directory. */
static void resolve_set_urls(apr_pool_t *pconf, rs_set_t *set, const rs_srv_conf *sc,
                             const char *prefix)
{
    set->root_url = apr_pstrcat(pconf, sc->canonical,
                                rs_uri_escape_path(pconf, set->url_path), NULL);
    set->doc_base = apr_pstrcat(pconf, sc->canonical, prefix, "/", set->name, "/", NULL);
    set->capability_url = apr_pstrcat(pconf, set->doc_base, "capabilitylist.xml", NULL);
    set->list_url = apr_pstrcat(pconf, set->doc_base, "resourcelist.xml", NULL);
    set->snap_dir = apr_pstrcat(pconf, rs_global.state_dir, "/snapshots/", set->name, NULL);
    set->cl_dir = apr_pstrcat(pconf, rs_global.state_dir, "/changelists/", set->name, NULL);
    set->cl_index_url = apr_pstrcat(pconf, set->doc_base, "changelist.xml", NULL);
}

/* The state directory must never be served: not inside a set's directory
 * (a set outside DocumentRoot is served through its URL-path). */
static int check_state_outside_set(apr_pool_t *ptemp, server_rec *s, const rs_set_t *set)
{
    if (path_within(rs_global.state_dir, set->dir)) {
        return fatal(s, apr_psprintf(ptemp, "ResourceSyncStateDir '%s' is inside "
                                     "set '%s' (%s): the state must never be served",
                                     rs_global.state_dir, set->name, set->dir));
    }
    return OK;
}

/* One set of server s: its URL-path and the checks on it; with create,
 * also its options and URLs, and the state directory check. */
static int resolve_set(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s, rs_set_t *set,
                       const char *docroot, int create)
{
    rs_srv_conf *sc = ap_get_module_config(s->module_config, &resourcesync_module);
    const char *prefix = rs_config_prefix(sc);
    int rc;

    if ((rc = resolve_url_path(pconf, ptemp, s, set, docroot)) != OK
        || (rc = check_url_path(ptemp, s, set, prefix)) != OK) {
        return rc;
    }
    if (!create) {
        return OK;
    }
    resolve_set_options(pconf, set,
                        ap_get_module_config(s->lookup_defaults, &resourcesync_module));
    resolve_set_urls(pconf, set, sc, prefix);
    return check_state_outside_set(ptemp, s, set);
}

/* One server: its canonical base URL (with create), the state directory
 * outside its DocumentRoot, then each of its sets in declaration order. */
static int resolve_server(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s,
                          server_rec *s0, int create)
{
    rs_srv_conf *sc = ap_get_module_config(s->module_config, &resourcesync_module);
    const char *docroot = server_docroot(ptemp, s, s0);
    int i, rc;

    if (create) {
        sc->canonical = canonical_base(pconf, s, sc);
    }
    if (docroot && path_within(rs_global.state_dir, docroot)) {
        return fatal(s, apr_psprintf(ptemp, "ResourceSyncStateDir '%s' is inside "
                                     "DocumentRoot '%s': the state must never be served",
                                     rs_global.state_dir, docroot));
    }
    for (i = 0; i < sc->sets->nelts; i++) {
        rc = resolve_set(pconf, ptemp, s, APR_ARRAY_IDX(sc->sets, i, rs_set_t *), docroot,
                         create);
        if (rc != OK) {
            return rc;
        }
    }
    return OK;
}

/* Create the state directory (and its snapshots/) while still root, and
 * give both to the run user: the watcher, which writes them, runs as that
 * user.  Not root (httpd started by its run user): it must be writable. */
static int make_state_dir(apr_pool_t *ptemp, server_rec *s0)
{
    const char *paths[2];
    apr_status_t rv;
    int i;

    paths[0] = rs_global.state_dir;
    paths[1] = apr_pstrcat(ptemp, rs_global.state_dir, "/snapshots", NULL);
    rv = apr_dir_make_recursive(paths[1], APR_FPROT_OS_DEFAULT, ptemp);
    if (rv != APR_SUCCESS) {
        char buf[256];
        return fatal(s0, apr_psprintf(ptemp, "ResourceSyncStateDir: cannot create '%s': %s",
                                      rs_global.state_dir,
                                      apr_strerror(rv, buf, sizeof(buf))));
    }
    if (geteuid() != 0) {
        if (access(rs_global.state_dir, W_OK | X_OK) != 0) {
            return fatal(s0, apr_psprintf(ptemp, "ResourceSyncStateDir: '%s' is not writable "
                                          "by this user", rs_global.state_dir));
        }
        return OK;
    }
    for (i = 0; i < 2; i++) {
        if (chown(paths[i], ap_unixd_config.user_id, ap_unixd_config.group_id) != 0) {
            return fatal(s0, apr_psprintf(ptemp, "ResourceSyncStateDir: cannot give '%s' "
                                          "to user %s", paths[i], ap_unixd_config.user_name));
        }
    }
    chmod(rs_global.state_dir, 0750);
    return OK;
}

/* The steps run in this order, and the first failing check stops startup
 * with its message: a check_config pass (create == 0) and the post_config
 * pass (create == 1) report the same errors, except that only the latter
 * resolves options and URLs, checks the state directory against the sets'
 * directories, and creates the state directory. */
int rs_config_resolve(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s0, int create)
{
    server_rec *s;
    int i, rc;

    resolve_globals();
    if (!rs_global.sets->nelts) {
        return OK;
    }
    if (!rs_global.state_dir) {
        return fatal(s0, "ResourceSyncStateDir is not set: it is required when "
                     "ResourceSyncSet is used (e.g. ResourceSyncStateDir /var/lib/resourcesync)");
    }
    rs_global.fingerprint = fingerprint(pconf);
    if ((rc = check_option_uses(ptemp, s0)) != OK) {
        return rc;
    }
    for (s = s0; s; s = s->next) {
        if ((rc = resolve_server(pconf, ptemp, s, s0, create)) != OK) {
            return rc;
        }
    }
    for (i = 0; i < rs_global.sets->nelts; i++) {
        APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *)->slot = i;
    }
    return create ? make_state_dir(ptemp, s0) : OK;
}
