/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_cmd.h - the directive machinery: where a directive may
 * stand, which record it sets, and the setters the table shares.
 *
 * Every entry of the directive table (rs_cmds) names one of the
 * dispatchers below as its function and an rs_cmd_t as its cmd_data, the
 * way httpd's core names ap_set_int_slot and APR_OFFSETOF:
 *
 *   AP_INIT_TAKE1("ResourceSyncMaxEntries", rs_cmd_take1,
 *                 RS_CMD_VALUE(RS_SET_OPTION, max_entries, RS_NUMBER(1, 50000, "")),
 *                 RSRC_CONF | ACCESS_CONF, "...")
 *
 * A dispatcher checks the directive's context (one function for all, from
 * the rs_cmd_t's scope: ap_check_cmd_context, a <Directory> section for
 * ResourceSyncSet, the record of set options used in directory sections),
 * picks the record of that scope (rs_global, the server's rs_srv_conf, the
 * section's rs_dir_conf) and calls the entry's function with it: a shared
 * setter (rs_cmd_value: a number, size, duration, delay or word, parsed by
 * rs_confval with the directive's message, into the field at `offset`;
 * rs_cmd_list: one element appended to the array at `offset`) or a
 * handler of the directive's own.  Every value starts as its unset
 * sentinel (rs_config_create_*, rs_hubconf_init, rs_global_reset) and a
 * setter only writes what the directive says; the merges stay explicit.
 *
 * Flags are TAKE1 words (RS_FLAG) rather than AP_INIT_FLAG: httpd's FLAG
 * answers "NAME must be On or Off" without the value given, and the
 * module's message ("NAME: 'VALUE' is not On or Off") is what the
 * documentation quotes.
 */
#ifndef MOD_RESOURCESYNC_CMD_H
#define MOD_RESOURCESYNC_CMD_H

#include "mod_resourcesync.h"
#include "mod_resourcesync_hubconf.h"
#include "rs_confval.h"

/* Where a directive may stand, and the record it sets. */
typedef enum rs_cmd_scope_t {
    RS_MAIN,       /* the main server only (GLOBAL_ONLY): rs_global */
    RS_SERVER,     /* the main server or a <VirtualHost> (not in a
                     * directory section): the server's rs_srv_conf */
    RS_SET_OPTION, /* server level, or the <Directory> section of a set
                     * (not <Location>, <Files>, <If>): the rs_dir_conf
                     * of that level; a use in a directory section is
                     * recorded and checked by rs_cmd_misplaced */
    RS_SET_ONLY,   /* as RS_SET_OPTION, but not at server level: options
                     * that name the set's paths (ResourceSyncLink) */
    RS_SET_SECTION /* a <Directory> section (ResourceSyncSet): its
                     * rs_dir_conf */
} rs_cmd_scope_t;

/* The record type of each scope, for the table's offsets. */
#define RS_CMD_RECORD_RS_MAIN        rs_global_t
#define RS_CMD_RECORD_RS_SERVER      rs_srv_conf
#define RS_CMD_RECORD_RS_SET_OPTION  rs_dir_conf
#define RS_CMD_RECORD_RS_SET_SECTION rs_dir_conf
#define RS_CMD_RECORD_RS_SET_ONLY    rs_dir_conf

/* A directive's function: checks its arguments (argc of them, as httpd
 * gave them) and sets conf, the record of d->scope.  Returns NULL or the
 * error httpd reports. */
typedef const char *rs_cmd_fn(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                              const char *const argv[]);
/* One element of a list directive from its arguments into elem (zeroed,
 * d->size bytes).  Returns NULL or the error. */
typedef const char *rs_cmd_elem_fn(cmd_parms *cmd, int argc, const char *const argv[], void *elem);

/* The cmd_data of a table entry. */
struct rs_cmd_t {
    rs_cmd_scope_t scope;
    rs_cmd_fn *fn;
    apr_size_t offset;    /* rs_cmd_value, rs_cmd_list: the field */
    apr_size_t size;      /* rs_cmd_value: the field's size (int or
                             * apr_int64_t); rs_cmd_list: an element's */
    rs_confval_t val;     /* rs_cmd_value: the value */
    rs_cmd_elem_fn *elem; /* rs_cmd_list: parses one element */
};

#define RS_CMD(...) ((void *)&(rs_cmd_t){ __VA_ARGS__ })
/* A directive with a function of its own. */
#define RS_CMD_FN(scope_, fn_) RS_CMD(.scope = scope_, .fn = fn_)
/* A value (rs_confval_t initializers: RS_NUMBER, RS_FLAG, ...) stored in
 * field of the scope's record, an int or an apr_int64_t (another size does
 * not compile). */
#define RS_CMD_VALUE(scope_, field, ...)                                          \
    RS_CMD(.scope = scope_, .fn = rs_cmd_value,                                   \
           .offset = APR_OFFSETOF(RS_CMD_RECORD_##scope_, field),                 \
           .size = RS_CMD_INT_SIZE(sizeof(((RS_CMD_RECORD_##scope_ *)0)->field)), \
           .val = { __VA_ARGS__ })
#define RS_CMD_INT_SIZE(n) \
    ((n) + 0 * sizeof(char[(n) == sizeof(int) || (n) == sizeof(apr_int64_t) ? 1 : -1]))
/* Elements of type, each parsed by elem_fn, appended to the array in field
 * (created at the first). */
#define RS_CMD_LIST(scope_, field, elem_fn, type)                                       \
    RS_CMD(.scope = scope_, .fn = rs_cmd_list,                                          \
           .offset = APR_OFFSETOF(RS_CMD_RECORD_##scope_, field), .size = sizeof(type), \
           .elem = elem_fn)

/* The dispatchers: TAKE1 and ITERATE; TAKE2, TAKE12 and ITERATE2 (argc is
 * 1 when the second argument is absent); TAKE_ARGV. */
const char *rs_cmd_take1(cmd_parms *cmd, void *mconfig, const char *a);
const char *rs_cmd_take2(cmd_parms *cmd, void *mconfig, const char *a, const char *b);
const char *rs_cmd_argv(cmd_parms *cmd, void *mconfig, int argc, char *const argv[]);

/* The shared setters (rs_cmd_fn): d->val parsed from argv[0] into the
 * field; one element (d->elem) appended to the field's array. */
const char *rs_cmd_value(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                         const char *const argv[]);
const char *rs_cmd_list(cmd_parms *cmd, const rs_cmd_t *d, void *conf, int argc,
                        const char *const argv[]);

/* For the directives' own functions: arg parsed as v describes it, with
 * the directive's name in the message (rs_confval_parse). */
const char *rs_cmd_parse(cmd_parms *cmd, const rs_confval_t *v, const char *arg, apr_int64_t *out);
/* "file:line" of the directive being read, for messages. */
const char *rs_cmd_where(cmd_parms *cmd);
/* The rs_srv_conf of the server being configured. */
rs_srv_conf *rs_cmd_server(cmd_parms *cmd);

/* Set options apply where the watcher reads them: the <Directory> section
 * that holds ResourceSyncSet, or server level.  Anywhere else they would
 * be silently ignored, so each use in a directory section is recorded
 * while the configuration is read, and this checks them once the whole
 * configuration is known (rs_config_resolve): NULL, or the message naming
 * the first misplaced directive (in p).  (RS_SET_ONLY directives are
 * recorded the same way, their message naming only the set's section.) */
const char *rs_cmd_misplaced(apr_pool_t *p);

#endif
