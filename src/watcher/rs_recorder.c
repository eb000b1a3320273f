/* SPDX-License-Identifier: Apache-2.0 */
/* rs_recorder.c - see rs_recorder.h */
#include <string.h>
#include "rs_cdump.h"
#include "rs_recorder.h"
#include "rs_notify.h"
#include "rs_ring.h"

struct rs_recorder_t {
    rs_journal_t *journal;
    const char *set;
    const rs_entry_opts_t *eo;
    apr_pool_t *pool;        /* of the window and the renderer */
    rs_entry_renderer_t *rr; /* made on first use */
    apr_int64_t appended;
    apr_int64_t deleted; /* of which deletions */
    rs_notify_t *notify; /* NULL: notifications off */
    int notify_max;
    /* The window: record k of the ones since the last take is in
     * win[k % cap], its entry's bytes in the slot-sized wbuf[k % cap].
     * Both arrays have walloc elements, doubled (up to cap) while the
     * window has not wrapped; the buffers stay put when they grow. */
    rs_record_t *win;
    char **wbuf;
    int walloc;
    int cap;
    apr_int64_t nwin;
    int paths;           /* count each record's manifest_extra */
    apr_pool_t *scratch; /* for that count, cleared each record */
};

rs_recorder_t *rs_recorder_create(apr_pool_t *p, rs_journal_t *j, const char *set,
                                  const rs_entry_opts_t *eo, int cap)
{
    rs_recorder_t *rc = apr_pcalloc(p, sizeof(*rc));
    rc->journal = j;
    rc->set = set;
    rc->eo = eo;
    rc->pool = p;
    rc->cap = cap > 0 ? cap : 0;
    return rc;
}

void rs_recorder_manifest_paths(rs_recorder_t *rc)
{
    if (!rc->paths) {
        apr_pool_create(&rc->scratch, rc->pool);
        rc->paths = 1;
    }
}

/* Room for one more record in the window (not wrapped yet: grow). */
static void window_grow(rs_recorder_t *rc)
{
    int n = rc->walloc ? rc->walloc * 2 : 16;
    rs_record_t *win;
    char **wbuf;

    if (rc->nwin >= rc->cap || rc->nwin < rc->walloc) {
        return;
    }
    n = n < rc->cap ? n : rc->cap;
    win = apr_palloc(rc->pool, sizeof(*win) * (apr_size_t)n);
    wbuf = apr_pcalloc(rc->pool, sizeof(*wbuf) * (apr_size_t)n);
    if (rc->walloc) {
        memcpy(win, rc->win, sizeof(*win) * (apr_size_t)rc->walloc);
        memcpy(wbuf, rc->wbuf, sizeof(*wbuf) * (apr_size_t)rc->walloc);
    }
    rc->win = win;
    rc->wbuf = wbuf;
    rc->walloc = n;
}

/* Keep the appended record r, with its entry rendered now, in the window:
 * what a ring slot keeps, nothing more. */
static void window_put(rs_recorder_t *rc, const rs_record_t *r)
{
    const char *xml = NULL;
    apr_size_t len = 0;
    rs_record_t *cp;
    int k;

    window_grow(rc);
    if (!rc->rr) {
        rc->rr = rs_entry_renderer_create(rc->pool, rc->eo);
    }
    if (rc->rr) {
        xml = rs_entry_render(rc->rr, r, &len);
    }
    k = (int)(rc->nwin++ % rc->cap);
    if (!rc->wbuf[k]) {
        rc->wbuf[k] = apr_palloc(rc->pool, RS_RING_SLOT_DATA);
    }
    cp = &rc->win[k];
    memset(cp, 0, sizeof(*cp));
    cp->seq = r->seq;
    cp->change = r->change;
    cp->datetime = r->datetime;
    cp->lastmod_ns = r->lastmod_ns;
    cp->size = r->size;
    if (rc->paths) {
        cp->manifest_extra = rs_cdump_path_len(rc->scratch, r);
        apr_pool_clear(rc->scratch);
    }
    if (xml && len <= RS_RING_SLOT_DATA) {
        memcpy(rc->wbuf[k], xml, len);
        cp->xml = rc->wbuf[k];
        cp->xml_len = len;
    }
}

apr_status_t rs_recorder_record(void *baton, int change, const rs_item_t *it)
{
    rs_recorder_t *rc = baton;
    rs_record_t r;
    apr_status_t rv;

    rs_entry_from_item(&r, it);
    r.change = change;
    /* The links as resolved for this version (rs_linkkeep.h); a deleted
     * entry carries none. */
    r.links = change == RS_CHANGE_DELETED ? NULL : it->links;
    rv = rs_journal_append(rc->journal, rc->set, &r);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    if (rc->notify
        && (rv = rs_notify_extend(rc->notify, rc->set, &r, rc->notify_max)) != APR_SUCCESS) {
        return rv;
    }
    rc->appended++;
    rc->deleted += change == RS_CHANGE_DELETED;
    if (rc->cap) {
        window_put(rc, &r);
    }
    return APR_SUCCESS;
}

void rs_recorder_notify(rs_recorder_t *rc, rs_notify_t *n, int max)
{
    rc->notify = n;
    rc->notify_max = max > 0 ? max : 1;
}

apr_int64_t rs_recorder_appended(const rs_recorder_t *rc)
{
    return rc ? rc->appended : 0;
}

apr_int64_t rs_recorder_deleted(const rs_recorder_t *rc)
{
    return rc ? rc->deleted : 0;
}

apr_int64_t rs_recorder_take(rs_recorder_t *rc, apr_pool_t *p, apr_array_header_t **recs)
{
    apr_int64_t i, n, first, total = rc->nwin;

    *recs = NULL;
    if (!rc->nwin) {
        return 0;
    }
    n = rc->nwin < rc->cap ? rc->nwin : rc->cap;
    first = rc->nwin < rc->cap ? 0 : rc->nwin % rc->cap;
    *recs = apr_array_make(p, (int)n, sizeof(rs_record_t));
    for (i = 0; i < n; i++) {
        *(rs_record_t *)apr_array_push(*recs) = rc->win[(first + i) % rc->cap];
    }
    /* The array points into the entries' buffers: the next records get
     * new ones, so that it stays valid as long as the recorder's pool. */
    rc->win = NULL;
    rc->wbuf = NULL;
    rc->walloc = 0;
    rc->nwin = 0;
    return total;
}
