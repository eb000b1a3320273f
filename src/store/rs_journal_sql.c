/* SPDX-License-Identifier: Apache-2.0 */
/* rs_journal_sql.c - see rs_journal_sql.h */
#include <stddef.h>
#include "rs_journal_sql.h"

const char *const rs_journal_sql[J_MAX] = {
    "INSERT INTO journal (" RCOLS ", setname) VALUES "
    "(%lld, %s, %s, %d, %lld, %lld, %lld, %s, %s, %s, %s, %s, %s, %s, %s)",
    /* The highest sequence, and the floor kept in meta (key SEQ_FLOOR). */
    "SELECT MAX(seq), (SELECT v FROM meta WHERE k = %s) FROM journal",
    /* The last datetime of a set: its newest record's (datetimes grow
     * with the sequence within a set, so the index finds it), or the until
     * of its last closed list if that is later (a list closed "now" after
     * a clock step back); then the set's mark (key MARK set), the highest
     * sequence and its floor (key SEQ_FLOOR): one round trip. */
    "SELECT MAX(x), (SELECT v FROM meta WHERE k = %s), (SELECT MAX(seq) FROM journal), "
    "(SELECT v FROM meta WHERE k = %s) FROM (SELECT (SELECT dt FROM journal WHERE setname = %s "
    "ORDER BY seq DESC LIMIT 1) AS x "
    "UNION ALL SELECT MAX(until_dt) AS x FROM changelists WHERE setname = %s) AS t",
    "SELECT started, open_id FROM journal_sets WHERE setname = %s",
    "INSERT INTO journal_sets (setname, started, open_id) VALUES (%s, %lld, 1) "
    "ON CONFLICT (setname) DO NOTHING",
    "SELECT id, from_dt, until_dt, first_seq, last_seq, count FROM changelists "
    "WHERE setname = %s ORDER BY id",
    "SELECT COUNT(*), MAX(seq), MAX(dt) FROM journal WHERE setname = %s AND seq >= %lld",
    "SELECT " RCOLS " FROM journal WHERE setname = %s AND seq >= %lld AND seq <= %lld "
    "ORDER BY seq LIMIT %d",
    "SELECT " RCOLS " FROM journal WHERE setname = %s AND seq >= %lld ORDER BY seq LIMIT %d",
    "INSERT INTO changelists (setname, id, from_dt, until_dt, first_seq, last_seq, count) "
    "VALUES (%s, %lld, %lld, %lld, %lld, %lld, %lld)",
    "DELETE FROM changelists WHERE setname = %s AND until_dt < %lld",
    "DELETE FROM journal WHERE setname = %s AND seq <= %lld",
    "UPDATE journal_sets SET started = %lld, open_id = %lld WHERE setname = %s",
    "SELECT " RCOLS ", setname FROM journal WHERE seq > %lld ORDER BY seq LIMIT %d",
    "SELECT seq FROM journal WHERE setname = %s ORDER BY seq DESC LIMIT 1",
    /* Each created/updated record with the datetime of the first later
     * deletion of its path (NULL: none), found through journal_set_path. */
    "SELECT r.seq, r.sha256, (SELECT MIN(d.dt) FROM journal d WHERE d.setname = r.setname"
    " AND d.dir = r.dir AND d.name = r.name AND d.change = 3 AND d.seq > r.seq)"
    " FROM journal r WHERE r.setname = %s AND r.seq >= %lld AND r.seq <= %lld"
    " AND r.change <> 3 ORDER BY r.seq LIMIT %d",
    "SELECT seq FROM journal WHERE setname = %s AND dir = %s AND name = %s AND change <> 3"
    " ORDER BY seq",
    "SELECT setname FROM journal_sets",
    /* The created/updated records of a content (journal_set_sha256):
     * how many, how many of them were deleted later, the latest of those
     * deletions. */
    "SELECT COUNT(*), COUNT(x), MAX(x) FROM (SELECT (SELECT MIN(d.dt) FROM journal d"
    " WHERE d.setname = r.setname AND d.dir = r.dir AND d.name = r.name AND d.change = 3"
    " AND d.seq > r.seq) AS x FROM journal r WHERE r.setname = %s AND r.sha256 = %s"
    " AND r.change <> 3) AS v",
    /* A path relinked at a sequence: one row per path, its latest. */
    "INSERT INTO relinked (setname, dir, name, seq) VALUES (%s, %s, %s, %lld) "
    "ON CONFLICT (setname, dir, name) DO UPDATE SET seq = excluded.seq",
    "SELECT dir, name FROM relinked WHERE setname = %s AND seq >= %lld ORDER BY seq LIMIT %d",
    "DELETE FROM relinked WHERE setname = %s AND seq < %lld",
};

static const char *const schema_v1[] = {
    "CREATE TABLE IF NOT EXISTS journal ("
    " seq BIGINT PRIMARY KEY, setname TEXT NOT NULL, dir TEXT NOT NULL, name TEXT NOT NULL,"
    " change INTEGER NOT NULL, dt BIGINT NOT NULL, lastmod_ns BIGINT NOT NULL,"
    " size BIGINT NOT NULL, type TEXT, md5 TEXT, sha1 TEXT, sha256 TEXT, sha512 TEXT)",
    "CREATE INDEX IF NOT EXISTS journal_set_seq ON journal (setname, seq)",
    "CREATE TABLE IF NOT EXISTS changelists ("
    " setname TEXT NOT NULL, id BIGINT NOT NULL, from_dt BIGINT NOT NULL,"
    " until_dt BIGINT NOT NULL, first_seq BIGINT NOT NULL, last_seq BIGINT NOT NULL,"
    " count BIGINT NOT NULL, PRIMARY KEY (setname, id))",
    "CREATE TABLE IF NOT EXISTS journal_sets (setname TEXT PRIMARY KEY, started BIGINT NOT NULL,"
    " open_id BIGINT NOT NULL)",
    NULL
};

/* Version 4: the records of a path, in order, found without a scan of
 * the set's records (rs_journal_versions: is a version superseded by a
 * later deletion of its path?). */
static const char *const schema_v4[] = {
    "CREATE INDEX IF NOT EXISTS journal_set_path ON journal (setname, dir, name, seq)", NULL
};

/* Version 5: the records of a content (a SHA-256 digest), found without
 * a scan of the set's records (rs_journal_digest_use: may a Change Dump
 * capture go?).  Only records with the digest are indexed. */
static const char *const schema_v5[] = {
    "CREATE INDEX IF NOT EXISTS journal_set_sha256 ON journal (setname, sha256)"
    " WHERE sha256 IS NOT NULL",
    NULL
};

/* Version 6: the content coding of the version a record describes
 * (rs_record_t.encoding), as the inventory keeps it. */
static const char *const schema_v6[] = { "ALTER TABLE journal ADD COLUMN encoding TEXT", NULL };

/* Version 7: the rs:ln relations of the version a record describes
 * (rs_record_t.links, encoded), and the paths whose links were resolved
 * again without a change of their own (relinked: a target of theirs
 * changed, or the rules did), with the journal's sequence then, so that
 * a Resource List snapshot rewrites the parts that hold them
 * (rs_journal_relinked). */
static const char *const schema_v7[] = {
    "ALTER TABLE journal ADD COLUMN links TEXT",
    "CREATE TABLE IF NOT EXISTS relinked (setname TEXT NOT NULL, dir TEXT NOT NULL,"
    " name TEXT NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY (setname, dir, name))",
    "CREATE INDEX IF NOT EXISTS relinked_set_seq ON relinked (setname, seq)", NULL
};

/* Version 8: mirrors are rendered from the configuration, no longer
 * stored; the links records of version 7 hold may include them, and a
 * mirror's link cannot be told from a ResourceSyncLink rule's in SQL, so
 * every record loses its links (their entries in the open Change List
 * show none; closed lists are files and keep theirs). */
static const char *const schema_v8[] = { "UPDATE journal SET links = NULL WHERE links IS NOT NULL",
                                         NULL };

const char *const *rs_journal_schema(int version)
{
    return version == 1   ? schema_v1
           : version == 4 ? schema_v4
           : version == 5 ? schema_v5
           : version == 6 ? schema_v6
           : version == 7 ? schema_v7
           : version == 8 ? schema_v8
                          : NULL;
}

const char *const *rs_journal_tables(void)
{
    static const char *const tables[] = { "journal", "changelists", "journal_sets", "relinked",
                                          NULL };
    return tables;
}
