/* SPDX-License-Identifier: Apache-2.0 */
/* rs_confval.h - one directive value by its description: numbers, sizes,
 * durations, delays and words, with the directive's error message.
 *
 * The directive table of the glue describes each simple value with an
 * rs_confval_t (which parser of rs_parse.h, its range, its unit, the words
 * it accepts) and hands the argument to rs_confval_parse, which either
 * gives the value or the error httpd reports: the directive's name, the
 * value as given in quotes, and why it was refused, e.g.
 *
 *   ResourceSyncRescanInterval: '0' is not a number of seconds from 1 to 86400
 *   ResourceSyncIncludeDotfiles: 'maybe' is not On or Off
 *
 * Numbers word their message from their range and unit; the other kinds
 * carry the text after the quoted value (`what`), written once in the
 * table, so that a message is the same wherever the value is parsed.
 * Pure: no I/O, no state, no httpd (unit tests and fuzz/fuzz_config.c).
 */
#ifndef RS_CONFVAL_H
#define RS_CONFVAL_H

#include <apr_pools.h>

typedef enum rs_confval_kind_t {
    RS_CONFVAL_NUMBER,   /* a whole number from min to max (rs_parse_int),
                             * the value is that number times scale */
    RS_CONFVAL_DURATION, /* a duration (rs_parse_duration), in µs */
    RS_CONFVAL_DELAY,    /* a delay (rs_parse_delay) from min to max µs */
    RS_CONFVAL_WORD      /* one of words, in any case: the value is its
                             * index */
} rs_confval_kind_t;

typedef struct rs_confval_t {
    rs_confval_kind_t kind;
    int off;              /* 1: the word "off" (any case) is also
                             * accepted, as the value 0 */
    apr_int64_t min, max; /* NUMBER: range of the number given;
                             * DELAY: range of the delay, µs */
    apr_int64_t scale;    /* NUMBER: unit of the value (0 taken as 1),
                             * e.g. 1 MiB or 1 s in µs */
    /* NUMBER: what is counted ("seconds", "MiB"; NULL or "": nothing);
     * the other kinds: the message after the quoted value ("is not On or
     * Off"). */
    const char *what;
    const char *const *words; /* WORD: NULL-terminated list */
} rs_confval_t;

/* Initializers of an rs_confval_t (add ".off = 1", ".scale = ..."). */
#define RS_NUMBER(lo, hi, unit) .kind = RS_CONFVAL_NUMBER, .min = (lo), .max = (hi), .what = (unit)
#define RS_DURATION(why)        .kind = RS_CONFVAL_DURATION, .what = (why)
#define RS_DELAY(lo, hi, why)   .kind = RS_CONFVAL_DELAY, .min = (lo), .max = (hi), .what = (why)
#define RS_WORDS(list, why)     .kind = RS_CONFVAL_WORD, .words = (list), .what = (why)
/* A flag: "off" is 0, "on" is 1. */
#define RS_FLAG(why) RS_WORDS(rs_confval_onoff, why)

/* The words of a flag: "off" (index 0) and "on" (1). */
extern const char *const rs_confval_onoff[];

/* Parse arg, the value of directive name, as v describes it.  Returns NULL
 * with the value in *out, or the error "<name>: '<arg>' <why>" (allocated
 * from p) with *out untouched.  A NUMBER's why is "is not a number of
 * <what> from <min> to <max>" ("is not 'off' nor a number ..." when off
 * is accepted); the other kinds' is v->what. */
const char *rs_confval_parse(apr_pool_t *p, const char *name, const rs_confval_t *v,
                             const char *arg, apr_int64_t *out);

#endif
