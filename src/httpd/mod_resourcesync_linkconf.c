/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_linkconf.c - ResourceSyncLink and ResourceSyncMirror:
 * the rules of a set's rs:ln relations (rs_links.h) from the
 * configuration.
 *
 * Both directives stand only in the <Directory> section that holds
 * ResourceSyncSet (their patterns and paths are the set's): scope
 * RS_SET_ONLY, whose context check refuses them at server level and in
 * <Location> and <Files>, and whose record of uses in directory sections
 * refuses any other section (rs_cmd_misplaced).  Each appends to the one
 * rs_links_t of its section (created at the first, in the configuration
 * pool), so the rules keep the order they are written in, links and
 * mirrors interleaved.  Every value is checked while the configuration is read,
 * the message naming the directive and the value: httpd refuses to start,
 * `apachectl -t` says it.
 *
 * PATTERN is compiled by ap_regcomp, as httpd's own *Match directives
 * (PCRE, extended syntax, RegexDefaultOptions applied), and freed with the
 * configuration pool.  The engine matches through match_path, which only
 * reads the compiled pattern: the rules are read-only once the
 * configuration is read and shared by every process forked after it (the
 * watcher's threads among them; ap_regexec keeps its match data per call
 * or per thread).
 *
 * The rules are not part of the configuration fingerprint (they decide no
 * access, media type or URL: mod_resourcesync_fingerprint.c leaves them
 * out); their own digest, rs_set_t.links_fp, tells the watcher that they
 * changed, which re-resolves the links without deciding a file again.
 * Mirrors are stored nowhere (the entry renderer writes them from the
 * rules): their digest, rs_set_t.mirrors_fp, makes every document that
 * carries them be written again.
 */
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync_linkconf.h"
#include "rs_hash.h"

/* The options after the fixed arguments. */
#define OPT_TYPE      0x1
#define OPT_PRI       0x2
#define OPT_IF_EXISTS 0x4

typedef struct link_opts_t {
    const char *type; /* NULL: none */
    int pri;          /* 0: none */
    int if_exists;
} link_opts_t;

/* rs_links_match_fn over an ap_regex_t: the offsets of the whole match and
 * of the groups ($1..$9 at most: groups past AP_MAX_REG_MATCH - 1 cannot
 * be named by a target and are reported as not taking part). */
static int match_path(void *re, const char *path, int nmatch, rs_links_span_t *m)
{
    ap_regmatch_t pm[AP_MAX_REG_MATCH];
    int n = nmatch < AP_MAX_REG_MATCH ? nmatch : AP_MAX_REG_MATCH, i;

    if (ap_regexec(re, path, (apr_size_t)n, pm, 0)) {
        return 0;
    }
    for (i = 0; i < nmatch; i++) {
        m[i].so = i < n ? pm[i].rm_so : -1;
        m[i].eo = i < n ? pm[i].rm_eo : -1;
    }
    return 1;
}

static apr_status_t free_regex(void *re)
{
    ap_regfree(re);
    return APR_SUCCESS;
}

/* PATTERN compiled into *out (freed with the pool), or the error with
 * PCRE's reason. */
static const char *compile(cmd_parms *cmd, const char *pattern, ap_regex_t **out)
{
    ap_regex_t *re = apr_pcalloc(cmd->pool, sizeof(*re));
    char why[256];
    apr_size_t n;
    int rc = ap_regcomp(re, pattern, AP_REG_EXTENDED);

    if (rc) {
        ap_regerror(rc, re, why, sizeof(why));
        /* ("at offset N" comes padded with spaces) */
        for (n = strlen(why); n && why[n - 1] == ' '; n--) {
            why[n - 1] = '\0';
        }
        return apr_psprintf(cmd->pool, "%s: '%s' is not a valid regular expression (%s)",
                            cmd->cmd->name, pattern, why);
    }
    apr_pool_cleanup_register(cmd->pool, re, free_regex, apr_pool_cleanup_null);
    *out = re;
    return NULL;
}

/* One option into o, if allowed (a mask of OPT_*).  Returns NULL or the
 * error naming the directive and the argument. */
static const char *option(cmd_parms *cmd, const char *arg, int allowed, int *seen, link_opts_t *o)
{
    static const rs_confval_t pri = { RS_NUMBER(1, 999999, "") };
    const char *name = cmd->cmd->name, *err;
    apr_int64_t v;
    int which = !strncasecmp(arg, "type=", 5)   ? OPT_TYPE
                : !strncasecmp(arg, "pri=", 4)  ? OPT_PRI
                : !strcasecmp(arg, "if-exists") ? OPT_IF_EXISTS
                                                : 0;

    if (!(which & allowed)) {
        return apr_psprintf(cmd->pool, "%s: unknown option '%s' (%s)", name, arg,
                            allowed & OPT_TYPE ? "type=MEDIA, pri=N or if-exists" : "pri=N");
    }
    if (*seen & which) {
        return apr_psprintf(cmd->pool, "%s: '%s' repeats an option given before", name, arg);
    }
    *seen |= which;
    if (which == OPT_TYPE) {
        o->type = arg + 5; /* checked by rs_links_add */
    }
    else if (which == OPT_PRI) {
        if ((err = rs_confval_parse(cmd->pool, apr_pstrcat(cmd->pool, name, " pri", NULL), &pri,
                                    arg + 4, &v))) {
            return err;
        }
        o->pri = (int)v;
    }
    else {
        o->if_exists = 1;
    }
    return NULL;
}

static const char *options(cmd_parms *cmd, int argc, const char *const argv[], int first,
                           int allowed, link_opts_t *o)
{
    const char *err;
    int i, seen = 0;

    memset(o, 0, sizeof(*o));
    for (i = first; i < argc; i++) {
        if ((err = option(cmd, argv[i], allowed, &seen, o))) {
            return err;
        }
    }
    return NULL;
}

/* The section's rules, created at the first. */
static rs_links_t *rules(cmd_parms *cmd, rs_dir_conf *dc)
{
    if (!dc->links) {
        dc->links = rs_links_create(cmd->pool, match_path);
    }
    return dc->links;
}

const char *rs_linkconf_set_link(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                 const char *const argv[])
{
    const char *name = cmd->cmd->name, *err;
    rs_links_t *l = rules(cmd, conf);
    ap_regex_t *re;
    link_opts_t o;

    (void)d;
    if (argc < 3) {
        return apr_pstrcat(cmd->pool, name,
                           " takes REL PATTERN TARGET [type=MEDIA] [pri=N] [if-exists]", NULL);
    }
    if ((err = rs_links_rel_check(cmd->pool, argv[0]))) {
        return apr_psprintf(cmd->pool, "%s: %s", name, err);
    }
    if ((err = compile(cmd, argv[1], &re))
        || (err = options(cmd, argc, argv, 3, OPT_TYPE | OPT_PRI | OPT_IF_EXISTS, &o))) {
        return err;
    }
    err = rs_links_add(l, cmd->pool, argv[0], re, re->re_nsub, argv[1], argv[2], o.type, o.pri,
                       o.if_exists);
    return err ? apr_psprintf(cmd->pool, "%s: %s", name, err) : NULL;
}

const char *rs_linkconf_set_mirror(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                                   const char *const argv[])
{
    const char *err;
    rs_links_t *l = rules(cmd, conf);
    link_opts_t o;

    (void)d;
    if ((err = options(cmd, argc, argv, 1, OPT_PRI, &o))) {
        return err;
    }
    err = rs_links_add_mirror(l, cmd->pool, argv[0], o.pri);
    return err ? apr_psprintf(cmd->pool, "%s: %s", cmd->cmd->name, err) : NULL;
}

/* The version of what rows store as their links: a new one makes every
 * set with ResourceSyncLink rules resolve its rows again once (links_fp
 * changes).  Version 2: mirrors are rendered from the configuration, not
 * stored (rows of version 1 stored them too). */
#define STORED_FORM "links-2"

/* Hex SHA-256 of text, in pconf. */
static const char *digest(apr_pool_t *pconf, const char *text)
{
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    rs_hash_buf(text, strlen(text), RS_HASH_SHA256, hex);
    return apr_pstrdup(pconf, hex[2]); /* bit 0x4, sha-256: index 2 */
}

void rs_linkconf_resolve(apr_pool_t *pconf, rs_set_t *set)
{
    const rs_links_t *l = set->section->links;
    int nmirrors;

    rs_links_mirrors(l, &nmirrors);
    set->links = rs_links_count(l) || nmirrors ? set->section->links : NULL;
    /* The resolved links hold absolute URLs made from the set's URL base:
     * a new base is a change of the links too. */
    set->links_fp = rs_links_count(l)
                        ? digest(pconf, apr_pstrcat(pconf, STORED_FORM "\n", set->root_url, "\n",
                                                    rs_links_describe(l, pconf), NULL))
                        : "";
    set->mirrors_fp = nmirrors ? digest(pconf, rs_links_mirrors_describe(l, pconf)) : "";
}
