/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_dumpserve.c - the handler's Resource Dump and Change
 * Dump documents: the dump document, the parts of its index, the
 * packages and their manifest copies, served from the state directory
 * (mod_resourcesync_answer.c). */
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync.h"
#include "mod_resourcesync_answer.h"
#include "mod_resourcesync_childstore.h"
#include "mod_resourcesync_dumpserve.h"
#include "mod_resourcesync_status.h"
#include "rs_dumppkg.h"
#include "rs_file.h"
#include "rs_followcdump.h"
#include "rs_followdump.h"
#include "rs_parse.h"
#include "rs_statedir.h"

/* A dump file (kind, file name) this node lacks.  Where this node writes
 * the set: 404.  Where another node does, this node copies the writer's
 * files from the store a moment after the writer stored them
 * (mod_resourcesync_followdump.c, mod_resourcesync_followcdump.c), and a
 * client may have read a document that names the file from the writer:
 * 503 with Retry-After while the store holds the file (not copied yet),
 * 404 when it does not (gone, or never was); 503 when the store cannot
 * be asked. */
static int missing(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur,
                   const char *kind, const char *name)
{
    int found = 0;

    if (cur->mode == RS_MODE_ELSEWHERE
        && rs_childstore_stored(r, cur->history, set->name, kind, name, &found) == APR_SUCCESS
        && !found) {
        return HTTP_NOT_FOUND;
    }
    return rs_answer_not_here_yet(r, cur);
}

/* A dump package (or its manifest copy) by key: in the current dump
 * generation, else in an older one still on disk (a package that left
 * the dump stays for ResourceSyncDumpGrace, until its generation is
 * pruned).  A key names the same bytes wherever it is (rs_dumppkg.h).
 * One on no generation on disk: missing(). */
static int send_package(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur,
                        const char *key, int manifest)
{
    const char *ext = manifest ? "xml" : "zip";
    const char *path = rs_statedir_dump_pkg(
        r->pool, rs_statedir_gen(r->pool, set->rdump_dir, cur->dump_gen), key, ext);
    apr_array_header_t *gens;
    int i;

    if (!rs_file_exists(r->pool, path)) {
        gens = rs_dumppkg_gens(r->pool, set->rdump_dir);
        for (i = 0; i < gens->nelts; i++) {
            path = rs_statedir_dump_pkg(r->pool, APR_ARRAY_IDX(gens, i, const char *), key, ext);
            if (rs_file_exists(r->pool, path)) {
                break;
            }
        }
        if (i == gens->nelts) {
            return missing(r, set, cur, RS_FOLLOWDUMP_KIND,
                           apr_pstrcat(r->pool, key, ".", ext, NULL));
        }
    }
    return rs_answer_file(r, path, manifest ? 2 : 3);
}

/* The Resource Dump of the set's current dump generation, its packages
 * and their manifest copies. */
int rs_dumpserve_rdump(request_rec *r, const rs_set_t *set, const char *part)
{
    rs_status_set_t cur;
    char key[RS_PARSE_DUMP_KEY_LEN + 1];
    apr_uint64_t gen;
    int manifest, n;

    if (!set->rdump) {
        return HTTP_NOT_FOUND;
    }
    rs_status_read_set(set->slot, &cur);
    if (rs_answer_unavailable(r, &cur)) {
        return HTTP_SERVICE_UNAVAILABLE;
    }
    if (!cur.dump_gen) {
        if (part) {
            return rs_answer_not_here_yet(r, &cur);
        }
        /* The first dump is not built yet. */
        apr_table_setn(r->err_headers_out, "Retry-After", "5");
        return HTTP_SERVICE_UNAVAILABLE;
    }
    if (!part) {
        return rs_answer_file(
            r,
            rs_statedir_dump_file(r->pool, rs_statedir_gen(r->pool, set->rdump_dir, cur.dump_gen)),
            0);
    }
    if (!(part = rs_answer_history_rest(&cur, part))) {
        return HTTP_NOT_FOUND;
    }
    if (rs_parse_part(part, &gen, &n)) {
        /* A part of a Resource Dump Index: "<gen>-<n>.xml", kept while
         * its generation is on disk; one of a newer generation is not
         * here yet where another node writes the set. */
        return gen > cur.dump_gen
                   ? rs_answer_not_here_yet(r, &cur)
                   : rs_answer_file(r,
                                    rs_statedir_gen_file(
                                        r->pool, rs_statedir_gen(r->pool, set->rdump_dir, gen), n),
                                    1);
    }
    if (!rs_parse_dump_part(part, key, &manifest)) {
        return HTTP_NOT_FOUND;
    }
    return send_package(r, set, &cur, key, manifest);
}

/* A part or package of the Change Dump at path; one not on disk:
 * missing(). */
static int send_cdump_file(request_rec *r, const rs_set_t *set, const rs_status_set_t *cur,
                           const char *path, int immutable)
{
    if (!rs_file_exists(r->pool, path)) {
        return missing(r, set, cur, RS_FOLLOWCDUMP_KIND, strrchr(path, '/') + 1);
    }
    return rs_answer_file(r, path, immutable);
}

/* The Change Dump (rewritten when a package is added or expires), the
 * parts of a Change Dump Index, and the packages of closed Change Lists
 * of the entry's history with their manifest copies (never rewritten;
 * gone with their list). */
int rs_dumpserve_cdump(request_rec *r, const rs_set_t *set, const char *part)
{
    rs_status_set_t cur;
    apr_int64_t id;
    int rev, manifest, n;

    if (!set->cdump) {
        return HTTP_NOT_FOUND;
    }
    rs_status_read_set(set->slot, &cur);
    if (rs_answer_unavailable(r, &cur)) {
        return HTTP_SERVICE_UNAVAILABLE;
    }
    if (!part) {
        if (!cur.cdump_ready) {
            /* The watcher has not written it in this history yet. */
            apr_table_setn(r->err_headers_out, "Retry-After", "5");
            return HTTP_SERVICE_UNAVAILABLE;
        }
        return rs_answer_file(r, rs_statedir_cdump_file(r->pool, set->cdump_dir, cur.history, 0, 0),
                              0);
    }
    if (!(part = rs_answer_history_rest(&cur, part))) {
        return HTTP_NOT_FOUND;
    }
    if (rs_parse_cdump_index_part(part, &n)) {
        /* A part of the Change Dump Index, rewritten with changedump.xml;
         * 404 once the index no longer has it (rs_cdump.h). */
        return send_cdump_file(r, set, &cur,
                               rs_statedir_cdump_part(r->pool, set->cdump_dir, cur.history, n), 0);
    }
    if (!rs_parse_cdump_part(part, &id, &rev, &manifest)) {
        return HTTP_NOT_FOUND;
    }
    /* Only the list's current revision is on disk: a package withdrawn
     * and rebuilt under a new name answers 404 at its old one (where
     * another node writes the set, once the store no longer holds it:
     * missing()). */
    return send_cdump_file(
        r, set, &cur,
        rs_statedir_cdump_pkg(r->pool, set->cdump_dir, cur.history, id, rev, manifest),
        manifest ? 2 : 3);
}
