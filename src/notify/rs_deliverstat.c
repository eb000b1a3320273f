/* SPDX-License-Identifier: Apache-2.0 */
/* rs_deliverstat.c - see rs_deliverstat.h */
#include <stdlib.h>
#include <string.h>
#include <apr_strings.h>
#include "rs_deliverstat.h"
#include "rs_file.h"
#include "rs_notify.h"
#include "rs_notifydest.h"
#include "rs_statedir.h"
#include "rs_time.h"

static const char *when(apr_pool_t *p, apr_time_t t)
{
    char buf[RS_TIME_BUFSIZE];
    return t ? apr_pstrdup(p, rs_time_format(buf, t)) : "-";
}

const char *rs_deliverstat_topic(apr_pool_t *p, rs_notify_t *box, const char *set,
                                 const char *topic)
{
    rs_notification_t x;

    if (rs_notify_latest(box, p, set, topic, &x) != APR_SUCCESS) {
        return "";
    }
    return apr_psprintf(p, "notify-topic: %s %s last=%" APR_INT64_T_FMT " until=%s\n", set, topic,
                        x.id, when(p, x.id ? x.until : 0));
}

const char *rs_deliverstat_line(apr_pool_t *p, const rs_notifydest_t *row, apr_time_t last_at,
                                apr_int64_t count)
{
    const char *st = row->last_status  ? apr_ltoa(p, row->last_status)
                     : row->last_error ? "none"
                                       : "-";

    if (!strcmp(row->kind, RS_NOTIFYDEST_SUB)) {
        return apr_psprintf(p,
                            "notify-subscriber: %s %s %s pending=%" APR_INT64_T_FMT
                            " failures=%d last-status=%s last-try=%s lease-until=%s\n",
                            row->set, row->topic, row->url, count, row->attempts, st,
                            when(p, last_at), when(p, row->lease_until));
    }
    return apr_psprintf(p,
                        "notify-hub: %s %s %s mode=%s backlog=%" APR_INT64_T_FMT
                        " last-status=%s last-try=%s attempts=%d\n",
                        row->set, row->topic, row->url, row->kind, count, st, when(p, last_at),
                        row->attempts);
}

void rs_deliverstat_write(apr_pool_t *p, const char *statedir, const char *text, char **prev)
{
    const char *dir;

    if (*prev && !strcmp(*prev, text)) {
        return;
    }
    dir = rs_statedir_notify(p, statedir);
    apr_dir_make_recursive(dir, APR_FPROT_OS_DEFAULT, p);
    if (rs_file_replace_buf(p, rs_statedir_delivery(p, statedir), text, strlen(text))
        == APR_SUCCESS) {
        free(*prev);
        *prev = strdup(text);
    }
}

const char *rs_deliverstat_read(apr_pool_t *p, const char *statedir)
{
    const char *path = rs_statedir_delivery(p, statedir);
    apr_file_t *f;
    apr_finfo_t fi;
    apr_size_t n;
    char *buf;

    if (apr_file_open(&f, path, APR_FOPEN_READ, APR_FPROT_OS_DEFAULT, p) != APR_SUCCESS) {
        return NULL;
    }
    if (apr_file_info_get(&fi, APR_FINFO_SIZE, f) != APR_SUCCESS || fi.size > (1 << 24)) {
        apr_file_close(f);
        return NULL;
    }
    n = (apr_size_t)fi.size;
    buf = apr_palloc(p, n + 1);
    if (apr_file_read_full(f, buf, n, &n) != APR_SUCCESS && !n) {
        n = 0;
    }
    buf[n] = '\0';
    apr_file_close(f);
    return buf;
}
