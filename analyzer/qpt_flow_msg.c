/* qpt_flow_msg.c - messages and capture copies of a half (see qpt_flow_int.h)
 *
 * A message is counted once, when its LAST (or ONLY) packet is first seen,
 * or, when the capture missed its FIRST, once the PSN boundaries the
 * resends show give its start.  A capture copy is the same packet seen
 * again by the capture (or by another capture point), not a sending. */
#include <string.h>

#include "qpt_flow_int.h"

QPT_HOT uint8_t fl_slot_bound(const struct qpt_opcode_info *oi)
{
	return (oi->flags & QPT_O_FIRST ? SLOT_FIRST : 0) | (oi->flags & QPT_O_LAST ? SLOT_LAST : 0);
}

static void msg_count(struct qpt_dir *d, uint8_t op, uint32_t len, uint32_t pkts)
{
	struct qpt_opstat *os = fl_dir_op(d, op);

	os->min_size = os->count ? MIN(os->min_size, len) : len;
	os->max_size = MAX(os->max_size, len);
	os->count++;
	os->bytes += len;
	os->packets += pkts;
}

/* The PSN a pending message starts at, when the window shows it: walking
 * down from its first packet seen, every PSN seen, to a FIRST (it starts
 * there) or a LAST (it starts after).  0 and false while a PSN is missing. */
static bool pend_start(struct half *h, const struct pend_msg *pm, uint32_t *start)
{
	for (int32_t k = 1; k <= 64; k++) {
		uint32_t q = qpt_psn_add(pm->first_seen, -k);
		struct slot *s = fl_slot_of(h, WIN_REQ, q, false);

		if (!s)
			return false;
		if (s->bound & SLOT_LAST) {
			*start = qpt_psn_add(q, 1);
			return true;
		}
		if (s->bound & SLOT_FIRST) {
			*start = q;
			return true;
		}
	}
	return false;
}

/* Counts the pending messages whose start is known now. */
void fl_pend_resolve(struct half *h, struct qpt_verdict *v)
{
	struct qpt_dir *d = fl_dir_of(h);
	uint32_t mtu = h->conv ? h->conv->mtu : 0, start;

	for (unsigned i = 0; h->x && h->x->l && d && mtu && i < MAX_PEND_MSGS; i++) {
		struct pend_msg *pm = &h->x->l->pend[i];
		uint32_t n;

		if (!pm->used || !pend_start(h, pm, &start))
			continue;
		n = (uint32_t)qpt_psn_diff(pm->last_psn, start) + 1;
		msg_count(d, pm->op, (n - 1) * mtu + pm->last_len, n);
		if (v && !v->msg_first_frame) {
			v->msg_first_frame = pm->first_frame;
			v->msg_len = (n - 1) * mtu + pm->last_len;
			v->msg_packets = n;
			v->msg_op = pm->op;
		}
		pm->used = false;
	}
}

/* Counts a pending message by the best estimate (the end of the message
 * before it), when it cannot wait: the list is full or the input ended. */
static void pend_count(struct half *h, struct pend_msg *pm)
{
	struct qpt_dir *d = fl_dir_of(h);
	uint32_t mtu = h->conv ? h->conv->mtu : 0, n;

	if (!pm->used || !d)
		return;
	n = (uint32_t)qpt_psn_diff(pm->last_psn, pm->first_seen) + 1;
	if (h->msg_end_valid && qpt_psn_diff(pm->first_seen, h->msg_end_psn) > 0 &&
	    qpt_psn_diff(pm->last_psn, h->msg_end_psn) <= 64)
		n = (uint32_t)qpt_psn_diff(pm->last_psn, h->msg_end_psn);
	msg_count(d, pm->op, (n - 1) * mtu + pm->last_len, n);
	pm->used = false;
}

void fl_pend_flush(struct half *h)
{
	fl_pend_resolve(h, NULL);
	for (unsigned i = 0; h->x && h->x->l && i < MAX_PEND_MSGS; i++)
		pend_count(h, &h->x->l->pend[i]);
}

QPT_HOT void fl_message_add(struct half *h, struct msg *m, struct qpt_dir *d,
			    const struct qpt_pkt *p, uint64_t frame, struct qpt_verdict *v)
{
	const struct qpt_opcode_info *oi = &qpt_opcodes[p->bth.opcode];
	uint32_t mtu = h->conv ? h->conv->mtu : 0, psn = p->bth.psn;
	uint32_t len;

	if (oi->op == QPT_OP_NONE || !(oi->flags & QPT_O_REQ))
		return;
	if (oi->flags & QPT_O_FIRST || !m->open) {
		m->open = true;
		m->from_first = (oi->flags & QPT_O_FIRST) != 0;
		m->first_psn = psn;
		m->first_frame = frame;
		m->len = 0;
		m->pkts = 0;
		m->op = oi->op;
	}
	m->len += p->payload_len;
	m->pkts++;
	if (oi->op != QPT_OP_SEND && oi->op != QPT_OP_WRITE)
		m->op = oi->op; /* the LAST with Immediate / Invalidate names it */
	if (!(oi->flags & QPT_O_LAST))
		return;
	m->open = false;
	len = m->len;
	/* Its FIRST (and maybe more) lost before the capture point: counted
	 * once its start is known (pend_resolve), every packet but the last
	 * of a message carrying one MTU (IBA 9.7.6.1.3). */
	if (!m->from_first && mtu && oi->op != QPT_OP_READ && oi->op != QPT_OP_FLUSH) {
		struct half_loss *l = fl_loss(h);
		struct pend_msg *pm = NULL;

		for (unsigned i = 0; i < MAX_PEND_MSGS && !pm; i++)
			if (!l->pend[i].used)
				pm = &l->pend[i];
		if (!pm) { /* full: the oldest counted by estimate */
			pm = &l->pend[0];
			pend_count(h, pm);
		}
		*pm = (struct pend_msg){ .used = true, .op = m->op, .first_seen = m->first_psn,
					 .last_psn = psn, .last_len = p->payload_len,
					 .first_frame = m->first_frame };
		if (!h->msg_end_valid || qpt_psn_diff(psn, h->msg_end_psn) > 0) {
			h->msg_end_valid = true;
			h->msg_end_psn = psn;
		}
		fl_pend_resolve(h, v);
		return;
	}
	if (!h->msg_end_valid || qpt_psn_diff(psn, h->msg_end_psn) > 0) {
		h->msg_end_valid = true;
		h->msg_end_psn = psn;
	}
	if (oi->op == QPT_OP_READ || oi->op == QPT_OP_FLUSH)
		len = p->reth.dmalen;
	msg_count(d, m->op, len, m->pkts);
	v->msg_first_frame = m->first_frame;
	v->msg_len = len;
	v->msg_packets = m->pkts;
	v->msg_op = m->op;
}

/* What tells two copies of one packet apart from two sendings of it: the
 * ICRC covers every byte that a resend could change (IP ID, MSN, ...). */
static uint32_t fingerprint(const struct qpt_pkt *p)
{
	return p->icrc ^ (p->payload_len * 2654435761u) ^ ((uint32_t)p->bth.opcode << 24) ^
	       (p->aeth.msn * 40503u);
}

/* A capture copy: the same half, PSN and bytes as a packet of the last
 * SEEN_RING it carried, at most dup_window_ns later (never earlier: a
 * clock that stepped back proves nothing), and nothing in between that
 * would make the sender send it again: for a request, no answer from the
 * twin reaching its PSN (a READ re-issued after a response is a retry)
 * and no NAK or RNR NAK (it asks for everything from its PSN again);
 * for a response, no resend of the twin's requests up to its PSN (a
 * repeated ACK for a resend is a duplicate ACK).  Else it is remembered. */
/* Several capture points: a sighting is a copy when another point saw the
 * same packet (PSN and bytes) within tap_window_ns and that sighting is not
 * yet paired with one of this point: each sending is seen once by each
 * point it passes.  One point seeing a packet again is a sending again (a
 * resend), whatever the time.  Every sighting is remembered. */
/* A NAK or RNR NAK of h's requests up to psn came after sighting e (or
 * before it, on its way still: below): its requester went back to that
 * PSN, so a repeat now is another sending.
 * (Only this go-back holds across capture points: their clocks and paths
 * skew the other sightings' order, a NAK comes after every original up to
 * its PSN at every point on the path.) */
static bool nak_between(struct half *h, const struct seen *e, uint32_t psn, int64_t ns)
{
	const struct half_rec *rc = h->x ? h->x->rc : NULL;

	if (!rc)
		return false;
	/* A NAK for this PSN before it, still on its way: a go-back from
	 * below its PSN began since and resent it (the requester had not
	 * the NAK yet), so the NAK's own go-back, resending it again, is
	 * still to come (random hw 6780); a copy keeps its delay. */
	if (rc->nak_mark_frame <= e->frame)
		return h->nak_pending && rc->nak_below && rc->nak_frame < e->frame &&
		       psn == rc->nak_psn && rc->copy_delay_max &&
		       ns - e->ns > 2 * rc->copy_delay_max + 1000;
	if (qpt_psn_diff(psn, rc->nak_mark_psn) <= 0)
		return true;
	/* Past its PSN: on a capture that has shown no copy of this half
	 * (one point, no mirror), the NAK's go-back whose first resends were
	 * lost before the point; where copies are the rule (both hosts
	 * merged, a mirror), the other point's sighting of an original still
	 * in flight when the NAK passed, unless it comes later than twice
	 * the longest delay a copy of this half has shown (and a microsecond
	 * more): the NAK's go-back again (a copy keeps its delay, a resend
	 * waits for the NAK to reach the requester). */
	return !rc->copy_delay_max || ns - e->ns > 2 * rc->copy_delay_max + 1000;
}

static const struct seen *tap_copy(struct qpt_flow *fl, struct half *h, uint32_t psn,
				   uint32_t fp, uint64_t frame, int64_t ns, bool same_sending)
{
	struct half_rare *x = fl_rare(h);
	struct tap_seen *orig = NULL;

	for (unsigned k = 0; k < x->taps_size && !orig; k++) {
		/* oldest first: the sending this sighting catches up on (in a
		 * ring not yet full, from index 0: as in a ring of TAP_RING
		 * whose empty entries are skipped) */
		struct tap_seen *t = &x->taps[(x->taps_pos + k) % x->taps_size];
		const struct seen *e = &t->s;
		int64_t dt = ns - e->ns;

		if (e->frame && !t->paired && e->tap != fl->tap && e->psn == psn &&
		    e->fp == fp && dt >= 0 && dt <= fl->o.tap_window_ns &&
		    (same_sending || !nak_between(h, e, psn, ns)))
			orig = t;
	}
	if (orig)
		orig->paired = true;
	/* grows while not yet wrapped: sighting k at index k (a half seen
	 * by two points a few times does not pay for TAP_RING of them) */
	if (x->taps_pos == x->taps_size && x->taps_size < TAP_RING) {
		unsigned n = x->taps_size ? MIN(2u * x->taps_size, TAP_RING) : 2;
		ptrdiff_t at = orig ? orig - x->taps : -1;

		x->taps = g_renew(struct tap_seen, x->taps, n);
		memset(x->taps + x->taps_size, 0, (n - x->taps_size) * sizeof(*x->taps));
		x->taps_size = n;
		orig = at >= 0 ? x->taps + at : NULL;
	}
	x->taps[x->taps_pos] = (struct tap_seen){
		.s = { .psn = psn, .fp = fp, .ns = ns, .frame = frame, .tap = (uint8_t)fl->tap },
		.paired = orig != NULL
	};
	x->taps_pos = (x->taps_pos + 1) % TAP_RING;
	return orig ? &orig->s : NULL;
}

/* This packet is a capture copy of frame orig: counted as such only. */
static QPT_COLD bool copy_of(struct qpt_verdict *v, struct qpt_dir *d, struct half *h, uint64_t frame,
			     int64_t ns, uint32_t psn, const struct seen *orig, const char *why)
{
	struct half_rec *rc = fl_rec(h);

	if (ns - orig->ns > rc->copy_delay_max)
		rc->copy_delay_max = ns - orig->ns;
	v->original_frame = orig->frame;
	if (d)
		fl_dr(d)->duplicates++;
	fl_emit(v, h, &(struct qpt_event){ .frame = frame, .time_ns = ns, .kind = QPT_VB_DUPLICATE,
			.psn = psn, .original_frame = orig->frame, .detail = why });
	return true;
}

/* The ring's PSNs, after psn went in: while each packet is within
 * SEEN_SPAN of seen_hi, a sighting is at most SEEN_RING * SEEN_SPAN
 * (2.1 M) PSNs before seen_hi, where the serial order of PSNs (2^23) still
 * holds; a farther packet clears seen_hi_ok, and it is found again by
 * scanning the ring once its sightings are within SEEN_SPAN. */
#define SEEN_SPAN 65536
G_STATIC_ASSERT((SEEN_RING + 1) * SEEN_SPAN < (1 << 23));

static void seen_bound(struct half *h, uint32_t psn)
{
	int32_t lo = 0, hi = 0;

	if (h->seen_hi_ok) {
		int32_t a = qpt_psn_diff(psn, h->seen_hi);

		if (a >= -SEEN_SPAN && a <= SEEN_SPAN) {
			if (a > 0)
				h->seen_hi = psn;
			return;
		}
	}
	for (unsigned i = 0; i < h->seen_size; i++) {
		int32_t d;

		if (!h->seen[i].frame)
			continue;
		d = qpt_psn_diff(h->seen[i].psn, psn);
		lo = MIN(lo, d);
		hi = MAX(hi, d);
	}
	h->seen_hi = qpt_psn_add(psn, hi);
	h->seen_hi_ok = hi - lo <= SEEN_SPAN;
}

QPT_HOT bool fl_capture_copy(struct qpt_flow *fl, struct half *h, const struct qpt_pkt *p,
			     uint64_t frame, int64_t ns, struct qpt_verdict *v, bool request)
{
	struct half *t = fl_twin_of(fl, h);
	uint32_t psn = p->bth.psn, fp = fingerprint(p);
	struct qpt_dir *d = fl_dir_of(h);
	/* IPv4 IDs that change from packet to packet tell sendings apart
	 * (the ICRC covers the ID): the same bytes are the same sending */
	bool same_id_same_sending;

	if (p->ip_version == 4 && !h->ipid_varies) {
		/* (an ID is the sending host's: its other QPs to the same
		 * host show how it numbers, before this one has sent twice) */
		struct addr_halves *a = h->seen_size || p->ip_id ?
			g_hash_table_lookup(fl->by_addr, h->key.src) : NULL;

		if (h->seen_size && p->ip_id != h->last_ipid) {
			h->ipid_varies = true;
			if (a)
				a->ipid_varies = true;
		} else if (p->ip_id && a && a->ipid_varies) {
			h->ipid_varies = true;
		}
	}
	if (p->ip_version == 4)
		h->last_ipid = p->ip_id;
	same_id_same_sending = p->ip_version == 4 && h->ipid_varies;
	if (QPT_UNLIKELY(fl->ntaps > 1)) {
		const struct seen *e = tap_copy(fl, h, psn, fp, frame, ns, same_id_same_sending);

		if (!e)
			goto same_point; /* a copy within one file is still one */
		return copy_of(v, d, h, frame, ns, psn, e,
			       "the same packet seen by another capture point: a capture copy");
	}
same_point:
	/* past every sighting's PSN: none is a copy */
	for (unsigned i = h->seen_hi_ok && qpt_psn_diff(psn, h->seen_hi) > 0 ? h->seen_size : 0;
	     i < h->seen_size; i++) {
		const struct seen *e = &h->seen[i];
		int64_t dt = ns - e->ns;

		if (QPT_LIKELY(!e->frame || e->psn != psn || e->fp != fp || dt < 0 ||
			       dt > fl->o.dup_window_ns))
			continue;
		/* IPv4 IDs that count: the same bytes are the same sending,
		 * whatever came between (a go-back's mark would order the
		 * sightings of a capture of both hosts merged wrongly: the
		 * other host sees the originals later, after the first
		 * resends) */
		if (same_id_same_sending)
			return copy_of(v, d, h, frame, ns, psn, e,
				       "same PSN and bytes, IPv4 ID included, as a packet just before: "
				       "a capture copy");
		/* Something between the two that makes the sender send it
		 * again, in the order of the file: for a READ or an atomic, an
		 * answer reaching its PSN (retried when a later answer comes
		 * without its own: any other request answered is resent only by
		 * its timer, far longer than the copy window), a go-back of
		 * this half (the first resend of an episode or RNR retry, a
		 * gap filled, a READ re-issue; for READ responses and atomic
		 * ACKs, a restarted response stream: a plain ACK is sent again
		 * only for a request sent again), a NAK or RNR NAK of it up to its PSN, or
		 * for an answer a resend of a request up to it (the last resend,
		 * the last that asked for an ACK, the lowest since the last ACK:
		 * a go-back goes on past the PSN before its re-ACK comes). */
		if (request && qpt_opcodes[p->bth.opcode].flags & (QPT_O_READ | QPT_O_ATOMIC) &&
		    h->ans_valid &&
		    ((h->ans_frame > e->frame && qpt_psn_diff(h->ans_hi, psn) >= 0) ||
		     (h->x && h->x->rc && h->x->rc->ans_low_frame > e->frame &&
		      qpt_psn_diff(h->x->rc->ans_low_psn, psn) >= 0)))
			continue;
		if (h->went_back && fl_rec(h)->goback_frame > e->frame &&
		    (request || !(qpt_opcodes[p->bth.opcode].flags & QPT_O_ACK)))
			continue;
		if (request && nak_between(h, e, psn, ns))
			continue;
		if (!request && t && t->resend_valid &&
		    ((fl_rec(t)->resend_frame > e->frame &&
		      qpt_psn_diff(fl_rec(t)->resend_psn, psn) <= 0) ||
		     (fl_rec(t)->resend_ackreq_frame > e->frame &&
		      qpt_psn_diff(fl_rec(t)->resend_ackreq_psn, psn) <= 0) ||
		     (fl_rec(t)->resend_min_frame > e->frame &&
		      qpt_psn_diff(fl_rec(t)->resend_min_psn, psn) <= 0)))
			continue;
		/* the requester went back to a PSN up to this answer's since
		 * (its last two go-backs: an RNR retry may follow a go-back to
		 * a lower PSN at once), even when it has passed its highest
		 * PSN since (the answers come a round trip later): its
		 * requests are answered again */
		if (!request && t && t->x && t->x->rc &&
		    ((fl_rec(t)->goback_frame > e->frame &&
		      qpt_psn_diff(fl_rec(t)->goback_psn, psn) <= 0) ||
		     (fl_rec(t)->goback_prev_frame > e->frame &&
		      qpt_psn_diff(fl_rec(t)->goback_prev_psn, psn) <= 0)))
			continue;
		return copy_of(v, d, h, frame, ns, psn, e,
			       "same PSN and bytes as a packet just before: a capture copy");
	}
	/* the ring grows while not yet wrapped: packet k at index k, as in
	 * a ring of SEEN_RING from the start (the same scan order above) */
	if (QPT_UNLIKELY(h->seen_pos == h->seen_size && h->seen_size < SEEN_RING)) {
		unsigned n = h->seen_size ? MIN(2u * h->seen_size, SEEN_RING) : 1;

		h->seen = g_renew(struct seen, h->seen, n);
		memset(h->seen + h->seen_size, 0, (n - h->seen_size) * sizeof(*h->seen));
		h->seen_size = (uint8_t)n;
	}
	/* an ACK: the requester's resends since are what the next one
	 * may answer again */
	if (!request && t && t->x && t->x->rc && qpt_opcodes[p->bth.opcode].flags & QPT_O_ACK)
		t->x->rc->resend_min_frame = 0;
	h->seen[h->seen_pos] = (struct seen){ .psn = psn, .fp = fp, .ns = ns, .frame = frame };
	h->seen_pos = (uint8_t)((h->seen_pos + 1) % SEEN_RING);
	seen_bound(h, psn);
	return false;
}

