/* rs_tool.c - command-line front end of the engine.
 *
 *   rs-tool scan STATE.db SET ROOT [--hash md5,sha-256] [--exclude GLOB]...
 *   rs-tool list STATE.db SET OUTDIR URLBASE [--max N] [--hash ...]
 *   rs-tool dump STATE.db SET ROOT OUTDIR URLBASE [--max N] [--hash ...]
 *                [--dumpset DIR]
 *
 * "scan" reconciles ROOT into the inventory of SET (no httpd access checks;
 * every readable regular file is listed) and prints the scan statistics;
 * "list" writes that set's Resource List snapshot into OUTDIR; "dump" writes
 * its Resource Dump (packages of the files below ROOT, as rs_dump_write does
 * for the module, at most N files a package) into the existing OUTDIR and
 * prints the figures; with --dumpset, DIR holds generation directories
 * (DIR/<n>/, as the module's dump job keeps them) whose packages are
 * hard-linked instead of written when their key is unchanged, and the
 * count of reused packages is printed too.  Used by the
 * benchmarks to measure the engine without httpd, and handy for inspecting
 * a state store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <apr_general.h>
#include <apr_strings.h>
#include "rs_glob.h"
#include "rs_dump.h"
#include "rs_hash.h"
#include "rs_scan.h"
#include "rs_inventory.h"
#include "rs_snapshot.h"
#include "rs_statedir.h"
#include "rs_schema.h"

static void log_stderr(void *baton, int level, apr_status_t rv, const char *msg)
{
    (void)baton;
    if (level <= RS_LOG_WARN) {
        fprintf(stderr, "rs-tool: %s\n", msg);
    }
}

static int usage(void)
{
    fprintf(stderr, "usage: rs-tool scan STATE.db SET ROOT [--hash LIST] [--exclude GLOB]...\n"
                    "       rs-tool list STATE.db SET OUTDIR URLBASE [--max N] [--hash LIST]\n"
                    "       rs-tool dump STATE.db SET ROOT OUTDIR URLBASE [--max N] [--hash LIST]\n"
                    "                    [--dumpset DIR]\n");
    return 2;
}

static unsigned parse_hashes(const char *s)
{
    unsigned mask = 0;
    char *copy = strdup(s), *tok, *save = NULL;
    for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        unsigned b = rs_hash_bit(tok);
        if (!b && strcmp(tok, "none")) {
            fprintf(stderr, "rs-tool: unknown hash '%s'\n", tok);
            exit(2);
        }
        mask |= b;
    }
    free(copy);
    return mask;
}

/* rs-tool dump: argv[2..6] are STATE.db SET ROOT OUTDIR URLBASE; dumpset
 * (or NULL) the directory of earlier generations to reuse packages from. */
static int dump(rs_db_t *st, const char *const *argv, int max, unsigned hashes,
                const char *dumpset, apr_pool_t *p)
{
    rs_dump_opts_t o;
    rs_dump_info_t info;
    const char *base = argv[6];
    apr_status_t rv;
    char err[256];

    memset(&o, 0, sizeof(o));
    memset(&info, 0, sizeof(info));
    o.set = argv[3];
    o.root = argv[4];
    o.url_base = base;
    o.capability_url = apr_pstrcat(p, base, "capabilitylist.xml", NULL);
    o.dump_url = apr_pstrcat(p, base, "resourcedump.xml", NULL);
    o.pkg_url_prefix = apr_pstrcat(p, base, "resourcedump/", NULL);
    o.dumpset = dumpset;
    o.hashes = hashes;
    o.max_entries = max;
    o.max_bytes = (apr_int64_t)1 << 30;
    o.part_url_prefix = apr_pstrcat(p, base, "resourcedump/part-", NULL);
    o.list_max = 50000;
    o.at = o.completed = apr_time_now();
    rv = rs_dump_write(st, &o, argv[5], p, &info);
    if (rv != APR_SUCCESS) {
        fprintf(stderr, "rs-tool: cannot write the dump: %s%s%s\n", apr_strerror(rv, err, sizeof(err)),
                info.failed ? ": " : "", info.failed ? info.failed : "");
        return 1;
    }
    printf("entries %" APR_INT64_T_FMT " packages %d reused %d bytes %" APR_INT64_T_FMT "\n",
           info.entries, info.packages, info.reused, info.bytes);
    return 0;
}

int main(int argc, const char *const *argv)
{
    apr_pool_t *p;
    rs_db_t *st;
    rs_logger_t log = { log_stderr, NULL };
    unsigned hashes = 0;
    const char *dumpset = NULL;
    int i, max = 50000, nfixed;
    apr_array_header_t *ex;

    if (argc < 4) {
        return usage();
    }
    apr_app_initialize(&argc, &argv, NULL);
    apr_pool_create(&p, NULL);
    ex = apr_array_make(p, 4, sizeof(const char *));
    nfixed = !strcmp(argv[1], "scan") ? 5 : !strcmp(argv[1], "dump") ? 7 : 6;
    if (argc < nfixed) {
        return usage();
    }
    for (i = nfixed - 1 + 1; i < argc; i++) {
        if (!strcmp(argv[i], "--hash") && i + 1 < argc) {
            hashes = parse_hashes(argv[++i]);
        }
        else if (!strcmp(argv[i], "--exclude") && i + 1 < argc) {
            APR_ARRAY_PUSH(ex, const char *) = argv[++i];
        }
        else if (!strcmp(argv[i], "--max") && i + 1 < argc) {
            max = atoi(argv[++i]);
        }
        else if (!strcmp(argv[i], "--dumpset") && i + 1 < argc && !strcmp(argv[1], "dump")) {
            dumpset = argv[++i];
        }
        else {
            return usage();
        }
    }
    if (rs_schema_open(&st, p, RS_STATEDIR_DB_DRIVER, argv[2], &log) != APR_SUCCESS) {
        return 1;
    }
    if (!strcmp(argv[1], "scan")) {
        rs_scan_opts_t o;
        rs_scan_stats_t s;
        memset(&o, 0, sizeof(o));
        o.set = argv[3];
        o.root = argv[4];
        o.hashes = hashes;
        o.excludes = ex;
        o.cfg = "rs-tool";
        o.log = &log;
        if (rs_scan_set(st, &o, p, &s) != APR_SUCCESS) {
            return 1;
        }
        printf("files %" APR_INT64_T_FMT " dirs %" APR_INT64_T_FMT " listed %" APR_INT64_T_FMT
               " written %" APR_INT64_T_FMT " removed %" APR_INT64_T_FMT " hashed %"
               APR_INT64_T_FMT "\n", s.files, s.dirs, s.listed, s.written, s.removed, s.hashed);
    }
    else if (!strcmp(argv[1], "list")) {
        rs_snapshot_opts_t o;
        rs_snapshot_info_t info;
        const char *base = argv[5];
        memset(&o, 0, sizeof(o));
        o.set = argv[3];
        o.entry.url_base = base;
        o.capability_url = apr_pstrcat(p, base, "capabilitylist.xml", NULL);
        o.list_url = apr_pstrcat(p, base, "resourcelist.xml", NULL);
        o.part_url_prefix = apr_pstrcat(p, base, "resourcelist/", NULL);
        o.max_entries = max;
        o.entry.hashes = hashes;
        o.at = o.completed = apr_time_now();
        o.log = &log;
        if (rs_snapshot_write(st, &o, argv[4], 1, p, &info) != APR_SUCCESS) {
            fprintf(stderr, "rs-tool: cannot write the snapshot\n");
            return 1;
        }
        printf("entries %" APR_INT64_T_FMT " parts %d\n", info.entries, info.parts);
    }
    else if (!strcmp(argv[1], "dump")) {
        return dump(st, argv, max, hashes, dumpset, p);
    }
    else {
        return usage();
    }
    apr_pool_destroy(p);
    apr_terminate();
    return 0;
}
