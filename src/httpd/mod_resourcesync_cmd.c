/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_cmd.c - see mod_resourcesync_cmd.h.
 *
 * Runs while httpd reads the configuration (twice at startup, once per
 * restart; rs_global is reset before each pass, so the record of set
 * options in directory sections starts empty every time).
 */
#include <string.h>
#include <apr_strings.h>
#include "mod_resourcesync_cmd.h"

/* One set option used in a directory section: whether that section holds
 * a set is only known once the whole configuration is read. */
typedef struct option_use_t {
    const void *mconfig; /* the section's rs_dir_conf */
    const char *directive;
    const char *where; /* "file:line" */
    int set_only;      /* RS_SET_ONLY: not at server level either */
} option_use_t;

const char *rs_cmd_where(cmd_parms *cmd)
{
    if (cmd->directive && cmd->directive->filename) {
        return apr_psprintf(cmd->pool, "%s:%d", cmd->directive->filename, cmd->directive->line_num);
    }
    return "(command line)";
}

rs_srv_conf *rs_cmd_server(cmd_parms *cmd)
{
    return ap_get_module_config(cmd->server->module_config, &resourcesync_module);
}

static void record_option_use(cmd_parms *cmd, void *mconfig, int set_only)
{
    option_use_t *u;

    if (!rs_global.option_uses) {
        rs_global.option_uses = apr_array_make(rs_global.pconf, 8, sizeof(option_use_t));
    }
    u = apr_array_push(rs_global.option_uses);
    u->mconfig = mconfig;
    u->directive = cmd->cmd->name;
    u->where = rs_cmd_where(cmd);
    u->set_only = set_only;
}

/* The one context check of every directive. */
static const char *context(cmd_parms *cmd, void *mconfig, rs_cmd_scope_t scope)
{
    const char *err;

    switch (scope) {
    case RS_MAIN:
        return ap_check_cmd_context(cmd, GLOBAL_ONLY);
    case RS_SERVER:
        return ap_check_cmd_context(cmd, NOT_IN_DIR_LOC_FILE);
    case RS_SET_OPTION:
    case RS_SET_ONLY:
        if ((err = ap_check_cmd_context(cmd, NOT_IN_LOCATION | NOT_IN_FILES))) {
            return err;
        }
        if (cmd->path) {
            record_option_use(cmd, mconfig, scope == RS_SET_ONLY);
        }
        else if (scope == RS_SET_ONLY) {
            return apr_pstrcat(cmd->pool, cmd->cmd->name,
                               " is only allowed in the <Directory> section that holds "
                               "ResourceSyncSet",
                               NULL);
        }
        return NULL;
    case RS_SET_SECTION:
        /* Sets are roots the watcher walks: a <Directory> section. */
        if ((err = ap_check_cmd_context(cmd, NOT_IN_LOCATION | NOT_IN_FILES))) {
            return err;
        }
        if (!cmd->path || !cmd->directive->parent
            || strcasecmp(cmd->directive->parent->directive, "<Directory")) {
            return apr_pstrcat(cmd->pool, cmd->cmd->name,
                               " must be used inside a <Directory> section", NULL);
        }
        return NULL;
    }
    return NULL;
}

static const char *run(cmd_parms *cmd, void *mconfig, int argc, const char *const argv[])
{
    const rs_cmd_t *d = cmd->info;
    const char *err = context(cmd, mconfig, d->scope);
    void *conf;

    if (err) {
        return err;
    }
    switch (d->scope) {
    case RS_MAIN:
        conf = &rs_global;
        break;
    case RS_SERVER:
        conf = rs_cmd_server(cmd);
        break;
    default:
        conf = mconfig;
        break;
    }
    return d->fn(cmd, d, conf, argc, argv);
}

const char *rs_cmd_take1(cmd_parms *cmd, void *mconfig, const char *a)
{
    const char *argv[] = { a };
    return run(cmd, mconfig, 1, argv);
}

const char *rs_cmd_take2(cmd_parms *cmd, void *mconfig, const char *a, const char *b)
{
    const char *argv[] = { a, b };
    return run(cmd, mconfig, b ? 2 : 1, argv);
}

const char *rs_cmd_argv(cmd_parms *cmd, void *mconfig, int argc, char *const argv[])
{
    return run(cmd, mconfig, argc, (const char *const *)argv);
}

const char *rs_cmd_parse(cmd_parms *cmd, const rs_confval_t *v, const char *arg, apr_int64_t *out)
{
    return rs_confval_parse(cmd->pool, cmd->cmd->name, v, arg, out);
}

const char *rs_cmd_value(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                         const char *const argv[])
{
    void *field = (char *)conf + d->offset;
    const char *err;
    apr_int64_t v;

    (void)argc;
    if ((err = rs_cmd_parse(cmd, &d->val, argv[0], &v))) {
        return err;
    }
    if (d->size == sizeof(int)) {
        *(int *)field = (int)v;
    }
    else {
        *(apr_int64_t *)field = v;
    }
    return NULL;
}

const char *rs_cmd_list(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                        const char *const argv[])
{
    apr_array_header_t **list = (apr_array_header_t **)((char *)conf + d->offset);
    void *elem = apr_pcalloc(cmd->pool, d->size);
    const char *err;

    if ((err = d->elem(cmd, argc, argv, elem))) {
        return err;
    }
    /* Several directives (and ITERATE's arguments) add up. */
    if (!*list) {
        *list = apr_array_make(cmd->pool, 4, (int)d->size);
    }
    memcpy(apr_array_push(*list), elem, d->size);
    return NULL;
}

const char *rs_cmd_misplaced(apr_pool_t *p)
{
    int i, j;

    for (i = 0; rs_global.option_uses && i < rs_global.option_uses->nelts; i++) {
        const option_use_t *u = &APR_ARRAY_IDX(rs_global.option_uses, i, option_use_t);
        int found = 0;
        for (j = 0; j < rs_global.sets->nelts && !found; j++) {
            found = APR_ARRAY_IDX(rs_global.sets, j, rs_set_t *)->section == u->mconfig;
        }
        if (!found) {
            return apr_psprintf(p,
                                "%s (%s) is in a <Directory> section without "
                                "ResourceSyncSet, where it has no effect: put %s in "
                                "the section that holds ResourceSyncSet%s",
                                u->directive, u->where, u->set_only ? "it" : "set options",
                                u->set_only ? "" : ", or at server level");
        }
    }
    return NULL;
}
