/* SPDX-License-Identifier: Apache-2.0 */
/* rs_deliverlook.c - see rs_deliverlook.h */
#include <stdlib.h>
#include <string.h>
#include <apr_strings.h>
#include "rs_deliverlook.h"
#include "rs_notifydest.h"

/* A copy of x's payload with one reference, NULL when memory runs out. */
static rs_deliverlook_payload_t *payload_copy(const rs_notification_t *x)
{
    rs_deliverlook_payload_t *pl = calloc(1, sizeof(*pl));

    if (!pl || !(pl->buf = malloc(x->payload_len ? x->payload_len : 1))) {
        free(pl);
        return NULL;
    }
    memcpy(pl->buf, x->payload, x->payload_len);
    pl->len = x->payload_len;
    pl->id = x->id;
    pl->until = x->until;
    pl->refs = 1;
    return pl;
}

const rs_deliverlook_t *rs_deliverlook_get(rs_db_t *db, rs_notify_t *box, apr_pool_t *p,
                                           apr_hash_t *looks, const char *set, const char *topic,
                                           apr_int64_t cursor)
{
    const char *k = apr_psprintf(p, "%s|%s|%" APR_INT64_T_FMT, set, topic, cursor);
    rs_deliverlook_t *l = apr_hash_get(looks, k, APR_HASH_KEY_STRING);
    apr_array_header_t *next;

    if (l) {
        return l;
    }
    l = apr_pcalloc(p, sizeof(*l));
    apr_hash_set(looks, k, APR_HASH_KEY_STRING, l);
    if (rs_notifydest_backlog(db, set, topic, cursor, &l->count, &l->newest) != APR_SUCCESS
        || !l->count) {
        l->count = 0;
        l->newest = 0;
        return l;
    }
    if (rs_notify_after(box, p, set, topic, cursor, 1, &next) == APR_SUCCESS && next->nelts) {
        l->next = payload_copy(&APR_ARRAY_IDX(next, 0, rs_notification_t));
    }
    return l;
}

void rs_deliverlook_release(apr_pool_t *p, apr_hash_t *looks)
{
    apr_hash_index_t *hi;

    for (hi = apr_hash_first(p, looks); hi; hi = apr_hash_next(hi)) {
        rs_deliverlook_unref(((rs_deliverlook_t *)apr_hash_this_val(hi))->next);
    }
}

void rs_deliverlook_unref(rs_deliverlook_payload_t *pl)
{
    if (pl && --pl->refs == 0) {
        free(pl->buf);
        free(pl);
    }
}
