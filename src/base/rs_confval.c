/* SPDX-License-Identifier: Apache-2.0 */
/* rs_confval.c - see rs_confval.h */
#include <strings.h>
#include <apr_strings.h>
#include "rs_confval.h"
#include "rs_parse.h"

const char *const rs_confval_onoff[] = { "off", "on", NULL };

static const char *number(apr_pool_t *p, const char *name, const rs_confval_t *v, const char *arg,
                          apr_int64_t *out)
{
    const char *what = v->what ? v->what : "";
    apr_int64_t n;

    if (!rs_parse_int(arg, v->min, v->max, &n)) {
        return apr_psprintf(
            p, "%s: '%s' is not %sa number%s%s from %" APR_INT64_T_FMT " to %" APR_INT64_T_FMT,
            name, arg, v->off ? "'off' nor " : "", *what ? " of " : "", what, v->min, v->max);
    }
    *out = n * (v->scale ? v->scale : 1);
    return NULL;
}

static int word(const rs_confval_t *v, const char *arg, apr_int64_t *out)
{
    int i;

    for (i = 0; v->words[i]; i++) {
        if (!strcasecmp(arg, v->words[i])) {
            *out = i;
            return 1;
        }
    }
    return 0;
}

const char *rs_confval_parse(apr_pool_t *p, const char *name, const rs_confval_t *v,
                             const char *arg, apr_int64_t *out)
{
    apr_int64_t val = 0;
    int ok = 0;

    if (v->off && !strcasecmp(arg, "off")) {
        *out = 0;
        return NULL;
    }
    switch (v->kind) {
    case RS_CONFVAL_NUMBER:
        return number(p, name, v, arg, out);
    case RS_CONFVAL_DURATION:
        ok = rs_parse_duration(arg, &val);
        break;
    case RS_CONFVAL_DELAY:
        ok = rs_parse_delay(arg, &val) && val >= v->min && val <= v->max;
        break;
    case RS_CONFVAL_WORD:
        ok = word(v, arg, &val);
        break;
    }
    if (!ok) {
        return apr_psprintf(p, "%s: '%s' %s", name, arg, v->what);
    }
    *out = val;
    return NULL;
}
