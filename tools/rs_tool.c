/* SPDX-License-Identifier: Apache-2.0 */
/* rs_tool.c - rs-tool, the operator's command-line tool: dispatch, and
 * the engine commands that work on a store file.
 *
 *   rs-tool status     [-d STATEDIR] [--url STATUS-URL]
 *   rs-tool verify     [-d STATEDIR] SET ROOT [--exclude GLOB]... [--dotfiles]
 *   rs-tool forget-set [-d STATEDIR] SET
 *   rs-tool backup     [-d STATEDIR] FILE
 *   rs-tool withdraw   [-d STATEDIR] [--wait SECONDS] SET PATH
 *   rs-tool scan STATE.db SET ROOT [--hash md5,sha-256] [--exclude GLOB]...
 *   rs-tool list STATE.db SET OUTDIR URLBASE [--max N] [--hash ...]
 *   rs-tool dump STATE.db SET ROOT OUTDIR URLBASE [--max N] [--hash ...]
 *                [--dumpset DIR]
 *
 * status and backup are in rs_tool_state.c, forget-set in rs_tool_forget.c,
 * verify in rs_tool_verify.c, withdraw in rs_tool_withdraw.c (see
 * docs/rs-tool.1).  "scan" reconciles ROOT into the
 * inventory of SET (no httpd access checks; every readable regular file
 * is listed) and prints the scan statistics; "list" writes that set's
 * Resource List snapshot into OUTDIR (created when missing); "dump" writes
 * its Resource Dump (packages of the files below ROOT, at most N files a
 * package) into OUTDIR; with --dumpset, DIR holds generation directories
 * (DIR/<n>/, as the module's dump job keeps them) whose packages are
 * hard-linked instead of written when their key is unchanged.  Used by the
 * benchmarks and tests to run the engine without httpd.  They read no
 * configuration: entries carry the links the rows store and no mirror
 * (ResourceSyncMirror is rendered from the configuration, never stored).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <apr_general.h>
#include <apr_file_info.h>
#include <apr_strings.h>
#include "rs_db.h"
#include "rs_dump.h"
#include "rs_hash.h"
#include "rs_scan.h"
#include "rs_inventory.h"
#include "rs_parse.h"
#include "rs_snapshot.h"
#include "rs_statedir.h"
#include "rs_schema.h"
#include "rs_tool.h"
#include "rs_tool_owner.h"
#include "rs_tool_statedir.h"

/* Options of every command; which ones a command accepts is checked by
 * the command (opt_only). */
typedef struct opts_t {
    const char *statedir, *url, *dumpset, *store;
    unsigned hashes;
    int max, dotfiles, seen_hash, seen_max, wait, seen_wait;
    apr_array_header_t *excludes;
    apr_array_header_t *args; /* positional, after the command */
} opts_t;

static void log_stderr(void *baton, int level, apr_status_t rv, const char *msg)
{
    (void)baton;
    if (level <= RS_LOG_WARN) {
        fprintf(stderr, "rs-tool: %s\n", msg);
    }
}

static const rs_logger_t tool_log = { log_stderr, NULL };

static void help(FILE *out)
{
    fprintf(out,
            "usage: rs-tool COMMAND [ARGS]   (rs-tool " RS_VERSION "; see rs-tool(1))\n"
            "  status     [-d STATEDIR] [--url STATUS-URL]   sets, files, bytes, generations\n"
            "  verify     [-d STATEDIR] SET ROOT [--exclude GLOB]... [--dotfiles]\n"
            "             compare the inventory with the tree (exit 0 equal, 1 different)\n"
            "  forget-set [-d STATEDIR] SET                  remove all state of a set\n"
            "  backup     [-d STATEDIR] FILE                 online copy of the state store\n"
            "  withdraw   [-d STATEDIR] [--wait SECONDS] SET PATH\n"
            "             remove the dump packages holding PATH; they are built again without it\n"
            "  scan STATE.db SET ROOT [--hash LIST] [--exclude GLOB]...\n"
            "  list STATE.db SET OUTDIR URLBASE [--max N] [--hash LIST]\n"
            "  dump STATE.db SET ROOT OUTDIR URLBASE [--max N] [--hash LIST] [--dumpset DIR]\n"
            "  --version, --help\n"
            "The state directory's commands take --store sqlite (default) or --store pgsql:DSN\n"
            "(ResourceSyncStore); backup refuses pgsql (use pg_dump).\n"
            "STATEDIR defaults to " RS_TOOL_STATEDIR ".  Exit status: 0 success, 1 failure\n"
            "or differences, 2 misuse.\n");
}

static int parse_hashes(const char *s, unsigned *mask)
{
    char *copy = strdup(s), *tok, *save = NULL;
    int ok = 1;
    *mask = 0;
    for (tok = strtok_r(copy, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save)) {
        unsigned b = rs_hash_bit(tok);
        if (!b && strcmp(tok, "none")) {
            ok = 0;
            rs_tool_err(0, "--hash: unknown hash '%s'", tok);
        }
        *mask |= b;
    }
    free(copy);
    return ok;
}

/* The value v of option opt of command cmd as a number from lo to hi, or
 * -1 after saying that it is not `what`. */
static long opt_number(const char *cmd, const char *opt, const char *v, long lo, long hi,
                       const char *what)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || end == v || n < lo || n > hi) {
        rs_tool_err(0, "%s: %s '%s' is not %s", cmd, opt, v, what);
        return -1;
    }
    return n;
}

/* Options anywhere after the command; returns RS_TOOL_OK or the error. */
static int parse_opts(int argc, const char *const *argv, apr_pool_t *p, opts_t *o)
{
    long n;
    int i;
    memset(o, 0, sizeof(*o));
    o->statedir = RS_TOOL_STATEDIR;
    o->max = 50000;
    o->wait = 60;
    o->excludes = apr_array_make(p, 4, sizeof(const char *));
    o->args = apr_array_make(p, 8, sizeof(const char *));
    for (i = 2; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (a[0] != '-' || !strcmp(a, "-")) {
            APR_ARRAY_PUSH(o->args, const char *) = a;
            continue;
        }
        if (!strstr(" -d --state-dir --url --exclude --dotfiles --dumpset --hash --max --wait "
                    "--store ",
                    apr_pstrcat(p, " ", a, " ", NULL))) {
            return rs_tool_err(RS_TOOL_USAGE, "%s: unknown option '%s'", argv[1], a);
        }
        if (strcmp(a, "--dotfiles") && !has) {
            return rs_tool_err(RS_TOOL_USAGE, "%s: %s needs a value", argv[1], a);
        }
        if (!strcmp(a, "-d") || !strcmp(a, "--state-dir")) {
            o->statedir = argv[++i];
        }
        else if (!strcmp(a, "--url")) {
            o->url = argv[++i];
        }
        else if (!strcmp(a, "--store")) {
            o->store = argv[++i];
        }
        else if (!strcmp(a, "--exclude")) {
            APR_ARRAY_PUSH(o->excludes, const char *) = argv[++i];
        }
        else if (!strcmp(a, "--dotfiles")) {
            o->dotfiles = 1;
        }
        else if (!strcmp(a, "--dumpset")) {
            o->dumpset = argv[++i];
        }
        else if (!strcmp(a, "--hash")) {
            o->seen_hash = 1;
            if (!parse_hashes(argv[++i], &o->hashes)) {
                return RS_TOOL_USAGE;
            }
        }
        else if (!strcmp(a, "--max")) {
            if ((n = opt_number(argv[1], a, argv[++i], 1, 1000000000, "a positive number")) < 0) {
                return RS_TOOL_USAGE;
            }
            o->max = (int)n;
            o->seen_max = 1;
        }
        else if (!strcmp(a, "--wait")) {
            if ((n = opt_number(argv[1], a, argv[++i], 0, 86400,
                                "a number of seconds from 0 to 86400"))
                < 0) {
                return RS_TOOL_USAGE;
            }
            o->wait = (int)n;
            o->seen_wait = 1;
        }
    }
    return RS_TOOL_OK;
}

/* Exactly n positional arguments (names for the message). */
static int want_args(const char *cmd, const opts_t *o, int n, const char *names)
{
    if (o->args->nelts < n) {
        return rs_tool_err(RS_TOOL_USAGE, "%s: missing argument: %s (usage: rs-tool %s %s)", cmd,
                           names, cmd, names);
    }
    if (o->args->nelts > n) {
        return rs_tool_err(RS_TOOL_USAGE, "%s: unexpected argument '%s'", cmd,
                           APR_ARRAY_IDX(o->args, n, const char *));
    }
    return RS_TOOL_OK;
}

static const char *arg(const opts_t *o, int i)
{
    return APR_ARRAY_IDX(o->args, i, const char *);
}

/* Options a command does not take are refused rather than ignored. */
static int opt_only(const char *cmd, const opts_t *o, const char *allowed)
{
    struct {
        int on;
        const char *name;
    } seen[] = { { strcmp(o->statedir, RS_TOOL_STATEDIR) != 0, "-d" },
                 { o->url != NULL, "--url" },
                 { o->excludes->nelts > 0, "--exclude" },
                 { o->dotfiles, "--dotfiles" },
                 { o->dumpset != NULL, "--dumpset" },
                 { o->seen_hash, "--hash" },
                 { o->seen_max, "--max" },
                 { o->seen_wait, "--wait" },
                 { o->store != NULL, "--store" } };
    size_t i;
    for (i = 0; i < sizeof(seen) / sizeof(seen[0]); i++) {
        if (seen[i].on && !strstr(allowed, seen[i].name)) {
            return rs_tool_err(RS_TOOL_USAGE, "%s: option %s does not apply", cmd, seen[i].name);
        }
    }
    return RS_TOOL_OK;
}

/* A directory argument: must exist (or is created, create != 0). */
static int check_dir(const char *cmd, const char *what, const char *path, int create, apr_pool_t *p)
{
    struct stat sb;
    char err[256];
    apr_status_t rv;
    if (stat(path, &sb) == 0) {
        return S_ISDIR(sb.st_mode)
                   ? RS_TOOL_OK
                   : rs_tool_err(RS_TOOL_USAGE, "%s: %s '%s' is not a directory", cmd, what, path);
    }
    if (errno != ENOENT || !create) {
        return rs_tool_err(RS_TOOL_USAGE, "%s: %s '%s': %s", cmd, what, path, strerror(errno));
    }
    if ((rv = apr_dir_make_recursive(path, APR_OS_DEFAULT, p)) != APR_SUCCESS) {
        return rs_tool_err(RS_TOOL_FAIL, "%s: cannot create %s '%s': %s", cmd, what, path,
                           apr_strerror(rv, err, sizeof(err)));
    }
    return RS_TOOL_OK;
}

/* Open STATE.db of an engine command: its directory must exist (and,
 * run as root, the tool acts as that directory's owner from then on, as
 * for a state directory); list and dump need an existing store and a set
 * in it. */
static int open_db(const char *cmd, const char *path, const char *set, int need_set, apr_pool_t *p,
                   rs_db_t **st)
{
    struct stat sb;
    apr_int64_t n = 0;
    char *dir = apr_pstrdup(p, path), *slash = strrchr(dir, '/');
    int rc;
    if (!rs_parse_set_name(set, RS_TOOL_SET_NAME_MAX)) {
        return rs_tool_err(RS_TOOL_USAGE, "%s: invalid set name '%s'", cmd, set);
    }
    if (slash) {
        *(slash == dir ? slash + 1 : slash) = '\0';
        if (check_dir(cmd, "directory of STATE.db", dir, 0, p) != RS_TOOL_OK) {
            return RS_TOOL_USAGE;
        }
    }
    if ((rc = rs_tool_as_owner(cmd, "directory of STATE.db", slash ? dir : ".", 0)) != RS_TOOL_OK) {
        return rc;
    }
    if (need_set && stat(path, &sb) != 0) {
        return rs_tool_err(RS_TOOL_USAGE, "%s: STATE.db '%s': %s", cmd, path, strerror(errno));
    }
    if (rs_schema_open(st, p, RS_STATEDIR_DB_DRIVER, path, &tool_log) != APR_SUCCESS) {
        return rs_tool_err(RS_TOOL_FAIL, "%s: cannot open the state store '%s'", cmd, path);
    }
    if (need_set && (rs_inventory_count(*st, set, &n) != APR_SUCCESS || n == 0)) {
        return rs_tool_err(RS_TOOL_USAGE, "%s: no set '%s' in '%s'", cmd, set, path);
    }
    return RS_TOOL_OK;
}

static int cmd_scan(const opts_t *a, apr_pool_t *p)
{
    rs_scan_opts_t o;
    rs_scan_stats_t s;
    rs_db_t *st;
    int rc;
    char err[256];
    apr_status_t rv;

    if ((rc = want_args("scan", a, 3, "STATE.db SET ROOT")) != RS_TOOL_OK
        || (rc = opt_only("scan", a, "--hash --exclude")) != RS_TOOL_OK
        /* Checked before the store is opened: a root that is not there
         * must never look like an empty tree. */
        || (rc = check_dir("scan", "ROOT", arg(a, 2), 0, p)) != RS_TOOL_OK
        || (rc = open_db("scan", arg(a, 0), arg(a, 1), 0, p, &st)) != RS_TOOL_OK) {
        return rc;
    }
    memset(&o, 0, sizeof(o));
    o.set = arg(a, 1);
    o.root = arg(a, 2);
    o.hashes = a->hashes;
    o.excludes = a->excludes;
    o.cfg = "rs-tool";
    o.log = &tool_log;
    /* No check callback: the reading and hashing use every processor. */
    o.hash_workers = rs_scan_threads();
    if ((rv = rs_scan_set(st, &o, p, &s)) != APR_SUCCESS) {
        return rs_tool_err(RS_TOOL_FAIL, "scan: set %s: %s", o.set,
                           apr_strerror(rv, err, sizeof(err)));
    }
    printf("files %" APR_INT64_T_FMT " dirs %" APR_INT64_T_FMT " listed %" APR_INT64_T_FMT
           " written %" APR_INT64_T_FMT " removed %" APR_INT64_T_FMT " hashed %" APR_INT64_T_FMT
           "\n",
           s.files, s.dirs, s.listed, s.written, s.removed, s.hashed);
    return RS_TOOL_OK;
}

static int cmd_list(const opts_t *a, apr_pool_t *p)
{
    rs_snapshot_opts_t o;
    rs_snapshot_info_t info;
    rs_db_t *st;
    const char *base;
    int rc;

    if ((rc = want_args("list", a, 4, "STATE.db SET OUTDIR URLBASE")) != RS_TOOL_OK
        || (rc = opt_only("list", a, "--hash --max")) != RS_TOOL_OK
        || (rc = open_db("list", arg(a, 0), arg(a, 1), 1, p, &st)) != RS_TOOL_OK
        || (rc = check_dir("list", "OUTDIR", arg(a, 2), 1, p)) != RS_TOOL_OK) {
        return rc;
    }
    base = arg(a, 3);
    memset(&o, 0, sizeof(o));
    o.set = arg(a, 1);
    o.entry.url_base = base;
    o.capability_url = apr_pstrcat(p, base, "capabilitylist.xml", NULL);
    o.list_url = apr_pstrcat(p, base, "resourcelist.xml", NULL);
    o.part_url_prefix = apr_pstrcat(p, base, "resourcelist/", NULL);
    o.max_entries = a->max;
    o.entry.hashes = a->hashes;
    o.at = o.completed = apr_time_now();
    o.log = &tool_log;
    if (rs_snapshot_write(st, &o, arg(a, 2), 1, p, &info) != APR_SUCCESS) {
        return rs_tool_err(RS_TOOL_FAIL, "list: cannot write the snapshot into '%s'", arg(a, 2));
    }
    printf("entries %" APR_INT64_T_FMT " parts %d\n", info.entries, info.parts);
    return RS_TOOL_OK;
}

static int cmd_dump(const opts_t *a, apr_pool_t *p)
{
    rs_dump_opts_t o;
    rs_dump_info_t info;
    rs_db_t *st;
    const char *base;
    apr_status_t rv;
    char err[256];
    int rc;

    if ((rc = want_args("dump", a, 5, "STATE.db SET ROOT OUTDIR URLBASE")) != RS_TOOL_OK
        || (rc = opt_only("dump", a, "--hash --max --dumpset")) != RS_TOOL_OK
        || (rc = check_dir("dump", "ROOT", arg(a, 2), 0, p)) != RS_TOOL_OK
        || (rc = open_db("dump", arg(a, 0), arg(a, 1), 1, p, &st)) != RS_TOOL_OK
        || (rc = check_dir("dump", "OUTDIR", arg(a, 3), 1, p)) != RS_TOOL_OK) {
        return rc;
    }
    base = arg(a, 4);
    memset(&o, 0, sizeof(o));
    memset(&info, 0, sizeof(info));
    o.set = arg(a, 1);
    o.root = arg(a, 2);
    o.url_base = base;
    o.capability_url = apr_pstrcat(p, base, "capabilitylist.xml", NULL);
    o.dump_url = apr_pstrcat(p, base, "resourcedump.xml", NULL);
    o.pkg_url_prefix = apr_pstrcat(p, base, "resourcedump/", NULL);
    o.dumpset = a->dumpset;
    o.hashes = a->hashes;
    o.max_entries = a->max;
    o.max_bytes = (apr_int64_t)1 << 30;
    o.part_url_prefix = apr_pstrcat(p, base, "resourcedump/part-", NULL);
    o.list_max = 50000;
    o.at = o.completed = apr_time_now();
    if ((rv = rs_dump_write(st, &o, arg(a, 3), p, &info)) != APR_SUCCESS) {
        return rs_tool_err(RS_TOOL_FAIL, "dump: cannot write the dump: %s%s%s",
                           apr_strerror(rv, err, sizeof(err)), info.failed ? ": " : "",
                           info.failed ? info.failed : "");
    }
    printf("entries %" APR_INT64_T_FMT " packages %d reused %d bytes %" APR_INT64_T_FMT "\n",
           info.entries, info.packages, info.reused, info.bytes);
    return RS_TOOL_OK;
}

/* The commands that work on a state directory. */
static int cmd_state(const char *cmd, const opts_t *a, apr_pool_t *p)
{
    rs_storecfg_t store;
    const char *why;
    int rc;

    /* --store: the store the module's ResourceSyncStore names (default:
     * SQLite in the state directory); the state directory is still the
     * node's own (its documents, locks and requests). */
    if ((why =
             rs_storecfg_parse(&store, p, a->store ? a->store : RS_STORECFG_SQLITE, a->statedir))) {
        return rs_tool_err(RS_TOOL_USAGE, "%s: --store %s", cmd, why);
    }
    rs_tool_store_use(&store);
    if (!strcmp(cmd, "status")) {
        return (rc = want_args(cmd, a, 0, "")) != RS_TOOL_OK
                       || (rc = opt_only(cmd, a, "-d --url --store")) != RS_TOOL_OK
                   ? rc
                   : rs_tool_status(p, a->statedir, a->url);
    }
    if (!strcmp(cmd, "verify")) {
        return (rc = want_args(cmd, a, 2, "SET ROOT")) != RS_TOOL_OK
                       || (rc = opt_only(cmd, a, "-d --exclude --dotfiles --store")) != RS_TOOL_OK
                   ? rc
                   : rs_tool_verify(p, a->statedir, arg(a, 0), arg(a, 1), a->excludes, a->dotfiles);
    }
    if (!strcmp(cmd, "withdraw")) {
        return (rc = want_args(cmd, a, 2, "SET PATH")) != RS_TOOL_OK
                       || (rc = opt_only(cmd, a, "-d --wait --store")) != RS_TOOL_OK
                   ? rc
                   : rs_tool_withdraw(p, a->statedir, arg(a, 0), arg(a, 1), a->wait);
    }
    if (!strcmp(cmd, "forget-set")) {
        return (rc = want_args(cmd, a, 1, "SET")) != RS_TOOL_OK
                       || (rc = opt_only(cmd, a, "-d --store")) != RS_TOOL_OK
                   ? rc
                   : rs_tool_forget(p, a->statedir, arg(a, 0));
    }
    if (rs_storecfg_is_pgsql(&store)) {
        /* A PostgreSQL store is the database server's to copy, with its
         * own tools; a file copy of one node's view would not be one. */
        return rs_tool_err(RS_TOOL_USAGE,
                           "backup: the store is PostgreSQL: back it up with pg_dump (e.g. "
                           "pg_dump -Fc -f FILE DBNAME), not rs-tool");
    }
    return (rc = want_args(cmd, a, 1, "FILE")) != RS_TOOL_OK
                   || (rc = opt_only(cmd, a, "-d --store")) != RS_TOOL_OK
               ? rc
               : rs_tool_backup(p, a->statedir, arg(a, 0));
}

int main(int argc, const char *const *argv)
{
    static const char *const state_cmds[] = { "status", "verify",   "forget-set",
                                              "backup", "withdraw", NULL };
    apr_pool_t *p;
    opts_t o;
    int i, rc;

    if (argc < 2) {
        help(stderr);
        return RS_TOOL_USAGE;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("rs-tool " RS_VERSION "\n");
        return RS_TOOL_OK;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        help(stdout);
        return RS_TOOL_OK;
    }
    apr_app_initialize(&argc, &argv, NULL);
    rs_db_one_thread_per_connection(); /* one connection, one thread at a time */
    apr_pool_create(&p, NULL);
    if ((rc = parse_opts(argc, argv, p, &o)) != RS_TOOL_OK) {
        return rc;
    }
    for (i = 0; state_cmds[i] && strcmp(argv[1], state_cmds[i]); i++) {
    }
    if (state_cmds[i]) {
        rc = cmd_state(argv[1], &o, p);
    }
    else if (!strcmp(argv[1], "scan")) {
        rc = cmd_scan(&o, p);
    }
    else if (!strcmp(argv[1], "list")) {
        rc = cmd_list(&o, p);
    }
    else if (!strcmp(argv[1], "dump")) {
        rc = cmd_dump(&o, p);
    }
    else {
        rc =
            rs_tool_err(RS_TOOL_USAGE, "unknown command '%s' (rs-tool --help lists them)", argv[1]);
    }
    apr_pool_destroy(p);
    apr_terminate();
    return rc;
}
