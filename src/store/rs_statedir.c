/* SPDX-License-Identifier: Apache-2.0 */
/* rs_statedir.c - see rs_statedir.h */
#include <string.h>
#include <apr_strings.h>
#include "rs_parse.h"
#include "rs_statedir.h"

const char *rs_statedir_db(apr_pool_t *p, const char *statedir)
{
    return apr_pstrcat(p, statedir, "/state.db", NULL);
}

const char *rs_statedir_history(apr_pool_t *p, const char *statedir)
{
    return apr_pstrcat(p, statedir, "/history", NULL);
}

const char *rs_statedir_changelists(apr_pool_t *p, const char *statedir)
{
    return apr_pstrcat(p, statedir, "/changelists", NULL);
}

const char *rs_statedir_hub(apr_pool_t *p, const char *statedir)
{
    return apr_pstrcat(p, statedir, "/hub", NULL);
}

const char *rs_statedir_hubspool(apr_pool_t *p, const char *statedir)
{
    return apr_pstrcat(p, rs_statedir_hub(p, statedir), "/spool", NULL);
}

const char *rs_statedir_hubintake(apr_pool_t *p, const char *statedir)
{
    return apr_pstrcat(p, rs_statedir_hub(p, statedir), "/intake", NULL);
}

const char *rs_statedir_changedumps(apr_pool_t *p, const char *statedir)
{
    return apr_pstrcat(p, statedir, "/changedumps", NULL);
}

const char *rs_statedir_snapshots(apr_pool_t *p, const char *statedir)
{
    return apr_pstrcat(p, statedir, "/snapshots", NULL);
}

const char *rs_statedir_snapset(apr_pool_t *p, const char *statedir, const char *set)
{
    return apr_pstrcat(p, statedir, "/snapshots/", set, NULL);
}

const char *rs_statedir_gen(apr_pool_t *p, const char *snapset, apr_uint64_t gen)
{
    return apr_psprintf(p, "%s/%" APR_UINT64_T_FMT, snapset, gen);
}

const char *rs_statedir_gen_tmp(apr_pool_t *p, const char *snapset, apr_uint64_t gen)
{
    return apr_psprintf(p, "%s/tmp-%" APR_UINT64_T_FMT, snapset, gen);
}

int rs_statedir_is_gen_tmp(const char *name)
{
    return !strncmp(name, "tmp-", 4);
}

const char *rs_statedir_gen_file(apr_pool_t *p, const char *gendir, int n)
{
    return n ? apr_psprintf(p, "%s/part-%d.xml", gendir, n)
             : apr_pstrcat(p, gendir, "/resourcelist.xml", NULL);
}

const char *rs_statedir_gen_info(apr_pool_t *p, const char *gendir)
{
    return apr_pstrcat(p, gendir, "/info", NULL);
}

const char *rs_statedir_gen_kept(apr_pool_t *p, const char *gendir, apr_uint64_t gen, int n)
{
    return apr_psprintf(p, "%s/part-%" APR_UINT64_T_FMT "-%d.xml", gendir, gen, n);
}

const char *rs_statedir_gen_parts(apr_pool_t *p, const char *gendir)
{
    return apr_pstrcat(p, gendir, "/parts", NULL);
}

const char *rs_statedir_gen_superseded(apr_pool_t *p, const char *gendir)
{
    return apr_pstrcat(p, gendir, "/superseded", NULL);
}

const char *rs_statedir_clset(apr_pool_t *p, const char *statedir, const char *set)
{
    return apr_pstrcat(p, statedir, "/changelists/", set, NULL);
}

const char *rs_statedir_dumpset(apr_pool_t *p, const char *statedir, const char *set)
{
    return apr_pstrcat(p, statedir, "/dumps/", set, NULL);
}

const char *rs_statedir_captureset(apr_pool_t *p, const char *statedir, const char *set)
{
    return apr_pstrcat(p, statedir, "/capture/", set, NULL);
}

const char *rs_statedir_cdumpset(apr_pool_t *p, const char *statedir, const char *set)
{
    return apr_pstrcat(p, rs_statedir_changedumps(p, statedir), "/", set, NULL);
}

const char *rs_statedir_notify(apr_pool_t *p, const char *statedir)
{
    return apr_pstrcat(p, statedir, "/notify", NULL);
}

const char *rs_statedir_delivery(apr_pool_t *p, const char *statedir)
{
    return apr_pstrcat(p, rs_statedir_notify(p, statedir), "/delivery.txt", NULL);
}

const char *rs_statedir_notifyset(apr_pool_t *p, const char *statedir, const char *set)
{
    return apr_pstrcat(p, rs_statedir_notify(p, statedir), "/", set, NULL);
}

const char *rs_statedir_notify_topic(apr_pool_t *p, const char *notifyset, const char *topic)
{
    return apr_pstrcat(p, notifyset, "/", topic, ".xml", NULL);
}

const char *rs_statedir_notify_digests(apr_pool_t *p, const char *notifyset)
{
    return apr_pstrcat(p, notifyset, "/documents.digest", NULL);
}

const char *rs_statedir_cdump_file(apr_pool_t *p, const char *cdset, const char *history,
                                   apr_int64_t id, int manifest)
{
    return rs_statedir_cdump_pkg(p, cdset, history, id, 0, manifest);
}

const char *rs_statedir_cdump_pkg(apr_pool_t *p, const char *cdset, const char *history,
                                  apr_int64_t id, int rev, int manifest)
{
    if (id == 0) {
        return apr_pstrcat(p, cdset, "/changedump.xml", NULL);
    }
    if (rev > 0) {
        return apr_psprintf(p, "%s/%s-%" APR_INT64_T_FMT "-%d.%s", cdset, history, id, rev,
                            manifest ? "xml" : "zip");
    }
    return apr_psprintf(p, "%s/%s-%" APR_INT64_T_FMT ".%s", cdset, history, id,
                        manifest ? "xml" : "zip");
}

const char *rs_statedir_cdump_part(apr_pool_t *p, const char *cdset, const char *history, int n)
{
    return apr_psprintf(p, "%s/%s-part-%d.xml", cdset, history, n);
}

const char *rs_statedir_dump_file(apr_pool_t *p, const char *gendir)
{
    return apr_pstrcat(p, gendir, "/resourcedump.xml", NULL);
}

const char *rs_statedir_dump_history(apr_pool_t *p, const char *gendir)
{
    return apr_pstrcat(p, gendir, "/history", NULL);
}

const char *rs_statedir_dump_pkg(apr_pool_t *p, const char *gendir, const char *key,
                                 const char *ext)
{
    return apr_pstrcat(p, gendir, "/", key, ".", ext, NULL);
}

const char *rs_statedir_cl_index(apr_pool_t *p, const char *clset)
{
    return apr_pstrcat(p, clset, "/index.xml", NULL);
}

const char *rs_statedir_cl_list(apr_pool_t *p, const char *clset, const char *history,
                                apr_int64_t id)
{
    return apr_psprintf(p, "%s/%s-%" APR_INT64_T_FMT ".xml", clset, history, id);
}

int rs_statedir_is_cl_list(const char *name, char *history, apr_int64_t *id)
{
    const char *rest = rs_parse_history(name, history);
    return rest && rs_parse_id(rest, ".xml", id);
}

int rs_statedir_is_cl_legacy(const char *name)
{
    return !strncmp(name, "open-", 5);
}

const char *rs_statedir_locks(apr_pool_t *p, const char *statedir)
{
    return apr_pstrcat(p, statedir, "/locks", NULL);
}

const char *rs_statedir_setlock(apr_pool_t *p, const char *statedir, const char *set)
{
    return apr_pstrcat(p, rs_statedir_locks(p, statedir), "/", set, NULL);
}

const char *rs_statedir_bases(apr_pool_t *p, const char *statedir)
{
    return apr_pstrcat(p, statedir, "/base", NULL);
}

const char *rs_statedir_setbase(apr_pool_t *p, const char *statedir, const char *set)
{
    return apr_pstrcat(p, rs_statedir_bases(p, statedir), "/", set, NULL);
}

const char *rs_statedir_withdraw(apr_pool_t *p, const char *statedir)
{
    return apr_pstrcat(p, statedir, "/withdraw", NULL);
}

const char *rs_statedir_withdraw_file(apr_pool_t *p, const char *wdir, const char *id, int done)
{
    const char *ext = done ? ".done" : ".req";
    return wdir ? apr_pstrcat(p, wdir, "/", id, ext, NULL) : apr_pstrcat(p, id, ext, NULL);
}

char *rs_statedir_backup_tmp(apr_pool_t *p, const char *statedir)
{
    return apr_pstrcat(p, statedir, "/.backup-XXXXXX", NULL);
}
