/* SPDX-License-Identifier: Apache-2.0 */
/* rs_schema.h - the state store's schema: the ordered migration steps.
 *
 * Each unit that keeps tables in the store (rs_inventory, rs_journal,
 * rs_notify, rs_hubsub, rs_linkdep) owns their DDL and hands out the statements that
 * lead to a given schema version, and names its tables; this unit lists
 * the units in the order their tables are created, rs_db applies the
 * versions a database lacks, and what concerns a set in every table
 * (rs-tool forget-set) goes through the tables the units name.  rs_db's
 * own meta table (which records the version) is created by rs_db itself.
 *
 * Version 1 is the layout of the store before versions were recorded;
 * its statements are all "CREATE ... IF NOT EXISTS", so applying it to
 * such a database creates nothing and loses nothing.  A new version adds
 * a step to each unit whose tables change and raises RS_SCHEMA_VERSION.
 *
 * Version 2 adds the notification outbox (rs_notify: notifications,
 * notify_dests).
 *
 * Version 3 clusters the inventory by its key (rs_inventory: the rows
 * are copied into a WITHOUT ROWID table), so that listing a set reads
 * the rows in order without a lookup per row.
 *
 * Version 4 adds what the built-in hub's limits count by to its
 * subscription rows (rs_hubsub: notify_dests.cb_addr, the callback's
 * address as verified, and notify_dests.client, the requesting client's),
 * and indexes the journal by path (rs_journal: journal_set_path), so that
 * whether a version was deleted later is one lookup.
 *
 * Version 5 indexes the journal by content (rs_journal: journal_set_sha256,
 * the records that have a SHA-256 digest), so that whether a Change Dump
 * capture is still needed is one lookup and collecting captures holds no
 * list of every retained digest.
 *
 * Version 6 keeps the content coding httpd sends a file with (its
 * Content-Encoding) next to its media type (rs_inventory: inventory.encoding;
 * rs_journal: journal.encoding), so that every document lists both as a
 * GET returns them.
 *
 * Version 7 keeps a resource's rs:ln relations, resolved and encoded,
 * with its row and its records (rs_inventory: inventory.links;
 * rs_journal: journal.links), the paths whose links changed without a
 * change of their own (rs_journal: relinked), and what every resource's
 * link rules name (rs_linkdep: linkdep), so that the watcher finds the
 * resources a change relinks without reading a whole set.
 *
 * Version 8 changes no table: mirrors (ResourceSyncMirror) are rendered
 * from the configuration instead of stored, and the journal records'
 * links, which may hold them, are cleared (rs_journal: a mirror's link
 * cannot be told from a rule's).  The inventory's are resolved again by
 * the watcher at its start (the rules' digest, links_fp, changed with
 * the stored form's version).
 *
 * Version 9 holds who writes each set (rs_lease: leases): the holder,
 * its token, the epoch and the expiry of the set's lease.
 *
 * Version 10 holds the files of the generations a writer publishes, for
 * the other nodes of a shared store to serve (rs_blob: blobfiles,
 * blobchunks; written on PostgreSQL only).
 *
 * Version 11 queues the built-in hub's requests on their way from the
 * node that received them to the set's writer (rs_hubqueue: hub_queue).
 */
#ifndef RS_SCHEMA_H
#define RS_SCHEMA_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "rs_db.h"

/* The newest schema version this code knows. */
#define RS_SCHEMA_VERSION 11

/* The DDL statements that bring a database of version - 1 to version,
 * in order (array of const char *, allocated from p; the strings are
 * static).  Empty for a version without changes. */
apr_array_header_t *rs_schema_steps(apr_pool_t *p, int version);

/* Open a connection to the state store (rs_db_open) with the module's
 * schema: every caller that stores inventory or journal rows opens it
 * this way. */
apr_status_t rs_schema_open(rs_db_t **out, apr_pool_t *p, const char *driver, const char *dsn,
                            const rs_logger_t *log);

/* The same through rs_db_open_ex: mode RS_DB_AS_IS or RS_DB_READONLY for
 * a tool that must not migrate the store (the module does, at its
 * start); the tool refuses a version above RS_SCHEMA_VERSION. */
apr_status_t rs_schema_open_ex(rs_db_t **out, apr_pool_t *p, const char *driver, const char *dsn,
                               int mode, const rs_logger_t *log, const char **error);

/* Every table of the store but rs_db's meta holds rows of sets, keyed by
 * a column setname.  The tables, as the units that own them list them,
 * in the order they are created (array of const char *, static strings,
 * allocated from p). */
apr_array_header_t *rs_schema_tables(apr_pool_t *p);

/* Whether any table that db has (an older schema lacks some) holds a row
 * of set (*exists 1 or 0).  Scratch allocations from p. */
apr_status_t rs_schema_set_exists(rs_db_t *db, apr_pool_t *p, const char *set, int *exists);

/* Delete every row of set from every table that db has, and its meta
 * keys (rs_db_meta_forget_set); *rows gets how many.  In the caller's
 * transaction when one is open (rs_db_begin: then all or nothing).
 * Scratch allocations from p. */
apr_status_t rs_schema_forget_set(rs_db_t *db, apr_pool_t *p, const char *set, apr_int64_t *rows);

#endif
