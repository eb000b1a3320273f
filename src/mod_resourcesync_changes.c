/* mod_resourcesync_changes.c - the journal and Change Lists in the watcher.
 *
 * Lifecycle: after every scan of a set the watcher calls
 * rs_changes_update(): it closes the open Change List when it reached
 * ResourceSyncMaxEntries (at a record boundary) or its period ended,
 * drops closed lists older than ResourceSyncJournalRetention, and rewrites
 * the documents that changed, as files below <statedir>/changelists/<set>:
 *   index.xml    the Change List Index (closed lists, then the open one)
 *   <id>.xml     each closed Change List, written once when it closes and
 *                never again (byte-identical forever)
 *   open-<id>.xml the open Change List, rewritten when records arrive and
 *                removed once the list is closed and published as <id>.xml
 * Every file appears by an atomic rename of a synced temporary file, so a
 * child serves either the old or the new bytes, never a mixture.  Records
 * themselves are written by the scan, in its transaction, through
 * rs_changes_record(); the files are derived from the store and rebuilt
 * at startup if missing, so a crash at any point loses nothing.
 */
#include <string.h>
#include <apr_strings.h>
#include <apr_file_io.h>
#include "mod_resourcesync.h"
#include "rs_changelist.h"
#include "rs_journal.h"

apr_status_t rs_changes_record(void *baton, int change, const rs_item_t *it)
{
    rs_changes_ctx_t *c = baton;
    rs_record_t r;

    memset(&r, 0, sizeof(r));
    r.dir = it->dir;
    r.name = it->name;
    r.change = change;
    r.lastmod_ns = it->mtime_ns;
    r.size = it->size;
    r.type = it->type;
    memcpy(r.hash, it->hash, sizeof(r.hash));
    c->appended++;
    return rs_journal_append(c->journal, c->set->name, &r);
}

static void opts_of(apr_pool_t *p, const rs_set_t *set, rs_changelist_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->set = set->name;
    o->url_base = set->root_url;
    o->capability_url = set->capability_url;
    o->index_url = set->cl_index_url;
    o->list_url_prefix = apr_pstrcat(p, set->doc_base, "changelist/", NULL);
    o->hashes = set->hashes;
    o->spec10 = set->spec10;
}

static apr_status_t publish_file(apr_pool_t *p, const char *dir, const char *name,
                                 rs_journal_t *j, const rs_changelist_opts_t *o,
                                 const rs_changelist_t *cl, const apr_array_header_t *closed)
{
    const char *tmp = apr_pstrcat(p, dir, "/.tmp-", name, NULL);
    const char *final = apr_pstrcat(p, dir, "/", name, NULL);
    apr_pool_t *fp;
    apr_file_t *f;
    rs_xml_t *w;
    apr_status_t rv;

    apr_pool_create(&fp, p);
    rv = apr_file_open(&f, tmp, APR_FOPEN_WRITE | APR_FOPEN_CREATE | APR_FOPEN_TRUNCATE
                       | APR_FOPEN_BUFFERED, APR_FPROT_OS_DEFAULT, fp);
    if (rv == APR_SUCCESS) {
        w = rs_xml_open_file(fp, f);
        if (!w) {
            rv = APR_EGENERAL;
        }
        else if (closed) {
            rv = rs_changelist_write_index(o, closed, cl, w, fp);
        }
        else {
            rv = rs_changelist_write(j, o, cl, w, fp);
        }
        if (rv == APR_SUCCESS && (rv = apr_file_flush(f)) == APR_SUCCESS) {
            rv = apr_file_sync(f);
        }
        if (apr_file_close(f) != APR_SUCCESS && rv == APR_SUCCESS) {
            rv = APR_EGENERAL;
        }
    }
    if (rv == APR_SUCCESS) {
        rv = apr_file_rename(tmp, final, fp);
    }
    if (rv != APR_SUCCESS) {
        apr_file_remove(tmp, fp);
    }
    apr_pool_destroy(fp);
    return rv;
}

static int file_exists(apr_pool_t *p, const char *path)
{
    apr_finfo_t fi;
    return apr_stat(&fi, path, APR_FINFO_TYPE, p) == APR_SUCCESS;
}

apr_status_t rs_changes_update(apr_pool_t *p, rs_journal_t *j, const rs_set_t *set,
                               int changed, const rs_logger_t *log)
{
    rs_changelist_opts_t o;
    apr_array_header_t *closed, *dropped;
    rs_changelist_t openl, done;
    rs_status_set_t cur;
    apr_time_t now = apr_time_now();
    apr_status_t rv;
    int i, index_dirty = changed, guard;

    opts_of(p, set, &o);
    apr_dir_make_recursive(set->cl_dir, APR_FPROT_OS_DEFAULT, p);

    /* Close at ResourceSyncMaxEntries (record boundaries), then on time. */
    for (guard = 0; guard < 100000; guard++) {
        apr_array_header_t *recs;
        if ((rv = rs_journal_lists(j, p, set->name, &closed, &openl)) != APR_SUCCESS) {
            return rv;
        }
        if (openl.count <= set->max_entries) {
            break;
        }
        rv = rs_journal_records(j, p, set->name, openl.first_seq, -1, set->max_entries + 1,
                                &recs);
        if (rv != APR_SUCCESS || recs->nelts <= set->max_entries) {
            break;
        }
        rv = rs_journal_close(j, p, set->name,
                              APR_ARRAY_IDX(recs, set->max_entries - 1, rs_record_t).seq,
                              set->max_entries,
                              APR_ARRAY_IDX(recs, set->max_entries, rs_record_t).datetime,
                              &done);
        if (rv != APR_SUCCESS || !done.id) {
            break;
        }
        index_dirty = 1;
    }
    if ((rv = rs_journal_lists(j, p, set->name, &closed, &openl)) != APR_SUCCESS) {
        return rv;
    }
    if (openl.count > 0 && (openl.count >= set->max_entries || now - openl.from >= set->cl_period)) {
        if (rs_journal_close(j, p, set->name, -1, 0, now, &done) == APR_SUCCESS && done.id) {
            index_dirty = 1;
        }
    }

    /* Retention. */
    if (rs_journal_expire(j, p, set->name, now - set->retention, &dropped) == APR_SUCCESS
        && dropped->nelts) {
        for (i = 0; i < dropped->nelts; i++) {
            apr_file_remove(apr_psprintf(p, "%s/%" APR_INT64_T_FMT ".xml", set->cl_dir,
                                         APR_ARRAY_IDX(dropped, i, apr_int64_t)), p);
        }
        rs_log_emit(log, RS_LOG_INFO, 0, "set %s: %d Change Lists expired", set->name,
                    dropped->nelts);
        index_dirty = 1;
    }

    if ((rv = rs_journal_lists(j, p, set->name, &closed, &openl)) != APR_SUCCESS) {
        return rv;
    }
    /* Closed lists: written once (also after a crash left one unwritten). */
    for (i = 0; i < closed->nelts; i++) {
        const rs_changelist_t *cl = &APR_ARRAY_IDX(closed, i, rs_changelist_t);
        const char *name = apr_psprintf(p, "%" APR_INT64_T_FMT ".xml", cl->id);
        if (!file_exists(p, apr_pstrcat(p, set->cl_dir, "/", name, NULL))
            && (rv = publish_file(p, set->cl_dir, name, j, &o, cl, NULL)) != APR_SUCCESS) {
            rs_log_emit(log, RS_LOG_ERR, rv, "set %s: cannot write Change List %s",
                        set->name, name);
            return rv;
        }
    }
    {
        const char *name = apr_psprintf(p, "open-%" APR_INT64_T_FMT ".xml", openl.id);
        if (changed || index_dirty
            || !file_exists(p, apr_pstrcat(p, set->cl_dir, "/", name, NULL))) {
            rv = publish_file(p, set->cl_dir, name, j, &o, &openl, NULL);
            if (rv == APR_SUCCESS) {
                rv = publish_file(p, set->cl_dir, "index.xml", j, &o, &openl, closed);
            }
            if (rv != APR_SUCCESS) {
                rs_log_emit(log, RS_LOG_ERR, rv, "set %s: cannot write its Change Lists",
                            set->name);
                return rv;
            }
            rs_watcher_sync_dir(set->cl_dir);
        }
    }
    rs_status_read_set(set->slot, &cur);
    if (cur.cl_open_id != openl.id) {
        cur.cl_open_id = openl.id;
        rs_status_write_set(set->slot, &cur);
    }
    /* Open-list files of lists that are closed (and published) by now. */
    for (i = 0; i < closed->nelts; i++) {
        apr_file_remove(apr_psprintf(p, "%s/open-%" APR_INT64_T_FMT ".xml", set->cl_dir,
                                     APR_ARRAY_IDX(closed, i, rs_changelist_t).id), p);
    }
    return APR_SUCCESS;
}
