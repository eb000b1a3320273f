/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_access.c - "would an anonymous GET serve this file?"
 *
 * The watcher decides what may be listed by asking httpd itself: for each
 * new or changed file it builds an internal GET request for the file's URL
 * on a private connection record of the set's server and runs
 * ap_process_request_internal(): URL translation (Alias, DocumentRoot),
 * the <Directory>/<Location>/<Files> walks with .htaccess, authentication
 * and authorization (no credentials), and the type checker (mod_mime).
 * A file is listed only when that succeeds, maps back to the same file,
 * and leaves the response to the default handler - so a file that would be
 * denied, need a password, be redirected or run as a script is never
 * listed.  The media type (without parameters) and the content coding
 * come from the same request, as its response would send them in
 * Content-Type and Content-Encoding: mod_mime's AddType, AddEncoding and
 * TypesConfig, ForceType and the rest of the type checker and fixups
 * have run on it.
 *
 * The connection pretends to be a remote anonymous client: it comes from
 * 192.0.2.1 (TEST-NET-1, RFC 5737), neither loopback nor in any private
 * range, to a local address of another network, 198.51.100.1 (TEST-NET-2):
 * mod_authz_host's "Require local" admits a client whose address equals the
 * connection's local one.  Its reverse DNS lookup is recorded as done and
 * failed (remote_host "", double_reverse -1), so "Require host" never
 * admits it and no request waits for a DNS server.  "Require ip",
 * "forward-dns", "env" (SetEnvIf Remote_Addr ...) and "expr" on the remote
 * address see 192.0.2.1; no credentials are sent, so "Require user" and
 * "valid-user" answer 401, which is not listed.  Nothing is sent anywhere.
 * Logging of the internal requests is limited to alert and emergency
 * messages: denials, unreadable directories and access files (AH00529 is
 * logged at crit) are answers here, not faults, and the scanner logs what
 * it cannot read once per watcher life itself.
 *
 * Runs only in the watcher process; each rs_access_t (a connection record
 * with its own pool and allocator) is used by one thread at a time.
 *
 * Per directory: when the set's configuration cannot make two regular
 * files of one directory differ beyond their key (rs_uniform_key, see
 * mod_resourcesync_uniform.c), a file whose key was answered before in
 * the same directory gets that answer (served or not, media type and
 * content coding)
 * without a request.  The cache belongs to the checker and to one
 * directory, and lives as long as the pool of the first file it holds
 * (the scanner's pool of that directory's batch, rs_scan_check_fn): a
 * cleanup on that pool empties it, so no answer survives into another
 * batch, another directory or a later scan (an access file written
 * meanwhile is seen by the next batch).
 *
 * Across directories: directories to which the same <Directory> sections
 * apply (rs_uniform_dir_sig) and with no access file at or above them
 * have the same configuration, so an answer by key holds in all of them.
 * Those answers go to a second cache, keyed by signature and key, that
 * lives as long as the checker (the configuration cannot change in a
 * watcher's life) and is emptied when it reaches CACHE_SHARED_MAX
 * answers.  Whether a directory has an access file is still asked per
 * batch, so a directory that gets one goes per file at its next batch.
 * A section with a wildcard path gives no signature: the answers then
 * stay per directory.  A directory with an access file
 * (AccessFileName) in it or in any directory above it, up to /, and
 * symbolic links always get one request per file: an access file may hold
 * <Files> sections or rewrite rules, and a link is judged by its own
 * Options.  Directories get their own request, as before.
 *
 * Above the set's root: which directories' access files httpd reads
 * (AllowOverride, AllowOverrideList, per directory) is asked of httpd
 * itself, by a directory walk of the set's root on a checker's connection
 * during which the open_htaccess hook notes every directory httpd tries
 * an access file in (rs_access_above).  The watcher follows those
 * (mod_resourcesync_above.c); when one of their files changes, it empties
 * the answers shared between directories (rs_access_forget) before the
 * files are decided again, so no answer given while the old file was in
 * force outlives it.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_access.h"
#include "mod_resourcesync_uniform.h"
#include "rs_above.h"
#include "rs_scan.h"
#include "rs_uri.h"

struct rs_access_t {
    const rs_set_t *set;
    conn_rec *c;
    apr_pool_t *cpool;
    apr_array_header_t *access_files; /* AccessFileName of the set's server */
    /* The per-directory cache (see the top): bound to pool `bound` and
     * directory `dir` (relative), in cache_pool; dir_uniform when its
     * files may be answered by key. */
    apr_pool_t *cache_pool;
    apr_pool_t *bound;
    const char *dir;
    apr_hash_t *cache;
    int dir_uniform;
    int files, requests; /* of the bound directory */
    /* The bound directory's signature (rs_uniform_dir_sig), or NULL; the
     * answers shared between directories (see the top), in shared_pool. */
    const char *sig;
    apr_pool_t *shared_pool;
    apr_hash_t *shared;
    /* The last answer by a name key (rs_uniform_name_key) and its key:
     * files of a directory mostly come in runs of one extension.  NULL
     * when the cache is emptied. */
    struct answer_t *last;
    char last_key[64];
};

/* What the cache keeps of one answer. */
typedef struct answer_t {
    int served;
    rs_scan_media_t media;
} answer_t;

/* Answers kept at most in the cache shared between directories. */
#define CACHE_SHARED_MAX 4096

static struct ap_logconf quiet_log = { NULL, APLOG_ALERT };

#define RS_ACCESS_NOTE "resourcesync-access-check"

/* post_perdir_config: the directory walk may install a per-directory log
 * configuration (LogLevel in a section); keep the internal requests quiet
 * anyway. */
int rs_access_internal(const request_rec *r)
{
    return r->connection && r->connection->notes
           && apr_table_get(r->connection->notes, RS_ACCESS_NOTE);
}

int rs_access_post_perdir(request_rec *r)
{
    if (rs_access_internal(r)) {
        r->log = &quiet_log;
    }
    return OK;
}

/* map_to_storage, before core's directory walk: the walk logs at error
 * level when a path component cannot be searched (AH00035) or a link is
 * refused (AH00037), and requests reach it with the server's log level
 * rather than the configuration set on them - the internal request itself
 * (a link refused by SymLinksIfOwnerMatch) and mod_dir's sub-requests for
 * the DirectoryIndex names of an unreadable directory (one line per
 * name).  Put the quiet configuration back on every request of a
 * checker's connection just before the walk. */
int rs_access_map_to_storage(request_rec *r)
{
    rs_access_post_perdir(r);
    return DECLINED;
}

static conn_rec *make_conn(apr_pool_t *p, server_rec *s)
{
    conn_rec *c = apr_pcalloc(p, sizeof(*c));
    apr_sockaddr_t *sa = NULL, *la = NULL;

    c->pool = p;
    c->base_server = s;
    c->conn_config = ap_create_conn_config(p);
    c->notes = apr_table_make(p, 4);
    c->bucket_alloc = apr_bucket_alloc_create(p);
    apr_sockaddr_info_get(&sa, "192.0.2.1", APR_INET, 0, 0, p);
    c->client_addr = sa;
    c->client_ip = "192.0.2.1";
    apr_sockaddr_info_get(&la, "198.51.100.1", APR_INET, 0, 0, p);
    c->local_addr = la;
    c->local_ip = "198.51.100.1";
    c->local_host = s->server_hostname;
    /* Reverse lookup done, no name: see the comment at the top. */
    c->remote_host = "";
    c->double_reverse = -1;
    c->keepalive = AP_CONN_CLOSE;
    c->log = &quiet_log;
    c->id = 0;
    apr_table_setn(c->notes, RS_ACCESS_NOTE, "1");
    return c;
}

/* The names AccessFileName gives on server s (default ".htaccess"): the
 * per-directory configuration files the directory walk reads, whose
 * changes the scans follow.  A space-separated list, as
 * ap_parse_htaccess reads it. */
static apr_array_header_t *access_names(apr_pool_t *p, server_rec *s)
{
    core_server_config *conf = ap_get_core_module_config(s->module_config);
    const char *list = conf->access_name ? conf->access_name : ".htaccess";
    apr_array_header_t *names = apr_array_make(p, 2, sizeof(const char *));

    while (*list) {
        const char *name = ap_getword_conf(p, &list);
        if (*name) {
            APR_ARRAY_PUSH(names, const char *) = name;
        }
    }
    return names;
}

rs_access_t *rs_access_create(apr_pool_t *p, const rs_set_t *set)
{
    rs_access_t *a = apr_pcalloc(p, sizeof(*a));
    apr_allocator_t *alloc;

    a->set = set;
    /* Its own allocator: checkers of one set run on different threads, and
     * sibling pools would otherwise share the parent's allocator. */
    apr_allocator_create(&alloc);
    apr_allocator_max_free_set(alloc, 1024 * 1024);
    apr_pool_create_ex(&a->cpool, p, NULL, alloc);
    apr_allocator_owner_set(alloc, a->cpool);
    a->c = make_conn(a->cpool, set->s);
    a->access_files = access_names(a->cpool, set->s);
    apr_pool_create(&a->cache_pool, a->cpool);
    a->cache = apr_hash_make(a->cache_pool);
    apr_pool_create(&a->shared_pool, a->cpool);
    a->shared = apr_hash_make(a->shared_pool);
    return a;
}

const apr_array_header_t *rs_access_files(const rs_access_t *a)
{
    return a->access_files;
}

/* An anonymous internal GET of uri (already escaped) on the checker's
 * connection, run through httpd's request processing up to the handler.
 * The caller destroys r->pool. */
static request_rec *run_request(rs_access_t *a, const char *uri, int *status)
{
    const rs_set_t *set = a->set;
    request_rec *r = ap_create_request(a->c);

    r->request_time = apr_time_now();
    r->method = "GET";
    r->method_number = M_GET;
    r->protocol = "HTTP/1.1";
    r->proto_num = HTTP_VERSION(1, 1);
    r->hostname = set->s->server_hostname;
    r->the_request = apr_pstrcat(r->pool, "GET ", uri, " HTTP/1.1", NULL);
    r->log = &quiet_log;
    apr_table_setn(r->headers_in, "Host", set->s->server_hostname);
    apr_table_setn(r->headers_in, "User-Agent", "mod_resourcesync-watcher");
    ap_parse_uri(r, uri);
    *status = ap_process_request_internal(r);
    return r;
}

const char *rs_access_verify_root(rs_access_t *a, apr_pool_t *p)
{
    const rs_set_t *set = a->set;
    const char *err = NULL, *want = apr_pstrcat(p, set->dir, "/", NULL);
    int status;
    request_rec *r = run_request(a, rs_uri_escape_path(p, set->url_path), &status);

    /* mod_dir may already have mapped the directory to its index file. */
    if (r->filename && strncmp(r->filename, want, strlen(want)) && strcmp(r->filename, set->dir)) {
        err = apr_psprintf(p,
                           "set %s: its URL-path %s maps to %s, not to %s (check the "
                           "second argument of ResourceSyncSet and Alias); nothing can be "
                           "listed",
                           set->name, set->url_path, r->filename, want);
    }
    else if (status != OK && status != HTTP_UNAUTHORIZED && status != HTTP_FORBIDDEN) {
        err = apr_psprintf(p, "set %s: GET %s answers %d; nothing can be listed", set->name,
                           set->url_path, status);
    }
    apr_pool_destroy(r->pool);
    return err;
}

/* The media type of a Content-Type value (its parameters and the blanks
 * before them left out), from p; NULL for none. */
static const char *media_type(apr_pool_t *p, const char *ct)
{
    const char *semi;
    apr_size_t n;

    if (!ct) {
        return NULL;
    }
    semi = strchr(ct, ';');
    n = semi ? (apr_size_t)(semi - ct) : strlen(ct);
    while (n && ct[n - 1] == ' ') {
        n--;
    }
    return n ? apr_pstrndup(p, ct, n) : NULL;
}

/* One internal request for relpath: the answer today's access check
 * gives (see the top of the file), and for a served file what its
 * response would carry in Content-Type and Content-Encoding (media; the
 * default handler sends r->content_type and r->content_encoding as they
 * are when the handler runs, which is where this request stops). */
static int request_check(rs_access_t *a, apr_pool_t *p, const char *relpath, int is_dir,
                         rs_scan_media_t *media)
{
    const rs_set_t *set = a->set;
    request_rec *r;
    const char *uri;
    int status, served;

    a->requests += !is_dir;
    uri = apr_pstrcat(p, rs_uri_escape_path(p, set->url_path), rs_uri_escape_path(p, relpath),
                      is_dir ? "/" : "", NULL);
    r = run_request(a, uri, &status);
    served = (status == OK);
    if (served && !is_dir) {
        const char *full = apr_pstrcat(r->pool, set->dir, "/", relpath, NULL);
        served = r->filename && !strcmp(r->filename, full)
                 && (!r->handler || !strcmp(r->handler, "default-handler")
                     || (r->content_type && !strcmp(r->handler, r->content_type)));
        if (served && media) {
            /* ResourceSync 1.1 section 7: "The value of the encoding
             * attribute should be equal to the value of the
             * content-encoding header in the HTTP response"; type is "the
             * Media Type of a resource representation returned when the
             * URI in <loc> is dereferenced". */
            media->type = media_type(p, r->content_type);
            media->encoding = r->content_encoding && *r->content_encoding
                                  ? apr_pstrdup(p, r->content_encoding)
                                  : NULL;
        }
    }
    apr_pool_destroy(r->pool);
    return served;
}

/* 1 if directory path (absolute) or one above it, up to /, may hold an
 * access file: it exists, or cannot be looked at (then httpd may not be
 * able to either, and answers per file). */
static int access_file_above(const rs_access_t *a, apr_pool_t *p, const char *path)
{
    char *d = apr_pstrdup(p, path);
    int i;

    for (;;) {
        char *slash;
        for (i = 0; i < a->access_files->nelts; i++) {
            struct stat sb;
            const char *f = apr_pstrcat(p, *d ? d : "", "/",
                                        APR_ARRAY_IDX(a->access_files, i, const char *), NULL);
            if (stat(f, &sb) == 0 || errno != ENOENT) {
                return 1;
            }
        }
        if (!*d || !(slash = strrchr(d, '/'))) {
            return 0;
        }
        *slash = '\0';
    }
}

/* What rs_access_above's walk notes, through the checker connection's
 * slot of this module's connection config (set only during that walk). */
typedef struct above_note_t {
    apr_pool_t *p;
    apr_array_header_t *dirs; /* as httpd names them: "/srv/www/" */
} above_note_t;

apr_status_t rs_access_open_htaccess(request_rec *r, const char *dir_name, const char *access_name,
                                     ap_configfile_t **conffile, const char **full_name)
{
    above_note_t *n;

    if (rs_access_internal(r)
        && (n = ap_get_module_config(r->connection->conn_config, &resourcesync_module))) {
        /* Once per directory: httpd tries each AccessFileName in turn. */
        int last = n->dirs->nelts - 1;
        if (last < 0 || strcmp(APR_ARRAY_IDX(n->dirs, last, const char *), dir_name)) {
            APR_ARRAY_PUSH(n->dirs, const char *) = apr_pstrdup(n->p, dir_name);
        }
    }
    return AP_DECLINED;
}

/* dir as httpd names it in the walk ("/srv/www/", "/"), without the
 * trailing '/' but for "/" itself. */
static const char *walk_dir(apr_pool_t *p, const char *dir)
{
    apr_size_t n = strlen(dir);

    while (n > 1 && dir[n - 1] == '/') {
        n--;
    }
    return apr_pstrndup(p, dir, n);
}

apr_array_header_t *rs_access_above(rs_access_t *a, apr_pool_t *p, int *complete)
{
    const rs_set_t *set = a->set;
    apr_array_header_t *all = rs_above_dirs(p, set->dir), *out;
    above_note_t note;
    request_rec *r;
    int status, found, i, j;

    note.p = p;
    note.dirs = apr_array_make(p, 8, sizeof(const char *));
    ap_set_module_config(a->c->conn_config, &resourcesync_module, &note);
    r = ap_create_request(a->c);
    r->log = &quiet_log;
    r->method = "GET";
    r->method_number = M_GET;
    r->uri = apr_pstrdup(r->pool, set->url_path);
    r->filename = apr_pstrcat(r->pool, set->dir, "/", NULL);
    status = ap_directory_walk(r);
    found = r->finfo.filetype == APR_DIR;
    apr_pool_destroy(r->pool);
    ap_set_module_config(a->c->conn_config, &resourcesync_module, NULL);

    /* A walk that stopped on the way (a directory that cannot be
     * searched, an access file that cannot be read: everything answers
     * 403 then; a directory missing, as below a file system not mounted
     * yet) cannot tell about the directories after that point: follow
     * them all. */
    *complete = status == OK && found;
    if (!*complete) {
        return all;
    }
    out = apr_array_make(p, all->nelts, sizeof(const char *));
    for (i = 0; i < all->nelts; i++) {
        const char *d = APR_ARRAY_IDX(all, i, const char *);
        for (j = 0; j < note.dirs->nelts; j++) {
            if (!strcmp(walk_dir(p, APR_ARRAY_IDX(note.dirs, j, const char *)), d)) {
                APR_ARRAY_PUSH(out, const char *) = d;
                break;
            }
        }
    }
    return out;
}

void rs_access_forget(rs_access_t *a)
{
    apr_pool_clear(a->shared_pool);
    a->shared = apr_hash_make(a->shared_pool);
    a->last = NULL;
}

/* Empty the cache (the cleanup of the pool it is bound to). */
static apr_status_t cache_unbind(void *data)
{
    rs_access_t *a = data;

    if (a->files) {
        ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, a->set->s,
                     RS_TAG "set %s: access of "
                            "directory /%s decided %s: %d files, %d requests",
                     a->set->name, a->dir, a->dir_uniform ? "per directory" : "per file", a->files,
                     a->requests);
    }
    a->bound = NULL;
    a->dir = NULL;
    a->sig = NULL;
    a->last = NULL;
    a->files = a->requests = 0;
    apr_pool_clear(a->cache_pool);
    a->cache = apr_hash_make(a->cache_pool);
    return APR_SUCCESS;
}

/* Bind the cache to pool p and the directory of relpath, emptying it if
 * it held another's answers. */
static void cache_bind(rs_access_t *a, apr_pool_t *p, const char *relpath)
{
    const char *slash = strrchr(relpath, '/');
    apr_size_t n = slash ? (apr_size_t)(slash - relpath) : 0;

    if (a->bound == p && !strncmp(a->dir, relpath, n) && a->dir[n] == '\0') {
        return;
    }
    if (a->bound) {
        apr_pool_cleanup_kill(a->bound, a, cache_unbind);
        cache_unbind(a);
    }
    a->bound = p;
    apr_pool_cleanup_register(p, a, cache_unbind, apr_pool_cleanup_null);
    a->dir = apr_pstrndup(a->cache_pool, relpath, n);
    {
        const char *abs = *a->dir ? apr_pstrcat(p, a->set->dir, "/", a->dir, NULL) : a->set->dir;
        a->dir_uniform = a->set->uniform && !access_file_above(a, p, abs);
        a->sig = a->dir_uniform ? rs_uniform_dir_sig(a->set->uniform, a->cache_pool, abs) : NULL;
    }
}

/* An answer to keep in a cache, from pool cp. */
static answer_t *answer_make(apr_pool_t *cp, int served, const rs_scan_media_t *m)
{
    answer_t *ans = apr_palloc(cp, sizeof(*ans));

    ans->served = served;
    ans->media.type = m->type ? apr_pstrdup(cp, m->type) : NULL;
    ans->media.encoding = m->encoding ? apr_pstrdup(cp, m->encoding) : NULL;
    return ans;
}

/* A regular file of a uniform directory: by key.  Where the key is the
 * name's extensions alone, it is made without the file's path or URL, and
 * a run of names with one key takes the last answer. */
static int keyed_check(rs_access_t *a, apr_pool_t *p, const char *relpath, rs_scan_media_t *media)
{
    const rs_set_t *set = a->set;
    const char *base = strrchr(relpath, '/');
    char kbuf[sizeof(a->last_key)];
    const char *key;
    answer_t *ans;

    base = base ? base + 1 : relpath;
    if (rs_uniform_name_key(set->uniform, base, kbuf, sizeof(kbuf)) >= 0) {
        if (a->last && !strcmp(kbuf, a->last_key)) {
            ans = a->last;
            goto answered;
        }
        key = kbuf;
    }
    else {
        char *uri = apr_pstrcat(p, set->url_path, relpath, NULL);
        ap_no2slash(uri);
        key = rs_uniform_key(set->uniform, p, apr_pstrcat(p, set->dir, "/", relpath, NULL), uri);
    }
    if (a->sig) {
        /* across directories: the signature, then the key ('/' never
         * appears in a signature) */
        const char *skey = apr_pstrcat(p, a->sig, "/", key, NULL);
        ans = apr_hash_get(a->shared, skey, APR_HASH_KEY_STRING);
        if (!ans) {
            rs_scan_media_t m = { NULL, NULL };
            int served = request_check(a, p, relpath, 0, &m);
            if (apr_hash_count(a->shared) >= CACHE_SHARED_MAX) {
                apr_pool_clear(a->shared_pool);
                a->shared = apr_hash_make(a->shared_pool);
                a->last = NULL;
            }
            ans = answer_make(a->shared_pool, served, &m);
            apr_hash_set(a->shared, apr_pstrdup(a->shared_pool, skey), APR_HASH_KEY_STRING, ans);
        }
    }
    else if (!(ans = apr_hash_get(a->cache, key, APR_HASH_KEY_STRING))) {
        rs_scan_media_t m = { NULL, NULL };
        int served = request_check(a, p, relpath, 0, &m);
        ans = answer_make(a->cache_pool, served, &m);
        apr_hash_set(a->cache, apr_pstrdup(a->cache_pool, key), APR_HASH_KEY_STRING, ans);
    }
    if (key == kbuf) {
        a->last = ans;
        strcpy(a->last_key, kbuf); /* fits: both sizeof(a->last_key) */
    }
answered:
    if (ans->served && media) {
        media->type = ans->media.type ? apr_pstrdup(p, ans->media.type) : NULL;
        media->encoding = ans->media.encoding ? apr_pstrdup(p, ans->media.encoding) : NULL;
    }
    return ans->served;
}

int rs_access_check(void *baton, apr_pool_t *p, const char *relpath, int flags,
                    rs_scan_media_t *media)
{
    rs_access_t *a = baton;

    if (flags & RS_SCAN_CHECK_DIR) {
        return request_check(a, p, relpath, 1, media);
    }
    cache_bind(a, p, relpath);
    a->files++;
    if (a->dir_uniform && !(flags & RS_SCAN_CHECK_LINK)) {
        return keyed_check(a, p, relpath, media);
    }
    return request_check(a, p, relpath, 0, media);
}
