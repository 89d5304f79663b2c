/* qpt_flow_goback.c - when a resend begins a go-back of its own: the
 * tests on what the capture shows around it (pauses against the go-back's
 * pace, the retransmit timer's period, RNR NAKs and their timers) that
 * qpt_flow_seq.c's fl_request asks before it says a resend goes on with
 * the go-back under way, is an RNR retry, or opens an episode (README
 * "How the analysis decides"). */
#include "qpt_flow_int.h"

/* Whether resend p, at the PSN of a NAK on its way where the go-back under
 * way goes on, comes after a pause the go-back's own pace cannot explain:
 * that NAK's go-back, nested in this one, whose first resends went on
 * where the first one's were lost before the capture point.  The go-back
 * showed its pace (two resends or more), the pause is more than three
 * times its longest gap between two resends (a gap under the capture's
 * microsecond counts as one), and the NAK came after the go-back's first
 * resend or less than the pause before it (a NAK long before the go-back
 * reached its requester before it went back: the go-back resends its PSN
 * anyway, no second one follows). */
int64_t fl_ack_time2(struct half *h)
{
	const struct qpt_dir *d = fl_dir_of(h);

	return d && d->ack_rtt->n ? (int64_t)(d->ack_rtt->min_us * 2000.0) : 0;
}

bool fl_nak_after_pause(struct half *h, uint32_t psn, int64_t ns, int64_t silence)
{
	const struct half_rec *rc = fl_rec(h);

	if (!(h->in_episode && h->nak_pending && !rc->nak_covered && psn == rc->nak_psn &&
	      rc->nak_ns > rc->episode_first_ns - silence && ns - silence >= rc->episode_first_ns))
		return false;
	if (rc->cur.resent_packets >= 2)
		return silence > 3 * MAX(rc->episode_gap_max, 1000);
	/* After one resend (the pace unknown): when the NAK was last seen
	 * after the go-back's first resend (a capture of both hosts merged
	 * sees it come to the requester: random hw 7195), the requester
	 * went back before it had the NAK, whose own go-back is still to
	 * come; a pause over 4 us and more than twice the half's shortest
	 * ACK time after the NAK (it had reached the requester) make this
	 * resend that go-back.  A NAK seen before the first resend was its
	 * cue (real rxe lossy_atomic_bw.client.pcap frame 275). */
	return rc->cur.resent_packets == 1 && rc->nak_last_frame > rc->cur.first_resent_frame &&
	       silence > 4000 && ns - rc->nak_last_ns > fl_ack_time2(h);
}

/* Whether resend p, after a silence, going on with the go-back under way
 * at psn (above the oldest PSN not acknowledged, which the go-back resent)
 * is the retransmit timer's go-back to that oldest PSN, whose first resends
 * the capture missed: when an ACK during the go-back acknowledged part of
 * it (the timer restarted then, the PSN after the ACK stayed
 * unanswered), or when the timer started this go-back and the silence is
 * about as long as the one before it (the timer's period again).  A
 * software sender's stall inside a go-back shows neither. */
bool fl_timer_again(struct half *h, uint32_t psn, int64_t silence)
{
	const struct half_rec *rc = fl_rec(h);
	const struct qpt_dir *d = fl_dir_of(h);
	uint32_t una = h->any_acked ? qpt_psn_add(h->acked, 1) :
		       d && d->psn_seen ? d->first_psn : psn;

	/* an RNR NAK on its way answered the oldest PSN: the silence is its
	 * timer's, the requester waits and retries (random rxe 2163) */
	if (qpt_psn_diff(psn, una) <= 0 || qpt_psn_diff(psn, una) >= 65536 || h->rnr_pending)
		return false;
	if (h->any_acked && rc->ack_frame > rc->cur.first_resent_frame &&
	    qpt_psn_diff(h->acked, rc->cur.from_psn) >= 0)
		return true;
	return rc->cur.timeout && 4 * silence >= 3 * (rc->episode_first_ns - rc->cur.start_ns);
}

/* Whether the go-back under way stopped before this resend: a pause more
 * than eight times its pace so far (the mean time between its resends, at
 * least the microsecond of microsecond time stamps; one resend lost before
 * the capture point doubles it, and a software sender's pace varies), so
 * that what follows is another go-back (a NAK's, which waits for the NAK
 * to reach the requester and replaces the go-back under way).  Unknown
 * (false) before two resends. */
bool fl_goback_paused(const struct half *h, int64_t silence)
{
	const struct half_rec *rc = h->x->rc;
	uint32_t k = rc->cur.resent_packets;

	return k >= 2 &&
	       silence > 8 * MAX((h->last_ns - silence - rc->episode_first_ns) / (int64_t)(k - 1),
				 1000);
}

/* A resend of an RNR NAK's PSN long after its timer, after a silence: the
 * requester never got the RNR NAK (lost after the capture point), its
 * retransmit timer sent it (a timeout episode, not an RNR retry).  A
 * requester retries once its timer has passed: a NIC within microseconds,
 * a software one (rxe: a timer of whole jiffies) within about the timer
 * again; so long past both twice the timer and the timer plus half the
 * timeout silence. */
bool fl_rnr_nak_missed(const struct qpt_flow *fl, struct half *h, int64_t ns, int64_t silence)
{
	const struct half_rec *rc = fl_rec(h);
	int64_t timer = (int64_t)(qpt_rnr_timer_us(rc->rnr_timer) * 1000);

	return silence >= fl->o.timeout_gap_ns && ns - rc->rnr_ns > 2 * timer &&
	       ns - rc->rnr_ns > timer + fl->o.timeout_gap_ns / 2;
}

/* Whether a resend at psn is the retry of the pending RNR NAK: at its PSN
 * or above it (the retry's first packets lost before the capture point),
 * once half its timer has passed (a requester waits the timer, rxe_comp.c
 * and IBA 9.7.5.2.8: sooner, it is what the requester sent before the RNR
 * NAK reached it, or a go-back of another cause), and not one its timer
 * long missed. */
bool fl_rnr_retry_of(const struct qpt_flow *fl, struct half *h, uint32_t psn, int64_t ns,
		     int64_t silence)
{
	const struct half_rec *rc = fl_rec(h);
	int32_t above = qpt_psn_diff(psn, rc->rnr_psn);
	int64_t timer = (int64_t)(qpt_rnr_timer_us(rc->rnr_timer) * 1000);

	if (above < 0 || ns - rc->rnr_ns < (rc->rnr_covered ? timer : timer / 2))
		return false;
	/* after a go-back resent its PSN, only a resend of that PSN; a NAK
	 * for this PSN captured since: its go-back (the responder took the
	 * RNR NAK's PSN) */
	if ((rc->rnr_covered && above > 0) ||
	    (h->nak_pending && psn == rc->nak_psn && rc->nak_frame > rc->rnr_frame))
		return false;
	/* the go-back under way, past the RNR NAK's PSN already, going on
	 * at its next PSN (or past it): what the requester sent before the
	 * RNR NAK reached it (a retry from above the PSN would have lost
	 * every resend up to there) */
	if (above > 0 && h->in_episode && qpt_psn_diff(psn, rc->episode_next) >= 0 &&
	    qpt_psn_diff(rc->episode_next, rc->rnr_psn) > 0)
		return false;
	return !fl_rnr_nak_missed(fl, h, ns, silence);
}
