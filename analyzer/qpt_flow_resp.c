/* qpt_flow_resp.c - PSN sequence analysis of one half: its responses (see
 * qpt_flow_int.h)
 *
 * ACKs (RTT, coalesced, duplicate), NAKs, RNR NAKs, READ responses and
 * atomic ACKs (latencies), and the end of an episode; the requests they
 * answer: qpt_flow_seq.c. */
#include <string.h>

#include "qpt_flow_int.h"

static QPT_HOT void ack_requests(struct half *h, struct half *t,
				 const struct qpt_pkt *p, uint64_t frame, int64_t ns,
				 struct qpt_verdict *v, bool is_ack)
{
	struct qpt_dir *d = fl_dir_of(h), *td = fl_dir_of(t);
	uint32_t psn = p->bth.psn;
	/* the first ACK covers every request since the first one */
	uint32_t from = t->any_acked ? qpt_psn_add(t->acked, 1) :
			td && td->psn_seen ? td->first_psn : psn;
	int32_t n = qpt_psn_diff(psn, from);
	unsigned ackreqs = 0;
	struct slot *hit = NULL;

	if (n < 0 || n > (int32_t)WIN_SIZE * 64)
		n = -1; /* stale or foreign: nothing new acknowledged */
	for (int32_t i = 0; i <= n && i < (int32_t)WIN_SIZE; i++) {
		uint32_t q = qpt_psn_add(psn, -i);
		struct slot *s = fl_slot_of(t, WIN_REQ, q, false);

		if (!s || s->acked)
			continue;
		s->acked = true;
		if (s->ackreq)
			ackreqs++;
		if (!hit)
			hit = s;
	}
	if (n >= 0) {
		t->acked = psn;
		t->any_acked = true;
	}
	if ((t->in_episode || (t->x && t->x->rc && t->x->rc->episode_reopen)) &&
	    qpt_psn_diff(psn, t->acked) >= 0) {
		fl_rec(t)->ack_frame = frame;
		fl_rec(t)->ack_ns = ns;
	}
	if (hit && !hit->resent) { /* Karn: no RTT from resent requests */
		v->acks_frame = hit->frame;
		v->ack_rtt_ns = ns - hit->ns;
		if (is_ack && td)
			fl_lat_add(fl_rtt(td), (double)(ns - hit->ns) / 1000.0);
	}
	if (is_ack && ackreqs > 1) {
		d->coalesced_acks++;
		fl_emit(v, h, &(struct qpt_event){ .frame = frame, .time_ns = ns,
				.kind = QPT_VB_COALESCED_ACK, .psn = psn, .count = ackreqs,
				.detail = "one ACK for several requests that asked for one" });
	}
	/* Recovered once the responder answers up to the highest PSN sent
	 * before the episode (even with a resent response: READs). */
	if (t->in_episode && qpt_psn_diff(psn, fl_rec(t)->episode_top) >= 0 &&
	    qpt_psn_diff(psn, fl_rec(t)->episode_top) < 65536)
		fl_episode_close(t, frame, ns);
}

/* A capture copy of an answer: the later sighting of an ACK or NAK is the
 * nearer to when the requester got it (a capture of both hosts merged
 * sees it first at the responder, as it left, then at the requester, as
 * it came).  A copy of the pending NAK is its last sighting
 * (fl_nak_after_pause: random hw 7195); of an ACK at or beyond what is
 * acknowledged, during the requester's episode, the episode's last ACK
 * from then (retry_after_ack, retry_paused, fl_timer_again: random hw
 * 9884). */
static void answer_copy(struct half *t, const struct qpt_pkt *p, uint64_t frame, int64_t ns)
{
	struct half_rec *rc = t->x ? t->x->rc : NULL;

	if (!rc || !(p->flags & QPT_H_AETH))
		return;
	/* the pending NAK's last sighting (fl_nak_after_pause) */
	if (t->nak_pending && p->aeth.kind == QPT_AETH_NAK && p->bth.psn == rc->nak_psn) {
		rc->nak_last_frame = frame;
		rc->nak_last_ns = ns;
	}
	if ((t->in_episode || rc->episode_reopen) && t->any_acked &&
	    p->aeth.kind == QPT_AETH_ACK && qpt_psn_diff(p->bth.psn, t->acked) >= 0) {
		rc->ack_frame = frame;
		rc->ack_ns = ns;
	}
}

void fl_response(struct qpt_flow *fl, struct half *h, const struct qpt_pkt *p,
		     uint64_t frame, int64_t ns, struct qpt_verdict *v)
{
	const struct qpt_opcode_info *oi = &qpt_opcodes[p->bth.opcode];
	struct qpt_dir *d;
	struct half *t = fl_twin_of(fl, h);
	uint32_t psn = p->bth.psn;
	struct read_req *rd;

	if (!t) {
		struct half *r = fl_find_requester(fl, h, psn);

		if (r) {
			fl_pair(fl, r, h,
			     QPT_PAIR_TRAFFIC,
			     oi->flags & QPT_O_READ ? "READ response PSN answers READ request" :
			     oi->flags & QPT_O_ATOMIC ? "atomic ACK PSN answers atomic request" :
							"ACK PSN answers requests");
			fl_set_transport(r, r->service == 0xff ? p->bth.opcode : r->service);
			t = r;
		}
	}
	if (!h->conv)
		fl_conv_new(fl, h);
	fl_set_transport(h, p->bth.opcode);
	v->conv = h->conv->id;
	v->dir = (int8_t)h->dir;
	d = fl_dir_of(h);
	d->resp_packets++;
	if (t && t->x && t->x->rc) {
		t->x->rc->ans_seen_frame = frame;
		t->x->rc->ans_seen_psn = psn;
	}
	if (fl_capture_copy(fl, h, p, frame, ns, v, false)) {
		if (t)
			answer_copy(t, p, frame, ns);
		return;
	}
	/* an answer to the twin's requests up to this PSN (for copies) */
	if (t && (!t->ans_valid || qpt_psn_diff(psn, t->ans_hi) >= 0 ||
		  qpt_psn_diff(psn, t->ans_hi) < -(int32_t)WIN_SIZE * 64)) {
		t->ans_valid = true;
		t->ans_hi = psn;
		t->ans_frame = frame;
	} else if (t) {
		/* one below the highest (answered again): the latest such */
		fl_rec(t)->ans_low_frame = frame;
		fl_rec(t)->ans_low_psn = psn;
	}

	if (p->flags & QPT_H_AETH) {
		const struct qpt_aeth *a = &p->aeth;

		/* a NAK or RNR NAK: its requester goes back to its PSN, so a
		 * repeat of that PSN or one before it is a sending (the
		 * originals past it, still in flight, may pass a tap after
		 * it: a merged capture's copies of them stay copies) */
		if (t && a->kind != QPT_AETH_ACK) {
			fl_rec(t)->nak_mark_frame = frame;
			fl_rec(t)->nak_mark_psn = psn;
		}

		if (a->kind == QPT_AETH_NAK) {
			v->flags |= QPT_V(NAK);
			fl_dr(d)->naks[MIN(a->value, QPT_NAK_KINDS - 1u)]++;
			fl_emit(v, h, &(struct qpt_event){ .frame = frame, .time_ns = ns,
					.kind = QPT_VB_NAK, .psn = psn, .code = a->value,
					.detail = qpt_nak_name(a->value) });
			/* during an episode too: a resent packet lost again
			 * (a nested episode); it replaces a pending one the
			 * go-back under way has resent the PSN of */
			if (t && a->value == QPT_NAK_PSN_SEQ_ERR &&
			    (!t->nak_pending || fl_rec(t)->nak_covered)) {
				t->nak_pending = true;
				fl_rec(t)->nak_covered = fl_rec(t)->nak_below = false;
				fl_rec(t)->nak_frame = fl_rec(t)->nak_last_frame = frame;
				fl_rec(t)->nak_ns = fl_rec(t)->nak_last_ns = ns;
				fl_rec(t)->nak_psn = psn;
			}
			if (t && a->value == QPT_NAK_PSN_SEQ_ERR)
				fl_gap_before_start(t, psn, frame, ns, v);
			/* A sequence error NAK acknowledges every PSN before it. */
			if (t && a->value == QPT_NAK_PSN_SEQ_ERR) {
				struct qpt_pkt q = *p;

				q.bth.psn = qpt_psn_add(psn, -1);
				ack_requests(h, t, &q, frame, ns, v, false);
			}
			return;
		}
		if (a->kind == QPT_AETH_RNR) {
			v->flags |= QPT_V(RNR_NAK);
			fl_dr(d)->rnr_naks++;
			fl_emit(v, h, &(struct qpt_event){ .frame = frame, .time_ns = ns,
					.kind = QPT_VB_RNR_NAK, .psn = psn, .code = a->value,
					.duration_ns = (int64_t)(qpt_rnr_timer_us(a->value) * 1000),
					.detail = "receiver not ready" });
			if (t) {
				t->rnr_pending = true;
				fl_rec(t)->rnr_frame = frame;
				fl_rec(t)->rnr_ns = ns;
				fl_rec(t)->rnr_psn = psn;
				fl_rec(t)->rnr_timer = a->value;
				fl_rec(t)->rnr_covered = false;
			}
			return;
		}
	}
	if (oi->flags & QPT_O_ACK) {
		d->acks++;
		if (h->ack_valid && h->ack_psn == psn && h->ack_msn == p->aeth.msn &&
		    h->ack_synd == p->aeth.syndrome) {
			v->flags |= QPT_V(DUP_ACK);
			fl_dr(d)->dup_acks++;
			fl_emit(v, h, &(struct qpt_event){ .frame = frame, .time_ns = ns,
					.kind = QPT_VB_DUP_ACK, .psn = psn,
					.detail = "same PSN and MSN as the previous ACK" });
		}
		h->ack_valid = true;
		h->ack_psn = psn;
		h->ack_msn = p->aeth.msn;
		h->ack_synd = p->aeth.syndrome;
		if (t)
			ack_requests(h, t, p, frame, ns, v, true);
		return;
	}

	/* READ responses and atomic ACKs: the responder's own sequence. */
	fl_learn_mtu(h, p);
	rd = t && oi->flags & QPT_O_READ ? fl_read_find(t, psn) : NULL;
	if (rd)
		rd->resp_seen = true;
	if (h->resp_started && qpt_psn_diff(psn, h->resp_max) <= 0) {
		struct slot *s = fl_slot_of(h, WIN_RESP, psn, false);

		v->flags |= QPT_V(RETRANSMISSION);
		fl_dr(d)->retransmitted_packets++;
		/* a response stream restarted at a lower PSN: what follows
		 * is sent again, not copied (the resends after the first go
		 * on with it) */
		if (!h->x || !h->x->rc || !h->x->rc->resp_resending ||
		    psn != qpt_psn_add(h->x->rc->resp_last, 1))
			fl_went_back(h, frame, psn);
		fl_rec(h)->resp_resending = true;
		fl_rec(h)->resp_last = psn;
		if (s) {
			v->original_frame = s->frame;
		} else {
			/* its first sending was not captured: this sighting is
			 * the one later resends of it name */
			s = fl_slot_of(h, WIN_RESP, psn, true);
			s->frame = frame;
			s->ns = ns;
		}
		fl_emit(v, h, &(struct qpt_event){ .frame = frame, .time_ns = ns,
				.kind = QPT_VB_RETRANSMISSION, .psn = psn,
				.original_frame = v->original_frame,
				.detail = v->original_frame ?
						  "response resent by the responder" :
						  "response resent by the responder (original not "
						  "captured)" });
	} else {
		struct slot *s = fl_slot_of(h, WIN_RESP, psn, true);

		s->frame = frame;
		s->ns = ns;
		h->resp_started = true;
		h->resp_max = psn;
		if (h->x && h->x->rc)
			h->x->rc->resp_resending = false;
		/* responses of one READ come in PSN order: a skip is a loss */
		if (rd) {
			uint32_t next = rd->next_valid ? rd->next_resp : rd->psn;
			int32_t miss = qpt_psn_diff(psn, next);

			if (miss > 0) {
				fl_dr(d)->response_gaps++;
				fl_dr(d)->missing_responses += (uint32_t)miss;
				fl_emit(v, h, &(struct qpt_event){ .frame = frame, .time_ns = ns,
						.kind = QPT_VB_RESPONSE_GAP, .psn = psn,
						.count = (uint32_t)miss,
						.detail = "READ response PSNs skipped: lost before "
							  "the capture point" });
			}
			rd->next_valid = true;
			rd->next_resp = qpt_psn_add(psn, 1);
		}
	}
	if (t) {
		struct read_req *r = rd;

		if (r) {
			v->read_request_frame = r->frame;
			if (!r->answered && psn == r->psn) {
				r->answered = true;
				fl_lat_add(fl_lat_w(&fl_dr(fl_dir_of(t))->read_lat), (double)(ns - r->ns) / 1000.0);
			}
			if (oi->flags & QPT_O_LAST && !r->span) {
				r->span = (uint32_t)qpt_psn_diff(psn, r->psn) + 1;
				/* the requester's next PSN follows the READ's span */
				if (t->expected == qpt_psn_add(r->psn, 1))
					t->expected = qpt_psn_add(r->psn, (int32_t)r->span);
			}
		}
		if (oi->flags & QPT_O_ATOMIC) {
			struct slot *s = fl_slot_of(t, WIN_REQ, psn, false);

			if (s && !s->resent)
				fl_lat_add(fl_lat_w(&fl_dr(fl_dir_of(t))->atomic_lat), (double)(ns - s->ns) / 1000.0);
		}
		/* the last answer of a READ or atomic an episode resent */
		for (unsigned i = 0; t->x && t->x->rc && i < t->x->rc->nasks; i++) {
			struct half_rec *rc = t->x->rc;

			if (!rc->asks[i].ans_frame && frame > rc->asks[i].frame &&
			    qpt_psn_diff(psn, rc->asks[i].psn) >= 0 &&
			    (psn == rc->asks[i].end ||
			     (qpt_psn_diff(psn, rc->asks[i].end) < 0 && oi->flags & QPT_O_LAST)))
				rc->asks[i].ans_frame = frame;
		}
		/* Responses carrying an AETH acknowledge up to their PSN. */
		if (p->flags & QPT_H_AETH)
			ack_requests(h, t, p, frame, ns, v, false);
	}
}
