/* qpt_flow_qos.c - the QoS analysis of each direction: priorities,
 * ECN-CE marks and the CNPs that answer them, the rate around them
 *
 * Per direction of a conversation (struct qpt_dir_qos, qpt_flow_int.h, where
 * the rules are written down): the 802.1Q PCP and DSCP of its data, ACK and
 * CNP packets; its ECN-CE marks matched to the CNPs the receiver sent back
 * to the sender's QP (the other direction of the same conversation), the
 * reaction time of each CNP (CNP time - the first unanswered mark's), the
 * marks no CNP answered; the sender's data rate in a window before and
 * after each CNP it received (bytes of the IBA packets, from the BTH, or
 * the GRH/LRH, to the ICRC: the same however a mirror wrapped them); the
 * payload sizes that show its MTU.
 *
 * Work per packet: a few compares, and for a data packet one entry
 * appended to the rate window's history (bounded by the window: the
 * packets of the last cnp_rate_window_ns).  No I/O.
 *
 * Memory: a direction starts with what struct qpt_qos_inline (in struct
 * qpt_dir) holds: one PCP and one DSCP per class data and ACK with their
 * counts, the last QPT_QOS_INLINE_HIST data packets of the rate window, the
 * MTU evidence.  qos_get() allocates struct qpt_dir_qos when more is needed
 * and moves the counts into it; from then on the direction is counted there
 * only (the MTU evidence stays inline).  The history moves to its own
 * struct qpt_qos_hist (hist_heap()) when more packets are in the window
 * than fit, or a CNP comes.  Both ways give the same numbers: the history
 * keeps the same packets, and the bytes sent are only ever taken as
 * differences, so the heap one counts them from its first packet kept.
 */
#include <string.h>

#include "qpt_flow_int.h"

struct rate_open {
	int64_t ns;	 /* the CNP's time */
	uint64_t sent;	 /* bytes sent before it */
	uint64_t before; /* bytes sent in the window before it */
};

/* struct hist_ent, struct qpt_qos_hist: in qpt_flow_qos.h (the cold
 * conversations' encoding, qpt_flow_cold.c, takes them too) */

/* The direction's history on the heap (moved there when inline). */
static struct qpt_qos_hist *hist_heap(struct qpt_dir *x)
{
	struct qpt_qos_inline *l = &x->qos_in;
	struct qpt_qos_hist *hh;

	if (l->nhist == QPT_QOS_HIST_HEAP)
		return l->hist.heap;
	hh = g_new0(struct qpt_qos_hist, 1);
	fl_hist_grow(hh);
	for (unsigned i = 0; i < l->nhist; i++) {
		hh->sent += l->hist.in.len[i];
		fl_hist_push(hh, l->hist.in.ns[i], hh->sent);
	}
	l->hist.heap = hh;
	l->nhist = QPT_QOS_HIST_HEAP;
	return hh;
}

/* Bytes sent so far as the heap history counts them (0 inline: no CNP
 * rate window is open then). */
static uint64_t hist_sent(const struct qpt_dir *x)
{
	return x->qos_in.nhist == QPT_QOS_HIST_HEAP ? x->qos_in.hist.heap->sent : 0;
}

const char *qpt_qos_class_name(unsigned cls)
{
	static const char *const n[] = { "data", "ack", "cnp" };

	return cls < G_N_ELEMENTS(n) ? n[cls] : "?";
}

const struct qpt_flow_opts *qpt_flow_options(const struct qpt_flow *fl)
{
	return &fl->o;
}

void fl_qos_defaults(struct qpt_flow_opts *o)
{
	if (!o->cnp_qos_set) {
		o->cnp_dscp = 48;
		o->cnp_pcp = 6;
		o->cnp_qos_set = true;
	}
	if (o->ecn_window_ns <= 0)
		o->ecn_window_ns = 100000;
	if (o->cnp_rate_window_ns <= 0)
		o->cnp_rate_window_ns = 100000;
}

/* Inline priority slots in use (the ones with packets). */
static unsigned inline_slots(const struct qpt_qos_inline *l)
{
	return (l->n[0] != 0) + (l->n[1] != 0) + (l->n[2] != 0) + (l->n[3] != 0);
}

static void qos_count_full(struct qpt_dir_qos *q, unsigned cls, bool dscp, int value,
			   uint64_t n);

static struct qpt_dir_qos *qos_get(struct qpt_dir *d)
{
	struct qpt_qos_inline *l = &d->qos_in;
	struct qpt_dir_qos *q;
	unsigned ns;

	if (d->qos)
		return d->qos;
	q = d->qos = g_new0(struct qpt_dir_qos, 1);
	l->seen = true;
	/* what the direction kept inline moves here, in the same order */
	ns = inline_slots(l);
	for (unsigned i = 0; i < ns; i++) {
		unsigned slot = (l->order >> (2 * i)) & 3;

		qos_count_full(q, slot >> 1, slot & 1, l->value[slot], l->n[slot]);
	}
	memset(l->n, 0, sizeof(l->n));
	l->order = 0;
	return q;
}

/* n more packets of that class carried that PCP (dscp false) or DSCP */
static QPT_HOT void qos_count(struct qpt_dir *d, unsigned cls, bool dscp, int value, uint64_t n)
{
	struct qpt_qos_inline *l = &d->qos_in;

	l->seen = true;
	if (!d->qos && cls <= QPT_QOS_ACK) {
		unsigned slot = cls * 2 + dscp;

		if (!l->n[slot] && n <= UINT16_MAX) {
			l->order |= (uint8_t)(slot << (2 * inline_slots(l)));
			l->value[slot] = (int8_t)value;
			l->n[slot] = (uint16_t)n;
			return;
		}
		if (l->n[slot] && l->value[slot] == value && n <= (uint64_t)(UINT16_MAX - l->n[slot])) {
			l->n[slot] += (uint16_t)n;
			return;
		}
	}
	qos_count_full(qos_get(d), cls, dscp, value, n);
}

/* One packet of class data or ACK (cls) with that PCP (dscp false) or DSCP:
 * what the previous one of its class had, counted in place (inline: twice
 * a packet); else qos_count(). */
static G_ALWAYS_INLINE inline void qos_count1(struct qpt_dir *d, unsigned cls, bool dscp,
					      int value)
{
	unsigned slot = cls * 2 + dscp;
	struct qpt_dir_qos *q = d->qos;

	if (!q) {
		struct qpt_qos_inline *l = &d->qos_in;

		if (l->n[slot] && l->value[slot] == value && l->n[slot] != UINT16_MAX) {
			l->n[slot]++; /* (seen: since its first) */
			return;
		}
	} else if (q->counts && q->last[slot] < q->counts->len) {
		struct qpt_qos_count *e = &g_array_index(q->counts, struct qpt_qos_count, q->last[slot]);

		if (e->value == value && e->cls == cls && e->dscp == dscp) {
			e->packets++;
			return;
		}
	}
	qos_count(d, cls, dscp, value, 1);
}

static void qos_count_full(struct qpt_dir_qos *q, unsigned cls, bool dscp, int value,
			   uint64_t n)
{
	struct qpt_qos_count *e;
	guint i;

	if (!q->counts)
		q->counts = g_array_sized_new(FALSE, TRUE, sizeof(struct qpt_qos_count), 4);
	for (i = 0; i < q->counts->len; i++) {
		e = &g_array_index(q->counts, struct qpt_qos_count, i);
		if (e->cls == cls && e->dscp == dscp && e->value == value) {
			e->packets += n;
			goto found;
		}
	}
	g_array_append_val(q->counts, ((struct qpt_qos_count){ .cls = (uint8_t)cls,
							      .dscp = dscp,
							      .value = (int16_t)value,
							      .packets = n }));
found:
	if (cls <= QPT_QOS_ACK)
		q->last[cls * 2 + dscp] = i;
}

const struct qpt_qos_count *fl_qos_count_at(const struct qpt_dir *d, unsigned i,
					    struct qpt_qos_count *tmp)
{
	const struct qpt_qos_inline *l = &d->qos_in;
	unsigned slot;

	if (d->qos)
		return d->qos->counts && i < d->qos->counts->len ?
			       &g_array_index(d->qos->counts, struct qpt_qos_count, i) :
			       NULL;
	if (i >= inline_slots(l))
		return NULL;
	slot = (l->order >> (2 * i)) & 3;
	*tmp = (struct qpt_qos_count){ .cls = (uint8_t)(slot >> 1),
				       .dscp = slot & 1,
				       .value = l->value[slot],
				       .packets = l->n[slot] };
	return tmp;
}

static void frames_keep(uint64_t *slots, uint64_t frame)
{
	for (unsigned i = 0; i < QPT_QOS_FRAMES; i++)
		if (!slots[i]) {
			slots[i] = frame;
			return;
		}
}

static unsigned pending_len(const struct qpt_dir_qos *q)
{
	return q && q->pending ? q->pending->len - q->pending_head : 0;
}

static void pending_compact(struct qpt_dir_qos *q)
{
	if (q->pending_head && q->pending_head * 2 >= q->pending->len) {
		g_array_remove_range(q->pending, 0, q->pending_head);
		q->pending_head = 0;
	}
}

/* Marks of direction dd older than the window before now: no CNP answered
 * them.  Each gets an event (an earlier frame's) while the verdict has
 * room: the counter is exact either way. */
static QPT_COLD void qos_expire(struct qpt_flow *fl, struct qpt_conv *c, int dd, int64_t now,
				struct qpt_verdict *v, bool drain)
{
	struct qpt_dir_qos *q = c->dir[dd]->qos;
	struct qpt_dir *x;

	if (!pending_len(q))
		return;
	x = fl_dirw(c, dd); /* a direction with marks has packets: no allocation */
	while (q->pending_head < q->pending->len) {
		const struct qpt_ecn_mark *m =
			&g_array_index(q->pending, struct qpt_ecn_mark, q->pending_head);

		if (now - m->ns <= fl->o.ecn_window_ns)
			break;
		if (drain && v->nevents == QPT_MAX_EVENTS)
			break; /* the end: the rest in the next verdict */
		if (m->covered) {
			q->ce_covered++;
		} else {
			fl_dr(x)->ce_without_cnp++;
			frames_keep(q->no_cnp_frames, m->frame);
			/* a packet's verdict keeps room for its own events */
			if (v && (drain || v->nevents + 2 < QPT_MAX_EVENTS)) {
				struct qpt_event *ev = fl_emit(v, NULL, &(struct qpt_event){
						.frame = m->frame, .time_ns = m->ns,
						.kind = QPT_VB_ECN_NO_CNP, .psn = m->psn,
						.detail = "no CNP for this QP within the ECN "
							  "window" });

				if (ev) {
					ev->conv = c->id;
					ev->dir = (int8_t)dd;
				}
			}
		}
		q->pending_head++;
	}
	pending_compact(q);
}

/* Bytes the direction sent in the rate window before now (the entries
 * before the window dropped; inline: every data packet). */
static inline uint64_t sent_before(struct qpt_flow *fl, struct qpt_qos_hist *q, int64_t now)
{
	int64_t from = now - fl->o.cnp_rate_window_ns;

	while (q->n) {
		const struct hist_ent *h = &q->ents[q->head];

		if (h->ns >= from)
			break;
		q->base = h->sent;
		q->head = (q->head + 1) & (q->cap - 1);
		q->n--;
	}
	return q->sent - q->base;
}

/* CNP rate windows of q whose after part ended by now (sent: the bytes
 * sent so far, hist_sent()). */
static void rate_close(struct qpt_flow *fl, struct qpt_dir_qos *q, uint64_t sent, int64_t now)
{
	while (q->open && q->open_head < q->open->len) {
		const struct rate_open *o = &g_array_index(q->open, struct rate_open, q->open_head);

		if (now < o->ns + fl->o.cnp_rate_window_ns)
			break;
		q->rate_windows++;
		q->bytes_before += o->before;
		q->bytes_after += sent - o->sent;
		q->open_head++;
	}
	if (q->open && q->open_head && q->open_head * 2 >= q->open->len) {
		g_array_remove_range(q->open, 0, q->open_head);
		q->open_head = 0;
	}
}

/* A data packet of len bytes at ns into the direction's rate window
 * history: inline, the oldest entries before the window going as
 * sent_before() drops them; on the heap once more are left than fit. */
static void hist_add(struct qpt_flow *fl, struct qpt_dir *x, int64_t ns, uint32_t len)
{
	struct qpt_qos_inline *l = &x->qos_in;
	struct qpt_qos_hist *hh;

	if (l->nhist == QPT_QOS_HIST_HEAP) {
		hh = l->hist.heap;
	} else {
		unsigned k = 0;

		while (k < l->nhist && l->hist.in.ns[k] < ns - fl->o.cnp_rate_window_ns)
			k++;
		if (k) {
			for (unsigned i = k; i < l->nhist; i++) {
				l->hist.in.ns[i - k] = l->hist.in.ns[i];
				l->hist.in.len[i - k] = l->hist.in.len[i];
			}
			l->nhist = (uint8_t)(l->nhist - k);
		}
		if (l->nhist < QPT_QOS_INLINE_HIST) {
			l->hist.in.ns[l->nhist] = ns;
			l->hist.in.len[l->nhist] = len;
			l->nhist++;
			return;
		}
		hh = hist_heap(x);
	}
	hh->sent += len;
	fl_hist_push(hh, ns, hh->sent);
	(void)sent_before(fl, hh, ns); /* trims the history to the window */
}

/* A CNP (cls QPT_QOS_CNP) of direction x = h's: its priority checked; it
 * answers the marks of the other direction, opens a rate window there. */
static QPT_COLD void qos_cnp(struct qpt_flow *fl, struct half *h, struct qpt_dir *x,
			      const struct qpt_pkt *p, uint64_t frame, int64_t ns,
			      bool has_dscp, struct qpt_verdict *v)
{
	struct qpt_conv *c = h->conv;
	int d = h->dir;
	struct qpt_dir_qos *q, *m;
	struct qpt_dir *y;
	struct qpt_qos_hist *hh;
	struct rate_open o;

	q = qos_get(x);
	if ((fl->o.cnp_dscp >= 0 && has_dscp && p->dscp != fl->o.cnp_dscp) ||
	    (fl->o.cnp_pcp >= 0 && p->vlan_pcp >= 0 && p->vlan_pcp != fl->o.cnp_pcp)) {
		fl_dr(x)->cnp_unexpected++;
		frames_keep(q->cnp_unexpected_frames, frame);
		fl_emit(v, h, &(struct qpt_event){ .frame = frame, .time_ns = ns,
				.kind = QPT_VB_CNP_PRIORITY, .psn = p->bth.psn,
				.detail = has_dscp && fl->o.cnp_dscp >= 0 &&
						  p->dscp != fl->o.cnp_dscp ?
					"CNP on another DSCP than expected (--cnp-dscp)" :
					"CNP on another 802.1Q priority than expected "
					"(--cnp-priority)" });
	}
	/* a CNP to a QP whose data the conversation does not have yet
	 * (its two halves are paired later): kept for the fold */
	if (!c->dir[1 - d]->packets && q->n_orphans < QPT_QOS_ORPHANS) {
		q->orphan_cnp_ns[q->n_orphans++] = ns;
		return;
	}
	y = fl_dirw(c, 1 - d);
	m = qos_get(y);
	hh = hist_heap(y);
	o = (struct rate_open){ .ns = ns, .sent = hh->sent };
	/* it answers every unanswered mark of the other direction */
	if (pending_len(m)) {
		const struct qpt_ecn_mark *first =
			&g_array_index(m->pending, struct qpt_ecn_mark, m->pending_head);

		fl_lat_add(&m->reaction, (double)(ns - first->ns) / 1000.0);
		m->ce_answered += pending_len(m);
		g_array_set_size(m->pending, 0);
		m->pending_head = 0;
	} else {
		m->cnps_without_ce++;
	}
	m->cnp_seen = true;
	m->last_cnp_ns = ns;
	/* the sender's rate around it */
	rate_close(fl, m, hh->sent, ns);
	o.before = sent_before(fl, hh, ns);
	if (!m->open)
		m->open = g_array_new(FALSE, FALSE, sizeof(struct rate_open));
	g_array_append_val(m->open, o);
}

/* An ECN-CE mark on direction x's packet: waits for a CNP. */
static QPT_COLD void qos_mark(struct qpt_flow *fl, struct qpt_dir *x,
			       const struct qpt_pkt *p, uint64_t frame, int64_t ns)
{
	struct qpt_dir_qos *q;
	struct qpt_ecn_mark mk;

	q = qos_get(x);
	mk = (struct qpt_ecn_mark){
		.ns = ns,
		.frame = frame,
		.psn = p->bth.psn,
		.covered = q->cnp_seen && ns - q->last_cnp_ns <= fl->o.ecn_window_ns,
	};
	if (!q->pending)
		q->pending = g_array_new(FALSE, FALSE, sizeof(struct qpt_ecn_mark));
	g_array_append_val(q->pending, mk);
}

QPT_HOT void fl_qos_packet(struct qpt_flow *fl, struct half *h, const struct qpt_pkt *p,
			   uint64_t frame, int64_t ns, bool ce, struct qpt_verdict *v)
{
	const struct qpt_opcode_info *oi = &qpt_opcodes[p->bth.opcode];
	struct qpt_conv *c = h->conv;
	int d = h->dir;
	struct qpt_dir *x = fl_dirw(c, d);
	struct qpt_qos_inline *l;
	bool has_dscp = p->ip_version || (p->flags & QPT_HAS_GRH);
	unsigned cls = oi->flags & QPT_O_CNP ? QPT_QOS_CNP :
		       oi->flags & QPT_O_ACK ? QPT_QOS_ACK : QPT_QOS_DATA;

	if (QPT_LIKELY(cls != QPT_QOS_CNP)) {
		qos_count1(x, cls, false, p->vlan_pcp);
		if (has_dscp)
			qos_count1(x, cls, true, p->dscp);
	} else {
		qos_count(x, cls, false, p->vlan_pcp, 1);
		if (has_dscp)
			qos_count(x, cls, true, p->dscp, 1);
	}
	/* (the call only for a direction with a mark waiting) */
	for (int dd = 0; dd < 2; dd++)
		if (QPT_UNLIKELY(c->dir[dd]->qos && pending_len(c->dir[dd]->qos)))
			qos_expire(fl, c, dd, ns, v, false);

	if (QPT_UNLIKELY(cls == QPT_QOS_CNP)) {
		qos_cnp(fl, h, x, p, frame, ns, has_dscp, v);
		return;
	}
	if (QPT_UNLIKELY(ce))
		qos_mark(fl, x, p, frame, ns);
	if (cls != QPT_QOS_DATA)
		return;
	/* the sender's rate: windows after CNPs that ended, then this packet
	 * (the RoCE/IB packet: the same through any tunnel) */
	if (x->qos && x->qos->open && x->qos->open_head < x->qos->open->len)
		rate_close(fl, x->qos, hist_sent(x), ns); /* (a window open) */
	hist_add(fl, x, ns, p->iba_len);
	/* MTU evidence */
	l = &x->qos_in;
	if (p->payload_len > l->max_payload) {
		l->max_payload = p->payload_len;
		l->max_payload_frame = frame;
	}
	if (oi->flags & (QPT_O_FIRST | QPT_O_MIDDLE) && !(oi->flags & QPT_O_LAST) &&
	    p->payload_len) {
		if (l->seg_payload && l->seg_payload != p->payload_len)
			l->seg_varies = true;
		if (!l->seg_frame)
			l->seg_frame = frame;
		if (p->payload_len > l->seg_payload)
			l->seg_payload = p->payload_len;
	}
}

/* The CNPs direction d of c carried before the conversation had the other
 * direction, now that it has: each answers the marks of the other
 * direction at most a window before it (no rate window: the sender's data
 * before it is not known to be its). */
static void orphans_resolve(struct qpt_flow *fl, struct qpt_conv *c, int d)
{
	struct qpt_dir_qos *q = c->dir[d]->qos, *m;

	if (!q || !q->n_orphans || !c->dir[1 - d]->packets)
		return;
	m = qos_get(fl_dirw(c, 1 - d));
	for (unsigned k = 0; k < q->n_orphans; k++) {
		int64_t t = q->orphan_cnp_ns[k];
		guint from = m->pending_head, to;

		/* marks older than the window before it stay: they expire */
		while (m->pending && from < m->pending->len &&
		       t - g_array_index(m->pending, struct qpt_ecn_mark, from).ns >
			       fl->o.ecn_window_ns)
			from++;
		for (to = from; m->pending && to < m->pending->len &&
				g_array_index(m->pending, struct qpt_ecn_mark, to).ns <= t;
		     to++)
			;
		if (to > from) {
			fl_lat_add(&m->reaction,
				   (double)(t - g_array_index(m->pending, struct qpt_ecn_mark, from).ns) /
					   1000.0);
			m->ce_answered += to - from;
			g_array_remove_range(m->pending, from, to - from);
		} else {
			m->cnps_without_ce++;
		}
		if (!m->cnp_seen || t > m->last_cnp_ns) {
			m->cnp_seen = true;
			m->last_cnp_ns = t;
		}
	}
	q->n_orphans = 0;
}

void fl_qos_fold(struct qpt_flow *fl, struct qpt_conv *c)
{
	orphans_resolve(fl, c, 0);
	orphans_resolve(fl, c, 1);
}

int64_t qpt_flow_conv_end(struct qpt_flow *fl)
{
	int64_t end = 0;
	bool any = false;

	if (fl->conv_end_set)
		return fl->conv_end_ns;

	for (guint i = 0; i < fl->convs->len; i++) {
		struct conv_view v;
		const struct qpt_conv *c = fl_conv_peek(fl, (int32_t)i, &v);

		for (int d = 0; d < 2; d++)
			if (c->dir[d]->packets && (!any || c->dir[d]->last_ns > end)) {
				end = c->dir[d]->last_ns;
				any = true;
			}
	}
	return end;
}

void qpt_flow_set_conv_end(struct qpt_flow *fl, int64_t ns)
{
	fl->conv_end_set = true;
	fl->conv_end_ns = ns;
}

void fl_qos_drain(struct qpt_flow *fl, GArray *out)
{
	int64_t end = qpt_flow_conv_end(fl);
	struct qpt_verdict v;

	for (guint i = 0; i < fl->convs->len; i++) {
		struct qpt_conv *c = g_ptr_array_index(fl->convs, i);

		if (fl_conv_is_cold(c) || c->merged)
			continue; /* a cold one has no ECN state */
		for (int d = 0; d < 2; d++) {
			if (!pending_len(c->dir[d]->qos))
				continue; /* no mark waits (most) */
			do { /* a verdict at a time, until none is left */
				fl_end_verdict(&v);
				qos_expire(fl, c, d, end, &v, true);
				g_array_append_vals(out, v.ev, v.nevents);
			} while (v.nevents == QPT_MAX_EVENTS);
		}
	}
}

void fl_qos_finish(struct qpt_flow *fl)
{
	int64_t end;

	/* an engine that absorbed others' conversations was fed no frame
	 * (qpt_flow_absorb): each was finished in its own engine already */
	if (fl->absorbed)
		return;
	end = qpt_flow_conv_end(fl);
	for (guint i = 0; i < fl->convs->len; i++) {
		struct qpt_conv *c = g_ptr_array_index(fl->convs, i);

		if (fl_conv_is_cold(c) || c->merged)
			continue; /* a cold one has no ECN state */
		for (int d = 0; d < 2; d++) {
			struct qpt_dir_qos *q = c->dir[d]->qos;

			if (!q)
				continue;
			/* CNPs whose data never showed: answering nothing seen */
			if (q->n_orphans) {
				qos_get(fl_dirw(c, 1 - d))->cnps_without_ce += q->n_orphans;
				q->n_orphans = 0;
			}
			qos_expire(fl, c, d, end, NULL, false);
			/* the rest: the capture ended inside their window */
			q->ce_undecided += pending_len(q);
			if (q->pending)
				g_array_set_size(q->pending, 0);
			q->pending_head = 0;
			rate_close(fl, q, hist_sent(c->dir[d]), end);
			if (q->open) {
				q->rate_windows_cut += q->open->len - q->open_head;
				g_array_set_size(q->open, 0);
				q->open_head = 0;
			}
			if (q->rate_windows) {
				double w = (double)q->rate_windows *
					   (double)fl->o.cnp_rate_window_ns / 1e9;

				q->rate_before_bps = (double)q->bytes_before * 8 / w;
				q->rate_after_bps = (double)q->bytes_after * 8 / w;
			}
		}
	}
}

void fl_qos_merge(struct qpt_dir *d, const struct qpt_dir *s)
{
	const struct qpt_dir_qos *b = s->qos;
	const struct qpt_qos_inline *bl = &s->qos_in;
	struct qpt_qos_inline *al = &d->qos_in;
	const struct qpt_qos_count *e;
	struct qpt_qos_count tmp;
	struct qpt_dir_qos *a;

	if (!b && !bl->seen)
		return;
	al->seen = true;
	for (unsigned i = 0; (e = fl_qos_count_at(s, i, &tmp)); i++)
		qos_count(d, e->cls, e->dscp, e->value, e->packets);
	if (bl->max_payload > al->max_payload) {
		al->max_payload = bl->max_payload;
		al->max_payload_frame = bl->max_payload_frame;
	}
	if (bl->seg_payload) {
		if (al->seg_payload && al->seg_payload != bl->seg_payload)
			al->seg_varies = true;
		if (!al->seg_frame || (bl->seg_frame && bl->seg_frame < al->seg_frame))
			al->seg_frame = bl->seg_frame;
		al->seg_payload = MAX(al->seg_payload, bl->seg_payload);
	}
	al->seg_varies |= bl->seg_varies;
	/* the rest is all zero without b (the rate history of the folded half
	 * is not taken: below) */
	if (!b)
		return;
	a = qos_get(d);
	fl_lat_merge(&a->reaction, &b->reaction);
	a->ce_answered += b->ce_answered;
	a->ce_covered += b->ce_covered;
	a->ce_undecided += b->ce_undecided;
	a->cnps_without_ce += b->cnps_without_ce;
	for (unsigned i = 0; i < QPT_QOS_FRAMES; i++) {
		if (b->no_cnp_frames[i])
			frames_keep(a->no_cnp_frames, b->no_cnp_frames[i]);
		if (b->cnp_unexpected_frames[i])
			frames_keep(a->cnp_unexpected_frames, b->cnp_unexpected_frames[i]);
	}
	a->rate_windows += b->rate_windows;
	a->bytes_before += b->bytes_before;
	a->bytes_after += b->bytes_after;
	a->rate_windows_cut += b->rate_windows_cut;
	/* marks still waiting for a CNP, in time order */
	for (guint i = b->pending_head; b->pending && i < b->pending->len; i++) {
		if (!a->pending)
			a->pending = g_array_new(FALSE, FALSE, sizeof(struct qpt_ecn_mark));
		g_array_append_val(a->pending, g_array_index(b->pending, struct qpt_ecn_mark, i));
	}
	if (b->cnp_seen && (!a->cnp_seen || b->last_cnp_ns > a->last_cnp_ns)) {
		a->cnp_seen = true;
		a->last_cnp_ns = b->last_cnp_ns;
	}
	for (unsigned i = 0; i < b->n_orphans; i++) {
		if (a->n_orphans < QPT_QOS_ORPHANS)
			a->orphan_cnp_ns[a->n_orphans++] = b->orphan_cnp_ns[i];
		else
			a->cnps_without_ce++; /* counted where it is: no longer matched */
	}
	/* the rate windows of the folded half start again (rare: a fold
	 * happens when the two halves are paired late) */
}

void fl_qos_free(struct qpt_dir *d)
{
	struct qpt_dir_qos *q = d->qos;

	if (d->qos_in.nhist == QPT_QOS_HIST_HEAP) {
		g_free(d->qos_in.hist.heap->ents);
		g_free(d->qos_in.hist.heap);
		d->qos_in.nhist = 0;
	}
	if (!q)
		return;
	if (q->counts)
		g_array_free(q->counts, TRUE);
	g_free(q->reaction.bins);
	if (q->pending)
		g_array_free(q->pending, TRUE);
	if (q->open)
		g_array_free(q->open, TRUE);
	g_free(q);
	d->qos = NULL;
}
