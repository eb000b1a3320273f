/* SPDX-License-Identifier: Apache-2.0 */
/* rs_cdump.c - see rs_cdump.h */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <apr_file_info.h>
#include <apr_hash.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include "rs_beneath.h"
#include "rs_capture.h"
#include "rs_cdump.h"
#include "rs_entry.h"
#include "rs_file.h"
#include "rs_hash.h"
#include "rs_parse.h"
#include "rs_path.h"
#include "rs_statedir.h"
#include "rs_time.h"
#include "rs_uri.h"
#include "rs_xml.h"
#include "rs_zip.h"

#define PAGE_RECORDS 1000


static const char *sidecar(apr_pool_t *p, const rs_cdump_opts_t *o, apr_int64_t id, const char *ext)
{
    return apr_psprintf(p, "%s/%s-%" APR_INT64_T_FMT ".%s", o->dir, o->history, id, ext);
}

int rs_cdump_done(const rs_cdump_opts_t *o, apr_int64_t id, apr_pool_t *p)
{
    return rs_file_exists(p, sidecar(p, o, id, "sum"))
           || rs_file_exists(p, sidecar(p, o, id, "skip"));
}

/* A small sidecar file's content, NUL-terminated, or NULL. */
static char *read_small(apr_pool_t *p, const char *path)
{
    char *buf = apr_palloc(p, 1024);
    apr_file_t *f;
    apr_size_t n = 1023;

    if (apr_file_open(&f, path, APR_FOPEN_READ, 0, p) != APR_SUCCESS) {
        return NULL;
    }
    if (apr_file_read_full(f, buf, n, &n) != APR_SUCCESS && n == 0) {
        apr_file_close(f);
        return NULL;
    }
    apr_file_close(f);
    buf[n] = '\0';
    return buf;
}

int rs_cdump_rev(const rs_cdump_opts_t *o, apr_int64_t id, apr_pool_t *p)
{
    const char *s = read_small(p, sidecar(p, o, id, "rev"));
    apr_int64_t v = s ? apr_atoi64(s) : 0;
    return v > 0 && v < 1000000000 ? (int)v : 0;
}

/* The package (manifest: its copy) of list id at its current revision. */
static const char *pkg_file(apr_pool_t *p, const rs_cdump_opts_t *o, apr_int64_t id, int manifest)
{
    return rs_statedir_cdump_pkg(p, o->dir, o->history, id, rs_cdump_rev(o, id, p), manifest);
}

/* One record of the package being built. */
typedef struct {
    rs_record_t r;
    const char *capture; /* its captured bytes (created/updated) */
    apr_int64_t cap_mtime_ns;
    int withheld; /* written as a deletion, without bytes */
} member_t;

/* The sequences (apr_int64_t keys) of the list's created/updated records
 * whose path has a later deletion in the journal. */
static apr_status_t superseded(rs_journal_t *j, const rs_cdump_opts_t *o, const rs_changelist_t *cl,
                               apr_pool_t *p, apr_hash_t **out)
{
    apr_int64_t next = cl->first_seq;
    apr_status_t rv;
    int i;

    *out = apr_hash_make(p);
    for (;;) {
        apr_array_header_t *vs;
        if ((rv = rs_journal_versions(j, p, o->set, next, cl->last_seq, PAGE_RECORDS, &vs))
            != APR_SUCCESS) {
            return rv;
        }
        for (i = 0; i < vs->nelts; i++) {
            const rs_journal_version_t *v = &APR_ARRAY_IDX(vs, i, rs_journal_version_t);
            next = v->seq + 1;
            if (v->deleted) {
                apr_hash_set(*out, apr_pmemdup(p, &v->seq, sizeof(v->seq)), sizeof(v->seq), "");
            }
        }
        if (vs->nelts < PAGE_RECORDS) {
            return APR_SUCCESS;
        }
    }
}

/* What asks whether a path is served now: the set's tree and a pool for
 * the check callback's answers, cleared when the directory changes. */
typedef struct {
    const rs_cdump_opts_t *o;
    rs_beneath_t *tree; /* NULL: nothing is asked */
    apr_pool_t *cp;
    const char *cp_dir;
} recheck_t;

/* Whether the file at the record's path exists (reached as the dump
 * builders reach files, rs_beneath.h) and httpd would not serve it now.
 * A path that is gone is left to the journal: its deletion, if it is
 * one, comes as a record (a file replaced by "rm; cp" is gone for a
 * moment and must keep its version). */
static int denied_now(recheck_t *rc, const rs_record_t *r, const char *rel)
{
    struct stat sb;
    rs_scan_media_t media = { NULL, NULL };
    int link;

    if (!rc->o->check || !rc->tree || rs_beneath_stat(rc->tree, rel, &sb, &link) != 0) {
        return 0;
    }
    if (!rc->cp_dir || strcmp(rc->cp_dir, r->dir)) {
        apr_pool_clear(rc->cp);
        rc->cp_dir = apr_pstrdup(rc->cp, r->dir);
    }
    return !rc->o->check(rc->o->check_baton, rc->cp, rel, link ? RS_SCAN_CHECK_LINK : 0, &media);
}

/* The capture of version r (key: its SHA-256 digest) is gone or short:
 * make it again from the file at its path when that still holds the
 * version's bytes -- the same length and the same SHA-256 digest over
 * them, read by one read that also writes the capture (rs_hash_fd_upto),
 * so what is kept is exactly what was digested.  The capture gets the
 * version's mtime, as the one lost had (rs_capture_keep), so the package
 * has the bytes it would have had.  Returns 1 when the capture is back. */
static int recapture(recheck_t *rc, const rs_record_t *r, const char *rel, const char *key)
{
    char hex[RS_HASH_COUNT][RS_HASH_HEXMAX];
    rs_capture_tmp_t t;
    struct stat sb;
    apr_off_t n = 0;
    int fd, err = 0, ok;

    if (!rc->tree || (fd = rs_beneath_open(rc->tree, rel, &sb)) < 0) {
        return 0;
    }
    if ((apr_int64_t)sb.st_size != r->size || rs_capture_open(&t, rc->o->capture_dir) != 0) {
        close(fd);
        return 0;
    }
    ok = rs_hash_fd_upto(fd, RS_CAPTURE_HASH, hex, (apr_off_t)r->size, &n, NULL, t.fd, &err)
             == APR_SUCCESS
         && !err && n == (apr_off_t)r->size && !strcmp(hex[RS_CAPTURE_HASH_INDEX], key);
    close(fd);
    if (!ok) {
        rs_capture_drop(&t);
        return 0;
    }
    return rs_capture_keep(&t, key, r->lastmod_ns) == 0;
}

/* Whether the capture at path has the record's length (*sb its metadata). */
static int capture_ok(const char *path, const rs_record_t *r, struct stat *sb)
{
    return path && stat(path, sb) == 0 && S_ISREG(sb->st_mode)
           && (apr_int64_t)sb->st_size == r->size;
}

/* The list's records, each created/updated one with its capture
 * (RS_CDUMP_EMISSING and *missing when one has none of its length), or
 * withheld (see rs_cdump.h; *withheld counts them). */
static apr_status_t collect(rs_journal_t *j, const rs_cdump_opts_t *o, const rs_changelist_t *cl,
                            apr_pool_t *p, apr_array_header_t **out, const char **missing,
                            int *withheld, int *recaptured)
{
    apr_array_header_t *ms = apr_array_make(p, 64, sizeof(member_t));
    apr_int64_t next = cl->first_seq;
    apr_hash_t *gone;
    recheck_t rc = { o, NULL, NULL, NULL };
    apr_status_t rv;
    int i;

    if ((rv = superseded(j, o, cl, p, &gone)) != APR_SUCCESS) {
        return rv;
    }
    if (o->root && rs_beneath_open_root(&rc.tree, o->root, p) == APR_SUCCESS) {
        apr_pool_create(&rc.cp, p);
    }
    for (;;) {
        apr_array_header_t *recs;
        if ((rv = rs_journal_records(j, p, o->set, next, cl->last_seq, PAGE_RECORDS, &recs))
            != APR_SUCCESS) {
            return rv;
        }
        for (i = 0; i < recs->nelts; i++) {
            member_t *m = apr_array_push(ms);
            struct stat sb;
            const char *key, *rel;
            m->r = APR_ARRAY_IDX(recs, i, rs_record_t);
            m->capture = NULL;
            m->withheld = 0;
            next = m->r.seq + 1;
            if (m->r.change == RS_CHANGE_DELETED) {
                continue;
            }
            rel = rs_path_join(p, m->r.dir, m->r.name);
            if (apr_hash_get(gone, &m->r.seq, sizeof(m->r.seq)) || denied_now(&rc, &m->r, rel)) {
                m->withheld = 1;
                (*withheld)++;
                continue;
            }
            key = rs_capture_key(m->r.hash);
            m->capture = key ? rs_capture_path(p, o->capture_dir, key) : NULL;
            if (!capture_ok(m->capture, &m->r, &sb) && m->capture
                && recapture(&rc, &m->r, rel, key)) {
                (*recaptured)++;
            }
            if (!capture_ok(m->capture, &m->r, &sb)) {
                *missing = apr_psprintf(p, "%s (record %" APR_INT64_T_FMT ")",
                                        rs_path_join(p, m->r.dir, m->r.name), m->r.seq);
                return RS_CDUMP_EMISSING;
            }
            m->cap_mtime_ns = (apr_int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
        }
        if (recs->nelts < PAGE_RECORDS) {
            break;
        }
    }
    *out = ms;
    return APR_SUCCESS;
}

static const char *member_name(apr_pool_t *p, const rs_record_t *r)
{
    const char *dir = apr_psprintf(p, RS_CDUMP_MEMBER_DIR "%" APR_INT64_T_FMT "/", r->seq);
    /* The sequence makes the name unique: an encoded name needs no
     * prefix of its own. */
    return rs_zip_member_name(p, dir, dir, rs_path_join(p, r->dir, r->name));
}

apr_int64_t rs_cdump_path_len(apr_pool_t *p, const rs_record_t *r)
{
    return (apr_int64_t)sizeof(" path=\"/\"") - 1 + rs_xml_escaped_len(member_name(p, r), 1)
           + RS_CDUMP_ENTRY_SLACK;
}

/* One manifest entry.  ResourceSync 1.1, section 13.2: "<lastmod>" with
 * the semantics of section 7 (the resource's modification time) and "the
 * attributes datetime, hash and length": the change time is datetime.
 * ResourceSync 1.0 (Z39.99-2014) has no datetime attribute; its Change
 * Dump Manifest, like its Change List, conveys the time of the change in
 * <lastmod> (its section 13.2 example: <lastmod> and rs:md change, hash,
 * length, type, path) -- as rs_entry writes 1.0 Change List entries. */
static int manifest_entry(rs_xml_t *w, apr_pool_t *p, const rs_cdump_opts_t *o, const member_t *m)
{
    char lm[RS_TIME_BUFSIZE], dt[RS_TIME_BUFSIZE], len[32];
    rs_xml_attr_t md[7];
    int n = 0;
    const char *rel = rs_path_join(p, m->r.dir, m->r.name);
    const char *epath = rs_uri_escape_path(p, rel);

    /* A withheld version is a deletion at its datetime (rs_cdump.h). */
    md[n].name = "change";
    md[n++].value = rs_journal_change_name(m->withheld ? RS_CHANGE_DELETED : m->r.change);
    if (!o->spec10) {
        md[n].name = "datetime";
        md[n++].value = rs_time_format(dt, m->r.datetime);
    }
    if (m->r.change != RS_CHANGE_DELETED && !m->withheld) {
        apr_snprintf(len, sizeof(len), "%" APR_INT64_T_FMT, m->r.size);
        md[n].name = "hash";
        md[n++].value = rs_hash_attr(p, o->hashes, m->r.hash);
        md[n].name = "length";
        md[n++].value = len;
        md[n].name = "type";
        md[n++].value = m->r.type;
        md[n].name = "encoding"; /* as in the Change List (rs_entry.c) */
        md[n++].value = m->r.encoding;
        md[n].name = "path";
        md[n++].value = apr_pstrcat(p, "/", member_name(p, &m->r), NULL);
    }
    return rs_xml_entry_begin(w, apr_pstrcat(p, o->url_base, epath, NULL),
                              o->spec10 ? rs_time_format(lm, m->r.datetime)
                                        : rs_time_format_ns(lm, m->r.lastmod_ns))
                       < 0
                   || rs_xml_md(w, md, n) < 0
                   || (m->r.change != RS_CHANGE_DELETED && !m->withheld
                       && rs_entry_links_write(w, p, o->hashes, o->links, m->r.links, epath) < 0)
                   || rs_xml_entry_end(w) < 0
               ? -1
               : 0;
}

static apr_status_t manifest_render(const rs_cdump_opts_t *o, const rs_changelist_t *cl,
                                    const apr_array_header_t *ms, apr_pool_t *p, rs_xml_membuf_t *m)
{
    char from[RS_TIME_BUFSIZE], until[RS_TIME_BUFSIZE];
    rs_xml_t *w = rs_xml_open(p, rs_xml_membuf_sink, m);
    int i;

    if (!w
        || rs_xml_head(w, "urlset", o->capability_url, NULL, "changedump-manifest", "from",
                       rs_time_format(from, cl->from), "until", rs_time_format(until, cl->until))
               < 0) {
        return APR_ENOMEM;
    }
    for (i = 0; i < ms->nelts; i++) {
        if (manifest_entry(w, p, o, &APR_ARRAY_IDX(ms, i, member_t)) < 0) {
            return APR_ENOMEM;
        }
    }
    return rs_xml_end(w) < 0 ? APR_ENOMEM : APR_SUCCESS;
}

static apr_status_t put_file(apr_pool_t *p, const char *path, const char *buf, apr_size_t len)
{
    return rs_file_replace_buf(p, path, buf, len);
}

/* The package itself, from the manifest m and the members ms. */
static apr_status_t package_write(const rs_cdump_opts_t *o, const rs_changelist_t *cl,
                                  const apr_array_header_t *ms, const rs_xml_membuf_t *m,
                                  apr_pool_t *p, rs_zip_result_t *res)
{
    rs_zip_t *z;
    apr_status_t rv;
    int i;

    if ((rv = rs_zip_create(&z, pkg_file(p, o, cl->id, 0), m->buf, m->len,
                            (apr_int64_t)cl->until * 1000, p))
        != APR_SUCCESS) {
        return rv;
    }
    for (i = 0; i < ms->nelts; i++) {
        const member_t *mb = &APR_ARRAY_IDX(ms, i, member_t);
        if (mb->r.change == RS_CHANGE_DELETED || mb->withheld) {
            continue;
        }
        if ((rv = rs_zip_add_path(z, member_name(p, &mb->r), mb->capture, mb->r.size,
                                  mb->cap_mtime_ns))
            != APR_SUCCESS) {
            rs_zip_abort(z);
            return rv;
        }
    }
    return rs_zip_finish(z, o->hashes, res);
}

apr_status_t rs_cdump_package(rs_journal_t *j, const rs_cdump_opts_t *o, const rs_changelist_t *cl,
                              apr_pool_t *p, rs_cdump_result_t *out)
{
    apr_array_header_t *ms;
    rs_xml_membuf_t m = { p, NULL, 0, 0 };
    rs_zip_result_t res;
    const char *hex[RS_HASH_COUNT], *sum, **missing = &out->missing;
    apr_status_t rv;
    int i;

    memset(out, 0, sizeof(*out));
    apr_dir_make_recursive(o->dir, APR_FPROT_OS_DEFAULT, p);
    rv = collect(j, o, cl, p, &ms, missing, &out->withheld, &out->recaptured);
    if (rv == RS_CDUMP_EMISSING) {
        put_file(p, sidecar(p, o, cl->id, "skip"), *missing, strlen(*missing));
        return rv;
    }
    if (rv != APR_SUCCESS || (rv = manifest_render(o, cl, ms, p, &m)) != APR_SUCCESS) {
        return rv;
    }
    rv = package_write(o, cl, ms, &m, p, &res);
    if (rv == RS_ZIP_ECHANGED) {
        /* A capture was replaced meanwhile by another of its name: the
         * same bytes, another mtime only after a crash.  Treated as gone. */
        *missing = "a capture changed while packaged";
        put_file(p, sidecar(p, o, cl->id, "skip"), *missing, strlen(*missing));
        return RS_CDUMP_EMISSING;
    }
    if (rv != APR_SUCCESS
        || (rv = put_file(p, pkg_file(p, o, cl->id, 1), m.buf, m.len)) != APR_SUCCESS) {
        return rv;
    }
    for (i = 0; i < RS_HASH_COUNT; i++) {
        hex[i] = res.hex[i];
    }
    sum = apr_psprintf(p, "%" APR_OFF_T_FMT " %s\n", res.length, rs_hash_attr(p, o->hashes, hex));
    out->bytes = res.length;
    return put_file(p, sidecar(p, o, cl->id, "sum"), sum, strlen(sum));
}

int rs_cdump_sum(const rs_cdump_opts_t *o, apr_int64_t id, apr_pool_t *p, apr_int64_t *length,
                 const char **hash)
{
    char *buf = read_small(p, sidecar(p, o, id, "sum")), *sp, *nl;

    if (!buf) {
        return 0;
    }
    sp = strchr(buf, ' ');
    if (!sp || !(nl = strchr(sp, '\n'))) {
        return 0;
    }
    *nl = '\0';
    *length = apr_atoi64(buf);
    *hash = apr_pstrdup(p, sp + 1);
    return 1;
}


/* The files of list id that stay: its sidecars, and its package and
 * manifest copy of the current revision (into keep, by name). */
static void keep_list(apr_hash_t *keep, const rs_cdump_opts_t *o, apr_int64_t id, apr_pool_t *p)
{
    static const char *const sidecars[] = { "sum", "skip", "rev", NULL };
    int i;

    for (i = 0; sidecars[i]; i++) {
        apr_hash_set(keep, apr_filepath_name_get(sidecar(p, o, id, sidecars[i])),
                     APR_HASH_KEY_STRING, "");
    }
    for (i = 0; i < 2; i++) {
        apr_hash_set(keep, apr_filepath_name_get(pkg_file(p, o, id, i)), APR_HASH_KEY_STRING, "");
    }
}

int rs_cdump_prune(const rs_cdump_opts_t *o, const apr_array_header_t *closed, apr_pool_t *p)
{
    apr_hash_t *keep = apr_hash_make(p);
    const char *prefix = apr_pstrcat(p, o->history, "-", NULL);
    apr_dir_t *d;
    apr_finfo_t fi;
    int i, n, removed = 0;

    for (i = 0; i < closed->nelts; i++) {
        keep_list(keep, o, APR_ARRAY_IDX(closed, i, rs_changelist_t).id, p);
    }
    if (apr_dir_open(&d, o->dir, p) != APR_SUCCESS) {
        return 0;
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        if (fi.filetype != APR_REG || !strcmp(fi.name, "changedump.xml")
            || apr_hash_get(keep, fi.name, APR_HASH_KEY_STRING)
            || (!strncmp(fi.name, prefix, strlen(prefix))
                && rs_parse_cdump_index_part(fi.name + strlen(prefix), &n))) {
            continue; /* a part of the index: rs_cdumpdoc_write keeps them */
        }
        if (apr_file_remove(apr_pstrcat(p, o->dir, "/", fi.name, NULL), p) == APR_SUCCESS) {
            removed++;
        }
    }
    apr_dir_close(d);
    return removed;
}

/* Whether the built package of list id holds the bytes of version seq:
 * its manifest copy (of the current revision) gives the member's path,
 * which begins with the sequence's directory; a withheld version is
 * written without one.  So a package built again without the path's
 * versions is not withdrawn twice: a withdrawal recorded by rs-tool while
 * no watcher ran, then applied by the next watcher after its Change Dump
 * job built the list's package again, finds nothing left to take. */
static int package_holds(const rs_cdump_opts_t *o, apr_int64_t id, apr_int64_t seq, apr_pool_t *p)
{
    const char *needle =
        apr_psprintf(p, " path=\"/" RS_CDUMP_MEMBER_DIR "%" APR_INT64_T_FMT "/", seq);
    return rs_file_holds(pkg_file(p, o, id, 1), needle, strlen(needle));
}

/* Withdraw the package of list id (see rs_cdump.h). */
static apr_status_t withdraw_list(const rs_cdump_opts_t *o, apr_int64_t id, apr_pool_t *p)
{
    int rev = rs_cdump_rev(o, id, p), i;
    const char *next = apr_psprintf(p, "%d\n", rev + 1);
    apr_status_t rv;

    /* The new revision first: a crash after it leaves the old files to
     * rs_cdump_prune, and no later build can take the old name again. */
    if ((rv = put_file(p, sidecar(p, o, id, "rev"), next, strlen(next))) != APR_SUCCESS) {
        return rv;
    }
    for (i = 0; i < 2; i++) {
        rv = apr_file_remove(rs_statedir_cdump_pkg(p, o->dir, o->history, id, rev, i), p);
        if (rv != APR_SUCCESS && !APR_STATUS_IS_ENOENT(rv)) {
            return rv;
        }
    }
    apr_file_remove(sidecar(p, o, id, "sum"), p);
    apr_file_remove(sidecar(p, o, id, "skip"), p);
    return rs_file_sync_dir(o->dir);
}

apr_status_t rs_cdump_withdraw(const rs_cdump_opts_t *o, const apr_array_header_t *closed,
                               const apr_array_header_t *seqs, apr_pool_t *p,
                               apr_array_header_t **ids)
{
    apr_status_t rv;
    int i, k = 0;

    *ids = apr_array_make(p, 4, sizeof(apr_int64_t));
    /* Both in order: each list once, however many versions it holds. */
    for (i = 0; i < closed->nelts && k < seqs->nelts; i++) {
        const rs_changelist_t *cl = &APR_ARRAY_IDX(closed, i, rs_changelist_t);
        int holds = 0, skipped = !rs_file_exists(p, sidecar(p, o, cl->id, "sum"));
        while (k < seqs->nelts && APR_ARRAY_IDX(seqs, k, apr_int64_t) <= cl->last_seq) {
            apr_int64_t seq = APR_ARRAY_IDX(seqs, k, apr_int64_t);
            holds |= seq >= cl->first_seq && (skipped || package_holds(o, cl->id, seq, p));
            k++;
        }
        if (!holds || !rs_cdump_done(o, cl->id, p)) {
            continue;
        }
        if ((rv = withdraw_list(o, cl->id, p)) != APR_SUCCESS) {
            return rv;
        }
        APR_ARRAY_PUSH(*ids, apr_int64_t) = cl->id;
    }
    return APR_SUCCESS;
}

/* rs_capture_use_fn of the collection: the journal's records of the
 * content (one indexed lookup per capture). */
typedef struct {
    rs_journal_t *j;
    const char *set;
} gc_t;

static apr_status_t capture_use(void *baton, apr_pool_t *p, const char *key, int *kept,
                                apr_time_t *withdrawn)
{
    gc_t *g = baton;
    return rs_journal_digest_use(g->j, p, g->set, key, kept, withdrawn);
}

apr_status_t rs_cdump_gc(rs_journal_t *j, const rs_cdump_opts_t *o, apr_time_t young, apr_pool_t *p,
                         int *removed, apr_int64_t *bytes)
{
    gc_t g;
    g.j = j;
    g.set = o->set;
    return rs_capture_gc(o->capture_dir, capture_use, &g, young, p, removed, bytes);
}

apr_int64_t rs_cdump_bytes(const char *dir, apr_pool_t *p)
{
    return rs_file_dir_bytes(p, dir, ".zip");
}
