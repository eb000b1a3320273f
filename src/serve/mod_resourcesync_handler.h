/* SPDX-License-Identifier: Apache-2.0 */
/* mod_resourcesync_handler.h - the declarations of mod_resourcesync_handler.c. */
#ifndef MOD_RESOURCESYNC_HANDLER_H
#define MOD_RESOURCESYNC_HANDLER_H

#include "mod_resourcesync.h"

/* A document rendered once per server generation, served from memory. */
typedef struct rs_memdoc_t {
    const char *type; /* Content-Type */
    const char *body; /* NULL: not served */
    apr_size_t len;
    const char *etag; /* strong */
} rs_memdoc_t;

/* mod_resourcesync_handler.c */
int rs_handler_translate(request_rec *r);
/* translate_name: r is the module's (no file behind it: the directory
 * walk is skipped, <Location> sections apply; GET and HEAD only), answered
 * with doc (which lives as long as the server generation), or, doc NULL,
 * by its URL-path (the Source Description, the documents under the
 * prefix). */
void rs_handler_claim(request_rec *r, const rs_memdoc_t *doc);
int rs_handler_map(request_rec *r);
int rs_handler_handle(request_rec *r);
int rs_handler_link(request_rec *r);
/* Answer r (GET or HEAD) with len bytes of body, which live as long as
 * r, as type: a strong ETag etag, Last-Modified mtime, Cache-Control
 * no-cache; 304 or 412 from the conditions before anything is sent. */
int rs_handler_send(request_rec *r, const char *type, const char *body, apr_size_t len,
                    const char *etag, apr_time_t mtime);
/* 1 if r is about a file its set (the set of r's directory) lists, on
 * the server that declares the set: a response the set's lists describe. */
int rs_handler_listed(request_rec *r, const rs_set_t *set);

#endif
