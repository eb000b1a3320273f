/* SPDX-License-Identifier: Apache-2.0 */
/* unit.h - shared helpers of the engine unit tests (Check).
 *
 * Every test runs with a fresh APR pool (ut_pool) created by the checked
 * fixture ut_setup.  Files go below ut_tmproot, a directory made by the
 * runner with mkdtemp() and removed by it after the run, so nothing is left
 * behind even when a test fails in a forked child.
 */
#ifndef UNIT_H
#define UNIT_H

#include <stddef.h>
#include <check.h>
#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>
#include <libxml/tree.h>
#include "rs_db.h"
#include "rs_jobthread.h"
#include "rs_log.h"
#include "rs_scanopts.h"

/* Set by the runner. */
extern const char *ut_tmproot;
extern int ut_forking; /* tests run in forked children (CK_FORK) */

/* Per-test pool. */
extern apr_pool_t *ut_pool;
void ut_setup(void);
void ut_teardown(void);
/* A test case with the per-test pool fixture and a timeout. */
TCase *ut_tcase(const char *name, double timeout);

/* The state store's driver of the running test: "sqlite3", or "pgsql"
 * in the test cases that the runner builds a second time for
 * PostgreSQL (when RS_TEST_PG holds a DSN: ut_pg_dsn).  A suite whose
 * tests open stores through ut_store runs on both; while the runner
 * builds the PostgreSQL copy, ut_pg_building is set: ut_tcase then names
 * the case "<name>-pg" and makes ut_driver "pgsql" in its tests, and the
 * suite leaves out the cases that are SQLite's only (files, WAL,
 * backup). */
extern const char *ut_driver;
extern const char *ut_pg_dsn;
extern int ut_pg_building;
int ut_pg(void); /* ut_driver is "pgsql" */

/* The DSN of the store named by the file path for ut_driver: SQLite's is
 * the path; PostgreSQL's is ut_pg_dsn with a schema of its own (created
 * if missing), the same for the same path, so a test's stores are fresh
 * and independent and a path opens its store again. */
const char *ut_store(const char *path);

/* The store at path (ut_store) opened with its schema (rs_schema_open),
 * failing the test when it cannot be; ut_store_new: a fresh state.db in
 * a new directory named after tag. */
rs_db_t *ut_store_open(const char *path);
rs_db_t *ut_store_new(const char *tag);

/* Run sql on a connection of its own to dsn (libpq), failing the test
 * when it fails; the first column of its first row (in ut_pool), or
 * NULL. */
char *ut_pg_exec(const char *dsn, const char *sql);

/* Suites, one per engine unit. */
Suite *time_suite(void);
Suite *setconf_suite(void);
Suite *range_suite(void);
Suite *uri_suite(void);
Suite *path_suite(void);
Suite *hash_suite(void);
Suite *glob_suite(void);
Suite *xml_suite(void);
Suite *db_suite(void);
Suite *dbdriver_suite(void);
Suite *schema_suite(void);
Suite *linkkeep_suite(void);
Suite *statedir_suite(void);
Suite *inventory_suite(void);
Suite *invbatch_suite(void);
Suite *scan_suite(void);
Suite *snapshot_suite(void);
Suite *journal_suite(void);
Suite *listen_suite(void); /* PostgreSQL only */
Suite *changelist_suite(void);
Suite *scan_changes_suite(void);
Suite *scan_access_suite(void);
Suite *ring_suite(void);
Suite *watch_suite(void);
Suite *file_suite(void);
Suite *generation_suite(void);
Suite *entry_suite(void);
Suite *parse_suite(void);
Suite *confval_suite(void);
Suite *mounts_suite(void);
Suite *zip_suite(void);
Suite *hubreq_suite(void);
Suite *zipout_suite(void);
Suite *partition_suite(void);
Suite *dump_suite(void);
Suite *capture_suite(void);
Suite *cdump_suite(void);
Suite *notify_suite(void);
Suite *notifyseal_suite(void);
Suite *deliverpolicy_suite(void);
Suite *delivery_suite(void);
Suite *notifydigest_suite(void);
Suite *deliverstat_suite(void);
Suite *scanrate_suite(void);
Suite *hubsub_suite(void);
Suite *hubflow_suite(void);
Suite *websub_suite(void);
Suite *json_suite(void);
Suite *setlock_suite(void);
Suite *lease_suite(void);
Suite *blob_suite(void);
Suite *followtopic_suite(void);
Suite *followcdump_suite(void);
Suite *followdump_suite(void);
Suite *hubqueue_suite(void);
Suite *hubroute_suite(void);
Suite *fence_suite(void);
Suite *verifypass_suite(void);
Suite *storeretry_suite(void);
Suite *massdel_suite(void);
Suite *links_suite(void);
Suite *listclose_suite(void);
Suite *reconcile_suite(void);
Suite *aboveroot_suite(void);
Suite *statecheck_suite(void);
Suite *jobthread_suite(void);
Suite *withdrawq_suite(void);
Suite *hubintake_suite(void);
Suite *hashlane_suite(void);
Suite *progress_suite(void);
Suite *snapsched_suite(void);
Suite *dumpsched_suite(void);
Suite *dumprun_suite(void);
Suite *cdumprun_suite(void);

/* Whether the tests run under AddressSanitizer (memory figures then
 * include its quarantine and shadow). */
#if defined(__SANITIZE_ADDRESS__)
#define ut_sanitized() 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ut_sanitized() 1
#endif
#endif
#ifndef ut_sanitized
#define ut_sanitized() 0
#endif

/* Peak resident memory of this process (VmHWM), in bytes.  Meaningful
 * for one test only when tests run in forked children (ut_forking) and
 * not under AddressSanitizer (ut_sanitized). */
long long ut_vm_hwm(void);

/* Files. */
char *ut_tempdir(const char *tag);               /* fresh dir below ut_tmproot */
char *ut_path(const char *dir, const char *rel); /* dir "/" rel */
void ut_write(const char *path, const void *data, size_t len);
/* n bytes of every value, varied by seed, written as dir/name with mtime
 * mt (µs). */
void ut_write_seeded(const char *dir, const char *name, apr_size_t n, int seed, apr_time_t mt);
/* a and b hold the same bytes and have the same mtime. */
void ut_same_file(const char *a, const char *b);
void ut_write_str(const char *path, const char *s);
void ut_mkdir(const char *path);
char *ut_read(const char *path, size_t *len); /* NUL-terminated, ut_pool */
int ut_exists(const char *path);
int ut_rmtree(const char *path);

/* A real HTTP peer: t/unit/websub_server.py (see its header) started on
 * 127.0.0.1; returns its base URL "http://127.0.0.1:PORT" and sets
 * *logfile to the file it logs every request to.  ut_peer_stop ends it. */
char *ut_peer_start(char **logfile);
void ut_peer_stop(void);

/* A job machinery for the store of the state directory dir (store: the
 * caller's connection for inline jobs), stopped (its thread joined, its
 * connection closed) before ut_pool goes. */
rs_jobthread_t *ut_jobthread(const char *dir, rs_db_t *store, const rs_logger_t *log);

/* The inventory row of set for the file at path (dir/name below the
 * root), written with data: its md5, its stat, type text/plain, cfg "c";
 * size_delta != 0 makes the row describe another version than the file
 * holds. */
void ut_inventory_row(rs_db_t *db, const char *set, const char *dir, const char *name,
                      const char *path, const char *data, int size_delta, int listed);

/* Files stored for other nodes (rs_blob): path written with s and given
 * mtime mt (µs); path holds exactly s and has mtime mt; the store's rows
 * of set (files and chunks) are these; a fence (rs_db_fence_fn) that
 * refuses the set "gone" alone (another node writes it). */
void ut_write_at(const char *path, const char *s, apr_time_t mt);
void ut_holds_at(const char *path, const char *s, apr_time_t mt);
void ut_blob_counts(rs_db_t *db, const char *set, apr_int64_t files, apr_int64_t chunks);
apr_status_t ut_fence_gone(void *baton, rs_db_t *db, const char *set);

/* A logger that keeps every message. */
typedef struct ut_log_t {
    rs_logger_t logger;
    apr_array_header_t *msgs; /* char * "level: message" */
    int nerr, nwarn;
} ut_log_t;
rs_logger_t *ut_log_init(ut_log_t *ul);
int ut_log_count(const ut_log_t *ul, const char *needle);

/* Growing memory buffer used as an rs_xml sink. */
typedef struct ut_buf_t {
    char *data;
    size_t len, cap;
    int calls;
    int fail; /* non-zero: the sink reports an error */
} ut_buf_t;
int ut_buf_sink(void *baton, const char *buf, apr_size_t len);

/* An access check callback (rs_scan_check_fn's shape) that denies every
 * path containing the string baton and serves the rest, without a type. */
int ut_check_deny(void *baton, apr_pool_t *p, const char *relpath, int flags,
                  rs_scan_media_t *media);

/* XML inspection (libxml2 trees are freed by a ut_pool cleanup). */
xmlDocPtr ut_xml_parse(const char *data, size_t len);
xmlDocPtr ut_xml_parse_file(const char *path);
/* idx-th element child (0-based) of parent with namespace ns and local name;
 * NULL when there is none. */
xmlNodePtr ut_xml_child(xmlNodePtr parent, const char *ns, const char *name, int idx);
int ut_xml_count(xmlNodePtr parent, const char *ns, const char *name);
/* Attribute value (ut_pool copy) or NULL. */
const char *ut_xml_attr(xmlNodePtr n, const char *name);
/* Text content of the first child element ns:name (ut_pool copy) or NULL. */
const char *ut_xml_child_text(xmlNodePtr n, const char *ns, const char *name);
/* The rs:ln child with the given rel, or NULL. */
xmlNodePtr ut_xml_ln(xmlNodePtr parent, const char *rel);

/* Link rules (rs_links.h) matched by POSIX regexec: an empty rule set,
 * and a pattern compiled with REG_EXTENDED (freed with ut_pool) with its
 * number of groups. */
struct rs_links_t;
struct rs_links_t *ut_links(void);
void *ut_regex(const char *pattern, int *ngroups);

#define UT_NS_SM "http://www.sitemaps.org/schemas/sitemap/0.9"
#define UT_NS_RS "http://www.openarchives.org/rs/terms/"

#endif
