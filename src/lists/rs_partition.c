/* SPDX-License-Identifier: Apache-2.0 */
/* rs_partition.c - see rs_partition.h */
#include "rs_partition.h"

apr_uint64_t rs_partition_hash(const char *path, apr_size_t len)
{
    apr_uint64_t h = APR_UINT64_C(0xcbf29ce484222325);
    apr_size_t i;
    for (i = 0; i < len; i++) {
        h ^= (unsigned char)path[i];
        h *= APR_UINT64_C(0x100000001b3);
    }
    return h;
}

apr_uint64_t rs_partition_interval(apr_int64_t max_entries)
{
    apr_uint64_t k = 1;
    while (max_entries >= 8 && (apr_int64_t)(k * 2) <= max_entries / 4) {
        k *= 2;
    }
    return k;
}

void rs_partition_init(rs_partition_t *pt, apr_int64_t max_entries, apr_int64_t max_bytes,
                       apr_uint64_t interval)
{
    pt->max_entries = max_entries < 1 ? 1 : max_entries;
    pt->max_bytes = max_bytes < 1 ? 1 : max_bytes;
    pt->interval = interval ? interval : rs_partition_interval(pt->max_entries);
    pt->entries = pt->bytes = 0;
    pt->max_doc = pt->doc = 0;
}

void rs_partition_limit_doc(rs_partition_t *pt, apr_int64_t max_doc)
{
    pt->max_doc = max_doc > 0 ? max_doc : 0;
}

unsigned rs_partition_add_doc(rs_partition_t *pt, const char *path, apr_size_t len,
                              apr_int64_t size, apr_int64_t doc)
{
    unsigned cut = 0;
    int doc_full = pt->max_doc > 0 && doc > pt->max_doc - pt->doc;

    if (pt->entries > 0
        && (size > pt->max_bytes || pt->entries + 1 > pt->max_entries
            || size > pt->max_bytes - pt->bytes || doc_full)) {
        cut |= RS_PARTITION_CUT_BEFORE;
        pt->entries = pt->bytes = pt->doc = 0;
    }
    pt->entries++;
    pt->bytes += size;
    pt->doc += doc;
    if (size >= pt->max_bytes || pt->entries >= pt->max_entries
        || (pt->max_doc > 0 && pt->doc >= pt->max_doc)
        || (rs_partition_hash(path, len) & (pt->interval - 1)) == 0) {
        cut |= RS_PARTITION_CUT_AFTER;
        pt->entries = pt->bytes = pt->doc = 0;
    }
    return cut;
}

unsigned rs_partition_add(rs_partition_t *pt, const char *path, apr_size_t len, apr_int64_t size)
{
    return rs_partition_add_doc(pt, path, len, size, 0);
}
