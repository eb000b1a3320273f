/* SPDX-License-Identifier: Apache-2.0 */
/* util.c - helpers shared by the unit tests, see unit.h */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <apr_md5.h>
#include <apr_strings.h>
#include <apr_time.h>
#include <libpq-fe.h>
#include <regex.h>
#include <libxml/parser.h>
#include "rs_blob.h"
#include "rs_hash.h"
#include "rs_inventory.h"
#include "rs_lease.h"
#include "rs_links.h"
#include "rs_schema.h"
#include "unit.h"

apr_pool_t *ut_pool;

const char *ut_driver = "sqlite3";
const char *ut_pg_dsn;
int ut_pg_building;

void ut_setup(void)
{
    ck_assert_int_eq(apr_pool_create(&ut_pool, NULL), APR_SUCCESS);
    ut_driver = "sqlite3";
}

/* The fixture of a test case built while ut_pg_building: the test's
 * stores are PostgreSQL's (ut_store). */
static void setup_pg(void)
{
    ut_driver = "pgsql";
}

int ut_pg(void)
{
    return !strcmp(ut_driver, "pgsql");
}

char *ut_pg_exec(const char *dsn, const char *sql)
{
    PGconn *c = PQconnectdb(dsn);
    PGresult *r;
    char *out = NULL;

    ck_assert_msg(PQstatus(c) == CONNECTION_OK, "connecting to %s: %s", dsn, PQerrorMessage(c));
    PQclear(PQexec(c, "SET client_min_messages = warning"));
    r = PQexec(c, sql);
    ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK,
                  "%s: %s", sql, PQerrorMessage(c));
    if (PQntuples(r) > 0 && PQnfields(r) > 0 && !PQgetisnull(r, 0, 0)) {
        out = apr_pstrdup(ut_pool, PQgetvalue(r, 0, 0));
    }
    PQclear(r);
    PQfinish(c);
    return out;
}

const char *ut_store(const char *path)
{
    unsigned char md[APR_MD5_DIGESTSIZE];
    char schema[2 * APR_MD5_DIGESTSIZE + 3];
    int i;

    if (!ut_pg()) {
        return path;
    }
    /* One schema per path: the same path opens the same store again, and
     * every test's paths are below a fresh directory. */
    apr_md5(md, path, strlen(path));
    schema[0] = 's';
    schema[1] = '_';
    for (i = 0; i < APR_MD5_DIGESTSIZE; i++) {
        apr_snprintf(schema + 2 + 2 * i, 3, "%02x", md[i]);
    }
    /* Tests that open a store from several processes at once: CREATE
     * SCHEMA IF NOT EXISTS is not safe against itself. */
    ut_pg_exec(ut_pg_dsn, apr_psprintf(ut_pool,
                                       "BEGIN; SELECT pg_advisory_xact_lock(27); "
                                       "CREATE SCHEMA IF NOT EXISTS %s; COMMIT",
                                       schema));
    return apr_psprintf(ut_pool, "%s options='-csearch_path=%s'", ut_pg_dsn, schema);
}

rs_db_t *ut_store_open(const char *path)
{
    rs_db_t *db = NULL;
    ck_assert_int_eq(rs_schema_open(&db, ut_pool, ut_driver, ut_store(path), NULL), APR_SUCCESS);
    return db;
}

rs_db_t *ut_store_new(const char *tag)
{
    return ut_store_open(ut_path(ut_tempdir(tag), "state.db"));
}

void ut_teardown(void)
{
    apr_pool_destroy(ut_pool);
    ut_pool = NULL;
}

TCase *ut_tcase(const char *name, double timeout)
{
    TCase *tc;
    if (ut_pg_building) {
        /* Lives as long as the runner (Check may keep the name): a pool
         * that apr_terminate destroys. */
        static apr_pool_t *names;
        if (!names) {
            apr_pool_create(&names, NULL);
        }
        name = apr_pstrcat(names, name, "-pg", NULL);
    }
    tc = tcase_create(name);
    tcase_add_checked_fixture(tc, ut_setup, ut_teardown);
    if (ut_pg_building) {
        tcase_add_checked_fixture(tc, setup_pg, NULL);
    }
    tcase_set_timeout(tc, timeout);
    return tc;
}

char *ut_tempdir(const char *tag)
{
    char *tmpl = apr_psprintf(ut_pool, "%s/%s-XXXXXX", ut_tmproot, tag);
    ck_assert_msg(mkdtemp(tmpl) != NULL, "mkdtemp %s: %s", tmpl, strerror(errno));
    return tmpl;
}

char *ut_path(const char *dir, const char *rel)
{
    return apr_pstrcat(ut_pool, dir, "/", rel, NULL);
}

void ut_write(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const char *s = data;
    ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
    while (len > 0) {
        ssize_t n = write(fd, s, len);
        ck_assert_msg(n > 0, "write %s: %s", path, strerror(errno));
        s += n;
        len -= (size_t)n;
    }
    ck_assert_int_eq(close(fd), 0);
}

void ut_write_seeded(const char *dir, const char *name, apr_size_t n, int seed, apr_time_t mt)
{
    char *b = apr_palloc(ut_pool, n + 1);
    const char *path = ut_path(dir, name);
    apr_size_t i;
    for (i = 0; i < n; i++) {
        b[i] = (char)((i * 7 + (apr_size_t)seed * 13 + i / 251) & 0xff);
    }
    ut_write(path, b, n);
    ck_assert_int_eq(apr_file_mtime_set(path, mt, ut_pool), APR_SUCCESS);
}

void ut_same_file(const char *a, const char *b)
{
    apr_finfo_t fa, fb;
    size_t la, lb;
    char *da = ut_read(a, &la), *db = ut_read(b, &lb);
    ck_assert_uint_eq(la, lb);
    ck_assert(memcmp(da, db, la) == 0);
    ck_assert_int_eq(apr_stat(&fa, a, APR_FINFO_MTIME | APR_FINFO_SIZE, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(apr_stat(&fb, b, APR_FINFO_MTIME | APR_FINFO_SIZE, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(fa.mtime, fb.mtime);
}

void ut_write_str(const char *path, const char *s)
{
    ut_write(path, s, strlen(s));
}

void ut_mkdir(const char *path)
{
    ck_assert_msg(mkdir(path, 0755) == 0, "mkdir %s: %s", path, strerror(errno));
}

char *ut_read(const char *path, size_t *len)
{
    struct stat sb;
    char *buf;
    size_t got = 0;
    int fd = open(path, O_RDONLY);

    ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
    ck_assert_int_eq(fstat(fd, &sb), 0);
    buf = apr_palloc(ut_pool, (apr_size_t)sb.st_size + 1);
    while (got < (size_t)sb.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)sb.st_size - got);
        ck_assert_msg(n > 0, "read %s: %s", path, strerror(errno));
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    if (len) {
        *len = got;
    }
    return buf;
}

int ut_exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

static int unlock_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    if (flag == FTW_D || flag == FTW_DNR) {
        chmod(path, 0700);
    }
    return 0;
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

int ut_rmtree(const char *path)
{
    /* First make every directory searchable (tests chmod some to 000). */
    nftw(path, unlock_one, 16, FTW_PHYS);
    return nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Logger */

static void log_keep(void *baton, int level, apr_status_t rv, const char *msg)
{
    ut_log_t *ul = baton;
    (void)rv;
    if (level <= RS_LOG_ERR) {
        ul->nerr++;
    }
    else if (level == RS_LOG_WARN) {
        ul->nwarn++;
    }
    APR_ARRAY_PUSH(ul->msgs, char *) = apr_psprintf(ut_pool, "%d: %s", level, msg);
}

rs_logger_t *ut_log_init(ut_log_t *ul)
{
    memset(ul, 0, sizeof(*ul));
    ul->msgs = apr_array_make(ut_pool, 8, sizeof(char *));
    ul->logger.fn = log_keep;
    ul->logger.baton = ul;
    return &ul->logger;
}

int ut_log_count(const ut_log_t *ul, const char *needle)
{
    int i, n = 0;
    for (i = 0; i < ul->msgs->nelts; i++) {
        if (strstr(APR_ARRAY_IDX(ul->msgs, i, char *), needle)) {
            n++;
        }
    }
    return n;
}

/* Sink */

int ut_buf_sink(void *baton, const char *buf, apr_size_t len)
{
    ut_buf_t *b = baton;
    b->calls++;
    if (b->fail) {
        return -1;
    }
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        char *n;
        while (cap < b->len + len + 1) {
            cap *= 2;
        }
        n = apr_palloc(ut_pool, cap);
        if (b->len) {
            memcpy(n, b->data, b->len);
        }
        b->data = n;
        b->cap = cap;
    }
    memcpy(b->data + b->len, buf, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

/* XML */

static apr_status_t free_doc(void *d)
{
    xmlFreeDoc(d);
    return APR_SUCCESS;
}

xmlDocPtr ut_xml_parse(const char *data, size_t len)
{
    xmlDocPtr doc = xmlReadMemory(data, (int)len, "test.xml", NULL,
                                  XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    ck_assert_msg(doc != NULL, "not well-formed XML:\n%.2000s", data);
    apr_pool_cleanup_register(ut_pool, doc, free_doc, apr_pool_cleanup_null);
    ck_assert_ptr_nonnull(xmlDocGetRootElement(doc));
    return doc;
}

xmlDocPtr ut_xml_parse_file(const char *path)
{
    size_t len;
    char *data = ut_read(path, &len);
    return ut_xml_parse(data, len);
}

static int is_elem(xmlNodePtr n, const char *ns, const char *name)
{
    return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name) && n->ns
           && n->ns->href && !strcmp((const char *)n->ns->href, ns);
}

xmlNodePtr ut_xml_child(xmlNodePtr parent, const char *ns, const char *name, int idx)
{
    xmlNodePtr c;
    for (c = parent->children; c; c = c->next) {
        if (is_elem(c, ns, name) && idx-- == 0) {
            return c;
        }
    }
    return NULL;
}

int ut_xml_count(xmlNodePtr parent, const char *ns, const char *name)
{
    xmlNodePtr c;
    int n = 0;
    for (c = parent->children; c; c = c->next) {
        n += is_elem(c, ns, name);
    }
    return n;
}

const char *ut_xml_attr(xmlNodePtr n, const char *name)
{
    xmlChar *v = xmlGetNoNsProp(n, BAD_CAST name);
    char *out;
    if (!v) {
        return NULL;
    }
    out = apr_pstrdup(ut_pool, (const char *)v);
    xmlFree(v);
    return out;
}

const char *ut_xml_child_text(xmlNodePtr n, const char *ns, const char *name)
{
    xmlNodePtr c = ut_xml_child(n, ns, name, 0);
    xmlChar *v;
    char *out;
    if (!c) {
        return NULL;
    }
    v = xmlNodeGetContent(c);
    out = apr_pstrdup(ut_pool, v ? (const char *)v : "");
    xmlFree(v);
    return out;
}

xmlNodePtr ut_xml_ln(xmlNodePtr parent, const char *rel)
{
    xmlNodePtr c;
    int i;
    for (i = 0; (c = ut_xml_child(parent, UT_NS_RS, "ln", i)) != NULL; i++) {
        const char *r = ut_xml_attr(c, "rel");
        if (r && !strcmp(r, rel)) {
            return c;
        }
    }
    return NULL;
}

int ut_check_deny(void *baton, apr_pool_t *p, const char *relpath, int flags,
                  rs_scan_media_t *media)
{
    (void)p;
    (void)flags;
    (void)media;
    return strstr(relpath, (const char *)baton) == NULL;
}

long long ut_vm_hwm(void)
{
    char line[256];
    long long kb = -1;
    FILE *fp = fopen("/proc/self/status", "r");

    ck_assert_ptr_nonnull(fp);
    while (fgets(line, sizeof(line), fp)) {
        if (sscanf(line, "VmHWM: %lld kB", &kb) == 1) {
            break;
        }
    }
    fclose(fp);
    ck_assert_int_ge(kb, 0);
    return kb * 1024;
}

/* ---- the HTTP peer (websub_server.py) ---------------------------------- */

static pid_t peer_pid;

static const char *peer_script(void)
{
    const char *f = __FILE__, *slash = strrchr(f, '/');
    return apr_pstrcat(ut_pool, slash ? apr_pstrmemdup(ut_pool, f, slash - f + 1) : "",
                       "websub_server.py", NULL);
}

char *ut_peer_start(char **logfile)
{
    char *dir = ut_tempdir("websub"), *portfile;
    apr_time_t deadline;
    FILE *f;
    int port = 0;

    portfile = apr_pstrcat(ut_pool, dir, "/port", NULL);
    *logfile = apr_pstrcat(ut_pool, dir, "/requests.log", NULL);
    peer_pid = fork();
    ck_assert_int_ge(peer_pid, 0);
    if (peer_pid == 0) {
        execlp("python3", "python3", peer_script(), portfile, *logfile, (char *)NULL);
        _exit(127);
    }
    deadline = apr_time_now() + apr_time_from_sec(15);
    while (!(f = fopen(portfile, "r")) && apr_time_now() < deadline) {
        apr_sleep(apr_time_from_msec(20));
    }
    ck_assert_msg(f != NULL, "test server did not start (%s)", peer_script());
    ck_assert_int_eq(fscanf(f, "%d", &port), 1);
    fclose(f);
    return apr_psprintf(ut_pool, "http://127.0.0.1:%d", port);
}

void ut_peer_stop(void)
{
    if (peer_pid > 0) {
        kill(peer_pid, SIGTERM);
        waitpid(peer_pid, NULL, 0);
        peer_pid = 0;
    }
}

static apr_status_t jobthread_stop(void *data)
{
    rs_jobthread_stop(data);
    return APR_SUCCESS;
}

rs_jobthread_t *ut_jobthread(const char *dir, rs_db_t *store, const rs_logger_t *log)
{
    rs_jobthread_t *jt = apr_pcalloc(ut_pool, sizeof(*jt));

    rs_jobthread_setup(jt, ut_pool, dir, store, log);
    apr_pool_pre_cleanup_register(ut_pool, jt, jobthread_stop);
    return jt;
}

void ut_inventory_row(rs_db_t *db, const char *set, const char *dir, const char *name,
                      const char *path, const char *data, int size_delta, int listed)
{
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    struct stat sb;
    rs_item_t it;

    ck_assert_int_eq(stat(path, &sb), 0);
    rs_hash_buf(data, strlen(data), RS_HASH_MD5, hex);
    memset(&it, 0, sizeof(it));
    it.dir = dir;
    it.name = name;
    it.size = (apr_int64_t)strlen(data) + size_delta;
    it.mtime_ns = (apr_int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    it.ctime_ns = (apr_int64_t)sb.st_ctim.tv_sec * 1000000000 + sb.st_ctim.tv_nsec;
    it.dev = (apr_int64_t)sb.st_dev;
    it.ino = (apr_int64_t)sb.st_ino;
    it.listed = listed;
    it.cfg = "c";
    it.type = "text/plain";
    it.hash[0] = apr_pstrdup(ut_pool, hex[0]);
    ck_assert_int_eq(rs_inventory_put(db, set, &it), APR_SUCCESS);
}

/* rs_links_match_fn over POSIX regexec (REG_EXTENDED). */
static int posix_match(void *re, const char *path, int nmatch, rs_links_span_t *m)
{
    regmatch_t pm[10];
    int i;
    if (nmatch > 10 || regexec(re, path, (size_t)nmatch, pm, 0) != 0) {
        return 0;
    }
    for (i = 0; i < nmatch; i++) {
        m[i].so = (int)pm[i].rm_so;
        m[i].eo = (int)pm[i].rm_eo;
    }
    return 1;
}

static apr_status_t re_cleanup(void *re)
{
    regfree(re);
    return APR_SUCCESS;
}

void *ut_regex(const char *pattern, int *ngroups)
{
    regex_t *r = apr_pcalloc(ut_pool, sizeof(*r));
    ck_assert_int_eq(regcomp(r, pattern, REG_EXTENDED), 0);
    apr_pool_cleanup_register(ut_pool, r, re_cleanup, apr_pool_cleanup_null);
    *ngroups = (int)r->re_nsub;
    return r;
}

rs_links_t *ut_links(void)
{
    return rs_links_create(ut_pool, posix_match);
}

void ut_write_at(const char *path, const char *s, apr_time_t mt)
{
    ut_write_str(path, s);
    ck_assert_int_eq(apr_file_mtime_set(path, mt, ut_pool), APR_SUCCESS);
}

void ut_holds_at(const char *path, const char *s, apr_time_t mt)
{
    apr_finfo_t fi;
    size_t len;
    char *got = ut_read(path, &len);
    ck_assert_uint_eq(len, strlen(s));
    ck_assert_str_eq(got, s);
    ck_assert_int_eq(apr_stat(&fi, path, APR_FINFO_MTIME | APR_FINFO_SIZE, ut_pool), APR_SUCCESS);
    ck_assert_int_eq(fi.mtime, mt);
}

void ut_blob_counts(rs_db_t *db, const char *set, apr_int64_t files, apr_int64_t chunks)
{
    apr_int64_t f = -1, c = -1;
    ck_assert_int_eq(rs_blob_count(db, set, &f, &c), APR_SUCCESS);
    ck_assert_int_eq(f, files);
    ck_assert_int_eq(c, chunks);
}

apr_status_t ut_fence_gone(void *baton, rs_db_t *db, const char *set)
{
    (void)baton;
    (void)db;
    return strcmp(set, "gone") ? APR_SUCCESS : RS_LEASE_LOST;
}
