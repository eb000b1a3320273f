/* SPDX-License-Identifier: Apache-2.0 */
/* rs_dump.c - see rs_dump.h */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <apr_lib.h>
#include <apr_portable.h>
#include <apr_strings.h>
#include "rs_beneath.h"
#include "rs_dump.h"
#include "rs_dumpdoc.h"
#include "rs_dumppkg.h"
#include "rs_entry.h"
#include "rs_file.h"
#include "rs_hash.h"
#include "rs_inventory.h"
#include "rs_partition.h"
#include "rs_path.h"
#include "rs_statedir.h"
#include "rs_time.h"
#include "rs_uri.h"
#include "rs_xml.h"
#include "rs_zip.h"

#define PAGE_ROWS   1000
#define CHUNK_ROWS  1024         /* rows of a package are kept in chunks of this many */
#define KP_MAX_FREE (256 * 1024) /* bytes the rows' allocator keeps when freed */

/* One dump being written.  Lifecycle: the rows of the package being
 * filled are copied into `kp` (cleared after each package, so memory is
 * one package's rows); each finished package's description goes into
 * `pkgs` (in p) for resourcedump.xml, written last.  The rows are kept in
 * chunks of CHUNK_ROWS (`chunks`: rs_item_t *), never in one array that
 * grows by doubling: a pool keeps every copy a doubling leaves behind
 * (twice the final size), and a package's rows are the larger part of
 * the build's memory. */
typedef struct {
    const rs_dump_opts_t *o;
    const char *dir;
    apr_array_header_t *gens; /* generations to reuse packages from */
    apr_pool_t *p, *kp;
    apr_pool_t *sp;             /* scratch, cleared after each row's use */
    rs_beneath_t *tree;         /* the set's root: rows are checked and read below it */
    apr_pool_t *cp;             /* the check callback's, cleared per directory */
    const char *cp_dir;         /* the directory cp belongs to (in cp), or NULL */
    apr_array_header_t *chunks; /* rs_item_t[CHUNK_ROWS] of the package being filled */
    int nrows;                  /* rows in chunks */
    apr_array_header_t *pkgs;   /* pkg_t */
    rs_partition_t pt;
    apr_int64_t base_len; /* o->url_base XML-escaped (manifest_entry_bound) */
    const char *mirrors;  /* rs_links_mirrors_describe of o->links (package keys) */
    rs_dump_info_t *info;
    struct pending_t *pending; /* written, not yet published, or NULL */
} dwriter_t;

/* A package written (rs_zip_write) and not yet published: it reaches the
 * disk while the next one is written.  Lifecycle: made by package_build
 * in a pool of its own (two packages at most are alive: this one and
 * the one being written), published by pending_publish after the next
 * package is written, or before resourcedump.xml; dropped (its
 * temporary file removed) with its pool on failure.  Order on disk per
 * package: the manifest copy and the package are fsynced, then the
 * package is renamed into place, then its record is written: the record
 * is the mark of a complete package (rs_dumppkg_reuse). */
typedef struct pending_t {
    apr_pool_t *pool;
    rs_zip_t *z;
    const char *mpath; /* the manifest copy, fsynced at publish */
    char key[RS_DUMPPKG_KEY_LEN + 1];
    int pkg; /* its index in pkgs */
} pending_t;

/* Row i of the package being filled. */
static const rs_item_t *row_at(const dwriter_t *dw, int i)
{
    return &APR_ARRAY_IDX(dw->chunks, i / CHUNK_ROWS, rs_item_t *)[i % CHUNK_ROWS];
}

typedef rs_dumpdoc_pkg_t pkg_t;

/* Forget the rows of the package being filled (and free them). */
static void rows_release(dwriter_t *dw)
{
    apr_pool_clear(dw->kp);
    dw->chunks = apr_array_make(dw->kp, 16, sizeof(rs_item_t *));
    dw->nrows = 0;
}


/* The row's path relative to the root ("dir/name" or "name"). */
/* The member holding the file at rel. */
static const char *member_name(apr_pool_t *p, const char *rel)
{
    return rs_zip_member_name(p, RS_DUMP_MEMBER_DIR, RS_DUMP_ENCODED_DIR, rel);
}

/* The manifest's entries, rendered with a scratch pool cleared every
 * row, so that memory does not grow with the package. */
static int manifest_entries(dwriter_t *dw, rs_xml_t *w)
{
    const rs_dump_opts_t *o = dw->o;
    char lm[RS_TIME_BUFSIZE], len[32];
    apr_pool_t *sp;
    int i, bad = 0;

    apr_pool_create(&sp, dw->kp);
    for (i = 0; !bad && i < dw->nrows; i++) {
        const rs_item_t *it = row_at(dw, i);
        const char *rel = rs_path_join(sp, it->dir, it->name);
        const char *epath = rs_uri_escape_path(sp, rel);
        /* type and encoding as in the Resource List (rs_entry.c) */
        const rs_xml_attr_t md[5] = { { "hash", rs_hash_attr(sp, o->hashes, it->hash) },
                                      { "length", len },
                                      { "type", it->type },
                                      { "encoding", it->encoding },
                                      { "path",
                                        apr_pstrcat(sp, "/", member_name(sp, rel), NULL) } };
        apr_snprintf(len, sizeof(len), "%" APR_INT64_T_FMT, it->size);
        bad = rs_xml_entry_begin(w, apr_pstrcat(sp, o->url_base, epath, NULL),
                                 rs_time_format_ns(lm, it->mtime_ns))
                  < 0
              || rs_xml_md(w, md, 5) < 0
              || rs_entry_links_write(w, sp, o->hashes, o->links, it->links, epath)
                     < 0 /* as rs_entry */
              || rs_xml_entry_end(w) < 0;
        apr_pool_clear(sp);
    }
    apr_pool_destroy(sp);
    return bad;
}

/* The manifest of the rows being packaged, streamed into the file
 * <key>.xml: libzip copies it from there into the package, so it is
 * never held in memory whatever the package's size.  Its write-back is
 * started here; it is fsynced when the package is published. */
static apr_status_t manifest_write(dwriter_t *dw, const char *path)
{
    const rs_dump_opts_t *o = dw->o;
    char at[RS_TIME_BUFSIZE], done[RS_TIME_BUFSIZE];
    apr_file_t *f;
    rs_xml_t *w;
    apr_status_t rv, xe = APR_SUCCESS;

    if ((rv = rs_file_create(&f, path, 0, dw->kp)) != APR_SUCCESS) {
        return rv;
    }
    w = rs_xml_open_file(dw->kp, f);
    if (!w
        || rs_xml_head(w, "urlset", o->capability_url, NULL, "resourcedump-manifest", "at",
                       rs_time_format(at, o->at), "completed", rs_time_format(done, o->completed))
               < 0
        || manifest_entries(dw, w) || rs_xml_end(w) < 0) {
        xe = w ? rs_xml_error(w) : APR_ENOMEM;
    }
    rv = apr_file_flush(f);
    if (rv == APR_SUCCESS) {
        apr_os_file_t fd;
        if (apr_os_file_get(&fd, f) == APR_SUCCESS) {
            sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE); /* advisory */
        }
    }
    rv = rv == APR_SUCCESS ? apr_file_close(f) : (apr_file_close(f), rv);
    return xe != APR_SUCCESS ? xe : rv;
}

/* Publish the pending package (see pending_t): fsync its manifest copy
 * and the package, rename it into place, write its record, and fill in
 * its entry in pkgs. */
static apr_status_t pending_publish(dwriter_t *dw)
{
    pending_t *pd = dw->pending;
    pkg_t *pk;
    rs_zip_result_t res;
    const char *hex[RS_HASH_COUNT];
    apr_status_t rv;
    int i;

    if (!pd) {
        return APR_SUCCESS;
    }
    dw->pending = NULL;
    memset(&res, 0, sizeof(res));
    if ((rv = rs_file_sync_path(pd->mpath)) != APR_SUCCESS
        || (rv = rs_zip_publish(pd->z, dw->o->hashes, &res)) != APR_SUCCESS) {
        const char *e = rs_zip_error(pd->z);
        dw->info->failed = e ? apr_pstrdup(dw->p, e) : NULL;
        apr_pool_destroy(pd->pool);
        return rv;
    }
    for (i = 0; i < RS_HASH_COUNT; i++) {
        hex[i] = res.hex[i];
    }
    pk = &APR_ARRAY_IDX(dw->pkgs, pd->pkg, pkg_t);
    pk->rec.length = res.length;
    pk->rec.hash = rs_hash_attr(dw->p, dw->o->hashes, hex);
    dw->info->bytes += res.length;
    rv = rs_dumppkg_rec_write(pd->pool, dw->dir, pd->key, &pk->rec);
    apr_pool_destroy(pd->pool);
    return rv;
}

/* Drop the pending package, if any (a failed build). */
static void pending_drop(dwriter_t *dw)
{
    if (dw->pending) {
        apr_pool_destroy(dw->pending->pool); /* rs_zip's cleanup removes it */
        dw->pending = NULL;
    }
}

/* The key of the rows collected so far (rs_dumppkg.h). */
static apr_status_t package_key(dwriter_t *dw, char *key)
{
    rs_dumppkg_key_t k;
    int i;

    if (rs_dumppkg_key_init(&k) != APR_SUCCESS) {
        return APR_ENOMEM;
    }
    rs_dumppkg_key_opts(&k, dw->o->url_base, dw->o->capability_url, dw->o->hashes);
    rs_dumppkg_key_mirrors(&k, dw->mirrors);
    for (i = 0; i < dw->nrows; i++) {
        const rs_item_t *it = row_at(dw, i);
        const char *listed[RS_HASH_COUNT];
        int h;
        /* The digests the manifest lists: a digest the store keeps for
         * another reason (a capture's name) does not change the key. */
        for (h = 0; h < RS_HASH_COUNT; h++) {
            listed[h] = (dw->o->hashes & (1u << h)) ? it->hash[h] : NULL;
        }
        rs_dumppkg_key_entry(&k, rs_path_join(dw->sp, it->dir, it->name), it->size, it->mtime_ns,
                             it->type, it->encoding, listed, RS_HASH_COUNT);
        rs_dumppkg_key_links(&k, it->links);
        apr_pool_clear(dw->sp);
    }
    rs_dumppkg_key_final(&k, key);
    return APR_SUCCESS;
}

/* Write package key of the rows collected so far: its manifest (written
 * first, then copied into the package) and the package, which becomes
 * the pending one once the one pending before it is published (so that
 * its write-back overlaps the writing of this one).  pkg is the index of
 * its entry in pkgs, completed when it is published. */
static apr_status_t package_build(dwriter_t *dw, const char *key, int pkg)
{
    const rs_dump_opts_t *o = dw->o;
    apr_pool_t *zp;
    pending_t *pd;
    int i;
    apr_status_t rv;

    apr_pool_create(&zp, dw->p);
    pd = apr_pcalloc(zp, sizeof(*pd));
    pd->pool = zp;
    pd->pkg = pkg;
    memcpy(pd->key, key, sizeof(pd->key));
    pd->mpath = rs_statedir_dump_pkg(zp, dw->dir, key, "xml");
    if ((rv = manifest_write(dw, pd->mpath)) != APR_SUCCESS
        || (rv = rs_zip_create_path(&pd->z, rs_statedir_dump_pkg(zp, dw->dir, key, "zip"),
                                    pd->mpath, (apr_int64_t)o->at * 1000, zp))
               != APR_SUCCESS) {
        apr_pool_destroy(zp);
        return rv;
    }
    for (i = 0; i < dw->nrows; i++) {
        const rs_item_t *it = row_at(dw, i);
        const char *rel = rs_path_join(dw->sp, it->dir, it->name);
        rv = rs_zip_add_beneath(pd->z, member_name(dw->sp, rel), dw->tree, rel, it->size,
                                it->mtime_ns, it->dev, it->ino);
        apr_pool_clear(dw->sp); /* rs_zip keeps its own copies */
        if (rv != APR_SUCCESS) {
            dw->info->failed = apr_pstrcat(dw->p, "member ",
                                           rs_path_join(dw->kp, it->dir, it->name),
                                           ": not a valid name", NULL);
            apr_pool_destroy(zp);
            return rv;
        }
    }
    /* The rows are in the manifest and in rs_zip's members: free them
     * before libzip writes the package, its memory peak. */
    rows_release(dw);
    if ((rv = rs_zip_write(pd->z, o->hashes, NULL)) != APR_SUCCESS) {
        const char *e = rs_zip_error(pd->z);
        dw->info->failed = e ? apr_pstrdup(dw->p, e) : NULL;
        apr_pool_destroy(zp);
        return rv;
    }
    rv = pending_publish(dw);
    if (rv != APR_SUCCESS) {
        apr_pool_destroy(zp);
        return rv;
    }
    dw->pending = pd;
    return APR_SUCCESS;
}

/* Package the rows collected so far as the next package: reused from an
 * earlier generation when one holds its key, else written. */
static apr_status_t package_flush(dwriter_t *dw)
{
    char key[RS_DUMPPKG_KEY_LEN + 1];
    rs_dumppkg_rec_t rec;
    pkg_t *pk;
    apr_status_t rv;
    int n = dw->nrows;

    if (!n) {
        return APR_SUCCESS;
    }
    if ((rv = package_key(dw, key)) != APR_SUCCESS) {
        return rv;
    }
    pk = apr_array_push(dw->pkgs);
    pk->key = apr_pstrdup(dw->p, key);
    if (rs_dumppkg_reuse(dw->kp, dw->gens, dw->dir, key, &rec) == APR_SUCCESS) {
        dw->info->reused++;
        pk->rec = rec;
        pk->rec.hash = apr_pstrdup(dw->p, rec.hash);
        dw->info->bytes += rec.length;
    }
    else {
        /* Length and hash come when it is published (pending_publish). */
        pk->rec.at = dw->o->at;
        pk->rec.completed = dw->o->completed;
        pk->rec.length = 0;
        pk->rec.hash = NULL;
        if ((rv = package_build(dw, key, dw->pkgs->nelts - 1)) != APR_SUCCESS) {
            return rv;
        }
    }
    dw->info->packages++;
    dw->info->entries += n;
    rows_release(dw);
    return APR_SUCCESS;
}

/* Whether the row still describes a file that may be packaged (see
 * rs_dump.h): APR_SUCCESS, with *served 0 when the check callback says
 * it is not served now; RS_ZIP_ECHANGED (info->failed says why) when
 * the file at its path is not the one listed. */
static apr_status_t row_check(dwriter_t *dw, const rs_item_t *it, const char *rel, int *served)
{
    const rs_dump_opts_t *o = dw->o;
    struct stat sb;
    rs_scan_media_t media = { NULL, NULL };
    int link = 0, rc = rs_beneath_stat(dw->tree, rel, &sb, &link);

    if (rc || !rs_beneath_same(&sb, it->dev, it->ino, it->size, it->mtime_ns)) {
        char buf[120];
        dw->info->failed = apr_psprintf(dw->p, "member %s: not the file listed (%s)", rel,
                                        rc ? apr_strerror(APR_FROM_OS_ERROR(rc), buf, sizeof(buf))
                                           : "another device, inode, size or mtime");
        return RS_ZIP_ECHANGED;
    }
    *served = 1;
    if (o->check) {
        if (!dw->cp_dir || strcmp(dw->cp_dir, it->dir)) {
            apr_pool_clear(dw->cp); /* the checker's per-directory answers go */
            dw->cp_dir = apr_pstrdup(dw->cp, it->dir);
        }
        *served = o->check(o->check_baton, dw->cp, rel, link ? RS_SCAN_CHECK_LINK : 0, &media);
    }
    return APR_SUCCESS;
}

/* Bytes of the rs:md of a manifest entry beside its values, the <url>,
 * <loc> and <lastmod> markup, the time and the length (with room). */
#define MANIFEST_ENTRY_FIXED 256

/* At most the bytes of the row's entry in its package's manifest
 * (manifest_entries), counted without rendering it: a byte of rel that
 * is not plain (RFC 3986 unreserved or "/") takes at most five in <loc>
 * (escaped "%XX", or "&amp;") and five in path= (percent-encoded member
 * names, or "&amp;"), a plain one one in each; the URL base, type,
 * encoding and digests as they are escaped, the rs:ln links (stored, and
 * the mirrors) by rs_entry_links_len.  For plain names the bound
 * is a little over the entry, so only packages of very long names are
 * cut by it (see rs_partition_add_doc). */
static apr_int64_t manifest_entry_bound(const dwriter_t *dw, const rs_item_t *it, const char *rel)
{
    apr_int64_t n =
        MANIFEST_ENTRY_FIXED + (apr_int64_t)sizeof(RS_DUMP_MEMBER_DIR RS_DUMP_ENCODED_DIR);
    const unsigned char *c;
    int i;

    for (c = (const unsigned char *)rel; *c; c++) {
        n += apr_isalnum(*c) || strchr("/-._~", *c) ? 2 : 10;
    }
    n += dw->base_len + rs_xml_escaped_len(it->type, 1) + rs_xml_escaped_len(it->encoding, 1);
    for (i = 0; i < RS_HASH_COUNT; i++) {
        n += it->hash[i] ? (apr_int64_t)strlen(it->hash[i]) + 16 : 0;
    }
    return n + rs_entry_links_len(dw->o->hashes, dw->o->links, it->links, rel);
}

/* The next row of the listing, copied (the page's pool is cleared). */
static apr_status_t put_row(dwriter_t *dw, const rs_item_t *it)
{
    const char *rel = rs_path_join(dw->sp, it->dir, it->name);
    unsigned cut;
    const rs_item_t *prev;
    rs_item_t *c;
    apr_status_t rv;
    int i, served;

    if ((rv = row_check(dw, it, rel, &served)) != APR_SUCCESS || !served) {
        dw->info->withheld += rv == APR_SUCCESS;
        apr_pool_clear(dw->sp);
        return rv;
    }
    cut = rs_partition_add_doc(&dw->pt, rel, strlen(rel), it->size,
                               manifest_entry_bound(dw, it, rel));
    apr_pool_clear(dw->sp);

    if ((cut & RS_PARTITION_CUT_BEFORE) && (rv = package_flush(dw)) != APR_SUCCESS) {
        return rv;
    }
    if (dw->nrows % CHUNK_ROWS == 0) {
        APR_ARRAY_PUSH(dw->chunks, rs_item_t *) =
            apr_palloc(dw->kp, CHUNK_ROWS * sizeof(rs_item_t));
    }
    prev = dw->nrows ? row_at(dw, dw->nrows - 1) : NULL;
    c = (rs_item_t *)row_at(dw, dw->nrows++);
    *c = *it;
    /* Rows of a directory come together: its name is copied once. */
    c->dir = prev && !strcmp(prev->dir, it->dir) ? prev->dir : apr_pstrdup(dw->kp, it->dir);
    c->name = apr_pstrdup(dw->kp, it->name);
    c->type = it->type ? apr_pstrdup(dw->kp, it->type) : NULL;
    c->encoding = it->encoding ? apr_pstrdup(dw->kp, it->encoding) : NULL;
    for (i = 0; i < RS_HASH_COUNT; i++) {
        c->hash[i] = it->hash[i] ? apr_pstrdup(dw->kp, it->hash[i]) : NULL;
    }
    c->links = it->links ? apr_pstrdup(dw->kp, it->links) : NULL;
    return (cut & RS_PARTITION_CUT_AFTER) ? package_flush(dw) : APR_SUCCESS;
}

/* The pool of the rows, below p: with an allocator of its own that
 * keeps little of what is freed, so that the rows released before libzip
 * writes a package (rows_release) give their memory back to the system
 * instead of staying resident beside libzip's. */
static apr_pool_t *rows_pool(apr_pool_t *p)
{
    apr_allocator_t *ka;
    apr_pool_t *kp;

    if (apr_allocator_create(&ka) == APR_SUCCESS) {
        apr_allocator_max_free_set(ka, KP_MAX_FREE);
        if (apr_pool_create_ex(&kp, p, NULL, ka) == APR_SUCCESS) {
            apr_allocator_owner_set(ka, kp);
            return kp;
        }
        apr_allocator_destroy(ka);
    }
    apr_pool_create(&kp, p);
    return kp;
}

apr_status_t rs_dump_write(rs_db_t *store, const rs_dump_opts_t *o, const char *dir, apr_pool_t *p,
                           rs_dump_info_t *info)
{
    dwriter_t dw;
    apr_pool_t *pp;
    const char *after_dir = NULL, *after_name = NULL;
    apr_status_t rv = APR_SUCCESS;
    int i;

    memset(info, 0, sizeof(*info));
    memset(&dw, 0, sizeof(dw));
    dw.o = o;
    dw.dir = dir;
    dw.gens = o->dumpset ? rs_dumppkg_gens(p, o->dumpset)
                         : apr_array_make(p, 1, sizeof(const char *));
    dw.p = p;
    dw.info = info;
    dw.kp = rows_pool(p);
    apr_pool_create(&dw.sp, p);
    apr_pool_create(&dw.cp, p);
    apr_pool_create(&pp, p); /* per page of rows */
    if ((rv = rs_beneath_open_root(&dw.tree, o->root, p)) != APR_SUCCESS) {
        char buf[120];
        info->failed =
            apr_psprintf(p, "cannot open %s: %s", o->root, apr_strerror(rv, buf, sizeof(buf)));
        return rv;
    }
    dw.chunks = apr_array_make(dw.kp, 16, sizeof(rs_item_t *));
    dw.pkgs = apr_array_make(p, 4, sizeof(pkg_t));
    rs_partition_init(&dw.pt, o->max_entries, o->max_bytes, 0);
    dw.base_len = rs_xml_escaped_len(o->url_base, 0);
    dw.mirrors = rs_links_mirrors_describe(o->links, p);
    /* A manifest is a document too: within RS_XML_MAX_BYTES (section 7,
     * "the limit is 50,000 resources and 50 MB"), less its head and tail
     * (the capability URL escaped, and room). */
    rs_partition_limit_doc(&dw.pt, (o->doc_max_bytes > 0 && o->doc_max_bytes < RS_XML_MAX_BYTES
                                        ? o->doc_max_bytes
                                        : RS_XML_MAX_BYTES)
                                       - 1024 - rs_xml_escaped_len(o->capability_url, 1));
    for (;;) {
        apr_array_header_t *rows;
        apr_pool_clear(pp);
        rv = rs_inventory_page(store, pp, o->set, after_dir, after_name, PAGE_ROWS, &rows);
        for (i = 0; rv == APR_SUCCESS && i < rows->nelts; i++) {
            rv = put_row(&dw, &APR_ARRAY_IDX(rows, i, rs_item_t));
        }
        if (rv != APR_SUCCESS || rows->nelts < PAGE_ROWS) {
            break;
        }
        after_dir = apr_pstrdup(p, APR_ARRAY_IDX(rows, rows->nelts - 1, rs_item_t).dir);
        after_name = apr_pstrdup(p, APR_ARRAY_IDX(rows, rows->nelts - 1, rs_item_t).name);
    }
    apr_pool_destroy(pp);
    if (rv == APR_SUCCESS) {
        rv = package_flush(&dw);
    }
    if (rv == APR_SUCCESS) {
        rv = pending_publish(&dw); /* every package before the document */
    }
    pending_drop(&dw);
    if (rv == APR_SUCCESS) {
        rv = rs_dumpdoc_write(o, dir, dw.pkgs, dw.kp, &info->parts);
    }
    apr_pool_destroy(dw.sp);
    apr_pool_destroy(dw.kp);
    return rv;
}
