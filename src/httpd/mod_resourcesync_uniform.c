/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_uniform.c - when do files of one directory get the same
 * access answer?
 *
 * The access check (mod_resourcesync_access.c) runs one internal request
 * per file.  For most configurations httpd cannot answer differently for
 * two regular files of one directory unless they differ in what the
 * configuration looks at, and that is known here, once, at post_config:
 *
 *   (a) mod_mime's view of the name: find_ct splits the basename at '.',
 *       skips the first word and looks every further word up lower-cased
 *       (AddType, AddHandler, AddCharset, ... and TypesConfig); the key
 *       holds everything after the first '.' of the basename, lower-cased;
 *   (b) which <Files>/<FilesMatch> sections match the basename, with
 *       ap_file_walk's semantics (regex; apr_fnmatch with
 *       APR_FNM_PATHNAME; strcmp), for every such section of the server
 *       (top level, in <Directory> and <Location> sections);
 *   (c) which regex <Directory ~>/<DirectoryMatch> sections match the full
 *       file name (ap_directory_walk matches those against r->filename);
 *   (d) which <Location>/<LocationMatch> sections match the file's URI,
 *       with ap_location_walk's semantics (regex on r->uri; fnmatch, or a
 *       prefix ending at a '/', on the URI with slashes merged);
 *   (e) which URL-paths of Alias, ScriptAlias, Redirect* and ProxyPass
 *       inside the set's URL space match the URI (a prefix ending at a
 *       '/', as mod_alias's alias_matches and mod_proxy compare them).
 *
 * Two files of one directory with the same key (rs_uniform_key) get the
 * same answer and media type from httpd, unless something else looks at
 * the file's name or path.  Everything that could is excluded here, and
 * the set then runs one request per file (rs_set_t.uniform NULL, with the
 * reason in uniform_why):
 *
 *   - ResourceSyncAccessCheck per-file;
 *   - a module with a request hook that the access check runs
 *     (pre_translate_name, translate_name, map_to_storage,
 *     post_perdir_config, dirwalk_stat, header_parser, check_user_id,
 *     access_checker(_ex), force_authn, auth_checker, type_checker,
 *     fixups) that is not on the list below of modules known to decide by
 *     directory, section and extension only (mod_rewrite, mod_mime_magic,
 *     mod_include's XBitHack, mod_userdir, mod_lua, ... are not);
 *   - anywhere in the configuration: an <If>/<ElseIf> whose condition may
 *     read more than what is the same for every internal request (see
 *     if_constant: the query string, method, client, server names...),
 *     any Rewrite* directive, AliasMatch, ScriptAliasMatch, RedirectMatch,
 *     ProxyPassMatch, SetEnvIfExpr, SetEnvIf(NoCase) on Request_URI,
 *     XBitHack, MimeMagicFile, SSLRequire, a Require (or Reject) of a
 *     provider other than all, env, ip, host, forward-dns, local, method,
 *     user, valid-user, group (expr and file-owner look at the file),
 *     a URL-path of (e) with "//" in it;
 *   - a section regex with named groups (they set MATCH_* variables that
 *     a rule could test).
 *
 * What the configuration cannot show is decided at scan time by the
 * access check itself: a directory with an access file in it or in any
 * directory above it (up to /) is checked per file (its content may hold
 * <Files> or rewrite rules), and so are symbolic links (Options
 * FollowSymLinks / SymLinksIfOwnerMatch look at each link).
 *
 * The whole configuration tree is looked at for the directives, not only
 * the set's server: a rule in another virtual host only costs speed.
 */
#include <string.h>
#include <apr_fnmatch.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include <http_core.h>
#include <http_request.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_uniform.h"

struct rs_uniform_t {
    apr_array_header_t *files; /* core_dir_config * of <Files> sections */
    apr_array_header_t *dirre; /* core_dir_config * of regex <Directory> */
    apr_array_header_t *locs;  /* core_dir_config * of <Location> sections */
    apr_array_header_t *paths; /* const char *: URL-paths of (e) */
    int nbits;
    /* The <Directory> sections (plain and regex) in the order of the
     * server's list, for rs_uniform_dir_sig; dirwild: one of them has a
     * wildcard path (then a directory has no signature). */
    apr_array_header_t *dirs;
    int dirwild;
};

/* ------------------------------------------------------------- the hooks */

/* The fields of every ap_LINK_<hook>_t that are read here (as mod_info
 * reads them): the function pointer, then the registering module's name. */
typedef struct {
    void (*fn)(void);
    const char *name;
} hook_link_t;

typedef apr_array_header_t *hook_get_fn(void);

static const struct {
    const char *hook;
    hook_get_fn *get;
} hooks[] = { { "pre_translate_name", ap_hook_get_pre_translate_name },
              { "translate_name", ap_hook_get_translate_name },
              { "map_to_storage", ap_hook_get_map_to_storage },
              { "post_perdir_config", ap_hook_get_post_perdir_config },
              { "dirwalk_stat", ap_hook_get_dirwalk_stat },
              { "header_parser", ap_hook_get_header_parser },
              { "check_user_id", ap_hook_get_check_user_id },
              { "access_checker", ap_hook_get_access_checker },
              { "access_checker_ex", ap_hook_get_access_checker_ex },
              { "force_authn", ap_hook_get_force_authn },
              { "auth_checker", ap_hook_get_auth_checker },
              { "type_checker", ap_hook_get_type_checker },
              { "fixups", ap_hook_get_fixups },
              { NULL, NULL } };

/* Modules whose request hooks decide by directory, section, extension or
 * the (fixed) client only.  mod_alias and mod_proxy are here because
 * their rules are looked at below (conf_why). */
static const char *const known_modules[] = { "core.c",
                                             "http_core.c",
                                             "mod_so.c",
                                             "mod_watchdog.c",
                                             "mod_unixd.c",
                                             "mod_version.c",
                                             "mod_access_compat.c",
                                             "mod_auth_basic.c",
                                             "mod_auth_digest.c",
                                             "mod_alias.c",
                                             "mod_dir.c",
                                             "mod_mime.c",
                                             "mod_negotiation.c",
                                             "mod_setenvif.c",
                                             "mod_env.c",
                                             "mod_headers.c",
                                             "mod_expires.c",
                                             "mod_status.c",
                                             "mod_info.c",
                                             "mod_autoindex.c",
                                             "mod_log_config.c",
                                             "mod_logio.c",
                                             "mod_reqtimeout.c",
                                             "mod_filter.c",
                                             "mod_deflate.c",
                                             "mod_ssl.c",
                                             "mod_proxy.c",
                                             "mod_resourcesync.c",
                                             NULL };
static const char *const known_prefixes[] = { "mod_authz_", "mod_authn_", NULL };

static int module_known(const char *name)
{
    const char *base = name ? strrchr(name, '/') : NULL;
    int i;

    if (!name) {
        return 0;
    }
    base = base ? base + 1 : name;
    for (i = 0; known_modules[i]; i++) {
        if (!strcmp(base, known_modules[i])) {
            return 1;
        }
    }
    for (i = 0; known_prefixes[i]; i++) {
        if (!strncmp(base, known_prefixes[i], strlen(known_prefixes[i]))) {
            return 1;
        }
    }
    return 0;
}

/* Why a registered hook rules the fast path out, or NULL. */
static const char *hooks_why(apr_pool_t *p)
{
    int h, i;

    for (h = 0; hooks[h].hook; h++) {
        apr_array_header_t *links = hooks[h].get();
        for (i = 0; links && i < links->nelts; i++) {
            const hook_link_t *l =
                (const hook_link_t *)(links->elts + (apr_size_t)i * links->elt_size);
            if (!module_known(l->name)) {
                return apr_psprintf(p, "%s has a %s hook", l->name ? l->name : "a module",
                                    hooks[h].hook);
            }
        }
    }
    return NULL;
}

/* ------------------------------------------------------ the directives */

/* Directives that make the answer depend on more than the key, anywhere. */
static const char *const never[] = { "AliasMatch",     "ScriptAliasMatch", "RedirectMatch",
                                     "ProxyPassMatch", "SetEnvIfExpr",     "XBitHack",
                                     "MimeMagicFile",  "SSLRequire",       NULL };

/* Variables of ap_expr that are the same for every internal request of
 * the access check (one method, no query string, one client, one
 * server, no user): an <If> or <ElseIf> that reads only these, constants
 * and the operators below decides alike for every file. */
static const char *const constant_vars[] = { "QUERY_STRING",
                                             "REQUEST_METHOD",
                                             "REQUEST_SCHEME",
                                             "HTTPS",
                                             "IPV6",
                                             "REMOTE_ADDR",
                                             "REMOTE_HOST",
                                             "REMOTE_USER",
                                             "AUTH_TYPE",
                                             "SERVER_NAME",
                                             "SERVER_PORT",
                                             "SERVER_ADDR",
                                             "SERVER_PROTOCOL",
                                             "SERVER_SOFTWARE",
                                             "SERVER_ADMIN",
                                             "HTTP_HOST",
                                             "HTTP_USER_AGENT",
                                             "API_VERSION",
                                             NULL };

/* Operators (after '-') that compare strings or test the client; the
 * file tests (-d, -e, -f, -s, -L, -h, -F, -U, -A) and any other are not
 * allowed. */
static const char *const constant_ops[] = { "eq",        "ne",      "lt",      "le",
                                            "gt",        "ge",      "ipmatch", "strmatch",
                                            "strcmatch", "fnmatch", "in",      "n",
                                            "z",         "T",       "R",       NULL };

/* Require providers that decide from the (fixed) client, the method or
 * the (absent) user: the same for every file. */
static const char *const plain_providers[] = { "all",         "env",   "ip",     "host",
                                               "forward-dns", "local", "method", "user",
                                               "valid-user",  "group", NULL };

/* Directives whose URL-path arguments join the key (e). */
static const char *const path_directives[] = {
    "Alias", "ScriptAlias", "Redirect", "RedirectPermanent", "RedirectTemp", "ProxyPass", NULL
};

static int in_list(const char *const *list, const char *name)
{
    int i;

    for (i = 0; list[i]; i++) {
        if (!strcasecmp(list[i], name)) {
            return 1;
        }
    }
    return 0;
}

static const char *where(apr_pool_t *p, const ap_directive_t *d)
{
    return apr_psprintf(p, "%s %s (%s:%d)", d->directive, d->args ? d->args : "",
                        d->filename ? d->filename : "?", d->line_num);
}

/* 1 if URL-path a (without trailing '/') lies strictly inside url (the
 * set's URL-path, ending with '/'). */
static int path_inside(const char *a, const char *url)
{
    apr_size_t n = strlen(url) - 1, an = strlen(a);

    while (an > 1 && a[an - 1] == '/') {
        an--;
    }
    return an > n && !strncmp(a, url, n) && a[n] == '/';
}

/* The URL-path arguments (starting with '/') of a path directive that lie
 * inside the set's URL space are pushed on paths; NULL, or why the fast
 * path is off. */
static const char *path_args(apr_pool_t *p, const ap_directive_t *d, const char *url,
                             apr_array_header_t *paths)
{
    const char *args = d->args ? d->args : "";

    while (*args) {
        const char *w = ap_getword_conf(p, &args);
        if (w[0] != '/' || !path_inside(w, url)) {
            continue;
        }
        if (strstr(w, "//")) {
            return where(p, d);
        }
        APR_ARRAY_PUSH(paths, const char *) = w;
    }
    return NULL;
}

/* 1 if the <If>/<ElseIf> condition expr reads only constant_vars through
 * %{NAME}, uses only constant_ops, and calls no function: conservative,
 * a word in a string literal that looks like an operator or a call also
 * counts. */
static int if_constant(apr_pool_t *p, const char *expr)
{
    const char *c;

    for (c = expr; *c; c++) {
        if (c[0] == '%' && c[1] == '{') {
            const char *end = strchr(c, '}');
            if (!end
                || !in_list(constant_vars, apr_pstrndup(p, c + 2, (apr_size_t)(end - c - 2)))) {
                return 0;
            }
            c = end;
        }
        else if (*c == '-' && (c == expr || !apr_isalnum(c[-1])) && apr_isalpha(c[1])) {
            apr_size_t n = 1;
            while (apr_isalnum(c[n])) {
                n++;
            }
            if (!in_list(constant_ops, apr_pstrndup(p, c + 1, n - 1))) {
                return 0;
            }
            c += n - 1;
        }
        else if (*c == '(') {
            /* a function: file(), req (), env(), ...: a word before the
             * parenthesis, blanks between allowed */
            const char *b = c;
            while (b > expr && apr_isspace(b[-1])) {
                b--;
            }
            if (b > expr && (apr_isalnum(b[-1]) || b[-1] == '_')) {
                return 0;
            }
        }
    }
    return 1;
}

/* NULL if directive d cannot make files of one directory differ beyond
 * the key (pushing its URL-paths of (e) on paths), else why. */
static const char *directive_why(apr_pool_t *p, const ap_directive_t *d, const char *url,
                                 apr_array_header_t *paths)
{
    const char *name = d->directive, *args = d->args ? d->args : "";

    if (in_list(never, name) || !strncasecmp(name, "Rewrite", 7)) {
        return where(p, d);
    }
    if (!strcasecmp(name, "<If") || !strcasecmp(name, "<ElseIf")) {
        return if_constant(p, args) ? NULL : where(p, d);
    }
    if (!strcasecmp(name, "Require") || !strcasecmp(name, "Reject")) {
        const char *w = ap_getword_conf(p, &args);
        if (!strcasecmp(w, "not")) {
            w = ap_getword_conf(p, &args);
        }
        return in_list(plain_providers, w) ? NULL : where(p, d);
    }
    if (!strcasecmp(name, "SetEnvIf") || !strcasecmp(name, "SetEnvIfNoCase")) {
        return strcasecmp(ap_getword_conf(p, &args), "Request_URI") ? NULL : where(p, d);
    }
    if (in_list(path_directives, name)) {
        return path_args(p, d, url, paths);
    }
    return NULL;
}

static const char *conf_why(apr_pool_t *p, const ap_directive_t *d, const char *url,
                            apr_array_header_t *paths)
{
    const char *why;

    for (; d; d = d->next) {
        if ((why = directive_why(p, d, url, paths)) != NULL
            || (d->first_child && (why = conf_why(p, d->first_child, url, paths)) != NULL)) {
            return why;
        }
    }
    return NULL;
}

/* ---------------------------------------------------------- the sections */

/* Why section c rules the fast path out (named groups), or NULL. */
static const char *section_why(apr_pool_t *p, const core_dir_config *c)
{
    if (c->r && c->refs && c->refs->nelts) {
        return apr_psprintf(p, "named groups in the section regex '%s'", c->d ? c->d : "");
    }
    return NULL;
}

/* The <Files> sections inside section c and inside its <If> sections
 * (whose conditions conf_why found constant), pushed on files; NULL or
 * why not. */
static const char *add_files(apr_pool_t *p, const core_dir_config *c, apr_array_header_t *files)
{
    const char *why = section_why(p, c);
    int i;

    for (i = 0; !why && c->sec_file && i < c->sec_file->nelts; i++) {
        core_dir_config *f =
            ap_get_core_module_config(APR_ARRAY_IDX(c->sec_file, i, ap_conf_vector_t *));
        why = section_why(p, f);
        APR_ARRAY_PUSH(files, core_dir_config *) = f;
    }
    for (i = 0; !why && c->sec_if && i < c->sec_if->nelts; i++) {
        why = add_files(
            p, ap_get_core_module_config(APR_ARRAY_IDX(c->sec_if, i, ap_conf_vector_t *)), files);
    }
    return why;
}

/* Every section of server s: its top level, <Directory> and <Location>
 * sections and the <Files> sections in them. */
static const char *sections_why(apr_pool_t *p, server_rec *s, rs_uniform_t *u)
{
    core_server_config *sc = ap_get_core_module_config(s->module_config);
    const char *why = add_files(p, ap_get_core_module_config(s->lookup_defaults), u->files);
    int i;

    for (i = 0; !why && sc->sec_dir && i < sc->sec_dir->nelts; i++) {
        core_dir_config *c =
            ap_get_core_module_config(APR_ARRAY_IDX(sc->sec_dir, i, ap_conf_vector_t *));
        why = add_files(p, c, u->files);
        if (c->r) {
            APR_ARRAY_PUSH(u->dirre, core_dir_config *) = c;
        }
        else if (c->d_is_fnmatch || !c->d) {
            u->dirwild = 1;
        }
        APR_ARRAY_PUSH(u->dirs, core_dir_config *) = c;
    }
    for (i = 0; !why && sc->sec_url && i < sc->sec_url->nelts; i++) {
        core_dir_config *c =
            ap_get_core_module_config(APR_ARRAY_IDX(sc->sec_url, i, ap_conf_vector_t *));
        why = add_files(p, c, u->files);
        APR_ARRAY_PUSH(u->locs, core_dir_config *) = c;
    }
    return why;
}

void rs_uniform_resolve(apr_pool_t *pconf, server_rec *s, rs_set_t *set, int per_file)
{
    rs_uniform_t *u = apr_pcalloc(pconf, sizeof(*u));
    const char *why;

    set->uniform = NULL;
    u->files = apr_array_make(pconf, 4, sizeof(core_dir_config *));
    u->dirre = apr_array_make(pconf, 4, sizeof(core_dir_config *));
    u->locs = apr_array_make(pconf, 4, sizeof(core_dir_config *));
    u->paths = apr_array_make(pconf, 4, sizeof(const char *));
    u->dirs = apr_array_make(pconf, 8, sizeof(core_dir_config *));
    if (per_file) {
        why = "ResourceSyncAccessCheck per-file";
    }
    else if (!(why = hooks_why(pconf))
             && !(why = conf_why(pconf, ap_conftree, set->url_path, u->paths))) {
        why = sections_why(pconf, s, u);
    }
    set->uniform_why = why;
    if (!why) {
        u->nbits = u->files->nelts + u->dirre->nelts + u->locs->nelts + u->paths->nelts;
        set->uniform = u;
    }
}

/* ----------------------------------------------------------------- keys */

/* ap_file_walk's test of a <Files> section against the basename. */
static int files_match(const core_dir_config *c, const char *base)
{
    return c->r              ? !ap_regexec(c->r, base, 0, NULL, 0)
           : c->d_is_fnmatch ? apr_fnmatch(c->d, base, APR_FNM_PATHNAME) == APR_SUCCESS
                             : !strcmp(c->d, base);
}

/* A prefix test that ends at a '/' (ap_location_walk's string case). */
static int prefix_match(const char *d, const char *uri)
{
    apr_size_t len = strlen(d);

    return !strncmp(d, uri, len)
           && !(len > 0 && d[len - 1] != '/' && uri[len] != '/' && uri[len] != '\0');
}

/* ap_location_walk's test of a <Location> section (uri has no "//"). */
static int location_match(const core_dir_config *c, const char *uri)
{
    return c->r              ? !ap_regexec(c->r, uri, 0, NULL, 0)
           : c->d_is_fnmatch ? apr_fnmatch(c->d, uri, APR_FNM_PATHNAME) == APR_SUCCESS
                             : prefix_match(c->d, uri);
}

/* The extensions of base (everything after its first dot), lowercased,
 * into k; returns the end. */
static char *put_extensions(char *k, const char *dot)
{
    if (dot) {
        for (dot++; *dot; dot++) {
            *k++ = (char)apr_tolower(*dot);
        }
    }
    return k;
}

int rs_uniform_name_key(const rs_uniform_t *u, const char *base, char *buf, apr_size_t n)
{
    const char *dot = strchr(base, '.');
    apr_size_t extlen = dot ? strlen(dot + 1) : 0;
    char *k;

    if (u->nbits || extlen + 2 > n) {
        return -1;
    }
    k = put_extensions(buf, dot);
    *k++ = '/';
    *k = '\0';
    return (int)(k - buf);
}

const char *rs_uniform_key(const rs_uniform_t *u, apr_pool_t *p, const char *filename,
                           const char *uri)
{
    const char *base = strrchr(filename, '/'), *dot;
    char *key, *k;
    apr_size_t extlen;
    int i;

    base = base ? base + 1 : filename;
    dot = strchr(base, '.');
    extlen = dot ? strlen(dot + 1) : 0;
    key = apr_palloc(p, extlen + 2 + (apr_size_t)u->nbits);
    k = put_extensions(key, dot);
    *k++ = '/'; /* never in a name: ends the extensions */
    for (i = 0; i < u->files->nelts; i++) {
        *k++ = files_match(APR_ARRAY_IDX(u->files, i, core_dir_config *), base) ? '1' : '0';
    }
    for (i = 0; i < u->dirre->nelts; i++) {
        const core_dir_config *c = APR_ARRAY_IDX(u->dirre, i, core_dir_config *);
        *k++ = ap_regexec(c->r, filename, 0, NULL, 0) ? '0' : '1';
    }
    for (i = 0; i < u->locs->nelts; i++) {
        *k++ = location_match(APR_ARRAY_IDX(u->locs, i, core_dir_config *), uri) ? '1' : '0';
    }
    for (i = 0; i < u->paths->nelts; i++) {
        *k++ = prefix_match(APR_ARRAY_IDX(u->paths, i, const char *), uri) ? '1' : '0';
    }
    *k = '\0';
    return key;
}

const char *rs_uniform_dir_sig(const rs_uniform_t *u, apr_pool_t *p, const char *dir)
{
    /* ap_directory_walk's tests: a plain section's path (canonical, with
     * a trailing '/') is a prefix of the directory's path with its '/';
     * a regex section is tried on the directory's path, with and without
     * its '/' (both kept: a bit too many only splits the cache). */
    const char *slashed = apr_pstrcat(p, dir, "/", NULL);
    char *sig, *k;
    int i;

    if (u->dirwild) {
        return NULL;
    }
    k = sig = apr_palloc(p, 2 * (apr_size_t)u->dirs->nelts + 1);
    for (i = 0; i < u->dirs->nelts; i++) {
        const core_dir_config *c = APR_ARRAY_IDX(u->dirs, i, core_dir_config *);
        if (c->r) {
            *k++ = ap_regexec(c->r, dir, 0, NULL, 0) ? '0' : '1';
            *k++ = ap_regexec(c->r, slashed, 0, NULL, 0) ? '0' : '1';
        }
        else {
            *k++ = strncmp(c->d, slashed, strlen(c->d)) ? '0' : '1';
        }
    }
    *k = '\0';
    return sig;
}
