/* SPDX-License-Identifier: Apache-2.0 */
/* rs_statedir.h - the layout of ResourceSyncStateDir, every path in one place.
 *
 *   <statedir>/state.db                     the state store (SQLite)
 *   <statedir>/history                      id of the history on disk (rs_history.h)
 *   <statedir>/snapshots/<set>/<gen>/       a published Resource List
 *       resourcelist.xml, part-<n>.xml, part-<g>-<n>.xml (a part of generation
 *       g kept: a hard link, rs_snapparts.h), parts, info, superseded (marker)
 *   <statedir>/snapshots/<set>/tmp-<gen>/   a Resource List being written
 *   <statedir>/changelists/<set>/index.xml  the Change List Index
 *   <statedir>/changelists/<set>/<history>-<id>.xml   a closed Change List
 *   <statedir>/dumps/<set>/<gen>/           a published Resource Dump
 *       resourcedump.xml, <key>.zip (a package), <key>.xml (its manifest),
 *       <key>.rec (its record, rs_dumppkg.h), history (the history its
 *       URLs belong to, written last)
 *   <statedir>/dumps/<set>/tmp-<gen>/       a Resource Dump being built
 *   <statedir>/capture/<set>/<digest>       captured bytes of a journaled version
 *   <statedir>/changedumps/<set>/changedump.xml        the Change Dump
 *   <statedir>/changedumps/<set>/<history>-<id>.zip    package of closed list id
 *   <statedir>/changedumps/<set>/<history>-part-<n>.xml part n of a Change Dump Index
 *       (and .xml: a copy of its manifest)
 *   <statedir>/locks/<set>                  a set's lock file (rs_setlock.h)
 *   <statedir>/base/<set>                   the base URLs of the set's documents
 *       on disk (rs_statecheck.h), read by the status segment's seed
 *   <statedir>/hub/spool/<time>-<rand>.req   a hub subscription request
 *       (rs_hubreq.h; written by children as tmp-*, then renamed)
 *   <statedir>/hub/intake                   the hub intake's summary
 *   <statedir>/notify/<set>/<topic>.xml     a topic's newest sealed notification
 *   <statedir>/notify/<set>/documents.digest   digests of the documents a
 *       framework notification announces when they change
 *   <statedir>/notify/delivery.txt          the delivery thread's status lines
 *   <statedir>/withdraw/<id>.req, <id>.done   withdrawal requests and their
 *       outcomes (rs_withdraw.h)
 *   <statedir>/.backup-XXXXXX               rs-tool backup's temporary copy
 *
 * Readers (children, rs-tool) and the writer (the watcher) all derive
 * every path from these functions; nothing else spells a name below the
 * state directory.  A unit that owns a directory names the files it keeps
 * there itself where nothing else opens them (rs_hubreq: the spool's
 * requests; rs_capture: digests; rs_generation, rs_snapshot, rs_dump,
 * rs_cdump: temporary files).  Everything below it is the run user's,
 * created and read by its processes only (never by root:
 * mod_resourcesync_os.c), directories 0700 and files 0600.  Strings are
 * allocated from p.
 */
#ifndef RS_STATEDIR_H
#define RS_STATEDIR_H

#include <apr_pools.h>

/* The store's apr_dbd driver and its connection string. */
#define RS_STATEDIR_DB_DRIVER "sqlite3"
const char *rs_statedir_db(apr_pool_t *p, const char *statedir);

/* <statedir>/history: the id of the history whose documents are on disk. */
const char *rs_statedir_history(apr_pool_t *p, const char *statedir);

/* <statedir>/changelists: every set's Change List files. */
const char *rs_statedir_changelists(apr_pool_t *p, const char *statedir);

/* <statedir>/hub: the built-in hub's files. */
const char *rs_statedir_hub(apr_pool_t *p, const char *statedir);

/* <statedir>/hub/spool: subscription requests for the watcher. */
const char *rs_statedir_hubspool(apr_pool_t *p, const char *statedir);

/* <statedir>/hub/intake: the hub intake's summary for the status page. */
const char *rs_statedir_hubintake(apr_pool_t *p, const char *statedir);

/* <statedir>/changedumps: every set's Change Dump files. */
const char *rs_statedir_changedumps(apr_pool_t *p, const char *statedir);

/* <statedir>/snapshots: created by the watcher at its start. */
const char *rs_statedir_snapshots(apr_pool_t *p, const char *statedir);

/* <statedir>/snapshots/<set>: the set's generations. */
const char *rs_statedir_snapset(apr_pool_t *p, const char *statedir, const char *set);

/* <snapset>/<gen>, and the directory it is written in before its rename. */
const char *rs_statedir_gen(apr_pool_t *p, const char *snapset, apr_uint64_t gen);
const char *rs_statedir_gen_tmp(apr_pool_t *p, const char *snapset, apr_uint64_t gen);

/* Whether an entry name of <snapset> is a generation being written. */
int rs_statedir_is_gen_tmp(const char *name);

/* Files of a generation directory: part n (1-based), or the list or
 * index itself (n == 0); the info file (written last); the marker of a
 * superseded generation. */
const char *rs_statedir_gen_file(apr_pool_t *p, const char *gendir, int n);
const char *rs_statedir_gen_info(apr_pool_t *p, const char *gendir);
/* A part written in generation gen as part n, kept in a later generation
 * directory as a hard link (rs_snapparts.h); the part table. */
const char *rs_statedir_gen_kept(apr_pool_t *p, const char *gendir, apr_uint64_t gen, int n);
const char *rs_statedir_gen_parts(apr_pool_t *p, const char *gendir);
const char *rs_statedir_gen_superseded(apr_pool_t *p, const char *gendir);

/* <statedir>/changelists/<set>: the set's Change List files. */
const char *rs_statedir_clset(apr_pool_t *p, const char *statedir, const char *set);

/* <statedir>/dumps/<set>: the set's Resource Dump generations (the
 * same protocol as snapshots, rs_generation.h). */
const char *rs_statedir_dumpset(apr_pool_t *p, const char *statedir, const char *set);
/* Files of a dump generation directory: resourcedump.xml; a package's
 * files "<key>.<ext>" (ext "zip", "xml" or "rec", rs_dumppkg.h). */
const char *rs_statedir_dump_file(apr_pool_t *p, const char *gendir);
const char *rs_statedir_dump_pkg(apr_pool_t *p, const char *gendir, const char *key,
                                 const char *ext);
/* <gendir>/history: the history whose URLs the dump lists (rs_history.h). */
const char *rs_statedir_dump_history(apr_pool_t *p, const char *gendir);
/* <statedir>/capture/<set>: the set's captured change bytes, one file
 * per content, named by its SHA-256 digest (rs_capture.h). */
const char *rs_statedir_captureset(apr_pool_t *p, const char *statedir, const char *set);
/* <statedir>/changedumps/<set>: the set's Change Dump and packages. */
const char *rs_statedir_cdumpset(apr_pool_t *p, const char *statedir, const char *set);
/* <statedir>/notify: every set's notification files, and the delivery
 * status. */
const char *rs_statedir_notify(apr_pool_t *p, const char *statedir);
/* <statedir>/notify/delivery.txt: the delivery thread's status lines
 * (written by the watcher, read by the status page). */
const char *rs_statedir_delivery(apr_pool_t *p, const char *statedir);
/* <statedir>/notify/<set>: the set's notification topics (files
 * change.xml and framework.xml: the newest sealed payload of each). */
const char *rs_statedir_notifyset(apr_pool_t *p, const char *statedir, const char *set);
/* <notifyset>/<topic>.xml: the newest sealed notification of topic
 * ("change" or "framework"), written by the watcher, served by children. */
const char *rs_statedir_notify_topic(apr_pool_t *p, const char *notifyset, const char *topic);
/* <notifyset>/documents.digest: the digests of the capability list and
 * the source description at the last start (framework notifications). */
const char *rs_statedir_notify_digests(apr_pool_t *p, const char *notifyset);
/* <statedir>/locks: the sets' lock files. */
const char *rs_statedir_locks(apr_pool_t *p, const char *statedir);
/* <statedir>/locks/<set>: the file a watcher that serves the set holds a
 * shared lock on (rs_setlock.h). */
const char *rs_statedir_setlock(apr_pool_t *p, const char *statedir, const char *set);
/* <statedir>/base: the files of the sets' base URLs. */
const char *rs_statedir_bases(apr_pool_t *p, const char *statedir);
/* <statedir>/base/<set>: the base URLs the set's documents on disk were
 * written with (rs_statecheck.h), for the seed of the status segment. */
const char *rs_statedir_setbase(apr_pool_t *p, const char *statedir, const char *set);
/* <statedir>/withdraw: withdrawal requests and their outcomes
 * (rs_withdraw.h). */
const char *rs_statedir_withdraw(apr_pool_t *p, const char *statedir);
/* Files of that directory: request id ("<id>.req", done == 0) or its
 * outcome ("<id>.done"); below wdir (that directory), or the name alone
 * when wdir is NULL (rs_withdraw opens them relative to the directory). */
const char *rs_statedir_withdraw_file(apr_pool_t *p, const char *wdir, const char *id, int done);
/* <statedir>/.backup-XXXXXX: the template (mkstemp) of rs-tool backup's
 * temporary copy of the store. */
char *rs_statedir_backup_tmp(apr_pool_t *p, const char *statedir);
/* Files of that directory: changedump.xml (id == 0), else the package
 * <history>-<id>.zip of closed Change List id, or its manifest copy. */
const char *rs_statedir_cdump_file(apr_pool_t *p, const char *cdset, const char *history,
                                   apr_int64_t id, int manifest);
/* The same for revision rev of the package (rs_cdump.h): rev 0 as above,
 * else <history>-<id>-<rev>.zip (or .xml). */
const char *rs_statedir_cdump_pkg(apr_pool_t *p, const char *cdset, const char *history,
                                  apr_int64_t id, int rev, int manifest);
/* Part n (1-based) of the Change Dump Index of that directory's history
 * (rs_cdump.h): <history>-part-<n>.xml. */
const char *rs_statedir_cdump_part(apr_pool_t *p, const char *cdset, const char *history, int n);
/* <clset>/index.xml and <clset>/<history>-<id>.xml. */
const char *rs_statedir_cl_index(apr_pool_t *p, const char *clset);
const char *rs_statedir_cl_list(apr_pool_t *p, const char *clset, const char *history,
                                apr_int64_t id);

/* Whether an entry name of <clset> is a closed Change List; if so, its
 * history (RS_HISTORY_LEN + 1 bytes) and id. */
int rs_statedir_is_cl_list(const char *name, char *history, apr_int64_t *id);

/* Whether an entry name of <clset> is a file of an old layout's open list
 * ("open-*"), removed at startup. */
int rs_statedir_is_cl_legacy(const char *name);

#endif
