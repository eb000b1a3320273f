/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_fingerprint.c - the fingerprint of the configuration
 * that the access checks depend on.
 *
 * Inventory rows remember the fingerprint under which their access and
 * media type were decided (rs_scan_opts_t.cfg), and the open Change List's
 * ETag includes it.  A restart with a different fingerprint makes the
 * first scan decide every file again (digests are kept) and publish a new
 * Resource List generation: for 200,000 files that is many seconds of
 * work, so the fingerprint must not change for edits that cannot change
 * what the checks decide.
 *
 * The rule: every directive of the parsed configuration (ap_conftree),
 * with its arguments and its place in the section structure, is hashed,
 * EXCEPT the directives named in the table below.  Those cannot change an
 * access decision, a media type or a URL: logging, process and connection
 * tuning, server identification strings, response compression.  The list
 * is of directives known not to matter rather than of directives known to
 * matter, on purpose: a directive that is not in it (any module's, known
 * or not, and every section) is hashed, so an unknown directive costs a
 * re-check but never leaves a stale decision listed.  Excluded directives
 * are left out wherever they are, also inside sections.  Section nesting
 * is hashed (a mark on entering and leaving the children), so moving a
 * directive into or out of a section changes the fingerprint.
 *
 * ServerTokens, ServerAdmin, ServerName and Listen are visible to rules
 * as the variables SERVER_SOFTWARE, SERVER_ADMIN, SERVER_NAME,
 * SERVER_PORT and SERVER_ADDR (ap_expr in Require expr and <If>,
 * RewriteCond): when any directive's arguments name one of a directive's
 * variables, that directive is hashed too.  A rule in an .htaccess file that tests them
 * is not seen here (access files are followed by their own rows).
 *
 * Not excluded, although they look harmless: Header and RequestHeader
 * (RequestHeader can set a header that a Require expr or SetEnvIf then
 * tests), HostnameLookups (Require host), User and Group (whether the run
 * user can read a file), the SSL directives (SSLEngine makes URLs https,
 * SSLRequire and SSLVerifyClient decide access) except the certificate
 * and session ones listed below.
 */
#include <string.h>
#include <apr_md5.h>
#include <apr_strings.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_fingerprint.h"

/* Directives that never change an access decision, a media type or a
 * URL (compared without regard to case). */
static const char *const ignored[] = {
    /* logging */
    "LogLevel", "ErrorLog", "ErrorLogFormat", "CustomLog", "TransferLog", "LogFormat",
    "BufferedLogs", "GlobalLog", "LogIOTrackTTFB",
    /* identification strings */
    "ServerSignature",
    /* processes, connections, timeouts */
    "PidFile", "Timeout", "KeepAlive", "KeepAliveTimeout", "MaxKeepAliveRequests",
    "MaxRequestWorkers", "MaxClients", "StartServers", "MinSpareServers", "MaxSpareServers",
    "MinSpareThreads", "MaxSpareThreads", "ThreadsPerChild", "ThreadLimit", "ServerLimit",
    "ThreadStackSize", "MaxConnectionsPerChild", "MaxRequestsPerChild", "AsyncRequestWorkerFactor",
    "GracefulShutdownTimeout", "ListenBacklog", "SendBufferSize", "ReceiveBufferSize", "MaxMemFree",
    "RequestReadTimeout", "EnableMMAP", "EnableSendfile", "CoreDumpDirectory",
    /* mod_status, mod_info */
    "ExtendedStatus", "SeeRequestTail", "AddModuleInfo",
    /* mod_ssl: certificates and sessions, not access */
    "SSLCertificateFile", "SSLCertificateKeyFile", "SSLCertificateChainFile", "SSLSessionCache",
    "SSLSessionCacheTimeout", "SSLSessionTickets", "SSLUseStapling", "SSLStaplingCache",
    "SSLProtocol", "SSLHonorCipherOrder", "SSLCompression",
    /* discovery documents outside every set (a listed robots.txt is left
     * unchanged: mod_resourcesync_discovery.c) */
    "ResourceSyncRobots", "ResourceSyncHostMeta",
    /* rs:ln relations: decided by no check, followed by their own digest
     * per set (rs_set_t.links_fp), which re-resolves the links without
     * deciding or hashing a file again */
    "ResourceSyncLink", "ResourceSyncMirror",
    /* where the state is kept, this node's name and its process's own
     * files: nodes that share a store differ in them and must decide
     * alike; the failover and delivery timeouts decide nothing */
    "ResourceSyncStore", "ResourceSyncNodeName", "ResourceSyncStateDir", "DefaultRuntimeDir",
    "Mutex", "ResourceSyncFailover", "ResourceSyncNotifyTimeout", NULL
};

/* Prefixes of directive families that never matter (mod_deflate's
 * compression settings, DeflateAlterETag included: the lists carry no
 * ETag). */
static const char *const ignored_prefix[] = { "Deflate", NULL };

/* What an inventory row's decision holds (hashed first): a new item here
 * makes every file be decided again once. */
#define DECIDES "served, type, encoding"

/* Excluded unless a rule may test what they set: the variables of
 * ap_expr (Require expr, <If>, RewriteCond, SetEnvIfExpr) they show
 * through (identity_tested).  ServerName and Listen differ between the
 * nodes that share a store (each its own name and address), and decide
 * nothing else a scan decides. */
static const struct {
    const char *directive;
    const char *vars[3];
} identity[] = {
    { "ServerTokens", { "SERVER_SOFTWARE", NULL } },
    { "ServerAdmin", { "SERVER_ADMIN", NULL } },
    { "ServerName", { "SERVER_NAME", "SERVER_PORT", NULL } },
    { "Listen", { "SERVER_PORT", "SERVER_ADDR", NULL } },
};
#define N_IDENTITY (sizeof(identity) / sizeof(identity[0]))

/* Bit i set when the arguments of a directive in d name one of the
 * variables of identity[i]. */
static unsigned identity_tested(const ap_directive_t *d)
{
    unsigned tested = 0;
    apr_size_t i;
    int v;

    for (; d; d = d->next) {
        for (i = 0; d->args && i < N_IDENTITY; i++) {
            for (v = 0; identity[i].vars[v]; v++) {
                if (ap_strcasestr(d->args, identity[i].vars[v])) {
                    tested |= 1u << i;
                }
            }
        }
        tested |= identity_tested(d->first_child);
    }
    return tested;
}

static int is_ignored(const char *name, unsigned identity_counts)
{
    apr_size_t i;

    for (i = 0; i < N_IDENTITY; i++) {
        if (!strcasecmp(name, identity[i].directive)) {
            return !(identity_counts & (1u << i));
        }
    }
    for (i = 0; ignored[i]; i++) {
        if (!strcasecmp(name, ignored[i])) {
            return 1;
        }
    }
    for (i = 0; ignored_prefix[i]; i++) {
        if (!strncasecmp(name, ignored_prefix[i], strlen(ignored_prefix[i]))) {
            return 1;
        }
    }
    return 0;
}

/* Each directive as its name and arguments, NUL-terminated; children
 * between "\1" and "\2". */
static void fp_tree(apr_md5_ctx_t *ctx, const ap_directive_t *d, unsigned identity_counts)
{
    for (; d; d = d->next) {
        if (is_ignored(d->directive, identity_counts)) {
            continue;
        }
        apr_md5_update(ctx, d->directive, strlen(d->directive) + 1);
        if (d->args) {
            apr_md5_update(ctx, d->args, strlen(d->args) + 1);
        }
        if (d->first_child) {
            apr_md5_update(ctx, "\1", 1);
            fp_tree(ctx, d->first_child, identity_counts);
            apr_md5_update(ctx, "\2", 1);
        }
    }
}

const char *rs_fingerprint_compute(apr_pool_t *p, const ap_directive_t *tree)
{
    apr_md5_ctx_t ctx;
    unsigned char d[APR_MD5_DIGESTSIZE];
    char *hex = apr_palloc(p, 2 * APR_MD5_DIGESTSIZE + 1);
    int i;

    apr_md5_init(&ctx);
    /* What a decision records besides access: rows decided by a module
     * that kept only the media type (before the content coding was kept)
     * carry another fingerprint, so the first scan decides them again and
     * their encoding reaches the lists. */
    apr_md5_update(&ctx, DECIDES, sizeof(DECIDES));
    fp_tree(&ctx, tree, identity_tested(tree));
    apr_md5_final(d, &ctx);
    for (i = 0; i < APR_MD5_DIGESTSIZE; i++) {
        apr_snprintf(hex + 2 * i, 3, "%02x", d[i]);
    }
    return hex;
}
