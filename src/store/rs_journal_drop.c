/* SPDX-License-Identifier: Apache-2.0 */
/* rs_journal_drop.c - the time of a set's last retention drop (see
 * rs_journal.h): meta key "journal-dropped:<set>", written in the
 * transaction that drops the lists (under the set's fence when the caller
 * holds it), read by every node that writes the set's Change List Index. */
#include <apr_strings.h>
#include "rs_journal.h"
#include "rs_journal_priv.h"
#include "rs_journal_sql.h"

apr_status_t rs_journal_drop_time(rs_journal_t *j, apr_pool_t *p, const char *set, apr_time_t *t)
{
    const char *v = NULL;
    apr_status_t rv = rs_db_meta_get(j->db, p, apr_pstrcat(p, DROPPED, set, NULL), &v);

    *t = (rv == APR_SUCCESS && v) ? (apr_time_t)apr_atoi64(v) : 0;
    return rv;
}

apr_status_t rs_journal_drop_note(rs_journal_t *j, apr_pool_t *p, const char *set, apr_time_t t)
{
    apr_time_t before;
    apr_status_t rv = rs_journal_drop_time(j, p, set, &before);

    if (rv != APR_SUCCESS || t <= before) {
        return rv; /* a wall clock stepped back: the time never does */
    }
    return rs_db_meta_put(j->db, apr_pstrcat(p, DROPPED, set, NULL),
                          apr_psprintf(p, "%" APR_INT64_T_FMT, (apr_int64_t)t));
}
