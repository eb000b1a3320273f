/* SPDX-License-Identifier: Apache-2.0 */
/* rs_tool_verify.c - rs-tool verify: compare a set's inventory with its
 * tree, changing nothing.
 *
 * The comparison is the scanner's own (rs_scan_set: the same rules for
 * hidden files, exclusions, symbolic links and versions), run on a
 * private copy: the set's inventory rows are copied into a temporary store
 * (in $TMPDIR), the scan reconciles the copy, and every change it reports
 * is a difference.  The live store is only read (opened read-only), both
 * through the engine's store units (rs_inventory).
 *
 * What rs-tool cannot know is httpd's access decision.  So that a file the
 * module keeps unlisted (not served) does not count as different while it
 * is unchanged, the copied rows all carry the verify's own check
 * fingerprint: the scan then re-checks only files whose version changed,
 * and an unchanged row keeps its stored decision.  A changed file counts
 * as "updated" only when its size, modification time or a stored digest
 * differs (a chmod alone is no difference).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <apr_strings.h>
#include "rs_hash.h"
#include "rs_inventory.h"
#include "rs_parse.h"
#include "rs_path.h"
#include "rs_scan.h"
#include "rs_schema.h"
#include "rs_statedir.h"
#include "rs_tool.h"
#include "rs_tool_statedir.h"

#define VERIFY_CFG "rs-tool-verify"

typedef struct verify_t {
    rs_db_t *live; /* the real store, opened read-only */
    apr_pool_t *p;
    const char *set;
    long long diffs;
} verify_t;

static void log_stderr(void *baton, int level, apr_status_t rv, const char *msg)
{
    (void)baton;
    if (level <= RS_LOG_WARN) {
        fprintf(stderr, "rs-tool: verify: %s\n", msg);
    }
}

static const rs_logger_t verify_log = { log_stderr, NULL };

/* Whether the new row differs from the live one in what is published:
 * size, modification time, or a digest both have.  A row that is gone
 * from the live store differs.  (On the scan's writer thread, which alone
 * uses the live connection.) */
static int differs(verify_t *v, const rs_item_t *now)
{
    rs_item_t *was = NULL;
    apr_pool_t *sp;
    int i, d = 1;

    apr_pool_create(&sp, v->p);
    if (rs_inventory_get(v->live, sp, v->set, now->dir, now->name, &was) == APR_SUCCESS && was) {
        d = was->size != now->size || was->mtime_ns != now->mtime_ns;
        for (i = 0; i < RS_HASH_COUNT && !d; i++) {
            d = was->hash[i] && now->hash[i] && strcmp(was->hash[i], now->hash[i]);
        }
    }
    apr_pool_destroy(sp);
    return d;
}

static apr_status_t on_change(void *baton, int change, const rs_item_t *it)
{
    verify_t *v = baton;
    const char *what = change == RS_CHANGE_CREATED   ? "created"
                       : change == RS_CHANGE_DELETED ? "deleted"
                                                     : "updated";
    if (change == RS_CHANGE_UPDATED && !differs(v, it)) {
        return APR_SUCCESS;
    }
    printf("%s %s\n", what, rs_path_join(v->p, it->dir, it->name));
    v->diffs++;
    return APR_SUCCESS;
}

/* The copy of a set's rows as they are read from the live store. */
typedef struct copy_t {
    rs_db_t *to;
    const char *set;
    unsigned hashes; /* the digests the listed rows carry */
    apr_status_t rv;
} copy_t;

static int copy_row(void *baton, const rs_item_t *it)
{
    copy_t *c = baton;
    rs_item_t row = *it;
    int i;

    row.cfg = VERIFY_CFG;
    for (i = 0; it->listed && i < RS_HASH_COUNT; i++) {
        c->hashes |= it->hash[i] ? 1u << i : 0;
    }
    c->rv = rs_inventory_put(c->to, c->set, &row);
    return c->rv != APR_SUCCESS;
}

/* Copy the set's rows into the temporary store (schema created already),
 * in one transaction; *hashes the digests the listed rows carry. */
static int copy_rows(rs_db_t *live, rs_db_t *copy, const char *set, unsigned *hashes)
{
    copy_t c = { copy, set, 0, APR_SUCCESS };
    apr_status_t rv = rs_db_begin(copy);

    if (rv == APR_SUCCESS && (rv = rs_inventory_each_all(live, set, copy_row, &c)) == APR_SUCCESS
        && (rv = c.rv) == APR_SUCCESS) {
        rv = rs_db_commit(copy);
    }
    *hashes = c.hashes;
    if (rv == APR_SUCCESS) {
        return RS_TOOL_OK;
    }
    rs_db_rollback(copy);
    return rs_tool_err(RS_TOOL_FAIL, "verify: cannot copy the inventory of set '%s': %s", set,
                       *rs_db_last_error(copy) ? rs_db_last_error(copy) : rs_db_last_error(live));
}

/* The set checked, the copy made and scanned. */
static int verify_copy(apr_pool_t *p, verify_t *v, const char *statedir, const char *root,
                       const apr_array_header_t *excludes, int dotfiles)
{
    const char *set = v->set, *tdir = getenv("TMPDIR");
    char *tmp;
    rs_db_t *copy;
    rs_scan_opts_t o;
    rs_scan_stats_t s;
    apr_status_t rv;
    apr_pool_t *cp;
    char err[256];
    int fd, found = 0;

    if (rs_inventory_any(v->live, set, &found) != APR_SUCCESS || !found) {
        return rs_tool_err(RS_TOOL_USAGE, "verify: no set '%s' in '%s'", set, statedir);
    }
    tmp = apr_pstrcat(p, tdir && *tdir ? tdir : "/tmp", "/rs-tool-verify-XXXXXX", NULL);
    if ((fd = mkstemp(tmp)) < 0) {
        return rs_tool_err(RS_TOOL_FAIL, "verify: cannot create a temporary store '%s': %s", tmp,
                           strerror(errno));
    }
    close(fd);
    memset(&o, 0, sizeof(o));
    apr_pool_create(&cp, p);
    if (rs_schema_open(&copy, cp, RS_STATEDIR_DB_DRIVER, tmp, &verify_log) != APR_SUCCESS
        || copy_rows(v->live, copy, set, &o.hashes) != RS_TOOL_OK) {
        apr_pool_destroy(cp);
        rs_db_remove(p, RS_STATEDIR_DB_DRIVER, tmp);
        return rs_tool_err(RS_TOOL_FAIL, "verify: cannot prepare the temporary store '%s'", tmp);
    }
    o.set = set;
    o.root = root;
    o.excludes = excludes;
    o.dotfiles = dotfiles;
    o.cfg = VERIFY_CFG;
    o.log = &verify_log;
    o.on_change = on_change;
    o.change_baton = v;
    rv = rs_scan_set(copy, &o, p, &s);
    apr_pool_destroy(cp);
    rs_db_remove(p, RS_STATEDIR_DB_DRIVER, tmp);
    if (rv != APR_SUCCESS) {
        return rs_tool_err(RS_TOOL_USAGE, "verify: set %s: %s", set,
                           apr_strerror(rv, err, sizeof(err)));
    }
    printf("verify %s: files %" APR_INT64_T_FMT " listed %" APR_INT64_T_FMT " differences %lld\n",
           set, s.files, s.listed, v->diffs);
    return v->diffs ? RS_TOOL_FAIL : RS_TOOL_OK;
}

int rs_tool_verify(apr_pool_t *p, const char *statedir, const char *set, const char *root,
                   const apr_array_header_t *excludes, int dotfiles)
{
    const char *dbpath;
    apr_pool_t *lp;
    verify_t v;
    struct stat sb;
    int rc;

    if (!rs_parse_set_name(set, RS_TOOL_SET_NAME_MAX)) {
        return rs_tool_err(RS_TOOL_USAGE, "verify: invalid set name '%s'", set);
    }
    if ((rc = rs_tool_check_statedir(p, "verify", statedir, &dbpath)) != RS_TOOL_OK) {
        return rc;
    }
    if (stat(root, &sb) != 0) {
        return rs_tool_err(RS_TOOL_USAGE, "verify: ROOT '%s' is not a directory: %s", root,
                           strerror(errno));
    }
    if (!S_ISDIR(sb.st_mode)) {
        return rs_tool_err(RS_TOOL_USAGE, "verify: ROOT '%s' is not a directory", root);
    }
    memset(&v, 0, sizeof(v));
    v.p = p;
    v.set = set;
    apr_pool_create(&lp, p);
    if ((rc = rs_tool_store_open(lp, "verify", dbpath, RS_DB_READONLY, &v.live)) == RS_TOOL_OK) {
        rc = verify_copy(p, &v, statedir, root, excludes, dotfiles);
    }
    apr_pool_destroy(lp);
    return rc;
}
