/* SPDX-License-Identifier: Apache-2.0 */
/* rs_mounts.c - see rs_mounts.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include "rs_mounts.h"
#include "rs_path.h"

struct rs_mounts_t {
    const char *path;
    int fd;            /* polled; never read */
    apr_pool_t *tpool; /* holds `table`, replaced at every read */
    apr_hash_t *table; /* "<id> <mount point>" -> mount point */
};

static apr_status_t close_fd(void *data)
{
    rs_mounts_t *m = data;
    if (m->fd >= 0) {
        close(m->fd);
        m->fd = -1;
    }
    return APR_SUCCESS;
}

const char *rs_mounts_parse_line(apr_pool_t *p, const char *line, long *id)
{
    const char *f = line;
    char *out, *o;
    int i;

    *id = strtol(line, NULL, 10);
    for (i = 0; i < 4; i++) { /* id, parent, major:minor, root */
        f = strchr(f, ' ');
        if (!f) {
            return NULL;
        }
        f++;
    }
    o = out = apr_palloc(p, strcspn(f, " \n") + 1);
    while (*f && *f != ' ' && *f != '\n') {
        if (f[0] == '\\' && f[1] >= '0' && f[1] <= '3' && f[2] >= '0' && f[2] <= '7' && f[3] >= '0'
            && f[3] <= '7') {
            *o++ = (char)(((f[1] - '0') << 6) | ((f[2] - '0') << 3) | (f[3] - '0'));
            f += 4;
        }
        else {
            *o++ = *f++;
        }
    }
    *o = '\0';
    return *out == '/' ? out : NULL;
}

/* The whole file at m->path, NUL-terminated, from p (procfs files have no
 * size: read until the end). */
static apr_status_t slurp(rs_mounts_t *m, apr_pool_t *p, char **text)
{
    apr_size_t cap = 16384, len = 0;
    char *buf = malloc(cap), *grown;
    int fd = open(m->path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0 || !buf) {
        apr_status_t rv = fd < 0 ? errno : APR_ENOMEM;
        free(buf);
        if (fd >= 0) {
            close(fd);
        }
        return rv;
    }
    while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
        len += (apr_size_t)n;
        if (cap - len < 4096) {
            if (!(grown = realloc(buf, cap * 2))) {
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    close(fd);
    buf[len] = '\0';
    *text = apr_pstrmemdup(p, buf, len);
    free(buf);
    return n < 0 ? errno : APR_SUCCESS;
}

/* Read the table into a new hash in a new pool (*tp). */
static apr_status_t read_table(rs_mounts_t *m, apr_pool_t *parent, apr_pool_t **tp,
                               apr_hash_t **out)
{
    char *text = NULL, *line, *last;
    apr_status_t rv;

    apr_pool_create(tp, parent);
    if ((rv = slurp(m, *tp, &text)) != APR_SUCCESS) {
        apr_pool_destroy(*tp);
        return rv;
    }
    *out = apr_hash_make(*tp);
    for (line = apr_strtok(text, "\n", &last); line; line = apr_strtok(NULL, "\n", &last)) {
        long id;
        const char *mp = rs_mounts_parse_line(*tp, line, &id);
        if (mp) {
            apr_hash_set(*out, apr_psprintf(*tp, "%ld %s", id, mp), APR_HASH_KEY_STRING, mp);
        }
    }
    return APR_SUCCESS;
}

apr_status_t rs_mounts_open(rs_mounts_t **out, apr_pool_t *p, const char *path)
{
    rs_mounts_t *m = apr_pcalloc(p, sizeof(*m));
    apr_status_t rv;

    m->path = apr_pstrdup(p, path);
    m->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (m->fd < 0) {
        return errno;
    }
    apr_pool_cleanup_register(p, m, close_fd, apr_pool_cleanup_null);
    if ((rv = read_table(m, p, &m->tpool, &m->table)) != APR_SUCCESS) {
        return rv;
    }
    *out = m;
    return APR_SUCCESS;
}

int rs_mounts_fd(const rs_mounts_t *m)
{
    return m->fd;
}

/* Push onto out the mount points of a's keys that b lacks. */
static void diff(apr_pool_t *p, apr_hash_t *a, apr_hash_t *b, apr_array_header_t *out)
{
    apr_hash_index_t *hi;
    for (hi = apr_hash_first(p, a); hi; hi = apr_hash_next(hi)) {
        const void *key;
        void *mp;
        apr_hash_this(hi, &key, NULL, &mp);
        if (!apr_hash_get(b, key, APR_HASH_KEY_STRING)) {
            APR_ARRAY_PUSH(out, const char *) = apr_pstrdup(p, mp);
        }
    }
}

apr_status_t rs_mounts_changed(rs_mounts_t *m, apr_pool_t *p, apr_array_header_t **changed)
{
    apr_pool_t *tp, *parent = apr_pool_parent_get(m->tpool);
    apr_hash_t *now;
    apr_status_t rv;

    *changed = apr_array_make(p, 4, sizeof(const char *));
    if ((rv = read_table(m, parent, &tp, &now)) != APR_SUCCESS) {
        return rv;
    }
    diff(p, now, m->table, *changed);
    diff(p, m->table, now, *changed);
    apr_pool_destroy(m->tpool);
    m->tpool = tp;
    m->table = now;
    return APR_SUCCESS;
}

int rs_mounts_affects(const char *mp, const char *dir)
{
    return rs_path_within(mp, dir) || rs_path_within(dir, mp);
}
