/* SPDX-License-Identifier: Apache-2.0 */
/* rs_journal_sql.h - the journal's SQL, apart from its logic
 * (rs_journal.c): the statements it prepares (rs_journal_sql, by J_*)
 * and its tables at each schema version (rs_journal_schema, called by
 * rs_schema).  Private to the journal, but for the schema.
 */
#ifndef RS_JOURNAL_SQL_H
#define RS_JOURNAL_SQL_H

enum {
    J_APPEND,
    J_MAXSEQ,
    J_LASTDT,
    J_START_GET,
    J_START_PUT,
    J_LISTS,
    J_OPEN_STATS,
    J_RECORDS,
    J_RECORDS_ALL,
    J_CLOSE,
    J_EXPIRE_LISTS,
    J_EXPIRE_RECORDS,
    J_START_MOVE,
    J_RECENT,
    J_NEWEST,
    J_VERSIONS,
    J_PATH_SEQS,
    J_SETS,
    J_DIGEST,
    J_RELINK,
    J_RELINKED,
    J_EXPIRE_RELINKED,
    J_MAX
};

/* Meta keys: the sequence floor kept across an emptied journal, the
 * marks of a set (rs_journal_mark) and the time of its last retention
 * drop (rs_journal_drop_note). */
#define SEQ_FLOOR "journal-seq-floor"
#define MARK      "journal-mark:"
#define DROPPED   "journal-dropped:"
/* The columns of a record, in rs_record_t's order. */
#define RCOLS                                                                                   \
    "seq, dir, name, change, dt, lastmod_ns, size, type, md5, sha1, sha256, sha512, encoding, " \
    "links"

/* The statements, by J_*: each prepared once per connection. */
extern const char *const rs_journal_sql[J_MAX];

/* The DDL that brings the journal's tables to schema version `version`
 * from the version before (NULL-terminated; NULL if that version changes
 * nothing here).  Used by rs_schema. */
const char *const *rs_journal_schema(int version);

/* The tables of this unit (NULL-terminated, static), each keyed by set
 * (a column setname).  Used by rs_schema. */
const char *const *rs_journal_tables(void);

#endif
