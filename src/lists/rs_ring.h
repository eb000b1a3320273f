/* SPDX-License-Identifier: Apache-2.0 */
/* rs_ring.h - a ring of the most recent journal records, in memory the
 * caller provides (the shared status segment).
 *
 * A slot keeps what a reader needs to send the record in a Change List:
 * its sequence, datetime and numbers, and the entry already rendered
 * (rs_record_t.xml, from rs_entry_render), not the path, type and
 * hashes it was rendered from.  Serving the open list from the ring is
 * therefore a copy of bytes, whatever the list's length.
 *
 * Fixed-size slots indexed by sequence number (slot = seq mod nslots), so
 * a reader finds record `seq` without searching and can tell whether it is
 * still there: the slot holds it iff the slot's seq equals it.  The ring
 * holds the sequences (head - nslots, head]; a sequence in that window
 * whose slot holds another one was never put (a number left unused by a
 * rolled-back transaction) and is skipped.  A record whose rendered entry
 * does not fit a slot (or that has none) is marked overlong: readers must
 * take it (and what follows) from the store.
 *
 * No locking here: one writer (the watcher) and many readers (children)
 * share it under the status segment's global mutex, held only to copy.
 */
#ifndef RS_RING_H
#define RS_RING_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "rs_journal.h"

/* Bytes of a rendered entry: a slot takes 2 KiB with its 44 bytes of
 * numbers.  It was 1 KiB (980 bytes) before entries carried rs:ln links:
 * an entry with md5 and sha-256 under 40-byte names takes about 400
 * bytes, each link carrying its target's attributes and both digests
 * about 330 more, a mirror's about 110; a describedby link with its
 * inverse and a mirror comes to about 1 200 bytes, which 980 would send
 * to the store (t/unit/test_scan_changes.c, recorder_linked_entry_fits). */
#define RS_RING_SLOT_DATA 2004

typedef struct rs_ring_t rs_ring_t;

/* Bytes needed for a ring of nslots slots. */
apr_size_t rs_ring_size(apr_uint32_t nslots);

/* Format mem (rs_ring_size(nslots) bytes) as an empty ring. */
rs_ring_t *rs_ring_init(void *mem, apr_uint32_t nslots);

/* Put record rec of set number `set`, with its rendered entry rec->xml
 * (rec->xml_len bytes).  Records of one set are put in sequence order;
 * those of different sets need not be (a node that writes one set and
 * follows another puts the other's records when it learns of them, after
 * newer ones of its own): every record a published extent covers must
 * have been put before the extent is published.  A record at or below
 * head - nslots is not put (its slot holds a newer, live record; readers
 * take it from the store). */
void rs_ring_put(rs_ring_t *r, int set, const rs_record_t *rec);

/* The highest sequence put (0: none). */
apr_int64_t rs_ring_head(const rs_ring_t *r);

/* Copy the records of set `set` with from <= seq <= last, at most max of
 * them, in sequence order, into out (an array of rs_record_t with seq,
 * change, datetime, lastmod_ns, size and xml/xml_len; the bytes copied
 * into p; dir, name, type and hashes NULL).  *next gets the sequence to continue from.  Returns the number
 * copied, or -1 when record `from` (or one after it that is needed) has
 * left the ring or is overlong: take the rest from the store, from *next
 * on. */
int rs_ring_get(const rs_ring_t *r, int set, apr_int64_t from, apr_int64_t last, int max,
                apr_pool_t *p, apr_array_header_t *out, apr_int64_t *next);

/* Where to start sending the last `need` bytes of the entries of set
 * `set` with first <= seq <= last: walking back from `last`, the latest
 * record from which on the entries (their rendered lengths summed) are at
 * least `need` bytes, or `first` when all of them are fewer.  *seq gets
 * that record's sequence and *bytes the entries' bytes from it to `last`.
 * The cost is the number of sequences walked, not the list's length.
 * Returns 0, or -1 when a record needed has left the ring or is overlong
 * (the caller starts from `first` then). */
int rs_ring_seek(const rs_ring_t *r, int set, apr_int64_t first, apr_int64_t last, apr_int64_t need,
                 apr_int64_t *seq, apr_int64_t *bytes);

#endif
