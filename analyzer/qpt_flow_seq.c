/* qpt_flow_seq.c - PSN sequence analysis of one half: its requests (see
 * qpt_flow_int.h)
 *
 * Requests: new PSNs, gaps, capture duplicates, retransmissions and their
 * go-back-N episodes, READ retries, RNR retries, messages.  The responses
 * that answer them: qpt_flow_resp.c. */
#include <string.h>

#include "qpt_flow_int.h"

static void win_grow(struct half *h, int w)
{
	uint32_t size = h->win_size[w], n = size * 2;
	struct slot *o = h->win[w], *t = g_new0(struct slot, n);

	/* distinct modulo size, so distinct modulo 2 * size */
	for (uint32_t i = 0; i < size; i++)
		if (o[i].used)
			t[o[i].psn & (n - 1)] = o[i];
	g_free(o);
	h->win[w] = t;
	h->win_size[w] = (uint16_t)n;
}

/* The slot of psn in h's window w (WIN_REQ, WIN_RESP); with create, made
 * (emptied) when it holds another PSN or none. */
QPT_HOT struct slot *fl_slot_of(struct half *h, int w, uint32_t psn, bool create)
{
	struct slot *s;

	if (!h->win[w]) {
		if (!create)
			return NULL;
		h->win_size[w] = 1;
		h->win[w] = g_new0(struct slot, 1);
	}
	s = &h->win[w][psn & (h->win_size[w] - 1)];
	if (s->used && s->psn == psn)
		return s;
	if (!create)
		return NULL;
	/* Below WIN_MIN slots a collision always doubles: the PSNs kept are
	 * those a table of WIN_MIN from the start would keep (distinct modulo
	 * the size, so modulo WIN_MIN), at a fraction of the memory for the
	 * many halves that carry a few packets. */
	while (s->used && (h->win_size[w] < WIN_MIN || (h->win_size[w] < WIN_SIZE &&
	       ABS(qpt_psn_diff(psn, s->psn)) < (int32_t)WIN_SIZE))) {
		win_grow(h, w);
		s = &h->win[w][psn & (h->win_size[w] - 1)];
	}
	memset(s, 0, sizeof(*s));
	s->psn = psn;
	s->used = true;
	return s;
}

void fl_episode_close(struct half *h, uint64_t frame, int64_t ns)
{
	struct qpt_dir *d = fl_dir_of(h);

	if (!h->in_episode)
		return;
	h->in_episode = false;
	fl_rec(h)->episode_reopen = true;
	fl_rec(h)->cur.end_frame = frame;
	/* never before its start (a nested episode's NAK may have come
	 * before the first resend of the one it ends) */
	fl_rec(h)->cur.end_ns = MAX(ns, fl_rec(h)->cur.start_ns);
	if (d)
		fl_episode_keep(d, &fl_rec(h)->cur);
}

/* The most PSNs a READ of unknown span can take: its length over the
 * smallest packet size the MTU can be (256), or over the size the READ
 * requests' own spacing shows when it is known. */
static uint32_t read_span_max(const struct half *h, const struct read_req *r)
{
	uint32_t per = h->x->read_mtu_guess ? h->x->read_mtu_guess : 256;

	return MAX(1u, (r->len + per - 1) / per);
}

struct read_req *fl_read_find(struct half *h, uint32_t psn)
{
	for (unsigned i = 0; i < h->nreads; i++) {
		struct read_req *r = &h->x->reads[i];
		uint32_t span = r->span ? r->span : read_span_max(h, r);
		int32_t d = qpt_psn_diff(psn, r->psn);

		if (d >= 0 && (uint32_t)d < span)
			return r;
	}
	return NULL;
}

/* The last PSN a request takes: a READ's responses span its length. */
static uint32_t request_end(const struct half *h, const struct qpt_pkt *p)
{
	uint32_t mtu = h->conv ? h->conv->mtu : 0, span = 1;

	if (qpt_opcodes[p->bth.opcode].flags & QPT_O_READ && mtu && p->reth.dmalen)
		span = (p->reth.dmalen + mtu - 1) / mtu;
	return qpt_psn_add(p->bth.psn, (int32_t)span - 1);
}

static void read_add(struct half *h, const struct qpt_pkt *p, uint32_t mtu,
		     uint64_t frame, int64_t ns)
{
	uint32_t psn = p->bth.psn, len = p->reth.dmalen;
	struct read_req *r;

	if (!fl_rare(h)->reads)
		h->x->reads = g_new0(struct read_req, MAX_READS);
	if (h->nreads == MAX_READS) {
		memmove(h->x->reads, h->x->reads + 1, sizeof(h->x->reads[0]) * (MAX_READS - 1));
		h->nreads--;
	}
	r = &h->x->reads[h->nreads++];
	memset(r, 0, sizeof(*r));
	r->psn = psn;
	r->len = len;
	r->va = p->reth.va;
	r->rkey = p->reth.rkey;
	r->frame = frame;
	r->ns = ns;
	if (mtu)
		r->span = len ? (len + mtu - 1) / mtu : 1;
}

void fl_set_transport_slow(struct half *h, uint8_t opcode)
{
	if (h->service == 0xff && (opcode & 0xe0) != QPT_SVC_CNP)
		h->service = opcode & 0xe0;
	if (h->conv && !h->conv->transport[0] && h->service != 0xff)
		g_strlcpy(h->conv->transport, qpt_service_name(h->service),
			  sizeof(h->conv->transport));
}

/* Adds a request packet seen for the first time to message m; a message
 * is counted once, when its LAST (or ONLY) packet is first seen. */
static struct gap *gap_of(struct half *h, uint32_t psn);

/* A NAK asking the requester half t for a PSN before the first request the
 * capture saw: the capture began among requests lost before its point.
 * They are a gap, so that their resends fill it and count once. */
void fl_gap_before_start(struct half *t, uint32_t psn, uint64_t frame, int64_t ns,
			 struct qpt_verdict *v)
{
	struct qpt_dir *td = fl_dir_of(t);
	int32_t before = td && td->psn_seen ? qpt_psn_diff(td->first_psn, psn) : 0;
	struct gap *g;

	if (before <= 0 || before > 64 || gap_of(t, psn) || fl_slot_of(t, WIN_REQ, psn, false))
		return;
	fl_loss(t);
	if (t->ngaps == MAX_GAPS) {
		memmove(t->x->l->gaps, t->x->l->gaps + 1, sizeof(t->x->l->gaps[0]) * (MAX_GAPS - 1));
		t->ngaps--;
	}
	g = &t->x->l->gaps[t->ngaps++];
	memset(g, 0, sizeof(*g));
	g->first = psn;
	g->count = (uint32_t)before;
	g->ns = ns;
	fl_dr(td)->psn_gaps++;
	fl_dr(td)->missing_psns += (uint32_t)before;
	td->first_psn = psn;
	fl_emit(v, t, &(struct qpt_event){ .frame = frame, .time_ns = ns, .kind = QPT_VB_PSN_GAP,
			.psn = psn, .count = (uint32_t)before,
			.detail = "PSNs before the first request captured, asked for by a NAK: "
				  "lost before the capture point" });
}

/* The gap this never-seen PSN fills, or NULL. */
static struct gap *gap_of(struct half *h, uint32_t psn)
{
	for (unsigned i = 0; i < h->ngaps; i++) {
		int32_t off = qpt_psn_diff(psn, h->x->l->gaps[i].first);

		if (off >= 0 && (uint32_t)off < h->x->l->gaps[i].count)
			return &h->x->l->gaps[i];
	}
	return NULL;
}

/* Forget what a half knew of its sequences (the QPN now serves a new
 * connection); an open episode is closed first, into the old conversation. */
void fl_half_restart(struct half *h)
{
	struct half_key key = h->key;
	uint8_t family = h->family, service = h->service;

	fl_episode_close(h, 0, h->last_ns);
	fl_half_free_parts(h);
	memset(h, 0, sizeof(*h));
	h->key = key;
	h->family = family;
	h->service = service;
	/* in use (a thawed half must not look idle to the sweep before the
	 * next: its forwarder is in the table until then) */
	h->touched = true;
}

/* A request PSN far from any window after a silence: the requester's
 * sequence (and the responses to it) start again at psn. */
static void seq_restart(struct half *h, struct half *t, uint32_t psn)
{
	fl_episode_close(h, 0, h->last_ns);
	if (h->x && h->x->rc)
		h->x->rc->episode_reopen = false;
	g_free(h->win[WIN_REQ]);
	h->win[WIN_REQ] = NULL;
	h->win_size[WIN_REQ] = 0;
	h->expected = psn;
	h->nreads = h->ngaps = 0;
	h->rnr_doubt = false;
	h->msg.open = false;
	h->any_acked = true; /* all before psn is the old connection's */
	h->acked = qpt_psn_add(psn, -1);
	h->ans_valid = h->resend_valid = h->went_back = false;
	h->nak_pending = h->rnr_pending = h->rnr_resend = false;
	if (t) {
		g_free(t->win[WIN_RESP]);
		t->win[WIN_RESP] = NULL;
		t->win_size[WIN_RESP] = 0;
		t->resp_started = t->ack_valid = false;
	}
}

/* A gap filler that had no resend trigger, judged with the request p that
 * follows it (NULL: nothing followed): when p resends a PSN after the
 * filler that was sent before it, the filler began a go-back-N (its NAK
 * was not captured): a retransmission of a sending not captured and the
 * episode's first resent packet.  Else it was out of order.  The events
 * are the filler's frame's, carried by v (see qpt_verdict.h). */
QPT_HOT void fl_fill_resolve(struct qpt_flow *fl, struct half *h, const struct qpt_pkt *p,
			     struct qpt_verdict *v)
{
	struct qpt_dir *d = fl_dir_of(h);
	struct slot *s, *fs;

	(void)fl;
	if (!h->fill_pending)
		return;
	h->fill_pending = false;
	s = p ? fl_slot_of(h, WIN_REQ, p->bth.psn, false) : NULL;
	if (!d || !p || qpt_psn_diff(p->bth.psn, fl_rec(h)->fill_psn) <= 0 ||
	    qpt_psn_diff(p->bth.psn, h->expected) >= 0 || !s || s->frame > fl_rec(h)->fill_frame) {
		fl_emit(v, h, &(struct qpt_event){ .frame = fl_rec(h)->fill_frame,
				.time_ns = fl_rec(h)->fill_ns, .kind = QPT_VB_OUT_OF_ORDER,
				.psn = fl_rec(h)->fill_psn,
				.detail = "fills a PSN gap without a resend trigger" });
		return;
	}
	fl_dr(d)->out_of_order--;
	fl_dr(d)->retransmitted_packets++;
	fs = fl_slot_of(h, WIN_REQ, fl_rec(h)->fill_psn, false);
	if (fs)
		fs->resent = true;
	h->rnr_resend = false;
	h->rnr_doubt = false;
	h->in_episode = true;
	memset(&fl_rec(h)->cur, 0, sizeof(struct qpt_episode));
	fl_rec(h)->cur.first_resent_frame = fl_rec(h)->fill_frame;
	fl_rec(h)->cur.from_psn = fl_rec(h)->fill_psn;
	fl_rec(h)->cur.trigger = QPT_TRIGGER_RESEND;
	fl_rec(h)->cur.trigger_frame = fl_rec(h)->fill_frame;
	fl_rec(h)->cur.start_ns = fl_rec(h)->fill_ns;
	fl_rec(h)->cur.resent_packets = 1;
	fl_rec(h)->episode_first_ns = fl_rec(h)->fill_ns;
	fl_rec(h)->episode_gap_max = 0;
	fl_rec(h)->episode_top = qpt_psn_add(h->expected, -1);
	fl_rec(h)->episode_resent_top = false;
	fl_rec(h)->episode_next = qpt_psn_add(fl_rec(h)->fill_psn, 1);
	fl_rec(h)->episode_reopen = false;
	fl_dr(d)->gbn_episodes++;
	fl_emit(v, h, &(struct qpt_event){ .frame = fl_rec(h)->fill_frame,
			.time_ns = fl_rec(h)->fill_ns, .kind = QPT_VB_GBN_START,
			.psn = fl_rec(h)->fill_psn, .original_frame = fl_rec(h)->fill_frame,
			.count = (uint32_t)d->r->gbn_episodes,
			.detail = qpt_name_of(qpt_trigger_descr, QPT_TRIGGER_RESEND, "?") });
	fl_emit(v, h, &(struct qpt_event){ .frame = fl_rec(h)->fill_frame,
			.time_ns = fl_rec(h)->fill_ns, .kind = QPT_VB_RETRANSMISSION,
			.psn = fl_rec(h)->fill_psn,
			.detail = "PSN sent before (original not captured): the first resend of "
				  "a go-back-N" });
}

/* The READ that this READ request re-issues from inside its range, known by
 * its RETH (same R_Key, a later start, the same end), or NULL. */
static struct read_req *read_reissue_of(struct half *h, const struct qpt_pkt *p)
{
	for (unsigned i = h->nreads; i-- > 0;) {
		struct read_req *r = &h->x->reads[i];
		uint32_t span = r->span ? r->span : read_span_max(h, r);
		int32_t k = qpt_psn_diff(p->bth.psn, r->psn);

		if (k > 0 && (uint32_t)k < span && p->reth.rkey == r->rkey &&
		    p->reth.va > r->va && p->reth.va + p->reth.dmalen == r->va + r->len)
			return r;
	}
	return NULL;
}

/* A READ's range once known: the requester's next new PSN follows it. */
static void read_set_span(struct half *h, struct read_req *r, uint32_t span)
{
	uint32_t end = qpt_psn_add(r->psn, (int32_t)span);

	r->span = span;
	if (qpt_psn_diff(end, h->expected) > 0 && qpt_psn_diff(end, h->expected) < (int32_t)span)
		h->expected = end;
}

/* A go-back of h's sender at this frame (its NAK or RNR NAK, a READ
 * re-issue, the first resend of an episode or of an RNR retry, a gap
 * filled, a response stream restarted): a
 * repeat of a packet seen before it is a sending again, not a capture
 * copy (fl_capture_copy). */
void fl_went_back(struct half *h, uint64_t frame, uint32_t psn)
{
	struct half_rec *rc = fl_rec(h);

	h->went_back = true;
	rc->goback_prev_frame = rc->goback_frame;
	rc->goback_prev_psn = rc->goback_psn;
	rc->goback_frame = frame;
	rc->goback_psn = psn;
}

/* Whether resend p, at the go-back's next PSN or one past it, comes after
 * the go-back stopped and later than an ACK could have reached the
 * requester: after two resends or more, a pause more than eight times the
 * go-back's pace (the mean time between its resends; after one resend,
 * the longest gap between two resends of any earlier go-back of the
 * half, and none without one: a software sender's next resend may come
 * 7-19 us later, random rxe 7514, 9211; a NIC's, hw 4067, at once) and
 * more than 4 us (a NIC resends back to back, 0.1-1 us apart; a software
 * sender's pace is 2-20 us and irregular), and more than twice the half's
 * shortest ACK time (request to ACK at the capture point) after the last
 * ACK.  Sooner, the requester may have sent it before the ACK reached it
 * (a capture at the responder sees the ACK first; random rxe 739, 2555). */
static bool retry_paused(struct half *h, int64_t silence)
{
	const struct half_rec *rc = fl_rec(h);
	uint32_t k = rc->cur.resent_packets;
	int64_t pace = fl_goback_pace(h, silence);

	return (k >= 2 || (k == 1 && pace)) && silence > MAX(8 * pace, 4000) &&
	       h->last_ns - rc->ack_ns > fl_ack_time2(h);
}

/* Whether resend p, after an ACK during the go-back under way that
 * acknowledged p's PSN, jumps past what it had still to send to a READ or
 * atomic request (or to the PSN after one, its resend lost before the
 * capture point): the requester, told by an ACK beyond an unanswered READ
 * or atomic that its answer was lost (an implied NAK: rxe_comp.c
 * check_psn() retries then), goes back to it: a go-back of its own.  What it
 * still had on the wire when the ACK came goes on where the go-back was;
 * a jump over one PSN only is likelier one resend lost before the capture
 * point.  At the go-back's next PSN (or one past it), after the go-back
 * stopped (retry_paused) and with the ACK beyond that READ or atomic
 * (an ACK at an atomic's own PSN, or at a READ's first, implies no NAK), it
 * is the retry too: a requester that got that ACK retries before it sends
 * the PSN again (random hw 3901, 3960, 1662, 449; rxe 1335, 5391). */
static bool retry_after_ack(struct half *h, const struct qpt_pkt *p, int64_t silence)
{
	const struct half_rec *rc = fl_rec(h);
	uint32_t psn = p->bth.psn, before = qpt_psn_add(psn, -1), to = psn;
	int32_t jump = qpt_psn_diff(psn, rc->episode_next);
	bool near = jump < 2;
	struct slot *s;
	struct read_req *r;

	if (jump < 0 || rc->ack_frame <= rc->cur.first_resent_frame ||
	    !h->any_acked || qpt_psn_diff(h->acked, psn) < 0 ||
	    (near && !retry_paused(h, silence)))
		return false;
	if (!(qpt_opcodes[p->bth.opcode].flags & (QPT_O_READ | QPT_O_ATOMIC))) {
		s = fl_slot_of(h, WIN_REQ, before, false);
		r = s && s->asks ? NULL : h->nreads ? fl_read_find(h, before) : NULL;
		if (!(s && s->asks) && !r)
			return false;
		to = r ? r->psn : before;
	}
	if (near && qpt_psn_diff(h->acked, to) <= 0)
		return false;
	/* the requester retries the oldest request not answered: a READ or
	 * atomic below it that the go-back resent (captured before or after
	 * the ACK: a capture at the responder sees the requester's sendings
	 * late) and whose answer had not come by the ACK is that one
	 * (random rxe 7695, 9112) */
	for (unsigned i = 0; i < rc->nasks; i++)
		if (rc->asks[i].frame >= rc->cur.first_resent_frame &&
		    qpt_psn_diff(rc->asks[i].psn, to) < 0 &&
		    (!rc->asks[i].ans_frame || rc->asks[i].ans_frame > rc->ack_frame))
			return false;
	return true;
}

/* A READ or atomic resent in the episode under way: remembered until its
 * answer (retry_after_ack). */
static void ask_resent(struct half *h, const struct qpt_pkt *p, uint64_t frame)
{
	struct half_rec *rc = fl_rec(h);

	if (!(qpt_opcodes[p->bth.opcode].flags & (QPT_O_READ | QPT_O_ATOMIC)))
		return;
	if (rc->nasks && rc->asks[rc->nasks - 1].frame < rc->cur.first_resent_frame)
		rc->nasks = 0; /* another episode's */
	if (rc->nasks < MAX_ASKS) {
		uint32_t end = request_end(h, p);
		bool low = rc->ans_low_frame > h->ans_frame;
		uint64_t last = low ? rc->ans_low_frame : h->ans_frame;

		/* the go-back's first PSN, its own answer the last one before
		 * it: that answer reached the requester after it went back
		 * (random hw 8742; or it was lost after the capture point);
		 * or the last sighting of an answer, a capture copy, its own:
		 * a capture of both hosts merged sees it come to the requester
		 * last (random hw 9884) */
		bool own = h->ans_valid && (low ? rc->ans_low_psn : h->ans_hi) == end;

		if (!own && rc->ans_seen_frame > last && rc->ans_seen_psn == end) {
			own = true;
			last = rc->ans_seen_frame;
		}
		rc->asks[rc->nasks++] = (__typeof__(rc->asks[0])){
			.psn = p->bth.psn, .end = end, .frame = frame,
			.ans_frame = frame == rc->cur.first_resent_frame && own ? last : 0 };
	}
}

/* Whether a resend p at psn goes on with the go-back-N under way, or with
 * the one an answer just closed: it does unless it goes back below what
 * the episode already resent, comes after a silence, or re-issues a READ
 * (each a go-back of its own: a nested episode). */
static bool episode_goes_on(const struct qpt_flow *fl, struct half *h, const struct qpt_pkt *p,
			    int64_t ns, int64_t silence, const struct read_req *rr)
{
	const struct half_rec *rc = fl_rec(h);
	uint32_t psn = p->bth.psn;

	/* a READ re-issued from inside its range is a go-back of its own;
	 * the READ again at its own PSN is one only outside a go-back (the
	 * go-back under way, or the one an answer just closed, resends it
	 * anyway) */
	if (rr && (rr->psn != psn || !(h->in_episode || rc->episode_reopen)))
		return false;
	/* After a silence, a resend of the oldest PSN not acknowledged (or of
	 * one acknowledged: its ACK lost after the capture point) is the
	 * retransmit timer's go-back; a pause inside a go-back that then
	 * goes on past what was acknowledged is none (a software sender or
	 * a loaded capture host stalls). */
	/* a jump to the PSN of a NAK on its way (one a READ re-issue, or a
	 * go-back from below its PSN, left pending): that NAK's go-back,
	 * nested in this one; after a go-back from below, the jump must skip
	 * more than one PSN (one resend lost before the capture point is
	 * the likelier reading of a single PSN skipped) */
	if ((h->in_episode || rc->episode_reopen) && retry_after_ack(h, p, silence))
		return false;
	if (h->in_episode && h->nak_pending && psn == rc->nak_psn && psn != rc->episode_next &&
	    !(rc->nak_below && qpt_psn_diff(psn, rc->episode_next) < 2 &&
	      !fl_goback_paused(h, silence)))
		return false;
	if (psn == rc->episode_next && fl_nak_after_pause(h, psn, ns, silence))
		return false;
	if (h->in_episode && silence >= fl->o.timeout_gap_ns && psn == rc->episode_next &&
	    fl_timer_again(h, psn, silence))
		return false;
	if ((h->in_episode || rc->episode_reopen) && fl_goback_stopped_after_one(h, psn, silence))
		return false;
	if (h->in_episode)
		return qpt_psn_diff(psn, rc->episode_next) >= 0 &&
		       !(silence >= fl->o.timeout_gap_ns && h->any_acked &&
			 qpt_psn_diff(psn, qpt_psn_add(h->acked, 1)) <= 0 &&
			 qpt_psn_diff(psn, h->acked) > -65536);
	if (silence >= fl->o.timeout_gap_ns)
		return false;
	return rc->episode_reopen && qpt_psn_diff(psn, rc->episode_next) >= 0 &&
	       !(h->nak_pending && !rc->nak_covered);
}

/* The episode an answer closed goes on: the last one recorded again. */
static void episode_reopen(struct half *h)
{
	struct qpt_dir *d = fl_dir_of(h);
	GArray *eps = d ? d->r->episodes : NULL;

	h->in_episode = true;
	fl_rec(h)->episode_reopen = false;
	if (eps && eps->len &&
	    g_array_index(eps, struct qpt_episode, eps->len - 1).first_resent_frame ==
		    fl_rec(h)->cur.first_resent_frame)
		g_array_set_size(eps, eps->len - 1);
}

/* A go-back-N episode starts with its first resent packet p (an episode
 * under way ends where this one's trigger is: nested episodes are
 * episodes of their own).  A NAK's requester resends from the NAK's PSN
 * (rxe_comp.c: it goes back to it): a resend from below it means the NAK
 * was lost after the capture point.  One from above it, before a timeout
 * could have passed, is the NAK's go-back-N whose first resends were lost
 * again before the capture point (a capture at the requester behind a
 * lossy egress: the PSN gap that the NAK answered showed that loss once
 * already). */
static void episode_open(struct qpt_flow *fl, struct half *h, const struct qpt_pkt *p,
			 uint64_t frame, int64_t ns, int64_t silence, uint64_t prev_frame,
			 struct qpt_verdict *v)
{
	struct qpt_dir *d = fl_dir_of(h);
	struct half_rec *rc = fl_rec(h);
	uint32_t psn = p->bth.psn;
	int32_t above = h->nak_pending ? qpt_psn_diff(psn, rc->nak_psn) : -1;
	/* (a READ re-issued inside its range is its own go-back, whatever
	 * NAK is on its way: that NAK's go-back may come after it; a resend
	 * at the PSN of a NAK that a go-back under way resent already, after
	 * a silence, is the timer's) */
	bool nak = !(v->flags & QPT_V(READ_RETRY)) &&
		   ((above == 0 && !(rc->nak_covered && silence >= fl->o.timeout_gap_ns)) ||
		    (above > 0 && !rc->nak_covered && silence < fl->o.timeout_gap_ns &&
		     qpt_psn_diff(h->expected, psn) > 0));
	struct qpt_episode e = { .first_resent_frame = frame, .from_psn = psn };

	/* the sender went back here: the repeats after this frame of what it
	 * sent before are sendings until it passes its highest PSN (a resend
	 * that goes on with the episode is no new go-back: a copy of one
	 * stays a copy) */
	fl_went_back(h, frame, psn);

	if (nak) {
		e.trigger = QPT_TRIGGER_NAK;
		e.trigger_frame = rc->nak_frame;
		e.start_ns = rc->nak_ns;
		v->nak_frame = rc->nak_frame;
	} else if (silence >= fl->o.timeout_gap_ns) {
		/* from the last packet before the silence */
		e.trigger = QPT_TRIGGER_TIMEOUT;
		e.timeout = true;
		e.trigger_frame = prev_frame;
		e.start_ns = ns - silence;
		fl_dr(d)->timeouts++;
	} else {
		e.trigger = v->flags & QPT_V(READ_RETRY) ? QPT_TRIGGER_READ_RETRY :
							    QPT_TRIGGER_RESEND;
		e.trigger_frame = frame;
		e.start_ns = ns;
	}
	if (h->in_episode) /* ends where the go-back inside it began */
		fl_episode_close(h, e.trigger_frame, e.start_ns);
	h->rnr_resend = false;
	h->rnr_doubt = false;
	h->in_episode = true;
	rc->episode_reopen = false;
	rc->cur = e;
	rc->episode_top = qpt_psn_add(h->expected, -1);
	rc->episode_next = psn;
	/* Everything sent before was answered already (a READ's responses
	 * went missing before later ones came): recovered once what this
	 * episode resends is answered (ack_requests). */
	rc->episode_resent_top = h->any_acked && qpt_psn_diff(h->acked, rc->episode_top) >= 0 &&
				 qpt_psn_diff(h->acked, rc->episode_top) < 65536;
	if (rc->episode_resent_top)
		rc->episode_top = request_end(h, p);
	/* a READ re-issued, or a resend from below the NAK's PSN with no
	 * silence (a go-back of another cause, a READ re-issue whose READ the
	 * capture missed), while a NAK was on its way: the NAK's own go-back
	 * may still come (the NAK stays pending) */
	rc->nak_below = (e.trigger == QPT_TRIGGER_RESEND || e.trigger == QPT_TRIGGER_READ_RETRY) &&
			above < 0 && h->nak_pending;
	if (e.trigger != QPT_TRIGGER_READ_RETRY && !rc->nak_below)
		h->nak_pending = false;
	fl_dr(d)->gbn_episodes++;
	v->trigger = e.trigger;
	fl_emit(v, h, &(struct qpt_event){ .frame = frame, .time_ns = ns, .kind = QPT_VB_GBN_START,
			.psn = psn, .original_frame = e.trigger_frame,
			.count = (uint32_t)d->r->gbn_episodes, .duration_ns = ns - e.start_ns,
			.detail = qpt_name_of(qpt_trigger_descr, e.trigger, "?") });
	if (e.trigger == QPT_TRIGGER_TIMEOUT)
		fl_emit(v, h, &(struct qpt_event){ .frame = frame, .time_ns = ns,
				.kind = QPT_VB_TIMEOUT_RESEND, .psn = psn,
				.original_frame = prev_frame, .duration_ns = silence,
				.detail = "resend after a silence (local ACK timeout)" });
}

QPT_HOT void fl_request(struct qpt_flow *fl, struct half *h, const struct qpt_pkt *p,
			uint64_t frame, int64_t ns, struct qpt_verdict *v)
{
	const struct qpt_opcode_info *oi = &qpt_opcodes[p->bth.opcode];
	struct qpt_dir *d = fl_dir_of(h);
	uint32_t psn = p->bth.psn;
	uint32_t fp = p->icrc ^ (p->payload_len * 2654435761u);
	int64_t silence = h->last_valid ? ns - h->last_ns : 0;
	uint64_t prev_frame = h->last_valid ? h->last_frame : 0;
	bool ud = (p->bth.opcode & 0xe0) == QPT_SVC_UD;
	struct slot *s;
	struct gap *fill;
	struct read_req *rr = NULL;
	int32_t cmp;

	d->req_packets++;
	if (fl_capture_copy(fl, h, p, frame, ns, v, true))
		return;
	if (ud) { /* a UD QP's PSNs span all its destinations: no sequence */
		fl_message_add(h, &h->msg, d, p, frame, v);
		return;
	}
	fl_fill_resolve(fl, h, p, v); /* the filler before this one, if any */
	if (h->x && h->x->l && (h->x->l->pend[0].used || h->x->l->pend[1].used ||
				h->x->l->pend[2].used || h->x->l->pend[3].used))
		fl_pend_resolve(h, v); /* what the packets before this one showed */
	h->last_valid = true;
	h->last_frame = frame;
	h->last_ns = ns;

	if (QPT_UNLIKELY(h->req_started && silence >= NEW_SEQ_IDLE_NS &&
			 ABS(qpt_psn_diff(psn, h->expected)) > NEW_SEQ_DISTANCE)) {
		seq_restart(h, fl_twin_of(fl, h), psn);
		fl_dr(d)->new_sequences++;
		fl_emit(v, h, &(struct qpt_event){ .frame = frame, .time_ns = ns,
				.kind = QPT_VB_NEW_SEQUENCE, .psn = psn,
				.original_frame = prev_frame, .duration_ns = silence,
				.detail = "PSN far outside the window after a silence: a new "
					  "sequence" });
	}
	if (QPT_UNLIKELY(!h->req_started)) {
		h->req_started = true;
		h->expected = psn;
		d->psn_seen = true;
		d->first_psn = psn;
		d->last_psn = psn;
	}
	/* The last READ was sent with the MTU unknown: its range once the MTU
	 * is known (a response taught it), before the next PSN is judged. */
	if (QPT_UNLIKELY(h->nreads && !h->x->reads[h->nreads - 1].span && h->conv && h->conv->mtu)) {
		struct read_req *r = &h->x->reads[h->nreads - 1];

		read_set_span(h, r, r->len ? (r->len + h->conv->mtu - 1) / h->conv->mtu : 1);
	}
	cmp = qpt_psn_diff(psn, h->expected);
	/* A READ re-issued from inside an earlier one whose range is not
	 * known yet looks new: its RETH tells (and the PSNs it skips, the
	 * packet size: the MTU). */
	if (cmp >= 0 && oi->flags & QPT_O_READ && (rr = read_reissue_of(h, p))) {
		uint32_t k = (uint32_t)qpt_psn_diff(psn, rr->psn);
		uint64_t per = (p->reth.va - rr->va) / k;

		if (!rr->span && per * k == p->reth.va - rr->va && per >= 256 && per <= 4096 &&
		    !(per & (per - 1)))
			read_set_span(h, rr, (uint32_t)((rr->len + per - 1) / per));
		else if (!rr->span)
			read_set_span(h, rr, k + 1);
		cmp = -1;
	}
	if (QPT_LIKELY(cmp >= 0)) {
		/* New PSN.  After a READ whose span is unknown, any PSN within
		 * its possible span is not a gap. */
		struct read_req *r = h->nreads ? &h->x->reads[h->nreads - 1] : NULL;
		uint32_t skipped = (uint32_t)cmp;

		if (QPT_UNLIKELY(r && !r->span && qpt_psn_diff(psn, r->psn) > 0 &&
				 (uint32_t)qpt_psn_diff(psn, r->psn) <= read_span_max(h, r) &&
				 qpt_psn_add(r->psn, 1) == h->expected)) {
			uint32_t span = (uint32_t)qpt_psn_diff(psn, r->psn);
			uint32_t per = 256;

			r->span = span;
			skipped = 0;
			/* the packet size this spacing allows: the smallest
			 * power of two that carries the READ in span packets */
			while (per < 4096 && (uint64_t)per * span < r->len)
				per *= 2;
			if (r->len > (uint64_t)(per / 2) * span && per > h->x->read_mtu_guess)
				h->x->read_mtu_guess = per;
		}
		if (QPT_UNLIKELY(skipped)) {
			struct gap *g;

			fl_loss(h);
			v->flags |= QPT_V(PSN_GAP);
			v->gap_psns = skipped;
			v->gap_first_psn = h->expected;
			fl_dr(d)->psn_gaps++;
			fl_dr(d)->missing_psns += skipped;
			if (h->ngaps == MAX_GAPS) {
				memmove(h->x->l->gaps, h->x->l->gaps + 1,
					sizeof(h->x->l->gaps[0]) * (MAX_GAPS - 1));
				h->ngaps--;
			}
			g = &h->x->l->gaps[h->ngaps++];
			g->first = h->expected;
			g->count = skipped;
			g->ns = ns;
			/* the interrupted message completes when the gap is filled */
			g->msg = h->msg;
			h->msg.open = false;
			fl_emit(v, h, &(struct qpt_event){ .frame = frame, .time_ns = ns,
					.kind = QPT_VB_PSN_GAP, .psn = psn, .count = skipped,
					.detail = "PSNs skipped: lost before the capture point or "
						  "from the capture" });
		}
		/* a NAK on its way whose PSN this new one reaches, from a
		 * go-back not yet past that PSN, or that PSN's first sight (not
		 * a jump over it: sent before the NAK came, random rxe 5463): the
		 * requester has passed it (its resends lost before the
		 * capture point, or first sent now: the NAK's own go-back) */
		if (QPT_UNLIKELY(h->nak_pending) &&
		    (h->in_episode ? qpt_psn_diff(fl_rec(h)->episode_next, fl_rec(h)->nak_psn) <= 0 &&
					     qpt_psn_diff(request_end(h, p), fl_rec(h)->nak_psn) >= 0 :
				     psn == fl_rec(h)->nak_psn))
			fl_rec(h)->nak_covered = true;
		if (QPT_UNLIKELY(h->in_episode) && qpt_psn_diff(psn, fl_rec(h)->episode_top) > 0)
			fl_episode_close(h, frame, ns);
		if (QPT_UNLIKELY(h->rnr_doubt) && !h->x->rc->doubt.end_frame &&
		    qpt_psn_diff(psn, h->x->rc->doubt.top) > 0) {
			h->x->rc->doubt.end_frame = frame;
			h->x->rc->doubt.end_ns = ns;
		}
		if (h->x && h->x->rc)
			h->x->rc->episode_reopen = false; /* past it: a new sending */
		h->rnr_resend = false;
		s = fl_slot_of(h, WIN_REQ, psn, true);
		s->frame = frame;
		s->ns = ns;
		s->fp = fp;
		s->ackreq = p->bth.ackreq;
		s->bound = fl_slot_bound(oi);
		s->asks = !!(oi->flags & (QPT_O_READ | QPT_O_ATOMIC));
		h->expected = qpt_psn_add(psn, 1);
		if (oi->flags & QPT_O_READ) {
			uint32_t mtu = h->conv ? h->conv->mtu : 0;

			read_add(h, p, mtu, frame, ns);
			if (h->x->reads[h->nreads - 1].span)
				h->expected = qpt_psn_add(psn, (int32_t)h->x->reads[h->nreads - 1].span);
		}
		d->psn_span = (uint32_t)qpt_psn_diff(h->expected, d->first_psn);
		d->last_psn = qpt_psn_add(h->expected, -1);
		fl_message_add(h, &h->msg, d, p, frame, v);
		return;
	}

	/* An old PSN: retransmission, READ retry, or the late fill of a gap. */
	s = fl_slot_of(h, WIN_REQ, psn, false);
	/* a READ retry: re-issued from inside an earlier READ's range, or the
	 * READ itself again when later responses of it came but not its first
	 * (a go-back-N resend of a READ is not a retry of it) */
	if (!rr && oi->flags & QPT_O_READ) {
		rr = fl_read_find(h, psn);
		if (rr && rr->psn == psn && !(rr->resp_seen && !rr->answered))
			rr = NULL;
	}
	fill = s || rr ? NULL : gap_of(h, psn);
	h->resend_valid = true;
	fl_rec(h)->resend_psn = psn;
	fl_rec(h)->resend_frame = frame;
	if (p->bth.ackreq) {
		fl_rec(h)->resend_ackreq_psn = psn;
		fl_rec(h)->resend_ackreq_frame = frame;
	}
	if (!fl_rec(h)->resend_min_frame || qpt_psn_diff(psn, fl_rec(h)->resend_min_psn) < 0) {
		fl_rec(h)->resend_min_psn = psn;
		fl_rec(h)->resend_min_frame = frame;
	}
	if (fill) {
		/* First sight of a PSN that a gap skipped: its bytes count once. */
		struct slot *n = fl_slot_of(h, WIN_REQ, psn, true);

		n->frame = frame;
		n->ns = ns;
		n->fp = fp;
		n->bound = fl_slot_bound(oi);
		n->asks = !!(oi->flags & (QPT_O_READ | QPT_O_ATOMIC));
		fl_message_add(h, &fill->msg, d, p, frame, v);
		/* a gap filled: the first resend of a go-back-N whose NAK the
		 * capture missed (or a packet reordered), see episode_open;
		 * inside a go-back under way, a part of it (its mark stays) */
		if (!h->in_episode && !h->rnr_resend)
			fl_went_back(h, frame, psn);
		/* a READ seen first as a filler: its range is outstanding */
		if (oi->flags & QPT_O_READ)
			read_add(h, p, h->conv ? h->conv->mtu : 0, frame, ns);
		/* (the next PSN of an RNR retry under way, or of a go-back an
		 * answer just closed, goes on with it: no new trigger needed) */
		if (!h->nak_pending && !h->in_episode && !h->rnr_pending &&
		    silence < fl->o.timeout_gap_ns &&
		    !(h->rnr_resend && qpt_psn_diff(psn, fl_rec(h)->rnr_next) >= 0) &&
		    !(fl_rec(h)->episode_reopen &&
		      qpt_psn_diff(psn, fl_rec(h)->episode_next) >= 0)) {
			/* No trigger seen: out of order, unless the next request
			 * resends what followed the gap (a go-back-N whose NAK
			 * the capture missed, begun by this packet).  Counted
			 * now, decided and reported then (fl_fill_resolve). */
			fl_dr(d)->out_of_order++;
			h->fill_pending = true;
			fl_rec(h)->fill_psn = psn;
			fl_rec(h)->fill_frame = frame;
			fl_rec(h)->fill_ns = ns;
			return;
		}
		n->resent = true;
	}
	v->flags |= QPT_V(RETRANSMISSION);
	fl_dr(d)->retransmitted_packets++;
	if (s) {
		v->original_frame = s->frame;
		s->resent = true;
	}
	if (rr) { /* re-issued from inside the first READ's range */
		if (QPT_UNLIKELY(h->rnr_doubt))
			fl_rnr_doubt_resolve(h, rr, psn, frame, ns, v);
		v->original_frame = rr->frame;
		fl_dr(d)->read_retries++;
		fl_emit(v, h, &(struct qpt_event){ .frame = frame, .time_ns = ns,
				.kind = QPT_VB_READ_RETRY, .psn = psn, .original_frame = rr->frame,
				.detail = "READ re-issued inside its response range" });
	}
	/* a resend long past the RNR timer, after a silence: the RNR NAK
	 * never reached the requester, no retry of it will come */
	if (h->rnr_pending && fl_rnr_nak_missed(fl, h, ns, silence))
		h->rnr_pending = false;
	if (h->rnr_resend && !h->in_episode && silence < fl->o.timeout_gap_ns &&
	    qpt_psn_diff(psn, fl_rec(h)->rnr_next) >= 0) {
		/* the rest resent after an RNR NAK (from above its next PSN
		 * too: resends lost before the point): part of the retry
		 * (after a silence, the retransmit timer's go-back) */
		fl_rec(h)->rnr_next = qpt_psn_add(request_end(h, p), 1);
		if (h->rnr_doubt)
			fl_rec(h)->doubt.resent++;
	} else if (h->rnr_pending && fl_rnr_retry_of(fl, h, psn, ns, silence)) {
		/* an RNR NAK for a resend: the responder took what was before
		 * it, the go-back under way is over where the retry starts
		 * (the retry is no episode) */
		fl_episode_close(h, frame, ns);
		fl_rec(h)->episode_reopen = false;
		h->rnr_pending = false;
		h->rnr_resend = true;
		fl_rec(h)->rnr_next = qpt_psn_add(request_end(h, p), 1);
		fl_went_back(h, frame, psn);
		fl_rnr_doubt_note(h, psn, frame, ns);
		v->flags |= QPT_V(RNR_RETRY);
		v->nak_frame = fl_rec(h)->rnr_frame;
		fl_dr(d)->rnr_retries++;
		fl_emit(v, h, &(struct qpt_event){ .frame = frame, .time_ns = ns,
				.kind = QPT_VB_RNR_RETRY, .psn = psn,
				.original_frame = fl_rec(h)->rnr_frame,
				.code = fl_rec(h)->rnr_timer, .duration_ns = ns - fl_rec(h)->rnr_ns,
				.detail = "retry after RNR NAK" });
	} else if (episode_goes_on(fl, h, p, ns, silence, rr)) {
		if (!h->in_episode)
			episode_reopen(h);
		/* a go-back under way resends the RNR NAK's PSN before its
		 * timer: sent before the RNR NAK reached the requester, or
		 * after it (no retry then); a retry, if one comes, resends
		 * that PSN once the whole timer has passed */
		if (h->rnr_pending && psn == fl_rec(h)->rnr_psn)
			fl_rec(h)->rnr_covered = true;
		/* the go-back, not yet past the PSN of a NAK on its way (a
		 * READ re-issue left it pending), resends it or jumps over it
		 * (its resend lost before the capture point): that NAK's own
		 * go-back, if it comes, starts at its PSN again, not above it */
		if (h->nak_pending &&
		    qpt_psn_diff(fl_rec(h)->episode_next, fl_rec(h)->nak_psn) <= 0 &&
		    qpt_psn_diff(request_end(h, p), fl_rec(h)->nak_psn) >= 0)
			fl_rec(h)->nak_covered = true;
	} else {
		episode_open(fl, h, p, frame, ns, silence, prev_frame, v);
	}
	if (h->in_episode) {
		if (fl_rec(h)->cur.first_resent_frame == frame) {
			fl_rec(h)->episode_first_ns = ns;
			fl_rec(h)->episode_gap_max = 0;
		} else {
			fl_rec(h)->episode_gap_max = MAX(fl_rec(h)->episode_gap_max, silence);
			fl_rec(h)->gap_any = MAX(fl_rec(h)->gap_any, MAX(silence, 1));
		}
		fl_rec(h)->cur.resent_packets++;
		v->episode = (uint32_t)d->r->gbn_episodes;
		ask_resent(h, p, frame);
		if (fl_rec(h)->episode_resent_top &&
		    qpt_psn_diff(request_end(h, p), fl_rec(h)->episode_top) > 0)
			fl_rec(h)->episode_top = request_end(h, p);
		if (qpt_psn_diff(request_end(h, p), fl_rec(h)->episode_next) >= 0)
			fl_rec(h)->episode_next = qpt_psn_add(request_end(h, p), 1);
	}
	fl_emit(v, h, &(struct qpt_event){ .frame = frame, .time_ns = ns,
			.kind = QPT_VB_RETRANSMISSION, .psn = psn,
			.original_frame = v->original_frame,
			.detail = v->flags & QPT_V(READ_RETRY) ?
					  "READ re-issued inside its response range" :
				  s ? "PSN sent before" :
				      "PSN sent before (original not captured)" });
}
