/* SPDX-License-Identifier: Apache-2.0 */
/* rs_ziptime.c - see rs_ziptime.h */
#include <time.h>
#include <apr_time.h>
#include "rs_ziptime.h"

/* DOS time range: 1980-01-01 00:00:00 .. 2107-12-31 23:59:58 (UTC). */
#define DOS_MIN_SEC 315532800LL
#define DOS_MAX_SEC 4354819198LL
#define EXTRA_UT    0x5455 /* "UT": the extended timestamp */

/* DOS date and time of a UTC second, clamped to the DOS range. */
static void dos_time(apr_int64_t sec, zip_uint16_t *dtime, zip_uint16_t *ddate)
{
    apr_time_exp_t t;
    sec = sec < DOS_MIN_SEC ? DOS_MIN_SEC : sec > DOS_MAX_SEC ? DOS_MAX_SEC : sec;
    apr_time_exp_gmt(&t, apr_time_from_sec(sec));
    *dtime = (zip_uint16_t)((t.tm_hour << 11) | (t.tm_min << 5) | (t.tm_sec / 2));
    *ddate = (zip_uint16_t)(((t.tm_year - 80) << 9) | ((t.tm_mon + 1) << 5) | t.tm_mday);
}

/* libzip keeps a member's time as a time_t and writes its DOS fields with
 * localtime_r.  The time_t whose local time shows the UTC fields of the
 * (clamped) second sec, found with localtime_r alone, into *out; 0 when
 * no time_t does (a local time skipped by a DST change).  Equivalent to
 * what zip_file_set_dostime computes with mktime, which re-reads the time
 * zone (a stat of /etc/localtime) at every call, once per member. */
static int local_twin(apr_int64_t sec, time_t *out)
{
    time_t t, guess;
    struct tm want, got;
    int i;

    sec = sec < DOS_MIN_SEC ? DOS_MIN_SEC : sec > DOS_MAX_SEC ? DOS_MAX_SEC : sec;
    t = guess = (time_t)sec;
    if (!gmtime_r(&t, &want)) {
        return 0;
    }
    for (i = 0; i < 3; i++) {
        if (!localtime_r(&guess, &got)) {
            return 0;
        }
        if (got.tm_year == want.tm_year && got.tm_mon == want.tm_mon && got.tm_mday == want.tm_mday
            && got.tm_hour == want.tm_hour && got.tm_min == want.tm_min
            && got.tm_sec / 2 == want.tm_sec / 2) {
            *out = guess;
            return 1;
        }
        guess = t - got.tm_gmtoff; /* the offset at the last guess */
    }
    return 0;
}

/* The member's DOS date and time: the UTC fields of sec (see dos_time). */
static int set_dos(zip_t *za, zip_uint64_t idx, apr_int64_t sec)
{
    zip_uint16_t dtime, ddate;
    time_t t;

    if (local_twin(sec, &t)) {
        return zip_file_set_mtime(za, idx, t, 0);
    }
    dos_time(sec, &dtime, &ddate);
    return zip_file_set_dostime(za, idx, dtime, ddate, 0);
}

int rs_ziptime_set(zip_t *za, zip_uint64_t idx, apr_int64_t mtime_ns)
{
    apr_int64_t sec = mtime_ns / 1000000000 - (mtime_ns % 1000000000 < 0);
    zip_uint8_t ut[5];
    apr_uint32_t u;

    if (set_dos(za, idx, sec) != 0) {
        return -1;
    }
    if (sec < -2147483648LL || sec > 2147483647LL) {
        return 0; /* no extended timestamp */
    }
    u = (apr_uint32_t)(apr_int32_t)sec;
    ut[0] = 1; /* flags: mtime present */
    ut[1] = (zip_uint8_t)u, ut[2] = (zip_uint8_t)(u >> 8);
    ut[3] = (zip_uint8_t)(u >> 16), ut[4] = (zip_uint8_t)(u >> 24);
    return zip_file_extra_field_set(za, idx, EXTRA_UT, ZIP_EXTRA_FIELD_NEW, ut, sizeof(ut),
                                    ZIP_FL_LOCAL | ZIP_FL_CENTRAL)
                   != 0
               ? -1
               : 0;
}
