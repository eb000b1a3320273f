/* SPDX-License-Identifier: Apache-2.0 */
/* rs_snapparts.c - see rs_snapparts.h */
#include <stdlib.h>
#include <string.h>
#include <apr_file_io.h>
#include <apr_file_info.h>
#include <apr_strings.h>
#include "rs_file.h"
#include "rs_partition.h"
#include "rs_snapparts.h"
#include "rs_statedir.h"

#define PARTS_MAGIC "rs-parts 1"
#define CHANGE_PAGE 5000

int rs_snapparts_cmp(const char *adir, const char *aname, const char *bdir, const char *bname)
{
    int c = strcmp(adir, bdir);
    return c ? c : strcmp(aname, bname);
}

/* Bytes as lower-case hex ("-" for none): paths may hold any byte but
 * NUL, the file's fields are separated by spaces and lines. */
static const char *hex(apr_pool_t *p, const char *s)
{
    apr_size_t i, n = strlen(s);
    char *h;

    if (!n) {
        return "-";
    }
    h = apr_palloc(p, 2 * n + 1);
    for (i = 0; i < n; i++) {
        apr_snprintf(h + 2 * i, 3, "%02x", (unsigned char)s[i]);
    }
    return h;
}

static int unhex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The bytes of a hex field, or NULL when malformed. */
static const char *unhex(apr_pool_t *p, const char *h)
{
    apr_size_t i, n = strlen(h);
    char *s;

    if (!strcmp(h, "-")) {
        return "";
    }
    if (!n || n % 2) {
        return NULL;
    }
    s = apr_palloc(p, n / 2 + 1);
    for (i = 0; i < n / 2; i++) {
        int a = unhex_digit(h[2 * i]), b = unhex_digit(h[2 * i + 1]);
        if (a < 0 || b < 0 || (a == 0 && b == 0)) {
            return NULL;
        }
        s[i] = (char)(a * 16 + b);
    }
    s[n / 2] = '\0';
    return s;
}

static apr_status_t parts_fill(const rs_snapparts_t *t, apr_file_t *f, apr_pool_t *p)
{
    apr_status_t rv;
    int i;

    rv = apr_file_printf(f, PARTS_MAGIC " %" APR_INT64_T_FMT " %" APR_TIME_T_FMT " %s\n", t->seq,
                         t->at, hex(p, t->ident))
                 < 0
             ? APR_EGENERAL
             : APR_SUCCESS;
    for (i = 0; rv == APR_SUCCESS && i < t->parts->nelts; i++) {
        const rs_snappart_t *s = &APR_ARRAY_IDX(t->parts, i, rs_snappart_t);
        if (apr_file_printf(f,
                            "%" APR_UINT64_T_FMT " %d %" APR_TIME_T_FMT " %" APR_TIME_T_FMT
                            " %" APR_INT64_T_FMT " %" APR_INT64_T_FMT " %s %s\n",
                            s->gen, s->n, s->at, s->completed, s->entries, s->bytes,
                            hex(p, s->last_dir), hex(p, s->last_name))
            < 0) {
            rv = APR_EGENERAL;
        }
    }
    return rv;
}

const char *rs_snapparts_ident(apr_pool_t *p, const char *ident, apr_uint64_t interval)
{
    return apr_psprintf(p, "%s|k%" APR_UINT64_T_FMT, ident ? ident : "", interval);
}

apr_uint64_t rs_snapparts_interval(const char *ident, const char *prev, apr_int64_t max)
{
    apr_size_t n = strlen(ident);
    char *end;
    apr_int64_t k;

    if (strncmp(prev, ident, n)) {
        return 0;
    }
    if (!prev[n]) {
        return rs_partition_interval(max);
    }
    if (strncmp(prev + n, "|k", 2)) {
        return 0;
    }
    k = apr_strtoi64(prev + n + 2, &end, 10);
    return k > 0 && !*end ? (apr_uint64_t)k : 0;
}

apr_status_t rs_snapparts_sync(apr_pool_t *p, const char *gendir, const apr_array_header_t *parts,
                               apr_uint64_t gen)
{
    apr_status_t rv = APR_SUCCESS;
    apr_pool_t *ip;
    int i;

    apr_pool_create(&ip, p);
    for (i = 0; rv == APR_SUCCESS && i < parts->nelts; i++) {
        const rs_snappart_t *s = &APR_ARRAY_IDX(parts, i, rs_snappart_t);
        if (s->gen == gen) {
            rv = rs_file_sync_path(rs_statedir_gen_file(ip, gendir, s->n));
            apr_pool_clear(ip);
        }
    }
    apr_pool_destroy(ip);
    return rv;
}

apr_status_t rs_snapparts_write(apr_pool_t *p, const char *gendir, const rs_snapparts_t *t)
{
    apr_file_t *f;
    apr_status_t rv, frv;

    if ((rv = rs_file_create(&f, rs_statedir_gen_parts(p, gendir), 64 * 1024, p)) != APR_SUCCESS) {
        return rv;
    }
    rv = parts_fill(t, f, p);
    frv = rs_file_finish(f);
    return rv != APR_SUCCESS ? rv : frv;
}

/* A decimal field (digits only) into *v; 0 when malformed. */
static int num(const char *s, apr_int64_t *v)
{
    char *end;

    if (!s || *s < '0' || *s > '9') {
        return 0;
    }
    *v = apr_strtoi64(s, &end, 10);
    return *end == '\0' && *v >= 0;
}

/* One line of a part: 8 fields. */
static int parse_part(apr_pool_t *p, char *line, rs_snappart_t *s)
{
    char *f[8], *last;
    apr_int64_t v[6];
    int i;

    for (i = 0; i < 8; i++) {
        f[i] = apr_strtok(i ? NULL : line, " ", &last);
        if (!f[i]) {
            return 0;
        }
    }
    for (i = 0; i < 6; i++) {
        if (!num(f[i], &v[i])) {
            return 0;
        }
    }
    if (apr_strtok(NULL, " ", &last) || v[0] < 1 || v[1] < 1 || v[1] > APR_INT32_MAX) {
        return 0;
    }
    s->gen = (apr_uint64_t)v[0];
    s->n = (int)v[1];
    s->at = v[2];
    s->completed = v[3];
    s->entries = v[4];
    s->bytes = v[5];
    s->last_dir = unhex(p, f[6]);
    s->last_name = unhex(p, f[7]);
    return s->last_dir && s->last_name && *s->last_name;
}

apr_status_t rs_snapparts_read(apr_pool_t *p, const char *gendir, rs_snapparts_t *t)
{
    apr_finfo_t fi;
    apr_file_t *f;
    char *buf, *line, *last, *hdr[5], *hl;
    apr_size_t n;
    apr_status_t rv;
    int i;

    rv = apr_file_open(&f, rs_statedir_gen_parts(p, gendir), APR_FOPEN_READ, APR_FPROT_OS_DEFAULT,
                       p);
    if (rv != APR_SUCCESS) {
        return APR_STATUS_IS_ENOENT(rv) ? APR_ENOENT : rv;
    }
    if ((rv = apr_file_info_get(&fi, APR_FINFO_SIZE, f)) == APR_SUCCESS) {
        n = (apr_size_t)fi.size;
        buf = apr_palloc(p, n + 1);
        rv = apr_file_read_full(f, buf, n, &n);
        buf[n] = '\0';
    }
    apr_file_close(f);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    if (!n || buf[n - 1] != '\n' || !(line = apr_strtok(buf, "\n", &last))) {
        return APR_EINVAL;
    }
    for (i = 0; i < 5; i++) {
        hdr[i] = apr_strtok(i ? NULL : line, " ", &hl);
    }
    if (!hdr[4] || strcmp(hdr[0], "rs-parts") || strcmp(hdr[1], "1") || !num(hdr[2], &t->seq)
        || !num(hdr[3], &t->at) || !(t->ident = unhex(p, hdr[4]))) {
        return APR_EINVAL;
    }
    t->parts = apr_array_make(p, 16, sizeof(rs_snappart_t));
    while ((line = apr_strtok(NULL, "\n", &last))) {
        if (!parse_part(p, line, apr_array_push(t->parts))) {
            return APR_EINVAL;
        }
    }
    return t->parts->nelts ? APR_SUCCESS : APR_EINVAL;
}

static int key_order(const void *a, const void *b)
{
    const rs_snapkey_t *x = a, *y = b;
    return rs_snapparts_cmp(x->dir, x->name, y->dir, y->name);
}

/* Whether the journal still holds every record of set after the
 * snapshot whose `at` was at: records after its sequence were journaled
 * after its mark, so their datetimes are not before at; retention drops
 * whole lists from the oldest, each ending before the next one's from. */
static int journal_covers(rs_journal_t *j, apr_pool_t *p, const char *set, apr_time_t at)
{
    apr_array_header_t *closed;
    rs_changelist_t open;
    apr_time_t from;

    if (rs_journal_lists(j, p, set, &closed, &open) != APR_SUCCESS) {
        return 0;
    }
    from = closed->nelts ? APR_ARRAY_IDX(closed, 0, rs_changelist_t).from : open.from;
    return from <= at;
}

apr_status_t rs_snapparts_changes(rs_journal_t *j, apr_pool_t *p, const char *set,
                                  apr_int64_t after, apr_int64_t upto, apr_time_t at, int max,
                                  apr_array_header_t **out)
{
    apr_array_header_t *keys = apr_array_make(p, 64, sizeof(rs_snapkey_t)), *recs, *relinked;
    apr_int64_t first = after;
    apr_pool_t *pp;
    apr_status_t rv = APR_SUCCESS;
    int i, k;

    *out = keys;
    if (!journal_covers(j, p, set, at)) {
        return APR_ENOENT;
    }
    apr_pool_create(&pp, p); /* per page of records */
    while (rv == APR_SUCCESS && after < upto) {
        apr_pool_clear(pp);
        rv = rs_journal_records(j, pp, set, after + 1, upto, CHANGE_PAGE, &recs);
        for (i = 0; rv == APR_SUCCESS && i < recs->nelts; i++) {
            const rs_record_t *r = &APR_ARRAY_IDX(recs, i, rs_record_t);
            rs_snapkey_t *key;
            if (keys->nelts >= max) {
                rv = APR_ENOSPC;
                break;
            }
            key = apr_array_push(keys);
            key->dir = apr_pstrdup(p, r->dir);
            key->name = apr_pstrdup(p, r->name);
            after = r->seq;
        }
        if (rv != APR_SUCCESS || recs->nelts < CHANGE_PAGE) {
            break;
        }
    }
    apr_pool_destroy(pp);
    /* Paths whose links changed without a record (rs_journal_relink):
     * from the previous snapshot's own sequence on. */
    if (rv == APR_SUCCESS
        && (rv = rs_journal_relinked(j, p, set, first, max + 1, &relinked)) == APR_SUCCESS) {
        for (i = 0; rv == APR_SUCCESS && i < relinked->nelts; i++) {
            const rs_journal_path_t *r = &APR_ARRAY_IDX(relinked, i, rs_journal_path_t);
            rs_snapkey_t *key;
            if (keys->nelts >= max) {
                rv = APR_ENOSPC;
                break;
            }
            key = apr_array_push(keys);
            key->dir = r->dir;
            key->name = r->name;
        }
    }
    if (rv != APR_SUCCESS || !keys->nelts) {
        return rv;
    }
    qsort(keys->elts, (size_t)keys->nelts, sizeof(rs_snapkey_t), key_order);
    for (i = 1, k = 1; i < keys->nelts; i++) {
        if (key_order(&APR_ARRAY_IDX(keys, i, rs_snapkey_t),
                      &APR_ARRAY_IDX(keys, k - 1, rs_snapkey_t))) {
            APR_ARRAY_IDX(keys, k++, rs_snapkey_t) = APR_ARRAY_IDX(keys, i, rs_snapkey_t);
        }
    }
    keys->nelts = k;
    return APR_SUCCESS;
}

static int exists(apr_pool_t *p, const char *path)
{
    apr_finfo_t fi;
    return apr_stat(&fi, path, APR_FINFO_TYPE, p) == APR_SUCCESS && fi.filetype == APR_REG;
}

const char *rs_snapparts_find(apr_pool_t *p, const char *snapset, apr_uint64_t cur,
                              apr_uint64_t gen, int n)
{
    const char *path;
    apr_dir_t *d;
    apr_finfo_t fi;

    if (gen == cur) {
        return rs_statedir_gen_file(p, rs_statedir_gen(p, snapset, cur), n);
    }
    if (exists(p, path = rs_statedir_gen_kept(p, rs_statedir_gen(p, snapset, cur), gen, n))
        || exists(p, path = rs_statedir_gen_file(p, rs_statedir_gen(p, snapset, gen), n))) {
        return path;
    }
    /* A superseded index of a generation between them (kept for its
     * readers) may name it, linked there. */
    if (apr_dir_open(&d, snapset, p) != APR_SUCCESS) {
        return NULL;
    }
    path = NULL;
    while (!path && apr_dir_read(&fi, APR_FINFO_NAME, d) == APR_SUCCESS) {
        char *end;
        apr_uint64_t g = (apr_uint64_t)apr_strtoi64(fi.name, &end, 10);
        if (*fi.name >= '1' && *fi.name <= '9' && !*end && g > gen && g < cur
            && !exists(p, path = rs_statedir_gen_kept(p, rs_statedir_gen(p, snapset, g), gen, n))) {
            path = NULL;
        }
    }
    apr_dir_close(d);
    return path;
}
