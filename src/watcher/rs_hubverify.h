/* SPDX-License-Identifier: Apache-2.0 */
/* rs_hubverify.h - one subscription request of the built-in hub, from its
 * turn to its durable outcome (steps 2 to 4 in rs_hubintake.h): the
 * limits of the server that received it, the verification of intent or a
 * denial under that server's callback policy, then the subscription
 * stored or deleted.  All on the intake thread. */
#ifndef RS_HUBVERIFY_H
#define RS_HUBVERIFY_H

#include "rs_hubstate.h"

/* Start the verification (or denial) of the request of pend, whose turn
 * the scheduler gave: read its spool file again, deny a new subscription
 * beyond its server's limits, else submit the verification GET.  A file
 * gone, malformed or of a set no longer configured is finished at once. */
void rs_hubverify_start(rs_hubintake_t *hi, rs_hubpending_t *pend);

/* The sender's completion callback (rs_websub_done_fn; baton: the
 * intake): a denial sent, a verification refused, or one confirmed and
 * applied (stored or deleted; kept for rs_hubverify_retry when the store
 * write failed). */
void rs_hubverify_done(void *baton, const rs_websub_result_t *res);

/* The confirmed requests whose store write failed, tried again (not
 * verified again). */
void rs_hubverify_retry(rs_hubintake_t *hi);

#endif
