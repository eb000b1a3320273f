/* SPDX-License-Identifier: Apache-2.0 */
/* test_schema.c - rs_schema: the store's tables as the units name them,
 * and a set's rows in every table (rs-tool forget-set). */
#include <string.h>
#include <sqlite3.h>
#include <apr_strings.h>
#include "unit.h"
#include "rs_db.h"
#include "rs_hubqueue.h"
#include "rs_hubsub.h"
#include "rs_inventory.h"
#include "rs_journal.h"
#include "rs_lease.h"
#include "rs_linkdep.h"
#include "rs_notify.h"
#include "rs_schema.h"
#include "rs_blob.h"

static void get_n(void *baton, apr_pool_t *p, const char *const *cols, int n)
{
    (void)p;
    *(apr_int64_t *)baton = n > 0 && cols[0] ? apr_atoi64(cols[0]) : -1;
}

/* The rows of set in table t (-1: no such table). */
static apr_int64_t rows_of(rs_db_t *db, const char *t, const char *set)
{
    const void *args[] = { set };
    rs_db_stmt_t *s;
    apr_int64_t n = -1;
    int has = 0;

    ck_assert_int_eq(rs_db_has_table(db, t, &has), APR_SUCCESS);
    if (!has) {
        return -1;
    }
    ck_assert_int_eq(
        rs_db_prepare(
            db, apr_pstrcat(ut_pool, "SELECT COUNT(*) FROM ", t, " WHERE setname = %s", NULL), &s),
        APR_SUCCESS);
    ck_assert_int_eq(rs_db_query(db, ut_pool, s, args, get_n, &n), APR_SUCCESS);
    return n;
}

/* Rows of set in every table, written through the units that own them:
 * inventory, journal records and a closed list, the journal's start, a
 * relinked path, a link dependency, a change notification, a hub
 * subscription; and meta keys of the set. */
static void fill(rs_db_t *db, const char *set)
{
    rs_journal_t *j;
    rs_notify_t *n;
    rs_record_t r;
    rs_item_t it;
    rs_hubsub_t x;
    rs_changelist_t cl;
    apr_time_t at;
    apr_array_header_t *deps = apr_array_make(ut_pool, 1, sizeof(const char *));

    ck_assert_int_eq(rs_journal_open(&j, db, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_notify_open(&n, db, j, ut_pool), APR_SUCCESS);
    memset(&it, 0, sizeof(it));
    it.dir = "";
    it.name = "f";
    it.listed = 1;
    ck_assert_int_eq(rs_inventory_put(db, set, &it), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_begin_set(j, set, apr_time_now() - 10), APR_SUCCESS);
    memset(&r, 0, sizeof(r));
    r.dir = "";
    r.name = "f";
    r.change = RS_CHANGE_CREATED;
    ck_assert_int_eq(rs_journal_append(j, set, &r), APR_SUCCESS);
    ck_assert_int_eq(rs_notify_extend(n, set, &r, 100), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_close(j, ut_pool, set, -1, 0, apr_time_now() + 1, &cl),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_journal_mark(j, set, &at), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_relink(j, set, "", "f"), APR_SUCCESS);
    APR_ARRAY_PUSH(deps, const char *) = "g";
    ck_assert_int_eq(rs_linkdep_add(db, set, "f", deps), APR_SUCCESS);
    memset(&x, 0, sizeof(x));
    x.set = set;
    x.topic = RS_NOTIFY_CHANGE;
    x.url = "http://sub.example/cb";
    x.lease_until = apr_time_now() + apr_time_from_sec(60);
    ck_assert_int_eq(rs_hubsub_put(db, &x, NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_db_meta_put(db, apr_pstrcat(ut_pool, "snapshot-gen:", set, NULL), "3"),
                     APR_SUCCESS);
    {
        rs_lease_t l = { set, "n", rs_lease_token(ut_pool), apr_time_from_sec(60), 0 };
        int held = 0;
        ck_assert_int_eq(rs_lease_take(db, &l, &held), APR_SUCCESS);
        ck_assert_int_eq(held, 1);
    }
    {
        const char *dir = ut_tempdir("schema-blob");
        ut_write_str(ut_path(dir, "f"), "x");
        ck_assert_int_eq(rs_db_begin(db), APR_SUCCESS);
        ck_assert_int_eq(rs_blob_put(db, ut_pool, set, "snap", 1, dir, NULL, NULL, NULL),
                         APR_SUCCESS);
        ck_assert_int_eq(rs_db_commit(db), APR_SUCCESS);
    }
    ck_assert_int_eq(rs_hubqueue_put(db, set, "rs-hubreq 2\n", "n", 1), APR_SUCCESS);
}

/* Every table the units create is named, and nothing else: after a
 * migration, the database's tables are these and meta. */
START_TEST(tables_are_the_units)
{
    static const char *const want[] = {
        "inventory",     "journal",      "changelists", "journal_sets", "relinked",
        "notifications", "notify_dests", "linkdep",     "leases",       "blobfiles",
        "blobchunks",    "hub_queue",    NULL
    };
    apr_array_header_t *t = rs_schema_tables(ut_pool);
    rs_db_t *db = ut_store_new("schema");
    rs_db_stmt_t *s;
    apr_int64_t n = 0;
    int i, has;

    ck_assert_int_eq(t->nelts, 12);
    for (i = 0; want[i]; i++) {
        ck_assert_str_eq(APR_ARRAY_IDX(t, i, const char *), want[i]);
        ck_assert_int_eq(rs_db_has_table(db, want[i], &has), APR_SUCCESS);
        ck_assert_int_eq(has, 1);
    }
    ck_assert_int_eq(rs_db_prepare(db,
                                   ut_pg() ? "SELECT COUNT(*) FROM pg_tables WHERE schemaname = "
                                             "current_schema()"
                                           : "SELECT COUNT(*) FROM sqlite_master WHERE type = "
                                             "'table'",
                                   &s),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_query(db, ut_pool, s, NULL, get_n, &n), APR_SUCCESS);
    ck_assert_int_eq(n, 13);
}
END_TEST

/* forget-set: every row of the set in every table, and its meta keys,
 * go; the other set keeps all of its. */
START_TEST(forget_set_every_table)
{
    apr_array_header_t *t = rs_schema_tables(ut_pool);
    rs_db_t *db = ut_store_new("schema");
    apr_int64_t rows = -1;
    const char *v;
    int i, any = -1;

    fill(db, "a");
    fill(db, "b");
    ck_assert_int_eq(rs_schema_set_exists(db, ut_pool, "a", &any), APR_SUCCESS);
    ck_assert_int_eq(any, 1);
    ck_assert_int_eq(rs_schema_set_exists(db, ut_pool, "c", &any), APR_SUCCESS);
    ck_assert_int_eq(any, 0);
    for (i = 0; i < t->nelts; i++) {
        ck_assert_int_eq(rows_of(db, APR_ARRAY_IDX(t, i, const char *), "a"), 1);
    }
    ck_assert_int_eq(rs_db_begin(db), APR_SUCCESS);
    ck_assert_int_eq(rs_schema_forget_set(db, ut_pool, "a", &rows), APR_SUCCESS);
    ck_assert_int_eq(rs_db_commit(db), APR_SUCCESS);
    /* a row in each of the twelve tables, journal-mark:a, snapshot-gen:a */
    ck_assert_int_eq(rows, 14);
    for (i = 0; i < t->nelts; i++) {
        ck_assert_int_eq(rows_of(db, APR_ARRAY_IDX(t, i, const char *), "a"), 0);
        ck_assert_int_eq(rows_of(db, APR_ARRAY_IDX(t, i, const char *), "b"), 1);
    }
    ck_assert_int_eq(rs_db_meta_get(db, ut_pool, "snapshot-gen:a", &v), APR_SUCCESS);
    ck_assert_ptr_null(v);
    ck_assert_int_eq(rs_db_meta_get(db, ut_pool, "snapshot-gen:b", &v), APR_SUCCESS);
    ck_assert_str_eq(v, "3");
    ck_assert_int_eq(rs_schema_set_exists(db, ut_pool, "a", &any), APR_SUCCESS);
    ck_assert_int_eq(any, 0);
    ck_assert_int_eq(rs_schema_set_exists(db, ut_pool, "b", &any), APR_SUCCESS);
    ck_assert_int_eq(any, 1);
}
END_TEST

/* Rolled back, the forgetting leaves every row. */
START_TEST(forget_set_rolled_back)
{
    rs_db_t *db = ut_store_new("schema");
    apr_int64_t rows = 0;

    fill(db, "a");
    ck_assert_int_eq(rs_db_begin(db), APR_SUCCESS);
    ck_assert_int_eq(rs_schema_forget_set(db, ut_pool, "a", &rows), APR_SUCCESS);
    ck_assert_int_eq(rs_db_rollback(db), APR_SUCCESS);
    ck_assert_int_eq(rows_of(db, "inventory", "a"), 1);
    ck_assert_int_eq(rows_of(db, "notify_dests", "a"), 1);
}
END_TEST

/* Run sql on the SQLite database at path, behind the store's back. */
static void sql_exec(const char *path, const char *sql)
{
    sqlite3 *c = NULL;

    ck_assert_int_eq(sqlite3_open(path, &c), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(c, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(c);
}

/* A store of an older schema, opened as it is, lacks the outbox's
 * tables: the others are searched and emptied, the missing ones
 * skipped. */
START_TEST(forget_set_older_schema)
{
    const char *path = ut_path(ut_tempdir("schema"), "state.db");
    apr_int64_t rows = 0;
    rs_db_t *db;
    int any = 0;

    sql_exec(path, "CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT);"
                   "INSERT INTO meta VALUES ('schema-version', '1'),"
                   " ('snapshot-gen:a', '1');"
                   "CREATE TABLE inventory (setname TEXT, dir TEXT, name TEXT);"
                   "INSERT INTO inventory VALUES ('a', '', 'f'), ('b', '', 'g');"
                   "CREATE TABLE journal_sets (setname TEXT, started BIGINT,"
                   " open_id BIGINT);"
                   "INSERT INTO journal_sets VALUES ('a', 1, 1);");
    ck_assert_int_eq(rs_schema_open_ex(&db, ut_pool, "sqlite3", path, RS_DB_AS_IS, NULL, NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_schema_version(db), 1);
    ck_assert_int_eq(rs_schema_set_exists(db, ut_pool, "a", &any), APR_SUCCESS);
    ck_assert_int_eq(any, 1);
    ck_assert_int_eq(rs_schema_forget_set(db, ut_pool, "a", &rows), APR_SUCCESS);
    ck_assert_int_eq(rows, 3);
    ck_assert_int_eq(rows_of(db, "inventory", "a"), 0);
    ck_assert_int_eq(rows_of(db, "inventory", "b"), 1);
    ck_assert_int_eq(rows_of(db, "notifications", "a"), -1);
}
END_TEST

/* rs_inventory_each_fn: the encoding of the row (or "none") into the
 * array baton. */
static int note_encoding(void *baton, const rs_item_t *it)
{
    APR_ARRAY_PUSH((apr_array_header_t *)baton, const char *) =
        it->encoding ? apr_pstrdup(ut_pool, it->encoding) : "none";
    return 0;
}

/* A new store at path with the listed row it (closed again). */
static void store_with_row(const char *path, const rs_item_t *it)
{
    apr_pool_t *p;
    rs_db_t *db;

    apr_pool_create(&p, ut_pool);
    ck_assert_int_eq(rs_schema_open(&db, p, "sqlite3", path, NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_put(db, "s", it), APR_SUCCESS);
    apr_pool_destroy(p); /* closes the store */
}

/* Journal a creation of d/a.pdf in set with the encoded links given. */
static void append_created(rs_journal_t *j, const char *set, const char *links)
{
    rs_record_t r;

    memset(&r, 0, sizeof(r));
    r.dir = "d";
    r.name = "a.pdf";
    r.change = RS_CHANGE_CREATED;
    r.links = links;
    ck_assert_int_eq(rs_journal_append(j, set, &r), APR_SUCCESS);
}

/* A store of schema version 5 (no content coding) opened as it is, as
 * rs-tool does before the module migrated it: every read of the
 * inventory works and gives no encoding; migrated, it keeps encodings. */
START_TEST(inventory_reads_before_version_6)
{
    const char *path = ut_path(ut_tempdir("schema"), "state.db");
    apr_array_header_t *seen = apr_array_make(ut_pool, 4, sizeof(const char *));
    apr_hash_t *dir = NULL;
    rs_item_t it, *got = NULL;
    rs_db_t *db;

    memset(&it, 0, sizeof(it));
    it.dir = "";
    it.name = "a.gz";
    it.listed = 1;
    it.type = "application/gzip";
    store_with_row(path, &it);
    sql_exec(path, "ALTER TABLE inventory DROP COLUMN encoding;"
                   "ALTER TABLE journal DROP COLUMN encoding;"
                   "ALTER TABLE inventory DROP COLUMN links;"
                   "ALTER TABLE journal DROP COLUMN links;"
                   "DROP TABLE relinked; DROP TABLE linkdep;"
                   "UPDATE meta SET v = '5' WHERE k = 'schema-version';");

    ck_assert_int_eq(rs_schema_open_ex(&db, ut_pool, "sqlite3", path, RS_DB_READONLY, NULL, NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_schema_version(db), 5);
    ck_assert_int_eq(rs_inventory_get(db, ut_pool, "s", "", "a.gz", &got), APR_SUCCESS);
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got->type, "application/gzip");
    ck_assert_ptr_null(got->encoding);
    ck_assert_int_eq(rs_inventory_dir_load(db, ut_pool, "s", "", &dir), APR_SUCCESS);
    ck_assert_int_eq(apr_hash_count(dir), 1);
    ck_assert_int_eq(rs_inventory_each_all(db, "s", note_encoding, seen), APR_SUCCESS);
    ck_assert_int_eq(
        rs_inventory_each(db, "s", NULL, NULL, 10, RS_INVENTORY_ROW, note_encoding, seen),
        APR_SUCCESS);
    ck_assert_int_eq(
        rs_inventory_each(db, "s", NULL, NULL, 10, RS_INVENTORY_LISTING, note_encoding, seen),
        APR_SUCCESS);
    ck_assert_str_eq(apr_array_pstrcat(ut_pool, seen, ' '), "none none none");

    ck_assert_int_eq(rs_schema_open(&db, ut_pool, "sqlite3", path, NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_db_schema_version(db), RS_SCHEMA_VERSION);
    it.encoding = "gzip";
    ck_assert_int_eq(rs_inventory_put(db, "s", &it), APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_get(db, ut_pool, "s", "", "a.gz", &got), APR_SUCCESS);
    ck_assert_str_eq(got->encoding, "gzip");
}
END_TEST

/* A store of schema version 6 (no links, no relinked paths, no link
 * dependencies): opened as it is, every read of the inventory works and
 * gives no links; opened by the module, it is migrated to version 7,
 * keeps its rows, and rows and records then keep their links. */
START_TEST(version_6_migrates_to_7)
{
    const char *path = ut_path(ut_tempdir("schema"), "state.db");
    apr_array_header_t *recs, *deps;
    apr_hash_t *dir = NULL;
    rs_item_t it, *got = NULL;
    rs_journal_t *j;
    rs_db_t *db;
    int has = 1;

    memset(&it, 0, sizeof(it));
    it.dir = "d";
    it.name = "a.pdf";
    it.listed = 1;
    it.encoding = "gzip";
    store_with_row(path, &it);
    sql_exec(path, "ALTER TABLE inventory DROP COLUMN links;"
                   "ALTER TABLE journal DROP COLUMN links;"
                   "DROP TABLE relinked; DROP TABLE linkdep;"
                   "UPDATE meta SET v = '6' WHERE k = 'schema-version';");

    ck_assert_int_eq(rs_schema_open_ex(&db, ut_pool, "sqlite3", path, RS_DB_READONLY, NULL, NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_schema_version(db), 6);
    ck_assert_int_eq(rs_inventory_get(db, ut_pool, "s", "d", "a.pdf", &got), APR_SUCCESS);
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got->encoding, "gzip");
    ck_assert_ptr_null(got->links);
    ck_assert_int_eq(rs_inventory_dir_load(db, ut_pool, "s", "d", &dir), APR_SUCCESS);
    ck_assert_int_eq(apr_hash_count(dir), 1);
    ck_assert_int_eq(rs_db_has_table(db, "linkdep", &has), APR_SUCCESS);
    ck_assert_int_eq(has, 0);

    ck_assert_int_eq(rs_schema_open(&db, ut_pool, "sqlite3", path, NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_db_schema_version(db), RS_SCHEMA_VERSION);
    ck_assert_int_eq(rs_db_has_table(db, "linkdep", &has), APR_SUCCESS);
    ck_assert_int_eq(has, 1);
    ck_assert_int_eq(rs_db_has_table(db, "relinked", &has), APR_SUCCESS);
    ck_assert_int_eq(has, 1);
    ck_assert_int_eq(rs_inventory_get(db, ut_pool, "s", "d", "a.pdf", &got), APR_SUCCESS);
    ck_assert_str_eq(got->encoding, "gzip");
    ck_assert_ptr_null(got->links);
    it.links = "L1";
    ck_assert_int_eq(rs_inventory_put(db, "s", &it), APR_SUCCESS);
    ck_assert_int_eq(rs_inventory_get(db, ut_pool, "s", "d", "a.pdf", &got), APR_SUCCESS);
    ck_assert_str_eq(got->links, "L1");
    ck_assert_int_eq(rs_journal_open(&j, db, ut_pool), APR_SUCCESS);
    append_created(j, "s", "L1");
    ck_assert_int_eq(rs_journal_records(j, ut_pool, "s", 1, -1, 10, &recs), APR_SUCCESS);
    ck_assert_int_eq(recs->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(recs, 0, rs_record_t).links, "L1");
    ck_assert_int_eq(rs_linkdep_sources(db, ut_pool, "s", "d/a.xml", &deps), APR_SUCCESS);
    ck_assert_int_eq(deps->nelts, 0);
}
END_TEST

/* A store of schema version 7, whose records' links may hold the links of
 * mirrors (since rendered from the configuration, never stored): opened
 * as it is, its records keep their links; opened by the module, it is
 * migrated to version 8 and every record has lost its links, while the
 * inventory's stay for the watcher's start pass to resolve again (the
 * rules' digest changed with the stored form); records written then keep
 * theirs. */
START_TEST(version_7_migrates_to_8)
{
    const char *path = ut_path(ut_tempdir("schema"), "state.db");
    apr_array_header_t *recs;
    apr_pool_t *p;
    rs_item_t it, *got = NULL;
    rs_journal_t *j;
    rs_db_t *db;
    int i;

    memset(&it, 0, sizeof(it));
    it.dir = "d";
    it.name = "a.pdf";
    it.listed = 1;
    it.links = "L1";
    store_with_row(path, &it);
    apr_pool_create(&p, ut_pool);
    ck_assert_int_eq(rs_schema_open(&db, p, "sqlite3", path, NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_open(&j, db, p), APR_SUCCESS);
    append_created(j, "s", "L1");
    append_created(j, "t", "L1");
    apr_pool_destroy(p); /* closes the store */
    sql_exec(path, "UPDATE meta SET v = '7' WHERE k = 'schema-version';");

    ck_assert_int_eq(rs_schema_open_ex(&db, ut_pool, "sqlite3", path, RS_DB_READONLY, NULL, NULL),
                     APR_SUCCESS);
    ck_assert_int_eq(rs_db_schema_version(db), 7);
    ck_assert_int_eq(rs_journal_open(&j, db, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(rs_journal_records(j, ut_pool, "s", 1, -1, 10, &recs), APR_SUCCESS);
    ck_assert_int_eq(recs->nelts, 1);
    ck_assert_str_eq(APR_ARRAY_IDX(recs, 0, rs_record_t).links, "L1");

    ck_assert_int_eq(rs_schema_open(&db, ut_pool, "sqlite3", path, NULL), APR_SUCCESS);
    ck_assert_int_eq(rs_db_schema_version(db), RS_SCHEMA_VERSION);
    ck_assert_int_ge(RS_SCHEMA_VERSION, 8);
    ck_assert_int_eq(rs_journal_open(&j, db, ut_pool), APR_SUCCESS);
    for (i = 0; i < 2; i++) {
        ck_assert_int_eq(rs_journal_records(j, ut_pool, i ? "t" : "s", 1, -1, 10, &recs),
                         APR_SUCCESS);
        ck_assert_int_eq(recs->nelts, 1);
        ck_assert_ptr_null(APR_ARRAY_IDX(recs, 0, rs_record_t).links);
    }
    ck_assert_int_eq(rs_inventory_get(db, ut_pool, "s", "d", "a.pdf", &got), APR_SUCCESS);
    ck_assert_str_eq(got->links, "L1");
    append_created(j, "s", "L2");
    ck_assert_int_eq(rs_journal_records(j, ut_pool, "s", 1, -1, 10, &recs), APR_SUCCESS);
    ck_assert_int_eq(recs->nelts, 2);
    ck_assert_str_eq(APR_ARRAY_IDX(recs, 1, rs_record_t).links, "L2");
}
END_TEST

Suite *schema_suite(void)
{
    Suite *s = suite_create("schema");
    TCase *tc = ut_tcase("schema", 30);
    tcase_add_test(tc, tables_are_the_units);
    tcase_add_test(tc, forget_set_every_table);
    tcase_add_test(tc, forget_set_rolled_back);
    suite_add_tcase(s, tc);
    if (ut_pg_building) {
        return s;
    }
    /* SQLite's files of older versions. */
    tc = ut_tcase("schema-sqlite", 30);
    tcase_add_test(tc, forget_set_older_schema);
    tcase_add_test(tc, inventory_reads_before_version_6);
    tcase_add_test(tc, version_6_migrates_to_7);
    tcase_add_test(tc, version_7_migrates_to_8);
    suite_add_tcase(s, tc);
    return s;
}
