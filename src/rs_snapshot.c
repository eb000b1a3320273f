/* rs_snapshot.c - see rs_snapshot.h */
#include <stdio.h>
#include <string.h>
#include <apr_file_io.h>
#include <apr_strings.h>
#include "rs_file.h"
#include "rs_snapshot.h"
#include "rs_statedir.h"
#include "rs_time.h"
#include "rs_xml.h"

#define PAGE_ROWS 5000

/* Large writes: besides being cheaper to write, a file written in big
 * chunks is laid out in fewer extents and is faster to serve.  Every file
 * is finished (flushed, synced, closed) before the next one: a snapshot
 * is published by renaming its directory, and must be complete on disk
 * before that. */
#define OUT_BUFSIZE (1024 * 1024)

/* Header of a Resource List (or part): rs:ln up [, index], rs:md. */
static int list_head(rs_xml_t *w, const rs_snapshot_opts_t *o, int with_index)
{
    char at[RS_TIME_BUFSIZE], done[RS_TIME_BUFSIZE];
    rs_xml_attr_t md[3];

    md[0].name = "capability"; md[0].value = "resourcelist";
    md[1].name = "at"; md[1].value = rs_time_format(at, o->at);
    md[2].name = "completed"; md[2].value = rs_time_format(done, o->completed);
    if (rs_xml_begin(w, "urlset") < 0
        || rs_xml_ln(w, "up", o->capability_url, NULL, 0) < 0
        || (with_index && rs_xml_ln(w, "index", o->list_url, NULL, 0) < 0)
        || rs_xml_md(w, md, 3) < 0) {
        return -1;
    }
    return 0;
}

static int write_entry(rs_xml_t *w, apr_pool_t *p, const rs_snapshot_opts_t *o,
                       const rs_item_t *it)
{
    rs_record_t r;
    rs_entry_from_item(&r, it);
    return rs_entry_write(w, p, &o->entry, &r);
}

apr_status_t rs_snapshot_write(rs_store_t *st, const rs_snapshot_opts_t *o,
                               const char *dir, apr_uint64_t gen, apr_pool_t *p,
                               rs_snapshot_info_t *info)
{
    apr_pool_t *fp, *pp, *ep;
    apr_file_t *f = NULL;
    rs_xml_t *w = NULL;
    apr_int64_t total = 0, in_part = 0, max = o->max_entries > 0 ? o->max_entries : 50000;
    const char *after_dir = NULL, *after_name = NULL;
    apr_status_t rv;
    int part = 0, nparts, indexed, i;

    memset(info, 0, sizeof(*info));
    rv = rs_store_count(st, o->set, &total);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    indexed = total > max;
    nparts = indexed ? (int)((total + max - 1) / max) : 0;
    apr_pool_create(&fp, p);   /* per output file */
    apr_pool_create(&pp, p);   /* per page of rows */
    apr_pool_create(&ep, p);   /* per entry */

    if (!indexed) {
        if ((rv = rs_file_create(&f, rs_statedir_gen_file(fp, dir, 0), OUT_BUFSIZE, fp)) != APR_SUCCESS) {
            goto done;
        }
        w = rs_xml_open_file(fp, f);
        if (!w || list_head(w, o, 0) < 0) {
            rv = APR_EGENERAL;
            goto done;
        }
    }

    for (;;) {
        apr_array_header_t *rows;
        apr_pool_clear(pp);
        rv = rs_store_page(st, pp, o->set, after_dir, after_name, PAGE_ROWS, &rows);
        if (rv != APR_SUCCESS) {
            goto done;
        }
        for (i = 0; i < rows->nelts; i++) {
            const rs_item_t *it = &APR_ARRAY_IDX(rows, i, rs_item_t);
            if (indexed && (!w || in_part == max)) {
                if (w) {
                    if (rs_xml_end(w) < 0 || rs_file_finish(f) != APR_SUCCESS) {
                        rv = APR_EGENERAL;
                        goto done;
                    }
                    apr_pool_clear(fp);
                }
                part++;
                in_part = 0;
                if ((rv = rs_file_create(&f, rs_statedir_gen_file(fp, dir, part), OUT_BUFSIZE, fp)) != APR_SUCCESS) {
                    goto done;
                }
                w = rs_xml_open_file(fp, f);
                if (!w || list_head(w, o, 1) < 0) {
                    rv = APR_EGENERAL;
                    goto done;
                }
            }
            if (write_entry(w, ep, o, it) < 0) {
                rv = APR_EGENERAL;
                goto done;
            }
            apr_pool_clear(ep);
            in_part++;
            info->entries++;
        }
        if (rows->nelts < PAGE_ROWS) {
            break;
        }
        {
            const rs_item_t *last = &APR_ARRAY_IDX(rows, rows->nelts - 1, rs_item_t);
            after_dir = apr_pstrdup(p, last->dir);
            after_name = apr_pstrdup(p, last->name);
        }
    }
    if (w) {
        if (rs_xml_end(w) < 0 || rs_file_finish(f) != APR_SUCCESS) {
            rv = APR_EGENERAL;
            goto done;
        }
        apr_pool_clear(fp);
        w = NULL;
    }
    /* The count and the pages come from one writer (the watcher) with no
     * write in between, so they agree; a mismatch means a bug. */
    if (indexed && part != nparts) {
        rv = APR_EGENERAL;
        goto done;
    }

    if (indexed) {
        char at[RS_TIME_BUFSIZE], done_s[RS_TIME_BUFSIZE];
        rs_xml_attr_t md[3];
        if ((rv = rs_file_create(&f, rs_statedir_gen_file(fp, dir, 0), OUT_BUFSIZE, fp)) != APR_SUCCESS) {
            goto done;
        }
        w = rs_xml_open_file(fp, f);
        md[0].name = "capability"; md[0].value = "resourcelist";
        md[1].name = "at"; md[1].value = rs_time_format(at, o->at);
        md[2].name = "completed"; md[2].value = rs_time_format(done_s, o->completed);
        if (!w || rs_xml_begin(w, "sitemapindex") < 0
            || rs_xml_ln(w, "up", o->capability_url, NULL, 0) < 0
            || rs_xml_md(w, md, 3) < 0) {
            rv = APR_EGENERAL;
            goto done;
        }
        for (i = 1; i <= nparts; i++) {
            const char *loc = apr_psprintf(ep, "%s%" APR_UINT64_T_FMT "-%d.xml",
                                           o->part_url_prefix, gen, i);
            if (rs_xml_entry_begin(w, loc, NULL) < 0 || rs_xml_md(w, md + 1, 2) < 0
                || rs_xml_entry_end(w) < 0) {
                rv = APR_EGENERAL;
                goto done;
            }
            apr_pool_clear(ep);
        }
        if (rs_xml_end(w) < 0 || rs_file_finish(f) != APR_SUCCESS) {
            rv = APR_EGENERAL;
            goto done;
        }
        w = NULL;
    }

    info->gen = gen;
    info->at = o->at;
    info->completed = o->completed;
    info->parts = nparts;
    {
        const char *s = apr_psprintf(fp, "%" APR_UINT64_T_FMT " %" APR_TIME_T_FMT " %"
                                     APR_TIME_T_FMT " %" APR_INT64_T_FMT " %d\n",
                                     gen, o->at, o->completed, info->entries, nparts);
        if ((rv = rs_file_create(&f, rs_statedir_gen_info(fp, dir), OUT_BUFSIZE, fp)) == APR_SUCCESS) {
            rv = apr_file_write_full(f, s, strlen(s), NULL);
            if (rs_file_finish(f) != APR_SUCCESS && rv == APR_SUCCESS) {
                rv = APR_EGENERAL;
            }
        }
    }
done:
    apr_pool_destroy(ep);
    apr_pool_destroy(pp);
    apr_pool_destroy(fp);
    return rv;
}

apr_status_t rs_snapshot_read_info(const char *dir, apr_pool_t *p, rs_snapshot_info_t *info)
{
    apr_file_t *f;
    char buf[256];
    apr_size_t n = sizeof(buf) - 1;
    unsigned long long gen;
    long long at, completed, entries;
    int parts;
    apr_status_t rv;

    rv = apr_file_open(&f, rs_statedir_gen_info(p, dir), APR_FOPEN_READ,
                       APR_FPROT_OS_DEFAULT, p);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    rv = apr_file_read(f, buf, &n);
    apr_file_close(f);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    buf[n] = '\0';
    if (sscanf(buf, "%llu %lld %lld %lld %d", &gen, &at, &completed, &entries, &parts) != 5
        || !strchr(buf, '\n')) {
        return APR_EINVAL;
    }
    info->gen = gen;
    info->at = at;
    info->completed = completed;
    info->entries = entries;
    info->parts = parts;
    return APR_SUCCESS;
}
