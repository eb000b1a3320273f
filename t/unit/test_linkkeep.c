/* SPDX-License-Identifier: Apache-2.0 */
/* test_linkkeep.c - rs_linkkeep: a set's links kept in its rows and their
 * dependencies, on a real SQLite store (rules matched with POSIX regexec) */
#include <stdlib.h>
#include <string.h>
#include <apr_file_info.h>
#include <apr_md5.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_inventory.h"
#include "rs_journal.h"
#include "rs_linkdep.h"
#include "rs_linkkeep.h"
#include "rs_linkpass.h"
#include "rs_linkscan.h"
#include "rs_links.h"
#include "rs_scan.h"
#include "rs_schema.h"

#define BASE "http://example.org/s/"

static void add(rs_links_t *l, const char *rel, const char *pattern, const char *target,
                int if_exists)
{
    int ng;
    void *r = ut_regex(pattern, &ng);
    ck_assert_ptr_null(rs_links_add(l, ut_pool, rel, r, ng, pattern, target, NULL, 0, if_exists));
}

/* records/N.pdf describedby meta/N.xml (if_exists as given). */
static rs_links_t *describedby(int if_exists)
{
    rs_links_t *l = ut_links();
    add(l, "describedby", "^records/([0-9]+)\\.pdf$", "meta/$1.xml", if_exists);
    return l;
}

typedef struct {
    rs_db_t *st;
    rs_journal_t *j;
    rs_linkkeep_t *lk;
    ut_log_t ul;
} fx_t;

static void fx_init(fx_t *f, const rs_links_t *l)
{
    memset(f, 0, sizeof(*f));
    ck_assert_int_eq(rs_schema_open(&f->st, ut_pool, ut_driver,
                                    ut_store(ut_path(ut_tempdir("linkkeep"), "state.db")),
                                    ut_log_init(&f->ul)),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_journal_open(&f->j, f->st, ut_pool), APR_SUCCESS);
    f->lk = rs_linkkeep_create(ut_pool, l, "s", BASE);
}

static void split(const char *path, const char **dir, const char **name)
{
    const char *slash = strrchr(path, '/');
    *dir = slash ? apr_pstrmemdup(ut_pool, path, (apr_size_t)(slash - path)) : "";
    *name = slash ? slash + 1 : path;
}

/* What a scan does when it writes a file's row (rs_scanwrite_row): its
 * links, the row, the journal's record (a change), the dependents. */
static void write_row(fx_t *f, const char *path, apr_int64_t size, int listed)
{
    rs_item_t it, *was = NULL;
    rs_record_t r;

    memset(&it, 0, sizeof(it));
    split(path, &it.dir, &it.name);
    it.size = size;
    it.mtime_ns = 1700000000000000000LL + size;
    it.type = "application/octet-stream";
    it.hash[0] = apr_psprintf(ut_pool, "%032" APR_INT64_T_FMT, size);
    it.listed = listed;
    ck_assert_int_eq(rs_db_begin(f->st), APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_get(f->st, ut_pool, "s", it.dir, it.name, &was), APR_SUCCESS);
    if (f->lk) {
        ck_assert_int_eq(rs_linkkeep_row(f->lk, f->st, &it, was && was->listed), APR_SUCCESS);
    }
    ck_assert_int_eq(rs_inventory_put(f->st, "s", &it), APR_SUCCESS);
    memset(&r, 0, sizeof(r));
    r.dir = it.dir;
    r.name = it.name;
    r.change = RS_CHANGE_UPDATED;
    ck_assert_int_eq(rs_journal_append(f->j, "s", &r), APR_SUCCESS);
    if (f->lk) {
        ck_assert_int_eq(rs_linkkeep_done(f->lk, f->st, f->j, it.dir, it.name, 0, NULL),
                         APR_SUCCESS);
    }
    ck_assert_int_eq(rs_db_commit(f->st), APR_SUCCESS);
}

static void delete_row(fx_t *f, const char *path)
{
    const char *dir, *name;
    rs_record_t r;

    split(path, &dir, &name);
    ck_assert_int_eq(rs_db_begin(f->st), APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_delete(f->st, "s", dir, name), APR_SUCCESS);
    memset(&r, 0, sizeof(r));
    r.dir = dir;
    r.name = name;
    r.change = RS_CHANGE_DELETED;
    ck_assert_int_eq(rs_journal_append(f->j, "s", &r), APR_SUCCESS);
    if (f->lk) {
        ck_assert_int_eq(rs_linkkeep_done(f->lk, f->st, f->j, dir, name, 1, NULL), APR_SUCCESS);
    }
    ck_assert_int_eq(rs_db_commit(f->st), APR_SUCCESS);
}

/* The stored links of path, decoded and written out as
 * "rel href length; ..." (length -1: none), "" for none, "-" without a
 * row. */
static const char *links_of(fx_t *f, const char *path)
{
    const char *dir, *name;
    apr_array_header_t *a, *out = apr_array_make(ut_pool, 4, sizeof(const char *));
    rs_item_t *row = NULL;
    int i;

    split(path, &dir, &name);
    ck_assert_int_eq(rs_inventory_get(f->st, ut_pool, "s", dir, name, &row), APR_SUCCESS);
    if (!row) {
        return "-";
    }
    a = rs_links_decode(ut_pool, row->links);
    ck_assert_ptr_nonnull(a);
    for (i = 0; i < a->nelts; i++) {
        const rs_link_t *k = &APR_ARRAY_IDX(a, i, rs_link_t);
        APR_ARRAY_PUSH(out, const char *) =
            apr_psprintf(ut_pool, "%s %s %" APR_INT64_T_FMT, k->rel, k->href, k->length);
    }
    return apr_array_pstrcat(ut_pool, out, ';');
}

static const char *relinked_last;
static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The paths relinked, in byte order (then forgotten, so that the next
 * call sees only new ones). */
static const char *relinked(fx_t *f)
{
    apr_array_header_t *a = NULL, *out = apr_array_make(ut_pool, 4, sizeof(const char *));
    int i;

    ck_assert_int_eq(rs_journal_relinked(f->j, ut_pool, "s", 0, 1000, &a), APR_SUCCESS);
    for (i = 0; i < a->nelts; i++) {
        const rs_journal_path_t *k = &APR_ARRAY_IDX(a, i, rs_journal_path_t);
        APR_ARRAY_PUSH(out, const char *) = apr_pstrcat(ut_pool, k->dir, "/", k->name, NULL);
    }
    ck_assert_int_eq(rs_db_run(f->st, "DELETE FROM relinked"), APR_SUCCESS);
    qsort(out->elts, (size_t)out->nelts, sizeof(const char *), by_name);
    return apr_array_pstrcat(ut_pool, out, ' ');
}

static const char *deps(fx_t *f, const char *source)
{
    apr_array_header_t *a = NULL;
    ck_assert_int_eq(rs_linkdep_targets(f->st, ut_pool, "s", source, &a), APR_SUCCESS);
    return apr_array_pstrcat(ut_pool, a, ' ');
}

#define PLAIN   "describedby " BASE "meta/1.xml -1"
#define TO_T(n) "describedby " BASE "meta/1.xml " #n
#define TO_S(n) "describes " BASE "records/1.pdf " #n

/* A target appears, changes and disappears: its source's links follow
 * (relinked, no record of the source); the target's own entry carries
 * the inverse link with the source's attributes. */
START_TEST(target_appears_changes_disappears)
{
    fx_t f;
    apr_int64_t seq;

    fx_init(&f, describedby(0));
    ck_assert_ptr_nonnull(f.lk);
    write_row(&f, "records/1.pdf", 100, 1);
    ck_assert_str_eq(links_of(&f, "records/1.pdf"), PLAIN);
    ck_assert_str_eq(deps(&f, "records/1.pdf"), "meta/1.xml");
    ck_assert_str_eq(relinked(&f), "");

    write_row(&f, "meta/1.xml", 7, 1);
    ck_assert_str_eq(links_of(&f, "records/1.pdf"), TO_T(7));
    ck_assert_str_eq(links_of(&f, "meta/1.xml"), TO_S(100));
    ck_assert_str_eq(relinked(&f), "records/1.pdf");
    /* Relinked at the sequence of the target's record: no record of its
     * own. */
    seq = rs_journal_last_seq(f.j);
    ck_assert_int_eq(seq, 2);

    write_row(&f, "meta/1.xml", 8, 1);
    ck_assert_str_eq(links_of(&f, "records/1.pdf"), TO_T(8));
    ck_assert_str_eq(relinked(&f), "records/1.pdf");
    /* Written again as it was: nothing relinked. */
    write_row(&f, "meta/1.xml", 8, 1);
    ck_assert_str_eq(relinked(&f), "");

    /* No longer listed: a plain link, as for an absent target. */
    write_row(&f, "meta/1.xml", 8, 0);
    ck_assert_str_eq(links_of(&f, "records/1.pdf"), PLAIN);
    ck_assert_str_eq(links_of(&f, "meta/1.xml"), "");
    ck_assert_str_eq(relinked(&f), "records/1.pdf");
    write_row(&f, "meta/1.xml", 9, 1);
    ck_assert_str_eq(links_of(&f, "records/1.pdf"), TO_T(9));
    ck_assert_str_eq(relinked(&f), "records/1.pdf");

    delete_row(&f, "meta/1.xml");
    ck_assert_str_eq(links_of(&f, "records/1.pdf"), PLAIN);
    ck_assert_str_eq(relinked(&f), "records/1.pdf");
    ck_assert_str_eq(deps(&f, "records/1.pdf"), "meta/1.xml");
    ck_assert_int_eq(f.ul.nerr, 0);
}
END_TEST

/* A source changes: the target's inverse link follows (the target is
 * relinked); the source goes: the inverse link goes, and so do its
 * dependencies. */
START_TEST(source_changes_and_goes)
{
    fx_t f;

    fx_init(&f, describedby(0));
    write_row(&f, "meta/1.xml", 7, 1);
    write_row(&f, "records/1.pdf", 100, 1);
    ck_assert_str_eq(links_of(&f, "records/1.pdf"), TO_T(7));
    ck_assert_str_eq(links_of(&f, "meta/1.xml"), TO_S(100));
    ck_assert_str_eq(relinked(&f), "meta/1.xml");

    write_row(&f, "records/1.pdf", 101, 1);
    ck_assert_str_eq(links_of(&f, "meta/1.xml"), TO_S(101));
    ck_assert_str_eq(relinked(&f), "meta/1.xml");

    /* Not listed any more: no links of its own, none to it. */
    write_row(&f, "records/1.pdf", 101, 0);
    ck_assert_str_eq(links_of(&f, "records/1.pdf"), "");
    ck_assert_str_eq(links_of(&f, "meta/1.xml"), "");
    ck_assert_str_eq(deps(&f, "records/1.pdf"), "");
    ck_assert_str_eq(relinked(&f), "meta/1.xml");

    write_row(&f, "records/1.pdf", 102, 1);
    ck_assert_str_eq(links_of(&f, "meta/1.xml"), TO_S(102));
    ck_assert_str_eq(relinked(&f), "meta/1.xml");
    delete_row(&f, "records/1.pdf");
    ck_assert_str_eq(links_of(&f, "meta/1.xml"), "");
    ck_assert_str_eq(deps(&f, "records/1.pdf"), "");
    ck_assert_str_eq(relinked(&f), "meta/1.xml");
}
END_TEST

/* if-exists: the link is there only while the target is listed. */
START_TEST(if_exists)
{
    fx_t f;

    fx_init(&f, describedby(1));
    write_row(&f, "records/1.pdf", 100, 1);
    ck_assert_str_eq(links_of(&f, "records/1.pdf"), "");
    ck_assert_str_eq(deps(&f, "records/1.pdf"), "meta/1.xml");
    write_row(&f, "meta/1.xml", 7, 1);
    ck_assert_str_eq(links_of(&f, "records/1.pdf"), TO_T(7));
    ck_assert_str_eq(links_of(&f, "meta/1.xml"), TO_S(100));
    ck_assert_str_eq(relinked(&f), "records/1.pdf");
    delete_row(&f, "meta/1.xml");
    ck_assert_str_eq(links_of(&f, "records/1.pdf"), "");
    ck_assert_str_eq(relinked(&f), "records/1.pdf");
}
END_TEST

/* A set without rules (or with mirrors only, which rows do not store)
 * has no keeper, and its start does nothing (no meta key is written
 * either). */
START_TEST(rules_free_set_untouched)
{
    fx_t f;
    const char *v = "x";
    apr_int64_t changed = -1;
    int ran = -1;
    rs_links_t *m = ut_links();

    fx_init(&f, NULL);
    ck_assert_ptr_null(f.lk);
    ck_assert_ptr_null(rs_linkkeep_create(ut_pool, ut_links(), "s", BASE));
    ck_assert_ptr_null(rs_links_add_mirror(m, ut_pool, "http://mirror.example/s/", 0));
    ck_assert_ptr_null(rs_linkkeep_create(ut_pool, m, "s", BASE));
    write_row(&f, "records/1.pdf", 100, 1);
    ck_assert_int_eq(rs_linkpass_start(f.st, f.j, ut_pool, "s", NULL, BASE, "", &ran, &changed),
                     APR_SUCCESS);
    ck_assert_int_eq(ran, 0);
    ck_assert_int_eq(changed, 0);
    ck_assert_int_eq(rs_db_meta_get(f.st, ut_pool, "links:s", &v), APR_SUCCESS);
    ck_assert_ptr_null(v);
    ck_assert_str_eq(links_of(&f, "records/1.pdf"), "");
    ck_assert_str_eq(relinked(&f), "");
}
END_TEST

/* A change of the rules at start: one pass resolves every listed row
 * again, updating and marking relinked only those whose links changed,
 * with no journal record; the same digest again does nothing; rules
 * removed take every link away. */
START_TEST(rules_change_at_start)
{
    fx_t f;
    rs_links_t *l = describedby(0), *l2 = describedby(0);
    apr_int64_t changed = -1, seq;
    int ran = -1;

    fx_init(&f, NULL); /* rows written by a module without rules */
    write_row(&f, "records/1.pdf", 100, 1);
    write_row(&f, "records/2.pdf", 200, 1);
    write_row(&f, "meta/1.xml", 7, 1);
    write_row(&f, "other.txt", 3, 1);
    write_row(&f, "records/3.pdf", 300, 0);
    seq = rs_journal_last_seq(f.j);

    ck_assert_int_eq(rs_linkpass_start(f.st, f.j, ut_pool, "s", l, BASE, "A", &ran, &changed),
                     APR_SUCCESS);
    ck_assert_int_eq(ran, 1);
    ck_assert_int_eq(changed, 3);
    ck_assert_str_eq(links_of(&f, "records/1.pdf"), TO_T(7));
    ck_assert_str_eq(links_of(&f, "meta/1.xml"), TO_S(100));
    ck_assert_str_eq(links_of(&f, "records/2.pdf"), "describedby " BASE "meta/2.xml -1");
    ck_assert_str_eq(links_of(&f, "other.txt"), "");
    ck_assert_str_eq(links_of(&f, "records/3.pdf"), "");
    ck_assert_str_eq(deps(&f, "records/2.pdf"), "meta/2.xml");
    ck_assert_str_eq(deps(&f, "records/3.pdf"), "");
    ck_assert_str_eq(relinked(&f), "meta/1.xml records/1.pdf records/2.pdf");
    ck_assert_int_eq(rs_journal_last_seq(f.j), seq);

    /* The same rules: nothing. */
    ck_assert_int_eq(rs_linkpass_start(f.st, f.j, ut_pool, "s", l, BASE, "A", &ran, &changed),
                     APR_SUCCESS);
    ck_assert_int_eq(ran, 0);
    ck_assert_int_eq(changed, 0);

    /* A mirror added: no row stores it (the renderer writes mirrors), so
     * no row changes even when the pass runs. */
    ck_assert_ptr_null(rs_links_add_mirror(l2, ut_pool, "http://mirror.example/s/", 0));
    ck_assert_int_eq(rs_linkpass_start(f.st, f.j, ut_pool, "s", l2, BASE, "B", &ran, &changed),
                     APR_SUCCESS);
    ck_assert_int_eq(ran, 1);
    ck_assert_int_eq(changed, 0);
    ck_assert_str_eq(links_of(&f, "other.txt"), "");
    ck_assert_str_eq(links_of(&f, "records/1.pdf"), TO_T(7));
    ck_assert_str_eq(relinked(&f), "");
    /* Then a mirror only, as no rules (its digest is ""): every link and
     * dependency goes. */
    l2 = ut_links();
    ck_assert_ptr_null(rs_links_add_mirror(l2, ut_pool, "http://mirror.example/s/", 0));
    ck_assert_int_eq(rs_linkpass_start(f.st, f.j, ut_pool, "s", l2, BASE, "", &ran, &changed),
                     APR_SUCCESS);
    ck_assert_int_eq(ran, 1);
    ck_assert_int_eq(changed, 3);
    ck_assert_str_eq(deps(&f, "records/2.pdf"), "");
    ck_assert_str_eq(links_of(&f, "records/1.pdf"), "");
    ck_assert_str_eq(links_of(&f, "other.txt"), "");
    ck_assert_str_eq(relinked(&f), "meta/1.xml records/1.pdf records/2.pdf");

    /* Rules removed: the same digest, nothing to do. */
    ck_assert_int_eq(rs_linkpass_start(f.st, f.j, ut_pool, "s", NULL, BASE, "", &ran, &changed),
                     APR_SUCCESS);
    ck_assert_int_eq(ran, 0);
    ck_assert_int_eq(changed, 0);
    ck_assert_int_eq(rs_journal_last_seq(f.j), seq);
    ck_assert_int_eq(f.ul.nerr, 0);
}
END_TEST

/* rs_scan's hooks on the keeper, as the watcher wires them. */
static apr_status_t hook_row(void *baton, rs_item_t *it, int was_listed)
{
    fx_t *f = baton;
    return rs_linkkeep_row(f->lk, f->st, it, was_listed);
}

static apr_status_t hook_done(void *baton, const char *dir, const char *name, int gone)
{
    fx_t *f = baton;
    return rs_linkkeep_done(f->lk, f->st, f->j, dir, name, gone, NULL);
}

/* The checks of the trees below: nothing named "private" is served; a
 * served file's type from its extension, encoding gzip for ".gz". */
static int check_media(void *baton, apr_pool_t *p, const char *relpath, int flags,
                       rs_scan_media_t *media)
{
    const char *dot = strrchr(relpath, '.');

    (void)baton;
    if (strstr(relpath, "private")) {
        return 0;
    }
    if (!(flags & RS_SCAN_CHECK_DIR) && dot) {
        media->type = !strcmp(dot, ".gz") ? "application/xml" : apr_pstrcat(p, "x/", dot + 1, NULL);
        media->encoding = !strcmp(dot, ".gz") ? "gzip" : NULL;
    }
    return 1;
}

/* A scan of root into f's store: hooks 1 through the keeper's hooks, 2
 * through the collection ls (as the watcher's baseline), 0 through none;
 * media: with check_media (else every file is served, without a type);
 * returns the scan's stats.fresh. */
static int scan_with(fx_t *f, const char *root, int hooks, rs_linkscan_t *ls, int media)
{
    rs_scan_opts_t o;
    rs_scan_stats_t st;

    memset(&o, 0, sizeof(o));
    o.set = "s";
    o.root = root;
    o.hashes = RS_HASH_MD5;
    o.cfg = "cfg";
    o.check = media ? check_media : NULL;
    o.log = &f->ul.logger;
    if (hooks == 1) {
        o.links_row = hook_row;
        o.links_done = hook_done;
        o.links_baton = f;
    }
    else if (hooks == 2) {
        o.links_scan = rs_linkscan_row;
        o.links_scan_baton = ls;
    }
    ck_assert_int_eq(rs_scan_set(f->st, &o, ut_pool, &st), APR_SUCCESS);
    return st.fresh;
}

static void scan(fx_t *f, const char *root, int hooks)
{
    scan_with(f, root, hooks, NULL, 0);
}

/* Through real scans of a tree (the first one's writes on the scan's
 * writer thread): whatever the order of the walk, the links end as the
 * rules and the tree say; a directory of targets vanishes, its sources
 * follow. */
START_TEST(through_scans)
{
    fx_t f;
    const char *root = ut_path(ut_tempdir("linkkeep"), "root");
    int i;

    fx_init(&f, describedby(0));
    ut_mkdir(root);
    ut_mkdir(ut_path(root, "records"));
    ut_mkdir(ut_path(root, "meta"));
    for (i = 0; i < 300; i++) {
        ut_write_str(ut_path(root, apr_psprintf(ut_pool, "records/%d.pdf", i)), "pdf");
        if (i % 2) {
            ut_write_str(ut_path(root, apr_psprintf(ut_pool, "meta/%d.xml", i)), "<x/>");
        }
    }
    scan(&f, root, 1);
    ck_assert_str_eq(links_of(&f, "records/1.pdf"), TO_T(4));
    ck_assert_str_eq(links_of(&f, "meta/1.xml"), TO_S(3));
    ck_assert_str_eq(links_of(&f, "records/2.pdf"), "describedby " BASE "meta/2.xml -1");
    ck_assert_str_eq(links_of(&f, "records/299.pdf"), "describedby " BASE "meta/299.xml 4");
    relinked(&f);
    ck_assert_int_eq(ut_rmtree(ut_path(root, "meta")), 0);
    scan(&f, root, 1);
    ck_assert_str_eq(links_of(&f, "records/1.pdf"), PLAIN);
    ck_assert_str_eq(links_of(&f, "records/299.pdf"), "describedby " BASE "meta/299.xml -1");
    ck_assert_str_eq(links_of(&f, "meta/1.xml"), "-");
    {
        /* The 150 sources of the targets that went, each once. */
        const char *r = relinked_last = relinked(&f);
        int n = 1;
        for (; *r; r++) {
            n += *r == ' ';
        }
        ck_assert_msg(n == 150, "%d: %s", n, relinked_last);
    }
}
END_TEST

/* Timing (no assertion on time): RS_LINKKEEP_TIMING=N builds a tree of N
 * files, 2/3 records/K.pdf and 1/3 meta/K.xml (a describedby rule and a
 * mirror), and times a set's first scan without the keeper, then with
 * it as the watcher runs a baseline (the walk hands its rows to a
 * collection, rs_linkscan_run after), then a change of one target
 * through the hooks.  Skipped without the variable. */
static double secs(apr_time_t t0)
{
    return (double)(apr_time_now() - t0) / 1e6;
}

/* A digest of every row's path and stored links, and of the set's
 * dependencies: what two versions of the pass must both write. */
static int digest_row(void *baton, const rs_item_t *it)
{
    apr_md5_update(baton, it->dir, strlen(it->dir) + 1);
    apr_md5_update(baton, it->name, strlen(it->name) + 1);
    apr_md5_update(baton, it->links ? it->links : "", it->links ? strlen(it->links) + 1 : 1);
    return 0;
}

static void digest_dep(void *baton, apr_pool_t *p, const char *const *c, int n)
{
    (void)p;
    (void)n;
    apr_md5_update(baton, c[0], strlen(c[0]) + 1);
    apr_md5_update(baton, c[1], strlen(c[1]) + 1);
}

static const char *digest_links(fx_t *f)
{
    apr_md5_ctx_t ctx;
    unsigned char d[APR_MD5_DIGESTSIZE];
    rs_db_stmt_t *s;
    const void *args[] = { "s" };
    char *hex = apr_palloc(ut_pool, 2 * APR_MD5_DIGESTSIZE + 1);
    int i;

    apr_md5_init(&ctx);
    ck_assert_int_eq(rs_inventory_each_all(f->st, "s", digest_row, &ctx), APR_SUCCESS);
    ck_assert_int_eq(rs_db_stmt(f->st,
                                "SELECT target, source FROM linkdep WHERE setname = %s "
                                "ORDER BY target, source",
                                &s),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_query(f->st, ut_pool, s, args, digest_dep, &ctx), APR_SUCCESS);
    apr_md5_final(d, &ctx);
    for (i = 0; i < APR_MD5_DIGESTSIZE; i++) {
        sprintf(hex + 2 * i, "%02x", d[i]);
    }
    return hex;
}

/* The rules of the collection's cases, in this order: a record and its
 * metadata, the metadata's compressed alternate (if-exists, a target
 * with an encoding, itself a source of nothing), a page canonical to its
 * record (a record is then a target too), a URL and an origin path
 * (need no lookup), a target never listed (denied), a URL for files no
 * other rule names (no mirror: whether mirrors are stored with the rows
 * is not the collection's concern). */
static rs_links_t *mixed_rules(void)
{
    rs_links_t *l = describedby(0);
    add(l, "alternate", "^meta/([0-9]+)\\.xml$", "meta/$1.xml.gz", 1);
    add(l, "canonical", "^html/([0-9]+)\\.html$", "records/$1.pdf", 0);
    add(l, "collection", "^records/", "http://example.org/c?x=1&y=2", 0);
    add(l, "profile", "^meta/([0-9]+)\\.xml$", "/profiles/$1", 0);
    add(l, "via", "^other/(.*)\\.txt$", "private/$1.txt", 0);
    add(l, "license", "^other/", "http://example.org/license", 0);
    return l;
}

/* A tree for mixed_rules under root: n records, metadata for every
 * second, a compressed copy for every fourth, a page for every third,
 * files no rule names, files that name a denied file, denied files. */
static void mixed_tree(const char *root, int n)
{
    static const char *const dirs[] = { "records", "meta", "html", "other", "private" };
    int i;

    ut_mkdir(root);
    for (i = 0; i < 5; i++) {
        ut_mkdir(ut_path(root, dirs[i]));
    }
    for (i = 0; i < n; i++) {
        ut_write_str(ut_path(root, apr_psprintf(ut_pool, "records/%d.pdf", i)),
                     apr_psprintf(ut_pool, "pdf %d", i));
        if (i % 2) {
            ut_write_str(ut_path(root, apr_psprintf(ut_pool, "meta/%d.xml", i)), "<x/>");
        }
        if (i % 4 == 1) {
            ut_write_str(ut_path(root, apr_psprintf(ut_pool, "meta/%d.xml.gz", i)), "gz");
        }
        if (i % 3 == 0) {
            ut_write_str(ut_path(root, apr_psprintf(ut_pool, "html/%d.html", i)), "<p/>");
        }
        ut_write_str(ut_path(root, apr_psprintf(ut_pool, "other/%d.dat", i)), "d");
        if (i % 5 == 0) {
            ut_write_str(ut_path(root, apr_psprintf(ut_pool, "other/%d.txt", i)), "t");
            ut_write_str(ut_path(root, apr_psprintf(ut_pool, "private/%d.txt", i)), "p");
        }
    }
}

/* A first scan resolved as the watcher did before the collection: the
 * walk without links, then the pass over the store.  Returns the digest
 * of the rows' links and the dependencies; *n: the rows it updated. */
static const char *store_pass(const char *root, rs_links_t *l, apr_int64_t *n)
{
    fx_t f;

    fx_init(&f, NULL);
    ck_assert_int_eq(scan_with(&f, root, 0, NULL, 1), 1);
    ck_assert_int_eq(rs_linkpass_run(f.st, NULL, ut_pool, "s", l, BASE, "fp", n), APR_SUCCESS);
    return digest_links(&f);
}

/* A first scan through a collection of bound max_bytes (0: the default)
 * into f, after `before` scans of root without hooks (a set that had
 * rows); *kept: the collection's rows after the scan; *n: the rows the
 * pass updated. */
static void collected_pass(fx_t *f, const char *root, rs_links_t *l, apr_size_t max_bytes,
                           int before, int *kept, apr_int64_t *n)
{
    rs_linkscan_t *ls = rs_linkscan_create(l, "s", BASE, "fp", max_bytes);
    const char *fp = NULL;
    int fresh;

    fx_init(f, NULL);
    for (; before > 0; before--) {
        scan_with(f, root, 0, NULL, 1);
    }
    ck_assert_ptr_nonnull(ls);
    fresh = scan_with(f, root, 2, ls, 1);
    *kept = rs_linkscan_kept(ls);
    ck_assert_int_eq(rs_linkscan_run(ls, f->st, fresh, n), APR_SUCCESS);
    rs_linkscan_destroy(ls);
    ck_assert_int_eq(rs_db_meta_get(f->st, ut_pool, "links:s", &fp), APR_SUCCESS);
    ck_assert_str_eq(fp, "fp");
    ck_assert_int_eq(f->ul.nerr, 0);
}

/* The collection's pass gives exactly the rows' links and dependencies of
 * the pass over the store, on a tree with every kind of rule, and
 * updates only the rows whose links the walk could not write (sources
 * and targets): the others were written with their links. */
START_TEST(collected_pass_is_the_store_pass)
{
    const char *root = ut_path(ut_tempdir("linkscan"), "root");
    rs_links_t *l = mixed_rules();
    const char *want;
    apr_int64_t n0 = 0, n1 = 0;
    fx_t f;
    int kept = 0;

    mixed_tree(root, 120);
    want = store_pass(root, l, &n0);
    collected_pass(&f, root, l, 0, 0, &kept, &n1);
    ck_assert_str_eq(digest_links(&f), want);
    /* 120 records, 60 metadata, 30 compressed, 40 pages, 24 other/.txt
     * (sources of a denied target); not the 120 other/.dat. */
    ck_assert_int_eq(kept, 120 + 60 + 30 + 40 + 24);
    ck_assert_int_eq(n0, 120 + 60 + 30 + 40 + 24 + 120);
    /* Written again: only rows of one directory whose partner in another
     * came after it (how many depends on the order of the walk). */
    ck_assert_int_lt(n1, kept);
    ck_assert_str_eq(links_of(&f, "meta/1.xml"),
                     "alternate " BASE "meta/1.xml.gz 2;profile http://example.org/profiles/1 -1;"
                     "describes " BASE "records/1.pdf 5");
    ck_assert_str_eq(links_of(&f, "meta/1.xml.gz"), "canonical " BASE "meta/1.xml 4");
    ck_assert_str_eq(links_of(&f, "other/5.txt"),
                     "via " BASE "private/5.txt -1;license http://example.org/license -1");
    ck_assert_str_eq(deps(&f, "records/3.pdf"), "meta/3.xml");
}
END_TEST

/* Past its bound the collection is dropped, and the pass over the store
 * gives the same; so it does after a scan of a set that had rows (the
 * walk wrote only what changed: its collection misses the other rows). */
START_TEST(collected_pass_falls_back)
{
    const char *root = ut_path(ut_tempdir("linkscan"), "root");
    rs_links_t *l = mixed_rules();
    const char *want;
    apr_int64_t n0 = 0, n1 = 0;
    fx_t f;
    int kept = 0;

    mixed_tree(root, 60);
    want = store_pass(root, l, &n0);
    collected_pass(&f, root, l, 4096, 0, &kept, &n1);
    ck_assert_int_eq(kept, -1);
    ck_assert_str_eq(digest_links(&f), want);
    /* Rows written with theirs by the walk: the other/.dat rows, and
     * those held before the collection was dropped. */
    ck_assert_int_le(n1, n0 - 60);

    collected_pass(&f, root, l, 0, 1, &kept, &n1);
    ck_assert_int_eq(kept, 0); /* nothing changed: no row written */
    ck_assert_str_eq(digest_links(&f), want);
    ck_assert_int_eq(n1, n0);
}
END_TEST

/* A row no rule can make a target and whose rules name no file of the
 * set is written with its final links by the walk, and nothing of it is
 * kept; a set of only such rows gives the pass nothing to update. */
START_TEST(collected_pass_keeps_no_other_row)
{
    const char *root = ut_path(ut_tempdir("linkscan"), "root");
    rs_links_t *l = mixed_rules();
    rs_linkscan_t *ls = rs_linkscan_create(l, "s", BASE, "fp", 0);
    apr_int64_t n = -1;
    fx_t f;
    int i;

    ut_mkdir(root);
    ut_mkdir(ut_path(root, "other"));
    for (i = 0; i < 50; i++) {
        ut_write_str(ut_path(root, apr_psprintf(ut_pool, "other/%d.dat", i)), "d");
    }
    fx_init(&f, NULL);
    ck_assert_int_eq(scan_with(&f, root, 2, ls, 1), 1);
    ck_assert_int_eq(rs_linkscan_kept(ls), 0);
    ck_assert_str_eq(links_of(&f, "other/7.dat"), "license http://example.org/license -1");
    ck_assert_int_eq(rs_linkscan_run(ls, f.st, 1, &n), APR_SUCCESS);
    ck_assert_int_eq(n, 0);
    rs_linkscan_destroy(ls);
    /* Rules that name no file of the set: no collection at all. */
    l = ut_links();
    add(l, "license", "^other/", "http://example.org/license", 0);
    ck_assert_ptr_null(rs_linkscan_create(l, "s", BASE, "fp", 0));
}
END_TEST

/* rs_scan_emit_fn of the tests that hand rows to a collection
 * themselves: the row into the store. */
static void emit_put(void *baton, const rs_item_t *it)
{
    ck_assert_int_eq(rs_inventory_put(((fx_t *)baton)->st, "s", it), APR_SUCCESS);
}

/* A row for a collection or the store: path, size (and mtime), listed. */
static rs_item_t test_row(const char *path, apr_int64_t size, int listed)
{
    rs_item_t it;

    memset(&it, 0, sizeof(it));
    split(path, &it.dir, &it.name);
    it.size = size;
    it.mtime_ns = 1700000000000000000LL + size;
    it.type = "x/y";
    it.hash[0] = apr_psprintf(ut_pool, "%032" APR_INT64_T_FMT, size);
    it.listed = listed;
    it.cfg = "cfg";
    return it;
}

/* Records and metadata in both directions, a page naming a record, a
 * compressed copy beside its metadata, a record without metadata,
 * metadata without a record, a row not listed, in three directories. */
static const char *const order_rows[] = { "records/1.pdf", "records/2.pdf", "records/4.pdf",
                                          "records/5.pdf", "meta/1.xml",    "meta/1.xml.gz",
                                          "meta/3.xml",    "meta/4.xml",    "html/1.html",
                                          "html/2.html",   "meta/5.xml" };

/* The rows handed to a collection in the order of idx (the walk's
 * directories one after the other), then the pass; *n: rows the pass
 * updated.  meta/5.xml is not listed. */
static const char *hand_in_order(rs_links_t *l, const int *idx, apr_int64_t *n)
{
    rs_linkscan_t *ls = rs_linkscan_create(l, "s", BASE, "fp", 0);
    fx_t f;
    int i;

    fx_init(&f, NULL);
    ck_assert_int_eq(rs_db_begin(f.st), APR_SUCCESS);
    for (i = 0; i < 11; i++) {
        const char *path = order_rows[idx[i]];
        rs_item_t it = test_row(path, 10 + idx[i], strcmp(path, "meta/5.xml") != 0);
        if (!it.listed || !rs_linkscan_row(ls, &it, emit_put, &f)) {
            emit_put(&f, &it);
        }
    }
    ck_assert_int_eq(rs_linkscan_row(ls, NULL, emit_put, &f), 0);
    ck_assert_int_eq(rs_db_commit(f.st), APR_SUCCESS);
    ck_assert_int_eq(rs_linkscan_run(ls, f.st, 1, n), APR_SUCCESS);
    rs_linkscan_destroy(ls);
    return digest_links(&f);
}

/* Whatever the order of the directories and of the rows within them,
 * the collection gives the links and dependencies of the pass over the
 * store; a row is written again only when a row it depends on came in a
 * later directory: none when every partner came before or beside it. */
START_TEST(collected_pass_any_order)
{
    static const int orders[][11] = {
        { 0, 1, 2, 3, 4, 5, 6, 7, 10, 8, 9 }, /* records, meta, html */
        { 9, 8, 10, 7, 6, 5, 4, 3, 2, 1, 0 }, /* html, meta, records */
        { 4, 10, 5, 6, 7, 8, 9, 3, 2, 1, 0 }, /* meta, html, records */
    };
    /* Rows written before a partner of another directory came: records
     * 1, 2 and 4 (their metadata, their page); metadata 1 and 4 and
     * pages 1 and 2 (their records), twice. */
    static const int rewritten[] = { 3, 4, 4 };
    rs_links_t *l = mixed_rules();
    const char *want;
    apr_int64_t n0 = 0, n;
    fx_t f;
    int i, o;

    /* The rows without links, then the pass over the store. */
    fx_init(&f, NULL);
    for (i = 0; i < 11; i++) {
        rs_item_t it = test_row(order_rows[i], 10 + i, strcmp(order_rows[i], "meta/5.xml") != 0);
        emit_put(&f, &it);
    }
    ck_assert_int_eq(rs_linkpass_run(f.st, NULL, ut_pool, "s", l, BASE, "fp", &n0), APR_SUCCESS);
    want = digest_links(&f);
    ck_assert_str_eq(links_of(&f, "records/1.pdf"),
                     "describedby " BASE "meta/1.xml 14;collection http://example.org/c?x=1&y=2 -1;"
                     "alternate " BASE "html/1.html 18");
    for (o = 0; o < 3; o++) {
        n = -1;
        ck_assert_str_eq(hand_in_order(l, orders[o], &n), want);
        ck_assert_msg(n == rewritten[o], "order %d: %d rows written again", o, (int)n);
    }
}
END_TEST

/* A record and its metadata in the same directory, in several
 * directories: every row is written once, with its final links. */
START_TEST(collected_pass_one_directory)
{
    const char *root = ut_path(ut_tempdir("linkscan"), "root");
    rs_links_t *l = ut_links();
    const char *want;
    apr_int64_t n0 = 0, n1 = -1;
    fx_t f;
    int i, kept = 0;

    add(l, "describedby", "^(.*)\\.pdf$", "$1.xml", 1);
    ut_mkdir(root);
    for (i = 0; i < 200; i++) {
        const char *d = ut_path(root, apr_psprintf(ut_pool, "d%d", i % 7));
        if (i < 7) {
            ut_mkdir(d);
        }
        ut_write_str(ut_path(d, apr_psprintf(ut_pool, "%d.pdf", i)), "pdf");
        if (i % 3) {
            ut_write_str(ut_path(d, apr_psprintf(ut_pool, "%d.xml", i)), "<x/>");
        }
        ut_write_str(ut_path(d, apr_psprintf(ut_pool, "%d.txt", i)), "t");
    }
    want = store_pass(root, l, &n0);
    collected_pass(&f, root, l, 0, 0, &kept, &n1);
    ck_assert_str_eq(digest_links(&f), want);
    ck_assert_int_eq(kept, 200 + 133);
    ck_assert_int_eq(n0, 2 * 133);
    ck_assert_int_eq(n1, 0);
    ck_assert_str_eq(links_of(&f, "d1/1.pdf"), "describedby " BASE "d1/1.xml 4");
    ck_assert_str_eq(links_of(&f, "d1/1.xml"), "describes " BASE "d1/1.pdf 3");
}
END_TEST

START_TEST(timing)
{
    const char *env = getenv("RS_LINKKEEP_TIMING");
    const char *dir, *root, *digest;
    rs_links_t *l;
    fx_t f0, f1;
    rs_linkscan_t *ls;
    apr_int64_t n = 0;
    apr_time_t t0;
    double s0, s1, p1, live0, live1;
    int i, total = env ? atoi(env) : 0, runs, fresh;

    if (total <= 0) {
        return; /* timing only when asked */
    }
    dir = ut_tempdir("linkkeep");
    root = ut_path(dir, "root");
    ut_mkdir(root);
    ut_mkdir(ut_path(root, "records"));
    ut_mkdir(ut_path(root, "meta"));
    for (i = 0; i < total * 2 / 3; i++) {
        /* Fixed times: two trees give the same links. */
        const char *r = ut_path(root, apr_psprintf(ut_pool, "records/%d.pdf", i));
        const char *m = ut_path(root, apr_psprintf(ut_pool, "meta/%d.xml", i));
        ut_write_str(r, "pdf");
        ck_assert_int_eq(apr_file_mtime_set(r, apr_time_from_sec(1700000000 + i), ut_pool),
                         APR_SUCCESS);
        if (i % 2) {
            ut_write_str(m, "<x/>");
            ck_assert_int_eq(apr_file_mtime_set(m, apr_time_from_sec(1700000000 + i), ut_pool),
                             APR_SUCCESS);
        }
    }
    l = ut_links();
    add(l, "describedby", "^records/(.*)\\.pdf$", "meta/$1.xml", 0);
    ck_assert_ptr_null(rs_links_add_mirror(l, ut_pool, "http://mirror.example/s/", 0));
    runs = getenv("RS_LINKKEEP_RUNS") ? atoi(getenv("RS_LINKKEEP_RUNS")) : 3;
    for (; runs > 0; runs--) {
        /* Without links, then with, interleaved: fresh stores. */
        fx_init(&f0, NULL);
        t0 = apr_time_now();
        scan(&f0, root, 0);
        s0 = secs(t0);
        fx_init(&f1, l);
        ls = rs_linkscan_create(l, "s", BASE, "fp", 0);
        t0 = apr_time_now();
        fresh = scan_with(&f1, root, 2, ls, 0);
        s1 = secs(t0);
        t0 = apr_time_now();
        ck_assert_int_eq(rs_linkscan_run(ls, f1.st, fresh, &n), APR_SUCCESS);
        p1 = secs(t0);
        rs_linkscan_destroy(ls);
        ck_assert_str_eq(links_of(&f1, "records/1.pdf"), "describedby " BASE "meta/1.xml 4");
        digest = digest_links(&f1);
        /* A change of one target (its source relinked), 200 times. */
        t0 = apr_time_now();
        for (i = 0; i < 200; i++) {
            write_row(&f0, "meta/1.xml", 10 + i, 1);
        }
        live0 = secs(t0) / 200;
        t0 = apr_time_now();
        for (i = 0; i < 200; i++) {
            write_row(&f1, "meta/1.xml", 10 + i, 1);
        }
        live1 = secs(t0) / 200;
        fprintf(stderr,
                "linkkeep timing %d files: first scan %.2f s without links, %.2f s + pass "
                "%.2f s = %.2f s with (%" APR_INT64_T_FMT
                " rows, links and deps md5 %s); a target's "
                "change %.0f us without, %.0f us with\n",
                total, s0, s1, p1, s1 + p1, n, digest, live0 * 1e6, live1 * 1e6);
    }
}
END_TEST

Suite *linkkeep_suite(void)
{
    Suite *s = suite_create("rs_linkkeep");
    TCase *tc = ut_tcase("linkkeep", 30);
    tcase_add_test(tc, target_appears_changes_disappears);
    tcase_add_test(tc, source_changes_and_goes);
    tcase_add_test(tc, if_exists);
    tcase_add_test(tc, rules_free_set_untouched);
    tcase_add_test(tc, rules_change_at_start);
    tcase_add_test(tc, through_scans);
    tcase_add_test(tc, collected_pass_is_the_store_pass);
    tcase_add_test(tc, collected_pass_falls_back);
    tcase_add_test(tc, collected_pass_keeps_no_other_row);
    tcase_add_test(tc, collected_pass_any_order);
    tcase_add_test(tc, collected_pass_one_directory);
    suite_add_tcase(s, tc);
    tc = ut_tcase("linkkeep_timing", 3600);
    tcase_add_test(tc, timing);
    suite_add_tcase(s, tc);
    return s;
}
