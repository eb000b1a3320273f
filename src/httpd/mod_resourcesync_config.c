/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_config.c - config records, merges and resolution.
 *
 * Lifecycle: pre_config resets rs_global (mod_resourcesync_global.c) for
 * the configuration pass about to be read (httpd reads it twice at
 * startup and once per restart).  The directives (the table in
 * mod_resourcesync_directives.c, the machinery in mod_resourcesync_cmd.c)
 * fill the records created here; each ResourceSyncSet creates an rs_set_t
 * in pconf, attached to the per-directory config of its <Directory>
 * section and registered both in its server's config and in
 * rs_global.sets, so the watcher knows every root.  Checks that need the
 * whole configuration (URL paths below DocumentRoot, the state directory,
 * set options in directory sections: rs_cmd_misplaced) and the resolution
 * of each set's options and URLs run in check_config and post_config
 * (rs_config_resolve).
 *
 * Every field has an unset sentinel (RS_UNSET or NULL) and the merges are
 * explicit: a set's options are its section's values over the server-level
 * values over the defaults.
 */
#include <string.h>
#include <apr_strings.h>
#include <http_core.h>
#include <http_main.h>
#include <util_cfgtree.h>
#include "mod_resourcesync_cmd.h"
#include "mod_resourcesync_fingerprint.h"
#include "mod_resourcesync_hubconf.h"
#include "mod_resourcesync_linkconf.h"
#include "mod_resourcesync_notifyconf.h"
#include "mod_resourcesync_os.h"
#include "mod_resourcesync_storeconf.h"
#include "mod_resourcesync_uniform.h"
#include "rs_capture.h"
#include "rs_statedir.h"
#include "rs_hash.h"
#include "rs_path.h"
#include "rs_uri.h"

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
    c->rdump = RS_UNSET;
    c->dump_entries = RS_UNSET;
    c->dump_size = RS_UNSET;
    c->dump_grace = RS_UNSET;
    c->cdump = RS_UNSET;
    c->notify = RS_UNSET;
    c->notify_delay = RS_UNSET;
    c->notify_retry = RS_UNSET;
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
    c->rdump = add->rdump != RS_UNSET ? add->rdump : base->rdump;
    c->dump_entries = add->dump_entries != RS_UNSET ? add->dump_entries : base->dump_entries;
    c->dump_size = add->dump_size != RS_UNSET ? add->dump_size : base->dump_size;
    c->dump_grace = add->dump_grace != RS_UNSET ? add->dump_grace : base->dump_grace;
    c->cdump = add->cdump != RS_UNSET ? add->cdump : base->cdump;
    c->notify = add->notify != RS_UNSET ? add->notify : base->notify;
    c->notify_delay = add->notify_delay != RS_UNSET ? add->notify_delay : base->notify_delay;
    if (add->notify_pub && base->notify_pub) {
        c->notify_pub = apr_array_append(p, base->notify_pub, add->notify_pub);
    }
    else {
        c->notify_pub = add->notify_pub ? add->notify_pub : base->notify_pub;
    }
    c->notify_retry = add->notify_retry != RS_UNSET ? add->notify_retry : base->notify_retry;
    /* only in a set's own section (mod_resourcesync_linkconf.c) */
    c->links = add->links ? add->links : base->links;
    return c;
}

void *rs_config_create_srv(apr_pool_t *p, server_rec *s)
{
    rs_srv_conf *c = apr_pcalloc(p, sizeof(*c));
    (void)s;
    c->sets = apr_array_make(p, 4, sizeof(rs_set_t *));
    c->access_check = RS_UNSET;
    c->robots = c->host_meta = RS_UNSET;
    rs_hubconf_init(c);
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
    c->sets = add->sets; /* sets belong to the server that declares them */
    c->access_check = add->access_check != RS_UNSET ? add->access_check : base->access_check;
    c->robots = add->robots != RS_UNSET ? add->robots : base->robots;
    c->host_meta = add->host_meta != RS_UNSET ? add->host_meta : base->host_meta;
    rs_hubconf_merge(c, base, add);
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
    /* Kept by httpd across restarts (ap_pglobal): set once a server
     * generation has really started (rs_config_started). */
    rs_global.restart = ap_retained_data_get(RS_STARTED_KEY) != NULL;
    rs_global.pconf = pconf;
    rs_global.rescan = RS_UNSET;
    rs_global.recent = RS_UNSET;
    rs_global.massdel_share = RS_UNSET;
    rs_global.large_file = RS_UNSET;
    rs_global.verify = RS_UNSET;
    rs_global.sets = apr_array_make(pconf, 8, sizeof(rs_set_t *));
    return OK;
}

void rs_config_started(void)
{
    if (!ap_retained_data_get(RS_STARTED_KEY)) {
        ap_retained_data_create(RS_STARTED_KEY, 1);
    }
}

/* ------------------------------------------------------------ post_config */

/* 1 if the directives in list d (and the conditional sections in it, but
 * not other virtual hosts) say "SSLEngine on". */
static int ssl_on_in(const ap_directive_t *d)
{
    for (; d; d = d->next) {
        if (!strcasecmp(d->directive, "SSLEngine") && d->args && !strcasecmp(d->args, "on")) {
            return 1;
        }
        if (d->first_child && strcasecmp(d->directive, "<VirtualHost")
            && ssl_on_in(d->first_child)) {
            return 1;
        }
    }
    return 0;
}

/* The <VirtualHost> section that defined s: httpd keeps its file and
 * line (defn_name, defn_line_number). */
static const ap_directive_t *vhost_section(const ap_directive_t *d, const server_rec *s)
{
    const ap_directive_t *found;

    for (; d; d = d->next) {
        if (!strcasecmp(d->directive, "<VirtualHost")
            && (unsigned)d->line_num == s->defn_line_number && d->filename && s->defn_name
            && !strcmp(d->filename, s->defn_name)) {
            return d;
        }
        if (d->first_child && (found = vhost_section(d->first_child, s))) {
            return found;
        }
    }
    return NULL;
}

/* 1 if mod_ssl serves s with TLS: "SSLEngine on" in its own section (its
 * <VirtualHost>, or the top level for the main server).  mod_ssl keeps
 * that in a private record, so the parsed configuration is read. */
static int ssl_engine_on(const server_rec *s, const server_rec *s0)
{
    const ap_directive_t *v;

    if (!ap_find_linked_module("mod_ssl.c")) {
        return 0;
    }
    if (s == s0) {
        return ssl_on_in(ap_conftree);
    }
    v = vhost_section(ap_conftree, s);
    return v ? ssl_on_in(v->first_child) : 0;
}

/* scheme://host[:port] of a server's absolute URLs: ResourceSyncBaseURL,
 * else from its ServerName (scheme and port), the port left out when it is
 * the scheme's default.  Without a scheme in ServerName, "SSLEngine on" in
 * the server's section or port 443 means https. */
static const char *canonical_base(apr_pool_t *p, server_rec *s, server_rec *s0,
                                  const rs_srv_conf *sc)
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
        /* Without "ServerName https://...": mod_ssl on, or port 443. */
        scheme = port == 443 || ssl_engine_on(s, s0) ? "https" : "http";
    }
    if (!port) {
        port = strcasecmp(scheme, "https") ? 80 : 443;
    }
    dflt = (port == 80 && !strcasecmp(scheme, "http"))
           || (port == 443 && !strcasecmp(scheme, "https"));
    return dflt ? apr_psprintf(p, "%s://%s", scheme, s->server_hostname)
                : apr_psprintf(p, "%s://%s:%u", scheme, s->server_hostname, port);
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
    if (rs_global.massdel_share == RS_UNSET) {
        rs_global.massdel_share = RS_DEFAULT_MASSDEL_SHARE;
        rs_global.massdel_min = RS_DEFAULT_MASSDEL_MIN;
    }
    if (rs_global.large_file == RS_UNSET) {
        rs_global.large_file = (apr_int64_t)RS_DEFAULT_LARGE << 20;
    }
    if (rs_global.verify == RS_UNSET) {
        rs_global.verify = RS_DEFAULT_VERIFY;
    }
    rs_global.config_time = apr_time_sec(apr_time_now()) * APR_USEC_PER_SEC;
}

/* DocumentRoot of s without a trailing "/": its own, else the main
 * server's (s0); NULL if neither has one. */
static const char *server_docroot(apr_pool_t *ptemp, server_rec *s, server_rec *s0)
{
    core_server_config *core = ap_get_core_module_config(s->module_config);

    if (!core->ap_document_root && s != s0) {
        core = ap_get_core_module_config(s0->module_config);
    }
    return core->ap_document_root ? rs_path_strip_slash(ptemp, core->ap_document_root) : NULL;
}

/* set->url_path: the second argument of ResourceSyncSet, else the set's
 * directory relative to DocumentRoot; always ending with "/". */
static int resolve_url_path(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s, rs_set_t *set,
                            const char *docroot)
{
    if (set->url_arg) {
        set->url_path = set->url_arg;
    }
    else if (docroot && rs_path_within(set->dir, docroot)) {
        set->url_path = set->dir + (strcmp(docroot, "/") ? strlen(docroot) : 0);
        if (!*set->url_path) {
            set->url_path = "/";
        }
    }
    else {
        return fatal(s,
                     apr_psprintf(ptemp,
                                  "ResourceSyncSet %s: directory '%s' is "
                                  "not below DocumentRoot '%s'; give its URL-path "
                                  "as the second argument (%s)",
                                  set->name, set->dir, docroot ? docroot : "(none)", set->where));
    }
    if (strcmp(set->url_path, "/")) {
        set->url_path = apr_pstrcat(pconf, set->url_path, "/", NULL);
    }
    return OK;
}

/* The documents' URLs must not hide the set's files: its URL-path may be
 * neither inside the prefix nor cover the well-known URI. */
static int check_url_path(apr_pool_t *ptemp, server_rec *s, const rs_set_t *set, const char *prefix)
{
    apr_size_t n = strlen(prefix);

    if (!strncmp(set->url_path, prefix, n) && (set->url_path[n] == '/' || !set->url_path[n])) {
        return fatal(s, apr_psprintf(ptemp,
                                     "ResourceSyncSet %s: its URL-path '%s' is "
                                     "inside ResourceSyncPrefix '%s' (%s)",
                                     set->name, set->url_path, prefix, set->where));
    }
    if (!strncmp(RS_WELL_KNOWN, set->url_path, strlen(set->url_path))
        && strcmp(set->url_path, "/")) {
        return fatal(s, apr_psprintf(ptemp,
                                     "ResourceSyncSet %s: its URL-path '%s' "
                                     "covers %s (%s)",
                                     set->name, set->url_path, RS_WELL_KNOWN, set->where));
    }
    return OK;
}

/* A set's effective options: its section's values over the server-level
 * values (defaults) over the built-in defaults.  Returns the merged
 * configuration (what was given). */
static const rs_dir_conf *resolve_set_options(apr_pool_t *pconf, rs_set_t *set,
                                              rs_dir_conf *defaults)
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
    set->rdump = eff->rdump == RS_UNSET ? 0 : eff->rdump;
    /* A package's manifest lists every file it holds: a document, so no
     * more than ResourceSyncMaxEntries by default (ResourceSync 1.1
     * section 7). */
    set->dump_entries = eff->dump_entries != RS_UNSET                ? eff->dump_entries
                        : RS_DEFAULT_DUMP_ENTRIES < set->max_entries ? RS_DEFAULT_DUMP_ENTRIES
                                                                     : set->max_entries;
    set->dump_size = eff->dump_size == RS_UNSET ? (apr_int64_t)RS_DEFAULT_DUMP_SIZE << 20
                                                : eff->dump_size;
    set->dump_grace = eff->dump_grace == RS_UNSET ? RS_DEFAULT_DUMP_GRACE : eff->dump_grace;
    set->cdump = eff->cdump == 1;
    set->digests = set->hashes | (set->cdump ? RS_CAPTURE_HASH : 0);
    set->notify = eff->notify == 1;
    set->notify_delay = eff->notify_delay == RS_UNSET ? RS_DEFAULT_NOTIFY_DELAY : eff->notify_delay;
    set->notify_pub = eff->notify_pub;
    set->notify_retry = eff->notify_retry;
    return eff;
}

/* A set's absolute URLs (from its server's canonical base) and its
 * directories in the state directory. */
static void resolve_set_urls(apr_pool_t *pconf, rs_set_t *set, const rs_srv_conf *sc,
                             const char *prefix)
{
    set->root_url =
        apr_pstrcat(pconf, sc->canonical, rs_uri_escape_path(pconf, set->url_path), NULL);
    set->doc_base = apr_pstrcat(pconf, sc->canonical, prefix, "/", set->name, "/", NULL);
    set->base = apr_pstrcat(pconf, set->root_url, " ", set->doc_base, NULL);
    set->capability_url = apr_pstrcat(pconf, set->doc_base, "capabilitylist.xml", NULL);
    set->list_url = apr_pstrcat(pconf, set->doc_base, "resourcelist.xml", NULL);
    set->snap_dir = rs_statedir_snapset(pconf, rs_global.state_dir, set->name);
    set->cl_dir = rs_statedir_clset(pconf, rs_global.state_dir, set->name);
    set->rdump_dir = rs_statedir_dumpset(pconf, rs_global.state_dir, set->name);
    set->capture_dir = rs_statedir_captureset(pconf, rs_global.state_dir, set->name);
    set->cdump_dir = rs_statedir_cdumpset(pconf, rs_global.state_dir, set->name);
    set->cl_index_url = apr_pstrcat(pconf, set->doc_base, "changelist.xml", NULL);
    set->notify_dir = rs_statedir_notifyset(pconf, rs_global.state_dir, set->name);
}

/* The state directory must never be served: not inside a set's directory
 * (a set outside DocumentRoot is served through its URL-path). */
static int check_state_outside_set(apr_pool_t *ptemp, server_rec *s, const rs_set_t *set)
{
    if (rs_path_within(rs_global.state_dir, set->dir)) {
        return fatal(s, apr_psprintf(ptemp,
                                     "ResourceSyncStateDir '%s' is inside "
                                     "set '%s' (%s): the state must never be served",
                                     rs_global.state_dir, set->name, set->dir));
    }
    return OK;
}

/* Whether the set's access checks may run per directory (said once per
 * start). */
static void resolve_set_access(apr_pool_t *pconf, server_rec *s, const rs_srv_conf *sc,
                               rs_set_t *set)
{
    rs_uniform_resolve(pconf, s, set, sc->access_check == RS_ACCESS_PER_FILE);
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG) {
        return;
    }
    if (set->uniform) {
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, s,
                     RS_TAG "set %s: access decided per "
                            "directory",
                     set->name);
    }
    else {
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, s,
                     RS_TAG "set %s: access decided per file: "
                            "%s",
                     set->name, set->uniform_why);
    }
}

/* One set of server s: its URL-path and the checks on it (and on the
 * hubs of its section); with create,
 * also its options and URLs, and the state directory check. */
static int resolve_set(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s, rs_set_t *set,
                       const char *docroot, int create)
{
    rs_srv_conf *sc = ap_get_module_config(s->module_config, &resourcesync_module);
    const char *prefix = rs_config_prefix(sc);
    const rs_dir_conf *eff;
    const char *msg;
    int rc;

    if ((rc = resolve_url_path(pconf, ptemp, s, set, docroot)) != OK
        || (rc = check_url_path(ptemp, s, set, prefix)) != OK) {
        return rc;
    }
    if ((msg = rs_notifyconf_check_set(ptemp, set))) {
        return fatal(s, msg);
    }
    if (!create) {
        return OK;
    }
    eff = resolve_set_options(pconf, set,
                              ap_get_module_config(s->lookup_defaults, &resourcesync_module));
    if (eff->dump_entries != RS_UNSET && eff->dump_entries > set->max_entries) {
        /* Every document within ResourceSyncMaxEntries (ResourceSync 1.1
         * section 7): a package's manifest is one. */
        return fatal(s, apr_psprintf(ptemp,
                                     "ResourceSyncDumpMaxEntries %" APR_INT64_T_FMT
                                     " (set %s, %s): more than ResourceSyncMaxEntries %d, "
                                     "the entries of a document; a package's manifest "
                                     "lists every file it holds",
                                     eff->dump_entries, set->name, set->where, set->max_entries));
    }
    resolve_set_urls(pconf, set, sc, prefix);
    rs_linkconf_resolve(pconf, set);
    rs_notifyconf_resolve(pconf, set, prefix);
    resolve_set_access(pconf, s, sc, set);
    if (set->cdump && !set->hashes) {
        /* Captured bytes are read by the hashing, which this turns off. */
        return fatal(s, apr_psprintf(ptemp,
                                     "ResourceSyncChangeDump on (set %s, %s): needs a "
                                     "digest, but the set has ResourceSyncHash none",
                                     set->name, set->where));
    }
    if (set->notify && set->notify_hubs->nelts == 0) {
        /* A topic must name its hub (Change Notification 4.1). */
        return fatal(s, apr_psprintf(ptemp,
                                     "ResourceSyncNotify on (set %s, %s): needs a hub, "
                                     "but neither ResourceSyncHub on nor ResourceSyncNotifyHub "
                                     "names one",
                                     set->name, set->where));
    }
    return check_state_outside_set(ptemp, s, set);
}

/* One server: its canonical base URL (with create), the state directory
 * outside its DocumentRoot, then each of its sets in declaration order;
 * with create, the warning about hubs none of its sets publishes to. */
static int resolve_server(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s, server_rec *s0,
                          int create)
{
    rs_srv_conf *sc = ap_get_module_config(s->module_config, &resourcesync_module);
    const char *docroot = server_docroot(ptemp, s, s0);
    int i, rc;

    if (create) {
        sc->canonical = canonical_base(pconf, s, s0, sc);
    }
    if (docroot && rs_path_within(rs_global.state_dir, docroot)) {
        return fatal(s, apr_psprintf(ptemp,
                                     "ResourceSyncStateDir '%s' is inside "
                                     "DocumentRoot '%s': the state must never be served",
                                     rs_global.state_dir, docroot));
    }
    for (i = 0; i < sc->sets->nelts; i++) {
        rc = resolve_set(pconf, ptemp, s, APR_ARRAY_IDX(sc->sets, i, rs_set_t *), docroot, create);
        if (rc != OK) {
            return rc;
        }
    }
    if (create) {
        rs_notifyconf_warn_unpublished(s);
        rs_notifyconf_warn_ping(s);
    }
    return OK;
}

/* The state directory.  check_config (create == 0): could it be created
 * and written?  `httpd -t` must not create it, so this only looks.
 * post_config (create == 1): create it and give it to the run user.  At
 * the first start a failure stops httpd.  On a restart it must not: every
 * site would go down (httpd exits when post_config fails) for want of a
 * directory only the watcher writes.  The restart then logs it once, from
 * post_config, and goes on without a watcher (rs_global.state_unusable):
 * children keep serving what the directory holds. */
static int resolve_state_dir(apr_pool_t *ptemp, server_rec *s0, int create)
{
    const char *why;

    if (!create) {
        why = rs_global.restart ? NULL : rs_os_statedir_check(ptemp, rs_global.state_dir);
        return why ? fatal(s0, apr_psprintf(ptemp, "ResourceSyncStateDir: %s", why)) : OK;
    }
    if (rs_global.state_dir_arg && rs_global.state_dir_arg[0] != '/'
        && ap_state_query(AP_SQ_MAIN_STATE) != AP_SQ_MS_CREATE_PRE_CONFIG) {
        /* Like every path of httpd's configuration; said once per start so
         * that nobody has to guess where the state went. */
        ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, s0,
                     RS_TAG "ResourceSyncStateDir '%s' is "
                            "relative: using '%s' (relative to ServerRoot)",
                     rs_global.state_dir_arg, rs_global.state_dir);
    }
    why = rs_os_statedir_make(ptemp, rs_global.state_dir);
    if (!why) {
        return OK;
    }
    if (!rs_global.restart) {
        return fatal(s0, apr_psprintf(ptemp, "ResourceSyncStateDir: %s", why));
    }
    if (ap_state_query(AP_SQ_MAIN_STATE) != AP_SQ_MS_CREATE_PRE_CONFIG) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s0,
                     RS_TAG "ResourceSyncStateDir: %s; "
                            "changes are not followed until a restart finds it usable, the "
                            "documents it holds are still served",
                     why);
    }
    rs_global.state_unusable = 1;
    return OK;
}

/* The steps run in this order, and the first failing check stops startup
 * with its message: a check_config pass (create == 0) and the post_config
 * pass (create == 1) report the same errors, but only the latter resolves
 * options and URLs, checks the state directory against the sets'
 * directories and creates it (the former only checks that it could). */
int rs_config_resolve(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s0, int create)
{
    server_rec *s;
    const char *msg;
    int i, rc;

    resolve_globals();
    if (!rs_global.sets->nelts) {
        return OK;
    }
    if (!rs_global.state_dir) {
        return fatal(s0,
                     "ResourceSyncStateDir is not set: it is required when "
                     "ResourceSyncSet is used (e.g. ResourceSyncStateDir /var/lib/resourcesync)");
    }
    /* The store; set options in directory sections, each in a set's. */
    if ((msg = rs_storeconf_resolve(pconf, ptemp)) || (msg = rs_cmd_misplaced(ptemp))) {
        return fatal(s0, msg);
    }
    rs_global.fingerprint = rs_fingerprint_compute(pconf, ap_conftree);
    for (s = s0; s; s = s->next) {
        if ((rc = resolve_server(pconf, ptemp, s, s0, create)) != OK) {
            return rc;
        }
    }
    for (i = 0; i < rs_global.sets->nelts; i++) {
        APR_ARRAY_IDX(rs_global.sets, i, rs_set_t *)->slot = i;
    }
    return resolve_state_dir(ptemp, s0, create);
}

const rs_set_t *rs_config_find_set(const char *name)
{
    int i;
    for (i = 0; rs_global.sets && i < rs_global.sets->nelts; i++) {
        const rs_set_t *set = APR_ARRAY_IDX(rs_global.sets, i, const rs_set_t *);
        if (!strcmp(set->name, name)) {
            return set;
        }
    }
    return NULL;
}
