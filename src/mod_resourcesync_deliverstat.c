/* mod_resourcesync_deliverstat.c - the delivery thread's status file.
 *
 * <statedir>/notify/delivery.txt holds one line per notification topic
 * (its newest notification) and per delivery destination (hub rows:
 * backlog and last outcome; subscribers: pending deliveries and
 * failures).  The delivery thread renews it every few seconds when its
 * text changed (rs_file_replace: temporary file, rename), so the status
 * page, in a child, shows it without touching the store; a missing or
 * stale file only makes the page older, never wrong about the segment.
 */
#include <stdlib.h>
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_drive.h"
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

const char *rs_deliverstat_topics(apr_pool_t *p, rs_notify_t *box)
{
    static const char *const topics[] = { RS_NOTIFY_CHANGE, RS_NOTIFY_FRAMEWORK };
    const char *out = "";
    int i, t;

    for (i = 0; i < rs_global.sets->nelts; i++) {
        const rs_set_t *set = APR_ARRAY_IDX(rs_global.sets, i, const rs_set_t *);
        for (t = 0; set->notify && t < 2; t++) {
            rs_notification_t x;
            if (rs_notify_latest(box, p, set->name, topics[t], &x) == APR_SUCCESS) {
                out = apr_psprintf(p, "%snotify-topic: %s %s last=%" APR_INT64_T_FMT
                                   " until=%s\n", out, set->name, topics[t], x.id,
                                   when(p, x.id ? x.until : 0));
            }
        }
    }
    return out;
}

const char *rs_deliverstat_line(apr_pool_t *p, const rs_notifydest_t *row,
                                apr_time_t last_at, apr_int64_t count)
{
    const char *st = row->last_status ? apr_ltoa(p, row->last_status)
                                      : row->last_error ? "none" : "-";

    if (!strcmp(row->kind, RS_NOTIFYDEST_SUB)) {
        return apr_psprintf(p, "notify-subscriber: %s %s %s pending=%" APR_INT64_T_FMT
                            " failures=%d last-status=%s last-try=%s lease-until=%s\n",
                            row->set, row->topic, row->url, count, row->attempts, st,
                            when(p, last_at), when(p, row->lease_until));
    }
    return apr_psprintf(p, "notify-hub: %s %s %s mode=%s backlog=%" APR_INT64_T_FMT
                        " last-status=%s last-try=%s attempts=%d\n", row->set, row->topic,
                        row->url, row->kind, count, st, when(p, last_at), row->attempts);
}

void rs_deliverstat_write(apr_pool_t *p, const char *text, char **prev)
{
    const char *dir;

    if (*prev && !strcmp(*prev, text)) {
        return;
    }
    dir = rs_statedir_notify(p, rs_global.state_dir);
    apr_dir_make_recursive(dir, APR_FPROT_OS_DEFAULT, p);
    if (rs_file_replace_buf(p, rs_statedir_delivery(p, rs_global.state_dir), text,
                            strlen(text)) == APR_SUCCESS) {
        free(*prev);
        *prev = strdup(text);
    }
}

const char *rs_deliverstat_read(apr_pool_t *p)
{
    const char *path = rs_statedir_delivery(p, rs_global.state_dir);
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
