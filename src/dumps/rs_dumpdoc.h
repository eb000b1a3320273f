/* SPDX-License-Identifier: Apache-2.0 */
/* rs_dumpdoc.h - resourcedump.xml: the Resource Dump, or its index and
 * parts, from the packages a build wrote or kept.
 *
 * One <url> per package (its zip, length, hash, at/completed, and the
 * manifest copy as rs:ln contents), in one <urlset>; or, when there are
 * more packages than o->list_max or their entries pass the bytes of one
 * document (ResourceSync 1.1 section 7: "the limit is 50,000 items per
 * document and a document size of 50 MB", RS_XML_MAX_*, or
 * o->doc_max_bytes), a Resource Dump Index (<sitemapindex>) of parts
 * part-<n>.xml, each as full as both limits allow (each package's entry is
 * measured), so ceil(packages / list_max) parts while entries are small.
 * Engine unit: APR, libxml2 through rs_xml.
 */
#ifndef RS_DUMPDOC_H
#define RS_DUMPDOC_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "rs_dump.h"
#include "rs_dumppkg.h"

/* A package of the dump: its key and record. */
typedef struct rs_dumpdoc_pkg_t {
    const char *key;
    rs_dumppkg_rec_t rec;
} rs_dumpdoc_pkg_t;

/* Write resourcedump.xml (and the parts of its index) of packages pkgs
 * (rs_dumpdoc_pkg_t, in order) into the generation directory dir, each
 * file finished on disk; *parts gets the index's parts (0: no index).
 * Returns the cause of a failure. */
apr_status_t rs_dumpdoc_write(const rs_dump_opts_t *o, const char *dir,
                              const apr_array_header_t *pkgs, apr_pool_t *p, int *parts);

#endif
