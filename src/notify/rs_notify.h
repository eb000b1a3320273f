/* SPDX-License-Identifier: Apache-2.0 */
/* rs_notify.h - the notification outbox in the state store.
 *
 * Tables (schema version 2):
 *   notifications  one row per notification: a global, increasing id;
 *                  the set; the topic ("change" or "framework"); from and
 *                  until (µs); for the change topic the journal records
 *                  it carries (first_seq .. last_seq of the set, `count`
 *                  of them); sealed 0|1; the payload (the exact bytes of
 *                  the notification document, written when sealed).
 *   notify_dests   one row per (set, topic, destination): kind
 *                  ("fat", "ping", "sub"), url, secret, lease_until,
 *                  `cursor` (the id of the last notification of the topic
 *                  delivered to it), attempts, next_try, last_status,
 *                  last_error.  Rows are written by the delivery side;
 *                  this unit only reads the cursors (pruning).
 *
 * Lifecycle of a change notification: the transaction that appends
 * journal records calls rs_notify_extend for each record, which extends
 * the set's open (unsealed) change notification, or creates one, in the
 * same transaction: a committed record is always carried by exactly one
 * notification.  rs_notify_seal later renders the payload from the
 * journal and seals it.  An open notification holds at most `max`
 * records; when it is full the next record opens a new one, and
 * notifications are sealed in id order, so the sealed ones of a topic
 * form an unbroken sequence.
 *
 * Intervals: a change notification covers [from, until): from is the
 * until of the set's previous change notification (the datetime of its
 * first record for the very first), until is its last record's
 * datetime + 1 µs.  The journal gives every later record of the set a
 * datetime above the last one, so the next record falls into the next
 * notification's interval: consecutive notifications are contiguous and
 * never overlap.  Records of the set journaled while notifications were
 * off are carried by none: the first notification after them starts at
 * its first record's datetime, leaving a gap after the previous until.
 *
 * Threads: an rs_notify_t belongs to one connection (rs_db_t) and is
 * used by the thread that uses the connection.
 */
#ifndef RS_NOTIFY_H
#define RS_NOTIFY_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>
#include "rs_db.h"
#include "rs_entry.h"
#include "rs_journal.h"

#define RS_NOTIFY_CHANGE    "change"
#define RS_NOTIFY_FRAMEWORK "framework"

/* Sealed notifications stay at least this long after their until, also
 * when every destination has passed them, and the newest sealed one of
 * each (set, topic) stays for ever (the topic serves it). */
#define RS_NOTIFY_RETENTION apr_time_from_sec(3600)

typedef struct rs_notification_t {
    apr_int64_t id;
    const char *topic;
    apr_time_t from, until;
    apr_int64_t first_seq, last_seq, count;
    int sealed;
    const char *payload; /* sealed: the document; else NULL */
    apr_size_t payload_len;
} rs_notification_t;

/* How a set's notification documents are written. */
typedef struct rs_notify_opts_t {
    const char *set;
    rs_entry_opts_t entry;       /* as the set's Change Lists */
    const char *capability_url;  /* rel="up" (framework: of capability documents) */
    const char *description_url; /* framework rel="up" of the Capability List, or NULL */
    int max_entries;             /* per notification (>= 1) */
} rs_notify_opts_t;

/* One entry of a framework notification (Framework Notification 1.0.1,
 * Table 2). */
typedef struct rs_notify_fw_entry_t {
    const char *loc;        /* the changed document */
    const char *change;     /* "created", "updated", "deleted" */
    const char *capability; /* "resourcelist", "changelist", ... */
    apr_time_t datetime;    /* 0: left out */
    const char *index;      /* rel="index" when under an index, or NULL */
} rs_notify_fw_entry_t;

typedef struct rs_notify_t rs_notify_t;

/* The outbox of connection db (opened with rs_schema_open); j is the
 * journal of the same connection (the records of payloads). */
apr_status_t rs_notify_open(rs_notify_t **out, rs_db_t *db, rs_journal_t *j, apr_pool_t *p);

/* The DDL that brings the outbox's tables to schema version `version`
 * (NULL-terminated), or NULL when that version changes nothing here. */
const char *const *rs_notify_schema(int version);

/* The tables of this unit (NULL-terminated, static), each keyed by set
 * (a column setname; rs_hubsub's rows are notify_dests rows).  Used by
 * rs_schema. */
const char *const *rs_notify_tables(void);

/* Add journal record rec (just appended, rec->seq and rec->datetime set)
 * of set to the set's open change notification, or open one, in the
 * caller's transaction.  An open notification already holding max
 * records stays as it is (rs_notify_seal seals it) and a new one opens. */
apr_status_t rs_notify_extend(rs_notify_t *n, const char *set, const rs_record_t *rec, int max);

/* Seal the set's open change notifications that are due: every one but
 * the newest, the newest when it is full (o->max_entries) or its last
 * record is older than quiet_before (APR_INT64_MAX: seal everything).
 * Renders each payload from the journal (entries through rs_entry: the
 * bytes of the Change List) and marks it sealed, in id order, in one
 * transaction of its own.  *sealed (may be NULL) gets the number sealed,
 * *due (may be NULL) the time the newest open one becomes due (0: none
 * left open). */
apr_status_t rs_notify_seal(rs_notify_t *n, apr_pool_t *p, const rs_notify_opts_t *o,
                            apr_time_t quiet_before, int *sealed, apr_time_t *due);

/* Render and store a sealed framework notification of o->set with the
 * given entries (array of rs_notify_fw_entry_t), at time `at`
 * (from = the previous framework notification's until, until = at), in
 * the caller's transaction if one is open (the caller began it with the
 * set's fence), else in one of its own that begins with the set's fence
 * (rs_db_begin_set: RS_LEASE_LOST, nothing stored, when another node
 * writes the set now).  Its rs:ln rel="up" is, as
 * section 3 of the specification says, o->capability_url when the
 * entries are about capability documents, o->description_url when they
 * are about the Capability List (with or without the Source
 * Description), and left out when they are about the Source Description
 * alone or mix capability documents with the Capability List.  *out (may
 * be NULL) gets it. */
apr_status_t rs_notify_add_framework(rs_notify_t *n, apr_pool_t *p, const rs_notify_opts_t *o,
                                     const apr_array_header_t *entries, apr_time_t at,
                                     rs_notification_t *out);

/* Sealed notifications of (set, topic) with id > after, in id order, at
 * most limit (array of rs_notification_t, payloads included). */
apr_status_t rs_notify_after(rs_notify_t *n, apr_pool_t *p, const char *set, const char *topic,
                             apr_int64_t after, int limit, apr_array_header_t **out);

/* The change topic's document for destinations that fetch it (WebSub
 * ping hubs): one change notification merging the newest sealed change
 * notifications of o->set with id >= since, newest first for as long as
 * they are contiguous (each one's until is the next one's from) and hold at most o->max_entries entries together
 * (the newest always, whatever it holds).  Rendered from the journal
 * like a sealed one: from = the oldest taken's from, until = the
 * newest's; out->id is the newest's id (0: none sealed from since on),
 * payload in p. */
apr_status_t rs_notify_window(rs_notify_t *n, apr_pool_t *p, const rs_notify_opts_t *o,
                              apr_int64_t since, rs_notification_t *out);

/* The newest sealed notification of (set, topic); out->id is 0 if none. */
apr_status_t rs_notify_latest(rs_notify_t *n, apr_pool_t *p, const char *set, const char *topic,
                              rs_notification_t *out);

/* Whether the set has unsealed change notifications (*open set to 1). */
apr_status_t rs_notify_has_open(rs_notify_t *n, const char *set, int *open);

/* Delete sealed notifications of (set, topic) that every notify_dests
 * row of that (set, topic) has passed (id <= its cursor; all of them
 * when there is none), whose until is before cutoff, except the newest
 * sealed one.  *deleted (may be NULL) gets the count.  Outside a
 * transaction: in one of its own that begins with the set's fence
 * (RS_LEASE_LOST, nothing deleted, when another node writes the set). */
apr_status_t rs_notify_prune(rs_notify_t *n, const char *set, const char *topic, apr_time_t cutoff,
                             int *deleted);

/* A new history (rs_statecheck.h): forget every notification, open and
 * sealed, and set every destination's cursor back to 0 (no attempts, due
 * at once), in one transaction.  The open ones' journal records are gone
 * (the journal started over); the sealed ones name the old history's
 * resources, and after a change of the base URLs resources the server no
 * longer has: neither a topic nor a delivery may carry them any more.
 * Ids start over from 1 in the empty table, the cursors with them, so
 * every destination gets the new history's notifications from its
 * first.  Called before the delivery thread starts. */
apr_status_t rs_notify_reset(rs_notify_t *n);

#endif
