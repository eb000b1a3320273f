/* SPDX-License-Identifier: Apache-2.0 */
/* rs_linkdep.h - the dependencies of a set's links in the store (table
 * linkdep): for every resource S of a set whose link rules name local
 * targets (rs_links.h), one row (target T, source S) per target T its
 * rules name, listed or not, with set-relative paths ("d/f.txt").
 *
 * The watcher keeps them (rs_linkkeep.h), in the scan's transaction:
 * when S's row is written its rows are replaced, when it is deleted
 * they go.  They answer two questions, each through an index:
 *   - sources: which resources link to T (T appeared, changed or went:
 *     their forward links change; T's own inverse links are made from
 *     them);
 *   - targets: which resources S links to (S changed or went: their
 *     inverse links change).
 * A set without local targets has no rows here.
 */
#ifndef RS_LINKDEP_H
#define RS_LINKDEP_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "rs_db.h"

/* The sources of target in set (array of const char *, from p; in byte
 * order). */
apr_status_t rs_linkdep_sources(rs_db_t *db, apr_pool_t *p, const char *set, const char *target,
                                apr_array_header_t **out);

/* The targets of source in set (array of const char *, from p; in byte
 * order). */
apr_status_t rs_linkdep_targets(rs_db_t *db, apr_pool_t *p, const char *set, const char *source,
                                apr_array_header_t **out);

/* Add targets (const char *; NULL or empty: none) to those of source, in
 * the caller's transaction (one that is there already stays). */
apr_status_t rs_linkdep_add(rs_db_t *db, const char *set, const char *source,
                            const apr_array_header_t *targets);

/* Forget every target of source, in the caller's transaction. */
apr_status_t rs_linkdep_drop(rs_db_t *db, const char *set, const char *source);

/* Forget every row of set (before a rebuild), in the caller's
 * transaction. */
apr_status_t rs_linkdep_clear(rs_db_t *db, const char *set);

/* The DDL that brings the table to schema version `version` from the
 * version before (NULL-terminated; NULL if that version changes nothing
 * here).  Used by rs_schema. */
const char *const *rs_linkdep_schema(int version);

/* The tables of this unit (NULL-terminated, static), each keyed by set
 * (a column setname).  Used by rs_schema. */
const char *const *rs_linkdep_tables(void);

#endif
