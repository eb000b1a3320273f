/* SPDX-License-Identifier: Apache-2.0 */
/* rs_dumppkg.c - see rs_dumppkg.h */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <apr_strings.h>
#include <apr_file_io.h>
#include <apr_hash.h>
#include <openssl/evp.h>
#include "rs_dumppkg.h"
#include "rs_file.h"
#include "rs_statedir.h"

apr_status_t rs_dumppkg_key_init(rs_dumppkg_key_t *k)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    if (!c || EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(c);
        k->ctx = NULL;
        return APR_ENOMEM;
    }
    k->ctx = c;
    return APR_SUCCESS;
}

/* A string and its terminating NUL, so fields cannot run into each other. */
static void put_str(rs_dumppkg_key_t *k, const char *s)
{
    s = s ? s : "";
    EVP_DigestUpdate(k->ctx, s, strlen(s) + 1);
}

static void put_int(rs_dumppkg_key_t *k, apr_int64_t v)
{
    char b[32];
    apr_snprintf(b, sizeof(b), "%" APR_INT64_T_FMT, v);
    put_str(k, b);
}

void rs_dumppkg_key_opts(rs_dumppkg_key_t *k, const char *url_base, const char *up_url,
                         unsigned hashes)
{
    put_str(k, "rs-dumppkg-2");
    put_str(k, url_base);
    put_str(k, up_url);
    put_int(k, (apr_int64_t)hashes);
}

void rs_dumppkg_key_entry(rs_dumppkg_key_t *k, const char *member, apr_int64_t size,
                          apr_int64_t mtime_ns, const char *type, const char *encoding,
                          const char *const *hex, int n)
{
    int i;
    put_str(k, member);
    put_int(k, size);
    put_int(k, mtime_ns);
    put_str(k, type);
    /* Only when there is one, as a field no digest can be (a digest is
     * hex or empty): the fields stay unambiguous and an entry without an
     * encoding adds what it always did. */
    if (encoding) {
        EVP_DigestUpdate(k->ctx, "encoding=", 9);
        put_str(k, encoding);
    }
    for (i = 0; i < n; i++) {
        put_str(k, hex[i]);
    }
}

void rs_dumppkg_key_links(rs_dumppkg_key_t *k, const char *links)
{
    /* As the encoding: a tagged field that no digest can be. */
    if (links && *links) {
        EVP_DigestUpdate(k->ctx, "links=", 6);
        put_str(k, links);
    }
}

void rs_dumppkg_key_mirrors(rs_dumppkg_key_t *k, const char *mirrors)
{
    /* A tagged field too, before the entries: a set without mirrors adds
     * nothing and keeps its keys. */
    if (mirrors && *mirrors) {
        EVP_DigestUpdate(k->ctx, "mirrors=", 8);
        put_str(k, mirrors);
    }
}

void rs_dumppkg_key_final(rs_dumppkg_key_t *k, char *out)
{
    static const char digits[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0, i;

    EVP_DigestFinal_ex(k->ctx, md, &len);
    EVP_MD_CTX_free(k->ctx);
    k->ctx = NULL;
    for (i = 0; i < RS_DUMPPKG_KEY_LEN / 2; i++) {
        out[2 * i] = digits[md[i] >> 4];
        out[2 * i + 1] = digits[md[i] & 0xf];
    }
    out[RS_DUMPPKG_KEY_LEN] = '\0';
}

apr_status_t rs_dumppkg_rec_write(apr_pool_t *p, const char *dir, const char *key,
                                  const rs_dumppkg_rec_t *rec)
{
    apr_file_t *f;
    apr_status_t rv = rs_file_create(&f, rs_statedir_dump_pkg(p, dir, key, "rec"), 0, p);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    rv = apr_file_printf(f, "%" APR_OFF_T_FMT "\n%" APR_TIME_T_FMT "\n%" APR_TIME_T_FMT "\n%s\n",
                         rec->length, rec->at, rec->completed, rec->hash ? rec->hash : "")
                 < 0
             ? APR_EGENERAL
             : APR_SUCCESS;
    if (rv != APR_SUCCESS) {
        rs_file_finish(f);
        return rv;
    }
    return rs_file_finish(f);
}

apr_status_t rs_dumppkg_rec_read(apr_pool_t *p, const char *dir, const char *key,
                                 rs_dumppkg_rec_t *rec)
{
    apr_file_t *f;
    char buf[2048], *line[4], *last;
    apr_size_t n = sizeof(buf) - 1;
    apr_status_t rv =
        apr_file_open(&f, rs_statedir_dump_pkg(p, dir, key, "rec"), APR_FOPEN_READ, 0, p);
    int i;

    if (rv != APR_SUCCESS) {
        return APR_STATUS_IS_ENOENT(rv) ? APR_ENOENT : rv;
    }
    rv = apr_file_read_full(f, buf, n, &n);
    apr_file_close(f);
    if (rv != APR_SUCCESS && !APR_STATUS_IS_EOF(rv)) {
        return rv;
    }
    buf[n] = '\0';
    if (!n || buf[n - 1] != '\n') {
        return APR_EGENERAL;
    }
    line[0] = apr_strtok(buf, "\n", &last);
    for (i = 1; i < 4; i++) {
        line[i] = line[i - 1] ? apr_strtok(NULL, "\n", &last) : NULL;
    }
    if (!line[2]) {
        return APR_EGENERAL;
    }
    rec->length = (apr_off_t)apr_atoi64(line[0]);
    rec->at = (apr_time_t)apr_atoi64(line[1]);
    rec->completed = (apr_time_t)apr_atoi64(line[2]);
    rec->hash = line[3] ? apr_pstrdup(p, line[3]) : NULL;
    return rec->length > 0 ? APR_SUCCESS : APR_EGENERAL;
}

static int gen_desc(const void *a, const void *b)
{
    apr_uint64_t x = *(const apr_uint64_t *)a, y = *(const apr_uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

apr_array_header_t *rs_dumppkg_gens(apr_pool_t *p, const char *dumpset)
{
    apr_array_header_t *nums = apr_array_make(p, 4, sizeof(apr_uint64_t));
    apr_array_header_t *out = apr_array_make(p, 4, sizeof(const char *));
    apr_dir_t *d;
    apr_finfo_t fi;
    int i;

    if (apr_dir_open(&d, dumpset, p) != APR_SUCCESS) {
        return out;
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        if (fi.filetype == APR_DIR && fi.name[0] >= '1' && fi.name[0] <= '9'
            && strspn(fi.name, "0123456789") == strlen(fi.name)) {
            APR_ARRAY_PUSH(nums, apr_uint64_t) = (apr_uint64_t)apr_atoi64(fi.name);
        }
    }
    apr_dir_close(d);
    qsort(nums->elts, (size_t)nums->nelts, sizeof(apr_uint64_t), gen_desc);
    for (i = 0; i < nums->nelts; i++) {
        APR_ARRAY_PUSH(out, const char *) =
            rs_statedir_gen(p, dumpset, APR_ARRAY_IDX(nums, i, apr_uint64_t));
    }
    return out;
}

static apr_status_t link_one(apr_pool_t *p, const char *from, const char *to, const char *key,
                             const char *ext)
{
    if (link(rs_statedir_dump_pkg(p, from, key, ext), rs_statedir_dump_pkg(p, to, key, ext))) {
        return APR_FROM_OS_ERROR(errno);
    }
    return APR_SUCCESS;
}

apr_status_t rs_dumppkg_reuse(apr_pool_t *p, const apr_array_header_t *gens, const char *dir,
                              const char *key, rs_dumppkg_rec_t *rec)
{
    static const char *const ext[3] = { "zip", "xml", "rec" };
    int i, e;

    for (i = 0; i < gens->nelts; i++) {
        const char *from = APR_ARRAY_IDX(gens, i, const char *);
        apr_status_t rv;
        if (rs_dumppkg_rec_read(p, from, key, rec) != APR_SUCCESS) {
            continue;
        }
        for (e = 0, rv = APR_SUCCESS; e < 3 && rv == APR_SUCCESS; e++) {
            rv = link_one(p, from, dir, key, ext[e]);
        }
        if (rv == APR_SUCCESS) {
            return APR_SUCCESS;
        }
        /* Pruned meanwhile, or another file system: leave nothing. */
        for (e = 0; e < 3; e++) {
            apr_file_remove(rs_statedir_dump_pkg(p, dir, key, ext[e]), p);
        }
        if (!APR_STATUS_IS_ENOENT(rv)) {
            return rv;
        }
    }
    return APR_ENOENT;
}

/* Add the files of one generation directory, each inode once. */
static apr_int64_t dir_bytes(apr_pool_t *p, const char *dir, apr_hash_t *seen)
{
    apr_int64_t sum = 0;
    apr_dir_t *d;
    apr_finfo_t fi;

    if (apr_dir_open(&d, dir, p) != APR_SUCCESS) {
        return 0;
    }
    while (apr_dir_read(&fi,
                        APR_FINFO_NAME | APR_FINFO_TYPE | APR_FINFO_SIZE | APR_FINFO_INODE
                            | APR_FINFO_NLINK,
                        d)
           == APR_SUCCESS) {
        if (fi.filetype != APR_REG) {
            continue;
        }
        if (fi.nlink > 1) {
            apr_ino_t *ino = apr_pmemdup(p, &fi.inode, sizeof(fi.inode));
            if (apr_hash_get(seen, ino, sizeof(*ino))) {
                continue;
            }
            apr_hash_set(seen, ino, sizeof(*ino), "");
        }
        sum += fi.size;
    }
    apr_dir_close(d);
    return sum;
}

apr_int64_t rs_dumppkg_disk_bytes(apr_pool_t *p, const char *dumpset)
{
    apr_hash_t *seen = apr_hash_make(p);
    apr_int64_t sum = 0;
    apr_dir_t *d;
    apr_finfo_t fi;

    if (apr_dir_open(&d, dumpset, p) != APR_SUCCESS) {
        return 0;
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        if (fi.filetype == APR_DIR && strcmp(fi.name, ".") && strcmp(fi.name, "..")) {
            sum += dir_bytes(p, apr_pstrcat(p, dumpset, "/", fi.name, NULL), seen);
        }
    }
    apr_dir_close(d);
    return sum;
}

/* The XML attribute path="..." naming member, as the manifests write it
 * (libxml2 escapes & < > " in attribute values; member names hold no
 * control characters, rs_zip_member_name). */
static const char *path_attr(apr_pool_t *p, const char *member)
{
    const char *s;
    char *out = apr_palloc(p, strlen(member) * 6 + 16), *d = out;

    d += sizeof(" path=\"/") - 1;
    memcpy(out, " path=\"/", sizeof(" path=\"/") - 1);
    for (s = member; *s; s++) {
        const char *e = *s == '&'   ? "&amp;"
                        : *s == '<' ? "&lt;"
                        : *s == '>' ? "&gt;"
                        : *s == '"' ? "&quot;"
                                    : NULL;
        if (e) {
            memcpy(d, e, strlen(e));
            d += strlen(e);
        }
        else {
            *d++ = *s;
        }
    }
    *d++ = '"';
    *d = '\0';
    return out;
}

apr_status_t rs_dumppkg_withdraw(apr_pool_t *p, const char *dumpset, const char *member,
                                 int *removed)
{
    static const char *const ext[3] = { "zip", "xml", "rec" };
    apr_array_header_t *gens = rs_dumppkg_gens(p, dumpset);
    apr_hash_t *keys = apr_hash_make(p);
    const char *needle = path_attr(p, member);
    apr_size_t n = strlen(needle);
    apr_status_t rv = APR_SUCCESS;
    int i, e;

    for (i = 0; i < gens->nelts && rv == APR_SUCCESS; i++) {
        const char *gen = APR_ARRAY_IDX(gens, i, const char *);
        apr_dir_t *d;
        apr_finfo_t fi;
        if (apr_dir_open(&d, gen, p) != APR_SUCCESS) {
            continue;
        }
        while (rv == APR_SUCCESS
               && apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
            char key[RS_DUMPPKG_KEY_LEN + 1];
            if (fi.filetype != APR_REG || strlen(fi.name) != RS_DUMPPKG_KEY_LEN + 4
                || strspn(fi.name, "0123456789abcdef") != RS_DUMPPKG_KEY_LEN
                || strcmp(fi.name + RS_DUMPPKG_KEY_LEN, ".xml")
                || !rs_file_holds(apr_pstrcat(p, gen, "/", fi.name, NULL), needle, n)) {
                continue;
            }
            apr_cpystrn(key, fi.name, sizeof(key));
            /* The record first: without it the package is never reused. */
            for (e = 2; e >= 0 && rv == APR_SUCCESS; e--) {
                rv = apr_file_remove(rs_statedir_dump_pkg(p, gen, key, ext[e]), p);
                rv = APR_STATUS_IS_ENOENT(rv) ? APR_SUCCESS : rv;
            }
            apr_hash_set(keys, apr_pstrdup(p, key), APR_HASH_KEY_STRING, "");
        }
        apr_dir_close(d);
        if (rv == APR_SUCCESS) {
            rv = rs_file_sync_dir(gen);
        }
    }
    *removed = (int)apr_hash_count(keys);
    return rv;
}
