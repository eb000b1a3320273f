/* SPDX-License-Identifier: Apache-2.0 */
/* rs_inventory_sql.h - what the inventory's two writers share
 * (rs_inventory.c: a row at a time; rs_invbatch.c: several rows to a
 * statement): a row's columns, the upsert, and a row's arguments.  Not
 * for other units: they see rs_inventory.h and rs_invbatch.h. */
#ifndef RS_INVENTORY_SQL_H
#define RS_INVENTORY_SQL_H

#include "rs_inventory.h"

/* The columns of a row; enc and ln are what the content coding and the
 * links are read from: the columns encoding and links, which schema
 * versions 6 and 7 added, or NULL for a store of an older version opened
 * as it is (rs-tool: RS_DB_READONLY, RS_DB_AS_IS; rs_inventory.c). */
#define COLS_OF(enc, ln)                                                                       \
    "dir, name, size, mtime_ns, ctime_ns, dev, ino, type, md5, sha1, sha256, sha512, listed, " \
    "cfg, " enc ", " ln
#define COLS COLS_OF("encoding", "links")

/* The values of one row (RS_INVENTORY_PUT_ARGS arguments, in the order
 * rs_inventory_put_args gives them). */
#define RS_INVENTORY_PUT_ARGS 17
#define PUT_ROW               "(%s, %s, %s, %lld, %lld, %lld, %lld, %lld, %s, %s, %s, %s, %s, %d, %s, %s, %s)"

/* Insert the rows (one PUT_ROW or several, comma-separated) or replace
 * the ones with their keys.  A statement must not hold one key twice
 * (PostgreSQL refuses to update a row twice in one statement). */
#define PUT_ROWS(rows)                                                                     \
    "INSERT INTO inventory (setname, " COLS ") VALUES " rows                               \
    " ON CONFLICT (setname, dir, name) DO UPDATE SET size = excluded.size, "               \
    "mtime_ns = excluded.mtime_ns, ctime_ns = excluded.ctime_ns, dev = excluded.dev, "     \
    "ino = excluded.ino, type = excluded.type, md5 = excluded.md5, sha1 = excluded.sha1, " \
    "sha256 = excluded.sha256, sha512 = excluded.sha512, listed = excluded.listed, "       \
    "cfg = excluded.cfg, encoding = excluded.encoding, links = excluded.links"

/* The RS_INVENTORY_PUT_ARGS arguments of row it of set into args
 * (pointers into set and it). */
void rs_inventory_put_args(const char *set, const rs_item_t *it, const void **args);

#endif
