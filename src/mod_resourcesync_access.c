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
 * listed.  The media type comes from the same request (without parameters).
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
 */
#include <string.h>
#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>
#include "mod_resourcesync.h"
#include "rs_uri.h"

struct rs_access_t {
    const rs_set_t *set;
    conn_rec *c;
    apr_pool_t *cpool;
    apr_array_header_t *access_files;   /* AccessFileName of the set's server */
};

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
    if (r->filename && strncmp(r->filename, want, strlen(want))
        && strcmp(r->filename, set->dir)) {
        err = apr_psprintf(p, "set %s: its URL-path %s maps to %s, not to %s (check the "
                           "second argument of ResourceSyncSet and Alias); nothing can be "
                           "listed", set->name, set->url_path, r->filename, want);
    }
    else if (status != OK && status != HTTP_UNAUTHORIZED && status != HTTP_FORBIDDEN) {
        err = apr_psprintf(p, "set %s: GET %s answers %d; nothing can be listed",
                           set->name, set->url_path, status);
    }
    apr_pool_destroy(r->pool);
    return err;
}

int rs_access_check(void *baton, apr_pool_t *p, const char *relpath, int is_dir,
                    const char **type)
{
    rs_access_t *a = baton;
    const rs_set_t *set = a->set;
    request_rec *r;
    const char *uri;
    int status, served;

    uri = apr_pstrcat(p, rs_uri_escape_path(p, set->url_path), rs_uri_escape_path(p, relpath),
                      is_dir ? "/" : "", NULL);
    r = run_request(a, uri, &status);
    served = (status == OK);
    if (served && !is_dir) {
        const char *full = apr_pstrcat(r->pool, set->dir, "/", relpath, NULL);
        served = r->filename && !strcmp(r->filename, full)
                 && (!r->handler || !strcmp(r->handler, "default-handler")
                     || (r->content_type && !strcmp(r->handler, r->content_type)));
        if (served && type) {
            *type = NULL;
            if (r->content_type) {
                const char *semi = strchr(r->content_type, ';');
                apr_size_t n = semi ? (apr_size_t)(semi - r->content_type)
                                    : strlen(r->content_type);
                while (n && r->content_type[n - 1] == ' ') {
                    n--;
                }
                *type = n ? apr_pstrndup(p, r->content_type, n) : NULL;
            }
        }
    }
    apr_pool_destroy(r->pool);
    return served;
}
