/* SPDX-License-Identifier: Apache-2.0 */
/* rs_blob.c - see rs_blob.h */
#include <stdlib.h>
#include <string.h>
#include <apr_strings.h>
#include "rs_blob.h"
#include "rs_file.h"
#include "rs_journal.h"
#include "rs_statedir.h"

/* Version 10.  BYTEA is PostgreSQL's type of bytes; SQLite takes the name
 * with NUMERIC affinity, which never converts a BLOB value (only text). */
static const char *const schema_v10[] = {
    "CREATE TABLE IF NOT EXISTS blobfiles (setname TEXT NOT NULL, kind TEXT NOT NULL,"
    " gen INTEGER NOT NULL, name TEXT NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL,"
    " src_gen INTEGER NOT NULL, src_name TEXT NOT NULL, PRIMARY KEY (setname, kind, gen, name))",
    "CREATE INDEX IF NOT EXISTS blobfiles_src ON blobfiles (setname, kind, src_gen, src_name)",
    "CREATE TABLE IF NOT EXISTS blobchunks (setname TEXT NOT NULL, kind TEXT NOT NULL,"
    " gen INTEGER NOT NULL, name TEXT NOT NULL, n INTEGER NOT NULL, data BYTEA NOT NULL,"
    " PRIMARY KEY (setname, kind, gen, name, n))",
    NULL
};

const char *const *rs_blob_schema(int version)
{
    return version == 10 ? schema_v10 : NULL;
}

const char *const *rs_blob_tables(void)
{
    static const char *const tables[] = { "blobfiles", "blobchunks", NULL };
    return tables;
}

static const char *const file_sql =
    "INSERT INTO blobfiles (setname, kind, gen, name, size, mtime, src_gen, src_name)"
    " VALUES (%s, %s, %lld, %s, %lld, %lld, %lld, %s)";
static const char *const chunk_sql =
    "INSERT INTO blobchunks (setname, kind, gen, name, n, data) VALUES (%s, %s, %lld, %s, %d, %pDb)";
/* Whether some row names the source (and with which size and mtime). */
static const char *const source_sql =
    "SELECT size, mtime FROM blobfiles WHERE setname = %s AND kind = %s AND src_gen = %lld"
    " AND src_name = %s LIMIT 1";
static const char *const files_sql =
    "SELECT name, size, mtime, src_gen, src_name FROM blobfiles WHERE setname = %s AND kind = %s"
    " AND gen = %lld ORDER BY name";
static const char *const latest_sql =
    "SELECT name, size, mtime, src_gen, src_name, gen FROM blobfiles WHERE setname = %s"
    " AND kind = %s ORDER BY gen DESC, name LIMIT 1";
static const char *const chunks_sql =
    "SELECT n, data FROM blobchunks WHERE setname = %s AND kind = %s AND gen = %lld"
    " AND name = %s ORDER BY n";
static const char *const gens_sql =
    "SELECT DISTINCT gen FROM blobfiles WHERE setname = %s AND kind = %s ORDER BY gen";
static const char *const drop_files_sql =
    "DELETE FROM blobfiles WHERE setname = %s AND kind = %s AND gen = %lld";
/* Chunks of gen or earlier that no row names any more (a row names only
 * its own or an earlier generation's file). */
static const char *const drop_chunks_sql =
    "DELETE FROM blobchunks WHERE setname = %s AND kind = %s AND gen <= %lld AND NOT EXISTS"
    " (SELECT 1 FROM blobfiles f WHERE f.setname = blobchunks.setname AND f.kind = blobchunks.kind"
    " AND f.src_gen = blobchunks.gen AND f.src_name = blobchunks.name)";
static const char *const count_files_sql = "SELECT COUNT(*) FROM blobfiles WHERE setname = %s";
static const char *const count_chunks_sql = "SELECT COUNT(*) FROM blobchunks WHERE setname = %s";

/* ---------------------------------------------------------------- put */

typedef struct {
    int found;
    apr_int64_t size, mtime;
} source_t;

static int source_row(void *baton, const rs_db_row_t *row)
{
    source_t *s = baton;
    s->found = 1;
    s->size = rs_db_row_int64(row, 0);
    s->mtime = rs_db_row_int64(row, 1);
    return 1;
}

/* Whether the store holds (src_gen, src_name) with fi's size and mtime. */
static apr_status_t source_held(rs_db_t *db, const char *set, const char *kind,
                                apr_uint64_t src_gen, const char *src_name, const apr_finfo_t *fi,
                                int *held)
{
    apr_int64_t g = (apr_int64_t)src_gen;
    const void *args[] = { set, kind, &g, src_name };
    source_t s = { 0, 0, 0 };
    rs_db_stmt_t *st;
    apr_status_t rv = rs_db_stmt(db, source_sql, &st);

    if (rv == APR_SUCCESS) {
        rv = rs_db_each(db, st, args, source_row, &s);
    }
    *held = rv == APR_SUCCESS && s.found && s.size == (apr_int64_t)fi->size
            && s.mtime == (apr_int64_t)fi->mtime;
    return rv;
}

static apr_status_t put_row(rs_db_t *db, const char *set, const char *kind, apr_uint64_t gen,
                            const char *name, const apr_finfo_t *fi, apr_uint64_t src_gen,
                            const char *src_name)
{
    apr_int64_t g = (apr_int64_t)gen, size = fi->size, mtime = fi->mtime;
    apr_int64_t sg = (apr_int64_t)src_gen;
    const void *args[] = { set, kind, &g, name, &size, &mtime, &sg, src_name };
    rs_db_stmt_t *st;
    apr_status_t rv = rs_db_stmt(db, file_sql, &st);

    return rv == APR_SUCCESS ? rs_db_exec(db, st, args, NULL) : rv;
}

/* The bytes of path, in chunks of RS_BLOB_CHUNK read into buf. */
static apr_status_t put_chunks(rs_db_t *db, apr_pool_t *p, const char *set, const char *kind,
                               apr_uint64_t gen, const char *name, const char *path, char *buf,
                               apr_off_t *bytes)
{
    apr_int64_t g = (apr_int64_t)gen;
    rs_db_blob_t b = { buf, 0 };
    const void *args[] = { set, kind, &g, name, NULL, &b };
    rs_db_stmt_t *st;
    apr_file_t *f;
    apr_status_t rv, rr = APR_SUCCESS;
    int n = 0;

    if ((rv = rs_db_stmt(db, chunk_sql, &st)) != APR_SUCCESS
        || (rv = apr_file_open(&f, path, APR_FOPEN_READ, 0, p)) != APR_SUCCESS) {
        return rv;
    }
    args[4] = &n;
    while (rv == APR_SUCCESS && rr == APR_SUCCESS) {
        rr = apr_file_read_full(f, buf, RS_BLOB_CHUNK, &b.len);
        if (rr != APR_SUCCESS && rr != APR_EOF) {
            rv = rr;
        }
        else if (b.len > 0 && (rv = rs_db_exec(db, st, args, NULL)) == APR_SUCCESS) {
            *bytes += (apr_off_t)b.len;
            n++;
            rv = rs_db_fence_again(db); /* (a large generation: its lease renewed) */
        }
    }
    apr_file_close(f);
    return rv;
}

/* The other nodes told, at commit, that set's stored documents changed
 * (RS_BLOB_NOTIFY). */
static apr_status_t notify(rs_db_t *db, apr_pool_t *p, const char *set)
{
    return rs_db_notify(db, RS_JOURNAL_CHANNEL, apr_pstrcat(p, RS_BLOB_NOTIFY, set, NULL));
}

apr_status_t rs_blob_put(rs_db_t *db, apr_pool_t *p, const char *set, const char *kind,
                         apr_uint64_t gen, const char *dir, rs_blob_origin_fn *origin, void *baton,
                         rs_blob_stats_t *st)
{
    rs_blob_stats_t none;
    apr_pool_t *fp;
    apr_dir_t *d;
    apr_finfo_t fi;
    char *buf;
    apr_status_t rv;

    st = st ? st : &none;
    memset(st, 0, sizeof(*st));
    if ((rv = apr_dir_open(&d, dir, p)) != APR_SUCCESS) {
        return rv;
    }
    buf = malloc(RS_BLOB_CHUNK);
    apr_pool_create(&fp, p);
    while (buf && rv == APR_SUCCESS
           && apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        const char *path, *src = NULL;
        apr_uint64_t src_gen = 0;
        int held = 0;
        apr_pool_clear(fp);
        if (fi.filetype != APR_REG || fi.name[0] == '.') {
            continue;
        }
        path = apr_pstrcat(fp, dir, "/", fi.name, NULL);
        if ((rv = apr_stat(&fi, path, APR_FINFO_SIZE | APR_FINFO_MTIME, fp)) != APR_SUCCESS) {
            break;
        }
        fi.name = apr_pstrdup(fp, strrchr(path, '/') + 1);
        st->files++;
        if (origin && (src = origin(baton, fp, fi.name, &src_gen)) && src_gen < gen
            && (rv = source_held(db, set, kind, src_gen, src, &fi, &held)) == APR_SUCCESS && held) {
            st->refs++;
            rv = put_row(db, set, kind, gen, fi.name, &fi, src_gen, src);
            continue;
        }
        if (rv == APR_SUCCESS
            && (rv = put_row(db, set, kind, gen, fi.name, &fi, gen, fi.name)) == APR_SUCCESS) {
            rv = put_chunks(db, fp, set, kind, gen, fi.name, path, buf, &st->bytes);
        }
    }
    apr_pool_destroy(fp);
    apr_dir_close(d);
    free(buf);
    return !buf ? APR_ENOMEM : rv == APR_SUCCESS ? notify(db, p, set) : rv;
}

apr_status_t rs_blob_put_file(rs_db_t *db, apr_pool_t *p, const char *set, const char *kind,
                              apr_uint64_t gen, const char *path, const char *name,
                              apr_off_t *bytes)
{
    apr_off_t none = 0;
    apr_finfo_t fi;
    char *buf;
    apr_status_t rv = apr_stat(&fi, path, APR_FINFO_SIZE | APR_FINFO_MTIME, p);

    bytes = bytes ? bytes : &none;
    if (rv != APR_SUCCESS
        || (rv = put_row(db, set, kind, gen, name, &fi, gen, name)) != APR_SUCCESS) {
        return rv;
    }
    if (!(buf = malloc(RS_BLOB_CHUNK))) {
        return APR_ENOMEM;
    }
    rv = put_chunks(db, p, set, kind, gen, name, path, buf, bytes);
    free(buf);
    return rv == APR_SUCCESS ? notify(db, p, set) : rv;
}

/* -------------------------------------------------------------- read */

typedef struct {
    apr_pool_t *p;
    apr_array_header_t *out;
} files_t;

static int file_row(void *baton, const rs_db_row_t *row)
{
    files_t *fs = baton;
    rs_blob_file_t *f = &APR_ARRAY_PUSH(fs->out, rs_blob_file_t);
    f->name = apr_pstrdup(fs->p, rs_db_row_text(row, 0));
    f->size = (apr_off_t)rs_db_row_int64(row, 1);
    f->mtime = (apr_time_t)rs_db_row_int64(row, 2);
    f->src_gen = (apr_uint64_t)rs_db_row_int64(row, 3);
    f->src_name = apr_pstrdup(fs->p, rs_db_row_text(row, 4));
    return 0;
}

apr_status_t rs_blob_files(rs_db_t *db, apr_pool_t *p, const char *set, const char *kind,
                           apr_uint64_t gen, apr_array_header_t **out)
{
    apr_int64_t g = (apr_int64_t)gen;
    const void *args[] = { set, kind, &g };
    files_t fs = { p, apr_array_make(p, 8, sizeof(rs_blob_file_t)) };
    rs_db_stmt_t *st;
    apr_status_t rv = rs_db_stmt(db, files_sql, &st);

    *out = fs.out;
    return rv == APR_SUCCESS ? rs_db_each(db, st, args, file_row, &fs) : rv;
}

typedef struct {
    rs_blob_file_t *f;
    apr_pool_t *p;
    apr_uint64_t *gen;
    int found;
} latest_t;

static int latest_row(void *baton, const rs_db_row_t *row)
{
    latest_t *l = baton;
    files_t fs = { l->p, apr_array_make(l->p, 1, sizeof(rs_blob_file_t)) };

    file_row(&fs, row);
    *l->f = APR_ARRAY_IDX(fs.out, 0, rs_blob_file_t);
    *l->gen = (apr_uint64_t)rs_db_row_int64(row, 5);
    l->found = 1;
    return 1;
}

apr_status_t rs_blob_latest(rs_db_t *db, apr_pool_t *p, const char *set, const char *kind,
                            rs_blob_file_t *out, apr_uint64_t *gen)
{
    const void *args[] = { set, kind };
    latest_t l = { out, p, gen, 0 };
    rs_db_stmt_t *st;
    apr_status_t rv = rs_db_stmt(db, latest_sql, &st);

    if (rv == APR_SUCCESS) {
        rv = rs_db_each(db, st, args, latest_row, &l);
    }
    return rv != APR_SUCCESS ? rv : l.found ? APR_SUCCESS : APR_ENOENT;
}

typedef struct {
    apr_file_t *out;
    apr_status_t rv;
    int next;
    apr_off_t bytes;
} copy_t;

/* One chunk, written as it is read (the driver holds this row only). */
static int chunk_row(void *baton, const rs_db_row_t *row)
{
    copy_t *c = baton;
    apr_size_t len = 0;
    const void *data = rs_db_row_blob(row, 1, &len);

    if (rs_db_row_int64(row, 0) != c->next++ || !data) {
        c->rv = APR_EINCOMPLETE;
        return 1;
    }
    c->rv = apr_file_write_full(c->out, data, len, NULL);
    c->bytes += (apr_off_t)len;
    return c->rv != APR_SUCCESS;
}

apr_status_t rs_blob_copy(rs_db_t *db, const char *set, const char *kind, const rs_blob_file_t *f,
                          apr_file_t *out)
{
    apr_int64_t g = (apr_int64_t)f->src_gen;
    const void *args[] = { set, kind, &g, f->src_name };
    copy_t c = { out, APR_SUCCESS, 0, 0 };
    rs_db_stmt_t *st;
    apr_status_t rv = rs_db_stmt(db, chunks_sql, &st);

    if (rv != APR_SUCCESS) {
        return rv;
    }
    rs_db_stmt_binary(st);
    if ((rv = rs_db_each(db, st, args, chunk_row, &c)) != APR_SUCCESS) {
        return rv;
    }
    return c.rv != APR_SUCCESS ? c.rv : c.bytes != f->size ? APR_EINCOMPLETE : APR_SUCCESS;
}

/* ------------------------------------------------------------- replay */

/* A name of the store's that is a plain file name: the store is shared,
 * nothing it says may name a path outside the directory. */
static int plain_name(const char *name)
{
    return *name && name[0] != '.' && !strchr(name, '/');
}

int rs_blob_is_file(apr_pool_t *p, const char *path, const rs_blob_file_t *f)
{
    apr_finfo_t fi;
    return apr_stat(&fi, path, APR_FINFO_TYPE | APR_FINFO_SIZE | APR_FINFO_MTIME | APR_FINFO_LINK,
                    p)
               == APR_SUCCESS
           && fi.filetype == APR_REG && fi.size == f->size && fi.mtime == f->mtime;
}

/* Link local's copy of f as path, when it is a regular file of f's size
 * and mtime; 1 if linked. */
static int replay_link(apr_pool_t *p, const rs_blob_file_t *f, const char *local, const char *path)
{
    return local && rs_blob_is_file(p, local, f) && apr_file_link(local, path) == APR_SUCCESS;
}

/* What place_bytes writes. */
typedef struct {
    rs_db_t *db;
    const char *set, *kind;
    const rs_blob_file_t *f;
} place_t;

/* rs_file_write_fn of rs_blob_place: the bytes, then the mtime (after the
 * flush: no write follows that would change it; rs_file_replace syncs
 * both). */
static apr_status_t place_bytes(void *baton, apr_file_t *out, apr_pool_t *p)
{
    const place_t *c = baton;
    const char *name;
    apr_status_t rv = rs_blob_copy(c->db, c->set, c->kind, c->f, out);

    if (rv == APR_SUCCESS && (rv = apr_file_flush(out)) == APR_SUCCESS
        && (rv = apr_file_name_get(&name, out)) == APR_SUCCESS) {
        rv = apr_file_mtime_set(name, c->f->mtime, p);
    }
    return rv;
}

apr_status_t rs_blob_place(rs_db_t *db, apr_pool_t *p, const char *set, const char *kind,
                           const rs_blob_file_t *f, const char *path, int *written)
{
    place_t c = { db, set, kind, f };
    apr_status_t rv;

    *written = 0;
    if (rs_blob_is_file(p, path, f)) {
        return APR_SUCCESS;
    }
    if ((rv = rs_file_replace(p, path, place_bytes, &c)) == APR_SUCCESS) {
        *written = 1;
    }
    return rv;
}

/* Write f's bytes as path, its mtime the row's, fsynced. */
static apr_status_t replay_bytes(rs_db_t *db, apr_pool_t *p, const char *set, const char *kind,
                                 const rs_blob_file_t *f, const char *path)
{
    apr_file_t *out;
    apr_status_t rv = apr_file_open(&out, path, APR_FOPEN_WRITE | APR_FOPEN_CREATE | APR_FOPEN_EXCL,
                                    APR_FPROT_OS_DEFAULT, p);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    rv = rs_blob_copy(db, set, kind, f, out);
    if (rv == APR_SUCCESS) {
        rv = apr_file_mtime_set(path, f->mtime, p);
    }
    if (rv == APR_SUCCESS) {
        rv = apr_file_sync(out); /* the bytes and the mtime */
    }
    apr_file_close(out);
    return rv;
}

apr_status_t rs_blob_replay(rs_db_t *db, apr_pool_t *p, const char *set, const char *kind,
                            apr_uint64_t gen, const char *dir, rs_blob_local_fn *local, void *baton,
                            rs_blob_stats_t *st)
{
    rs_blob_stats_t none;
    apr_array_header_t *files;
    apr_pool_t *fp;
    apr_status_t rv = rs_blob_files(db, p, set, kind, gen, &files);
    int i;

    st = st ? st : &none;
    memset(st, 0, sizeof(*st));
    if (rv != APR_SUCCESS) {
        return rv;
    }
    if (!files->nelts) {
        return APR_ENOENT;
    }
    apr_pool_create(&fp, p);
    for (i = 0; rv == APR_SUCCESS && i < files->nelts; i++) {
        const rs_blob_file_t *f = &APR_ARRAY_IDX(files, i, rs_blob_file_t);
        const char *path;
        apr_pool_clear(fp);
        if (!plain_name(f->name) || !plain_name(f->src_name)) {
            rv = APR_EINVAL;
            break;
        }
        path = apr_pstrcat(fp, dir, "/", f->name, NULL);
        st->files++;
        if (replay_link(fp, f, local ? local(baton, fp, f) : NULL, path)) {
            st->refs++;
            continue;
        }
        if ((rv = replay_bytes(db, fp, set, kind, f, path)) == APR_SUCCESS) {
            st->bytes += f->size;
        }
    }
    apr_pool_destroy(fp);
    return rv == APR_SUCCESS ? rs_file_sync_dir(dir) : rv;
}

/* -------------------------------------------------------------- prune */

static int gen_row(void *baton, const rs_db_row_t *row)
{
    APR_ARRAY_PUSH((apr_array_header_t *)baton, apr_uint64_t) =
        (apr_uint64_t)rs_db_row_int64(row, 0);
    return 0;
}

apr_status_t rs_blob_gens(rs_db_t *db, apr_pool_t *p, const char *set, const char *kind,
                          apr_array_header_t **out)
{
    const void *args[] = { set, kind };
    rs_db_stmt_t *st;
    apr_status_t rv = rs_db_stmt(db, gens_sql, &st);

    *out = apr_array_make(p, 4, sizeof(apr_uint64_t));
    return rv == APR_SUCCESS ? rs_db_each(db, st, args, gen_row, *out) : rv;
}

apr_status_t rs_blob_drop(rs_db_t *db, const char *set, const char *kind, apr_uint64_t gen)
{
    apr_int64_t g = (apr_int64_t)gen;
    const void *args[] = { set, kind, &g };
    rs_db_stmt_t *files, *chunks;
    apr_status_t rv;

    if ((rv = rs_db_stmt(db, drop_files_sql, &files)) != APR_SUCCESS
        || (rv = rs_db_stmt(db, drop_chunks_sql, &chunks)) != APR_SUCCESS
        || (rv = rs_db_exec(db, files, args, NULL)) != APR_SUCCESS) {
        return rv;
    }
    return rs_db_exec(db, chunks, args, NULL);
}

apr_status_t rs_blob_prune(rs_db_t *db, apr_pool_t *p, const char *set, const char *kind,
                           const char *dir, apr_uint64_t current, int *dropped)
{
    apr_array_header_t *gens;
    apr_status_t rv = rs_blob_gens(db, p, set, kind, &gens);
    int i, none;

    dropped = dropped ? dropped : &none;
    *dropped = 0;
    for (i = 0; rv == APR_SUCCESS && i < gens->nelts; i++) {
        apr_uint64_t g = APR_ARRAY_IDX(gens, i, apr_uint64_t);
        apr_finfo_t fi;
        if (g == current
            || apr_stat(&fi, rs_statedir_gen(p, dir, g), APR_FINFO_TYPE, p) == APR_SUCCESS) {
            continue;
        }
        if ((rv = rs_db_begin_set(db, set)) == APR_SUCCESS
            && (rv = rs_db_end(db, rs_blob_drop(db, set, kind, g))) == APR_SUCCESS) {
            ++*dropped;
        }
    }
    return rv;
}

static int count_row(void *baton, const rs_db_row_t *row)
{
    *(apr_int64_t *)baton = rs_db_row_int64(row, 0);
    return 1;
}

apr_status_t rs_blob_count(rs_db_t *db, const char *set, apr_int64_t *files, apr_int64_t *chunks)
{
    const void *args[] = { set };
    rs_db_stmt_t *a, *b;
    apr_status_t rv;

    *files = *chunks = 0;
    if ((rv = rs_db_stmt(db, count_files_sql, &a)) != APR_SUCCESS
        || (rv = rs_db_stmt(db, count_chunks_sql, &b)) != APR_SUCCESS
        || (rv = rs_db_each(db, a, args, count_row, files)) != APR_SUCCESS) {
        return rv;
    }
    return rs_db_each(db, b, args, count_row, chunks);
}

apr_status_t rs_blob_named(rs_db_t *db, const char *set, const char *kind, const char *name,
                           int *found)
{
    static const char sql[] = "SELECT COUNT(*) FROM blobfiles WHERE setname = %s AND kind = %s "
                              "AND name = %s";
    const void *args[] = { set, kind, name };
    apr_int64_t n = 0;
    rs_db_stmt_t *st;
    apr_status_t rv = rs_db_stmt(db, sql, &st);

    if (rv == APR_SUCCESS) {
        rv = rs_db_each(db, st, args, count_row, &n);
    }
    *found = rv == APR_SUCCESS && n > 0;
    return rv;
}
