/* qpt_flow.c - the engine's entry: lifecycle (new, free, forget), a packet
 * to its half, totals, the end's events (see qpt_flow.h)
 *
 * A "half" is what one BTH can name: packets from one address to a QP at
 * another address.  A reliable connection is two halves: requests A->B to
 * QP b together with B's responses to QP a.  Each half tracks the requests
 * it carries (its own PSN space) and the responses it carries (answers to
 * the twin half's requests).
 *
 * Requester rules mirrored from rxe_comp.c / rxe_resp.c: PSNs are 24-bit
 * and compared with qpt_psn_cmp(); an ACK acknowledges every request up to
 * its PSN; a PSN sequence error NAK carries the expected PSN and only the
 * first NAK of an episode matters; an RNR NAK names the PSN to retry.
 */

#include <string.h>

#include "qpt_flow_int.h"

/* Five 64-bit words of key, mixed multiplicatively (the key is 40 bytes). */
static QPT_HOT guint key_hash(gconstpointer p)
{
	uint64_t w[sizeof(struct half_key) / 8], h = 0x9e3779b97f4a7c15ull;
	struct half_key tmp;

	G_STATIC_ASSERT(sizeof(struct half_key) % 8 == 0);
	memcpy(w, fl_key_of(p, &tmp), sizeof(w)); /* a half or a cold half */
	for (size_t i = 0; i < G_N_ELEMENTS(w); i++)
		h = (h ^ w[i]) * 0xff51afd7ed558ccdull;
	return (guint)(h ^ (h >> 32));
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
	struct half_key ta, tb;

	return !memcmp(fl_key_of(a, &ta), fl_key_of(b, &tb), sizeof(struct half_key));
}

static QPT_HOT guint pair_hash(gconstpointer p)
{
	const uint8_t *b = p;
	guint h = 2166136261u;

	for (size_t i = 0; i < 32; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

static QPT_HOT gboolean pair_equal(gconstpointer a, gconstpointer b)
{
	return !memcmp(a, b, 32);
}

static void addr_halves_free(gpointer p)
{
	struct addr_halves *a = p;

	if (a->n == ADDR_SPILLED) {
		g_ptr_array_unref(a->u.v.all);
		if (a->u.v.req)
			g_ptr_array_unref(a->u.v.req);
		if (a->u.v.resp)
			g_ptr_array_unref(a->u.v.resp);
	}
	g_free(a);
}

struct qpt_flow *qpt_flow_new(const struct qpt_flow_opts *opts)
{
	struct qpt_flow *fl = g_new0(struct qpt_flow, 1);

	if (opts)
		fl->o = *opts;
	fl->t.max_halves = fl->o.max_halves; /* 0: no limit */
	if (!fl->o.dup_window_ns)
		fl->o.dup_window_ns = 50000;
	if (!fl->o.tap_window_ns)
		fl->o.tap_window_ns = 1000000000;
	if (!fl->o.timeout_gap_ns)
		fl->o.timeout_gap_ns = 500000;
	fl_qos_defaults(&fl->o);
	/* a set: the key is the half's first member */
	/* (the engine frees what it replaces or removes: fl_half_free) */
	fl->halves = g_hash_table_new(key_hash, key_equal);
	/* a set too: the key is the struct's first member */
	fl->by_addr = g_hash_table_new_full(pair_hash, pair_equal, addr_halves_free, NULL);
	fl->cm = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	fl->cm_rep = g_hash_table_new(g_direct_hash, g_direct_equal);
	fl->convs = g_ptr_array_new(); /* (freed by qpt_flow_free) */
	fl->pfc = qpt_pfc_new();
	if (!fl->o.cold_every)
		fl->o.cold_every = 8192;
	fl->to_sweep = fl->o.cold_every;
	fl->live = g_ptr_array_new();
	return fl;
}

void qpt_flow_forget_halves(struct qpt_flow *fl)
{
	if (fl->halves_gone)
		return;
	fl->halves_gone = true;
	if (fl->thawed) { /* a forwarder's half is only there */
		GHashTableIter it;
		gpointer c, h;

		g_hash_table_iter_init(&it, fl->thawed);
		while (g_hash_table_iter_next(&it, &c, &h)) {
			((struct cold_half *)c)->thawed = false;
			fl_half_free(fl, h);
		}
		g_hash_table_destroy(fl->thawed);
		fl->thawed = NULL;
	}
	{
		GHashTableIter it;
		gpointer h;

		g_hash_table_iter_init(&it, fl->halves);
		while (g_hash_table_iter_next(&it, &h, NULL))
			fl_half_free(fl, h);
	}
	fl_slab_clear(&fl->half_slab); /* the blocks of the cold ones */
	g_hash_table_destroy(fl->halves);
	g_hash_table_destroy(fl->by_addr);
	g_ptr_array_free(fl->live, TRUE);
	fl->halves = fl->by_addr = NULL;
	fl->live = NULL;
	memset(fl->recent, 0, sizeof(fl->recent));
}

void qpt_flow_free(struct qpt_flow *fl)
{
	if (!fl)
		return;
	qpt_flow_forget_halves(fl);
	if (fl->cold_buf)
		g_byte_array_free(fl->cold_buf, TRUE);
	if (fl->evidence)
		g_ptr_array_free(fl->evidence, TRUE);
	if (fl->folded)
		g_hash_table_destroy(fl->folded);
	fl_tunnel_free(fl);
	g_hash_table_destroy(fl->cm_rep);
	g_hash_table_destroy(fl->cm);
	for (guint i = 0; i < fl->convs->len; i++) {
		gpointer p = fl->convs->pdata[i];

		if (fl_conv_is_cold(p))
			fl_cold_conv_free(fl, fl_cold_conv_of(p)); /* (a large one) */
		else if (p)
			fl_conv_free(p);
	}
	fl_slab_clear(&fl->conv_slab);
	g_ptr_array_free(fl->convs, TRUE);
	qpt_pfc_free(fl->pfc);
	g_free(fl);
}

int qpt_event_cmp(const struct qpt_event *a, const struct qpt_event *b)
{
	if (a->frame != b->frame)
		return a->frame < b->frame ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->conv != b->conv)
		return a->conv < b->conv ? -1 : 1;
	return (a->dir > b->dir) - (a->dir < b->dir);
}

static gint event_cmp(gconstpointer a, gconstpointer b)
{
	return qpt_event_cmp(a, b);
}

/* The end's events, all of earlier frames, into out (unsorted): gap
 * fillers nothing followed (out of order), ECN-CE marks whose window
 * ended with the capture. */
static void flow_drain(struct qpt_flow *fl, GArray *out)
{
	struct qpt_verdict v;
	GHashTableIter it;
	gpointer val;

	g_hash_table_iter_init(&it, fl->halves);
	while (g_hash_table_iter_next(&it, NULL, &val)) {
		struct half *h = fl_unforward(fl, val);

		if (!h || !h->fill_pending)
			continue; /* nothing undecided (a cold half never has) */
		fl_end_verdict(&v);
		fl_fill_resolve(fl, h, NULL, &v); /* each half: a verdict of its own */
		g_array_append_vals(out, v.ev, v.nevents);
	}
	fl_qos_drain(fl, out);
}

/* Closes open episodes, messages whose start never showed, the PFC and
 * ECN analyses. */
static void flow_finish(struct qpt_flow *fl)
{
	GHashTableIter it;
	gpointer val;

	g_hash_table_iter_init(&it, fl->halves);
	while (g_hash_table_iter_next(&it, NULL, &val)) {
		struct half *h = fl_unforward(fl, val);

		if (!h)
			continue; /* a cold half has no episode or pending message */
		if (h->in_episode)
			fl_episode_close(h, 0, h->last_ns);
		fl_pend_flush(h); /* messages whose start never showed */
	}
	qpt_pfc_finish(fl->pfc, fl->last_ns);
	fl_qos_finish(fl);
}

void qpt_flow_end(struct qpt_flow *fl, qpt_end_fn fn, void *data)
{
	GArray *all;
	struct qpt_verdict v;

	if (fl->ended)
		return;
	fl->ended = true;
	all = g_array_new(FALSE, FALSE, sizeof(struct qpt_event));
	flow_drain(fl, all);
	g_array_sort(all, event_cmp);
	for (guint i = 0; fn && i < all->len; i += QPT_MAX_EVENTS) {
		fl_end_verdict(&v);
		v.nevents = (uint8_t)MIN(all->len - i, (guint)QPT_MAX_EVENTS);
		memcpy(v.ev, &g_array_index(all, struct qpt_event, i),
		       v.nevents * sizeof(struct qpt_event));
		fn(data, &v);
	}
	g_array_free(all, TRUE);
	flow_finish(fl);
}

void qpt_flow_set_tap(struct qpt_flow *fl, unsigned tap)
{
	fl->tap = MIN(tap, 255u);
	fl->ntaps = MAX(fl->ntaps, fl->tap + 1);
}

const struct qpt_totals *qpt_flow_totals(struct qpt_flow *fl)
{
	return &fl->t;
}

struct qpt_pfc *qpt_flow_pfc(struct qpt_flow *fl)
{
	return fl->pfc;
}

static gint int32_cmp(gconstpointer a, gconstpointer b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

GArray *qpt_flow_pfc_stalled(struct qpt_flow *fl, unsigned prio)
{
	const struct qpt_pfc_prio *pr = qpt_pfc_prio(fl->pfc, prio);
	GArray *out = g_array_new(FALSE, FALSE, sizeof(int32_t));

	for (guint i = 0; pr && i < pr->stalled->len; i++) {
		int32_t id = qpt_flow_conv_id(fl, g_array_index(pr->stalled, int32_t, i));

		if (id >= 0)
			g_array_append_val(out, id);
	}
	g_array_sort(out, int32_cmp);
	for (guint i = 1; i < out->len;) /* each once */
		if (g_array_index(out, int32_t, i) == g_array_index(out, int32_t, i - 1))
			g_array_remove_index(out, i);
		else
			i++;
	return out;
}

/* (inlined into qpt_flow_packet, which GCC stopped doing by itself once
 * fl_emit left this file: 24 instructions a packet) */
static G_ALWAYS_INLINE inline void flow_packet(struct qpt_flow *fl, uint64_t frame,
					       int64_t ns, const struct qpt_pkt *p,
					       struct qpt_verdict *v)
{
	const struct qpt_opcode_info *oi;
	struct half *h;
	struct qpt_dir *d;

	bool back = fl->have_ns && ns < fl->last_ns;
	int64_t back_ns = back ? fl->last_ns - ns : 0;

	fl_verdict_reset(v, frame);
	fl->t.frames++;
	if (QPT_UNLIKELY(p->ip_fragment == QPT_FRAG_ROCE_FIRST)) {
		fl->t.fragmented_roce_packets++;
		fl_emit(v, NULL, &(struct qpt_event){ .frame = frame, .time_ns = ns,
				.kind = QPT_VB_IP_FRAGMENT,
				.detail = "first IP fragment of a RoCEv2 packet: an IP MTU smaller "
					  "than the RoCE MTU?" });
	}
	/* Time going backwards is a finding about the capture, reported as
	 * such; the sequence rules never take a negative gap for a short one. */
	fl->have_ns = true;
	fl->last_ns = ns;
	if (QPT_UNLIKELY(back))
		fl->t.time_backwards++;
	if (p->transport == QPT_TR_NONE)
		return;
	fl->t.iba_packets++;
	if (QPT_UNLIKELY(p->cut_by_snaplen)) { /* not malformed: no event, one totals note */
		fl->t.cut_by_snaplen++;
		if (p->caplen > fl->t.snaplen)
			fl->t.snaplen = p->caplen;
	}
	if (QPT_UNLIKELY(p->error != QPT_E_OK)) {
		fl->t.malformed++;
		v->flags |= QPT_V(MALFORMED);
	}
	if (QPT_UNLIKELY(p->icrc_checked && !p->icrc_ok)) {
		fl->t.bad_icrc++;
		v->flags |= QPT_V(BAD_ICRC);
	}
	if (QPT_UNLIKELY(v->flags))
		fl_emit(v, NULL, &(struct qpt_event){ .frame = frame, .time_ns = ns,
				.kind = v->flags & QPT_V(MALFORMED) ? QPT_VB_MALFORMED :
								      QPT_VB_BAD_ICRC,
				.psn = p->bth.psn,
				.detail = v->flags & QPT_V(MALFORMED) ? qpt_strerror(p->error) :
									"ICRC mismatch" });
	if (!(p->flags & QPT_HAS_BTH))
		return;
	oi = &qpt_opcodes[p->bth.opcode];
	if (p->bth.dqpn <= 1 && (p->bth.opcode & 0xe0) == QPT_SVC_UD) {
		fl->t.management++;
		if (p->flags & QPT_HAS_CM)
			fl_cm_message(fl, p, frame, ns, v);
		return;
	}
	if (!(oi->flags & QPT_O_VALID) && !(oi->flags & QPT_O_CNP))
		return;
	h = fl_half_get(fl, p, true);
	if (!h) {
		fl->t.untracked++;
		return;
	}
	fl->t.tracked++;
	if (oi->flags & QPT_O_RESP) {
		fl_response(fl, h, p, frame, ns, v);
	} else {
		if (!h->conv && !(oi->flags & QPT_O_CNP) &&
		    !fl_join_responder(fl, h, p->bth.psn))
			fl_ud_pair_or_new(fl, h);
		else if (!h->conv)
			fl_ud_pair_or_new(fl, h);
		if (p->flags & QPT_H_DETH && !h->conv->ep[h->dir].qpn_known) {
			h->conv->ep[h->dir].qpn = p->deth.sqpn; /* RD */
			h->conv->ep[h->dir].qpn_known = true;
		}
		fl_set_transport(h, p->bth.opcode);
		v->conv = h->conv->id;
		v->dir = (int8_t)h->dir;
		d = fl_dir_of(h);
		if (oi->flags & QPT_O_CNP) {
			v->flags |= QPT_V(CNP);
			fl_dr(d)->cnps++;
			fl_emit(v, h, &(struct qpt_event){ .frame = frame, .time_ns = ns,
					.kind = QPT_VB_CNP, .psn = p->bth.psn,
					.detail = "congestion notification for this QP" });
		} else {
			fl_learn_mtu(h, p);
			fl_request(fl, h, p, frame, ns, v);
		}
	}
	d = fl_dir_of(h);
	if (QPT_UNLIKELY(back)) {
		fl_dr(d)->time_backwards++;
		fl_emit(v, h, &(struct qpt_event){ .frame = frame, .time_ns = ns,
				.kind = QPT_VB_TIME_BACKWARDS, .psn = p->bth.psn,
				.duration_ns = back_ns,
				.detail = "timestamp before the previous frame's" });
	}
	fl_tunnel_note(fl, v->conv, p);
	if (!d->packets)
		d->first_ns = ns;
	d->last_ns = ns;
	d->packets++;
	d->bytes += p->wirelen;
	if (!(oi->flags & QPT_O_CNP)) { /* a CNP's 16 bytes are reserved, not data */
		d->payload_bytes += p->payload_len;
	}
	if (QPT_UNLIKELY(p->bth.fecn))
		fl_dr(d)->fecn++;
	if (QPT_UNLIKELY(p->bth.becn))
		fl_dr(d)->becn++;
	if (QPT_UNLIKELY(v->flags & QPT_V(BAD_ICRC)))
		d->bad_icrc++;
	if (QPT_UNLIKELY(v->flags & QPT_V(MALFORMED)))
		fl_dr(d)->malformed++;
	if (p->ip_version && p->ip_ecn == 3) {
		v->flags |= QPT_V(ECN_CE);
		fl_dr(d)->ecn_ce++;
		fl_emit(v, h, &(struct qpt_event){ .frame = frame, .time_ns = ns,
				.kind = QPT_VB_ECN_CE, .psn = p->bth.psn,
				.detail = "IP ECN Congestion Experienced" });
	}
	fl_qos_packet(fl, h, p, frame, ns, p->ip_version && p->ip_ecn == 3, v);
}

void qpt_flow_add_capture_drops(struct qpt_flow *fl, uint64_t interface_drops, uint64_t os_drops)
{
	fl->t.drops_known = true;
	fl->t.interface_drops += interface_drops;
	fl->t.os_drops += os_drops;
}

/* (inline: every packet) */
static G_ALWAYS_INLINE inline void pfc_feed(struct qpt_flow *fl, uint64_t frame, int64_t ns,
					    const struct qpt_pkt *p,
					    const struct qpt_verdict *v)
{
	if (p->flags & QPT_HAS_MACC) {
		qpt_pfc_frame(fl->pfc, frame, ns, p);
		return;
	}
	/* RoCE data of a conversation direction (a CM MAD has no direction;
	 * a CNP's 16 bytes are reserved, not data) */
	if (!(p->flags & QPT_HAS_BTH) || v->conv < 0 || v->dir < 0 ||
	    (qpt_opcodes[p->bth.opcode].flags & QPT_O_CNP))
		return;
	qpt_pfc_data(fl->pfc, ns, p->vlan_pcp, v->conv, v->dir);
}

void qpt_flow_pfc_feed(struct qpt_flow *fl, uint64_t frame, int64_t ns,
		       const struct qpt_pkt *p, const struct qpt_verdict *v)
{
	pfc_feed(fl, frame, ns, p, v);
}

QPT_HOT void qpt_flow_packet(struct qpt_flow *fl, uint64_t frame, int64_t ns,
			     const struct qpt_pkt *p, struct qpt_verdict *v)
{
	g_assert(!fl->halves_gone); /* qpt_flow_forget_halves() */
	if (QPT_UNLIKELY(!--fl->to_sweep)) {
		fl_cold_sweep(fl);
		fl->to_sweep = fl->o.cold_every;
	}
	flow_packet(fl, frame, ns, p, v);
	pfc_feed(fl, frame, ns, p, v);
}

int32_t qpt_flow_conv_count(struct qpt_flow *fl)
{
	return (int32_t)fl->convs->len;
}

void qpt_flow_set_previous_time(struct qpt_flow *fl, int64_t ns)
{
	fl->have_ns = true;
	fl->last_ns = ns;
}

void qpt_flow_absorb(struct qpt_flow *fl, struct qpt_flow *part, const int32_t *ids)
{
	const struct qpt_totals *s = &part->t;
	struct qpt_totals *t = &fl->t;
	GHashTableIter it;
	gpointer key, val;

	qpt_flow_forget_halves(part);
	for (guint i = 0; i < part->convs->len; i++) {
		struct qpt_conv *c;

		g_assert(ids[i] >= 0);
		if ((guint)ids[i] >= fl->convs->len)
			g_ptr_array_set_size(fl->convs, (guint)ids[i] + 1);
		g_assert(!fl->convs->pdata[ids[i]]);
		if (fl_conv_is_cold(g_ptr_array_index(part->convs, i))) {
			/* encoded with part's times and evidences: again with
			 * fl's, still cold (a cold one is never merged) */
			fl->convs->pdata[ids[i]] = fl_conv_recode(fl, part, (int32_t)i);
			continue;
		}
		c = g_ptr_array_index(part->convs, i);
		c->id = ids[i];
		if (c->merged_into >= 0)
			c->merged_into = ids[c->merged_into];
		fl->convs->pdata[ids[i]] = c;
	}
	g_ptr_array_set_size(part->convs, 0); /* fl's now */
	fl_tunnel_absorb(fl, part, ids);
	fl->absorbed = true;
	/* CM requests by comm ID.  One engine keeps the first REQ of an ID and
	 * takes a later one as resent, whoever sent it: the caller sends a
	 * REQ whose comm ID an earlier REQ took to that REQ's engine (as
	 * analyzer/cli/shard.c does), so an ID is in one part only. */
	g_hash_table_iter_init(&it, part->cm);
	while (g_hash_table_iter_next(&it, &key, &val)) {
		if (g_hash_table_contains(fl->cm, key))
			continue; /* cannot be (above): stays part's */
		g_hash_table_insert(fl->cm, key, val);
		g_hash_table_iter_steal(&it);
	}
	t->frames += s->frames;
	t->iba_packets += s->iba_packets;
	t->tracked += s->tracked;
	t->untracked += s->untracked;
	t->management += s->management;
	t->malformed += s->malformed;
	t->bad_icrc += s->bad_icrc;
	t->conversations += s->conversations;
	t->cm_unknown_comm_id += s->cm_unknown_comm_id;
	t->cm_rejects += s->cm_rejects;
	t->fragmented_roce_packets += s->fragmented_roce_packets;
	t->time_backwards += s->time_backwards;
	t->cut_by_snaplen += s->cut_by_snaplen;
	t->snaplen = MAX(t->snaplen, s->snaplen);
	fl->nhalves += part->nhalves;
	fl->ntaps = MAX(fl->ntaps, part->ntaps);
}
