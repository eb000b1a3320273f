/* SPDX-License-Identifier: Apache-2.0 */
/* rs_db.h - the database layer of the state store, through apr_dbd.
 *
 * rs_db is the only unit that knows which database driver runs: it opens
 * one connection from a driver name and a DSN, applies the driver's
 * settings, brings the schema up to date, and runs statements; what
 * differs between drivers (settings, error causes, read-only opens,
 * table lookup, online backup, a database's files) is in rs_dbdriver.c
 * alone, so that rs-tool and the module reach the store the same way and
 * a new driver is added once.  The
 * tables themselves belong to the units on top (rs_inventory, rs_journal),
 * which write their SQL in the subset shared by SQLite and PostgreSQL
 * (INSERT ... ON CONFLICT, row-value comparison, no driver functions).
 *
 * Lifecycle: a connection lives as long as the pool given to rs_db_open
 * and is used from one thread at a time.  Every statement runs in a
 * subpool created and destroyed for the call (drivers allocate results,
 * rows and bound values on every call), so a connection that runs
 * millions of statements keeps flat memory; a transaction's state lives
 * in a pool that lives from BEGIN to its end.
 *
 * Schema: the version is kept in the meta table (key "schema-version").
 * rs_db_open applies the migration steps of rs_schema.h that the database
 * lacks, each version in one transaction.  A database made before schema
 * versions existed (tables present, no version) is version 0 to 1: the
 * steps of version 1 only create what is missing, so its rows stay.  A
 * database whose version is newer than this code knows is refused.
 * Every table is created before any statement is prepared: apr_dbd's
 * SQLite driver prepares with the legacy API, whose statements fail once
 * the schema has changed.
 *
 * Errors keep their cause: a failed statement is logged with the driver's
 * message ("database or disk is full") and returns the matching
 * apr_status_t (APR_ENOSPC, APR_EACCES, APR_EBUSY, ...); for SQLite's I/O failures the
 * cause is the system's own errno when SQLite knows it (ENOSPC, EROFS,
 * EPERM for an immutable file, ...).
 */
#ifndef RS_DB_H
#define RS_DB_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>
#include "rs_log.h"

/* Threads: a connection is used by one thread at a time.  apr_dbd's
 * SQLite driver runs the statements of all connections of a process
 * under one process-wide mutex, and a statement that waits for another
 * connection's lock (busy_timeout) keeps it: two connections of one
 * process must not wait for each other's write lock, or both stall for
 * the busy timeout.  The watcher keeps to that: one thread writes, the
 * job thread's connection only reads, and in WAL mode readers never wait
 * for the writer.  Connections of different processes have no such
 * limit. */
typedef struct rs_db_t rs_db_t;
typedef struct rs_db_stmt_t rs_db_stmt_t;

/* What a database is brought to when it is opened: the newest schema
 * version, and the DDL statements that bring version - 1 to version (an
 * array of const char *, allocated from p).  The module's own schema is
 * rs_schema's (rs_schema_open): rs_db knows no table but its meta table,
 * so the units with tables depend on rs_db and never the other way. */
typedef struct rs_db_schema_t {
    int version;
    apr_array_header_t *(*steps)(apr_pool_t *p, int version);
} rs_db_schema_t;

/* Open a connection and bring its schema up to date.  driver is an
 * apr_dbd driver name ("sqlite3", "pgsql"), dsn its connection string
 * (for SQLite the database file, for PostgreSQL a libpq conninfo string
 * or URI).  The connection is closed when pool p is cleared.
 *
 * PostgreSQL: the database must have server_encoding SQL_ASCII (file
 * names are arbitrary bytes, which UTF8 would reject) and should use the
 * C collation (the tables' text columns are COLLATE "C" anyway: names are
 * compared as bytes, as SQLite does).  Another encoding is refused with a
 * message that says so: create the database with
 * "CREATE DATABASE rs ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C'
 * TEMPLATE template0".  The tables live in the DSN's current schema
 * (search_path, e.g. options='-csearch_path=NAME').  A server that cannot
 * be reached, or a connection lost later, fails with APR_ECONNREFUSED or
 * APR_ECONNRESET (rs_db_transient: the caller opens a new connection and
 * retries); a lock timeout, deadlock or serialization failure with
 * APR_EBUSY, a full disk with APR_ENOSPC, a read-only transaction with
 * APR_EROFS, missing privileges with APR_EACCES. */
apr_status_t rs_db_open(rs_db_t **out, apr_pool_t *p, const char *driver, const char *dsn,
                        const rs_db_schema_t *schema, const rs_logger_t *log);

/* How rs_db_open_ex treats the database. */
#define RS_DB_MIGRATE  0 /* as rs_db_open: the schema brought up to date */
#define RS_DB_AS_IS    1 /* read and write; no schema change, no setting */
#define RS_DB_READONLY 2 /* nothing written at all */

/* Open a connection as rs_db_open does (mode RS_DB_MIGRATE), or for a
 * tool that must not change what the module made of the database:
 *
 * RS_DB_AS_IS and RS_DB_READONLY do not migrate and leave the database's
 * own settings alone (SQLite: its journal mode; the connection keeps the
 * busy timeout).  rs_db_schema_version is the version recorded (0 when
 * none is, also for a database without rs_db's meta table).  A database
 * of a NEWER version than schema->version is opened too: the caller asks
 * rs_db_schema_version and refuses it in its own words, since the units'
 * statements fit the versions they know only; an older one has only the
 * tables of its version (rs_db_has_table).
 *
 * RS_DB_READONLY never writes the database and never creates it (SQLite:
 * the file opened read-only; like any reader of a WAL database it may
 * create the -wal and -shm files beside it): it reads a live store while
 * the watcher writes, in WAL mode without waiting for it, and waits for
 * a lock (a database not in WAL mode) for the busy timeout only.
 *
 * *error (may be NULL) gets the driver's message when the open fails (in
 * p), NULL when there is none; the failure is logged as by rs_db_open. */
apr_status_t rs_db_open_ex(rs_db_t **out, apr_pool_t *p, const char *driver, const char *dsn,
                           const rs_db_schema_t *schema, int mode, const rs_logger_t *log,
                           const char **error);

/* The DSN dsn of driver as messages show it (in p): a PostgreSQL DSN
 * with its password (keyword "password", or in a URI) replaced by
 * "***", one that libpq cannot parse replaced as a whole; any other
 * driver's (a SQLite file) as it is.  rs_db's own messages use it; so
 * must every message of the glue that names a DSN. */
const char *rs_db_dsn_display(apr_pool_t *p, const char *driver, const char *dsn);

/* The driver's message of the connection's last failure (a statement, a
 * transaction, a backup), as it was logged; "" before any. */
const char *rs_db_last_error(const rs_db_t *db);

/* Whether the database has table name (*exists 1 or 0; PostgreSQL: in
 * the current schema).  APR_ENOTIMPL for drivers other than SQLite and
 * PostgreSQL. */
apr_status_t rs_db_has_table(rs_db_t *db, const char *name, int *exists);

/* An online copy of the database into the file path, consistent while
 * other connections write (SQLite: the backup API, which starts over when
 * another connection changes the database during the copy and waits for
 * a writer's lock), made one self-contained file (SQLite: journal_mode
 * DELETE) and checked (integrity_check).  path is never followed if it
 * is a symbolic link; it may exist, empty (mkstemp's).  On failure
 * rs_db_last_error says why, and path is left for the caller to remove
 * (rs_db_remove).  The connection may be read-only.  APR_ENOTIMPL for
 * other drivers. */
apr_status_t rs_db_backup(rs_db_t *db, const char *path);

/* Remove the database dsn of driver and the files that go with it
 * (SQLite: the file, its -wal, -shm and -journal): a temporary store or
 * a failed copy.  APR_SUCCESS when none is left; APR_ENOTIMPL for a
 * driver without files. */
apr_status_t rs_db_remove(apr_pool_t *p, const char *driver, const char *dsn);

/* For a process whose connections are each used from one thread at a
 * time, with a lock or a queue between the threads that hand one over
 * (the watcher, rs-tool): SQLite then takes no lock of its own around
 * every call on a connection or statement (SQLITE_CONFIG_MULTITHREAD),
 * several per stored row.  Call it before the process's first connection;
 * after that, or if SQLite was set up before (in a parent process), it
 * changes nothing.  httpd's children never call it: other modules in
 * them may share a connection between threads. */
void rs_db_one_thread_per_connection(void);

/* Whether a failure with cause rv (a status returned by this unit) may
 * end without a restart: a full disk or quota, a read-only or immutable
 * file or file system, permissions, I/O errors, a busy database.  Any
 * other cause (a database of a newer schema, no driver, a directory where
 * the database should be) stays until the configuration changes. */
int rs_db_transient(apr_status_t rv);

/* The apr_dbd driver's name of the connection ("sqlite3", "pgsql"). */
const char *rs_db_driver(const rs_db_t *db);

/* The schema version of the database (after rs_db_open: the newest one). */
int rs_db_schema_version(const rs_db_t *db);

/* The pool the connection was opened in: every call on the connection
 * allocates below it (a statement's work pool is made and destroyed in
 * it per call). */
apr_pool_t *rs_db_pool(const rs_db_t *db);

/* Transactions group writes; nesting is not supported.  If any statement
 * failed inside the transaction, the driver rolls it back at its end and
 * rs_db_commit returns that statement's error.  rs_db_rollback discards
 * the transaction's writes. */
apr_status_t rs_db_begin(rs_db_t *db);
apr_status_t rs_db_commit(rs_db_t *db);
apr_status_t rs_db_rollback(rs_db_t *db);

/* The fence of the process's writer (rs_lease, installed by the watcher):
 * called by rs_db_begin_set as the first statement of a transaction that
 * writes set's rows, on whichever connection runs it; a status other than
 * APR_SUCCESS refuses the transaction.  fn may be called from several
 * threads at once (each with its own connection). */
typedef apr_status_t rs_db_fence_fn(void *baton, rs_db_t *db, const char *set);

/* Install the process's fence (NULL: none, the default: rs-tool, the
 * children).  Call it before the threads that write start. */
void rs_db_fence_install(rs_db_fence_fn *fn, void *baton);

/* Begin a transaction that writes set's rows: rs_db_begin, then the
 * process's fence for set, if one is installed.  A fence that refuses
 * (RS_LEASE_LOST: another node writes the set now) or fails rolls the
 * transaction back and returns its status: nothing of it is written.
 * End it with rs_db_end (or rs_db_commit / rs_db_rollback).
 * A SQLite connection with busy timeout 0 (a second writer of its
 * process, see rs_db_busy_timeout) opens no transaction: the fence runs
 * as a statement of its own and the writes after it each commit alone
 * (holding SQLite's lock only while they run), as they did before the
 * fence.  The fence then checks before the writes instead of around
 * them, which on SQLite (one node) is the same: the set's lock file keeps
 * every other taker of the lease (a second watcher, rs-tool forget-set)
 * away while the watcher runs. */
apr_status_t rs_db_begin_set(rs_db_t *db, const char *set);

/* In a long transaction begun by rs_db_begin_set: the fence again, when
 * it last ran more than RS_DB_FENCE_AGAIN ago (else nothing), so that the
 * lease it renews does not end while the transaction runs (a takeover
 * waits for the transaction, then finds the lease this writer's: the
 * transaction's renewals are committed with it).  Writers that put many
 * rows in one transaction (a generation's files, a scan's batches) call
 * it as they go.  RS_LEASE_LOST and other failures as rs_db_begin_set's
 * (the transaction must then be rolled back); APR_SUCCESS outside such a
 * transaction. */
#define RS_DB_FENCE_AGAIN apr_time_from_msec(500)
apr_status_t rs_db_fence_again(rs_db_t *db);

/* One statement that writes set's rows (rs_db_exec's arguments), in a
 * transaction of its own that begins with set's fence: RS_LEASE_LOST,
 * nothing written and *nrows 0, when another node writes the set now.
 * Outside a transaction. */
apr_status_t rs_db_exec_set(rs_db_t *db, const char *set, rs_db_stmt_t *s, const void **args,
                            int *nrows);

/* End the open transaction by the status of its work: committed when rv
 * is APR_SUCCESS (then the commit's status is returned), else rolled
 * back and rv returned. */
apr_status_t rs_db_end(rs_db_t *db, apr_status_t rv);

/* The store's clock, in microseconds since the epoch, for times several
 * nodes compare (leases): PostgreSQL's server clock (one clock for every
 * node, whatever the nodes' own clocks say; one round trip), SQLite's
 * apr_time_now() (one node). */
apr_status_t rs_db_clock(rs_db_t *db, apr_time_t *now);
/* PostgreSQL's server clock as an expression of a statement (µs since the
 * epoch), for a statement that reads the clock where it writes: the
 * clock and the write in one round trip. */
#define RS_DB_PG_NOW "CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000) AS BIGINT)"

/* Whether the store is one node's (SQLite: a file on its disk), not
 * shared by several nodes (PostgreSQL). */
int rs_db_one_node(const rs_db_t *db);

/* Tell the other nodes that this connection's transaction changed
 * something of theirs to follow: PostgreSQL's pg_notify(channel,
 * payload), which the server delivers to the sessions that LISTEN on
 * channel when the transaction commits (outside one: at once), never
 * for a rollback, and once per channel and payload per transaction:
 * the statement is not sent again for the channel and payload it sent
 * last in the same transaction (a set's records, one statement per
 * transaction).  Nothing on a one-node store (SQLite): APR_SUCCESS
 * without a statement. */
apr_status_t rs_db_notify(rs_db_t *db, const char *channel, const char *payload);

/* A number that changes at every rs_db_begin and is 0 outside a
 * transaction: units that cache what the database holds (rs_journal)
 * re-read it when a new write transaction starts, since another
 * connection may have written in between. */
apr_uint64_t rs_db_txn_serial(const rs_db_t *db);

/* How long a statement of this connection waits for another
 * connection's write lock (SQLite's busy timeout, PostgreSQL's
 * lock_timeout; 10 s after rs_db_open).  SQLite with 0: the connection
 * is a second writer, whose rs_db_begin_set opens no transaction.
 * A second writer in a process whose first writer holds transactions
 * open sets 0: it then fails at once with APR_EBUSY and retries later,
 * instead of holding apr_dbd's process-wide mutex while it waits (the
 * holder of the lock could then not go on).  APR_ENOTIMPL for drivers
 * other than SQLite and PostgreSQL. */
apr_status_t rs_db_busy_timeout(rs_db_t *db, int ms);

/* In db's open transaction: wait for, then hold until its end, the
 * store-wide lock named name (PostgreSQL: a transaction-level advisory
 * lock, per schema; SQLite: nothing, its write lock already serializes
 * writers).  Several nodes' writers take it where they allocate numbers
 * shared by every set (the journal's sequences): without it, two nodes
 * writing different sets would both read the same highest number. */
apr_status_t rs_db_xact_lock(rs_db_t *db, const char *name);

/* A transaction of this connection left idle (no statement running) for
 * ms ends the session (PostgreSQL's idle_in_transaction_session_timeout):
 * a writer frozen or cut off from the database inside a transaction then
 * lets go of the rows it locked (its set's lease row above all) after ms,
 * so another node can take the set over; otherwise the server would hold
 * them until it noticed the connection's end, which on a silent network
 * can take hours.  The connection's next statement then fails, as after
 * any lost connection.  ms <= 0: no limit.  Nothing on SQLite (one node:
 * the locks end with the process). */
apr_status_t rs_db_idle_limit(rs_db_t *db, int ms);

/* Bring the planner's statistics of table up to date, after its rows
 * changed wholesale (a first scan filled it from nothing), outside a
 * transaction.  PostgreSQL: ANALYZE (a table that has none yet until
 * autovacuum comes by is planned as nearly empty: a page of a listing
 * then reads and sorts every later row instead of walking the key, and
 * writing a list gets quadratic).  Other drivers: nothing (SQLite plans
 * these by its keys alone). */
apr_status_t rs_db_analyze(rs_db_t *db, const char *table);

/* Run one statement without arguments or results (DDL).  Changing the
 * schema after statements were prepared invalidates them (see above). */
apr_status_t rs_db_run(rs_db_t *db, const char *sql);

/* Prepare a statement, which lives as long as the connection.  sql uses
 * apr_dbd's %s / %lld / %d markers (PostgreSQL: prepared on the server
 * under a name of the connection's, the values sent as text; a marker
 * whose type the server cannot infer needs a CAST(%s AS TEXT) that SQLite
 * accepts too). */
apr_status_t rs_db_prepare(rs_db_t *db, const char *sql, rs_db_stmt_t **out);

/* The connection's statement for sql, prepared at its first use and kept.
 * Statements are told apart by the address of sql, which must therefore
 * be a string that lives as long as the program (a literal). */
apr_status_t rs_db_stmt(rs_db_t *db, const char *sql, rs_db_stmt_t **out);

/* Run a statement; arguments are passed as for apr_dbd_pbquery (pointers
 * to values, NULL for SQL NULL).  *nrows (if not NULL) gets the number of
 * rows changed.
 *
 * Bytes: a %pDb marker takes a const rs_db_blob_t * (len bytes at data,
 * any values; data may be NULL when len is 0), bound as the driver's
 * binary value (SQLite: a BLOB; PostgreSQL: a binary parameter, for a
 * BYTEA column), never turned into text.  Statements with such a marker
 * run through rs_db_exec and rs_db_each only (SQLite: on the native
 * connection, as rs_db_each's). */
typedef struct rs_db_blob_t {
    const void *data;
    apr_size_t len;
} rs_db_blob_t;
apr_status_t rs_db_exec(rs_db_t *db, rs_db_stmt_t *s, const void **args, int *nrows);

/* The results of s come back in the driver's binary form (PostgreSQL's
 * binary result format; SQLite's are always), so that rs_db_row_blob
 * reads a BYTEA column as its bytes.  Read every column of such a
 * statement with rs_db_row_blob, rs_db_row_int64 (integer columns) or
 * rs_db_row_text (text columns), through rs_db_each.  Call it once,
 * after the statement is prepared. */
void rs_db_stmt_binary(rs_db_stmt_t *s);

/* Each result row is handed to fn with all its column values as strings
 * (NULL for SQL NULL), however many columns it has.  The strings are
 * valid during the call only: fn copies what it keeps into p, the
 * caller's pool (which may be NULL when fn keeps no strings).  fn must not
 * use this connection (PostgreSQL reads the rows while fn runs). */
typedef void rs_db_row_fn(void *baton, apr_pool_t *p, const char *const *cols, int ncols);
apr_status_t rs_db_query(rs_db_t *db, apr_pool_t *p, rs_db_stmt_t *s, const void **args,
                         rs_db_row_fn *fn, void *baton);

/* A result row of rs_db_each: its columns read as the caller wants them,
 * by index.  Valid during the callback only. */
typedef struct rs_db_row_t rs_db_row_t;

/* Column i as text (NULL for SQL NULL), valid during the callback only. */
const char *rs_db_row_text(const rs_db_row_t *row, int i);

/* Column i as a 64-bit integer (0 for SQL NULL), without a round trip
 * through text where the driver keeps integers as such (SQLite). */
apr_int64_t rs_db_row_int64(const rs_db_row_t *row, int i);

/* Column i as bytes (a BLOB, or a BYTEA column of a statement marked
 * rs_db_stmt_binary): its length into *len; NULL for SQL NULL (and for
 * drivers other than SQLite and PostgreSQL).  Valid during the callback
 * only; the driver holds one row at a time, so a select of chunks keeps
 * one chunk in memory. */
const void *rs_db_row_blob(const rs_db_row_t *row, int i, apr_size_t *len);

/* Returns non-zero to stop the rows there. */
typedef int rs_db_each_fn(void *baton, const rs_db_row_t *row);

/* Run a select and hand each row to fn as it is read, without copying:
 * the reader's path for long listings (a Resource List's rows).
 * Arguments as for rs_db_exec.  SQLite steps its own statement (prepared
 * with sqlite3_prepare_v2 at first use and kept with s) on the native
 * connection, outside apr_dbd and its process-wide mutex: SQLite
 * serializes the calls on one connection itself, a connection is used by
 * one thread at a time, and a reader in WAL mode never waits for the
 * writer, so no other connection can wait for it either.  While fn runs
 * the statement holds a read snapshot: fn must not use this connection.
 * PostgreSQL runs it on libpq's connection in single-row mode (one row in
 * memory at a time; when fn stops early the remaining rows are read and
 * dropped, so the connection takes the next statement); its failure
 * inside a transaction fails the transaction.  Other drivers go through
 * rs_db_query (rows copied as text). */
apr_status_t rs_db_each(rs_db_t *db, rs_db_stmt_t *s, const void **args, rs_db_each_fn *fn,
                        void *baton);

/* The small key/value table for bookkeeping.  *value is NULL when the key
 * is absent (or its value is empty), else a copy in p.  The keys of one
 * set end in ":<set>" ("snapshot-gen:<set>", "journal-mark:<set>", ...;
 * set names hold no ':'). */
apr_status_t rs_db_meta_get(rs_db_t *db, apr_pool_t *p, const char *key, const char **value);
apr_status_t rs_db_meta_put(rs_db_t *db, const char *key, const char *value);

/* rs_db_meta_put of one of set's keys in a transaction of its own that
 * begins with set's fence (rs_db_begin_set): RS_LEASE_LOST, nothing
 * written, when another node writes the set now.  Outside a transaction. */
apr_status_t rs_db_meta_put_set(rs_db_t *db, const char *set, const char *key, const char *value);

/* Delete every key of set (those ending in ":<set>"); *nrows (may be
 * NULL) gets their number. */
apr_status_t rs_db_meta_forget_set(rs_db_t *db, const char *set, int *nrows);

#endif
