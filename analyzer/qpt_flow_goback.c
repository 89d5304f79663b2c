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
 * to reach the requester and replaces the go-back under way).  After one
 * resend, a pause of at least eight times the longest gap between two
 * resends of the half's earlier go-backs and at least 4 us (time stamps of
 * whole microseconds round a NIC's 7-8 us to 8, eight times its pace of
 * up to 1 us: random hw 6637, 18653); unknown (false) without one. */
bool fl_goback_paused(const struct half *h, int64_t silence)
{
	const struct half_rec *rc = h->x->rc;
	uint32_t k = rc->cur.resent_packets;
	int64_t pace = fl_goback_pace(h, silence);

	if (k == 1)
		return pace && silence >= MAX(8 * pace, 4000);
	return k >= 2 && silence > 8 * MAX(pace, 1000);
}

/* The pace of the go-back under way, before a resend after silence: the
 * mean time between its resends (two or more), after one resend the
 * longest gap between two resends of the half's earlier go-backs (0:
 * none). */
int64_t fl_goback_pace(const struct half *h, int64_t silence)
{
	const struct half_rec *rc = h->x->rc;
	uint32_t k = rc->cur.resent_packets;

	return k >= 2 ? (h->last_ns - silence - rc->episode_first_ns) / (int64_t)(k - 1) :
	       k == 1 ? rc->gap_any : 0;
}

/* Whether a resend past the next PSN of a go-back that resent one packet
 * and had no NAK comes after that go-back stopped (fl_goback_paused): a
 * NIC resends back to back (0.1-1 us apart); one that paused went back
 * again (a READ or atomic answer found missing), its first resend lost
 * before the capture point (random hw 6637: an atomic retried, then its
 * READ re-issued 7 us later).  A software sender's pace is larger and so
 * is the bound. */
bool fl_goback_stopped_after_one(const struct half *h, uint32_t psn, int64_t silence)
{
	const struct half_rec *rc = h->x->rc;

	return rc->cur.resent_packets == 1 && rc->cur.trigger == QPT_TRIGGER_RESEND &&
	       qpt_psn_diff(psn, rc->episode_next) > 0 && fl_goback_paused(h, silence);
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

/* An episode's record, kept in its direction's list (the first
 * QPT_MAX_EPISODES: the counters count them all). */
void fl_episode_keep(struct qpt_dir *d, const struct qpt_episode *e)
{
	if (!d->r->episodes)
		fl_dr(d)->episodes = g_array_new(FALSE, TRUE, sizeof(struct qpt_episode));
	if (d->r->episodes->len < QPT_MAX_EPISODES)
		g_array_append_vals(d->r->episodes, e, 1);
}

/* An RNR retry while a READ below the RNR NAK's PSN has responses the
 * capture saw stop short (its first ones came, not its last): either the
 * last ones reached the requester and only the capture missed them (the
 * retry is an RNR retry: random hw 4172, 4905), or they were lost, and
 * the RNR NAK beyond them told the requester so (an implied NAK:
 * rxe_comp.c check_psn() retries from the READ), so that what looks like
 * the RNR retry is that READ's go-back, its first resend (the READ
 * re-issued from the missing response) lost before the capture point
 * (random hw 481).  The capture cannot tell which until the requester
 * re-issues that READ from inside its range at or below the missing
 * response: it never had that response, so it went back to it at the
 * retry (fl_rnr_doubt_resolve).  Remembered until then, or until an
 * episode opens (qpt_flow_seq.c); only when the retry is the requester's
 * first go-back since the RNR NAK. */
void fl_rnr_doubt_note(struct half *h, uint32_t psn, uint64_t frame, int64_t ns)
{
	const struct read_req *low = NULL;
	struct half_rec *rc = fl_rec(h); /* the RNR NAK's, made by it */

	h->rnr_doubt = false;
	/* the retry the requester's first go-back since the RNR NAK (after a
	 * READ re-issue captured since, it goes on with that one: random
	 * rxe 5014) */
	if (rc->goback_prev_frame > rc->rnr_frame)
		return;
	for (unsigned i = 0; i < h->nreads; i++) {
		const struct read_req *r = &h->x->reads[i];

		if (r->resp_seen && r->next_valid && r->span &&
		    qpt_psn_diff(r->next_resp, r->psn) > 0 &&
		    qpt_psn_diff(r->next_resp, qpt_psn_add(r->psn, (int32_t)r->span)) < 0 &&
		    qpt_psn_diff(r->next_resp, psn) < 0 &&
		    (!low || qpt_psn_diff(r->psn, low->psn) < 0))
			low = r;
	}
	if (!low)
		return;
	h->rnr_doubt = true;
	memset(&rc->doubt, 0, sizeof(rc->doubt));
	rc->doubt.frame = frame;
	rc->doubt.ns = ns;
	rc->doubt.psn = psn;
	rc->doubt.nak_frame = rc->rnr_frame;
	rc->doubt.nak_ns = rc->rnr_ns;
	rc->doubt.read_frame = low->frame;
	rc->doubt.miss = low->next_resp;
	rc->doubt.top = qpt_psn_add(h->expected, -1);
	rc->doubt.resent = 1;
}

/* A READ re-issue rr at psn: when it re-issues the doubted READ from
 * inside its range at or below the response the capture did not see, the
 * RNR retry was that READ's go-back: an episode of its own, triggered by
 * the RNR NAK, from the retry's first frame to the first new PSN after it
 * (or to this re-issue, which then goes back inside it), reported now as
 * an event of that frame (a revision of its verdict, qpt_verdict.h). */
void fl_rnr_doubt_resolve(struct half *h, const struct read_req *rr, uint32_t psn,
			  uint64_t frame, int64_t ns, struct qpt_verdict *v)
{
	struct half_rec *rc = h->x->rc;
	struct qpt_dir *d = fl_dir_of(h);
	struct qpt_episode e;

	if (rr->frame != rc->doubt.read_frame || psn == rr->psn ||
	    qpt_psn_diff(psn, rc->doubt.miss) > 0)
		return;
	h->rnr_doubt = false;
	if (!d)
		return;
	/* its cue the RNR NAK beyond the missing response (an implied NAK) */
	e = (struct qpt_episode){ .trigger = QPT_TRIGGER_READ_RETRY,
				  .trigger_frame = rc->doubt.nak_frame,
				  .first_resent_frame = rc->doubt.frame,
				  .start_ns = rc->doubt.nak_ns,
				  .from_psn = rc->doubt.psn,
				  .resent_packets = rc->doubt.resent,
				  .end_frame = rc->doubt.end_frame ? rc->doubt.end_frame : frame,
				  .end_ns = rc->doubt.end_frame ? rc->doubt.end_ns : ns };
	fl_episode_keep(d, &e);
	fl_dr(d)->gbn_episodes++;
	fl_emit(v, h, &(struct qpt_event){ .frame = e.first_resent_frame, .time_ns = rc->doubt.ns,
			.kind = QPT_VB_GBN_START, .psn = e.from_psn,
			.original_frame = e.trigger_frame, .count = (uint32_t)d->r->gbn_episodes,
			.duration_ns = rc->doubt.ns - e.start_ns,
			.detail = qpt_name_of(qpt_trigger_descr, e.trigger, "?") });
}
